"""Every private fit goes down skdpgd._core.fit.private_fit (docs/how_a_fit_works.md): one Fit
context per fit, whatever the estimator, and the set-up releases come from skdpgd._core.setup."""

import numpy as np
import pytest

from skdpgd import DPLogisticRegression, DPRidge, DPSGDClassifier, DPSGDRegressor

from skdpgd._core import fit as _fit

from skdpgd._core import setup as _setup
from skdpgd.preprocessing import DPStandardScaler


def _data(n=300, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    return X, (X[:, 0] > 0).astype(int)


def _estimators():
    out = [
        DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0),
        DPRidge(epsilon=1.0, data_norm=1.0, y_bound=1.0, random_state=0),
        DPSGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1], epochs=1, random_state=0),
        DPSGDRegressor(epsilon=1.0, data_norm=1.0, y_bound=1.0, epochs=1, random_state=0),
        DPStandardScaler(epsilon=1.0, bounds=(-2.0, 2.0), random_state=0),
    ]
    try:
        import torch  # noqa: F401
        from skdpgd import DPMLPClassifier

        out.append(DPMLPClassifier((3,), epsilon=1.0, classes=[0, 1], max_iter=3, random_state=0))
    except ImportError:  # pragma: no cover - torch is a test dependency
        pass
    return out


@pytest.mark.parametrize("est", _estimators(), ids=lambda e: type(e).__name__)
def test_each_fit_goes_down_the_one_road(monkeypatch, est):
    seen, counts = [], []
    real_init, real_count = _fit.Fit.__init__, _setup.release_count

    def spy_init(self, *args, **kwargs):
        seen.append(args[0].label)  # the fit's PrivacySpec
        real_init(self, *args, **kwargs)

    def spy_count(*args, **kwargs):
        counts.append(1)
        return real_count(*args, **kwargs)

    monkeypatch.setattr(_fit.Fit, "__init__", spy_init)
    monkeypatch.setattr(_setup, "release_count", spy_count)
    monkeypatch.setattr("skdpgd._core.setup.release_count", spy_count)
    X, y = _data()
    target = y if not isinstance(est, (DPRidge, DPSGDRegressor)) else X[:, 0].clip(-1, 1)
    est.fit(X, target) if not isinstance(est, DPStandardScaler) else est.fit(X)
    assert seen == [type(est).__name__]
    # the row count is released (by the set-up function) exactly when N is private
    private_n = est.neighbouring_ == "add/remove-one" and est.count_noise_multiplier_ is not None
    assert len(counts) == int(private_n)

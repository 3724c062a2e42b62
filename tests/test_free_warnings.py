"""Warnings that cost no privacy (issue 23 item 2): each is computed from public or already
released values only, so it is post-processing."""

import importlib.util
import warnings

import numpy as np
import pytest

import skdpgd
from skdpgd import PrivacyUsageWarning


def _data(n=200, d=4, scale=0.2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    y = (X[:, 0] + 0.1 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _usage(record):
    return [str(w.message) for w in record if issubclass(w.category, PrivacyUsageWarning)]


def _fit(est, X, y):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(X, y)
    return _usage(record)


ESTIMATORS = {
    "DPLogisticRegression": lambda **kw: skdpgd.DPLogisticRegression(
        data_norm=1.0, classes=[0, 1], **kw),
    "DPRidge": lambda **kw: skdpgd.DPRidge(data_norm=1.0, y_bound=1.0, **kw),
    "DPSGDClassifier": lambda **kw: skdpgd.DPSGDClassifier(
        data_norm=1.0, classes=[0, 1], **kw),
}
if importlib.util.find_spec("torch") is not None:
    ESTIMATORS["DPMLPClassifier"] = lambda **kw: skdpgd.DPMLPClassifier(
        classes=[0, 1], hidden_layer_sizes=(4,), max_iter=3, **kw)


# --- delta >= 1/N -------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_delta_at_least_one_over_n_warns(name):
    X, y = _data(n=200)
    make = ESTIMATORS[name]
    extra = {} if name != "DPSGDClassifier" else dict(n_samples=200)  # N public
    msgs = _fit(make(epsilon=1.0, delta=1 / 150, random_state=0, **extra), X, y)
    assert any("at least 1/N" in m and "N = 200" in m for m in msgs), msgs
    # well below 1/N: no warning
    assert not _fit(make(epsilon=1.0, delta=1e-6, random_state=0, **extra), X, y)


def test_delta_warning_uses_the_released_count_under_add_remove():
    """Without a public n_samples, DP-SGD releases a noisy count; the check reads that
    released value (post-processing), not the private N."""
    X, y = _data(n=200)
    msgs = _fit(skdpgd.DPSGDClassifier(epsilon=1.0, delta=0.5, data_norm=1.0, classes=[0, 1],
                                       random_state=0), X, y)
    assert any("at least 1/N" in m for m in msgs)


def test_delta_warning_from_the_private_search():
    X, y = _data(n=200)
    search = skdpgd.PrivateRandomSearchCV(
        skdpgd.DPLogisticRegression(data_norm=1.0, classes=[0, 1]), {"alpha": [1e-2, 1e-1]},
        epsilon=2.0, delta=0.01, n_iter=2, random_state=0)
    assert any("at least 1/N" in m for m in _fit(search, X, y))


# --- data_norm far below the rows' norms ---------------------------------------------------
def test_data_norm_far_below_the_row_norms_warns():
    """Rows of norm ~20 with data_norm=1: every row is clipped; the released row-norm
    statistic (row_clip='auto') shows it."""
    X, y = _data(n=2000, scale=10.0)
    hits = sum(any("below the rows' real norms" in m for m in _fit(
        skdpgd.DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1],
                                    random_state=seed), X, y)) for seed in range(5))
    assert hits >= 3  # the release's noise can hide it on some seeds (84% each)


def test_data_norm_above_the_row_norms_is_quiet():
    X, y = _data(n=2000, scale=0.2)  # rows of norm ~0.4 under data_norm=1
    assert not _fit(skdpgd.DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1],
                                                random_state=0), X, y)


def test_data_norm_warning_reads_only_the_release():
    """Same released value, same decision: the warning is a function of the noisy statistic
    (patched here), not of the rows."""
    from skdpgd import _base

    with pytest.warns(PrivacyUsageWarning, match="below the rows' real norms"):
        _base.warn_if_data_norm_small(0.97, 0.05, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _base.warn_if_data_norm_small(0.97, 0.2, 1.0)  # too noisy to tell
        _base.warn_if_data_norm_small(0.5, 0.0, 1.0)


def test_data_norm_warning_with_few_rows_is_not_given_on_noise():
    """A small N makes the release noisy: no warning on rows well inside data_norm, over
    seeds."""
    X, y = _data(n=50, scale=0.2)
    for seed in range(10):
        assert not _fit(skdpgd.DPLogisticRegression(epsilon=0.1, data_norm=1.0,
                                                    classes=[0, 1], random_state=seed), X, y)

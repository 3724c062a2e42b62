"""What shapes a mechanism must be public (skdpgd._core.setup): releases made to set a fit up carry
the noise their Release says they carry."""

import math

import numpy as np
import pytest

from skdpgd import policy
from skdpgd._core.setup import resolve_class_weight

#: L2 sensitivity of a class histogram: relabelling one example moves two counts by 1, adding or
#: removing one moves one count by 1 (written here independently of the code under test).
HISTOGRAM_SENSITIVITY = {"replace": math.sqrt(2.0), "add_remove": 1.0}


class _FirstHistogramNoise:
    """A numpy Generator whose first draw of ``n`` standard normals is ``(1, 0, ..., 0)``.

    The class-count release is then ``(n_0 + std, n_1, ...)``, and its standard deviation can
    be read back from the weights it produces; every other draw is the real generator's.
    """

    def __init__(self, gen, n):
        self._gen = gen
        self._n = n
        self.used = False

    def standard_normal(self, size=None):
        if not self.used and size == self._n:
            self.used = True
            return np.eye(1, self._n)[0]
        return self._gen.standard_normal(size)

    def __getattr__(self, name):
        return getattr(self._gen, name)


def _std_from_weights(weights, counts):
    # raw_k = S / (K c_k): raw_1 / raw_0 = c_0 / c_1 with c_0 = n_0 + std, c_1 = n_1
    return weights[1] / weights[0] * counts[1] - counts[0]


@pytest.mark.parametrize("relation", ["replace", "add_remove"])
def test_class_count_noise_is_multiplier_times_the_relations_sensitivity(relation):
    """Relabelling one example moves two counts by 1 (sensitivity sqrt 2): the noise must be
    ``z sqrt(2)`` under replace-one for the release to be ``1/z``-GDP, as it is charged."""
    y_index = np.repeat([0, 1], [700, 300])
    mu = 0.5
    gen = _FirstHistogramNoise(np.random.default_rng(0), 2)
    w, _, release = resolve_class_weight("balanced", np.array([0, 1]), y_index, mu, gen, relation)
    z = release.multipliers[0]
    assert release.sensitivity == HISTOGRAM_SENSITIVITY
    assert release.noise_std[0] == pytest.approx(z * HISTOGRAM_SENSITIVITY[relation])
    assert gen.used
    assert z == pytest.approx(1 / (math.sqrt(policy.CLASS_COUNT_SHARE) * mu))
    std = _std_from_weights(w, [700, 300])
    assert std == pytest.approx(z * HISTOGRAM_SENSITIVITY[relation], rel=1e-9)


def _recording(monkeypatch, module):
    """Patch ``module.resolve_class_weight`` to record the noise std it really adds."""
    seen = []
    real = resolve_class_weight

    def spy(class_weight, classes, y_index, mu_total, gen, *args):
        probe = _FirstHistogramNoise(gen, classes.shape[0])
        out = real(class_weight, classes, y_index, mu_total, probe, *args)
        seen.append(_std_from_weights(out[0], np.bincount(y_index, minlength=2)))
        return out

    monkeypatch.setattr(module, "resolve_class_weight", spy)
    return seen


def _data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) / 3
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0.3).astype(int)
    return X, y


def _class_count_release(est):
    (r,) = [r for r in est.releases_ if r.name == "class counts"]
    return r


@pytest.mark.parametrize("relation", ["replace", "add_remove"])
def test_full_batch_class_count_release_matches_its_noise(monkeypatch, relation):
    from skdpgd import DPLogisticRegression
    from skdpgd._core import fit as _fit

    seen = _recording(monkeypatch, _fit)
    X, y = _data()
    est = DPLogisticRegression(
        epsilon=1.0,
        data_norm=1.0,
        classes=[0, 1],
        n_samples=1200,
        class_weight="balanced",
        neighbouring=relation,
        random_state=0,
    ).fit(X, y)
    release = _class_count_release(est)
    assert release.sensitivity == HISTOGRAM_SENSITIVITY
    assert release.noise_std[0] == pytest.approx(seen[0], rel=1e-9)


def test_dp_sgd_class_count_release_matches_its_noise(monkeypatch):
    from skdpgd import DPSGDClassifier
    from skdpgd._core import fit as _fit

    seen = _recording(monkeypatch, _fit)
    X, y = _data()
    est = DPSGDClassifier(
        epsilon=1.0,
        data_norm=1.0,
        classes=[0, 1],
        n_samples=1200,
        class_weight="balanced",
        epochs=1,
        random_state=0,
    ).fit(X, y)
    release = _class_count_release(est)
    assert release.sensitivity == HISTOGRAM_SENSITIVITY
    assert release.noise_std[0] == pytest.approx(seen[0], rel=1e-9)


@pytest.mark.parametrize("relation", ["replace", "add_remove"])
def test_mlp_class_count_release_matches_its_noise(monkeypatch, relation):
    pytest.importorskip("torch")
    from skdpgd import DPMLPClassifier
    from skdpgd._core import fit as _fit

    seen = _recording(monkeypatch, _fit)
    X, y = _data(n=300)
    est = DPMLPClassifier(
        hidden_layer_sizes=(4,),
        max_iter=3,
        epsilon=1.0,
        classes=[0, 1],
        n_samples=300,
        class_weight="balanced",
        neighbouring=relation,
        random_state=0,
    ).fit(X, y)
    release = _class_count_release(est)
    assert release.sensitivity == HISTOGRAM_SENSITIVITY
    assert release.noise_std[0] == pytest.approx(seen[0], rel=1e-9)


def test_classes_must_be_one_dimensional_and_errors_name_plain_labels():
    from skdpgd._core.data import resolve_classes

    y = np.array(["a", "b", "a"])
    with pytest.raises(ValueError, match="1-D"):  # was read as 4 classes
        resolve_classes([["a", "b"], ["c", "d"]], y)
    with pytest.raises(ValueError, match=r"outside classes \(e\.g\. \['b'\]\)"):
        resolve_classes(["a", "c"], y)
    classes_, idx = resolve_classes(["b", "a", "z"], y)  # a label with no example is kept
    assert classes_.tolist() == ["a", "b", "z"] and idx.tolist() == [0, 1, 0]

"""The prior switch is one step (skdpgd._core.prior) for both roads that may return the
intercept-only model: the full-batch warm start and DP-SGD's floor rule (more than two
classes; binary DP-SGD fits select after the fit, through the one selection step)."""

import math

import numpy as np
import pytest

from skdpgd._core import prior as _prior
from skdpgd._core.setup import CLASS_COUNT_SENSITIVITY
from skdpgd.accounting import Release, with_margin


def _imbalanced(n=2000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = (X[:, 0] + 1.5 * rng.normal(size=n) > 1.0).astype(int)  # ~25% positive, weak signal
    return X, y


def _imbalanced3(n=2000, d=5, seed=0):
    """Three classes, ~85% of them the first (the switch's decision can go either way)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = np.where(rng.random(n) < 0.85, 0, rng.integers(1, 3, n))
    return X, y


def _counts_release(z, relation="replace", sensitivity=None):
    sens = dict(CLASS_COUNT_SENSITIVITY if sensitivity is None else sensitivity)
    return Release("class counts", [z], sens, relation)


@pytest.fixture
def spy(monkeypatch):
    """Records every call of the shared step: its first release and its second."""
    calls = []
    release, intercept_only = _prior.PriorSwitch.release.__func__, _prior.PriorSwitch.intercept_only

    def spy_release(cls, counts, first, share, gen, forced=False):
        out = release(cls, counts, first, share, gen, forced)
        calls.append(("release", first.name, out.switched))
        return out

    def spy_intercept_only(self, counts, second, gen, shape, progress=None, step=(0, 1)):
        out = intercept_only(self, counts, second, gen, shape, progress, step)
        calls.append(("intercept_only", second.name, out))
        return out

    monkeypatch.setattr(_prior.PriorSwitch, "release", classmethod(spy_release))
    monkeypatch.setattr(_prior.PriorSwitch, "intercept_only", spy_intercept_only)
    return calls


def test_both_roads_switch_through_the_one_step(spy):
    from skdpgd import DPLogisticRegression, DPSGDClassifier
    from skdpgd.schedules import Auto

    X, y = _imbalanced()
    full = DPLogisticRegression(
        epsilon=0.3,
        delta=1e-6,
        data_norm=1.0,
        classes=[0, 1],
        random_state=0,
        schedule=Auto(prior_share=0.1, prior_switch=(1e9, 0.0)),
    ).fit(X, y)
    assert [c[:2] for c in spy] == [
        ("release", "class counts (start)"),
        ("intercept_only", "class counts"),
    ]
    model = spy[-1][2]
    assert full.mechanism_ == "prior"
    np.testing.assert_array_equal(full.intercept_, model.intercept)
    # what the step released is what the fit reports
    assert list(model.releases) == full.releases_[-2:]

    spy.clear()
    X, y = _imbalanced3(d=20)
    sgd = DPSGDClassifier(
        epsilon=0.05, delta=1e-6, data_norm=1.0, n_samples=2000, random_state=0
    ).fit(X, y)
    assert [c[:2] for c in spy] == [
        ("release", "class counts (prior)"),
        ("intercept_only", "class counts"),
    ]
    assert sgd.schedule_ == "prior"
    np.testing.assert_array_equal(sgd.intercept_, spy[-1][2].intercept)
    assert list(spy[-1][2].releases) == sgd.releases_


def test_a_road_that_does_not_switch_starts_from_the_shrunk_prior(spy):
    from skdpgd import DPSGDClassifier

    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 4)) / 2
    y = rng.integers(0, 4, size=3000)
    clf = DPSGDClassifier(
        epsilon=0.02, delta=1e-6, data_norm=1.0, n_samples=3000, random_state=0
    ).fit(X, y)
    assert [c[:3] for c in spy] == [("release", "class counts (prior)", False)]
    assert clf.prior_switch_["branch"] == "sgd" and clf.n_iter_ > 0


def test_the_first_release_adds_the_calibrated_noise_and_decides_on_it():
    counts = np.array([700.0, 300.0])
    first = _counts_release(0.5)
    std = 0.5 * math.sqrt(2.0)
    got = _prior.PriorSwitch.release(counts, first, 0.6, np.random.default_rng(3))
    want = counts + std * np.random.default_rng(3).standard_normal(2)
    np.testing.assert_array_equal(got.noisy, want)
    assert got.std == std and got.first is first
    assert got.switched == _prior.dominated(want, std, 0.6) is True
    # above the majority share: no switch; no share: never; forced (public): always
    assert not _prior.PriorSwitch.release(counts, first, 0.8, np.random.default_rng(3)).switched
    assert not _prior.PriorSwitch.release(counts, first, None, np.random.default_rng(3)).switched
    assert _prior.PriorSwitch.release(
        counts, first, None, np.random.default_rng(3), forced=True
    ).switched
    np.testing.assert_array_equal(got.start(), _prior.log_odds(want, std, shrink_classes=True))


def test_the_second_release_combines_both_by_their_inverse_variances():
    counts = np.array([100.0, 250.0, 650.0])
    first = _prior.PriorSwitch.release(counts, _counts_release(2.0), 0.5, np.random.default_rng(0))
    second = _counts_release(1.0)
    model = first.intercept_only(counts, second, np.random.default_rng(1), (3, 4))
    again = counts + math.sqrt(2.0) * np.random.default_rng(1).standard_normal(3)
    v1, v2 = first.std**2, 2.0
    combined = (first.noisy / v1 + again / v2) / (1 / v1 + 1 / v2)
    want = np.log(combined / combined.sum())
    np.testing.assert_allclose(model.intercept, want - want.mean(), rtol=1e-12)
    assert model.coef.shape == (3, 4) and not model.coef.any()
    assert model.releases == (first.first, second)


def test_a_count_release_below_the_counts_sensitivity_is_refused():
    counts = np.array([10.0, 20.0])
    gen = np.random.default_rng(0)
    low = _counts_release(1.0, "add_remove", {"replace": math.sqrt(2.0), "add_remove": 0.5})
    with pytest.raises(ValueError, match="sensitivity of at least"):
        _prior.PriorSwitch.release(counts, low, 0.5, gen)
    # a rounding margin raises it, which passes
    raised = _counts_release(1.0, "add_remove", with_margin(CLASS_COUNT_SENSITIVITY, 1e-9))
    ok = _prior.PriorSwitch.release(counts, raised, 0.5, gen, forced=True)
    with pytest.raises(ValueError, match="sensitivity of at least"):
        ok.intercept_only(counts, low, gen, (1, 2))


def test_both_roads_select_through_the_one_step(monkeypatch):
    """The full-batch warm start's selection and DP-SGD's binary selection make the same
    release and decision (skdpgd._core.prior.select), each with the release it calibrated."""
    from skdpgd import DPLogisticRegression, DPSGDClassifier
    from skdpgd.schedules import Auto

    calls = []
    select = _prior.select

    def spy(right, release, n_public, gen):
        out = select(right, release, n_public, gen)
        calls.append((release, out))
        return out

    monkeypatch.setattr(_prior, "select", spy)
    X, y = _imbalanced()
    full = DPLogisticRegression(
        epsilon=0.3,
        delta=1e-6,
        data_norm=1.0,
        classes=[0, 1],
        random_state=0,
        schedule=Auto(select=(1e9, 0.05, 0.05), prior_switch=False),
    ).fit(X, y)
    sgd = DPSGDClassifier(
        epsilon=0.01, delta=1e-6, data_norm=1.0, n_samples=2000, random_state=0
    ).fit(X, y)
    assert len(calls) == 2
    assert calls[0][0] == full.releases_[-1] and calls[1][0] == sgd.releases_[-1]
    assert sgd.prior_switch_["selection"]["noisy_difference"] == calls[1][1][1]
    assert (sgd.prior_switch_["branch"] == "sgd") == calls[1][1][0]


def test_the_selection_refuses_a_release_below_its_sensitivity():
    low = Release("selection", [1.0], {"replace": 2.0, "add_remove": 0.5}, "add_remove")
    with pytest.raises(ValueError, match="sensitivity of at least"):
        _prior.select((10.0, 5.0), low, 100.0, np.random.default_rng(0))
    ok = Release("selection", [1.0], {"replace": 2.0, "add_remove": 1.0}, "add_remove")
    keep, noisy = _prior.select((10.0, 5.0), ok, 100.0, np.random.default_rng(0))
    assert noisy == 5.0 + np.random.default_rng(0).standard_normal() and keep == (noisy > -0.03)

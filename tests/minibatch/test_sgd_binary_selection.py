"""Binary DP-SGD below the prior switch's ratio (policy.SGD_PRIOR_SWITCH, SGD_BINARY_SELECT).

Two classes always have one that holds at least half of their counts, so the switch on the
released counts (share p = 0.5) chose the intercept-only model whatever the data, and paid
the envelope of a DP-SGD branch it never ran. Now a binary fit there either

* makes a decision the data can take: the class counts (DP-SGD starts from their prior),
  DP-SGD, and a release of the difference of training rows each model predicts right; every
  release is made whatever the data, so the fit is their plain composition (no envelope); or
* where the released count puts the ratio below ``s0`` (or the policy says so), decides from
  public values before any draw: the whole budget on the class counts, one Gaussian release,
  exact GDP.
"""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from skdpgd import DPSGDClassifier, PrivacyBudget, policy
from skdpgd._minibatch.road import selection_counts
from skdpgd._core.setup import CLASS_COUNT_SENSITIVITY, SELECTION_SENSITIVITY
from skdpgd.accounting import (
    RDPAccountant,
    gdp_epsilon,
    gdp_mu,
    gdp_mu_of_releases,
    rdp_epsilon,
    rdp_subsampled_gaussian,
)

N, D = 2000, 40
EPS, DELTA = 0.05, 1e-6  # N mu / sqrt(D + 1) = 4.5: below the switch's ratio 5


def _separable(n=N, d=D, seed=0):
    """Balanced, separable: the label is the sign of the first feature (rows of norm <= 1)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = 0.1 * rng.normal(size=(n, d))
    X[:, 0] = np.where(y == 1, 0.7, -0.7) + 0.1 * rng.normal(size=n)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    return X, y


def _fit(X, y, **kw):
    params = dict(epsilon=EPS, delta=DELTA, data_norm=1.0, n_samples=X.shape[0], random_state=0)
    params.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPSGDClassifier(**params).fit(X, y)


def test_the_rule_applies_here():
    assert policy.signal_to_noise(N, D + 1, gdp_mu(EPS, DELTA)) < policy.SGD_PRIOR_SWITCH[0]
    assert policy.sgd_prior_switch(N, D + 1, gdp_mu(EPS, DELTA), True, True, True) is not None
    rule = policy.sgd_binary_rule(N, D + 1, gdp_mu(EPS, DELTA))
    assert rule == ("select",) + tuple(policy.SGD_BINARY_SELECT[1:])


def test_a_balanced_separable_set_keeps_the_fit_and_pays_no_envelope():
    """Before: the switch returned the intercept-only model on every seed (accuracy ~0.5) and
    raised both branches' noise by the envelope's factor. Now the fit is kept."""
    X, y = _separable()
    for seed in range(4):
        clf = _fit(X, y, random_state=seed)
        switch = clf.prior_switch_
        assert switch["decision"] == "selection" and switch["branch"] == "sgd"
        assert clf.schedule_ == "uniform" and clf.n_iter_ > 0
        assert switch["noise_scale"] == 1.0 and switch["envelope_delta"] is None
        assert clf.score(X, y) > 0.95
        # the released difference is far above the threshold (a public function of its noise)
        sel = switch["selection"]
        assert sel["noisy_difference"] > sel["threshold"]
        assert sel["threshold"] == pytest.approx(
            policy.select_threshold(clf.releases_[-1].noise_std[0], N), rel=1e-12
        )


def test_the_decision_goes_either_way_and_keeps_the_floor_on_noise(monkeypatch):
    """Labels independent of X (30% minority), many features: the noisy fit predicts the
    majority class like the intercept-only model (noise-free difference 0), so the released
    difference is its noise alone and the choice falls both ways over seeds; either model
    scores the majority (the switch, by contrast, took the constant model on every seed)."""
    seen = _capture_selection(monkeypatch)
    rng = np.random.default_rng(1)
    n, d = 6000, 300
    X = rng.normal(size=(n, d)) / math.sqrt(d)
    y = (rng.uniform(size=n) < 0.3).astype(int)
    assert policy.sgd_binary_rule(n, d + 1, gdp_mu(EPS, DELTA))[0] == "select"
    fits = [_fit(X, y, random_state=s) for s in range(6)]
    assert all(f.prior_switch_["decision"] == "selection" for f in fits)
    branches = [f.prior_switch_["branch"] for f in fits]
    assert 0 < branches.count("prior") < len(fits)
    for f, counts in zip(fits, seen):
        # the fit predicts what the prior predicts, but for a row or two in 6000
        assert abs(counts[0] - counts[1]) <= 2
        assert f.score(X, y) == pytest.approx(1 - y.mean(), abs=1e-3)
        assert (f.schedule_ == "prior") == (f.prior_switch_["branch"] == "prior")
        if f.schedule_ == "prior":
            assert not f.coef_.any() and f.n_iter_ == 0 and f.prior_switch_["branch"] == "prior"
            # the steps ran and were released all the same: the fit is their composition
            assert [r.name for r in f.releases_][1] == "gradient sums"


def test_the_releases_compose_exactly_no_envelope():
    """Class counts (5% of mu^2), the T Poisson-sampled steps, the selection (5%): the RDP
    composition of exactly these releases is the epsilon reported, within 1e-9 of the target,
    and dp-accounting's RDP accountant on the same events agrees on its integer orders."""
    X, y = _separable()
    budget = PrivacyBudget(1.0, 1e-6)
    clf = _fit(X, y, budget=budget)
    counts, grads, sel = clf.releases_
    assert counts.name == "class counts (start)" and grads.name == "gradient sums"
    assert sel.name.startswith("selection")
    mu = gdp_mu(EPS, DELTA)
    _, count_share, select_share = policy.SGD_BINARY_SELECT
    # closed forms: a share s of mu^2 is one release with multiplier 1 / (sqrt(s) mu)
    assert counts.multipliers[0] == pytest.approx(1 / (math.sqrt(count_share) * mu), rel=1e-12)
    assert sel.multipliers[0] == pytest.approx(1 / (math.sqrt(select_share) * mu), rel=1e-12)
    assert counts.sampling_rate == sel.sampling_rate == 1.0
    assert grads.sampling_rate == clf.sampling_rate_ < 1.0
    # the steps: the RDP calibration composed with both fixed releases
    z = RDPAccountant().calibrate(
        np.ones(clf.n_iter_),
        EPS,
        DELTA,
        sampling_rate=grads.sampling_rate,
        prior=[counts.multipliers[0], sel.multipliers[0]],
    )
    np.testing.assert_allclose(grads.multipliers, z, rtol=1e-12)
    # what is reported is the composition of every release made, at the target
    spent = RDPAccountant().epsilon(clf.releases_, DELTA)
    assert clf.epsilon_ == spent
    assert EPS * (1 - 1e-9) <= spent <= EPS
    assert budget.spent_epsilon() <= EPS * (1 + 1e-9)
    # an independent composition: Gaussian RDP alpha / (2 z^2) for the two full-batch releases,
    # the subsampled curve for the steps, against dp-accounting's accountant
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant

    orders = np.arange(2, 257, dtype=float)
    gaussian = orders / 2.0 * (counts.multipliers[0] ** -2 + sel.multipliers[0] ** -2)
    ours = rdp_subsampled_gaussian(grads.sampling_rate, grads.multipliers, orders) + gaussian
    acc = rdp_privacy_accountant.RdpAccountant(list(orders))
    acc.compose(dpa.GaussianDpEvent(float(counts.multipliers[0])))
    acc.compose(dpa.GaussianDpEvent(float(sel.multipliers[0])))
    acc.compose(
        dpa.PoissonSampledDpEvent(grads.sampling_rate, dpa.GaussianDpEvent(float(z[0]))),
        clf.n_iter_,
    )
    assert rdp_epsilon(ours, orders, DELTA) == pytest.approx(acc.get_epsilon(DELTA), rel=1e-6)
    # the package's finer orders: never looser than the integer ones
    assert spent <= acc.get_epsilon(DELTA) * (1 + 1e-6)


def test_the_public_decision_is_one_exact_gaussian_release():
    """Without the selection (policy), p = 0.5 and two classes: the switch could only choose the
    intercept-only model, so it is chosen before any draw. One release of the counts with the
    whole budget: exact GDP, mu = gdp_mu(epsilon, delta), no DP-SGD branch, no envelope."""
    X, y = _separable()
    with policy.using(SGD_BINARY_SELECT=None):
        clf = _fit(X, y)
    assert [r.name for r in clf.releases_] == ["class counts"]
    (counts,) = clf.releases_
    assert counts.sensitivity["add_remove"] >= CLASS_COUNT_SENSITIVITY["add_remove"]
    assert gdp_mu_of_releases(clf.releases_) == pytest.approx(gdp_mu(EPS, DELTA), rel=1e-9)
    assert gdp_mu_of_releases(clf.releases_) <= gdp_mu(EPS, DELTA)
    assert clf.epsilon_ == pytest.approx(gdp_epsilon(DELTA, 1 / counts.multipliers[0]), rel=1e-12)
    assert clf.epsilon_ <= EPS
    switch = clf.prior_switch_
    assert switch["decision"] == "public" and switch["branch"] == "prior"
    assert switch["noise_scale"] == 1.0 and switch["envelope_delta"] is None
    assert list(switch["releases"]) == ["prior"]
    assert clf.schedule_ == "prior" and clf.n_iter_ == 0 and not clf.coef_.any()
    # with a noisy row count the two releases compose exactly to the budget's mu
    with policy.using(SGD_BINARY_SELECT=None):
        clf = _fit(X, y, n_samples=None, epsilon=0.02)
    assert [r.name for r in clf.releases_] == ["row count", "class counts"]
    assert gdp_mu_of_releases(clf.releases_) == pytest.approx(gdp_mu(0.02, clf.delta_), rel=1e-9)
    assert clf.epsilon_ <= 0.02


def test_below_s0_the_public_decision_and_above_it_the_selection():
    """``s0`` reads the ratio at the released count (not raised by its margin) or the public
    n_samples: below it the intercept-only model is decided before any draw."""
    X, y = _separable()
    s0 = 5.0  # everything below the switch's ratio
    with policy.using(SGD_BINARY_SELECT=(s0,) + tuple(policy.SGD_BINARY_SELECT[1:])):
        clf = _fit(X, y)
    assert clf.prior_switch_["decision"] == "public" and clf.releases_[0].name == "class counts"
    with policy.using(SGD_BINARY_SELECT=(4.0,) + tuple(policy.SGD_BINARY_SELECT[1:])):
        assert _fit(X, y).prior_switch_["decision"] == "selection"  # ratio 4.5


def test_steps_that_cannot_be_certified_give_the_public_decision(monkeypatch, capsys):
    """Where the accountant cannot certify the steps composed with the counts and the selection
    (a public fact, found before any draw), the fit takes the intercept-only model with the
    whole budget and says so; nothing was drawn for the selection's releases."""
    from skdpgd._minibatch import road

    X, y = _separable()
    real = road.calibrate

    def refuse(shapes, *args, **kwargs):
        if shapes[0].name == "gradient sums":
            raise ValueError("cannot certify")
        return real(shapes, *args, **kwargs)

    monkeypatch.setattr(road, "calibrate", refuse)
    clf = _fit(X, y, verbose=1)
    out = capsys.readouterr()
    assert "cannot be certified" in out.out + out.err
    assert "Poisson-sampled steps at rate" not in out.out + out.err
    assert clf.prior_switch_["decision"] == "public"
    assert [r.name for r in clf.releases_] == ["class counts"]
    assert gdp_mu_of_releases(clf.releases_) == pytest.approx(gdp_mu(EPS, DELTA), rel=1e-9)


def test_a_malformed_rule_is_refused():
    X, y = _separable(n=200)
    for rule in ((0.5, 0.6, 0.5), (-1.0, 0.05, 0.05), (0.5, 0.0, 0.05)):
        with policy.using(SGD_BINARY_SELECT=rule), pytest.raises(ValueError, match="s0 >= 0"):
            _fit(X, y)


def test_more_classes_whose_switch_cannot_choose_otherwise_are_decided_publicly():
    """p <= 1/K: the shrunk counts' largest share is always at least 1/K, so the switch's
    branch is known before the draw; it is taken then, with no envelope."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4)) / 2
    y = rng.integers(0, 3, 3000)
    kw = dict(epsilon=0.02, delta=DELTA, data_norm=1.0, n_samples=3000, random_state=0)
    switch = DPSGDClassifier(**kw).fit(X, y).prior_switch_
    assert switch["decision"] == "counts" and switch["noise_scale"] > 1.0  # p = 0.5 > 1/3
    with policy.using(SGD_PRIOR_SWITCH=(5.0, 1 / 3, 0.1)):
        clf = DPSGDClassifier(**kw).fit(X, y)
    assert clf.prior_switch_["decision"] == "public" and clf.prior_switch_["noise_scale"] == 1.0
    assert [r.name for r in clf.releases_] == ["class counts"]
    assert gdp_mu_of_releases(clf.releases_) == pytest.approx(gdp_mu(0.02, DELTA), rel=1e-9)


# ---- the selection's statistic: its sensitivity, and what predict computes ----------------


def _models(d, rng):
    return (rng.normal(size=(1, d)), rng.normal(size=1)), (np.zeros((1, d)), np.array([0.4]))


@pytest.mark.parametrize("sparse_input", [False, True])
def test_the_selection_moves_by_at_most_one_row_and_that_is_attained(sparse_input):
    """Each row adds ``w_i ([fit right] - [prior right])`` in [-1, 1] to the difference: adding
    or removing one row moves it by at most 1 (replacing one by at most 2), and rows exist
    that move it by exactly that."""
    rng = np.random.default_rng(5)
    n, d = 300, 6
    X = rng.normal(size=(n, d))
    y = rng.choice([-1.0, 1.0], n)
    w = rng.uniform(0, 1, n)
    fit, prior = _models(d, rng)

    def diff(Xa, ya, wa):
        Xa = sp.csr_matrix(Xa) if sparse_input else Xa
        right = selection_counts(Xa, ya, wa, fit, prior)
        return right[0] - right[1]

    base = diff(X, y, w)
    moves = []
    for _ in range(200):  # add one row (any label, any weight in [0, 1])
        x = rng.normal(size=(1, d)) * rng.uniform(0.1, 10)
        lab = rng.choice([-1.0, 1.0], 1)
        wt = rng.choice([1.0, rng.uniform()], 1)
        moves.append(diff(np.vstack([X, x]), np.append(y, lab), np.append(w, wt)) - base)
    moves = np.abs(moves)
    assert moves.max() <= SELECTION_SENSITIVITY["add_remove"] + 1e-9
    # attained: a row of weight 1 that the fit predicts right and the prior wrong (the prior
    # predicts +1 everywhere; the fit predicts -1 where its margin is negative)
    assert prior[1][0] > 0
    margin = X @ fit[0][0] + fit[1][0]
    i, j = (int(k) for k in np.argsort(margin)[:2])
    assert margin[i] < 0 and margin[j] < 0
    x = X[i : i + 1]
    added = diff(np.vstack([X, x]), np.append(y, -1.0), np.append(w, 1.0)) - base
    assert added == pytest.approx(SELECTION_SENSITIVITY["add_remove"], abs=1e-12)
    # replace-one: row j labelled +1 with weight 1 (fit wrong, prior right: -1) replaced by
    # that row (+1): the difference moves by 2
    y2, w2 = y.copy(), w.copy()
    y2[j], w2[j] = 1.0, 1.0
    X3, y3 = X.copy(), y2.copy()
    X3[j], y3[j] = x[0], -1.0
    moved = diff(X3, y3, w2) - diff(X, y2, w2)
    assert moved == pytest.approx(SELECTION_SENSITIVITY["replace"], abs=1e-12)


def _capture_selection(monkeypatch):
    from skdpgd._minibatch import road

    seen = []
    original = road.selection_counts

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        seen.append(np.array(out))
        return out

    monkeypatch.setattr(road, "selection_counts", spy)
    return seen


@pytest.mark.parametrize("kind", ["dense", "csr", "weighted"])
def test_the_noise_free_counts_are_what_each_released_model_predicts(monkeypatch, kind):
    """The selection counts the rows each released model's own ``predict`` gets right, on the
    rows as given: DP-SGD runs on clipped rows divided by the intercept column, which must not
    leak into the counts (rows here reach norm 3 against data_norm = 1)."""
    X, y = _separable(n=1500)
    X = X * np.random.default_rng(2).uniform(0.2, 3.0, size=(X.shape[0], 1))
    w = np.ones(X.shape[0])
    if kind == "weighted":
        w = np.random.default_rng(3).uniform(0, 1, X.shape[0])
    data = sp.csr_matrix(X) if kind == "csr" else X
    seen = _capture_selection(monkeypatch)
    for bias, kept in ((1e12, True), (-1e12, False)):  # keep the fit / return the prior
        seen.clear()
        with policy.using(AUTO_SELECT_BIAS=bias):
            clf = DPSGDClassifier(
                epsilon=EPS, delta=DELTA, data_norm=1.0, n_samples=1500, random_state=0
            ).fit(data, y, sample_weight=w)
        assert clf.prior_switch_["decision"] == "selection"
        assert (clf.schedule_ != "prior") == kept
        (counts,) = seen
        right = float(np.sum(w * (clf.predict(data) == y)))
        assert counts[0 if kept else 1] == pytest.approx(right, rel=1e-12, abs=1e-9)
    # the kept fit's count is not the prior's (a test that could tell them apart)
    assert counts[0] != counts[1]

"""What a shared PrivacyBudget is charged for DP-SGD's prior switch: a bound for the choice
(the counts composed with the per-order maximum of both branches' RDP curves), valid at every
delta and in later composition, not the releases of the branch that ran (which is valid at the
fit's own delta only). skdpgd.accounting.envelope, "What a shared budget is charged"."""

import math
import warnings

import numpy as np
import pytest
from scipy.special import log_ndtr

from skdpgd import BudgetExceededError, DPSGDClassifier, PrivacyBudget
from skdpgd._core.prior import PriorSwitch
from skdpgd.accounting import (
    RDP_DEFAULT_ORDERS,
    Release,
    gdp_mu_of_releases,
    rdp_subsampled_gaussian,
    switch_charge,
)
from skdpgd.accounting.envelope import branch_profile, envelope_epsilon

EPS, DELTA, N = 0.15, 1e-5, 300


def _data(labels, seed=0, d=4):
    """Three classes on N rows: 'balanced' (the released counts choose DP-SGD) or
    'imbalanced' (98% in class 0: the intercept-only model)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, d)) / math.sqrt(d)
    if labels == "balanced":
        y = rng.integers(0, 3, size=N)
    else:
        y = np.where(rng.random(N) < 0.98, 0, rng.integers(1, 3, N))
    return X, y


def _fit(labels, budget=None, seed=0, d=4, **kw):
    X, y = _data(labels, seed, d)
    params = dict(
        loss="log_loss",
        epsilon=EPS,
        delta=DELTA,
        n_samples=N,
        data_norm=1.0,
        classes=[0, 1, 2],
        random_state=seed,
        budget=budget,
    )
    params.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPSGDClassifier(**params).fit(X, y)


def _first(fit):
    return fit.releases_[:-1]


def _gdp_delta(eps, mu):
    """Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), written here again (scipy only)."""
    a = log_ndtr(-eps / mu + mu / 2)
    b = eps + log_ndtr(-eps / mu - mu / 2)
    return -math.exp(a) * math.expm1(b - a) if b < a else 0.0


def _envelope_epsilon(fit, delta):
    """The package's own envelope of the shipped fit (both branches as released) at delta."""
    first = _first(fit)
    mu1 = gdp_mu_of_releases(first)
    profiles = [branch_profile(rels)(1.0) for rels in fit.prior_switch_["releases"].values()]
    return envelope_epsilon(
        delta, mu1, lambda t: np.max([p(t) for p in profiles], axis=0), rtol=1e-5
    )


def test_a_budget_at_another_delta_is_charged_a_bound_for_the_choice():
    """The review's reproduction: a fit at delta 1e-5 charged to a budget stated at 1e-9.
    Before, the ledger held the counts and the branch that ran (0.2343 at 1e-9 while the
    package's own envelope of the fit gave 0.2440 there, and the counts with the
    intercept-only branch had delta 3.1e-9 at 0.2343). Now it holds the counts and the larger
    of the two branches' RDP curves at each order, whichever branch ran."""
    charged = {}
    for labels, branch in (("balanced", "sgd"), ("imbalanced", "prior")):
        budget = PrivacyBudget(10.0, 1e-9)
        fit = _fit(labels, budget)
        switch = fit.prior_switch_
        assert switch["decision"] == "counts" and switch["branch"] == branch
        assert fit.epsilon_ == EPS and switch["envelope_delta"] <= DELTA
        spent = budget.spent_epsilon()
        charged[labels] = spent
        # at least the package's own envelope of the fit at the budget's delta
        assert spent >= _envelope_epsilon(fit, 1e-9)
        # and each branch composed with the counts is within 1e-9 there: the intercept-only
        # one in exact GDP (the reviewer's 3.07e-9 before)
        mu = gdp_mu_of_releases(_first(fit) + switch["releases"]["prior"])
        assert _gdp_delta(spent, mu) <= 1e-9
        # the charge does not depend on the branch (nor on the data): one RDP curve
        (label, curve), *_ = budget.rdp_charges
        assert "either branch" in label
        assert [c[0] for c in budget.charges] == ["DPSGDClassifier (class counts (prior))"]
    assert charged["balanced"] == charged["imbalanced"]
    assert charged["balanced"] > 0.2342  # (the branch that ran alone: 0.23426)


def test_the_charge_is_the_per_order_maximum_of_both_branches():
    budget = PrivacyBudget(10.0, 1e-9)
    fit = _fit("balanced", budget)
    switch = fit.prior_switch_
    ((_, curve),) = budget.rdp_charges
    per_branch = []
    for rels in switch["releases"].values():
        c = np.zeros(RDP_DEFAULT_ORDERS.size)
        for r in rels:
            c = c + rdp_subsampled_gaussian(r.sampling_rate, r.multipliers, RDP_DEFAULT_ORDERS)
        per_branch.append(c)
    np.testing.assert_array_equal(curve, np.maximum(*per_branch))
    # the intercept-only branch dominates some orders, DP-SGD others
    assert np.any(per_branch[0] > per_branch[1]) and np.any(per_branch[1] > per_branch[0])


@pytest.mark.parametrize("labels", ["balanced", "imbalanced"])
@pytest.mark.parametrize("n_samples", [N, None])
def test_a_budget_sized_exactly_to_the_fit_accepts_it(labels, n_samples):
    """With a public n_samples, and with a noisy row count (charged as drawn, and composed
    with the counts when the prior branch is raised; 40 features keep the fit below the
    switch's ratio at the count's upper bound)."""
    budget = PrivacyBudget(EPS, DELTA)
    fit = _fit(labels, budget, n_samples=n_samples, d=4 if n_samples else 40)
    switch = fit.prior_switch_
    assert switch is not None and switch["decision"] == "counts"
    assert fit.epsilon_ == EPS
    assert budget.spent_epsilon() == switch["charged_epsilon"] <= EPS
    assert switch["prior_scale"] > 1.0  # the intercept-only branch paid for it


def test_a_private_pipeline_sized_to_the_fit_accepts_it():
    from skdpgd.pipeline import make_private_pipeline
    from skdpgd.preprocessing import BoundedScaler

    X, y = _data("imbalanced")
    budget = PrivacyBudget(EPS, DELTA)
    pipe = make_private_pipeline(
        BoundedScaler(bounds=(-3.0, 3.0)),
        DPSGDClassifier(n_samples=N, classes=[0, 1, 2]),
        epsilon=EPS,
        delta=DELTA,
        budget=budget,
        random_state=0,
    ).fit(X, y)
    final = pipe[-1]
    assert final.prior_switch_["decision"] == "counts"
    assert pipe.epsilon_ == EPS and budget.spent_epsilon() <= EPS
    # the pipeline lists what the estimator released (the branch that ran)
    assert [r.name for r in pipe.releases_] == [
        f"dpsgdclassifier: {r.name}" for r in final.releases_
    ]


def test_a_budget_too_small_refuses_before_the_counts_are_drawn(monkeypatch):
    drawn = []
    real = PriorSwitch.release.__func__

    def spy(cls, *a, **k):
        drawn.append(1)
        return real(cls, *a, **k)

    monkeypatch.setattr(PriorSwitch, "release", classmethod(spy))
    budget = PrivacyBudget(0.9 * EPS, DELTA)
    with pytest.raises(BudgetExceededError, match="Nothing was released"):
        _fit("imbalanced", budget)
    assert drawn == [] and budget.charges == [] and budget.rdp_charges == []
    # and a budget that holds it: the counts are drawn once
    _fit("imbalanced", PrivacyBudget(EPS, DELTA))
    assert drawn == [1]


def test_two_fits_in_one_budget_compose_validly():
    """Two switch fits (one per branch) in one budget at delta 1e-9. The ledger equals the
    bound written out here from the fits' releases (per fit: the counts' Gaussian RDP
    ``alpha / (2 z^2)`` plus, order by order, the larger of the two branches' curves; summed
    over the fits; converted by the improved RDP bound, written here again); and each of the
    four combinations of branches, composed by dp-accounting's pessimistic PLD (independent
    code), is within 1e-9 at what the ledger says."""
    budget = PrivacyBudget(10.0, 1e-9)
    fits = [_fit("balanced", budget, seed=0), _fit("imbalanced", budget, seed=1)]
    assert [f.prior_switch_["branch"] for f in fits] == ["sgd", "prior"]
    spent = budget.spent_epsilon()
    a = np.asarray(RDP_DEFAULT_ORDERS, dtype=float)

    def gaussian(rels):
        return sum(a / (2.0 * float(z) ** 2) for r in rels for z in r.multipliers)

    total = np.zeros(a.size)
    for f in fits:
        br = f.prior_switch_["releases"]
        ((grads,),) = [br["sgd"]]
        sgd = rdp_subsampled_gaussian(grads.sampling_rate, grads.multipliers, RDP_DEFAULT_ORDERS)
        total += gaussian(_first(f)) + np.maximum(gaussian(br["prior"]), sgd)
    reference = max(
        0.0, float(np.min(total + np.log1p(-1 / a) - (math.log(1e-9) + np.log(a)) / (a - 1)))
    )
    assert spent == pytest.approx(reference, rel=1e-9)
    assert spent >= reference * (1 - 1e-12)

    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")

    def pessimistic(rels):
        out = None
        for r in rels:
            (z,) = np.unique(r.multipliers)
            p = pld.from_gaussian_mechanism(
                float(z), sampling_prob=r.sampling_rate, value_discretization_interval=1e-4
            ).self_compose(r.n_steps)
            out = p if out is None else out.compose(p)
        return out

    paths = [
        [pessimistic(_first(f) + f.prior_switch_["releases"][b]) for b in ("prior", "sgd")]
        for f in fits
    ]
    for one in paths[0]:
        for two in paths[1]:
            assert one.compose(two).get_delta_for_epsilon(spent) <= 1e-9


def test_switch_charge_nudges_a_branch_over_by_rounding_and_raises_only_the_prior():
    first = [Release("counts", [30.0], {"replace": 1.4, "add_remove": 1.0}, "add_remove")]
    prior = [Release("counts again", [0.5], {"replace": 1.4, "add_remove": 1.0}, "add_remove")]
    sgd = [
        Release(
            "gradient sums",
            np.full(50, 1.2),
            {"replace": 2.0, "add_remove": 1.0},
            "add_remove",
            0.1,
        )
    ]
    from skdpgd.accounting import Composition

    own = Composition(first + sgd).epsilon(1e-6)
    got = switch_charge(own * (1 - 1e-14), 1e-6, first, {"prior": prior, "sgd": sgd}, "prior")
    assert got.epsilon <= own * (1 - 1e-14)
    assert 1.0 < got.branches["sgd"][0].multipliers[0] / 1.2 < 1.0 + 1e-9  # a rounding nudge
    assert got.scale > 1.0 and got.branches["prior"][0].multipliers[0] == 0.5 * got.scale
    # a branch far above the target is not a rounding: refused with within, kept without
    with pytest.raises(ValueError, match="not calibrated"):
        switch_charge(0.5 * own, 1e-6, first, {"prior": prior, "sgd": sgd}, "prior")
    loose = switch_charge(0.5 * own, 1e-6, first, {"prior": prior, "sgd": sgd}, "prior", False)
    assert loose.epsilon == pytest.approx(own, rel=1e-12)  # what DP-SGD alone is charged
    assert loose.branches["sgd"][0].multipliers[0] == 1.2


def test_the_privacy_report_reads_a_switch_fit_as_its_budget_is_charged():
    """The report's epsilon at every delta is the ledger's (the counts and the per-order
    maximum of both branches), for the fit and for a private pipeline ending with it; before,
    it composed the releases of the branch that ran (below the envelope away from delta_)."""
    from skdpgd import privacy_report
    from skdpgd.pipeline import make_private_pipeline
    from skdpgd.preprocessing import BoundedScaler

    budget = PrivacyBudget(10.0, 1e-9)
    fit = _fit("balanced", budget)
    report = privacy_report(fit)
    assert report.epsilon(1e-9) == pytest.approx(budget.spent_epsilon(), rel=1e-12)
    assert report.epsilon(1e-9) >= _envelope_epsilon(fit, 1e-9)
    assert report.epsilon(DELTA) <= EPS
    assert any("prior switch" in n for n in report.notes)
    X, y = _data("balanced")
    pipe = make_private_pipeline(
        BoundedScaler(bounds=(-3.0, 3.0)),
        DPSGDClassifier(n_samples=N, classes=[0, 1, 2]),
        epsilon=EPS,
        delta=DELTA,
        random_state=0,
    ).fit(X, y)
    assert pipe[-1].prior_switch_["decision"] == "counts"
    inner = privacy_report(pipe[-1])
    assert privacy_report(pipe).epsilon(1e-9) == pytest.approx(inner.epsilon(1e-9), rel=1e-12)
    assert inner.epsilon(1e-9) >= _envelope_epsilon(pipe[-1], 1e-9)

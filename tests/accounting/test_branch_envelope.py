"""The privacy of a fit that chooses its mechanism from a Gaussian release (DP-SGD's prior
switch): the envelope of the branches (skdpgd.accounting.envelope, docs/theory.md)."""

import math
import warnings

import numpy as np
import pytest
from scipy import integrate
from scipy.special import log_ndtr

from skdpgd import DPSGDClassifier, policy
from skdpgd.accounting.envelope import (
    branch_profile,
    envelope_delta,
    envelope_epsilon,
    gaussian_profile,
    rdp_profile,
)
from skdpgd.accounting import (
    GaussianDPAccountant,
    RDP_DEFAULT_ORDERS,
    RDPAccountant,
    gdp_delta,
    gdp_mu,
    gdp_mu_of_releases,
    rdp_subsampled_gaussian,
)


def _gdp_delta_independent(t, mu):
    """Phi(-t/mu + mu/2) - e^t Phi(-t/mu - mu/2), written here again (scipy only)."""
    a = log_ndtr(-t / mu + mu / 2)
    b = t + log_ndtr(-t / mu - mu / 2)
    return -math.exp(a) * math.expm1(b - a) if b < a else 0.0


def _expectation(fn, mu1, lo=-14.0, hi=14.0, pieces=56):
    """E[fn(L)], L ~ N(mu1^2/2, mu1^2), by adaptive quadrature on pieces of the standard
    normal variable (beyond +-14 the mass is below 1e-44)."""
    edges = np.linspace(lo, hi, pieces + 1)
    dens = lambda u: math.exp(-0.5 * u * u) / math.sqrt(2 * math.pi)  # noqa: E731
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        val, _ = integrate.quad(
            lambda u: dens(u) * fn(0.5 * mu1 * mu1 + mu1 * u),
            a,
            b,
            epsabs=0.0,
            epsrel=1e-13,
            limit=200,
        )
        total += val
    return total


@pytest.mark.parametrize(
    "epsilon,mu1,mu_a", [(1.0, 0.3, 0.8), (0.1, 0.03, 0.09), (5.0, 1.0, 2.0), (0.01, 0.002, 0.005)]
)
def test_one_gaussian_branch_is_the_exact_gdp_composition(epsilon, mu1, mu_a):
    """The derivation, checked: with one Gaussian branch and no max, the envelope
    E_L[delta_a(eps - L)] over the first release's privacy loss L ~ N(mu1^2/2, mu1^2) is the
    exact GDP delta of sqrt(mu1^2 + mu_a^2)."""
    exact = gdp_delta(epsilon, math.hypot(mu1, mu_a))
    quad = _expectation(lambda loss: _gdp_delta_independent(epsilon - loss, mu_a), mu1)
    assert quad == pytest.approx(exact, rel=1e-9)
    # the package's bound: above the exact value, and close to it
    bound = envelope_delta(epsilon, mu1, lambda t: gaussian_profile(t, mu_a), rtol=1e-9)
    assert exact <= bound.upper <= exact * (1 + 1e-7)
    assert bound.estimate == pytest.approx(exact, rel=1e-7)
    # the default accuracy (what fits use) stays within 1e-4
    assert (
        exact
        <= envelope_delta(epsilon, mu1, lambda t: gaussian_profile(t, mu_a)).upper
        <= exact * 1.0001
    )


def test_one_gaussian_branch_in_high_precision():
    """The same identity in 40 digits (mpmath): the integral and the closed form agree far
    below double precision."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    eps, mu1, mu_a = mp.mpf("0.7"), mp.mpf("0.25"), mp.mpf("0.6")

    def gdp(t, mu):
        return mp.ncdf(-t / mu + mu / 2) - mp.e**t * mp.ncdf(-t / mu - mu / 2)

    integral = mp.quad(
        lambda u: mp.npdf(u) * gdp(eps - (mu1**2 / 2 + mu1 * u), mu_a), mp.linspace(-25, 25, 51)
    )
    assert abs(integral / gdp(eps, mp.sqrt(mu1**2 + mu_a**2)) - 1) < mp.mpf("1e-30")


def test_branch_profiles_hold_for_negative_arguments():
    """Every profile is at least 1 - e^t below 0 (a hockey-stick divergence is), and the
    Gaussian one is the exact formula on both sides."""
    t = np.linspace(-5, 5, 41)
    exact = np.array([_gdp_delta_independent(x, 0.7) for x in t])
    got = gaussian_profile(t, 0.7)
    assert np.all(got >= exact) and np.allclose(got, exact, rtol=1e-12, atol=1e-16)
    rdp = rdp_subsampled_gaussian(0.05, np.full(50, 1.5), RDP_DEFAULT_ORDERS)
    prof = rdp_profile(t, rdp, RDP_DEFAULT_ORDERS)
    assert np.all(prof >= -np.expm1(np.minimum(t, 0))) and np.all(prof <= 1)
    assert np.all(np.diff(prof) <= 1e-15)  # non-increasing


def _switch_fit(
    n_classes=2,
    epsilon=0.01,
    n_samples=2000,
    delta=1e-6,
    d=5,
    accountant="rdp",
    labels="imbalanced",
    seed=0,
    n=80,
):
    """A fit on ``n`` rows whose public n_samples puts it below the switch's ratio."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / math.sqrt(d)
    if labels == "imbalanced":
        y = np.where(rng.random(n) < 0.85, 0, rng.integers(1, n_classes, n))
    else:
        y = np.arange(n) % n_classes
    est = DPSGDClassifier(
        epsilon=epsilon,
        delta=delta,
        data_norm=1.0,
        n_samples=n_samples,
        accountant=accountant,
        classes=list(range(n_classes)),
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


def _unshrunk(fit):
    """``{branch: factor}``: what each branch's shipped noise was multiplied by (the common
    noise_scale; the intercept-only branch also its prior_scale, for the budget's charge)."""
    switch = fit.prior_switch_
    return {
        k: switch["noise_scale"] * (switch["prior_scale"] if k == "prior" else 1.0)
        for k in switch["releases"]
    }


def _envelope_of(fit, unshrunk=False, **kw):
    """The envelope's integrand from the releases the fit records, as shipped or (``unshrunk``)
    each branch's noise divided by what the switch multiplied it by: each branch calibrated on
    its own. Read it with ``rtol=1e-5``, the fit's accuracy (a coarser grid gives a looser
    bound)."""
    switch = fit.prior_switch_
    first = fit.releases_[:-1]
    factor = _unshrunk(fit) if unshrunk else {k: 1.0 for k in switch["releases"]}
    branches = [
        [r.calibrated(r.multipliers / factor[k], r.sensitivity) for r in rels]
        for k, rels in switch["releases"].items()
    ]
    mu1 = gdp_mu_of_releases(first)
    makers = [
        branch_profile(rels, fit.accountant, t_max=fit.epsilon + 40 * mu1 + 1) for rels in branches
    ]
    profiles = [make(1.0) for make in makers]
    return mu1, (lambda t: np.max([p(t) for p in profiles], axis=0))


def test_both_branches_composed_with_the_first_release_are_below_the_envelope():
    """dp-accounting (test-only reference): each branch composed with the first release, by
    its optimistic PLD (a lower bound on that composition's true delta), is at most the
    envelope at every epsilon; and each is within the budget, while the envelope of the
    unshrunk branches is not: per-branch calibration did not bound the fit."""
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    fit = _switch_fit(n_classes=3, epsilon=0.1, n_samples=400, delta=1e-6)
    switch = fit.prior_switch_
    assert switch is not None and switch["noise_scale"] > 1.0
    (first,) = fit.releases_[:-1]
    mu1 = gdp_mu_of_releases([first])
    (counts,) = switch["releases"]["prior"]
    (grads,) = switch["releases"]["sgd"]
    assert np.unique(grads.multipliers).size == 1  # 'auto' is the uniform shape
    vdi = 1e-5

    def optimistic(unshrunk):
        factor = _unshrunk(fit) if unshrunk else {"prior": 1.0, "sgd": 1.0}
        p1 = pld.from_gaussian_mechanism(
            1.0 / mu1, pessimistic_estimate=False, value_discretization_interval=vdi
        )
        pa = pld.from_gaussian_mechanism(
            counts.multipliers[0] / factor["prior"],
            pessimistic_estimate=False,
            value_discretization_interval=vdi,
        )
        pb = pld.from_gaussian_mechanism(
            grads.multipliers[0] / factor["sgd"],
            sampling_prob=grads.sampling_rate,
            pessimistic_estimate=False,
            value_discretization_interval=vdi,
        ).self_compose(grads.n_steps)
        return p1.compose(pa), p1.compose(pb)

    for unshrunk in (False, True):
        mu, env = _envelope_of(fit, unshrunk)
        comp_a, comp_b = optimistic(unshrunk)
        for eps in (0.03, 0.06, 0.1, 0.15):
            bound = envelope_delta(eps, mu, env, rtol=1e-5).upper
            # (dp-accounting's sums carry an absolute rounding of ~1e-15)
            assert comp_a.get_delta_for_epsilon(eps) <= bound + 1e-14
            assert comp_b.get_delta_for_epsilon(eps) <= bound + 1e-14
    # unshrunk: each branch composed with the first is within delta, the envelope is not
    mu, env = _envelope_of(fit, unshrunk=True)
    comp_a, comp_b = optimistic(unshrunk=True)
    assert max(comp_a.get_delta_for_epsilon(0.1), comp_b.get_delta_for_epsilon(0.1)) <= 1e-6
    assert envelope_delta(0.1, mu, env, rtol=1e-5).upper > 1e-6
    # shipped: the envelope is within delta at epsilon
    mu, env = _envelope_of(fit)
    assert envelope_delta(0.1, mu, env, rtol=1e-5).upper <= 1e-6
    assert switch["envelope_delta"] <= 1e-6 and fit.epsilon_ == 0.1


def test_envelope_of_two_branches_matches_an_independent_quadrature():
    """The envelope with the max, against scipy's adaptive quadrature of the same integrand
    written independently (the GDP formula and the RDP conversion, from the RDP curve)."""
    fit = _switch_fit(n_classes=3, epsilon=0.3, n_samples=100, delta=1e-5)
    switch = fit.prior_switch_
    (first,) = fit.releases_[:-1]
    mu1 = gdp_mu_of_releases([first])
    mu_a = 1.0 / switch["releases"]["prior"][0].multipliers[0]
    (grads,) = switch["releases"]["sgd"]
    orders = RDP_DEFAULT_ORDERS
    rdp = rdp_subsampled_gaussian(grads.sampling_rate, grads.multipliers, orders)

    def rdp_bound(t):
        def direct(x):
            e = (orders - 1) * (rdp - x + np.log1p(-1 / orders)) - np.log(orders)
            return min(1.0, math.exp(min(float(np.min(e)), 0.0)))

        if t >= 0:
            return direct(t)
        return min(direct(t), -math.expm1(t) + math.exp(t) * direct(-t))

    eps = 0.3
    quad = _expectation(
        lambda loss: max(_gdp_delta_independent(eps - loss, mu_a), rdp_bound(eps - loss)),
        mu1,
        pieces=400,
    )
    bound = envelope_delta(
        eps,
        mu1,
        lambda t: np.maximum(gaussian_profile(t, mu_a), rdp_profile(t, rdp, orders)),
        rtol=1e-7,
    )
    assert bound.upper >= quad * (1 - 1e-9)
    assert bound.estimate == pytest.approx(quad, rel=1e-6)
    assert bound.upper <= 1e-5  # the shipped branches: within the budget


def test_the_noise_scale_is_public_and_fixed_before_the_counts_are_drawn():
    """The scale and both branches' releases depend on public values only: two data sets that
    take different branches get the same ones, and so does another seed."""
    kw = dict(n_classes=3, epsilon=0.05, n_samples=5000, n=5000, d=300)
    prior = _switch_fit(labels="imbalanced", **kw)
    fit = _switch_fit(labels="balanced", seed=1, **kw)
    assert prior.prior_switch_["branch"] == "prior" and fit.prior_switch_["branch"] == "sgd"
    assert prior.prior_switch_["noise_scale"] == fit.prior_switch_["noise_scale"]
    for name in ("prior", "sgd"):
        (a,), (b,) = prior.prior_switch_["releases"][name], fit.prior_switch_["releases"][name]
        np.testing.assert_array_equal(a.multipliers, b.multipliers)
    # what each fit released is its branch's calibrated releases
    for f in (prior, fit):
        (made,) = f.releases_[1:]
        (planned,) = f.prior_switch_["releases"][f.prior_switch_["branch"]]
        np.testing.assert_array_equal(made.multipliers, planned.multipliers)
        assert made.sensitivity == planned.sensitivity


def _below_ratio(k, d, n, eps, delta):
    n_params = (d + 1) * (1 if k == 2 else k)
    return policy.sgd_prior_switch(n, n_params, gdp_mu(eps, delta), True, True, True) is not None


#: (classes, features, N, epsilon, delta) below the switch's ratio: for each of classes
#: 3/10, N 50/1e3/1e5, epsilon 0.01-10, delta 1e-5/1e-8, the fewest features (5, 300, 2000)
#: that put it there (the others are above the ratio: no switch). Two classes have no switch
#: on the released counts any more (tests/minibatch/test_sgd_binary_selection.py): below.
_GRID = [
    next(c for c in [(k, d, n, eps, delta) for d in (5, 300, 2000)] if _below_ratio(*c))
    for k in (3, 10)
    for n in (50, 1000, 100_000)
    for eps in (0.01, 0.1, 1.0, 10.0)
    for delta in (1e-5, 1e-8)
    if any(_below_ratio(k, d, n, eps, delta) for d in (5, 300, 2000))
]


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_prior_switch_keeps_the_envelope_within_the_budget_on_a_grid(accountant):
    """Classes 3/10, epsilon 0.01-10, N 50-1e5 (public n_samples), delta 1e-5/1e-8: in
    every configuration below the switch's ratio the envelope of the unshrunk branches was
    above delta at epsilon (measured: epsilon 0.04% to 2.3% over with RDP, up to 0.7% with
    PLD; benchmarks/bench_prior_switch_envelope.py), and the shipped fit's is within it."""
    grid = _GRID
    if accountant == "pld":
        pytest.importorskip("dp_accounting")
        # PLD calibration is slow: three of the grid, small to large N
        grid = [(3, 5, 50, 0.01, 1e-8), (10, 300, 1000, 0.1, 1e-8), (10, 300, 100_000, 0.01, 1e-8)]
    assert len(grid) >= (3 if accountant == "pld" else 30)
    for k, d, n, eps, delta in grid:
        fit = _switch_fit(
            n_classes=k, epsilon=eps, n_samples=n, delta=delta, d=d, accountant=accountant
        )
        switch = fit.prior_switch_
        assert switch is not None, (k, d, n, eps, delta)
        assert 1.0 < switch["noise_scale"] < 1.05
        mu, env = _envelope_of(fit)
        assert envelope_delta(eps, mu, env, rtol=1e-5).upper <= delta
        assert switch["envelope_delta"] <= delta and fit.epsilon_ == eps
        # a shared budget's charge for either branch (tests/accounting/test_switch_charge.py):
        # within
        # the fit's budget with RDP, the intercept-only branch paying for it (measured with
        # RDP: 1.05-1.15, and 3.0-3.5 at N = 1e5, epsilon = 0.01)
        assert 1.0 <= switch["prior_scale"] < 4.0
        if accountant == "rdp":
            assert switch["charged_epsilon"] <= eps
        mu, env = _envelope_of(fit, unshrunk=True)
        assert envelope_delta(eps, mu, env, rtol=1e-5).upper > delta


def test_binary_fits_below_the_ratio_pay_no_envelope():
    """Two classes, the same grid: the counts' larger share is always at least p = 0.5, so no
    fit decides on the released counts: each either selects after the fit or takes the
    intercept-only model decided before any draw, and its releases compose plainly (no
    common noise scale, no envelope)."""
    grid = [
        next(c for c in [(2, d, n, eps, delta) for d in (5, 300, 2000)] if _below_ratio(*c))
        for n in (50, 1000, 100_000)
        for eps in (0.01, 0.1, 1.0, 10.0)
        for delta in (1e-5, 1e-8)
        if any(_below_ratio(2, d, n, eps, delta) for d in (5, 300, 2000))
    ]
    assert len(grid) >= 10
    decisions = set()
    for k, d, n, eps, delta in grid:
        fit = _switch_fit(n_classes=k, epsilon=eps, n_samples=n, delta=delta, d=d)
        switch = fit.prior_switch_
        assert switch["decision"] in ("selection", "public"), (d, n, eps, delta)
        assert switch["noise_scale"] == 1.0 and switch["envelope_delta"] is None
        assert "class counts (prior)" not in [r.name for r in fit.releases_]
        assert fit.epsilon_ <= eps
        decisions.add(switch["decision"])
    assert decisions == {"selection", "public"}


def test_envelope_epsilon_of_the_shipped_fit_is_at_most_epsilon():
    fit = _switch_fit(n_classes=10, epsilon=0.01, n_samples=100_000, delta=1e-8, d=300)
    mu, env = _envelope_of(fit)
    assert envelope_epsilon(1e-8, mu, env, rtol=1e-5, xtol=1e-6) <= 0.01
    mu, env = _envelope_of(fit, unshrunk=True)
    before = envelope_epsilon(1e-8, mu, env, rtol=1e-5, xtol=1e-6)
    assert 0.01 * 1.005 < before < 0.01 * 1.05  # the largest excess of the RDP grid
    # without the switch's releases the fit is the RDP calibration: not a switch fit
    assert RDPAccountant().epsilon(fit.releases_, 1e-8) <= 0.01
    assert GaussianDPAccountant().budget(0.01, 1e-8) == gdp_mu(0.01, 1e-8)


def test_a_switch_whose_steps_cannot_be_certified_takes_the_prior_for_every_data_set():
    """At epsilon = 1e-6, delta = 1e-12 RDP cannot certify the steps: decided before the counts
    are drawn (public), so every data set gets the intercept-only model, exact GDP. (Before,
    a three-class set whose noisy counts chose DP-SGD failed after they were drawn: a
    refusal that depended on the data.)"""
    kw = dict(n_classes=3, epsilon=1e-6, delta=1e-12, n_samples=2000, n=600)
    for labels in ("balanced", "imbalanced"):
        fit = _switch_fit(labels=labels, **kw)
        assert fit.schedule_ == "prior" and fit.n_iter_ == 0
        assert list(fit.prior_switch_["releases"]) == ["prior"]
        assert fit.prior_switch_["noise_scale"] == 1.0
        mu = gdp_mu_of_releases(fit.releases_)
        assert mu == pytest.approx(gdp_mu(1e-6, 1e-12), rel=1e-9) and mu <= gdp_mu(1e-6, 1e-12)
        assert 0.999e-6 <= fit.epsilon_ <= 1e-6

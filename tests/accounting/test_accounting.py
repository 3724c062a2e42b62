"""Gaussian-DP accounting: closed forms, an independent numerical integral, and dp-accounting."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from skdpgd.accounting import (
    GaussianDPAccountant,
    GaussianSteps,
    compose_gdp,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    zcdp_delta,
    zcdp_epsilon,
    zcdp_rho,
)


def delta_by_integration(epsilon, mu):
    """delta(eps) = E_{x ~ N(mu, 1)} [(1 - exp(eps - L(x)))_+] with L(x) = mu x - mu^2 / 2.

    The privacy-loss random variable of N(mu, 1) vs N(0, 1), integrated numerically: no
    closed form of the GDP curve is used.
    """
    lo = (epsilon + mu * mu / 2) / mu  # L(x) > eps  <=>  x > lo

    def f(x):
        return stats.norm.pdf(x - mu) * -math.expm1(epsilon - (mu * x - mu * mu / 2))

    val, _ = integrate.quad(f, lo, np.inf, epsabs=0, epsrel=1e-12, limit=200)
    return val


@pytest.mark.parametrize("mu", [0.05, 0.3, 1.0, 2.5])
@pytest.mark.parametrize("epsilon", [0.0, 0.1, 1.0, 3.0])
def test_gdp_delta_matches_numerical_integral(epsilon, mu):
    expected = delta_by_integration(epsilon, mu)
    assert gdp_delta(epsilon, mu) == pytest.approx(expected, rel=1e-7, abs=1e-300)


def test_gdp_delta_single_gaussian_matches_analytic_gaussian_mechanism():
    # Balle and Wang (2018), Theorem 8: a Gaussian mechanism with sensitivity 1 and std s is
    # (eps, delta)-DP iff delta >= Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s).
    for s in [0.5, 1.0, 4.0]:
        for eps in [0.2, 1.0, 5.0]:
            expected = stats.norm.cdf(1 / (2 * s) - eps * s) - math.exp(eps) * stats.norm.cdf(
                -1 / (2 * s) - eps * s
            )
            assert gdp_delta(eps, 1 / s) == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_gdp_delta_is_stable_at_extremes():
    # delta down to 1e-12 and eps up to 50: finite, in [0, 1], monotone.
    for mu in [0.01, 0.5, 5.0, 20.0]:
        eps = np.linspace(0, 50, 201)
        d = np.array([gdp_delta(e, mu) for e in eps])
        assert np.all(np.isfinite(d)) and np.all(d >= 0) and np.all(d <= 1)
        assert np.all(np.diff(d) <= 1e-300)
    # where exp(eps) alone overflows (eps > 709): still finite and right
    assert gdp_delta(800.0, 30.0) == pytest.approx(delta_by_integration(800.0, 30.0), rel=1e-6)
    assert gdp_delta(800.0, 30.0) > 0
    # huge mu: almost no privacy; eps inf: delta 0
    assert gdp_delta(1.0, 1e6) == pytest.approx(1.0)
    assert gdp_delta(math.inf, 3.0) == 0.0


@pytest.mark.parametrize(
    "epsilon,delta",
    [
        (0.01, 1e-12),
        (0.1, 1e-5),
        (1.0, 1e-5),
        (4.0, 1e-8),
        (10.0, 1e-6),
        (50.0, 1e-12),
        (1e4, 1e-5),
    ],
)
def test_gdp_mu_is_the_largest_mu_within_budget(epsilon, delta):
    mu = gdp_mu(epsilon, delta)
    assert gdp_delta(epsilon, mu) <= delta
    # a slightly larger mu overspends
    assert gdp_delta(epsilon, mu * (1 + 1e-9)) > delta
    # and eps(delta; mu) recovers epsilon
    assert gdp_epsilon(delta, mu) == pytest.approx(epsilon, rel=1e-9)


def test_design_table_figures_are_reproduced_independently():
    # DESIGN.md section 2 quotes the exact-GDP and zCDP budgets; recompute them from the
    # integral rather than from our closed form.
    for eps, delta, mu_exact, mu_zcdp in [
        (4, 1e-8, 0.7165, 0.6267),
        (1, 1e-5, 0.2681, 0.2041),
        (0.1, 1e-5, 0.0325, 0.0208),
    ]:
        mu = gdp_mu(eps, delta)
        assert mu == pytest.approx(mu_exact, abs=6e-5)
        assert delta_by_integration(eps, mu) == pytest.approx(delta, rel=1e-6)
        assert math.sqrt(2 * zcdp_rho(eps, delta)) == pytest.approx(mu_zcdp, abs=6e-5)


def test_zcdp_conversions_round_trip_and_are_valid():
    for eps, delta in [(0.1, 1e-5), (1.0, 1e-8), (8.0, 1e-12)]:
        rho = zcdp_rho(eps, delta)
        assert zcdp_epsilon(rho, delta) == pytest.approx(eps, rel=1e-12)
        assert zcdp_delta(rho, eps) <= delta * (1 + 1e-9)
        # rho-zCDP of a Gaussian composition is weaker than its exact GDP curve:
        # the GDP mu = sqrt(2 rho) spends less delta than the zCDP conversion promises.
        assert gdp_delta(eps, math.sqrt(2 * rho)) <= delta


def test_seed_000_zcdp_formula_is_not_ours():
    # Seed 000 prints R = 2 eps + 4 ln(1/delta) + 4 sqrt(ln(1/delta)(eps + ln(1/delta))),
    # a sign error. Its own experiment quotes (4, 1e-8) <-> 0.1963-zCDP, which ours gives.
    eps, delta = 4.0, 1e-8
    L = math.log(1 / delta)
    wrong_R = 2 * eps + 4 * L + 4 * math.sqrt(L * (eps + L))
    assert zcdp_rho(eps, delta) == pytest.approx(0.1963, abs=1e-4)
    assert wrong_R / (2 * zcdp_rho(eps, delta)) > 100


def test_compose_gdp():
    z = np.array([0.5, 1.0, 2.0, 4.0])
    assert compose_gdp(z) == pytest.approx(math.sqrt(4 + 1 + 0.25 + 1 / 16))
    assert compose_gdp(np.full(100, 10.0)) == pytest.approx(1.0)
    assert compose_gdp([0.0, 1.0]) == math.inf
    assert compose_gdp([]) == 0.0
    with pytest.raises(ValueError):
        compose_gdp([-1.0])


@pytest.mark.parametrize("epsilon", [0.05, 0.3, 1.0, 4.0, 20.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-8, 1e-12])
@pytest.mark.parametrize("shape", ["uniform", "decay", "growth", "random"])
def test_calibration_spends_exactly_and_never_more(epsilon, delta, shape):
    T = 137
    rng = np.random.default_rng(3)
    shapes = {
        "uniform": np.ones(T),
        "decay": 0.97 ** np.arange(T),
        "growth": 1.02 ** np.arange(T),
        "random": rng.uniform(0.1, 5.0, T),
    }
    acc = GaussianDPAccountant()
    z = acc.calibrate(shapes[shape], epsilon, delta)
    # the shape is kept
    ratio = z / shapes[shape]
    assert np.allclose(ratio, ratio[0], rtol=1e-12)
    spent = acc.epsilon(GaussianSteps(z), delta)
    assert spent <= epsilon
    assert spent >= epsilon * (1 - 1e-9)
    assert acc.delta(GaussianSteps(z), epsilon) <= delta


def test_calibration_infinite_epsilon_means_no_noise():
    z = GaussianDPAccountant().calibrate(np.ones(5), math.inf, 1e-5)
    assert np.all(z == 0)
    assert GaussianDPAccountant().epsilon(GaussianSteps(z), 1e-5) == math.inf


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan")])
def test_bad_epsilon(bad):
    with pytest.raises(ValueError, match="epsilon"):
        gdp_mu(bad, 1e-5)


@pytest.mark.parametrize("bad", [0.0, 1.0, -1e-5, 2.0, float("nan")])
def test_bad_delta(bad):
    with pytest.raises(ValueError, match="delta"):
        gdp_mu(1.0, bad)


def test_gdp_accountant_refuses_subsampled_steps():
    with pytest.raises(ValueError, match="full-batch"):
        GaussianDPAccountant().epsilon(GaussianSteps(np.ones(3), sampling_rate=0.1), 1e-5)


# --- against an established library ------------------------------------------------------


@pytest.mark.parametrize("z,T", [(0.8, 1), (2.0, 10), (5.0, 100), (20.0, 1000)])
def test_matches_dp_accounting_pld_on_gaussian_compositions(z, T):
    dp = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    delta = 1e-6
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp.GaussianDpEvent(z), T)
    eps_pld = acc.get_epsilon(delta)  # pessimistic (an upper bound) up to discretisation
    eps_ours = GaussianDPAccountant().epsilon(GaussianSteps(np.full(T, z)), delta)
    assert eps_ours <= eps_pld + 1e-9
    assert eps_ours == pytest.approx(eps_pld, rel=2e-3, abs=2e-4)


def test_heterogeneous_composition_matches_dp_accounting_pld():
    dp = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    z = np.array([1.5, 3.0, 6.0, 12.0])
    counts = [2, 5, 20, 80]
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    for zi, c in zip(z, counts):
        acc.compose(dp.GaussianDpEvent(zi), c)
    steps = GaussianSteps(np.repeat(z, counts))
    eps = 2.0
    assert GaussianDPAccountant().delta(steps, eps) == pytest.approx(acc.get_delta(eps), rel=1e-3)


def test_tighter_than_dp_accounting_rdp():
    dp = pytest.importorskip("dp_accounting")
    from dp_accounting import rdp

    for z, T in [(1.0, 10), (3.0, 300)]:
        acc = rdp.RdpAccountant()
        acc.compose(dp.GaussianDpEvent(z), T)
        eps_rdp = acc.get_epsilon(1e-5)
        eps_ours = GaussianDPAccountant().epsilon(GaussianSteps(np.full(T, z)), 1e-5)
        assert eps_ours < eps_rdp


def test_report_profiles_come_from_the_registry(monkeypatch):
    """epsilon_profiles lists every registered accountant that supports the releases, by its
    label; one whose optional dependency is missing says so through supports and is skipped."""
    from skdpgd.accounting import (
        PLDAccountant,
        RDPAccountant,
        epsilon_profiles,
        registry,
    )

    steps = [GaussianSteps([2.0] * 50, 0.01)]

    class Twice(RDPAccountant):  # a registered accountant: an upper bound twice RDP's
        name = "twice"
        label = "twice RDP"

        def epsilon_profile(self, steps, rdp_curves=()):
            once = super().epsilon_profile(steps, rdp_curves)
            return lambda delta: 2.0 * once(delta)

    monkeypatch.setattr(registry, "ACCOUNTANTS", registry.ACCOUNTANTS + (Twice,))
    monkeypatch.setattr(PLDAccountant, "available", classmethod(lambda cls: False))
    profiles = epsilon_profiles(steps)
    assert list(profiles) == ["RDP", "twice RDP"]
    assert profiles["twice RDP"](1e-5) == pytest.approx(2.0 * profiles["RDP"](1e-5))
    # full batch: the exact accountant alone
    full = [GaussianSteps([2.0])]
    assert list(epsilon_profiles(full)) == ["Gaussian DP (exact)"]


def test_default_profile_bounds_the_exact_one_and_branches_take_an_accountant():
    """Accountant.profile's default (from delta, on a table) is an upper bound on the exact
    GDP profile at every real t; branch_profile takes an accountant or its registry name."""
    from skdpgd.accounting import Accountant, GaussianDPAccountant, accountant_named
    from skdpgd.accounting.envelope import branch_profile

    class Generic(GaussianDPAccountant):
        def profile(self, steps, t_max=None, n_table=2049):
            return Accountant.profile(self, steps, t_max, n_table)

    steps = [GaussianSteps([1.5, 2.0])]
    t = np.linspace(-3.0, 8.0, 401)
    exact = GaussianDPAccountant().profile(steps)(t)
    for t_max in (None, 6.0):
        generic = Generic().profile(steps, t_max, n_table=257)(t)
        assert np.all(generic >= exact * (1 - 1e-12))
        assert np.all(generic <= 1.0)
    sub = [GaussianSteps([1.0] * 20, 0.05)]
    t = np.linspace(-1.0, 5.0, 50)
    by_name = branch_profile(sub, "rdp")(1.3)(t)
    by_instance = branch_profile(sub, accountant_named("rdp"))(1.3)(t)
    np.testing.assert_array_equal(by_name, by_instance)

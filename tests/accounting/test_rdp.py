"""RDP of Poisson-subsampled Gaussian steps: closed forms, independent integrals, dp-accounting.

References used here, none of them the code under test:
* closed forms (q = 1; orders 2 and 3 of the binomial expansion);
* a numerical integral of the Renyi divergence between N(0, s^2) and the mixture
  (1 - q) N(0, s^2) + q N(1, s^2) (scipy.integrate.quad, scaled in log space);
* dp-accounting's RDP accountant (integer orders and the (epsilon, delta) conversion) and its
  PLD accountant;
* the exact Gaussian-DP accountant at q = 1.
"""

import math
from functools import lru_cache

import numpy as np
import pytest
from scipy import integrate, optimize

from skdpgd.accounting import (
    RDP_DEFAULT_ORDERS,
    GaussianDPAccountant,
    GaussianSteps,
    RDPAccountant,
    pld_epsilon,
    rdp_delta,
    rdp_epsilon,
    rdp_subsampled_gaussian,
)

# dp-accounting's integer orders (its default grid without the fractional part)
DPA_ORDERS = np.array(list(range(2, 65)) + [128, 256, 512, 1024], dtype=float)


# ---------------------------------------------------------------------------------------
# Independent reference: the Renyi divergence by numerical integration
# ---------------------------------------------------------------------------------------


def log_moment(q, sigma, power):
    """log E_{u ~ N(0,1)} [h(u)^power] with h = mu/mu0 = 1 + q expm1(u/sigma - 1/(2 sigma^2)).

    power = alpha gives log A_alpha (the "remove" direction, D_alpha(mu || mu0) times
    alpha - 1); power = 1 - alpha gives the other direction, D_alpha(mu0 || mu). The moment
    minus 1 is integrated in two pieces (h > 1 and h < 1), the first one rescaled by its
    maximum so that nothing overflows, each with quad to 1e-13 relative.
    """
    u0 = 1.0 / (2.0 * sigma)  # h(u) > 1 iff u > u0
    lphi = -0.5 * math.log(2.0 * math.pi)

    def log_h(u):
        return math.log1p(q * math.expm1(u / sigma - 1.0 / (2.0 * sigma**2)))

    def log_pos(u):  # log |phi(u) (h^power - 1)| on u > u0
        x = power * log_h(u)
        if abs(x) > 700.0:
            return -0.5 * u * u + lphi + x
        y = abs(math.expm1(x))
        return -0.5 * u * u + lphi + (math.log(y) if y > 0 else -math.inf)

    hi = u0 + 20.0 + 2.0 * abs(power) / sigma
    grid = np.linspace(u0, hi, 4001)[1:]
    m = grid[int(np.argmax([log_pos(u) for u in grid]))]
    m = optimize.minimize_scalar(
        lambda u: -log_pos(u),
        bounds=(max(u0 + 1e-12, m - 1.0), m + 1.0),
        method="bounded",
        options={"xatol": 1e-10},
    ).x
    top = log_pos(m)
    a, b = max(u0, m - 60.0), m + 60.0

    def f(u):
        return math.exp(log_pos(u) - top)

    pos = integrate.quad(f, a, b, points=[m], epsabs=0, epsrel=1e-13, limit=500)[0]
    if a > u0:
        pos += integrate.quad(f, u0, a, epsabs=0, epsrel=1e-13, limit=500)[0]

    def g(u):  # phi(u) (h^power - 1) on u < u0, bounded by phi in size
        return math.exp(-0.5 * u * u + lphi) * math.expm1(power * log_h(u))

    neg = integrate.quad(g, -np.inf, u0, epsabs=0, epsrel=1e-13, limit=500)[0]
    if top > 700.0:
        return top + math.log(pos)
    sign = 1.0 if power > 0 else -1.0  # h^power - 1 on h > 1 has the sign of power
    return math.log1p(sign * math.exp(top) * pos + neg)


def rdp_integral(q, sigma, alpha):
    return log_moment(q, sigma, alpha) / (alpha - 1.0)


def rdp_integral_other_direction(q, sigma, alpha):
    return log_moment(q, sigma, 1.0 - alpha) / (alpha - 1.0)


# ---------------------------------------------------------------------------------------
# dp-accounting as an external reference
# ---------------------------------------------------------------------------------------

_RNG = np.random.default_rng(1234)
SCHEDULES = {
    "constant": np.full(40, 1.3),
    "heterogeneous": np.repeat(_RNG.uniform(0.7, 4.0, 12), _RNG.integers(1, 6, 12)),
    "small-sigma": np.array([0.05, 0.2, 0.2, 0.45]),
}


@lru_cache(maxsize=None)
def dpa_accountant(q, schedule):
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant

    acc = rdp_privacy_accountant.RdpAccountant(DPA_ORDERS)
    values, counts = np.unique(SCHEDULES[schedule], return_counts=True)
    for s, n in zip(values, counts):  # heterogeneous steps: different events composed
        event = dpa.GaussianDpEvent(float(s))
        if q < 1.0:
            event = dpa.PoissonSampledDpEvent(q, event)
        acc.compose(event, int(n))
    return acc


@pytest.mark.parametrize("schedule", list(SCHEDULES))
@pytest.mark.parametrize("q", [1e-3, 0.01, 0.1, 1.0])
def test_integer_orders_match_dp_accounting(q, schedule):
    ours = rdp_subsampled_gaussian(q, SCHEDULES[schedule], DPA_ORDERS)
    theirs = dpa_accountant(q, schedule).rdp
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=0)


@pytest.mark.parametrize("schedule", ["constant", "heterogeneous"])
@pytest.mark.parametrize("q", [1e-3, 0.01, 0.1, 1.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-10])
def test_epsilon_matches_dp_accounting(q, schedule, delta):
    pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant

    acc = dpa_accountant(q, schedule)
    ours_rdp = rdp_subsampled_gaussian(q, SCHEDULES[schedule], DPA_ORDERS)
    eps, order = rdp_epsilon(ours_rdp, DPA_ORDERS, delta, return_order=True)
    assert eps == pytest.approx(acc.get_epsilon(delta), rel=1e-6)
    # The conversion alone: dp-accounting's compute_epsilon on our curve (same formula).
    their_eps, their_order = rdp_privacy_accountant.compute_epsilon(DPA_ORDERS, ours_rdp, delta)
    assert eps == pytest.approx(their_eps, rel=1e-12)
    assert order == their_order
    # and its inverse
    d = rdp_delta(ours_rdp, DPA_ORDERS, eps)
    their_d, _ = rdp_privacy_accountant.compute_delta(DPA_ORDERS, ours_rdp, eps)
    assert d == pytest.approx(their_d, rel=1e-9)
    assert d <= delta * (1 + 1e-9)


def test_fractional_orders_never_looser_than_dp_accounting():
    # dp-accounting 0.6 sums the absolute values of the alternating series (an upper bound,
    # but loose); ours must be below it wherever it is finite, and match the integral.
    pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant

    for q, sigma, alpha in [(0.01, 1.0, 1.5), (0.1, 5.0, 1.1), (0.1, 20.0, 2.5), (0.01, 2.0, 3.5)]:
        ours = rdp_subsampled_gaussian(q, [sigma], [alpha])[0]
        theirs = rdp_privacy_accountant._compute_rdp_poisson_subsampled_gaussian(q, sigma, [alpha])[
            0
        ]
        ref = rdp_integral(q, sigma, alpha)
        assert ours <= theirs * (1 + 1e-12)
        assert ours == pytest.approx(ref, rel=1e-6)


# ---------------------------------------------------------------------------------------
# Closed forms and the numerical integral
# ---------------------------------------------------------------------------------------


def test_full_batch_is_the_gaussian_closed_form():
    z = np.array([0.3, 0.7, 0.7, 1.9, 12.0])
    orders = RDP_DEFAULT_ORDERS
    expected = orders * np.sum(1.0 / (2.0 * z**2))
    np.testing.assert_allclose(rdp_subsampled_gaussian(1.0, z, orders), expected, rtol=1e-15)
    # and q -> 1 approaches it from below (subsampling can only help)
    near = rdp_subsampled_gaussian(1.0 - 1e-9, z, orders)
    # (every value carries the accountant's 1e-12 relative rounding allowance, _ROUNDING_RTOL)
    assert np.all(near <= expected * (1 + 2e-12))
    np.testing.assert_allclose(near, expected, rtol=1e-4)


@pytest.mark.parametrize("q", [1e-4, 1e-2, 0.5])
@pytest.mark.parametrize("sigma", [0.5, 2.0, 50.0])
def test_orders_two_and_three_closed_forms(q, sigma):
    # A_2 - 1 = q^2 (e^v - 1); A_3 - 1 = 3 q^2 (1 - q)(e^v - 1) + q^3 (e^{3v} - 1), v = 1/s^2.
    # Written with expm1/log1p these are exact to a few ulps even when the RDP is ~1e-12
    # (sigma = 50, q = 1e-4), where a sum of A's terms loses most digits.
    v = 1.0 / sigma**2
    r2 = math.log1p(q * q * math.expm1(v))
    r3 = math.log1p(3 * q * q * (1 - q) * math.expm1(v) + q**3 * math.expm1(3 * v)) / 2
    ours = rdp_subsampled_gaussian(q, [sigma], [2.0, 3.0])
    assert ours[0] == pytest.approx(r2, rel=2e-12) and ours[0] >= r2
    assert ours[1] == pytest.approx(r3, rel=2e-12) and ours[1] >= r3


@pytest.mark.parametrize(
    "q, sigma, alpha",
    [
        (0.01, 1.0, 64.0),
        (0.1, 3.0, 256.0),
        (0.001, 0.8, 16.0),
        (0.5, 2.0, 32.0),
        (0.05, 10.0, 1024.0),
    ],
)
def test_integer_orders_match_integral(q, sigma, alpha):
    ours = rdp_subsampled_gaussian(q, [sigma], [alpha])[0]
    ref = rdp_integral(q, sigma, alpha)
    assert ours == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("q", [1e-3, 0.01, 0.1, 0.5])
@pytest.mark.parametrize("sigma", [0.7, 1.5, 5.0])
@pytest.mark.parametrize("alpha", [1.1, 1.5, 2.5, 4.5, 7.3])
def test_fractional_orders_match_integral(q, sigma, alpha):
    ours = rdp_subsampled_gaussian(q, [sigma], [alpha])[0]
    ref = rdp_integral(q, sigma, alpha)
    # an upper bound (the integral itself is good to ~1e-12) ...
    assert ours >= ref * (1 - 1e-10)
    # ... and a tight one: fractional orders carry an absolute rounding allowance of
    # ~1e-13 on log A, visible only when the RDP itself is tiny
    assert ours <= ref * (1 + 1e-7) + 2e-12 / (alpha - 1)


@pytest.mark.parametrize("q, sigma", [(0.01, 1.0), (0.1, 0.8), (0.5, 3.0), (0.9, 1.5)])
@pytest.mark.parametrize("alpha", [1.5, 2.0, 3.5, 8.0])
def test_remove_direction_dominates(q, sigma, alpha):
    # The accountant uses D_alpha(mu || mu0) only; add/remove neighbours also need the other
    # direction D_alpha(mu0 || mu), which must not be larger (Mironov et al. 2019, Sec. 3).
    other = rdp_integral_other_direction(q, sigma, alpha)
    ours = rdp_subsampled_gaussian(q, [sigma], [alpha])[0]
    assert other <= rdp_integral(q, sigma, alpha) * (1 + 1e-9)
    assert other <= ours


# ---------------------------------------------------------------------------------------
# Structure: monotonicity, composition, special values
# ---------------------------------------------------------------------------------------


def test_monotone_in_order_sigma_and_rate():
    orders = RDP_DEFAULT_ORDERS
    for q in [1e-3, 0.05, 0.5]:
        prev = None
        for sigma in [0.3, 0.8, 1.0, 2.0, 7.0, 40.0]:
            curve = rdp_subsampled_gaussian(q, [sigma], orders)
            assert np.all(np.isfinite(curve)) and np.all(curve > 0)
            # Renyi divergences are non-decreasing in the order (allowances: ~1e-12)
            assert np.all(np.diff(curve) >= -1e-11 * curve[1:])
            if prev is not None:  # more noise, less privacy loss
                assert np.all(curve <= prev)
            prev = curve
    rates = [1e-4, 1e-3, 0.01, 0.1, 0.5, 0.9, 1.0]
    curves = [rdp_subsampled_gaussian(q, [1.2], orders) for q in rates]
    for lo, hi in zip(curves, curves[1:]):  # a higher sampling rate, more privacy loss
        assert np.all(lo <= hi)


def test_epsilon_and_delta_monotone():
    acc = RDPAccountant()
    z = np.linspace(0.9, 2.0, 30)
    eps = [acc.epsilon(GaussianSteps(z, 0.02), d) for d in [1e-3, 1e-5, 1e-8, 1e-12]]
    assert all(a < b for a, b in zip(eps, eps[1:]))
    eps_t = [acc.epsilon(GaussianSteps(np.tile(z, k), 0.02), 1e-6) for k in [1, 2, 4, 8]]
    assert all(a < b for a, b in zip(eps_t, eps_t[1:]))
    deltas = [acc.delta(GaussianSteps(z, 0.02), e) for e in [0.1, 0.5, 1.0, 3.0, 10.0]]
    assert all(a > b for a, b in zip(deltas, deltas[1:]))


def test_composition_is_additive_and_grouping_invariant():
    rng = np.random.default_rng(7)
    z1 = rng.uniform(0.6, 3.0, 25)
    z2 = rng.uniform(0.6, 3.0, 17)
    orders = RDP_DEFAULT_ORDERS
    both = rdp_subsampled_gaussian(0.03, np.concatenate([z1, z2]), orders)
    parts = rdp_subsampled_gaussian(0.03, z1, orders) + rdp_subsampled_gaussian(0.03, z2, orders)
    np.testing.assert_allclose(both, parts, rtol=1e-12)
    np.testing.assert_array_equal(
        rdp_subsampled_gaussian(0.03, rng.permutation(z1), orders),
        rdp_subsampled_gaussian(0.03, z1, orders),
    )
    # repeated multipliers count once per step
    np.testing.assert_allclose(
        rdp_subsampled_gaussian(0.03, [1.1] * 7, orders),
        7 * rdp_subsampled_gaussian(0.03, [1.1], orders),
        rtol=1e-13,
    )
    # the accountant composes a list of GaussianSteps with different rates
    acc = RDPAccountant()
    steps = [GaussianSteps(z1, 0.03), GaussianSteps([0.8, 2.0], 1.0)]
    np.testing.assert_allclose(
        acc.rdp(steps),
        acc.rdp(steps[0]) + acc.orders * (1 / (2 * 0.8**2) + 1 / (2 * 2.0**2)),
        rtol=1e-14,
    )


def test_special_values_and_validation():
    orders = RDP_DEFAULT_ORDERS
    assert np.all(np.isinf(rdp_subsampled_gaussian(0.1, [1.0, 0.0], orders)))
    np.testing.assert_array_equal(rdp_subsampled_gaussian(0.1, [np.inf, np.inf], orders), 0.0)
    np.testing.assert_array_equal(rdp_subsampled_gaussian(0.1, [], orders), 0.0)
    np.testing.assert_allclose(
        rdp_subsampled_gaussian(0.1, [1.0, np.inf], orders),
        rdp_subsampled_gaussian(0.1, [1.0], orders),
        rtol=0,
    )
    acc = RDPAccountant()
    assert acc.epsilon(GaussianSteps([1.0, 0.0], 0.1), 1e-5) == math.inf
    assert acc.delta(GaussianSteps([1.0, 0.0], 0.1), 5.0) == 1.0
    assert acc.epsilon(GaussianSteps([np.inf], 0.1), 1e-5) == 0.0
    assert acc.supports(GaussianSteps([1.0], 0.01)) and acc.supports(GaussianSteps([1.0]))
    assert acc.name == "rdp"
    for bad in [
        dict(sampling_rate=0.0),
        dict(sampling_rate=1.5),
        dict(noise_multipliers=[-1.0]),
        dict(noise_multipliers=[np.nan]),
        dict(orders=[1.0, 2.0]),
        dict(orders=[]),
    ]:
        kw = dict(sampling_rate=0.1, noise_multipliers=[1.0], orders=[2.0])
        kw.update(bad)
        with pytest.raises(ValueError):
            rdp_subsampled_gaussian(**kw)
    with pytest.raises(ValueError):
        rdp_epsilon([0.1], [2.0], 0.0)
    with pytest.raises(ValueError):
        rdp_epsilon([-0.1], [2.0], 1e-5)
    with pytest.raises(ValueError):
        rdp_epsilon([0.1, 0.2], [2.0], 1e-5)
    with pytest.raises(ValueError):
        rdp_delta([0.1], [2.0], -1.0)


def test_default_orders():
    o = RDP_DEFAULT_ORDERS
    assert np.all(np.diff(o) > 0) and o[0] > 1.0 and 4096 in o and 5e5 < o[-1] < 1e6
    assert set(range(2, 65)) <= set(o.tolist())
    assert np.array_equal(RDPAccountant().orders, o)
    assert np.array_equal(RDPAccountant(orders=[3, 2, 2, 1.5]).orders, [1.5, 2, 3])


# ---------------------------------------------------------------------------------------
# (epsilon, delta) conversion
# ---------------------------------------------------------------------------------------


def test_conversion_stable_for_tiny_delta_and_large_epsilon():
    orders = RDP_DEFAULT_ORDERS
    for q, z, t in [(0.01, 1.0, 1000), (0.2, 0.6, 50), (1.0, 0.5, 20), (1e-3, 4.0, 10)]:
        curve = rdp_subsampled_gaussian(q, np.full(t, z), orders)
        prev = math.inf
        for delta in [0.5, 1e-3, 1e-6, 1e-9, 1e-12]:
            eps = rdp_epsilon(curve, orders, delta)
            assert math.isfinite(eps) and eps >= 0
            assert eps >= prev or prev == math.inf or eps >= prev  # non-decreasing as delta falls
            prev = eps
            # the returned epsilon certifies delta (inverse conversion), never more
            assert rdp_delta(curve, orders, eps) <= delta * (1 + 1e-9)
        ds = [rdp_delta(curve, orders, e) for e in np.linspace(0, 50, 101)]
        assert all(np.isfinite(ds)) and all(0 <= d <= 1 for d in ds)
        assert all(a >= b for a, b in zip(ds, ds[1:]))
    # the formula itself, order by order, at delta = 1e-12 (no exponentials involved)
    eps, order = rdp_epsilon([0.3, 2.0], [2.0, 30.0], 1e-12, return_order=True)
    per_order = [
        0.3 + math.log(0.5) - (math.log(1e-12) + math.log(2.0)),
        2.0 + math.log1p(-1 / 30) - (math.log(1e-12) + math.log(30.0)) / 29,
    ]
    assert eps == pytest.approx(min(per_order), rel=1e-14) and order == 30.0


def test_rdp_is_an_upper_bound_of_exact_gdp_at_full_batch():
    # At q = 1 the exact privacy curve is Gaussian DP; RDP (with its lossy conversion) must
    # never report less, and should not be far above it either.
    rdp, gdp = RDPAccountant(), GaussianDPAccountant()
    for z in [np.full(10, 3.0), np.linspace(0.8, 6.0, 50), np.full(1000, 25.0), np.array([0.7])]:
        for delta in [1e-3, 1e-5, 1e-9]:
            steps = GaussianSteps(z)
            e_rdp, e_gdp = rdp.epsilon(steps, delta), gdp.epsilon(steps, delta)
            assert e_rdp >= e_gdp
            assert e_rdp <= 1.6 * e_gdp


def test_accountant_epsilon_is_the_full_curve_epsilon():
    # RDPAccountant.epsilon skips orders that provably cannot attain the minimum; the value
    # must be exactly that of the full curve, wherever the best order falls.
    rng = np.random.default_rng(5)
    acc = RDPAccountant()
    best_orders = set()
    for _ in range(100):
        q = float(rng.choice([1e-3, 0.01, 0.1, 0.6, 1.0]))
        scale = float(np.exp(rng.uniform(np.log(0.2), np.log(20.0))))
        z = rng.uniform(0.4, 3.0, int(rng.integers(1, 10))) * scale
        steps = [GaussianSteps(np.resize(z, int(rng.integers(1, 3000))), q)]
        if rng.random() < 0.3:
            steps.append(GaussianSteps([5.0 * scale], 1.0))
        delta = float(10 ** rng.uniform(-12, -2))
        eps, order = rdp_epsilon(acc.rdp(steps), acc.orders, delta, return_order=True)
        assert acc.epsilon(steps, delta) == eps
        best_orders.add(order)
    assert len(best_orders) >= 15  # the cases exercise many different best orders


# ---------------------------------------------------------------------------------------
# Calibration
# ---------------------------------------------------------------------------------------


def _shape(kind, t):
    if kind == "uniform":
        return np.ones(t)
    if kind == "decay":
        return np.exp(np.linspace(1.0, 0.0, t))  # all distinct
    return 1.0 + 0.5 * np.sin(np.arange(t))  # oscillating, all distinct


CALIBRATION_GRID = [
    # epsilon, delta, q, T, shape, prior
    (1.0, 1e-5, 0.01, 500, "uniform", ()),
    (1.0, 1e-5, 0.01, 500, "decay", ()),
    (0.1, 1e-6, 0.001, 2000, "decay", ()),
    (0.05, 1e-12, 0.2, 30, "wave", ()),
    (3.0, 1e-8, 0.05, 200, "wave", ()),
    (8.0, 1e-5, 0.01, 100, "decay", ()),
    (50.0, 1e-5, 0.1, 100, "uniform", ()),
    (20.0, 1e-10, 0.5, 10, "decay", ()),
    (2.0, 1e-5, 1.0, 50, "decay", ()),
    (0.5, 1e-9, 1.0, 1, "uniform", ()),
    (1.0, 1e-5, 0.02, 300, "decay", (10.0,)),
    (4.0, 1e-6, 0.1, 80, "wave", (2.0, 3.0, 3.0)),
    (1.0, 1e-5, 1.0, 20, "uniform", (8.0,)),
]


@pytest.mark.parametrize("epsilon, delta, q, t, kind, prior", CALIBRATION_GRID)
def test_calibrate_spends_the_budget_and_never_more(epsilon, delta, q, t, kind, prior):
    acc = RDPAccountant()
    shape = _shape(kind, t)
    z = acc.calibrate(shape, epsilon, delta, sampling_rate=q, prior=prior)
    assert z.shape == shape.shape and np.all(z > 0)
    np.testing.assert_allclose(z / shape, z[0] / shape[0], rtol=1e-13)  # a scaled shape
    steps = [GaussianSteps(np.asarray(prior, dtype=float), 1.0), GaussianSteps(z, q)]
    spent = acc.epsilon(steps, delta)
    assert spent <= epsilon
    assert spent >= epsilon * (1 - 1e-9)
    # a hair less noise overspends
    assert acc.epsilon([steps[0], GaussianSteps(z * (1 - 1e-6), q)], delta) > epsilon


def test_calibrate_full_batch_needs_more_noise_than_exact_gdp():
    shape = np.exp(np.linspace(0.5, 0.0, 40))
    z_rdp = RDPAccountant().calibrate(shape, 1.0, 1e-6)
    z_gdp = GaussianDPAccountant().calibrate(shape, 1.0, 1e-6)
    assert np.all(z_rdp >= z_gdp)
    assert np.all(z_rdp <= 1.3 * z_gdp)


def test_calibrate_with_ten_thousand_distinct_multipliers():
    shape = np.exp(np.linspace(0.0, 1.0, 10_000))
    acc = RDPAccountant()
    z = acc.calibrate(shape, 2.0, 1e-5, sampling_rate=0.01)
    spent = acc.epsilon(GaussianSteps(z, 0.01), 1e-5)
    assert 2.0 * (1 - 1e-9) <= spent <= 2.0


def test_calibrate_edge_cases():
    acc = RDPAccountant()
    np.testing.assert_array_equal(acc.calibrate(np.ones(5), np.inf, 1e-5, sampling_rate=0.1), 0.0)
    with pytest.raises(ValueError, match="budget"):
        acc.calibrate(np.ones(5), 1.0, 1e-5, sampling_rate=0.1, prior=[0.1])
    with pytest.raises(ValueError, match="budget"):
        acc.calibrate(np.ones(5), 1.0, 1e-5, sampling_rate=0.1, prior=[0.0])
    for bad_shape in [[], [1.0, 0.0], [1.0, np.inf], [-1.0]]:
        with pytest.raises(ValueError):
            acc.calibrate(bad_shape, 1.0, 1e-5, sampling_rate=0.1)
    for eps, delta, q in [(0.0, 1e-5, 0.1), (1.0, 0.0, 0.1), (1.0, 1.0, 0.1), (1.0, 1e-5, 0.0)]:
        with pytest.raises(ValueError):
            acc.calibrate(np.ones(3), eps, delta, sampling_rate=q)
    # orders too small for a tiny epsilon: the error names the smallest epsilon they certify
    with pytest.raises(ValueError, match=r"smallest epsilon .* delta=1e-05 .*: 3\.09"):
        RDPAccountant(orders=[2, 3, 4]).calibrate(np.ones(3), 0.01, 1e-5, sampling_rate=0.01)


# delta = 1e-3 >= 1/N on purpose (the conversion's range): its usage warning is expected
@pytest.mark.filterwarnings("ignore:.*is at least 1/N:skdpgd.exceptions.PrivacyUsageWarning")
@pytest.mark.parametrize("delta", [1e-5, 1e-3])
def test_tiny_epsilon_dp_sgd_works_end_to_end(delta):
    """epsilon = 1e-6 failed with a message about prior releases (there were none): the orders
    now reach ~1e6, where the conversion certifies it for delta >= ~1e-6."""
    from skdpgd import DPSGDClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    # schedule='uniform': the Poisson-sampled steps themselves (the default's floor rule
    # returns the intercept-only model at this budget, accounted exactly in GDP)
    clf = DPSGDClassifier(
        epsilon=1e-6,
        delta=delta,
        data_norm=1.0,
        classes=[0, 1],
        n_samples=2000,
        random_state=0,
        schedule="uniform",
    ).fit(X, y)
    assert 0.999e-6 <= clf.epsilon_ <= 1e-6
    with pytest.raises(ValueError, match="smallest epsilon .* certify"):
        DPSGDClassifier(
            epsilon=1e-6,
            delta=1e-12,
            data_norm=1.0,
            classes=[0, 1],
            n_samples=2000,
            schedule="uniform",
        ).fit(X, y)
    prior = DPSGDClassifier(
        epsilon=1e-6, delta=1e-12, data_norm=1.0, classes=[0, 1], n_samples=2000, random_state=0
    ).fit(X, y)
    assert prior.schedule_ == "prior" and 0.999e-6 <= prior.epsilon_ <= 1e-6


def test_budget_curve():
    acc = RDPAccountant()
    b = acc.budget(1.0, 1e-5)
    assert b.shape == acc.orders.shape
    o = acc.orders
    np.testing.assert_allclose(b, 1.0 - (np.log1p(-1 / o) - (np.log(1e-5) + np.log(o)) / (o - 1)))
    assert np.all(np.isinf(acc.budget(np.inf, 1e-5)))
    z = acc.calibrate(np.ones(100), 1.0, 1e-5, sampling_rate=0.01)
    curve = acc.rdp(GaussianSteps(z, 0.01))
    assert np.any(curve <= b)  # within budget at (at least) one order
    assert np.max(b - curve) < 1e-9  # and only just


# ---------------------------------------------------------------------------------------
# Optional PLD
# ---------------------------------------------------------------------------------------


def test_pld_epsilon():
    pytest.importorskip("dp_accounting")
    z = np.full(200, 1.1)
    steps = GaussianSteps(z, 0.01)
    e_pld = pld_epsilon(steps, 1e-5)
    e_rdp = RDPAccountant().epsilon(steps, 1e-5)
    assert 0 < e_pld < e_rdp  # PLD is tighter for long subsampled compositions
    # full batch: the pessimistic PLD sits just above the exact GDP value
    full = GaussianSteps(np.linspace(2.0, 4.0, 30))
    e_exact = GaussianDPAccountant().epsilon(full, 1e-5)
    assert e_exact * (1 - 1e-6) <= pld_epsilon(full, 1e-5) <= e_exact * 1.01
    assert pld_epsilon(GaussianSteps([0.0, 1.0], 0.1), 1e-5) == math.inf
    assert pld_epsilon(GaussianSteps([np.inf], 0.1), 1e-5) == 0.0


# ---------------------------------------------------------------------------------------
# The vectorised log A against the former numba kernels and exact sums
# ---------------------------------------------------------------------------------------


def _log_a_both(q, sigma, orders):
    from _support import rdp_numba  # the numba kernels the numpy code replaced

    from skdpgd.accounting import rdp as _rdp

    o, is_int, off, lgc = _rdp._order_tables(tuple(float(a) for a in orders))
    v = np.array([1.0 / sigma**2])
    ref = np.empty((o.size, 1))
    rdp_numba._log_a_grid(
        o,
        is_int,
        lgc,
        off,
        math.log(q),
        math.log1p(-q),
        v,
        _rdp._CRVZ_W,
        _rdp._CRVZ_INV_D,
        _rdp._CRVZ_ABS,
        ref,
    )
    return _rdp._log_a_grid(o, is_int, lgc, off, math.log(q), math.log1p(-q), v)[:, 0], ref[:, 0]


@pytest.mark.parametrize("q", [1e-6, 1e-3, 0.03, 0.5, 0.999])
@pytest.mark.parametrize("sigma", [0.3, 1.0, 5.0, 1e3, 1e5])
def test_log_a_matches_the_former_numba_kernels(q, sigma):
    orders = np.concatenate([RDP_DEFAULT_ORDERS, [1.01, 12.5, 20.5, 63.7, 100.5]])
    new, ref = _log_a_both(q, sigma, orders)
    is_int = orders == np.round(orders)
    # same formulas: integer orders differ by the summation (direct terms here, recurrences
    # there) and the wider rounding allowance at large orders; fractional ones by rounding
    np.testing.assert_allclose(new[is_int], ref[is_int], rtol=1e-7, atol=0)
    np.testing.assert_allclose(new[~is_int], ref[~is_int], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    "alpha, q, sigma, k_max",
    [
        (867362, 1e-6, 1e5, 300),
        (145519, 1e-4, 1e3, 600),
        (4096, 0.03, 2.0, 4096),
        (37, 0.2, 0.7, 37),
        (2, 0.5, 0.3, 2),
    ],
)
def test_log_a_integer_orders_never_below_the_exact_sum(alpha, q, sigma, k_max):
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(40):
        v, qq = mpmath.mpf(1) / mpmath.mpf(sigma) ** 2, mpmath.mpf(q)
        exact = mpmath.log1p(
            mpmath.fsum(
                mpmath.binomial(alpha, k)
                * qq**k
                * (1 - qq) ** (alpha - k)
                * mpmath.expm1(k * (k - 1) * v / 2)
                for k in range(2, k_max + 1)
            )
        )  # the terms beyond k_max are below 1e-40 of the sum
    got = float(rdp_subsampled_gaussian(q, [sigma], orders=[float(alpha)])[0]) * (alpha - 1)
    assert exact <= got <= exact * (1 + 1e-6)

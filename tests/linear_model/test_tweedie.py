"""DPTweedieRegressor: scikit-learn's TweedieRegressor (log link) without noise, the public
constants of its loss (each bound checked numerically), power 1 as DPPoissonRegressor, its
accounting and its refusals; and that a GLM on a new loss is a loss plus one estimator file."""

import inspect

import numpy as np
import pytest
from sklearn.linear_model import TweedieRegressor

from skdpgd import DPPoissonRegressor, DPTweedieRegressor
from skdpgd._compute import kernels as K
from skdpgd._compute.backends import DenseRows
from skdpgd.accounting import compose_gdp, gdp_epsilon
from skdpgd.linear_model import DPTweedieRegressor as FromLinearModel
from skdpgd.losses import Poisson, Tweedie


def _data(power, n=3000, d=4, seed=0):
    """Rows of norm <= 1; Poisson counts (power 1), compound Poisson-Gamma targets with exact
    zeros (1 < power < 2) or Gamma targets (power 2), of mean exp(x . w + 1)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    mu = np.exp(X @ np.linspace(1.5, -1.5, d) + 1.0)
    if power == 1:
        y = rng.poisson(mu).astype(float)
    elif power == 2:
        y = rng.gamma(2.0, mu / 2.0)
    else:  # Tweedie: N ~ Poisson(lam) claims of Gamma(shape, scale) sizes
        lam = mu ** (2 - power) / (2 - power)
        shape = (2 - power) / (power - 1)
        scale = (power - 1) * mu ** (power - 1)
        y = rng.gamma(shape * rng.poisson(lam), scale)  # a sum of k Gamma(shape) is one
    return X, y


def _bound(power, y):
    """A public range for the generated targets (a test's own generator: public to it)."""
    return (0.01, 80.0) if power == 2 else 80.0


def test_reexported_from_linear_model():
    assert FromLinearModel is DPTweedieRegressor


@pytest.mark.parametrize("power", [1.5, 2])
@pytest.mark.parametrize("n", [3000, 15000])  # numpy's small problems, and the kernels
def test_near_tweedieregressor_without_noise(power, n):
    X, y = _data(power, n=n)
    dp = DPTweedieRegressor(
        power=power, epsilon=1e6, data_norm=1.0, y_bound=_bound(power, y), random_state=0
    ).fit(X, y)
    sk = TweedieRegressor(power=power, link="log", alpha=dp.alpha_, max_iter=3000).fit(X, y)
    assert abs(dp.score(X, y) - sk.score(X, y)) < 0.01
    assert sk.score(X, y) > 0.1  # a problem with something to explain
    # without noise the clipped objective's minimiser is TweedieRegressor's
    exact = DPTweedieRegressor(
        power=power, epsilon=np.inf, data_norm=1.0, y_bound=_bound(power, y), alpha=dp.alpha_
    ).fit(X, y)
    np.testing.assert_allclose(exact.coef_, sk.coef_, atol=0.01)
    assert exact.intercept_ == pytest.approx(sk.intercept_, abs=0.01)


@pytest.mark.parametrize("schedule", ["auto", "output", "uniform"])
def test_power_one_is_dppoissonregressor(schedule):
    """Power 1 uses the Poisson loss's kernel code and constants: the same model, bit for bit."""
    X, y = _data(1, n=1500)
    kw = dict(epsilon=1.0, data_norm=1.0, y_bound=40.0, schedule=schedule, random_state=3)
    tw = DPTweedieRegressor(power=1, **kw).fit(X, y)
    po = DPPoissonRegressor(**kw).fit(X, y)
    np.testing.assert_array_equal(tw.coef_, po.coef_)
    assert tw.intercept_ == po.intercept_
    assert tw.epsilon_ == po.epsilon_
    assert Tweedie(1.0).code == K.LOSS_POISSON and Tweedie(1.5).code == K.LOSS_TWEEDIE


@pytest.mark.parametrize("power", [0, 0.5, 2.5, 3])
def test_powers_outside_one_to_two_are_refused(power):
    X, y = _data(1, n=200)
    with pytest.raises(ValueError, match="power"):
        DPTweedieRegressor(power=power, data_norm=1.0, y_bound=10.0).fit(X, y)
    with pytest.raises(ValueError, match=r"power must be in \[1, 2\]"):
        Tweedie(power)


@pytest.mark.parametrize(
    "y_bound,match", [(10.0, "y_min > 0"), ((0.0, 10.0), "y_min > 0"), ((-1, 10), "0 <= lo < Y")]
)
def test_gamma_without_a_positive_floor_is_refused(y_bound, match):
    X, y = _data(2, n=200)
    with pytest.raises(ValueError, match=match):
        DPTweedieRegressor(power=2, data_norm=1.0, y_bound=y_bound).fit(X, y)


def test_targets_are_clipped_to_the_range():
    X, y = _data(1.5, n=400)
    kw = dict(power=1.5, epsilon=1.0, data_norm=1.0, y_bound=(0.5, 20.0), random_state=0)
    a = DPTweedieRegressor(**kw).fit(X, np.where(y < 0.5, -3.0, np.minimum(y, 1e3)))
    b = DPTweedieRegressor(**kw).fit(X, np.clip(y, 0.5, 20.0))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.y_bound_ == 20.0
    assert a.clip_norm_ == pytest.approx(20.0 * np.sqrt(1.25))  # max(1, Y) sqrt(R^2 + c^2)


_POWERS = [1.0, 1.2, 1.5, 1.9, 2.0]


def _clipped_derivative(z, y, p, t):
    """The kernels' clipped l'(z) (:func:`kernels.dloss` held in [-t, t])."""
    return np.clip(
        [K.dloss(K.LOSS_TWEEDIE if p != 1 else K.LOSS_POISSON, v, y, p) for v in z], -t, t
    )


@pytest.mark.parametrize("power", _POWERS)
def test_the_clip_bounds_one_example_gradient(power):
    """G = clip_norm: every example's gradient, for targets in the range and margins near 0 or
    far beyond exp's range, has norm <= G after the kernels' clip."""
    rng = np.random.default_rng(2)
    c = 0.5
    loss = Tweedie(power, y_bound=30.0, y_min=0.1 if power == 2 else 0.0)
    G = loss.lipschitz(np.sqrt(1 + c * c))
    for _ in range(40):
        x = rng.normal(size=(1, 3))
        x *= rng.uniform(0.0, 1.0) / np.linalg.norm(x)
        target = rng.choice([loss.y_min, 30.0, rng.uniform(loss.y_min, 30.0)])
        rows = DenseRows(x, np.array([target]), np.ones(1), True)
        rows.clip_rows(1.0, c)
        for scale in (1e-3, 1.0, 1e3):
            coef, b = rng.normal(size=(1, 3)) * scale, rng.normal(size=1) * scale
            g, gi, bad = rows.grad_sum(coef, b, loss.code, loss.param, G / c)
            assert bad == 0
            assert c * np.sqrt(np.sum(g**2) + gi[0] ** 2) <= G * (1 + 1e-12)


@pytest.mark.parametrize("power", _POWERS)
def test_the_smoothness_bound_holds_by_finite_differences(power):
    """M = Y^(2-p) r^2 + C r bounds the change of one example's clipped gradient: the slope
    of the clipped l'(z) times ||x~||^2, measured on a fine grid of margins, for rows of every
    norm up to r and targets across the range, with C small and large."""
    Y, r = 30.0, 1.2
    zs = np.linspace(-12.0, 8.0, 20001)
    for C in (0.3, 5.0, 200.0):
        loss = Tweedie(power, clip_norm=C, y_bound=Y, y_min=0.05 if power == 2 else 0.0)
        M = loss.smoothness(r)
        worst = 0.0
        for norm in (0.05, 0.5, r):
            for y in (loss.y_min, 0.3, 1.0, 7.0, Y):
                d = _clipped_derivative(zs, y, power, C / norm)
                worst = max(worst, np.max(np.abs(np.diff(d)) / np.diff(zs)) * norm**2)
        assert worst <= M * (1 + 1e-6)
        assert worst >= 0.2 * M  # the bound is not loose by orders of magnitude


@pytest.mark.parametrize("power", _POWERS)
@pytest.mark.parametrize("y_min", [0.0, 0.2, 3.0])
def test_the_gap_bound_holds(power, y_min):
    """B >= l(0) - min_z l_clip(z) for every target in [y_min, Y], with the kernels' clipped
    loss value, and the largest gap over the targets reaches B."""
    if power == 2 and y_min == 0.0:
        return  # refused: test_gamma_without_a_positive_floor_is_refused
    Y = 30.0
    loss = Tweedie(power, y_bound=Y, y_min=y_min)
    B = loss.initial_gap()
    code = loss.code
    zs = np.linspace(-40.0, 6.0, 46001)
    gaps = []
    for y in np.concatenate([[y_min, Y], np.linspace(y_min, Y, 25)]):
        for t in (0.5, np.inf):
            values = np.array([K.loss_value(code, np.array([z]), y, power, t) for z in zs])
            at0 = K.loss_value(code, np.zeros(1), y, power, t)
            gaps.append(at0 - values.min())
    assert max(gaps) <= B * (1 + 1e-9)
    assert max(gaps) >= 0.95 * B  # the bound is reached (g(0) as z -> -inf only)
    if power == 1.0 and y_min == 0.0:
        assert B == Poisson(y_bound=Y).initial_gap()


@pytest.mark.parametrize("power", [1.2, 1.5, 2.0])
@pytest.mark.parametrize("t", [0.05, 0.7, 3.0])
def test_the_clipped_value_has_the_clipped_derivative(power, t):
    """The kernels' loss value (the exact solvers' objective) is the loss whose derivative is
    the clipped one: its central differences match the clipped l' on both tangents."""
    zs = np.linspace(-15.0, 6.0, 701)
    h = 1e-5
    for y in (0.0, 0.4, 6.0) if power < 2 else (0.4, 6.0):
        v = lambda z: K.loss_value(K.LOSS_TWEEDIE, np.array([z]), y, power, t)  # noqa: E731
        fd = np.array([(v(z + h) - v(z - h)) / (2 * h) for z in zs])
        want = _clipped_derivative(zs, y, power, t)
        np.testing.assert_allclose(fd, want, atol=1e-5 * max(1.0, t))


@pytest.mark.parametrize("neighbouring", ["replace", "add_remove"])
@pytest.mark.parametrize("power", [1.5, 2])
def test_epsilon_is_the_asked_epsilon(power, neighbouring):
    X, y = _data(power, n=800)
    est = DPTweedieRegressor(
        power=power,
        epsilon=1.3,
        delta=1e-6,
        data_norm=1.0,
        y_bound=_bound(power, y),
        neighbouring=neighbouring,
        n_samples=800.0,
        random_state=0,
    ).fit(X, y)
    z = np.concatenate([r.multipliers for r in est.releases_])
    mu = float(np.sqrt(np.sum(z**-2.0)))  # Gaussian DP composition, by hand
    assert mu == pytest.approx(compose_gdp(z))
    assert est.epsilon_ <= 1.3
    assert est.epsilon_ == pytest.approx(1.3, rel=1e-6)
    assert gdp_epsilon(1e-6, mu) == pytest.approx(est.epsilon_, rel=1e-6)


def test_a_glm_is_a_loss_and_one_estimator_file():
    """docs/contributing.md, "A GLM": the estimator's own class body gives its parameters
    (``__init__``), its loss (``_loss``) and its docs; the base does the rest."""
    own = {
        name
        for name, v in vars(DPTweedieRegressor).items()
        if inspect.isfunction(v) or isinstance(v, (property, staticmethod, classmethod))
    }
    assert own == {"__init__", "_loss"}
    lines = inspect.getsource(inspect.getmodule(DPTweedieRegressor)).splitlines()
    doc = inspect.getsource(DPTweedieRegressor).split('"""')[1].count("\n")
    assert len(lines) - doc < 110  # imports, constraints, __init__ and _loss

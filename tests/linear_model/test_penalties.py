"""Penalties (skdpgd.penalties): their numbers in scikit-learn's normalisation, their proximal
steps against a brute-force minimiser, the mechanisms they allow ('auto' never picks one that
cannot run a non-smooth penalty), and a penalty added as one class."""

import dataclasses
import functools
import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from skdpgd import DPElasticNet, policy
from skdpgd._full_batch.registry import MECHANISMS, mechanisms_accepting
from skdpgd.penalties import L1, L2, ElasticNet, Penalty, soft_threshold
from skdpgd.schedules import Auto, Problem


def _brute_prox(h, w, step):
    """``argmin_u h(u) + (u - w)^2 / (2 step)`` for a scalar, by a bounded 1-D search."""
    res = minimize_scalar(
        lambda u: h(u) + (u - w) ** 2 / (2.0 * step),
        bounds=(w - 10.0, w + 10.0),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return res.x


@pytest.mark.parametrize(
    "penalty",
    [L1(0.7), ElasticNet(0.7, l1_ratio=0.3), ElasticNet(2.0, l1_ratio=1.0)],
    ids=["l1", "elastic-net", "lasso-as-elastic-net"],
)
@pytest.mark.parametrize("step", [0.05, 0.5, 2.0])
def test_prox_is_the_minimiser_of_the_non_smooth_part(penalty, step):
    """``prox(w, step)`` minimises ``h(u) + ||u - w||^2 / (2 step)`` with ``h`` the penalty's
    non-smooth part (its value minus the smooth part ``l2/2 ||u||^2``), coordinate by
    coordinate (h is separable), found here by a brute-force 1-D search."""
    rng = np.random.default_rng(0)
    w = rng.normal(scale=2.0, size=12)
    w[:3] = [0.0, step * 0.5, -step * 0.1]  # inside the threshold of some penalties

    def h(u):
        return penalty.value(np.array([u])) - 0.5 * penalty.l2 * u * u

    got = penalty.prox(w, step)
    want = np.array([_brute_prox(h, wi, step) for wi in w])
    np.testing.assert_allclose(got, want, atol=1e-7)
    assert np.all(got[np.abs(w) <= step * penalty.alpha * getattr(penalty, "l1_ratio", 1.0)] == 0)


def test_soft_threshold_formula_and_inputs_unchanged():
    w = np.array([-3.0, -0.5, 0.0, 0.2, 1.5])
    before = w.copy()
    np.testing.assert_array_equal(soft_threshold(w, 0.5), [-2.5, 0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(w, before)


def test_l2_and_no_penalty_have_the_identity_prox():
    w = np.array([[1.0, -2.0, 0.0]])
    for p in (L2(3.0), Penalty(), ElasticNet(1.0, l1_ratio=0.0), L1(0.0)):
        assert p.smooth
        np.testing.assert_array_equal(p.prox(w, 0.7), w)


def test_numbers_in_scikit_learns_elastic_net_normalisation():
    """``alpha l1_ratio ||w||_1 + alpha (1 - l1_ratio) / 2 ||w||^2``; l1_ratio 0 is L2 and 1
    is L1 (same numbers); every strength scales with alpha."""
    w = np.array([1.0, -2.0, 0.5])
    en = ElasticNet(0.4, l1_ratio=0.25)
    assert en.l2 == pytest.approx(0.3) and en.l1 == pytest.approx(0.1)
    assert en.value(w) == pytest.approx(0.1 * 3.5 + 0.5 * 0.3 * 5.25)
    assert not en.smooth
    assert ElasticNet(0.4, l1_ratio=0.0).l2 == L2(0.4).l2 == 0.4
    assert ElasticNet(0.4, l1_ratio=0.0).value(w) == pytest.approx(L2(0.4).value(w))
    assert ElasticNet(0.4, l1_ratio=1.0).value(w) == pytest.approx(L1(0.4).value(w))
    assert ElasticNet(0.4, l1_ratio=1.0).l2 == 0.0 == L1(0.4).l2
    half = en.scaled(0.5)
    assert isinstance(half, ElasticNet) and half.l1_ratio == 0.25
    assert half.value(w) == pytest.approx(0.5 * en.value(w))


@pytest.mark.parametrize(
    "make", [lambda: L2(-1.0), lambda: L1(math.inf), lambda: ElasticNet(1.0, l1_ratio=1.5)]
)
def test_bad_penalties_are_refused(make):
    with pytest.raises(ValueError):
        make()


def test_penalties_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        L2(1.0).alpha = 2.0


# --- which mechanisms run a penalty ----------------------------------------------------------


def test_allowed_mechanisms_come_from_the_class_attribute():
    """A smooth penalty allows every mechanism (None); one with an L1 part exactly those whose
    class declares ``accepts_nonsmooth``: gradient descent and the intercept-only model, never
    output perturbation, DP damped Newton, Kronecker Newton or the sufficient statistics."""
    assert mechanisms_accepting(L2(1.0)) is None
    assert mechanisms_accepting(ElasticNet(1.0, l1_ratio=0.0)) is None
    allowed = mechanisms_accepting(ElasticNet(1.0, l1_ratio=0.5))
    assert set(allowed) == {n for n, cls in MECHANISMS.items() if cls.accepts_nonsmooth}
    assert {"gradient", "prior"} <= set(allowed)
    assert not {"output", "newton", "kronecker", "ssp"} & set(allowed)


@pytest.mark.parametrize("second_order", ["ssp", "newton", None])
@pytest.mark.parametrize("n_params", [5, 300, 3000])
@pytest.mark.parametrize("n_outputs", [1, 3])
def test_auto_never_picks_a_smooth_only_mechanism_with_l1(second_order, n_params, n_outputs):
    """Over budgets from tiny to none and every loss kind, 'auto' (its plan, its choice's
    candidates, and the penalty rule's mechanism) stays within the allowed mechanisms; the
    same grid without the restriction does pick the others (so the check can fail)."""
    allowed = mechanisms_accepting(L1(1.0))
    seen_unrestricted = set()
    for n in (100, 10_000, 1_000_000):
        for mu in (0.01, 0.3, 3.0, 100.0, 1e4, math.inf):
            problem = Problem(
                n_samples=n,
                n_params=n_params * n_outputs,
                sensitivity=2.0,
                lipschitz=1.0,
                smoothness=1.25,
                strong_convexity=1e-3,
                loss_bound=0.5,
                second_order=second_order,
                n_outputs=n_outputs,
                classifier=second_order == "newton",
                mechanisms=allowed,
            )
            with policy.using(AUTO_CHOICE=(1e9, 0.05, 0.05)):  # the choice among fits too
                plan = Auto().plan(problem, mu)
            free = Auto().plan(dataclasses.replace(problem, mechanisms=None), mu)
            kinds = (
                [plan.mechanism]
                if plan.candidates is None
                else [s.plan(problem, mu).mechanism for s, _ in plan.candidates]
            )
            assert set(kinds) <= set(allowed) | {"choice"}, (n, mu, kinds)
            assert plan.mechanism in allowed
            kind = policy.auto_mechanism(
                n, n_params * n_outputs, mu, second_order, n_outputs=n_outputs, allowed=allowed
            )
            assert kind in allowed
            seen_unrestricted.add(free.mechanism)
    if second_order is not None:
        assert seen_unrestricted - set(allowed), seen_unrestricted


@pytest.mark.parametrize("schedule", ["output", "ssp"])
def test_a_smooth_only_schedule_with_l1_is_refused_and_sets_nothing(schedule):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(300, 3)) / 2
    y = X @ [1.0, 0.0, -1.0]
    est = DPElasticNet(epsilon=1.0, data_norm=1.0, y_bound=2.0, schedule=schedule)
    with pytest.raises(ValueError, match="smooth penalty"):
        est.fit(X, y)
    assert not hasattr(est, "coef_") and not hasattr(est, "epsilon_")
    # without an L1 part the same schedule runs
    DPElasticNet(epsilon=1.0, data_norm=1.0, y_bound=2.0, schedule=schedule, l1_ratio=0.0).fit(X, y)


# --- adding a penalty: one class ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ScaledL1(Penalty):
    """``scale * alpha * ||w||_1``: a new penalty, one class (docs/contributing.md)."""

    scale: float = 2.0

    @property
    def smooth(self):
        return self.alpha * self.scale == 0.0

    def prox(self, w, step):
        return soft_threshold(w, step * self.scale * self.alpha)

    def value(self, w):
        return self.scale * self.alpha * float(np.sum(np.abs(w)))


class _ScaledL1Regression(DPElasticNet):
    """An estimator on the new penalty: its ``_penalty`` gives the family (alpha -> penalty)."""

    def _penalty(self):
        return functools.partial(ScaledL1, scale=2.0)


def test_a_penalty_defined_here_fits_and_is_the_lasso_it_scales():
    """The new class runs through the road unchanged: gradient descent (it is not smooth),
    the proximal step at ``step * 2 alpha``, the same draws as the lasso of strength
    ``2 alpha`` (same seed), and exact zeros."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(2000, 6)) / np.sqrt(6)
    y = X @ np.array([2.0, -1.5, 0.0, 0.0, 0.0, 0.0]) + 0.05 * rng.normal(size=2000)
    kw = dict(epsilon=1e4, data_norm=1.0, y_bound=2.0, random_state=0)
    new = _ScaledL1Regression(alpha=0.01, **kw).fit(X, y)
    lasso = DPElasticNet(alpha=0.02, l1_ratio=1.0, **kw).fit(X, y)
    assert new.mechanism_ == "gradient"
    np.testing.assert_allclose(new.coef_, lasso.coef_, rtol=1e-12, atol=1e-15)
    assert new.intercept_ == pytest.approx(lasso.intercept_, rel=1e-12)
    assert np.sum(new.coef_ == 0.0) >= 2
    # and it differs from the lasso of strength alpha (the scale is used)
    weaker = DPElasticNet(alpha=0.01, l1_ratio=1.0, **kw).fit(X, y)
    assert not np.allclose(new.coef_, weaker.coef_)


def test_auto_keeps_one_over_n_in_the_penalty_s_form_and_the_rest_l2():
    """``with_l2_beyond(base)``: the same alpha, only ``base`` of it in the penalty's own form
    (the elastic net's l1_ratio, the lasso's L1), the rest L2; an L2 penalty unchanged."""
    en = ElasticNet(0.01, l1_ratio=0.5).with_l2_beyond(0.001)
    assert en.alpha == 0.01
    assert en.l1 == pytest.approx(0.0005) and en.l2 == pytest.approx(0.0095)
    lasso = L1(0.01).with_l2_beyond(0.001)
    assert lasso.l1 == pytest.approx(0.001) and lasso.l2 == pytest.approx(0.009)
    assert L2(0.01).with_l2_beyond(0.001) == L2(0.01)
    assert ElasticNet(0.01, l1_ratio=0.0).with_l2_beyond(0.001) == ElasticNet(0.01, 0.0)
    # no noise term (alpha == base): the penalty as scikit-learn has it
    assert ElasticNet(0.001, l1_ratio=0.5).with_l2_beyond(0.001) == ElasticNet(0.001, 0.5)


def test_the_lasso_s_auto_penalty_is_strongly_convex():
    """With alpha='auto' even l1_ratio=1 has an L2 part (the noise's), so Hong's schedule,
    which needs strong convexity, runs; with a given alpha the lasso has none and it is
    refused."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(500, 4)) / 2
    y = X @ [1.0, 0.0, -1.0, 0.0]
    kw = dict(epsilon=2.0, data_norm=1.0, y_bound=2.0, l1_ratio=1.0, schedule="hong")
    est = DPElasticNet(**kw, random_state=0).fit(X, y)
    assert est.schedule_ == "hong" and est.alpha_ > 1.0 / 500
    with pytest.raises(ValueError, match="strongly convex"):
        DPElasticNet(**kw, alpha=0.01).fit(X, y)

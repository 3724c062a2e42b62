"""Each extension point takes one new piece of code plus one registration: shown here by
adding a noise schedule and a full-batch mechanism from outside the package (docs/contributing.md
describes where such code goes when it joins the package). The other extension points have
their worked examples elsewhere: a GLM estimator (``skdpgd/_poisson.py``, tests/test_poisson.py),
a DP preprocessing step (``skdpgd/decomposition.py``, tests/test_decomposition.py) and an
accountant (the zCDP accountant of docs/how_a_fit_works.md, tests/test_event_algebra.py)."""

import math
from dataclasses import dataclass

import numpy as np
import pytest

from skdpgd import DPLogisticRegression
from skdpgd._full_batch import registry
from skdpgd._full_batch.mechanisms import Mechanism, Outcome
from skdpgd.accounting import Release, gdp_mu
from skdpgd.schedules import NoisePlan, Schedule, Uniform


def _data(n=2000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1).max()
    y = (X @ np.arange(1.0, d + 1) > 0).astype(int)
    return X, y


@dataclass(frozen=True)
class Halving(Schedule):
    """Uniform's number of steps, noise falling linearly to half of its first value."""

    name = "halving"

    def plan(self, problem, mu, max_iter=None):
        T, theory = Uniform.n_iter(problem, mu, max_iter)
        return NoisePlan(
            np.linspace(1.0, 0.5, T),
            np.full(T, 1.0 / problem.smoothness),
            n_iter_theory=theory,
            schedule=self.name,
        )


def test_a_new_schedule_is_one_class():
    X, y = _data()
    clf = DPLogisticRegression(
        epsilon=1.0, data_norm=1.0, classes=[0, 1], schedule=Halving(), random_state=0
    ).fit(X, y)
    z = clf.noise_multipliers_
    assert clf.mechanism_ == "gradient" and clf.schedule_ == "halving" and z.size > 1
    np.testing.assert_allclose(z / z[0], np.linspace(1.0, 0.5, z.size), rtol=1e-12)
    assert clf.epsilon_ <= 1.0
    assert clf.score(X, y) > 0.8


class OneStep(Mechanism):
    """One noisy gradient step from 0: the gradient sum at 0 is released once (sensitivity
    ``setup.grad_sensitivity``: every clipped per-example term has norm <= G), the step is
    post-processing. In the kernel coordinates of the rows, as GradientDescent."""

    name = "one-step"

    def releases(self, setup, plan):
        return [
            Release(
                "gradient sums", plan.noise_multipliers[:1], setup.grad_sensitivity, setup.relation
            )
        ]

    def run(self, rows, setup, plan, releases, gen):
        (grads,) = releases
        c = setup.column
        coef = np.zeros((setup.n_outputs, rows.n_features))
        intercept = np.zeros(setup.n_outputs)
        g, gi, _ = rows.grad_sum(
            coef, intercept, setup.loss.code, setup.loss.param, setup.lipschitz / c
        )
        std = float(grads.noise_std[0]) / c
        g = np.reshape(g, coef.shape) + std * gen.standard_normal(coef.shape)
        gi = np.reshape(gi, intercept.shape) + std * gen.standard_normal(intercept.shape)
        step = float(plan.step_sizes[0]) * c * c / float(setup.n_public)
        return Outcome(-step * g / c, -step * gi if setup.fit_intercept else intercept)


@dataclass(frozen=True)
class OneStepSchedule(Schedule):
    name = "one-step"

    def plan(self, problem, mu, max_iter=None):
        return NoisePlan(
            np.ones(1),
            np.full(1, 1.0 / problem.smoothness),
            n_iter_theory=1.0,
            schedule=self.name,
            mechanism="one-step",
        )


def test_a_new_mechanism_is_one_class_and_a_registry_entry(monkeypatch):
    X, y = _data()
    kw = dict(
        epsilon=1.0,
        data_norm=1.0,
        classes=[0, 1],
        schedule=OneStepSchedule(),
        row_clip="data_norm",
        random_state=0,
    )
    with pytest.raises(ValueError, match="unknown mechanism 'one-step'"):
        DPLogisticRegression(**kw).fit(X, y)
    monkeypatch.setitem(registry.MECHANISMS, "one-step", OneStep)
    clf = DPLogisticRegression(**kw).fit(X, y)
    assert [r.name for r in clf.releases_] == ["gradient sums"]
    assert clf.mu_ == pytest.approx(gdp_mu(1.0, clf.delta_), rel=1e-9)
    assert clf.epsilon_ <= 1.0
    assert np.all(np.isfinite(clf.coef_)) and clf.score(X, y) > 0.7
    # exact: at epsilon = inf the step is the non-private gradient step from 0
    exact = DPLogisticRegression(**dict(kw, epsilon=math.inf)).fit(X, y)
    assert np.corrcoef(exact.coef_.ravel(), clf.coef_.ravel())[0, 1] > 0.9

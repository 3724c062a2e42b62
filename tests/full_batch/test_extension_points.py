"""Each extension point takes one new piece of code plus one registration: shown here by
adding a noise schedule, a full-batch mechanism and a GLM estimator on a loss the kernels
already have, from outside the package (docs/contributing.md describes where such code goes
when it joins the package). The other extension points have their worked examples elsewhere: a
GLM estimator on a new loss (``skdpgd/linear_model/_poisson.py``,
tests/linear_model/test_poisson.py), a DP
preprocessing step (``skdpgd/decomposition.py``, tests/preprocessing/test_decomposition.py) and an
accountant (the zCDP accountant of docs/how_a_fit_works.md,
tests/accounting/test_event_algebra.py)."""

import math
import numbers
from dataclasses import dataclass

import numpy as np
import pytest

from sklearn.linear_model import RidgeClassifier
from sklearn.utils import estimator_checks

from skdpgd import DPLogisticRegression
from skdpgd._core.capability import DP_ESTIMATOR
from skdpgd._compat import Interval, StrOptions, fit_context
from skdpgd._core.data import classification_data
from skdpgd._core.estimators import COMMON_CONSTRAINTS, LinearClassifierMixin
from skdpgd.linear_model._base import _DPLinearBase
from skdpgd._full_batch import registry
from skdpgd._full_batch.mechanisms import Mechanism, Outcome
from skdpgd._core.transaction import fit_transaction
from skdpgd.accounting import Release, gdp_mu
from skdpgd.losses import SquaredError
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


# ---- a GLM estimator on a loss the kernels already have: one file ------------------------


class DPRidgeClassifier(LinearClassifierMixin, _DPLinearBase):
    """Differentially private ridge classifier (scikit-learn's RidgeClassifier, two classes).

    The targets are coded -1 / +1 and the weights minimise the squared loss
    ``(1/N) sum_i w_i (x_i . w + b - y_i)^2 / 2 + alpha/2 ||w||^2`` by the full-batch road
    (the loss :class:`skdpgd.losses.SquaredError`, the kernels' squared loss); ``predict`` is
    the class of the sign of ``decision_function``. Parameters as :class:`skdpgd.DPRidge`,
    with ``classes`` (the public class list) instead of ``y_bound`` (the targets are +-1).

    Privacy: the targets satisfy ``|y| <= 1``, a public bound; each example's gradient is
    clipped to ``clip_norm`` in closed form by the kernels ('auto': ``1 * sqrt(R^2 + c^2)``,
    the largest gradient norm at 0), so each release of the gradient sum has sensitivity
    ``2 clip_norm`` (replace-one) or ``clip_norm`` (add/remove-one), as for DPRidge; the
    accounting is the road's (exact Gaussian DP). Three or more classes are refused (the
    kernels' squared loss has one output) before anything is released.
    """

    #: the leak audit trusts this class: it releases only through the full-batch road
    _skdpgd_privacy = DP_ESTIMATOR

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "classes": ["array-like", None],
        "clip_norm": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=None,
        data_norm=None,
        classes=None,
        row_clip="data_norm",
        clip_norm="auto",
        alpha="auto",
        fit_intercept=True,
        intercept_scaling=0.5,
        schedule="auto",
        max_iter="auto",
        momentum=0.0,
        neighbouring="auto",
        n_samples=None,
        random_state=None,
        budget=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.classes = classes
        self.row_clip = row_clip
        self.clip_norm = clip_norm
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.schedule = schedule
        self.max_iter = max_iter
        self.momentum = momentum
        self.neighbouring = neighbouring
        self.n_samples = n_samples
        self.random_state = random_state
        self.budget = budget
        self.verbose = verbose

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        with fit_transaction(self):
            data = classification_data(self, X, y, sample_weight, self.classes)
            if data.classes.shape[0] != 2:
                raise ValueError(
                    f"DPRidgeClassifier fits two classes, got {data.classes.shape[0]}. "
                    "Nothing was released."
                )
            clip_norm = None if self.clip_norm == "auto" else float(self.clip_norm)
            # data.y is -1 / +1: |y| <= 1 = y_bound; G = SquaredError.lipschitz (the kernels'
            # clip), each gradient release with sensitivity 2G (replace-one) or G (add/remove)
            coef, intercept = self._fit_private(
                data.X,
                data.y,
                data.sample_weight,
                SquaredError(clip_norm=clip_norm, y_bound=1.0),
                1,
                y_bound=1.0,
            )
            self.classes_ = data.classes
            self.coef_ = coef.astype(data.dtype, copy=False)
            self.intercept_ = intercept.astype(data.dtype, copy=False)
        return self


def test_a_new_glm_estimator_is_one_file():
    X, y = _data()
    clf = DPRidgeClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0)
    clf.fit(X, y)
    assert clf.coef_.shape == (1, 4) and clf.intercept_.shape == (1,)
    assert set(clf.predict(X)) <= {0, 1} and clf.score(X, y) > 0.8
    # predict is the sign of the decision function
    np.testing.assert_array_equal(clf.predict(X), np.where(clf.decision_function(X) > 0, 1, 0))
    # the road's accounting, reported as every estimator reports it
    assert clf.epsilon_ <= 1.0 and clf.releases_
    assert clf.mu_ == pytest.approx(gdp_mu(1.0, clf.delta_), rel=1e-9)
    # string labels: classes_ keeps them, predictions are labels
    labels = np.array(["no", "yes"])[y]
    named = DPRidgeClassifier(epsilon=1.0, data_norm=1.0, classes=["no", "yes"], random_state=0)
    assert set(named.fit(X, labels).predict(X)) <= {"no", "yes"}
    # three classes: refused before anything is released, nothing set
    three = DPRidgeClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="two classes"):
        three.fit(X, y + (X[:, 0] > 0.3))
    assert not hasattr(three, "coef_")


def test_the_glm_estimator_becomes_ridge_classifier_without_noise():
    """epsilon = inf, rows and gradients not clipped: scikit-learn's RidgeClassifier, whose
    ``||y - Xw - b||^2 + a ||w||^2`` has the minimiser of ``alpha = a / N`` here."""
    X, y = _data(n=500)
    a = 5.0
    ours = DPRidgeClassifier(
        epsilon=math.inf, data_norm=1.0, classes=[0, 1], alpha=a / 500, clip_norm=1e6
    ).fit(X, y)
    ref = RidgeClassifier(alpha=a).fit(X, y)
    np.testing.assert_allclose(ours.coef_.ravel(), ref.coef_.ravel(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


@pytest.mark.parametrize(
    "check",
    [
        "check_parameters_default_constructible",
        "check_no_attributes_set_in_init",
        "check_get_params_invariance",
        "check_set_params",
        "check_estimators_unfitted",
        "check_fit_check_is_fitted",
        "check_n_features_in",
        "check_estimators_pickle",
        "check_estimators_dtypes",
        "check_estimators_empty_data_messages",
        "check_estimators_nan_inf",
        "check_fit2d_1sample",
        "check_classifiers_one_label",
        "check_classifier_data_not_an_array",
        "check_classifiers_regression_target",
        "check_supervised_y_no_nan",
        "check_pipeline_consistency",
        "check_fit_idempotent",
    ],
)
def test_the_glm_estimator_passes_scikit_learn_checks(check):
    """The binary checks (those on three classes meet the refusal above: a multiclass ridge
    classifier, one-vs-rest squared losses, is a new loss for the kernels)."""
    getattr(estimator_checks, check)("DPRidgeClassifier", DPRidgeClassifier(random_state=0))

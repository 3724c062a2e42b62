"""The base of the full-batch DP GLMs: one ``fit`` for every linear model of the full-batch road.

As in scikit-learn's ``_GeneralizedLinearRegressor``, the base owns ``fit``: it validates the
input, states the targets' public bound, builds the loss, hands the fit to the full-batch road
(:meth:`skdpgd._estimators._DPLinearBase._fit_private`, inside :func:`fit_transaction`) and sets
the fitted attributes. A concrete estimator gives its parameters (``__init__`` and
``_parameter_constraints``), its docs, its privacy declaration (``_skdpgd_privacy`` in its own
body) and its loss, ``_loss``; the hooks below are overridden only where an estimator differs.

* :class:`_DPGLMClassifier`: labels to classes (``classes``, ``class_weight``), one output for
  two classes and one per class otherwise; ``_loss(n_classes)``.
* :class:`_DPGLMRegressor`: one target, clipped to the public range ``y_bound`` (a number or
  a pair) and fitted centred on its middle, identity link; ``_loss(y_bound)`` with the
  half-width of that range.
* :class:`_DPLogLinkRegressor`: non-negative targets clipped to ``[0, y_bound]``, log link
  (predictions ``exp(X @ coef_ + intercept_)``), scored by the fraction of the Tweedie
  deviance of power ``_power`` explained (D^2).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.metrics import d2_tweedie_score
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import StrOptions, fit_context
from .._data import (
    centred_targets,
    classification_data,
    decision_scores,
    is_dask,
    is_spark,
    spark_prediction,
    regression_data,
    resolve_y_bound,
    target_range,
)
from .._estimators import COMMON_CONSTRAINTS, LinearClassifierMixin, _DPLinearBase
from .._fitted import set_fitted
from .._transaction import fit_transaction

__all__ = ["_DPGLM", "_DPGLMClassifier", "_DPGLMRegressor", "_DPLogLinkRegressor", "Targets"]

#: ``stacklevel`` of the warning a target bound read from the data raises, counted from
#: :func:`resolve_y_bound`: through ``_targets``, ``_problem`` and ``fit`` to the caller of
#: ``fit`` (the frame the warning pointed at when each estimator's ``fit`` called it directly)
_Y_BOUND_STACKLEVEL = 5


@dataclasses.dataclass(frozen=True)
class Targets:
    """A regressor's targets as the fit sees them, and the public range they were clipped to.

    ``y``: the clipped (and centred) targets; ``centre``: added back to the intercept;
    ``bound``: the bound on ``|y|`` the loss is built with (None: no bound, the loss's
    gradient is bounded without one); ``gap_bound``: the road's ``y_bound`` (the schedules'
    loss-gap constant; by default ``bound``)."""

    y: Any
    centre: float
    bound: float | None
    gap_bound: float | None = None

    def __post_init__(self):
        if self.gap_bound is None:
            object.__setattr__(self, "gap_bound", self.bound)

    @property
    def range(self):
        """``(lo, hi)``, the range the targets were clipped to (None without a bound)."""
        return None if self.bound is None else (self.centre - self.bound, self.centre + self.bound)


@dataclasses.dataclass(frozen=True)
class _Problem:
    """What ``fit`` hands to the road, and what it needs afterwards to set the attributes."""

    X: Any
    y: Any
    sample_weight: Any
    dtype: np.dtype
    loss: Any
    n_outputs: int = 1
    y_bound: float | None = None  # the road's target bound (the loss-gap constant)
    labels: dict = dataclasses.field(default_factory=dict)  # classes, y_index
    targets: Targets | None = None


class _DPGLM(_DPLinearBase):
    """A linear model fitted by the full-batch road. Subclasses give ``_problem`` (the
    validated input and the loss) and ``_set_fitted``; the public estimators derive from
    :class:`_DPGLMClassifier` or :class:`_DPGLMRegressor`."""

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model privately.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, dense or sparse (CSR, never densified); rows are clipped to
            ``data_norm``.
        y : array-like of shape (n_samples,)
            Class labels (a classifier), or one target per row (a regressor: clipped to the
            public range ``y_bound``; a y with several columns is refused, fit one estimator
            per target under a shared :class:`~skdpgd.PrivacyBudget`).
        sample_weight : array-like of shape (n_samples,), default=None
            Per-example weights in [0, 1] (see the Privacy note).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._check_fit_params(y)
        with fit_transaction(self):
            problem = self._problem(X, y, sample_weight)
            coef, intercept = self._fit_private(
                problem.X,
                problem.y,
                problem.sample_weight,
                problem.loss,
                problem.n_outputs,
                y_bound=problem.y_bound,
                **problem.labels,
            )
            self._set_fitted(problem, coef, intercept)
        return self

    def _check_fit_params(self, y):
        """Checks that need no data, before the fit starts (raise ValueError)."""

    def _loss(self, size):
        """The loss (a :mod:`skdpgd.losses` object): of ``n_classes`` for a classifier, of the
        targets' bound for a regressor."""
        raise NotImplementedError

    def _problem(self, X, y, sample_weight):
        raise NotImplementedError

    def _set_fitted(self, problem, coef, intercept):
        raise NotImplementedError


class _DPGLMClassifier(LinearClassifierMixin, _DPGLM):
    """A full-batch classifier: ``_loss(n_classes)`` gives the loss; two classes have one
    output (one weight row), more one per class."""

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "classes": ["array-like", None],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def _problem(self, X, y, sample_weight):
        data = classification_data(
            self,
            X,
            y,
            sample_weight,
            self.classes,
            dask=(
                True
                if self.class_weight is None
                else ValueError("class_weight is not supported for dask input yet.")
            ),
            stacklevel=4,  # the caller of fit, as when fit called it itself
        )
        n_classes = data.classes.shape[0]
        return _Problem(
            data.X,
            data.y,
            data.sample_weight,
            data.dtype,
            self._loss(n_classes),
            1 if n_classes == 2 else n_classes,
            labels={"classes": data.classes, "y_index": data.y_index},
        )

    def _set_fitted(self, problem, coef, intercept):
        self.classes_ = problem.labels["classes"]
        # computed in float64 (sums of clipped terms must not round past their bound);
        # float32 input gets float32 coefficients, as in scikit-learn
        self.coef_ = coef.astype(problem.dtype, copy=False)
        self.intercept_ = intercept.astype(problem.dtype, copy=False)


class _DPGLMRegressor(RegressorMixin, _DPGLM):
    """A full-batch regressor of one target with the identity link. The targets are clipped
    to the public range ``y_bound`` (a number Y for ``[-Y, Y]`` or a pair ``(lo, hi)``; None
    reads ``max |y|`` from the data with a PrivacyLeakWarning) and fitted centred on its
    middle, which is added back to the intercept. ``_loss(y_bound)`` gives the loss for the
    range's half-width."""

    #: the inverse of the link function, applied to ``X @ coef_ + intercept_`` (None: the
    #: identity)
    _inverse_link = None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a private fit of 200 rows at epsilon=1 has R^2 near 0.05-0.1: scikit-learn's
        # regressor checks keep their shape and error assertions, without the score bar
        tags.regressor_tags.poor_score = True
        return tags

    def _check_fit_params(self, y):
        y_shape = getattr(y, "shape", None)
        if y_shape is not None and len(y_shape) == 2 and y_shape[1] > 1:
            name = type(self).__name__
            raise ValueError(
                f"{name} fits one target, got y with {y_shape[1]} columns. Fit one {name} "
                "per target: each fit spends its own (epsilon, delta), so share a PrivacyBudget "
                "to account for them together (a joint multi-output release is not offered)."
            )

    def _targets(self, y):
        """The targets the fit sees (:class:`Targets`)."""
        if self.y_bound is None:
            centre, half = 0.0, resolve_y_bound(None, y, stacklevel=_Y_BOUND_STACKLEVEL)
        else:  # public: a bound Y (the range [-Y, Y]) or a range (lo, hi)
            centre, half = target_range(self.y_bound, self.fit_intercept)
        # the fit sees y - centre within [-half, half]: the sensitivities use half
        return Targets(centred_targets(y, centre, half), centre, half)

    def _target_attributes(self, targets):
        """The fitted attributes that describe the targets' range."""
        return {"y_bound_": targets.bound, "y_range_": targets.range}

    def _problem(self, X, y, sample_weight):
        X, y, sample_weight, dtype, *_ = regression_data(self, X, y, sample_weight)
        targets = self._targets(y)
        return _Problem(
            X,
            targets.y,
            sample_weight,
            dtype,
            self._loss(targets.bound),
            y_bound=targets.gap_bound,
            targets=targets,
        )

    def _set_fitted(self, problem, coef, intercept):
        set_fitted(self, self._target_attributes(problem.targets))
        dtype = problem.dtype
        self.coef_ = coef[0].astype(dtype, copy=False)
        centre = problem.targets.centre
        self.intercept_ = dtype.type(intercept[0] + centre if self.fit_intercept else 0.0)

    def predict(self, X):
        """Predict targets: ``X @ coef_ + intercept_`` through the inverse link (the identity,
        or ``exp`` for a log link).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        if is_spark(X):  # a Spark column, computed on the executors
            kind = "scores" if self._inverse_link is None else "exp"
            return spark_prediction(self, X, self.coef_[None, :], [self.intercept_], kind)
        if is_dask(X):  # a lazy dask array
            eta = decision_scores(self, X, self.coef_[None, :], [self.intercept_])[:, 0]
        else:
            X = validate_data(
                self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False
            )
            eta = np.asarray(X @ self.coef_).ravel() + self.intercept_
        return eta if self._inverse_link is None else self._inverse_link(eta)


class _DPLogLinkRegressor(_DPGLMRegressor):
    """A full-batch regressor with the log link: non-negative targets clipped to
    ``[0, y_bound]`` (``y_bound`` a number; None reads ``max |y|`` from the data with a
    PrivacyLeakWarning), fitted as they are; predictions ``exp(X @ coef_ + intercept_)``;
    ``score`` the D^2 of the Tweedie deviance of power ``_power``."""

    #: the power of the Tweedie deviance ``score`` explains (1: Poisson)
    _power = 1
    _inverse_link = staticmethod(np.exp)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True  # negative targets are clipped to 0
        return tags

    def _targets(self, y):
        y_bound = resolve_y_bound(self.y_bound, y, stacklevel=_Y_BOUND_STACKLEVEL)
        return Targets(y.clip(0.0, y_bound), 0.0, y_bound)

    def _target_attributes(self, targets):
        return {"y_bound_": targets.bound}

    def score(self, X, y, sample_weight=None):
        """D^2, the fraction of the deviance explained (as scikit-learn's GLMs' score).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Non-negative targets.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
            1 is a perfect fit; 0 predicts the weighted mean target.
        """
        return d2_tweedie_score(y, self.predict(X), sample_weight=sample_weight, power=self._power)

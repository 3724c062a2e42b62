"""The base of the full-batch DP GLMs: one ``fit`` for every linear model of the full-batch road.

As in scikit-learn's ``_GeneralizedLinearRegressor``, the base owns ``fit``: it validates the
input, states the targets' public bound, builds the loss, hands the fit to the full-batch road
(:meth:`_DPLinearBase._fit_private`, inside :func:`fit_transaction`)
and sets the fitted attributes. A concrete estimator gives its parameters (``__init__`` and
``_parameter_constraints``), its docs, its privacy declaration (``_skdpgd_privacy`` in its own
body) and its loss, ``_loss``; the hooks below are overridden only where an estimator differs.

* :class:`_DPGLMClassifier`: labels to classes (``classes``, ``class_weight``), one output for
  two classes and one per class otherwise; ``_loss(n_classes)``.
* :class:`_DPGLMRegressor`: one target, clipped to the public range ``y_bound`` (a number or
  a pair) and fitted centred on its middle, identity link; ``_loss(y_bound)`` with the
  half-width of that range.
* :class:`_DPLogLinkRegressor`: non-negative targets clipped to ``[0, y_bound]`` (or to
  ``[lo, hi]`` for a pair ``y_bound=(lo, hi)``, where the estimator allows one), log link
  (predictions ``exp(X @ coef_ + intercept_)``), scored by the fraction of the Tweedie
  deviance of power ``_power`` (or the estimator's ``power`` parameter) explained (D^2).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.metrics import d2_tweedie_score, mean_tweedie_deviance
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import StrOptions, fit_context
from .._core.data import (
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
from .._core.capability import with_privacy
from .._core.data import resolve_data_norm
from .._core.estimators import COMMON_CONSTRAINTS, LinearClassifierMixin
from .._core.fit import PrivacySpec
from .._full_batch.road import FullBatchConfig, fit_full_batch
from ..penalties import L2
from .._core.fitted import set_fitted
from .._core.transaction import fit_transaction

__all__ = ["_DPGLM", "_DPGLMClassifier", "_DPGLMRegressor", "_DPLogLinkRegressor", "Targets"]

#: ``stacklevel`` of the warning a target bound read from the data raises, counted from
#: :func:`resolve_y_bound`: through ``_targets``, ``_problem`` and ``fit`` to the caller of
#: ``fit`` (the frame the warning pointed at when each estimator's ``fit`` called it directly)
_Y_BOUND_STACKLEVEL = 5


class _DPLinearBase(BaseEstimator):
    _parameter_constraints: dict = dict(COMMON_CONSTRAINTS)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = self.random_state is None
        return with_privacy(self, tags)  # the capability the concrete class itself declares

    def _fit_private(self, X, y, sample_weight, loss, n_outputs, y_bound=None, **classes):
        """Run the private fit and set its attributes (only once it has succeeded)."""
        data_norm = resolve_data_norm(self.data_norm, X)
        fitted = fit_full_batch(
            PrivacySpec.of(self),
            self._full_batch_config(data_norm),
            X,
            y,
            sample_weight,
            loss,
            n_outputs,
            y_bound=y_bound,
            **classes,
        )
        coef, intercept = fitted.model
        set_fitted(self, fitted)
        return coef, intercept

    def _full_batch_config(self, data_norm):
        """The full-batch road's parameters, resolved (``data_norm``: the public row-norm
        bound, :func:`skdpgd._core.data.resolve_data_norm`)."""
        return FullBatchConfig(
            fit_intercept=self.fit_intercept,
            row_clip=self.row_clip,
            data_norm=data_norm,
            data_norm_given=self.data_norm is not None,
            intercept_scaling=self.intercept_scaling,
            schedule=self.schedule,
            max_iter=None if self.max_iter == "auto" else self.max_iter,
            alpha=self.alpha,
            momentum=self.momentum,
            penalty=self._penalty(),
        )

    def _penalty(self):
        """The penalty's family: a callable taking the resolved alpha (the parameter, or
        'auto''s rule) to a :class:`skdpgd.penalties.Penalty`. L2 here; an estimator with
        another penalty returns its own (``DPElasticNet``: the elastic net of its
        ``l1_ratio``)."""
        return L2


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

    def _skdpgd_reads_if_none(self):
        """The parameters whose None the fit fills from the private rows (the class list):
        what the leak audit refuses (see :mod:`skdpgd._core.capability`)."""
        return ("classes",)

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

    def _skdpgd_reads_if_none(self):
        """The parameters whose None the fit fills from the private rows (``y_bound``: the
        largest ``|y|``, with a PrivacyLeakWarning): what the leak audit refuses (see
        :mod:`skdpgd._core.capability`). A regressor that needs no target range returns ()."""
        return ("y_bound",)

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
    ``[lo, Y]`` (``y_bound`` a number Y for ``[0, Y]``, or a pair ``(lo, Y)``: ``lo`` must be 0
    unless the estimator allows a positive floor (``_allows_floor``); None reads ``max |y|``
    from the data with a PrivacyLeakWarning), fitted as they are; predictions
    ``exp(X @ coef_ + intercept_)``; ``score`` the D^2 of the Tweedie deviance of power
    ``_power`` (or of the estimator's ``power``)."""

    #: the power of the Tweedie deviance ``score`` explains (1: Poisson), unless the estimator
    #: has a ``power`` parameter
    _power = 1
    _inverse_link = staticmethod(np.exp)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True  # negative targets are clipped to 0
        return tags

    #: whether a pair ``y_bound=(lo, Y)`` may have ``lo > 0`` (a public floor of the targets,
    #: which the Gamma deviance needs); otherwise a pair must start at 0
    _allows_floor = False

    def _check_fit_params(self, y):
        super()._check_fit_params(y)
        self._count_range()  # a bad pair is refused before any row is read

    def _count_range(self):
        """``(lo, Y)``: the public range the targets are clipped to. ``y_bound`` a number Y
        gives ``(0, Y)``; a pair ``(lo, Y)`` needs ``0 <= lo < Y`` finite, and ``lo = 0``
        unless ``_allows_floor``; None gives ``(0, None)`` (Y read from the data later, with
        a PrivacyLeakWarning)."""
        if self.y_bound is None or (
            isinstance(self.y_bound, numbers.Real) and not isinstance(self.y_bound, bool)
        ):
            return 0.0, self.y_bound
        name = type(self).__name__
        try:
            lo, hi = (float(v) for v in self.y_bound)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name}'s y_bound must be a number Y or a pair (0, Y), got {self.y_bound!r}."
            ) from None
        if self._allows_floor and not (math.isfinite(hi) and hi > 0 and 0.0 <= lo < hi):
            raise ValueError(
                f"{name} fits non-negative targets clipped to [lo, Y]: pass y_bound=Y or a pair "
                f"(lo, Y) with public 0 <= lo < Y, got y_bound={self.y_bound!r}."
            )
        if not self._allows_floor and (lo != 0.0 or not (math.isfinite(hi) and hi > 0)):
            raise ValueError(
                f"{name} fits non-negative targets clipped to [0, Y]: pass y_bound=Y or "
                f"y_bound=(0, Y) with a public Y > 0, got y_bound={self.y_bound!r}. (A range "
                "that starts above 0 cannot be used: the log link has no centre to shift "
                "the targets by.)"
            )
        return lo, hi

    def _y_floor(self):
        """The public lower end of the targets' range (0 unless a pair sets one)."""
        return self._count_range()[0]

    def _targets(self, y):
        lo, bound = self._count_range()
        y_bound = resolve_y_bound(bound, y, stacklevel=_Y_BOUND_STACKLEVEL)
        return Targets(y.clip(lo, y_bound), 0.0, y_bound)

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
        # the estimator's own power parameter where it has one (DPTweedieRegressor), else the
        # class's
        power = getattr(self, "power", self._power)
        y_pred = self.predict(X)
        try:
            return d2_tweedie_score(y, y_pred, sample_weight=sample_weight, power=power)
        except ZeroDivisionError:
            # constant targets: the null deviance is 0. scikit-learn's GLMs' score divides in
            # floating point: a RuntimeWarning, then -inf (nan for a perfect fit, and for
            # targets all 0, whose null model's log-mean is -inf): the same here
            if not np.average(np.asarray(y, dtype=float), weights=sample_weight) > 0:
                warnings.warn(
                    "D^2 is not defined for targets that are all 0 (the null model's "
                    "log-mean is -inf): returning nan, as scikit-learn's GLMs do.",
                    RuntimeWarning,
                    stacklevel=2,
                )
                return float("nan")
            numerator = np.float64(
                mean_tweedie_deviance(y, y_pred, sample_weight=sample_weight, power=power)
            )
            return float(np.float64(1.0) - numerator / np.float64(0.0))

"""Preprocessing that reads nothing private, or spends accounted budget.

A scaler fitted on the private rows (scikit-learn's ``StandardScaler``, ``MinMaxScaler``, ...)
publishes their statistics without any guarantee: one outlying row moves a mean or a maximum
without bound. The transformers here are the private replacements:

* :class:`BoundedScaler` clips every column to a **public** range ``(lo, hi)`` and maps it to
  ``[-1, 1]``. Its fit reads the number (and names) of the columns and nothing else, so it
  costs no budget.
* :class:`DPStandardScaler` standardises with means and variances released by the Gaussian
  mechanism from the clipped columns; its releases are accounted like an estimator's
  (``releases_``, ``epsilon_``, ``delta_``, a shared :class:`~skdpgd.PrivacyBudget`).
* :func:`schema_transformer` builds a scikit-learn ``ColumnTransformer`` from a public
  codebook ``{column: (lo, hi) or [levels]}``: numeric columns through :class:`BoundedScaler`,
  categorical ones one-hot over their public levels (``OneHotEncoder(categories=...,
  handle_unknown='ignore')``), every cell outside the declared domain (text in a numeric
  column, a level not listed) treated as missing, missing values to a public constant, every
  row of norm at most 1. Its fitted attributes are the same whatever the rows.

Each transformer declares the public bound of its output rows (``output_bound_``, an L2 norm);
:func:`output_bound` reads it from any fitted transformer skdpgd understands, including
scikit-learn's ``ColumnTransformer``, ``FeatureUnion``, ``Pipeline``, ``OneHotEncoder`` with
public levels and ``Normalizer``. :class:`skdpgd.pipeline.PrivatePipeline` passes it on to the
final estimator as ``data_norm``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from . import policy
from ._capability import (
    DP_TRANSFORMER,
    PUBLIC_TRANSFORMER,
    privacy_capability,
    with_privacy,
)
from ._compat import HasMethods, Interval, StrOptions, fit_context
from ._fit import FitRows, PrivacySpec, Road, RoadResult, mu_of, private_fit
from ._fitted import ScalerAttributes, set_fitted
from ._noise import fit_generator, gaussian
from ._prior import own_sensitivity
from ._transaction import fit_transaction
from .accounting import RELATIONS, Release, sum_rounding_margin

__all__ = [
    "BoundedScaler",
    "DPStandardScaler",
    "Categorical",
    "DomainCounts",
    "Numeric",
    "categorical",
    "numeric",
    "out_of_domain_counts",
    "schema_transformer",
    "output_bound",
]


# ------------------------------------------------------------------------------------------
# public bounds
# ------------------------------------------------------------------------------------------


def _resolve_bounds(bounds, n_features, feature_names=None, owner="BoundedScaler"):
    """``(lo, hi)`` arrays of shape (n_features,) from the ``bounds`` parameter.

    ``bounds``: a pair ``(lo, hi)`` for every column, an array of shape (n_features, 2), or a
    dict ``{column name: (lo, hi)}`` (DataFrame input: every column must be listed; keys that
    are not columns are ignored).
    """
    if bounds is None:
        raise ValueError(
            f"{owner} needs public bounds: bounds=(lo, hi), an array of shape (n_features, 2) "
            "or a dict {column: (lo, hi)}. They must come from a codebook or domain knowledge, "
            "never from the private rows."
        )
    if isinstance(bounds, dict):
        if feature_names is None:
            keys = list(range(n_features))
            if not all(k in bounds for k in keys):
                raise ValueError(
                    f"{owner}: bounds is a dict, but X has no column names (it is not a "
                    "DataFrame): pass a DataFrame, or a dict keyed by column position 0..d-1, "
                    "or an array of shape (n_features, 2)."
                )
        else:
            keys = list(feature_names)
            missing = [k for k in keys if k not in bounds]
            if missing:
                raise ValueError(
                    f"{owner}: no public bounds for column(s) {missing[:5]}; every column needs "
                    "one (or drop it before this step)."
                )
        arr = np.array([tuple(bounds[k]) for k in keys], dtype=float).reshape(len(keys), -1)
    else:
        arr = np.array(bounds, dtype=float)
        if arr.shape == (2,):
            arr = np.tile(arr, (n_features, 1))
    if arr.ndim != 2 or arr.shape != (n_features, 2):
        raise ValueError(
            f"{owner}: bounds must be (lo, hi), an array of shape ({n_features}, 2) or a dict "
            f"by column name; got shape {arr.shape}."
        )
    lo, hi = arr[:, 0].copy(), arr[:, 1].copy()
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(lo < hi)):
        raise ValueError(f"{owner}: every bound needs finite lo < hi.")
    return lo, hi


def _to_unit(X, lo, hi):
    """Clip each column to [lo, hi] and map it affinely to [-1, 1] (float64, guarded)."""
    mid = 0.5 * (lo + hi)
    half = 0.5 * (hi - lo)
    U = (np.clip(X, lo, hi) - mid) / half
    return np.clip(U, -1.0, 1.0, out=U)  # rounding of the affine map cannot leave [-1, 1]


class BoundedScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Clip each column to a public range and map it to [-1, 1]; no budget spent.

    ``x -> 2 (clip(x, lo, hi) - lo) / (hi - lo) - 1``. The ranges are parameters (a codebook,
    domain knowledge), so ``fit`` reads only the number and names of the columns: the fitted
    transformer is the same for every dataset of that shape, and nothing about the rows is
    released. Every output column lies in [-1, 1], so a row's L2 norm is at most
    ``sqrt(n_features)`` (``output_bound_``).

    **Input.** The rows are assumed to be numbers (a numeric dtype, NaN for a missing value).
    A cell that is not a number (text, a date, an arbitrary object) makes ``fit`` and
    ``transform`` raise scikit-learn's conversion error: whether a fit succeeds then depends
    on that one row, which is not accounted. On a raw table use :func:`schema_transformer`,
    whose numeric part converts such cells to missing (``missing_value``) before this scaler,
    or convert them yourself, cell by cell, before the pipeline.

    Parameters
    ----------
    bounds : (lo, hi), array-like of shape (n_features, 2) or dict
        Public range of each column; a dict is keyed by column name (DataFrame input). Values
        outside are clipped (``-inf``/``inf`` to ``lo``/``hi``).
    missing_value : float in [-1, 1] or None, default=0.0
        Output for a missing (NaN) entry: a public constant, by default 0.0 (the middle of
        the range). None: a NaN in ``transform`` is an error.

    Attributes
    ----------
    lo_, hi_ : ndarray of shape (n_features,)
        The public ranges, in column order.
    output_bound_ : float
        Public bound on the L2 norm of an output row: ``sqrt(n_features)``.
    output_ranges_ : ndarray of shape (n_features, 2)
        Public range of each output column: [-1, 1].
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only with DataFrame input.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd.preprocessing import BoundedScaler
    >>> BoundedScaler(bounds=[(0, 100), (0, 10)]).fit_transform(np.array([[50, 20], [-3, 5]]))
    array([[ 0.,  1.],
           [-1.,  0.]])
    """

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._capability
    _skdpgd_privacy = PUBLIC_TRANSFORMER

    _parameter_constraints = {
        "bounds": ["array-like", dict, tuple, None],
        "missing_value": [Interval(numbers.Real, -1, 1, closed="both"), None],
    }

    def __init__(self, bounds=None, *, missing_value=0.0):
        self.bounds = bounds
        self.missing_value = missing_value

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Record the number (and names) of the columns and resolve the public bounds.

        No value of X is kept or used beyond its type and shape.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : object
        """
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite=False, reset=True)
        lo, hi = _resolve_bounds(self.bounds, X.shape[1], getattr(self, "feature_names_in_", None))
        self.lo_, self.hi_ = lo, hi
        self.output_ranges_ = np.tile([-1.0, 1.0], (lo.shape[0], 1))
        self.output_bound_ = math.sqrt(lo.shape[0])
        return self

    def transform(self, X):
        """Clip to the public ranges and map to [-1, 1].

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features), values in [-1, 1]
        """
        check_is_fitted(self)
        X = validate_data(
            self, X, dtype=np.float64, ensure_all_finite=False, reset=False, copy=True
        )
        nan = np.isnan(X)
        if np.any(nan) and self.missing_value is None:
            raise ValueError(
                "BoundedScaler got a missing value (NaN); set missing_value (a public output "
                "value in [-1, 1], e.g. 0.0) or impute with a public constant first."
            )
        U = _to_unit(X, self.lo_, self.hi_)
        if np.any(nan):
            U[nan] = float(self.missing_value)
        return U

    def inverse_transform(self, X):
        """Map [-1, 1] back to the public ranges (clipped values stay at their bound).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False, copy=True)
        return 0.5 * (self.lo_ + self.hi_) + X * 0.5 * (self.hi_ - self.lo_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # fit reads no value; transform maps NaN or refuses
        return with_privacy(self, tags)  # the capability the class itself declares


# ------------------------------------------------------------------------------------------
# DP standardisation
# ------------------------------------------------------------------------------------------


class DPStandardScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardise with differentially private means and variances (Gaussian mechanism).

    Each column is clipped to its public range and mapped to [-1, 1] (as
    :class:`BoundedScaler` does), giving rows ``u_i`` in ``[-1, 1]^d``. The fit releases

    * ``S1 = sum_i u_i + N(0, (z_1 Delta_1)^2 I_d)``: changing one row moves each coordinate
      by at most 2 (replace-one) or adding/removing one moves it by at most 1, so
      ``Delta_1 = 2 sqrt(d)`` (replace-one) and ``sqrt(d)`` (add/remove-one);
    * ``S2 = sum_i u_i^2 + N(0, (z_2 Delta_2)^2 I_d)`` (squares taken coordinate-wise): each
      ``u_ij^2`` lies in [0, 1], so ``Delta_2 = sqrt(d)`` under both relations;
    * under add/remove-one, without a public ``n_samples``, a noisy row count (sensitivity 1,
      as in the estimators).

    Both sensitivities are raised by the float64 rounding margin of a sum
    (:func:`skdpgd.accounting.sum_rounding_margin`). The means and variances are
    post-processing: ``m = clip(S1~ / N, -1, 1)``, ``v = S2~ / N - m^2``, and the scale
    ``s = sqrt(max(v, STD_FLOOR^2))`` (``skdpgd.policy.STD_FLOOR``). All releases are calibrated
    together so that they compose to exactly (epsilon, delta) in Gaussian DP, the sums sharing
    what the count leaves equally.

    The output ``(u - m) / s`` is clipped to ``[-clip_std, clip_std]``: the bound is public
    because it is a parameter (no released value enters it), so every output row has L2 norm at
    most ``clip_std * sqrt(d)`` (``output_bound_``), whatever the noise drew.

    **Input.** As for :class:`BoundedScaler`, the rows are assumed to be numbers (NaN for a
    missing value); a cell that is not a number makes the fit raise before anything is
    released, and whether it fails depends on that row (not accounted). Convert such cells to
    missing first (cell by cell, as :func:`schema_transformer` does for its columns).

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of the fit (> 0; ``inf``: no noise).
    bounds : (lo, hi), array-like of shape (n_features, 2) or dict
        Public range of each column (as in :class:`BoundedScaler`). Required.
    delta : float or None, default=None
        Delta of the guarantee; None: ``min(1e-5, 1/N^2)`` as in the estimators.
    budget : PrivacyBudget or None, default=None
        A shared budget charged with every release before it is drawn.
    neighbouring : {'auto', 'replace', 'add_remove'}, default='auto'
        Neighbouring relation ('auto': the budget's, else replace-one), as in the estimators.
    n_samples : float or None, default=None
        Public row count under add/remove-one (otherwise a noisy count is released).
    clip_std : float, default=3.0
        Outputs are clipped to this many (released) standard deviations.
    missing_value : float in [-1, 1] or None, default=0.0
        Where a missing (NaN) entry sits on the [-1, 1] scale, in the fit's sums and in
        ``transform``: a public constant, by default the middle of the range (the sensitivities
        hold since it lies in [-1, 1]). None: a NaN is an error.
    random_state : int, RandomState instance or None, default=None
        Seeds the noise.

    Attributes
    ----------
    mean_, scale_, var_ : ndarray of shape (n_features,)
        The released statistics in the original units (``scale_`` includes the floor).
    output_bound_ : float
        Public L2 bound of an output row: ``clip_std * sqrt(n_features)``.
    output_ranges_ : ndarray of shape (n_features, 2)
    releases_ : list of :class:`skdpgd.accounting.Release`
    epsilon_, delta_, mu_ : float
        What the fit spent (an upper bound; ``mu_`` in Gaussian DP).
    n_samples_ : float
        The N used (public, or the noisy count).
    neighbouring_ : str

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd.preprocessing import DPStandardScaler
    >>> X = np.random.default_rng(0).uniform(0, 10, size=(5000, 2))
    >>> sc = DPStandardScaler(epsilon=1.0, bounds=(0, 10), random_state=0).fit(X)
    >>> np.round(sc.mean_, 1)
    array([5., 5.])
    """

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._capability
    _skdpgd_privacy = DP_TRANSFORMER

    _parameter_constraints = {
        "epsilon": [Interval(numbers.Real, 0, np.inf, closed="right")],
        "bounds": ["array-like", dict, tuple, None],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "budget": [HasMethods(["charge"]), None],
        "neighbouring": [StrOptions({"auto", *RELATIONS})],
        "n_samples": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "clip_std": [Interval(numbers.Real, 0, None, closed="neither")],
        "missing_value": [Interval(numbers.Real, -1, 1, closed="both"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        bounds=None,
        delta=None,
        budget=None,
        neighbouring="auto",
        n_samples=None,
        clip_std=3.0,
        missing_value=0.0,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.bounds = bounds
        self.delta = delta
        self.budget = budget
        self.neighbouring = neighbouring
        self.n_samples = n_samples
        self.clip_std = clip_std
        self.missing_value = missing_value
        self.random_state = random_state

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the private means and variances of the clipped columns.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : object
        """
        with fit_transaction(self):
            X = validate_data(self, X, dtype=np.float64, reset=True, ensure_all_finite=False)
            set_fitted(self, self._fit(X))
        return self

    def _fit(self, X):
        lo, hi = _resolve_bounds(
            self.bounds, X.shape[1], getattr(self, "feature_names_in_", None), "DPStandardScaler"
        )
        return private_fit(
            PrivacySpec.of(self),
            _ScalerRoad(self._unit(X, lo, hi), lo, hi, self.clip_std),
            FitRows(X.shape[0]),
        )

    def _unit(self, X, lo, hi):
        """Rows clipped to the public ranges, mapped to [-1, 1], NaN at ``missing_value``."""
        nan = np.isnan(X)
        if self.missing_value is None and np.any(nan):
            raise ValueError(
                "DPStandardScaler got a missing value (NaN); set missing_value (a public "
                "position in [-1, 1], e.g. 0.0) or impute with a public constant first."
            )
        U = _to_unit(X, lo, hi)
        U[nan] = 0.0 if self.missing_value is None else float(self.missing_value)
        return U

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.missing_value is not None
        return with_privacy(self, tags)  # the capability the class itself declares

    def transform(self, X):
        """Clip to the public ranges, standardise with the released statistics, clip to
        ``[-clip_std, clip_std]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False, ensure_all_finite=False)
        U = self._unit(X, self.lo_, self.hi_)
        B = float(self.clip_std)
        return np.clip((U - self.unit_mean_) / self.unit_scale_, -B, B)


class _ScalerRoad(Road):
    """DPStandardScaler's two releases (column sums and sums of squares of the rows mapped to
    [-1, 1]) as a road of :func:`skdpgd._fit.private_fit`."""

    def __init__(self, U, lo, hi, clip_std):
        self.U, self.lo, self.hi, self.clip_std = U, lo, hi, float(clip_std)

    def setup(self, fit):
        # the float64 rounding margin of the sums, from a public bound on the rows summed
        self.margin = sum_rounding_margin(fit.rows_summed_bound(), self.U.shape[1])

    def releases(self, fit):
        root_d = math.sqrt(self.U.shape[1])
        # S1 = sum_i u_i: one row replaced moves each coordinate by <= 2, one row added or
        # removed by <= 1  ->  L2 sensitivity 2 sqrt(d) (replace), sqrt(d) (add/remove)
        # S2 = sum_i u_i^2 (per coordinate): each term in [0, 1], so a replaced, added or
        # removed row moves each coordinate by <= 1  ->  sqrt(d) under both relations
        # (both raised by the rounding margin at calibration)
        return [
            Release(
                "column sums", [1.0], {"replace": 2.0 * root_d, "add_remove": root_d}, fit.relation
            ),
            Release(
                "column sums of squares",
                [1.0],
                {"replace": root_d, "add_remove": root_d},
                fit.relation,
            ),
        ]

    def run(self, fit, releases):
        U, d = self.U, self.U.shape[1]
        S1 = np.sum(U, axis=0, dtype=np.float64)
        S2 = np.sum(U * U, axis=0, dtype=np.float64)
        sums, squares = releases
        if sums.multipliers[0] > 0:
            S1 = gaussian(S1, sums.noise_std[0], fit.gen, own_sensitivity(sums))
            S2 = gaussian(S2, squares.noise_std[0], fit.gen, own_sensitivity(squares))
        # post-processing of the released sums (N is public or released)
        m = np.clip(S1 / fit.n_public, -1.0, 1.0)
        v = np.clip(S2 / fit.n_public, 0.0, 1.0) - m * m
        s = np.sqrt(np.maximum(v, policy.current().STD_FLOOR ** 2))
        mu = mu_of(fit.setup_releases + list(releases))
        half = 0.5 * (self.hi - self.lo)
        B = self.clip_std
        return RoadResult(
            ScalerAttributes(
                lo_=self.lo,
                hi_=self.hi,
                unit_mean_=m,
                unit_scale_=s,
                mean_=0.5 * (self.lo + self.hi) + half * m,
                scale_=half * s,
                var_=(half * np.sqrt(np.maximum(v, 0.0))) ** 2,
                output_ranges_=np.tile([-B, B], (d, 1)),
                output_bound_=B * math.sqrt(d),
                mu_=mu,
            ),
        )


# ------------------------------------------------------------------------------------------
# declared bounds of fitted transformers
# ------------------------------------------------------------------------------------------


def _norm_of_parts(parts):
    """L2 bound of a concatenation of outputs with bounds ``parts`` (None: unknown)."""
    if any(b is None for b in parts):
        return None
    return math.sqrt(sum(float(b) ** 2 for b in parts))


def _selects_nothing(columns):
    """Whether a fitted ColumnTransformer part's column selection is empty (scikit-learn then
    leaves the part unfitted and it outputs no column)."""
    if columns is None or isinstance(columns, (str, int, slice)):
        return False
    columns = np.asarray(columns)
    return columns.size == 0 or (columns.dtype == bool and not columns.any())


def output_bound(transformer, input_bound=None):
    """The public L2 bound of the rows a fitted transformer outputs, or None if unknown.

    Understood: the ``output_bound_`` of a class that declares itself a public-bound or DP
    transformer in its own body (:class:`BoundedScaler`, :class:`DPStandardScaler`; see
    :mod:`skdpgd._capability`); ``OneHotEncoder`` (at most one 1 per input column, with
    ``handle_unknown='ignore'``: ``sqrt(n_features_in_)``); ``Normalizer`` (1 for 'l2' and
    'l1', ``sqrt(d)`` for 'max'); ``Binarizer`` (``sqrt(d)``); a ``FunctionTransformer``
    without a function and ``'passthrough'`` (the input's bound); ``Pipeline`` (the chain);
    ``ColumnTransformer`` and ``FeatureUnion`` (``sqrt(sum_k (w_k b_k)^2)`` over the parts,
    ``w_k`` their ``transformer_weights``). ``input_bound`` is the bound of the rows fed in
    (None: unknown, e.g. raw data).

    A subclass of any of these is unknown (None) unless it declares a capability itself: its
    ``transform`` may not keep the bound its parent promises; the scikit-learn classes are
    recognised by exact type for the same reason.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion, Pipeline
    from sklearn.preprocessing import Binarizer, FunctionTransformer, Normalizer, OneHotEncoder

    t = transformer
    if t is None or (isinstance(t, str) and t == "passthrough"):
        return input_bound
    if isinstance(t, str) and t == "drop":
        return 0.0
    if privacy_capability(t) in (PUBLIC_TRANSFORMER, DP_TRANSFORMER):
        return float(t.output_bound_) if hasattr(t, "output_bound_") else None
    if type(t) is Pipeline:
        b = input_bound
        for _, step in t.steps:
            b = output_bound(step, b)
        return b
    if type(t) is ColumnTransformer:
        weights = t.transformer_weights or {}
        parts = []
        for name, trans, columns in t.transformers_:
            if isinstance(trans, str) and trans == "drop":
                continue
            if _selects_nothing(columns):  # not fitted, outputs no column
                continue
            b = output_bound(trans, None)  # a part sees a subset of raw columns
            parts.append(None if b is None else b * abs(float(weights.get(name, 1.0))))
        return _norm_of_parts(parts)
    if type(t) is FeatureUnion:
        weights = t.transformer_weights or {}
        parts = []
        for name, trans in t.transformer_list:
            if isinstance(trans, str) and trans == "drop":
                continue
            b = output_bound(trans, input_bound)
            parts.append(None if b is None else b * abs(float(weights.get(name, 1.0))))
        return _norm_of_parts(parts)
    if type(t) is OneHotEncoder:
        return math.sqrt(t.n_features_in_) if hasattr(t, "n_features_in_") else None
    if type(t) is Normalizer:
        if t.norm in ("l1", "l2"):
            return 1.0
        return math.sqrt(t.n_features_in_) if hasattr(t, "n_features_in_") else None
    if type(t) is Binarizer:
        return math.sqrt(t.n_features_in_) if hasattr(t, "n_features_in_") else None
    if type(t) is FunctionTransformer and t.func is None:
        return input_bound
    return None


# ------------------------------------------------------------------------------------------
# codebook -> ColumnTransformer
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Numeric:
    """A schema entry: a numeric column with the public range ``[lo, hi]``
    (:func:`numeric`)."""

    lo: float
    hi: float


@dataclass(frozen=True)
class Categorical:
    """A schema entry: a categorical column with these public levels (:func:`categorical`)."""

    levels: tuple


def numeric(lo, hi):
    """A numeric column of :func:`schema_transformer` with the public range ``[lo, hi]``
    (the same as the shorthand ``(lo, hi)``; unambiguous in a codebook read from JSON or
    YAML, where a pair becomes a list)."""
    return Numeric(lo, hi)


def categorical(levels):
    """A categorical column of :func:`schema_transformer` with these public levels (the same
    as the shorthand ``[level, ...]``; a list of two numbers needs this form when the column
    holds numbers, see :func:`schema_transformer`)."""
    return Categorical(tuple(levels))


def _dtype_kind(col):
    """``'number'``, ``'text'``, ``'date'`` or ``None`` (object: anything) of a column's dtype
    (public, like its name)."""
    dtype = getattr(col, "dtype", None)
    if dtype is None:
        return None
    if isinstance(dtype, _pandas_category_types()):
        return _level_kind(list(dtype.categories)) if len(dtype.categories) else None
    kind = getattr(dtype, "kind", "O")
    if kind in "biuf":
        return "number"
    if kind in "mM":
        return "date"
    if (
        kind in "US"
        or str(dtype) in ("string", "str")
        or getattr(dtype, "name", "") in ("string", "str")
    ):
        return "text"
    return None


def _pandas_category_types():
    """The pandas categorical dtype class, or an empty tuple without pandas."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is optional
        return ()
    return (pd.CategoricalDtype,)


def _check_dtypes(X, names, declared, pairs=()):
    """Refuse, from the dtypes alone (public), a column whose dtype contradicts its schema
    entry: a number column declared with text levels, a text column declared numeric, a date
    column declared either way, and a number column declared by the list shorthand with two
    numbers that are not consecutive integers (a range written as a list). Reads no value."""
    for col, name, want, pair in zip(
        _table_columns(X), names, declared, pairs or [None] * len(declared)
    ):
        have = _dtype_kind(col)
        if have is None:
            continue
        if have == "date":
            raise ValueError(
                f"schema: column {name!r} holds dates (dtype {col.dtype}); map it to numbers "
                "(e.g. days since a public date) and declare numeric(lo, hi). Nothing was "
                "read."
            )
        if want == "text" and have == "number":
            raise ValueError(
                f"schema: column {name!r} holds numbers (dtype {col.dtype}) but is declared "
                "with text levels; declare its levels as the numbers it holds, "
                "categorical([1, 2, ...]), or numeric(lo, hi). Nothing was read."
            )
        if want == "number" and have == "text":
            raise ValueError(
                f"schema: column {name!r} holds text (dtype {col.dtype}) but is declared "
                f"{'with number levels' if pair is not None else 'numeric'}; declare "
                "categorical([...]) with its levels as they are written. Nothing was read."
            )
        if pair and have == "number":  # (None: a numeric entry; False: a level list)
            lo, hi = pair
            raise ValueError(
                f"schema: column {name!r} holds numbers and is declared [{lo!r}, {hi!r}], a "
                f"list: two levels, not a range. Write numeric({lo!r}, {hi!r}) (or the tuple "
                f"({lo!r}, {hi!r})) for a range, or categorical([{lo!r}, {hi!r}]) for two "
                "levels. Nothing was read."
            )


def _is_number(v):
    """Whether a cell counts as a number in a schema: a real number (Python or numpy, bools
    included), never text, None, a date or any other object."""
    return isinstance(v, (numbers.Real, np.bool_))


def _float_or_nan(v):
    if not _is_number(v):
        return math.nan
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return math.nan
    return f if math.isfinite(f) else math.nan


def _table_columns(X):
    """The columns of a 2-D table (DataFrame or array-like), each 1-D, read without
    converting a value."""
    if hasattr(X, "iloc") and hasattr(X, "columns"):  # pandas
        return [X.iloc[:, j] for j in range(X.shape[1])]
    A = X if isinstance(X, np.ndarray) else np.asarray(X, dtype=object)
    if A.ndim != 2:
        raise ValueError(f"expected a 2-D table, got an array of shape {A.shape}.")
    return [A[:, j] for j in range(A.shape[1])]


def _column_as_float(col):
    """1-D float64: numbers as floats; anything else (text, None, dates, NaN, +-inf) NaN.

    Cell by cell, so no value can make it fail; a column of a numeric dtype is converted at
    once (the same result)."""
    kind = getattr(getattr(col, "dtype", None), "kind", "O")
    if kind in "biuf":
        if hasattr(col, "to_numpy"):  # pandas, nullable dtypes included
            out = col.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            out = np.asarray(col, dtype=np.float64)
        out = np.array(out, dtype=np.float64)  # a copy: the input is never written to
        out[~np.isfinite(out)] = np.nan
        return out
    cells = (
        col.to_numpy(dtype=object) if hasattr(col, "to_numpy") else np.asarray(col, dtype=object)
    )
    return np.fromiter((_float_or_nan(v) for v in cells), dtype=np.float64, count=len(cells))


def _numbers_in_domain(X, names=None):
    """A schema's numeric columns as a float64 array: every cell that is not a finite number
    (text, None, a date, NaN, +-inf) becomes NaN, i.e. missing. Stateless, cell by cell: the
    function of the schema's ``FunctionTransformer`` before :class:`BoundedScaler`. A column
    whose dtype contradicts the schema is refused first (``names``: the schema's)."""
    if names is not None:
        _check_dtypes(X, names, ["number"] * len(names))
    cols = _table_columns(X)
    out = np.empty((len(cols[0]) if cols else len(X), len(cols)), dtype=np.float64)
    for j, col in enumerate(cols):
        out[:, j] = _column_as_float(col)
    return out


def _levels_in_domain(X, levels, names=None, pairs=None):
    """A schema's categorical columns as an object array of their public levels (the level
    objects of the schema); every cell of the wrong type or not among its column's levels
    becomes NaN, i.e. missing. A number matches a numeric level of equal value (1, 1.0 and
    True are level 1), a string a text level equal to it. Stateless, cell by cell: the
    function of the schema's ``FunctionTransformer`` before ``OneHotEncoder``. A column
    whose dtype contradicts the schema is refused first (``names``: the schema's; ``pairs``:
    the two numbers of a list shorthand that may be a range written as a list, else False)."""
    if names is not None:
        _check_dtypes(X, names, [_level_kind(lv) for lv in levels], pairs)
    cols = _table_columns(X)
    if len(cols) != len(levels):
        raise ValueError(f"expected {len(levels)} categorical column(s), got {len(cols)}.")
    out = np.empty((len(cols[0]) if cols else len(X), len(cols)), dtype=object)
    for j, (col, lv) in enumerate(zip(cols, levels)):
        if _level_kind(lv) == "number":
            by_value = {float(v): v for v in lv}
            out[:, j] = [by_value.get(f, math.nan) for f in _column_as_float(col).tolist()]
        else:
            allowed = set(lv)
            cells = (
                col.to_numpy(dtype=object)
                if hasattr(col, "to_numpy")
                else np.asarray(col, dtype=object)
            )
            out[:, j] = [str(v) if isinstance(v, str) and v in allowed else math.nan for v in cells]
    return out


def _level_kind(levels):
    """'number' (every level a number), 'text' (every level a str) or None (anything else)."""
    if all(_is_number(v) for v in levels):
        return "number"
    if all(isinstance(v, str) for v in levels):
        return "text"
    return None


def _schema_levels(col, spec):
    """The public levels of a categorical column as Python objects: numbers sorted by value,
    or strings in the order given."""
    spec = [v.item() if isinstance(v, np.generic) else v for v in spec]
    kind = _level_kind(spec)
    if kind == "number":
        levels = sorted(spec, key=float)  # OneHotEncoder wants numbers sorted
        values = [float(v) for v in levels]
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"schema: column {col!r} has a level that is not finite.")
    elif kind == "text":
        levels = [str(v) for v in spec]
        values = levels
    else:
        raise ValueError(
            f"schema: the levels of column {col!r} must be all strings or all numbers, got "
            f"{spec!r}."
        )
    if len(set(values)) != len(values):
        raise ValueError(f"schema: column {col!r} lists a level twice.")
    return levels


def schema_transformer(schema, *, missing="constant", numeric_fill=0.0):
    """A scikit-learn ``ColumnTransformer`` built from a public codebook; no budget spent.

    Parameters
    ----------
    schema : dict
        ``{column: numeric(lo, hi)}`` for a numeric column (its public range) and
        ``{column: categorical([level, ...])}`` for a categorical one (every public level).
        Shorthands: a tuple ``(lo, hi)`` of two numbers is a range, a list a level list.
        Columns are DataFrame names (or integer positions for arrays); columns not listed are
        dropped. The dtypes (public, like the names) are checked against the entries before
        any value is read: a number column declared with text levels, a text column declared
        numeric, a date column, and a number column declared by a two-number list (a range
        written as a list, as JSON and YAML give it; consecutive integers such as ``[0, 1]``
        are taken as levels) are errors that name the fix.
    missing : {'constant', 'indicator'}, default='constant'
        Missing categorical values: 'constant' encodes them as all-zero; 'indicator' adds a
        level for them (its own one-hot column). Missing numeric values always become
        ``numeric_fill``.
    numeric_fill : float in [-1, 1], default=0.0
        Output for a missing numeric value, on the [-1, 1] scale (0: the middle of the range).

    Returns
    -------
    ColumnTransformer
        Numeric columns: a ``Pipeline`` of a stateless ``FunctionTransformer`` that reads
        every cell as a number, then :class:`BoundedScaler` (clipped to the range, mapped to
        [-1, 1]). Categorical columns: a ``Pipeline`` of a stateless ``FunctionTransformer``
        that maps every cell to its public level, then ``OneHotEncoder(categories=levels,
        handle_unknown='ignore')``. Each part is weighted by ``1 / sqrt(k)``
        (``transformer_weights``), ``k`` the number of listed columns: a numeric column
        contributes at most ``1/k`` to the squared row norm and a one-hot block at most
        ``1/k``, so **every output row has L2 norm at most 1**, a public bound
        (:func:`output_bound` returns it; a private pipeline passes it on as ``data_norm``).
        ``remainder='drop'`` and ``sparse_threshold=0``: the output's format does not depend
        on the rows.

    Notes
    -----
    **Values outside the declared domain are missing values.** No cell can make the fit or
    the transform fail, and the fitted attributes (values and dtypes, the encoder's
    ``categories_`` included) are the same whatever the rows hold:

    * numeric column: a number (Python or numpy, a bool counts as 0 or 1) is clipped to
      ``(lo, hi)``; anything else (text, None, a date, NaN, ``+-inf``) is missing and
      becomes ``numeric_fill``;
    * categorical column: levels are all strings or all numbers (a mix is refused). A string
      matches a text level equal to it, a number a numeric level of equal value (``1``,
      ``1.0`` and ``True`` are level 1; ``2.5`` is no level of ``[1, 2, 3]``). Any other cell
      (a level not listed, a value of the other type, None, NaN) is missing: all zeros, or
      the indicator column with ``missing='indicator'``. The encoder always sees an object
      array of the schema's level objects, so its ``categories_`` are the schema's levels
      (dtype object), whatever the column's dtype in the training rows.

    Examples
    --------
    >>> import pandas as pd
    >>> from skdpgd.preprocessing import schema_transformer
    >>> df = pd.DataFrame({"age": [30, 200, None], "job": ["a", "zz", None]})
    >>> ct = schema_transformer({"age": (18, 100), "job": ["a", "b"]})
    >>> ct.fit_transform(df).round(3)
    array([[-0.5  ,  0.707,  0.   ],
           [ 0.707,  0.   ,  0.   ],
           [ 0.   ,  0.   ,  0.   ]])
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

    if not isinstance(schema, dict) or not schema:
        raise ValueError("schema must be a non-empty dict {column: (lo, hi) or [levels]}.")
    if missing not in ("constant", "indicator"):
        raise ValueError(f"missing must be 'constant' or 'indicator', got {missing!r}.")
    if not -1.0 <= float(numeric_fill) <= 1.0:
        raise ValueError("numeric_fill must lie in [-1, 1].")
    numeric_cols, ranges, categorical_cols, levels, pairs = [], [], [], [], []
    for col, spec in schema.items():
        if isinstance(col, np.generic):  # numpy scalars as plain str/int (ColumnTransformer)
            col = col.item()
        if isinstance(spec, Numeric) or (
            isinstance(spec, tuple)
            and len(spec) == 2
            and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in spec)
        ):
            lo, hi = (spec.lo, spec.hi) if isinstance(spec, Numeric) else spec
            if not (
                isinstance(lo, numbers.Real)
                and isinstance(hi, numbers.Real)
                and float(lo) < float(hi)
            ):
                raise ValueError(f"schema: column {col!r} needs numbers lo < hi, got {spec!r}.")
            numeric_cols.append(col)
            ranges.append((float(lo), float(hi)))
        elif isinstance(spec, Categorical) or (
            isinstance(spec, (list, np.ndarray)) and len(spec) > 0
        ):
            lv = list(spec.levels) if isinstance(spec, Categorical) else list(spec)
            if not lv:
                raise ValueError(f"schema: column {col!r} needs at least one level.")
            categorical_cols.append(col)
            levels.append(_schema_levels(col, lv))
            # a list of two numbers that are not consecutive integers may be a range written
            # as a list (JSON and YAML have no tuples): refused on a number column at fit
            two = [v.item() if isinstance(v, np.generic) else v for v in lv]
            maybe_range = (
                not isinstance(spec, Categorical)
                and len(two) == 2
                and _level_kind(two) == "number"
                and not (
                    float(two[0]).is_integer()
                    and float(two[1]).is_integer()
                    and abs(float(two[1]) - float(two[0])) == 1.0
                )
            )
            pairs.append(tuple(two) if maybe_range else False)
        else:
            raise ValueError(
                f"schema: column {col!r} needs numeric(lo, hi) or a (lo, hi) tuple of numbers "
                f"(numeric), or categorical([...]) or a non-empty list of levels "
                f"(categorical), got {spec!r}."
            )
    numeric, categorical = numeric_cols, categorical_cols
    k = len(numeric) + len(categorical)
    w = 1.0 / math.sqrt(k)
    parts, weights = [], {}
    if numeric:
        parts.append(
            (
                "numeric",
                Pipeline(
                    [
                        (
                            "domain",
                            FunctionTransformer(
                                _numbers_in_domain,
                                validate=False,
                                check_inverse=False,
                                kw_args={"names": numeric},
                                feature_names_out="one-to-one",
                            ),
                        ),
                        (
                            "scale",
                            BoundedScaler(
                                bounds=np.array(ranges), missing_value=float(numeric_fill)
                            ),
                        ),
                    ]
                ),
                numeric,
            )
        )
        weights["numeric"] = w
    if categorical:
        # the encoder sees one fixed type (object: the schema's level objects, NaN for
        # missing), so its categories_ are the schema's whatever the rows' dtypes
        categories = [
            np.array(lv + ([math.nan] if missing == "indicator" else []), dtype=object)
            for lv in levels
        ]  # NaN last: the indicator
        parts.append(
            (
                "categorical",
                Pipeline(
                    [
                        (
                            "domain",
                            FunctionTransformer(
                                _levels_in_domain,
                                validate=False,
                                check_inverse=False,
                                kw_args={"levels": levels, "names": categorical, "pairs": pairs},
                                feature_names_out="one-to-one",
                            ),
                        ),
                        (
                            "onehot",
                            OneHotEncoder(
                                categories=categories,
                                handle_unknown="ignore",
                                sparse_output=False,
                                dtype=np.float64,
                            ),
                        ),
                    ]
                ),
                categorical,
            )
        )
        weights["categorical"] = w
    return ColumnTransformer(
        parts, remainder="drop", sparse_threshold=0.0, transformer_weights=weights
    )


# ------------------------------------------------------------------------------------------
# an accounted look at how well the rows fit the codebook
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DomainCounts:
    """What :func:`out_of_domain_counts` released: per column, a noisy number of rows whose
    cell lies outside the codebook, and the release's accounting (read by
    :func:`skdpgd.privacy_report` and charged to a :class:`~skdpgd.PrivacyBudget`)."""

    counts: dict
    noise_std: float
    epsilon_: float
    delta_: float
    releases_: list
    neighbouring_: str


def out_of_domain_counts(
    X, schema, *, epsilon, delta=None, budget=None, neighbouring="replace", random_state=None
):
    """Noisy counts of the rows whose cell lies outside a :func:`schema_transformer` codebook.

    A codebook that does not match the data (``'Male'`` declared where the rows hold
    ``'male'``, a range that misses most values) turns the columns into missing values without
    an error: every such cell is a valid row for the privacy proof. This opt-in check tells
    you, at a small budget you choose: for each listed column, the number of rows whose cell is
    missing, not a number (numeric column), outside the range, or not a listed level, plus
    Gaussian noise. Spend a small share (e.g. ``epsilon=0.05``) and charge it to the budget
    your pipeline draws from.

    Privacy: one release of the vector of ``k`` counts (``k`` listed columns). Replacing,
    adding or removing one row moves each count by at most 1, so the vector's L2 sensitivity is
    ``sqrt(k)`` under both relations; the noise's standard deviation is ``sqrt(k) / mu`` with
    ``mu`` the Gaussian-DP parameter of ``(epsilon, delta)`` (exact). The dtypes are checked
    against the codebook first (a refusal reads no value). Under replace-one the number of rows
    is public; under add/remove-one it is not read (delta defaults to 1e-5).

    Parameters
    ----------
    X : DataFrame or 2-D array
        The rows, as the pipeline would see them.
    schema : dict
        The codebook, as for :func:`schema_transformer`.
    epsilon : float > 0
    delta : float in (0, 1) or None, default=None
        None: ``min(1e-5, 1/N^2)`` under replace-one, 1e-5 under add/remove-one.
    budget : PrivacyBudget or None, default=None
        Charged before anything is drawn (a refusal reads nothing).
    neighbouring : {'replace', 'add_remove'}, default='replace'
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    DomainCounts

    Examples
    --------
    >>> import pandas as pd
    >>> from skdpgd.preprocessing import out_of_domain_counts
    >>> df = pd.DataFrame({"sex": ["male", "female"] * 500, "age": [30, 130] * 500})
    >>> check = out_of_domain_counts(df, {"sex": ["Male", "Female"], "age": (18, 100)},
    ...                              epsilon=0.1, random_state=0)
    >>> sorted(check.counts), round(check.counts["sex"], -2)
    (['age', 'sex'], 1000.0)
    """
    from ._setup import resolve_delta
    from .accounting import Relation, calibrate, compose

    if neighbouring not in RELATIONS:
        raise ValueError(f"neighbouring must be 'replace' or 'add_remove', got {neighbouring!r}.")
    if isinstance(epsilon, bool) or not (
        isinstance(epsilon, numbers.Real) and 0 < epsilon < math.inf
    ):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}.")
    transformer = schema_transformer(schema)  # validates the codebook
    numeric_part = dict((n, c) for n, _, c in transformer.transformers).get("numeric", [])
    categorical_part = dict((n, c) for n, _, c in transformer.transformers).get("categorical", [])
    steps = dict((n, t) for n, t, _ in transformer.transformers)
    n_rows = int(X.shape[0]) if hasattr(X, "shape") else len(X)
    delta = resolve_delta(delta, neighbouring, n_rows=n_rows)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    columns = list(numeric_part) + list(categorical_part)
    k = len(columns)
    # the counts are exact integers (sums of booleans); sqrt(k) is rounded up. One Gaussian
    # release of the vector, calibrated to (epsilon, delta): noise std z sqrt(k)
    sens = math.sqrt(k) * (1.0 + 4.0 * np.finfo(float).eps)
    (release,) = calibrate(
        [
            Release(
                "rows outside the codebook, per column",
                [1.0],
                {"replace": sens, "add_remove": sens},
                neighbouring,
            )
        ],
        float(epsilon),
        delta,
    )

    def table(cols, rows=slice(None)):
        if hasattr(X, "iloc"):
            return X[cols].iloc[rows]
        return np.asarray(X, dtype=object)[rows][:, cols]

    # the dtypes against the codebook first, on no row at all: a refusal reads no value and
    # charges nothing
    for part, cols in (("numeric", numeric_part), ("categorical", categorical_part)):
        if cols:
            domain = steps[part].steps[0][1]
            domain.func(table(cols, slice(0, 0)), **(domain.kw_args or {}))
    # the generator before any charge: secure mode refuses a seeded random_state here
    gen = fit_generator(random_state, "out_of_domain_counts")
    if budget is not None:
        budget.charge([release], label="out_of_domain_counts")

    counts = np.zeros(k)
    if numeric_part:
        domain, scale = steps["numeric"].steps[0][1], steps["numeric"].steps[1][1]
        values = domain.func(table(numeric_part), **(domain.kw_args or {}))
        lo, hi = np.asarray(scale.bounds, dtype=float).T
        with np.errstate(invalid="ignore"):
            outside = ~((values >= lo) & (values <= hi))  # NaN (missing, not a number) too
        counts[: len(numeric_part)] = outside.sum(axis=0)
    if categorical_part:
        domain = steps["categorical"].steps[0][1]
        levels = domain.func(table(categorical_part), **(domain.kw_args or {}))
        missing = np.array(
            [[isinstance(v, float) and math.isnan(v) for v in row] for row in levels], dtype=bool
        ).reshape(levels.shape)
        counts[len(numeric_part) :] = missing.sum(axis=0)
    std = float(release.noise_std[0])
    # integer counts: released without rounding in secure mode
    noisy = gaussian(counts, std, gen, own_sensitivity(release), exact=True)
    return DomainCounts(
        counts=dict(zip(columns, (float(v) for v in noisy))),
        noise_std=std,
        epsilon_=compose([release], delta),
        delta_=delta,
        releases_=[release],
        neighbouring_=Relation(neighbouring).words,
    )

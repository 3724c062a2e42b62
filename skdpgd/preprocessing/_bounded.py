"""BoundedScaler: every column clipped to a public range and mapped to [-1, 1] (no budget)."""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.capability import (
    PUBLIC_TRANSFORMER,
    with_privacy,
)
from .._compat import Interval, fit_context

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

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._core.capability
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

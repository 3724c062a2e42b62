"""output_bound: the public L2 bound of a fitted transformer's output rows."""

from __future__ import annotations

import math

import numpy as np

from .._core.capability import (
    DP_TRANSFORMER,
    PUBLIC_TRANSFORMER,
    privacy_capability,
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
    :mod:`skdpgd._core.capability`); ``OneHotEncoder`` (at most one 1 per input column, with
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

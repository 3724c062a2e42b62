"""The data's way into a fit: numpy, CSR or dask input -> validated rows, classes, weights.

Every estimator's ``fit`` calls one function here whatever the kind of X
(:func:`classification_data`, :func:`regression_data`), and a full-batch fit builds its
backend with :func:`make_rows`. This module holds the package's only test of whether an
object is a dask collection (:func:`is_dask`, which never imports dask); the dask branches
import dask (and :mod:`skdpgd._compute.dask_backend`) lazily, so ``import skdpgd`` does not.

In memory, X goes through scikit-learn's ``validate_data`` (dense, or CSR never densified);
on dask, X stays a lazy array: one pass checks that it is finite and that the weights lie in
[0, 1], and the class list is checked against the labels' unique values (one pass), with the
same checks and errors as in memory (:func:`resolve_classes`).

What reads the private data without being accounted (a class list, ``data_norm`` or
``y_bound`` taken from the rows) warns with a :class:`~skdpgd.PrivacyLeakWarning`.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from .._compute.backends import CSRRows, DenseRows, canonical_csr
from .._compute.kernels_sgd import csr_row_norms
from ..exceptions import PrivacyLeakWarning

__all__ = [
    "FitData",
    "canonical_csr",
    "check_sample_weight_dp",
    "classification_data",
    "encode_binary_or_index",
    "is_dask",
    "is_spark",
    "make_rows",
    "regression_data",
    "resolve_classes",
    "resolve_data_norm",
    "resolve_y_bound",
    "centred_targets",
    "target_range",
]

#: The dtypes X keeps in memory (float32 stays float32 for the kernels; see DenseRows).
FLOAT_DTYPES = [np.float64, np.float32]


def is_dask(obj):
    """True for dask arrays, dataframes and series (and distributed objects), without
    importing dask: the package's one test of the kind of input."""
    return type(obj).__module__.split(".")[0] in ("dask", "dask_expr", "distributed")


def is_spark(obj):
    """True for the views of :class:`skdpgd.spark.SparkData` (its ``X`` and ``y``, and the
    values derived from them), without importing pyspark."""
    return getattr(type(obj), "_skdpgd_spark", None) is not None


def _spark_fit_input(est, X, y, sample_weight, *, classification, dask):
    """Check a Spark fit input without gathering rows (one pass: counts, flags and the distinct
    labels); ``(X, y, sample_weight)`` as the Spark features and lazy columns; sets
    ``n_features_in_``. A refusal releases nothing."""
    from .._compute import spark_backend

    if dask is not True:
        reason = f" ({dask})" if isinstance(dask, BaseException) else ""
        raise TypeError(
            f"{type(est).__name__} does not take Spark data here{reason}: the full-batch "
            "estimators reduce a Spark DataFrame in one pass per release."
        )
    if getattr(X, "_skdpgd_spark", None) != "X" or getattr(y, "_skdpgd_spark", None) != "y":
        raise TypeError("fit a Spark table as est.fit(data.X, data.y), data a SparkData.")
    data = X.data
    if y.data is not data:
        raise ValueError("X and y must be the views of the same SparkData (data.X, data.y).")
    if sample_weight is not None:
        raise ValueError(
            "with Spark input, name the weight column in SparkData(..., sample_weight='col') "
            "and pass no sample_weight to fit."
        )
    spark_backend.check_fit_input(data, classification)
    est.n_features_in_ = int(X.shape[1])
    w = spark_backend.LazyColumn(data, lambda b: b["w"])
    if not classification:
        y = y.astype(np.float64)
    return X, y, w


class FitData(NamedTuple):
    """Validated fit input. ``X``, ``y`` and ``sample_weight`` are numpy/CSR arrays, or lazy
    dask arrays with the same row chunks. ``y`` is what the kernels read: the targets as
    float64 (regression), or +-1 for two classes and the class index (as float) for more.
    ``dtype`` is the dtype X came in (the coefficients are returned in it)."""

    X: Any
    y: Any
    sample_weight: Any
    dtype: Any
    classes: Any = None
    y_index: Any = None


# --- sample weights ------------------------------------------------------------------------


def check_sample_weight_dp(sample_weight, n_samples):
    """Sample weights allowed by the sensitivity proof: finite, in [0, 1], one per row.

    Each example contributes ``w_i * clip(grad_i)``, whose norm is at most the clip norm only
    when ``0 <= w_i <= 1``; larger weights would multiply the sensitivity.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    sw = np.asarray(sample_weight, dtype=float)
    if sw.ndim == 0:
        sw = np.full(n_samples, float(sw))
    if sw.ndim != 1 or sw.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight must be 1-D with one entry per sample ({n_samples}), "
            f"got shape {sw.shape}."
        )
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(sw < 0) or np.any(sw > 1):
        raise ValueError(
            "sample_weight must lie in [0, 1]: the privacy guarantee bounds each example's "
            "contribution by the clip norm, and a weight above 1 (or below 0) would break that "
            f"bound. Got weights in [{sw.min():.3g}, {sw.max():.3g}]."
        )
    if n_samples and not np.any(sw > 0):
        raise ValueError("sample_weight is zero for every sample: there is nothing to fit.")
    return np.ascontiguousarray(sw)


# --- classes -------------------------------------------------------------------------------


def _check_classes(classes, labels, stacklevel):
    """``(classes_, position of each label in classes_)`` for numpy ``labels`` (the labels
    of y, or their unique values): the one check of the class list, for every kind of y."""
    check_classification_targets(labels)
    if classes is None:
        found, y_index = np.unique(labels, return_inverse=True)
        if found.shape[0] < 2:
            raise ValueError(
                "This solver needs samples of at least 2 classes in the data, but the data "
                f"contains only one class: {found[0]!r}."
            )
        warnings.warn(
            "classes was not given, so the class list was read from the private labels. It "
            "decides binary vs multinomial, the number of outputs, the loss constants and so "
            "the noise; epsilon does not cover it (a rare class present or absent changes the "
            "mechanism). Pass classes=[...] listing every possible label to fix.",
            PrivacyLeakWarning,
            stacklevel=stacklevel + 1,
        )
        return found, y_index
    given = np.asarray(classes)
    if given.ndim != 1:  # np.unique would flatten a table into a list of labels
        raise ValueError(f"classes must be a 1-D list of labels, got shape {given.shape}.")
    classes_ = np.unique(given)
    if classes_.shape[0] < 2:
        raise ValueError(f"classes must list at least 2 labels, got {classes!r}.")
    labels = np.asarray(labels)
    try:
        pos = np.searchsorted(classes_, labels)
    except TypeError as exc:
        raise ValueError("the labels of y and classes are of incomparable types.") from exc
    pos = np.minimum(pos, classes_.shape[0] - 1)
    unknown = classes_[pos] != labels
    if np.any(unknown):
        examples = np.unique(labels[unknown])[:5].tolist()  # plain Python labels in the message
        raise ValueError(
            f"y has labels outside classes (e.g. {examples!r}); classes must list every "
            "possible label."
        )
    return classes_, pos.astype(np.int64)


def resolve_classes(classes, y, stacklevel=2):
    """``(classes_, y_index)`` from the public ``classes`` parameter, or read from y with a
    :class:`PrivacyLeakWarning` when it is None (``stacklevel`` counted from the caller, as
    if it warned). A dask y is checked by its unique labels (one pass) with the same checks
    and errors, and gets a lazy ``y_index``."""
    if is_spark(y):  # the distinct labels, from the validation pass
        from .._compute.spark_backend import found_labels

        classes_, _ = _check_classes(classes, found_labels(y.data), stacklevel + 1)
        return classes_, y.map_blocks(lambda b: np.searchsorted(classes_, b).astype(np.int64))
    if not is_dask(y):
        return _check_classes(classes, y, stacklevel + 1)
    import dask.array as da

    found = np.unique(da.unique(y).compute())
    classes_, _ = _check_classes(classes, found, stacklevel + 1)
    y_index = y.map_blocks(lambda b: np.searchsorted(classes_, b).astype(np.int64), dtype=np.int64)
    return classes_, y_index


def encode_binary_or_index(y_index, n_classes):
    """Kernel labels: +-1 for two classes, the class index (as float) for more (lazily for a
    dask ``y_index``)."""
    if is_dask(y_index) or is_spark(y_index):
        if n_classes == 2:
            return y_index.map_blocks(lambda b: np.where(b == 1, 1.0, -1.0), dtype=np.float64)
        return y_index.astype(np.float64)
    if n_classes == 2:
        return np.where(y_index == 1, 1.0, -1.0)
    return y_index.astype(np.float64)


# --- fit input -----------------------------------------------------------------------------


def _dask_fit_input(est, X, y, sample_weight, *, classification):
    """Check a dask fit input without gathering rows: ``(X, y, sample_weight)`` as dask arrays
    with the same row chunks; sets ``n_features_in_``. One pass checks that X is finite (and
    that the weights lie in [0, 1]); a refusal releases nothing."""
    import dask
    import dask.array as da

    from .._compute.dask_backend import as_dask_array

    X = as_dask_array(X)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"Expected a 2D array with at least one sample, got shape {X.shape}.")
    chunks = X.chunks[0]
    y = da.asarray(y.to_dask_array(lengths=True) if hasattr(y, "to_dask_array") else y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(
            f"y must be 1-D with one entry per row of X ({X.shape[0]}), got shape {y.shape}."
        )
    y = y.rechunk((chunks,))
    if not classification:
        y = y.astype(np.float64)
    sw = (
        da.ones(X.shape[0], chunks=(chunks,))
        if sample_weight is None
        else da.asarray(sample_weight).astype(np.float64).rechunk((chunks,))
    )
    checks = [da.isfinite(X).all(), (sw >= 0).all() & (sw <= 1).all() & da.isfinite(sw).all()]
    if not classification:
        checks.append(da.isfinite(y).all())
    ok = dask.compute(*checks)
    if not ok[0]:
        raise ValueError("Input X contains NaN or infinity.")
    if not ok[1]:
        raise ValueError(
            "sample_weight must lie in [0, 1] (finite): the privacy guarantee "
            "bounds each example's contribution by the clip norm."
        )
    if not classification and not ok[2]:
        raise ValueError("Input y contains NaN or infinity.")
    est.n_features_in_ = int(X.shape[1])
    return X, y, sw


def _fit_input(est, X, y, sample_weight, *, classification, dtype, accept_sparse, dask, float64):
    """``(X, y, sample_weight, input dtype)`` in memory or on dask (see the callers)."""
    if is_spark(X) or is_spark(y):
        X, y, sample_weight = _spark_fit_input(
            est, X, y, sample_weight, classification=classification, dask=dask
        )
        return X, y, sample_weight, np.dtype(np.float64)
    if isinstance(dask, BaseException) and (is_dask(X) or is_dask(y)):
        raise dask
    if dask is True and is_dask(X):
        X, y, sample_weight = _dask_fit_input(
            est, X, y, sample_weight, classification=classification
        )
        return X, y, sample_weight, X.dtype
    X, y = validate_data(
        est, X, y, accept_sparse=accept_sparse, dtype=dtype, y_numeric=not classification
    )
    input_dtype = X.dtype
    if float64:
        X = X.astype(np.float64, copy=False)
        if sp.issparse(X):
            X = canonical_csr(X)
    if not classification:
        y = np.asarray(y, dtype=np.float64)
    return X, y, sample_weight, input_dtype


def classification_data(
    est,
    X,
    y,
    sample_weight,
    classes,
    *,
    dtype=FLOAT_DTYPES,
    accept_sparse="csr",
    dask=True,
    float64=False,
    stacklevel=3,
):
    """Validated classification input: a :class:`FitData` with ``classes``, ``y_index`` and
    the kernel labels as ``y``; sets ``n_features_in_``.

    ``dask``: True keeps a dask X lazy (full-batch estimators); False treats it as any
    array-like (scikit-learn's validation gathers it); an exception instance is raised for
    a dask X or y (a fit that cannot read rows by chunks). ``float64``: X converted to
    float64 (CSR made canonical) for kernels that read float64 only (``dtype`` still reports
    the input's dtype). The checks run in a fixed order: X and y, classes, sample weights.
    ``stacklevel``: of the warning about a class list read from y, as ``warnings.warn``
    counts it from this function (default 3: the caller of the ``fit`` that calls this).
    """
    X, y, sample_weight, input_dtype = _fit_input(
        est,
        X,
        y,
        sample_weight,
        classification=True,
        dtype=dtype,
        accept_sparse=accept_sparse,
        dask=dask,
        float64=float64,
    )
    classes_, y_index = resolve_classes(classes, y, stacklevel=stacklevel)
    y_k = encode_binary_or_index(y_index, classes_.shape[0])
    if not (is_dask(X) or is_spark(X)):
        sample_weight = check_sample_weight_dp(sample_weight, X.shape[0])
    return FitData(X, y_k, sample_weight, input_dtype, classes_, y_index)


def regression_data(
    est, X, y, sample_weight, *, dtype=FLOAT_DTYPES, accept_sparse="csr", dask=True, float64=False
):
    """Validated regression input (targets as float64): a :class:`FitData`; sets
    ``n_features_in_``. ``dask`` and ``float64`` as in :func:`classification_data`."""
    X, y, sample_weight, input_dtype = _fit_input(
        est,
        X,
        y,
        sample_weight,
        classification=False,
        dtype=dtype,
        accept_sparse=accept_sparse,
        dask=dask,
        float64=float64,
    )
    if not (is_dask(X) or is_spark(X)):
        sample_weight = check_sample_weight_dp(sample_weight, X.shape[0])
    return FitData(X, y, sample_weight, input_dtype)


def make_rows(X, y, sample_weight, fit_intercept):
    """The backend for X: :class:`~skdpgd._compute.backends.DenseRows`, :class:`CSRRows` (scipy
    sparse, never densified) or :class:`skdpgd._compute.dask_backend.DaskRows` (imports dask)."""
    if is_spark(X):
        from .._compute.spark_backend import SparkRows

        return SparkRows(X, y, sample_weight, fit_intercept)
    if is_dask(X):
        from .._compute.dask_backend import DaskRows

        return DaskRows(X, y, sample_weight, fit_intercept)
    if sp.issparse(X):
        return CSRRows(X, y, sample_weight, fit_intercept)
    return DenseRows(X, y, sample_weight, fit_intercept)


# --- public bounds read from the data (with a PrivacyLeakWarning) ---------------------------


def resolve_data_norm(data_norm, X):
    """The public row-norm bound, or (with a PrivacyLeakWarning) the data's largest row norm."""
    if data_norm is not None:
        return float(data_norm)
    if is_spark(X):
        from .._compute.spark_backend import max_row_norm

        norms = np.array([max_row_norm(X.data)])
    elif is_dask(X):
        import dask.array as da

        norms = np.array([float(da.sqrt((X * X).sum(axis=1)).max().compute())])
    elif hasattr(X, "tocsr"):  # sparse: row norms without densifying
        Xc = X.tocsr()
        norms = csr_row_norms(Xc.data, Xc.indptr) if X.shape[0] else np.zeros(1)
    else:
        norms = np.sqrt(np.einsum("ij,ij->i", X, X)) if X.size else np.zeros(1)
    inferred = float(np.max(norms))
    if not np.isfinite(inferred):
        raise ValueError("cannot infer data_norm: the row norms overflow; pass data_norm.")
    warnings.warn(
        "data_norm was not given, so it was set to the largest row norm of the training data "
        f"({inferred:.4g}). This bound is read from the private data and leaks privacy that "
        "epsilon does not account for. Pass a public data_norm (and scale rows to it) to fix.",
        PrivacyLeakWarning,
        stacklevel=3,
    )
    return inferred if inferred > 0 else 1.0


def resolve_y_bound(y_bound, y, stacklevel=3):
    """The public target bound, or (with a PrivacyLeakWarning) the data's largest ``|y|``
    (one pass over a dask y). ``stacklevel`` as ``warnings.warn`` counts it from here."""
    if y_bound is not None:
        return float(y_bound)
    if is_spark(y):
        y = np.array([float(abs(y).max())])
    elif is_dask(y):
        y = np.array([float(abs(y).max().compute())])
    inferred = float(np.max(np.abs(y))) if y.size else 1.0
    warnings.warn(
        "y_bound was not given, so it was set to the largest |y| of the training data "
        f"({inferred:.4g}). This bound is read from the private data and leaks privacy "
        "that epsilon does not account for. Pass a public y_bound to fix.",
        PrivacyLeakWarning,
        stacklevel=stacklevel,
    )
    return inferred if inferred > 0 else 1.0


def target_range(y_bound, fit_intercept=True):
    """``(centre, half)`` of a public target bound (a parameter: nothing is read).

    A number ``Y`` is the range ``[-Y, Y]`` (centre 0); a pair ``(lo, hi)`` with ``lo < hi``
    is that range. The estimators clip the targets to the range and fit ``y - centre``, whose
    bound is ``half``, then add ``centre`` to the intercept: a range far from 0 (prices, ages,
    counts) then costs no more noise than a centred one. Without an intercept only a range
    centred on 0 is allowed (the fitted function has no constant to carry the centre)."""
    if isinstance(y_bound, numbers.Real) and not isinstance(y_bound, bool):
        return 0.0, float(y_bound)
    try:
        lo, hi = (float(v) for v in y_bound)
    except (TypeError, ValueError):
        raise ValueError(
            f"y_bound must be a positive number or a pair (lo, hi) of numbers, got {y_bound!r}."
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"y_bound=(lo, hi) needs finite numbers with lo < hi, got {y_bound!r}.")
    centre, half = 0.5 * lo + 0.5 * hi, 0.5 * hi - 0.5 * lo
    if not fit_intercept and centre != 0.0:
        raise ValueError(
            f"y_bound={y_bound!r} is not centred on 0 and fit_intercept=False: the "
            "model has no intercept to carry the centre. Use fit_intercept=True, or "
            "a range centred on 0."
        )
    return centre, half


def centred_targets(y, centre, half):
    """``y - centre`` clipped to ``[-half, half]`` (numpy or dask): the clip comes last, so the
    bound the sensitivity uses holds whatever the rounding of the subtraction (with centre 0
    this is the plain clip to ``[-half, half]``)."""
    return (y - centre).clip(-half, half)


# --- prediction on dask ----------------------------------------------------------------------


def decision_scores(est, X, coef, intercept):
    """``X @ coef.T + intercept`` as a lazy dask array (one column per output)."""
    from .._compute.dask_backend import as_dask_array

    X = as_dask_array(X)
    if X.shape[1] != est.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(est).__name__} is expecting "
            f"{est.n_features_in_} features as input."
        )
    return X @ np.asarray(coef, dtype=np.float64).T + np.asarray(intercept, dtype=np.float64)


# --- prediction on Spark ---------------------------------------------------------------------


def spark_prediction(est, X, coef, intercept, kind, classes=None):
    """A Spark column computed on the executors from the released model: ``"scores"`` (one
    score, or an array of one per output), ``"exp"`` (the exponential of one score),
    ``"label"`` (the predicted class) or ``"proba"`` (an array of class probabilities)."""
    from pyspark.sql import functions as F

    from .._compute import spark_backend

    if getattr(X, "_skdpgd_spark", None) != "X":
        raise TypeError("predict on Spark data takes data.X, the features of a SparkData.")
    if X.data.n_features() != est.n_features_in_:
        raise ValueError(
            f"X has {X.data.n_features()} features, but {type(est).__name__} is expecting "
            f"{est.n_features_in_} features as input."
        )
    scores = spark_backend.linear_columns(X, coef, intercept)
    if kind == "label":
        return spark_backend.label_column(scores, classes)
    if kind == "proba":
        return spark_backend.proba_column(scores)
    if kind == "exp":
        return F.exp(scores[0])
    return scores[0] if len(scores) == 1 else F.array(*scores)

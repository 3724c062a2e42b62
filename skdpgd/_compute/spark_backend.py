"""Spark backend: the full-batch reductions over a Spark DataFrame, one ``mapInArrow`` pass each.

The user names the columns with :class:`SparkData` (public as :class:`skdpgd.spark.SparkData`):
the features (numeric columns, or one ``pyspark.ml`` vector column), the label, optionally a
weight column and a row-id column. The columns are selected and cast to double on the Spark
side; no row is ever collected.

Each reduction (:mod:`skdpgd._compute.backends`) is a sum over rows. Every partition reads its
Arrow record batches one at a time, builds a :class:`~skdpgd._compute.backends.DenseRows` on
each batch (the numba kernels, or numpy for a small batch, exactly as in memory), adds the
batch sums in order, and returns one partial sum; the partial sums are added by a fixed tree
(:func:`_tree_sum`: groups of :data:`TREE_FAN_IN` partitions, keyed by partition index, summed
in index order), so the driver receives at most :data:`TREE_FAN_IN` results of the size of one
release (O(d^2)), whatever N. The noise is drawn on the driver only (by the mechanisms, from
the estimator's one generator). A fit on Spark is the in-memory fit up to the summation order.

**Poisson subsamples.** In memory a row's indicator is a function of (seed, row position)
(:func:`skdpgd._compute.backends.poisson_subsample`). A Spark row has no position that is
independent of the partitioning, so:

* with a ``row_id`` column (non-negative integers, distinct), row ``i`` is in the subsample iff
  ``u(seed, id_i) < rate`` with the very uniform the in-memory fit uses for the row at position
  ``id_i``: with ids ``0..N-1`` the subsample (so the model) is the in-memory fit's on the rows
  ordered by id, whatever the partitioning;
* without one, ``u`` is a keyed 64-bit hash of the seed and the row's content (features, label,
  weight): the same subsample however the table is partitioned, but not the in-memory one.

Privacy does not rest on the indicators being independent: the subsampled Hessian releases
claim no amplification (:class:`skdpgd._full_batch.second_order.DampedNewton`). For every seed
the indicator is a function of the row alone, so neighbouring tables keep the indicators of the
rows they share and their sums differ by at most one row's term: the full sum's sensitivity.

Imported only for Spark input (by :mod:`skdpgd._core.data`, :mod:`skdpgd.spark`): ``import skdpgd``
does not import pyspark. This module imports :mod:`skdpgd._compute.backends`, never the reverse.
"""

from __future__ import annotations

import math
import pickle

import numpy as np

from .backends import SUBSAMPLE_BLOCK, DenseRows
from .kernels import row_norms

#: Partial sums added per node of the reduction tree (and the most the driver receives).
TREE_FAN_IN = 8
#: The most distinct labels a classification check gathers (a public cap: the list of labels
#: is the class list, a handful of values; a continuous target stops here).
LABEL_CAP = 1024
_X, _Y, _W, _ID = "_skdpgd_x", "_skdpgd_y", "_skdpgd_w", "_skdpgd_id"


def _spark_names():
    from pyspark.sql import functions as F

    return F


class SparkData:
    """A Spark DataFrame with its columns named: what a full-batch ``fit`` reads.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
    features : list of str or str
        Numeric feature columns, in order, or the name of one ``pyspark.ml`` vector column
        (or array<double> column) holding every feature.
    label : str, default=None
        The label (classifiers) or target (regressors) column.
    sample_weight : str, default=None
        A column of weights in [0, 1].
    row_id : str, default=None
        A column of distinct non-negative integers. It fixes which rows a Poisson-subsampled
        release (the DP damped Newton's Hessians) reads: with ids ``0..N-1`` the model is the
        in-memory fit's on the rows ordered by id. Without it a keyed hash of each row's
        content decides, the same however the table is partitioned.

    Fit with ``est.fit(data.X, data.y)``; ``est.predict(data.X)`` returns a Spark column.
    """

    def __init__(self, df, features, label=None, sample_weight=None, row_id=None):
        self.df = df
        self.features = features
        self.label = label
        self.sample_weight = sample_weight
        self.row_id = row_id
        if isinstance(features, str):
            self._names = None
        else:
            self._names = [str(c) for c in features]
            if not self._names:
                raise ValueError("SparkData needs at least one feature column.")
        if not hasattr(df, "mapInArrow"):
            raise TypeError(f"SparkData takes a pyspark.sql.DataFrame, got {type(df).__name__}.")
        for name in [c for c in (label, sample_weight, row_id) if c is not None] + (
            self._names or [features]
        ):
            if name not in df.columns:
                raise ValueError(f"column {name!r} is not in the DataFrame ({df.columns}).")
        self._checked = None  # the validation pass's result (counts and flags only)

    @property
    def X(self):
        """The features, for ``fit`` and ``predict``."""
        return SparkFeatures(self)

    @property
    def y(self):
        """The label column, for ``fit``."""
        if self.label is None:
            raise ValueError("this SparkData names no label column (label=...).")
        return LazyColumn(self, lambda b: b["y"])

    # --- what the executors read ---------------------------------------------------------
    def _is_vector(self):
        return self._names is None

    def n_features(self):
        """The number of features: the column count, or a vector column's size (from its ML
        metadata or, failing that, the validation pass: a schema fact, not a row)."""
        if not self._is_vector():
            return len(self._names)
        meta = self.df.schema[self.features].metadata or {}
        size = meta.get("ml_attr", {}).get("num_attrs")
        if size is not None:
            return int(size)
        return self.check()["n_features"]

    def frame(self):
        """The DataFrame of the columns the reductions read, cast to double on the Spark side
        (features, then label, weight and id when named)."""
        F = _spark_names()
        if self._is_vector():
            from pyspark.ml.functions import vector_to_array

            dtype = self.df.schema[self.features].dataType.simpleString()
            col = F.col(self.features)
            if not dtype.startswith("array"):
                col = vector_to_array(col, "float64")
            cols = [col.cast("array<double>").alias(_X)]
        else:
            cols = [F.col(c).cast("double").alias(f"{_X}{j}") for j, c in enumerate(self._names)]
        if self.label is not None:
            cols.append(F.col(self.label).alias(_Y))
        if self.sample_weight is not None:
            cols.append(F.col(self.sample_weight).cast("double").alias(_W))
        if self.row_id is not None:
            cols.append(F.col(self.row_id).alias(_ID))
        return self.df.select(*cols)

    def layout(self):
        """What a batch reader needs (picklable, no DataFrame)."""
        return (
            None if self._names is None else len(self._names),
            self.label is not None,
            self.sample_weight is not None,
            self.row_id is not None,
        )

    def reduce(self, part, *args):
        """``sum over batches of part(arrays, *args)``, one pass (see the module docstring)."""
        return _reduce(self.frame(), self.layout(), part, args)

    def check(self):
        """One pass: row count, finiteness, weights, ids, vector sizes, distinct labels."""
        if self._checked is None:
            out = self.reduce(_check_part)
            if out is None:
                raise ValueError("Expected a 2D array with at least one sample, got 0 rows.")
            n, x_ok, w_ok, y_ok, id_ok, lo, hi, labels, more = out
            self._checked = {
                "n": int(n),
                "x_ok": bool(x_ok),
                "w_ok": bool(w_ok),
                "y_ok": bool(y_ok),
                "id_ok": bool(id_ok),
                "n_features": int(lo) if lo == hi else -1,
                "labels": labels,
                "more_labels": bool(more),
            }
        return self._checked


class SparkFeatures:
    """The features of a :class:`SparkData` (``data.X``): what ``fit`` and ``predict`` take."""

    _skdpgd_spark = "X"

    def __init__(self, data):
        self.data = data

    @property
    def shape(self):
        """``(N, d)``: N from the validation pass (public under replace-one, as in memory)."""
        return (self.data.check()["n"], self.data.n_features())

    def columns(self):
        """The features as Spark columns (to build prediction expressions)."""
        F = _spark_names()
        d = self.data.n_features()
        if not self.data._is_vector():
            return [F.col(c).cast("double") for c in self.data._names]
        from pyspark.ml.functions import vector_to_array

        dtype = self.data.df.schema[self.data.features].dataType.simpleString()
        arr = F.col(self.data.features)
        if not dtype.startswith("array"):
            arr = vector_to_array(arr, "float64")
        return [arr.getItem(j).cast("double") for j in range(d)]


class LazyColumn:
    """A per-row value of a :class:`SparkData` (the label, the weight, or numpy functions of
    them), evaluated batch by batch on the executors. Supports the few numpy operations the
    estimators and mechanisms apply to y and the weights (arithmetic, ``==``, ``clip``,
    ``abs``, ``astype``, ``map_blocks``); ``sum`` and ``max`` run one pass and return a float."""

    _skdpgd_spark = "y"

    def __init__(self, data, fn):
        self.data, self.fn = data, fn

    def __getstate__(self):  # shipped to the executors as its function only (no DataFrame)
        return {"data": None, "fn": self.fn}

    def _lift(self, other, op):
        f = self.fn
        if isinstance(other, LazyColumn):
            if other.data is not self.data:
                raise ValueError("columns of different SparkData objects cannot be combined.")
            g = other.fn
            return LazyColumn(self.data, lambda b: op(f(b), g(b)))
        return LazyColumn(self.data, lambda b: op(f(b), other))

    def __add__(self, other):
        return self._lift(other, np.add)

    def __sub__(self, other):
        return self._lift(other, np.subtract)

    def __mul__(self, other):
        return self._lift(other, np.multiply)

    __rmul__ = __mul__
    __radd__ = __add__

    def __eq__(self, other):
        return self._lift(other, np.equal)

    __hash__ = object.__hash__

    def __abs__(self):
        f = self.fn
        return LazyColumn(self.data, lambda b: np.abs(f(b)))

    def clip(self, lo, hi):
        f = self.fn
        return LazyColumn(self.data, lambda b: np.clip(f(b), lo, hi))

    def astype(self, dtype):
        f = self.fn
        return LazyColumn(self.data, lambda b: np.asarray(f(b)).astype(dtype))

    def map_blocks(self, fn, dtype=None):
        f = self.fn
        return LazyColumn(self.data, lambda b: fn(f(b)))

    def values(self, b):
        """The column on one batch (float64)."""
        return np.asarray(self.fn(b), dtype=np.float64)

    def sum(self):
        out = self.data.reduce(_sum_part, self.fn)
        return 0.0 if out is None else float(out)

    def max(self):
        out = self.data.reduce(_max_part, self.fn)
        return -np.inf if out is None else float(out)


def _arrays(batch, layout):
    """A record batch as numpy: ``{"X": (n, d) float64, "y", "w", "id"}``."""
    n_cols, has_y, has_w, has_id = layout
    n = batch.num_rows
    if n_cols is None:
        col = batch.column(_X)
        lengths = np.diff(np.asarray(col.offsets.to_numpy(zero_copy_only=False), np.int64))
        flat = np.asarray(col.flatten().to_numpy(zero_copy_only=False), dtype=np.float64)
        ok = n and not col.null_count and np.all(lengths == lengths[0])
        X = flat.reshape(n, int(lengths[0])) if ok else None  # else: the check refuses it
        out = {"X": X, "lengths": lengths if n else np.zeros(0, np.int64)}
    else:
        X = np.empty((n, n_cols))
        for j in range(n_cols):
            X[:, j] = batch.column(f"{_X}{j}").to_numpy(zero_copy_only=False)
        out = {"X": X}
    if has_y:
        out["y"] = np.asarray(batch.column(_Y).to_numpy(zero_copy_only=False))
    out["w"] = (
        np.asarray(batch.column(_W).to_numpy(zero_copy_only=False), dtype=np.float64)
        if has_w
        else np.ones(n)
    )
    if has_id:
        out["id"] = batch.column(_ID).to_numpy(zero_copy_only=False)
    return out


def _reduce(frame, layout, part, args):
    """Run ``part`` on every batch of every partition and sum (the module docstring)."""
    import pyarrow as pa

    schema = pa.schema([("pid", pa.int64()), ("v", pa.binary())])

    def per_partition(batches):
        from pyspark import TaskContext

        total = None
        for batch in batches:
            if batch.num_rows == 0:
                continue
            r = part(_arrays(batch, layout), *args)
            total = r if total is None else _add_parts(total, r)
        if total is not None:
            pid = TaskContext.get().partitionId()
            yield pa.RecordBatch.from_arrays(
                [pa.array([pid], pa.int64()), pa.array([pickle.dumps(total)], pa.binary())],
                schema=schema,
            )

    out = frame.mapInArrow(per_partition, "pid long, v binary")
    n_parts = frame.rdd.getNumPartitions()
    if n_parts <= TREE_FAN_IN:  # the partial sums are the tree's last level already
        parts = [(int(r[0]), pickle.loads(r[1])) for r in out.collect()]  # <= TREE_FAN_IN
        return _sum_in_order(parts)
    rdd = out.rdd.map(lambda r: (int(r[0]), pickle.loads(r[1])))
    return _tree_sum(rdd, n_parts)


def _sum_in_order(parts):
    parts = sorted(parts, key=_first)
    return _add_parts(*[v for _, v in parts]) if parts else None


def _tree_sum(rdd, n_parts):
    """Sum ``(index, partial)`` pairs: groups of :data:`TREE_FAN_IN` consecutive indices summed
    on the executors in index order, level after level, until at most ``TREE_FAN_IN`` partial
    sums remain; those are collected and added in index order. The tree depends on the
    partition indices only: the same numbers whatever the scheduling."""
    fan = TREE_FAN_IN
    n = max(1, int(n_parts))
    while n > fan:
        n = math.ceil(n / fan)
        rdd = (
            rdd.map(lambda kv: (kv[0] // fan, kv))
            .groupByKey(numPartitions=n)
            .map(lambda kv: (kv[0], _sum_in_order(list(kv[1]))))
        )
    return _sum_in_order(rdd.collect())  # at most TREE_FAN_IN results of size O(d^2)


def _first(kv):
    return kv[0]


def _add_parts(*parts):
    """Element-wise sum of batch results (arrays, numbers, or tuples of them), in order; the
    validation pass's records (:class:`_Check`) are merged instead."""
    first = parts[0]
    if isinstance(first, _Check):
        return _Check.merge(parts)
    if isinstance(first, tuple):
        return tuple(_add_parts(*items) for items in zip(*parts))
    total = first.copy() if isinstance(first, np.ndarray) else first
    for p in parts[1:]:
        total = total + p
    return total


# --- the validation pass --------------------------------------------------------------------


class _Check(tuple):
    """The validation pass's record of a batch (merged, not added)."""

    @staticmethod
    def merge(parts):
        n = sum(p[0] for p in parts)
        x_ok = all(p[1] for p in parts)
        w_ok = all(p[2] for p in parts)
        y_ok = all(p[3] for p in parts)
        id_ok = all(p[4] for p in parts)
        lo = min(p[5] for p in parts)
        hi = max(p[6] for p in parts)
        labels, more = _merge_labels([p[7] for p in parts], any(p[8] for p in parts))
        return _Check((n, x_ok, w_ok, y_ok, id_ok, lo, hi, labels, more))


def _merge_labels(lists, more):
    labels = set()
    for part in lists:
        labels.update(part)
    if len(labels) > LABEL_CAP:
        labels = set(sorted(labels, key=repr)[:LABEL_CAP])
        more = True
    return frozenset(labels), more


def _check_part(b):
    X = b["X"]
    n = int(b["w"].shape[0])
    if X is None:  # irregular vector sizes or null vectors
        x_ok, lengths = False, b["lengths"]
        lo, hi = (int(lengths.min()), int(lengths.max())) if lengths.size else (0, 0)
        if lo == hi:  # one size, but a null vector
            lo = -1
    else:
        x_ok = bool(np.all(np.isfinite(X)))
        lo = hi = int(X.shape[1])
    w = b["w"]
    w_ok = bool(np.all(np.isfinite(w)) and np.all((w >= 0) & (w <= 1)))
    y_ok, labels, more = True, frozenset(), False
    if "y" in b:
        y = b["y"]
        if y.dtype.kind in "fiub":
            y_ok = bool(np.all(np.isfinite(y.astype(np.float64))))
        found = set(y.tolist()) if y.dtype == object else set(np.unique(y).tolist())
        labels, more = _merge_labels([found], False)
    id_ok = True
    if "id" in b:
        ids = np.asarray(b["id"])
        id_ok = bool(
            ids.dtype.kind in "iu"
            or (ids.dtype.kind == "f" and np.all(np.isfinite(ids)) and np.all(ids == np.floor(ids)))
        ) and bool(np.all(ids.astype(np.float64) >= 0))
    return _Check((n, x_ok, w_ok, y_ok, id_ok, lo, hi, labels, more))


def check_fit_input(data, classification):
    """Refuse a bad Spark fit input (the in-memory errors), from one pass that gathers counts,
    flags and the distinct labels only (at most :data:`LABEL_CAP`)."""
    chk = data.check()
    if chk["n_features"] < 1:
        raise ValueError(
            f"the vector column {data.features!r} must hold vectors of one size, no nulls."
        )
    if not chk["x_ok"]:
        raise ValueError("Input X contains NaN or infinity.")
    if not chk["w_ok"]:
        raise ValueError(
            "sample_weight must lie in [0, 1] (finite): the privacy guarantee "
            "bounds each example's contribution by the clip norm."
        )
    if not chk["id_ok"]:
        raise ValueError(f"the row_id column {data.row_id!r} must hold non-negative integers.")
    if not classification and not chk["y_ok"]:
        raise ValueError("Input y contains NaN or infinity.")
    return chk


def found_labels(data):
    """The distinct labels of the label column (from the validation pass), sorted."""
    chk = data.check()
    labels = np.array(sorted(chk["labels"]))
    if chk["more_labels"]:
        from sklearn.utils.multiclass import check_classification_targets

        check_classification_targets(labels)  # a continuous target: the in-memory error
        raise ValueError(
            f"y has more than {LABEL_CAP} distinct labels: a classifier needs a label column "
            "with a handful of classes."
        )
    return labels


# --- per-batch parts ------------------------------------------------------------------------


def _sum_part(b, fn):
    return float(np.sum(np.asarray(fn(b), dtype=np.float64)))


def _max_part(b, fn):
    return _Max(np.max(np.asarray(fn(b), dtype=np.float64)))  # the tree takes the max


class _Max(float):
    """A float that the tree combines by max (``+`` is max)."""

    def __add__(self, other):
        return _Max(max(float(self), float(other)))


def _max_norm_part(b):
    return _Max(float(np.max(row_norms(b["X"]))))


def _batch_rows(b, y, fit_intercept, bound, column):
    """A :class:`DenseRows` on one batch (``y``: the lazy targets), clipped as the fit's rows."""
    yb = np.zeros(b["w"].shape[0]) if y is None else y.values(b)
    rows = DenseRows(b["X"], yb, b["w"], fit_intercept)
    rows.clip_rows(bound, column)
    rows.parallel = False  # Spark owns the executor's cores
    return rows


_HASH_MULT = np.uint64(0x9E3779B97F4A7C15)


def _mix(h):
    """splitmix64's finaliser, on uint64 arrays (wrapping arithmetic)."""
    h = h ^ (h >> np.uint64(30))
    h = h * np.uint64(0xBF58476D1CE4E5B9)
    h = h ^ (h >> np.uint64(27))
    h = h * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


def subsample_positions(b, y, seed, rate):
    """Positions, in the batch ``b``, of its rows in the Poisson subsample ``(seed, rate)``
    (the module docstring): by row id when the data names one, else by a keyed hash of the
    row's content."""
    n = b["w"].shape[0]
    if rate >= 1.0:
        return np.arange(n)
    if "id" in b:
        ids = np.asarray(b["id"]).astype(np.int64)
        u = np.empty(n)
        B = SUBSAMPLE_BLOCK
        blocks = ids // B
        for blk in np.unique(blocks):
            at = blocks == blk
            stream = np.random.default_rng([int(seed), int(blk)]).random(B)
            u[at] = stream[ids[at] - blk * B]
        return np.flatnonzero(u < rate)
    with np.errstate(over="ignore"):
        h = np.full(n, np.uint64(seed) ^ _HASH_MULT, dtype=np.uint64)
        cols = [b["X"][:, j] for j in range(b["X"].shape[1])]
        cols.append(np.zeros(n) if y is None else y.values(b))
        cols.append(b["w"])
        for c in cols:
            bits = np.ascontiguousarray(c, dtype=np.float64).view(np.uint64)
            h = _mix((h ^ bits) * _HASH_MULT)
    u = (h >> np.uint64(11)).astype(np.float64) * 2.0**-53
    return np.flatnonzero(u < rate)


def _sub_rows(b, y, fi, bound, column, sample):
    idx = subsample_positions(b, y, sample[0], sample[1])
    sub = {k: np.asarray(v)[idx] for k, v in b.items() if k != "lengths"}
    return sub, idx.shape[0]


def _grad(b, y, fi, bound, column, coef, intercept, loss, param, clip):
    return _batch_rows(b, y, fi, bound, column).grad_sum(coef, intercept, loss, param, clip)


def _hess(b, y, fi, bound, column, coef, intercept, loss, sample=None):
    if sample is None:
        return _batch_rows(b, y, fi, bound, column).hessian_sum(coef, intercept, loss)
    sub, m = _sub_rows(b, y, fi, bound, column, sample)
    if m == 0:
        D = coef.shape[0] * (coef.shape[1] + int(fi))
        return np.zeros((D, D))
    return _batch_rows(sub, y, fi, bound, column).hessian_sum(coef, intercept, loss)


def _grad_hess(b, y, fi, bound, column, coef, intercept, loss, param, clip, sample=None):
    if sample is None:
        return _batch_rows(b, y, fi, bound, column).grad_hessian_sum(
            coef, intercept, loss, param, clip
        )
    gcoef, gint, bad = _grad(b, y, fi, bound, column, coef, intercept, loss, param, clip)
    return gcoef, gint, bad, _hess(b, y, fi, bound, column, coef, intercept, loss, sample)


def _suff(b, y, fi, bound, column):
    return _batch_rows(b, y, fi, bound, column).suff_stats()


def _objective(b, y, fi, bound, column, coef, intercept, loss, param, clip):
    return _batch_rows(b, y, fi, bound, column).objective(coef, intercept, loss, param, clip)


def _correct(b, y, fi, bound, column, models):
    return _batch_rows(b, y, fi, bound, column).correct_counts(models)


def _closer(b, y, fi, bound, column, fit, prior, log_link):
    return _batch_rows(b, y, fi, bound, column).closer_sum(fit, prior, log_link)


def _class_curvature(b, y, fi, bound, column, coef, intercept, sample):
    k = coef.shape[0]
    if sample is not None:
        b, m = _sub_rows(b, y, fi, bound, column, sample)
        if m == 0:
            return np.zeros((k, k))
    return _batch_rows(b, y, fi, bound, column).class_curvature_sum(coef, intercept)


def _norm_sum(b, bound):
    norms = row_norms(b["X"])  # without overflow
    return float(np.dot(b["w"], np.minimum(norms, bound)))


class SparkRows:
    """The reductions of :class:`skdpgd._compute.backends.Rows` over a Spark DataFrame (one
    ``mapInArrow`` pass each; see the module docstring)."""

    def __init__(self, X, y, sample_weight, fit_intercept):
        self.data = X.data
        self.n_samples, self.n_features = (int(s) for s in X.shape)
        self.y = y  # a LazyColumn: the kernel's targets
        self.sample_weight = sample_weight  # a LazyColumn: the checked weights
        self.fit_intercept = bool(fit_intercept)
        self.row_bound, self.column = np.inf, 1.0

    @property
    def n_params(self):
        return self.n_features + int(self.fit_intercept)

    def _map(self, fn, *args):
        """``fn(batch, y, fit_intercept, bound, column, *args)`` summed over every batch."""
        return self.data.reduce(fn, self.y, self.fit_intercept, self.row_bound, self.column, *args)

    def clip_rows(self, bound, column):
        """Clip rows to norm ``bound`` and divide them by ``column`` (applied per batch)."""
        self.row_bound, self.column = float(bound), float(column)

    def weight_sum(self):
        return float(self.sample_weight.sum())

    def norm_sum(self, bound):
        return float(self.data.reduce(_norm_sum, float(bound)))

    def grad_sum(self, coef, intercept, loss_code, param, clip_norm):
        gcoef, gint, bad = self._map(
            _grad, _f64(coef), _f64(intercept), int(loss_code), float(param), float(clip_norm)
        )
        return gcoef, gint, int(bad)

    def hessian_sum(self, coef, intercept, loss_code, sample=None):
        return self._map(_hess, _f64(coef), _f64(intercept), int(loss_code), _sample(sample))

    def grad_hessian_sum(self, coef, intercept, loss_code, param, clip_norm, sample=None):
        gcoef, gint, bad, H = self._map(
            _grad_hess,
            _f64(coef),
            _f64(intercept),
            int(loss_code),
            float(param),
            float(clip_norm),
            _sample(sample),
        )
        return gcoef, gint, int(bad), H

    def suff_stats(self):
        return self._map(_suff)

    def class_curvature_sum(self, coef, intercept, sample=None):
        return self._map(_class_curvature, _f64(coef), _f64(intercept), _sample(sample))

    def correct_counts(self, models):
        models = [(_f64(c), _f64(b)) for c, b in models]
        return np.asarray(self._map(_correct, models), dtype=np.float64)

    def closer_sum(self, fit, prior, log_link=False):
        fit, prior = ((_f64(c), _f64(b)) for c, b in (fit, prior))
        return float(self._map(_closer, fit, prior, bool(log_link)))

    def objective(self, coef, intercept, loss_code, param, clip_norm):
        f, gcoef, gint = self._map(
            _objective, _f64(coef), _f64(intercept), int(loss_code), float(param), float(clip_norm)
        )
        return float(f), gcoef, gint


def max_row_norm(data):
    """The largest row norm (one pass; the caller warns: it is read from the private data)."""
    return float(data.reduce(_max_norm_part))


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def _sample(sample):
    return None if sample is None else (int(sample[0]), float(sample[1]))


# --- prediction: Spark columns, computed on the executors -----------------------------------


def linear_columns(X, coef, intercept):
    """``[x . coef_k + intercept_k]`` as Spark column expressions (one per output)."""
    F = _spark_names()
    cols = X.columns()
    coef = np.atleast_2d(np.asarray(coef, dtype=np.float64))
    intercept = np.atleast_1d(np.asarray(intercept, dtype=np.float64))
    if coef.shape[1] != len(cols):
        raise ValueError(f"X has {len(cols)} features, but the model expects {coef.shape[1]}.")
    out = []
    for k in range(coef.shape[0]):
        expr = F.lit(float(intercept[k]))
        for j, c in enumerate(cols):
            if coef[k, j] != 0.0:
                expr = expr + c * F.lit(float(coef[k, j]))
        out.append(expr)
    return out


def label_column(scores, classes):
    """The predicted label: the sign of one score, or the first largest of several."""
    F = _spark_names()
    labels = [c.item() if hasattr(c, "item") else c for c in classes]
    if len(scores) == 1:
        return F.when(scores[0] > 0, F.lit(labels[1])).otherwise(F.lit(labels[0]))
    best = F.greatest(*scores)
    expr = F.lit(labels[-1])
    for k in range(len(scores) - 2, -1, -1):
        expr = F.when(scores[k] == best, F.lit(labels[k])).otherwise(expr)
    return expr


def proba_column(scores):
    """Class probabilities as an array column: sigmoid of one score, softmax of several."""
    F = _spark_names()
    if len(scores) == 1:
        p = F.lit(1.0) / (F.lit(1.0) + F.exp(-scores[0]))
        return F.array(F.lit(1.0) - p, p)
    best = F.greatest(*scores)
    exps = [F.exp(s - best) for s in scores]
    total = exps[0]
    for e in exps[1:]:
        total = total + e
    return F.array(*[e / total for e in exps])

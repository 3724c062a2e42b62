"""Dask backend: the full-batch reductions over the row chunks of a dask array.

Each reduction (:mod:`skdpgd._compute.backends`) is a sum over rows, so it is computed per row chunk
by the same code as in memory (a :class:`~skdpgd._compute.backends.DenseRows` built on the
chunk, inside the task: numba kernels, or numpy for a small chunk, as in memory) and the
partial sums are added on the driver in chunk order. The
driver holds d- or d^2-sized partial sums only, never a row of X, and draws all the noise (the
mechanisms do that, from the estimator's one generator), so a fit on a dask array is the
in-memory fit up to the summation order. Every release reads X once (persist X, or let dask
stream it from storage).

Imported only when X is a dask collection (by :mod:`skdpgd._core.data`, which also holds the
estimator-side checks of dask input): ``import skdpgd`` does not import dask. This module
imports :mod:`skdpgd._compute.backends`, never the reverse.
"""

from __future__ import annotations

import numpy as np

from .backends import DenseRows, poisson_subsample
from .kernels import row_norms


def as_dask_array(X):
    """A 2-D float64 dask array with one chunk across the columns (dataframes: their values;
    row chunk sizes are computed when unknown, a count that is public under replace-one)."""
    import dask.array as da

    if hasattr(X, "to_dask_array"):  # dask DataFrame / Series
        X = X.to_dask_array(lengths=True)
    X = da.asarray(X)
    if np.isnan(X.shape[0]):
        X = X.compute_chunk_sizes()
    if X.dtype.kind not in "fiub":
        raise ValueError(f"X must hold numbers, got dtype {X.dtype}.")
    return X.astype(np.float64).rechunk({1: -1})


def _chunk_rows(Xb, yb, wb, fit_intercept, bound, column):
    rows = DenseRows(
        np.asarray(Xb),
        np.asarray(yb, dtype=np.float64),
        np.asarray(wb, dtype=np.float64),
        fit_intercept,
    )
    rows.clip_rows(bound, column)
    # dask's scheduler owns the threads: each task's kernels run on its own thread only, so
    # dask's worker threads and skdpgd's never oversubscribe the cores
    rows.parallel = False
    return rows


def _grad(Xb, yb, wb, fi, bound, column, coef, intercept, loss, param, clip):
    return _chunk_rows(Xb, yb, wb, fi, bound, column).grad_sum(coef, intercept, loss, param, clip)


def _hess(Xb, yb, wb, fi, bound, column, coef, intercept, loss, sample=None, start=0):
    rows = _chunk_rows(Xb, yb, wb, fi, bound, column)
    if sample is None:
        return rows.hessian_sum(coef, intercept, loss)
    # the chunk's rows start..start+n of the Poisson subsample: the rows the in-memory fit
    # selects (skdpgd._compute.backends.poisson_subsample depends on the seed and the row position)
    seed, rate = sample
    idx = poisson_subsample(seed, rate, start, start + rows.n_samples)
    if idx.shape[0] == 0:
        D = coef.shape[0] * rows.n_params
        return np.zeros((D, D))
    # from the chunk's rows as given: the subsample is pre-scaled again, so a huge row keeps
    # its scale (rows.X holds it divided by a power of two, which a new object cannot know)
    sub = DenseRows(np.asarray(Xb)[idx], rows.y[idx], rows.sample_weight[idx], fi)
    sub.clip_rows(bound, column)
    sub.parallel = False
    return sub.hessian_sum(coef, intercept, loss)


def _grad_hess(
    Xb, yb, wb, fi, bound, column, coef, intercept, loss, param, clip, sample=None, start=0
):
    if sample is None:
        return _chunk_rows(Xb, yb, wb, fi, bound, column).grad_hessian_sum(
            coef, intercept, loss, param, clip
        )
    # one read of the chunk serves the gradient over all its rows and the Hessian over its
    # rows in the subsample
    gcoef, gint, bad = _grad(Xb, yb, wb, fi, bound, column, coef, intercept, loss, param, clip)
    H = _hess(Xb, yb, wb, fi, bound, column, coef, intercept, loss, sample, start)
    return gcoef, gint, bad, H


def _suff(Xb, yb, wb, fi, bound, column):
    return _chunk_rows(Xb, yb, wb, fi, bound, column).suff_stats()


def _objective(Xb, yb, wb, fi, bound, column, coef, intercept, loss, param, clip):
    return _chunk_rows(Xb, yb, wb, fi, bound, column).objective(coef, intercept, loss, param, clip)


def _correct(Xb, yb, wb, fi, bound, column, models):
    return _chunk_rows(Xb, yb, wb, fi, bound, column).correct_counts(models)


def _closer(Xb, yb, wb, fi, bound, column, fit, prior, log_link):
    return _chunk_rows(Xb, yb, wb, fi, bound, column).closer_sum(fit, prior, log_link)


def _class_curvature(Xb, yb, wb, fi, bound, column, coef, intercept, sample, start):
    rows = _chunk_rows(Xb, yb, wb, fi, bound, column)
    return rows.class_curvature_sum(coef, intercept, sample=sample, start=start)


def _norm_sum(Xb, wb, bound):
    norms = row_norms(np.asarray(Xb, dtype=np.float64))  # without overflow
    return float(np.dot(np.asarray(wb, dtype=np.float64), np.minimum(norms, bound)))


class DaskRows:
    """The reductions of :class:`skdpgd._compute.backends.Rows` over a dask array's row chunks."""

    def __init__(self, X, y, sample_weight, fit_intercept):
        import dask.array as da

        self.X = as_dask_array(X)
        self.n_samples, self.n_features = (int(s) for s in self.X.shape)
        chunks = self.X.chunks[0]
        self.y = da.asarray(y).astype(np.float64).rechunk((chunks,))
        self.sample_weight = da.asarray(sample_weight).astype(np.float64).rechunk((chunks,))
        self.fit_intercept = bool(fit_intercept)
        self.row_bound, self.column = np.inf, 1.0

    def _blocks(self):
        xs = self.X.to_delayed().ravel()
        return list(zip(xs, self.y.to_delayed().ravel(), self.sample_weight.to_delayed().ravel()))

    def _map(self, fn, *args):
        """``fn(X chunk, y chunk, w chunk, fit_intercept, bound, column, *args)`` per chunk,
        summed on the cluster by a fixed tree (:func:`_tree_sum`); returns the sum."""
        import dask

        tasks = [
            dask.delayed(fn)(xb, yb, wb, self.fit_intercept, self.row_bound, self.column, *args)
            for xb, yb, wb in self._blocks()
        ]
        return dask.compute(_tree_sum(tasks))[0]

    def _map_at_rows(self, fn, *args):
        """:meth:`_map` with each chunk's first row position as the last argument (a Poisson
        subsample is a function of the seed and the row position:
        :func:`skdpgd._compute.backends.poisson_subsample`)."""
        import dask

        starts = np.concatenate([[0], np.cumsum(self.X.chunks[0])[:-1]])
        tasks = [
            dask.delayed(fn)(
                xb, yb, wb, self.fit_intercept, self.row_bound, self.column, *args, int(st)
            )
            for (xb, yb, wb), st in zip(self._blocks(), starts)
        ]
        return dask.compute(_tree_sum(tasks))[0]

    # --- the interface of skdpgd._compute.backends.Rows
    # ---------------------------------------------
    def clip_rows(self, bound, column):
        """Clip rows to norm ``bound`` and divide them by ``column`` (applied in each task)."""
        self.row_bound, self.column = float(bound), float(column)

    def weight_sum(self):
        """``sum_i w_i`` (float64)."""
        return float(self.sample_weight.sum().compute())

    def norm_sum(self, bound):
        import dask

        tasks = [dask.delayed(_norm_sum)(xb, wb, float(bound)) for xb, _, wb in self._blocks()]
        return float(dask.compute(_tree_sum(tasks))[0])

    def grad_sum(self, coef, intercept, loss_code, param, clip_norm):
        gcoef, gint, bad = self._map(
            _grad,
            np.asarray(coef, dtype=np.float64),
            np.asarray(intercept, dtype=np.float64),
            int(loss_code),
            float(param),
            float(clip_norm),
        )
        return gcoef, gint, int(bad)

    def hessian_sum(self, coef, intercept, loss_code, sample=None):
        coef = np.asarray(coef, dtype=np.float64)
        intercept = np.asarray(intercept, dtype=np.float64)
        if sample is None:
            return self._map(_hess, coef, intercept, int(loss_code))
        return self._map_at_rows(
            _hess, coef, intercept, int(loss_code), (int(sample[0]), float(sample[1]))
        )

    def grad_hessian_sum(self, coef, intercept, loss_code, param, clip_norm, sample=None):
        """Both sums at the same point from one read of each chunk (the Hessian over the rows
        of the Poisson subsample ``sample = (seed, rate)`` when given)."""
        gcoef, gint, bad, H = self._map_at_rows(
            _grad_hess,
            np.asarray(coef, dtype=np.float64),
            np.asarray(intercept, dtype=np.float64),
            int(loss_code),
            float(param),
            float(clip_norm),
            None if sample is None else (int(sample[0]), float(sample[1])),
        )
        return gcoef, gint, int(bad), H

    def suff_stats(self):
        return self._map(_suff)

    def class_curvature_sum(self, coef, intercept, sample=None):
        """See :meth:`skdpgd._compute.backends.Rows.class_curvature_sum` (each chunk selects the
        rows of the Poisson subsample that the in-memory fit selects)."""
        sample = None if sample is None else (int(sample[0]), float(sample[1]))
        return self._map_at_rows(
            _class_curvature,
            np.asarray(coef, dtype=np.float64),
            np.asarray(intercept, dtype=np.float64),
            sample,
        )

    def correct_counts(self, models):
        models = [
            (np.asarray(c, dtype=np.float64), np.asarray(b, dtype=np.float64)) for c, b in models
        ]
        return np.asarray(self._map(_correct, models), dtype=np.float64)

    def closer_sum(self, fit, prior, log_link=False):
        fit, prior = (
            (np.asarray(c, dtype=np.float64), np.asarray(b, dtype=np.float64))
            for c, b in (fit, prior)
        )
        return float(self._map(_closer, fit, prior, bool(log_link)))

    def objective(self, coef, intercept, loss_code, param, clip_norm):
        f, gcoef, gint = self._map(
            _objective,
            np.asarray(coef, dtype=np.float64),
            np.asarray(intercept, dtype=np.float64),
            int(loss_code),
            float(param),
            float(clip_norm),
        )
        return float(f), gcoef, gint


#: Chunk results summed per task of the reduction tree.
TREE_FAN_IN = 8


def _add_parts(*parts):
    """Element-wise sum of chunk results (arrays, numbers, or tuples of them), in order."""
    first = parts[0]
    if isinstance(first, tuple):
        return tuple(_add_parts(*items) for items in zip(*parts))
    total = first.copy() if isinstance(first, np.ndarray) else first
    for p in parts[1:]:
        total = total + p
    return total


def _tree_sum(tasks):
    """Sum delayed chunk results on the cluster: groups of ``TREE_FAN_IN`` consecutive results,
    then groups of those sums, until one remains. The tree depends only on the number of
    chunks, so the sum is the same numbers whatever the scheduling, and the driver receives
    one d^2-sized result instead of one per chunk."""
    import dask

    level = list(tasks)
    while len(level) > 1:
        level = [
            dask.delayed(_add_parts)(*level[i : i + TREE_FAN_IN])
            for i in range(0, len(level), TREE_FAN_IN)
        ]
    return level[0]

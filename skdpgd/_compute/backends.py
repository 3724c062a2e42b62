"""Backends: where the training rows live, and the reductions over them that mechanisms use.

A mechanism never touches X. It asks a backend for a handful of sums over the rows, each a
sum of per-example terms whose norm the backend bounds (that bound is what the mechanism's
sensitivity rests on), and it adds the noise itself:

* :meth:`Rows.norm_sum` -- ``sum_i w_i min(||x_i||, R)``, each term in ``[0, R]``;
* :meth:`Rows.grad_sum` -- ``sum_i w_i clip_C(grad l(theta; x'_i, y_i))``, each term of
  norm ``<= C``; a term that is not finite contributes 0 and is counted;
* :meth:`Rows.hessian_sum` -- ``sum_i w_i l''(theta; x'_i, y_i)``, each term PSD with
  Frobenius norm ``<= h ||x'_i||^2`` (h = 1/4 binary logistic, 1/2 multinomial, 1 squared
  loss; proofs in :mod:`skdpgd._full_batch.second_order`);
* :meth:`Rows.suff_stats` -- ``(sum_i w_i x'_i x'_i^T, sum_i w_i y_i x'_i)``;
* :meth:`Rows.grad_hessian_sum` -- the gradient sum and the Hessian sum at the same point in
  one pass over X (the same terms, so the same bounds, as the two reductions above);
* :meth:`Rows.correct_counts` -- ``sum_i w_i [model m predicts y_i]`` for a few fixed
  (released) linear classifiers, each term in ``[0, 1]``; unlike the sums above, in the
  released coordinates on the rows as given (what ``predict`` computes);
* :meth:`Rows.closer_sum` -- ``sum_i w_i sign(|y_i - p0_i| - |y_i - p1_i|)`` for two released
  regressors (rows predicted closer by one than by the other), each term in ``[-1, 1]``.

:meth:`Rows.hessian_sum` also sums over a Poisson subsample of the rows
(:func:`poisson_subsample`): which rows are in it depends only on a seed drawn from the fit's
generator, the public rate and the row positions, never on the data.

All in the *kernel coordinates*: rows are clipped to norm ``R`` (:meth:`Rows.clip_rows`) and
divided by the intercept column ``c``; with an intercept a column of ones is appended, so
``x'_i = (s_i x_i / c, 1)`` with ``s_i = min(1, R / ||x_i||)``. (A problem with column c is
the same problem in the coordinates ``w' = c w`` on rows ``x / c``; see
:func:`skdpgd._full_batch.road.fit_full_batch`.) Sums are accumulated in float64, in an order
that differs between backends (tiles and threads, numpy's pairwise sums, BLAS, dask's tree of
chunks): the bounds above hold for each term up to a few ulps, and the computed sums of
neighbouring datasets can differ by slightly more than the exact sensitivity. Every road
that releases one of these sums raises its sensitivity by
:func:`skdpgd.accounting.sum_rounding_margin`, Higham's bound for any summation order
(``tests/compute/test_float_sums.py`` measures adversarial pairs on every backend against it). The
counts (:meth:`Rows.correct_counts`, :meth:`Rows.closer_sum`) are exact integers while every
weight is 0 or 1; with other weights they are real-valued sums under the same margin.

:func:`skdpgd._core.data.make_rows` picks the backend from the type of X: a dense array or a CSR
matrix (never densified, not even by blocks of rows). Every reduction is a numba kernel
(:mod:`skdpgd._compute.kernels`, :mod:`skdpgd._compute.kernels_second`), threaded for large X with
a split fixed by the shape of X, so the numbers do not depend on the thread count; but a dense
X of at most :data:`skdpgd._compute.small_problems.SMALL_PROBLEM_ENTRIES` entries is reduced in
numpy (the same terms and bounds; nothing to compile on a first fit). A distributed
backend (:mod:`skdpgd._compute.dask_backend`, which builds on this module; this one never imports
it) supplies the same methods over chunks.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import kernels as _kernels
from . import kernels_second as _kernels_second
from . import small_problems as _small_problems
from .kernels_sgd import csr_row_norms

#: The one pre-scaling threshold of every road (:func:`prescale_huge_rows`): rows whose norm is
#: above it (or overflows) are divided, in a copy, by a power of two before any kernel reads
#: them, and their scale takes the factor back. Otherwise the kernels' products
#: ``s_i^2 x_ia x_ib`` underflow (``s_i^2`` ~ 1e-600 -> 0) and their margins ``x_i . theta``
#: (taken before the row's scale is applied) overflow: the row would silently count as 0
#: instead of being clipped to R. 2^300 (~2e90) keeps ``x_ia x_ib`` below 2^600 and, with
#: DP-SGD's iterate bound (margins up to 1e150), every margin below 1e241.
PRESCALE_NORM = 2.0**300
#: Rows x features read at a time by :meth:`Rows.correct_counts` (bounds its memory).
_CORRECT_CHUNK_ENTRIES = 1 << 22
#: Entries of the per-row K x K class-curvature terms formed at a time (numpy's path).
_CLASS_TERM_ENTRIES = 1 << 20


def _power_of_two(m):
    """``2^(e - 1)`` for ``m = f 2^e`` (``0.5 <= f < 1``): finite, and ``m / 2^(e-1)`` lies in
    ``[1, 2)``."""
    return np.ldexp(1.0, np.frexp(m)[1] - 1)


def prescale_huge_rows(X, norms):
    """The pre-scaler of every road: ``(X', pre, unit)``.

    ``X`` is a dense array or a canonical CSR matrix and ``norms`` its row norms computed
    without overflow (:func:`skdpgd._compute.kernels.row_norms`,
    :func:`skdpgd._compute.kernels_sgd.csr_row_norms`; inf where the norm itself overflows).
    Each row whose norm is above :data:`PRESCALE_NORM` or not finite is divided by
    ``pre_i = 2^(e-1)``, ``2^e`` the power of two just above its largest entry (so its entries
    end up below 2 in absolute value, its largest at least 1); ``pre_i = 1`` for every other
    row. ``unit`` holds the norms of the rows of ``X'`` (``norms`` but for the divided rows,
    recomputed). The caller's X is never modified: X' is a copy (of a CSR matrix's data only,
    in float64) when a row is divided, X itself otherwise.

    Privacy: the pre-scaler computes the same clipped row, it does not change which row is
    clipped or to what. A road applies ``min(pre_i, R / unit_i)`` (:func:`clip_scales`) to the
    row ``x_i / pre_i``: ``min(1, R / ||x_i||) x_i`` in exact arithmetic, of norm at most R
    because the scale comes from the stored row's own norm ``unit_i``. Dividing by a power of
    two is exact but for entries pushed below float64's normal range (then smaller than
    ``2^-1022`` times the row's largest entry, which is at least 1). What remains is the
    rounding of a norm and of a product, the same few ulps as on any other row, which the
    roads' rounding margins of the released sums (:func:`skdpgd.accounting.sum_rounding_margin`)
    and the kernels' closed-form per-example clip already cover.
    """
    norms = np.asarray(norms, dtype=np.float64)
    huge = ~(norms <= PRESCALE_NORM)
    pre = np.ones(norms.shape[0])
    if not np.any(huge):
        return X, pre, norms
    idx = np.flatnonzero(huge)
    unit = norms.copy()
    if sp.issparse(X):
        data = np.array(X.data, dtype=np.float64)  # a copy: never modify the caller's X
        indptr = X.indptr
        for i in idx:
            row = data[indptr[i] : indptr[i + 1]]
            pre[i] = _power_of_two(np.max(np.abs(row)))
            row /= pre[i]
        X = sp.csr_matrix((data, X.indices, indptr), shape=X.shape)
        unit[idx] = csr_row_norms(data, np.asarray(indptr, dtype=np.int64))[idx]
    else:
        pre[idx] = _power_of_two(np.max(np.abs(X[idx]), axis=1))
        X = X.copy()  # never modify the caller's X
        X[idx] = X[idx] / pre[idx, None]
        unit[idx] = _kernels.row_norms(X[idx])
    return X, pre, unit


def clip_scales(unit, pre, bound):
    """``min(pre_i, bound / unit_i)`` (1 for a zero row): the scale that turns the stored row
    ``x_i / pre_i`` of :func:`prescale_huge_rows` into ``min(1, bound / ||x_i||) x_i``, the
    row clipped to norm ``bound``, computed without overflow."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(unit > 0, np.minimum(pre, bound / np.where(unit > 0, unit, 1.0)), 1.0)


#: Rows per block of :func:`poisson_subsample` (a public constant: it fixes which uniform
#: draw belongs to which row, so that every backend selects the same rows).
SUBSAMPLE_BLOCK = 1 << 16


def poisson_subsample(seed, rate, start, stop):
    """Positions ``i - start`` of the rows ``start <= i < stop`` in a Poisson subsample.

    Row i is in it iff ``u_i < rate``, with ``u_i`` the ``(i mod B)``-th uniform of
    ``numpy.random.default_rng([seed, i // B])`` (``B = SUBSAMPLE_BLOCK``): independent
    Bernoulli(rate) indicators, one per row, functions of (seed, i) only. A dask chunk that
    starts at row ``start`` selects exactly the rows the in-memory fit selects. ``seed`` comes
    from the fit's generator, so a fit is reproducible with ``random_state``.
    """
    if rate >= 1.0:
        return np.arange(stop - start, dtype=np.int64)
    B = SUBSAMPLE_BLOCK
    parts = []
    for b in range(start // B, (stop - 1) // B + 1 if stop > start else start // B):
        u = np.random.default_rng([int(seed), b]).random(B)
        lo, hi = max(start, b * B), min(stop, (b + 1) * B)
        parts.append(np.flatnonzero(u[lo - b * B : hi - b * B] < rate) + (lo - start))
    return np.concatenate(parts).astype(np.int64) if parts else np.empty(0, np.int64)


def canonical_csr(X):
    """X as canonical CSR (sorted indices, no duplicates), copying only when it must."""
    X = sp.csr_matrix(X) if not sp.isspmatrix_csr(X) else X
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


class Rows:
    """Base class of the backends (see the module docstring for the reductions)."""

    #: Whether the reductions may use skdpgd's threads (None: by the amount of work). A
    #: caller that owns the threads already (a dask worker thread) sets False, so that the
    #: cores are never oversubscribed.
    parallel = None

    def __init__(self, y, sample_weight, fit_intercept):
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64)
        self.fit_intercept = bool(fit_intercept)
        # row i as stored for the kernels is x_i / pre_i (pre_i = 1 but for huge rows), of norm
        # unit_i; its true norm ||x_i|| = pre_i unit_i (inf if that overflows)
        X, self._pre, self._unit = prescale_huge_rows(self.X, self._row_norms())
        if X is not self.X:
            self._replace_rows(X)
        with np.errstate(over="ignore"):
            self._norms = self._unit * self._pre
        self.clip_rows(np.inf, 1.0)

    # --- to be supplied by a backend -----------------------------------------------------
    def _row_norms(self):  # pragma: no cover - interface
        """Norms of the rows of X, without overflow."""
        raise NotImplementedError

    def _replace_rows(self, X):  # pragma: no cover - interface
        """Read the rows from ``X`` (the pre-scaled copy of :func:`prescale_huge_rows`) from
        now on, in every reduction."""
        raise NotImplementedError

    # --- row clipping ----------------------------------------------------------------------
    def clip_rows(self, bound, column):
        """Clip rows to norm ``bound`` and divide them by the intercept column ``column``.

        The stored row ``x_i / pre_i`` gets the scale ``min(pre_i, bound / unit_i) / column``:
        ``min(1, bound / ||x_i||) / column`` for the true row, computed without overflow.
        """
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            clipped = np.minimum(self._norms, bound) / column
            self.row_norm_aug = np.ascontiguousarray(
                np.sqrt(clipped * clipped + (1.0 if self.fit_intercept else 0.0))
            )
        self.row_bound, self.column = float(bound), float(column)
        self.row_scale = np.ascontiguousarray(self._scale_at(bound))

    def _scale_at(self, bound):
        """``min(pre_i, bound / unit_i) / column`` for every stored row (the current column):
        the row scale of :meth:`clip_rows`, computed without overflow."""
        return clip_scales(self._unit, self._pre, bound) / self.column

    def weight_sum(self):
        """``sum_i w_i`` (float64)."""
        return float(np.sum(self.sample_weight))

    def norm_sum(self, bound):
        """``sum_i w_i min(||x_i||, bound)``: each term lies in ``[0, bound]``."""
        return float(np.dot(self.sample_weight, np.minimum(self._norms, bound)))

    @property
    def n_params(self):
        return self.n_features + int(self.fit_intercept)

    # --- reductions (docstrings here; each backend implements them) -----------------------
    def grad_hessian_sum(self, coef, intercept, loss_code, param, clip_norm, sample=None):
        """``(gcoef, gint, n_bad, H)``: :meth:`grad_sum` and :meth:`hessian_sum` (over
        ``sample``, see there) at the same point, the same per-example terms (so the same
        bounds), computed in one pass where the backend can (full Hessian: in memory and on
        dask; subsampled Hessian: on dask, where a pass is a read of every chunk)."""
        if sample is None and int(loss_code) in (_kernels.LOSS_LOGISTIC, _kernels.LOSS_MULTINOMIAL):
            fused = self._fused_grad_hessian(coef, intercept, int(loss_code), float(clip_norm))
            if fused is not None:
                return fused
        gcoef, gint, bad = self.grad_sum(coef, intercept, loss_code, param, clip_norm)
        return gcoef, gint, bad, self.hessian_sum(coef, intercept, loss_code, sample=sample)

    def _fused_grad_hessian(self, coef, intercept, loss_code, clip_norm):
        """The full gradient and Hessian sums of a logistic loss in one pass, or None where
        the backend has no such kernel."""
        return None

    def hessian_sum(self, coef, intercept, loss_code, sample=None):
        """``sum_i w_i H_i`` with ``H_i`` the Hessian of one example's loss at ``theta``.

        ``sample = (seed, rate)``: the sum runs over the rows of
        :func:`poisson_subsample` only, gathered a chunk at a time (memory O(chunk x d +
        D^2)). Every term is the same as in the full sum, so the sum over any set of rows
        chosen independently of the data obeys the same per-example bound.

        Binary logistic: ``s_i (1 - s_i) x'_i x'_i^T`` (``s_i`` the sigmoid of the margin);
        multinomial: ``(diag(p_i) - p_i p_i^T) (x) x'_i x'_i^T`` with parameters ordered
        class-major (index ``k * n_params + j``); squared loss: ``x'_i x'_i^T``.
        Returns an array of shape ``(K n_params, K n_params)``. Each term is PSD with
        Frobenius norm ``<= h ||x'_i||^2`` (module docstring); a row whose margin is not
        finite contributes 0 (:meth:`grad_sum` at the same point counts it).
        """
        raise NotImplementedError  # pragma: no cover - interface

    def suff_stats(self):
        """``(sum_i w_i x'_i x'_i^T, sum_i w_i y_i x'_i)`` (the targets as stored)."""
        raise NotImplementedError  # pragma: no cover - interface

    def _released_margins(self, models):
        """Yield ``(start, stop, [z_m])``: for the rows ``start:stop`` (a chunk of at most
        :data:`_CORRECT_CHUNK_ENTRIES` entries), each model's margins ``x_i . coef^T +
        intercept`` (shape (rows, K)) with ``(coef, intercept)`` **as released** (the
        estimator's ``coef_`` and ``intercept_``) on the rows as given, neither clipped nor
        divided by the intercept column: what the released model's own ``predict`` computes."""
        coefs = np.concatenate([np.asarray(c, dtype=np.float64) for c, _ in models])
        step = max(1, _CORRECT_CHUNK_ENTRIES // max(1, self.n_features))
        for start in range(0, self.n_samples, step):
            stop = min(self.n_samples, start + step)
            # the stored row is x_i / pre_i (prescale_huge_rows): pre_i takes the factor back
            with np.errstate(over="ignore", invalid="ignore"):
                margins = np.asarray(self.X[start:stop] @ coefs.T) * self._pre[start:stop, None]
            out, at = [], 0
            for coef, intercept in models:
                k = np.asarray(coef).shape[0]
                with np.errstate(over="ignore", invalid="ignore"):
                    out.append(margins[:, at : at + k] + np.asarray(intercept, dtype=np.float64))
                at += k
            yield start, stop, out

    def correct_counts(self, models):
        """``[sum_i w_i [model m predicts y_i] for m in models]`` (float64).

        ``models`` are ``(coef, intercept)`` pairs **as released** (``coef`` of shape (K, d)),
        evaluated on the rows as given (:meth:`_released_margins`): the count is what the
        released model's own ``predict`` gets right on these rows. One output (K = 1,
        targets -1 / +1): the prediction is +1 where the margin is > 0; K outputs (targets
        0..K-1): the largest margin. Each term is ``w_i`` or 0, so it lies in ``[0, 1]``
        whatever the row (a margin that is NaN predicts nothing right; an infinite one
        predicts its sign, as ``predict`` does).
        """
        counts = np.zeros(len(models))
        for start, stop, margins in self._released_margins(models):
            y, w = self.y[start:stop], self.sample_weight[start:stop]
            for m, z in enumerate(margins):
                ok = ~np.any(np.isnan(z), axis=1)  # a NaN margin is never right
                if z.shape[1] == 1:
                    hit = ok & (np.where(z[:, 0] > 0, 1.0, -1.0) == y)
                else:
                    hit = ok & (np.argmax(np.where(ok[:, None], z, 0.0), axis=1) == y)
                counts[m] += float(np.dot(w, hit))
        return counts

    def closer_sum(self, fit, prior, log_link=False):
        """``sum_i w_i sign(|y_i - p0_i| - |y_i - p1_i|)`` (float64): the weighted number of
        rows whose target the model ``fit`` predicts strictly closer than the model ``prior``,
        minus the number it predicts strictly farther (ties and NaN predictions count 0).

        Both are one-output ``(coef, intercept)`` pairs as released, evaluated as in
        :meth:`correct_counts`; the prediction is the margin (identity link) or its
        exponential (``log_link``, Poisson). The targets are those stored (a regressor's
        centred and clipped targets; the centre cancels in each difference). Each term lies in
        ``[-w_i, w_i]``, so in ``[-1, 1]`` whatever the row.
        """
        total = 0.0
        for start, stop, (z1, z0) in self._released_margins([fit, prior]):
            y, w = self.y[start:stop], self.sample_weight[start:stop]
            with np.errstate(over="ignore", invalid="ignore"):
                p1, p0 = (np.exp(z1[:, 0]), np.exp(z0[:, 0])) if log_link else (z1[:, 0], z0[:, 0])
                d1, d0 = np.abs(y - p1), np.abs(y - p0)
            term = (d1 < d0).astype(np.float64) - (d0 < d1).astype(np.float64)  # NaN: 0
            total += float(np.dot(w, term))
        return total

    def class_curvature_sum(self, coef, intercept, sample=None, start=0):
        """``sum_i w_i (diag(p_i) - p_i p_i^T)``, shape ``(K, K)``, with ``p_i`` the softmax of
        row i's margins at ``(coef, intercept)`` (kernel coordinates of the current column,
        ``coef`` of shape (K, d)): the class factor of the multinomial Hessian
        (:class:`skdpgd._full_batch.second_order.KroneckerNewtonMechanism`).

        ``sample = (seed, rate)``: over the rows of :func:`poisson_subsample` only (``start``:
        the position of this object's first row in the whole data, for a dask chunk). Each term
        is PSD with Frobenius norm ``<= w_i / 2`` whatever the row (``p_i`` lies in the
        simplex); a row whose margins are not finite contributes 0. Small problems in numpy,
        others with the multinomial Hessian weights' kernel, a chunk of (gathered) rows at a
        time."""
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        intercept = np.ascontiguousarray(intercept, dtype=np.float64)
        k = coef.shape[0]
        total = np.zeros((k, k))
        idx = (
            None
            if sample is None
            else poisson_subsample(sample[0], sample[1], start, start + self.n_samples)
        )
        n = self.n_samples if idx is None else idx.shape[0]
        step = max(1, _CORRECT_CHUNK_ENTRIES // max(1, self.n_features))
        for lo in range(0, n, step):
            at = slice(lo, min(n, lo + step)) if idx is None else idx[lo : lo + step]
            total += self._class_weights(coef, intercept, at)
        return 0.5 * (total + total.T)

    def _class_weights(self, coef, intercept, at):
        """:meth:`class_curvature_sum` over the rows ``at`` (a slice or positions), in numpy.

        Each row's term ``w_i p_ia (delta_ab - p_ib)`` is formed first (as the kernel's
        :func:`skdpgd._compute.kernels_second._row_weights` forms it), then the terms are
        summed: the sum's rounding is then relative to the terms' norms (at most ``w_i / 2``),
        which the release's rounding margin covers. (``sum diag(w p) - sum w p p^T``, two sums
        of terms of norm up to ``w_i`` that cancel when a row is predicted with certainty,
        would round by up to four times more.)"""
        with np.errstate(over="ignore", invalid="ignore"):
            z = np.asarray(self.X[at] @ coef.T) * self.row_scale[at, None]
            z += intercept
        ok = np.all(np.isfinite(z), axis=1)
        z = np.where(ok[:, None], z, 0.0)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        wp = np.where(ok, self.sample_weight[at], 0.0)[:, None] * p
        k = p.shape[1]
        eye = np.eye(k)[None, :, :]
        total = np.zeros((k, k))
        step = max(1, _CLASS_TERM_ENTRIES // (k * k))  # rows of K x K terms held at a time
        for lo in range(0, p.shape[0], step):
            terms = wp[lo : lo + step, :, None] * (eye - p[lo : lo + step, None, :])
            total += terms.sum(axis=0)
        return total

    def _objective_x(self):  # pragma: no cover - interface
        """``(kernel, X's arrays)``: :func:`skdpgd._compute.kernels.objective_sum` and ``(X,)``, or
        :func:`~skdpgd._compute.kernels.objective_sum_csr` and ``(data, indices, indptr)``."""
        raise NotImplementedError

    def objective(self, coef, intercept, loss_code, param, clip_norm):
        """``(sum_i w_i l_i, its gradient for the weights, for the intercepts)``: the exact
        clipped loss (its gradient is the sum of the clipped per-example gradients), no
        noise, no penalty, no normaliser, for exact solvers (the same contract for dense and
        CSR rows: :func:`skdpgd._compute.kernels.objective_sum`)."""
        if getattr(self, "small", False):
            return _small_problems.objective(
                self.X,
                self.y,
                self.sample_weight,
                self.row_scale,
                self.row_norm_aug,
                loss_code,
                param,
                clip_norm,
                coef,
                intercept,
            )
        gcoef = np.zeros(coef.shape)
        gint = np.zeros(coef.shape[0])
        kernel, x = self._objective_x()
        total = kernel(
            *x,
            self.y,
            self.sample_weight,
            self.row_scale,
            self.row_norm_aug,
            int(loss_code),
            float(param),
            float(clip_norm),
            np.ascontiguousarray(coef, dtype=np.float64),
            np.ascontiguousarray(intercept, dtype=np.float64),
            gcoef,
            gint,
        )
        return total, gcoef, gint


class DenseRows(Rows):
    """Rows in a dense C-ordered float64 or float32 array (not copied when it already is one).

    float32 X stays float32 (half the bytes per pass): the kernels convert each entry to
    float64 exactly when they read it, and every product and sum is float64, so the numbers are
    those of the float64 copy of X, and the bounds (row norms computed in float64) hold."""

    def __init__(self, X, y, sample_weight, fit_intercept):
        X = np.asarray(X)
        dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
        self.X = np.ascontiguousarray(X, dtype=dtype)
        self.n_samples, self.n_features = self.X.shape
        # a small X is reduced in numpy: no numba kernel to compile (small_problems.py)
        self.small = _small_problems.is_small(self.n_samples, self.n_features)
        super().__init__(y, sample_weight, fit_intercept)

    def _row_norms(self):
        return _kernels.row_norms(self.X)

    def _replace_rows(self, X):
        self.X = X

    def _class_weights(self, coef, intercept, at):
        """The multinomial Hessian weights' kernel, reading the rows in place (one thread, no
        BLAS); numpy for small X."""
        if self.small:
            return super()._class_weights(coef, intercept, at)
        rows = np.arange(at.start, at.stop) if isinstance(at, slice) else at
        return _kernels_second.class_weight_sum(
            self.X, rows, self.row_scale, self.sample_weight, coef, intercept
        )

    def _objective_x(self):
        return _kernels.objective_sum, (self.X,)

    def hessian_sum(self, coef, intercept, loss_code, sample=None):
        """See :meth:`Rows.hessian_sum` (upper triangles, four rows at a time, mirrored)."""
        if self.small:
            if sample is None:
                return _small_problems.hessian_sum(
                    self.X,
                    self.row_scale,
                    self.sample_weight,
                    self.fit_intercept,
                    int(loss_code),
                    coef,
                    intercept,
                )
            return _gathered_hessian(
                self,
                coef,
                intercept,
                loss_code,
                sample,
                lambda idx: _small_problems.hessian_sum(
                    self.X[idx],
                    self.row_scale[idx],
                    self.sample_weight[idx],
                    self.fit_intercept,
                    int(loss_code),
                    coef,
                    intercept,
                ),
            )
        if sample is None:
            return _kernels_second.hessian_sum(
                self.X,
                self.row_scale,
                self.sample_weight,
                self.fit_intercept,
                int(loss_code),
                coef,
                intercept,
                parallel=self.parallel,
            )
        buf = []

        def part(idx):
            if not buf:  # one buffer of a chunk's rows, reused
                buf.append(np.empty((idx.shape[0], self.n_features), dtype=self.X.dtype))
            Xs = buf[0][: idx.shape[0]]
            np.take(self.X, idx, axis=0, out=Xs)
            return _kernels_second.hessian_sum(
                Xs,
                self.row_scale[idx],
                self.sample_weight[idx],
                self.fit_intercept,
                int(loss_code),
                coef,
                intercept,
                parallel=self.parallel,
            )

        return _gathered_hessian(self, coef, intercept, loss_code, sample, part)

    def _fused_grad_hessian(self, coef, intercept, loss_code, clip_norm):
        """One pass: :func:`_kernels_second.grad_hessian_sum`."""
        if self.small:
            return _small_problems.grad_hessian_sum(
                self.X,
                self.y,
                self.sample_weight,
                self.row_scale,
                self.row_norm_aug,
                self.fit_intercept,
                loss_code,
                clip_norm,
                coef,
                intercept,
            )
        return _kernels_second.grad_hessian_sum(
            self.X,
            self.y,
            self.sample_weight,
            self.row_scale,
            self.row_norm_aug,
            self.fit_intercept,
            loss_code,
            clip_norm,
            coef,
            intercept,
            parallel=self.parallel,
        )

    def suff_stats(self):
        """See :meth:`Rows.suff_stats`."""
        if self.small:
            return _small_problems.suff_stats(
                self.X, self.row_scale, self.sample_weight, self.fit_intercept, self.y
            )
        return _kernels_second.suff_stats(
            self.X,
            self.row_scale,
            self.sample_weight,
            self.fit_intercept,
            self.y,
            parallel=self.parallel,
        )

    def grad_sum(self, coef, intercept, loss_code, param, clip_norm):
        """``(sum_i w_i clip(g_i) for the weights, ... for the intercepts, n_bad)``.

        Each per-example term has norm ``<= clip_norm`` (closed-form clip of
        ``l'(z_i) x'_i``), so the sum moves by at most ``clip_norm`` when a row is added or
        removed and ``2 clip_norm`` when one is replaced. ``n_bad`` counts rows whose
        gradient was not finite; they contribute 0. The rows are summed in blocks fixed by
        the shape of X (threads sum disjoint blocks when X is large), then the blocks are
        added in order: the same numbers on any number of threads.
        """
        if self.small:
            return _small_problems.grad_sum(
                self.X,
                self.y,
                self.sample_weight,
                self.row_scale,
                self.row_norm_aug,
                loss_code,
                param,
                clip_norm,
                coef,
                intercept,
            )
        return _kernels.dense_grad_sum(
            self.X,
            self.y,
            self.sample_weight,
            self.row_scale,
            self.row_norm_aug,
            loss_code,
            param,
            clip_norm,
            coef,
            intercept,
            parallel=self.parallel,
        )


class CSRRows(Rows):
    """Rows in a canonical CSR matrix, never densified."""

    def __init__(self, X, y, sample_weight, fit_intercept):
        X = canonical_csr(X)
        self.X = X
        self.data = np.ascontiguousarray(X.data, dtype=np.float64)
        self.indices = np.ascontiguousarray(X.indices, dtype=np.int64)
        self.indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
        self.n_samples, self.n_features = X.shape
        super().__init__(y, sample_weight, fit_intercept)

    def _class_weights(self, coef, intercept, at):
        """The multinomial Hessian weights' kernel over the stored entries of the rows ``at``."""
        sub = self.X[at]  # rows of a canonical CSR matrix: still sorted, no duplicates
        return _kernels_second.class_weight_sum_csr(
            np.ascontiguousarray(sub.data, dtype=np.float64),
            np.ascontiguousarray(sub.indices, dtype=np.int64),
            np.ascontiguousarray(sub.indptr, dtype=np.int64),
            np.ascontiguousarray(self.row_scale[at]),
            np.ascontiguousarray(self.sample_weight[at]),
            coef,
            intercept,
        )

    def _objective_x(self):
        return _kernels.objective_sum_csr, (self.data, self.indices, self.indptr)

    def _row_norms(self):
        if self.n_samples == 0:
            return np.zeros(0)
        return csr_row_norms(self.data, self.indptr)

    def _replace_rows(self, X):
        # every reduction reads the pre-scaled rows, those that gather rows from the matrix
        # (the subsampled Hessian, the correct counts, the class curvature) included
        self.X = X
        self.data = np.ascontiguousarray(X.data, dtype=np.float64)

    def hessian_sum(self, coef, intercept, loss_code, sample=None):
        """See :meth:`Rows.hessian_sum` (pairs of a row's stored entries)."""
        if sample is None:
            return _kernels_second.hessian_sum_csr(
                self.data,
                self.indices,
                self.indptr,
                self.n_features,
                self.row_scale,
                self.sample_weight,
                self.fit_intercept,
                int(loss_code),
                coef,
                intercept,
                parallel=self.parallel,
            )

        def part(idx):
            sub = self.X[idx]  # rows of a canonical CSR matrix: still sorted, no duplicates
            return _kernels_second.hessian_sum_csr(
                np.ascontiguousarray(sub.data, dtype=np.float64),
                np.ascontiguousarray(sub.indices, dtype=np.int64),
                np.ascontiguousarray(sub.indptr, dtype=np.int64),
                self.n_features,
                self.row_scale[idx],
                self.sample_weight[idx],
                self.fit_intercept,
                int(loss_code),
                coef,
                intercept,
                parallel=self.parallel,
            )

        return _gathered_hessian(self, coef, intercept, loss_code, sample, part)

    def _fused_grad_hessian(self, coef, intercept, loss_code, clip_norm):
        """One pass over the stored entries: :func:`_kernels_second.grad_hessian_sum_csr`."""
        return _kernels_second.grad_hessian_sum_csr(
            self.data,
            self.indices,
            self.indptr,
            self.n_features,
            self.y,
            self.sample_weight,
            self.row_scale,
            self.row_norm_aug,
            self.fit_intercept,
            loss_code,
            clip_norm,
            coef,
            intercept,
            parallel=self.parallel,
        )

    def suff_stats(self):
        """See :meth:`Rows.suff_stats`."""
        return _kernels_second.suff_stats_csr(
            self.data,
            self.indices,
            self.indptr,
            self.n_features,
            self.row_scale,
            self.sample_weight,
            self.fit_intercept,
            self.y,
        )

    def grad_sum(self, coef, intercept, loss_code, param, clip_norm):
        """As :meth:`DenseRows.grad_sum`, for CSR rows."""
        k_out, d = coef.shape
        gcoef = np.zeros((k_out, d))
        gint = np.zeros(k_out)
        bad = _kernels._sum_rows_csr(
            self.data,
            self.indices,
            self.indptr,
            self.y,
            self.sample_weight,
            self.row_scale,
            self.row_norm_aug,
            np.empty(0, np.int64),
            0,
            self.n_samples,
            int(loss_code),
            float(param),
            float(clip_norm),
            np.ascontiguousarray(coef, dtype=np.float64),
            np.ascontiguousarray(intercept, dtype=np.float64),
            gcoef,
            gint,
        )
        return gcoef, gint, int(bad)


def _gathered_hessian(rows, coef, intercept, loss_code, sample, part):
    """The Hessian sum over the rows of the Poisson subsample ``sample = (seed, rate)``:
    ``part(idx)`` sums a chunk of them (gathered into a contiguous array of at most a chunk's
    bytes); chunks are added in order, so the numbers are fixed by the sample and the shape
    of X."""
    k_out = coef.shape[0]
    D = k_out * rows.n_params
    sample = poisson_subsample(sample[0], sample[1], 0, rows.n_samples)
    n_pair = _kernels_second.n_pairs(int(loss_code), k_out)
    chunk = _kernels_second._chunk_rows(rows.n_params, n_pair)
    H = np.zeros((D, D))
    for lo in range(0, sample.shape[0], chunk):
        H += part(sample[lo : lo + chunk])
    return H

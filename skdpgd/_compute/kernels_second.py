"""Numba kernels for the second-order reductions: weighted sums of outer products of rows.

Both reductions are ``sum_i W_im x'_i x'_i^T`` for a few weights per row (index m):

* the Hessian sum, ``W_i = w_i s_i (1 - s_i)`` (binary logistic, ``s_i`` the sigmoid of the
  margin), ``w_i p_ia (delta_ab - p_ib)`` for each pair of classes ``a <= b`` (multinomial,
  ``p_i`` the softmax), or ``w_i`` (squared loss);
* the sufficient statistics, ``W_i = w_i`` over rows augmented by their target,
  ``(x'_i, y_i)``: the last column of that sum is ``sum_i w_i y_i x'_i``.

Rows are in the kernel coordinates of :mod:`skdpgd._compute.backends`: ``x'_i = (s_i x_i, E_i)``
with ``s_i`` the row scale and ``E_i`` a few extra columns (1 for the intercept, the target).
Each term is PSD for a nonnegative weight, and every matrix here is symmetric, so only the
upper triangle of each is accumulated and the lower one is mirrored at the end. X is read
as stored: dense rows four at a time (each load and store of the sum serves four rows),
CSR rows entry by entry (only stored entries are read; nothing is densified).

Work is split by *rows of the result*: a call accumulates the rows ``a0 <= a < a1`` of every
upper triangle over all its data rows. Threads take disjoint ranges of result rows, and every
entry is summed over the data rows in the same order whoever computes it, so the numbers do
not depend on the thread count. Data rows are processed in chunks fixed by the shape of X.
Sums are float64. A row whose weights are not finite (a NaN or infinite margin) contributes
0; the gradient sum at the same point counts such rows.
"""

import math

import numpy as np

from . import kernels as K
from .jit import njit

_FASTMATH = K._FASTMATH

#: Bytes of X per chunk of data rows (a chunk's weights are computed, then every panel of the
#: result is accumulated over it; few chunks keep the per-call overhead small), and at most
#: CHUNK_WEIGHTS weights per chunk.
CHUNK_BYTES = 1 << 25
CHUNK_WEIGHTS = 1 << 21
#: Bytes of the result a panel (one call) updates: it stays in L2 while the chunk streams by.
PANEL_BYTES = 1 << 18
#: Below this many multiply-adds a reduction runs on one thread (a hand-off costs ~0.1 ms).
PARALLEL_MIN_WORK = 10_000_000


def n_pairs(loss, n_outputs):
    """Weights per row: one, or one per pair of classes ``a <= b`` (multinomial)."""
    return n_outputs * (n_outputs + 1) // 2 if loss == K.LOSS_MULTINOMIAL else 1


@njit
def _row_weights(loss, z, p, wi, W, r):
    """``W[r, :]`` = the Hessian weights of one row with margins ``z`` and weight ``wi``
    (``p`` is scratch of the same length); returns 1, with zero weights, if they are not
    finite."""
    k_out = z.shape[0]
    ok = True
    if loss == K.LOSS_LOGISTIC:
        # s (1 - s) = e^{-|z|} / (1 + e^{-|z|})^2, accurate in both tails
        e = math.exp(-abs(z[0]))
        h = wi * e / ((1.0 + e) * (1.0 + e))
        W[r, 0] = h
        ok = math.isfinite(h)
    else:  # multinomial: pairs a <= b in the order (0,0), (0,1), ..., (1,1), ...
        m = z[0]
        for k in range(1, k_out):
            m = z[k] if z[k] > m else m
        tot = 0.0
        for k in range(k_out):
            p[k] = math.exp(z[k] - m)
            tot += p[k]
        for k in range(k_out):
            p[k] /= tot
        q = 0
        for a in range(k_out):
            for b in range(a, k_out):
                h = wi * p[a] * ((1.0 if a == b else 0.0) - p[b])
                W[r, q] = h
                ok = ok and math.isfinite(h)
                q += 1
    if ok:
        return 0
    for q in range(W.shape[1]):
        W[r, q] = 0.0
    return 1


@njit(inline="always")
def _dense_margins(X, i, s, coef, intercept, z):
    """``z[k] = s (X[i] . coef[k]) + intercept[k]`` for every output k."""
    for k in range(coef.shape[0]):
        acc = 0.0
        for j in range(coef.shape[1]):
            acc += X[i, j] * coef[k, j]
        z[k] = s * acc + intercept[k]


@njit(fastmath=_FASTMATH, nogil=True)
def _hessian_weights(X, row_scale, sample_weight, loss, coef, intercept, lo, hi, W):
    """``W[i - lo]`` = Hessian weights of the rows ``lo <= i < hi`` at (coef, intercept)
    (logistic or multinomial); returns the number of rows whose weights were not finite."""
    k_out, d = coef.shape
    z = np.empty(k_out)
    p = np.empty(k_out)
    bad = 0
    for i in range(lo, hi):
        _dense_margins(X, i, row_scale[i], coef, intercept, z)
        bad += _row_weights(loss, z, p, sample_weight[i], W, i - lo)
    return bad


@njit(fastmath=_FASTMATH, nogil=True)
def _class_weight_sum_at(X, rows, row_scale, sample_weight, coef, intercept, total):
    """``total += sum_{i in rows} W_i``, the multinomial Hessian weights of the rows at the
    positions ``rows`` (read in place, nothing gathered); returns the number of rows whose
    weights were not finite (they add 0)."""
    k_out, d = coef.shape
    z = np.empty(k_out)
    p = np.empty(k_out)
    W = np.empty((1, total.shape[0]))
    bad = 0
    for r in range(rows.shape[0]):
        i = rows[r]
        _dense_margins(X, i, row_scale[i], coef, intercept, z)
        bad += _row_weights(K.LOSS_MULTINOMIAL, z, p, sample_weight[i], W, 0)
        for q in range(total.shape[0]):
            total[q] += W[0, q]
    return bad


@njit(fastmath=_FASTMATH, nogil=True)
def _hessian_weights_csr(
    data, indices, indptr, row_scale, sample_weight, loss, coef, intercept, lo, hi, W
):
    """:func:`_hessian_weights` for CSR rows (only stored entries are read)."""
    k_out = coef.shape[0]
    z = np.empty(k_out)
    pr = np.empty(k_out)
    bad = 0
    for i in range(lo, hi):
        s = row_scale[i]
        for k in range(k_out):
            acc = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                acc += data[p] * coef[k, indices[p]]
            z[k] = s * acc + intercept[k]
        bad += _row_weights(loss, z, pr, sample_weight[i], W, i - lo)
    return bad


@njit(fastmath=_FASTMATH, nogil=True)
def _outer_dense(X, row_scale, W, E, lo, hi, a0, a1, H):
    """``H[m, a, b] += sum_{lo <= i < hi} W[i - lo, m] x'_ia x'_ib`` for ``a0 <= a < a1`` and
    ``a <= b`` (upper triangles), with ``x'_i = (s_i X[i], E[i])``.

    Rows four at a time; the last group is padded with copies of the last row of weight 0.
    """
    n_pair = W.shape[1]
    d = X.shape[1]
    e = E.shape[1]
    a_hi = min(a1, d)
    last = hi - 1
    for p in range(lo, hi, 4):
        i0 = p
        i1 = min(p + 1, last)
        i2 = min(p + 2, last)
        i3 = min(p + 3, last)
        s0 = row_scale[i0]
        s1 = row_scale[i1]
        s2 = row_scale[i2]
        s3 = row_scale[i3]
        for m in range(n_pair):
            w0 = W[i0 - lo, m]
            w1 = W[i1 - lo, m] if p + 1 <= last else 0.0
            w2 = W[i2 - lo, m] if p + 2 <= last else 0.0
            w3 = W[i3 - lo, m] if p + 3 <= last else 0.0
            if w0 == 0.0 and w1 == 0.0 and w2 == 0.0 and w3 == 0.0:
                continue
            Hm = H[m]
            # u: weight times the scale of the row's factor x'_a; t: times both scales
            u0 = w0 * s0
            u1 = w1 * s1
            u2 = w2 * s2
            u3 = w3 * s3
            t0 = u0 * s0
            t1 = u1 * s1
            t2 = u2 * s2
            t3 = u3 * s3
            for a in range(a0, a_hi):
                x0 = X[i0, a]
                x1 = X[i1, a]
                x2 = X[i2, a]
                x3 = X[i3, a]
                v0 = t0 * x0
                v1 = t1 * x1
                v2 = t2 * x2
                v3 = t3 * x3
                # slices, so that the index starts at 0: the loop vectorises (an index that
                # might be negative would need numba's wraparound in every iteration)
                row = Hm[a, a:d]
                r0 = X[i0, a:]
                r1 = X[i1, a:]
                r2 = X[i2, a:]
                r3 = X[i3, a:]
                for j in range(d - a):
                    row[j] += (v0 * r0[j] + v1 * r1[j]) + (v2 * r2[j] + v3 * r3[j])
                row = Hm[a]
                v0 = u0 * x0
                v1 = u1 * x1
                v2 = u2 * x2
                v3 = u3 * x3
                for c in range(e):
                    row[d + c] += (v0 * E[i0, c] + v1 * E[i1, c]) + (v2 * E[i2, c] + v3 * E[i3, c])
            for a in range(max(a0, d), min(a1, d + e)):
                ca = a - d
                v0 = w0 * E[i0, ca]
                v1 = w1 * E[i1, ca]
                v2 = w2 * E[i2, ca]
                v3 = w3 * E[i3, ca]
                row = Hm[a]
                for c in range(ca, e):
                    row[d + c] += (v0 * E[i0, c] + v1 * E[i1, c]) + (v2 * E[i2, c] + v3 * E[i3, c])


@njit(fastmath=_FASTMATH, nogil=True)
def _outer_csr(data, indices, indptr, d, row_scale, W, E, lo, hi, a0, a1, H):
    """:func:`_outer_dense` for canonical CSR rows (sorted indices, no duplicates), one row at
    a time over its stored entries: the pairs ``p <= q`` of a row's entries give the upper
    triangle."""
    n_pair = W.shape[1]
    e = E.shape[1]
    for i in range(lo, hi):
        p1 = indptr[i + 1]
        start = indptr[i]
        while start < p1 and indices[start] < a0:
            start += 1
        s = row_scale[i]
        for m in range(n_pair):
            wm = W[i - lo, m]
            if wm == 0.0:
                continue
            Hm = H[m]
            u = wm * s
            t = u * s
            for p in range(start, p1):
                a = indices[p]
                if a >= a1:
                    break
                xa = data[p]
                row = Hm[a]
                v = t * xa
                for q in range(p, p1):
                    row[indices[q]] += v * data[q]
                v = u * xa
                for c in range(e):
                    row[d + c] += v * E[i, c]
            for a in range(max(a0, d), min(a1, d + e)):
                ca = a - d
                v = wm * E[i, ca]
                row = Hm[a]
                for c in range(ca, e):
                    row[d + c] += v * E[i, c]


# ---------------------------------------------------------------------------------------------
# Drivers
# ---------------------------------------------------------------------------------------------


def _row_splits(P, parts):
    """``parts + 1`` boundaries of ``[0, P)`` with about equal upper-triangle work per range
    (row a of an upper triangle has ``P - a`` entries)."""
    total = P * (P + 1) / 2.0
    cuts = [0]
    for t in range(1, parts):
        # rows before a: a P - a (a - 1) / 2 entries; solve for t / parts of the total
        target = total * t / parts
        a = (2 * P + 1 - math.sqrt((2 * P + 1) ** 2 - 8 * target)) / 2.0
        cuts.append(min(P, max(cuts[-1], int(round(a)))))
    cuts.append(P)
    return cuts


def _panels(a0, a1, P, n_pair):
    """Sub-ranges of result rows ``[a0, a1)`` whose slice of the result fits PANEL_BYTES."""
    rows = max(1, PANEL_BYTES // (8 * P * n_pair))
    return [(a, min(a1, a + rows)) for a in range(a0, a1, rows)]


def _chunk_rows(n_columns, n_pair):
    """Data rows per chunk (a multiple of 4, fixed by the shape of the problem)."""
    rows = min(CHUNK_BYTES // (8 * max(1, n_columns)), CHUNK_WEIGHTS // n_pair)
    return max(4, rows // 4 * 4)


def _outer_sums(n, P, n_pair, weights, outer, parallel, panels=True):
    """``H[m]`` (upper triangles, shape (n_pair, P, P)) summed over chunks of data rows.

    ``weights(lo, hi)`` returns the weights of rows ``lo <= i < hi`` (shape (hi - lo,
    n_pair)); ``outer(W, lo, hi, a0, a1, H)`` accumulates result rows ``[a0, a1)``. Threads
    split the result rows; each entry's sum runs over the chunks and rows in the same order
    on any number of threads. ``panels=False`` gives each thread one range of result rows
    (CSR rows are scattered over the result anyway, and each panel re-reads the rows).
    """
    H = np.zeros((n_pair, P, P))
    if parallel is None:
        parallel = n * n_pair * P * P / 2.0 >= PARALLEL_MIN_WORK
    k = max(1, min(K.n_threads(), P)) if parallel else 1
    cuts = _row_splits(P, k)
    per_thread = [
        _panels(cuts[t], cuts[t + 1], P, n_pair) if panels else [(cuts[t], cuts[t + 1])]
        for t in range(k)
    ]
    chunk = _chunk_rows(P, n_pair)
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        W = weights(lo, hi)

        def work(t0, t1, W=W, lo=lo, hi=hi):
            for t in range(t0, t1):
                for a0, a1 in per_thread[t]:
                    outer(W, lo, hi, a0, a1, H)

        K.run_split(work, k, k > 1)
    return H


def _symmetric(U):
    """The symmetric matrix whose upper triangle is that of U."""
    return U + np.triu(U, 1).T


def _assemble(H, loss, k_out):
    """(k_out P, k_out P) Hessian from the upper triangles of its class-pair blocks."""
    P = H.shape[1]
    if loss != K.LOSS_MULTINOMIAL:
        return _symmetric(H[0])
    out = np.empty((k_out * P, k_out * P))
    q = 0
    for a in range(k_out):
        for b in range(a, k_out):
            B = _symmetric(H[q])  # each block is itself symmetric: sum of f_i x'_i x'_i^T
            out[a * P : (a + 1) * P, b * P : (b + 1) * P] = B
            out[b * P : (b + 1) * P, a * P : (a + 1) * P] = B
            q += 1
    return out


def _extra_columns(n, fit_intercept, y=None):
    cols = ([np.ones(n)] if fit_intercept else []) + ([y] if y is not None else [])
    if not cols:
        return np.empty((n, 0))
    return np.ascontiguousarray(np.column_stack(cols), dtype=np.float64)


def _check_loss(loss):
    if loss not in (K.LOSS_LOGISTIC, K.LOSS_MULTINOMIAL, K.LOSS_SQUARED):
        raise ValueError(f"no Hessian for loss code {loss}.")


def _hessian_setup(loss, coef, intercept, fit_intercept, n, d):
    """What both Hessian sums need: ``(k_out, n_pair, E, P, coef, intercept, buf)``."""
    _check_loss(loss)
    k_out = coef.shape[0]
    n_pair = n_pairs(loss, k_out)
    E = _extra_columns(n, fit_intercept)
    P = d + E.shape[1]
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    # without an intercept column the intercept is not a parameter (taken as 0)
    intercept = (
        np.ascontiguousarray(intercept, dtype=np.float64) if fit_intercept else np.zeros(k_out)
    )
    buf = np.empty((min(n, _chunk_rows(P, n_pair)), n_pair))
    return k_out, n_pair, E, P, coef, intercept, buf


def _pairs_to_matrix(total, k_out):
    """The K x K symmetric matrix of the pair sums ``a <= b`` (:func:`_row_weights`' order)."""
    A = np.zeros((k_out, k_out))
    q = 0
    for a in range(k_out):
        for b in range(a, k_out):
            A[a, b] = A[b, a] = total[q]
            q += 1
    return A


def class_weight_sum(X, rows, row_scale, sample_weight, coef, intercept):
    """``sum_{i in rows} w_i (diag(p_i) - p_i p_i^T)`` over dense X (the multinomial Hessian
    weights of :func:`_row_weights`, summed over the rows at the positions ``rows``, int64):
    shape ``(K, K)``. One thread; a row whose weights are not finite contributes 0."""
    k_out = coef.shape[0]
    total = np.zeros(n_pairs(K.LOSS_MULTINOMIAL, k_out))
    _class_weight_sum_at(
        X,
        np.ascontiguousarray(rows, dtype=np.int64),
        row_scale,
        sample_weight,
        np.ascontiguousarray(coef, dtype=np.float64),
        np.ascontiguousarray(intercept, dtype=np.float64),
        total,
    )
    return _pairs_to_matrix(total, k_out)


def class_weight_sum_csr(data, indices, indptr, row_scale, sample_weight, coef, intercept):
    """:func:`class_weight_sum` for canonical CSR X (data float64, indices and indptr int64)."""
    n = indptr.shape[0] - 1
    k_out = coef.shape[0]
    n_pair = n_pairs(K.LOSS_MULTINOMIAL, k_out)
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    intercept = np.ascontiguousarray(intercept, dtype=np.float64)
    step = max(1, min(n, CHUNK_WEIGHTS // n_pair))
    W = np.empty((step, n_pair))
    total = np.zeros(n_pair)
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        _hessian_weights_csr(
            data,
            indices,
            indptr,
            row_scale,
            sample_weight,
            K.LOSS_MULTINOMIAL,
            coef,
            intercept,
            lo,
            hi,
            W,
        )
        total += W[: hi - lo].sum(axis=0)
    return _pairs_to_matrix(total, k_out)


def hessian_sum(X, row_scale, sample_weight, fit_intercept, loss, coef, intercept, parallel=None):
    """``sum_i w_i H_i`` over dense X, shape ``(K P, K P)`` (see :mod:`skdpgd._compute.backends`).

    X, the scales and weights: C-contiguous float64. ``parallel`` (default: by the amount of
    work) splits the result rows between threads; the numbers are the same either way.
    """
    n, d = X.shape
    k_out, n_pair, E, P, coef, intercept, buf = _hessian_setup(
        loss, coef, intercept, fit_intercept, n, d
    )

    def weights(lo, hi):
        if loss == K.LOSS_SQUARED:
            return sample_weight[lo:hi].reshape(-1, 1)
        W = buf[: hi - lo]
        _hessian_weights(X, row_scale, sample_weight, loss, coef, intercept, lo, hi, W)
        return W

    def outer(W, lo, hi, a0, a1, H):
        _outer_dense(X, row_scale, W, E, lo, hi, a0, a1, H)

    return _assemble(_outer_sums(n, P, n_pair, weights, outer, parallel), loss, k_out)


def hessian_sum_csr(
    data,
    indices,
    indptr,
    n_features,
    row_scale,
    sample_weight,
    fit_intercept,
    loss,
    coef,
    intercept,
    parallel=None,
):
    """:func:`hessian_sum` for canonical CSR X (data float64, indices and indptr int64)."""
    n = indptr.shape[0] - 1
    d = int(n_features)
    k_out, n_pair, E, P, coef, intercept, buf = _hessian_setup(
        loss, coef, intercept, fit_intercept, n, d
    )

    def weights(lo, hi):
        if loss == K.LOSS_SQUARED:
            return sample_weight[lo:hi].reshape(-1, 1)
        W = buf[: hi - lo]
        _hessian_weights_csr(
            data, indices, indptr, row_scale, sample_weight, loss, coef, intercept, lo, hi, W
        )
        return W

    def outer(W, lo, hi, a0, a1, H):
        _outer_csr(data, indices, indptr, d, row_scale, W, E, lo, hi, a0, a1, H)

    nnz_work = float(data.shape[0]) * max(1.0, data.shape[0] / max(n, 1)) / 2.0
    if parallel is None:
        parallel = n_pair * nnz_work >= PARALLEL_MIN_WORK
    return _assemble(_outer_sums(n, P, n_pair, weights, outer, parallel, panels=False), loss, k_out)


def suff_stats(X, row_scale, sample_weight, fit_intercept, y, parallel=None):
    """``(sum_i w_i x'_i x'_i^T, sum_i w_i y_i x'_i)`` over dense X: one outer-product sum
    over the rows augmented by their target."""
    n, d = X.shape
    E = _extra_columns(n, fit_intercept, y)
    P = d + E.shape[1]

    def outer(W, lo, hi, a0, a1, H):
        _outer_dense(X, row_scale, W, E, lo, hi, a0, a1, H)

    H = _outer_sums(n, P, 1, lambda lo, hi: sample_weight[lo:hi].reshape(-1, 1), outer, parallel)
    S = _symmetric(H[0])
    return S[:-1, :-1].copy(), S[:-1, -1].copy()


def suff_stats_csr(
    data, indices, indptr, n_features, row_scale, sample_weight, fit_intercept, y, parallel=None
):
    """:func:`suff_stats` for canonical CSR X."""
    n = indptr.shape[0] - 1
    d = int(n_features)
    E = _extra_columns(n, fit_intercept, y)
    P = d + E.shape[1]

    def outer(W, lo, hi, a0, a1, H):
        _outer_csr(data, indices, indptr, d, row_scale, W, E, lo, hi, a0, a1, H)

    if parallel is None:
        parallel = (
            float(data.shape[0]) * max(1.0, data.shape[0] / max(n, 1)) / 2.0 >= PARALLEL_MIN_WORK
        )
    H = _outer_sums(
        n, P, 1, lambda lo, hi: sample_weight[lo:hi].reshape(-1, 1), outer, parallel, panels=False
    )
    S = _symmetric(H[0])
    return S[:-1, :-1].copy(), S[:-1, -1].copy()


#: Rows per sub-block of the fused pass's first stage (margins, gradient, Hessian weights):
#: a chunk is cut into sub-blocks of about this many matrix entries, summed in order, so the
#: gradient's numbers are fixed by the shape of X, whatever the thread count.
FUSED_BLOCK_ENTRIES = 1 << 18


def _fused_weights(n_rows_chunk, d, entries_per_row, kernel_call, k_out, parallel, totals):
    """Stage one of the fused pass over one chunk of ``n_rows_chunk`` rows: ``kernel_call(lo,
    hi, gc, gi)`` fills the Hessian weights of the chunk's rows ``lo <= r < hi`` and writes the
    gradient partial of that sub-block into ``(gc, gi)``; partials are added to
    ``totals = [gcoef, gint, bad]`` in sub-block order (the sub-blocks are fixed by the
    chunk's size and the entries per row, never by the thread count)."""
    n_sub = int(max(1, min(64, n_rows_chunk * max(entries_per_row, 1) // FUSED_BLOCK_ENTRIES)))
    gparts = np.empty((n_sub, k_out, d))
    iparts = np.empty((n_sub, k_out))

    def work(b0, b1):
        bad = 0
        for b in range(b0, b1):
            lo = b * n_rows_chunk // n_sub
            hi = (b + 1) * n_rows_chunk // n_sub
            bad += kernel_call(lo, hi, gparts[b], iparts[b])
        return bad

    totals[2] += sum(K.run_split(work, n_sub, parallel and n_sub > 1))
    for b in range(n_sub):
        totals[0] += gparts[b]
        totals[1] += iparts[b]


def _check_fused_loss(loss):
    if loss not in (K.LOSS_LOGISTIC, K.LOSS_MULTINOMIAL):
        raise ValueError(f"no fused gradient and Hessian pass for loss code {loss}.")


def grad_hessian_sum(
    X,
    y,
    sample_weight,
    row_scale,
    row_norm_aug,
    fit_intercept,
    loss,
    clip_norm,
    coef,
    intercept,
    parallel=None,
):
    """The clipped gradient sum and the Hessian sum at the same point, in one pass over dense X.

    Returns ``(gcoef, gint, n_bad, H)``: ``(gcoef, gint, n_bad)`` as
    :func:`skdpgd._compute.kernels.dense_grad_sum` (the same kernel, so the same terms: each of norm
    ``<= clip_norm``; rows whose gradient is not finite contribute 0 and are counted) and
    ``H`` as :func:`hessian_sum` (logistic losses). Each sub-block of rows (about
    ``FUSED_BLOCK_ENTRIES`` entries, 2 MB in float64) is read from memory once for its
    gradient and then, from cache, for its Hessian weights; the chunk's outer products follow.
    No kernel beyond those of the two separate sums is compiled. The sums run in an order
    fixed by the shape of X: the same numbers on any number of threads.
    """
    _check_fused_loss(loss)
    n, d = X.shape
    k_out, n_pair, E, P, coef, intercept, buf = _hessian_setup(
        loss, coef, intercept, fit_intercept, n, d
    )
    clip_norm = float(clip_norm)
    par = K.use_parallel(n, d) if parallel is None else bool(parallel)
    totals = [np.zeros((k_out, d)), np.zeros(k_out), 0]

    grad_kernel = K._sum_rows_single if k_out == 1 else K._sum_rows_multi

    def weights(lo, hi):
        W = buf[: hi - lo]

        def call(a, b, gc, gi):
            # the sub-block's gradient (the tiled kernel of dense_grad_sum), then its Hessian
            # weights while its rows are still in cache: one read of X from memory
            bad = grad_kernel(
                X,
                y,
                sample_weight,
                row_scale,
                row_norm_aug,
                K._NO_ROWS,
                lo + a,
                lo + b,
                loss,
                0.0,
                clip_norm,
                coef,
                intercept,
                gc,
                gi,
            )
            _hessian_weights(
                X, row_scale, sample_weight, loss, coef, intercept, lo + a, lo + b, W[a:b]
            )
            return bad

        _fused_weights(hi - lo, d, d, call, k_out, par, totals)
        return W

    def outer(W, lo, hi, a0, a1, H):
        _outer_dense(X, row_scale, W, E, lo, hi, a0, a1, H)

    H = _assemble(_outer_sums(n, P, n_pair, weights, outer, parallel), loss, k_out)
    return totals[0], totals[1], int(totals[2]), H


def grad_hessian_sum_csr(
    data,
    indices,
    indptr,
    n_features,
    y,
    sample_weight,
    row_scale,
    row_norm_aug,
    fit_intercept,
    loss,
    clip_norm,
    coef,
    intercept,
    parallel=None,
):
    """:func:`grad_hessian_sum` for canonical CSR X (data float64, indices and indptr int64)."""
    _check_fused_loss(loss)
    n = indptr.shape[0] - 1
    d = int(n_features)
    k_out, n_pair, E, P, coef, intercept, buf = _hessian_setup(
        loss, coef, intercept, fit_intercept, n, d
    )
    clip_norm = float(clip_norm)
    nnz_work = float(data.shape[0]) * max(1.0, data.shape[0] / max(n, 1)) / 2.0
    if parallel is None:
        parallel = n_pair * nnz_work >= PARALLEL_MIN_WORK
    totals = [np.zeros((k_out, d)), np.zeros(k_out), 0]
    avg_nnz = max(1, data.shape[0] // max(n, 1))

    def weights(lo, hi):
        W = buf[: hi - lo]

        def call(a, b, gc, gi):
            bad = K._sum_rows_csr(
                data,
                indices,
                indptr,
                y,
                sample_weight,
                row_scale,
                row_norm_aug,
                K._NO_ROWS,
                lo + a,
                lo + b,
                loss,
                0.0,
                clip_norm,
                coef,
                intercept,
                gc,
                gi,
            )
            _hessian_weights_csr(
                data,
                indices,
                indptr,
                row_scale,
                sample_weight,
                loss,
                coef,
                intercept,
                lo + a,
                lo + b,
                W[a:b],
            )
            return bad

        _fused_weights(hi - lo, d, avg_nnz, call, k_out, bool(parallel), totals)
        return W

    def outer(W, lo, hi, a0, a1, H):
        _outer_csr(data, indices, indptr, d, row_scale, W, E, lo, hi, a0, a1, H)

    H = _assemble(_outer_sums(n, P, n_pair, weights, outer, parallel, panels=False), loss, k_out)
    return totals[0], totals[1], int(totals[2]), H

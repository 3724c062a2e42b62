"""Numba kernels: pure functions of arrays and scalars.

Nothing here knows about epsilon or delta. A kernel receives, for every step, the standard
deviation of the Gaussian noise to add to the *sum* of per-example gradients, and it enforces
the one property the accounting relies on:

    every example's contribution to that sum has L2 norm <= clip_norm.

Hence the sum has L2 sensitivity ``2 * clip_norm`` between datasets that differ by replacing
one example, and ``clip_norm`` between datasets that differ by adding or removing one. Each
contribution is ``w_i * clip(grad l(theta; x~_i, y_i))`` with ``w_i`` in [0, 1] (checked by the
estimators), ``x~_i`` the row scaled to norm <= data_norm (and augmented by 1 for an
intercept), and the clip is a per-example rescaling computed in closed form: for a linear
model the gradient is ``l'(z_i) x~_i`` so its norm is ``||l'(z_i)|| ||x~_i||``.

Everything the kernel does after adding the noise (dividing by N, the L2 penalty, momentum,
step sizes) is post-processing of the noisy sum.

Linear models only need ``z_i = x~_i . theta`` and ``l'(z_i)``; one step reads each row once,
computing the dot product and then accumulating ``l'(z_i) x~_i`` while the row is in cache.
"""

import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import config as _numba_config
from ._jit import njit

# Loss codes shared with skdpgd.losses (full batch: 0-2; minibatch-only losses: 3 and up).
LOSS_LOGISTIC = 0  # binary log-loss, y in {-1, +1}
LOSS_MULTINOMIAL = 1  # softmax cross-entropy, y = class index
LOSS_SQUARED = 2  # (z - y)^2 / 2
LOSS_HINGE = 3  # max(0, 1 - y z)
LOSS_MODIFIED_HUBER = 4  # smoothed hinge (Zhang 2004)
LOSS_SQUARED_HINGE = 5  # max(0, 1 - y z)^2
LOSS_HUBER = 6  # Huber in the residual with threshold `param`


def row_clip_factors(X, data_norm, fit_intercept, chunk=8192):
    """Per-row scale ``s_i = min(1, data_norm / ||x_i||)`` and augmented norm ``||x~_i||``.

    Plain numpy over row chunks (no copy of X). Rows whose squared norm overflows (entries
    near 1e300) are recomputed after dividing by their largest entry, so that they are
    clipped to ``data_norm`` instead of being zeroed.
    """
    n = X.shape[0]
    norms = np.empty(n)
    for start in range(0, n, chunk):
        block = X[start:start + chunk]
        nb = np.sqrt(np.einsum("ij,ij->i", block, block))
        bad = ~np.isfinite(nb) | (nb > 1e150)
        if np.any(bad):
            rows = block[bad]
            m = np.max(np.abs(rows), axis=1)
            nb[bad] = m * np.sqrt(np.einsum("ij,ij->i", rows / m[:, None], rows / m[:, None]))
        norms[start:start + chunk] = nb
    with np.errstate(divide="ignore"):
        scale = np.where(norms > data_norm, data_norm / np.where(norms > 0, norms, 1.0), 1.0)
    clipped = np.minimum(norms, data_norm)
    aug = np.sqrt(clipped * clipped + (1.0 if fit_intercept else 0.0))
    return scale, aug


@njit
def loss_derivative(loss, z, yi, param, out):
    """Write ``dl/dz`` (one entry per output) for one example into ``out``."""
    if loss == LOSS_LOGISTIC:
        t = yi * z[0]
        if t > 0.0:
            e = math.exp(-t)
            out[0] = -yi * e / (1.0 + e)
        else:
            out[0] = -yi / (1.0 + math.exp(t))
    elif loss == LOSS_MULTINOMIAL:
        k_out = z.shape[0]
        m = z[0]
        for k in range(1, k_out):
            if z[k] > m:
                m = z[k]
        tot = 0.0
        for k in range(k_out):
            out[k] = math.exp(z[k] - m)
            tot += out[k]
        c = int(yi)
        for k in range(k_out):
            out[k] = out[k] / tot
        out[c] -= 1.0
    elif loss == LOSS_SQUARED:
        out[0] = z[0] - yi
    elif loss == LOSS_HINGE:
        out[0] = -yi if yi * z[0] < 1.0 else 0.0
    elif loss == LOSS_MODIFIED_HUBER:
        t = yi * z[0]
        if t >= 1.0:
            out[0] = 0.0
        elif t >= -1.0:
            out[0] = -2.0 * yi * (1.0 - t)
        else:
            out[0] = -4.0 * yi
    elif loss == LOSS_SQUARED_HINGE:
        t = yi * z[0]
        out[0] = -2.0 * yi * (1.0 - t) if t < 1.0 else 0.0
    elif loss == LOSS_HUBER:
        r = z[0] - yi
        if r > param:
            out[0] = param
        elif r < -param:
            out[0] = -param
        else:
            out[0] = r
    else:  # unknown code: estimators never pass one; a NaN makes it visible
        out[0] = np.nan


@njit
def loss_value(loss, z, yi, param, clip_threshold):
    """Value of the (clipped) loss for one example.

    ``clip_threshold`` is ``clip_norm / ||x~_i||``: for the squared loss, clipping the
    gradient at that threshold in the residual is exactly a Huber loss, whose value is
    returned here so that value and clipped gradient belong to the same objective.
    """
    if loss == LOSS_LOGISTIC:
        t = yi * z[0]
        if t > 0.0:
            return math.log1p(math.exp(-t))
        return -t + math.log1p(math.exp(t))
    elif loss == LOSS_MULTINOMIAL:
        k_out = z.shape[0]
        m = z[0]
        for k in range(1, k_out):
            if z[k] > m:
                m = z[k]
        tot = 0.0
        for k in range(k_out):
            tot += math.exp(z[k] - m)
        return m + math.log(tot) - z[int(yi)]
    elif loss == LOSS_SQUARED:
        r = abs(z[0] - yi)
        if r <= clip_threshold:
            return 0.5 * r * r
        return clip_threshold * r - 0.5 * clip_threshold * clip_threshold
    return np.nan  # no value for this loss code (the solver only uses codes 0-2)


# ---------------------------------------------------------------------------------------------
# Summing clipped gradients, one tile of rows at a time
# ---------------------------------------------------------------------------------------------
#
# A step's work is split in three stages per tile of rows that fits in L1 (``TILE_BYTES``):
# (1) the margins ``z_i = s_i x_i . theta + b``, four rows at a time (vectorised dot products),
# (2) the derivatives and clip factors of the whole tile as flat loops without branches inside
# (they vectorise, exponential included), (3) ``sum_i f_i s_i x_i``, four rows at a time, while
# the tile is still in L1. So X is read once from memory per step, and nothing is called per row.

#: Bytes of X per tile (L1 is 32 KiB); a tile has between 4 and ``TILE_MAX`` rows.
TILE_BYTES = 16384
TILE_MAX = 256

# Flags of the row-summing kernels: reassociation lets LLVM vectorise the dot products. No flag
# that assumes finite values (an overflowing exponential must stay an infinity).
_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}
# Flags of the derivative stage: no reassociation, which would fold the rounding trick of the
# exponential, ``(a + R) - R -> a``, and merge the two halves of ln 2.
_EXACT = {"contract"}

# exp(u) = 2^k e^x with k = round(u / ln 2) and |x| <= ln(2) / 2 (Cody and Waite).
_LOG2E = 1.4426950408889634
_ROUND = 6755399441055744.0  # 1.5 * 2^52: u + _ROUND holds round(u) in its low mantissa bits
_ROUND_BITS = 0x4338000000000000  # the int64 bits of _ROUND
_LN2_HI = 0.6931471803691238  # ln 2 = _LN2_HI + _LN2_LO; k * _LN2_HI is exact for |k| < 2^20
_LN2_LO = 1.9082149292705877e-10
_EXP_ARG_MAX = 708.0  # arguments are clamped to +-708, where e^u and 2^k are normal numbers
# Taylor coefficients 1/n!, n = 2..12: the remainder on |x| <= ln(2)/2 is below 2.5e-16 relative.
_C2 = 1.0 / 2.0
_C3 = 1.0 / 6.0
_C4 = 1.0 / 24.0
_C5 = 1.0 / 120.0
_C6 = 1.0 / 720.0
_C7 = 1.0 / 5040.0
_C8 = 1.0 / 40320.0
_C9 = 1.0 / 362880.0
_C10 = 1.0 / 3628800.0
_C11 = 1.0 / 39916800.0
_C12 = 1.0 / 479001600.0


def tile_rows(n_features):
    """Rows per tile for ``n_features`` columns (a multiple of 4 in [4, TILE_MAX])."""
    return min(TILE_MAX, max(4, TILE_BYTES // (8 * max(n_features, 1)) // 4 * 4))


@njit(fastmath=_EXACT)
def _tile_factors(loss, param, clip_norm, nb, n_out, Z, yt, wt, at, F, U, P, Pbits):
    """``F[r] = w_r min(1, clip_norm / ||g_r||) l'(Z[r])`` for the ``nb`` rows of a tile.

    Returns the number of rows whose gradient norm was not finite (their F is 0).

    Row r's margins and factors are ``Z[r*n_out : (r+1)*n_out]`` and ``F[...]`` (flat);
    ``yt``, ``wt``, ``at`` hold the rows' labels, weights and augmented norms. Row r's
    gradient is ``l'(z_r) x~_r``, so ``||g_r|| = ||l'(z_r)|| at[r]``, and the contribution
    ``F[r] x~_r`` has norm ``<= wt[r] * clip_norm``: the clip uses the very values of F that
    are accumulated. ``U``, ``P`` (and ``Pbits``, an int64 view of ``P``) are scratch.
    Losses other than the multinomial need ``n_out == 1``; unknown codes give NaN.
    """
    if loss == LOSS_LOGISTIC or loss == LOSS_MULTINOMIAL:
        m = nb * n_out
        if loss == LOSS_LOGISTIC:
            for r in range(nb):
                U[r] = yt[r] * Z[r]
        else:
            for r in range(nb):
                mx = Z[r * n_out]
                for k in range(1, n_out):
                    v = Z[r * n_out + k]
                    mx = v if v > mx else mx
                for k in range(n_out):
                    U[r * n_out + k] = Z[r * n_out + k] - mx
        # U <- exp(U), branch free: the three loops vectorise (a NaN stays a NaN)
        for p in range(m):
            u = U[p]
            u = _EXP_ARG_MAX if u > _EXP_ARG_MAX else u
            u = -_EXP_ARG_MAX if u < -_EXP_ARG_MAX else u
            kr = u * _LOG2E + _ROUND
            kf = kr - _ROUND
            x = (u - kf * _LN2_HI) - kf * _LN2_LO
            U[p] = 1.0 + x * (1.0 + x * (_C2 + x * (_C3 + x * (_C4 + x * (_C5 + x * (
                _C6 + x * (_C7 + x * (_C8 + x * (_C9 + x * (_C10 + x * (
                    _C11 + x * _C12)))))))))))
            P[p] = kr
        for p in range(m):
            Pbits[p] = (Pbits[p] - (_ROUND_BITS - 1023)) << 52  # the bits of 2^k
        for p in range(m):
            U[p] *= P[p]
        if loss == LOSS_LOGISTIC:
            # -y / (1 + e^{yz}): an infinite exponential gives -0, no branch needed
            for r in range(nb):
                F[r] = -yt[r] / (1.0 + U[r])
        else:
            for r in range(nb):
                tot = 0.0
                for k in range(n_out):
                    tot += U[r * n_out + k]
                c = int(yt[r])
                for k in range(n_out):
                    F[r * n_out + k] = U[r * n_out + k] / tot - (1.0 if k == c else 0.0)
    elif n_out != 1:
        for p in range(nb * n_out):
            F[p] = np.nan
    elif loss == LOSS_SQUARED:
        for r in range(nb):
            F[r] = Z[r] - yt[r]
    elif loss == LOSS_HINGE:
        for r in range(nb):
            F[r] = -yt[r] if yt[r] * Z[r] < 1.0 else 0.0
    elif loss == LOSS_MODIFIED_HUBER:
        for r in range(nb):
            t = yt[r] * Z[r]
            v = -2.0 * yt[r] * (1.0 - t) if t >= -1.0 else -4.0 * yt[r]
            F[r] = v if t < 1.0 else 0.0
    elif loss == LOSS_SQUARED_HINGE:
        for r in range(nb):
            t = yt[r] * Z[r]
            F[r] = -2.0 * yt[r] * (1.0 - t) if t < 1.0 else 0.0
    elif loss == LOSS_HUBER:
        for r in range(nb):
            v = Z[r] - yt[r]
            v = param if v > param else v
            F[r] = -param if v < -param else v
    else:
        for r in range(nb):
            F[r] = np.nan
    # per-example clipping, in closed form. A gradient whose norm is not finite (NaN or
    # infinite margins, e.g. from a diverging step size) contributes 0 and is counted: a NaN
    # would pass ``g > clip_norm`` and an unbounded term would break the sensitivity.
    bad = 0
    if n_out == 1:
        for r in range(nb):
            dz = F[r]
            g = abs(dz) * at[r]
            if not math.isfinite(g):
                F[r] = 0.0
                bad += 1
                continue
            c = wt[r] * (clip_norm / g) if g > clip_norm else wt[r]
            F[r] = c * dz
    else:
        for r in range(nb):
            nrm2 = 0.0
            for k in range(n_out):
                nrm2 += F[r * n_out + k] * F[r * n_out + k]
            g = math.sqrt(nrm2) * at[r]
            if not math.isfinite(g):
                for k in range(n_out):
                    F[r * n_out + k] = 0.0
                bad += 1
                continue
            c = wt[r] * (clip_norm / g) if g > clip_norm else wt[r]
            for k in range(n_out):
                F[r * n_out + k] = c * F[r * n_out + k]
    return bad


@njit(fastmath=_FASTMATH)
def _sum_rows(X, y, sample_weight, row_scale, row_norm_aug, rows, lo, hi, loss, param,
              clip_norm, coef, intercept, gcoef, gint):
    """``sum_p w_i clip(grad_i)`` over ``i = rows[p]``, ``lo <= p < hi`` (``i = p`` if ``rows``
    is empty), written into (gcoef, gint). Each term has norm <= clip_norm."""
    n_out, d = coef.shape
    direct = rows.shape[0] == 0
    tile = min(TILE_MAX, max(4, TILE_BYTES // (8 * max(d, 1)) // 4 * 4))
    Z = np.empty(tile * n_out)
    F = np.empty(tile * n_out)
    U = np.empty(tile * n_out)
    P = np.empty(tile * n_out)
    Pbits = P.view(np.int64)
    idx = np.empty(tile, np.int64)
    yb = np.empty(tile)
    wb = np.empty(tile)
    ab = np.empty(tile)
    sb = np.empty(tile)
    for k in range(n_out):
        for j in range(d):
            gcoef[k, j] = 0.0
        gint[k] = 0.0
    bad = 0
    for t0 in range(lo, hi, tile):
        nb = min(tile, hi - t0)
        if direct:
            for r in range(nb):
                idx[r] = t0 + r
            yt = y[t0:t0 + nb]
            wt = sample_weight[t0:t0 + nb]
            at = row_norm_aug[t0:t0 + nb]
            st = row_scale[t0:t0 + nb]
        else:
            for r in range(nb):
                i = rows[t0 + r]
                idx[r] = i
                yb[r] = y[i]
                wb[r] = sample_weight[i]
                ab[r] = row_norm_aug[i]
                sb[r] = row_scale[i]
            yt = yb
            wt = wb
            at = ab
            st = sb
        # (1) margins, four rows at a time
        for k in range(n_out):
            ck = coef[k]
            bk = intercept[k]
            r = 0
            while r + 4 <= nb:
                i0 = idx[r]
                i1 = idx[r + 1]
                i2 = idx[r + 2]
                i3 = idx[r + 3]
                a0 = 0.0
                a1 = 0.0
                a2 = 0.0
                a3 = 0.0
                for j in range(d):
                    c = ck[j]
                    a0 += X[i0, j] * c
                    a1 += X[i1, j] * c
                    a2 += X[i2, j] * c
                    a3 += X[i3, j] * c
                Z[r * n_out + k] = st[r] * a0 + bk
                Z[(r + 1) * n_out + k] = st[r + 1] * a1 + bk
                Z[(r + 2) * n_out + k] = st[r + 2] * a2 + bk
                Z[(r + 3) * n_out + k] = st[r + 3] * a3 + bk
                r += 4
            while r < nb:
                i0 = idx[r]
                a0 = 0.0
                for j in range(d):
                    a0 += X[i0, j] * ck[j]
                Z[r * n_out + k] = st[r] * a0 + bk
                r += 1
        # (2) derivatives and clip factors
        bad += _tile_factors(loss, param, clip_norm, nb, n_out, Z, yt, wt, at, F, U, P, Pbits)
        # (3) accumulate, four rows at a time
        for k in range(n_out):
            gk = gcoef[k]
            gi = 0.0
            r = 0
            while r + 4 <= nb:
                f0 = F[r * n_out + k]
                f1 = F[(r + 1) * n_out + k]
                f2 = F[(r + 2) * n_out + k]
                f3 = F[(r + 3) * n_out + k]
                gi += (f0 + f1) + (f2 + f3)
                f0 *= st[r]
                f1 *= st[r + 1]
                f2 *= st[r + 2]
                f3 *= st[r + 3]
                if f0 != 0.0 or f1 != 0.0 or f2 != 0.0 or f3 != 0.0:
                    i0 = idx[r]
                    i1 = idx[r + 1]
                    i2 = idx[r + 2]
                    i3 = idx[r + 3]
                    for j in range(d):
                        gk[j] += (f0 * X[i0, j] + f1 * X[i1, j]) + (f2 * X[i2, j]
                                                                    + f3 * X[i3, j])
                r += 4
            while r < nb:
                f0 = F[r * n_out + k]
                gi += f0
                f0 *= st[r]
                if f0 != 0.0:
                    i0 = idx[r]
                    for j in range(d):
                        gk[j] += f0 * X[i0, j]
                r += 1
            gint[k] += gi
    return bad


@njit(fastmath=_FASTMATH)
def _sum_rows_csr(data, indices, indptr, y, sample_weight, row_scale, row_norm_aug, rows, lo, hi,
                  loss, param, clip_norm, coef, intercept, gcoef, gint):
    """:func:`_sum_rows` for X in CSR form (canonical: sorted indices, no duplicates)."""
    n_out, d = coef.shape
    direct = rows.shape[0] == 0
    tile = TILE_MAX
    Z = np.empty(tile * n_out)
    F = np.empty(tile * n_out)
    U = np.empty(tile * n_out)
    P = np.empty(tile * n_out)
    Pbits = P.view(np.int64)
    idx = np.empty(tile, np.int64)
    yb = np.empty(tile)
    wb = np.empty(tile)
    ab = np.empty(tile)
    sb = np.empty(tile)
    for k in range(n_out):
        for j in range(d):
            gcoef[k, j] = 0.0
        gint[k] = 0.0
    bad = 0
    for t0 in range(lo, hi, tile):
        nb = min(tile, hi - t0)
        if direct:
            for r in range(nb):
                idx[r] = t0 + r
            yt = y[t0:t0 + nb]
            wt = sample_weight[t0:t0 + nb]
            at = row_norm_aug[t0:t0 + nb]
            st = row_scale[t0:t0 + nb]
        else:
            for r in range(nb):
                i = rows[t0 + r]
                idx[r] = i
                yb[r] = y[i]
                wb[r] = sample_weight[i]
                ab[r] = row_norm_aug[i]
                sb[r] = row_scale[i]
            yt = yb
            wt = wb
            at = ab
            st = sb
        for r in range(nb):
            i = idx[r]
            for k in range(n_out):
                acc = 0.0
                for p in range(indptr[i], indptr[i + 1]):
                    acc += data[p] * coef[k, indices[p]]
                Z[r * n_out + k] = st[r] * acc + intercept[k]
        bad += _tile_factors(loss, param, clip_norm, nb, n_out, Z, yt, wt, at, F, U, P, Pbits)
        for r in range(nb):
            i = idx[r]
            for k in range(n_out):
                f = F[r * n_out + k]
                fs = f * st[r]
                if fs != 0.0:
                    for p in range(indptr[i], indptr[i + 1]):
                        gcoef[k, indices[p]] += fs * data[p]
                gint[k] += f
    return bad


@njit
def _noisy_update(gcoef, gint, std, n_norm, alpha, eta, momentum, beta_pow, fit_intercept,
                  coef, intercept, vcoef, vint, gen):
    """Add the noise to the block sums, then take one (momentum) step: post-processing.

    ``g = (sum_blocks S + N(0, std^2)) / n_norm + alpha * w``; ``v = beta v + (1 - beta) g``;
    ``theta -= eta * v / (1 - beta^t)`` with ``beta_pow = beta^t``. Blocks are added in
    order, so the result does not depend on how they were computed.
    """
    n_blocks, n_out, d = gcoef.shape
    corr = 1.0 - beta_pow
    for k in range(n_out):
        for j in range(d):
            g = 0.0
            for c in range(n_blocks):
                g += gcoef[c, k, j]
            if std > 0.0:
                g += std * gen.standard_normal()
            g = g / n_norm + alpha * coef[k, j]
            vcoef[k, j] = momentum * vcoef[k, j] + (1.0 - momentum) * g
            coef[k, j] -= eta * vcoef[k, j] / corr
        if fit_intercept:
            g = 0.0
            for c in range(n_blocks):
                g += gint[c, k]
            if std > 0.0:
                g += std * gen.standard_normal()
            g = g / n_norm
            vint[k] = momentum * vint[k] + (1.0 - momentum) * g
            intercept[k] -= eta * vint[k] / corr


# ---------------------------------------------------------------------------------------------
# Full-batch gradient descent
# ---------------------------------------------------------------------------------------------

#: Below this many matrix entries a step runs on one thread. A threaded step costs two kernel
#: dispatches and a hand-off between threads (~0.1 ms, much more when other processes keep the
#: cores busy), so it only pays off once a serial step takes about half a millisecond (measured
#: on an idle 2-core machine: 1e4 x 100 takes 500 us serial, 360 us on two threads; 5e3 x 100
#: 202 us and 211 us; benchmarks/bench_step.py --detail times both paths).
PARALLEL_MIN_ENTRIES = 1_000_000
#: Rows of X are summed in blocks of at least this many entries (at most MAX_ROW_BLOCKS blocks).
BLOCK_MIN_ENTRIES = 100_000
MAX_ROW_BLOCKS = 64


def n_row_blocks(n_samples, n_features):
    """Row blocks a step is split into, fixed by the data shape and never by the thread count,
    so a fit gives the same numbers on any number of threads, serial or parallel."""
    return int(min(MAX_ROW_BLOCKS, max(1, n_samples * n_features // BLOCK_MIN_ENTRIES)))


def n_threads():
    """Threads a parallel step uses: numba's thread count (``NUMBA_NUM_THREADS``)."""
    return max(1, int(_numba_config.NUMBA_NUM_THREADS))


def use_parallel(n_samples, n_features):
    """Whether :func:`run_gd_full_batch` runs the parallel kernel (same numbers either way)."""
    return (n_threads() > 1 and n_samples * n_features >= PARALLEL_MIN_ENTRIES
            and n_row_blocks(n_samples, n_features) > 1)


@njit(nogil=True)
def _block_sums(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm, coef,
                intercept, gcoef, gint, c0, c1):
    """Row blocks ``c0 <= c < c1`` of a step: ``gcoef[c], gint[c] = sum_{i in block c}
    w_i clip(grad_i)`` (:func:`_sum_rows`; each term has norm <= clip_norm). Block c holds
    rows ``c n / B <= i < (c + 1) n / B`` with ``B = gcoef.shape[0]``. Runs without the GIL,
    so threads can sum disjoint ranges of blocks at the same time."""
    n = X.shape[0]
    n_blocks = gcoef.shape[0]
    rows = np.empty(0, np.int64)
    bad = 0
    for c in range(c0, c1):
        bad += _sum_rows(X, y, sample_weight, row_scale, row_norm_aug, rows, c * n // n_blocks,
                         (c + 1) * n // n_blocks, loss, param, clip_norm, coef, intercept,
                         gcoef[c], gint[c])
    return bad


@njit
def _gd_serial(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm,
               fit_intercept, alpha, step_sizes, noise_std, momentum, coef0, intercept0,
               n_blocks, gen):
    """Full-batch DP gradient descent on one thread, all T steps in compiled code.

    Step t releases ``S_t = sum_i w_i clip(grad_i(theta_t)) + N(0, noise_std[t]^2 I)``:
    each term has norm <= clip_norm, so the sum has sensitivity 2 clip_norm (replace-one)
    or clip_norm (add/remove-one). Then, as post-processing, ``g_t = S_t / n + alpha * w``
    (intercept not penalised) and, with momentum beta (Hong et al., Eq. 3, bias-corrected):
    ``v_t = beta v_{t-1} + (1 - beta) g_t``, ``theta_{t+1} = theta_t - step_t v_t / (1 - beta^t)``.
    ``momentum = 0`` is plain gradient descent. The rows are summed in ``n_blocks`` blocks
    (as the parallel kernel does). Returns the last iterate (coef, intercept).
    """
    n, d = X.shape
    n_out = coef0.shape[0]
    coef = coef0.copy()
    intercept = intercept0.copy()
    gcoef = np.zeros((n_blocks, n_out, d))
    gint = np.zeros((n_blocks, n_out))
    vcoef = np.zeros((n_out, d))
    vint = np.zeros(n_out)
    rows = np.empty(0, np.int64)
    beta_pow = 1.0
    for t in range(step_sizes.shape[0]):
        # the loop of _block_sums, written out: one compiled layer less to build on first use
        for c in range(n_blocks):
            _sum_rows(X, y, sample_weight, row_scale, row_norm_aug, rows, c * n // n_blocks,
                      (c + 1) * n // n_blocks, loss, param, clip_norm, coef, intercept,
                      gcoef[c], gint[c])
        beta_pow *= momentum
        _noisy_update(gcoef, gint, noise_std[t], float(n), alpha, step_sizes[t], momentum,
                      beta_pow, fit_intercept, coef, intercept, vcoef, vint, gen)
    return coef, intercept


_POOL = None
_POOL_LOCK = threading.Lock()


def _thread_pool():
    """One pool of ``n_threads() - 1`` workers, made on first use (the caller is the last)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max(1, n_threads() - 1), thread_name_prefix="skdpgd")
        return _POOL


def gd_full_batch_parallel(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm,
                           fit_intercept, alpha, step_sizes, noise_std, momentum, coef0,
                           intercept0, n_blocks, gen):
    """:func:`_gd_serial` with the ``n_blocks`` row blocks of each step summed by several threads.

    Each thread runs the compiled :func:`_block_sums` (GIL released) on its own contiguous range
    of blocks; the step waits for all of them, then :func:`_noisy_update` adds the block sums in
    block order and the noise. So the result does not depend on the thread count and equals
    the serial kernel's with the same ``n_blocks``. Same release, same sensitivity. The loop
    over steps runs in Python (two compiled calls per step), which is negligible at the sizes
    where this kernel is used, and it needs no compilation beyond the serial kernel's parts.
    """
    n, d = X.shape
    n_out = coef0.shape[0]
    coef = np.array(coef0, dtype=np.float64)  # copies, C order, as coef0.copy() in _gd_serial
    intercept = np.array(intercept0, dtype=np.float64)
    gcoef = np.zeros((n_blocks, n_out, d))
    gint = np.zeros((n_blocks, n_out))
    vcoef = np.zeros((n_out, d))
    vint = np.zeros(n_out)
    k = max(1, min(n_threads(), n_blocks))
    ranges = [(r * n_blocks // k, (r + 1) * n_blocks // k) for r in range(k)]
    pool = _thread_pool() if k > 1 else None
    common = (X, y, sample_weight, row_scale, row_norm_aug, int(loss), float(param),
              float(clip_norm), coef, intercept, gcoef, gint)
    fit_intercept, alpha, momentum = bool(fit_intercept), float(alpha), float(momentum)
    beta_pow = 1.0
    for t in range(step_sizes.shape[0]):
        futures = [pool.submit(_block_sums, *common, c0, c1) for c0, c1 in ranges[1:]]
        try:
            _block_sums(*common, ranges[0][0], ranges[0][1])
        finally:
            for f in futures:
                f.result()  # every block is written before the update reads them
        beta_pow *= momentum
        _noisy_update(gcoef, gint, float(noise_std[t]), float(n), alpha, float(step_sizes[t]),
                      momentum, beta_pow, fit_intercept, coef, intercept, vcoef, vint, gen)
    return coef, intercept


def gd_full_batch(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm,
                  fit_intercept, alpha, step_sizes, noise_std, momentum, coef0, intercept0, gen,
                  n_blocks=1):
    """Full-batch DP gradient descent on one thread (see :func:`_gd_serial`)."""
    return _gd_serial(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm,
                      fit_intercept, alpha, step_sizes, noise_std, momentum, coef0, intercept0,
                      n_blocks, gen)


def run_gd_full_batch(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm,
                      fit_intercept, alpha, step_sizes, noise_std, momentum, coef0, intercept0,
                      gen):
    """Full-batch DP-GD: the serial or the parallel kernel by the size of X (same numbers)."""
    n, d = X.shape
    blocks = n_row_blocks(n, d)
    args = (X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm, fit_intercept,
            alpha, step_sizes, noise_std, momentum, coef0, intercept0, blocks, gen)
    if use_parallel(n, d):
        return gd_full_batch_parallel(*args)
    return _gd_serial(*args)


@njit
def objective_and_gradient(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm,
                           fit_intercept, alpha, alpha_intercept, coef, intercept, gcoef, gint):
    """Exact regularised objective and its gradient (no noise), for the output-perturbation solver.

    ``F = (1/n) sum_i w_i l_clip(theta; x~_i, y_i) + alpha/2 ||coef||^2 + alpha_intercept/2 ||b||^2``
    where ``l_clip`` is the loss whose gradient is the clipped per-example gradient.
    Returns F; the gradient is written into (gcoef, gint).
    """
    n, d = X.shape
    n_out = coef.shape[0]
    z = np.zeros(n_out)
    dz = np.zeros(n_out)
    for k in range(n_out):
        for j in range(d):
            gcoef[k, j] = 0.0
        gint[k] = 0.0
    total = 0.0
    for i in range(n):
        s = row_scale[i]
        for k in range(n_out):
            acc = 0.0
            for j in range(d):
                acc += X[i, j] * coef[k, j]
            z[k] = s * acc + intercept[k]
        loss_derivative(loss, z, y[i], param, dz)
        nrm2 = 0.0
        for k in range(n_out):
            nrm2 += dz[k] * dz[k]
        gnorm = math.sqrt(nrm2) * row_norm_aug[i]
        c = sample_weight[i]
        if gnorm > clip_norm:
            c = c * (clip_norm / gnorm)
        thr = clip_norm / row_norm_aug[i] if row_norm_aug[i] > 0.0 else np.inf
        total += sample_weight[i] * loss_value(loss, z, y[i], param, thr)
        for k in range(n_out):
            f = c * dz[k]
            for j in range(d):
                gcoef[k, j] += f * s * X[i, j]
            gint[k] += f
    total /= n
    for k in range(n_out):
        for j in range(d):
            gcoef[k, j] = gcoef[k, j] / n + alpha * coef[k, j]
            total += 0.5 * alpha * coef[k, j] * coef[k, j]
        if fit_intercept:
            gint[k] = gint[k] / n + alpha_intercept * intercept[k]
            total += 0.5 * alpha_intercept * intercept[k] * intercept[k]
        else:
            gint[k] = 0.0
    return total

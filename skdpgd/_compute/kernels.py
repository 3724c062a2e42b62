"""Numba kernels: pure functions of arrays and scalars.

Nothing here knows about epsilon or delta. The row kernels compute the *sum* of clipped
per-example gradients (:func:`_noisy_update` adds the Gaussian noise whose standard deviation
it is given, then steps), and they enforce the one property the accounting relies on:

    every example's contribution to that sum has L2 norm <= clip_norm.

Hence the sum has L2 sensitivity ``2 * clip_norm`` between datasets that differ by replacing
one example, and ``clip_norm`` between datasets that differ by adding or removing one. Each
contribution is ``w_i * clip(grad l(theta; x~_i, y_i))`` with ``w_i`` in [0, 1] (checked by the
estimators), ``x~_i`` the row scaled to norm <= data_norm (and augmented by 1 for an
intercept), and the clip is a per-example rescaling computed in closed form: for a linear
model the gradient is ``l'(z_i) x~_i`` so its norm is ``||l'(z_i)|| ||x~_i||``.

Everything done after adding the noise (dividing by N, the L2 penalty, momentum, step sizes)
is post-processing of the noisy sum.

Linear models only need ``z_i = x~_i . theta`` and ``l'(z_i)``; one sum reads each row once,
computing the dot product and then accumulating ``l'(z_i) x~_i`` while the row is in cache.

Kernels are compiled on first use (and cached); each fit compiles only the ones it calls. The
Python drivers here (:func:`dense_grad_sum`) split the rows into blocks fixed by the shape of X
and hand ranges of blocks to threads; the kernels release the GIL.
"""

import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from llvmlite import ir as llvm_ir
from numba import config as _numba_config
from numba import types
from numba.extending import intrinsic

from .jit import njit
from .secure_random import noisy_value

# Loss codes shared with skdpgd.losses (full batch: 0-2; minibatch-only losses: 3 and up).
LOSS_LOGISTIC = 0  # binary log-loss, y in {-1, +1}
LOSS_MULTINOMIAL = 1  # softmax cross-entropy, y = class index
LOSS_SQUARED = 2  # (z - y)^2 / 2
LOSS_HINGE = 3  # max(0, 1 - y z)
LOSS_MODIFIED_HUBER = 4  # smoothed hinge (Zhang 2004)
LOSS_SQUARED_HINGE = 5  # max(0, 1 - y z)^2
LOSS_HUBER = 6  # Huber in the residual with threshold `param`
LOSS_POISSON = 7  # exp(z) - y z (log link), y >= 0
# K squared hinges, one-vs-rest: output k's target is +1 for class k, -1 otherwise (y = class
# index); each output's derivative is capped at clip_norm / (sqrt(K) ||x~_i||)
LOSS_SQUARED_HINGE_OVR = 8
#: Poisson margins are held at most this before the exponential (finite derivative): e^500 - y
#: exceeds every clipping threshold the kernels can meet, so the clipped gradient is unchanged
POISSON_MAX_MARGIN = 500.0
# Tweedie deviance of power p = `param` in (1, 2] (log link), y >= 0: half the deviance up to
# terms in y alone, l(z) = E(2 - p, z) - y E(1 - p, z) with E(a, z) = (e^{a z} - 1) / a (z at
# a = 0), so l(0) = 0 and l'(z) = e^{(2-p) z} - y e^{(1-p) z}; each exponent is held at most
# POISSON_MAX_MARGIN (as Poisson's margin). Power 1 is LOSS_POISSON.
LOSS_TWEEDIE = 9


def row_norms(X, chunk=8192):
    """L2 norm of each row of dense X without overflow: plain sums of squares, and the rows
    where that is not finite or huge (entries near 1e300) or tiny (entries near 1e-200, whose
    squares underflow) recomputed after dividing by their largest entry. Plain numpy over row
    chunks (no copy of X)."""
    n = X.shape[0]
    norms = np.empty(n)
    for start in range(0, n, chunk):
        block = X[start : start + chunk]
        # float64 whatever the dtype of X (float32 rows are converted exactly, so the clip
        # holds for the values the kernels read)
        with np.errstate(over="ignore", invalid="ignore"):
            nb = np.sqrt(np.einsum("ij,ij->i", block, block, dtype=np.float64))
        bad = ~((nb <= 1e150) & (nb >= 1e-150))  # zero rows too: their squares may underflow
        if np.any(bad):
            rows = block[bad].astype(np.float64)
            m = np.max(np.abs(rows), axis=1)
            m = np.where(m > 0, m, 1.0)
            with np.errstate(over="ignore"):
                nb[bad] = m * np.sqrt(np.einsum("ij,ij->i", rows / m[:, None], rows / m[:, None]))
        norms[start : start + chunk] = nb
    return norms


def row_clip_factors(X, data_norm, fit_intercept, chunk=8192):
    """Per-row scale ``s_i = min(1, data_norm / ||x_i||)`` and augmented norm ``||x~_i||``.

    The norms come from :func:`row_norms` (no overflow): rows with entries near 1e300 are
    clipped to ``data_norm`` instead of being zeroed. A norm that itself overflows (a row of
    entries near 1.8e308) gives scale 0 here; the backends divide such rows by a power of two
    first (:data:`skdpgd._compute.backends.PRESCALE_NORM`).
    """
    norms = row_norms(X, chunk)
    with np.errstate(divide="ignore"):
        scale = np.where(norms > data_norm, data_norm / np.where(norms > 0, norms, 1.0), 1.0)
    clipped = np.minimum(norms, data_norm)
    with np.errstate(over="ignore"):
        aug = np.sqrt(clipped * clipped + (1.0 if fit_intercept else 0.0))
    return scale, aug


@njit
def dloss(loss, z, yi, param):
    """``dl/dz`` of a single-output loss at margin ``z`` (NaN for the multinomial loss and
    unknown codes: estimators never pass one, and a NaN is counted as a non-finite term)."""
    if loss == LOSS_LOGISTIC:
        # -y / (1 + e^{yz}): an overflowing exponential gives -0, as it should
        return -yi / (1.0 + math.exp(yi * z))
    elif loss == LOSS_SQUARED:
        return z - yi
    elif loss == LOSS_HINGE:
        return -yi if yi * z < 1.0 else 0.0
    elif loss == LOSS_MODIFIED_HUBER:
        t = yi * z
        if t >= 1.0:
            return 0.0
        elif t >= -1.0:
            return -2.0 * yi * (1.0 - t)
        return -4.0 * yi
    elif loss == LOSS_SQUARED_HINGE:
        t = yi * z
        return -2.0 * yi * (1.0 - t) if t < 1.0 else 0.0
    elif loss == LOSS_HUBER:
        r = z - yi
        if r > param:
            return param
        elif r < -param:
            return -param
        return r
    elif loss == LOSS_POISSON:
        return math.exp(min(z, POISSON_MAX_MARGIN)) - yi
    elif loss == LOSS_TWEEDIE:
        return tweedie_derivative(z, yi, param)
    return np.nan


@njit(inline="always")
def tweedie_derivative(z, yi, p):
    """``l'(z) = e^{(2-p) z} - y e^{(1-p) z}`` of :data:`LOSS_TWEEDIE`, each exponent held at
    most :data:`POISSON_MAX_MARGIN` (finite for ``y < 1e90``; non-decreasing in z for
    ``1 <= p <= 2`` and ``y >= 0``, as ``l'' >= 0``)."""
    return math.exp(min((2.0 - p) * z, POISSON_MAX_MARGIN)) - yi * math.exp(
        min((1.0 - p) * z, POISSON_MAX_MARGIN)
    )


@njit
def _expm1_ratio(a, z):
    """``(e^{a z} - 1) / a``, and ``z`` at ``a = 0``."""
    if a == 0.0:
        return z
    return math.expm1(a * z) / a


@njit
def tweedie_value(z, yi, p):
    """``l(z) = E(2 - p, z) - y E(1 - p, z)`` of :data:`LOSS_TWEEDIE` (unclipped)."""
    return _expm1_ratio(2.0 - p, z) - yi * _expm1_ratio(1.0 - p, z)


#: the most halvings of a bracket, and doublings of a step, :func:`tweedie_root` makes
TWEEDIE_ROOT_STEPS = 1100


@njit
def tweedie_root(yi, p, s, z):
    """The margin where :func:`tweedie_derivative` equals ``s``, by bisection of a bracket
    grown by doubling steps from ``z`` (from 0 if z is not finite): l' is non-decreasing, so
    the bracket ``lo <= root <= hi`` holds ``l'(lo) < s <= l'(hi)``; halved until its width is
    within ``4e-16 max(1, |lo|, |hi|)``. Returns ``lo``."""
    c = z if math.isfinite(z) else 0.0
    lo = c
    hi = c
    step = 1.0
    for _ in range(TWEEDIE_ROOT_STEPS):
        if not tweedie_derivative(lo, yi, p) >= s:
            break
        hi = lo
        lo = c - step
        step *= 2.0
    step = 1.0
    for _ in range(TWEEDIE_ROOT_STEPS):
        if tweedie_derivative(hi, yi, p) >= s:
            break
        lo = hi
        hi = c + step
        step *= 2.0
    for _ in range(TWEEDIE_ROOT_STEPS):
        if not hi - lo > 4e-16 * max(1.0, abs(lo), abs(hi)):
            break
        mid = 0.5 * lo + 0.5 * hi
        if not (lo < mid < hi):
            break
        if tweedie_derivative(mid, yi, p) < s:
            lo = mid
        else:
            hi = mid
    return lo


@njit
def tweedie_clipped_value(z, yi, p, t):
    """The Tweedie loss whose derivative is ``l'`` held in ``[-t, t]``: ``l(z)`` where
    ``|l'(z)| <= t``, continued by its tangent of slope ``s = +-t`` from the margin ``z_c``
    where ``l'(z_c) = s`` (:func:`tweedie_root`). At power 2 with ``y = 0``, l' = 1 everywhere:
    clipped everywhere when ``t < 1``, the loss is then ``t z``."""
    d = tweedie_derivative(z, yi, p)
    if d != d:
        return np.nan
    if abs(d) <= t:
        return tweedie_value(z, yi, p)
    s = t if d > 0.0 else -t
    if p == 2.0 and yi == 0.0:  # l' = 1 > t everywhere: the clipped loss is t z
        return t * z
    zc = tweedie_root(yi, p, s, z)
    return tweedie_value(zc, yi, p) + s * (z - zc)


@njit(inline="always")
def ovr_derivative(z, positive, cap):
    """Output k's derivative under the one-vs-rest squared hinge: ``l'(y_k z)`` of the squared
    hinge with ``y_k = +1`` (``positive``: the row's class is k) or -1, held in ``[-cap, cap]``.
    A margin of NaN gives 0 (as :func:`dloss`); an infinite one gives ``-y_k cap``."""
    d = dloss(LOSS_SQUARED_HINGE, z, 1.0 if positive else -1.0, 0.0)
    if d > cap:
        return cap
    if d < -cap:
        return -cap
    return d


@njit
def loss_derivative(loss, z, yi, param, clip_threshold, out):
    """Write ``dl/dz`` (one entry per output) for one example into ``out``.

    The multinomial and the one-vs-rest squared hinge losses have several outputs; any other
    loss with several outputs, and unknown codes, give NaN (a non-finite term: it contributes
    0 and is counted). ``clip_threshold`` is ``clip_norm / ||x~_i||`` (as in
    :func:`loss_value`); only the one-vs-rest squared hinge reads it: each of its K outputs'
    derivatives is capped at ``clip_threshold / sqrt(K)``, so the row's gradient
    ``l' (x) x~_i`` has norm at most ``sqrt(K) (clip_threshold / sqrt(K)) ||x~_i|| =
    clip_norm``, and output k's loss is the binary clipped squared hinge of class k against
    the rest (the K problems stay separate).
    """
    k_out = z.shape[0]
    if loss == LOSS_SQUARED_HINGE_OVR:
        cap = clip_threshold / math.sqrt(k_out)
        c = int(yi)
        for k in range(k_out):
            out[k] = ovr_derivative(z[k], k == c, cap)
    elif loss == LOSS_MULTINOMIAL:
        m = z[0]
        for k in range(1, k_out):
            if z[k] > m:
                m = z[k]
        tot = 0.0
        for k in range(k_out):
            out[k] = math.exp(z[k] - m)
            tot += out[k]
        for k in range(k_out):
            out[k] = out[k] / tot
        c = int(yi)
        out[c] -= 1.0
    else:
        out[0] = dloss(loss, z[0], yi, param) if k_out == 1 else np.nan
        for k in range(1, k_out):
            out[k] = np.nan


@njit
def squared_hinge_value(u, t):
    """The squared hinge at margin ``u = y z`` with its derivative clipped at ``t``:
    ``(1 - u)^2`` for ``u < 1``, continued by its tangent where ``|l'| = 2 (1 - u)`` would
    exceed t (``u < 1 - t / 2``): the loss whose derivative is the clipped one."""
    if u >= 1.0:
        return 0.0
    u0 = 1.0 - 0.5 * t
    if u >= u0:
        return (1.0 - u) * (1.0 - u)
    return 0.25 * t * t + t * (u0 - u)


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
    elif loss == LOSS_HUBER:  # the clip can only lower the threshold
        t = min(param, clip_threshold)
        r = abs(z[0] - yi)
        if r <= t:
            return 0.5 * r * r
        return t * r - 0.5 * t * t
    elif loss == LOSS_SQUARED_HINGE:
        return squared_hinge_value(yi * z[0], clip_threshold)
    elif loss == LOSS_SQUARED_HINGE_OVR:
        # the sum of the K binary losses, each with its derivative capped at t / sqrt(K)
        # (:func:`loss_derivative`)
        k_out = z.shape[0]
        t = clip_threshold / math.sqrt(k_out)
        c = int(yi)
        total = 0.0
        for k in range(k_out):
            total += squared_hinge_value(z[k] if k == c else -z[k], t)
        return total
    elif loss == LOSS_POISSON:
        # e^z - y z, continued by its tangents where |e^z - y| exceeds t: above
        # z_hi = log(y + t), and below z_lo = log(y - t) when y > t
        t = clip_threshold
        zz = z[0]
        if math.isinf(t):
            return math.exp(min(zz, POISSON_MAX_MARGIN)) - yi * zz
        z_hi = math.log(yi + t)
        if zz > z_hi:
            return (yi + t) - yi * z_hi + t * (zz - z_hi)
        if yi > t:
            z_lo = math.log(yi - t)
            if zz < z_lo:
                return (yi - t) - yi * z_lo - t * (zz - z_lo)
        return math.exp(zz) - yi * zz
    elif loss == LOSS_TWEEDIE:
        return tweedie_clipped_value(z[0], yi, param, clip_threshold)
    return np.nan  # no value for this loss code


# ---------------------------------------------------------------------------------------------
# Summing clipped gradients, a tile of rows at a time
# ---------------------------------------------------------------------------------------------
#
# A sum reads each row of X once from memory. Per tile of TILE_ROWS rows: (1) the margins
# ``z_i = s_i x_i . theta + b``, four rows at a time (the four dot products share each load of
# theta); (2) the clipped factors ``f_i = w_i min(1, C / ||g_i||) l'(z_i)`` of the whole tile in
# flat loops (the exponentials of the logistic losses in one branch-free loop that vectorises;
# the other losses one scalar call per row; the clip without a branch); (3)
# ``sum += f_i s_i x_i``, four rows at a time, while the tile is still in L1. The last group of
# four is padded with a copy of a row whose factor is 0, so there is no remainder loop. The
# one-output and the multinomial kernels are separate: a fit compiles only the one it calls,
# each in about a second.

# Flags of the row-summing kernels: reassociation lets LLVM vectorise the dot products. No flag
# that assumes finite values (NaN and infinity checks must stay). They also use numpy's error
# model: a division by zero gives an infinity (``min(1, C / 0) = 1``) instead of raising, and
# the loops that divide vectorise.
_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}


# exp(u) = 2^k e^x with k = round(u / ln 2) and |x| <= ln(2) / 2 (Cody and Waite), for the
# binary logistic loss, whose exponentials are computed a tile at a time so that they vectorise.
_LOG2E = 1.4426950408889634
_ROUND = 6755399441055744.0  # 1.5 * 2^52: u + _ROUND holds round(u) in its low mantissa bits
_ROUND_BITS = 0x4338000000000000  # the int64 bits of _ROUND
_LN2_HI = 0.6931471803691238  # ln 2 = _LN2_HI + _LN2_LO; k * _LN2_HI is exact for |k| < 2^20
_LN2_LO = 1.9082149292705877e-10
_EXP_ARG_MAX = 708.0  # arguments are clamped to +-708, where e^u and 2^k are normal numbers


@intrinsic
def _float_bits(typingctx, x):
    """The int64 with the bits of the float64 ``x`` (a free reinterpretation)."""

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], llvm_ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _bits_float(typingctx, x):
    """The float64 with the bits of the int64 ``x``."""

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], llvm_ir.DoubleType())

    return types.float64(types.int64), codegen


@njit(fastmath={"contract"})
def _exp_tile(U, m):
    """``U[:m] = exp(U[:m])`` in one loop without a branch or a call, so that it vectorises.

    Arguments are clamped to [-708, 708] (the derivatives that use them saturate long
    before); a NaN stays a NaN. Relative error below 5e-16 (Taylor series to degree 12 on
    |x| <= ln(2)/2). ``2^k`` is built from the bits of ``u / ln 2 + 1.5 * 2^52``, whose low
    mantissa bits hold ``round(u / ln 2)``. No reassociation here: it would fold the
    rounding trick ``(a + R) - R -> a`` and merge the two halves of ln 2.
    """
    for p in range(m):
        u = U[p]
        u = _EXP_ARG_MAX if u > _EXP_ARG_MAX else u
        u = -_EXP_ARG_MAX if u < -_EXP_ARG_MAX else u
        kr = u * _LOG2E + _ROUND
        kf = kr - _ROUND
        x = (u - kf * _LN2_HI) - kf * _LN2_LO
        ex = 1.0 + x * (
            1.0
            + x
            * (
                1.0 / 2.0
                + x
                * (
                    1.0 / 6.0
                    + x
                    * (
                        1.0 / 24.0
                        + x
                        * (
                            1.0 / 120.0
                            + x
                            * (
                                1.0 / 720.0
                                + x
                                * (
                                    1.0 / 5040.0
                                    + x
                                    * (
                                        1.0 / 40320.0
                                        + x
                                        * (
                                            1.0 / 362880.0
                                            + x
                                            * (
                                                1.0 / 3628800.0
                                                + x * (1.0 / 39916800.0 + x * (1.0 / 479001600.0))
                                            )
                                        )
                                    )
                                )
                            )
                        )
                    )
                )
            )
        )
        U[p] = ex * _bits_float((_float_bits(kr) - (_ROUND_BITS - 1023)) << 52)


#: Rows per tile of the single-output kernel (its scratch arrays stay in L1).
TILE_ROWS = 64


@njit(fastmath=_FASTMATH, error_model="numpy", nogil=True)
def _sum_rows_single(
    X,
    y,
    sample_weight,
    row_scale,
    row_norm_aug,
    rows,
    lo,
    hi,
    loss,
    param,
    clip_norm,
    coef,
    intercept,
    gcoef,
    gint,
):
    """:func:`_sum_rows` for one output (every loss but the multinomial).

    A tile of rows at a time: (1) the margins, four rows at a time (the four dot products
    share each load of theta); (2) the clipped factors of the whole tile, in flat loops
    (the binary logistic's exponentials vectorise, :func:`_exp_tile`; other losses call
    :func:`dloss` per row); (3) ``sum += f_i s_i x_i``, four rows at a time, while the tile
    is still in L1. The last group of four is padded with copies of the tile's last row whose
    factors are 0 (adding 0 changes nothing), so there is no remainder loop.
    """
    d = coef.shape[1]
    direct = rows.shape[0] == 0
    tile = TILE_ROWS
    idx = np.empty(tile, np.int64)
    Z = np.empty(tile)
    F = np.empty(tile)
    Y = np.empty(tile)
    S = np.empty(tile)
    c0 = coef[0]
    b0 = intercept[0]
    g0 = gcoef[0]
    for j in range(d):
        g0[j] = 0.0
    gi = 0.0
    bad = 0
    for t0 in range(lo, hi, tile):
        nb = min(tile, hi - t0)
        nb4 = (nb + 3) // 4 * 4
        for r in range(nb4):
            q = t0 + min(r, nb - 1)
            i = q if direct else rows[q]
            idx[r] = i
            Y[r] = y[i]
            S[r] = row_scale[i]
        # (1) margins
        for r in range(0, nb4, 4):
            i0 = idx[r]
            i1 = idx[r + 1]
            i2 = idx[r + 2]
            i3 = idx[r + 3]
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for j in range(d):
                c = c0[j]
                a0 += X[i0, j] * c
                a1 += X[i1, j] * c
                a2 += X[i2, j] * c
                a3 += X[i3, j] * c
            Z[r] = a0
            Z[r + 1] = a1
            Z[r + 2] = a2
            Z[r + 3] = a3
        for r in range(nb4):
            Z[r] = S[r] * Z[r] + b0
        # (2) derivatives, then the clip in closed form: the row's contribution F[r] x~_r has
        # norm |F[r]| row_norm_aug <= w clip_norm. A derivative that is not finite (NaN
        # margin; an infinite one gives 0 * inf) leaves F NaN: the row contributes 0 and is
        # counted (a NaN passes every comparison, an unbounded term breaks the sensitivity).
        if loss == LOSS_LOGISTIC:
            for r in range(nb4):
                F[r] = Y[r] * Z[r]
            _exp_tile(F, nb4)
            for r in range(nb4):
                F[r] = -Y[r] / (1.0 + F[r])  # an infinite exponential gives -0
        else:
            for r in range(nb4):
                F[r] = dloss(loss, Z[r], Y[r], param)
        for r in range(nb):
            i = idx[r]
            F[r] = clip_factor(abs(F[r]) * row_norm_aug[i], clip_norm, sample_weight[i]) * F[r]
        for r in range(nb):
            if math.isnan(F[r]):
                F[r] = 0.0
                bad += 1
        for r in range(nb, nb4):
            F[r] = 0.0
        # (3) accumulate
        for r in range(0, nb4, 4):
            f0 = F[r]
            f1 = F[r + 1]
            f2 = F[r + 2]
            f3 = F[r + 3]
            gi += (f0 + f1) + (f2 + f3)
            f0 *= S[r]
            f1 *= S[r + 1]
            f2 *= S[r + 2]
            f3 *= S[r + 3]
            if f0 != 0.0 or f1 != 0.0 or f2 != 0.0 or f3 != 0.0:
                i0 = idx[r]
                i1 = idx[r + 1]
                i2 = idx[r + 2]
                i3 = idx[r + 3]
                for j in range(d):
                    g0[j] += (f0 * X[i0, j] + f1 * X[i1, j]) + (f2 * X[i2, j] + f3 * X[i3, j])
    gint[0] = gi
    return bad


@njit(inline="always")
def clip_factor(norm, clip_norm, weight):
    """``w_i min(1, C / ||g_i||)``: the factor that scales an example's gradient of norm
    ``norm`` to norm at most ``C = clip_norm``, times its weight ``w_i`` in [0, 1] -- the
    sensitivity invariant, written once for every kernel: ``||factor * g_i|| <= w_i C``.

    ``norm <= C`` gives ``w_i`` (``norm = 0``: ``C / 0 = inf``, so a caller either compiles
    with ``error_model="numpy"`` or calls it only when ``norm > C``, which also spares a
    row-at-a-time kernel the division); an infinite norm gives 0; a NaN norm gives ``w_i``
    (callers test for non-finite norms and let such a row contribute 0). Inlined into each
    kernel's IR (``inline="always"``), so it compiles under that kernel's flags.
    """
    return weight * min(1.0, clip_norm / norm)


@njit(inline="always")
def _clip_tile_row(F, o, n_out, nrm2, ai, clip_norm, wi):
    """Clip the derivatives ``F[o:o + n_out]`` of one row (squared norm ``nrm2``, augmented row
    norm ``ai``) in closed form, times the weight: the row's contribution then has norm
    ``<= wi clip_norm``. A norm that is not finite zeroes them; returns 1 then, else 0."""
    g = math.sqrt(nrm2) * ai
    if not math.isfinite(g):
        for k in range(n_out):
            F[o + k] = 0.0
        return 1
    cl = clip_factor(g, clip_norm, wi)
    for k in range(n_out):
        F[o + k] *= cl
    return 0


@njit
def _clip_scale(loss, param, clip_norm, z, yi, wi, ai, dz):
    """Write ``l'(z)`` into ``dz`` and return ``w_i min(1, clip_norm / ||g_i||)`` with
    ``||g_i|| = ||l'(z)|| ai``, or NaN if that norm is not finite."""
    loss_derivative(loss, z, yi, param, clip_norm / ai if ai > 0.0 else np.inf, dz)
    nrm2 = 0.0
    for k in range(dz.shape[0]):
        nrm2 += dz[k] * dz[k]
    g = math.sqrt(nrm2) * ai
    if not math.isfinite(g):
        return np.nan
    # the test spares the division of a row that is not clipped (row-at-a-time kernels)
    return clip_factor(g, clip_norm, wi) if g > clip_norm else wi


@njit(fastmath=_FASTMATH, error_model="numpy", nogil=True)
def _sum_rows_multi(
    X,
    y,
    sample_weight,
    row_scale,
    row_norm_aug,
    rows,
    lo,
    hi,
    loss,
    param,
    clip_norm,
    coef,
    intercept,
    gcoef,
    gint,
):
    """:func:`_sum_rows` for several outputs: the multinomial loss, ``l' = p - e_y``, and the
    one-vs-rest squared hinge (:func:`loss_derivative`).

    Tiles as in :func:`_sum_rows_single`: the margins of each output four rows at a time,
    the softmax of the whole tile (its exponentials vectorise) or the K capped squared-hinge
    derivatives, the clip row by row, then the sums four rows at a time. Any other loss with
    several outputs has no derivative here: its rows count as not finite (and contribute 0).
    """
    n_out, d = coef.shape
    direct = rows.shape[0] == 0
    for k in range(n_out):
        for j in range(d):
            gcoef[k, j] = 0.0
        gint[k] = 0.0
    ovr = loss == LOSS_SQUARED_HINGE_OVR
    if loss != LOSS_MULTINOMIAL and not ovr:
        return max(0, hi - lo)
    # one-vs-rest: each output's |l'_k| <= clip_norm / (sqrt(K) ||x~_i||), so the row's
    # derivative vector has norm <= clip_norm / ||x~_i|| (the clip below then never acts
    # but for rounding; it is what guarantees the bound)
    ovr_norm = clip_norm / math.sqrt(n_out)
    tile = TILE_ROWS
    idx = np.empty(tile, np.int64)
    S = np.empty(tile)
    Z = np.empty(tile * n_out)
    F = np.empty(tile * n_out)
    bad = 0
    for t0 in range(lo, hi, tile):
        nb = min(tile, hi - t0)
        nb4 = (nb + 3) // 4 * 4
        for r in range(nb4):
            q = t0 + min(r, nb - 1)
            i = q if direct else rows[q]
            idx[r] = i
            S[r] = row_scale[i]
        # (1) margins, output by output, four rows at a time
        for k in range(n_out):
            ck = coef[k]
            for r in range(0, nb4, 4):
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
                Z[r * n_out + k] = a0
                Z[(r + 1) * n_out + k] = a1
                Z[(r + 2) * n_out + k] = a2
                Z[(r + 3) * n_out + k] = a3
        if ovr:
            # (2') the K squared-hinge derivatives of the whole tile in one flat loop (it
            # vectorises): F holds each output's target y_k = +-1, then -2 y_k max(0, 1 - y_k z)
            # (0 at a NaN margin, as dloss)
            for r in range(nb4):
                o = r * n_out
                label = int(y[idx[r]])
                for k in range(n_out):
                    Z[o + k] = S[r] * Z[o + k] + intercept[k]
                    F[o + k] = 1.0 if k == label else -1.0
            for p in range(nb4 * n_out):
                yk = F[p]
                v = 1.0 - yk * Z[p]
                v = v if v > 0.0 else 0.0
                F[p] = -2.0 * yk * v
            # each output's derivative capped, then the clip in closed form
            for r in range(nb4):
                o = r * n_out
                if r >= nb:
                    for k in range(n_out):
                        F[o + k] = 0.0
                    continue
                i = idx[r]
                cap = ovr_norm / row_norm_aug[i]  # a zero row: inf (numpy error model)
                nrm2 = 0.0
                for k in range(n_out):
                    v = F[o + k]
                    v = cap if v > cap else v
                    v = -cap if v < -cap else v
                    F[o + k] = v
                    nrm2 += v * v
                bad += _clip_tile_row(
                    F, o, n_out, nrm2, row_norm_aug[i], clip_norm, sample_weight[i]
                )
        else:
            # (2) softmax: margins minus the row's largest (a NaN or infinite margin leaves NaN)
            for r in range(nb4):
                o = r * n_out
                m = -np.inf
                for k in range(n_out):
                    z = S[r] * Z[o + k] + intercept[k]
                    Z[o + k] = z
                    m = z if z > m else m
                for k in range(n_out):
                    F[o + k] = Z[o + k] - m
            _exp_tile(F, nb4 * n_out)
            # l' = p - e_y, clipped in closed form: the row's contribution has norm
            # ||F_r|| row_norm_aug <= w clip_norm; a norm that is not finite gives 0, counted
            for r in range(nb4):
                o = r * n_out
                if r >= nb:
                    for k in range(n_out):
                        F[o + k] = 0.0
                    continue
                i = idx[r]
                tot = 0.0
                for k in range(n_out):
                    tot += F[o + k]
                label = int(y[i])
                nrm2 = 0.0
                for k in range(n_out):
                    v = F[o + k] / tot - (1.0 if k == label else 0.0)
                    F[o + k] = v
                    nrm2 += v * v
                bad += _clip_tile_row(
                    F, o, n_out, nrm2, row_norm_aug[i], clip_norm, sample_weight[i]
                )
        # (3) accumulate, output by output, four rows at a time
        for k in range(n_out):
            gk = gcoef[k]
            gi = 0.0
            for r in range(0, nb4, 4):
                f0 = F[r * n_out + k]
                f1 = F[(r + 1) * n_out + k]
                f2 = F[(r + 2) * n_out + k]
                f3 = F[(r + 3) * n_out + k]
                gi += (f0 + f1) + (f2 + f3)
                f0 *= S[r]
                f1 *= S[r + 1]
                f2 *= S[r + 2]
                f3 *= S[r + 3]
                if f0 != 0.0 or f1 != 0.0 or f2 != 0.0 or f3 != 0.0:
                    i0 = idx[r]
                    i1 = idx[r + 1]
                    i2 = idx[r + 2]
                    i3 = idx[r + 3]
                    for j in range(d):
                        gk[j] += (f0 * X[i0, j] + f1 * X[i1, j]) + (f2 * X[i2, j] + f3 * X[i3, j])
            gint[k] += gi
    return bad


@njit(nogil=True)
def _sum_rows(
    X,
    y,
    sample_weight,
    row_scale,
    row_norm_aug,
    rows,
    lo,
    hi,
    loss,
    param,
    clip_norm,
    coef,
    intercept,
    gcoef,
    gint,
):
    """``sum_p w_i clip(grad_i)`` over ``i = rows[p]``, ``lo <= p < hi`` (``i = p`` if ``rows``
    is empty), written into (gcoef, gint). Each term has norm <= clip_norm.

    Returns the number of rows whose gradient norm was not finite; they contribute 0.
    (Dispatches on the number of outputs; callers that know it call the kernel directly,
    so that only that one is compiled.)
    """
    if coef.shape[0] == 1:
        return _sum_rows_single(
            X,
            y,
            sample_weight,
            row_scale,
            row_norm_aug,
            rows,
            lo,
            hi,
            loss,
            param,
            clip_norm,
            coef,
            intercept,
            gcoef,
            gint,
        )
    return _sum_rows_multi(
        X,
        y,
        sample_weight,
        row_scale,
        row_norm_aug,
        rows,
        lo,
        hi,
        loss,
        param,
        clip_norm,
        coef,
        intercept,
        gcoef,
        gint,
    )


@njit(fastmath=_FASTMATH, nogil=True)
def _sum_rows_csr(
    data,
    indices,
    indptr,
    y,
    sample_weight,
    row_scale,
    row_norm_aug,
    rows,
    lo,
    hi,
    loss,
    param,
    clip_norm,
    coef,
    intercept,
    gcoef,
    gint,
):
    """:func:`_sum_rows` for X in CSR form (canonical: sorted indices, no duplicates), one
    row at a time; only the stored entries are read. Same terms, same bound, same count of
    rows whose gradient was not finite (returned; they contribute 0)."""
    n_out, d = coef.shape
    direct = rows.shape[0] == 0
    z = np.empty(n_out)
    dz = np.empty(n_out)
    for k in range(n_out):
        for j in range(d):
            gcoef[k, j] = 0.0
        gint[k] = 0.0
    bad = 0
    for p in range(lo, hi):
        i = p if direct else rows[p]
        s = row_scale[i]
        p0 = indptr[i]
        p1 = indptr[i + 1]
        for k in range(n_out):
            acc = 0.0
            for q in range(p0, p1):
                acc += data[q] * coef[k, indices[q]]
            z[k] = s * acc + intercept[k]
        c = _clip_scale(loss, param, clip_norm, z, y[i], sample_weight[i], row_norm_aug[i], dz)
        if math.isnan(c):
            bad += 1
            continue
        for k in range(n_out):
            f = c * dz[k]
            gint[k] += f
            f *= s
            if f != 0.0:
                for q in range(p0, p1):
                    gcoef[k, indices[q]] += f * data[q]
    return bad


@njit
def _noisy_sum(blocks, std, gen):
    """One released coordinate: its block sums added in order, plus ``N(0, std^2)`` from
    ``gen`` (no draw when ``std`` is 0). Every noisy update draws its noise here: from a numpy
    Generator (plain), or, when ``gen`` is secure mode's ``(state, ratio)``, rounded to the
    lattice with exact discrete Gaussian noise (:func:`secure_random.noisy_value`, chosen
    when the kernel is compiled for that type)."""
    g = 0.0
    for c in range(blocks.shape[0]):
        g += blocks[c]
    return noisy_value(g, std, gen)


@njit
def _noisy_update(
    gcoef,
    gint,
    std,
    n_norm,
    l2,
    eta,
    momentum,
    beta_pow,
    fit_intercept,
    coef,
    intercept,
    vcoef,
    vint,
    gen,
):
    """Add the noise to the block sums, then take one (momentum) step: post-processing.

    ``g = (sum_blocks S + N(0, std^2)) / n_norm + l2 * w``; ``v = beta v + (1 - beta) g``;
    ``theta -= eta * v / (1 - beta^t)`` with ``beta_pow = beta^t``. ``l2`` is the coefficient
    of the penalty's smooth part ``l2 / 2 ||w||^2`` (:mod:`skdpgd.penalties`; the caller
    applies a non-smooth part's proximal step after the update). Blocks are added in order,
    so the result does not depend on how they were computed.
    """
    n_out, d = gcoef.shape[1], gcoef.shape[2]
    corr = 1.0 - beta_pow
    for k in range(n_out):
        for j in range(d):
            g = _noisy_sum(gcoef[:, k, j], std, gen) / n_norm + l2 * coef[k, j]
            vcoef[k, j] = momentum * vcoef[k, j] + (1.0 - momentum) * g
            coef[k, j] -= eta * vcoef[k, j] / corr
        if fit_intercept:
            _intercept_step(gint, k, std, n_norm, eta, momentum, corr, intercept, vint, gen)


@njit
def _intercept_step(gint, k, std, n_norm, eta, momentum, corr, intercept, vint, gen):
    """Output ``k``'s intercept in :func:`_noisy_update` (and the masked DP-SGD update): the
    block sums plus ``N(0, std^2)``, divided by ``n_norm`` (not penalised), one momentum step."""
    g = _noisy_sum(gint[:, k], std, gen) / n_norm
    vint[k] = momentum * vint[k] + (1.0 - momentum) * g
    intercept[k] -= eta * vint[k] / corr


# ---------------------------------------------------------------------------------------------
# Row blocks and threads
# ---------------------------------------------------------------------------------------------

#: Below this many matrix entries a sum runs on one thread. A threaded sum costs a hand-off
#: between threads (~0.1 ms, much more when other processes keep the cores busy), so it only
#: pays off once a serial sum takes about half a millisecond (benchmarks/bench_step.py
#: --detail times both paths).
PARALLEL_MIN_ENTRIES = 1_000_000
#: Rows of X are summed in blocks of at least this many entries (at most MAX_ROW_BLOCKS blocks).
BLOCK_MIN_ENTRIES = 100_000
MAX_ROW_BLOCKS = 64

_NO_ROWS = np.empty(0, np.int64)


def n_row_blocks(n_samples, n_features):
    """Row blocks a sum is split into, fixed by the data shape and never by the thread count,
    so a fit gives the same numbers on any number of threads, serial or parallel."""
    return int(min(MAX_ROW_BLOCKS, max(1, n_samples * n_features // BLOCK_MIN_ENTRIES)))


def n_threads():
    """Threads a parallel sum uses: numba's thread count (``NUMBA_NUM_THREADS``)."""
    return max(1, int(_numba_config.NUMBA_NUM_THREADS))


def use_parallel(n_samples, n_features):
    """Whether a sum over X of this shape runs on several threads (same numbers either way)."""
    return (
        n_threads() > 1
        and n_samples * n_features >= PARALLEL_MIN_ENTRIES
        and n_row_blocks(n_samples, n_features) > 1
    )


_POOL = None
_POOL_LOCK = threading.Lock()


def _thread_pool():
    """One pool of ``n_threads() - 1`` workers, made on first use (the caller is the last)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max(1, n_threads() - 1), thread_name_prefix="skdpgd")
        return _POOL


def run_split(work, n_items, parallel):
    """``work(i0, i1)`` over ``0 <= i < n_items``: on one thread, or on contiguous ranges, one
    per thread (the caller runs the first), all finished before returning. Returns the list
    of results in range order. ``work`` must call compiled code that releases the GIL."""
    k = max(1, min(n_threads(), n_items)) if parallel else 1
    if k == 1:
        return [work(0, n_items)]
    ranges = [(r * n_items // k, (r + 1) * n_items // k) for r in range(k)]
    pool = _thread_pool()
    futures = [pool.submit(work, i0, i1) for i0, i1 in ranges[1:]]
    try:
        first = work(*ranges[0])
    finally:
        rest = [f.result() for f in futures]  # every range is done before anyone reads
    return [first] + rest


def dense_grad_sum(
    X,
    y,
    sample_weight,
    row_scale,
    row_norm_aug,
    loss,
    param,
    clip_norm,
    coef,
    intercept,
    n_blocks=None,
    parallel=None,
):
    """``(sum_i w_i clip(g_i) for the weights, ... for the intercepts, n_bad)`` over dense X.

    Each term has norm ``<= clip_norm`` (see :func:`_sum_rows`); ``n_bad`` counts the rows
    whose gradient was not finite (they contribute 0). The rows are summed in ``n_blocks``
    blocks (default :func:`n_row_blocks`, fixed by the shape of X), block c holding rows
    ``c n / B <= i < (c + 1) n / B``; threads (``parallel``, default :func:`use_parallel`) sum
    disjoint ranges of blocks, then the blocks are added in order: the same numbers on any
    number of threads. X, y, the weights and scales must be C-contiguous float64 arrays.
    """
    n, d = X.shape
    k_out = coef.shape[0]
    if n_blocks is None:
        n_blocks = n_row_blocks(n, d)
    if parallel is None:
        parallel = use_parallel(n, d)
    kernel = _sum_rows_single if k_out == 1 else _sum_rows_multi
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    intercept = np.ascontiguousarray(intercept, dtype=np.float64)
    gcoef = np.empty((n_blocks, k_out, d))
    gint = np.empty((n_blocks, k_out))
    loss, param, clip_norm = int(loss), float(param), float(clip_norm)

    def work(c0, c1):
        bad = 0
        for c in range(c0, c1):
            bad += kernel(
                X,
                y,
                sample_weight,
                row_scale,
                row_norm_aug,
                _NO_ROWS,
                c * n // n_blocks,
                (c + 1) * n // n_blocks,
                loss,
                param,
                clip_norm,
                coef,
                intercept,
                gcoef[c],
                gint[c],
            )
        return bad

    bad = sum(run_split(work, n_blocks, parallel and n_blocks > 1))
    if n_blocks == 1:
        return gcoef[0], gint[0], int(bad)
    return gcoef.sum(axis=0), gint.sum(axis=0), int(bad)


@njit
def objective_sum(
    X,
    y,
    sample_weight,
    row_scale,
    row_norm_aug,
    loss,
    param,
    clip_norm,
    coef,
    intercept,
    gcoef,
    gint,
):
    """Exact clipped objective and its gradient (no noise), for exact solvers: returns
    ``sum_i w_i l_clip(theta; x~_i, y_i)`` and writes its gradient, the sum of the clipped
    per-example gradients, into (gcoef, gint). No penalty, no 1/n: the caller adds them.

    ``l_clip`` is the loss whose gradient is the clipped per-example gradient (a Huber loss
    for the squared loss). Dense X; :func:`objective_sum_csr` is the same sum over CSR rows
    (same contract, same per-row terms). They differ only in how a row is read, but one
    kernel with both loops inside ran 10-20% slower, and so did one with the per-row terms
    in a shared helper (measured on 2e5 rows), so the row's few lines are written twice.
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
        thr = clip_norm / row_norm_aug[i] if row_norm_aug[i] > 0.0 else np.inf
        loss_derivative(loss, z, y[i], param, thr, dz)
        nrm2 = 0.0
        for k in range(n_out):
            nrm2 += dz[k] * dz[k]
        g = math.sqrt(nrm2) * row_norm_aug[i]
        # the clipped gradient's factor (the test spares the division of an unclipped row)
        c = clip_factor(g, clip_norm, sample_weight[i]) if g > clip_norm else sample_weight[i]
        total += sample_weight[i] * loss_value(loss, z, y[i], param, thr)
        for k in range(n_out):
            f = c * dz[k]
            for j in range(d):
                gcoef[k, j] += f * s * X[i, j]
            gint[k] += f
    return total


@njit
def objective_sum_csr(
    data,
    indices,
    indptr,
    y,
    sample_weight,
    row_scale,
    row_norm_aug,
    loss,
    param,
    clip_norm,
    coef,
    intercept,
    gcoef,
    gint,
):
    """:func:`objective_sum` for canonical CSR X: only stored entries are read."""
    n = indptr.shape[0] - 1
    n_out = coef.shape[0]
    z = np.zeros(n_out)
    dz = np.zeros(n_out)
    for k in range(n_out):
        for j in range(coef.shape[1]):
            gcoef[k, j] = 0.0
        gint[k] = 0.0
    total = 0.0
    for i in range(n):
        s = row_scale[i]
        p0 = indptr[i]
        p1 = indptr[i + 1]
        for k in range(n_out):
            acc = 0.0
            for p in range(p0, p1):
                acc += data[p] * coef[k, indices[p]]
            z[k] = s * acc + intercept[k]
        thr = clip_norm / row_norm_aug[i] if row_norm_aug[i] > 0.0 else np.inf
        loss_derivative(loss, z, y[i], param, thr, dz)
        nrm2 = 0.0
        for k in range(n_out):
            nrm2 += dz[k] * dz[k]
        g = math.sqrt(nrm2) * row_norm_aug[i]
        # the clipped gradient's factor (the test spares the division of an unclipped row)
        c = clip_factor(g, clip_norm, sample_weight[i]) if g > clip_norm else sample_weight[i]
        total += sample_weight[i] * loss_value(loss, z, y[i], param, thr)
        for k in range(n_out):
            f = c * dz[k]
            fs = f * s
            for p in range(p0, p1):
                gcoef[k, indices[p]] += fs * data[p]
            gint[k] += f
    return total

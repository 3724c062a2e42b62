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

import numpy as np
from numba import njit, prange

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


@njit(cache=True)
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


@njit(cache=True)
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


# Reassociation lets LLVM vectorise the dot products; no flag that assumes finite values.
_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}


@njit(cache=True, fastmath=_FASTMATH)
def _clipped_sum_rows(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm,
                      coef, intercept, lo, hi, gcoef, gint):
    """``sum_{lo <= i < hi} w_i clip(grad_i)`` into (gcoef, gint); each term has norm <= clip_norm.

    One pass over the rows: the margin ``z_i = x~_i . theta`` and then ``l'(z_i) x~_i`` are
    computed while the row is in cache. ``||grad_i|| = ||l'(z_i)|| ||x~_i||`` in closed form.
    """
    n_out, d = coef.shape
    z = np.empty(n_out)
    dz = np.empty(n_out)
    for k in range(n_out):
        for j in range(d):
            gcoef[k, j] = 0.0
        gint[k] = 0.0
    for i in range(lo, hi):
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
        w = sample_weight[i]
        if gnorm > clip_norm:
            w = w * (clip_norm / gnorm)
        for k in range(n_out):
            f = w * dz[k]
            fs = f * s
            if fs != 0.0:
                for j in range(d):
                    gcoef[k, j] += fs * X[i, j]
            gint[k] += f


@njit(cache=True)
def _noisy_update(gcoef, gint, std, n_norm, alpha, eta, momentum, beta_pow, fit_intercept,
                  coef, intercept, vcoef, vint, gen):
    """Add the noise to the block sums, then take one (momentum) step: post-processing.

    ``g = (sum_blocks S + N(0, std^2)) / n + alpha * w``; ``v = beta v + (1 - beta) g``;
    ``theta -= eta * v / (1 - beta^t)`` with ``beta_pow = beta^t``.
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


#: Below this many matrix entries a step runs on one thread (a parallel launch costs more).
PARALLEL_MIN_ENTRIES = 200_000


def n_row_blocks(n_samples, n_features):
    """Row blocks a step is split into: fixed by the data shape, not by the thread count,
    so a fit gives the same numbers on any number of threads. 1 means the serial kernel."""
    if n_samples * n_features < PARALLEL_MIN_ENTRIES:
        return 1
    return int(min(32, max(2, n_samples // 4096)))


@njit(cache=True)
def gd_full_batch(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm,
                  fit_intercept, alpha, step_sizes, noise_std, momentum, coef0, intercept0, gen):
    """Full-batch DP gradient descent on one thread, all T steps in compiled code.

    Step t releases ``S_t = sum_i w_i clip(grad_i(theta_t)) + N(0, noise_std[t]^2 I)``:
    each term has norm <= clip_norm, so the sum has sensitivity 2 clip_norm (replace-one)
    or clip_norm (add/remove-one). Then, as post-processing, ``g_t = S_t / n + alpha * w``
    (intercept not penalised) and, with momentum beta (Hong et al., Eq. 3, bias-corrected):
    ``v_t = beta v_{t-1} + (1 - beta) g_t``, ``theta_{t+1} = theta_t - step_t v_t / (1 - beta^t)``.
    ``momentum = 0`` is plain gradient descent. Returns the last iterate (coef, intercept).
    """
    n, d = X.shape
    n_out = coef0.shape[0]
    coef = coef0.copy()
    intercept = intercept0.copy()
    gcoef = np.zeros((1, n_out, d))
    gint = np.zeros((1, n_out))
    vcoef = np.zeros((n_out, d))
    vint = np.zeros(n_out)
    beta_pow = 1.0
    for t in range(step_sizes.shape[0]):
        _clipped_sum_rows(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm,
                          coef, intercept, 0, n, gcoef[0], gint[0])
        beta_pow *= momentum
        _noisy_update(gcoef, gint, noise_std[t], float(n), alpha, step_sizes[t], momentum,
                      beta_pow, fit_intercept, coef, intercept, vcoef, vint, gen)
    return coef, intercept


@njit(cache=True, parallel=True)
def gd_full_batch_parallel(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm,
                           fit_intercept, alpha, step_sizes, noise_std, momentum, coef0,
                           intercept0, n_blocks, gen):
    """:func:`gd_full_batch` with the rows of each step summed in ``n_blocks`` parallel blocks.

    Block sums are added in block order, so the result does not depend on the thread count.
    Same release, same sensitivity.
    """
    n, d = X.shape
    n_out = coef0.shape[0]
    coef = coef0.copy()
    intercept = intercept0.copy()
    gcoef = np.zeros((n_blocks, n_out, d))
    gint = np.zeros((n_blocks, n_out))
    vcoef = np.zeros((n_out, d))
    vint = np.zeros(n_out)
    beta_pow = 1.0
    for t in range(step_sizes.shape[0]):
        for c in prange(n_blocks):
            _clipped_sum_rows(X, y, sample_weight, row_scale, row_norm_aug, loss, param,
                              clip_norm, coef, intercept, c * n // n_blocks,
                              (c + 1) * n // n_blocks, gcoef[c], gint[c])
        beta_pow *= momentum
        _noisy_update(gcoef, gint, noise_std[t], float(n), alpha, step_sizes[t], momentum,
                      beta_pow, fit_intercept, coef, intercept, vcoef, vint, gen)
    return coef, intercept


def run_gd_full_batch(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm,
                      fit_intercept, alpha, step_sizes, noise_std, momentum, coef0, intercept0,
                      gen):
    """Dispatch to the serial or the parallel kernel by the size of X (same results)."""
    n, d = X.shape
    blocks = n_row_blocks(n, d)
    args = (X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm, fit_intercept,
            alpha, step_sizes, noise_std, momentum, coef0, intercept0)
    if blocks == 1:
        return gd_full_batch(*args, gen)
    return gd_full_batch_parallel(*args, blocks, gen)


@njit(cache=True)
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

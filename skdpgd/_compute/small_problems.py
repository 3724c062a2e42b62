"""The reductions of dense X, and the DP-SGD loop, in plain numpy for small problems.

A fresh install compiles each numba kernel on its first call (1-5 s of CPU for a first fit,
:mod:`skdpgd._compute.jit`); on a small problem that compilation costs far more than the fit.
So X with at most :data:`SMALL_PROBLEM_ENTRIES` entries (rows x features, a public fact about the
shape) is reduced here, with numpy array expressions, and calls no numba kernel; larger X goes
to the kernels of :mod:`skdpgd._compute.kernels`, :mod:`skdpgd._compute.kernels_second` and
:mod:`skdpgd._compute.kernels_sgd`, unchanged.

Every function computes the same per-example terms as its kernel, clipped by the same closed
form (``w_i min(1, C / ||g_i||)``, :func:`skdpgd._compute.kernels.clip_factor`), so each term
obeys the same bound and the releases keep their sensitivities (written next to each
function); a term that is not finite contributes 0 and is counted, as in the kernels. Only the
order of the floating-point additions differs (the numbers agree to rounding; the exact
objective, whose solver's stop is sensitive to rounding, keeps the kernel's order and its C
library exp and logs). DP-SGD
(:func:`sgd_dense`) draws the same random numbers from the same generator in the same order as
:func:`skdpgd._compute.kernels_sgd.sgd_dense`: the same batches and the same noise.
"""

from __future__ import annotations

import math

import numpy as np

from .kernels import (
    LOSS_HINGE,
    LOSS_HUBER,
    LOSS_LOGISTIC,
    LOSS_MODIFIED_HUBER,
    LOSS_MULTINOMIAL,
    LOSS_POISSON,
    LOSS_SQUARED,
    LOSS_SQUARED_HINGE,
    LOSS_SQUARED_HINGE_OVR,
    LOSS_TWEEDIE,
    POISSON_MAX_MARGIN,
    TWEEDIE_ROOT_STEPS,
)
from .kernels_second import _assemble, _check_loss, _symmetric

#: Dense X with at most this many entries (n_samples x n_features) is reduced in numpy (this
#: module) instead of by the numba kernels. At this size a numpy reduction takes about a
#: millisecond or less and a DP-SGD step tens of microseconds (a few in the kernel), while
#: compiling the kernels a fit needs takes 1-5 s of CPU once per install
#: (benchmarks/bench_startup.py; docs/benchmarks_lab_notes.md, "Small problems in numpy").
SMALL_PROBLEM_ENTRIES = 50_000


def is_small(n_samples, n_features):
    """Whether dense X of this shape is reduced in numpy (a function of the shape only)."""
    return n_samples * max(int(n_features), 1) <= SMALL_PROBLEM_ENTRIES


def _as64(X):
    return np.asarray(X, dtype=np.float64)


def margins(X, row_scale, coef, intercept):
    """``z_ik = s_i x_i . coef_k + b_k``, shape (n, K) (float64 whatever the dtype of X)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return (_as64(X) @ np.asarray(coef, dtype=np.float64).T) * row_scale[:, None] + np.asarray(
            intercept, dtype=np.float64
        )


def dloss(loss, z, y, param, exp=np.exp):
    """``dl/dz`` of a one-output loss, elementwise (:func:`skdpgd._compute.kernels.dloss`; call it
    with numpy's overflow and invalid warnings off, as the kernels raise none). ``exp``:
    numpy's, or :func:`_libm_exp` for the kernel's very roundings."""
    if loss == LOSS_LOGISTIC:
        return -y / (1.0 + exp(y * z))  # an overflowing exponential gives -0
    if loss == LOSS_SQUARED:
        return z - y
    t = y * z
    if loss == LOSS_HINGE:
        return np.where(t < 1.0, -y, 0.0)
    if loss == LOSS_MODIFIED_HUBER:
        return np.where(t >= 1.0, 0.0, np.where(t >= -1.0, -2.0 * y * (1.0 - t), -4.0 * y))
    if loss == LOSS_SQUARED_HINGE:
        return np.where(t < 1.0, -2.0 * y * (1.0 - t), 0.0)
    if loss == LOSS_HUBER:
        return np.clip(z - y, -param, param)
    if loss == LOSS_POISSON:
        return exp(np.minimum(z, POISSON_MAX_MARGIN)) - y
    if loss == LOSS_TWEEDIE:
        return _tweedie_derivative(z, y, param, exp)
    return np.full(np.shape(z), np.nan)


def _tweedie_derivative(z, y, p, exp=np.exp):
    """:func:`skdpgd._compute.kernels.tweedie_derivative`, elementwise."""
    return exp(np.minimum((2.0 - p) * z, POISSON_MAX_MARGIN)) - y * exp(
        np.minimum((1.0 - p) * z, POISSON_MAX_MARGIN)
    )


def ovr_derivatives(Z, y, thr):
    """The one-vs-rest squared hinge's derivatives (shape (n, K)), each output's held in
    ``[-t, t]`` with ``t = thr / sqrt(K)`` and ``thr = C / ||x~_i||`` per row
    (:func:`skdpgd._compute.kernels.loss_derivative`): output k's target is +1 for the rows of
    class k, -1 for the others. Call it with numpy's warnings off."""
    n, k_out = Z.shape
    Y = np.where(np.arange(k_out)[None, :] == y.astype(np.int64)[:, None], 1.0, -1.0)
    cap = (np.asarray(thr, dtype=np.float64) / math.sqrt(k_out))[:, None]
    return np.clip(dloss(LOSS_SQUARED_HINGE, Z, Y, 0.0), -cap, cap)


def _clipped_factors(loss, param, clip_norm, Z, y, w, aug):
    """``(F, bad)``: row i's clipped factor ``F_i = w_i min(1, C / ||g_i||) l'(z_i)`` (shape
    (n, K)), with ``||g_i|| = ||l'(z_i)|| ||x~_i||``, so ``||F_i x~_i|| <= w_i C``. A row whose
    factor is not a number (one output; a NaN ratio leaves ``min`` at 1, as in the kernel) or
    whose gradient norm is not finite (several outputs) gets 0 and is counted in ``bad``: the
    kernels' rules (:func:`skdpgd._compute.kernels._sum_rows_single`, ``_sum_rows_multi``). Call it
    with numpy's overflow, invalid and divide warnings off."""
    n, k_out = Z.shape
    if k_out == 1:
        D = dloss(loss, Z[:, 0], y, param)
        F = (w * np.fmin(1.0, clip_norm / (np.abs(D) * aug)) * D)[:, None]
        bad = np.isnan(F[:, 0])
    else:
        if loss == LOSS_MULTINOMIAL:
            E = np.exp(Z - np.max(Z, axis=1, keepdims=True))
            D = E / np.sum(E, axis=1, keepdims=True)
            D[np.arange(n), y.astype(np.int64)] -= 1.0
        elif loss == LOSS_SQUARED_HINGE_OVR:
            D = ovr_derivatives(Z, y, clip_norm / aug)  # a zero row: cap inf
        else:  # several outputs, another loss: no derivative (every row is counted)
            D = np.full((n, k_out), np.nan)
        g = np.sqrt(np.sum(D * D, axis=1)) * aug
        bad = ~np.isfinite(g)
        F = (w * np.fmin(1.0, clip_norm / g))[:, None] * D
    if bad.any():
        F[bad] = 0.0
    return F, int(np.count_nonzero(bad))


def grad_sum(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm, coef, intercept):
    """``(sum_i w_i clip(g_i) for the weights, ... for the intercepts, n_bad)`` over dense X
    (:func:`skdpgd._compute.kernels.dense_grad_sum`): each term has norm ``<= clip_norm``, so
    the sum moves by at most ``clip_norm`` when a row is added or removed; rows whose gradient
    is not finite contribute 0 and are counted."""
    Z = margins(X, row_scale, coef, intercept)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        F, bad = _clipped_factors(
            int(loss), float(param), float(clip_norm), Z, y, sample_weight, row_norm_aug
        )
    return (F * row_scale[:, None]).T @ _as64(X), np.sum(F, axis=0), bad


def _augmented(X, row_scale, extra):
    """The rows ``x'_i = (s_i x_i, E_i)`` (a small float64 copy)."""
    return np.column_stack([_as64(X) * row_scale[:, None]] + extra)


def _weighted_outer(A, W):
    """The upper triangle of ``sum_i W_i a_i a_i^T`` (zeros below), as the kernels'
    :func:`skdpgd._compute.kernels_second._outer_dense` leaves it (mirrored by the caller)."""
    return np.triu((A * W[:, None]).T @ A)


def hessian_weights(loss, Z, w):
    """``(W, bad)``: the Hessian weights of each row (shape (n, n_pair), the pairs of classes
    ``a <= b`` in order for the multinomial loss,
    :func:`skdpgd._compute.kernels_second._row_weights`); a row whose weights are not finite
    gets 0 and is counted."""
    with np.errstate(over="ignore", invalid="ignore"):
        if loss == LOSS_LOGISTIC:
            e = np.exp(-np.abs(Z[:, 0]))
            W = (w * e / ((1.0 + e) * (1.0 + e)))[:, None]
        elif loss == LOSS_MULTINOMIAL:
            E = np.exp(Z - np.max(Z, axis=1, keepdims=True))
            p = E / np.sum(E, axis=1, keepdims=True)
            k_out = Z.shape[1]
            W = np.stack(
                [
                    w * p[:, a] * ((1.0 if a == b else 0.0) - p[:, b])
                    for a in range(k_out)
                    for b in range(a, k_out)
                ],
                axis=1,
            )
        else:  # squared loss
            W = w[:, None].astype(np.float64)
    ok = np.all(np.isfinite(W), axis=1)
    W = np.where(ok[:, None], W, 0.0)
    return W, int(W.shape[0] - np.count_nonzero(ok))


def hessian_sum(X, row_scale, sample_weight, fit_intercept, loss, coef, intercept):
    """``sum_i w_i H_i`` (:func:`skdpgd._compute.kernels_second.hessian_sum`): each term PSD with
    Frobenius norm ``<= h ||x'_i||^2``; shape ``(K P, K P)``, parameters class-major."""
    _check_loss(loss)
    coef = np.asarray(coef, dtype=np.float64)
    k_out = coef.shape[0]
    n = X.shape[0]
    intercept = np.asarray(intercept, dtype=np.float64) if fit_intercept else np.zeros(k_out)
    A = _augmented(X, row_scale, [np.ones((n, 1))] if fit_intercept else [])
    if loss == LOSS_SQUARED:
        W = sample_weight[:, None]
    else:
        W, _ = hessian_weights(loss, margins(X, row_scale, coef, intercept), sample_weight)
    H = np.stack([_weighted_outer(A, W[:, m]) for m in range(W.shape[1])])
    return _assemble(H, loss, k_out)


def grad_hessian_sum(
    X, y, sample_weight, row_scale, row_norm_aug, fit_intercept, loss, clip_norm, coef, intercept
):
    """``(gcoef, gint, n_bad, H)``: :func:`grad_sum` and :func:`hessian_sum` at the same
    point (:func:`skdpgd._compute.kernels_second.grad_hessian_sum`; the same terms and bounds)."""
    if not fit_intercept:  # not a parameter: taken as 0 by both sums, as in the kernel
        intercept = np.zeros(np.shape(coef)[0])
    gcoef, gint, bad = grad_sum(
        X, y, sample_weight, row_scale, row_norm_aug, loss, 0.0, clip_norm, coef, intercept
    )
    H = hessian_sum(X, row_scale, sample_weight, fit_intercept, loss, coef, intercept)
    return gcoef, gint, bad, H


def suff_stats(X, row_scale, sample_weight, fit_intercept, y):
    """``(sum_i w_i x'_i x'_i^T, sum_i w_i y_i x'_i)`` (:func:`skdpgd._compute.kernels_second.
    suff_stats`)."""
    n = X.shape[0]
    extra = ([np.ones((n, 1))] if fit_intercept else []) + [np.asarray(y, np.float64)[:, None]]
    S = _symmetric(_weighted_outer(_augmented(X, row_scale, extra), sample_weight))
    return S[:-1, :-1].copy(), S[:-1, -1].copy()


_PY_EXP, _PY_LOG, _PY_LOG1P, _PY_EXPM1 = (
    np.frompyfunc(f, 1, 1) for f in (math.exp, math.log, math.log1p, math.expm1)
)


def _libm(numpy_f, python_f, a, ok):
    """``numpy_f(a)`` with the entries where ``ok`` recomputed by the C library's function
    (through Python's math module), as the kernels compute them: numpy's vectorised exp and
    logs differ from it in the last bit for a few percent of arguments. ``ok`` keeps the
    arguments where the math module would raise (overflow, domain) with numpy's answer."""
    out = numpy_f(a)
    if np.any(ok):
        out[ok] = python_f(a[ok]).astype(np.float64)
    return out


def _libm_exp(a):
    a = np.asarray(a, dtype=np.float64)
    return _libm(np.exp, _PY_EXP, a, a <= 709.0)


def _libm_log(a):
    return _libm(np.log, _PY_LOG, a, a > 0.0)


def _libm_log1p(a):
    return _libm(np.log1p, _PY_LOG1P, a, a > -1.0)


def _libm_expm1(a):
    return _libm(np.expm1, _PY_EXPM1, a, a <= 709.0)


def _expm1_ratio(a, z):
    """:func:`skdpgd._compute.kernels._expm1_ratio`, elementwise in z."""
    return z if a == 0.0 else _libm_expm1(a * z) / a


def _tweedie_values(z, y, p):
    """:func:`skdpgd._compute.kernels.tweedie_value`, elementwise."""
    return _expm1_ratio(2.0 - p, z) - y * _expm1_ratio(1.0 - p, z)


def _tweedie_roots(y, p, s, z):
    """:func:`skdpgd._compute.kernels.tweedie_root`, elementwise: the same doublings and
    halvings, each entry stopping where the kernel's loop stops."""

    def d(u):
        return _tweedie_derivative(u, y, p, _libm_exp)

    c = np.where(np.isfinite(z), z, 0.0)
    lo, hi, step = c.copy(), c.copy(), np.ones_like(c)
    for _ in range(TWEEDIE_ROOT_STEPS):
        grow = d(lo) >= s
        if not grow.any():
            break
        hi, lo, step = np.where(grow, lo, hi), np.where(grow, c - step, lo), step * 2.0
    step = np.ones_like(c)
    for _ in range(TWEEDIE_ROOT_STEPS):
        grow = ~(d(hi) >= s)
        if not grow.any():
            break
        lo, hi, step = np.where(grow, hi, lo), np.where(grow, c + step, hi), step * 2.0
    for _ in range(TWEEDIE_ROOT_STEPS):
        mid = 0.5 * lo + 0.5 * hi
        wide = hi - lo > 4e-16 * np.maximum(1.0, np.maximum(np.abs(lo), np.abs(hi)))
        on = wide & (lo < mid) & (mid < hi)
        if not on.any():
            break
        below = d(mid) < s
        lo, hi = np.where(on & below, mid, lo), np.where(on & ~below, mid, hi)
    return lo


def _tweedie_clipped_values(z, y, p, thr):
    """:func:`skdpgd._compute.kernels.tweedie_clipped_value`, elementwise (the tangents'
    roots are found for the clipped entries only)."""
    d = _tweedie_derivative(z, y, p, _libm_exp)
    out = _tweedie_values(z, y, p)
    clipped = ~(np.abs(d) <= thr) & ~np.isnan(d)
    if clipped.any():
        zk, yk, tk = z[clipped], y[clipped], thr[clipped]
        sk = np.where(d[clipped] > 0.0, tk, -tk)
        zc = _tweedie_roots(yk, p, sk, zk)
        tangent = _tweedie_values(zc, yk, p) + sk * (zk - zc)
        flat = (p == 2.0) & (yk == 0.0)  # l' = 1 > t everywhere: t z
        out[clipped] = np.where(flat, tk * zk, tangent)
    return np.where(np.isnan(d), np.nan, out)


def _in_order(A, axis):
    """Sums along ``axis`` added one term after another, as a kernel's loop adds them (numpy's
    own sums add in pairs: other roundings)."""
    return np.take(np.cumsum(A, axis=axis), -1, axis=axis)


def _squared_hinge_values(u, t):
    """:func:`skdpgd._compute.kernels.squared_hinge_value`, elementwise."""
    u0 = 1.0 - 0.5 * t
    return np.where(
        u >= 1.0, 0.0, np.where(u >= u0, (1.0 - u) * (1.0 - u), 0.25 * t * t + t * (u0 - u))
    )


def _loss_values(loss, Z, y, param, thr):
    """Each row's clipped loss (:func:`skdpgd._compute.kernels.loss_value`, the same formulas): the
    loss whose derivative is the clipped one at the threshold ``thr = C / ||x~_i||`` (Huber for
    the squared loss, tangents past it for the squared hinge and Poisson losses); NaN for a
    code with no value. The exponentials and logarithms are the C library's, as in the
    kernel. Call it with numpy's warnings off."""
    n = Z.shape[0]
    if loss == LOSS_MULTINOMIAL:
        m = np.max(Z, axis=1)
        return (
            m
            + _libm_log(_in_order(_libm_exp(Z - m[:, None]), 1))
            - Z[np.arange(n), y.astype(np.int64)]
        )
    if loss == LOSS_SQUARED_HINGE_OVR:  # the K binary losses, capped at thr / sqrt(K), added
        k_out = Z.shape[1]
        U = np.where(np.arange(k_out)[None, :] == y.astype(np.int64)[:, None], Z, -Z)
        return _in_order(_squared_hinge_values(U, (thr / math.sqrt(k_out))[:, None]), 1)
    z = Z[:, 0]
    if loss == LOSS_LOGISTIC:
        t = y * z
        e = _libm_exp(-np.abs(t))  # the kernel's exp(-t) for t > 0, exp(t) otherwise
        return np.where(t > 0.0, 0.0, -t) + _libm_log1p(e)
    if loss in (LOSS_SQUARED, LOSS_HUBER):  # the clip can only lower Huber's threshold
        t = thr if loss == LOSS_SQUARED else np.minimum(param, thr)
        r = np.abs(z - y)
        return np.where(r <= t, 0.5 * r * r, t * r - 0.5 * t * t)
    if loss == LOSS_SQUARED_HINGE:
        return _squared_hinge_values(y * z, thr)
    if loss == LOSS_POISSON:
        z_hi, z_lo = _libm_log(y + thr), _libm_log(y - thr)
        inside = _libm_exp(np.where(np.isinf(thr), np.minimum(z, POISSON_MAX_MARGIN), z)) - y * z
        return np.where(
            np.isinf(thr),
            inside,
            np.where(
                z > z_hi,
                (y + thr) - y * z_hi + thr * (z - z_hi),
                np.where((y > thr) & (z < z_lo), (y - thr) - y * z_lo - thr * (z - z_lo), inside),
            ),
        )
    if loss == LOSS_TWEEDIE:
        return _tweedie_clipped_values(z, y, param, thr)
    return np.full(n, np.nan)


def objective(
    X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm, coef, intercept
):
    """``(sum_i w_i l_clip_i, its gradient for the weights, for the intercepts)``: the exact
    clipped objective of :func:`skdpgd._compute.kernels.objective_sum` (no noise, no
    penalty), for the exact solvers, with the kernel's very roundings (sums added in its order,
    the C library's exp and logs: the solver's stopping point is sensitive to rounding, so a
    different rounding moves the fit by up to 1e-8); each row's gradient is
    ``w_i min(1, C / ||g_i||) l'(z_i) x~_i``, and its value that of the loss whose gradient
    that is (:func:`_loss_values`)."""
    X = _as64(X)
    coef = np.asarray(coef, dtype=np.float64)
    n, k_out = X.shape[0], coef.shape[0]
    if n == 0:
        return 0.0, np.zeros(coef.shape), np.zeros(k_out)
    loss, param, clip_norm = int(loss), float(param), float(clip_norm)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        Z = row_scale[:, None] * _in_order(X[:, None, :] * coef[None, :, :], 2) + np.asarray(
            intercept, dtype=np.float64
        )
        thr = np.where(row_norm_aug > 0.0, clip_norm / row_norm_aug, np.inf)
        if loss == LOSS_MULTINOMIAL:  # l' = softmax - e_y (kernels.loss_derivative)
            E = _libm_exp(Z - np.max(Z, axis=1, keepdims=True))
            D = E / _in_order(E, 1)[:, None]
            D[np.arange(n), y.astype(np.int64)] -= 1.0
        elif k_out == 1:
            D = dloss(loss, Z[:, 0], y, param, exp=_libm_exp)[:, None]
        elif loss == LOSS_SQUARED_HINGE_OVR:
            D = ovr_derivatives(Z, y, thr)
        else:  # several outputs, a one-output loss: no derivative
            D = np.full((n, k_out), np.nan)
        g = np.sqrt(_in_order(D * D, 1)) * row_norm_aug
        c = np.where(g > clip_norm, sample_weight * np.fmin(1.0, clip_norm / g), sample_weight)
        total = float(_in_order(sample_weight * _loss_values(loss, Z, y, param, thr), 0))
        F = c[:, None] * D
        gcoef = _in_order((F * row_scale[:, None])[:, :, None] * X[:, None, :], 0)
    return total, gcoef, _in_order(F, 0)


def noisy_update(
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
    """:func:`skdpgd._compute.kernels._noisy_update` in numpy (same arguments: blocks of sums
    of shapes (B, K, d) and (B, K), added in order): adds ``N(0, std^2)`` to each coordinate,
    then takes the (momentum) step in place (:func:`_update`)."""
    with np.errstate(over="ignore", invalid="ignore"):
        _update(
            np.add.reduce(np.asarray(gcoef, dtype=np.float64), axis=0),
            np.add.reduce(np.asarray(gint, dtype=np.float64), axis=0),
            std,
            n_norm,
            l2,
            eta,
            momentum,
            1.0 - beta_pow,
            fit_intercept,
            coef,
            intercept,
            vcoef,
            vint,
            gen,
        )


def _update(
    gcoef,
    gint,
    std,
    n_norm,
    l2,
    eta,
    momentum,
    corr,
    fit_intercept,
    coef,
    intercept,
    vcoef,
    vint,
    gen,
):
    """The release and its post-processing, as in the kernel: ``S + N(0, std^2)`` on each
    coordinate of the sums ``(gcoef, gint)`` (modified; drawn in the kernel's order: output k's
    weights, then its intercept; no draw when ``std`` is 0), then ``g = (S + noise) / n_norm +
    l2 w``, ``v = beta v + (1 - beta) g``, ``theta -= eta v / corr`` in place, with the
    kernel's arithmetic (``corr = 1 - beta^t``; the intercepts are not penalised)."""
    k_out, d = coef.shape
    if std > 0.0 and isinstance(gen, tuple):
        # secure mode's (state, ratio): each coordinate on the lattice, in the kernel's order
        from .secure_random import release_value

        state, ratio = gen[0], float(gen[1][0])
        for k in range(k_out):
            for j in range(d):
                gcoef[k, j] = release_value(gcoef[k, j], std, ratio, False, state)
            if fit_intercept:
                gint[k] = release_value(gint[k], std, ratio, False, state)
    elif std > 0.0:
        z = gen.standard_normal((k_out, d + 1 if fit_intercept else d))
        gcoef += std * z[:, :d]
        if fit_intercept:
            gint += std * z[:, d]
    g = gcoef / n_norm + l2 * coef
    vcoef *= momentum
    vcoef += (1.0 - momentum) * g
    coef -= eta * vcoef / corr
    if fit_intercept:
        vint *= momentum
        vint += (1.0 - momentum) * (gint / n_norm)
        intercept -= eta * vint / corr


# ---------------------------------------------------------------------------------------------
# DP-SGD
# ---------------------------------------------------------------------------------------------


def poisson_sample(n, q, gen, log1mq):
    """:func:`skdpgd._compute.kernels_sgd.poisson_sample` in numpy: the same rows from the same
    uniforms, and exactly as many uniforms taken from ``gen`` (one per selected row, plus the
    one that ends the sample), so the draws after it are the kernel's too."""
    if q >= 1.0:
        return np.arange(n)
    if isinstance(gen, tuple):  # secure mode: the kernel's rule on its dyadic uniforms
        from .secure_random import uniform_float

        rows, i = [], -1
        while True:
            skip = math.floor(math.log(1.0 - uniform_float(gen[0])) / log1mq)
            if skip >= n - i:
                break
            i += int(skip) + 1
            if i >= n:
                break
            rows.append(i)
        return np.asarray(rows, dtype=np.int64)
    bits = gen.bit_generator
    parts = []
    i = -1
    block = int(q * n + 4.0 * math.sqrt(q * n) + 8)
    while True:
        state = bits.state
        # row positions after each uniform V in (0, 1]: skips floor(log(V) / log(1 - q)) + 1
        # (the C library's log, as in the kernel: numpy's may differ in the last bit, which
        # could move a skip across an integer)
        pos = np.cumsum(np.floor(_libm_log(1.0 - gen.random(block)) / log1mq) + 1.0) + i
        stop = int(np.searchsorted(pos, n))  # the first position >= n ends the sample
        if stop < block:  # give back the uniforms after the one that ended it
            bits.state = state
            gen.random(stop + 1)
            parts.append(pos[:stop])
            break
        parts.append(pos)
        i = int(pos[-1])
    return (parts[0] if len(parts) == 1 else np.concatenate(parts)).astype(np.int64)


def sgd_dense(
    X,
    y,
    sample_weight,
    row_scale,
    row_norm_aug,
    loss,
    param,
    clip_norm,
    fit_intercept,
    alpha,
    q,
    n_norm,
    step_sizes,
    noise_std,
    momentum,
    max_norm,
    state,
    t0,
    t1,
    average_start,
    gen,
):
    """:func:`skdpgd._compute.kernels_sgd.sgd_dense` in numpy, step by step: the same Poisson
    batches, the same release per step (the batch's clipped sum, each term of norm
    ``<= clip_norm``, so sensitivity ``clip_norm`` under add/remove-one, plus
    ``N(0, noise_std[t]^2)`` on each coordinate, drawn in the kernel's order: output k's
    weights, then its intercept), and the same post-processing. Returns the first step whose
    iterate broke ``max_norm`` (-1: none); that test reads released values only."""
    n = X.shape[0]
    log1mq = math.log1p(-q) if q < 1.0 else 0.0
    X = _as64(X)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # as the kernel
        for t in range(t0, t1):
            rows = poisson_sample(n, q, gen, log1mq)
            if _sgd_step(
                X[rows],
                y[rows],
                sample_weight[rows],
                row_scale[rows],
                row_norm_aug[rows],
                loss,
                param,
                clip_norm,
                fit_intercept,
                alpha,
                n_norm,
                step_sizes[t],
                noise_std[t],
                momentum,
                max_norm,
                state,
                t >= average_start,
                gen,
            ):
                return t  # decided on released values only
    return -1


def _sgd_step(
    Xb,
    yb,
    wb,
    sb,
    ab,
    loss,
    param,
    clip_norm,
    fit_intercept,
    alpha,
    n_norm,
    eta,
    std,
    momentum,
    max_norm,
    state,
    average,
    gen,
):
    """One step of :func:`sgd_dense` on the batch's rows: True if the iterate then broke
    ``max_norm`` (or is not finite), else False after adding it to the averages if
    ``average`` (:func:`skdpgd._compute.kernels_sgd._after_step`)."""
    coef, intercept, vcoef, vint, acoef, aint, beta = state
    # the count of rows whose gradient was not finite (they contribute 0) is private: unused
    F, _ = _clipped_factors(
        loss, param, clip_norm, (Xb @ coef.T) * sb[:, None] + intercept, yb, wb, ab
    )
    beta[0] *= momentum
    _update(
        (F * sb[:, None]).T @ Xb,
        np.sum(F, axis=0),
        std,
        n_norm,
        alpha,
        eta,
        momentum,
        1.0 - beta[0],
        fit_intercept,
        coef,
        intercept,
        vcoef,
        vint,
        gen,
    )
    if not math.sqrt(float(np.vdot(coef, coef) + np.vdot(intercept, intercept))) <= max_norm:
        return True
    if average:
        acoef += coef
        aint += intercept
    return False

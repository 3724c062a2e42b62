"""Plain-numpy reference implementations of the reductions (the oracles the kernels are tested
against). They work on dense augmented rows ``x'_i = (s_i x_i, 1)`` built here, so they share
no code with the kernels."""

import numpy as np
from scipy.special import expit, softmax

from skdpgd._compute import kernels as K


def augmented_rows(X, row_scale, fit_intercept):
    """Dense ``x'_i = (s_i x_i[, 1])`` (X dense or sparse)."""
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=float)
    A = X * row_scale[:, None]
    return np.hstack([A, np.ones((X.shape[0], 1))]) if fit_intercept else A


def clipped_gradient_sum(A, y, w, loss, clip, theta):
    """``sum_i w_i clip(grad_i)`` over augmented rows A with parameters theta (K, P).

    Returns (S (K, P), n_bad): rows whose gradient is not finite contribute 0 and are counted.
    """
    with np.errstate(all="ignore"):
        Z = A @ theta.T
        if loss == K.LOSS_LOGISTIC:
            D = (-y * expit(-y * Z[:, 0]))[:, None]
        elif loss == K.LOSS_MULTINOMIAL:
            D = softmax(Z, axis=1)
            D[np.arange(len(y)), y.astype(int)] -= 1.0
        elif loss == K.LOSS_SQUARED:
            D = Z - y[:, None]
        elif loss == K.LOSS_SQUARED_HINGE_OVR:
            D = ovr_squared_hinge(Z, y, clip / np.linalg.norm(A, axis=1))[1]
        else:
            raise ValueError(loss)
        G = D[:, :, None] * A[:, None, :]  # per-example gradients (n, K, P)
        gn = np.sqrt((G**2).sum(axis=(1, 2)))
        ok = np.isfinite(gn)
        c = w * np.minimum(1.0, clip / np.maximum(gn, 1e-300))
    S = (c[ok, None, None] * G[ok]).sum(axis=0)
    return S, int(np.sum(~ok))


def ovr_squared_hinge(Z, y, thr):
    """``(values (n,), derivatives (n, K))`` of the one-vs-rest squared hinge: output k's
    target is +1 for class k, -1 otherwise; its derivative ``-2 y_k (1 - y_k z_k)`` (0 past the
    margin) is held in ``[-t, t]``, ``t = thr / sqrt(K)``, and its value is the squared hinge
    continued linearly where the derivative is held. (Call with numpy's warnings off.)"""
    n, k_out = Z.shape
    Y = np.where(np.arange(k_out)[None, :] == np.asarray(y, int)[:, None], 1.0, -1.0)
    t = (np.asarray(thr, float) / np.sqrt(k_out))[:, None]
    U = Y * Z
    D = np.clip(np.where(U < 1.0, -2.0 * Y * (1.0 - U), 0.0), -t, t)
    knee = 1.0 - t / 2.0  # where |2 (1 - u)| reaches t
    V = np.where(U >= 1.0, 0.0, np.where(U >= knee, (1.0 - U) ** 2, t * t / 4.0 + t * (knee - U)))
    return V.sum(axis=1), D


def clipped_sum(X, y, w, data_norm, fit_intercept, loss, clip, coef, intercept):
    """The clipped gradient sum with rows clipped to data_norm (kernel coordinates, c = 1)."""
    norms = np.linalg.norm(X, axis=1)
    s = np.minimum(1.0, data_norm / np.maximum(norms, 1e-300))
    A = augmented_rows(X, s, fit_intercept)
    theta = np.hstack([coef, intercept[:, None]]) if fit_intercept else coef
    S, _ = clipped_gradient_sum(A, y, w, loss, clip, theta)
    return (S[:, :-1], S[:, -1]) if fit_intercept else (S, np.zeros(S.shape[0]))


def hessian_sum(A, w, loss, theta):
    """``sum_i w_i H_i`` (class-major for the multinomial loss), as the backends define it."""
    k_out, P = theta.shape
    H = np.zeros((k_out * P, k_out * P))
    Z = A @ theta.T
    if loss == K.LOSS_LOGISTIC:
        s = 1.0 / (1.0 + np.exp(-Z[:, 0]))
        H += (A * (w * s * (1.0 - s))[:, None]).T @ A
    elif loss == K.LOSS_MULTINOMIAL:
        p = softmax(Z, axis=1)
        for a in range(k_out):
            for b in range(k_out):
                f = w * (p[:, a] * ((a == b) - p[:, b]))
                H[a * P : (a + 1) * P, b * P : (b + 1) * P] = (A * f[:, None]).T @ A
    elif loss == K.LOSS_SQUARED:
        H += (A * w[:, None]).T @ A
    else:
        raise ValueError(loss)
    return H


def suff_stats(A, w, y):
    """``(sum_i w_i x'_i x'_i^T, sum_i w_i y_i x'_i)``."""
    return (A * w[:, None]).T @ A, A.T @ (w * y)


def objective(A, y, w, loss, clip, theta):
    """``(sum_i w_i l_i, its gradient (K, P))`` for the clipped loss (Huber for the squared
    loss: its gradient is the clipped one; the logistic losses are not clipped here, so the
    test must use a clip above their Lipschitz bound)."""
    Z = A @ theta.T
    an = np.linalg.norm(A, axis=1)
    if loss == K.LOSS_LOGISTIC:
        t = y * Z[:, 0]
        vals = np.logaddexp(0.0, -t)
        D = (-y * expit(-t))[:, None]
    elif loss == K.LOSS_MULTINOMIAL:
        m = Z.max(axis=1)
        vals = m + np.log(np.exp(Z - m[:, None]).sum(axis=1)) - Z[np.arange(len(y)), y.astype(int)]
        D = softmax(Z, axis=1)
        D[np.arange(len(y)), y.astype(int)] -= 1.0
    elif loss == K.LOSS_SQUARED:
        r = Z[:, 0] - y
        thr = clip / an
        vals = np.where(np.abs(r) <= thr, 0.5 * r * r, thr * np.abs(r) - 0.5 * thr * thr)
        D = np.clip(r, -thr, thr)[:, None]
    elif loss == K.LOSS_SQUARED_HINGE_OVR:
        vals, D = ovr_squared_hinge(Z, y, clip / an)
    else:
        raise ValueError(loss)
    return float(np.dot(w, vals)), (w[:, None, None] * D[:, :, None] * A[:, None, :]).sum(axis=0)


# --- a driver of the package's kernels (not an oracle: it calls them) ---------------------


def gd_full_batch(
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
    step_sizes,
    noise_std,
    momentum,
    coef0,
    intercept0,
    gen,
):
    """Full-batch DP gradient descent: T = len(step_sizes) steps of the package's kernels
    :func:`skdpgd._compute.kernels.dense_grad_sum` (the clipped sum) and ``_noisy_update`` (noise
    and
    momentum step). A test driver (the estimators run the same two kernels through
    :mod:`skdpgd._full_batch.mechanisms`); it was ``skdpgd._compute.kernels.run_gd_full_batch``.

    Step t releases ``S_t = sum_i w_i clip(grad_i(theta_t)) + N(0, noise_std[t]^2 I)``:
    each term has norm <= clip_norm, so the sum has sensitivity 2 clip_norm (replace-one)
    or clip_norm (add/remove-one). Then, as post-processing, ``g_t = S_t / n + alpha * w``
    (intercept not penalised) and, with momentum beta (Hong et al., Eq. 3, bias-corrected):
    ``v_t = beta v_{t-1} + (1 - beta) g_t``, ``theta_{t+1} = theta_t - step_t v_t / (1 - beta^t)``.
    ``momentum = 0`` is plain gradient descent. Returns the last iterate (coef, intercept).
    """
    n = X.shape[0]
    coef = np.array(coef0, dtype=np.float64)
    intercept = np.array(intercept0, dtype=np.float64)
    vcoef = np.zeros_like(coef)
    vint = np.zeros_like(intercept)
    fit_intercept, alpha, momentum = bool(fit_intercept), float(alpha), float(momentum)
    beta_pow = 1.0
    for t in range(len(step_sizes)):
        gcoef, gint, _ = K.dense_grad_sum(
            X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm, coef, intercept
        )
        beta_pow *= momentum
        K._noisy_update(
            gcoef[None],
            gint[None],
            float(noise_std[t]),
            float(n),
            alpha,
            float(step_sizes[t]),
            momentum,
            beta_pow,
            fit_intercept,
            coef,
            intercept,
            vcoef,
            vint,
            gen,
        )
    return coef, intercept

"""Exact (non-private) solver for the output-perturbation mechanism.

Output perturbation needs the minimiser of a strongly convex objective to a *certified*
tolerance: if ``||grad F(theta_hat)|| <= g`` and F is alpha-strongly convex then
``||theta_hat - theta*|| <= g / alpha`` (strong convexity: ``||grad F(a) - grad F(b)|| >=
alpha ||a - b||``). The certificate is checked on the returned point with the exact gradient.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from ._kernels import objective_and_gradient


def solve_regularised(X, y, sample_weight, row_scale, row_norm_aug, loss, param, clip_norm,
                      fit_intercept, alpha, alpha_intercept, n_outputs, grad_tol):
    """Minimise the regularised clipped objective until ``||grad F|| <= grad_tol``.

    Runs L-BFGS from zero, restarting from its last point while the certificate fails
    (a strongly convex smooth objective always gets there). Returns (coef, intercept).
    """
    d = X.shape[1]
    n_coef = n_outputs * d
    gcoef = np.zeros((n_outputs, d))
    gint = np.zeros(n_outputs)

    def unpack(theta):
        coef = theta[:n_coef].reshape(n_outputs, d)
        intercept = theta[n_coef:] if fit_intercept else np.zeros(n_outputs)
        return np.ascontiguousarray(coef), np.ascontiguousarray(intercept)

    def fun(theta):
        coef, intercept = unpack(theta)
        f = objective_and_gradient(X, y, sample_weight, row_scale, row_norm_aug, loss, param,
                                   clip_norm, fit_intercept, alpha, alpha_intercept, coef,
                                   intercept, gcoef, gint)
        grad = np.concatenate([gcoef.ravel(), gint]) if fit_intercept else gcoef.ravel().copy()
        return f, grad

    theta = np.zeros(n_coef + (n_outputs if fit_intercept else 0))
    gnorm = np.inf
    for _ in range(20):
        res = minimize(fun, theta, jac=True, method="L-BFGS-B",
                       options={"maxiter": 5000, "gtol": grad_tol * 1e-3, "ftol": 0.0,
                                "maxcor": 30})
        theta = res.x
        gnorm = float(np.linalg.norm(fun(theta)[1]))
        if gnorm <= grad_tol:
            return unpack(theta)
    raise RuntimeError(
        f"the exact solver did not reach the gradient tolerance {grad_tol:.3g} "
        f"(reached {gnorm:.3g}); output perturbation cannot be certified. "
        "Increase alpha or use a gradient-descent schedule."
    )

"""Second-order and sufficient-statistics mechanisms: DP damped Newton and AdaSSP.

Both release *matrices* besides vectors. A symmetric matrix ``S`` is released as

    S~ = S + E,   E_jj ~ N(0, s^2),  E_jk = E_kj ~ N(0, s^2 / 2)  (j < k),

which is the Gaussian mechanism on the vector ``v(S) = (S_jj, sqrt(2) S_jk for j < k)``
with i.i.d. noise ``N(0, s^2)``: ``||v(A) - v(B)||_2 = ||A - B||_F``, so a release with
Frobenius sensitivity ``Delta_F`` and ``s = z Delta_F`` is ``1/z``-GDP, and it composes with
the other releases of the fit in Gaussian DP like any vector release. The operator norm of E
is about ``sqrt(2) s sqrt(D)`` for a D x D matrix; eigenvalues of ``S~`` are floored at that
public level before the matrix is inverted.

**Sensitivities** (per example, in the coordinates the reductions use; see
:mod:`skdpgd._compute.backends`), each written next to the release that relies on it:

* Hessian term of the binary log-loss: ``w s(1 - s) x x^T``, PSD with Frobenius norm
  ``<= ||x||^2 / 4``; multinomial: ``w (diag(p) - p p^T) (x) x x^T`` with
  ``||A (x) B||_F = ||A||_F ||B||_F`` and ``||diag(p) - p p^T||_F^2 = a - 2b + a^2`` where
  ``a = sum p_k^2``, ``b = sum p_k^3 >= a^2`` (Cauchy-Schwarz), so it is ``<= a - a^2 <= 1/4``:
  Frobenius norm ``<= ||x||^2 / 2``. Two PSD matrices with Frobenius norm ``<= h`` differ by
  at most ``sqrt(2) h`` (their inner product is >= 0): the sum's sensitivity is
  ``sqrt(2) h R^2`` replace-one and ``h R^2`` add/remove-one, with ``||x||^2 <= R^2``.
* ``x x^T`` of the squared loss: PSD rank one with Frobenius norm ``||x||^2 <= R^2``: the same
  argument with ``h = 1``. ``y x`` with ``|y| <= Y``: ``2 Y R`` replace-one, ``Y R`` add/remove.
"""

from __future__ import annotations

import math

import numpy as np

from .. import policy
from .._core.noise import gaussian, is_secure, symmetric_release
from .mechanisms import Mechanism, Outcome, _check_finite
from ..accounting import Release, compose_gdp, relative_multiplier


def symmetric_noise(gen, size, std):
    """``E`` of the module docstring: diagonal ``N(0, std^2)``, off-diagonal ``N(0, std^2/2)``."""
    G = gen.standard_normal((size, size))
    upper = np.triu(G, 1) * (std / math.sqrt(2.0))
    return upper + upper.T + np.diag(np.diag(G) * std)


def noisy_symmetric(M, std, gen, sens):
    """``M + E`` (:func:`symmetric_noise`): the release of a symmetric matrix whose Frobenius
    sensitivity is ``sens``. ``E`` is iid ``N(0, std^2)`` noise on the vector
    ``(M_ii, sqrt(2) M_ij)_{i<j}``, whose L2 norm is ``||M||_F``; secure mode releases that
    vector on a lattice (:func:`skdpgd._core.noise.symmetric_release`)."""
    if is_secure(gen):
        return symmetric_release(M, std, gen, sens, math.sqrt(2.0))
    return M + symmetric_noise(gen, M.shape[0], std)


#: At most this size, the D x D eigendecomposition and solve run on one BLAS thread: threads
#: cost more than they gain on such matrices, and far more on a busy machine (measured on a
#: loaded 2-core machine, D = 201: 7 ms on one thread, 530 ms on two).
SINGLE_THREAD_SOLVE_MAX = 1024

_BLAS_CONTROLLER = None


def _blas_single_thread(size):
    """A context that holds BLAS to one thread for a ``size`` x ``size`` solve (threadpoolctl,
    a scikit-learn dependency), or does nothing for larger ones."""
    global _BLAS_CONTROLLER
    import contextlib

    if size > SINGLE_THREAD_SOLVE_MAX:
        return contextlib.nullcontext()
    try:
        if _BLAS_CONTROLLER is None:
            from threadpoolctl import ThreadpoolController

            _BLAS_CONTROLLER = ThreadpoolController()
        return _BLAS_CONTROLLER.limit(limits=1, user_api="blas")
    except Exception:  # pragma: no cover - threadpoolctl missing or unusable
        return contextlib.nullcontext()


def floored_inverse_solve(S, floor, ridge, rhs):
    """Solve ``(P + diag(ridge)) x = rhs`` where P is S with its eigenvalues raised to
    ``floor`` (``ridge``: a vector, e.g. the penalty on the weights and 0 on the intercept)."""
    with _blas_single_thread(S.shape[0]):
        vals, vecs = np.linalg.eigh(0.5 * (S + S.T))
        P = (vecs * np.maximum(vals, floor)) @ vecs.T
        P[np.diag_indices_from(P)] += ridge
        return np.linalg.solve(P, rhs)


def fresh_subsample(gen, rate):
    """``(seed, rate)`` of a fresh Poisson subsample, its seed drawn from the fit's generator
    (:func:`skdpgd._compute.backends.poisson_subsample`), or None for the full sum (rate 1)."""
    return None if rate >= 1.0 else (int(gen.integers(0, 2**63 - 1)), float(rate))


def _relation_unit(setup):
    """sqrt(2) replace-one, 1 add/remove-one: a matrix release's sensitivity unit."""
    return math.sqrt(2.0) if setup.relation == "replace" else 1.0


def _matrix_sensitivity(h, r2):
    """Frobenius sensitivity of a sum of PSD terms of Frobenius norm <= h r2."""
    return {"replace": math.sqrt(2.0) * h * r2, "add_remove": h * r2}


class DampedNewton(Mechanism):
    """DP damped Newton for the logistic losses (Ganesh, Haghifam, Steinke and Thakurta, 2023).

    Iteration t releases the clipped gradient sum ``g~_t`` (sensitivity 2G / G, as gradient
    descent); the iterations in the plan's public ``hessian_steps`` also release a Hessian sum
    ``H~_t`` at the same point (module docstring), the others reuse the last released one.
    When both are released they are computed in one pass over X (the same per-example terms
    as the two separate sums, so the same bounds). Then, as post-processing: floor the
    eigenvalues of ``H~`` at the noise's own operator-norm scale, add ``N alpha`` on the
    weights, and take the damped step ``theta -= d / (1 + R lambda)`` with ``d = H^-1 g`` and
    ``lambda = sqrt(g . d)`` the (noisy) Newton decrement: for the logistic loss,
    self-concordant with constant ``R`` (the row bound), this step never overshoots when H is
    the exact Hessian at theta.

    **Subsampled Hessian releases.** With a rate ``q < 1`` (the plan's ``hessian_rate``: a
    number, or ``'auto'``, :func:`skdpgd.policy.hessian_rate` of the public N, D, the
    release's calibrated multiplier and the released signal scale), a Hessian release is
    ``H~ = sum_{i in S} w_i H_i + E`` over a Poisson subsample S: each row is in S
    independently with probability q, drawn from a seed of the fit's generator
    (:func:`skdpgd._compute.backends.poisson_subsample`), independently of the data. Privacy, with
    no
    amplification claimed: for neighbouring datasets couple the indicators of the rows they
    share (the indicators are i.i.d., so indexing them by position or by row gives the same
    output distribution). For every realisation of the indicators, the two sums differ by at
    most one example's term (replace-one: the replaced row's two terms when it is in S, 0
    otherwise; add/remove-one: the extra row's term or 0), so the Frobenius distance is
    ``<= sqrt(2) h R^2`` / ``<= h R^2``, the sensitivity of the full sum. Conditionally on the
    indicators the release is the Gaussian mechanism with that sensitivity and noise
    ``z Delta_F``, hence ``(epsilon, delta_z(epsilon))``-DP for every epsilon with the
    ``1/z``-GDP curve; the unconditional output is the mixture of these with the same
    (data-independent) weights on both datasets, and the hockey-stick divergence is jointly
    convex, so the mixture meets the same curve: it is ``1/z``-GDP, exactly as the full-sum
    release, and composes with the other releases as before. The indicators are fresh for
    every release and never published. Dividing by q (an unbiased estimate of the full sum)
    is post-processing; so is the floor, raised to ``sqrt(2) s sqrt(D) / q``.

    **Budget split.** The T gradient releases get ``gradient_share`` of ``mu^2`` together and
    the ``T_H`` Hessian releases the rest: relative multipliers 1 for the gradients and
    ``sqrt(T_H s / ((1 - s) T))`` for the Hessians (s the share; with ``T_H = T``, each
    iteration's split is s : 1 - s). The accountant scales all of them to the budget exactly.
    """

    name = "newton"
    #: its steps solve with the Hessian of a smooth objective: no non-smooth penalty
    accepts_nonsmooth = False
    counts_iterations = has_start = warm_start = True

    @staticmethod
    def _hessian_steps(plan):
        steps = plan.hessian_steps
        return tuple(range(plan.n_steps)) if steps is None else tuple(int(t) for t in steps)

    def releases(self, setup, plan):
        h = setup.loss.hessian_frobenius
        # per-example Hessian term: Frobenius <= h ||x~||^2 <= h row_bound^2 (original coords);
        # both sums are raised by the road's rounding margin at calibration, whose dim covers a
        # second-moment term (the row's scale squared: mechanisms.rounding_dim)
        hess = _matrix_sensitivity(h, setup.row_bound**2)
        steps = self._hessian_steps(plan)
        if not steps or steps[0] != 0 or any(t >= plan.n_steps for t in steps):
            raise ValueError(
                "a Newton plan releases a Hessian at iteration 0 and at iterations below T only."
            )
        s = plan.gradient_share
        inv2 = compose_gdp(plan.noise_multipliers) ** 2
        ratio = relative_multiplier(len(steps), 1.0 - s, s, inv2)
        return [
            Release(
                "gradient sums", plan.noise_multipliers, setup.grad_sensitivity, setup.relation
            ),
            Release("Hessian sums", np.full(len(steps), ratio), hess, setup.relation),
        ]

    def hessian_rates(self, setup, plan, hess):
        """The public Poisson rate of each Hessian release (1: the full sum)."""
        rate = plan.hessian_rate
        if rate != "auto":
            return np.full(len(hess.multipliers), float(rate))
        unit = _relation_unit(setup)
        return np.array(
            [
                policy.hessian_rate(
                    setup.n_public,
                    setup.problem.n_params,
                    float(z),
                    unit,
                    setup.problem.signal_scale,
                    setup.n_outputs,
                )
                for z in hess.multipliers
            ]
        )

    def run(self, rows, setup, plan, releases, gen, start=None):
        grads, hess = releases
        c = setup.column
        k_out, d = setup.n_outputs, rows.n_features
        P = d + int(setup.fit_intercept)
        D = k_out * P
        n = setup.n_public
        loss = setup.loss
        clip = setup.lipschitz / c
        alpha = setup.l2 / (c * c)  # on the weights, in kernel coordinates
        ridge = np.tile(np.append(np.full(d, n * alpha), 0.0 if setup.fit_intercept else []), k_out)
        # noise in kernel coordinates: gradients scale by 1/c, Hessians by 1/c^2
        g_std = grads.noise_std / c
        h_std = hess.noise_std / (c * c)
        r_kernel = setup.row_bound / c  # self-concordance constant of the logistic losses
        steps = self._hessian_steps(plan)
        rates = self.hessian_rates(setup, plan, hess)
        coef = np.zeros((k_out, d))
        intercept = np.zeros(k_out) if start is None else np.array(start, dtype=float)
        H = floor = None
        k = -1  # index of the last Hessian release
        for t in range(plan.n_steps):
            # non-finite per-example terms contribute 0; only released values stop the fit
            new_hessian = t in steps
            if new_hessian:
                k += 1
            if new_hessian:
                # rate < 1: a Poisson subsample from a seed of the fit's generator (class
                # docstring); the backend reads X once for both sums where it can
                sample = fresh_subsample(gen, rates[k])
                gcoef, gint, _, H = rows.grad_hessian_sum(
                    coef, intercept, loss.code, loss.param, clip, sample=sample
                )
            else:
                gcoef, gint, _ = rows.grad_sum(coef, intercept, loss.code, loss.param, clip)
            g = np.hstack([gcoef, gint[:, None]]) if setup.fit_intercept else gcoef
            g = g.ravel()
            if g_std[t] > 0:
                g = gaussian(g, g_std[t], gen, grads.own_sensitivity / c)
            if new_hessian:
                if h_std[k] > 0:
                    H = noisy_symmetric(H, h_std[k], gen, hess.own_sensitivity / (c * c))
                # post-processing: the estimate of the full sum and its noise floor
                H = H / rates[k]
                floor = (
                    math.sqrt(2.0) * h_std[k] * math.sqrt(D) / rates[k]
                    if h_std[k] > 0
                    else 1e-12 * n
                )
            if setup.progress is not None:
                setup.progress.released(
                    np.array(
                        [grads.multipliers[t]] + ([hess.multipliers[k]] if new_hessian else [])
                    ),
                    t,
                    plan.n_steps,
                )
            theta = (np.hstack([coef, intercept[:, None]]) if setup.fit_intercept else coef).ravel()
            grad_total = g + ridge * theta  # gradient of N F (weights penalised)
            step = floored_inverse_solve(H, floor, ridge, grad_total)
            # Newton decrement of F = (sum) / N: sqrt(F' F''^-1 F') = sqrt(g . H^-1 g / N)
            decrement = math.sqrt(max(float(grad_total @ step), 0.0) / n)
            theta = theta - step / (1.0 + r_kernel * decrement)
            if not np.all(np.isfinite(theta)):
                _check_finite(-1, t)
            theta = theta.reshape(k_out, P)
            coef = np.ascontiguousarray(theta[:, :d])
            intercept = (
                np.ascontiguousarray(theta[:, d]) if setup.fit_intercept else np.zeros(k_out)
            )
        return Outcome(coef / c, intercept, hessian_rates=rates)


def floored_eigh(M, floor):
    """``(values, vectors)`` of the symmetric part of M, the values raised to ``floor``."""
    with _blas_single_thread(M.shape[0]):
        vals, vecs = np.linalg.eigh(0.5 * (M + M.T))
    return np.maximum(vals, floor), vecs


def kronecker_solve(a_eig, s_eig, ridge, G, n):
    """``D = M^-1 G`` for ``M = (A (x) S) / n + ridge I`` (``G`` of shape (K, P), parameters
    class-major), from the eigendecompositions ``a_eig = (a, U)`` of A (K x K) and
    ``s_eig = (s, V)`` of S (P x P): ``M^-1 = (U (x) V) diag(1 / (a_i s_j / n + ridge))
    (U (x) V)^T``."""
    a, U = a_eig
    s, V = s_eig
    return U @ ((U.T @ G @ V) / (np.outer(a, s) / n + ridge)) @ V.T


class KroneckerNewtonMechanism(Mechanism):
    """DP damped Newton for the multinomial loss with a Kronecker-factored Hessian.

    The multinomial Hessian sum ``sum_i w_i (diag(p_i) - p_i p_i^T) (x) x_i x_i^T`` has
    ``(K P)^2`` entries and costs ``K (K + 1) / 2`` weighted outer products per row. This
    mechanism replaces it by ``(A (x) S) / N`` (the factorisation of K-FAC, Martens and Grosse
    2015), with ``S = sum_i w_i x_i x_i^T`` over the augmented rows (P x P, released **once**)
    and ``A_t = sum_i w_i (diag(p_i) - p_i p_i^T)`` at the current iterate (K x K, released at
    every iteration), then takes :class:`DampedNewton`'s damped step with that matrix. The
    curvature only preconditions the steps: the gradient is the exact clipped one, so the
    fixed point is the minimiser whatever the approximation.

    **Releases and sensitivities** (written with the code that declares them):

    * gradient sums ``g~_t``: as gradient descent, ``2G`` replace-one, ``G`` add/remove-one;
    * ``S~ = sum_{i in Q} w_i x~_i x~_i^T + E`` once, over a Poisson subsample Q of rate q
      (the plan's ``hessian_rate``; the argument of :class:`DampedNewton`: no amplification
      claimed, the same curve as the full sum): each term is PSD rank one with Frobenius norm
      ``w_i ||x~_i||^2 <= R^2``, so ``sqrt(2) R^2`` replace-one and ``R^2`` add/remove-one;
    * ``A~_t = sum_{i in Q_t} w_i (diag(p_i) - p_i p_i^T) + E_t`` over a fresh Poisson
      subsample of the same rate (same argument): each term is PSD with Frobenius norm
      ``<= 1/2`` (module docstring, ``a - a^2 <= 1/4``), so ``sqrt(2) / 2`` replace-one and
      ``1/2`` add/remove-one, whatever the rows.

    **Budget split.** The T gradient releases get ``gradient_share`` of ``mu^2`` together, the
    T class-curvature releases ``curvature_share``, ``S~`` the rest; the accountant scales all
    of them to the budget exactly (relative multipliers ``sqrt(T_j s / (s_j sum z^-2))``).

    **Post-processing.** ``S~ / q`` with its eigenvalues floored at the noise's operator-norm
    scale ``sqrt(2) s_S sqrt(P) / q``, ``A~_t / q`` floored at ``sqrt(2) s_A sqrt(K) / q``,
    the preconditioner ``(A~+ (x) S~+) / N + N alpha I`` (the penalty on every coordinate:
    only the preconditioner; the gradient's penalty leaves the intercepts free), and the step
    ``theta -= d / (1 + R lambda)``, ``d = M^-1 g``, ``lambda = sqrt(g . d / N)``.
    """

    name = "kronecker"
    #: its steps solve with the Hessian of a smooth objective: no non-smooth penalty
    accepts_nonsmooth = False
    counts_iterations = has_start = warm_start = True

    @staticmethod
    def _shares(plan):
        s_g = float(plan.gradient_share)
        s_a = float(plan.curvature_share)
        s_s = 1.0 - s_g - s_a
        if not (s_g > 0 and s_a > 0 and s_s > 0):
            raise ValueError(
                "a Kronecker-factored Newton plan needs positive gradient, curvature and X'X "
                f"shares, got {s_g!r}, {s_a!r} and {s_s!r}."
            )
        return s_g, s_a, s_s

    def releases(self, setup, plan):
        if setup.loss.second_order != "newton" or setup.n_outputs < 2:
            raise ValueError(
                "schedule='kronecker' fits the multinomial loss only (three or more classes)."
            )
        s_g, s_a, s_s = self._shares(plan)
        T = plan.n_steps
        inv2 = compose_gdp(plan.noise_multipliers) ** 2
        # every sum below is raised by the road's rounding margin at calibration (its dim
        # covers X'X's squared row scale and the softmax's normalisation)
        return [
            Release(
                "gradient sums", plan.noise_multipliers, setup.grad_sensitivity, setup.relation
            ),
            # S: one PSD rank-one term of Frobenius norm <= ||x~||^2 <= row_bound^2 per row
            Release(
                "X'X",
                np.full(1, relative_multiplier(1, s_s, s_g, inv2)),
                _matrix_sensitivity(1.0, setup.row_bound**2),
                setup.relation,
            ),
            # A_t: one PSD term of Frobenius norm <= 1/2 per row (weights <= 1)
            Release(
                "class curvature sums",
                np.full(T, relative_multiplier(T, s_a, s_g, inv2)),
                _matrix_sensitivity(0.5, 1.0),
                setup.relation,
            ),
        ]

    def sample_rate(self, setup, plan, xtx):
        """The public Poisson rate of the ``X'X`` and class-factor releases (1: full sums):
        the plan's, or :func:`skdpgd.policy.hessian_rate` for P parameters and the ``X'X``
        release's multiplier, with the target :data:`skdpgd.policy.AUTO_KRONECKER_RATE_SNR`."""
        rate = plan.hessian_rate
        if rate != "auto":
            return float(rate)
        unit = _relation_unit(setup)
        return policy.hessian_rate(
            setup.n_public,
            setup.problem.n_params // max(1, setup.n_outputs),
            float(xtx.multipliers[0]),
            unit,
            setup.problem.signal_scale,
            snr_target=policy.current().AUTO_KRONECKER_RATE_SNR,
        )

    def run(self, rows, setup, plan, releases, gen, start=None):
        from .._compute.kernels import LOSS_SQUARED

        grads, xtx, curv = releases
        c = setup.column
        k_out, d = setup.n_outputs, rows.n_features
        P = d + int(setup.fit_intercept)
        n = setup.n_public
        loss = setup.loss
        clip = setup.lipschitz / c
        alpha = setup.l2 / (c * c)  # on the weights, in kernel coordinates
        ridge = np.append(np.full(d, n * alpha), 0.0 if setup.fit_intercept else [])
        ridge = np.tile(ridge, (k_out, 1))  # (K, P): the objective's penalty
        g_std = grads.noise_std / c  # kernel coordinates: gradients scale by 1/c
        s_std = float(xtx.noise_std[0]) / (c * c)  # X'X by 1/c^2
        a_std = curv.noise_std  # the class factor does not depend on the coordinates
        r_kernel = setup.row_bound / c  # self-concordance constant of the logistic losses
        q = self.sample_rate(setup, plan, xtx)
        # S, once: a Poisson subsample from a seed of the fit's generator when q < 1
        S = rows.hessian_sum(
            np.zeros((1, d)), np.zeros(1), LOSS_SQUARED, sample=fresh_subsample(gen, q)
        )
        if s_std > 0:
            S = noisy_symmetric(S, s_std, gen, xtx.own_sensitivity / (c * c))
        S = S / q  # post-processing: the estimate of the full sum and its noise floor
        s_floor = math.sqrt(2.0) * s_std * math.sqrt(P) / q if s_std > 0 else 1e-12 * n
        s_eig = floored_eigh(S, s_floor)  # S is released once: one eigendecomposition
        coef = np.zeros((k_out, d))
        intercept = np.zeros(k_out) if start is None else np.array(start, dtype=float)
        for t in range(plan.n_steps):
            # non-finite per-example terms contribute 0; only released values stop the fit
            gcoef, gint, _ = rows.grad_sum(coef, intercept, loss.code, loss.param, clip)
            # the class factor over a fresh Poisson subsample of the same rate (the argument of
            # DampedNewton: the full sum's sensitivity for every subsample), divided by q
            A = rows.class_curvature_sum(coef, intercept, sample=fresh_subsample(gen, q))
            g = np.hstack([gcoef, gint[:, None]]) if setup.fit_intercept else gcoef
            if g_std[t] > 0:
                g = gaussian(g, g_std[t], gen, grads.own_sensitivity / c)
            if a_std[t] > 0:
                A = noisy_symmetric(A, a_std[t], gen, curv.own_sensitivity)
            A = A / q
            a_floor = math.sqrt(2.0) * a_std[t] * math.sqrt(k_out) / q if a_std[t] > 0 else 0.0
            if setup.progress is not None:
                extra = [xtx.multipliers[0]] if t == 0 else []
                setup.progress.released(
                    np.array([grads.multipliers[t], *extra, curv.multipliers[t]]),
                    t,
                    plan.n_steps,
                )
            theta = np.hstack([coef, intercept[:, None]]) if setup.fit_intercept else coef
            grad_total = g + ridge * theta  # gradient of N F (weights penalised)
            step = kronecker_solve(
                floored_eigh(A, a_floor), s_eig, max(n * alpha, 1e-12), grad_total, n
            )
            decrement = math.sqrt(max(float(np.sum(grad_total * step)), 0.0) / n)
            theta = theta - step / (1.0 + r_kernel * decrement)
            if not np.all(np.isfinite(theta)):
                _check_finite(-1, t)
            coef = np.ascontiguousarray(theta[:, :d])
            intercept = (
                np.ascontiguousarray(theta[:, d]) if setup.fit_intercept else np.zeros(k_out)
            )
        return Outcome(coef / c, intercept, hessian_rates=(q,))


class SufficientStatisticsMechanism(Mechanism):
    """Ridge regression from noisy sufficient statistics (AdaSSP, Wang 2018).

    Releases ``A~ = sum w x x^T + E`` (Frobenius sensitivity ``sqrt(2) R^2`` replace-one,
    ``R^2`` add/remove-one) and ``b~ = sum w y x + e`` (``2 Y R`` / ``Y R``), with ``x`` the
    augmented row and ``|y| <= Y``; then solves ``(A~+ + N alpha I_w) theta = b~`` where
    ``A~+`` has its eigenvalues floored at the public level ``f sqrt(2) s_A sqrt(D)`` (``f =``
    :data:`skdpgd.policy.SSP_FLOOR` times the noise's operator-norm scale), which plays
    AdaSSP's ridge. One release of each: exact GDP.
    """

    name = "ssp"
    #: it solves the normal equations of a smooth (ridge) objective: no non-smooth penalty
    accepts_nonsmooth = False
    warm_start_with_selection = True

    def releases(self, setup, plan):
        if setup.loss.second_order != "ssp":  # the squared loss
            raise ValueError("schedule='ssp' fits the squared loss only (DPRidge).")
        r2 = setup.row_bound**2
        y_bound = getattr(setup.loss, "y_bound", None)
        if y_bound is None:
            raise ValueError("schedule='ssp' needs a public y_bound.")
        ratio = relative_multiplier(1, 1.0 - plan.gradient_share, plan.gradient_share)
        # both float64 sums are raised by the road's rounding margin at calibration (its dim
        # covers X'X's squared row scale; rescaling the kernel's sums by c and c^2 adds one
        # rounding of the whole sum, within the margin's gamma_{n+1})
        return [
            Release(
                "X'y",
                np.ones(1),
                {
                    "replace": 2.0 * y_bound * setup.row_bound,
                    "add_remove": y_bound * setup.row_bound,
                },
                setup.relation,
            ),
            Release("X'X", np.full(1, ratio), _matrix_sensitivity(1.0, r2), setup.relation),
        ]

    def run(self, rows, setup, plan, releases, gen):
        rel_b, rel_a = releases
        c = setup.column
        d = rows.n_features
        P = d + int(setup.fit_intercept)
        A, b = rows.suff_stats()  # kernel coordinates: x' = x~ / c
        # back to the coordinates of x~ = (s x, c), where the sensitivities are stated
        A = A * (c * c)
        b = b * c
        a_std = float(rel_a.noise_std[0])
        b_std = float(rel_b.noise_std[0])
        if a_std > 0:
            A = noisy_symmetric(A, a_std, gen, rel_a.own_sensitivity)
        if b_std > 0:
            b = gaussian(b, b_std, gen, rel_b.own_sensitivity)
        ridge = np.append(
            np.full(d, setup.n_public * setup.l2), [0.0] if setup.fit_intercept else []
        )
        # the floor: SSP_FLOOR times the noise's operator-norm scale (a public constant)
        floor = (
            policy.current().SSP_FLOOR * math.sqrt(2.0) * a_std * math.sqrt(P) if a_std > 0 else 0.0
        )
        theta = floored_inverse_solve(A, floor, ridge + (1e-12 if a_std == 0 else 0.0), b)
        # theta is (w, b~) on (s x, c): the intercept is c b~
        coef = theta[:d][None, :]
        intercept = np.array([theta[d] * c]) if setup.fit_intercept else np.zeros(1)
        return Outcome(coef, intercept)

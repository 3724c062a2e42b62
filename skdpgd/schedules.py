"""Noise schedules: the *shape* of the noise over the steps, and T and the step size.

A schedule reads public problem constants (:class:`Problem`) and the budget expressed as the
GDP parameter ``mu`` that a full-batch run may spend (``sum_t z_t^-2 <= mu^2``; Hong et al.'s
"R" is ``mu^2``), and returns a :class:`NoisePlan`: relative noise multipliers (one per step),
the step sizes, and the mechanism. It never sees the data and never does privacy arithmetic:
the accountant scales the shape so that the run spends exactly the (epsilon, delta) asked.

Writing your own schedule: subclass :class:`Schedule` (a frozen dataclass) and implement
``plan(problem, mu, max_iter=None) -> NoisePlan``. Use only the fields of ``problem``.

This module holds noise shapes (:class:`Uniform`, :class:`Hong`, :class:`PUR`,
:class:`Exponential`) and the public ``schedule=`` objects of the mechanisms that have no shape
(:class:`Newton`, :class:`SufficientStatistics`, :class:`OutputPerturbation`, :class:`Prior`)
and of the default, :class:`Auto`. Every tuned rule and constant they read (``MAX_AUTO_ITER``,
the 'auto' choice, the penalty rules, the Hessian rate) lives in :mod:`skdpgd.policy`, and
only there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from . import policy

__all__ = [
    "Problem",
    "NoisePlan",
    "Schedule",
    "Auto",
    "Uniform",
    "Hong",
    "PUR",
    "OutputPerturbation",
    "Exponential",
    "hong_shape",
    "Newton",
    "KroneckerNewton",
    "hessian_steps",
    "SufficientStatistics",
    "Choice",
    "AutoGradient",
    "get_schedule",
]


@dataclass(frozen=True)
class Problem:
    """Public constants of a regularised ERM problem ``F = (1/N) sum_i l_i + alpha/2 ||w||^2``.

    Parameters
    ----------
    n_samples : int
        N, the (public) normaliser of the average loss.
    n_params : int
        D, the number of released coordinates per step (weights and intercepts).
    sensitivity : float
        L2 sensitivity of the released gradient *sum*: ``2 G`` for replace-one neighbours,
        ``G`` for add/remove-one. The noise on the mean gradient is ``z_t * sensitivity / N``.
    lipschitz : float
        G, bound on one example's (clipped) gradient norm.
    smoothness : float
        M, smoothness of F (includes alpha).
    strong_convexity : float
        mu, strong convexity of F (alpha; 0 when unregularised).
    loss_bound : float
        B >= F(theta_0) - F*.
    momentum : float
        Momentum beta of the optimiser (0 = plain gradient descent).
    sampling_rate : float
        Poisson sampling rate (1 = full batch).
    second_order : {'newton', 'ssp'} or None
        The second-order mechanism the loss admits (full batch only): ``'newton'`` for the
        logistic losses, ``'ssp'`` (sufficient statistics) for the squared loss.
    signal_scale : float in (0, 1]
        Factor on the signal-to-noise ratio when the typical row is shorter than the clipping
        bound (from a released norm estimate; 1 otherwise).
    fit_intercept : bool
        Whether the model has an intercept (the intercept-only model needs one).
    n_outputs : int
        Rows of the coefficient matrix (K for the multinomial loss, 1 otherwise).
    regression_start : bool
        Whether the loss admits a warm start from a released mean of its clipped targets (the
        Huber and Poisson losses with a public target bound; see
        :func:`skdpgd.policy.auto_prior_start`).
    classifier : bool
        Whether the loss is a classifier's (its intercept-only model is the majority class of
        the released class counts; see :func:`skdpgd.policy.auto_prior_start`).
    regression_select : bool
        Whether a regressor can compare its fit with the intercept-only model of a released
        mean of its clipped targets (a regression loss with an intercept and a public target
        bound; see :func:`skdpgd.policy.auto_prior_start`).
    mechanisms : tuple of str or None
        The mechanisms that can run the problem's penalty (a penalty with a non-smooth part,
        such as L1, runs only on the mechanisms that declare ``accepts_nonsmooth``); None:
        every one. ``schedule='auto'`` chooses among these only.
    """

    n_samples: int
    n_params: int
    sensitivity: float
    lipschitz: float
    smoothness: float
    strong_convexity: float
    loss_bound: float
    momentum: float = 0.0
    sampling_rate: float = 1.0
    second_order: str | None = None
    signal_scale: float = 1.0
    fit_intercept: bool = True
    n_outputs: int = 1
    regression_start: bool = False
    regression_select: bool = False
    classifier: bool = False
    mechanisms: tuple | None = None

    @property
    def kappa(self):
        """Condition number M / mu (inf without strong convexity)."""
        if self.strong_convexity <= 0:
            return math.inf
        return self.smoothness / self.strong_convexity

    def hong_alpha(self, mu):
        """Hong et al.'s ``alpha = D G^2 / (2 R M N^2 B)`` in our normalisation.

        Hong et al. add noise ``sigma_t G / N`` to the mean gradient with ``sum sigma_t^-2 = R``.
        We add ``z_t * sensitivity / N`` with ``sum z_t^-2 = mu^2``; so their G is our
        ``sensitivity`` (2G for replace-one, G for add/remove) and their R is ``mu^2``.
        """
        if math.isinf(mu):
            return 0.0
        N = self.n_samples
        return (
            self.n_params
            * self.sensitivity**2
            / (2.0 * mu * mu * self.smoothness * N * N * self.loss_bound)
        )


@dataclass(frozen=True, eq=False)
class NoisePlan:
    """What a schedule decides.

    Attributes
    ----------
    noise_multipliers : ndarray of shape (T,)
        Relative noise multipliers (the accountant rescales them to the budget).
    step_sizes : ndarray of shape (T,)
        Step size of each gradient step.
    mechanism : {'gradient', 'output'}
        'gradient': noisy gradient descent over T steps; 'output': one Gaussian release of
        the exactly solved regularised optimum (``noise_multipliers`` has one entry).
    n_iter_theory : float
        The number of steps the theory asks for, before the ``MAX_AUTO_ITER`` cap.
    schedule : str
        Name of the schedule that made the plan (``'auto'`` reports what it chose).
    solver_tol_factor : float
        For ``mechanism='output'``: the exact solver stops at gradient norm
        ``solver_tol_factor * sensitivity / N``, which is added to the sensitivity.
    gradient_share : float
        For the second-order mechanisms ('newton', 'ssp'): the share of the budget (of
        ``mu^2``) the vector releases (gradients, ``X'y``) get together; the matrix releases
        (Hessians, ``X'X``) get the rest.
    hessian_steps : tuple of int or None
        For 'newton': the iterations that release a Hessian (None: every one); the others
        reuse the last released Hessian. Public (a function of T and a constant).
    hessian_rate : float in (0, 1] or 'auto'
        For 'newton': the Poisson rate of the rows each Hessian release sums over ('auto':
        :func:`skdpgd.policy.hessian_rate`, a public function of N, D, the release's multiplier
        and the released signal scale).
    curvature_share : float in [0, 1)
        For 'kronecker': the share of the budget (of ``mu^2``) the releases of the class factor
        of the multinomial Hessian get together (``X'X`` gets what the gradients and these
        leave).
    prior_share : float in [0, 1)
        For 'gradient' and 'newton' plans of a classifier with an intercept: the share of the
        budget (of ``mu^2``) spent first on the class counts, whose intercept-only model is the
        starting point of the iterations (0: start at 0).
    prior_switch : (float, float) or None
        With ``prior_share > 0``: ``(s, p)``. When the public signal-to-noise ratio of the fit is
        below ``s`` and the released counts' largest class frequency is at least ``p``, the rest
        of the budget goes to a second release of the class counts and the intercept-only model
        is returned instead of the fit (None: always fit).
    select_share : float in [0, 1)
        With ``prior_share > 0``: the share of the budget (of ``mu^2``) spent, once the fit is
        done, on a noisy comparison of the training accuracy of the fit and of the
        intercept-only model of the released counts; the better of the two is returned (0: the
        fit, always). See :class:`skdpgd._full_batch.mechanisms.WarmStart`.
    candidates : tuple or None
        For ``mechanism='choice'``: ``((schedule, share), ...)``, the fits to choose among,
        each with its share of the budget (of ``mu^2``); ``prior_share`` and
        ``select_share`` are then the shares of the class counts and of the noisy comparison
        (all shares sum to 1). See :class:`skdpgd._full_batch.choice.Choice`.
    blends : tuple of float
        For ``mechanism='choice'``: the free candidates, blends ``b * fit + (1 - b) * prior``
        of each fit's margins with the intercept-only model's.
    """

    noise_multipliers: np.ndarray
    step_sizes: np.ndarray
    mechanism: str = "gradient"
    n_iter_theory: float = math.nan
    schedule: str = ""
    solver_tol_factor: float = 1e-4
    gradient_share: float = 1.0
    hessian_steps: tuple | None = None
    hessian_rate: object = 1.0
    curvature_share: float = 0.0
    prior_share: float = 0.0
    prior_switch: tuple | None = None
    select_share: float = 0.0
    candidates: tuple | None = None
    blends: tuple = ()

    def __post_init__(self):
        if not 0.0 <= self.prior_share < 1.0:
            raise ValueError(f"prior_share must be in [0, 1), got {self.prior_share!r}.")
        if not (0.0 <= self.select_share < 1.0 and self.prior_share + self.select_share < 1.0):
            raise ValueError(
                f"select_share must be in [0, 1) with prior_share + select_share "
                f"< 1, got {self.select_share!r}."
            )
        if self.select_share > 0 and not self.prior_share > 0:
            raise ValueError(
                "a selection (select_share > 0) needs the class counts "
                "(prior_share > 0): they give its second candidate."
            )
        z = np.asarray(self.noise_multipliers, dtype=float).ravel()
        if z.size == 0 or np.any(~np.isfinite(z)) or np.any(z <= 0):
            raise ValueError("a noise plan needs at least one positive, finite multiplier.")
        object.__setattr__(self, "noise_multipliers", z)
        if (self.mechanism == "choice") != (self.candidates is not None):
            raise ValueError("a 'choice' plan, and only one, has candidates.")
        if self.candidates is not None:
            shares = [float(share) for _, share in self.candidates]
            if len(shares) < 1 or any(not share > 0 for share in shares):
                raise ValueError("a choice needs at least one candidate, each with a share > 0.")
            if not (self.prior_share > 0 and self.select_share > 0):
                raise ValueError("a choice needs the class counts and its comparison.")
            total = sum(shares) + self.prior_share + self.select_share
            if abs(total - 1.0) > 1e-9:
                raise ValueError(f"a choice's shares must sum to 1, got {total!r}.")
            object.__setattr__(self, "candidates", tuple(self.candidates))
        object.__setattr__(self, "blends", tuple(float(b) for b in self.blends))
        if any(not 0.0 < b < 1.0 for b in self.blends) or (self.blends and not self.candidates):
            raise ValueError("a choice's blends lie in (0, 1).")
        steps = np.broadcast_to(np.asarray(self.step_sizes, dtype=float), z.shape).copy()
        object.__setattr__(self, "step_sizes", steps)
        if not (isinstance(self.mechanism, str) and self.mechanism):
            # the names are the full-batch registry's (skdpgd._full_batch.registry), which
            # refuses an unknown one before anything is released
            raise ValueError(f"a plan's mechanism is a name, got {self.mechanism!r}.")

    @property
    def n_steps(self):
        return int(self.noise_multipliers.shape[0])


def _resolve_n_iter(theory, max_iter):
    """Apply the user's ``max_iter`` or the automatic cap to a theoretical T."""
    if max_iter is not None:
        return int(max_iter)
    if not theory < policy.current().MAX_AUTO_ITER:  # also catches inf / nan
        return policy.current().MAX_AUTO_ITER
    return max(1, int(math.ceil(theory)))


def argmin_bound(bound, cap, max_points=3000, span=100, refine=100_000):
    """Integer T minimising a theorem's utility bound ``bound(T)`` (vectorised over T).

    The bound is evaluated on a log-spaced grid over [1, span * cap] and refined over the
    integers between the grid neighbours of the best point (when there are at most ``refine``
    of them). Returns ``(T, theory)``: ``theory`` is the minimiser (inf if the bound still
    decreases at the end of the grid) and ``T`` is it capped at ``cap``.
    """
    grid = np.unique(np.round(np.geomspace(1, span * cap, max_points)).astype(np.int64))
    vals = bound(grid.astype(float))
    i = int(np.nanargmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    if hi - lo <= refine:
        ts = np.arange(lo, hi + 1)
        best = int(ts[int(np.nanargmin(bound(ts.astype(float))))])
    else:
        best = int(grid[i])
    theory = math.inf if best >= grid[-1] else float(best)
    return max(1, min(best, cap)), theory


@dataclass(frozen=True)
class Schedule:
    """Base class for noise schedules (see the module docstring)."""

    name = "schedule"
    #: The penalty ``alpha='auto'`` gives a full-batch fit run by this schedule
    #: (:func:`skdpgd.policy.auto_alpha`): 'consistent' (:func:`skdpgd.policy.consistent_alpha`),
    #: 'output' (:func:`skdpgd.policy.output_alpha`) or 'auto' (the one of the mechanism
    #: :func:`skdpgd.policy.auto_mechanism` picks).
    alpha_rule = "consistent"

    def plan(self, problem, mu, max_iter=None):  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class Uniform(Schedule):
    """The same noise at every step, step size 1/M; T minimises Hong et al.'s bound (Thm 4.2).

    With ``sigma_t^2 = T / R`` Theorem 4.1's bound on the excess risk (relative to B) is
    ``E(T) = gamma^T + alpha_H kappa (1 - gamma^T) T`` (``gamma = 1 - 1/kappa``); T is its
    integer minimiser. The theorem's closed form ``ln(1 + ln(1/gamma)/alpha_H) / ln(1/gamma)``
    approximates it when ``kappa alpha_H`` is small but tends to ``1/alpha_H`` when the noise
    dominates (``kappa alpha_H >> 1``), where the bound is smallest near
    ``1 / (2 kappa alpha_H)`` steps: the closed form would run ~2 kappa times too long.
    Without strong convexity there is no bound; T is the closed form's limit ``1/alpha_H``.
    """

    name = "uniform"

    @staticmethod
    def bound(problem, mu):
        """Theorem 4.1/4.2's bound E(T) for the uniform schedule (vectorised over T)."""
        a = problem.hong_alpha(mu)
        log_gamma = math.log1p(-1.0 / problem.kappa)

        def E(T):
            g = np.exp(T * log_gamma)
            return g + a * problem.kappa * (1.0 - g) * T

        return E

    @classmethod
    def n_iter(cls, problem, mu, max_iter=None):
        """(T, theory): the bound's minimiser capped at MAX_AUTO_ITER, or ``max_iter``."""
        a = problem.hong_alpha(mu)
        if a == 0.0:
            theory = math.inf
        elif math.isinf(problem.kappa):
            theory = 1.0 / a
        else:
            theory = argmin_bound(cls.bound(problem, mu), policy.current().MAX_AUTO_ITER)[1]
        return _resolve_n_iter(theory, max_iter), theory

    def plan(self, problem, mu, max_iter=None):
        T, theory = self.n_iter(problem, mu, max_iter)
        return NoisePlan(
            np.ones(T),
            np.full(T, 1.0 / problem.smoothness),
            n_iter_theory=theory,
            schedule=self.name,
        )


def hong_momentum_eta0(beta, kappa):
    """Largest eta_0 allowed by Hong et al., Theorem 4.5, for momentum beta.

    ``eta_0 <= 8 / (sqrt(1 + 64 beta gamma (gamma - beta)^-2 (1 - beta)^-3) + 1)`` with
    ``gamma = 1 - eta_0 / kappa``; the right side grows with gamma, which shrinks as eta_0
    grows, so a fixed-point iteration from gamma = 1 decreases monotonically to the answer.
    The theorem also needs beta < gamma.
    """
    eta0 = 1.0
    for _ in range(200):
        gamma = 1.0 - eta0 / kappa if math.isfinite(kappa) else 1.0
        if gamma <= beta:
            eta0 *= 0.5
            continue
        bound = 8.0 / (
            math.sqrt(1.0 + 64.0 * beta * gamma / ((gamma - beta) ** 2 * (1.0 - beta) ** 3)) + 1.0
        )
        if abs(bound - eta0) <= 1e-12 * eta0:
            return bound
        eta0 = min(eta0, bound) if bound < eta0 else bound
    return eta0


def hong_momentum_log_influence(T, gamma, beta):
    """Influence q_i of step i's noise variance on Hong et al.'s momentum bound (Thm 4.5).

    ``U_3 = sum_t gamma^(T-t) b_t^2 sum_{i<=t} beta^(2(t-i)) sigma_i^2`` with
    ``b_t = (1 - beta) / (1 - beta^t)``, so the weight of ``sigma_i^2`` is
    ``q_i = sum_{t>=i} gamma^(T-t) b_t^2 beta^(2(t-i))`` (computed backwards, O(T)). Theorem 4.7's
    two-phase form (rising before T-hat, falling after) is a bound on this sequence.
    Returned as ``log q`` (the raw values underflow for long runs): with
    ``q_i = gamma^(T-i) r_i``, ``r_i = b_i^2 + (beta^2 / gamma) r_{i+1}`` stays bounded because
    the theorem requires beta < gamma.
    """
    t = np.arange(1, T + 1, dtype=float)
    b2 = ((1.0 - beta) / (1.0 - beta**t)) ** 2
    # r_i = b2_i + rho r_{i+1}: a first-order recursion run backwards (scipy's C filter)
    from scipy.signal import lfilter  # here, not at import: scipy.signal costs ~0.4 s

    r = lfilter([1.0], [1.0, -(beta * beta / gamma)], b2[::-1])[::-1]
    return (T - t) * math.log(gamma) + np.log(r)


@dataclass(frozen=True)
class Hong(Schedule):
    """Hong et al. (2022) dynamic schedule: noise variance proportional to ``q_t^(-1/2)``.

    Lemma 4.3: for influences q_t, the noise variances minimising ``sum_t q_t sigma_t^2`` under
    ``sum_t sigma_t^-2 = R`` are ``sigma_t^2 = (1/R) sum_i sqrt(q_i / q_t)``, i.e. a shape
    ``sigma_t^2 proportional to q_t^(-1/2)``.

    * Gradient descent (Theorem 4.4): ``q_t = gamma^(T - t)``, so ``sigma_t^2`` is proportional
      to ``gamma^(t/2)`` (the noise shrinks over the run), ``gamma = 1 - 1/kappa``, step 1/M.
      The bound is ``E(T) = gamma^T + alpha_H (sum_t gamma^((T-t)/2))^2`` and T is its integer
      minimiser. (The theorem's closed form ``2 kappa ln(1 + 1/(kappa alpha_H))`` tends to
      ``2/alpha_H`` when the noise dominates, where the bound is smallest near
      ``1/(2 kappa alpha_H)``.)
    * Momentum beta > 0 (Theorems 4.5 and 4.7): step ``eta_0 / (2M)`` with the largest eta_0
      Theorem 4.5 allows, ``gamma = 1 - eta_0 / kappa``, influences from the momentum bound
      (:func:`hong_momentum_log_influence`; Theorem 4.7's two-phase form bounds them), and T
      minimises ``gamma^T + 2 eta_0 alpha_H (sum_t sqrt(q_t))^2`` (Lemma 4.3 applied to the
      noise term of Theorem 4.5).

    Needs strong convexity (alpha > 0): without it gamma = 1 and the schedule is undefined.
    """

    name = "hong"

    @staticmethod
    def gd_bound(problem, mu):
        a = problem.hong_alpha(mu)
        log_gamma = math.log1p(-1.0 / problem.kappa)
        sg = math.exp(0.5 * log_gamma)

        def E(T):
            return (
                np.exp(T * log_gamma) + a * ((1.0 - np.exp(0.5 * T * log_gamma)) / (1.0 - sg)) ** 2
            )

        return E

    @staticmethod
    def momentum_bound(problem, mu, eta0):
        a = problem.hong_alpha(mu)
        gamma = 1.0 - eta0 / problem.kappa
        beta = problem.momentum

        def E(Ts):
            out = np.empty(len(Ts))
            for k, T in enumerate(Ts):
                logq = hong_momentum_log_influence(int(T), gamma, beta)
                s = np.sum(np.exp(0.5 * logq))
                out[k] = gamma**T + 2.0 * eta0 * a * s * s
            return out

        return E

    def plan(self, problem, mu, max_iter=None):
        kappa = problem.kappa
        if math.isinf(kappa):
            raise ValueError(
                "the 'hong' schedule needs a strongly convex objective (alpha > 0); "
                "use schedule='pur' or 'uniform' with alpha=0."
            )
        a = problem.hong_alpha(mu)
        beta = problem.momentum
        # step eta0 / (2M): eta0 = 2 is gradient descent's 1/M
        eta0 = 2.0 if beta == 0 else hong_momentum_eta0(beta, kappa)
        # GD with step 1/M contracts by 1 - 1/kappa (Theorem 4.4); Theorem 4.5's momentum
        # rate is 1 - eta0/kappa
        gamma = 1.0 - 1.0 / kappa if beta == 0 else 1.0 - eta0 / kappa
        if a == 0.0:
            theory = math.inf
        elif beta == 0:
            theory = argmin_bound(self.gd_bound(problem, mu), policy.current().MAX_AUTO_ITER)[1]
        else:
            theory = argmin_bound(
                self.momentum_bound(problem, mu, eta0),
                policy.current().MAX_AUTO_ITER,
                max_points=60,
                span=1,
                refine=0,
            )[1]
        T = _resolve_n_iter(theory, max_iter)
        if beta == 0:
            logq = (T - np.arange(1, T + 1, dtype=float)) * math.log(gamma)
        else:
            logq = hong_momentum_log_influence(T, gamma, beta)
        # sigma_t^2 ~ q_t^(-1/2)  =>  z_t ~ q_t^(-1/4), relative to the least noisy step.
        # Multipliers are capped at MAX_SHAPE_RATIO times the smallest (see its comment).
        logz = -(logq - logq.max()) / 4.0
        z = np.exp(np.minimum(logz - logz.min(), math.log(policy.current().MAX_SHAPE_RATIO)))
        return NoisePlan(
            z,
            np.full(T, eta0 / (2.0 * problem.smoothness)),
            n_iter_theory=theory,
            schedule=self.name,
        )


@dataclass(frozen=True)
class PUR(Schedule):
    """Fay et al. (2023) data-independent privacy-utility-ratio schedules, step 1/(2M).

    Noise standard deviation on the *mean* gradient (sensitivity of the mean: ``Delta / N``):

    * strongly convex (alpha > 0, Proposition 3c): ``sigma_t = sqrt(2 mu B r^t / d)`` with
      ``r = 1 - mu / (2M)`` (the noise shrinks geometrically);
    * convex (alpha = 0, Proposition 3a/4a): ``sigma_t = 4 M sqrt(B) / (sqrt(d) t)``, t = 1, 2, ...
      (decays as 1/t: the per-step zCDP cost grows as t^2; the text's ``sqrt(d t)`` is a typo).

    The run continues while the budget lasts: steps are added while ``sum z_t^-2 <= mu^2``
    (``z_t = sigma_t N / Delta``), and the remainder of the budget is spent exactly in a last,
    less noisy step. T is computed numerically (the paper's closed form drops kappa).
    ``max_iter`` caps T (the remainder then goes to the last allowed step).
    """

    #: T (or the mechanism) follows from the budget, so a fixed-T minibatch fit refuses it
    chooses_n_iter = True
    name = "pur"

    def log_sigmas(self, problem, T):
        """log of the paper's noise std on the mean gradient for steps 1..T (log space: the
        strongly convex schedule underflows within a few thousand steps when kappa is small)."""
        d = problem.n_params
        t = np.arange(1, T + 1, dtype=float)
        if problem.strong_convexity > 0:
            r = 1.0 - problem.strong_convexity / (2.0 * problem.smoothness)
            # t = 0, 1, ... in Proposition 3c; one step per t here, the first at t = 0
            return 0.5 * (
                math.log(2.0 * problem.strong_convexity * problem.loss_bound / d)
                + (t - 1.0) * math.log(r)
            )
        return math.log(4.0 * problem.smoothness * math.sqrt(problem.loss_bound / d)) - np.log(t)

    def plan(self, problem, mu, max_iter=None):
        cap = policy.current().MAX_AUTO_ITER if max_iter is None else int(max_iter)
        step = np.full(cap, 1.0 / (2.0 * problem.smoothness))
        if math.isinf(mu):
            return NoisePlan(np.ones(cap), step, n_iter_theory=math.inf, schedule=self.name)
        # z_t^-2 of the paper's schedule (increasing in t; inf once it overflows) and its total
        logz = self.log_sigmas(problem, cap) + math.log(problem.n_samples / problem.sensitivity)
        with np.errstate(over="ignore"):
            inv2 = np.exp(-2.0 * logz)
            cum = np.cumsum(inv2)
        if cum[-1] < mu * mu:
            # the budget outlasts the cap: keep the shape, the accountant scales it up
            return NoisePlan(np.exp(logz), step, n_iter_theory=math.inf, schedule=self.name)
        n_full = int(np.searchsorted(cum, mu * mu, side="left"))  # steps with cum < mu^2
        remainder = mu * mu - (cum[n_full - 1] if n_full > 0 else 0.0)
        z = np.append(np.exp(logz[:n_full]), remainder**-0.5)  # last step: what is left
        return NoisePlan(z, step[: n_full + 1], n_iter_theory=float(n_full + 1), schedule=self.name)


@dataclass(frozen=True)
class OutputPerturbation(Schedule):
    """Output perturbation: solve the regularised problem exactly, release it plus Gaussian noise.

    The minimiser of an alpha-strongly convex F whose per-example losses are G-Lipschitz moves
    by at most ``Delta / (N alpha)`` between neighbours (``Delta`` = 2G replace-one, G add/remove).
    The solver stops at ``||grad F|| <= g`` with ``g = tol * Delta / N``, which adds ``2 g / alpha``
    to the sensitivity. One Gaussian release: exactly ``1/z``-GDP. The intercept is penalised
    by alpha as well, so that F is strongly convex in every coordinate.

    Parameters
    ----------
    tol : float, default=1e-4
        Solver tolerance relative to ``Delta / N`` (it costs a factor ``1 + 2 tol`` in noise).
    """

    tol: float = 1e-4

    #: T (or the mechanism) follows from the budget, so a fixed-T minibatch fit refuses it
    chooses_n_iter = True
    name = "output"
    alpha_rule = "output"

    def plan(self, problem, mu, max_iter=None):
        if problem.strong_convexity <= 0:
            raise ValueError("the 'output' schedule needs alpha > 0 (strong convexity).")
        return NoisePlan(
            np.ones(1),
            np.zeros(1),
            mechanism="output",
            n_iter_theory=0.0,
            schedule=self.name,
            solver_tol_factor=self.tol,
        )


@dataclass(frozen=True)
class Prior(Schedule):
    """The intercept-only model: one release of the weighted class counts (or of the sum of the
    clipped targets), coefficients 0.

    What ``schedule='auto'`` runs when the budget's signal-to-noise ratio is too small for any
    fitted slope to beat the trivial model (:data:`skdpgd.policy.AUTO_PRIOR_MAX_SNR`): the whole
    budget goes to the class prior (or the mean), so the model predicts the majority class (or
    the mean) as well as the budget allows. Needs ``fit_intercept=True``.
    """

    chooses_n_iter = True
    name = "prior"

    def plan(self, problem, mu, max_iter=None):
        return NoisePlan(
            np.ones(1), np.zeros(1), mechanism="prior", n_iter_theory=0.0, schedule=self.name
        )


@dataclass(frozen=True)
class Exponential(Schedule):
    """Noise multipliers ``z_t proportional to decay^t`` (t = 0..T-1), step 1/M.

    ``decay < 1``: the noise shrinks (the per-step GDP ``1/z_t`` grows), which covers Du et
    al.'s growing-mu_t schedule ``mu_t = rho_mu^(t/T) mu_0`` with ``decay = rho_mu^(-1/T)``.
    ``decay = 1`` is uniform. The budget is spent exactly by the exact GDP accountant (not
    by Du et al.'s CLT approximation, which under-reports epsilon).

    Parameters
    ----------
    decay : float or None, default=None
        Ratio between consecutive noise multipliers. None shrinks the noise by
        ``MAX_SHAPE_RATIO`` (10x) from the first step to the last, whatever T is: a fixed
        ratio such as 0.99 over thousands of steps makes the first steps so noisy (0.99^-3000
        is 1e13) that they throw the model arbitrarily far, whatever the budget.
    n_iter : int or None, default=None
        T; None takes the uniform schedule's T (the minimiser of its bound).
    """

    decay: float | None = None
    n_iter: int | None = None

    name = "exponential"

    def plan(self, problem, mu, max_iter=None):
        if self.decay is not None and not self.decay > 0:
            raise ValueError(f"decay must be > 0, got {self.decay!r}.")
        theory = Uniform.n_iter(problem, mu)[1] if self.n_iter is None else float(self.n_iter)
        T = _resolve_n_iter(theory, max_iter if max_iter is not None else self.n_iter)
        log_decay = (
            -math.log(policy.current().MAX_SHAPE_RATIO) / max(T - 1, 1)
            if self.decay is None
            else math.log(self.decay)
        )
        logz = np.arange(T) * log_decay
        z = np.exp(logz - logz.max())
        return NoisePlan(
            z, np.full(T, 1.0 / problem.smoothness), n_iter_theory=theory, schedule=self.name
        )


def hong_shape(gamma, n_iter):
    """Hong et al.'s noise shape for gradient descent with a *given* gamma, as an
    :class:`Exponential` schedule over ``n_iter`` steps.

    Lemma 4.3 with influences ``q_t = gamma^(T - t)``: ``sigma_t^2`` proportional to
    ``gamma^(t/2)``, i.e. multipliers ``z_t`` proportional to ``gamma^(t/4)`` (the noise shrinks
    over the run). What :class:`~skdpgd.neural.DPMLPClassifier` runs for ``schedule='hong'``,
    where no theorem gives gamma or T (a network is not strongly convex): gamma is a parameter
    (``decay``; default :func:`skdpgd.policy.mlp_hong_gamma`) and T is ``max_iter``, and the
    multipliers are not capped. The linear models' ``'hong'`` (:class:`Hong`) instead takes
    ``gamma = 1 - 1/kappa`` and T from Theorem 4.4 and caps the spread at
    :data:`skdpgd.policy.MAX_SHAPE_RATIO`.
    """
    return Exponential(decay=gamma**0.25, n_iter=n_iter)


def _check_share(share):
    if not 0.0 < share < 1.0:
        raise ValueError(f"gradient_share must lie in (0, 1), got {share!r}.")


def _check_rate(rate):
    if not (rate == "auto" or (isinstance(rate, (int, float)) and 0.0 < rate <= 1.0)):
        raise ValueError(f"hessian_rate must be 'auto' or in (0, 1], got {rate!r}.")
    return rate


def hessian_steps(n_iter, n_hessians):
    """The iterations ``floor(k T / n_H)``, ``k < n_H``, that release a Hessian (always 0)."""
    T = int(n_iter)
    k = T if n_hessians is None else max(1, min(T, int(n_hessians)))
    return tuple(sorted({(j * T) // k for j in range(k)}))


@dataclass(frozen=True)
class Newton(Schedule):
    """DP damped Newton (logistic losses): ``n_iter`` iterations, each a gradient release, and
    Hessian releases at ``n_hessians`` of them
    (:class:`skdpgd._full_batch.second_order.DampedNewton`).

    Parameters
    ----------
    n_iter : int, default=4
        Iterations T (a public constant: Newton's method needs a handful; ``max_iter``
        overrides it).
    gradient_share : float in (0, 1), default=0.5
        Share of the budget (of ``mu^2``) spent on the gradients; the Hessians get the rest.
        With a Hessian at every iteration this is each iteration's split.
    n_hessians : int, None or 'auto', default=None
        Hessian releases, at the iterations :func:`hessian_steps` (None: every iteration);
        the iterations in between reuse the last released Hessian. 'auto':
        :func:`skdpgd.policy.auto_hessian_count`.
    hessian_rate : float in (0, 1] or 'auto', default='auto'
        Each Hessian release sums over a Poisson subsample of the rows with this rate (drawn
        from the fit's generator); 'auto': :func:`skdpgd.policy.hessian_rate`. The release's noise
        is the full sum's (same sensitivity; no amplification is claimed), its signal q times
        smaller.
    """

    n_iter: int = 4
    gradient_share: float = 0.5
    n_hessians: int | None = None
    hessian_rate: object = "auto"

    chooses_n_iter = True
    name = "newton"

    def plan(self, problem, mu, max_iter=None):
        _check_share(self.gradient_share)
        rate = _check_rate(self.hessian_rate)
        T = int(max_iter) if max_iter is not None else int(self.n_iter)
        n_h = (
            policy.auto_hessian_count(problem, mu, T, self.gradient_share)
            if self.n_hessians == "auto"
            else self.n_hessians
        )
        return NoisePlan(
            np.ones(T),
            np.ones(T),
            mechanism="newton",
            n_iter_theory=float(T),
            schedule=self.name,
            gradient_share=self.gradient_share,
            hessian_steps=hessian_steps(T, n_h),
            hessian_rate=rate,
        )


@dataclass(frozen=True)
class KroneckerNewton(Schedule):
    """DP damped Newton for the multinomial loss with a Kronecker-factored Hessian: ``X'X``
    released once, the K x K class factor and the gradient at each of ``n_iter`` iterations
    (:class:`skdpgd._full_batch.second_order.KroneckerNewtonMechanism`). Its cost per iteration is a
    gradient pass, whatever the number of classes.

    Parameters
    ----------
    n_iter : int, default=8
        Iterations T (``max_iter`` overrides it).
    gradient_share : float in (0, 1), default=0.85
        Share of the budget (of ``mu^2``) spent on the gradients.
    curvature_share : float in (0, 1), default=0.05
        Share spent on the K x K class factors; ``X'X`` gets the rest.
    hessian_rate : float in (0, 1] or 'auto', default='auto'
        The ``X'X`` release sums over a Poisson subsample of the rows with this rate ('auto':
        :func:`skdpgd.policy.hessian_rate` for P parameters).
    """

    n_iter: int = 8
    gradient_share: float = 0.85
    curvature_share: float = 0.05
    hessian_rate: object = "auto"

    chooses_n_iter = True
    name = "kronecker"

    def plan(self, problem, mu, max_iter=None):
        _check_share(self.gradient_share)
        if not (0.0 < self.curvature_share and self.gradient_share + self.curvature_share < 1.0):
            raise ValueError(
                "curvature_share must be positive with gradient_share + curvature_share < 1, "
                f"got {self.curvature_share!r}."
            )
        rate = _check_rate(self.hessian_rate)
        T = int(max_iter) if max_iter is not None else int(self.n_iter)
        return NoisePlan(
            np.ones(T),
            np.ones(T),
            mechanism="kronecker",
            n_iter_theory=float(T),
            schedule=self.name,
            gradient_share=self.gradient_share,
            curvature_share=self.curvature_share,
            hessian_rate=rate,
        )


@dataclass(frozen=True)
class SufficientStatistics(Schedule):
    """Ridge regression from noisy ``X'X`` and ``X'y`` (AdaSSP, Wang 2018; squared loss only;
    :class:`skdpgd._full_batch.second_order.SufficientStatisticsMechanism`).

    Parameters
    ----------
    gradient_share : float in (0, 1), default=0.5
        Share of the budget (of ``mu^2``) spent on ``X'y``; ``X'X`` gets the rest.
    """

    gradient_share: float = 0.5

    chooses_n_iter = True
    name = "ssp"

    def plan(self, problem, mu, max_iter=None):
        _check_share(self.gradient_share)
        return NoisePlan(
            np.ones(1),
            np.zeros(1),
            mechanism="ssp",
            n_iter_theory=0.0,
            schedule=self.name,
            gradient_share=self.gradient_share,
        )


@dataclass(frozen=True)
class AutoGradient(Schedule):
    """Noisy gradient descent with the shape ``schedule='auto'`` gives it
    (:func:`skdpgd.policy.gradient_schedule`): Hong et al.'s dynamic schedule when
    ``kappa * alpha_H < AUTO_DYNAMIC_THRESHOLD``, the uniform one otherwise. A candidate of
    :class:`Choice`."""

    name = "gradient"

    def plan(self, problem, mu, max_iter=None):
        name = policy.gradient_schedule(problem, mu)
        return _SCHEDULES[name]().plan(problem, mu, max_iter)


def _candidate_schedule(kind):
    """The schedule of a choice candidate named by :func:`skdpgd.policy.auto_choice`."""
    pol = policy.current()
    if kind == "newton":
        return Newton(
            n_iter=pol.AUTO_NEWTON_ITER, gradient_share=pol.AUTO_NEWTON_SHARE, n_hessians="auto"
        )
    if kind == "gradient":
        return AutoGradient()
    return get_schedule(kind)


@dataclass(frozen=True)
class Choice(Schedule):
    """Several fits and the intercept-only model, one of them returned by an accounted noisy
    maximum of their training accuracies (:class:`skdpgd._full_batch.choice.Choice`).

    Parameters
    ----------
    candidates : tuple
        ``((schedule, share), ...)``: each fit's schedule (an instance or a name; 'gradient'
        is :class:`AutoGradient`) and its share of the budget (of ``mu^2``). Each fit gets the
        penalty its own schedule's ``alpha='auto'`` gives at its share of the budget.
    count_share, select_share : float
        The shares of the class counts (the intercept-only model and the iterations' start)
        and of the noisy comparison. All shares sum to 1.
    blends : tuple of float in (0, 1)
        Free candidates: for each fit and each ``b``, the model whose margins are ``b`` times
        the fit's plus ``1 - b`` times the intercept-only model's (post-processing).
    """

    candidates: tuple = ()
    count_share: float = 0.05
    select_share: float = 0.05
    blends: tuple = ()

    chooses_n_iter = True
    name = "choice"

    def plan(self, problem, mu, max_iter=None):
        if max_iter is not None:
            raise ValueError("a choice among mechanisms takes no max_iter.")
        candidates = tuple(
            (
                AutoGradient() if s == "gradient" else get_schedule(s),
                float(share),
            )
            for s, share in self.candidates
        )
        return NoisePlan(
            np.ones(1),
            np.zeros(1),
            mechanism="choice",
            n_iter_theory=0.0,
            schedule=self.name,
            prior_share=float(self.count_share),
            select_share=float(self.select_share),
            candidates=candidates,
            blends=tuple(float(b) for b in self.blends),
        )


@dataclass(frozen=True)
class Auto(Schedule):
    """The default: picks a mechanism and its schedule from public constants only.

    Rule (:func:`skdpgd.policy.auto_schedule`; ``s = N mu / sqrt(D)``,
    :func:`skdpgd.policy.signal_to_noise`; the constants are :mod:`skdpgd.policy`'s):

    * the loss's second-order mechanism (DP damped Newton with ``AUTO_NEWTON_ITER``
      iterations for the logistic losses, sufficient statistics for the squared loss) when
      ``s >= AUTO_SECOND_ORDER_MIN_SNR`` and ``D <= AUTO_SECOND_ORDER_MAX_PARAMS``: with little
      noise, gradient descent would need ~kappa steps at the small penalty that consistency
      asks for, Newton a handful;
    * above that many parameters, output perturbation (one exact solve, one release, with the
      penalty of :func:`skdpgd.policy.output_alpha`) when ``s >= AUTO_OUTPUT_MIN_SNR``;
    * below ``AUTO_PRIOR_MAX_SNR`` (with an intercept), the intercept-only model
      (:class:`Prior`): the whole budget on the class prior or the mean;
    * otherwise noisy gradient descent: Hong et al.'s dynamic schedule if
      ``kappa * alpha_H < AUTO_DYNAMIC_THRESHOLD``, the uniform schedule otherwise, each with
      the number of steps its theorem gives.

    An integer ``max_iter`` (a number of gradient steps) keeps the choice to gradient descent.
    The fitted estimator's ``mechanism_`` and ``schedule_`` say what ran. Choosing by
    cross-validation on the private data would leak privacy; this rule only reads N, the
    dimension, the loss constants and the budget. The constants were chosen on the design
    half of ``benchmarks/suite`` (docs: benchmarks).
    """

    #: Share of the budget for the warm start from the class prior (None:
    #: :data:`skdpgd.policy.AUTO_PRIOR_SHARE`); see :attr:`NoisePlan.prior_share`.
    prior_share: float | None = None
    #: The prior switch: ``(s, p)``, ``(s, p, share)`` or a sequence of such tiers in
    #: increasing ``s`` (the first whose ``s`` exceeds the fit's signal-to-noise ratio gives
    #: :attr:`NoisePlan.prior_switch` and the counts' budget share; see
    #: :func:`skdpgd.policy.prior_switch_tiers`). None: :data:`skdpgd.policy.AUTO_PRIOR_SWITCH`;
    #: False: off.
    prior_switch: tuple | bool | None = None
    #: The selection ``(s, count_share, select_share)`` (see :data:`skdpgd.policy.AUTO_SELECT`,
    #: :attr:`NoisePlan.select_share`). None: :data:`skdpgd.policy.AUTO_SELECT`; False: off.
    select: tuple | bool | None = None

    name = "auto"
    alpha_rule = "auto"

    def choose(self, problem, mu, max_iter=None):
        """The schedule the rule picks (:func:`skdpgd.policy.auto_schedule`)."""
        name, params = policy.auto_schedule(problem, mu, max_iter)
        return _SCHEDULES[name](**params)

    def plan(self, problem, mu, max_iter=None):
        choice = policy.auto_choice(problem, mu, max_iter)
        if choice is not None:
            return Choice(
                tuple((_candidate_schedule(k), share) for k, share in choice["candidates"]),
                choice["count_share"],
                choice["select_share"],
                choice["blends"],
            ).plan(problem, mu, max_iter)
        plan = self.choose(problem, mu, max_iter).plan(problem, mu, max_iter)
        start = policy.auto_prior_start(
            problem, mu, plan.mechanism, self.prior_share, self.prior_switch, self.select
        )
        return replace(plan, **start) if start else plan


_SCHEDULES = {
    cls.name: cls
    for cls in (
        Auto,
        Uniform,
        Hong,
        PUR,
        OutputPerturbation,
        Exponential,
        Newton,
        KroneckerNewton,
        SufficientStatistics,
        Prior,
    )
}


def get_schedule(schedule):
    """Resolve a schedule name or instance to a :class:`Schedule` instance."""
    if isinstance(schedule, Schedule):
        return schedule
    if isinstance(schedule, str) and schedule in _SCHEDULES:
        return _SCHEDULES[schedule]()
    if hasattr(schedule, "plan") and callable(schedule.plan):
        return schedule
    raise ValueError(
        f"schedule must be one of {sorted(_SCHEDULES)} or a Schedule instance, got {schedule!r}."
    )


def schedule_names():
    return set(_SCHEDULES)

"""Noise schedules: the *shape* of the noise over the steps, and T and the step size.

A schedule reads public problem constants (:class:`Problem`) and the budget expressed as the
GDP parameter ``mu`` that a full-batch run may spend (``sum_t z_t^-2 <= mu^2``; Hong et al.'s
"R" is ``mu^2``), and returns a :class:`NoisePlan`: relative noise multipliers (one per step),
the step sizes, and the mechanism. It never sees the data and never does privacy arithmetic:
the accountant scales the shape so that the run spends exactly the (epsilon, delta) asked.

Writing your own schedule: subclass :class:`Schedule` (a frozen dataclass) and implement
``plan(problem, mu, max_iter=None) -> NoisePlan``. Use only the fields of ``problem``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Problem",
    "NoisePlan",
    "Schedule",
    "Uniform",
    "MAX_AUTO_ITER",
    "get_schedule",
]

#: Largest number of steps a schedule chooses by itself (``max_iter='auto'``). Theory asks for
#: ``O(kappa log(...))`` steps, which explodes when the L2 penalty is tiny; beyond this cap a
#: fit costs more time than it gains. ``n_iter_theory_`` on a fitted estimator shows the
#: uncapped value; pass an integer ``max_iter`` to override.
MAX_AUTO_ITER = 10_000


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
        return (self.n_params * self.sensitivity ** 2
                / (2.0 * mu * mu * self.smoothness * N * N * self.loss_bound))


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
    """

    noise_multipliers: np.ndarray
    step_sizes: np.ndarray
    mechanism: str = "gradient"
    n_iter_theory: float = math.nan
    schedule: str = ""
    solver_tol_factor: float = 1e-4

    def __post_init__(self):
        z = np.asarray(self.noise_multipliers, dtype=float).ravel()
        if z.size == 0 or np.any(~np.isfinite(z)) or np.any(z <= 0):
            raise ValueError("a noise plan needs at least one positive, finite multiplier.")
        object.__setattr__(self, "noise_multipliers", z)
        steps = np.broadcast_to(np.asarray(self.step_sizes, dtype=float), z.shape).copy()
        object.__setattr__(self, "step_sizes", steps)
        if self.mechanism not in ("gradient", "output"):
            raise ValueError(f"unknown mechanism {self.mechanism!r}.")

    @property
    def n_steps(self):
        return int(self.noise_multipliers.shape[0])


def _resolve_n_iter(theory, max_iter):
    """Apply the user's ``max_iter`` or the automatic cap to a theoretical T."""
    if max_iter is not None:
        return int(max_iter)
    if not theory < MAX_AUTO_ITER:  # also catches inf / nan
        return MAX_AUTO_ITER
    return max(1, int(math.ceil(theory)))


@dataclass(frozen=True)
class Schedule:
    """Base class for noise schedules (see the module docstring)."""

    name = "schedule"

    def plan(self, problem, mu, max_iter=None):  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class Uniform(Schedule):
    """The same noise at every step; T from Hong et al., Theorem 4.2; step size 1/M.

    ``T = ln(1 + ln(1/gamma) / alpha_H) / ln(1/gamma)`` with ``gamma = 1 - 1/kappa``; without
    strong convexity (gamma -> 1) this tends to ``1 / alpha_H``.
    """

    name = "uniform"

    @staticmethod
    def theory_n_iter(problem, mu):
        a = problem.hong_alpha(mu)
        if a == 0.0:
            return math.inf
        kappa = problem.kappa
        if math.isinf(kappa):
            return 1.0 / a
        lg = -math.log1p(-1.0 / kappa)  # ln(1/gamma)
        return math.log1p(lg / a) / lg

    def plan(self, problem, mu, max_iter=None):
        theory = self.theory_n_iter(problem, mu)
        T = _resolve_n_iter(theory, max_iter)
        return NoisePlan(np.ones(T), np.full(T, 1.0 / problem.smoothness),
                         n_iter_theory=theory, schedule=self.name)


_SCHEDULES = {cls.name: cls for cls in (Uniform,)}


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

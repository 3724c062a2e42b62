"""Private selection (Papernot and Steinke, 2022, "Hyperparameter tuning with Renyi
differential privacy", ICLR; arXiv:2110.03620): the best of a random number K of trials, each
``mu``-GDP, with K drawn from a public distribution and kept secret (:class:`RepeatedSelection`),
and the calibration of the trials' ``mu`` to a budget (:func:`calibrate_base_mu`).

The search's RDP at order ``lam > 1`` (K ~ truncated negative binomial with shape ``eta`` and
parameter ``gamma``, mean ``E[K]``; Theorem 2, at every ``lam_hat >= 1``)::

    R(lam) = lam mu^2 / 2 + log(E[K]) / (lam - 1) + (1 + eta) c,
    c = min_{lam_hat >= 1} [ (1 - 1/lam_hat) lam_hat mu^2 / 2 + log(1/gamma) / lam_hat ],

where the minimum c is ``mu sqrt(2 log(1/gamma)) - mu^2 / 2``, at
``lam_hat = sqrt(2 log(1/gamma)) / mu`` when that is >= 1, and ``log(1/gamma)``
(``lam_hat = 1``) otherwise. With K ~ Poisson(m)
(Theorem 6, at ``e_hat = log(1 + 1/(lam - 1))``)::

    R(lam) = lam mu^2 / 2 + m delta(e_hat; mu) + log(m) / (lam - 1).

RDP grows with the order, so ``R`` is replaced by its running minimum from the largest order
down (as dp-accounting does); the curve is taken at
:data:`skdpgd.accounting.RDP_DEFAULT_ORDERS`, so a :class:`~skdpgd.PrivacyBudget` charged with
it composes it at the same orders.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from .accountant import geometric_bisection
from .events import Relation, Selection
from .gdp import gdp_delta_upper, gdp_epsilon, gdp_mu
from .rdp import DEFAULT_ORDERS, rdp_epsilon

__all__ = [
    "RepeatedSelection",
    "RDPCurve",
    "calibrate_base_mu",
    "trial_epsilon",
    "truncated_negative_binomial_gamma",
]


# Relative allowance added to every RDP value for floating-point rounding (the terms are a
# handful of float64 operations, each exact to ~1e-16 relative).
_ROUNDING_RTOL = 1e-12


# The number of trials: truncated negative binomial (Papernot and Steinke, Section 3) or Poisson


def _tnb_mean(gamma, eta):
    """E[K] of the truncated negative binomial with shape ``eta`` >= 0 and ``gamma`` in (0, 1):
    the negative binomial's ``eta (1 - gamma) / gamma`` divided by ``P(K >= 1) = 1 - gamma^eta``,
    and ``(1/gamma - 1) / log(1/gamma)`` at ``eta = 0`` (the logarithmic distribution)."""
    log_inv = -math.log(gamma)
    if eta == 0:
        return (1.0 / gamma - 1.0) / log_inv
    return eta * (1.0 - gamma) / (gamma * -math.expm1(-eta * log_inv))


def truncated_negative_binomial_gamma(mean, shape):
    """The ``gamma`` in (0, 1) of the truncated negative binomial with shape ``eta = shape`` and
    mean ``mean`` (> 1): E[K] decreases from infinity (gamma -> 0) to 1 (gamma -> 1)."""
    mean, shape = float(mean), float(shape)
    if not mean > 1.0 or not math.isfinite(mean):
        raise ValueError(f"the mean number of trials must be finite and > 1, got {mean!r}.")
    if not shape >= 0.0 or not math.isfinite(shape):
        raise ValueError(f"shape must be finite and >= 0, got {shape!r}.")

    def f(t):  # t = log(gamma) in (-inf, 0)
        return math.log(_tnb_mean(math.exp(t), shape)) - math.log(mean)

    lo = -1.0
    while f(lo) < 0:
        lo *= 2.0
    hi = -1e-3
    while f(hi) > 0:
        hi *= 0.5
    t = brentq(f, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
    return math.exp(t)


@dataclass(frozen=True, eq=False)
class RDPCurve(Selection):
    """A release known by an upper bound of its Renyi-DP curve at ``DEFAULT_ORDERS``, stated
    for ``relation`` (what :meth:`skdpgd.PrivacyBudget.charge_rdp` records)."""

    name: str
    curve: np.ndarray
    relation: str

    def __post_init__(self):
        curve = np.array(self.curve, dtype=float).ravel()
        if curve.shape != DEFAULT_ORDERS.shape or np.any(np.isnan(curve)) or np.any(curve < 0):
            raise ValueError("rdp must hold one value >= 0 per order of DEFAULT_ORDERS.")
        curve.setflags(write=False)
        object.__setattr__(self, "curve", curve)
        object.__setattr__(self, "relation", Relation.of(self.relation))

    def rdp(self, orders=None):
        if orders is not None and not np.array_equal(
            np.asarray(orders, dtype=float), DEFAULT_ORDERS
        ):
            raise ValueError("an RDP curve is known at DEFAULT_ORDERS only.")
        return self.curve


@dataclass(frozen=True)
class RepeatedSelection(Selection):
    """What a private search released, as an accountant sees it: the best of K trials, each
    ``base_mu``-GDP, with K drawn from a public distribution (and kept secret).

    Parameters
    ----------
    base_mu : float
        GDP parameter of one trial (fit and score together, replace-one neighbours).
    distribution : {'negative_binomial', 'poisson'}
        The law of K.
    mean : float
        E[K].
    shape : float
        ``eta`` of the truncated negative binomial (0: logarithmic, 1: geometric); unused for
        Poisson.
    gamma : float
        ``gamma`` of the truncated negative binomial (the value K was drawn with); unused for
        Poisson.
    relation : str
        'replace' (the neighbouring relation the guarantee is stated for).
    """

    base_mu: float
    distribution: str
    mean: float
    shape: float = 1.0
    gamma: float = math.nan
    relation: str = "replace"
    name: str = "private selection"

    def rdp(self, orders=None):
        """Upper bound of the search's RDP at each order (Theorems 2 and 6 of Papernot and
        Steinke; see the module docstring), made non-decreasing in the order."""
        orders = np.array(DEFAULT_ORDERS if orders is None else orders, dtype=float).ravel()
        if orders.size == 0 or np.any(~np.isfinite(orders)) or np.any(orders <= 1.0):
            raise ValueError("orders must be finite and > 1.")
        mu = float(self.base_mu)
        if math.isinf(mu):
            return np.full(orders.shape, np.inf)
        base = orders * (mu * mu / 2.0)  # RDP of one trial, a mu-GDP mechanism
        if self.distribution == "poisson":
            m = float(self.mean)
            # Theorem 6 needs (e_hat, d_hat)-DP of one trial at e_hat = log(1 + 1/(lam - 1));
            # a mu-GDP trial is (e, delta(e; mu))-DP for every e (taken with its rounding bound)
            d_hat = np.array([gdp_delta_upper(math.log1p(1.0 / (a - 1.0)), mu) for a in orders])
            out = base + m * d_hat + math.log(m) / (orders - 1.0)
        else:
            eta, log_inv = float(self.shape), -math.log(float(self.gamma))
            mean = _tnb_mean(float(self.gamma), eta)  # of the gamma K was drawn with
            root = math.sqrt(2.0 * log_inv)
            if root >= mu:  # lam_hat = sqrt(2 log(1/gamma)) / mu >= 1
                c = mu * root - mu * mu / 2.0
            else:  # the minimum over lam_hat >= 1 is at lam_hat = 1
                c = log_inv
            out = base + (1.0 + eta) * c + math.log(mean) / (orders - 1.0)
        out = out * (1.0 + _ROUNDING_RTOL) + 1e-300
        # RDP is non-decreasing in the order: the bound at a larger order holds at a smaller one
        order_idx = np.argsort(orders)
        mono = np.minimum.accumulate(out[order_idx][::-1])[::-1]
        result = np.empty_like(out)
        result[order_idx] = mono
        return np.maximum(result, 0.0)

    def epsilon(self, delta, orders=None):
        """Epsilon at ``delta`` (an upper bound): the RDP curve converted by
        :func:`skdpgd.accounting.rdp_epsilon` at ``orders`` (default ``DEFAULT_ORDERS``)."""
        orders = DEFAULT_ORDERS if orders is None else np.asarray(orders, dtype=float)
        if math.isinf(self.base_mu):
            return math.inf
        return rdp_epsilon(self.rdp(orders), orders, delta)


def _selection(mu, distribution, mean, shape, gamma):
    return RepeatedSelection(
        base_mu=float(mu),
        distribution=distribution,
        mean=float(mean),
        shape=float(shape),
        gamma=float(gamma),
    )


def calibrate_base_mu(epsilon, delta, distribution, mean, shape=1.0, gamma=math.nan):
    """Largest trial ``mu`` (to a relative 1e-10) whose search spends at most (epsilon, delta).

    ``epsilon = inf`` gives ``inf``. Raises ValueError when even a noiseless-in-the-limit
    search (mu -> 0) costs more than epsilon (the ``log E[K]`` term alone).
    """
    if math.isinf(epsilon):
        return math.inf

    def eps_at(mu):
        return _selection(mu, distribution, mean, shape, gamma).epsilon(delta)

    hi = gdp_mu(epsilon, delta)  # one mu-GDP trial already spends epsilon: the search more
    if eps_at(hi) <= epsilon:
        return hi
    lo = hi
    for _ in range(200):
        lo *= 0.5
        if eps_at(lo) <= epsilon:
            break
    else:
        raise ValueError(
            f"epsilon={epsilon:g} is too small for a private search with {mean:g} trials on "
            f"average at delta={delta:g}: the number of trials alone costs more. Lower n_iter "
            "or raise epsilon."
        )
    return geometric_bisection(lambda mu: eps_at(mu) <= epsilon, lo, hi, 1e-10)


# The trials are calibrated to a hair below the search's mu, so that a fit's own rounding
# (it aims 1e-12 inside its budget) can never take it above.
_TRIAL_MARGIN = 1e-9


def trial_epsilon(mu, delta):
    """The epsilon (at ``delta``) each trial of a search with trial parameter ``mu`` is given:
    its own calibration turns it back into at most ``mu`` (checked). ``mu = inf`` gives inf."""
    if math.isinf(mu):
        return math.inf
    eps = gdp_epsilon(delta, mu * (1.0 - _TRIAL_MARGIN))
    if not gdp_mu(eps, delta) <= mu:  # what a trial will calibrate to
        raise RuntimeError("could not give the trials a budget within the search's mu.")
    return eps

"""The arithmetic of one fit and of a ledger: what is left after the set-up releases, the
calibration of a fit's releases, what was spent, and the composition a budget reads."""

from __future__ import annotations

import math

import numpy as np

from .events import with_margin
from .gdp import gdp_epsilon, gdp_mu_of_releases
from .rdp import DEFAULT_ORDERS as RDP_DEFAULT_ORDERS
from .rdp import rdp_epsilon, rdp_subsampled_gaussian

__all__ = ["remaining_mu", "calibrate_releases", "spent_epsilon", "Composition"]


def remaining_mu(mu_total, prior):
    """The GDP mu left to a fit's main releases once the full-batch ``prior`` releases are
    made: ``sqrt(mu_total^2 - mu_prior^2)`` (inf stays inf). Raises when nothing is left."""
    mu_prior = gdp_mu_of_releases(prior)
    if not mu_prior < mu_total:
        raise ValueError("epsilon is too small: the set-up releases would spend all of it.")
    return math.inf if math.isinf(mu_total) else math.sqrt(mu_total ** 2 - mu_prior ** 2)


def calibrate_releases(accountant, shapes, epsilon, delta, prior=(), margin=0.0):
    """Scale the relative multipliers of ``shapes`` (releases before calibration, one
    sampling rate) with one constant, so that they and the ``prior`` releases compose to
    exactly (epsilon, delta) by ``accountant``; each sensitivity is raised by the rounding
    ``margin`` of its sum (:func:`sum_rounding_margin`). Returns the calibrated releases."""
    rates = {r.sampling_rate for r in shapes}
    if len(rates) != 1:
        raise ValueError("one calibration covers releases of one sampling rate.")
    q = rates.pop()
    prior_z = np.concatenate([r.multipliers for r in prior]) if prior else ()
    shape = np.concatenate([r.multipliers for r in shapes])
    if q == 1.0:
        z = accountant.calibrate(shape, epsilon, delta, prior=prior_z)
    else:
        z = accountant.calibrate(shape, epsilon, delta, sampling_rate=q, prior=prior_z)
    z = np.asarray(z, dtype=float)
    out, start = [], 0
    for r in shapes:
        part = z[start:start + r.multipliers.size]
        out.append(r.calibrated(part, with_margin(r.sensitivity, margin) if margin else None))
        start += r.multipliers.size
    return out


def spent_epsilon(releases, delta, epsilon, accountant=None):
    """The epsilon a fit reports: every release it made, composed at ``delta`` (exact GDP
    when all are full batch, else ``accountant``: RDP or PLD), never above the ``epsilon``
    the calibration was checked at (the search may land a hair above it). 0 when nothing
    noisy was released; inf for a fit without noise."""
    if math.isinf(epsilon):
        return math.inf
    if all(r.sampling_rate == 1.0 for r in releases):
        mu = gdp_mu_of_releases(releases)
        return min(epsilon, gdp_epsilon(delta, mu)) if mu > 0 else 0.0
    return min(epsilon, float(accountant.epsilon(list(releases), delta)))


class Composition:
    """The composition of a ledger of releases (and of releases known only by their Renyi-DP
    curve at ``DEFAULT_ORDERS``), summarised once and read at any delta (a budget's arithmetic).

    While every release is full batch and no curve is given, the releases are Gaussian
    mechanisms and compose **exactly** in GDP (``sum z^-2``); otherwise everything is composed
    in RDP over ``DEFAULT_ORDERS`` (a full-batch Gaussian step with multiplier z has RDP
    ``alpha / (2 z^2)``) and converted with the improved RDP -> (epsilon, delta) bound. An
    infinite multiplier (a free release) adds nothing; a zero one makes epsilon infinite.
    Each release is read under its own relation: convert first
    (:meth:`Release.multipliers_under`).
    """

    def __init__(self, releases=(), rdp_curves=()):
        releases, rdp_curves = list(releases), list(rdp_curves)
        self.empty = not releases and not rdp_curves
        if not rdp_curves and all(r.sampling_rate == 1.0 for r in releases):
            self.inv2 = sum(float(np.sum(1.0 / (r.multipliers * r.multipliers)))
                            if np.all(r.multipliers > 0) else math.inf for r in releases)
            self.rdp = None
            return
        rdp = np.zeros(len(RDP_DEFAULT_ORDERS))
        for curve in rdp_curves:
            rdp = rdp + curve
        for r in releases:
            z = r.multipliers[np.isfinite(r.multipliers)]
            if z.size:
                rdp = rdp + rdp_subsampled_gaussian(r.sampling_rate, z, RDP_DEFAULT_ORDERS)
        self.inv2, self.rdp = None, rdp

    def epsilon(self, delta, extra_mu=0.0):
        """Epsilon at ``delta`` of the ledger composed with one more full-batch
        ``extra_mu``-GDP release (0: none); 0 for an empty ledger."""
        if self.empty and extra_mu == 0:
            return 0.0
        if self.rdp is None:
            total = self.inv2 + extra_mu * extra_mu
            return gdp_epsilon(delta, math.sqrt(total)) if total > 0 else 0.0
        rdp = self.rdp
        if extra_mu > 0:
            rdp = rdp + rdp_subsampled_gaussian(1.0, [1.0 / extra_mu], RDP_DEFAULT_ORDERS)
        return rdp_epsilon(rdp, RDP_DEFAULT_ORDERS, delta)


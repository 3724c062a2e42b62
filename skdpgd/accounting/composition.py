"""Reading an event tree: :func:`compose` (epsilon at a delta), :func:`epsilon_profiles`
(every accountant that applies, for a report), :func:`calibrate` (scale a fit's releases to a
budget), and the arithmetic of one fit and of a ledger built on them."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from .events import GaussianSteps, Relation, Release, flatten, with_margin
from .gdp import (
    GaussianDPAccountant,
    gdp_epsilon,
    gdp_mu,
    gdp_mu_of_releases,
    inverse_square_sum,
    zcdp_view,
)
from .rdp import DEFAULT_ORDERS as RDP_DEFAULT_ORDERS
from .rdp import RDPAccountant, rdp_epsilon, rdp_subsampled_gaussian
from .registry import accountant_classes, as_accountant

__all__ = [
    "compose",
    "epsilon_profiles",
    "calibrate",
    "remaining_mu",
    "spent_epsilon",
    "split_budget",
    "upper_bound_release",
    "smallest_epsilon_with_room",
    "Composition",
]


def _leaves(events, relation):
    """Releases (under ``relation`` when given, else their own) and RDP curves of ``events``."""
    releases, selections = flatten(events)
    if relation is not None:
        relation = Relation.of(relation)
        releases = [r.under(relation) for r in releases]
        for s in selections:
            if Relation.of(s.relation) != relation:
                raise ValueError(
                    f"{getattr(s, 'name', 'a selection')} is stated for "
                    f"{Relation.of(s.relation).words} neighbours, not {relation.words}: an RDP "
                    "curve cannot be converted between relations."
                )
    curves = [np.asarray(s.rdp(RDP_DEFAULT_ORDERS), dtype=float) for s in selections]
    return releases, curves


def compose(events, delta, *, relation=None, accountant=None):
    """Epsilon at ``delta`` (an upper bound) of ``events`` composed.

    ``events``: an event of :mod:`skdpgd.accounting.events` or an iterable of them. Full-batch
    Gaussian releases alone compose **exactly** in Gaussian DP (``mu = sqrt(sum z^-2)``).
    Otherwise the Poisson-sampled releases are read by ``accountant`` (an
    :class:`~skdpgd.accounting.Accountant`, e.g. RDP or PLD) when one is given and no selection
    is present, else everything is composed in Renyi DP at ``RDP_DEFAULT_ORDERS`` (a selection
    adds its curve). Each release is read under ``relation``, or under its own when None.
    An empty composition spends 0; a release without noise spends inf.
    """
    releases, curves = _leaves(events, relation)
    if accountant is not None and not curves and not all(r.sampling_rate == 1.0 for r in releases):
        return float(accountant.epsilon(releases, delta))
    return Composition(releases, curves).epsilon(delta)


def epsilon_profiles(events, relation=None):
    """``{label: delta -> epsilon}`` of every accountant of the registry
    (:data:`~skdpgd.accounting.ACCOUNTANTS`) that applies to ``events`` composed (each an
    upper bound, so the smallest is the best statement), named by its
    :meth:`~skdpgd.accounting.Accountant.report_label`.

    An accountant applies when its :meth:`~skdpgd.accounting.Accountant.supports` accepts the
    releases (false when an optional dependency it needs is not installed) and, when a
    selection known by its Renyi-DP curve is present, it composes such curves. An exact one
    (Gaussian DP for full-batch releases) that applies is listed alone: nothing is tighter.
    A release without noise has no finite epsilon."""
    releases, curves = _leaves(events, relation)
    if any(np.any(r.multipliers == 0) for r in releases):  # no finite epsilon
        return {"none (a release without noise)": lambda d: math.inf}
    out = {}
    for cls in accountant_classes():
        accountant = cls()
        if curves and not accountant.composes_rdp_curves:
            continue
        if not accountant.supports(releases):
            continue
        label = accountant.report_label(releases)
        profile = accountant.epsilon_profile(releases, curves)
        if accountant.exact:
            return {label: profile}
        out[label] = profile
    return out


def split_budget(epsilon, delta, shares, margin=0.0):
    """The epsilons (each at ``delta``) of parts that together spend exactly (epsilon, delta)
    when each part spends its own: part k gets ``mu_k^2 = w_k mu^2`` of the budget's GDP
    ``mu = gdp_mu(epsilon, delta)`` (Gaussian DP composes exactly), less a relative
    ``margin``. Returns ``(mu, [epsilon_k])``; ``epsilon = inf`` gives infs."""
    if math.isinf(epsilon):
        return math.inf, [math.inf] * len(shares)
    mu = gdp_mu(epsilon, delta)
    return mu, [gdp_epsilon(delta, math.sqrt(w) * mu * (1.0 - margin)) for w in shares]


def upper_bound_release(name, mu, relation):
    """One full-batch release that spends ``mu`` in GDP under ``relation`` and is an upper
    bound under the other: a fit calibrated to ``mu`` under add/remove-one spends at most
    ``2 mu`` replace-one (each release's sensitivity at most doubles); under replace-one it
    says nothing about add/remove-one (a count is free under replace-one). What a budget is
    checked with before a fit reads any row."""
    relation = Relation.of(relation)
    sens = (
        {"replace": 2.0, "add_remove": 1.0}
        if relation == Relation.ADD_REMOVE
        else {"replace": 1.0, "add_remove": math.inf}
    )
    return Release(name, [1.0 / mu], sens, relation)


def smallest_epsilon_with_room(epsilon, delta, count, others, delta_count, hi=1e4):
    """The smallest epsilon (to rounding, up to ``hi``; None beyond) at which set-up releases
    that grow with the budget leave room for a fit's main releases at ``delta``: ``others``
    spend a fixed share of ``gdp_mu(e, delta)^2`` and ``count`` a fixed share of
    ``gdp_mu(e, delta_count)^2``, the shares they have at ``epsilon`` (for an error message:
    public and released values only)."""
    mu_total = gdp_mu(epsilon, delta)
    b2 = (gdp_mu_of_releases(others) / mu_total) ** 2 if others else 0.0
    a2 = (gdp_mu_of_releases(count) / gdp_mu(epsilon, delta_count)) ** 2 if count else 0.0

    def leaves_room(e):
        return gdp_mu(e, delta) ** 2 * (1.0 - b2) > a2 * gdp_mu(e, delta_count) ** 2

    lo = float(epsilon)
    if not (b2 < 1.0 and leaves_room(hi)):
        return None
    for _ in range(60):  # bisection on log epsilon: the smallest epsilon with room
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if leaves_room(mid) else (mid, hi)
    return hi


def remaining_mu(mu_total, prior):
    """The GDP mu left to a fit's main releases once the full-batch ``prior`` releases are
    made: ``sqrt(mu_total^2 - mu_prior^2)`` (inf stays inf). Raises when nothing is left."""
    mu_prior = gdp_mu_of_releases(prior)
    if not mu_prior < mu_total:
        raise ValueError("epsilon is too small: the set-up releases would spend all of it.")
    return math.inf if math.isinf(mu_total) else math.sqrt(mu_total**2 - mu_prior**2)


def calibrate(shapes, epsilon, delta, *, accountant=None, prior=(), margin=0.0):
    """Scale the relative multipliers of ``shapes`` (releases before calibration, one
    sampling rate) with one constant, so that they and the full-batch ``prior`` releases
    compose to exactly (epsilon, delta) by ``accountant`` (default: exact GDP for full-batch
    shapes, RDP otherwise); each sensitivity is raised by the rounding ``margin`` of its sum
    (:func:`sum_rounding_margin`). Returns the calibrated releases.

    The one calibration of the package: the accountant scales the concatenated shape
    (:meth:`~skdpgd.accounting.Accountant.calibrate`: a closed form for GDP, a root-finder on
    the RDP curve, a bracketing search for any other accountant).
    """
    rates = {r.sampling_rate for r in shapes}
    if len(rates) != 1:
        raise ValueError("one calibration covers releases of one sampling rate.")
    q = rates.pop()
    if accountant is None:
        accountant = GaussianDPAccountant() if q == 1.0 else RDPAccountant()
    prior_z = np.concatenate([r.multipliers for r in prior]) if prior else ()
    shape = np.concatenate([r.multipliers for r in shapes])
    if q == 1.0:
        z = accountant.calibrate(shape, epsilon, delta, prior=prior_z)
    else:
        z = accountant.calibrate(shape, epsilon, delta, sampling_rate=q, prior=prior_z)
    z = np.asarray(z, dtype=float)
    out, start = [], 0
    for r in shapes:
        part = z[start : start + r.multipliers.size]
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
    return min(epsilon, compose(releases, delta, accountant=accountant))


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

    ``accountant`` (an :class:`~skdpgd.accounting.Accountant` or a registry name; default RDP)
    is the one Poisson-subsampled releases compose with: where it is not RDP, supports the
    releases and no RDP curve is given, the epsilon is the smaller of its epsilon and RDP's
    (two upper bounds); otherwise RDP's.
    """

    def __init__(self, releases=(), rdp_curves=(), accountant=None):
        releases, rdp_curves = list(releases), list(rdp_curves)
        self.other = None  # (accountant, its steps) when another accountant reads the ledger
        self.empty = not releases and not rdp_curves
        # a discrete release (secure mode) is zCDP, not GDP: read mu in the zCDP view
        self.discrete = any(r.noise == "discrete" for r in releases)
        if not rdp_curves and all(r.sampling_rate == 1.0 for r in releases):
            self.inv2 = sum(
                inverse_square_sum(r.multipliers) if np.all(r.multipliers > 0) else math.inf
                for r in releases
            )
            self.rdp = None
            return
        rdp = np.zeros(len(RDP_DEFAULT_ORDERS))
        for curve in rdp_curves:
            rdp = rdp + curve
        for r in releases:
            z = r.multipliers[np.isfinite(r.multipliers)]
            if z.size:
                rdp = rdp + rdp_subsampled_gaussian(
                    r.sampling_rate, z, RDP_DEFAULT_ORDERS, discrete=r.noise == "discrete"
                )
        self.inv2, self.rdp = None, rdp
        if accountant is None or rdp_curves:
            return
        accountant = as_accountant(accountant)
        if isinstance(accountant, RDPAccountant) or not accountant.supports(releases):
            return
        steps = [
            GaussianSteps(r.multipliers[np.isfinite(r.multipliers)], r.sampling_rate, r.noise)
            for r in releases
            if np.isfinite(r.multipliers).any()
        ]
        self.other = (accountant, steps)

    def epsilon(self, delta, extra_mu=0.0):
        """Epsilon at ``delta`` of the ledger composed with one more full-batch
        ``extra_mu``-GDP release (0: none); 0 for an empty ledger."""
        if self.empty and extra_mu == 0:
            return 0.0
        if self.rdp is None:
            total = self.inv2 + extra_mu * extra_mu
            with zcdp_view(self.discrete):
                return gdp_epsilon(delta, math.sqrt(total)) if total > 0 else 0.0
        rdp = self.rdp
        if extra_mu > 0:
            rdp = rdp + rdp_subsampled_gaussian(1.0, [1.0 / extra_mu], RDP_DEFAULT_ORDERS)
        spent = rdp_epsilon(rdp, RDP_DEFAULT_ORDERS, delta)
        if self.other is not None:
            accountant, steps = self.other
            if extra_mu > 0:
                steps = steps + [GaussianSteps([1.0 / extra_mu], 1.0)]
            spent = min(spent, float(accountant.epsilon(steps, delta)))
        return spent

    def remaining_epsilon(self, epsilon, delta, delta_next):
        """The largest epsilon (at ``delta_next``) one more full-batch Gaussian release could
        spend without taking the ledger above ``epsilon`` at ``delta`` (0 when it is spent):
        the largest ``mu`` with :meth:`epsilon` ``(delta, mu) <= epsilon`` (a root-finder,
        then moved down until the check holds), as an epsilon."""

        def spent_with(mu):
            return self.epsilon(delta, mu)

        if spent_with(0.0) >= epsilon:
            return 0.0
        with zcdp_view(self.discrete):
            hi = gdp_mu(epsilon, delta)
        if spent_with(hi) <= epsilon:
            mu = hi
        else:
            mu = brentq(lambda m: spent_with(m) - epsilon, 0.0, hi, xtol=1e-14, rtol=1e-12)
            while mu > 0 and spent_with(mu) > epsilon:
                mu *= 1 - 1e-12
        with zcdp_view(self.discrete):
            return gdp_epsilon(delta_next, mu) if mu > 0 else 0.0

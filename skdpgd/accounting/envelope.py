"""Privacy of a fit that chooses its mechanism from a Gaussian release: the branch envelope.

The setting (DP-SGD's prior switch, :class:`skdpgd._minibatch.road.MinibatchRoad`): a fit first
makes Gaussian releases ``Y1`` (``mu1``-GDP together), then, as a function of ``Y1`` only,
runs one of several mechanisms ("branches"), each calibrated so that *it* composed with the
first releases spends (epsilon, delta). That is not a proof for the fit: the branches have
different privacy curves, and the choice depends on the data through ``Y1``.

**The bound.** Fix neighbouring datasets D, D' (either order), write ``P1, Q1`` for the
distributions of ``Y1`` on them, ``L = log(dP1/dQ1)(Y1)`` for the privacy loss, and
``H_g(P || Q) = sup_S P(S) - g Q(S)`` (hockey-stick divergence; ``H_{e^t}`` is defined for every
real t, and for t < 0 it is at least ``1 - e^t``). Let ``P2^y, Q2^y`` be the second stage's
output distributions given ``Y1 = y``. Then ``p1 p2 - e^eps q1 q2 = p1 (p2 - e^(eps - L) q2)``,
so

    H_{e^eps}(fit(D) || fit(D')) = E_{y ~ P1} [ H_{e^(eps - L(y))}(P2^y || Q2^y) ].

If ``delta_k(t)`` bounds branch k's hockey-stick divergence at ``e^t`` for every real t and every
ordered neighbouring pair, the integrand is at most ``phi(L) = max_k delta_k(eps - L)``. The
first releases' loss is not known to be the extreme one (the pair may move the counts by less
than the sensitivity), so one more step: ``x -> max_k sup_y H_{e^eps x}(P2 || Q2)`` (sup over
the y of branch k) is convex in x (a supremum of the convex maps ``g -> H_g``), hence
``E_{P1}[...] = E_{P1}[F(dQ1/dP1)]`` is an f-divergence of (Q1, P1), which can only grow when
(P1, Q1) is replaced by a pair that (P1, Q1) is a post-processing of: the Gaussian pair
``N(0, 1), N(mu1, 1)`` (``N(0, s^2 I)`` against ``N(v, s^2 I)`` with ``||v|| / s = m <= mu1`` is
the image of ``N(0, 1), N(mu1, 1)`` under ``y -> (m/mu1) y + sqrt(1 - m^2/mu1^2) Z`` and a
rotation). Its privacy loss is ``L ~ N(mu1^2 / 2, mu1^2)`` under P1. So the fit's privacy
profile is at most

    delta_env(eps) = E_{L ~ N(mu1^2/2, mu1^2)} [ max_k delta_k(eps - L) ],        (*)

the composition of the first releases with a mechanism whose profile is the pointwise maximum
of the branches' profiles over *all* real arguments (adaptive composition with dominating
pairs). Dropping the max and keeping one Gaussian branch ``mu_a``, (*) is the exact GDP delta
of ``sqrt(mu1^2 + mu_a^2)``; ``tests/accounting/test_branch_envelope.py`` checks that.

**Branch profiles.** A Gaussian release (``mu``-GDP): the exact formula
``Phi(-t/mu + mu/2) - e^t Phi(-t/mu - mu/2)``, valid for every real t. Poisson-subsampled
Gaussian steps: from their Renyi-DP curve ``rho`` (which :mod:`skdpgd.accounting.rdp` takes to
bound the divergence in both directions of an add/remove pair), ``H_{e^t} <= min_alpha
exp((alpha - 1) (rho_alpha - t + log(1 - 1/alpha)) - log alpha)`` for every real t (the bound
``(x - g)_+ <= g^(1-alpha) (alpha-1)^(alpha-1) alpha^-alpha x^alpha`` holds for every g > 0),
or from dp-accounting's pessimistic PLD (the larger of its add and remove directions) at
``t >= 0``; for ``t < 0`` also ``H_{e^t}(P||Q) = 1 - e^t + e^t H_{e^-t}(Q||P)`` with the bound at
``-t`` (both directions are covered). Every value is raised by a bound on its own rounding.

**What a shared budget is charged** (:func:`switch_charge`). The envelope is a privacy profile
at every epsilon, which a :class:`~skdpgd.PrivacyBudget` (exact GDP, or Renyi DP once anything
is Poisson-subsampled) cannot compose with its other charges; the releases of the branch that
ran are not a bound for the choice (at a delta other than the fit's they under-charge). The
budget is charged instead with the first releases and an RDP curve that bounds the second
stage whichever branch runs: ``max_k rho_k(alpha)`` at each order. RDP composes adaptively
(Mironov 2017, Proposition 1: if ``M1`` is (alpha, r1)-RDP and ``M2(y, .)`` is (alpha, r2)-RDP
for every output y of ``M1``, the pair is (alpha, r1 + r2)-RDP), and ``M2(y, .)`` is one of the
branches, so the fit is (alpha, rho_first(alpha) + max_k rho_k(alpha))-RDP at every order, for
both orders of an add/remove pair. That curve composes with the rest of the ledger and is
converted at any delta. For it to fit a budget sized to the fit, the full-batch branch's noise
is raised until the curve's epsilon at the fit's delta, by the budget's own arithmetic, is at
most the fit's epsilon (or, when the other branch alone is charged more than that, as a
PLD-calibrated one is, at most what that branch alone is charged).

**The integral.** ``max_k delta_k`` is an upper bound on a function that is non-increasing in t,
so on a grid ``u_0 < ... < u_n`` of the standardised loss the upper Riemann-Stieltjes sum
``sum_j P(u_(j-1) <= u < u_j) g(u_j)`` (plus the tails) is an upper bound of (*), whatever the
grid (only the true integrand's monotonicity is used). The grid is refined where the gap to the
lower sum is largest until the two are within a relative ``rtol``; cell probabilities are
differences of normal tail probabilities (no cancellation), raised by their rounding bound.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from .composition import Composition
from .events import GaussianSteps, Relation
from .gdp import GaussianDPAccountant, gaussian_profile, gdp_mu_of_releases
from .pld import pld_branch_profile
from .rdp import DEFAULT_ORDERS, rdp_profile, rdp_subsampled_gaussian
from .registry import as_accountant
from .selection import RDPCurve

__all__ = [
    "gaussian_profile",
    "rdp_profile",
    "pld_branch_profile",
    "EnvelopeBound",
    "envelope_delta",
    "envelope_epsilon",
    "envelope_scale",
    "branch_profile",
    "switch_scale",
    "SwitchCharge",
    "branch_maximum",
    "switch_charge",
]

_EPS = float(np.finfo(float).eps)

#: The standardised privacy loss of the first releases is integrated over [-U, U]: beyond it
#: the normal's mass is below 1e-300 (Phi(-38) ~ 3e-317), counted as such.
_U_MAX = 38.0
_TAIL_BELOW = 1e-300


# ---------------------------------------------------------------------------------------
# Profiles of one branch: upper bounds on H_{e^t} for every real t (vectorised)
# ---------------------------------------------------------------------------------------


# gaussian_profile (gdp), rdp_profile (rdp) and pld_branch_profile (pld) live with their
# accountants, which supply a branch's profile (Accountant.profile); imported here for the
# readers of this module.


# ---------------------------------------------------------------------------------------
# The envelope (*) and its calibration
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EnvelopeBound:
    """``upper``: a rigorous upper bound on (*) (rounding included); ``estimate``: the middle
    between that bound and the refinement's lower estimate (for measurements, never for a
    decision); ``n_points``: the grid's size."""

    upper: float
    estimate: float
    n_points: int


def _tail(u):
    """``P(Z >= |u|)`` for a standard normal Z: the smaller tail, without cancellation."""
    return ndtr(-np.abs(u))


def _cells(u):
    """Standard normal probabilities of the cells ``[u_(j-1), u_j]`` from tail probabilities
    (no cancellation), and a bound on their rounding."""
    s = _tail(u)
    lo, hi, s_lo, s_hi = u[:-1], u[1:], s[:-1], s[1:]
    cell = np.where(hi <= 0, s_hi - s_lo, np.where(lo >= 0, s_lo - s_hi, 1.0 - s_lo - s_hi))
    return np.maximum(cell, 0.0), 8.0 * _EPS * (s_lo + s_hi)


def envelope_delta(epsilon, mu_first, profile, rtol=1e-4, max_points=1 << 16):
    """An upper bound on (*) of the module docstring,
    ``E_{L ~ N(mu1^2/2, mu1^2)}[profile(epsilon - L)]``, where ``profile(t)`` (vectorised)
    bounds ``max_k delta_k(t)`` for every real t. Returns an :class:`EnvelopeBound`.

    On a grid of the standardised loss ``u`` (``L = mu1^2/2 + mu1 u``) each cell is bounded by
    the chord of the integrand in ``x = e^-L``: the true integrand is a convex function of x
    (module docstring), so it lies below the chord through its values at the cell's ends, and
    those are below the profile's values there. With ``xi = (e^(-mu1 (u - u_j)) - 1) /
    (e^(mu1 h_j) - 1)`` (0 at the cell's right end, 1 at its left) the chord is
    ``g_j + (g_(j-1) - g_j) xi``, and ``E[xi; cell] = (e^(mu1 u_j + mu1^2/2) P(cell + mu1) -
    P(cell)) / (e^(mu1 h_j) - 1)`` in closed form (a normal's exponential tilt). The two tails
    beyond ``|u| = 38`` (mass below 1e-300) count 1e-300. The grid is refined where the chord
    is furthest from the extended chords of the neighbouring cells (which lie below a convex
    function) until the sum of those distances is within ``rtol`` of the bound, or
    ``max_points`` is reached (the bound stays valid, only looser). ``mu_first = 0``:
    ``profile(epsilon)``.
    """
    epsilon, mu = float(epsilon), float(mu_first)
    if not mu >= 0 or math.isinf(mu):
        raise ValueError(f"mu_first must be finite and >= 0, got {mu!r}.")
    if mu == 0.0:
        v = float(np.asarray(profile(np.array([epsilon])), dtype=float)[0])
        return EnvelopeBound(v, v, 1)
    m = 0.5 * mu * mu

    def at(u):
        loss = m + mu * u
        t = epsilon - loss
        # evaluated a hair to the left (larger delta): covers the rounding of t
        t = t - 4.0 * _EPS * (np.abs(t) + abs(epsilon) + np.abs(loss) + m)
        return np.asarray(profile(t), dtype=float)

    u = np.linspace(-_U_MAX, _U_MAX, 153)
    g_raw = at(u)
    while True:
        # the true integrand is non-decreasing in u: the bound's smallest value to its right
        # is still a bound at u
        g = np.minimum.accumulate(g_raw[::-1])[::-1]
        cell, cell_err = _cells(u)
        h = np.diff(u)
        e_h = np.expm1(mu * h)  # e^(mu h) - 1 > 0
        # E[e^(-mu (u - u_j)); cell] = e^(mu u_j + mu^2/2) P(cell shifted by mu)
        shifted = u + mu
        tilt_cell, tilt_err = _cells(shifted)
        # the shifted ends are rounded: at most an ulp of each times the density there
        dens = np.abs(shifted) * np.exp(-0.5 * shifted * shifted)
        tilt_err = tilt_err + 2.0 * _EPS * (dens[:-1] + dens[1:])
        with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
            log_scale = mu * u[1:] + m
            tilted = np.exp(log_scale + np.log(tilt_cell))
            tilted_err = np.exp(log_scale + np.log(tilt_err)) + tilted * 16.0 * _EPS * (
                2.0 + np.abs(log_scale)
            )
            w = tilted - cell  # E[e^(-mu (u - u_j)) - 1; cell] >= 0
            w_low = np.maximum(w - tilted_err - cell_err - 4.0 * _EPS * (tilted + cell), 0.0)
            xi = w_low / (e_h * (1.0 + 8.0 * _EPS))  # a lower bound of E[xi; cell]
        xi = np.where(np.isfinite(xi), np.minimum(xi, cell), 0.0)
        drop = g[1:] - g[:-1]  # >= 0
        chord = (cell + cell_err) * g[1:] - drop * xi
        upper = float(np.sum(chord)) * (1.0 + 1e-12) + 2.0 * _TAIL_BELOW
        # where to refine: the distance from the chord to the neighbours' chords extended
        # into the cell (a convex integrand lies above them) and to g at the cell's left end
        # (it is non-increasing in x); estimates only, the bound above does not use them
        below = cell * g[:-1]
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            # cell j+1's chord into cell j: slope ratio (x_j - x_(j+1)) / (x_(j+1) - x_(j+2))
            r_right = np.exp(mu * h[1:]) * e_h[:-1] / e_h[1:]
            # cell j-1's chord into cell j: ratio (x_j - x_(j+1)) / (x_(j-1) - x_j)
            r_left = -np.expm1(-mu * h[1:]) / e_h[:-1]
            from_right = cell[:-1] * g[1:-1] - drop[1:] * r_right * xi[:-1]
            from_left = cell[1:] * g[1:-1] + drop[:-1] * r_left * (cell[1:] - xi[1:])
        below[:-1] = np.fmax(below[:-1], from_right)
        below[1:] = np.fmax(below[1:], from_left)
        gaps = np.maximum(chord - below, 0.0)
        central = cell * g[1:] - drop * xi - 0.5 * gaps
        gaps = np.where(np.isfinite(gaps), gaps, chord)
        total_gap = float(np.sum(gaps))
        if total_gap <= rtol * upper or u.size >= max_points:
            break
        split = gaps > total_gap / gaps.size
        mids = 0.5 * (u[:-1][split] + u[1:][split])
        if mids.size == 0:
            break
        g_mid = at(mids)
        order = np.argsort(np.concatenate([u, mids]), kind="stable")
        u = np.concatenate([u, mids])[order]
        g_raw = np.concatenate([g_raw, g_mid])[order]
    estimate = float(np.sum(np.where(np.isfinite(central), central, 0.0)))
    return EnvelopeBound(min(1.0, upper), estimate, int(u.size))


def envelope_epsilon(delta, mu_first, profile, rtol=1e-4, xtol=1e-7):
    """The smallest epsilon (to a relative ``xtol``, rounded up) at which
    :func:`envelope_delta` certifies ``delta``: an upper bound on the fit's epsilon. For
    measurements and tests (each step is one quadrature)."""
    delta = float(delta)

    def ok(e):
        return envelope_delta(e, mu_first, profile, rtol).upper <= delta

    lo, hi = 0.0, 1.0
    if ok(0.0):
        return 0.0
    while not ok(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            return math.inf
    while hi - lo > xtol * hi:
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


_SCALE_CACHE = OrderedDict()
_SCALE_CACHE_SIZE = 64
_SCALE_CACHE_LOCK = threading.Lock()  # fits may run in threads


def envelope_scale(epsilon, delta, mu_first, branch_profiles, key=None, rtol=1e-5, scale_rtol=1e-4):
    """The smallest factor ``s >= 1`` (to a relative ``scale_rtol``, on the safe side) by which
    every branch's noise multipliers are multiplied so that the envelope (*) at ``epsilon`` is
    at most ``delta``, and the certified bound there: ``(s, upper)``.

    ``branch_profiles`` are callables ``s -> profile`` (the branch's profile with its
    multipliers times s); every profile decreases pointwise as s grows, and as s -> inf the
    envelope tends to the first releases' own delta, so a finite s exists whenever that is
    below ``delta``. Regula falsi (Illinois) on ``log(bound / delta)`` against ``log s``, from a
    bracket found by doubling ``s - 1`` from 1e-3; the returned s is one whose bound was
    evaluated and found within ``delta``. ``key`` (hashable, public values only): the result is
    cached under it.
    """
    if key is not None:
        with _SCALE_CACHE_LOCK:
            if key in _SCALE_CACHE:
                _SCALE_CACHE.move_to_end(key)
                return _SCALE_CACHE[key]
    epsilon, delta = float(epsilon), float(delta)

    def bound(s):
        profiles = [make(s) for make in branch_profiles]

        def combined(t):
            return np.max([p(t) for p in profiles], axis=0)

        return envelope_delta(epsilon, mu_first, combined, rtol).upper

    if not gaussian_profile(np.array([epsilon]), mu_first)[0] < delta:
        raise ValueError(
            "the first releases alone spend delta at epsilon: no second stage fits the budget."
        )
    b = bound(1.0)
    if b <= delta:
        out = (1.0, b)
    else:
        lo, f_lo = 0.0, math.log(b / delta)  # log s, log(bound / delta) > 0
        step = 1e-3
        while True:
            x = math.log1p(step)
            b = bound(math.exp(x))
            if b <= delta:
                hi, f_hi, b_hi = x, math.log(b / delta), b
                break
            lo, f_lo = x, math.log(b / delta)
            step *= 2.0
            if step > 1e6:
                raise ValueError("no noise scale up to 1e6 fits the envelope in the budget.")
        side = 0
        for _ in range(100):
            if math.expm1(hi - lo) <= scale_rtol:
                break
            x = hi - f_hi * (hi - lo) / (f_hi - f_lo) if f_hi != f_lo else 0.5 * (lo + hi)
            width = hi - lo
            if not lo + 0.01 * width < x < hi - 0.01 * width:  # keep clear of the ends
                x = lo + 0.01 * width if x <= lo + 0.01 * width else hi - 0.01 * width
            b = bound(math.exp(x))
            f = math.log(b / delta) if b > 0 else -745.0
            if b <= delta:
                hi, f_hi, b_hi = x, f, b
                if side == 1:
                    f_lo *= 0.5
                side = 1
            else:
                lo, f_lo = x, f
                if side == -1:
                    f_hi *= 0.5
                side = -1
        out = (math.exp(hi), b_hi)
    if key is not None:
        with _SCALE_CACHE_LOCK:
            _SCALE_CACHE[key] = out
            while len(_SCALE_CACHE) > _SCALE_CACHE_SIZE:
                _SCALE_CACHE.popitem(last=False)
    return out


def branch_profile(releases, accountant="rdp", t_max=None):
    """``s -> profile`` of one branch: its releases (:class:`~skdpgd.accounting.Release`,
    under their own relation, one sampling rate) with every multiplier times s.

    The profile is the accountant's (:meth:`~skdpgd.accounting.Accountant.profile`, read up to
    ``t_max``): ``accountant`` is an :class:`~skdpgd.accounting.Accountant` or a name in the
    registry (:func:`~skdpgd.accounting.accountant_named`). Full-batch releases are read by
    the exact GDP accountant whatever it is (they compose exactly in GDP: no accountant gives
    a smaller bound); Poisson-subsampled ones by ``accountant`` (RDP: :func:`rdp_profile` of
    their RDP curve; PLD: the smaller of that and :func:`pld_branch_profile`).
    """

    rates = {r.sampling_rate for r in releases}
    if len(rates) != 1:
        raise ValueError("a branch's releases share one sampling rate.")
    q = rates.pop()
    z = np.concatenate([np.asarray(r.multipliers, dtype=float) for r in releases])
    reader = GaussianDPAccountant() if q == 1.0 else as_accountant(accountant)

    def make(s):
        return reader.profile([GaussianSteps(z * s, q)], t_max)

    return make


def switch_scale(epsilon, delta, first, branches, accountant="rdp", rtol=1e-5, scale_rtol=1e-4):
    """The noise scale that keeps a fit that chooses between ``branches`` (lists of calibrated
    releases, each composed with ``first`` within (epsilon, delta)) after the full-batch
    releases ``first`` within (epsilon, delta) as a whole: :func:`envelope_scale` of their
    profiles (:func:`branch_profile`, by ``accountant``: an
    :class:`~skdpgd.accounting.Accountant` or a registry name), ``(s, upper)``. Public values
    only; cached."""
    accountant = as_accountant(accountant)
    mu_first = gdp_mu_of_releases(first)  # the full-batch releases ``first``, own relation
    t_max = abs(float(epsilon)) + 0.5 * mu_first * mu_first + 40.0 * mu_first + 1.0
    key = (
        float(epsilon),
        float(delta),
        float(mu_first),
        accountant.cache_key(),
        float(rtol),
        float(scale_rtol),
        tuple(
            tuple(
                (r.sampling_rate, tuple(np.asarray(r.multipliers, dtype=float).tolist()))
                for r in rels
            )
            for rels in branches
        ),
    )
    makers = [branch_profile(rels, accountant, t_max) for rels in branches]
    return envelope_scale(
        epsilon, delta, mu_first, makers, key=key, rtol=rtol, scale_rtol=scale_rtol
    )


# ---------------------------------------------------------------------------------------
# What a shared budget is charged: first releases + the per-order maximum of the branches
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SwitchCharge:
    """What :func:`switch_charge` returns: ``branches`` (the branches' releases, the raised one
    with its noise multiplied by ``scale``), ``event`` (an :class:`RDPCurve`: the per-order
    maximum of the branches' RDP curves, the second stage whichever branch runs) and
    ``epsilon`` (the first releases composed with ``event`` at the fit's delta, by a
    :class:`~skdpgd.accounting.Composition`: what a budget of the fit's delta charges)."""

    branches: dict
    scale: float
    event: RDPCurve
    epsilon: float


def _branch_curve(releases, relation):
    """The RDP curve at ``DEFAULT_ORDERS`` of one branch's releases, read under ``relation``
    (as a budget reads them: :meth:`Release.under`)."""
    curve = np.zeros(DEFAULT_ORDERS.size)
    for r in releases:
        z = r.multipliers_under(relation)
        z = z[np.isfinite(z)]
        if z.size:
            curve = curve + rdp_subsampled_gaussian(r.sampling_rate, z, DEFAULT_ORDERS)
    return curve


def branch_maximum(branches, relation="add_remove", name="either branch (per-order max RDP)"):
    """An :class:`RDPCurve` that bounds a second stage which runs one of ``branches`` (lists
    of releases), chosen from earlier releases: at each order of ``DEFAULT_ORDERS`` the
    largest of the branches' RDP curves, read under ``relation``. Composed (in RDP) with the
    earlier releases it bounds the whole fit at every delta (module docstring, "What a shared
    budget is charged")."""
    relation = Relation.of(relation)
    curves = [_branch_curve(rels, relation) for rels in branches]
    return RDPCurve(name, np.max(curves, axis=0), relation)


def _scaled(releases, scale):
    return [r.calibrated(r.multipliers * scale, r.sensitivity) for r in releases]


def switch_charge(
    epsilon,
    delta,
    first,
    branches,
    raised,
    within=True,
    relation="add_remove",
    name="either branch (per-order max RDP)",
):
    """The charge that makes a shared budget's ledger valid at every delta for a fit that
    chooses among ``branches`` from its releases ``first`` (module docstring, "What a shared
    budget is charged"), and the noise that makes it fit the fit's own (epsilon, delta).

    ``first``: the releases made before the choice (fixed); ``branches``: ``{name: calibrated
    releases}``, each composed with ``first`` within (epsilon, delta) by its own accounting;
    ``raised``: the name of a full-batch branch whose noise may be raised (its curve is
    cheap). The charge is ``first`` plus an :class:`RDPCurve` ``event`` equal, order by order,
    to the largest of the branches' curves: valid for the adaptive choice by RDP's adaptive
    composition. Target: ``epsilon``, or the largest epsilon one of the other branches alone
    is charged (composed with ``first``, the same arithmetic) when that is above it. The raised
    branch's multipliers are multiplied by the smallest factor ``s >= 1`` (to a relative 1e-6,
    on the safe side; the returned one was evaluated) for which ``first`` plus the curve is
    charged at most the target at ``delta``, by :class:`Composition` (a budget's arithmetic,
    the releases in the order a budget holds them). It exists: as s grows the raised branch's
    curve tends to 0 order by order, and at an order where the others' curve attains the
    target it drops below theirs at a finite s.

    ``within``: the other branches are meant to fit (epsilon, delta) in this arithmetic (an
    RDP calibration): where one lands above epsilon by its rounding, its multipliers are
    raised by the smallest factor (relative steps from 1e-12, doubling) that brings it back,
    and a ValueError beyond a relative 1e-6 (not a rounding). Public values only.
    """
    epsilon, delta = float(epsilon), float(delta)
    relation = Relation.of(relation)
    first = [r.under(relation) for r in first]
    if raised not in branches or len(branches) < 2:
        raise ValueError("switch_charge needs at least two branches, one of them raised.")
    if any(r.sampling_rate != 1.0 for r in branches[raised]):
        raise ValueError("the raised branch is a full-batch one.")

    def charged(curve):
        return Composition(first, [curve]).epsilon(delta)

    out = {}
    fixed = np.zeros(DEFAULT_ORDERS.size)
    target = epsilon
    for key, rels in branches.items():
        if key == raised:
            continue
        factor, step = 1.0, 1e-12
        curve = _branch_curve(rels, relation)
        while within and charged(curve) > epsilon:
            if factor > 1.0 + 1e-6:
                raise ValueError(
                    f"branch {key!r} composed with the first releases is above epsilon: it "
                    "was not calibrated to this budget."
                )
            factor *= 1.0 + step
            step *= 2.0
            curve = _branch_curve(_scaled(rels, factor), relation)
        out[key] = _scaled(rels, factor) if factor != 1.0 else list(rels)
        fixed = np.maximum(fixed, curve)
        target = max(target, charged(curve))
    base = branches[raised]

    def at(s):
        return charged(np.maximum(fixed, _branch_curve(_scaled(base, s), relation)))

    lo, hi = 1.0, 1.0
    e_hi = at(hi)
    if e_hi > target:
        while True:
            lo, hi = hi, 2.0 * hi
            e_hi = at(hi)
            if e_hi <= target:
                break
            if hi > 2.0**60:  # pragma: no cover - excluded by the argument above
                raise ValueError("no noise on the raised branch fits the charge in the target.")
        while hi / lo - 1.0 > 1e-6:
            mid = math.sqrt(lo * hi)
            e_mid = at(mid)
            if e_mid <= target:
                hi, e_hi = mid, e_mid
            else:
                lo = mid
    out[raised] = _scaled(base, hi) if hi != 1.0 else list(base)
    event = branch_maximum(list(out.values()), relation, name)
    # the charge as a budget computes it (the same curve as at(hi): a maximum is exact)
    return SwitchCharge({k: out[k] for k in branches}, hi, event, charged(event.curve))

"""Gaussian differential privacy (Dong, Roth and Su, 2022): the exact accounting of
full-batch Gaussian releases, its zCDP view, and the accountant that calibrates a full-batch
schedule in closed form.

Secure mode (:func:`skdpgd.config_context` with ``secure_noise=True``) draws the exact
discrete Gaussian, which is proven ``Delta^2 / (2 sigma^2)``-zCDP (Canonne, Kamath and
Steinke 2020, Theorem 14) but not mu-GDP. Both views compose in ``sum z^-2`` (``mu^2 = 2
rho``), so the arithmetic of composition is the same; only the conversion between ``mu`` and
(epsilon, delta) changes. While secure mode is on, or while :func:`zcdp_view` is entered (a
composition that holds a discrete release), every ``gdp_*`` conversion of this module reads
``mu`` as the zCDP ``rho = mu^2 / 2`` and converts with the optimal conversion of a
``rho``-zCDP curve (:func:`zcdp_delta_of_mu`). That is never below the exact GDP epsilon of
the same ``mu``, so reading a continuous release this way only over-states its epsilon.
"""

from __future__ import annotations

import math
import threading
from contextlib import contextmanager

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import log_ndtr

from .._checks import check_delta, check_epsilon
from .._config import secure_noise
from .accountant import Accountant
from .events import gaussian_runs

__all__ = [
    "GaussianDPAccountant",
    "gdp_delta",
    "gdp_delta_upper",
    "gdp_epsilon",
    "gdp_mu",
    "compose_gdp",
    "gdp_mu_of_releases",
    "inverse_square_sum",
    "relative_multiplier",
    "share_multiplier",
    "zcdp_rho",
    "zcdp_epsilon",
    "zcdp_delta",
    "zcdp_delta_of_mu",
    "zcdp_view",
    "in_zcdp_view",
    "gaussian_profile",
]

_VIEW = threading.local()


@contextmanager
def zcdp_view(on=True):
    """Within the block (this thread), the ``gdp_*`` conversions read ``mu`` as the zCDP
    ``rho = mu^2 / 2`` (see the module docstring); ``on=False`` changes nothing."""
    old = getattr(_VIEW, "on", False)
    _VIEW.on = old or bool(on)
    try:
        yield
    finally:
        _VIEW.on = old


def in_zcdp_view():
    """Whether the ``gdp_*`` conversions currently use the zCDP view: in secure mode, or
    inside :func:`zcdp_view`."""
    return getattr(_VIEW, "on", False) or secure_noise()


# Relative margin by which calibration stays inside a budget (see GaussianDPAccountant.calibrate).
_CALIBRATION_MARGIN = 1e-12


_check_epsilon = check_epsilon
_check_delta = check_delta


def _tighten(ok, x, bad_side, good_side):
    """Return the value closest to the boundary of ``ok`` on its good side, near ``x``.

    ``ok`` is monotone along the segment from ``bad_side`` (False) to ``good_side`` (True).
    Root-finders return a point within rounding of the boundary but on either side; this
    bisects between the last failing and the last passing point until they are within a
    few ulps, and returns the passing one, so a budget is met exactly and never exceeded.
    """
    span = abs(good_side - bad_side) * 1e-9 + 1e-300
    bad = x - span if good_side > bad_side else x + span
    good = x + span if good_side > bad_side else x - span
    if ok(x):
        good = x
    if ok(bad):  # the root-finder was further off than expected: use the full segment
        bad = bad_side
    if not ok(good):
        good = good_side
    for _ in range(200):
        mid = 0.5 * (good + bad)
        if mid in (good, bad) or abs(good - bad) <= 4 * np.finfo(float).eps * abs(good):
            break
        if ok(mid):
            good = mid
        else:
            bad = mid
    return float(good)


def _gdp_delta_terms(epsilon, mu):
    """``(a, b)`` with ``delta = e^a - e^b``: ``a = log Phi(-eps/mu + mu/2)``,
    ``b = eps + log Phi(-eps/mu - mu/2)``, and a bound on the absolute rounding error of
    ``e^a - e^b`` computed from them."""
    x1 = -epsilon / mu + mu / 2.0
    x2 = -epsilon / mu - mu / 2.0
    a = float(log_ndtr(x1))
    b = epsilon + float(log_ndtr(x2))
    # Error model (u = 2^-53): log_ndtr is accurate to a few ulp of its value; the arguments
    # carry a relative rounding error of about 2u, which moves log Phi(x) by about
    # |x| max(|x|, 1) 2u; adding epsilon rounds b by u |b|. The exponentials then have
    # relative errors of those sizes, and their difference an absolute error of at most the
    # sum. A factor 16 covers the constants of each step.
    u = 16.0 * np.finfo(float).eps
    ea = math.exp(a)
    eb = math.exp(b) if b < 709.0 else math.inf
    err = u * (
        ea * (1.0 + abs(a) + abs(x1) * max(abs(x1), 1.0))
        + eb * (1.0 + abs(b) + abs(x2) * max(abs(x2), 1.0))
    )
    return a, b, err


def _log_zcdp_delta_at(alpha, epsilon, rho):
    """log of the delta that order ``alpha`` of a ``rho``-zCDP curve certifies at
    ``epsilon`` (the improved conversion), and a bound on its absolute rounding error."""
    a1 = alpha - 1.0
    log_d = a1 * (alpha * rho - epsilon) + a1 * math.log1p(-1.0 / alpha) - math.log(alpha)
    err = (
        16.0
        * np.finfo(float).eps
        * (a1 * (alpha * rho + abs(epsilon)) + abs(a1 * math.log1p(-1.0 / alpha)) + 1.0)
    )
    return log_d, err


def zcdp_delta_of_mu(epsilon, mu):
    """``(delta, upper)`` certified at ``epsilon`` by a ``rho``-zCDP mechanism with
    ``rho = mu^2 / 2``: its Renyi-DP curve is ``alpha rho`` at every order, converted with the
    improved bound of Canonne, Kamath and Steinke (2020, Proposition 12) and Balle et al.
    (2020), ``delta = exp((alpha - 1)(alpha rho - epsilon)) (1 - 1/alpha)^(alpha - 1) /
    alpha``, at the order a bounded scalar search finds near the optimum (every order gives a
    valid delta, so the search only has to be good, not exact). ``upper`` adds the rounding
    error bound; capped at 1."""
    epsilon = float(epsilon)
    rho = 0.5 * float(mu) * float(mu)
    # the optimum of (alpha - 1)(alpha rho - epsilon) is near alpha = (epsilon + rho) / 2 rho
    guess = max(1.0 + 1e-9, (epsilon + rho) / (2.0 * rho))
    lo, hi = math.log(1e-9), math.log(max(4.0 * guess, 16.0))

    def f(t):
        return _log_zcdp_delta_at(1.0 + math.exp(t), epsilon, rho)[0]

    res = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    best_t = min((res.x, math.log(guess - 1.0) if guess > 1.0 + 1e-9 else lo), key=f)
    log_d, err = _log_zcdp_delta_at(1.0 + math.exp(best_t), epsilon, rho)
    value = min(1.0, math.exp(min(log_d, 0.0)))
    return value, min(1.0, math.exp(min(log_d + err, 0.0)))


def _gdp_delta_checked(epsilon, mu):
    """``(delta, upper)``: delta(epsilon; mu) as computed and a rigorous-in-practice upper
    bound on the exact value (the computed value plus its rounding error bound). In the zCDP
    view (secure mode), the delta a ``mu^2 / 2``-zCDP mechanism certifies."""
    epsilon = float(epsilon)
    mu = float(mu)
    if mu < 0 or math.isnan(mu) or math.isnan(epsilon):
        raise ValueError(f"need mu >= 0 and real epsilon, got mu={mu!r}, epsilon={epsilon!r}.")
    if mu == 0.0:
        v = 0.0 if epsilon >= 0 else 1.0 - math.exp(epsilon)
        return v, v
    if math.isinf(mu):
        return 1.0, 1.0
    if math.isinf(epsilon):
        v = 0.0 if epsilon > 0 else 1.0
        return v, v
    if in_zcdp_view():
        return zcdp_delta_of_mu(epsilon, mu) if epsilon >= 0 else (1.0, 1.0)
    a, b, err = _gdp_delta_terms(epsilon, mu)
    # delta = e^a - e^b = e^a (1 - e^(b - a)); b <= a always, up to rounding.
    diff = b - a
    value = 0.0 if diff >= 0.0 else float(-math.exp(a) * math.expm1(diff))
    return value, min(1.0, value + err)


def gdp_delta(epsilon, mu):
    """Exact delta(epsilon) of a mu-GDP mechanism (Dong, Roth and Su, Corollary 2.13).

    Computed in log space with ``log_ndtr`` so that it neither overflows at large epsilon
    (``exp(epsilon)`` alone overflows near 710) nor loses digits for delta down to 1e-300.
    At tiny epsilon and mu both terms are near 1/2 and their difference cancels; the
    calibration therefore works with :func:`gdp_delta_upper`, this value plus a bound on its
    rounding error.
    """
    return _gdp_delta_checked(epsilon, mu)[0]


def gdp_delta_upper(epsilon, mu):
    """An upper bound on the exact delta(epsilon; mu): :func:`gdp_delta` plus its rounding
    error bound. Every budget check in skdpgd compares this, never the bare value, with the
    target delta, so that cancellation at tiny (epsilon, mu) cannot report too small an
    epsilon."""
    return _gdp_delta_checked(epsilon, mu)[1]


def gdp_epsilon(delta, mu):
    """Smallest epsilon >= 0 with ``gdp_delta_upper(epsilon, mu) <= delta`` (an upper bound).

    Root-finding on the monotone map epsilon -> delta(epsilon; mu); the returned value is
    checked and, if rounding put it on the wrong side, moved up until the check holds.
    """
    delta = _check_delta(delta)
    mu = float(mu)
    if mu == 0.0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    if gdp_delta_upper(0.0, mu) <= delta:
        return 0.0
    lo, hi = 0.0, max(1.0, mu * mu / 2 + mu * math.sqrt(2 * math.log(1 / delta)))
    while gdp_delta_upper(hi, mu) > delta:
        lo, hi = hi, 2 * hi

    def f(e):
        return math.log(max(gdp_delta_upper(e, mu), 1e-320)) - math.log(delta)

    eps = brentq(f, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)
    return _tighten(lambda e: gdp_delta_upper(e, mu) <= delta, eps, lo, hi)


def gdp_mu(epsilon, delta):
    """Largest mu such that mu-GDP is (epsilon, delta)-DP: the full-batch budget.

    ``epsilon = inf`` gives ``mu = inf`` (no noise). The result satisfies
    ``gdp_delta_upper(epsilon, mu) <= delta`` exactly in floating point.
    """
    epsilon = _check_epsilon(epsilon)
    delta = _check_delta(delta)
    if math.isinf(epsilon):
        return math.inf
    # mu-GDP implies (mu^2/2)-zCDP, so the zCDP budget gives a valid lower bracket.
    lo = math.sqrt(2.0 * zcdp_rho(epsilon, delta))
    if gdp_delta_upper(epsilon, lo) > delta:  # cannot happen mathematically; guard rounding
        lo *= 0.5
    hi = 2.0 * lo
    while gdp_delta_upper(epsilon, hi) <= delta:
        lo, hi = hi, 2.0 * hi

    def f(m):
        return math.log(max(gdp_delta_upper(epsilon, m), 1e-320)) - math.log(delta)

    mu = brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    return _tighten(lambda m: gdp_delta_upper(epsilon, m) <= delta, mu, hi, lo)


def inverse_square_sum(z):
    """``sum_t z_t^-2`` of positive multipliers: the squared GDP mu of Gaussian steps (each
    ``1/z_t``-GDP). The one place the GDP composition is written; ``inf`` entries add 0."""
    return float(np.sum(1.0 / (z * z)))


def compose_gdp(noise_multipliers):
    """GDP parameter of a composition of Gaussian steps: ``sqrt(sum z_t^-2)``.

    A multiplier of 0 (no noise) gives ``inf``; an empty composition gives 0.
    """
    z = np.asarray(noise_multipliers, dtype=float).ravel()
    if np.any(z < 0) or np.any(np.isnan(z)):
        raise ValueError("noise multipliers must be >= 0.")
    if np.any(z == 0):
        return math.inf
    return math.sqrt(inverse_square_sum(z))


# ---------------------------------------------------------------------------------------
# zCDP view (Bun and Steinke, 2016). mu-GDP implies (mu^2/2)-zCDP; Hong et al.'s "R" is 2 rho.
# ---------------------------------------------------------------------------------------


def zcdp_rho(epsilon, delta):
    """Largest rho such that rho-zCDP implies (epsilon, delta)-DP by the standard conversion.

    Inverts ``epsilon = rho + 2 sqrt(rho log(1/delta))``:
    ``rho = (sqrt(epsilon + log(1/delta)) - sqrt(log(1/delta)))^2``.
    (Seed 000, section 4.1.3, prints a formula with the wrong sign, about 100x too large.)
    """
    epsilon = _check_epsilon(epsilon)
    delta = _check_delta(delta)
    if math.isinf(epsilon):
        return math.inf
    L = math.log(1.0 / delta)
    # (sqrt(e + L) - sqrt(L))^2 written without cancellation: e^2 / (sqrt(e + L) + sqrt(L))^2
    return epsilon * epsilon / (math.sqrt(epsilon + L) + math.sqrt(L)) ** 2


def zcdp_epsilon(rho, delta):
    """epsilon such that rho-zCDP implies (epsilon, delta)-DP:
    ``rho + 2 sqrt(rho log(1/delta))``."""
    delta = _check_delta(delta)
    rho = float(rho)
    if rho < 0:
        raise ValueError(f"rho must be >= 0, got {rho!r}.")
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def zcdp_delta(rho, epsilon):
    """delta such that rho-zCDP implies (epsilon, delta)-DP by the standard conversion.

    ``delta = exp(-(epsilon - rho)^2 / (4 rho))`` for ``epsilon >= rho`` (capped at 1).
    """
    rho = float(rho)
    epsilon = float(epsilon)
    if rho == 0:
        return 0.0
    if epsilon <= rho:
        return 1.0
    return min(1.0, math.exp(-((epsilon - rho) ** 2) / (4.0 * rho)))


def share_multiplier(share, mu):
    """The noise multiplier of one release that spends ``share`` of a GDP budget ``mu``
    (of ``mu^2``: GDP composes in ``sum z^-2``): ``1 / (sqrt(share) mu)``."""
    return 1.0 / (math.sqrt(share) * mu)


def relative_multiplier(count, share, reference_share, reference_inv2=1.0):
    """The common noise multiplier of ``count`` releases that together spend ``share`` of a GDP
    budget, relative to reference releases with ``sum z^-2 = reference_inv2`` that spend
    ``reference_share`` of it: ``sqrt(count reference_share / (share reference_inv2))`` (GDP
    composes in ``sum z^-2``; a calibration then scales every multiplier to the budget, which
    keeps these ratios)."""
    return math.sqrt(count * reference_share / (share * reference_inv2))


def gdp_mu_of_releases(releases, relation=None):
    """GDP mu of full-batch releases composed, under ``relation`` (default: each one's own)."""
    inv2 = 0.0
    for r in releases:
        if r.sampling_rate != 1.0:
            raise ValueError("GDP composition covers full-batch releases only.")
        z = r.multipliers if relation is None else r.multipliers_under(relation)
        if np.any(z == 0):
            return math.inf
        inv2 += inverse_square_sum(z)
    return math.sqrt(inv2)


class GaussianDPAccountant(Accountant):
    """Exact accountant for full-batch Gaussian steps (sampling rate 1), via Gaussian DP.

    ``epsilon``/``delta`` interpret a :class:`GaussianSteps`; ``budget`` turns (epsilon, delta)
    into the GDP parameter mu a fit may spend; ``calibrate`` scales a schedule's shape so
    that ``sum_t z_t^-2 = mu^2`` exactly, and checks it never overspends.
    """

    name = "gdp"
    label = "Gaussian DP (exact)"
    exact = True

    @staticmethod
    def _runs(steps):
        """One event, or a sequence of them (composed), as a list of releases."""
        return gaussian_runs(steps)

    def supports(self, steps):
        return all(r.sampling_rate == 1.0 for r in self._runs(steps))

    def _check(self, steps):
        if not self.supports(steps):
            raise ValueError(
                "GaussianDPAccountant accounts full-batch steps only (sampling_rate=1); "
                "use an RDP accountant for Poisson-sampled steps."
            )

    def mu(self, steps):
        self._check(steps)
        runs = self._runs(steps)
        if len(runs) == 1:
            return compose_gdp(runs[0].noise_multipliers)
        return compose_gdp(np.concatenate([r.noise_multipliers for r in runs]))

    def epsilon(self, steps, delta):
        """Smallest epsilon (an upper bound) for which ``steps`` is (epsilon, delta)-DP."""
        return gdp_epsilon(delta, self.mu(steps))

    def delta(self, steps, epsilon):
        return gdp_delta(epsilon, self.mu(steps))

    def budget(self, epsilon, delta):
        """GDP parameter mu that spends exactly (epsilon, delta): ``sum_t z_t^-2 <= mu^2``."""
        return gdp_mu(epsilon, delta)

    def calibrate(self, shape, epsilon, delta, sampling_rate=1.0, prior=()):
        """Scale ``shape`` (relative multipliers) so the run spends exactly (epsilon, delta).

        ``prior`` lists the multipliers of Gaussian releases this fit has already made (e.g. a
        private statistic used to set the schedule); they are composed with the new steps.
        Returns the noise multipliers ``z = c * shape``; with ``epsilon = inf``, zeros.
        Closed form: ``c = sqrt(sum shape^-2 / (mu^2 - sum prior^-2))``; then the composed delta
        is recomputed and ``c`` nudged up until ``delta(epsilon) <= delta`` holds in floating
        point.
        """
        if sampling_rate != 1.0:
            raise ValueError("GaussianDPAccountant calibrates full-batch schedules only.")
        shape = np.asarray(shape, dtype=float).ravel()
        if shape.size == 0 or np.any(~np.isfinite(shape)) or np.any(shape <= 0):
            raise ValueError(
                "a schedule shape must be a non-empty array of positive finite values."
            )
        prior = np.asarray(prior, dtype=float).ravel()
        mu = self.budget(epsilon, delta)
        if math.isinf(mu):
            return np.zeros_like(shape)
        # Aim a hair (1e-12 relative) inside the budget: the computed delta(epsilon; mu) has
        # rounding noise near 1e-14, and the reported epsilon must never exceed the target.
        mu *= 1.0 - _CALIBRATION_MARGIN
        left = mu * mu - (compose_gdp(prior) ** 2 if prior.size else 0.0)
        if not left > 0:
            raise ValueError("the prior releases already spend the whole budget.")
        c = math.sqrt(np.sum(1.0 / (shape * shape)) / left)
        z = c * shape
        while gdp_delta_upper(epsilon, compose_gdp(np.concatenate([prior, z]))) > delta:
            c *= 1 + 1e-14
            z = c * shape
        return z

    def report_label(self, steps):
        """'Gaussian DP (exact)', or the zCDP view's name when a release is discrete."""
        if any(r.noise == "discrete" for r in self._runs(steps)):
            return "zCDP (discrete Gaussian)"
        return self.label

    def epsilon_profile(self, steps, rdp_curves=()):
        """``delta -> epsilon`` of full-batch ``steps`` composed exactly (``sum z^-2``), read in
        the zCDP view when one of them is discrete (secure mode)."""
        if len(rdp_curves):
            raise ValueError("the GDP accountant does not compose Renyi-DP curves.")
        self._check(steps)
        runs = self._runs(steps)
        total = sum(
            inverse_square_sum(r.multipliers) if np.all(r.multipliers > 0) else math.inf
            for r in runs
        )
        discrete = any(r.noise == "discrete" for r in runs)

        def profile(delta):
            with zcdp_view(discrete):
                return gdp_epsilon(delta, math.sqrt(total)) if total > 0 else 0.0

        return profile

    def profile(self, steps, t_max=None, n_table=2049):
        """The exact privacy profile of ``mu``-GDP (:func:`gaussian_profile`), for continuous
        releases outside the zCDP view; else the default (from :meth:`delta`)."""
        if in_zcdp_view() or any(r.noise == "discrete" for r in self._runs(steps)):
            return super().profile(steps, t_max, n_table)
        mu = self.mu(steps) if self._runs(steps) else 0.0
        return lambda t: gaussian_profile(t, mu)


_EPS = float(np.finfo(float).eps)


def gaussian_profile(t, mu):
    """Upper bound on the privacy profile of a ``mu``-GDP mechanism (a Gaussian release, or an
    exact GDP composition of them) at every real ``t``: the exact
    ``Phi(-t/mu + mu/2) - e^t Phi(-t/mu - mu/2)`` plus a bound on its rounding (as
    :func:`gdp_delta_upper`), at most 1."""
    t = np.asarray(t, dtype=float)
    mu = float(mu)
    if not mu >= 0:
        raise ValueError(f"mu must be >= 0, got {mu!r}.")
    if mu == 0.0:  # identical outputs: H_{e^t}(P || P) = (1 - e^t)_+
        return np.maximum(0.0, -np.expm1(np.minimum(t, 0.0))) * (1.0 + 4 * _EPS)
    if math.isinf(mu):
        return np.ones_like(t)
    x1 = -t / mu + mu / 2.0
    x2 = -t / mu - mu / 2.0
    a = log_ndtr(x1)
    b = t + log_ndtr(x2)
    with np.errstate(over="ignore", under="ignore"):
        ea = np.exp(a)
        eb = np.exp(np.minimum(b, 709.0))
        value = np.where(b < a, -ea * np.expm1(np.minimum(b - a, 0.0)), 0.0)
    # the error model of _gdp_delta_terms, elementwise
    u = 16.0 * _EPS
    err = u * (
        ea * (1.0 + np.abs(a) + np.abs(x1) * np.maximum(np.abs(x1), 1.0))
        + eb * (1.0 + np.abs(b) + np.abs(x2) * np.maximum(np.abs(x2), 1.0))
    )
    return np.minimum(1.0, value + err)

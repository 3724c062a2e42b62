"""Privacy accounting: every piece of privacy arithmetic in skdpgd lives here.

Privacy model
-------------
A fit releases, at each step t, the sum of per-example contributions plus Gaussian noise,
``sum_i c_i + N(0, (z_t * Delta)^2 I)``, where every contribution has norm at most ``C``
(enforced by clipping in the kernels) and ``Delta`` is the L2 sensitivity of the sum:

* replace-one neighbours (full-batch estimators, the default): ``Delta = 2 C``;
* add/remove-one neighbours (Poisson-sampled minibatches, or full batch on request): ``Delta = C``.

``z_t`` is the step's *noise multiplier*. Everything after the noisy sum (dividing by N, step
sizes, momentum) is post-processing. A mechanism is therefore *described* by its multipliers
and its sampling rate (:class:`GaussianSteps`); an accountant *interprets* a description
(epsilon for a delta, delta for an epsilon) and *calibrates* a schedule's shape to a budget.

Full batch (sampling rate 1) is accounted exactly with Gaussian differential privacy
(Dong, Roth and Su, 2022): a Gaussian step with multiplier ``z`` is ``1/z``-GDP, steps compose
to ``mu = sqrt(sum_t z_t^-2)``, and ``mu``-GDP is (epsilon, delta(epsilon))-DP for exactly

    delta(epsilon; mu) = Phi(-epsilon/mu + mu/2) - exp(epsilon) Phi(-epsilon/mu - mu/2),

which is the tightest (epsilon, delta) statement about a Gaussian composition. The zCDP view
(rho = mu^2 / 2) is reported for comparison with the literature.

Poisson-sampled minibatches are accounted with Renyi DP of the sampled Gaussian
(Mironov, Talwar and Zhang, 2019) and the improved RDP -> (epsilon, delta) conversion.
No accountant here returns an estimate: every epsilon is an upper bound.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from ._checks import check_delta, check_epsilon

__all__ = [
    "GaussianSteps",
    "Release",
    "RELATIONS",
    "gdp_mu_of_releases",
    "remaining_mu",
    "calibrate_releases",
    "spent_epsilon",
    "Composition",
    "sum_rounding_margin",
    "GaussianDPAccountant",
    "gdp_delta",
    "gdp_delta_upper",
    "gdp_epsilon",
    "gdp_mu",
    "compose_gdp",
    "zcdp_rho",
    "zcdp_epsilon",
    "zcdp_delta",
]


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
    err = u * (ea * (1.0 + abs(a) + abs(x1) * max(abs(x1), 1.0))
               + eb * (1.0 + abs(b) + abs(x2) * max(abs(x2), 1.0)))
    return a, b, err


def _gdp_delta_checked(epsilon, mu):
    """``(delta, upper)``: delta(epsilon; mu) as computed and a rigorous-in-practice upper
    bound on the exact value (the computed value plus its rounding error bound)."""
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


def compose_gdp(noise_multipliers):
    """GDP parameter of a composition of Gaussian steps: ``sqrt(sum z_t^-2)``.

    A multiplier of 0 (no noise) gives ``inf``; an empty composition gives 0.
    """
    z = np.asarray(noise_multipliers, dtype=float).ravel()
    if np.any(z < 0) or np.any(np.isnan(z)):
        raise ValueError("noise multipliers must be >= 0.")
    if np.any(z == 0):
        return math.inf
    return float(math.sqrt(np.sum(1.0 / (z * z))))


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


# ---------------------------------------------------------------------------------------
# Descriptions and accountants
# ---------------------------------------------------------------------------------------


def _frozen_multipliers(multipliers):
    """Noise multipliers as a read-only 1-D float array (each >= 0; 0 is no noise)."""
    z = np.array(multipliers, dtype=float).ravel()
    if np.any(np.isnan(z)) or np.any(z < 0):
        raise ValueError("noise multipliers must be >= 0.")
    z.setflags(write=False)
    return z


#: The neighbouring relations a guarantee can be stated for.
RELATIONS = ("replace", "add_remove")


@dataclass(frozen=True, eq=False)
class Release:
    """A group of Gaussian releases made by one fit, as accountants and budgets see them.

    Each release adds ``N(0, (z_t * sensitivity[relation])^2 I)`` to a quantity whose L2
    sensitivity between neighbouring datasets is ``sensitivity[r]`` under relation ``r``.
    The same noise is a different multiplier under the other relation, and the rule depends
    on the quantity: a clipped gradient sum moves by ``2C`` (replace-one) or ``C``
    (add/remove-one), a clipped norm sum by ``R`` under both, a count by 0 (N is public
    under replace-one) or 1. So each release carries its own sensitivities.

    Parameters
    ----------
    name : str
        What was released (shown in budgets and fitted attributes).
    multipliers : array of shape (T,)
        Noise standard deviation of each release divided by ``sensitivity[relation]``.
    sensitivity : dict
        ``{'replace': float, 'add_remove': float}``, the L2 sensitivity of one released
        quantity under each relation (in the units of the noise).
    relation : {'replace', 'add_remove'}
        The relation the fit calibrated its noise for.
    sampling_rate : float, default=1.0
        Poisson sampling rate of each release (1: full batch).
    """

    name: str
    multipliers: np.ndarray
    sensitivity: dict
    relation: str
    sampling_rate: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "multipliers", _frozen_multipliers(self.multipliers))
        if self.relation not in RELATIONS or set(self.sensitivity) != set(RELATIONS):
            raise ValueError("a release needs a relation and a sensitivity for each of "
                             f"{RELATIONS}.")
        if any(not v >= 0 for v in self.sensitivity.values()):
            raise ValueError("sensitivities must be >= 0.")
        q = float(self.sampling_rate)
        if not 0.0 < q <= 1.0:
            raise ValueError(f"sampling_rate must be in (0, 1], got {q!r}.")
        object.__setattr__(self, "sampling_rate", q)

    # the accountants read a release as a run of Gaussian steps: multipliers and a rate
    @property
    def noise_multipliers(self):
        """The multipliers (under the release's own relation), as accountants read them."""
        return self.multipliers

    @property
    def n_steps(self):
        return int(self.multipliers.shape[0])

    def calibrated(self, multipliers, sensitivity=None):
        """The same release with the accountant's ``multipliers`` (its shape scaled to the
        budget) and, if given, a ``sensitivity`` raised by a rounding margin."""
        return Release(self.name, multipliers,
                       dict(self.sensitivity if sensitivity is None else sensitivity),
                       self.relation, self.sampling_rate)

    def multipliers_under(self, relation):
        """The multipliers of the same noise under ``relation``: ``z * s_own / s_relation``.

        A sensitivity of 0 under ``relation`` makes the release free there (multiplier inf).
        The ratio is rounded down by two ulps, so a conversion never under-charges.
        """
        own = float(self.sensitivity[self.relation])
        other = float(self.sensitivity[relation])
        if relation == self.relation:
            return self.multipliers.copy()
        if other == 0.0:
            return np.full(self.multipliers.shape, np.inf)
        return self.multipliers * (own / other) * (1.0 - 2.0 * np.finfo(float).eps)

    @property
    def noise_std(self):
        """Standard deviation of the noise of each release."""
        return self.multipliers * float(self.sensitivity[self.relation])


#: Sensitivities of a release described by its multipliers alone (:class:`GaussianSteps`).
_UNIT_SENSITIVITY = {"replace": 1.0, "add_remove": 1.0}


class GaussianSteps(Release):
    """A release described by its noise multipliers and sampling rate only: what an
    accountant reads (epsilon for a delta, delta for an epsilon). The same type as every
    other :class:`Release`, with a unit sensitivity under add/remove-one.

    Parameters
    ----------
    noise_multipliers : array of shape (T,)
        ``z_t``: the noise standard deviation of step t divided by the L2 sensitivity of
        the released sum. 0 means no noise (infinite privacy loss).
    sampling_rate : float, default=1.0
        Poisson sampling rate q of each step; 1.0 is full batch.
    """

    def __init__(self, noise_multipliers, sampling_rate=1.0):
        super().__init__("steps", noise_multipliers, dict(_UNIT_SENSITIVITY), "add_remove",
                         sampling_rate)


#: Standard deviations a Gaussian count lands below the true count with probability
#: ``Phi(-40) < 1e-300`` (below the smallest double): the public row bound of
#: :func:`sum_rounding_margin` under add/remove-one with a noisy count is ``N~ + 40 z_c``.
COUNT_BOUND_SIGMAS = 40.0


def sum_rounding_margin(n_rows, dim):
    """Relative margin that covers floating-point error in a released sum of clipped terms.

    A sum of ``n`` terms, each of L2 norm ``<= C`` in exact arithmetic, is computed in float64
    in any order (the kernels use fastmath and threads, which reassociate): each coordinate's
    error is at most ``gamma_{n-1} sum_i |t_ij|`` (Higham, *Accuracy and Stability of
    Numerical Algorithms*, 4.2, valid for every summation order) with
    ``gamma_k = k u / (1 - k u)``, ``u = 2^-53``, so the L2 error is at most
    ``gamma_{n-1} sum_i ||t_i|| <= gamma_n n C``. Each term itself is computed with a relative
    error below ``gamma_{dim + 8}`` (a norm over ``dim`` coordinates, a clip factor, a
    product), which raises its norm to at most ``C (1 + gamma_{dim+8})``. Two neighbouring
    sums then differ by at most ``Delta + 2 gamma_n n C (1 + ...)``, and since
    ``Delta >= C`` the noise is calibrated to ``Delta (1 + margin)`` with::

        margin = 2 n gamma_{n+1} (1 + g_d) + 2 g_d,   g_d = gamma_{dim + 8}.

    This is the worst case, not the typical error (about ``sqrt(n) u`` relative): at
    ``n = 1e5`` the margin is 2.2e-6, at 1e6 2.2e-4, at 1e7 about 0.022. ``n_rows`` must be a
    public upper bound on the rows summed.
    """
    u = 2.0 ** -53

    def gamma(k):
        return k * u / (1.0 - k * u)

    n = float(n_rows) + 1.0
    if not n * u < 0.5:
        raise ValueError("too many rows for the float64 rounding margin.")
    g_d = gamma(float(dim) + 8.0)
    return 2.0 * n * gamma(n) * (1.0 + g_d) + 2.0 * g_d


def with_margin(sensitivity, margin):
    """A sensitivity dict scaled by ``1 + margin`` (rounded up)."""
    factor = (1.0 + margin) * (1.0 + 4.0 * np.finfo(float).eps)
    return {k: float(v) * factor for k, v in sensitivity.items()}


def gdp_mu_of_releases(releases, relation=None):
    """GDP mu of full-batch releases composed, under ``relation`` (default: each one's own)."""
    inv2 = 0.0
    for r in releases:
        if r.sampling_rate != 1.0:
            raise ValueError("GDP composition covers full-batch releases only.")
        z = r.multipliers if relation is None else r.multipliers_under(relation)
        if np.any(z == 0):
            return math.inf
        inv2 += float(np.sum(1.0 / (z * z)))
    return math.sqrt(inv2)


class Accountant(abc.ABC):
    """What every accountant does, on :class:`Release` descriptions (one, or a sequence
    composed): ``supports(steps)`` (can it account them), ``epsilon(steps, delta)`` and
    ``delta(steps, epsilon)`` (upper bounds, never estimates), and ``calibrate(shape, epsilon,
    delta, sampling_rate=1.0, prior=())`` (scale relative multipliers so the run, composed with
    the full-batch ``prior`` multipliers, spends at most (epsilon, delta), and within the
    accountant's tolerance of it). ``tests/test_accountant_contract.py`` runs one contract
    test on each of :data:`ACCOUNTANTS`. Implementations: exact GDP (full batch), RDP and
    PLD (Poisson-subsampled steps)."""

    name = "accountant"

    @abc.abstractmethod
    def supports(self, steps): ...

    @abc.abstractmethod
    def epsilon(self, steps, delta): ...

    @abc.abstractmethod
    def delta(self, steps, epsilon): ...

    @abc.abstractmethod
    def calibrate(self, shape, epsilon, delta, sampling_rate=1.0, prior=()): ...


class GaussianDPAccountant(Accountant):
    """Exact accountant for full-batch Gaussian steps (sampling rate 1), via Gaussian DP.

    ``epsilon``/``delta`` interpret a :class:`GaussianSteps`; ``budget`` turns (epsilon, delta)
    into the GDP parameter mu a fit may spend; ``calibrate`` scales a schedule's shape so
    that ``sum_t z_t^-2 = mu^2`` exactly, and checks it never overspends.
    """

    name = "gdp"

    @staticmethod
    def _runs(steps):
        """One release (or GaussianSteps), or a sequence of them (composed), as a list."""
        if hasattr(steps, "noise_multipliers"):
            return [steps]
        return list(steps)

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
            raise ValueError("a schedule shape must be a non-empty array of positive finite "
                             "values.")
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


# ---------------------------------------------------------------------------------------
# The arithmetic of one fit: what is left after the set-up releases, the calibration of the
# fit's releases, and what was spent. Fits call these; none of them computes mu, epsilon or
# delta itself.
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# Renyi DP of Poisson-subsampled Gaussian steps (skdpgd._rdp). That module imports nothing
# from this one at import time, so this re-export cannot be circular.
# ---------------------------------------------------------------------------------------

from ._rdp import (  # noqa: E402
    DEFAULT_ORDERS as RDP_DEFAULT_ORDERS,
    PLDAccountant,
    RDPAccountant,
    pld_delta,
    pld_epsilon,
    rdp_delta,
    rdp_epsilon,
    rdp_subsampled_gaussian,
)

# a fit that chooses between mechanisms after a Gaussian release: the envelope of the
# branches (skdpgd._envelope imports this module only inside its functions)
from ._envelope import envelope_delta, envelope_epsilon, switch_scale  # noqa: E402

# the Poisson-sampled accountants live in skdpgd._rdp (which imports nothing from here);
# they implement the same interface
Accountant.register(RDPAccountant)
Accountant.register(PLDAccountant)

#: Every accountant class, for the contract test.
ACCOUNTANTS = (GaussianDPAccountant, RDPAccountant, PLDAccountant)

__all__ += [
    "Accountant",
    "ACCOUNTANTS",
    "RDP_DEFAULT_ORDERS",
    "RDPAccountant",
    "PLDAccountant",
    "pld_delta",
    "pld_epsilon",
    "rdp_delta",
    "rdp_epsilon",
    "rdp_subsampled_gaussian",
    "envelope_delta",
    "envelope_epsilon",
    "switch_scale",
]

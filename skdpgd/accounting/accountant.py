"""The interface every accountant implements (:class:`Accountant`), and the one generic
calibration: a search for the smallest noise scale an accountant certifies."""

from __future__ import annotations

import abc
import math

import numpy as np

from .._checks import check_delta, check_epsilon
from .events import GaussianSteps

__all__ = ["Accountant", "geometric_bisection", "smallest_scale"]

_EPS = float(np.finfo(float).eps)


def negative_side(t, positive_bound):
    """``1 - e^t + e^t h(-t)`` for t < 0 (``h``: a bound on the hockey-stick divergence at
    positive arguments covering both directions of the pair, so ``H_{e^t}(P||Q) = 1 - e^t +
    e^t H_{e^-t}(Q||P)`` is bounded), raised by its rounding."""
    with np.errstate(under="ignore"):
        return (-np.expm1(t) + np.exp(t) * positive_bound(-t)) * (1.0 + 8 * _EPS)


def _padded(delta):
    """An accountant's delta raised by a relative 1e-9 for its rounding, at most 1."""
    return min(1.0, float(delta) * (1.0 + 1e-9) + 1e-300)


def profile_from_positive(positive):
    """``t -> `` a privacy profile at every real t from ``positive`` (an upper bound at t >= 0,
    both directions): directly at t >= 0, through :func:`negative_side` at t < 0; at most 1."""

    def profile(t):
        t = np.asarray(t, dtype=float)
        flat = t.ravel()
        out = np.empty(flat.shape)
        pos = flat >= 0
        out[pos] = positive(flat[pos])
        out[~pos] = negative_side(flat[~pos], positive)
        return np.minimum(out, 1.0).reshape(t.shape)

    return profile


def geometric_bisection(ok, good, bad, rtol):
    """Bisect on a log scale between ``good`` (``ok`` true) and ``bad`` (``ok`` false), ``ok``
    monotone between them, until they are within a factor ``1 + rtol``; returns the last
    point found admissible, so the answer is never on the wrong side."""
    while max(good, bad) / min(good, bad) > 1.0 + rtol:
        mid = math.sqrt(good * bad)
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


def smallest_scale(ok, start, grow=2.0, rtol=1e-3):
    """The smallest ``c > 0`` with ``ok(c)`` (``ok`` false below a threshold, true above it),
    to a relative ``rtol`` and on the admissible side: from ``start``, grow by ``grow`` until
    admissible, halve until not, then :func:`geometric_bisection`."""
    hi = float(start)
    for _ in range(100000):
        if ok(hi):
            break
        hi *= grow
    else:
        raise RuntimeError("calibration could not bracket the noise scale")
    lo = hi * 0.5
    while ok(lo):
        hi, lo = lo, lo * 0.5
    return geometric_bisection(ok, hi, lo, rtol)


class Accountant(abc.ABC):
    """What every accountant does, on events (:mod:`skdpgd.accounting.events`: one, or a
    sequence composed): ``supports(steps)`` (can it account them), ``epsilon(steps, delta)``
    and ``delta(steps, epsilon)`` (upper bounds, never estimates), and ``calibrate(shape,
    epsilon, delta, sampling_rate=1.0, prior=())`` (scale relative multipliers so the run,
    composed with the full-batch ``prior`` multipliers, spends at most (epsilon, delta), and
    within the accountant's tolerance of it).

    Only the first three are abstract: the default :meth:`calibrate` searches the scale with
    :meth:`epsilon` (:func:`smallest_scale`), so a new accountant is one class with
    ``supports``, ``epsilon`` and ``delta``; one with a closed form or a faster root-finder
    overrides it (GDP, RDP). ``tests/accounting/test_accountant_contract.py`` runs one contract
    test on
    each of :data:`ACCOUNTANTS`.

    What the rest of the package asks of an accountant goes through this interface too:
    :meth:`available` (an optional dependency is installed; :meth:`supports` is then false
    when it is not), :meth:`epsilon_profile` (``delta -> epsilon`` of events, for a report:
    :func:`~skdpgd.accounting.epsilon_profiles`), and :meth:`profile` (the privacy profile at
    every real argument, for a fit that chooses its mechanism from a release:
    :mod:`~skdpgd.accounting.envelope`). Each has a default built from :meth:`epsilon` and
    :meth:`delta`.
    """

    name = "accountant"
    #: What a report calls the accountant's statement.
    label = "accountant"
    #: Exact (the tightest statement there is) for every event it supports: a report lists
    #: it alone when it supports the events.
    exact = False
    #: Composes selections known by their Renyi-DP curve (at ``RDP_DEFAULT_ORDERS``).
    composes_rdp_curves = False

    #: Relative precision of the default calibration's scale.
    calibration_rtol = 1e-3
    #: Factor by which the default calibration grows the scale from :meth:`start_scale`.
    calibration_growth = 2.0

    @classmethod
    def available(cls):
        """Whether what the accountant needs is installed (default: nothing optional)."""
        return True

    @abc.abstractmethod
    def supports(self, steps): ...

    @abc.abstractmethod
    def epsilon(self, steps, delta): ...

    @abc.abstractmethod
    def delta(self, steps, epsilon): ...

    def start_scale(self, shape, epsilon, delta, sampling_rate, prior):
        """Where the default calibration starts its search for the scale (default 1)."""
        return 1.0

    def calibrate(self, shape, epsilon, delta, sampling_rate=1.0, prior=()):
        """Scale ``shape`` so the run (composed with the full-batch ``prior``) spends at most
        (epsilon, delta) by :meth:`epsilon`, within a relative :attr:`calibration_rtol` of
        the smallest such scale. Returns the multipliers; ``epsilon = inf`` gives zeros."""
        epsilon = check_epsilon(epsilon)
        delta = check_delta(delta)
        shape = np.asarray(shape, dtype=float).ravel()
        if shape.size == 0 or np.any(~np.isfinite(shape)) or np.any(shape <= 0):
            raise ValueError(
                "a schedule shape must be a non-empty array of positive finite values."
            )
        if math.isinf(epsilon):
            return np.zeros_like(shape)
        prior = np.asarray(prior, dtype=float).ravel()
        q = float(sampling_rate)

        def ok(c):
            runs = [GaussianSteps(c * shape, q)]
            if prior.size:
                runs.append(GaussianSteps(prior, 1.0))
            return self.epsilon(runs, delta) <= epsilon

        start = self.start_scale(shape, epsilon, delta, q, prior)
        return smallest_scale(ok, start, self.calibration_growth, self.calibration_rtol) * shape

    def cache_key(self):
        """A hashable key of the accountant's class and settings: what a result cached for
        it depends on."""
        items = []
        for k, v in sorted(vars(self).items()):
            if isinstance(v, np.ndarray):
                v = (v.dtype.str, v.tobytes())
            items.append((k, v))
        return (type(self).__module__, type(self).__qualname__, tuple(items))

    def report_label(self, steps):
        """The name of this accountant's statement about ``steps`` in a report."""
        return self.label

    def epsilon_profile(self, steps, rdp_curves=()):
        """``delta -> epsilon`` (upper bounds) of ``steps`` composed, for reading at several
        deltas; ``rdp_curves`` (Renyi-DP curves at ``RDP_DEFAULT_ORDERS``) only where
        :attr:`composes_rdp_curves`. Default: :meth:`epsilon` at each delta."""
        if len(rdp_curves):
            raise ValueError(f"the {self.name} accountant does not compose Renyi-DP curves.")
        return lambda delta: float(self.epsilon(steps, delta))

    def profile(self, steps, t_max=None, n_table=2049):
        """``t -> `` an upper bound on the privacy profile ``H_{e^t}`` of ``steps`` composed at
        every real ``t`` (vectorised, both orders of a neighbouring pair, at most 1).

        Default, from :meth:`delta`: at ``t >= 0`` the accountant's delta; with ``t_max``, read
        once at ``n_table`` points evenly spread over ``[0, t_max]`` and, between two of them
        and beyond ``t_max``, bounded by its value at the point to the left (a hockey-stick
        divergence is non-increasing in t); at ``t < 0`` through :func:`negative_side`. A
        relative 1e-9 is added for the rounding of :meth:`delta`. An
        accountant with a closed form or a cheaper table overrides it (GDP, RDP, PLD).
        """
        if t_max is None:

            def positive(tt):
                tt = np.asarray(tt, dtype=float)
                flat = [_padded(self.delta(steps, float(x))) for x in tt.ravel()]
                return np.asarray(flat, dtype=float).reshape(tt.shape)

        else:
            grid = np.linspace(0.0, float(t_max), int(n_table))
            table = np.array([_padded(self.delta(steps, float(x))) for x in grid])
            table = np.minimum.accumulate(table)  # non-increasing (a bound stays a bound)

            def positive(tt):
                tt = np.asarray(tt, dtype=float)
                k = np.clip(np.searchsorted(grid, tt, side="right") - 1, 0, grid.size - 1)
                return table[k]

        return profile_from_positive(positive)

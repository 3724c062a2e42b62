"""The interface every accountant implements (:class:`Accountant`), and the one generic
calibration: a search for the smallest noise scale an accountant certifies."""

from __future__ import annotations

import abc
import math

import numpy as np

from .._checks import check_delta, check_epsilon
from .events import GaussianSteps

__all__ = ["Accountant", "geometric_bisection", "smallest_scale"]


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
    overrides it (GDP, RDP). ``tests/test_accountant_contract.py`` runs one contract test on
    each of :data:`ACCOUNTANTS`.
    """

    name = "accountant"

    #: Relative precision of the default calibration's scale.
    calibration_rtol = 1e-3
    #: Factor by which the default calibration grows the scale from :meth:`start_scale`.
    calibration_growth = 2.0

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

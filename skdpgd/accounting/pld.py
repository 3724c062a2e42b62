"""Privacy-loss-distribution accounting of Poisson-subsampled Gaussian steps through the
optional dependency dp-accounting (pessimistic: every value is an upper bound)."""

from __future__ import annotations

import math

import numpy as np

from .._checks import check_delta as _check_delta
from .._checks import check_epsilon as _check_epsilon
from .._config import secure_noise
from .accountant import Accountant
from .events import gaussian_runs
from .rdp import RDPAccountant, _check_q

__all__ = ["PLDAccountant", "pld_epsilon", "pld_delta", "pld_profile"]


def pld_epsilon(steps, delta, value_discretization_interval=1e-4):
    """Epsilon of ``steps`` by dp-accounting's PLD accountant (pessimistic, add/remove-one).

    Usually tighter than RDP for long compositions; needs the optional dependency
    (``pip install "skdpgd[accounting]"``). Equal multipliers are grouped (self-composition)
    and full-batch steps are merged into one Gaussian (exact), so its cost grows with the
    number of distinct subsampled multipliers (each is a PLD convolution).
    """
    delta = _check_delta(delta)
    return pld_profile(steps, value_discretization_interval)(delta)


def pld_profile(steps, value_discretization_interval=1e-4):
    """``delta -> epsilon`` of ``steps`` by dp-accounting's PLD accountant (see
    :func:`pld_epsilon`): the PLD is composed once and then read at any delta."""
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            'pld_epsilon needs dp-accounting: pip install "skdpgd[accounting]"'
        ) from exc
    if any(r.noise == "discrete" for r in gaussian_runs(steps)):
        raise ValueError(_DISCRETE_REFUSAL)
    events = []
    inv_var = 0.0
    for g in RDPAccountant(noise="gaussian")._groups(steps):
        if g.infinite:
            return lambda delta: math.inf
        if g.sigmas.size == 0:
            continue
        if g.q == 1.0:
            inv_var += float(np.sum(g.counts / (g.sigmas * g.sigmas)))
            continue
        for sig, n in zip(g.sigmas, g.counts):
            ev = dp_accounting.PoissonSampledDpEvent(g.q, dp_accounting.GaussianDpEvent(float(sig)))
            events.append(dp_accounting.SelfComposedDpEvent(ev, int(n)) if n > 1 else ev)
    if inv_var > 0:
        events.append(dp_accounting.GaussianDpEvent(1.0 / math.sqrt(inv_var)))
    if not events:
        return lambda delta: 0.0
    acc = pld_privacy_accountant.PLDAccountant(
        value_discretization_interval=value_discretization_interval
    )
    for ev in events:
        acc.compose(ev)
    profile = lambda delta: float(acc.get_epsilon(_check_delta(delta)))  # noqa: E731
    profile.delta_at = lambda epsilon: float(acc.get_delta(_check_epsilon(epsilon)))
    # delta at several epsilons (ascending, each >= 0) from the one composed PLD
    profile.deltas_at = lambda epsilons: np.asarray(
        acc.get_delta(np.asarray(epsilons, dtype=float)), dtype=float
    )
    return profile


def pld_delta(steps, epsilon, value_discretization_interval=1e-4):
    """Delta of ``steps`` at ``epsilon`` by dp-accounting's PLD accountant (pessimistic, an
    upper bound; see :func:`pld_epsilon`)."""
    epsilon = _check_epsilon(epsilon)
    profile = pld_profile(steps, value_discretization_interval)
    if math.isinf(epsilon):
        return 0.0
    if not hasattr(profile, "delta_at"):  # nothing released (0) or a noiseless step (1)
        return 1.0 if math.isinf(profile(0.5)) else 0.0
    return profile.delta_at(epsilon)


_DISCRETE_REFUSAL = (
    "the PLD accountant (dp-accounting) composes the privacy-loss distribution of the "
    "continuous Gaussian; secure mode's discrete Gaussian is accounted in Renyi DP: use "
    "accountant='rdp'."
)


class PLDAccountant(Accountant):
    """Privacy-loss-distribution accounting (dp-accounting's, pessimistic) for Poisson-sampled
    Gaussian steps: tighter than RDP for long runs, at the cost of a convolution per distinct
    multiplier. Needs the optional dependency dp-accounting.

    :meth:`calibrate` starts from the RDP calibration (an upper bound on the noise needed),
    bisects the scale on a log scale against :func:`pld_epsilon` (the generic search of
    :class:`~skdpgd.accounting.Accountant`), and returns a scale whose PLD epsilon was
    *evaluated* at most ``epsilon``: it never overspends.
    """

    name = "pld"

    #: Most distinct multipliers a calibration composes (each is a PLD convolution).
    MAX_DISTINCT = 64

    #: the search starts at the RDP scale, an upper bound up to rounding: grow it by 1%
    calibration_growth = 1.01

    def __init__(self, value_discretization_interval=1e-4):
        self.value_discretization_interval = value_discretization_interval

    def supports(self, steps):
        """Any sampling rate in (0, 1] (full-batch steps are merged into one Gaussian), for
        continuous Gaussian steps only (not secure mode's discrete ones)."""
        if secure_noise():
            return False
        try:
            if any(r.noise == "discrete" for r in gaussian_runs(steps)):
                return False
        except (TypeError, ValueError):
            return False
        return RDPAccountant().supports(steps)

    def epsilon(self, steps, delta):
        """Epsilon of ``steps`` (an upper bound: dp-accounting's pessimistic PLD)."""
        return pld_epsilon(steps, delta, self.value_discretization_interval)

    def delta(self, steps, epsilon):
        """Delta of ``steps`` at ``epsilon`` (an upper bound: dp-accounting's pessimistic PLD)."""
        return pld_delta(steps, epsilon, self.value_discretization_interval)

    def start_scale(self, shape, epsilon, delta, sampling_rate, prior):
        """The RDP calibration's scale: an upper bound on the noise PLD needs."""
        hi = RDPAccountant().calibrate(
            shape, epsilon, delta, sampling_rate=sampling_rate, prior=prior
        )
        return float(hi[0] / shape[0]) if shape[0] > 0 else 1.0

    def calibrate(self, shape, epsilon, delta, sampling_rate=1.0, prior=()):
        """Scale ``shape`` so the run (composed with the full-batch ``prior``) spends at most
        (epsilon, delta) by PLD, within a relative 1e-3 of the smallest such scale: the
        generic search (:meth:`Accountant.calibrate`) from the RDP scale."""
        shape = np.asarray(shape, dtype=float).ravel()
        if math.isinf(_check_epsilon(epsilon)):
            return np.zeros_like(shape)
        if np.unique(shape).size > self.MAX_DISTINCT:
            raise ValueError(
                f"the PLD accountant composes one convolution per distinct noise multiplier; "
                f"this schedule has {np.unique(shape).size} (> {self.MAX_DISTINCT}). Use "
                "accountant='rdp', or a schedule with fewer distinct multipliers ('uniform')."
            )
        _check_q(sampling_rate)
        return super().calibrate(shape, epsilon, delta, sampling_rate, prior)

"""Privacy-loss-distribution accounting of Poisson-subsampled Gaussian steps through the
optional dependency dp-accounting (pessimistic: every value is an upper bound)."""

from __future__ import annotations

import math

import numpy as np

from .._checks import check_delta as _check_delta
from .._checks import check_epsilon as _check_epsilon
from .._config import secure_noise
from .accountant import Accountant, profile_from_positive
from .events import GaussianSteps, gaussian_runs
from .rdp import RDPAccountant, _check_q

__all__ = ["PLDAccountant", "pld_epsilon", "pld_delta", "pld_profile", "pld_branch_profile"]

_EPS = float(np.finfo(float).eps)


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
    label = "PLD (dp-accounting)"

    #: Most distinct multipliers a calibration composes (each is a PLD convolution).
    MAX_DISTINCT = 64

    #: the search starts at the RDP scale, an upper bound up to rounding: grow it by 1%
    calibration_growth = 1.01

    def __init__(self, value_discretization_interval=1e-4):
        self.value_discretization_interval = value_discretization_interval

    @classmethod
    def available(cls):
        """Whether the optional dependency dp-accounting is installed."""
        try:
            import dp_accounting  # noqa: F401
        except ImportError:
            return False
        return True

    def supports(self, steps):
        """Any sampling rate in (0, 1] (full-batch steps are merged into one Gaussian), for
        continuous Gaussian steps only (not secure mode's discrete ones), when dp-accounting
        is installed (:meth:`available`)."""
        if secure_noise() or not self.available():
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

    @staticmethod
    def _finite_steps(steps):
        """The steps with their noiseless (infinite-multiplier) entries dropped."""
        return [
            GaussianSteps(r.multipliers[np.isfinite(r.multipliers)], r.sampling_rate)
            for r in gaussian_runs(steps)
            if np.isfinite(r.multipliers).any()
        ]

    def epsilon_profile(self, steps, rdp_curves=()):
        """``delta -> epsilon`` of ``steps``: the PLD composed once (:func:`pld_profile`),
        read at each delta."""
        if len(rdp_curves):
            raise ValueError("the PLD accountant does not compose Renyi-DP curves.")
        return pld_profile(self._finite_steps(steps), self.value_discretization_interval)

    def profile(self, steps, t_max=None, n_table=20001):
        """The smaller of two upper bounds at every real t: the RDP accountant's
        (:meth:`RDPAccountant.profile`) and :func:`pld_branch_profile` (read up to ``t_max``)."""
        rdp = RDPAccountant().profile(steps)
        pld = pld_branch_profile(steps, t_max, self.value_discretization_interval, n_table)
        return lambda t: np.minimum(rdp(t), pld(t))


def pld_branch_profile(steps, t_max=None, value_discretization_interval=1e-4, n_table=20001):
    """``t -> `` an upper bound on the privacy profile at every real t of Gaussian ``steps``
    (Poisson-subsampled), from dp-accounting's pessimistic PLD (the larger of its add and
    remove directions; :func:`pld_profile`) at ``|t|``: at t >= 0 directly, at t < 0 through
    ``1 - e^t + e^t H_{e^-t}``.

    With ``t_max``, the PLD's delta is read once, at ``n_table`` points evenly spread over
    ``[0, t_max]``; between two of them it is bounded by the chord in ``e^t`` (the pessimistic
    PLD is the hockey-stick curve of a pair of distributions, convex in ``e^t``), beyond
    ``t_max`` by its value there (it is non-increasing). Without, at each t asked. A relative
    1e-9 is added for its rounding.
    """
    prof = pld_profile(steps, value_discretization_interval)
    deltas_at = getattr(prof, "deltas_at", None)
    if deltas_at is None:  # nothing released (0) or a step without noise (1)
        none = 1.0 if math.isinf(prof(0.5)) else 0.0

        def positive(tt):
            return np.full(np.shape(tt), none)

    elif t_max is None:

        def positive(tt):
            tt = np.asarray(tt, dtype=float)
            flat = tt.ravel()
            order = np.argsort(flat, kind="stable")
            out = np.empty(flat.shape)
            out[order] = np.asarray(deltas_at(flat[order]), dtype=float)
            out = np.minimum(1.0, out * (1.0 + 1e-9) + 1e-300)
            return out.reshape(tt.shape)

    else:
        grid = np.linspace(0.0, float(t_max), int(n_table))
        table = np.minimum(1.0, np.asarray(deltas_at(grid), dtype=float) * (1.0 + 1e-9) + 1e-300)
        table = np.minimum.accumulate(table)  # non-increasing (a bound stays a bound)
        step = grid[1] - grid[0]

        def positive(tt):
            tt = np.asarray(tt, dtype=float)
            k = np.clip(np.floor(tt / step).astype(np.int64), 0, grid.size - 2)
            k = np.maximum(np.where(grid[k] > tt, k - 1, k), 0)  # grid[k] <= t
            t0, t1 = grid[k], grid[k + 1]
            inside = tt <= t1
            # chord in e^t between the table's neighbours: weight of the right end
            with np.errstate(over="ignore", invalid="ignore"):
                w = np.expm1(np.clip(tt, t0, t1) - t0) / np.expm1(t1 - t0)
            w = np.clip(np.where(np.isfinite(w), w, 1.0), 0.0, 1.0)
            w = np.maximum(w - 4.0 * _EPS, 0.0)  # toward the left end: the larger value
            chord = table[k] + (table[k + 1] - table[k]) * w
            return np.where(inside, chord * (1.0 + 4.0 * _EPS), table[-1])

    return profile_from_positive(positive)

"""The interface every accountant implements (:class:`Accountant`)."""

from __future__ import annotations

import abc

__all__ = ["Accountant"]


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


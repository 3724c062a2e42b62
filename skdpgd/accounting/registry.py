"""The registry of accountants: :data:`ACCOUNTANTS` and :func:`accountant_named`. Everything
that chooses an accountant (an estimator's or a budget's ``accountant='rdp' | 'pld'``, a
report's list of statements, a fit's branch profiles) reads it here."""

from __future__ import annotations

from .accountant import Accountant
from .gdp import GaussianDPAccountant
from .pld import PLDAccountant
from .rdp import RDPAccountant

__all__ = ["ACCOUNTANTS", "accountant_classes", "accountant_named", "as_accountant"]

#: Every accountant class: the contract test runs on each, a report lists each that supports
#: a fit's releases. A new accountant is one module (a subclass of :class:`Accountant` with
#: ``supports``, ``epsilon`` and ``delta``) plus its import and an entry in this tuple.
ACCOUNTANTS = (GaussianDPAccountant, RDPAccountant, PLDAccountant)


def accountant_classes():
    """The classes of :data:`ACCOUNTANTS`, as the registry holds them now (read at each call,
    so an accountant added to the tuple is seen everywhere)."""
    return tuple(ACCOUNTANTS)


def accountant_named(name):
    """A new accountant of the class in :data:`ACCOUNTANTS` whose ``name`` is ``name`` (what
    an estimator's ``accountant='rdp' | 'pld'`` selects)."""
    by_name = {cls.name: cls for cls in accountant_classes()}
    if name not in by_name:
        raise ValueError(f"unknown accountant {name!r}; expected one of {sorted(by_name)}.")
    return by_name[name]()


def as_accountant(accountant):
    """``accountant`` itself when it is an :class:`Accountant`, else :func:`accountant_named`."""
    if isinstance(accountant, Accountant):
        return accountant
    return accountant_named(accountant)

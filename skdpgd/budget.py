"""A privacy budget that several fits draw from, composed tightly.

Each fit charges the budget with the exact description of what it released (events of
:mod:`skdpgd.accounting.events`: its releases' noise multipliers, sensitivities and sampling
rate) *before* it runs its kernel; a fit that would overspend is refused with
:class:`~skdpgd.BudgetExceededError` and releases nothing.

Composition (:class:`skdpgd.accounting.Composition`, the arithmetic of
:func:`skdpgd.accounting.compose`): exact Gaussian DP while every charge is a full-batch
Gaussian release; Renyi DP at ``skdpgd.accounting.RDP_DEFAULT_ORDERS`` once one is
Poisson-subsampled or is known by its Renyi-DP curve alone (a private hyperparameter search).
A budget created with ``accountant='pld'`` composes Poisson-subsampled charges with that
accountant too (the smaller of its epsilon and RDP's, two upper bounds) while it supports them
(no selection curve, no discrete noise), so a fit its own PLD accountant admits is admitted.

The budget is stated for one neighbouring relation. ``'add_remove'`` (the default) accepts every
fit: a replace-one full-batch release with multiplier z (noise ``z * 2C``) is an add/remove-one
release with multiplier ``2z`` (the sum moves by at most C when a row is added or removed).
``'replace'`` accepts full-batch fits only (subsampling amplification is stated for add/remove);
an add/remove full-batch release with multiplier z is a replace-one release with ``z / 2``.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ._checks import check_delta as _check_delta
from ._checks import check_epsilon as _check_epsilon
from .accounting import (
    RELATIONS,
    Composition,
    RDPCurve,
    Relation,
    Release,
    accountant_named,
    flatten,
)
from .exceptions import BudgetExceededError

__all__ = ["PrivacyBudget"]


class PrivacyBudget:
    """An (epsilon, delta) budget shared by several fits.

    Pass it to an estimator's ``budget`` parameter; every fit then charges the budget with the
    multipliers it is about to use, and a fit that would take the composed epsilon above
    ``epsilon`` raises :class:`~skdpgd.BudgetExceededError` before touching the data's
    gradients. A fit's own ``epsilon``/``delta`` still set its noise; the budget checks the
    composition of all fits at the budget's ``delta``.

    Copies share the ledger (``copy.copy``, ``copy.deepcopy`` and so scikit-learn's ``clone``
    return the same object), so fits inside pipelines and cross-validation draw from it.

    **Pickling.** A budget pickles (so a fitted model that was charged to it can be saved with
    pickle or joblib), but what comes back is *detached*: a read-only snapshot of the ledger
    at the time it was pickled. It reports what was spent then and refuses every new charge
    with a ``RuntimeError``, before anything is computed: a copy in another process keeps its
    own ledger, so fits charged there would overspend unseen. Hence ``cross_val_score(...,
    n_jobs=2)`` with a budget fails at its first fit, saying so; run the fits that share a
    budget in one process (``n_jobs=1``), and give a loaded model a live budget
    (``set_params(budget=...)``) before fitting it again.

    Parameters
    ----------
    epsilon : float
        Total epsilon (> 0).
    delta : float
        Delta in (0, 1) the total is stated for.
    neighbouring : {'add_remove', 'replace'}, default='add_remove'
        Relation the total guarantee is stated for (see the module docstring).
    accountant : {'rdp', 'pld'}, default='rdp'
        The accountant (by its name in :data:`skdpgd.accounting.ACCOUNTANTS`) that
        Poisson-subsampled charges compose with: 'rdp' (Renyi DP), or 'pld' (dp-accounting's
        privacy-loss distributions, needs ``pip install "skdpgd[accounting]"``; the ledger's
        epsilon is then the smaller of PLD's and RDP's, and RDP's alone where PLD does not
        apply: a selection known by its RDP curve, or secure mode's discrete noise).
        Full-batch charges compose exactly in Gaussian DP either way.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd import DPLogisticRegression, PrivacyBudget
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 4)) / 2
    >>> y = (X[:, 0] > 0).astype(int)
    >>> budget = PrivacyBudget(epsilon=1.5, delta=1e-6)
    >>> clf = DPLogisticRegression(epsilon=1.0, delta=1e-6, data_norm=2.0, budget=budget)
    >>> clf = clf.fit(X, y)
    >>> round(budget.spent_epsilon(), 3) <= 1.5
    True
    """

    def __init__(self, epsilon, delta, neighbouring="add_remove", accountant="rdp"):
        _check_epsilon(epsilon)
        _check_delta(delta)
        if math.isinf(float(epsilon)):
            raise ValueError("a shared budget needs a finite epsilon.")
        if neighbouring not in RELATIONS:
            raise ValueError(
                f"neighbouring must be one of {sorted(RELATIONS)}, got {neighbouring!r}."
            )
        reader = accountant_named(accountant)  # through the registry: refuses other names
        if reader.exact:
            raise ValueError(
                f"accountant={accountant!r} reads full-batch releases only; a budget's "
                "Poisson-subsampled charges compose with 'rdp' or 'pld'."
            )
        if not reader.available():
            raise ImportError(
                f"PrivacyBudget(accountant={accountant!r}) needs an optional dependency: "
                'pip install "skdpgd[accounting]"'
            )
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.neighbouring = Relation(neighbouring).value
        self.accountant = reader.name
        self._reader = reader
        self._charges = []  # the ledger: Releases, named by label, under the budget's relation
        self._rdp_charges = []  # (label, RDP curve at DEFAULT_ORDERS, under the budget's relation)
        self._lock = threading.Lock()
        self._detached = False

    # a ledger is shared, never copied
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        # a detached, read-only snapshot (see the class docstring): never a second live ledger
        return (
            _detached_budget,
            (
                self.epsilon,
                self.delta,
                self.neighbouring,
                self.charges,
                list(self._rdp_charges),
                self.accountant,
            ),
        )

    @property
    def detached(self):
        """True for a copy restored from a pickle: it reports, and refuses every charge."""
        return self._detached

    def __repr__(self):
        reader = "" if self.accountant == "rdp" else f", accountant={self.accountant!r}"
        return (
            f"PrivacyBudget(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"neighbouring={self.neighbouring!r}{reader}; spent {self.spent_epsilon():.4g} in "
            f"{len(self._charges) + len(self._rdp_charges)} release group(s)"
            f"{'; detached' if self._detached else ''})"
        )

    # ------------------------------------------------------------------------------------
    @property
    def charges(self):
        """List of ``(label, noise_multipliers, sampling_rate)``, under the budget's relation."""
        return [(r.name, r.multipliers, r.sampling_rate) for r in self._charges]

    def _convert(self, release, label):
        """The release in the ledger: its multipliers under the budget's relation (each by
        its own rule), named ``label``."""
        if self.neighbouring == "replace" and release.sampling_rate < 1.0:
            raise ValueError(
                "this budget is stated for replace-one neighbours, and Poisson-subsampled fits "
                "are accounted under add/remove-one; create the budget with "
                "neighbouring='add_remove' to share it with DP-SGD fits."
            )
        return release.under(self.neighbouring, name=label)

    @property
    def rdp_charges(self):
        """List of ``(label, rdp)``: charges given by their RDP curve at ``DEFAULT_ORDERS``."""
        return [(label, rdp.copy()) for label, rdp in self._rdp_charges]

    def _composition(self, extra=(), rdp_extra=()):
        return Composition(
            self._charges + list(extra),
            [c for _, c in self._rdp_charges] + list(rdp_extra),
            accountant=self._reader,
        )

    def spent_epsilon(self):
        """Epsilon (at the budget's delta) of all fits charged so far: an upper bound."""
        return self._composition().epsilon(self.delta)

    def remaining_epsilon(self, delta=None):
        """The largest epsilon a further full-batch fit at ``delta`` (default: the budget's)
        could be given without overspending (0 when the budget is spent).

        The fit is assumed to spend its epsilon as one Gaussian-DP ``mu`` (what the full-batch
        estimators do); the answer is checked by composing that ``mu`` with the ledger.
        """
        delta = self.delta if delta is None else float(delta)
        return self._composition().remaining_epsilon(self.epsilon, self.delta, delta)

    def _refuse_if_detached(self):
        if self._detached:
            raise RuntimeError(
                "this PrivacyBudget is a detached copy, restored from a pickle (for example in "
                "a worker process of n_jobs > 1, or a saved model): its ledger is a snapshot, "
                "and charging it would let fits overspend unseen. Nothing was released. Run the "
                "fits that share a budget in one process (n_jobs=1), or pass the live budget "
                "with set_params(budget=...)."
            )

    def _parts(self, events, label):
        """``(releases, curves)`` of ``events`` as the ledger holds them: each release under the
        budget's relation, each selection's RDP curve (stated for the budget's relation), each
        named after ``label`` (and its own name when the events have several leaves)."""
        releases, selections = flatten(events)
        several = len(releases) + len(selections) > 1
        parts = [self._convert(r, f"{label} ({r.name})" if several else label) for r in releases]
        curves = []
        for sel in selections:
            relation = Relation.of(sel.relation)
            if relation != self.neighbouring:
                raise ValueError(
                    f"this RDP curve is stated for {relation.words} neighbours and the budget "
                    f"for {Relation(self.neighbouring).words}; an RDP curve cannot be "
                    f"converted between relations. Create the budget with "
                    f"neighbouring={relation.value!r}."
                )
            name = f"{label} ({getattr(sel, 'name', 'selection')})" if several else label
            curve = np.array(RDPCurve(name, sel.rdp(), relation).curve)
            curve.setflags(write=False)
            curves.append((name, curve))
        return parts, curves

    def _refusal(self, after, label):
        before = self.spent_epsilon()
        return BudgetExceededError(
            f"this {label} would take the shared budget to epsilon={after:.6g} at "
            f"delta={self.delta:g}, above its total {self.epsilon:g} (spent so far: "
            f"{before:.6g}; a full-batch fit may still use epsilon="
            f"{self.remaining_epsilon():.6g}). Nothing was released."
        )

    def check(self, events, label="fit"):
        """Raise :class:`~skdpgd.BudgetExceededError` if charging ``events`` would overspend;
        record nothing.

        Estimators call it with a public upper bound on what a fit can spend, before their
        first draw, so that a refusal never depends on a released value.
        """
        self._refuse_if_detached()
        return self._admit(*self._parts(events, label), label, record=False)

    def _admit(self, parts, curves, label, record):
        """Compose ``parts`` and ``curves`` with the ledger; refuse past the total, else
        record them."""
        with self._lock:
            after = self._composition(extra=parts, rdp_extra=[c for _, c in curves]).epsilon(
                self.delta
            )
            if after > self.epsilon:
                raise self._refusal(after, label if curves and not parts else "fit")
            if record:
                self._charges.extend(parts)
                self._rdp_charges.extend(curves)
        return after

    def charge(self, events, label="fit"):
        """Record what a fit released, or raise :class:`~skdpgd.BudgetExceededError` (and
        record nothing).

        Parameters
        ----------
        events : event or list of events
            What was released, as events of :mod:`skdpgd.accounting.events`: Gaussian
            releases (:class:`~skdpgd.accounting.Release`, each with its sensitivity per
            relation, converted to the budget's relation), Poisson-sampled or composed
            events, or selections known by their Renyi-DP curve (such as a private search,
            :class:`~skdpgd.accounting.RepeatedSelection`, stated for the budget's relation).
        label : str
            Name shown in :attr:`charges` (and :attr:`rdp_charges`).

        Returns
        -------
        spent : float
            The budget's epsilon after this charge.
        """
        self._refuse_if_detached()
        return self._admit(*self._parts(events, label), label, record=True)

    def charge_rdp(self, rdp, neighbouring, label="selection"):
        """Record a release known by its Renyi-DP curve, or raise
        :class:`~skdpgd.BudgetExceededError` (before anything is released): ``charge`` of an
        :class:`~skdpgd.accounting.RDPCurve`.

        Parameters
        ----------
        rdp : array-like of shape (len(skdpgd.accounting.RDP_DEFAULT_ORDERS),)
            An upper bound of the release's RDP at each of ``RDP_DEFAULT_ORDERS`` (e.g. a
            private hyperparameter search, Papernot and Steinke 2022), under ``neighbouring``.
        neighbouring : str
            The relation the curve is stated for; it must be the budget's own (an RDP curve
            carries no sensitivity from which to convert it).
        label : str
            Name shown in :attr:`rdp_charges`.

        Returns
        -------
        spent : float
            The budget's epsilon after this charge.
        """
        return self.charge(RDPCurve(label, rdp, neighbouring), label=label)


def _detached_budget(epsilon, delta, neighbouring, charges, rdp_charges=(), accountant="rdp"):
    """Unpickle a :class:`PrivacyBudget` as a detached snapshot of its ledger (read with its
    accountant, or with RDP where that one's optional dependency is not installed here: an
    upper bound all the same)."""
    budget = PrivacyBudget(epsilon, delta, neighbouring)
    reader = accountant_named(accountant)
    if reader.available():
        budget.accountant, budget._reader = reader.name, reader
    unit = {"replace": 1.0, "add_remove": 1.0}
    budget._charges = [
        Release(label, np.asarray(z, dtype=float), unit, neighbouring, float(q))
        for label, z, q in charges
    ]
    budget._rdp_charges = [(label, np.asarray(r, dtype=float)) for label, r in rdp_charges]
    budget._detached = True
    return budget

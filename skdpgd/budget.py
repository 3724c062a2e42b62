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
    pickle, joblib or skops: its saved state is plain numbers, strings and lists, no lock),
    but what comes back is *detached*: a read-only snapshot of the ledger
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
        # one per charge: (label, first and end index in _charges, in _rdp_charges, epsilon
        # spent after it)
        self._entries = []
        self._lock = threading.Lock()
        self._detached = False

    # a ledger is shared, never copied
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    # --- pickling (pickle, joblib, skops): a detached, read-only snapshot, never a second live
    # ledger (see the class docstring). The state is plain data (numbers, strings, lists,
    # dicts): no lock, no accountant object, so skops needs to trust this class alone.
    def __getstate__(self):
        with self._lock:
            releases = [_release_state(r) for r in self._charges]
            curves = [[label, [float(v) for v in rdp]] for label, rdp in self._rdp_charges]
            entries = [list(e) for e in self._entries]
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "neighbouring": str(self.neighbouring),
            "accountant": self.accountant,
            "releases": releases,
            "rdp_charges": curves,
            "entries": entries,
        }

    def __setstate__(self, state):
        """Restore a snapshot: checked like a new budget, its ledger rebuilt from plain data,
        a new lock, and detached (it refuses every charge)."""
        PrivacyBudget.__init__(self, state["epsilon"], state["delta"], state["neighbouring"])
        reader = accountant_named(state.get("accountant", "rdp"))
        if reader.available():  # else RDP reads it: an upper bound all the same
            self.accountant, self._reader = reader.name, reader
        self._charges = [_release_from_state(r) for r in state.get("releases", [])]
        self._rdp_charges = [
            (str(label), _frozen(np.asarray(rdp, dtype=float)))
            for label, rdp in state.get("rdp_charges", [])
        ]
        entries = [tuple(e) for e in state.get("entries", [])]
        if not entries and (self._charges or self._rdp_charges):  # one entry for the lot
            entries = [("charges", 0, len(self._charges), 0, len(self._rdp_charges), math.nan)]
        self._entries = [
            (str(lab), int(a), int(b), int(c), int(d), float(after))
            for lab, a, b, c, d, after in entries
        ]
        self._detached = True

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

    @property
    def entries(self):
        """One dict per charge, in order: ``number`` (1, 2, ...), ``label`` (the estimator's
        class for a fit, with the set-up release's name for one charged ahead of the fit's
        main releases), ``releases`` (its :class:`~skdpgd.accounting.Release` objects under
        the budget's relation, each with its sensitivities and noise), ``curves`` (``(name,
        rdp)`` of the releases known by their RDP curve) and ``spent_epsilon`` (the budget's
        epsilon right after the charge; nan in a copy restored from an old pickle)."""
        with self._lock:
            return [
                {
                    "number": k + 1,
                    "label": label,
                    "releases": list(self._charges[a:b]),
                    "curves": [(n, rdp.copy()) for n, rdp in self._rdp_charges[c:d]],
                    "spent_epsilon": after,
                }
                for k, (label, a, b, c, d, after) in enumerate(self._entries)
            ]

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
                r0, c0 = len(self._charges), len(self._rdp_charges)
                self._charges.extend(parts)
                self._rdp_charges.extend(curves)
                self._entries.append(
                    (label, r0, len(self._charges), c0, len(self._rdp_charges), float(after))
                )
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


def _frozen(a):
    a.setflags(write=False)
    return a


def _release_state(r):
    """A ledger release as plain data (for pickling)."""
    return {
        "name": r.name,
        "multipliers": [float(v) for v in r.multipliers],
        "sensitivity": {str(k): float(v) for k, v in r.sensitivity.items()},
        "relation": str(r.relation),
        "sampling_rate": float(r.sampling_rate),
        "noise": r.noise,
    }


def _release_from_state(d):
    """The ledger release of :func:`_release_state` (checked again by ``Release``)."""
    return Release(
        str(d["name"]),
        np.asarray(d["multipliers"], dtype=float),
        {str(k): float(v) for k, v in d["sensitivity"].items()},
        str(d["relation"]),
        float(d["sampling_rate"]),
        str(d["noise"]),
    )


def _detached_budget(epsilon, delta, neighbouring, charges, rdp_charges=(), accountant="rdp"):
    """Unpickle a :class:`PrivacyBudget` pickled by an earlier version (which recorded the
    multipliers of each charge, not its sensitivities): a detached snapshot of its ledger."""
    budget = PrivacyBudget.__new__(PrivacyBudget)
    unit = {"replace": 1.0, "add_remove": 1.0}
    releases = [
        _release_state(Release(label, np.asarray(z, dtype=float), unit, neighbouring, float(q)))
        for label, z, q in charges
    ]
    budget.__setstate__(
        {
            "epsilon": epsilon,
            "delta": delta,
            "neighbouring": neighbouring,
            "accountant": accountant,
            "releases": releases,
            "rdp_charges": [[label, list(r)] for label, r in rdp_charges],
        }
    )
    return budget

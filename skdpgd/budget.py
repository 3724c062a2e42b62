"""A privacy budget that several fits draw from, composed tightly.

Each fit charges the budget with the exact description of what it released (its noise
multipliers and sampling rate) *before* it runs its kernel; a fit that would overspend is
refused with :class:`~skdpgd.BudgetExceededError` and releases nothing.

Composition:

* while every charge is full batch (sampling rate 1), the releases are Gaussian mechanisms and
  compose **exactly** in Gaussian DP: ``mu = sqrt(sum z^-2)`` over all of them;
* once one charge is Poisson-subsampled, or is given by its Renyi-DP curve alone
  (:meth:`PrivacyBudget.charge_rdp`, e.g. a private hyperparameter search), everything is
  composed in Renyi DP over ``skdpgd.accounting.RDP_DEFAULT_ORDERS`` (a full-batch Gaussian step with
  multiplier z has RDP ``alpha / (2 z^2)``) and converted with the improved
  RDP -> (epsilon, delta) bound.

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
from scipy.optimize import brentq

from ._checks import check_delta as _check_delta
from ._checks import check_epsilon as _check_epsilon
from .accounting import RDP_DEFAULT_ORDERS, Composition, Release, gdp_epsilon, gdp_mu
from .exceptions import BudgetExceededError

__all__ = ["PrivacyBudget"]

_RELATIONS = {"add_remove": "add/remove-one", "replace": "replace-one"}
_NAME_OF = {v: k for k, v in _RELATIONS.items()}


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

    def __init__(self, epsilon, delta, neighbouring="add_remove"):
        _check_epsilon(epsilon)
        _check_delta(delta)
        if math.isinf(float(epsilon)):
            raise ValueError("a shared budget needs a finite epsilon.")
        if neighbouring not in _RELATIONS:
            raise ValueError(f"neighbouring must be one of {sorted(_RELATIONS)}, "
                             f"got {neighbouring!r}.")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.neighbouring = neighbouring
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
        return (_detached_budget, (self.epsilon, self.delta, self.neighbouring,
                                   self.charges, list(self._rdp_charges)))

    @property
    def detached(self):
        """True for a copy restored from a pickle: it reports, and refuses every charge."""
        return self._detached

    def __repr__(self):
        return (f"PrivacyBudget(epsilon={self.epsilon!r}, delta={self.delta!r}, "
                f"neighbouring={self.neighbouring!r}; spent {self.spent_epsilon():.4g} in "
                f"{len(self._charges) + len(self._rdp_charges)} release group(s)"
                f"{'; detached' if self._detached else ''})")

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
        return Release(label, release.multipliers_under(self.neighbouring),
                       dict(release.sensitivity), self.neighbouring, release.sampling_rate)

    @property
    def rdp_charges(self):
        """List of ``(label, rdp)``: charges given by their RDP curve at ``DEFAULT_ORDERS``."""
        return [(label, rdp.copy()) for label, rdp in self._rdp_charges]

    def _composition(self, extra=(), rdp_extra=()):
        return Composition(self._charges + list(extra),
                           [c for _, c in self._rdp_charges] + list(rdp_extra))

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
        total = gdp_mu(self.epsilon, self.delta)

        # the ledger is summarised once; the search only adds the next fit's release to it
        ledger = self._composition()

        def spent_with(mu):
            return ledger.epsilon(self.delta, mu)

        if spent_with(0.0) >= self.epsilon:
            return 0.0
        hi = total
        if spent_with(hi) <= self.epsilon:
            mu = hi
        else:
            mu = brentq(lambda m: spent_with(m) - self.epsilon, 0.0, hi, xtol=1e-14,
                        rtol=1e-12)
            while mu > 0 and spent_with(mu) > self.epsilon:
                mu *= 1 - 1e-12
        return gdp_epsilon(delta, mu) if mu > 0 else 0.0

    @staticmethod
    def _releases(multipliers, sampling_rate, neighbouring, extra):
        """The :class:`Release` list that :meth:`charge` takes (plain multipliers wrapped)."""
        if len(multipliers) and all(isinstance(r, Release) for r in multipliers):
            releases = list(multipliers)
        else:
            relation = _NAME_OF.get(neighbouring, neighbouring)
            if relation not in _RELATIONS:
                raise ValueError(f"unknown neighbouring relation {neighbouring!r}.")
            releases = [Release("steps", multipliers, {"replace": 2.0, "add_remove": 1.0},
                                relation, float(sampling_rate))]
            if len(extra):
                releases.append(Release("setup", extra, {"replace": 1.0, "add_remove": 1.0},
                                        relation))
        return releases

    def _refuse_if_detached(self):
        if self._detached:
            raise RuntimeError(
                "this PrivacyBudget is a detached copy, restored from a pickle (for example in "
                "a worker process of n_jobs > 1, or a saved model): its ledger is a snapshot, "
                "and charging it would let fits overspend unseen. Nothing was released. Run the "
                "fits that share a budget in one process (n_jobs=1), or pass the live budget "
                "with set_params(budget=...)."
            )

    def _parts(self, releases, label):
        return [self._convert(r, f"{label} ({r.name})" if len(releases) > 1 else label)
                for r in releases]

    def _refusal(self, after):
        before = self.spent_epsilon()
        return BudgetExceededError(
            f"this fit would take the shared budget to epsilon={after:.6g} at "
            f"delta={self.delta:g}, above its total {self.epsilon:g} (spent so far: "
            f"{before:.6g}; a full-batch fit may still use epsilon="
            f"{self.remaining_epsilon():.6g}). Nothing was released."
        )

    def check(self, releases, label="fit"):
        """Raise :class:`~skdpgd.BudgetExceededError` if charging ``releases`` (a list of
        :class:`skdpgd.accounting.Release`) would overspend; record nothing.

        Estimators call it with a public upper bound on what a fit can spend, before their
        first draw, so that a refusal never depends on a released value.
        """
        self._refuse_if_detached()
        return self._admit(self._parts(list(releases), label), record=False)

    def _admit(self, parts, record):
        """Compose ``parts`` with the ledger; refuse past the total, else record them."""
        with self._lock:
            after = self._composition(extra=parts).epsilon(self.delta)
            if after > self.epsilon:
                raise self._refusal(after)
            if record:
                self._charges.extend(parts)
        return after

    def charge(self, multipliers, sampling_rate=1.0, neighbouring="add_remove", label="fit",
               extra=()):
        """Record a fit's releases, or raise :class:`~skdpgd.BudgetExceededError`.

        Parameters
        ----------
        multipliers : list of Release, or array-like
            The fit's releases (:class:`skdpgd.accounting.Release`, each with its own
            sensitivity per relation), or the noise multipliers of clipped-gradient sums (a
            sensitivity of 2C replace-one and C add/remove-one).
        sampling_rate : float, default=1.0
            Poisson sampling rate of those steps (with plain multipliers).
        neighbouring : str
            The relation the fit calibrated its noise for ('replace'/'replace-one' or
            'add_remove'/'add/remove-one'; with plain multipliers).
        label : str
            Name shown in :attr:`charges`.
        extra : sequence of float
            With plain multipliers: multipliers of further full-batch releases of the same fit
            whose sensitivity is the same under both relations (e.g. a clipped norm sum).

        Returns
        -------
        spent : float
            The budget's epsilon after this charge.
        """
        releases = self._releases(multipliers, sampling_rate, neighbouring, extra)
        self._refuse_if_detached()
        return self._admit(self._parts(releases, label), record=True)

    def charge_rdp(self, rdp, neighbouring, label="selection"):
        """Record a release known by its Renyi-DP curve, or raise
        :class:`~skdpgd.BudgetExceededError` (before anything is released).

        Parameters
        ----------
        rdp : array-like of shape (len(skdpgd.accounting.RDP_DEFAULT_ORDERS),)
            An upper bound of the release's RDP at each of ``DEFAULT_ORDERS`` (e.g. a private
            hyperparameter search, Papernot and Steinke 2022), under ``neighbouring``.
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
        relation = _NAME_OF.get(neighbouring, neighbouring)
        if relation != self.neighbouring:
            raise ValueError(
                f"this RDP curve is stated for {_RELATIONS.get(relation, relation)} neighbours "
                f"and the budget for {_RELATIONS[self.neighbouring]}; an RDP curve cannot be "
                f"converted between relations. Create the budget with "
                f"neighbouring={relation!r}.")
        curve = np.array(rdp, dtype=float).ravel()
        if curve.shape != RDP_DEFAULT_ORDERS.shape or np.any(np.isnan(curve)) or np.any(curve < 0):
            raise ValueError("rdp must hold one value >= 0 per order of DEFAULT_ORDERS.")
        self._refuse_if_detached()
        curve.setflags(write=False)
        with self._lock:
            after = self._composition(rdp_extra=[curve]).epsilon(self.delta)
            if after > self.epsilon:
                before = self.spent_epsilon()
                raise BudgetExceededError(
                    f"this {label} would take the shared budget to epsilon={after:.6g} at "
                    f"delta={self.delta:g}, above its total {self.epsilon:g} (spent so far: "
                    f"{before:.6g}). Nothing was released.")
            self._rdp_charges.append((label, curve))
        return after


def _detached_budget(epsilon, delta, neighbouring, charges, rdp_charges=()):
    """Unpickle a :class:`PrivacyBudget` as a detached snapshot of its ledger."""
    budget = PrivacyBudget(epsilon, delta, neighbouring)
    budget._charges = [Release(label, np.asarray(z, dtype=float), {"replace": 1.0, "add_remove": 1.0},
                               neighbouring, float(q)) for label, z, q in charges]
    budget._rdp_charges = [(label, np.asarray(r, dtype=float)) for label, r in rdp_charges]
    budget._detached = True
    return budget

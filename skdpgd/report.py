"""A readable summary of what a private fit, search or budget released: :func:`privacy_report`.

The report reads only what the object recorded about its releases (noise multipliers,
sampling rates, sensitivities, the relation); it touches no data and releases nothing.

Epsilon at each delta comes from the tightest accountant the package has for the releases
(:func:`skdpgd.accounting.epsilon_profiles`):

* full-batch Gaussian releases only (DPLogisticRegression, DPRidge, full-batch
  DPMLPClassifier, a replace-one budget): Gaussian DP, exact (``mu = sqrt(sum z^-2)``);
* Poisson-subsampled releases (DP-SGD): both the RDP accountant and, when dp-accounting is
  installed, its PLD accountant (pessimistic); each is an upper bound, so the smaller is
  reported, and the table says which gave it;
* a private search (its RDP curve): the RDP accountant.

A fit that chose its mechanism from a release (DP-SGD's prior switch with two branches) is
read as its budget is charged: the releases before the choice, composed with the per-order
maximum of both branches' RDP curves (:func:`skdpgd.accounting.branch_maximum`), not the
releases of the branch that ran, which bound the choice at the fit's own delta only.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from .accounting import RELATIONS, RDPCurve, Relation, Release, epsilon_profiles
from .accounting.envelope import branch_maximum

__all__ = ["PrivacyReport", "privacy_report"]

#: Deltas the table shows besides the object's own.
DEFAULT_DELTAS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-8, 1e-10)


@dataclass
class _Row:
    name: str
    count: int  # number of Gaussian releases in the group (0 for an RDP-curve release)
    sampling_rate: float
    z_min: float
    z_median: float
    z_max: float
    sensitivity: float  # under the report's relation (nan when not a Gaussian release)
    # the noise's standard deviation (multiplier times sensitivity, the same under either
    # relation; nan when not a Gaussian release)
    std_min: float = math.nan
    std_median: float = math.nan
    std_max: float = math.nan
    charge: int | None = None  # a budget's report: the number of the charge it belongs to


@dataclass
class PrivacyReport:
    """What :func:`privacy_report` returns: a table of releases and epsilon at several deltas.

    Attributes
    ----------
    title : str
        What was reported on (the object's class).
    relation : str
        The neighbouring relation every multiplier and epsilon is stated for.
    rows : list
        One entry per release group: name, number of releases, sampling rate, the noise
        multipliers' min / median / max, the L2 sensitivity under ``relation`` and the noise's
        standard deviation min / median / max (a budget's rows are named ``#k label (...)``,
        ``k`` the number of the charge they were recorded in).
    deltas, epsilons : ndarray
        Epsilon (an upper bound) at each delta.
    accountant : str
        The accountant that gave ``epsilons`` (see the module docstring).
    others : dict
        Epsilons of the other accountants tried, by name (for comparison).
    stated : tuple or None
        ``(epsilon_, delta_)`` the object itself reports, when it has them.
    notes : list of str
        Lines about the releases (the noise drawn, a budget's total, a seed to keep private).
    charges : list of dict
        A budget's report: one dict per charge, in order (``number``, ``label``, the names
        of its ``releases`` and ``spent_epsilon``, the budget's epsilon after it); empty
        otherwise.
    noise : list of str
        The noises the releases drew ('gaussian': floating point, 'discrete': secure mode).
    """

    title: str
    relation: str
    rows: list
    deltas: np.ndarray
    epsilons: np.ndarray
    accountant: str
    others: dict = field(default_factory=dict)
    stated: tuple | None = None
    notes: list = field(default_factory=list)
    charges: list = field(default_factory=list)
    noise: list = field(default_factory=list)
    budget: dict | None = None
    _curve: object = field(default=None, repr=False)

    def epsilon(self, delta):
        """Epsilon at ``delta`` by the report's accountant (an upper bound)."""
        return float(self._curve(float(delta)))

    # --- export ------------------------------------------------------------------------
    def to_dict(self):
        """The report as plain data (dicts, lists, strings, ints and floats): what
        ``print(report)`` shows, at full precision.

        A number that is not finite (the epsilon of a fit without noise, a multiplier under a
        relation where the release is free) is written as the string ``'inf'`` or ``'nan'``,
        so the result is strict JSON (``float(value)`` reads it back).

        Returns
        -------
        dict
            ``title``; ``relation`` and ``relation_words`` (the neighbouring relation);
            ``epsilon`` at ``delta`` (the object's own delta; the report's accountant, an upper
            bound); ``stated`` (``{'epsilon', 'delta'}`` the object reports, or None);
            ``budget`` (a budget's ``{'epsilon', 'delta', 'spent_epsilon'}``, or None);
            ``accountant``; ``noise`` (the noises drawn); ``deltas`` and ``epsilons`` (the
            table), ``others`` (the other accountants' epsilons); ``releases`` (per group:
            ``name``, ``count``, ``sampling_rate``, ``noise_multiplier`` and ``noise_std``
            as ``{'min', 'median', 'max'}``, ``sensitivity`` under ``relation``, ``charge``
            and ``rdp_curve``); ``charges`` (a budget's, one per charge); ``notes``.
        """
        delta = self._own_delta()
        out = {
            "title": self.title,
            "relation": str(Relation.of(self.relation).value),
            "relation_words": Relation.of(self.relation).words,
            "delta": delta,
            "epsilon": None if delta is None else self.epsilon(delta),
            "stated": (
                None
                if self.stated is None
                else {"epsilon": self.stated[0], "delta": self.stated[1]}
            ),
            "budget": None if self.budget is None else dict(self.budget),
            "accountant": self.accountant,
            "noise": list(self.noise),
            "deltas": [float(d) for d in self.deltas],
            "epsilons": [float(e) for e in self.epsilons],
            "others": {n: [float(e) for e in v] for n, v in self.others.items()},
            "releases": [
                {
                    "name": r.name,
                    "count": int(r.count),
                    "rdp_curve": r.count == 0,
                    "sampling_rate": r.sampling_rate,
                    "noise_multiplier": {"min": r.z_min, "median": r.z_median, "max": r.z_max},
                    "sensitivity": r.sensitivity,
                    "noise_std": {"min": r.std_min, "median": r.std_median, "max": r.std_max},
                    "charge": r.charge,
                }
                for r in self.rows
            ],
            "charges": [
                {
                    "number": int(c["number"]),
                    "label": str(c["label"]),
                    "releases": [str(n) for n in c["releases"]],
                    "spent_epsilon": c["spent_epsilon"],
                }
                for c in self.charges
            ],
            "notes": [str(n) for n in self.notes],
        }
        return _plain(out)

    def to_json(self, **kwargs):
        """:meth:`to_dict` as a JSON string (``json.dumps`` keyword arguments pass through,
        e.g. ``indent=2``)."""
        import json

        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    def _own_delta(self):
        """The delta the object is stated for: its own, a budget's, else None."""
        if self.stated is not None:
            return float(self.stated[1])
        if self.budget is not None:
            return float(self.budget["delta"])
        return None

    # --- text --------------------------------------------------------------------------
    def _release_lines(self):
        head = (
            "release",
            "count",
            "sampling",
            "multiplier min / median / max",
            "sensitivity",
            "noise std min / median / max",
        )
        lines = [head]
        for r in self.rows:
            if r.count == 0:
                lines.append((r.name, "-", "-", "(an RDP curve)", "-", "-"))
                continue
            lines.append(
                (
                    r.name,
                    str(r.count),
                    f"{r.sampling_rate:.4g}",
                    f"{r.z_min:.4g} / {r.z_median:.4g} / {r.z_max:.4g}",
                    f"{r.sensitivity:.4g}" if math.isfinite(r.sensitivity) else "-",
                    (
                        f"{r.std_min:.4g} / {r.std_median:.4g} / {r.std_max:.4g}"
                        if math.isfinite(r.std_max)
                        else "-"
                    ),
                )
            )
        return lines

    def _charge_lines(self):
        return [
            f"  #{c['number']} {c['label']}: budget's epsilon after it {c['spent_epsilon']:.4g}"
            for c in self.charges
        ]

    def __str__(self):
        out = [
            f"Privacy report: {self.title}",
            f"neighbouring datasets: {Relation.of(self.relation).words}",
        ]
        if self.stated is not None:
            out.append(
                f"stated guarantee: epsilon = {self.stated[0]:.4g} at delta = {self.stated[1]:.3g}"
            )
        out += list(self.notes)
        if self.charges:
            out.append("charges, in order:")
            out += self._charge_lines()
        out.append("")
        lines = self._release_lines()
        widths = [max(len(line[k]) for line in lines) for k in range(len(lines[0]))]
        for i, line in enumerate(lines):
            out.append("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())
            if i == 0:
                out.append("  ".join("-" * w for w in widths))
        out.append("")
        names = [self.accountant] + list(self.others)
        out.append("delta       " + "  ".join(f"{'epsilon (' + n + ')':>18}" for n in names))
        for k, d in enumerate(self.deltas):
            vals = [self.epsilons[k]] + [self.others[n][k] for n in self.others]
            out.append(f"{d:<10.3g}  " + "  ".join(f"{v:>18.4g}" for v in vals))
        out.append(
            f"accountant: {self.accountant} (the tightest available here; every value "
            "is an upper bound)"
        )
        return "\n".join(out)

    def __repr__(self):
        return str(self)

    def _repr_html_(self):
        import html

        rel = Relation.of(self.relation).words
        parts = [
            f"<h4>Privacy report: {html.escape(self.title)}</h4>",
            f"<p>neighbouring datasets: {html.escape(rel)}",
        ]
        if self.stated is not None:
            parts.append(
                f"; stated guarantee: &epsilon; = {self.stated[0]:.4g} at "
                f"&delta; = {self.stated[1]:.3g}"
            )
        parts += [f"<br>{html.escape(n)}" for n in self.notes]
        if self.charges:
            parts.append("<br>charges, in order:")
            parts += [f"<br>{html.escape(n.strip())}" for n in self._charge_lines()]
        parts.append("</p><table><tr>")
        lines = self._release_lines()
        parts += [f"<th>{html.escape(c)}</th>" for c in lines[0]]
        parts.append("</tr>")
        for line in lines[1:]:
            parts.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in line) + "</tr>")
        parts.append("</table><table><tr><th>&delta;</th>")
        names = [self.accountant] + list(self.others)
        parts += [f"<th>&epsilon; ({html.escape(n)})</th>" for n in names]
        parts.append("</tr>")
        for k, d in enumerate(self.deltas):
            vals = [self.epsilons[k]] + [self.others[n][k] for n in self.others]
            parts.append(
                f"<tr><td>{d:.3g}</td>" + "".join(f"<td>{v:.4g}</td>" for v in vals) + "</tr>"
            )
        parts.append(f"</table><p>accountant: {html.escape(self.accountant)}</p>")
        return "".join(parts)

    # --- plot --------------------------------------------------------------------------
    def plot(self, ax=None, deltas=None):
        """Plot the privacy profile epsilon(delta) on a log delta axis (needs matplotlib);
        returns the axes."""
        if ax is None:
            try:
                import matplotlib.pyplot as plt
            except ImportError:
                raise ImportError(
                    "PrivacyReport.plot needs matplotlib, which is not installed: pip install "
                    "matplotlib (or read the profile as numbers with report.epsilon(delta)).",
                    name="matplotlib",
                ) from None

            _, ax = plt.subplots(figsize=(5, 3.5))
        d = np.geomspace(1e-12, 1e-1, 45) if deltas is None else np.asarray(deltas, float)
        e = np.array([self.epsilon(x) for x in d])
        ax.plot(d, e, label=self.accountant)
        if self.stated is not None:
            ax.plot([self.stated[1]], [self.stated[0]], "o", label="stated (epsilon_, delta_)")
        ax.set_xscale("log")
        ax.set_xlabel("delta")
        ax.set_ylabel("epsilon")
        ax.set_title(f"privacy profile: {self.title}")
        ax.legend()
        return ax


# ---------------------------------------------------------------------------------------------
def _collect(obj):
    """``(title, relation, items, stated, notes)``: items are Release objects, ``(label, z, q)``
    triples already under ``relation``, or objects with an ``rdp(orders)`` curve."""
    from .budget import PrivacyBudget

    title = type(obj).__name__
    if isinstance(obj, PrivacyBudget):
        items = []
        for entry in obj.entries:  # each release named after its charge: #k label (release)
            tag = f"#{entry['number']} "
            items += [r.renamed(tag + r.name) for r in entry["releases"]]
            items += [RDPCurve(tag + n, rdp, obj.neighbouring) for n, rdp in entry["curves"]]
        notes = [
            f"budget: epsilon = {obj.epsilon:.4g} at delta = {obj.delta:.3g}; spent so far "
            f"by the budget's own accountant: {obj.spent_epsilon():.4g}"
        ]
        return title, obj.neighbouring, items, None, notes
    releases = getattr(obj, "releases_", None)
    if releases is None and _is_composite(obj):  # its fitted private parts, at any depth
        releases = _nested_releases(obj, set()) or None
    if releases is None:
        raise TypeError(
            f"privacy_report needs a fitted private estimator, search, pipeline or "
            f"a PrivacyBudget; {title} has no releases_ (is it fitted?)."
        )
    relations = [r.relation for r in releases if getattr(r, "relation", None) in RELATIONS]
    relation = relations[0] if relations else "replace"
    if any(r.sampling_rate < 1.0 for r in releases if isinstance(r, Release)):
        relation = "add_remove"  # Poisson-subsampled releases are accounted there only
    eps, delta = getattr(obj, "epsilon_", None), getattr(obj, "delta_", None)
    stated = (float(eps), float(delta)) if eps is not None and delta is not None else None
    items, notes = _with_switch(obj, list(releases))
    return title, relation, items, stated, notes


def _is_budget(obj):
    from .budget import PrivacyBudget

    return isinstance(obj, PrivacyBudget)


def _switch_of(obj):
    """The ``prior_switch_`` of ``obj`` (or of a private pipeline's final step) when it chose
    between two branches from its released counts, else None."""
    switch = getattr(obj, "prior_switch_", None)
    if switch is None and hasattr(obj, "step_epsilons_") and getattr(obj, "steps", None):
        switch = getattr(obj.steps[-1][1], "prior_switch_", None)
    if isinstance(switch, dict) and len(switch.get("releases") or {}) > 1:
        return switch
    return None


def _with_switch(obj, releases):
    """``(items, notes)``: ``releases`` as recorded, or, for a fit that chose between two
    branches from its released counts, the releases before the choice and the per-order
    maximum of both branches' RDP curves in place of the branch that ran (the recorded
    releases end with it)."""
    switch = _switch_of(obj)
    if switch is None:
        return releases, []
    ran = len(switch["releases"][switch["branch"]])
    curve = branch_maximum(list(switch["releases"].values()))
    note = (
        "prior switch: the branch was chosen from the released counts, so epsilon is that of "
        "the counts composed with the larger of both branches' RDP curves at each order, not "
        f"of the releases of the branch that ran ({switch['branch']!r}), at every delta"
    )
    return releases[: len(releases) - ran] + [curve], [note]


def _is_composite(obj):
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion, Pipeline

    return isinstance(obj, (Pipeline, ColumnTransformer, FeatureUnion))


def _nested_releases(obj, seen):
    """The releases of every fitted private object inside a scikit-learn ``Pipeline``,
    ``ColumnTransformer`` or ``FeatureUnion``, at any depth, each object once (``seen``: ids
    of the objects already read).

    An object that records its own ``releases_`` (a DP step, a ``PrivatePipeline``, a
    private search) is read as it is: its record covers its parts. A ``ColumnTransformer`` is
    read through its fitted parts (``transformers_``), never its templates (``transformers``),
    which it cloned before fitting and which may hold the releases of some other fit."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion, Pipeline

    if obj is None or isinstance(obj, str) or id(obj) in seen:
        return []
    seen.add(id(obj))
    own = getattr(obj, "releases_", None)
    if own is not None:
        return _with_switch(obj, list(own))[0]
    if isinstance(obj, Pipeline):
        parts = [step for _, step in obj.steps]
    elif isinstance(obj, ColumnTransformer):
        parts = [t for _, t, _ in getattr(obj, "transformers_", [])]  # unfitted: nothing
    elif isinstance(obj, FeatureUnion):
        parts = [t for _, t in obj.transformer_list]  # fitted in place
    else:
        return []
    out = []
    for part in parts:
        out += _nested_releases(part, seen)
    return out


def _normalise(items, relation):
    """``(rows, events)``: a row per item, and the events to compose, every release under
    ``relation`` (``(label, z, q)`` triples from a budget's ledger already are)."""
    rows, events = [], []
    for it in items:
        if isinstance(it, Release):
            r = it.under(relation)
            sens = float(it.sensitivity[relation])
            with np.errstate(invalid="ignore"):  # nan: free under the ledger's relation
                std = it.noise_std  # in the release's own units: the same under either relation
        elif isinstance(it, tuple):
            name, z, q = it
            r = Release(name, z, {"replace": 1.0, "add_remove": 1.0}, relation, q)
            sens = math.nan
            std = np.full(r.multipliers.shape, math.nan)
        else:  # a release known by its RDP curve (a private search)
            events.append(it)
            name = getattr(it, "name", type(it).__name__)
            rows.append(
                _Row(
                    name,
                    0,
                    math.nan,
                    math.nan,
                    math.nan,
                    math.nan,
                    math.nan,
                    charge=_charge_number(name),
                )  # fmt: skip
            )
            continue
        events.append(r)
        z = r.multipliers
        rows.append(
            _Row(
                r.name,
                int(z.size),
                r.sampling_rate,
                *_spread(z),
                sens,
                *_spread(std),
                charge=_charge_number(r.name),
            )
        )
    return rows, events


def _spread(v):
    """min, median and max of ``v`` (nan for none)."""
    if not v.size:
        return math.nan, math.nan, math.nan
    return float(np.min(v)), float(np.median(v)), float(np.max(v))


def _charge_number(name):
    """``k`` of a budget's row named ``#k ...``, else None."""
    head = str(name).split(" ", 1)[0]
    return int(head[1:]) if head.startswith("#") and head[1:].isdigit() else None


def _plain(v):
    """``v`` with numpy scalars as Python numbers and non-finite floats as strings."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        v = float(v)
        return v if math.isfinite(v) else str(v)
    return v


def _noise_notes(items):
    """One line naming the noise the releases drew: secure mode's exact discrete Gaussian,
    the floating-point Gaussian of plain mode, or both (a budget charged by fits of either)."""
    kinds = {getattr(r, "noise", None) for r in items if isinstance(r, Release)}
    kinds.discard(None)
    if not kinds:
        return []
    if kinds == {"discrete"}:
        return [
            "noise: exact discrete Gaussian on a lattice, from the operating system's "
            "cryptographic source (secure mode); accounted in zCDP / Renyi DP"
        ]
    if kinds == {"gaussian"}:
        return ["noise: floating-point Gaussian (plain mode; see the security model)"]
    return [
        "noise: both floating-point Gaussian (plain mode) and exact discrete Gaussian (secure "
        "mode) releases; all accounted in zCDP / Renyi DP where a discrete one is composed"
    ]


def _seed_notes(obj):
    """A note for every parameter of ``obj`` (nested ones included) that fixes the noise: an
    integer seed, or a generator whose state is stored with the object. Whoever holds such a
    model and the other rows can refit a neighbouring data set with the same noise, so the
    noise no longer hides the row."""
    get = getattr(obj, "get_params", None)
    if get is None:
        return []
    try:
        params = get(deep=True)
    except Exception:  # an object whose parameters cannot be read says nothing here
        return []
    notes = []
    for key in sorted(params):
        if key != "random_state" and not key.endswith("__random_state"):
            continue
        value = params[key]
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            shown = f"{key}={int(value)}"
        elif isinstance(value, (np.random.RandomState, np.random.Generator)):
            shown = f"{key}={type(value).__name__}(...)"
        else:
            continue
        notes.append(
            f"{shown}: the noise is reproducible from this seed: do not publish it "
            "with the model (refit with random_state=None to publish)."
        )
    return notes


def privacy_report(obj, deltas=None, plot=False, ax=None):
    """Summarise what ``obj`` released and its epsilon at several deltas.

    Parameters
    ----------
    obj : fitted estimator, PrivateRandomSearchCV, pipeline or PrivacyBudget
        Anything exposing ``releases_`` (with ``epsilon_`` and ``delta_`` for the stated
        guarantee), a :class:`~skdpgd.PrivacyBudget` (its charges so far), or a fitted
        scikit-learn ``Pipeline``, ``ColumnTransformer`` or ``FeatureUnion``: the releases of
        every private step inside it, at any depth (nested pipelines, the fitted parts of a
        column transformer, the parts of a feature union), each step counted once and
        composed together. A ``PrivatePipeline`` found inside is read from its own
        ``releases_``, which cover its steps.
    deltas : sequence of float, optional
        Deltas for the table (default: the object's ``delta_`` and 1e-3 ... 1e-10).
    plot : bool, default=False
        Also plot the privacy profile epsilon(delta) (needs matplotlib), on ``ax`` if given.
    ax : matplotlib axes, optional
        Axes for the plot (implies ``plot=True``).

    Returns
    -------
    PrivacyReport
        Prints as a table (``print(report)``), renders as HTML in notebooks; ``.epsilon(d)``
        gives epsilon at any delta and ``.plot()`` draws the profile.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd import DPLogisticRegression, privacy_report
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)) / 4
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1],
    ...                            random_state=0).fit(X, y)
    >>> report = privacy_report(clf)
    >>> round(report.epsilon(clf.delta_), 6) <= 1.0
    True
    """
    title, relation, items, stated, notes = _collect(obj)
    notes = list(notes) + _noise_notes(items) + _seed_notes(obj)
    charges, budget = [], None
    if _is_budget(obj):
        charges = [
            {
                "number": e["number"],
                "label": e["label"],
                "releases": [f"#{e['number']} {r.name}" for r in e["releases"]]
                + [f"#{e['number']} {n}" for n, _ in e["curves"]],
                "spent_epsilon": e["spent_epsilon"],
            }
            for e in obj.entries
        ]
        budget = {"epsilon": obj.epsilon, "delta": obj.delta, "spent_epsilon": obj.spent_epsilon()}
    kinds = sorted({r.noise for r in items if isinstance(r, Release)})
    rows, events = _normalise(items, relation)
    accountants = epsilon_profiles(events)
    if deltas is None:
        own = stated[1] if stated is not None else getattr(obj, "delta", None)
        ds = set(DEFAULT_DELTAS) | ({float(own)} if own is not None else set())
        deltas = sorted(ds, reverse=True)
    deltas = np.asarray(deltas, dtype=float).ravel()
    if deltas.size == 0 or np.any(~(deltas > 0)) or np.any(~(deltas < 1)):
        raise ValueError("deltas must lie in (0, 1).")
    table = {name: np.array([fn(d) for d in deltas]) for name, fn in accountants.items()}
    best = min(table, key=lambda n: float(np.sum(np.minimum(table[n], 1e300))))
    others = {n: v for n, v in table.items() if n != best}
    report = PrivacyReport(
        title=title,
        relation=relation,
        rows=rows,
        deltas=deltas,
        epsilons=table[best],
        accountant=best,
        others=others,
        stated=stated,
        notes=notes,
        charges=charges,
        noise=kinds,
        budget=budget,
        _curve=accountants[best],
    )
    if plot or ax is not None:
        report.plot(ax=ax)
    return report

"""What a fit released, as accountants read it: one immutable tree of events.

* :class:`Release` (a leaf): a group of Gaussian releases, each with its L2 sensitivity under
  every neighbouring :class:`Relation`, and the Poisson sampling rate they ran at (1: full
  batch). :class:`GaussianSteps` is a release known by its multipliers alone.
* :class:`PoissonSampled` ``(rate, event)``: ``event`` run on a Poisson sample of the rows.
* :class:`Composed` ``(events)``: several events, one after the other (a list of events
  means the same).
* :class:`Selection` (a leaf): a release known by an upper bound of its Renyi-DP curve, such
  as a private selection (:class:`skdpgd.accounting.RepeatedSelection`).

Events describe; they hold no arithmetic beyond converting a multiplier between relations.
:func:`skdpgd.accounting.compose` reads a tree (exact GDP where it can, RDP or PLD otherwise),
and :meth:`skdpgd.PrivacyBudget.charge` records one. Also here: the rounding margins that keep
a computed sum within its stated sensitivity.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from .._config import secure_noise

__all__ = [
    "Relation",
    "RELATIONS",
    "NOISES",
    "Event",
    "Release",
    "GaussianSteps",
    "PoissonSampled",
    "Composed",
    "Selection",
    "flatten",
    "gaussian_runs",
    "COUNT_BOUND_SIGMAS",
    "rounding_gamma",
    "sum_rounding_margin",
    "with_margin",
]


class Relation(str, enum.Enum):
    """The neighbouring relations a guarantee can be stated for. A ``str`` enum: a member
    equals (and hashes as) its value, so ``'replace'`` and ``Relation.REPLACE`` are
    interchangeable as parameters and dictionary keys."""

    REPLACE = "replace"
    ADD_REMOVE = "add_remove"

    def __str__(self):
        return self.value

    @property
    def words(self):
        """How the documentation and fitted attributes name it: 'replace-one',
        'add/remove-one'."""
        return "replace-one" if self is Relation.REPLACE else "add/remove-one"

    @classmethod
    def of(cls, value):
        """The relation named by ``value``: a member, its value or its words."""
        for r in cls:
            if value == r.value or value == r.words:
                return r
        raise ValueError(
            f"unknown neighbouring relation {value!r}; expected one of {[r.value for r in cls]}."
        )


#: The neighbouring relations a guarantee can be stated for (their values).
RELATIONS = tuple(r.value for r in Relation)

#: The noises a release can be drawn with: floating-point Gaussian, or the exact discrete
#: Gaussian of secure mode.
NOISES = ("gaussian", "discrete")


class Event:
    """Base class of the event tree (see the module docstring)."""

    __slots__ = ()


def _frozen_multipliers(multipliers):
    """Noise multipliers as a read-only 1-D float array (each >= 0; 0 is no noise)."""
    z = np.array(multipliers, dtype=float).ravel()
    if np.any(np.isnan(z)) or np.any(z < 0):
        raise ValueError("noise multipliers must be >= 0.")
    z.setflags(write=False)
    return z


@dataclass(frozen=True, eq=False)
class Release(Event):
    """A group of Gaussian releases made by one fit, as accountants and budgets see them.

    Each release adds ``N(0, (z_t * sensitivity[relation])^2 I)`` to a quantity whose L2
    sensitivity between neighbouring datasets is ``sensitivity[r]`` under relation ``r``.
    The same noise is a different multiplier under the other relation, and the rule depends
    on the quantity: a clipped gradient sum moves by ``2C`` (replace-one) or ``C``
    (add/remove-one), a clipped norm sum by ``R`` under both, a count by 0 (N is public
    under replace-one) or 1. So each release carries its own sensitivities.

    Parameters
    ----------
    name : str
        What was released (shown in budgets and fitted attributes).
    multipliers : array of shape (T,)
        Noise standard deviation of each release divided by ``sensitivity[relation]``.
    sensitivity : dict
        ``{'replace': float, 'add_remove': float}``, the L2 sensitivity of one released
        quantity under each relation (in the units of the noise).
    relation : {'replace', 'add_remove'}
        The relation the fit calibrated its noise for.
    sampling_rate : float, default=1.0
        Poisson sampling rate of each release (1: full batch).
    noise : {'gaussian', 'discrete'} or None, default=None
        The noise drawn: continuous Gaussian (floating point), or the exact discrete Gaussian
        of secure mode (:func:`skdpgd.config_context`), on a lattice fine enough that its
        rounding is part of the sensitivity. None: 'discrete' when the release is described
        while secure mode is on, so every release a secure fit makes is read as discrete.
        Accountants read a discrete release by its Renyi-DP curve: Canonne, Kamath and
        Steinke (2020, Theorem 14) prove the multivariate discrete Gaussian
        ``Delta^2 / (2 sigma^2)``-zCDP, the curve of the continuous one, but not its
        Gaussian-DP trade-off, so it is never composed in exact Gaussian DP.
    """

    name: str
    multipliers: np.ndarray
    sensitivity: dict
    relation: str
    sampling_rate: float = 1.0
    noise: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "multipliers", _frozen_multipliers(self.multipliers))
        if self.relation not in RELATIONS or set(self.sensitivity) != set(RELATIONS):
            raise ValueError(
                f"a release needs a relation and a sensitivity for each of {RELATIONS}."
            )
        object.__setattr__(self, "relation", Relation(self.relation))
        if any(not v >= 0 for v in self.sensitivity.values()):
            raise ValueError("sensitivities must be >= 0.")
        q = float(self.sampling_rate)
        if not 0.0 < q <= 1.0:
            raise ValueError(f"sampling_rate must be in (0, 1], got {q!r}.")
        object.__setattr__(self, "sampling_rate", q)
        if self.noise is None:
            secure = secure_noise()
            object.__setattr__(self, "noise", "discrete" if secure else "gaussian")
        if self.noise not in NOISES:
            raise ValueError(f"noise must be one of {NOISES}, got {self.noise!r}.")

    def __setstate__(self, state):
        # pickle and skops restore the fields, checked (and frozen) as at construction
        fields = set(self.__dataclass_fields__)
        if not set(state) <= fields:
            raise ValueError(f"a Release has the fields {sorted(fields)}, got {sorted(state)}.")
        for name, value in state.items():
            object.__setattr__(self, name, value)
        self.__post_init__()

    @property
    def discrete(self):
        """Whether the noise is the exact discrete Gaussian of secure mode."""
        return self.noise == "discrete"

    def with_noise(self, noise):
        """The same release drawn with ``noise`` ('gaussian' or 'discrete')."""
        return Release(
            self.name,
            self.multipliers,
            dict(self.sensitivity),
            self.relation,
            self.sampling_rate,
            noise,
        )

    # the accountants read a release as a run of Gaussian steps: multipliers and a rate
    @property
    def noise_multipliers(self):
        """The multipliers (under the release's own relation), as accountants read them."""
        return self.multipliers

    @property
    def n_steps(self):
        return int(self.multipliers.shape[0])

    def calibrated(self, multipliers, sensitivity=None):
        """The same release with the accountant's ``multipliers`` (its shape scaled to the
        budget) and, if given, a ``sensitivity`` raised by a rounding margin."""
        return Release(
            self.name,
            multipliers,
            dict(self.sensitivity if sensitivity is None else sensitivity),
            self.relation,
            self.sampling_rate,
            self.noise,
        )

    def multipliers_under(self, relation):
        """The multipliers of the same noise under ``relation``: ``z * s_own / s_relation``.

        A sensitivity of 0 under ``relation`` makes the release free there (multiplier inf).
        The ratio is rounded down by two ulps, so a conversion never under-charges.
        """
        own = float(self.sensitivity[self.relation])
        other = float(self.sensitivity[relation])
        if relation == self.relation:
            return self.multipliers.copy()
        if other == 0.0:
            return np.full(self.multipliers.shape, np.inf)
        return self.multipliers * (own / other) * (1.0 - 2.0 * np.finfo(float).eps)

    @property
    def own_sensitivity(self):
        """The L2 sensitivity under the release's own relation: the units its noise is drawn
        in (secure mode sizes its lattice by it)."""
        return float(self.sensitivity[self.relation])

    @property
    def noise_std(self):
        """Standard deviation of the noise of each release."""
        return self.multipliers * self.own_sensitivity

    def under(self, relation, name=None):
        """The same noise stated under ``relation`` (:meth:`multipliers_under`), named
        ``name`` (default: its own)."""
        relation = Relation.of(relation)
        return Release(
            self.name if name is None else name,
            self.multipliers_under(relation),
            dict(self.sensitivity),
            relation,
            self.sampling_rate,
            self.noise,
        )

    def renamed(self, name):
        """The same release under another name."""
        return Release(
            name,
            self.multipliers,
            dict(self.sensitivity),
            self.relation,
            self.sampling_rate,
            self.noise,
        )


#: Sensitivities of a release described by its multipliers alone (:class:`GaussianSteps`).
_UNIT_SENSITIVITY = {"replace": 1.0, "add_remove": 1.0}


class GaussianSteps(Release):
    """A release described by its noise multipliers and sampling rate only: what an
    accountant reads (epsilon for a delta, delta for an epsilon). The same type as every
    other :class:`Release`, with a unit sensitivity under add/remove-one.

    Parameters
    ----------
    noise_multipliers : array of shape (T,)
        ``z_t``: the noise standard deviation of step t divided by the L2 sensitivity of
        the released sum. 0 means no noise (infinite privacy loss).
    sampling_rate : float, default=1.0
        Poisson sampling rate q of each step; 1.0 is full batch.
    """

    def __init__(self, noise_multipliers, sampling_rate=1.0, noise=None):
        super().__init__(
            "steps",
            noise_multipliers,
            dict(_UNIT_SENSITIVITY),
            "add_remove",
            sampling_rate,
            noise,
        )


@dataclass(frozen=True, eq=False)
class PoissonSampled(Event):
    """``event`` run on a Poisson sample of the rows: each row is kept independently with
    probability ``rate``. Sampling twice keeps a row with the product of the rates, so a
    release inside reads as one at ``rate`` times its own sampling rate. Stated for
    add/remove-one neighbours (where subsampling amplification holds); a selection inside is
    not supported (its curve is not known under sampling)."""

    rate: float
    event: Event

    def __post_init__(self):
        q = float(self.rate)
        if not 0.0 < q <= 1.0:
            raise ValueError(f"a sampling rate must be in (0, 1], got {q!r}.")
        object.__setattr__(self, "rate", q)
        if not isinstance(self.event, Event):
            raise TypeError(f"PoissonSampled wraps an event, got {type(self.event).__name__}.")


@dataclass(frozen=True, eq=False)
class Composed(Event):
    """Several events one after the other (adaptively: each may depend on the outputs of the
    earlier ones)."""

    events: tuple

    def __post_init__(self):
        events = tuple(self.events)
        for e in events:
            if not isinstance(e, Event):
                raise TypeError(f"Composed holds events, got {type(e).__name__}.")
        object.__setattr__(self, "events", events)


class Selection(Event):
    """A release known by an upper bound of its Renyi-DP curve (e.g. a private selection).

    Subclasses define ``name``, ``relation`` (the relation the curve is stated for: a curve
    carries no sensitivity from which to convert it) and ``rdp(orders)``.
    """

    __slots__ = ()

    def rdp(self, orders):  # pragma: no cover - the subclasses define it
        raise NotImplementedError


def flatten(events):
    """``(releases, selections)``: the leaves of an event, or of an iterable of events
    (composed), in order; a release inside :class:`PoissonSampled` carries the product of the
    rates."""
    releases, selections = [], []

    def walk(e, rate):
        if isinstance(e, Release):
            releases.append(
                e
                if rate == 1.0
                else Release(
                    e.name,
                    e.multipliers,
                    dict(e.sensitivity),
                    e.relation,
                    e.sampling_rate * rate,
                    e.noise,
                )
            )
        elif isinstance(e, PoissonSampled):
            walk(e.event, rate * e.rate)
        elif isinstance(e, Composed):
            for x in e.events:
                walk(x, rate)
        elif isinstance(e, Selection):
            if rate != 1.0:
                raise ValueError("a selection run on a Poisson sample is not supported.")
            selections.append(e)
        else:
            raise TypeError(f"expected an event of skdpgd.accounting, got {type(e).__name__}.")

    if isinstance(events, Event):
        walk(events, 1.0)
    else:
        for e in events:
            walk(e, 1.0)
    return releases, selections


def gaussian_runs(steps):
    """The releases an accountant of Gaussian steps reads from ``steps``: one event, or an
    iterable of events (composed). A selection (known by its RDP curve only) is refused: it
    is composed by :func:`skdpgd.accounting.compose`."""
    releases, selections = flatten(steps)
    if selections:
        raise TypeError(
            "an accountant of Gaussian steps reads releases only; compose a "
            "selection with skdpgd.accounting.compose."
        )
    return releases


#: Standard deviations a Gaussian count lands below the true count with probability
#: ``Phi(-40) < 1e-300`` (below the smallest double): the public row bound of
#: :func:`sum_rounding_margin` under add/remove-one with a noisy count is ``N~ + 40 z_c``.
COUNT_BOUND_SIGMAS = 40.0


#: The unit roundoff of float64 (round to nearest): ``2^-53``.
UNIT_ROUNDOFF = 2.0**-53


def rounding_gamma(k):
    """Higham's ``gamma_k = k u / (1 - k u)`` (``u = 2^-53``): a product of ``k`` factors
    ``(1 + delta_i)^(+-1)`` with ``|delta_i| <= u`` lies within ``1 +- gamma_k`` (*Accuracy and
    Stability of Numerical Algorithms*, Lemma 3.1), and a float64 sum of ``k + 1`` terms in any
    order is within ``gamma_k sum_i |t_i|`` of the exact one (section 4.2)."""
    k = float(k)
    if not k * UNIT_ROUNDOFF < 0.5:
        raise ValueError("too many rounded operations for the float64 error bound.")
    return k * UNIT_ROUNDOFF / (1.0 - k * UNIT_ROUNDOFF)


def sum_rounding_margin(n_rows, dim):
    """Relative margin that covers floating-point error in a released sum of clipped terms.

    A sum of ``n`` terms, each of L2 norm ``<= C`` in exact arithmetic, is computed in float64
    in any order (the kernels use fastmath and threads, which reassociate): each coordinate's
    error is at most ``gamma_{n-1} sum_i |t_ij|`` (Higham, *Accuracy and Stability of
    Numerical Algorithms*, 4.2, valid for every summation order) with
    ``gamma_k = k u / (1 - k u)``, ``u = 2^-53``, so the L2 error is at most
    ``gamma_{n-1} sum_i ||t_i|| <= gamma_n n C``. Each term itself is computed with a relative
    error below ``gamma_{dim + 8}`` (a norm over ``dim`` coordinates, a clip factor, a
    product), which raises its norm to at most ``C (1 + gamma_{dim+8})``. Two neighbouring
    sums then differ by at most ``Delta + 2 gamma_n n C (1 + ...)``, and since
    ``Delta >= C`` the noise is calibrated to ``Delta (1 + margin)`` with::

        margin = 2 n gamma_{n+1} (1 + g_d) + 2 g_d,   g_d = gamma_{dim + 8}.

    This is the worst case, not the typical error (about ``sqrt(n) u`` relative): at
    ``n = 1e5`` the margin is 2.2e-6, at 1e6 2.2e-4, at 1e7 about 0.022. ``n_rows`` must be a
    public upper bound on the rows summed.
    """
    n = float(n_rows) + 1.0
    if not n * UNIT_ROUNDOFF < 0.5:
        raise ValueError("too many rows for the float64 rounding margin.")
    g_d = rounding_gamma(float(dim) + 8.0)
    return 2.0 * n * rounding_gamma(n) * (1.0 + g_d) + 2.0 * g_d


def with_margin(sensitivity, margin):
    """A sensitivity dict scaled by ``1 + margin`` (rounded up)."""
    factor = (1.0 + margin) * (1.0 + 4.0 * np.finfo(float).eps)
    return {k: float(v) * factor for k, v in sensitivity.items()}

"""The one road of a private fit, shared by every estimator and private transformer.

    public relation -> refusal on public values -> generator -> set-up releases (row count,
    class counts, then the road's own) -> plan (public constants, release shapes) ->
    calibrate (accounting) -> charge the budget -> run (noise drawn in the kernels) ->
    what was spent (accounting)

A :class:`Road` supplies what differs between the ways a fit computes: the full-batch
mechanisms (:class:`skdpgd._full_batch.road.FullBatchRoad`), Poisson-sampled DP-SGD
(:class:`skdpgd._minibatch.road.MinibatchRoad`), the torch network
(:class:`skdpgd._network.road.TorchRoad`) and the private scaler's two sums
(:class:`skdpgd.preprocessing.DPStandardScaler`). :func:`private_fit` does the rest once:
every epsilon, mu and delta it needs comes from :mod:`skdpgd.accounting`, every set-up
release from :mod:`skdpgd._core.setup`.

:func:`private_fit` never sees an estimator: it takes the privacy parameters as a
:class:`PrivacySpec` (read from an estimator by :meth:`PrivacySpec.of`, the one place that
does), the data side as a :class:`FitRows`, and a road built with its own parameters already
resolved.
"""

from __future__ import annotations

import dataclasses
import math

from .._config import resolve_budget
from .fitted import FitResult
from .noise import fit_generator, noise_name
from .progress import Progress
from .setup import (
    SetupCharges,
    budget_admits_upper_bound,
    resolve_class_weight,
    resolve_delta,
    resolve_n_samples,
    resolve_relation,
    warn_if_large_delta,
)
from ..accounting import (
    COUNT_BOUND_SIGMAS,
    RELATIONS,
    GaussianDPAccountant,
    Relation,
    calibrate,
    gdp_mu,
    gdp_mu_of_releases,
    smallest_epsilon_with_room,
    spent_epsilon,
)


@dataclasses.dataclass(frozen=True)
class PrivacySpec:
    """The privacy parameters of one fit, read once and checked: all that
    :func:`private_fit` knows of the estimator.

    ``label`` (the name in messages and budget entries), ``epsilon`` (a float; ``inf``: no
    noise), ``delta`` (the parameter: None for the default ``min(1e-5, 1/N^2)``, else a
    float), ``neighbouring`` (``'auto'``, ``'replace'`` or ``'add_remove'``; a road may fix
    its own, as DP-SGD does), ``budget`` (a :class:`~skdpgd.budget.PrivacyBudget` or None),
    ``random_state`` (the parameter), ``n_samples`` (the public row count, or None),
    ``class_weight`` (the parameter, or None) and ``verbose``.
    """

    label: str
    epsilon: float
    delta: float | None = None
    neighbouring: str = "auto"
    budget: object = None
    random_state: object = None
    n_samples: float | None = None
    class_weight: object = None
    verbose: int = 0

    def __post_init__(self):
        epsilon = float(self.epsilon)
        if not epsilon > 0:
            raise ValueError(f"epsilon must be positive (inf: no noise), got {self.epsilon!r}.")
        object.__setattr__(self, "epsilon", epsilon)
        if self.delta is not None:
            delta = float(self.delta)
            if not 0.0 < delta < 1.0:
                raise ValueError(f"delta must be in (0, 1) or None, got {self.delta!r}.")
            object.__setattr__(self, "delta", delta)
        if self.neighbouring != "auto" and self.neighbouring not in RELATIONS:
            raise ValueError(
                f"neighbouring must be 'auto' or one of {sorted(RELATIONS)}, got "
                f"{self.neighbouring!r}."
            )
        if self.n_samples is not None and not float(self.n_samples) > 0:
            raise ValueError(f"n_samples must be positive or None, got {self.n_samples!r}.")

    @classmethod
    def of(cls, est, label=None):
        """The privacy parameters of an estimator (its own, already validated by its
        ``fit``); a parameter the estimator does not have takes the default above. The only
        place that reads them from an estimator. A ``budget`` of None is the default budget
        of :func:`skdpgd.config_context` (:func:`skdpgd._config.resolve_budget`), if any."""
        return cls(
            label=label or type(est).__name__,
            epsilon=est.epsilon,
            delta=est.delta,
            neighbouring=getattr(est, "neighbouring", "auto"),
            budget=resolve_budget(getattr(est, "budget", None)),
            random_state=getattr(est, "random_state", None),
            n_samples=getattr(est, "n_samples", None),
            class_weight=getattr(est, "class_weight", None),
            verbose=getattr(est, "verbose", 0),
        )


@dataclasses.dataclass(frozen=True)
class FitRows:
    """The data side of one fit: ``n_rows`` (the number of training rows), ``sample_weight``
    (the checked weights in [0, 1], or None), ``classes`` / ``y_index`` (the public class
    list and each row's class index, for ``class_weight``). Not the validated arrays
    (:class:`skdpgd._core.data.FitData`): the road holds the rows it computes with."""

    n_rows: int
    sample_weight: object = None
    classes: object = None
    y_index: object = None


class Fit:
    """What the road has settled so far for one fit: public values and released ones only.

    Attributes: ``spec`` (the :class:`PrivacySpec`), ``label``, ``epsilon``, ``relation``,
    ``gen`` (the fit's one generator), ``charges``
    (:class:`~skdpgd._core.setup.SetupCharges`: the set-up releases), ``n_rows`` (the true count:
    used only where it is public or bounds a rounding margin under replace-one),
    ``n_public``, ``z_count``, ``delta``, ``mu_total`` (the GDP mu of the whole budget),
    ``sample_weight``, ``weight_scale``, ``notes`` (lines for ``verbose``), ``progress``.
    """

    def __init__(self, spec, n_rows):
        self.spec = spec
        self.label = spec.label
        self.n_rows = n_rows
        self.epsilon = spec.epsilon
        self.notes = []
        self.progress = None

    def rows_summed_bound(self):
        """A public upper bound on the rows a release sums, for the float64 rounding margin
        of the sums (:func:`~skdpgd.accounting.sum_rounding_margin`): N under replace-one (and
        without noise), else the released count plus ``COUNT_BOUND_SIGMAS`` of its noise (a
        shortfall has probability below 1e-300; a road's ``count_margin`` already raised
        it), else the public ``n_samples``, taken as a bound."""
        if self.relation == "replace" or math.isinf(self.epsilon):
            return float(self.n_rows)
        if self.z_count is not None:
            return self.n_public + COUNT_BOUND_SIGMAS * self.z_count
        return float(self.spec.n_samples)

    @property
    def setup_releases(self):
        """The set-up releases made so far (fixed multipliers): the row count, class-weight
        counts and a road's own set-up releases ("prior" names the class prior only)."""
        return self.charges.releases


@dataclasses.dataclass(frozen=True)
class RoadResult:
    """What a road's ``run`` returns: its own fitted attributes (``attributes``, one of
    :data:`skdpgd._core.fitted.ROAD_ATTRIBUTES`), a linear road's ``(coef, intercept)``
    (``model``; None where the attributes hold the model), and, when a branch taken after
    the first release changed them, the releases actually made (``releases``; None: the
    calibrated ones). :func:`private_fit` adds what was spent."""

    attributes: object
    model: tuple | None = None
    releases: list | None = None


class Road:
    """One way of computing a fit's releases (see the module docstring).

    ``accountant`` calibrates the road's releases; ``relation`` decides the neighbouring
    relation and refuses what cannot run, before anything is read; ``charge_immediately``
    says whether the set-up releases are charged as they are drawn; ``count_margin`` is a
    post-processing of a released count (DP-SGD's safe side); ``setup`` makes the road's own
    set-up releases and fixes its public constants; ``releases`` describes the main releases
    (relative multipliers, sensitivities: :class:`~skdpgd.accounting.Release`);
    ``calibrate`` scales them to the budget; ``run`` computes and returns a
    :class:`RoadResult`; ``spent_epsilon`` is what the fit reports.
    """

    accountant = GaussianDPAccountant()
    #: rounding margin of the main releases' sums (full batch: set in ``setup``)
    margin = 0.0
    count_margin = 0.0

    def relation(self, spec):
        return resolve_relation(spec.neighbouring, spec.budget)

    def charge_immediately(self, fit):
        """Full batch: charged with the main releases when the budget admits a public upper
        bound on the whole fit (:func:`~skdpgd._core.setup.budget_admits_upper_bound`)."""
        spec, relation = fit.spec, fit.relation
        n_given = spec.n_samples
        # the fit's delta, or a bound on it before a noisy count is released
        delta_max = resolve_delta(spec.delta, relation, n_rows=fit.n_rows, n_public=n_given)
        exact = (
            spec.delta is not None or relation == "replace" or n_given is not None
        ) and getattr(spec.budget, "neighbouring", None) == relation
        return not budget_admits_upper_bound(
            spec.budget, fit.epsilon, delta_max, relation, GaussianDPAccountant(), fit.label, exact
        )

    def setup(self, fit):
        """The road's own set-up releases and public constants (default: none)."""

    def releases(self, fit):  # pragma: no cover - interface
        raise NotImplementedError

    def run(self, fit, releases):  # pragma: no cover - interface
        raise NotImplementedError

    def describe(self, fit, releases):
        """The ``verbose`` line announcing the run (public values only)."""
        return None

    def calibrate(self, fit, shapes):
        """The main releases scaled to the budget, composed with the set-up releases, each
        sensitivity raised by the road's rounding margin."""
        return calibrate(
            shapes,
            fit.epsilon,
            fit.delta,
            accountant=self.accountant,
            prior=fit.setup_releases,
            margin=self.margin,
        )

    def spent_epsilon(self, fit, made):
        """The epsilon the fit reports for everything it released (``made``): an upper
        bound."""
        return spent_epsilon(made, fit.delta, fit.epsilon, self.accountant)


def private_fit(spec, road, data):
    """Run one private fit along the road; return its :class:`~skdpgd._core.fitted.FitResult`.

    ``spec`` is the fit's :class:`PrivacySpec`, ``road`` a :class:`Road` built with its own
    parameters resolved, ``data`` the :class:`FitRows`. Nothing else is read: the caller sets
    the attributes once this returns, so a refused or failed fit sets nothing.
    """
    fit = Fit(spec, data.n_rows)
    fit.relation = road.relation(spec)  # may refuse, before anything is read
    # plain: the generator of random_state; secure mode: the OS-keyed stream (a seeded
    # random_state is refused here, before anything is read)
    fit.gen = fit_generator(spec.random_state, fit.label)
    fit.charges = SetupCharges(spec.budget, fit.label, immediate=road.charge_immediately(fit))

    # --- N: public under replace-one; a parameter or an accounted noisy count otherwise ---
    delta_for_count = resolve_delta(spec.delta, None)  # N not known yet: the cap
    fit.n_public, count = resolve_n_samples(
        spec.n_samples,
        data.n_rows,
        fit.relation,
        gdp_mu(fit.epsilon, delta_for_count),
        fit.gen,
    )
    fit.z_count = None if count is None else float(count.multipliers[0])
    if count is not None and road.count_margin:  # post-processing of the released count
        fit.n_public += road.count_margin * fit.z_count
    fit.delta = resolve_delta(spec.delta, fit.relation, n_rows=fit.n_rows, n_public=fit.n_public)
    warn_if_large_delta(fit.delta, fit.n_public, fit.label, stacklevel=5)
    fit.mu_total = gdp_mu(fit.epsilon, fit.delta)
    fit.charges.add(count)

    # --- class weights in [0, 1]: public, or from accounted noisy class counts ---
    fit.sample_weight, fit.weight_scale = data.sample_weight, 1.0
    if spec.class_weight is not None:
        weights, fit.weight_scale, class_counts = resolve_class_weight(
            spec.class_weight, data.classes, data.y_index, fit.mu_total, fit.gen, fit.relation
        )
        fit.sample_weight = data.sample_weight * weights[data.y_index]
        fit.charges.add(class_counts)

    _refuse_if_setup_spent_all(fit)  # the count (and class-weight counts) alone

    # --- the road's own set-up releases and public constants, then its release shapes ---
    road.setup(fit)
    _refuse_if_setup_spent_all(fit)
    fit.progress = Progress(spec.verbose, fit.delta, fit.setup_releases)
    for note in fit.notes:
        fit.progress.say(note)
    shapes = road.releases(fit)

    # --- calibrate (composed with the set-up releases), charge: refuses before any sum ---
    releases = road.calibrate(fit, shapes)
    fit.charges.charge_with(releases)
    line = road.describe(fit, releases)
    if line:
        fit.progress.say(line)

    result = road.run(fit, releases)
    # a road that chose a branch after its first release reports what it released (the same
    # total under the fit's relation: see WarmStart)
    made = fit.setup_releases + list(result.releases if result.releases is not None else releases)
    return FitResult(
        attributes=result.attributes,
        model=result.model,
        releases_=made,
        noise_=noise_name(fit.gen),
        n_samples_=fit.n_public,
        count_noise_multiplier_=fit.z_count,
        delta_=fit.delta,
        neighbouring_=Relation(fit.relation).words,
        epsilon_=road.spent_epsilon(fit, made),
    )


def _refuse_if_setup_spent_all(fit):
    """A clear refusal when the set-up releases already spend the whole budget at the fit's
    delta (possible at a tiny epsilon under add/remove-one: the default delta is set from the
    noisy row count, after the count's share was sized at the cap). It names the smallest
    epsilon that leaves room at that delta, with the set-up releases' shares as they are
    (each grows with epsilon: the count's with the budget at the delta it was sized at, the
    others with the fit's). Public and released values only."""
    if not fit.setup_releases or math.isinf(fit.mu_total):
        return
    if gdp_mu_of_releases(fit.setup_releases) < fit.mu_total:
        return
    spec = fit.spec
    count = [r for r in fit.setup_releases if r.name == "row count"]
    others = [r for r in fit.setup_releases if r.name != "row count"]
    delta_c = resolve_delta(spec.delta, None)  # the delta the count was sized at
    least = smallest_epsilon_with_room(fit.epsilon, fit.delta, count, others, delta_c)
    need = (
        f"an epsilon of at least {least:.3g} (at this delta)"
        if least is not None
        else "a larger epsilon"
    )
    fixes = [need]
    if fit.z_count is not None:
        fixes.append("a public n_samples (no noisy row count)")
    if spec.delta is None:
        fixes.append(
            "an explicit delta (the default, min(1e-5, 1/N^2), was set from the noisy row count)"
        )
    raise ValueError(
        f"epsilon={fit.epsilon:g} is too small for {fit.label} at delta={fit.delta:.3g}: its "
        f"set-up releases ({', '.join(r.name for r in fit.setup_releases)}) already spend all "
        "of it there, leaving nothing for the model. Give " + ", or ".join(fixes) + "."
    )


def mu_of(releases):
    """GDP mu of full-batch releases (the ``mu_`` attribute), or None for subsampled ones."""
    if any(r.sampling_rate != 1.0 for r in releases):
        return None
    return gdp_mu_of_releases(releases)


__all__ = ["Fit", "FitRows", "PrivacySpec", "Road", "RoadResult", "private_fit", "mu_of"]

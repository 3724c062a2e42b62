"""What a fit settles before its main releases: the neighbouring relation, whether the budget
is charged before or with the main releases, the random generator, and the set-up releases.

Each set-up release is one function here that draws its noise and returns the released value
with a :class:`~skdpgd.accounting.Release`; the L2 sensitivity of the released quantity under
both neighbouring relations is written next to the draw. The rules that decide *how much* of
the budget a set-up release spends, or what is done with the released value, are policy
(:func:`resolve_n_samples` and :func:`resolve_class_weight` below, and
:mod:`skdpgd._full_batch.road`); the rest of this module only releases.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .. import policy
from .noise import gaussian, generator  # noqa: F401 (generator: its home was here)
from ..accounting import RELATIONS, Release, share_multiplier, upper_bound_release
from ..exceptions import BudgetExceededError, PrivacyUsageWarning

#: Default delta: far below 1/n_samples (Dwork and Roth recommend delta << 1/n).
DEFAULT_DELTA_CAP = 1e-5


def default_delta(n_samples):
    """``min(1e-5, 1 / n_samples^2)``: the delta used when ``delta=None``. No rows: an error
    (the row count is public whenever this is called)."""
    if not float(n_samples) >= 1:
        raise ValueError(
            f"Found array with {n_samples} sample(s): a private fit needs at least "
            "one row. Nothing was released."
        )
    return min(DEFAULT_DELTA_CAP, 1.0 / float(n_samples) ** 2)


def resolve_delta(delta, relation, n_rows=None, n_public=None):
    """The delta of a guarantee, decided here only: the user's ``delta``, else the default
    ``min(1e-5, 1/N^2)`` of a public N.

    Under replace-one the row count ``n_rows`` is public. Otherwise N is public only as a
    parameter (``n_samples``) or a released count: ``n_public``. Before either is known the
    cap ``DEFAULT_DELTA_CAP`` is returned, an upper bound on every default (``relation=None``:
    that cap whatever N)."""
    if delta is not None:
        return float(delta)
    if relation == "replace" and n_rows is not None:
        return default_delta(n_rows)
    if relation is not None and n_public is not None:
        return default_delta(n_public)
    return DEFAULT_DELTA_CAP


def check_release_epsilon(epsilon):
    """A standalone release's epsilon (a metric, a count): a finite number > 0, as a float."""
    if isinstance(epsilon, bool) or not (
        isinstance(epsilon, numbers.Real) and 0 < epsilon < math.inf
    ):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}.")
    return float(epsilon)


def checked_delta(delta, relation, n_rows):
    """A standalone release's delta (:func:`resolve_delta` of ``n_rows`` rows), in (0, 1)."""
    resolved = resolve_delta(delta, relation, n_rows=n_rows)
    if not 0.0 < resolved < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    return resolved


def warn_if_large_delta(delta, n_public, label, stacklevel=3):
    """A :class:`PrivacyUsageWarning` when ``delta >= 1 / N``. ``n_public`` is public (the row
    count under replace-one, or the ``n_samples`` parameter) or released (a noisy count): the
    check is post-processing and costs no privacy."""
    if n_public is not None and n_public > 0 and float(delta) * float(n_public) >= 1.0:
        warnings.warn(
            f"{label}: delta = {float(delta):.3g} is at least 1/N (N = {float(n_public):.6g}, "
            "public or released). A delta that large allows a mechanism that publishes a "
            "random training row in the clear; use delta well below 1/N (the default, "
            "delta=None, is min(1e-5, 1/N^2)).",
            PrivacyUsageWarning,
            stacklevel=stacklevel,
        )


def resolve_relation(neighbouring, budget):
    """The neighbouring relation a full-batch fit runs under, decided before anything is read.

    ``'auto'`` is the budget's relation when the fit is charged to a :class:`PrivacyBudget`
    (so a fit charged to an add/remove-one budget treats N as private: a public
    ``n_samples`` or an accounted noisy count), and replace-one otherwise. An explicit
    ``'replace'`` fit cannot be charged to an add/remove-one budget: it reads and publishes
    the exact N (``n_samples_``, and ``alpha_``, the multipliers and the default delta are
    functions of it), which that budget's relation keeps private, so no finite epsilon holds
    for the charge. It is refused here, before any release.
    """
    budget_relation = getattr(budget, "neighbouring", None) if budget is not None else None
    if neighbouring == "auto":
        return budget_relation if budget_relation in RELATIONS else "replace"
    if neighbouring == "replace" and budget_relation == "add_remove":
        raise ValueError(
            "neighbouring='replace' treats the number of rows N as public, but the budget is "
            "stated for add/remove-one neighbours, where N is private: the fit reads and "
            "publishes N, so no finite epsilon would hold for the charge. Use "
            "neighbouring='auto' (the budget's relation) or 'add_remove' (with a public "
            "n_samples, or a noisy count), or create the budget with neighbouring='replace'. "
            "Nothing was released."
        )
    return neighbouring


def require_add_remove_budget(budget):
    """Poisson-subsampled fits are accounted under add/remove-one: a budget stated for
    replace-one cannot take their charge. Refused before anything is read."""
    if getattr(budget, "neighbouring", "add_remove") != "add_remove":
        raise ValueError(
            "this budget is stated for replace-one neighbours, and Poisson-subsampled fits "
            "are accounted under add/remove-one; create the budget with "
            "neighbouring='add_remove' to share it with DP-SGD fits. Nothing was released."
        )


def budget_admits_upper_bound(budget, epsilon, delta_max, relation, accountant, label, exact=False):
    """Whether ``budget`` admits a public upper bound on everything a full-batch fit spends.

    Every full-batch fit calibrates all its releases to compose to exactly
    ``mu = gdp_mu(epsilon, delta)`` under its own relation, with ``delta <= delta_max`` (the
    given delta, or the largest value the default ``min(1e-5, 1/N^2)`` can take), so at most
    ``gdp_mu(epsilon, delta_max)``. Under the other relation a release's multiplier changes by
    its sensitivity ratio, which is at most 2 from add/remove- to replace-one (gradient sums
    2, Hessian sums and class counts sqrt(2), the norm sum 1, the count 0). Checked with the
    budget's own arithmetic on public values only. When it passes, the fit's real charge can
    never be refused, so no released value decides a refusal; when it does not (the bound is
    loose, e.g. a default delta below the cap), the fit charges each set-up release as it is
    drawn (:class:`SetupCharges`), so that what decides is always already charged. With
    ``exact`` (the bound is what the fit will spend: its delta is known and the budget has its
    relation) a failing check refuses the fit at once, before anything is drawn.
    """
    check = getattr(budget, "check", None)
    if check is None or math.isinf(epsilon):
        return False
    mu_max = accountant.budget(epsilon, delta_max)
    try:
        check([upper_bound_release("whole fit (upper bound)", mu_max, relation)], label=label)
    except BudgetExceededError:
        if exact:
            raise
        return False
    return True


class SetupCharges:
    """The set-up releases of a fit (noisy count, class counts, row-norm statistic) and when
    they are charged to its budget.

    With ``immediate`` each is charged as soon as it is drawn: the default delta, the penalty,
    the plan and so whether the budget refuses the fit's main releases are functions of them,
    and a value may decide only once it is charged. A fit refused after that keeps those small
    charges, and its error says so. Without it (the budget admitted the public upper bound,
    or there is no budget) they are charged with the fit's releases, in one charge.

    A road whose main releases depend on a set-up release's value (DP-SGD's prior switch) gives
    the fit's main charge with that release (``add(release, main=events)``), a bound that holds
    whichever releases follow: with ``immediate`` both are charged together, before the release
    is drawn, and the main releases are then not charged again.
    """

    def __init__(self, budget, label, immediate):
        self.budget, self.label, self.immediate = budget, label, bool(immediate)
        self.releases = []
        self._charged = 0
        self.main = None  # the fit's main charge, when given ahead of its releases

    def add(self, release, main=None):
        if release is None:
            return
        if main is not None:
            self.main = list(main)
        if self.immediate and self.budget is not None:
            if main is None:
                self.budget.charge([release], label=f"{self.label} ({release.name})")
            else:  # one charge: a refusal comes before the release is drawn
                self._charge([release] + self.main)
                self.main = []
            self._charged += 1
        self.releases.append(release)

    def charge_with(self, releases):
        """Charge the fit's main ``releases`` (or the main charge given ahead of them) with
        the set-up releases not yet charged."""
        if self.budget is None:
            return
        main = list(releases) if self.main is None else self.main
        events = self.releases[self._charged :] + main
        if events:  # (none: all charged ahead)
            self._charge(events)

    def _charge(self, events):
        """One charge of the fit's label; a refusal names the set-up releases already charged."""
        try:
            self.budget.charge(events, label=self.label)
        except BudgetExceededError as exc:
            if not self._charged:
                raise
            drawn = ", ".join(r.name for r in self.releases[: self._charged])
            raise BudgetExceededError(
                f"{exc} (Except the set-up release(s) drawn before this check, which it "
                f"depends on, and charged then: {drawn}; their cost stays charged.)"
            ) from None


# --- the set-up releases: value + Release, the sensitivity next to the draw ----------------

#: A row count moves by 1 when a row is added or removed; under replace-one N is public
#: (and never released), so its sensitivity there is 0.
COUNT_SENSITIVITY = {"replace": 0.0, "add_remove": 1.0}


def release_count(n_rows, z, relation, gen):
    """``N~ = N + z N(0, 1)`` (sensitivity 1 under add/remove-one): the released count (at
    least 1) and its release, ``1/z``-GDP."""
    # sensitivity 1 (add/remove-one); N is an integer, exact in float64 (no rounding margin),
    # and released without rounding in secure mode
    noisy = gaussian(n_rows, z, gen, COUNT_SENSITIVITY["add_remove"], exact=True)
    return max(float(noisy), 1.0), Release("row count", [z], dict(COUNT_SENSITIVITY), relation)


#: L2 sensitivity of the vector of class counts: relabelling one example moves two counts by 1
#: (replace-one), adding or removing one moves one count by 1 (add/remove-one).
CLASS_COUNT_SENSITIVITY = {"replace": math.sqrt(2.0), "add_remove": 1.0}

#: L2 sensitivity of a selection's release, ``sum_i w_i ([model A right on i] - [model B
#: right on i])`` for two released models: each term lies in [-1, 1] (weights in [0, 1]), so
#: replacing a row moves the sum by at most 2 and adding or removing one by at most 1. (The
#: full-batch warm start's selection and DP-SGD's binary selection release it.)
SELECTION_SENSITIVITY = {"replace": 2.0, "add_remove": 1.0}


def release_class_counts(counts, z, relation, gen, name="class counts", sensitivity=None):
    """The class counts plus ``N(0, (z s)^2 I)``, ``s = sensitivity[relation]``: the noisy
    counts and their release, ``1/z``-GDP under ``relation``. ``sensitivity`` defaults to
    :data:`CLASS_COUNT_SENSITIVITY` (exact for integer counts); weighted counts
    ``sum_i w_i [y_i = k]`` with ``w_i`` in [0, 1] have the same sensitivity in exact
    arithmetic, and their float64 sums pass it raised by the sum's rounding margin
    (:func:`skdpgd.accounting.with_margin` of :data:`CLASS_COUNT_SENSITIVITY`)."""
    sens = dict(CLASS_COUNT_SENSITIVITY if sensitivity is None else sensitivity)
    if set(sens) != set(CLASS_COUNT_SENSITIVITY) or any(
        not sens[r] >= CLASS_COUNT_SENSITIVITY[r] for r in sens
    ):
        raise ValueError(
            "the class counts' sensitivity is at least CLASS_COUNT_SENSITIVITY under each relation."
        )
    std = z * sens[relation]
    # integer counts (the default sensitivity) are released without rounding in secure mode
    noisy = gaussian(counts, std, gen, sens[relation], exact=sensitivity is None)
    return noisy, Release(name, [z], sens, relation)


def release_norm_sum(norm_sum, z, sensitivity, relation, gen):
    """``S + N(0, (z s)^2)`` for ``S = sum_i w_i min(||x_i||, R)``, ``w_i`` in [0, 1]:
    replacing, adding or removing one example moves S by at most R, under both relations.
    ``sensitivity`` is that R raised by the sum's rounding margin, for each relation (each term
    lies in ``[0, R]`` as computed: a rounded product of a weight at most 1 and a norm held at
    most R, so only the sum rounds). Returns the released sum and its release, ``1/z``-GDP."""
    if sensitivity["replace"] != sensitivity["add_remove"]:
        raise ValueError("the norm sum has the same sensitivity under both relations.")
    noisy = gaussian(norm_sum, z * sensitivity[relation], gen, sensitivity[relation])
    return noisy, Release("row norm sum", [z], dict(sensitivity), relation)


# --- how much the set-up releases of the fit itself spend ---------------------------------


def resolve_n_samples(n_samples, n_rows, neighbouring, mu_total, gen):
    """``(n_public, release)``: the public N a mechanism may use, and the noisy count released
    to get it (a :class:`~skdpgd.accounting.Release`, or None when none was).

    Under replace-one N is public. Under add/remove-one it is private: a public ``n_samples``
    is used as given (its value only changes the normaliser and the step count; privacy holds
    whatever it is), else ``N~ = N + z_c N(0, 1)`` is released
    (:func:`skdpgd._core.setup.release_count`, sensitivity 1), ``1/z_c``-GDP with
    ``z_c = 1 / (sqrt(COUNT_SHARE) mu_total)``.
    """
    if neighbouring == "replace":
        return float(n_rows), None
    if n_samples is not None:
        return float(n_samples), None
    if math.isinf(mu_total):
        return float(n_rows), None
    return release_count(
        n_rows, share_multiplier(policy.current().COUNT_SHARE, mu_total), neighbouring, gen
    )


def resolve_class_weight(class_weight, classes, y_index, mu_total, gen, relation):
    """Per-class weights in [0, 1] and what they cost: ``(weights, scale, release)``.

    ``weights[k]`` multiplies the sample weight of every example of class k; ``scale`` is
    the factor the requested weights were divided by so that the largest is 1 (a weight above
    1 would multiply an example's contribution past the clip norm); the caller divides alpha
    by it so that the regularised objective keeps its minimiser. ``release`` is the
    :class:`~skdpgd.accounting.Release` of the class counts released for ``'balanced'`` (None
    otherwise), made by :func:`skdpgd._core.setup.release_class_counts` under ``relation`` (the
    fit's): noise standard deviation ``z * CLASS_COUNT_SENSITIVITY[relation]``.

    ``'balanced'`` weights ``n / (K n_k)`` need the class counts, which are private: they are
    released as a histogram plus Gaussian noise. Relabelling one example moves two counts by
    1 (L2 sensitivity sqrt(2), replace-one); adding or removing one moves one count by 1
    (sensitivity 1). The release spends ``CLASS_COUNT_SHARE`` of the budget's mu^2 under the
    fit's relation: ``z = 1 / (sqrt(CLASS_COUNT_SHARE) mu_total)``, and the noise is scaled by
    that relation's sensitivity, so the release is ``1/z``-GDP under it. A dict gives public
    weights (labels absent from it weigh 1).
    """
    n_classes = classes.shape[0]
    if class_weight is None:
        return np.ones(n_classes), 1.0, None
    if isinstance(class_weight, dict):
        unknown = [k for k in class_weight if k not in set(classes.tolist())]
        if unknown:
            raise ValueError(f"class_weight has labels that are not classes: {unknown!r}.")
        raw = np.array([float(class_weight.get(c, 1.0)) for c in classes.tolist()])
        release = None
    elif class_weight == "balanced":
        # integer counts (unweighted), exact in float64: CLASS_COUNT_SENSITIVITY needs no margin
        counts = np.bincount(y_index, minlength=n_classes).astype(float)
        release = None
        if not math.isinf(mu_total):
            counts, release = release_class_counts(
                counts,
                share_multiplier(policy.current().CLASS_COUNT_SHARE, mu_total),
                relation,
                gen,
            )
        counts = np.maximum(counts, 1.0)
        raw = counts.sum() / (n_classes * counts)
    else:
        raise ValueError(f"class_weight must be None, 'balanced' or a dict, got {class_weight!r}.")
    if not np.all(np.isfinite(raw)) or np.any(raw < 0) or not np.any(raw > 0):
        raise ValueError("class weights must be finite, >= 0 and not all 0.")
    scale = float(raw.max())
    return raw / scale, scale, release

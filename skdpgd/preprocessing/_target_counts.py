"""out_of_range_target_count: noisy counts of the targets outside a public range (opt-in,
accounted)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from sklearn.utils.validation import column_or_1d

from .._config import resolve_budget
from .._core.noise import fit_generator, gaussian
from .._core.setup import checked_delta
from ._domain_counts import check_count_release
from ..accounting import Release


@dataclass(frozen=True)
class TargetRangeCounts:
    """What :func:`out_of_range_target_count` released: noisy numbers of targets below and
    above the range, and the release's accounting (read by :func:`skdpgd.privacy_report` and
    charged to a :class:`~skdpgd.PrivacyBudget`)."""

    below: float
    above: float
    range: tuple
    noise_std: float
    epsilon_: float
    delta_: float
    releases_: list
    neighbouring_: str


def _public_range(y_bound):
    """``(lo, hi)`` of a public target bound: ``Y`` is ``[-Y, Y]``, a pair is itself."""
    if isinstance(y_bound, numbers.Real) and not isinstance(y_bound, bool):
        y = float(y_bound)
        if not (math.isfinite(y) and y > 0):
            raise ValueError(f"y_bound must be a finite number > 0, got {y_bound!r}.")
        return -y, y
    try:
        lo, hi = (float(v) for v in y_bound)
    except (TypeError, ValueError):
        raise ValueError(
            f"y_bound must be a positive number or a pair (lo, hi) of numbers, got {y_bound!r}."
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"y_bound=(lo, hi) needs finite numbers with lo < hi, got {y_bound!r}.")
    return lo, hi


def out_of_range_target_count(
    y, y_bound, *, epsilon, delta=None, budget=None, neighbouring="replace", random_state=None
):
    """Noisy numbers of the targets below and above a public range ``y_bound``.

    A regressor clips its targets to ``y_bound`` without a word (every clipped value is a
    valid row for the privacy proof): a range that misses the targets (``y_bound=(0, 1)`` for
    targets near 50) gives a model far worse than predicting their mean. When the fit
    releases the mean of its clipped targets anyway, a free warning says so if that mean sits
    at an end of the range; this opt-in check tells you more, at a small budget you choose:
    how many targets lie below ``lo`` and above ``hi``, plus Gaussian noise. Spend a small
    share (e.g. ``epsilon=0.05``) and charge it to the budget your fits draw from.

    Privacy: one release of the vector ``(below, above)``. Replacing one row moves each count
    by at most 1 and a row is in at most one of them, so the vector's L2 sensitivity is
    ``sqrt(2)`` under replace-one and 1 under add/remove-one; the noise's standard deviation is
    that over ``mu``, the Gaussian-DP parameter of ``(epsilon, delta)`` (exact). Under
    replace-one the number of rows is public; under add/remove-one it is not read (delta
    defaults to 1e-5).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        The targets, as the regressor would see them.
    y_bound : float or (lo, hi)
        The public range, as the regressor's ``y_bound``: a number ``Y`` is ``[-Y, Y]``; for
        counts (:class:`~skdpgd.DPPoissonRegressor`) pass ``(0, Y)``.
    epsilon : float > 0
    delta : float in (0, 1) or None, default=None
        None: ``min(1e-5, 1/N^2)`` under replace-one, 1e-5 under add/remove-one.
    budget : PrivacyBudget or None, default=None
        Charged before anything is drawn (a refusal reads nothing).
    neighbouring : {'replace', 'add_remove'}, default='replace'
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    TargetRangeCounts

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd.preprocessing import out_of_range_target_count
    >>> y = np.full(1000, 50.0)
    >>> check = out_of_range_target_count(y, (0, 1), epsilon=0.1, random_state=0)
    >>> round(check.above, -2), check.range
    (1000.0, (0.0, 1.0))
    """
    from ..accounting import Relation, calibrate, compose

    check_count_release(epsilon, neighbouring)
    lo, hi = _public_range(y_bound)
    y = column_or_1d(np.asarray(y), warn=False)
    if not np.issubdtype(y.dtype, np.number):
        raise ValueError(f"y must hold numbers, got dtype {y.dtype}.")
    n_rows = int(y.shape[0])
    delta = checked_delta(delta, neighbouring, n_rows)
    # exact integer counts; the sensitivities (sqrt(2) replace-one: a row moves from one count
    # to the other; 1 add/remove-one) rounded up
    margin = 1.0 + 4.0 * np.finfo(float).eps
    (release,) = calibrate(
        [
            Release(
                "targets below and above y_bound",
                [1.0],
                {"replace": math.sqrt(2.0) * margin, "add_remove": 1.0},
                neighbouring,
            )
        ],
        float(epsilon),
        delta,
    )
    # the generator before any charge: secure mode refuses a seeded random_state here
    gen = fit_generator(random_state, "out_of_range_target_count")
    budget = resolve_budget(budget)  # else the default budget of config_context, if any
    if budget is not None:
        budget.charge([release], label="out_of_range_target_count")
    values = y.astype(float, copy=False)
    with np.errstate(invalid="ignore"):
        # a missing (NaN) target counts as neither: the regressors refuse one before fitting
        counts = np.array([np.sum(values < lo), np.sum(values > hi)], dtype=float)
    std = float(release.noise_std[0])
    # integer counts: released without rounding in secure mode
    below, above = gaussian(counts, std, gen, release.own_sensitivity, exact=True)
    return TargetRangeCounts(
        below=float(below),
        above=float(above),
        range=(lo, hi),
        noise_std=std,
        epsilon_=compose([release], delta),
        delta_=delta,
        releases_=[release],
        neighbouring_=Relation(neighbouring).words,
    )

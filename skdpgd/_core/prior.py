"""The prior switch: one step for every road that may return the intercept-only model.

A road with a prior switch releases the weighted class counts ``c_k = sum_i w_i [y_i = k]``
first, decides on them whether one class dominates, and then either runs its fit (started from
the counts' prior) or spends the rest of its budget on a second release of the same counts and
returns the intercept-only model of both. This module holds that step once:

* :class:`PriorSwitch` ``.release(counts, first, p, gen)``: the first release (the counts plus
  ``N(0, s_1^2)`` each, ``s_1`` the calibrated release's noise) and the decision on it
  (post-processing);
* :meth:`PriorSwitch.start`: the fit's starting intercept when it does not switch;
* :meth:`PriorSwitch.intercept_only`: when it switches, the second release with what is left
  and the intercept-only model of the two, with the releases it made;
* :func:`select`: the accounted choice between a fit and the intercept-only model of the
  counts, made after the fit (a release of the difference of the rows each predicts right),
  the step the full-batch warm start and DP-SGD's binary fits share.

How much each release spends is the road's accounting, passed in as calibrated
:class:`~skdpgd.accounting.Release` objects: the full-batch road gives the second release the
rest of the same GDP total (:class:`skdpgd._full_batch.mechanisms.WarmStart`), DP-SGD fixes
both branches before the first draw under a common envelope
(:meth:`skdpgd._minibatch.road.MinibatchRoad._prior_switch`). How the exact counts are summed
is the road's too (over its own rows; the step only adds noise to them).

Sensitivity of every count release here: relabelling one example moves two counts by at most
``w_i <= 1`` (L2 ``sqrt(2)``, replace-one), adding or removing one moves one count by at most 1
(add/remove-one): :data:`skdpgd._core.setup.CLASS_COUNT_SENSITIVITY`, raised by a road's rounding
margin where it has one. Everything after a draw (the decision, the shrinkage, the log-odds,
the inverse-variance combination) is post-processing of released values.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import policy
from .noise import gaussian
from .setup import CLASS_COUNT_SENSITIVITY, SELECTION_SENSITIVITY
from .transaction import defer_warning
from ..accounting import Release
from ..exceptions import PrivacyUsageWarning


def _check_counts_release(release):
    """A release of the class counts has at least :data:`CLASS_COUNT_SENSITIVITY` under each
    relation (a road's rounding margin may raise it, never lower it)."""
    if any(not float(release.sensitivity[r]) >= v for r, v in CLASS_COUNT_SENSITIVITY.items()):
        raise ValueError(
            f"{release.name!r}: a release of the class counts has a sensitivity of at least "
            f"{CLASS_COUNT_SENSITIVITY} (got {release.sensitivity})."
        )
    return release


def noisy(counts, std, gen, sens):
    """``counts + N(0, std^2)`` each: the one draw of a release of the class counts (its
    sensitivity ``sens``: see the module docstring), ``len(counts)`` normals from ``gen``
    (weighted counts: rounded to the lattice in secure mode)."""
    counts = np.asarray(counts, dtype=float)
    return gaussian(counts, std, gen, sens)


def shrunk_counts(counts, std):
    """Noisy counts shrunk towards their mean by
    ``max(0, 1 - c (K - 1) s^2 / ||c~ - mean(c~)||^2)``,
    c = :data:`skdpgd.policy.WARM_START_SHRINK` (post-processing)."""
    counts = np.asarray(counts, dtype=float)
    dev = counts - counts.mean()
    norm2 = float(dev @ dev)
    c = policy.current().WARM_START_SHRINK
    factor = max(0.0, 1.0 - c * (counts.size - 1) * std * std / norm2) if norm2 > 0 else 0.0
    return counts.mean() + factor * dev


def log_odds(counts, std, shrink_classes=False):
    """The intercept of noisy counts (post-processing): the log-odds (two classes) or the
    centred log-frequencies (K classes), each count held at least 1/2. ``shrink_classes``:
    first shrink them by :func:`shrunk_counts`, so that where the classes' imbalance is within
    the noise an iteration starts at the uniform prior rather than at the noise (a balanced
    set's noisy prior otherwise shifts every prediction)."""
    counts = np.array(counts, dtype=float)
    if shrink_classes:
        counts = shrunk_counts(counts, std)
    counts = np.maximum(counts, 0.5)
    k = counts.size
    logf = np.log(counts / counts.sum())
    if k == 2:
        return np.array([logf[1] - logf[0]])
    return logf - logf.mean()


def dominated(counts, std, share):
    """Whether one class holds at least ``share`` of the noisy counts once they are shrunk by
    their known noise (:func:`shrunk_counts`): the prior switch's decision, post-processing of
    the release. (A relative tolerance: fully shrunk binary counts are exactly 1/2 each.)"""
    shrunk = np.maximum(shrunk_counts(counts, std), 0.5)
    return float(shrunk.max()) >= share * float(shrunk.sum()) * (1.0 - 1e-9)


def target_sensitivity(y_bound):
    """L2 sensitivity of a release of the weighted sum of clipped targets ``sum_i w_i y_i``
    with ``|y_i| <= Y`` (centred targets; Poisson counts ``0 <= y_i <= Y`` are covered too):
    one row's term moves by at most ``2Y`` when it is replaced, ``Y`` when it is added or
    removed (weights in [0, 1])."""
    return {"replace": 2.0 * float(y_bound), "add_remove": float(y_bound)}


def start_bound(y_bound, n_public, log_link=False):
    """A public bound on ``|noisy_mean(...)|`` whatever the data: ``Y`` (the mean is held in
    ``[-Y, Y]`` and shrunk towards 0), or for a log link ``max(|log Y|, log(2N))`` (the log of
    a mean held in ``[1 / (2N), Y]``)."""
    y = float(y_bound)
    if not log_link:
        return y
    low = math.log(2.0 * float(n_public))
    return max(abs(math.log(y)), low) if y > 0 else low


#: The free warning of :func:`targets_at_bound`: a released mean of the clipped targets
#: beyond this share of the way from the range's centre (0 for counts) to its end, by more than
#: ``TARGET_EDGE_NOISE_SDS`` of its noise. Not a tuned constant: it only words a warning (never
#: changes a release), and 0.9 makes the warning's sentence a fact (a mean of values within
#: [-Y, Y] that is at least 0.9 Y has at least half of them above 0.8 Y).
TARGET_EDGE_SHARE = 0.9
TARGET_EDGE_NOISE_SDS = 2.0


def targets_at_bound(mean, noise_sd, y_bound, log_link=False):
    """The free warning's text when a released mean of the clipped targets shows that most
    targets sit at an end of ``y_bound`` or beyond (clipped), else None.

    Post-processing of a release the fit makes anyway (the noisy mean ``mean`` and its known
    noise standard deviation ``noise_sd``, public): no row is read. Centred targets lie in
    ``[-Y, Y]``: when ``|mean| - 2 noise_sd >= 0.9 Y``, at least half of them lie within the
    outer tenth of the range's width at that end (``mean <= p Y + (1 - p) 0.8 Y`` for a share
    ``p`` above ``0.8 Y``). Counts (log link) lie in ``[0, Y]``: the same at the upper end,
    within its top fifth."""
    y = float(y_bound)
    if not (y > 0 and math.isfinite(mean) and math.isfinite(noise_sd)):
        return None
    low = mean if log_link else abs(mean)
    if low - TARGET_EDGE_NOISE_SDS * noise_sd < TARGET_EDGE_SHARE * y:
        return None
    end = "upper" if (log_link or mean > 0) else "lower"
    part = "top fifth" if log_link else "outer tenth"
    return (
        f"The released (noisy) mean of the targets clipped to y_bound sits at the {end} end of "
        f"the range: at least half of the targets lie in its {part} or beyond it and were "
        "clipped to it, which pulls the model towards the bound (a bound that misses the "
        "targets can score far below predicting their mean). Check that y_bound holds the "
        "targets (it must stay a public choice): "
        "skdpgd.preprocessing.out_of_range_target_count(y, y_bound, epsilon=...) counts the "
        "clipped targets at a small accounted cost. This warning is free: it reads only a "
        "release the fit makes anyway."
    )


def noisy_mean(total, std, n_public, y_bound, gen, sens, log_link=False):
    """The regressors' intercept-only model from one release of the clipped target sum:
    ``m = (total + N(0, std^2)) / N`` (one normal from ``gen``; ``total`` the exact sum,
    sensitivity :func:`target_sensitivity`), held in ``[-Y, Y]``; then (post-processing) its
    log held at least ``1 / (2N)`` for a log link (Poisson), else ``m`` shrunk towards 0 (the
    public range's centre) by ``m^2 / (m^2 + s^2)``, ``s = std / N`` the mean's known noise (a
    noise-dominated mean predicts worse than the centre). When the released mean shows most
    targets clipped at an end of the range (:func:`targets_at_bound`, post-processing), a
    warning is emitted once the fit succeeds."""
    mean = gaussian(float(total), std, gen, sens) / n_public
    note = targets_at_bound(mean, std / n_public, y_bound, log_link)
    if note is not None:
        defer_warning(note, PrivacyUsageWarning)
    mean = min(max(mean, -float(y_bound)), float(y_bound))
    if log_link:
        return math.log(max(mean, 0.5 / n_public))
    s2 = (std / n_public) ** 2
    return mean * (mean * mean / (mean * mean + s2) if s2 > 0 else 1.0)


def combined_log_odds(first, std1, second, std2):
    """The intercept of two noisy releases of the same counts, combined by their inverse
    variances (post-processing)."""
    v1, v2 = std1 * std1, std2 * std2
    combined = (first * v2 + second * v1) / (v1 + v2)
    return log_odds(combined, math.sqrt(v1 * v2 / (v1 + v2)))


@dataclasses.dataclass(frozen=True)
class InterceptOnlyModel:
    """What the switch returns when it switches: coefficients 0, the intercept of the two
    releases, and the two releases it made (first, second), as the road reports them."""

    coef: np.ndarray
    intercept: np.ndarray
    releases: tuple


@dataclasses.dataclass(frozen=True)
class PriorSwitch:
    """The first release of the class counts and the decision on it; released values only
    (the exact counts are never stored: the road passes them again for the second release).

    Attributes
    ----------
    noisy : ndarray of shape (K,)
        The released counts.
    first : Release
        The first release (calibrated by the road; its ``noise_std[0]`` is the noise drawn).
    switched : bool
        Whether the road returns the intercept-only model (:meth:`intercept_only`) rather than
        its fit started from :meth:`start`.
    """

    noisy: np.ndarray
    first: Release
    switched: bool

    @classmethod
    def release(cls, counts, first, share, gen, forced=False):
        """Release ``counts`` (the exact weighted class counts, K of them) with the noise of
        the calibrated release ``first`` (K normals from ``gen``) and decide: switch when one
        class holds at least ``share`` of the shrunk noisy counts (:func:`dominated`), or when
        ``forced`` (a public decision of the road, made before the draw: e.g. its fit cannot
        be certified at this budget). ``share=None``: no switch (the release only starts the
        fit)."""
        std = float(_check_counts_release(first).noise_std[0])
        released = noisy(counts, std, gen, first.own_sensitivity)
        switched = forced or (share is not None and dominated(released, std, share))
        return cls(released, first, bool(switched))

    @property
    def std(self):
        """The noise standard deviation of the first release."""
        return float(self.first.noise_std[0])

    def start(self):
        """The starting intercept of the fit when it does not switch: the log-odds of the
        released counts shrunk by their known noise (post-processing)."""
        return log_odds(self.noisy, self.std, shrink_classes=True)

    def intercept_only(self, counts, second, gen, shape, progress=None, step=(0, 1)):
        """The switched branch: release ``counts`` again with the calibrated release ``second``
        (what the road left for it; K normals from ``gen``), and return the intercept-only
        model of both releases combined by their inverse variances (coefficients 0 of
        ``shape``), with the releases ``(first, second)``. ``progress``/``step``: the road's
        progress report of the second release, ``(index, of)``."""
        std2 = float(_check_counts_release(second).noise_std[0])
        again = noisy(counts, std2, gen, second.own_sensitivity)
        if progress is not None:
            progress.released(second.multipliers, *step)
        return InterceptOnlyModel(
            np.zeros(shape),
            combined_log_odds(self.noisy, self.std, again, std2),
            (self.first, second),
        )


def _check_selection_release(release):
    """A selection's release has at least :data:`SELECTION_SENSITIVITY` under each relation."""
    if any(not float(release.sensitivity[r]) >= v for r, v in SELECTION_SENSITIVITY.items()):
        raise ValueError(
            f"{release.name!r}: a selection's release has a sensitivity of at least "
            f"{SELECTION_SENSITIVITY} (got {release.sensitivity})."
        )
    return release


def select(right, release, n_public, gen):
    """The selection between a fit and the intercept-only model: ``(keep_fit, noisy)``.

    ``right = (r_fit, r_prior)`` are the exact weighted numbers of training rows each released
    model's own ``predict`` gets right (``sum_i w_i [model right on i]``, counted by the road on
    the rows as given); the release is their difference plus ``N(0, s^2)``, ``s`` the noise of
    the calibrated ``release`` (one normal from ``gen``). Both models are released values, so
    row i's term ``w_i ([fit right on i] - [prior right on i])`` is a function of that row alone
    and lies in [-1, 1]: the difference moves by at most 2 when a row is replaced, 1 when one is
    added or removed (:data:`SELECTION_SENSITIVITY`, raised by a road's rounding margin). The
    fit is kept when the noisy difference is above :func:`skdpgd.policy.select_threshold` (a
    public function of the noise and N): post-processing of the release."""
    std = float(_check_selection_release(release).noise_std[0])
    noisy = gaussian(float(right[0] - right[1]), std, gen, release.own_sensitivity)
    return noisy > policy.select_threshold(std, n_public), noisy

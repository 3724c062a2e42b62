"""A choice among the package's own mechanisms by an accounted look at the data.

:class:`Choice` runs K candidate fits (e.g. DP damped Newton, output perturbation and
gradient descent), each with its own share of the budget, releases the class counts (the
intercept-only model, and the iterations' start), and returns one of these K + 1 models (or
a blend of a fit with the intercept-only model: free candidates) by a noisy maximum of their
training accuracies. Every release is made whatever the data, so the
fit composes exactly in Gaussian DP; which model is returned is post-processing.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._core import prior as _prior

from .. import policy
from .._core.noise import gaussian, side_stream
from .._core.setup import CLASS_COUNT_SENSITIVITY
from ..accounting import Release, compose_gdp
from .mechanisms import InterceptOnly, Mechanism, Outcome, Setup


def choice_sensitivity(n_models):
    """L2 sensitivity of the vector of the ``n_models`` weighted counts of training rows each
    released model predicts right, ``(sum_i w_i [model m right on i])_m``, under both
    relations: ``sqrt(n_models)`` (see :class:`Choice`)."""
    s = math.sqrt(float(n_models))
    return {"replace": s, "add_remove": s}


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One fit of a choice: its mechanism, its public constants (its own penalty), its plan and
    its share of the budget (of ``mu^2``)."""

    mechanism: Mechanism
    setup: Setup
    plan: object
    share: float


class Choice(Mechanism):
    """K fits and the intercept-only model; the one with the largest noisy training accuracy.

    **Releases**, in this order, each made whatever the data:

    1. each candidate's own releases (gradient sums, Hessian sums, the perturbed minimiser...,
       with the sensitivities its mechanism declares), its relative multipliers scaled so that
       together they spend the candidate's share ``f_k`` of ``mu^2``;
    2. the weighted class counts (:class:`~skdpgd._full_batch.mechanisms.InterceptOnly`: L2
       sensitivity sqrt(2) replace-one, 1 add/remove-one), share ``c``; their intercept-only
       model is the last candidate, and the logistic losses' gradient and Newton candidates
       start from their shrunk log-odds (post-processing);
    3. the vector of ``M`` counts ``v_m = sum_i w_i [model m predicts y_i]``, one per
       released model (each fit followed by its blends, then the intercept-only model), each
       evaluated as released on the rows as given (:meth:`Rows.correct_counts`: what the
       model's own ``predict`` gets right), plus ``N(0, s^2 I)``, share ``r``. Without blends
       ``M = K + 1``; a blend ``b`` of fit k is the model whose margins are ``b`` times fit
       k's plus ``1 - b`` times the intercept-only model's (``plan.blends``): a free
       candidate, post-processing of releases 1 and 2.

    **Sensitivity of the vector (3).** The models are released values (adaptive composition:
    the release is analysed for fixed models), so row i contributes ``t_m(i) = w_i [model m
    right on i]`` to entry m, a number in [0, 1] (weights in [0, 1]). Replacing row i by i'
    moves entry m by ``t_m(i) - t_m(i')`` in [-1, 1]; adding or removing row i moves it by
    ``t_m(i)`` in [0, 1]. So the vector moves by at most ``sqrt(M)`` in L2 under both
    relations, attained by a row of weight 1 that every model gets right, replaced by one
    every model gets wrong (or removed). Releasing instead the ``M - 1`` differences against
    the intercept-only model would have sensitivity ``2 sqrt(M - 1)`` replace-one (each
    difference moves by up to 2) and ``sqrt(M - 1)`` add/remove-one: the counts are tighter
    under replace-one (the full-batch default) for every M, the differences slightly tighter
    under add/remove-one; one release serves both relations, so the counts are released.

    **The choice** (post-processing): the model with the largest noisy count plus its public
    offset (:func:`skdpgd.policy.choice_offsets`: a bias toward the first candidate and
    against the intercept-only model, in units of the noise of a difference of two counts).

    **Budget.** Relative multipliers: candidate k's releases are scaled so that their
    ``sum z^-2`` is ``f_k``, the counts get ``z = c^-1/2`` and the comparison ``z = r^-1/2``,
    with ``sum_k f_k + c + r = 1``; one calibration scales all of them to the budget (exact GDP
    composition: ``mu^2`` is the sum of ``z^-2`` over every release). Each candidate's plan and
    penalty were made for its own share of the budget.

    **Noise streams.** The first candidate draws from the fit's generator (the noise it would
    draw alone), the counts from its first jump, the comparison from its second, candidate
    ``k >= 1`` from jump ``k + 2``: non-overlapping parts of one stream.
    """

    name = "choice"
    #: as its candidates (set per instance; the class admits one when its candidates do)
    accepts_nonsmooth = True

    def __init__(self, schedule, candidates):
        self.schedule = schedule
        self.candidates = tuple(candidates)
        if not self.candidates:
            raise ValueError("a choice needs at least one candidate.")
        # a non-smooth penalty runs when every candidate runs it
        self.accepts_nonsmooth = all(c.mechanism.accepts_nonsmooth for c in self.candidates)

    def _inner(self, setup):
        """Each candidate's releases as its mechanism declares them (relative multipliers)."""
        return [
            c.mechanism.releases(self._with_progress(c, setup), c.plan) for c in self.candidates
        ]

    @staticmethod
    def _with_progress(candidate, setup):
        return dataclasses.replace(candidate.setup, progress=setup.progress)

    def releases(self, setup, plan):
        prior = InterceptOnly(self.schedule)
        if prior._n_classes(setup) == 0:
            raise ValueError("a choice among fits is for classifiers (their accuracy).")
        out = []
        for k, (c, inner) in enumerate(zip(self.candidates, self._inner(setup))):
            inv2 = compose_gdp(np.concatenate([r.multipliers for r in inner])) ** 2
            scale = math.sqrt(inv2 / float(c.share))  # z -> z * scale: sum z^-2 = share
            out += [
                Release(
                    f"candidate {k + 1} ({c.mechanism.name}): {r.name}",
                    r.multipliers * scale,
                    r.sensitivity,
                    r.relation,
                    r.sampling_rate,
                )
                for r in inner
            ]
        out.append(
            Release(
                "class counts (start)",
                np.array([1.0 / math.sqrt(plan.prior_share)]),
                dict(CLASS_COUNT_SENSITIVITY),
                setup.relation,
            )
        )
        # the counts are float64 sums of terms in [0, 1]: exact integers when the weights are
        # 0 or 1, else covered by the road's rounding margin (applied at calibration, as to
        # every candidate's release)
        out.append(
            Release(
                "choice: rows predicted right by each candidate and the intercept-only model",
                np.array([1.0 / math.sqrt(plan.select_share)]),
                choice_sensitivity(self.n_models(plan)),
                setup.relation,
            )
        )
        return out

    def n_models(self, plan):
        """The models compared: each fit and its blends, then the intercept-only model."""
        return len(self.candidates) * (1 + len(plan.blends)) + 1

    def split(self, setup, releases):
        """The calibrated releases as ``([candidate k's], counts, comparison)``."""
        sizes = [len(inner) for inner in self._inner(setup)]
        if len(releases) != sum(sizes) + 2:
            raise ValueError("the releases do not match the choice's candidates.")
        groups, at = [], 0
        for size in sizes:
            groups.append(list(releases[at : at + size]))
            at += size
        return groups, releases[at], releases[at + 1]

    def run(self, rows, setup, plan, releases, gen):
        groups, counts, comparison = self.split(setup, releases)
        prior = InterceptOnly(self.schedule)
        # the class counts first (their own stream): the intercept-only model and the start
        side = side_stream(gen, 1)
        first = _prior.PriorSwitch.release(prior.class_counts(rows, setup), counts, None, side)
        if setup.progress is not None:
            setup.progress.released(counts.multipliers, 0, 1)
        logistic = setup.loss.second_order == "newton"
        start = first.start() if logistic else None
        fitted = []
        for k, (c, group) in enumerate(zip(self.candidates, groups)):
            stream = gen if k == 0 else side_stream(gen, k + 2)
            c_setup = self._with_progress(c, setup)
            if c.mechanism.has_start:
                fitted.append(c.mechanism.run(rows, c_setup, c.plan, group, stream, start=start))
            else:  # an exact minimiser ('output') has no starting point
                fitted.append(c.mechanism.run(rows, c_setup, c.plan, group, stream))
        prior_coef = np.zeros_like(fitted[0].coef)
        prior_intercept = _prior.log_odds(first.noisy, first.std)
        # --- the comparison: every model as released (the estimator's coef_ / intercept_), on
        # the rows as given: exactly what each model's own predict gets right ---
        # each fit, then its blends with the intercept-only model (post-processing), then that
        # model; which candidate each one is
        models, owner = [], []
        for k, f in enumerate(fitted):
            models.append((f.coef, f.intercept))
            owner.append(k)
            for b in plan.blends:
                models.append(
                    (b * f.coef, b * np.asarray(f.intercept) + (1.0 - b) * prior_intercept)
                )
                owner.append(k)
        models.append((prior_coef, prior_intercept))
        right = np.asarray(rows.correct_counts(models), dtype=float)
        std = float(comparison.noise_std[0])
        pick = side_stream(gen, 2)
        noisy = gaussian(right, std, pick, comparison.own_sensitivity)
        if setup.progress is not None:
            setup.progress.released(comparison.multipliers, 0, 1)
        # --- post-processing: the largest noisy count plus its public offset ---
        scores = noisy + np.asarray(
            policy.choice_offsets(std, setup.n_public, len(models)), dtype=float
        )
        j = int(np.argmax(scores))
        if j == len(models) - 1:
            return Outcome(prior_coef, np.asarray(prior_intercept), model="prior")
        k = owner[j]
        coef, intercept = models[j]
        return dataclasses.replace(
            fitted[k],
            coef=coef,
            intercept=np.asarray(intercept),
            model=self.candidates[k].mechanism.name,
            candidate=k,
        )

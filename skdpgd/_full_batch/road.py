"""The full-batch road: what the full-batch estimators (DPLogisticRegression, DPRidge, the
Huber, Poisson and squared-hinge models) add to :func:`skdpgd._core.fit.private_fit`: the row-norm
statistic, the public constants, the mechanism (:mod:`skdpgd._full_batch.mechanisms`,
:mod:`skdpgd._full_batch.second_order`) and its releases. See docs/how_a_fit_works.md.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import policy
from .._core.data import make_rows
from .._core.fit import FitRows, Road, RoadResult, private_fit
from .._core.fitted import FullBatchAttributes
from .registry import MECHANISMS, mechanism_for, mechanisms_accepting
from .choice import Candidate
from .mechanisms import Setup, rounding_margin
from .._core.setup import release_norm_sum
from ..penalties import L2
from ..accounting import (
    gdp_mu_of_releases,
    remaining_mu,
    share_multiplier,
    with_margin,
)
from ..schedules import Problem, get_schedule


def row_norm_note(estimate, sigma, data_norm):
    """A line for the ``verbose`` output when the released estimate of the mean clipped row
    norm ``(sum_i w_i min(||x_i||, R) + noise) / N`` (``sigma``: its noise's standard
    deviation) shows that nearly every row is at least ``R = data_norm`` long; else None.
    Post-processing of the release only."""
    if estimate >= (
        policy.current().ROW_NORM_NOTE_SHARE * data_norm
        + policy.current().ROW_NORM_NOTE_SIGMAS * sigma
    ):
        return (
            f"released mean row norm (clipped at data_norm = {data_norm:.4g}): "
            f"{estimate:.4g} (noise std {sigma:.2g}): nearly every row is at least data_norm "
            "long and is clipped to it. Expected if the rows are normalised to data_norm; "
            "otherwise data_norm is below the rows' norms (scale the rows, or raise it)."
        )
    return None


def private_row_clip(
    norm_sum,
    n_public,
    data_norm,
    mu_total,
    gen,
    snr=0.0,
    sensitivity=None,
    notes=None,
    relation="replace",
):
    """Choose the row-clipping bound from a Gaussian-mechanism estimate of the mean row norm.

    Releases ``S + N(0, (z R)^2)`` with ``S = sum_i w_i min(||x_i||, R)`` (``norm_sum``),
    ``R = data_norm``, ``w_i`` in [0, 1] (:func:`skdpgd._core.setup.release_norm_sum`: sensitivity
    R under both relations; ``sensitivity``: R raised by the rounding margin of the sum,
    :func:`skdpgd.accounting.sum_rounding_margin`), so the release is ``1/z``-GDP. Returns
    ``(bound, release, share)``; ``bound = policy.row_clip_factor(snr) * m`` (at most R) where m is
    the estimate ``S~ / N`` (N public) held inside ``[2 sigma, R]`` (``sigma = z R / N``, the
    estimate's noise: a noise-dominated estimate keeps the bound conservative rather than
    tiny). ``release`` is None when mu_total is infinite (no clipping below R then, and
    nothing released). ``share`` is ``m / bound`` (at most 1; 1 without a release), the
    typical row's share of the clipping bound: a function of the released estimate, which
    the 'auto' rule uses to judge how much signal the budget leaves.
    ``notes`` (a list): receives :func:`row_norm_note`'s line, if any (post-processing).
    """
    n = n_public
    if math.isinf(mu_total):
        return data_norm, None, 1.0
    factor = policy.row_clip_factor(snr)
    # its share of the budget, and no more noise than the target relative error needs
    z = max(
        share_multiplier(policy.current().ROW_CLIP_MAX_SHARE, mu_total),
        1.0 / (4.0 / (policy.current().ROW_CLIP_TARGET_RELATIVE_ERROR * n)),
    )
    sens = data_norm if sensitivity is None else float(sensitivity)
    released, release = release_norm_sum(
        norm_sum, z, {"replace": sens, "add_remove": sens}, relation, gen
    )
    estimate = released / n
    sigma = z * sens / n
    note = row_norm_note(estimate, sigma, data_norm)  # post-processing of the release
    if note is not None and notes is not None:
        notes.append(note)
    m = min(max(estimate, 2.0 * sigma), data_norm)
    bound = min(data_norm, factor * m)
    return bound, release, min(1.0, m / bound)


@dataclasses.dataclass(frozen=True)
class FullBatchConfig:
    """The full-batch road's own parameters, resolved by the estimator before the fit:
    ``data_norm`` (the resolved public row-norm bound, a float), ``data_norm_given``
    (whether it was a parameter: the ``verbose`` note on the released row norms is only
    made then), ``fit_intercept`` (bool), ``row_clip`` (``'auto'`` or ``'data_norm'``),
    ``intercept_scaling`` (float), ``schedule`` (a name or a schedule instance),
    ``max_iter`` (None for ``'auto'``, else an int), ``alpha`` (``'auto'`` or a float),
    ``momentum`` (float) and ``penalty``, the penalty's family: a callable taking the resolved
    alpha to a :class:`skdpgd.penalties.Penalty` (:class:`~skdpgd.penalties.L2`, or e.g.
    ``functools.partial(ElasticNet, l1_ratio=0.5)``). The defaults are the estimators'
    defaults."""

    data_norm: float
    data_norm_given: bool = True
    fit_intercept: bool = True
    row_clip: str = "auto"
    intercept_scaling: float = 0.5
    schedule: object = "auto"
    max_iter: int | None = None
    alpha: object = "auto"
    momentum: float = 0.0
    penalty: object = L2

    def __post_init__(self):
        object.__setattr__(self, "fit_intercept", bool(self.fit_intercept))
        object.__setattr__(self, "data_norm", float(self.data_norm))
        object.__setattr__(self, "intercept_scaling", float(self.intercept_scaling))
        object.__setattr__(self, "momentum", float(self.momentum))
        if self.max_iter is not None:
            object.__setattr__(self, "max_iter", int(self.max_iter))
        if not (isinstance(self.alpha, str) and self.alpha == "auto"):
            object.__setattr__(self, "alpha", float(self.alpha))


class FullBatchRoad(Road):
    """The full-batch road: the row-norm statistic (``row_clip='auto'``), the penalty and the
    mechanism chosen from public constants, releases described by the mechanism
    (:mod:`skdpgd._full_batch.mechanisms`, :mod:`skdpgd._full_batch.second_order`) and computed
    through the rows'
    reductions (:mod:`skdpgd._compute.backends`). ``config``: its
    :class:`FullBatchConfig`."""

    def __init__(self, X, y, loss, n_outputs, config, *, y_bound=None):
        self.X, self.y, self.loss, self.n_outputs = X, y, loss, n_outputs
        self.config, self.data_norm, self.y_bound = config, config.data_norm, y_bound

    def setup(self, fit):
        cfg, loss, n_outputs, data_norm = self.config, self.loss, self.n_outputs, self.data_norm
        d = self.X.shape[1]
        relation, n_public = fit.relation, fit.n_public
        fit_intercept = cfg.fit_intercept
        # --- the rounding margin of every released sum, from a public bound on the rows
        # summed: Road.calibrate raises every main release's sensitivity by it (gradient sums,
        # Hessian sums, X'X and X'y, the class curvature, the class or target sums of the warm
        # start and the intercept-only model, a selection's or a choice's counts, output
        # perturbation's whole sensitivity), and the row-norm statistic below carries it too.
        # Its dim covers a second-moment term's rounding (mechanisms.rounding_dim).
        rows_bound = fit.rows_summed_bound()
        self.margin = rounding_margin(rows_bound, n_outputs, d)

        # --- the row-clipping bound: data_norm, or a private typical norm (a set-up release)
        rows = make_rows(self.X, self.y, fit.sample_weight, fit_intercept)
        bound, norm_share = data_norm, 1.0
        n_params = n_outputs * (d + int(fit_intercept))
        if cfg.row_clip == "auto":
            # each term w_i min(||x_i||, R) lies in [0, R] as computed (a rounded product of a
            # weight <= 1 and a value <= R): the margin covers the sum's rounding
            norm_sens = with_margin({"replace": data_norm, "add_remove": data_norm}, self.margin)
            bound, norm_release, norm_share = private_row_clip(
                rows.norm_sum(data_norm),
                n_public,
                data_norm,
                fit.mu_total,
                fit.gen,
                policy.signal_to_noise(n_public, n_params, fit.mu_total),
                norm_sens[relation],
                notes=fit.notes if cfg.data_norm_given else None,
                relation=relation,
            )
            fit.charges.add(norm_release)
        mu_left = remaining_mu(fit.mu_total, fit.setup_releases)

        # --- public constants (theory, parameters, or released above; never the data) ---
        # the intercept's column holds the constant c = intercept_scaling * bound
        c = cfg.intercept_scaling * bound if fit_intercept else 1.0
        rows.clip_rows(bound, c)
        row_bound = math.sqrt(bound**2 + c * c) if fit_intercept else bound
        G = loss.lipschitz(row_bound, n_outputs)
        loss_smoothness = loss.smoothness(row_bound, n_outputs)
        schedule = get_schedule(cfg.schedule)
        max_iter = cfg.max_iter
        # public: the released estimate
        signal_scale = norm_share ** policy.current().AUTO_SIGNAL_POWER

        # the mechanisms that can run a penalty with a non-smooth part (their class attribute
        # accepts_nonsmooth); None: every one. 'auto' chooses among these only.
        # (alpha='auto' is positive: its penalty has the non-smooth part any positive alpha has)
        allowed = mechanisms_accepting(cfg.penalty(1.0 if cfg.alpha == "auto" else cfg.alpha))

        def penalty(rule, mu):
            """The penalty (a :class:`skdpgd.penalties.Penalty`) of a fit whose schedule's
            ``alpha_rule`` is ``rule`` with budget ``mu``: its alpha public (N, D, the loss's
            constants, the budget) or the user's, its family the estimator's."""
            if cfg.alpha == "auto":
                alpha = policy.auto_alpha(
                    rule,
                    n_public,
                    n_params,
                    G,
                    row_bound,
                    mu,
                    loss.second_order,
                    max_iter,
                    signal_scale,
                    fit_intercept,
                    n_outputs=n_outputs,
                    output_scale=loss.output_scale,
                    allowed=allowed,
                )
            else:
                return cfg.penalty(cfg.alpha / fit.weight_scale)
            # class weights divided by their largest (weight_scale) shrink the loss by that
            # factor; alpha / weight_scale keeps the minimiser of the weighted objective.
            # 'auto': the non-private part 1/N in the penalty's own form, the noise's part L2
            # (unchanged for L2)
            base = policy.sklearn_alpha(n_public) / fit.weight_scale
            return cfg.penalty(alpha / fit.weight_scale).with_l2_beyond(base)

        pen = penalty(getattr(schedule, "alpha_rule", "consistent"), mu_left)
        l2 = pen.l2  # the penalty's smooth part: strong convexity, and in the smoothness
        # an intercept and a public target range: what a regressor's intercept-only model needs
        public_range = fit_intercept and getattr(loss, "y_bound", None) is not None
        self.rows, self.bound, self.penalty, self.schedule = rows, bound, pen, schedule
        self.setup_ = Setup(
            progress=None,
            loss=loss,
            n_outputs=n_outputs,
            fit_intercept=fit_intercept,
            column=c,
            n_public=n_public,
            relation=relation,
            lipschitz=G,
            row_bound=row_bound,
            penalty=pen,
            data_norm=float(data_norm),
            rows_bound=float(rows_bound),
            problem=Problem(
                n_samples=n_public,
                n_params=n_params,
                sensitivity=2.0 * G if relation == "replace" else G,
                lipschitz=G,
                smoothness=loss_smoothness + l2,
                strong_convexity=l2,
                loss_bound=loss.initial_gap(n_outputs, self.y_bound),
                momentum=cfg.momentum,
                second_order=loss.second_order,
                signal_scale=signal_scale,
                fit_intercept=fit_intercept,
                n_outputs=n_outputs,
                regression_start=bool(loss.warm_start and public_range),
                classifier=not loss.regression,
                regression_select=bool(loss.regression and public_range),
                mechanisms=allowed,
            ),
        )
        self.plan = schedule.plan(self.setup_.problem, mu_left, max_iter)
        self.candidates = None
        if self.plan.mechanism == "choice":
            # each candidate fit: its own penalty and plan for its share of the budget (the
            # calibration gives it exactly that share: Choice.releases)
            self.candidates = []
            for cand_schedule, share in self.plan.candidates:
                mu_k = mu_left * math.sqrt(share)
                pen_k = penalty(getattr(cand_schedule, "alpha_rule", "consistent"), mu_k)
                problem_k = dataclasses.replace(
                    self.setup_.problem,
                    smoothness=loss_smoothness + pen_k.l2,
                    strong_convexity=pen_k.l2,
                )
                setup_k = dataclasses.replace(self.setup_, penalty=pen_k, problem=problem_k)
                plan_k = cand_schedule.plan(problem_k, mu_k, max_iter)
                if plan_k.mechanism == "choice" or plan_k.prior_share > 0:
                    raise ValueError("a choice's candidate is a plain fit (no counts of its own).")
                self.candidates.append(
                    Candidate(
                        mechanism_for(cand_schedule, plan_k, penalty=pen_k), setup_k, plan_k, share
                    )
                )
        self.mechanism = mechanism_for(schedule, self.plan, self.candidates, penalty=pen)

    def releases(self, fit):
        # the Setup carries the fit's Progress from here on (it exists once setup is done)
        self.setup_ = dataclasses.replace(self.setup_, progress=fit.progress)
        return self.mechanism.releases(self.setup_, self.plan)

    def describe(self, fit, releases):
        plan, mechanism = self.plan, self.mechanism
        among = (
            ""
            if self.candidates is None
            else " among " + ", ".join(c.mechanism.name for c in self.candidates)
        )
        return (
            f"{fit.label}: mechanism {mechanism.name}{among} "
            f"({plan.schedule or self.schedule.name}), {plan.n_steps} release(s) of "
            f"{', '.join(r.name for r in releases)}, N (public) = {fit.n_public:g}, "
            f"epsilon = {fit.epsilon:g}, delta = {fit.delta:.3g}"
        )

    def run(self, fit, releases):
        plan, mechanism = self.plan, self.mechanism
        outcome = mechanism.run(self.rows, self.setup_, plan, releases, fit.gen)
        # a mechanism that chose a branch after its first release (WarmStart's switch to the
        # intercept-only model) reports what it released: the same GDP total
        actual = list(outcome.releases) if outcome.releases is not None else list(releases)
        made = fit.setup_releases + actual
        mu = gdp_mu_of_releases(made)
        name = outcome.model or mechanism.name  # the model returned
        # its properties: the mechanism's own, or the returned model's (the intercept-only
        # model, or a choice's candidate)
        model = mechanism if outcome.model is None else MECHANISMS[outcome.model]
        alpha, first = self.penalty.alpha, actual[0]
        if self.candidates is not None:
            # a choice reports the candidate it returned (its plan, penalty and first
            # release); the intercept-only model, the first candidate's penalty
            k = 0 if outcome.candidate is None else outcome.candidate
            plan, alpha = self.candidates[k].plan, self.candidates[k].setup.penalty.alpha
            first = mechanism.split(self.setup_, actual)[0][k][0]
        return RoadResult(
            FullBatchAttributes(
                noise_multipliers_=first.multipliers,
                row_clip_=self.bound,
                row_clip_noise_multiplier_=next(
                    (
                        float(r.multipliers[0])
                        for r in fit.setup_releases
                        if r.name == "row norm sum"
                    ),
                    None,
                ),
                clip_norm_=self.setup_.lipschitz,
                # noisy iterations: gradient or Newton steps; output perturbation's one release of
                # the minimiser; 0 for the intercept-only model and the sufficient statistics
                n_iter_=(plan.n_steps if model.counts_iterations else 0),
                n_iter_theory_=plan.n_iter_theory,
                step_sizes_=plan.step_sizes if model.reports_step_sizes else np.empty(0),
                mu_=mu,
                rho_=mu**2 / 2.0,
                schedule_=(
                    "prior" if model.intercept_only else (plan.schedule or self.schedule.name)
                ),
                data_norm_=self.data_norm,
                alpha_=alpha,
                mechanism_=name,
                # Poisson rates of the Hessian releases (DP damped Newton; public), else None
                hessian_rates_=outcome.hessian_rates,
            ),
            model=(outcome.coef, outcome.intercept),
            releases=None if outcome.releases is None else actual,
        )


def fit_full_batch(
    spec,
    config,
    X,
    y,
    sample_weight,
    loss,
    n_outputs,
    *,
    y_bound=None,
    classes=None,
    y_index=None,
):
    """Fit a linear model privately along :func:`skdpgd._core.fit.private_fit`; return its
    :class:`~skdpgd._core.fitted.FitResult` (``model``: ``coef`` (n_outputs, d), ``intercept``
    (n_outputs,); ``attributes``: :class:`~skdpgd._core.fitted.FullBatchAttributes`).

    ``spec`` is the fit's :class:`~skdpgd._core.fit.PrivacySpec`, ``config`` the road's
    :class:`FullBatchConfig` (with the resolved public row-norm bound, see
    :func:`skdpgd._core.data.resolve_data_norm`). ``y`` is already encoded for the kernel (+-1 for
    binary logistic, class index for multinomial, clipped target for squared loss).
    Classifiers pass ``classes`` and the class index of each row (``y_index``) for
    ``class_weight``.
    """
    road = FullBatchRoad(X, y, loss, n_outputs, config, y_bound=y_bound)
    data = FitRows(X.shape[0], sample_weight=sample_weight, classes=classes, y_index=y_index)
    return private_fit(spec, road, data)

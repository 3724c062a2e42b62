"""The minibatch road (DPSGDClassifier, DPSGDRegressor): :class:`MinibatchRoad` on
:func:`skdpgd._core.fit.private_fit`, the same road as every fit:

    public constants -> schedule (shape over the T steps) -> RDP / PLD accountant (scale the
    shape to the budget at sampling rate q) -> kernel (Poisson sampling, clip, sum, noise).

Privacy model: **add/remove-one** neighbours. Poisson subsampling amplifies privacy only for
that relation (the batch size is random, and dividing by the *expected* size keeps it private).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers

import numpy as np
import scipy.sparse as sp

from .._compute import backends as _backends
from .._compute import kernels as _kernels
from .._compute import kernels_sgd as _kernels_sgd
from .._compute import small_problems as _small_problems
from .. import policy
from .._core.estimators import COMMON_CONSTRAINTS
from .._compat import HasMethods, Interval, StrOptions
from .._core.data import canonical_csr  # noqa: F401 (the one canonical_csr; kept importable here)
from .._core.importance_mask import resolve_importance
from .importance import run_linear
from .._core.data import make_rows
from .._core.fit import FitRows, Road, RoadResult, private_fit
from .._core.fitted import MinibatchAttributes
from .._core.noise import is_secure, kernel_source, side_stream
from .._config import secure_noise
from .._core import prior as _prior
from .._core.prior import PriorSwitch
from .._core.setup import (
    CLASS_COUNT_SENSITIVITY,
    SELECTION_SENSITIVITY,
    require_add_remove_budget,
)
from ..accounting import (
    GaussianDPAccountant,
    Release,
    accountant_named,
    calibrate,
    gdp_delta_upper,
    gdp_mu_of_releases,
    share_multiplier,
    sum_rounding_margin,
    switch_charge,
    switch_scale,
    with_margin,
)
from ..exceptions import DivergenceError
from ..schedules import Exponential, Hong, Problem, Uniform


#: Schedules a minibatch fit accepts by name (T is fixed by ``epochs`` and ``batch_size``, so
#: only the *shape* of a schedule is used; schedules that choose T themselves are refused).
SGD_SCHEDULES = {
    "auto": Uniform(),
    "uniform": Uniform(),
    "hong": Hong(),
    "exponential": Exponential(),
}

#: A run stops (:class:`~skdpgd.exceptions.DivergenceError`) once its iterate could give a
#: margin ``|x~ . theta|`` above this for a row within the public bound: a test on released
#: values, so stopping leaks nothing, and it keeps every margin and gradient finite.
SGD_MAX_MARGIN = 1e150

SGD_CONSTRAINTS = {
    **{
        k: COMMON_CONSTRAINTS[k]
        for k in (
            "epsilon",
            "delta",
            "data_norm",
            "alpha",
            "fit_intercept",
            "intercept_scaling",
            "momentum",
            "random_state",
            "budget",
            "n_samples",
            "verbose",
        )
    },
    "clip_norm": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
    "batch_size": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
    "epochs": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
    "learning_rate": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
    "average": ["boolean"],
    "schedule": [StrOptions(set(SGD_SCHEDULES)), HasMethods(["plan"])],
    "accountant": [StrOptions({"rdp", "pld"})],
    "importance": [None, StrOptions({"auto"}), HasMethods(["stages", "validate"])],
}


def selection_counts(X, y, sample_weight, fit_model, prior_model):
    """``[sum_i w_i [fit right on i], sum_i w_i [prior right on i]]``: the noise-free
    statistic of the binary selection (:meth:`MinibatchRoad._select`). Each model is
    ``(coef, intercept)`` as released (``coef_`` of shape (1, d) applied to the rows as given,
    neither clipped nor divided by the intercept column, ``y`` in {-1, +1}): each count is what
    that model's own ``predict`` gets right (:meth:`skdpgd._compute.backends.Rows.correct_counts`,
    a chunk of dense or CSR rows at a time). Row i adds ``w_i ([fit right] - [prior right])``,
    in [-1, 1], to their difference: :data:`~skdpgd._core.setup.SELECTION_SENSITIVITY`."""
    rows = make_rows(X, y, sample_weight, True)
    return rows.correct_counts([fit_model, prior_model])


def _clipped_rows(X, data_norm):
    """``(X', clip_scale, clipped_norm)``: the rows pre-scaled by the one pre-scaler of every
    road (:func:`skdpgd._compute.backends.prescale_huge_rows`: rows above
    :data:`~skdpgd._compute.backends.PRESCALE_NORM` divided by a power of two, in a copy), the
    scale ``min(pre_i, data_norm / unit_i)`` that clips each stored row to ``data_norm``
    (:func:`~skdpgd._compute.backends.clip_scales`), and ``min(||x_i||, data_norm)``. The
    kernels take their dot products before the scale, so with the iterate within
    :data:`SGD_MAX_MARGIN` no product overflows. X (dense or CSR) is not modified."""
    norms = (
        _kernels_sgd.csr_row_norms(X.data, X.indptr) if sp.issparse(X) else _kernels.row_norms(X)
    )
    X, pre, unit = _backends.prescale_huge_rows(X, norms)
    with np.errstate(over="ignore"):
        clipped = np.minimum(unit * pre, data_norm)
    return X, _backends.clip_scales(unit, pre, data_norm), clipped


@dataclasses.dataclass(frozen=True)
class MinibatchConfig:
    """The minibatch road's own parameters, resolved by the estimator before the fit:
    ``data_norm`` (the public row-norm bound, a float), ``fit_intercept`` (bool),
    ``intercept_scaling`` (float), ``clip_norm``, ``alpha``, ``batch_size``, ``epochs``,
    ``learning_rate`` (each ``'auto'`` or a number: :func:`skdpgd.policy.sgd_defaults`
    resolves them from public values), ``momentum`` (float), ``schedule`` (a name of
    :data:`SGD_SCHEDULES` or a schedule instance), ``average`` (bool), ``accountant``
    (``'rdp'`` or ``'pld'``) and ``importance`` (the parameter: None, ``'auto'`` or a mask).
    The defaults are the estimators' defaults."""

    data_norm: float
    fit_intercept: bool = True
    intercept_scaling: float = 0.5
    clip_norm: object = "auto"
    alpha: object = "auto"
    batch_size: object = "auto"
    epochs: object = "auto"
    learning_rate: object = "auto"
    momentum: float = 0.0
    schedule: object = "auto"
    average: bool = True
    accountant: str = "rdp"
    importance: object = None

    def __post_init__(self):
        object.__setattr__(self, "data_norm", float(self.data_norm))
        object.__setattr__(self, "fit_intercept", bool(self.fit_intercept))
        object.__setattr__(self, "intercept_scaling", float(self.intercept_scaling))
        object.__setattr__(self, "momentum", float(self.momentum))
        object.__setattr__(self, "average", bool(self.average))
        if not (isinstance(self.clip_norm, str) and self.clip_norm == "auto"):
            object.__setattr__(self, "clip_norm", float(self.clip_norm))


class MinibatchRoad(Road):
    """DP-SGD as a road of :func:`skdpgd._core.fit.private_fit`: T Poisson-sampled Gaussian
    releases of clipped gradient sums, accounted under add/remove-one by RDP (or PLD).

    ``X`` is dense float64 or canonical CSR; ``y`` is encoded for the kernel; ``config`` is
    the road's :class:`MinibatchConfig`.
    ``target_scale`` is None for a classifier, the public scale of y for a regressor (it
    selects the regression constant of ``alpha='auto'``, see :func:`skdpgd.policy.sgd_defaults`)."""

    #: a released count is lowered by this many of its noise's standard deviations
    count_margin = policy.current().SGD_COUNT_MARGIN

    def __init__(self, X, y, loss, n_outputs, config, *, y_bound=None, target_scale=None):
        self.X, self.y, self.loss, self.n_outputs = X, y, loss, n_outputs
        self.config, self.data_norm = config, config.data_norm
        self.y_bound, self.target_scale = y_bound, target_scale
        if config.accountant == "pld" and secure_noise():
            raise ValueError(
                "accountant='pld' composes the continuous Gaussian's privacy-loss "
                "distribution; secure mode's discrete Gaussian is accounted in Renyi DP: use "
                "accountant='rdp' (nothing was released)."
            )
        self.accountant = accountant_named(config.accountant)  # "rdp" or "pld"
        # a parameter (public): validated before anything is released
        self.mask = resolve_importance(config.importance)

    def relation(self, spec):
        require_add_remove_budget(spec.budget)
        return "add_remove"

    def charge_immediately(self, fit):
        # delta, and so the whole plan, is a function of the count and the class counts:
        # each is charged as it is drawn, before anything computed from it decides a refusal
        return True

    def setup(self, fit):
        cfg, loss, n_outputs, data_norm = self.config, self.loss, self.n_outputs, self.data_norm
        d = self.X.shape[1]
        fit_intercept = cfg.fit_intercept
        # --- the rounding margin of every released sum (the gradient sums, the class counts),
        # from a public bound on the rows summed (add/remove-one: the released count plus its
        # margin, or the public n_samples; a batch sums a subset of the rows). Each term's norm
        # runs over at most n_outputs (d + 2) coordinates (the importance mask's frozen-margin
        # column included).
        self.margin = sum_rounding_margin(fit.rows_summed_bound(), n_outputs * (d + 2) + 1)
        # --- public constants: parameters and theory only ---
        c = cfg.intercept_scaling * data_norm if fit_intercept else 1.0
        row_bound = math.sqrt(data_norm**2 + c * c) if fit_intercept else data_norm
        g_max = loss.lipschitz(row_bound, n_outputs)
        mu_budget = fit.mu_total
        clip = (
            policy.sgd_clip_factor(mu_budget) * g_max if cfg.clip_norm == "auto" else cfg.clip_norm
        )
        loss_smoothness = loss.smoothness(row_bound, n_outputs)
        # alpha, step, q, T and the normaliser come from the public N and the budget only
        alpha, lr, q, n_steps = policy.sgd_defaults(
            fit.n_public,
            n_outputs * (d + int(fit_intercept)),
            mu_budget,
            clip,
            row_bound,
            loss_smoothness,
            cfg.alpha,
            cfg.batch_size,
            cfg.epochs,
            cfg.learning_rate,
            alpha_noise=(
                None if self.target_scale is None else policy.current().SGD_ALPHA_NOISE_REGRESSION
            ),
            target_scale=1.0 if self.target_scale is None else float(self.target_scale),
        )
        alpha = alpha / fit.weight_scale  # weights divided by their largest: same minimiser
        try:
            loss_bound = loss.initial_gap(n_outputs, self.y_bound)
        except ValueError:  # only the schedules that choose T read B, and T is fixed here
            loss_bound = 1.0
        problem = Problem(
            n_samples=fit.n_public,
            n_params=n_outputs * (d + int(fit_intercept)),
            sensitivity=clip,
            lipschitz=clip,
            smoothness=loss_smoothness + alpha,
            strong_convexity=alpha,
            loss_bound=loss_bound,
            momentum=cfg.momentum,
            sampling_rate=q,
        )
        # --- schedule (shape only); the accountant scales it, composed with the count ---
        schedule = SGD_SCHEDULES[cfg.schedule] if isinstance(cfg.schedule, str) else cfg.schedule
        if isinstance(schedule, Hong) and alpha == 0:
            raise ValueError(
                "schedule='hong' needs alpha > 0 (its shape comes from the "
                "strongly convex rate); use 'uniform' or 'exponential'."
            )
        plan = schedule.plan(problem, mu_budget, n_steps)
        if (
            getattr(schedule, "chooses_n_iter", False)
            or plan.mechanism != "gradient"
            or plan.n_steps != n_steps
        ):
            raise ValueError(
                f"schedule {getattr(schedule, 'name', schedule)!r} chooses its own number of "
                "steps or is not a gradient schedule; a minibatch fit has T = ceil(epochs / q) "
                "steps and uses only the shape of the noise. Use 'uniform', 'hong' or "
                "'exponential'."
            )
        self.c, self.clip, self.alpha, self.lr, self.q, self.n_steps = (
            c,
            clip,
            alpha,
            lr,
            q,
            n_steps,
        )
        self.schedule, self.plan = schedule, plan
        # --- the floor rule (policy.SGD_PRIOR_SWITCH): at a low signal-to-noise ratio, the
        # class counts first; then, by what the public values allow, the intercept-only model
        # decided before any draw, an accounted selection after the fit (binary), or the
        # switch on the released counts (more classes) ---
        self.branch, self.start, self.switch, self.selection = "sgd", None, None, None
        self.decision = None
        rule = policy.sgd_prior_switch(
            fit.n_public,
            problem.n_params,
            mu_budget,
            fit_intercept,
            loss.second_order == "newton",
            isinstance(cfg.schedule, str) and cfg.schedule == "auto",
        )
        if rule is None:
            self._regression_floor(fit, problem, mu_budget, fit_intercept, cfg)
            return
        p, share = rule
        k = self._n_classes()
        binary = None
        if k == 2:
            binary = policy.sgd_binary_rule(self._released_count(fit), problem.n_params, mu_budget)
        if isinstance(binary, tuple) and self._select_setup(fit, *binary[1:]):
            return
        if binary == "prior":
            s0 = policy.current().SGD_BINARY_SELECT[0]
            self._public_prior(
                fit, f"N mu / sqrt(D) below {s0:g} at the released count or public n_samples"
            )
            return
        if binary is not None or p <= 1.0 / k:
            # the shrunk counts' largest share is always at least 1/k: the switch would choose
            # the intercept-only model whatever the data, so choose it now, before any draw
            # (also where the selection's steps cannot be certified at this budget)
            self._public_prior(
                fit,
                f"p = {p:g} <= 1/{k}: the released counts could not choose otherwise"
                if binary is None
                else "the Poisson-sampled steps cannot be certified at this budget",
            )
            return
        if is_secure(fit.gen):
            # the switch's envelope is proven on the continuous Gaussian's privacy-loss
            # distribution of the first release, which secure mode's discrete noise does not
            # have: no switch (a public decision, before any draw)
            fit.notes.append(
                "prior switch: off in secure mode (its envelope is proven for continuous "
                "Gaussian noise); DP-SGD runs from zero."
            )
            return
        self._prior_switch(fit, p, share)

    def _regression_floor(self, fit, problem, mu, fit_intercept, cfg):
        """A regressor with an intercept and a public target range, ``schedule='auto'``,
        below the ratio of :data:`skdpgd.policy.SGD_REGRESSION_SELECT` (at
        :meth:`_released_count`): the full-batch
        regressors' floor on this road (:meth:`_select_setup` with the clipped target sum in
        place of the class counts, the rows predicted closer in place of those predicted
        right). Public quantities only."""
        rule = policy.select_rule(policy.current().SGD_REGRESSION_SELECT)
        if not (
            rule is not None
            and self.loss.regression
            and fit_intercept
            and self.y_bound is not None
            and isinstance(cfg.schedule, str)
            and cfg.schedule == "auto"
            and not math.isinf(mu)
        ):
            return
        snr = policy.signal_to_noise(self._released_count(fit), problem.n_params, mu)
        if snr >= rule[0]:
            return
        share = policy.regression_target_share(rule[1], snr)
        self._select_setup(fit, share, rule[2], regression=True)

    def _released_count(self, fit):
        """The released row count itself (``n_public`` without the margin the steps add to
        it), or the public ``n_samples``: the N the floor rules read."""
        return fit.n_public - (0.0 if fit.z_count is None else self.count_margin * fit.z_count)

    def _n_classes(self):
        return 2 if self.n_outputs == 1 else self.n_outputs

    def _class_counts(self, fit):
        """The weighted class counts ``sum_i w_i [y_i = k]`` (y encoded for the kernel)."""
        k = self._n_classes()
        labels = [-1.0, 1.0] if k == 2 else [float(j) for j in range(k)]
        w, y = fit.sample_weight, self.y
        return np.array([float(np.sum(w[y == lab], dtype=np.float64)) for lab in labels])

    def _gradient_shapes(self):
        # each step's clipped sum moves by clip_norm when a row is added or removed (raised by
        # the rounding margin when calibrated: accounting.calibrate, margin=self.margin)
        return [
            Release(
                "gradient sums",
                self.plan.noise_multipliers,
                {"replace": 2.0 * self.clip, "add_remove": self.clip},
                "add_remove",
                self.q,
            )
        ]

    @staticmethod
    def _second_counts_shapes():
        # the counts again: sensitivity 1 add/remove-one (raised by the rounding margin when
        # calibrated)
        return [Release("class counts", [1.0], dict(CLASS_COUNT_SENSITIVITY), "add_remove")]

    def _public_prior(self, fit, why):
        """The intercept-only model with the whole budget, decided from public values before
        any draw: one Gaussian release of the class counts (sensitivity 1 add/remove-one,
        :data:`CLASS_COUNT_SENSITIVITY`, raised by the rounding margin), calibrated by exact
        GDP composed with the set-up releases (:meth:`releases`, :meth:`Road.calibrate`). No
        branch is paid for that cannot run: no envelope, no DP-SGD calibration."""
        self.branch, self.decision = "prior", "public"
        self.accountant = GaussianDPAccountant()  # one full-batch release
        fit.notes.append(
            f"prior switch: the intercept-only model, decided from public values ({why}); "
            "the whole budget on the class counts."
        )

    def _select_setup(self, fit, count_share, select_share, regression=False):
        """Binary fits below the switch's ratio: three releases, each made whatever the data,
        all fixed here before any draw.

        1. the class counts with ``count_share`` of ``mu^2`` (a set-up release, charged as
           drawn; sensitivity 1 add/remove-one, :data:`CLASS_COUNT_SENSITIVITY`, raised by the
           rounding margin): their shrunk log-odds start DP-SGD, their plain log-odds are the
           intercept-only model;
        2. DP-SGD's T Poisson-sampled gradient sums, calibrated by the road's accountant
           composed with the set-up releases and both of these;
        3. after the fit, with ``select_share`` of ``mu^2``: the weighted number of training
           rows the fit predicts right minus the number the intercept-only model predicts
           right (:func:`skdpgd._core.prior.select`; sensitivity 1 add/remove-one,
           :data:`SELECTION_SENSITIVITY`, raised by the rounding margin).

        The choice between the two models is post-processing of the last release, so the fit
        is the plain composition of its releases: no data-dependent branch, no envelope.
        Returns False (and releases nothing) when the accountant cannot certify the steps at
        this budget (a public fact): the caller then takes the public decision.

        ``regression``: a regressor's floor (:meth:`_regression_floor`): release 1 is the sum
        of the clipped, centred targets (sensitivity ``Y`` add/remove-one,
        :func:`skdpgd._core.prior.target_sensitivity`, raised by the rounding margin), whose noisy
        mean starts DP-SGD's intercept and is the intercept-only model; release 3 is the rows
        whose clipped target the fit predicts closer than that model minus those it predicts
        farther (:meth:`skdpgd._compute.backends.Rows.closer_sum`; each term in [-1, 1]:
        :data:`SELECTION_SENSITIVITY`). Where the steps cannot be certified, the fit goes on
        without the floor (nothing released)."""
        mu = fit.mu_total
        first = Release(
            "target sum (start)" if regression else "class counts (start)",
            [share_multiplier(count_share, mu)],
            with_margin(
                _prior.target_sensitivity(self.y_bound) if regression else CLASS_COUNT_SENSITIVITY,
                self.margin,
            ),
            "add_remove",
        )
        choice = Release(
            "selection: fit minus prior, rows predicted " + ("closer" if regression else "right"),
            [share_multiplier(select_share, mu)],
            with_margin(SELECTION_SENSITIVITY, self.margin),
            "add_remove",
        )
        try:
            grads = calibrate(
                self._gradient_shapes(),
                fit.epsilon,
                fit.delta,
                accountant=self.accountant,
                prior=fit.setup_releases + [first, choice],
                margin=self.margin,
            )
        except ValueError:
            return False
        self.decision = "selection"
        self.selection = {"releases": grads + [choice]}
        # the counts' noise from a jumped copy of the fit's stream (DP-SGD then draws the noise
        # it would draw without them), the selection's from another (common random numbers)
        side = side_stream(fit.gen, 1)
        if regression:
            # release 1 and its intercept-only model (post-processing: noisy_mean)
            total = float(np.dot(fit.sample_weight, np.asarray(self.y, dtype=np.float64)))
            std = float(first.noise_std[0])
            self.prior_mean = _prior.noisy_mean(
                total, std, fit.n_public, self.y_bound, side, first.own_sensitivity
            )
            fit.charges.add(first)
            self.start = np.array([self.prior_mean])
            return True
        self.first = PriorSwitch.release(self._class_counts(fit), first, None, side)
        fit.charges.add(self.first.first)
        self.start = self.first.start()
        return True

    def _prior_switch(self, fit, p, share):
        """Release the class counts with ``share`` of the budget's mu^2 (a set-up release,
        charged as drawn; sensitivity 1 under add/remove-one, :data:`CLASS_COUNT_SENSITIVITY`,
        raised by the rounding margin of the weighted sums); decide on them (post-processing)
        between branch (a), the intercept-only model (a second release of the counts), and
        branch (b), DP-SGD started from their prior.

        Each branch calibrated to the budget composed with the counts is not enough: the
        branches have different privacy curves and the choice depends on the data. Before
        the counts are drawn (everything below is public: N or the released count, T, q, the
        budget), :func:`skdpgd.accounting.switch_scale` bounds the whole fit by the envelope
        ``E_L[max(delta_a(eps - L), delta_b(eps - L))]`` over the counts' privacy loss L (see
        :mod:`skdpgd.accounting.envelope`, docs/theory.md) and returns the smallest common factor on
        both branches' noise multipliers that keeps it within delta at epsilon; both
        branches' releases are fixed here, scaled by it.

        A shared budget is charged, before the counts are drawn, with the counts and the
        per-order maximum of the two branches' RDP curves
        (:func:`skdpgd.accounting.switch_charge`): a bound for the choice at every delta (the
        branch that ran is one only at the fit's delta), which composes with the budget's
        other charges. The intercept-only branch's noise is raised further until that charge
        is within (epsilon, delta) by the budget's arithmetic (its exact GDP calibration is
        tight, its RDP conversion is not), so a budget sized to the fit accepts it; the
        DP-SGD branch is as before."""
        z1 = share_multiplier(share, fit.mu_total)
        # sensitivity 1 (add/remove-one: one weighted count moves by w_i <= 1), raised by the
        # rounding margin of the float64 sums
        counts_sens = with_margin(CLASS_COUNT_SENSITIVITY, self.margin)
        first = fit.setup_releases + [
            Release("class counts (prior)", [z1], counts_sens, "add_remove")
        ]
        branches = {
            "prior": calibrate(
                self._second_counts_shapes(),
                fit.epsilon,
                fit.delta,
                accountant=GaussianDPAccountant(),
                prior=first,
                margin=self.margin,
            ),
        }
        try:
            branches["sgd"] = calibrate(
                self._gradient_shapes(),
                fit.epsilon,
                fit.delta,
                accountant=self.accountant,
                prior=first,
                margin=self.margin,
            )
        except ValueError:
            # the accountant cannot certify the steps at this budget (e.g. epsilon below what
            # RDP's orders reach at this delta): a public fact, so the intercept-only model is
            # the only branch, one Gaussian composition (exact GDP), decided before any draw
            fit.notes.append(
                "prior switch: the Poisson-sampled steps cannot be certified at "
                "this budget; the intercept-only model (a public decision)."
            )
        scaled = {k: list(rels) for k, rels in branches.items()}
        charge, prior_scale, charged = None, 1.0, None
        if len(branches) == 2:
            scale, bound = switch_scale(
                fit.epsilon,
                fit.delta,
                first,
                list(branches.values()),
                accountant=self.accountant,
            )
            # what a shared budget is charged, whichever branch runs: the counts and the
            # per-order maximum of the two branches' RDP curves (valid at every delta by RDP's
            # adaptive composition: skdpgd.accounting.envelope, "What a shared budget is
            # charged"); the prior branch's noise raised until that charge is within the fit's
            # (epsilon, delta) by the budget's own arithmetic (with 'pld', within what the
            # DP-SGD branch alone is charged). Raising a branch's noise only lowers its
            # profile, so the envelope certified at `scale` still holds.
            found = switch_charge(
                fit.epsilon,
                fit.delta,
                first,
                {
                    k: [r.calibrated(r.multipliers * scale, r.sensitivity) for r in rels]
                    for k, rels in branches.items()
                },
                raised="prior",
                within=self.config.accountant == "rdp",
            )
            scaled, prior_scale, charged = found.branches, found.scale, found.epsilon
            charge = [found.event]
        else:
            scale = 1.0
            bound = gdp_delta_upper(fit.epsilon, gdp_mu_of_releases(first + branches["prior"]))
        self.switch = {
            "releases": scaled,
            "noise_scale": scale,
            "envelope_delta": bound,
            "prior_scale": prior_scale,
            "charged_epsilon": charged,
        }
        if scale > 1.0:
            fit.notes.append(
                f"prior switch: both branches' noise raised by {100 * (scale - 1):.3g}% so that "
                f"the fit, whichever branch the released counts choose, stays within epsilon "
                f"= {fit.epsilon:g} at delta = {fit.delta:.3g} (public values only)."
            )
        if prior_scale > 1.0:
            fit.notes.append(
                f"prior switch: the intercept-only branch's noise raised by a further "
                f"{100 * (prior_scale - 1):.3g}% so that a shared budget's charge for either "
                f"branch (Renyi DP) is {charged:.6g} at delta = {fit.delta:.3g}."
            )
        # charged before the counts are drawn: the counts and, with two branches, the bound
        # that holds whichever branch they choose (a refusal comes before any draw); with one
        # branch (decided in public) the fit is the plain composition, charged with its
        # releases
        fit.charges.add(first[-1], main=charge)
        # the counts' noise from a jumped copy of the fit's stream: DP-SGD then draws exactly
        # the noise it would draw without the switch (common random numbers). The release and
        # the decision are the step every road shares (skdpgd._core.prior); the branch is forced
        # to the intercept-only model when the steps could not be certified (public)
        self.decision = "counts"
        side = side_stream(fit.gen, 1)
        self.first = PriorSwitch.release(
            self._class_counts(fit), first[-1], p, side, forced="sgd" not in branches
        )
        if self.first.switched:
            self.branch = "prior"
            self.accountant = GaussianDPAccountant()  # the rest is one full-batch release
        else:
            self.start = self.first.start()

    def releases(self, fit):
        if self.branch == "prior":  # the counts (again), with the rest of the budget
            return self._second_counts_shapes()
        return self._gradient_shapes()

    def calibrate(self, fit, shapes):
        if self.switch is not None:  # fixed at set-up, before the counts were drawn
            return self.switch["releases"][self.branch]
        if self.selection is not None:  # the steps and the selection, fixed at set-up
            return self.selection["releases"]
        return super().calibrate(fit, shapes)

    def spent_epsilon(self, fit, made):
        if self.switch is not None:
            # the whole fit, either branch: the envelope was certified within delta at epsilon
            # (a realised branch's own epsilon is not a bound for a data-dependent choice)
            return fit.epsilon
        return super().spent_epsilon(fit, made)

    def switch_attribute(self, releases=None, selection=None, branch=None):
        """``prior_switch_``: None where the floor rule does not apply; else ``'decision'``
        (``'counts'``: the switch on the released counts, ``'public'``: the intercept-only model
        decided before any draw, ``'selection'``: the accounted choice after the fit), the
        model returned (``'branch'``), the common scale of the branches' noise (1 but for
        the switch), the envelope's certified delta at epsilon (None but for the switch), the
        further scale of the intercept-only branch's noise that keeps a shared budget's charge
        within the fit's budget (``'prior_scale'``, 1 but for the switch with two branches) and
        that charge's epsilon at the fit's delta (``'charged_epsilon'``, None but there), the
        releases of each branch (``releases``: the run's, for a decision with one branch)
        and, for the selection, its released noisy difference and threshold (public and
        released values)."""
        if self.decision is None:
            return None
        if self.switch is not None:
            return {
                "decision": self.decision,
                "branch": self.branch,
                "noise_scale": self.switch["noise_scale"],
                "envelope_delta": self.switch["envelope_delta"],
                "prior_scale": self.switch["prior_scale"],
                "charged_epsilon": self.switch["charged_epsilon"],
                "releases": {k: list(v) for k, v in self.switch["releases"].items()},
            }
        out = {
            "decision": self.decision,
            "branch": self.branch if branch is None else branch,
            "noise_scale": 1.0,
            "envelope_delta": None,
            "prior_scale": 1.0,
            "charged_epsilon": None,
            "releases": {"prior" if self.decision == "public" else "sgd": list(releases)},
        }
        if selection is not None:
            out["selection"] = selection
        return out

    def describe(self, fit, releases):
        if self.branch == "prior":
            return (
                f"{fit.label}: the intercept-only model, one release of the class counts, "
                f"N (public) = {fit.n_public:g}, epsilon = {fit.epsilon:g}, "
                f"delta = {fit.delta:.3g}"
            )
        return (
            f"{fit.label}: {self.n_steps} Poisson-sampled steps at rate q = {self.q:.4g}, "
            f"N (public) = {fit.n_public:g}, epsilon = {fit.epsilon:g}, "
            f"delta = {fit.delta:.3g}"
        )

    def _run_prior(self, fit, releases):
        """The intercept-only model: from the two releases of the counts, combined by their
        inverse variances (the switch; post-processing,
        :meth:`skdpgd._core.prior.PriorSwitch.intercept_only`, the step the full-batch road
        shares), or from the one release of the public decision; coefficients 0."""
        (second,) = releases
        shape = (self.n_outputs, self.X.shape[1])
        if self.decision == "public":
            # one release: the counts plus N(0, s^2) each (sensitivity: _public_prior), its
            # log-odds the intercept (post-processing)
            std = float(_prior._check_counts_release(second).noise_std[0])
            noisy = _prior.noisy(self._class_counts(fit), std, fit.gen, second.own_sensitivity)
            fit.progress.released(second.multipliers, 0, 1)
            coef, intercept = np.zeros(shape), _prior.log_odds(noisy, std)
        else:
            model = self.first.intercept_only(
                self._class_counts(fit), second, fit.gen, shape, fit.progress
            )
            coef, intercept = model.coef, model.intercept
        return RoadResult(
            MinibatchAttributes(
                noise_multipliers_=second.multipliers,
                sampling_rate_=self.q,
                batch_size_=self.q * fit.n_public,
                n_iter_=0,
                clip_norm_=self.clip,
                alpha_=self.alpha,
                learning_rate_=self.lr,
                schedule_="prior",
                accountant_=self.accountant.name,
                data_norm_=self.data_norm,
                importance_kept_=None,
                prior_switch_=self.switch_attribute(releases),
            ),
            model=(coef, intercept),
        )

    def run(self, fit, releases):
        if self.branch == "prior":
            return self._run_prior(fit, releases)
        cfg, X, d = self.config, self.X, self.X.shape[1]
        c, clip, q, n_steps, data_norm = self.c, self.clip, self.q, self.n_steps, self.data_norm
        fit_intercept = cfg.fit_intercept
        z = releases[0].multipliers
        accountant, delta, progress = self.accountant, fit.delta, fit.progress
        # --- kernel, in the coordinates where the intercept column is 1 (see _mechanisms):
        # rows x / c, clip and sensitivity / c, penalty alpha / c^2, step lr c^2, coef' / c ---
        X, clip_scale, clipped_norm = _clipped_rows(X, data_norm)
        row_scale = clip_scale / c
        row_norm_aug = np.sqrt((clipped_norm / c) ** 2 + 1.0) if fit_intercept else clipped_norm
        # public bound on ||x~|| in these coordinates, and the iterate norm that keeps every
        # margin within SGD_MAX_MARGIN (the test reads the released iterate only)
        row_bound_kernel = math.sqrt((data_norm / c) ** 2 + 1.0) if fit_intercept else data_norm
        max_norm = SGD_MAX_MARGIN / max(row_bound_kernel, 1.0)
        steps = np.full(n_steps, self.lr * c * c)
        # each step's noise: z_t times the sum's sensitivity clip_norm, raised by the rounding
        # margin (the release's noise_std), in kernel coordinates
        noise_std = releases[0].noise_std / c
        # the noise source: the generator, or secure mode's lattice release of each step's
        # n_outputs (d + 1) coordinates (sensitivity in kernel coordinates)
        source = kernel_source(
            fit.gen,
            releases[0].own_sensitivity / c,
            self.n_outputs * (d + int(fit_intercept)),
        )
        yc = np.ascontiguousarray(self.y, dtype=np.float64)
        sample_weight = fit.sample_weight
        average_start = (
            n_steps - 1
            if not cfg.average
            else min(n_steps - 1, int(policy.current().SGD_AVERAGE_FROM * n_steps))
        )
        # divide by the expected batch size q N_pub (public)
        common = (
            self.loss.code,
            self.loss.param,
            clip / c,
            fit_intercept,
            self.alpha / (c * c),
            q,
            q * fit.n_public,
            steps,
            noise_std,
            cfg.momentum,
            max_norm,
        )
        if sp.issparse(X):
            run = functools.partial(
                _kernels_sgd.sgd_csr,
                X.data.astype(np.float64, copy=False),
                X.indices.astype(np.int64, copy=False),
                X.indptr.astype(np.int64, copy=False),
                d,
                yc,
                sample_weight,
                row_scale,
                row_norm_aug,
                *common,
            )
        else:
            # a small X steps in numpy, from the same draws: nothing to compile
            sgd = (
                _small_problems.sgd_dense
                if _small_problems.is_small(*X.shape)
                else _kernels_sgd.sgd_dense
            )
            run = functools.partial(sgd, X, yc, sample_weight, row_scale, row_norm_aug, *common)
        state = _kernels_sgd.sgd_state(self.n_outputs, d)
        if self.start is not None:  # the prior's intercept (unchanged in kernel coordinates)
            state[1][:] = self.start
        # ten chunks when verbose (the state carries over: the same numbers as one call)
        bounds = np.linspace(0, n_steps, 11 if progress.verbose >= 2 else 2).astype(int)
        importance_info = None
        if self.mask is not None:
            # importance-masked steps: the same T Poisson-sampled Gaussian releases
            # (multipliers z, sensitivity clip_norm: the clip comes after the mask and the
            # scale), the mask and the scale computed from earlier releases only
            # (skdpgd._minibatch.importance)
            bad_step, importance_info = run_linear(
                self.mask,
                X,
                yc,
                sample_weight,
                row_scale,
                row_norm_aug,
                common,
                state,
                n_steps,
                average_start,
                source,
                row_bound_kernel,
                SGD_MAX_MARGIN,
                fit_intercept,
                c,
                on_stage=lambda t1: progress.released_steps(
                    accountant, z[:t1], q, delta, t1, n_steps
                ),
            )
            bounds = []
            if bad_step >= 0:
                raise DivergenceError(
                    f"the fit diverged: after step {bad_step + 1} the iterate's norm was not "
                    f"finite or above the public bound (margins up to {SGD_MAX_MARGIN:g}); the "
                    "fit stopped there. Lower learning_rate or raise alpha."
                )
        for t0, t1 in zip(bounds[:-1], bounds[1:]):
            bad_step = run(state, int(t0), int(t1), average_start, source)
            if bad_step >= 0:  # decided on the released iterate: the message is public too
                raise DivergenceError(
                    f"the fit diverged: after step {bad_step + 1} the iterate's norm was not "
                    f"finite or above {max_norm:.3g} (margins up to {SGD_MAX_MARGIN:g}); the "
                    "fit stopped there. Lower learning_rate or raise alpha."
                )
            progress.released_steps(accountant, z[:t1], q, delta, t1, n_steps)
        k_avg = n_steps - average_start
        coef, intercept = state[4] / k_avg / c, state[5] / k_avg
        schedule_name, selection = self.plan.schedule or self.schedule.name, None
        if self.selection is not None:
            keep, selection = self._select(fit, releases[-1], coef, intercept)
            if not keep:  # the intercept-only model of the released counts
                coef, intercept = np.zeros_like(coef), self._prior_intercept()
                schedule_name = "prior"
        return RoadResult(
            MinibatchAttributes(
                noise_multipliers_=z,
                sampling_rate_=q,
                batch_size_=q * fit.n_public,
                # noisy steps behind the returned model (0: the intercept-only model)
                n_iter_=n_steps if schedule_name != "prior" else 0,
                clip_norm_=clip,
                alpha_=self.alpha,
                learning_rate_=self.lr,
                schedule_=schedule_name,
                accountant_=accountant.name,
                data_norm_=data_norm,
                # released-only: how many features each stage kept (None: importance off)
                importance_kept_=(
                    None if importance_info is None else np.asarray(importance_info["kept"])
                ),
                prior_switch_=self.switch_attribute(
                    releases, selection, "prior" if schedule_name == "prior" else "sgd"
                ),
            ),
            model=(coef, intercept),
        )

    def _prior_intercept(self):
        """The intercept-only model of the released counts (their log-odds, not shrunk: the
        majority of the noisy counts), or a regressor's noisy mean: the selection's second
        candidate."""
        if self.loss.regression:
            return np.array([self.prior_mean])
        return _prior.log_odds(self.first.noisy, self.first.std)

    def _select(self, fit, choice, coef, intercept):
        """The selection's release and decision (:func:`skdpgd._core.prior.select`): each model
        evaluated exactly as released (``coef`` applied to the rows as given, neither clipped
        nor divided by the intercept column: what its ``predict`` computes,
        :meth:`skdpgd._compute.backends.Rows.correct_counts`, chunked, dense or CSR), the noise
        from its own stream. Returns ``(keep_fit, {'noisy_difference', 'threshold'})``."""
        prior = (np.zeros_like(coef), self._prior_intercept())
        if self.loss.regression:  # rows predicted closer minus farther, and 0
            rows = make_rows(self.X, self.y, fit.sample_weight, True)
            right = (rows.closer_sum((coef, intercept), prior), 0.0)
        else:
            right = selection_counts(self.X, self.y, fit.sample_weight, (coef, intercept), prior)
        pick = side_stream(fit.gen, 2)
        keep, noisy = _prior.select(right, choice, fit.n_public, pick)
        fit.progress.released(choice.multipliers, 0, 1)
        threshold = policy.select_threshold(float(choice.noise_std[0]), fit.n_public)
        return keep, {"noisy_difference": noisy, "threshold": threshold}


def fit_minibatch(
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
    target_scale=None,
):
    """Fit a linear model by Poisson-sampled DP-SGD along :func:`skdpgd._core.fit.private_fit`;
    return its :class:`~skdpgd._core.fitted.FitResult` (``model``: ``coef`` (n_outputs, d),
    ``intercept`` (n_outputs,); ``attributes``: :class:`~skdpgd._core.fitted.MinibatchAttributes`).
    ``spec`` is the fit's :class:`~skdpgd._core.fit.PrivacySpec`, ``config`` the road's
    :class:`MinibatchConfig`. See :class:`MinibatchRoad`."""
    road = MinibatchRoad(X, y, loss, n_outputs, config, y_bound=y_bound, target_scale=target_scale)
    data = FitRows(X.shape[0], sample_weight=sample_weight, classes=classes, y_index=y_index)
    return private_fit(spec, road, data)

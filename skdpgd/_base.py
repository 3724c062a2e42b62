"""Plumbing shared by the linear estimators, and the full-batch road.

Every fit goes down :func:`skdpgd._fit.private_fit`; :class:`FullBatchRoad` is what the
full-batch estimators (DPLogisticRegression, DPRidge) add to it: the row-norm statistic, the
public constants, the mechanism (:mod:`skdpgd._mechanisms`, :mod:`skdpgd._second_order`)
and its releases. See docs/how_a_fit_works.md.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np
from scipy.special import expit, log_expit, log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from ._compat import HasMethods, Interval, StrOptions
from . import policy
from ._data import (check_sample_weight_dp, decision_scores, is_dask, make_rows,  # noqa: F401
                    resolve_data_norm, resolve_y_bound)
from ._fit import Road, private_fit
from ._mechanism_registry import mechanism_for
from ._mechanisms import Setup
from ._setup import release_norm_sum
from .accounting import (COUNT_BOUND_SIGMAS, RELATIONS, gdp_mu_of_releases, remaining_mu,
                         share_multiplier, sum_rounding_margin, with_margin)
from .schedules import Problem, get_schedule, schedule_names




#: Constraints shared by every full-batch estimator (checked by _compat.fit_context).
COMMON_CONSTRAINTS = {
    "epsilon": [Interval(numbers.Real, 0, np.inf, closed="right")],  # inf: no noise
    "delta": [Interval(numbers.Real, 0, 1, closed="neither"), None],
    "data_norm": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "alpha": [Interval(numbers.Real, 0, None, closed="left"), StrOptions({"auto"})],
    "row_clip": [StrOptions({"auto", "data_norm"})],
    "fit_intercept": ["boolean"],
    "intercept_scaling": [Interval(numbers.Real, 0, None, closed="neither")],
    "schedule": [StrOptions(schedule_names()), HasMethods(["plan"])],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
    "momentum": [Interval(numbers.Real, 0, 1, closed="left")],
    "neighbouring": [StrOptions(set(RELATIONS) | {"auto"})],
    "n_samples": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "random_state": ["random_state"],
    "budget": [HasMethods(["charge"]), None],
    "verbose": ["verbose"],
}


def proba_from_scores(scores):
    """Class probabilities from decision scores: sigmoid (1-D scores) or softmax."""
    if scores.ndim == 1:
        p = expit(scores)
        return np.column_stack([1.0 - p, p])
    return softmax(scores, axis=1)


def log_proba_from_scores(scores):
    """Logarithm of :func:`proba_from_scores`, computed stably."""
    if scores.ndim == 1:
        return np.column_stack([log_expit(-scores), log_expit(scores)])
    return log_softmax(scores, axis=1)


class LinearClassifierMixin(ClassifierMixin):
    """``decision_function``/``predict`` of a linear classifier with ``coef_``,
    ``intercept_`` and ``classes_`` (one score column for two classes)."""

    def decision_function(self, X):
        """Signed distance to the separating hyperplane (one column per class for more than
        two classes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        if is_dask(X):  # a lazy dask array
            scores = decision_scores(self, X, self.coef_, self.intercept_)
            return scores[:, 0] if scores.shape[1] == 1 else scores
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        scores = safe_sparse_dot(X, self.coef_.T, dense_output=True) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        index = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        if is_dask(index):
            classes = self.classes_
            return index.map_blocks(lambda b: classes[b], dtype=classes.dtype)
        return self.classes_[index]


class ProbaFromScoresMixin:
    """``predict_proba``/``predict_log_proba`` from ``decision_function`` (sigmoid or softmax)."""

    def predict_proba(self, X):
        """Class probabilities (sigmoid for two classes, softmax otherwise).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        scores = self.decision_function(X)
        if is_dask(scores):
            k = len(self.classes_)
            if scores.ndim == 1:
                scores = scores[:, None]
            return scores.map_blocks(lambda b: proba_from_scores(b[:, 0] if b.shape[1] == 1
                                                                 else b),
                                     chunks=(scores.chunks[0], (k,)), dtype=np.float64)
        return proba_from_scores(scores)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`, computed stably.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        return log_proba_from_scores(self.decision_function(X))




def row_norm_note(estimate, sigma, data_norm):
    """A line for the ``verbose`` output when the released estimate of the mean clipped row
    norm ``(sum_i w_i min(||x_i||, R) + noise) / N`` (``sigma``: its noise's standard
    deviation) shows that nearly every row is at least ``R = data_norm`` long; else None.
    Post-processing of the release only."""
    if estimate >= (policy.current().ROW_NORM_NOTE_SHARE * data_norm
                    + policy.current().ROW_NORM_NOTE_SIGMAS * sigma):
        return (f"released mean row norm (clipped at data_norm = {data_norm:.4g}): "
                f"{estimate:.4g} (noise std {sigma:.2g}): nearly every row is at least data_norm "
                "long and is clipped to it. Expected if the rows are normalised to data_norm; "
                "otherwise data_norm is below the rows' norms (scale the rows, or raise it).")
    return None


def private_row_clip(norm_sum, n_public, data_norm, mu_total, gen, snr=0.0,
                     sensitivity=None, notes=None, relation="replace"):
    """Choose the row-clipping bound from a Gaussian-mechanism estimate of the mean row norm.

    Releases ``S + N(0, (z R)^2)`` with ``S = sum_i w_i min(||x_i||, R)`` (``norm_sum``),
    ``R = data_norm``, ``w_i`` in [0, 1] (:func:`skdpgd._setup.release_norm_sum`: sensitivity
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
    z = max(share_multiplier(policy.current().ROW_CLIP_MAX_SHARE, mu_total),
            1.0 / (4.0 / (policy.current().ROW_CLIP_TARGET_RELATIVE_ERROR * n)))
    sens = (data_norm if sensitivity is None else float(sensitivity))
    released, release = release_norm_sum(norm_sum, z, {"replace": sens, "add_remove": sens},
                                         relation, gen)
    estimate = released / n
    sigma = z * sens / n
    note = row_norm_note(estimate, sigma, data_norm)  # post-processing of the release
    if note is not None and notes is not None:
        notes.append(note)
    m = min(max(estimate, 2.0 * sigma), data_norm)
    bound = min(data_norm, factor * m)
    return bound, release, min(1.0, m / bound)


class FullBatchRoad(Road):
    """The full-batch road: the row-norm statistic (``row_clip='auto'``), the penalty and the
    mechanism chosen from public constants, releases described by the mechanism
    (:mod:`skdpgd._mechanisms`, :mod:`skdpgd._second_order`) and computed through the rows'
    reductions (:mod:`skdpgd._backends`)."""

    def __init__(self, X, y, loss, n_outputs, *, data_norm, y_bound=None):
        self.X, self.y, self.loss, self.n_outputs = X, y, loss, n_outputs
        self.data_norm, self.y_bound = data_norm, y_bound

    def setup(self, fit):
        est, loss, n_outputs, data_norm = fit.est, self.loss, self.n_outputs, self.data_norm
        n_rows, d = self.X.shape
        relation, epsilon, n_public = fit.relation, fit.epsilon, fit.n_public
        fit_intercept = bool(est.fit_intercept)
        # --- the rounding margin of every released sum needs a public bound on the rows
        # summed: N (replace-one), the noisy count plus COUNT_BOUND_SIGMAS of its noise (a
        # shortfall has probability below 1e-300), or the public n_samples, taken as a bound
        if relation == "replace" or math.isinf(epsilon):
            n_bound = float(n_rows)
        elif fit.z_count is not None:
            n_bound = n_public + COUNT_BOUND_SIGMAS * fit.z_count
        else:
            n_bound = float(est.n_samples)
        self.margin = sum_rounding_margin(n_bound, n_outputs * (d + 1) + 1)

        # --- the row-clipping bound: data_norm, or a private typical norm (a set-up release)
        rows = make_rows(self.X, self.y, fit.sample_weight, fit_intercept)
        bound, norm_share = data_norm, 1.0
        n_params = n_outputs * (d + int(fit_intercept))
        if est.row_clip == "auto":
            norm_sens = with_margin({"replace": data_norm, "add_remove": data_norm},
                                    self.margin)
            bound, norm_release, norm_share = private_row_clip(
                rows.norm_sum(data_norm), n_public, data_norm, fit.mu_total, fit.gen,
                policy.signal_to_noise(n_public, n_params, fit.mu_total), norm_sens[relation],
                notes=fit.notes if est.data_norm is not None else None, relation=relation)
            fit.charges.add(norm_release)
        mu_left = remaining_mu(fit.mu_total, fit.prior)

        # --- public constants (theory, parameters, or released above; never the data) ---
        # the intercept's column holds the constant c = intercept_scaling * bound
        c = float(est.intercept_scaling) * bound if fit_intercept else 1.0
        rows.clip_rows(bound, c)
        row_bound = math.sqrt(bound ** 2 + c * c) if fit_intercept else bound
        G = loss.lipschitz(row_bound, n_outputs)
        loss_smoothness = loss.smoothness(row_bound, n_outputs)
        schedule = get_schedule(est.schedule)
        max_iter = None if est.max_iter == "auto" else int(est.max_iter)
        # public: the released estimate
        signal_scale = norm_share ** policy.current().AUTO_SIGNAL_POWER
        if est.alpha == "auto":  # public: N, D, the loss's constants and the budget left
            alpha = policy.auto_alpha(getattr(schedule, "alpha_rule", "consistent"), n_public,
                                      n_params, G, row_bound, mu_left, loss.second_order,
                                      max_iter, signal_scale, fit_intercept)
        else:
            alpha = float(est.alpha)
        # class weights divided by their largest (weight_scale) shrink the loss by that
        # factor; alpha / weight_scale keeps the minimiser of the weighted objective
        alpha = alpha / fit.weight_scale
        self.rows, self.bound, self.alpha, self.schedule = rows, bound, alpha, schedule
        self.setup_ = Setup(
            progress=None,
            loss=loss, n_outputs=n_outputs, fit_intercept=fit_intercept, column=c,
            n_public=n_public, relation=relation, lipschitz=G, row_bound=row_bound,
            alpha=alpha, data_norm=float(data_norm),
            problem=Problem(
                n_samples=n_public,
                n_params=n_params,
                sensitivity=2.0 * G if relation == "replace" else G,
                lipschitz=G,
                smoothness=loss_smoothness + alpha,
                strong_convexity=alpha,
                loss_bound=loss.initial_gap(n_outputs, self.y_bound),
                momentum=float(est.momentum),
                second_order=loss.second_order,
                signal_scale=signal_scale,
                fit_intercept=fit_intercept,
                n_outputs=n_outputs,
                regression_start=bool(loss.warm_start and fit_intercept
                                      and getattr(loss, "y_bound", None) is not None),
            ))
        self.plan = schedule.plan(self.setup_.problem, mu_left, max_iter)
        self.mechanism = mechanism_for(schedule, self.plan)

    def releases(self, fit):
        # the Setup carries the fit's Progress from here on (it exists once setup is done)
        self.setup_ = dataclasses.replace(self.setup_, progress=fit.progress)
        return self.mechanism.releases(self.setup_, self.plan)

    def describe(self, fit, releases):
        plan, mechanism = self.plan, self.mechanism
        return (f"{fit.label}: mechanism {mechanism.name} "
                f"({plan.schedule or self.schedule.name}), {plan.n_steps} release(s) of "
                f"{', '.join(r.name for r in releases)}, N (public) = {fit.n_public:g}, "
                f"epsilon = {fit.epsilon:g}, delta = {fit.delta:.3g}")

    def run(self, fit, releases):
        plan, mechanism = self.plan, self.mechanism
        coef, intercept = mechanism.run(self.rows, self.setup_, plan, releases, fit.gen)
        # a mechanism that chose a branch after its first release (WarmStart's switch to the
        # intercept-only model) reports what it released: the same GDP total
        actual = getattr(mechanism, "actual_releases", None) or releases
        made = fit.prior + list(actual)
        mu = gdp_mu_of_releases(made)
        return {
            "coef": coef,
            "intercept": intercept,
            "actual_releases": actual,
            "noise_multipliers_": actual[0].multipliers,
            "row_clip_": self.bound,
            "row_clip_noise_multiplier_": next(
                (float(r.multipliers[0]) for r in fit.prior if r.name == "row norm sum"), None),
            "clip_norm_": self.setup_.lipschitz,
            # noisy iterations: gradient or Newton steps; output perturbation's one release of
            # the minimiser; 0 for the intercept-only model and the sufficient statistics
            "n_iter_": (plan.n_steps if mechanism.name in ("gradient", "newton", "output")
                        else 0),
            "n_iter_theory_": plan.n_iter_theory,
            "step_sizes_": plan.step_sizes if mechanism.name == "gradient" else np.empty(0),
            "mu_": mu,
            "rho_": mu ** 2 / 2.0,
            "schedule_": ("prior" if mechanism.name == "prior"
                          else (plan.schedule or self.schedule.name)),
            "data_norm_": self.data_norm,
            "alpha_": self.alpha,
            "mechanism_": mechanism.name,
            # Poisson rates of the Hessian releases (DP damped Newton; public), else None
            "hessian_rates_": getattr(mechanism, "rates_used", None),
        }


def fit_full_batch(est, X, y, sample_weight, loss, n_outputs, *, data_norm, y_bound=None,
                   classes=None, y_index=None):
    """Fit a linear model privately along :func:`skdpgd._fit.private_fit`; return the fitted
    attributes as a dict (``coef`` (n_outputs, d), ``intercept`` (n_outputs,) and every
    privacy attribute).

    ``y`` is already encoded for the kernel (+-1 for binary logistic, class index for
    multinomial, clipped target for squared loss); ``data_norm`` is the resolved public
    row-norm bound (see :func:`resolve_data_norm`). Classifiers pass ``classes`` and the
    class index of each row (``y_index``) for ``class_weight``.
    """
    road = FullBatchRoad(X, y, loss, n_outputs, data_norm=data_norm, y_bound=y_bound)
    return private_fit(est, road, X.shape[0], sample_weight=sample_weight, classes=classes,
                       y_index=y_index)


# --- shared by the full-batch estimators (skdpgd.linear_model, skdpgd.svm, ...) ----------

_PRIVACY_PARAMS_DOC = """
    epsilon : float, default=1.0
        Privacy budget epsilon (> 0). ``np.inf`` disables the noise (a non-private fit with
        the same algorithm).

    delta : float or None, default=None
        Privacy budget delta in (0, 1). None uses ``min(1e-5, 1 / n_samples**2)``, far below
        ``1 / n_samples`` (a delta near 1/n would allow releasing one example in the clear).

    data_norm : float or None, default=None
        Public bound on the L2 norm of a row of X. Rows with a larger norm are scaled down to
        it (per-row clipping) before they touch the model. None infers it from the data as the
        largest row norm and emits a :class:`~skdpgd.PrivacyLeakWarning`, because a bound read
        from the private data is not covered by epsilon.
"""

_ROW_CLIP_DOC = """
    row_clip : {'auto', 'data_norm'}, default='auto'
        The norm rows are clipped to during training. 'data_norm' clips to ``data_norm``.
        'auto' spends a small share of the budget (at most 10% of the GDP mu^2, accounted in
        ``epsilon_``) on a Gaussian-mechanism estimate m of the mean row norm and clips rows
        to ``0.35 max(1, s / 20) ** 0.5 m`` (at most ``data_norm``), ``s = N mu / sqrt(D)`` the
        budget's signal-to-noise ratio: a noisy mechanism pays noise for the worst-case row,
        so with a small budget clipping at a typical norm gives far more signal per unit of
        noise; as the budget grows the factor grows until nothing is clipped, so the fit
        converges to the non-private one. Prediction always uses the rows as given.
"""

_SCHEDULE_PARAMS_DOC = """
    schedule : str or Schedule, default='auto'
        How the noise is spread over the steps, how many steps there are and their size.
        'auto' chooses the mechanism and its schedule from public constants only (DP damped
        Newton or sufficient statistics when the budget's signal-to-noise ratio is high and
        there are at most 256 coefficients, output perturbation above that, noisy gradient
        descent otherwise; see :class:`~skdpgd.schedules.Auto`);
        'uniform': constant noise, T from Hong et al. (2022), Theorem 4.2; 'hong': their
        dynamic schedule (Theorem 4.4, or 4.7 with momentum); 'pur': Fay et al. (2023)
        data-independent schedules; 'output': output perturbation; 'exponential':
        geometrically decaying noise; 'newton': DP damped Newton (logistic losses: a gradient
        and a Hessian release per iteration, the Hessian over a Poisson subsample of the rows
        at a public rate, 4 iterations unless ``max_iter`` says otherwise; 'auto' runs it with
        8 and releases Hessians at iterations 0 and 4 only unless they are cheap, see
        :class:`~skdpgd.schedules.Newton`);
        'ssp': sufficient statistics, one noisy release of ``X'X`` and one of ``X'y``
        (AdaSSP; DPRidge only). A :class:`~skdpgd.schedules.Schedule` instance is
        accepted too. ``schedule_`` tells which one ran.

    max_iter : int or 'auto', default='auto'
        Number of gradient steps. 'auto' lets the schedule choose it from theory and public
        constants (capped at ``skdpgd.policy.MAX_AUTO_ITER``). An integer with
        ``schedule='auto'`` keeps the choice to gradient descent. Choosing it by looking at
        results on the private data (e.g. with GridSearchCV) leaks privacy.

    momentum : float in [0, 1), default=0.0
        Momentum of the gradient steps (bias-corrected moving average of the noisy gradients,
        Hong et al., Eq. 3). 0 is plain gradient descent.

    neighbouring : {'auto', 'replace', 'add_remove'}, default='auto'
        Neighbouring relation the guarantee is stated for: datasets that differ by replacing
        one example (N is public; sensitivity of the gradient sum 2G) or by adding/removing one
        (N is private; sensitivity G; the normaliser is the public ``n_samples``, or a noisy
        count). 'auto' is the relation of ``budget`` when one is given, else replace-one. A
        replace-one fit charged to an add/remove-one budget is refused before anything is
        released: it reads and publishes the exact N, which that budget keeps private.

    n_samples : float or None, default=None
        Only with ``neighbouring='add_remove'``: a public stand-in for the number of training
        rows, used as the normaliser of the average loss, in the schedule's T and in the
        default delta (its value need not be exact: privacy holds whatever it is). None
        releases a noisy count of the rows first, spending 2% of the budget's mu^2
        (accounted). Under replace-one N is public and this is ignored.

    random_state : int, RandomState instance or None, default=None
        Seeds the one generator all noise is drawn from. None (the default) draws fresh
        operating-system entropy for each fit (unaffected by ``np.random.seed``): use it for a
        model you publish. An int or a RandomState makes the noise reproducible by anyone who knows
        it: for experiments (the user guide's "Publishing a model").

    budget : PrivacyBudget or None, default=None
        A shared budget this fit is charged to (see :class:`~skdpgd.PrivacyBudget`); a fit
        that would overspend it raises :class:`~skdpgd.BudgetExceededError` and releases
        nothing.

    verbose : int, default=0
        1 prints what the fit releases (mechanism, number of releases, the public N, the
        budget); 2 adds about ten progress lines (step, epsilon spent so far, elapsed time).
        Only public or already released values are printed: never the training loss, which
        is a function of the private data.
"""

_FITTED_PRIVACY_DOC = """
    epsilon_ : float
        Epsilon spent (an upper bound, computed from the noise actually used; never above
        ``epsilon``).

    delta_ : float
        Delta the guarantee is stated for.

    mu_ : float
        Gaussian-DP parameter of the fit (the whole run, including the row-norm query, is
        mu-GDP, exactly).

    rho_ : float
        zCDP parameter (``mu_**2 / 2``).

    noise_multipliers_ : ndarray of shape (`n_iter_`,)
        Noise standard deviation of each step divided by the sensitivity of the gradient sum.

    n_iter_ : int
        Number of noisy iterations of the returned model: gradient or Newton steps, 1 for
        output perturbation (one release of the minimiser), 0 for the intercept-only model
        and the sufficient statistics.

    n_iter_theory_ : float
        Number of steps the schedule's theory asked for, before the automatic cap.

    step_sizes_ : ndarray of shape (`n_iter_`,)
        Step size of each step.

    schedule_ : str
        The schedule that was used.

    mechanism_ : str
        'gradient' (noisy gradient descent) or 'output' (output perturbation).

    hessian_rates_ : ndarray or None
        DP damped Newton: the public Poisson rate of the rows each Hessian release summed over
        (1: all rows), also when it ran from the warm start of the class prior; None for the
        other mechanisms (and when the warm start switched to the intercept-only model).

    neighbouring_ : str
        'replace-one' or 'add/remove-one'.

    data_norm_ : float
        The public row-norm bound.

    row_clip_ : float
        The norm rows were clipped to during training.

    row_clip_noise_multiplier_ : float or None
        Noise multiplier of the private mean-norm query (``row_clip='auto'``), else None.

    clip_norm_ : float
        Bound on one example's gradient norm (the G of the sensitivity).

    alpha_ : float
        The L2 penalty used.

    n_samples_ : float
        The public N the mechanism used (the true N under replace-one).

    count_noise_multiplier_ : float or None
        Noise multiplier of the noisy row count (add/remove-one without ``n_samples``).

    releases_ : list of Release
        Every Gaussian release of the fit (:class:`skdpgd.accounting.Release`: multipliers,
        relation, sensitivity per relation), which ``mu_`` composes and a budget charges.
"""


class _DPLinearBase(BaseEstimator):
    _parameter_constraints: dict = dict(COMMON_CONSTRAINTS)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = self.random_state is None
        return tags

    def _fit_private(self, X, y, sample_weight, loss, n_outputs, y_bound=None, **classes):
        """Run the private fit and set its attributes (only once it has succeeded)."""
        data_norm = resolve_data_norm(self.data_norm, X)
        fitted = fit_full_batch(self, X, y, sample_weight, loss, n_outputs,
                                data_norm=data_norm, y_bound=y_bound, **classes)
        coef, intercept = fitted.pop("coef"), fitted.pop("intercept")
        self.__dict__.update(fitted)
        return coef, intercept

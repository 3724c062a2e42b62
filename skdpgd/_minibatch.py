"""Plumbing of the minibatch estimators (DPSGDClassifier, DPSGDRegressor).

The same path as the full-batch one (:mod:`skdpgd._base`):

    estimator (validate, public constants) -> schedule (shape over the T steps)
    -> RDP accountant (scale the shape to the budget at sampling rate q)
    -> kernel (Poisson sampling, clip, sum, noise).

Privacy model: **add/remove-one** neighbours. Poisson subsampling amplifies privacy only for
that relation (the batch size is random, and dividing by the *expected* size keeps it private).
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np
import scipy.sparse as sp

from . import _kernels, _kernels_sgd
from ._base import (warn_if_large_delta, COMMON_CONSTRAINTS, DEFAULT_DELTA_CAP, SetupCharges, _generator,
                    default_delta)
from ._compat import HasMethods, Interval, StrOptions
from ._data import canonical_csr  # noqa: F401 (the one canonical_csr; kept importable here)
from ._importance import resolve_importance, run_linear
from ._mechanisms import Progress
from ._public import CLASS_COUNT_SENSITIVITY, resolve_class_weight, resolve_n_samples
from ._rdp import PLDAccountant
from .accounting import GaussianSteps, RDPAccountant, Release, gdp_mu
from .exceptions import DivergenceError
from .schedules import Exponential, Hong, Problem, Uniform

#: Default per-example clip norm as a fraction of the loss's worst-case gradient norm
#: ``G = |l'|_max * sqrt(data_norm^2 + c^2)``. Noise is paid for the clip norm, and most
#: examples' gradients are far below the worst case once the model starts to fit, so clipping
#: at a fraction of it buys signal per unit of noise at a small bias. A public constant: it
#: never reads the data. 0.25 (was 0.5) was chosen with the new defaults on the design half of
#: benchmarks/suite (classification and regression, both protocols): it gains most at small
#: epsilon and loses nothing measurable at epsilon = inf (tests against scikit-learn's SGD).
SGD_CLIP_FACTOR = 0.25

#: The clip factor rises to 1 as the budget grows: ``1 - (1 - SGD_CLIP_FACTOR) exp(-mu /
#: SGD_CLIP_RELAX_MU)`` with ``mu = gdp_mu(epsilon, delta)``. Clipping below G only pays for
#: itself against noise; without noise it is a bias (it down-weights the badly fitted rows,
#: measured on a TF-IDF set at epsilon = inf: train accuracy 0.970 against scikit-learn's
#: 0.987). mu is about 1-3 at epsilon 3-10 (factor 0.26-0.29) and ~1e3 at epsilon 1e6 (1).
SGD_CLIP_RELAX_MU = 50.0


def sgd_clip_factor(mu):
    """The fraction of the loss's gradient bound G that ``clip_norm='auto'`` clips to."""
    return 1.0 - (1.0 - SGD_CLIP_FACTOR) * math.exp(-mu / SGD_CLIP_RELAX_MU)

# --- the defaults ('auto') of alpha, the number of steps and the batch size -------------------
# All are functions of public quantities only: the public N (``n_samples`` or the noisy count),
# the number of parameters p, the budget's GDP mu = gdp_mu(epsilon, delta), and the loss's
# public constants (clip norm C, row bound r, smoothness M). See :func:`sgd_defaults`.

#: The non-private part of ``alpha='auto'``: scikit-learn's ``SGDClassifier()`` /
#: ``SGDRegressor()`` default (same objective normalisation: mean loss + alpha/2 ||w||^2).
SGD_ALPHA_BASE = 1e-4

#: ``c`` in the budget-aware part of ``alpha='auto'``, ``c sqrt(p) C r / (N mu s)``: the
#: regularisation that balances the bias ``alpha R^2 / 2`` against the noise term
#: ``p sigma^2 / alpha`` with ``sigma = C / (N mu)``, which is ``sqrt(2 p) sigma / R``. With a
#: comparator whose outputs ``x . w`` are of size ``R0 s`` for rows of norm r (R = R0 s / r),
#: ``c = sqrt(2) / R0``; s is 1 for a classifier (R0 in logits) and the public target scale
#: (``y_bound``, else the Huber threshold) for a regressor, so that alpha does not change
#: when y is rescaled. One constant per task, chosen on the design half of the benchmark suite.
SGD_ALPHA_NOISE = 0.1
SGD_ALPHA_NOISE_REGRESSION = 0.5

#: Number of steps: ``T = SGD_FLOW * kappa`` (flow time ``eta T = SGD_FLOW / alpha``, what
#: gradient descent needs to contract the error in the flattest direction), within
#: [SGD_MIN_STEPS, SGD_MAX_STEPS].
SGD_FLOW = 2.0
SGD_MIN_STEPS = 100
SGD_MAX_STEPS = 20_000

#: Batch size: ``b = SGD_BATCH_FACTOR * N mu / sqrt(T)`` (so that ``q^2 T >= mu^2``: below it
#: the subsampled Gaussian's noise multiplier falls under ~1 and each step costs more privacy
#: per unit of signal), at least SGD_MIN_BATCH, and at most what keeps the run within
#: SGD_MAX_EPOCHS expected passes over the data (the fit time).
SGD_BATCH_FACTOR = 1.0
SGD_MIN_BATCH = 32
SGD_MAX_EPOCHS = 30.0

#: Without a public ``n_samples`` the fit releases a noisy count ``N~ = N + z_c N(0, 1)``; the
#: mechanism then uses ``N~ + SGD_COUNT_MARGIN * z_c`` (post-processing, free), an upper
#: confidence bound on N. An N that is too small makes the normalised gradient ``N / N_pub``
#: times too large, so the constant step ``1 / (M + alpha)`` overshoots and the fit is thrown
#: far off (measured at epsilon 0.01-0.1 on a 331-row set: the noisy count came out as 1); an N
#: that is too large only shrinks the model towards 0, which is the safe side when the count
#: is that noisy.
SGD_COUNT_MARGIN = 2.0

#: ``learning_rate='auto'`` is ``SGD_LR_FACTOR / (M + alpha)``.
SGD_LR_FACTOR = 1.0


def sgd_defaults(n_public, n_params, mu, clip, row_bound, smoothness, alpha="auto",
                 batch_size="auto", epochs="auto", learning_rate="auto", alpha_noise=None,
                 target_scale=1.0):
    """Resolve the 'auto' hyperparameters of DP-SGD from public quantities only.

    Parameters
    ----------
    n_public : float
        The public N (``n_samples``, or the accounted noisy count).
    n_params : int
        Number of trained parameters p (weights and intercepts).
    mu : float
        GDP parameter of the whole budget, ``gdp_mu(epsilon, delta)`` (inf: no noise).
    clip, row_bound, smoothness : float
        Per-example clip norm C, bound r on the augmented row norm, loss smoothness M.
    alpha, batch_size, epochs, learning_rate : float or 'auto'
        The estimator's parameters; given values are kept.
    alpha_noise : float or None
        ``c`` below (None: :data:`SGD_ALPHA_NOISE`, the classifiers' constant).
    target_scale : float
        ``s`` below: 1 for a classifier, the public scale of y for a regressor.

    Returns
    -------
    alpha, learning_rate, sampling_rate, n_steps
        The expected batch size is ``sampling_rate * n_public``.

    Notes
    -----
    * ``alpha = SGD_ALPHA_BASE + c sqrt(p) C r / (N mu s)``. Noisy gradient
      methods with total GDP budget mu see the mean gradient through noise of standard
      deviation ``sigma = C / (N mu)`` per coordinate (summed over the run; for Poisson
      subsampling in the regime ``q^2 T >= mu^2``, as the batch rule below keeps it). With an
      L2 penalty alpha, the excess risk is bounded by ``alpha R^2 / 2 + p sigma^2 / alpha``,
      smallest at ``alpha = sqrt(2 p) sigma / R``; with the comparator's outputs of size
      ``R0 s`` (R = R0 s / r) this is the formula with ``c = sqrt(2) / R0``. The second
      term vanishes as epsilon grows (mu -> inf), leaving scikit-learn's default.
    * ``T = SGD_FLOW * kappa`` with ``kappa = (M + alpha) / alpha`` and the step
      ``1 / (M + alpha)``: the flow time ``eta T`` is ``SGD_FLOW / alpha``, what it takes to
      contract the error along the flattest direction; the tail average then removes the
      wandering. Bounded to [SGD_MIN_STEPS, SGD_MAX_STEPS].
    * ``b = SGD_BATCH_FACTOR * N mu / sqrt(T)``, at least SGD_MIN_BATCH, at most
      ``SGD_MAX_EPOCHS * N / T`` (fit time) and N.
    """
    n_public = float(n_public)
    if alpha == "auto":
        c = SGD_ALPHA_NOISE if alpha_noise is None else float(alpha_noise)
        noise = 0.0 if math.isinf(mu) else (
            c * math.sqrt(n_params) * clip * row_bound / (n_public * mu * target_scale))
        alpha = SGD_ALPHA_BASE + noise
    alpha = float(alpha)
    if learning_rate == "auto":
        learning_rate = SGD_LR_FACTOR / (smoothness + alpha)
    learning_rate = float(learning_rate)
    if epochs != "auto" and batch_size != "auto":
        q = min(1.0, float(batch_size) / n_public)
        return alpha, learning_rate, q, max(1, math.ceil(float(epochs) / q))
    if alpha > 0:
        kappa = (smoothness + alpha) / alpha
        t_target = int(min(SGD_MAX_STEPS, max(SGD_MIN_STEPS, math.ceil(SGD_FLOW * kappa))))
    else:
        t_target = SGD_MAX_STEPS
    if batch_size == "auto":
        if epochs != "auto":  # the batch whose steps give the target T
            b = float(epochs) * n_public / t_target
        else:
            b = n_public if math.isinf(mu) else (
                SGD_BATCH_FACTOR * n_public * mu / math.sqrt(t_target))
            b = min(b, SGD_MAX_EPOCHS * n_public / t_target)
        b = max(b, SGD_MIN_BATCH)
        q = min(1.0, math.ceil(b) / n_public)
    else:
        q = min(1.0, float(batch_size) / n_public)
    if epochs == "auto":
        n_steps = t_target
    else:
        n_steps = max(1, math.ceil(float(epochs) / q))
    return alpha, learning_rate, q, n_steps

#: Schedules a minibatch fit accepts by name (T is fixed by ``epochs`` and ``batch_size``, so
#: only the *shape* of a schedule is used; schedules that choose T themselves are refused).
SGD_SCHEDULES = {"auto": Uniform(), "uniform": Uniform(), "hong": Hong(),
                 "exponential": Exponential()}

#: ``average=True`` returns the mean of the iterates over the last half of the run (tail
#: averaging, post-processing of the released steps): with a constant step, the last iterate
#: of noisy SGD wanders around the optimum, and for the hinge loss its intercept drifts.
SGD_AVERAGE_FROM = 0.5

#: A run stops (:class:`~skdpgd.exceptions.DivergenceError`) once its iterate could give a
#: margin ``|x~ . theta|`` above this for a row within the public bound: a test on released
#: values, so stopping leaks nothing, and it keeps every margin and gradient finite.
SGD_MAX_MARGIN = 1e150

#: Rows whose norm is above this are scaled to ``data_norm`` in a copy before the run, so that
#: the kernels' dot products (taken before the row's scale is applied) cannot overflow with an
#: iterate within :data:`SGD_MAX_MARGIN`. Same model, up to rounding.
SGD_PRESCALE_NORM = 1e100

SGD_CONSTRAINTS = {
    **{k: COMMON_CONSTRAINTS[k] for k in (
        "epsilon", "delta", "data_norm", "alpha", "fit_intercept", "intercept_scaling",
        "momentum", "random_state", "budget", "n_samples", "verbose")},
    "clip_norm": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
    "batch_size": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
    "epochs": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
    "learning_rate": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
    "average": ["boolean"],
    "schedule": [StrOptions(set(SGD_SCHEDULES)), HasMethods(["plan"])],
    "accountant": [StrOptions({"rdp", "pld"})],
    "importance": [None, StrOptions({"auto"}), HasMethods(["stages", "validate"])],
}


def _row_factors(X, bound):
    """Per-row scale ``min(1, bound / ||x_i||)`` and the clipped norms (dense or CSR).

    A finite row whose norm overflows (entries near 1e308) gets
    ``scale = (bound / m) / ||x_i / m||`` with m its largest entry, not 0: it is clipped to
    ``bound`` like any other row instead of being zeroed.
    """
    if sp.issparse(X):
        norms = _kernels_sgd.csr_row_norms(X.data, X.indptr)
        with np.errstate(divide="ignore"):
            scale = np.where(norms > bound, bound / np.where(norms > 0, norms, 1.0), 1.0)
        clipped = np.minimum(norms, bound)
    else:
        with np.errstate(over="ignore"):
            scale, clipped = _kernels.row_clip_factors(X, bound, False)
    for i in np.flatnonzero((scale == 0) & (clipped > 0)):  # the norm overflowed
        if sp.issparse(X):
            row = X.data[X.indptr[i]:X.indptr[i + 1]]
        else:
            row = X[i]
        m = float(np.max(np.abs(row)))
        scale[i] = (bound / m) / float(np.sqrt(np.sum((row / m) ** 2)))
    return scale, clipped


def _prescale_huge_rows(X, clip_scale, kernel_scale, clipped_norm):
    """Apply ``kernel_scale`` to the rows whose norm is above :data:`SGD_PRESCALE_NORM` in a
    copy (their scale becomes 1): the same rows for the kernels, whose dot products (taken
    before the scale) then stay finite. ``clip_scale`` is ``min(1, data_norm / ||x_i||)``.
    X (and its CSR arrays) is not modified; without such rows nothing is copied.
    Returns (X, kernel_scale)."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        raw_norm = clipped_norm / clip_scale
    huge = ~(raw_norm <= SGD_PRESCALE_NORM)
    if not np.any(huge):
        return X, kernel_scale
    scale = np.where(huge, kernel_scale, 1.0)
    if sp.issparse(X):
        X = X.copy()
        X.data = X.data * np.repeat(scale, np.diff(X.indptr))
    else:
        X = X * scale[:, None]
    return X, np.where(huge, 1.0, kernel_scale)


def fit_minibatch(est, X, y, sample_weight, loss, n_outputs, *, data_norm, y_bound=None,
                  classes=None, y_index=None, target_scale=None):
    """Fit a linear model by Poisson-sampled DP-SGD; return the fitted attributes as a dict.

    ``X`` is dense float64 or canonical CSR; ``y`` is encoded for the kernel.
    ``target_scale`` is None for a classifier, the public scale of y for a regressor (it
    selects the regression constant of ``alpha='auto'``, see :func:`sgd_defaults`). The dict holds
    ``coef`` and ``intercept`` (shapes (n_outputs, d) and (n_outputs,)) and the privacy
    attributes; the estimator sets them only once this returns.
    """
    n, d = X.shape
    epsilon = float(est.epsilon)
    fit_intercept = bool(est.fit_intercept)
    gen = _generator(est.random_state)
    accountant = RDPAccountant() if est.accountant == "rdp" else PLDAccountant()
    # a parameter (public): validated before anything is released
    mask = resolve_importance(getattr(est, "importance", None))

    if getattr(est.budget, "neighbouring", "add_remove") != "add_remove":
        raise ValueError(
            "this budget is stated for replace-one neighbours, and Poisson-subsampled fits "
            "are accounted under add/remove-one; create the budget with "
            "neighbouring='add_remove' to share it with DP-SGD fits. Nothing was released.")
    # --- N is private (add/remove-one): a public n_samples, or an accounted noisy count ---
    delta_for_count = DEFAULT_DELTA_CAP if est.delta is None else float(est.delta)
    n_public, z_count = resolve_n_samples(est.n_samples, n, "add_remove",
                                          gdp_mu(epsilon, delta_for_count), gen)
    if z_count is not None:  # post-processing of the released count (see SGD_COUNT_MARGIN)
        n_public += SGD_COUNT_MARGIN * z_count
    delta = default_delta(n_public) if est.delta is None else float(est.delta)
    warn_if_large_delta(delta, n_public, type(est).__name__)
    # delta, and so the whole plan, is a function of the count and the class counts: each is
    # charged as it is drawn, before anything computed from it decides a refusal
    setup_charges = SetupCharges(est.budget, type(est).__name__, immediate=True)
    prior = setup_charges.releases
    if z_count is not None:
        setup_charges.add(Release("row count", [z_count], {"replace": 0.0, "add_remove": 1.0},
                                  "add_remove"))
    # class weights in [0, 1] (public, or from accounted noisy class counts)
    weight_scale = 1.0
    if getattr(est, "class_weight", None) is not None:
        weights, weight_scale, z_cls = resolve_class_weight(
            est.class_weight, classes, y_index, gdp_mu(epsilon, delta), gen, "add_remove")
        sample_weight = sample_weight * weights[y_index]
        if z_cls is not None:  # one example added or removed moves one count by 1
            setup_charges.add(Release("class counts", [z_cls],
                                      dict(CLASS_COUNT_SENSITIVITY), "add_remove"))
    # --- public constants: parameters and theory only ---
    c = float(est.intercept_scaling) * data_norm if fit_intercept else 1.0
    row_bound = math.sqrt(data_norm ** 2 + c * c) if fit_intercept else data_norm
    g_max = loss.lipschitz(row_bound, n_outputs)
    mu_budget = gdp_mu(epsilon, delta)
    clip = (sgd_clip_factor(mu_budget) * g_max if est.clip_norm == "auto"
            else float(est.clip_norm))
    loss_smoothness = loss.smoothness(row_bound, n_outputs)
    # alpha, step, q, T and the normaliser come from the public N and the budget only
    alpha, lr, q, n_steps = sgd_defaults(
        n_public, n_outputs * (d + int(fit_intercept)), mu_budget, clip,
        row_bound, loss_smoothness, est.alpha, est.batch_size, est.epochs, est.learning_rate,
        alpha_noise=None if target_scale is None else SGD_ALPHA_NOISE_REGRESSION,
        target_scale=1.0 if target_scale is None else float(target_scale))
    alpha = alpha / weight_scale  # weights divided by their largest: same minimiser
    try:
        loss_bound = loss.initial_gap(n_outputs, y_bound)
    except ValueError:  # only the schedules that choose T read B, and T is fixed here
        loss_bound = 1.0
    problem = Problem(
        n_samples=n_public, n_params=n_outputs * (d + int(fit_intercept)), sensitivity=clip,
        lipschitz=clip, smoothness=loss_smoothness + alpha, strong_convexity=alpha,
        loss_bound=loss_bound, momentum=float(est.momentum), sampling_rate=q)

    # --- schedule (shape only) -> RDP accountant (scale, composed with the count) ---
    schedule = (SGD_SCHEDULES[est.schedule] if isinstance(est.schedule, str) else est.schedule)
    if isinstance(schedule, Hong) and alpha == 0:
        raise ValueError("schedule='hong' needs alpha > 0 (its shape comes from the "
                         "strongly convex rate); use 'uniform' or 'exponential'.")
    plan = schedule.plan(problem, gdp_mu(epsilon, delta), n_steps)
    if (getattr(schedule, "chooses_n_iter", False) or plan.mechanism != "gradient"
            or plan.n_steps != n_steps):
        raise ValueError(
            f"schedule {getattr(schedule, 'name', schedule)!r} chooses its own number of steps "
            "or is not a gradient schedule; a minibatch fit has T = ceil(epochs / q) steps and "
            "uses only the shape of the noise. Use 'uniform', 'hong' or 'exponential'.")
    z = accountant.calibrate(plan.noise_multipliers, epsilon, delta, sampling_rate=q,
                             prior=[float(r.multipliers[0]) for r in prior])
    # each step's clipped sum moves by clip_norm when a row is added or removed
    steps_release = Release("gradient sums", z, {"replace": 2.0 * clip, "add_remove": clip},
                            "add_remove", q)
    setup_charges.charge_with([steps_release])  # refuses (raises) before the kernel runs

    # --- kernel, in the coordinates where the intercept column is 1 (see _mechanisms):
    # rows x / c, clip and sensitivity / c, penalty alpha / c^2, step lr c^2, coef' / c ---
    clip_scale, clipped_norm = _row_factors(X, data_norm)
    X, row_scale = _prescale_huge_rows(X, clip_scale, clip_scale / c, clipped_norm)
    row_norm_aug = np.sqrt((clipped_norm / c) ** 2 + 1.0) if fit_intercept else clipped_norm
    # public bound on ||x~|| in these coordinates, and the iterate norm that keeps every
    # margin within SGD_MAX_MARGIN (the test reads the released iterate only)
    row_bound_kernel = math.sqrt((data_norm / c) ** 2 + 1.0) if fit_intercept else data_norm
    max_norm = SGD_MAX_MARGIN / max(row_bound_kernel, 1.0)
    steps = np.full(n_steps, lr * c * c)
    noise_std = z * clip / c
    yc = np.ascontiguousarray(y, dtype=np.float64)
    average_start = (n_steps - 1 if not est.average
                     else min(n_steps - 1, int(SGD_AVERAGE_FROM * n_steps)))
    # divide by the expected batch size q N_pub (public)
    common = (loss.code, loss.param, clip / c, fit_intercept, alpha / (c * c), q,
              q * n_public, steps, noise_std, float(est.momentum), max_norm)
    if sp.issparse(X):
        run = functools.partial(
            _kernels_sgd.sgd_csr, X.data.astype(np.float64, copy=False),
            X.indices.astype(np.int64, copy=False), X.indptr.astype(np.int64, copy=False), d,
            yc, sample_weight, row_scale, row_norm_aug, *common)
    else:
        run = functools.partial(_kernels_sgd.sgd_dense, X, yc, sample_weight, row_scale,
                                row_norm_aug, *common)
    state = _kernels_sgd.sgd_state(n_outputs, d)
    progress = Progress(getattr(est, "verbose", 0), delta, prior)
    progress.say(f"{type(est).__name__}: {n_steps} Poisson-sampled steps at rate q = {q:.4g}, "
                 f"N (public) = {n_public:g}, epsilon = {epsilon:g}, delta = {delta:.3g}")
    # ten chunks when verbose (the state carries over: the same numbers as one call)
    bounds = np.linspace(0, n_steps, 11 if progress.verbose >= 2 else 2).astype(int)
    importance_info = None
    if mask is not None:
        # importance-masked steps: the same T Poisson-sampled Gaussian releases (multipliers
        # z, sensitivity clip_norm: the clip comes after the mask and the scale), the mask and
        # the scale computed from earlier releases only (skdpgd._importance)
        bad_step, importance_info = run_linear(
            mask, X, yc, sample_weight, row_scale, row_norm_aug, common, state, n_steps,
            average_start, gen, row_bound_kernel, SGD_MAX_MARGIN, fit_intercept, c,
            on_stage=lambda t1: progress.released_steps(accountant, z[:t1], q, delta, t1,
                                                        n_steps))
        bounds = []
        if bad_step >= 0:
            raise DivergenceError(
                f"the fit diverged: after step {bad_step + 1} the iterate's norm was not finite "
                f"or above the public bound (margins up to {SGD_MAX_MARGIN:g}); the fit "
                "stopped there. Lower learning_rate or raise alpha.")
    for t0, t1 in zip(bounds[:-1], bounds[1:]):
        bad_step = run(state, int(t0), int(t1), average_start, gen)
        if bad_step >= 0:  # decided on the released iterate: the message is public too
            raise DivergenceError(
                f"the fit diverged: after step {bad_step + 1} the iterate's norm was not finite "
                f"or above {max_norm:.3g} (margins up to {SGD_MAX_MARGIN:g}); the fit stopped "
                "there. Lower learning_rate or raise alpha.")
        progress.released_steps(accountant, z[:t1], q, delta, t1, n_steps)
    k_avg = n_steps - average_start
    coef, intercept = state[4] / k_avg, state[5] / k_avg
    coef = coef / c

    releases = prior + [steps_release]
    return {
        "coef": coef,
        "intercept": intercept,
        "noise_multipliers_": z,
        "releases_": releases,
        "sampling_rate_": q,
        "batch_size_": q * n_public,
        "n_iter_": n_steps,
        "n_samples_": n_public,
        "count_noise_multiplier_": z_count,
        "clip_norm_": clip,
        "alpha_": alpha,
        "learning_rate_": lr,
        "delta_": delta,
        # the calibration verified this composition at epsilon (RDP upper bound)
        "epsilon_": _composed_epsilon(accountant, prior, z, q, delta, epsilon),
        "schedule_": plan.schedule or schedule.name,
        "neighbouring_": "add/remove-one",
        "accountant_": accountant.name,
        "data_norm_": data_norm,
        # released-only: how many features each stage kept (None: importance off)
        "importance_kept_": (None if importance_info is None
                             else np.asarray(importance_info["kept"])),
    }


def _composed_epsilon(accountant, prior, z, q, delta, epsilon):
    """Epsilon of the count (if any) and the steps, composed in RDP (never above epsilon:
    the calibration checked the composition at epsilon)."""
    steps = [GaussianSteps(z, q)]
    if prior:
        steps.insert(0, GaussianSteps([r.multipliers[0] for r in prior], 1.0))
    if math.isinf(epsilon):
        return math.inf
    return min(epsilon, accountant.epsilon(steps, delta))

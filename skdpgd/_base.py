"""Plumbing shared by the full-batch estimators.

The path of ``epsilon`` from ``fit`` to the noise draw, in one pass:

    estimator (validate, public constants) -> schedule (shape, T, step sizes)
    -> accountant (scale the shape to the budget) -> kernel (clip, sum, draw the noise).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from scipy.special import expit, log_expit, log_softmax, softmax
from sklearn.utils import check_random_state
from sklearn.base import ClassifierMixin
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from ._backends import make_rows
from ._compat import HasMethods, Interval, StrOptions
from ._mechanism_registry import mechanism_for
from ._mechanisms import Progress, Setup
from ._public import CLASS_COUNT_SENSITIVITY, resolve_class_weight, resolve_n_samples
from .accounting import (COUNT_BOUND_SIGMAS, GaussianDPAccountant, Release, gdp_epsilon,
                         gdp_mu_of_releases, sum_rounding_margin, with_margin)
from .exceptions import PrivacyLeakWarning, PrivacyUsageWarning
from . import policy
from .schedules import Problem, get_schedule, schedule_names

NEIGHBOURING = {"replace": "replace-one", "add_remove": "add/remove-one"}

#: Names that moved to :mod:`skdpgd.policy`; still importable from here (read from there).
_POLICY_NAMES = frozenset({
    "ROW_CLIP_FACTOR", "AUTO_SIGNAL_POWER", "ROW_CLIP_SNR", "ROW_CLIP_POWER",
    "ROW_CLIP_MAX_SHARE", "ROW_CLIP_TARGET_RELATIVE_ERROR", "row_clip_factor",
    "ROW_NORM_NOTE_SHARE", "ROW_NORM_NOTE_SIGMAS",
})


def __getattr__(name):
    if name in _POLICY_NAMES:
        return getattr(policy, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: Default delta: far below 1/n_samples (Dwork and Roth recommend delta << 1/n).
DEFAULT_DELTA_CAP = 1e-5


def default_delta(n_samples):
    """``min(1e-5, 1 / n_samples^2)``: the delta used when ``delta=None``."""
    return min(DEFAULT_DELTA_CAP, 1.0 / float(n_samples) ** 2)


def warn_if_large_delta(delta, n_public, label):
    """A :class:`PrivacyUsageWarning` when ``delta >= 1 / N``. ``n_public`` is public (the row
    count under replace-one, or the ``n_samples`` parameter) or released (a noisy count): the
    check is post-processing and costs no privacy."""
    if n_public is not None and n_public > 0 and float(delta) * float(n_public) >= 1.0:
        warnings.warn(
            f"{label}: delta = {float(delta):.3g} is at least 1/N (N = {float(n_public):.6g}, "
            "public or released). A delta that large allows a mechanism that publishes a "
            "random training row in the clear; use delta well below 1/N (the default, "
            "delta=None, is min(1e-5, 1/N^2)).", PrivacyUsageWarning, stacklevel=3)


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
    "neighbouring": [StrOptions(set(NEIGHBOURING) | {"auto"})],
    "n_samples": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "random_state": ["random_state"],
    "budget": [HasMethods(["charge"]), None],
    "verbose": ["verbose"],
}


def check_sample_weight_dp(sample_weight, n_samples):
    """Sample weights allowed by the sensitivity proof: finite, in [0, 1], one per row.

    Each example contributes ``w_i * clip(grad_i)``, whose norm is at most the clip norm only
    when ``0 <= w_i <= 1``; larger weights would multiply the sensitivity.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    sw = np.asarray(sample_weight, dtype=float)
    if sw.ndim == 0:
        sw = np.full(n_samples, float(sw))
    if sw.ndim != 1 or sw.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight must be 1-D with one entry per sample ({n_samples}), "
            f"got shape {sw.shape}."
        )
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(sw < 0) or np.any(sw > 1):
        raise ValueError(
            "sample_weight must lie in [0, 1]: the privacy guarantee bounds each example's "
            "contribution by the clip norm, and a weight above 1 (or below 0) would break that "
            f"bound. Got weights in [{sw.min():.3g}, {sw.max():.3g}]."
        )
    if n_samples and not np.any(sw > 0):
        raise ValueError("sample_weight is zero for every sample: there is nothing to fit.")
    return np.ascontiguousarray(sw)


def resolve_data_norm(data_norm, X):
    """The public row-norm bound, or (with a PrivacyLeakWarning) the data's largest row norm."""
    if data_norm is not None:
        return float(data_norm)
    if type(X).__module__.split(".")[0] == "dask":
        from ._dask_backend import max_row_norm

        norms = np.array([max_row_norm(X)])
    elif hasattr(X, "tocsr"):  # sparse: row norms without densifying
        from ._kernels_sgd import csr_row_norms

        Xc = X.tocsr()
        norms = csr_row_norms(Xc.data, Xc.indptr) if X.shape[0] else np.zeros(1)
    else:
        norms = np.sqrt(np.einsum("ij,ij->i", X, X)) if X.size else np.zeros(1)
    inferred = float(np.max(norms))
    if not np.isfinite(inferred):
        raise ValueError("cannot infer data_norm: the row norms overflow; pass data_norm.")
    warnings.warn(
        "data_norm was not given, so it was set to the largest row norm of the training data "
        f"({inferred:.4g}). This bound is read from the private data and leaks privacy that "
        "epsilon does not account for. Pass a public data_norm (and scale rows to it) to fix.",
        PrivacyLeakWarning,
        stacklevel=3,
    )
    return inferred if inferred > 0 else 1.0


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
        if type(X).__module__.split(".")[0] == "dask":  # a lazy dask array
            from ._dask_backend import decision_scores

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
        if type(index).__module__.split(".")[0] == "dask":
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
        if type(scores).__module__.split(".")[0] == "dask":
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


def resolve_y_bound(y_bound, y):
    """The public target bound, or (with a PrivacyLeakWarning) the data's largest ``|y|``."""
    if y_bound is not None:
        return float(y_bound)
    inferred = float(np.max(np.abs(y))) if y.size else 1.0
    warnings.warn(
        "y_bound was not given, so it was set to the largest |y| of the training data "
        f"({inferred:.4g}). This bound is read from the private data and leaks privacy "
        "that epsilon does not account for. Pass a public y_bound to fix.",
        PrivacyLeakWarning,
        stacklevel=3,
    )
    return inferred if inferred > 0 else 1.0


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
        return budget_relation if budget_relation in NEIGHBOURING else "replace"
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


def budget_admits_upper_bound(budget, epsilon, delta_max, relation, accountant, label,
                              exact=False):
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
    from .exceptions import BudgetExceededError

    mu_max = accountant.budget(epsilon, delta_max)
    sens = ({"replace": 2.0, "add_remove": 1.0} if relation == "add_remove"
            else {"replace": 1.0, "add_remove": math.inf})
    try:
        check([Release("whole fit (upper bound)", [1.0 / mu_max], sens, relation)], label=label)
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
    """

    def __init__(self, budget, label, immediate):
        self.budget, self.label, self.immediate = budget, label, bool(immediate)
        self.releases = []
        self._charged = 0

    def add(self, release):
        if self.immediate and self.budget is not None:
            self.budget.charge([release], label=f"{self.label} ({release.name})")
            self._charged += 1
        self.releases.append(release)

    def charge_with(self, releases):
        """Charge the fit's main ``releases`` with the set-up releases not yet charged."""
        if self.budget is None:
            return
        from .exceptions import BudgetExceededError

        try:
            self.budget.charge(self.releases[self._charged:] + list(releases), label=self.label)
        except BudgetExceededError as exc:
            if not self._charged:
                raise
            drawn = ", ".join(r.name for r in self.releases[:self._charged])
            raise BudgetExceededError(
                f"{exc} (Except the set-up release(s) drawn before this check, which it "
                f"depends on, and charged then: {drawn}; their cost stays charged.)"
            ) from None


def _generator(random_state):
    """One numpy Generator made from ``random_state``: all noise of a fit comes from it."""
    rs = check_random_state(random_state)
    return np.random.default_rng(rs.randint(0, 2**32 - 1, size=4, dtype=np.uint64))


def row_norm_note(estimate, sigma, data_norm):
    """A line for the ``verbose`` output when the released estimate of the mean clipped row
    norm ``(sum_i w_i min(||x_i||, R) + noise) / N`` (``sigma``: its noise's standard
    deviation) shows that nearly every row is at least ``R = data_norm`` long; else None.
    Post-processing of the release only."""
    if estimate >= (policy.ROW_NORM_NOTE_SHARE * data_norm
                    + policy.ROW_NORM_NOTE_SIGMAS * sigma):
        return (f"released mean row norm (clipped at data_norm = {data_norm:.4g}): "
                f"{estimate:.4g} (noise std {sigma:.2g}): nearly every row is at least data_norm "
                "long and is clipped to it. Expected if the rows are normalised to data_norm; "
                "otherwise data_norm is below the rows' norms (scale the rows, or raise it).")
    return None


def private_row_clip(norm_sum, n_public, data_norm, mu_total, gen, snr=0.0,
                     sensitivity=None, notes=None):
    """Choose the row-clipping bound from a Gaussian-mechanism estimate of the mean row norm.

    Releases ``S + N(0, (z R)^2)`` with ``S = sum_i w_i min(||x_i||, R)`` (``norm_sum``),
    ``R = data_norm``, ``w_i`` in [0, 1]. Replacing, adding or removing one example changes S
    by at most R: the L2 sensitivity is R under both relations (``sensitivity``: R raised by
    the rounding margin of the sum, :func:`skdpgd.accounting.sum_rounding_margin`), so the
    release is ``1/z``-GDP. Returns ``(bound, z)``; ``bound = row_clip_factor(snr) * m`` (at most R)
    where m is the estimate ``S~ / N`` (N public) held inside ``[2 sigma, R]``
    (``sigma = z R / N``, the estimate's noise: a noise-dominated estimate keeps the bound
    conservative rather than tiny). ``z`` is None when mu_total is infinite (no clipping
    below R then, and nothing released). Also returns ``m / bound`` (at most 1; 1 without a
    release), the typical row's share of the clipping bound: a function of the released
    estimate, which the 'auto' rule uses to judge how much signal the budget leaves.
    ``notes`` (a list): receives :func:`row_norm_note`'s line, if any (post-processing).
    """
    n = n_public
    if math.isinf(mu_total):
        return data_norm, None, 1.0
    factor = policy.row_clip_factor(snr)
    mu_q = min(math.sqrt(policy.ROW_CLIP_MAX_SHARE) * mu_total,
               4.0 / (policy.ROW_CLIP_TARGET_RELATIVE_ERROR * n))
    z = 1.0 / mu_q
    sens = data_norm if sensitivity is None else float(sensitivity)
    estimate = (norm_sum + z * sens * gen.standard_normal()) / n
    sigma = z * sens / n
    note = row_norm_note(estimate, sigma, data_norm)  # post-processing of the release
    if note is not None and notes is not None:
        notes.append(note)
    m = min(max(estimate, 2.0 * sigma), data_norm)
    bound = min(data_norm, factor * m)
    return bound, z, min(1.0, m / bound)


def fit_full_batch(est, X, y, sample_weight, loss, n_outputs, *, data_norm, y_bound=None,
                   classes=None, y_index=None):
    """Fit a linear model privately; return the fitted attributes as a dict.

    ``y`` is already encoded for the kernel (+-1 for binary logistic, class index for
    multinomial, clipped target for squared loss); ``data_norm`` is the resolved public
    row-norm bound (see :func:`resolve_data_norm`). Classifiers pass ``classes`` and the
    class index of each row (``y_index``) for ``class_weight``. The dict holds ``coef`` and ``intercept``
    with shapes (n_outputs, d) and (n_outputs,) and every privacy attribute (names ending in
    ``_``); the estimator sets them only once this returns, so a refused or failed fit sets
    nothing.
    """
    n_rows, d = X.shape
    relation = resolve_relation(est.neighbouring, est.budget)
    epsilon = float(est.epsilon)
    fit_intercept = bool(est.fit_intercept)
    accountant = GaussianDPAccountant()
    gen = _generator(est.random_state)
    label = type(est).__name__

    # --- refused or not: on public values before the first draw when the bound allows ---
    delta_for_count = DEFAULT_DELTA_CAP if est.delta is None else float(est.delta)
    n_given = getattr(est, "n_samples", None)
    if est.delta is not None:
        delta_max = float(est.delta)
    elif relation == "replace":  # N is public: the default delta is known
        delta_max = default_delta(n_rows)
    else:
        delta_max = DEFAULT_DELTA_CAP if n_given is None else default_delta(n_given)
    exact = ((est.delta is not None or relation == "replace" or n_given is not None)
             and getattr(est.budget, "neighbouring", None) == relation)
    setup_charges = SetupCharges(est.budget, label, immediate=not budget_admits_upper_bound(
        est.budget, epsilon, delta_max, relation, accountant, label, exact))

    # --- N: public under replace-one; a parameter or an accounted noisy count otherwise ---
    n_public, z_count = resolve_n_samples(
        getattr(est, "n_samples", None), n_rows, relation,
        accountant.budget(epsilon, delta_for_count), gen)
    delta = default_delta(n_public) if est.delta is None else float(est.delta)
    warn_if_large_delta(delta, n_public, label)
    mu_total = accountant.budget(epsilon, delta)
    prior = setup_charges.releases  # releases made to set the fit up (fixed multipliers)
    if z_count is not None:  # a count moves by 1 under add/remove-one, by 0 under replace-one
        setup_charges.add(Release("row count", [z_count], {"replace": 0.0, "add_remove": 1.0},
                                  relation))

    # --- the rounding margin of every released sum needs a public bound on the rows summed:
    # N (replace-one), the noisy count plus COUNT_BOUND_SIGMAS of its noise (a shortfall has
    # probability below 1e-300), or the public n_samples, which is then taken as a bound ---
    if relation == "replace" or math.isinf(epsilon):
        n_bound = float(n_rows)
    elif z_count is not None:
        n_bound = n_public + COUNT_BOUND_SIGMAS * z_count
    else:
        n_bound = float(n_given)
    margin = sum_rounding_margin(n_bound, n_outputs * (d + 1) + 1)

    # --- class weights in [0, 1] (public, or from accounted noisy counts) ---
    weight_scale = 1.0
    if getattr(est, "class_weight", None) is not None:
        weights, weight_scale, z_cls = resolve_class_weight(est.class_weight, classes, y_index,
                                                            mu_total, gen, relation)
        sample_weight = sample_weight * weights[y_index]
        if z_cls is not None:  # relabelling one example moves two counts by 1
            setup_charges.add(Release("class counts", [z_cls],
                                      dict(CLASS_COUNT_SENSITIVITY), relation))

    # --- the row-clipping bound: data_norm, or a private typical norm (a prior release) ---
    rows = make_rows(X, y, sample_weight, fit_intercept)
    bound, norm_share = data_norm, 1.0
    row_notes = []
    n_params = n_outputs * (d + int(fit_intercept))
    if est.row_clip == "auto":
        norm_sens = with_margin({"replace": data_norm, "add_remove": data_norm}, margin)
        bound, z_q, norm_share = private_row_clip(
            rows.norm_sum(data_norm), n_public, data_norm, mu_total, gen,
            policy.signal_to_noise(n_public, n_params, mu_total), norm_sens[relation],
            notes=row_notes if est.data_norm is not None else None)
        if z_q is not None:  # sensitivity R = data_norm under both relations (+ rounding)
            setup_charges.add(Release("row norm sum", [z_q], norm_sens, relation))
    mu_prior = gdp_mu_of_releases(prior)
    if not mu_prior < mu_total:
        raise ValueError("epsilon is too small: the set-up releases would spend all of it.")
    mu_left = math.inf if math.isinf(mu_total) else math.sqrt(mu_total ** 2 - mu_prior ** 2)

    # --- public constants (theory, parameters, or released above; never read from the data) ---
    # the intercept's column holds the constant c = intercept_scaling * bound
    c = float(est.intercept_scaling) * bound if fit_intercept else 1.0
    rows.clip_rows(bound, c)
    row_bound = math.sqrt(bound ** 2 + c * c) if fit_intercept else bound
    G = loss.lipschitz(row_bound, n_outputs)
    loss_smoothness = loss.smoothness(row_bound, n_outputs)
    schedule = get_schedule(est.schedule)
    max_iter = None if est.max_iter == "auto" else int(est.max_iter)
    signal_scale = norm_share ** policy.AUTO_SIGNAL_POWER  # public: the released norm estimate
    if est.alpha == "auto":  # public: N, D, the loss's constants and the budget left
        alpha = policy.auto_alpha(getattr(schedule, "alpha_rule", "consistent"), n_public,
                                  n_params, G, row_bound, mu_left, loss.second_order, max_iter,
                                  signal_scale, fit_intercept)
    else:
        alpha = float(est.alpha)
    # class weights divided by their largest (weight_scale) shrink the loss by that factor;
    # alpha / weight_scale keeps the minimiser of the weighted objective
    alpha = alpha / weight_scale
    progress = Progress(getattr(est, "verbose", 0), delta, prior)
    for note in row_notes:
        progress.say(note)
    setup = Setup(
        progress=progress,
        loss=loss, n_outputs=n_outputs, fit_intercept=fit_intercept, column=c,
        n_public=n_public, relation=relation, lipschitz=G, row_bound=row_bound, alpha=alpha,
        problem=Problem(
            n_samples=n_public,
            n_params=n_params,
            sensitivity=2.0 * G if relation == "replace" else G,
            lipschitz=G,
            smoothness=loss_smoothness + alpha,
            strong_convexity=alpha,
            loss_bound=loss.initial_gap(n_outputs, y_bound),
            momentum=float(est.momentum),
            second_order=loss.second_order,
            signal_scale=signal_scale,
            fit_intercept=fit_intercept,
            n_outputs=n_outputs,
        ))

    # --- mechanism (releases' shapes) -> accountant (scale, composed with the prior ones) ---
    plan = schedule.plan(setup.problem, mu_left, max_iter)
    mechanism = mechanism_for(schedule, plan)
    shapes = mechanism.releases(setup, plan)
    z_all = accountant.calibrate(np.concatenate([r.shape for r in shapes]), epsilon, delta,
                                 prior=np.concatenate([r.multipliers for r in prior])
                                 if prior else ())
    releases, start = [], 0
    for r in shapes:  # each sensitivity raised by the rounding margin of its sum
        releases.append(Release(r.name, z_all[start:start + r.shape.size],
                                with_margin(r.sensitivity, margin), relation))
        start += r.shape.size
    setup_charges.charge_with(releases)  # refuses (raises) before any gradient is computed

    progress.say(f"{type(est).__name__}: mechanism {mechanism.name} ({plan.schedule or schedule.name}), "
                 f"{plan.n_steps} release(s) of {', '.join(r.name for r in releases)}, "
                 f"N (public) = {n_public:g}, epsilon = {epsilon:g}, delta = {delta:.3g}")
    coef, intercept = mechanism.run(rows, setup, plan, releases, gen)
    # a mechanism that chose a branch after its first release (WarmStart's switch to the
    # intercept-only model) reports what it released: the same GDP total under the fit's relation
    releases = getattr(mechanism, "actual_releases", None) or releases

    # --- what was spent (recomputed from every multiplier actually used) ---
    mu = gdp_mu_of_releases(prior + releases)
    # the calibration verified delta(epsilon; mu) <= delta (with its rounding bound), so
    # epsilon itself is a valid upper bound; the search may land a hair above it
    spent = min(epsilon, gdp_epsilon(delta, mu)) if mu > 0 else 0.0
    z_steps = releases[0].multipliers
    return {
        "coef": coef,
        "intercept": intercept,
        "noise_multipliers_": z_steps,
        "releases_": prior + releases,
        "row_clip_": bound,
        "row_clip_noise_multiplier_": next(
            (float(r.multipliers[0]) for r in prior if r.name == "row norm sum"), None),
        "n_samples_": n_public,
        "count_noise_multiplier_": z_count,
        "clip_norm_": G,
        "n_iter_": plan.n_steps if mechanism.name in ("gradient", "newton") else 0,
        "n_iter_theory_": plan.n_iter_theory,
        "step_sizes_": plan.step_sizes if mechanism.name == "gradient" else np.empty(0),
        "mu_": mu,
        "rho_": mu ** 2 / 2.0,
        "delta_": delta,
        "epsilon_": spent,
        "schedule_": "prior" if mechanism.name == "prior" else (plan.schedule or schedule.name),
        "neighbouring_": NEIGHBOURING[relation],
        "data_norm_": data_norm,
        "alpha_": alpha,
        "mechanism_": mechanism.name,
        # Poisson rates of the Hessian releases (DP damped Newton; public), else None
        "hessian_rates_": getattr(mechanism, "rates_used", None),
    }

"""Differentially private linear models fitted by full-batch noisy gradient descent."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import (COMMON_CONSTRAINTS, fit_full_batch, LinearClassifierMixin,
                    ProbaFromScoresMixin)
from ._capability import DP_ESTIMATOR
from ._compat import Interval, StrOptions, fit_context
from ._data import (classification_data, decision_scores, is_dask, regression_data,
                    resolve_data_norm, resolve_y_bound,
                    centred_targets, target_range)
from ._public import CLASS_WEIGHT_DOC as _CLASS_WEIGHT_DOC
from ._public import CLASSES_DOC as _CLASSES_DOC
from ._public import fit_transaction
from .losses import BinaryLogistic, MultinomialLogistic, SquaredError

__all__ = ["DPLogisticRegression", "DPRidge"]

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


class DPLogisticRegression(ProbaFromScoresMixin, LinearClassifierMixin, _DPLinearBase):
    __doc__ = f"""Differentially private logistic regression (binary and multinomial).

    Minimises ``(1/N) sum_i w_i l(theta; x_i, y_i) + alpha/2 ||coef||^2`` (the intercept is
    not penalised) by full-batch gradient descent with Gaussian noise whose schedule is
    calibrated so that the fit spends exactly ``(epsilon, delta)``. Two classes use the binary
    log-loss; more use the multinomial (softmax) loss with one weight row per class.

    Parameters
    ----------
{_PRIVACY_PARAMS_DOC}{_CLASSES_DOC}{_CLASS_WEIGHT_DOC}{_ROW_CLIP_DOC}
    alpha : float or 'auto', default='auto'
        L2 penalty on the weights. It also sets the strong convexity the schedules use.
        'auto' is ``1/N + 0.3 G R sqrt(D) / (N mu)`` (``skdpgd.policy.consistent_alpha``;
        G the gradient bound, R the row bound, D the number of coefficients, mu the GDP
        budget; for output perturbation ``output_alpha``, with 5 instead of 0.3): scikit-learn's
        default ``LogisticRegression()`` penalty (``alpha = 1 / (N C)`` with C = 1) plus a
        term that balances bias against noise and vanishes as epsilon grows, so the fit tends
        to ``LogisticRegression()``'s.

    fit_intercept : bool, default=True
        Whether to fit an intercept.

    intercept_scaling : float, default=0.5
        The intercept is learnt as the weight of a constant column equal to
        ``intercept_scaling * data_norm``. That column enters every example's gradient norm,
        so a value below 1 lowers the sensitivity ``sqrt(data_norm**2 + c**2)`` (less noise for
        the same epsilon) at the price of a slower-moving intercept. The fitted ``intercept_``
        is the effective intercept either way.
{_SCHEDULE_PARAMS_DOC}
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.

    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights (one row for two classes).

    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features, when X has string column names.
{_FITTED_PRIVACY_DOC}
    See Also
    --------
    DPRidge : Differentially private ridge regression.
    sklearn.linear_model.LogisticRegression : The non-private estimator.

    Notes
    -----
    **Privacy.** Each step releases the sum of per-example gradients plus Gaussian noise. Rows are
    scaled to norm at most ``data_norm``, so one example's gradient has norm at most
    ``G = sqrt(data_norm**2 + c**2)`` with ``c = intercept_scaling * data_norm`` (without intercept:
    ``data_norm``), times ``sqrt(2)`` for the multinomial loss; sample weights must lie in [0, 1].
    The sum's sensitivity is ``2G`` (replace-one, the default) or ``G`` (add/remove-one). The steps
    compose exactly as Gaussian DP, and epsilon is the exact (epsilon, delta) curve of that
    composition. What is public: ``data_norm``, N, the number of features and classes, the
    hyperparameters. The class labels themselves are released in ``classes_`` (as in any
    classifier). Noise is drawn with numpy's floating-point Gaussian sampler, which is not hardened
    against floating-point side channels.

    References
    ----------
    Hong, Wang and Zhou (2022), Dynamic privacy budget allocation improves data efficiency of
    differentially private gradient descent. Dong, Roth and Su (2022), Gaussian differential
    privacy.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd import DPLogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 5))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = (X[:, 0] + 0.1 * rng.normal(size=2000) > 0).astype(int)
    >>> clf = DPLogisticRegression(epsilon=1.0, data_norm=1.0, random_state=0).fit(X, y)
    >>> clf.epsilon_ <= 1.0
    True
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._capability
    _skdpgd_privacy = DP_ESTIMATOR

    _parameter_constraints: dict = {
        **_DPLinearBase._parameter_constraints,
        "classes": ["array-like", None],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(self, *, epsilon=1.0, delta=None, data_norm=None, classes=None,
                 class_weight=None, row_clip="auto", alpha="auto", fit_intercept=True,
                 intercept_scaling=0.5, schedule="auto", max_iter="auto", momentum=0.0,
                 neighbouring="auto", n_samples=None, random_state=None, budget=None, verbose=0):
        self.epsilon = epsilon
        self.verbose = verbose
        self.class_weight = class_weight
        self.classes = classes
        self.n_samples = n_samples
        self.delta = delta
        self.data_norm = data_norm
        self.row_clip = row_clip
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.schedule = schedule
        self.max_iter = max_iter
        self.momentum = momentum
        self.neighbouring = neighbouring
        self.random_state = random_state
        self.budget = budget

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model privately.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, dense or sparse (CSR, never densified); rows are clipped to
            ``data_norm``.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Per-example weights in [0, 1] (see the Privacy note).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        with fit_transaction(self):
            data = classification_data(self, X, y, sample_weight, self.classes, dask=(
                True if self.class_weight is None
                else ValueError("class_weight is not supported for dask input yet.")))
            X, classes = data.X, data.classes
            if classes.shape[0] == 2:
                loss, n_outputs = BinaryLogistic(), 1
            else:
                loss, n_outputs = MultinomialLogistic(), classes.shape[0]
            coef, intercept = self._fit_private(X, data.y, data.sample_weight, loss, n_outputs,
                                                classes=classes, y_index=data.y_index)
            self.classes_ = classes
            # computed in float64 (sums of clipped terms must not round past their bound);
            # float32 input gets float32 coefficients, as in scikit-learn
            self.coef_ = coef.astype(data.dtype, copy=False)
            self.intercept_ = intercept.astype(data.dtype, copy=False)
        return self


class DPRidge(RegressorMixin, _DPLinearBase):
    __doc__ = f"""Differentially private ridge regression.

    Minimises ``(1/N) sum_i w_i h(x_i . w + b - y_i) + alpha/2 ||w||^2`` by full-batch noisy
    gradient descent, where ``h`` is the squared loss ``r^2/2`` with each example's gradient
    clipped to ``clip_norm`` (equivalently, a Huber loss with threshold ``clip_norm/||x~_i||``).
    Targets are clipped to the public range ``y_bound`` and centred on its middle.

    Parameters
    ----------
{_PRIVACY_PARAMS_DOC}
    row_clip : {'data_norm', 'auto'}, default='data_norm'
        As in :class:`DPLogisticRegression`, but the default is 'data_norm': a regression's
        predictions scale with x, so training on rows clipped below their norm shrinks the
        fitted function for the rows it clipped.

    y_bound : float, (lo, hi) or None, default=None
        Public range of the targets: a number ``Y`` for ``[-Y, Y]``, or a pair ``(lo, hi)``
        (e.g. ``(0, 16)`` for a score from 0 to 16). Targets are clipped to it, and the fit
        sees them centred on the range's middle (added back to the intercept), so a range far
        from 0 costs no more noise than a centred one. The half-width sets the loss bound
        ``B = half**2 / 2`` and the default clip norm. None infers ``max |y|`` from the data
        with a :class:`~skdpgd.PrivacyLeakWarning`.

    clip_norm : float or 'auto', default='auto'
        Per-example gradient clipping norm (the G of the sensitivity). 'auto' uses
        ``y_bound * sqrt(r**2 + c**2)`` with r the row-clipping bound (``row_clip_``) and c the
        intercept column (0 without intercept): the largest gradient norm at the start, 0.

    alpha : float or 'auto', default='auto'
        L2 penalty on the weights (not the intercept); 'auto' as in
        :class:`DPLogisticRegression` with 1.0 instead of 0.3, so that the fit tends to
        ``Ridge(alpha=1.0)``'s as epsilon grows. scikit-learn's ``Ridge(alpha=a)``
        minimises ``||y - Xw||^2 + a ||w||^2``, which has the same minimiser as ``alpha = a / N``
        here (without clipping).

    fit_intercept : bool, default=True
        Whether to fit an intercept.

    intercept_scaling : float, default=0.5
        The intercept is learnt as the weight of a constant column equal to
        ``intercept_scaling * data_norm`` (see :class:`DPLogisticRegression`).
{_SCHEDULE_PARAMS_DOC}
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Weights.

    intercept_ : float
        Intercept (0.0 when ``fit_intercept=False``), of the dtype of X.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features, when X has string column names.

    y_bound_ : float
        The half-width of the target range the fit used (the bound on the centred targets).

    y_range_ : tuple of float
        The target range ``(lo, hi)`` the targets were clipped to.

{_FITTED_PRIVACY_DOC}
    See Also
    --------
    DPLogisticRegression : Differentially private logistic regression.
    sklearn.linear_model.Ridge : The non-private estimator.

    Notes
    -----
    **Privacy.** Each example's gradient is clipped to norm ``clip_norm`` in closed form (its
    norm is ``|residual| * ||(x, 1)||``), so the gradient sum has sensitivity ``2 clip_norm``
    (replace-one) or ``clip_norm`` (add/remove-one). Rows are clipped to ``data_norm`` and
    targets to ``y_bound``; both must be public for epsilon to hold. Accounting as in
    :class:`DPLogisticRegression` (exact Gaussian DP).

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd import DPRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(5000, 3)) / np.sqrt(3)
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + 0.05 * rng.normal(size=5000)
    >>> reg = DPRidge(epsilon=1.0, data_norm=1.0, y_bound=2.0, random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.8)
    True
    """

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._capability
    _skdpgd_privacy = DP_ESTIMATOR

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "y_bound": [Interval(numbers.Real, 0, None, closed="neither"), "array-like", None],
        "clip_norm": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
    }

    def __init__(self, *, epsilon=1.0, delta=None, data_norm=None, row_clip="data_norm",
                 y_bound=None, clip_norm="auto", alpha="auto", fit_intercept=True,
                 intercept_scaling=0.5, schedule="auto", max_iter="auto", momentum=0.0,
                 neighbouring="auto", n_samples=None, random_state=None, budget=None, verbose=0):
        self.epsilon = epsilon
        self.verbose = verbose
        self.n_samples = n_samples
        self.delta = delta
        self.data_norm = data_norm
        self.row_clip = row_clip
        self.y_bound = y_bound
        self.clip_norm = clip_norm
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.schedule = schedule
        self.max_iter = max_iter
        self.momentum = momentum
        self.neighbouring = neighbouring
        self.random_state = random_state
        self.budget = budget

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a private fit of 200 rows at epsilon=1 has R^2 near 0.05-0.1: scikit-learn's
        # regressor checks keep their shape and error assertions, without the score bar
        tags.regressor_tags.poor_score = True
        return tags

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model privately.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, dense or sparse (CSR, never densified); rows are clipped to
            ``data_norm``.
        y : array-like of shape (n_samples,)
            Targets (clipped to the range ``y_bound``). One target: a y with several
            columns is refused (fit one estimator per target under a shared budget).
        sample_weight : array-like of shape (n_samples,), default=None
            Per-example weights in [0, 1].

        Returns
        -------
        self : object
            The fitted estimator.
        """
        y_shape = getattr(y, "shape", None)
        if y_shape is not None and len(y_shape) == 2 and y_shape[1] > 1:
            raise ValueError(
                f"DPRidge fits one target, got y with {y_shape[1]} columns. Fit one DPRidge "
                "per target: each fit spends its own (epsilon, delta), so share a PrivacyBudget "
                "to account for them together (a joint multi-output release is not offered)."
            )
        with fit_transaction(self):
            X, y, sample_weight, dtype, *_ = regression_data(self, X, y, sample_weight)
            if self.y_bound is None:
                centre, y_bound = 0.0, resolve_y_bound(None, y)
            else:  # public: a bound Y (the range [-Y, Y]) or a range (lo, hi)
                centre, y_bound = target_range(self.y_bound, self.fit_intercept)
            clip_norm = None if self.clip_norm == "auto" else float(self.clip_norm)
            # the fit sees y - centre within [-y_bound, y_bound]: the sensitivities use y_bound
            coef, intercept = self._fit_private(
                X, centred_targets(y, centre, y_bound), sample_weight,
                SquaredError(clip_norm=clip_norm, y_bound=y_bound), 1, y_bound=y_bound)
            self.y_bound_ = y_bound
            self.y_range_ = (centre - y_bound, centre + y_bound)
            self.coef_ = coef[0].astype(dtype, copy=False)
            self.intercept_ = dtype.type(intercept[0] + centre if self.fit_intercept else 0.0)
        return self

    def predict(self, X):
        """Predict targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        if is_dask(X):  # a lazy dask array
            return decision_scores(self, X, self.coef_[None, :], [self.intercept_])[:, 0]
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        return X @ self.coef_ + self.intercept_

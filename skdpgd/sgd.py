"""Differentially private linear models fitted by Poisson-sampled minibatch DP-SGD."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from ._core.estimators import LinearClassifierMixin, log_proba_from_scores, proba_from_scores
from ._core.capability import DP_MINIBATCH_ESTIMATOR, with_privacy
from ._compat import Interval, StrOptions, fit_context
from ._core.data import (
    centred_targets,
    classification_data,
    regression_data,
    resolve_data_norm,
    resolve_y_bound,
    target_range,
)
from ._core.fit import PrivacySpec
from ._core.fitted import set_fitted
from ._minibatch.road import SGD_CONSTRAINTS, MinibatchConfig, fit_minibatch
from ._core.docstrings import CLASS_WEIGHT_DOC as _CLASS_WEIGHT_DOC
from ._core.docstrings import CLASSES_DOC as _CLASSES_DOC
from ._core.transaction import fit_transaction
from .losses import (
    BinaryLogistic,
    Hinge,
    Huber,
    ModifiedHuber,
    MultinomialLogistic,
    SquaredError,
    SquaredHinge,
)

__all__ = ["DPSGDClassifier", "DPSGDRegressor"]

_SGD_PARAMS_DOC = """
    epsilon : float, default=1.0
        Privacy budget epsilon (> 0); ``np.inf`` disables the noise.

    delta : float or None, default=None
        Privacy budget delta in (0, 1). None uses ``min(1e-5, 1 / n_samples**2)``.

    data_norm : float or None, default=None
        Public bound on the L2 norm of a row of X; longer rows are scaled down to it. None
        infers it from the data with a :class:`~skdpgd.PrivacyLeakWarning`.

    clip_norm : float or 'auto', default='auto'
        Each example's gradient (with respect to the weights and the intercept column) is
        clipped to this L2 norm; it is the sensitivity of each step's gradient sum. 'auto'
        is ``f * G`` with G the loss's worst-case gradient norm at ``data_norm`` and
        ``f = 1 - 0.75 * exp(-mu / 50)`` (``mu = gdp_mu(epsilon, delta)``): 0.25 at small
        budgets, where clipping buys signal per unit of noise, rising to 1 (no clipping for
        the Lipschitz losses) as epsilon grows. Public constants only.

    alpha : float or 'auto', default='auto'
        L2 penalty on the weights (not the intercept), in the objective
        ``(1/N) sum_i l_i + alpha/2 ||w||^2`` (scikit-learn's SGD normalisation). 'auto' is
        ``1e-4 + c * sqrt(p) * C * r / (N * mu * s)``: scikit-learn's default plus the
        penalty that balances the noise against the bias (see Notes), which vanishes as
        epsilon grows; p is the number of parameters, C ``clip_norm_``, r the bound on the
        norm of a row with its intercept column, N the public number of rows,
        ``mu = gdp_mu(epsilon, delta)``, s the public scale of the outputs (1 for the
        classifier; ``y_bound``, else the Huber threshold, for the regressor) and c
        ``SGD_ALPHA_NOISE`` (classifier) or ``SGD_ALPHA_NOISE_REGRESSION`` (regressor).

    fit_intercept : bool, default=True
        Whether to fit an intercept.

    intercept_scaling : float, default=0.5
        The intercept is learnt as the weight of a constant column equal to
        ``intercept_scaling * data_norm``.

    batch_size : int or 'auto', default='auto'
        Expected batch size: each row joins each step's batch independently with probability
        ``q = min(1, batch_size / n_samples)`` (Poisson sampling). 'auto' is
        ``SGD_BATCH_FACTOR * N * mu / sqrt(T)`` (the smallest batch whose noise multiplier
        stays near 1 or above, where subsampling amplifies best), at least ``SGD_MIN_BATCH``
        and at most ``SGD_MAX_EPOCHS * N / T`` (fit time).

    epochs : float or 'auto', default='auto'
        Expected number of passes over the data: ``T = ceil(epochs / q)`` steps. 'auto' sets
        ``T = SGD_FLOW * kappa`` with ``kappa = (M + alpha) / alpha`` (M the loss's public
        smoothness), within [``SGD_MIN_STEPS``, ``SGD_MAX_STEPS``]: more steps as epsilon grows
        and alpha shrinks. Fixed in advance from public constants: choosing it on the private
        data leaks privacy.

    learning_rate : float or 'auto', default='auto'
        Constant step size; 'auto' is ``1 / (M + alpha)``.

    momentum : float in [0, 1), default=0.0
        Momentum (bias-corrected moving average of the noisy gradients).

    average : bool, default=True
        Return the average of the iterates over the second half of the run instead of the
        last one (post-processing: no privacy cost). It removes most of the wandering of
        constant-step noisy SGD.

    schedule : {'auto', 'uniform', 'hong', 'exponential'} or Schedule, default='auto'
        Shape of the noise over the T steps ('auto' is 'uniform'). 'exponential' shrinks the
        noise multiplier geometrically by 10x from the first step to the last. 'hong' uses
        the shape of Hong et al.'s dynamic schedule for the public condition number. Only the
        shape is used here: T is fixed by ``epochs``. See Notes for which theory carries over.
        With 'auto', ``loss='log_loss'`` (the classifier) and an intercept, a budget whose
        signal-to-noise ratio ``N mu / sqrt(D)`` is below 5 may return the intercept-only
        model (``schedule_ == 'prior'``, coefficients 0; see ``prior_switch_``):

        * two classes (:data:`skdpgd.policy.SGD_BINARY_SELECT`): the class counts are released
          with 5% of the budget's mu^2 and DP-SGD starts from their prior; after the fit one
          more release, with another 5%, of the weighted number of training rows the fit
          predicts right minus the number the counts' intercept-only model predicts right
          (sensitivity 1) chooses between the two. Every release is made whatever the data, so
          ``epsilon_`` is their plain composition. Where the ratio at the released row count
          (or ``n_samples``) is below 0.5, the whole budget goes to the class counts instead,
          decided before anything is drawn;
        * more classes (:data:`skdpgd.policy.SGD_PRIOR_SWITCH`): the class counts are released
          first with 10% of its mu^2; if one class holds at least half of them (after
          shrinking them by their known noise), the rest goes to a second release of the
          counts and the intercept-only model is returned, otherwise DP-SGD runs from their
          prior. Since the choice depends on the released counts, each branch within epsilon
          is not enough: before the counts are released, both branches' noise is raised by
          the smallest common factor (at most a few percent) that keeps the envelope of the
          two within (epsilon, delta), whichever branch runs (see the theory page). A shared
          ``budget`` is charged, before the counts are drawn, with the counts and the larger
          of the two branches' Renyi-DP curves at each order (a bound for the choice at every
          delta, not the branch that ran); the intercept-only branch's noise is raised (by 5-15%,
          up to 3.5x at very small sampling rates) so that this charge fits (epsilon, delta)
          too.

    random_state : int, RandomState instance or None, default=None
        Seeds the one generator that draws the batches and the noise. None (the default) draws
        fresh operating-system entropy for each fit (unaffected by ``np.random.seed``): use it for
        a model you publish. An int or a RandomState makes the noise reproducible by anyone who
        knows it: for experiments (the user guide's "Publishing a model").

    budget : PrivacyBudget or None, default=None
        A shared budget this fit is charged to (see :class:`~skdpgd.PrivacyBudget`); a fit
        that would overspend it raises :class:`~skdpgd.BudgetExceededError` and releases
        nothing.

    n_samples : float or None, default=None
        A public stand-in for the number of training rows, which is private under
        add/remove-one neighbours: it sets ``q = batch_size / n_samples``, the number of steps
        and the default delta (its value need not be exact; privacy holds whatever it is).
        None releases a noisy count of the rows first, spending 2% of the budget (accounted).

    accountant : {'rdp', 'pld'}, default='rdp'
        How the steps are calibrated and ``epsilon_`` computed. 'rdp': Renyi DP of the
        subsampled Gaussian (fast, built in). 'pld': dp-accounting's privacy-loss distribution
        (pessimistic, an upper bound too; needs ``pip install "skdpgd[accounting]"``): 7-17%
        less noise at the same (epsilon, delta) for long uniform runs (measured: multiplier
        0.977 -> 0.811 at n = 100k, batch 256, 5 epochs, epsilon 1), for ~2-5 s of calibration,
        and only for schedules with at most 64 distinct multipliers. Use it for long runs of
        the uniform schedule. A :class:`~skdpgd.PrivacyBudget` composes in RDP, so it charges a
        PLD-calibrated fit more than its ``epsilon_``.

    verbose : int, default=0
        1 prints what the fit releases; 2 adds about ten progress lines (step, epsilon spent
        so far, elapsed time). Only public or released values are printed.

    importance : None, 'auto' or ImportanceMask, default=None
        Importance-masked DP-SGD (AdaDPIGU, see :class:`~skdpgd.ImportanceMask`): after a
        pre-training share of the steps, only the features whose *released* noisy gradients
        were largest are updated (and noised), the kept share growing back towards all of
        them; optional coordinate-wise scaling before the clip. Same T, q, noise and
        ``epsilon_`` as the plain run. None: off. 'auto': off (it did not win on the
        benchmark suite's tuning sets, see the theory page).
"""

_SGD_FITTED_DOC = """
    epsilon_ : float
        Epsilon spent (an upper bound from the RDP accountant; never above ``epsilon``). With
        the prior switch on the released counts, ``epsilon``: the envelope of its two branches
        is certified there.

    delta_ : float
        Delta the guarantee is stated for.

    noise_multipliers_ : ndarray of shape (`n_iter_`,)
        Noise standard deviation of each step divided by ``clip_norm_``.

    sampling_rate_ : float
        Poisson sampling rate q.

    batch_size_ : float
        Expected batch size ``q * n_samples_`` (the divisor of each step's noisy sum).

    n_iter_ : int
        Number of steps T.

    clip_norm_ : float
        Per-example gradient clip norm (the sensitivity of each step's sum).

    alpha_ : float
        The L2 penalty used.

    learning_rate_ : float
        The step size used.

    schedule_ : str
        The schedule whose shape was used.

    neighbouring_ : str
        Always 'add/remove-one'.

    accountant_ : str
        'rdp' or 'pld'.

    data_norm_ : float
        The public row-norm bound.

    n_samples_ : float
        The public N the mechanism used: ``n_samples``, or the released noisy count plus
        two of its noise standard deviations (``+ 2 * count_noise_multiplier_``), an upper
        confidence bound (post-processing): a too-small N would make every step too long.

    count_noise_multiplier_ : float or None
        Noise multiplier of the noisy row count (None when ``n_samples`` was given).

    noise_ : {'gaussian', 'discrete'}
        The noise the fit drew: ``'gaussian'`` (floating point, the default mode) or
        ``'discrete'`` (exact discrete Gaussian on a lattice, in secure mode: see
        :func:`skdpgd.config_context` and the Security model page).

    releases_ : list of Release
        Every release of the fit (:class:`skdpgd.accounting.Release`), as the accountant and
        a budget see them.

    importance_kept_ : ndarray of int or None
        With ``importance``: the number of features each stage updated (pre-training first);
        None otherwise.

    prior_switch_ : dict or None
        Where ``schedule='auto'`` may return the intercept-only model (see ``schedule``):
        ``'decision'`` ('counts': the switch on the released counts; 'selection': the
        accounted choice after the fit; 'public': the intercept-only model decided before any
        draw), ``'branch'`` ('prior' or 'sgd', the model returned), ``'noise_scale'`` (the
        common factor on both branches' noise multipliers; 1 but for 'counts'),
        ``'envelope_delta'`` (the certified bound on the whole fit's delta at ``epsilon``, at
        most ``delta_``; None but for 'counts'), ``'prior_scale'`` (a further factor on the
        intercept-only branch's noise, so that what a shared ``budget`` is charged for either
        branch fits the fit's own budget; 1 but for 'counts' with two branches),
        ``'charged_epsilon'`` (that charge's epsilon at ``delta_``: a Renyi-DP curve, the
        counts composed with the larger of the two branches' curves at each order, valid at
        every delta; None but there), ``'releases'`` (each branch's calibrated releases,
        public values) and, for 'selection', ``'selection'``: the released noisy
        difference and the threshold it was compared with. When the selection returns the
        intercept-only model, ``n_iter_`` is 0 although the steps ran (they are in
        ``releases_`` and ``noise_multipliers_``). None otherwise.
"""

_SGD_NOTES = """
    **Privacy.** Neighbouring datasets differ by adding or removing one example (the
    relation under which Poisson subsampling amplifies privacy). Each step releases the sum of
    the batch's clipped per-example gradients plus Gaussian noise of standard deviation
    ``noise_multipliers_[t] * clip_norm_``; adding or removing one example changes the sum by
    at most ``clip_norm_`` (sample weights are in [0, 1]). The sum is divided by the expected
    batch size ``q * n_samples_`` (``= batch_size``), which is public. The T steps are accounted as
    Poisson-subsampled Gaussian mechanisms with Renyi DP (Mironov, Talwar and Zhang, 2019),
    converted to (epsilon, delta) with the improved conversion; the schedule's shape is
    scaled so that ``epsilon_`` is the target up to 1e-9 and never above it.

    **Defaults.** Everything 'auto' is a function of public quantities only (N public or the
    accounted noisy count, p, epsilon, delta, ``data_norm``, the loss's constants), never of the
    private rows; the rule and its constants (``SGD_*``) are in :mod:`skdpgd.policy`
    (:func:`skdpgd.policy.sgd_defaults`). As epsilon grows the defaults become scikit-learn's:
    ``alpha_`` tends to 1e-4 (``SGDClassifier()`` / ``SGDRegressor()``, same objective) and the run
    gets longer (T grows with the condition number). The budget-aware part of alpha comes from the
    excess-risk bound of noisy gradient methods: the run sees the mean gradient through noise
    of standard deviation ``sigma = C / (N mu)`` per coordinate, and with a penalty alpha the
    excess risk is at most ``alpha R^2 / 2 + p sigma^2 / alpha`` (R the norm of a good
    model), smallest at ``alpha = sqrt(2 p) sigma / R``. R is not public; its scale
    (margins of size ``R r``) is the one constant chosen on the tuning sets of the benchmark
    suite. T follows the flow time ``eta T = SGD_FLOW / alpha`` that gradient descent needs
    in the flattest direction; the tail average (``average=True``) removes the wandering of
    the constant step. The formulas and the measured table behind them are in the theory page
    of the documentation.

    **Theory.** The accounting holds for any schedule. The utility theory behind the
    schedules (Hong et al.'s bounds) is for full-batch gradient descent; with minibatches the
    'hong' shape is a heuristic, and T, the step size and the clip norm come from public
    constants and the bound above, not from an optimality result for DP-SGD.

    **No partial_fit.** Each call would spend budget on the same examples again; a budget
    that several fits draw from is :class:`~skdpgd.PrivacyBudget`.
"""


class _DPSGDBase(BaseEstimator):
    _parameter_constraints: dict = dict(SGD_CONSTRAINTS)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = self.random_state is None
        return with_privacy(self, tags)  # the capability the concrete class itself declares

    def _validate(self, X, y, sample_weight, classes=None, *, classification):
        """:func:`skdpgd._core.data.classification_data` / ``regression_data`` with X in float64
        (CSR canonical); dask input is refused."""
        refusal = TypeError(
            "DP-SGD does not take dask collections: its Poisson-sampled steps each read a "
            "random subset of rows, which a distributed array serves badly. Use the "
            "full-batch estimators (DPLogisticRegression, DPRidge), which reduce each "
            "release over the chunks in one pass."
        )
        if classification:
            data = classification_data(
                self, X, y, sample_weight, classes, dask=refusal, float64=True, stacklevel=4
            )  # called from fit
        else:
            data = regression_data(self, X, y, sample_weight, dask=refusal, float64=True)
        # the kernels sum in float64; float32 input gets float32 weights back (as in
        # scikit-learn's SGD estimators, whose intercept stays float64)
        self._input_dtype = data.dtype
        return data

    def _fit_private(
        self,
        X,
        y,
        sample_weight,
        loss,
        n_outputs,
        data_norm,
        y_bound=None,
        target_scale=None,
        **classes,
    ):
        """Run DP-SGD and set its attributes (only once it has succeeded)."""
        config = MinibatchConfig(
            data_norm=data_norm,
            fit_intercept=self.fit_intercept,
            intercept_scaling=self.intercept_scaling,
            clip_norm=self.clip_norm,
            alpha=self.alpha,
            batch_size=self.batch_size,
            epochs=self.epochs,
            learning_rate=self.learning_rate,
            momentum=self.momentum,
            schedule=self.schedule,
            average=self.average,
            accountant=self.accountant,
            importance=self.importance,
        )
        fitted = fit_minibatch(
            PrivacySpec.of(self),
            config,
            X,
            y,
            sample_weight,
            loss,
            n_outputs,
            y_bound=y_bound,
            target_scale=target_scale,
            **classes,
        )
        coef, intercept = fitted.model
        set_fitted(self, fitted)
        dtype = self._input_dtype
        del self._input_dtype
        return coef.astype(dtype, copy=False), intercept


class DPSGDClassifier(LinearClassifierMixin, _DPSGDBase):
    __doc__ = f"""Differentially private linear classifier trained by minibatch DP-SGD.

    Shaped like :class:`sklearn.linear_model.SGDClassifier`: minimises
    ``(1/N) sum_i w_i l(x_i . w + b, y_i) + alpha/2 ||w||^2`` by noisy SGD on Poisson-sampled
    batches, compiled with numba; dense or CSR sparse X (never densified).

    Parameters
    ----------
    loss : {{'log_loss', 'hinge', 'modified_huber', 'squared_hinge'}}, default='log_loss'
        'log_loss' is logistic regression (multinomial with more than two classes). The
        margin losses handle two classes.
{_CLASSES_DOC}{_CLASS_WEIGHT_DOC}{_SGD_PARAMS_DOC}
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.

    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights.

    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features, when X has string column names.
{_SGD_FITTED_DOC}
    See Also
    --------
    DPLogisticRegression : Full-batch DP logistic regression (better for small data).
    sklearn.linear_model.SGDClassifier : The non-private estimator.

    Notes
    -----
{_SGD_NOTES}
    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd import DPSGDClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20000, 5)) / np.sqrt(5)
    >>> y = (X[:, 0] + 0.1 * rng.normal(size=20000) > 0).astype(int)
    >>> clf = DPSGDClassifier(epsilon=1.0, data_norm=3.0, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._core.capability
    _skdpgd_privacy = DP_MINIBATCH_ESTIMATOR

    _parameter_constraints: dict = {
        **_DPSGDBase._parameter_constraints,
        "loss": [StrOptions({"log_loss", "hinge", "modified_huber", "squared_hinge"})],
        "classes": ["array-like", None],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(
        self,
        loss="log_loss",
        *,
        epsilon=1.0,
        delta=None,
        data_norm=None,
        classes=None,
        class_weight=None,
        clip_norm="auto",
        alpha="auto",
        fit_intercept=True,
        intercept_scaling=0.5,
        batch_size="auto",
        epochs="auto",
        learning_rate="auto",
        momentum=0.0,
        average=True,
        schedule="auto",
        n_samples=None,
        random_state=None,
        budget=None,
        verbose=0,
        accountant="rdp",
        importance=None,
    ):
        self.loss = loss
        self.accountant = accountant
        self.importance = importance
        self.classes = classes
        self.class_weight = class_weight
        self.n_samples = n_samples
        self.verbose = verbose
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.clip_norm = clip_norm
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.batch_size = batch_size
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.average = average
        self.schedule = schedule
        self.random_state = random_state
        self.budget = budget

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model privately.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-example weights in [0, 1].

        Returns
        -------
        self : object
            The fitted estimator.
        """
        with fit_transaction(self):
            data = self._validate(X, y, sample_weight, self.classes, classification=True)
            X, y_k, sample_weight = data.X, data.y, data.sample_weight
            classes, y_index = data.classes, data.y_index
            if classes.shape[0] > 2 and self.loss != "log_loss":
                raise ValueError(
                    f"loss={self.loss!r} handles two classes; got {classes.shape[0]}. Use "
                    "loss='log_loss' (multinomial) for more classes, or DPLinearSVC (full "
                    "batch, one-vs-rest squared hinge)."
                )
            if classes.shape[0] == 2:
                loss = {
                    "log_loss": BinaryLogistic(),
                    "hinge": Hinge(),
                    "modified_huber": ModifiedHuber(),
                    "squared_hinge": SquaredHinge(),
                }[self.loss]
                n_outputs = 1
            else:
                loss, n_outputs = MultinomialLogistic(), classes.shape[0]
            data_norm = resolve_data_norm(self.data_norm, X)
            coef, intercept = self._fit_private(
                X, y_k, sample_weight, loss, n_outputs, data_norm, classes=classes, y_index=y_index
            )
            self.classes_ = classes
            self.coef_ = coef
            self.intercept_ = intercept
        return self

    def _has_proba(self):
        return self.loss in ("log_loss", "modified_huber")

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities ('log_loss': sigmoid/softmax; 'modified_huber': as
        scikit-learn, ``(clip(f, -1, 1) + 1) / 2``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        scores = self.decision_function(X)
        if self.loss == "modified_huber":
            p = (np.clip(scores, -1.0, 1.0) + 1.0) / 2.0
            return np.column_stack([1.0 - p, p])
        return proba_from_scores(scores)

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        if self.loss == "modified_huber":
            with np.errstate(divide="ignore"):
                return np.log(self.predict_proba(X))
        return log_proba_from_scores(self.decision_function(X))


class DPSGDRegressor(RegressorMixin, _DPSGDBase):
    __doc__ = f"""Differentially private linear regression trained by minibatch DP-SGD.

    Shaped like :class:`sklearn.linear_model.SGDRegressor`; dense or CSR sparse X.

    Parameters
    ----------
    loss : {{'squared_error', 'huber'}}, default='squared_error'
        'squared_error' is ``(z - y)^2 / 2`` (with clipped per-example gradients it acts as a
        Huber loss); 'huber' uses ``huber_threshold``.

    huber_threshold : float, default=0.1
        Threshold of the Huber loss (scikit-learn calls it ``epsilon``, a name taken here by
        the privacy budget; 0.1 is its default too).

    y_bound : float, (lo, hi) or None, default=None
        Public range of the targets: a number ``Y`` for ``[-Y, Y]``, or a pair ``(lo, hi)``.
        Targets are clipped to it and centred on its middle (added back to the intercept).
        Needed by 'squared_error' when ``clip_norm='auto'`` (the clip is
        ``f * half * ||(x, c)||``, ``half`` the range's half-width); None then infers
        ``max |y|`` from the data with a :class:`~skdpgd.PrivacyLeakWarning`. Unused otherwise
        when None.
{_SGD_PARAMS_DOC}
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Weights.

    intercept_ : ndarray of shape (1,)
        Intercept.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features, when X has string column names.

    y_bound_ : float or None
        The half-width of the target range the fit used (the bound on the centred targets).

    y_range_ : tuple of float or None
        The target range ``(lo, hi)`` the targets were clipped to.
{_SGD_FITTED_DOC}
    See Also
    --------
    DPRidge : Full-batch DP ridge regression.
    sklearn.linear_model.SGDRegressor : The non-private estimator.

    Notes
    -----
{_SGD_NOTES}
    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd import DPSGDRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 3)) / np.sqrt(3)
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + 0.05 * rng.normal(size=20000)
    >>> reg = DPSGDRegressor(epsilon=1.0, data_norm=1.0, y_bound=2.0, random_state=0)
    >>> bool(reg.fit(X, y).score(X, y) > 0.8)
    True
    """

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._core.capability
    _skdpgd_privacy = DP_MINIBATCH_ESTIMATOR

    _parameter_constraints: dict = {
        **_DPSGDBase._parameter_constraints,
        "loss": [StrOptions({"squared_error", "huber"})],
        "huber_threshold": [Interval(numbers.Real, 0, None, closed="neither")],
        "y_bound": [Interval(numbers.Real, 0, None, closed="neither"), "array-like", None],
    }

    def __init__(
        self,
        loss="squared_error",
        *,
        huber_threshold=0.1,
        y_bound=None,
        epsilon=1.0,
        delta=None,
        data_norm=None,
        clip_norm="auto",
        alpha="auto",
        fit_intercept=True,
        intercept_scaling=0.5,
        batch_size="auto",
        epochs="auto",
        learning_rate="auto",
        momentum=0.0,
        average=True,
        schedule="auto",
        n_samples=None,
        random_state=None,
        budget=None,
        verbose=0,
        accountant="rdp",
        importance=None,
    ):
        self.loss = loss
        self.accountant = accountant
        self.importance = importance
        self.n_samples = n_samples
        self.verbose = verbose
        self.huber_threshold = huber_threshold
        self.y_bound = y_bound
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.clip_norm = clip_norm
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.batch_size = batch_size
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.average = average
        self.schedule = schedule
        self.random_state = random_state
        self.budget = budget

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # as DPRidge: noise at epsilon=1 on 200 rows
        return tags

    def _skdpgd_reads_if_none(self):
        """``y_bound`` when the fit would read the largest ``|y|`` without it (the squared loss
        with clip_norm='auto'); the leak audit reads this (see :mod:`skdpgd._core.capability`)."""
        return ("y_bound",) if self.loss == "squared_error" and self.clip_norm == "auto" else ()

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model privately.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-example weights in [0, 1].

        Returns
        -------
        self : object
            The fitted estimator.
        """
        with fit_transaction(self):
            X, y, sample_weight, *_ = self._validate(X, y, sample_weight, classification=False)
            data_norm = resolve_data_norm(self.data_norm, X)
            centre, y_bound = 0.0, None
            if self.y_bound is not None:  # public: a bound Y ([-Y, Y]) or a range (lo, hi)
                centre, y_bound = target_range(self.y_bound, self.fit_intercept)
            elif self.loss == "squared_error" and self.clip_norm == "auto":
                y_bound = resolve_y_bound(None, y)
            # the fit sees y - centre within [-y_bound, y_bound]: the sensitivities use y_bound
            y_k = y if y_bound is None else centred_targets(y, centre, y_bound)
            if self.loss == "huber":
                loss = Huber(threshold=float(self.huber_threshold))
            else:
                loss = SquaredError(
                    y_bound=y_bound,
                    clip_norm=(None if self.clip_norm == "auto" else float(self.clip_norm)),
                )
            # public scale of y for alpha='auto' (the bound, else the Huber threshold)
            target_scale = (
                float(y_bound)
                if y_bound is not None
                else float(self.huber_threshold)
                if self.loss == "huber"
                else float(self.clip_norm) / data_norm
            )
            coef, intercept = self._fit_private(
                X,
                y_k,
                sample_weight,
                loss,
                1,
                data_norm,
                y_bound=y_bound,
                target_scale=target_scale,
            )
            self.y_bound_ = None if y_bound is None else float(y_bound)
            self.y_range_ = None if y_bound is None else (centre - y_bound, centre + y_bound)
            self.coef_ = coef[0]
            self.intercept_ = intercept + centre  # centre is 0 without an intercept
        return self

    def predict(self, X):
        """Predict targets.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_[0]

"""Differentially private multi-layer perceptron (optional PyTorch backend).

``import skdpgd.neural`` does not import torch: the backend (:mod:`skdpgd._network.torch_backend`)
is
imported inside ``fit``, and prediction runs in numpy.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._core.estimators import ProbaFromScoresMixin
from ._core.capability import DP_MINIBATCH_ESTIMATOR, with_privacy
from ._compat import HasMethods, Interval, StrOptions, fit_context
from . import policy
from ._compute.kernels import row_clip_factors
from ._core.data import classification_data, resolve_data_norm
from ._core.fit import FitRows, PrivacySpec, private_fit
from ._core.fitted import set_fitted
from ._core.docstrings import CLASSES_DOC
from ._core.transaction import fit_transaction
from ._network.road import TorchConfig, TorchRoad
from .accounting import (
    RELATIONS,
)

__all__ = ["DPMLPClassifier"]


_SCHEDULE_NAMES = {"uniform", "hong", "pur", "exponential"}


def _forward(coefs, intercepts, activation, X):
    """Output-layer scores (logits) in numpy float64."""
    act = {"relu": lambda a: np.maximum(a, 0.0), "tanh": np.tanh, "logistic": expit}[activation]
    a = X
    for k, (W, b) in enumerate(zip(coefs, intercepts)):
        a = a @ W + b
        if k < len(coefs) - 1:
            a = act(a)
    return a


class DPMLPClassifier(ProbaFromScoresMixin, ClassifierMixin, BaseEstimator):
    __doc__ = f"""Differentially private multi-layer perceptron classifier (DP-GD / DP-SGD,
    PyTorch).

    Trains a fully connected network by noisy gradient descent: each example's gradient
    (with respect to all weights) is clipped to ``clip_norm``, the clipped gradients are
    summed, Gaussian noise calibrated to ``(epsilon, delta)`` is added, and the sum is divided
    by the public number of examples. Two classes use one logistic output unit (binary
    log-loss); more classes use a softmax output (cross-entropy). Needs PyTorch for ``fit``
    (its CPU build is enough: see the ImportError's command); prediction runs in numpy.

    Parameters
    ----------
    hidden_layer_sizes : array-like of int, default=(100,)
        Units of each hidden layer.

    activation : {"relu", "tanh", "logistic"}, default='relu'
        Hidden-layer activation.

    epsilon : float, default=1.0
        Privacy budget epsilon (> 0). ``np.inf`` disables the noise (gradients are still
        clipped).

    delta : float or None, default=None
        Privacy budget delta in (0, 1). None uses ``min(1e-5, 1 / n_samples**2)``.

    data_norm : float or None, default=None
        Public bound on the L2 norm of a row of X, as for the linear estimators: rows with a
        larger norm are scaled down to it before they enter the network (prediction uses the
        rows as given). The 'auto' clip norm and step size are set relative to it. None infers
        it from the data as the largest row norm and emits a
        :class:`~skdpgd.PrivacyLeakWarning`, because a bound read from the private data is not
        covered by epsilon.
{CLASSES_DOC}
    class_weight : dict, 'balanced' or None, default=None
        Weights of the classes (scikit-learn's MLPClassifier has none; this is the linear
        classifiers' parameter). Divided by the largest so that every example's weight lies
        in [0, 1] (the privacy proof needs it), with ``learning_rate`` multiplied by the same
        factor so that the steps follow the weighted loss; the noise is not scaled down, so
        the signal-to-noise ratio falls by that factor. 'balanced' releases the class counts
        with Gaussian noise (2% of the budget, accounted).

    clip_norm : float or 'auto', default='auto'
        C: every example's gradient (all layers together) is scaled down to L2 norm at most
        C. Public; it sets the sensitivity. 'auto' is ``r = sqrt(data_norm**2 + 1)``, the
        bound of a row with its bias unit, which is the scale of a gradient
        (``skdpgd.policy.MLP_CLIP_FACTOR``). Choosing it by looking at the private data's
        gradients leaks privacy.

    learning_rate : float or 'auto', default='auto'
        Step size of every step. 'auto' is ``1 / (data_norm**2 + 1)``
        (``skdpgd.policy.MLP_STEP``): the curvature of the loss in each layer's weights grows
        with the squared input norm. (Until 'auto' the default was 0.1.)

    max_iter : int or 'auto', default='auto'
        T, the number of noisy steps. 'auto' takes more steps the larger the budget:
        ``T = 30 N mu / sqrt(D)`` within [10, 1000] (``skdpgd.policy.mlp_auto_steps``; N the
        public number of rows, mu the GDP budget, D the number of weights), so the noise's
        total movement of the weights stays the same while the run grows with the budget;
        without noise (``epsilon=np.inf``) T = 1000. The rule was designed for full batch; with
        ``batch_size`` set it gives the same T. (Until 'auto' the defaults were
        ``clip_norm=1.0, learning_rate=0.1, max_iter=100``: pass them for the earlier model.)
        Choosing T by validation on the private data leaks privacy.

    batch_size : int or None, default=None
        None: full-batch gradient descent. An int b < n_samples: Poisson sampling, each row
        joins each step's batch independently with probability ``q = b / n_samples``; the
        noisy sum is divided by the expected batch size ``q n_samples = b`` (not the realised
        one), and the run is accounted with Renyi DP of the subsampled Gaussian under
        add/remove-one neighbours. ``b >= n_samples`` is full batch.

    schedule : {"uniform", "hong", "exponential", "pur"} or Schedule, default='uniform'
        Shape of the noise over the T = ``max_iter`` steps; the accountant scales it to the
        budget. **'hong' and 'exponential' are not the linear models' schedules of the same
        name**: a network has no condition number from which Hong et al.'s theorems would
        give the shape's decay or T, so here the decay is the ``decay`` parameter.

        - 'uniform': the same multiplier at every step.
        - 'hong': Hong et al.'s shape for gradient descent with a given gamma
          (:func:`skdpgd.schedules.hong_shape`): noise variance ``z_t^2`` proportional to
          ``gamma^(t/2)`` (decreasing noise), ``gamma = decay``, by default
          ``0.1 ** (1 / max_iter)`` (the first step's influence 10% of the last's: the
          multipliers fall 1.78x over the run), not capped. The linear models' 'hong' takes
          ``gamma = 1 - 1/kappa`` and T from Theorem 4.4 and caps the spread at 10x.
        - 'exponential': multipliers proportional to ``decay^t``, by default 0.99 per step
          (2.7x over 100 steps; 'hong' is 'exponential' with ``decay = gamma^(1/4)``). The
          linear models' ``Exponential()`` default spreads 10x over the run, whatever T.
        - 'pur': Fay et al.'s convex data-independent schedule (noise on the mean gradient
          falling as 1/t, run while the budget lasts, at most ``max_iter`` steps; full batch
          only).

        A :class:`~skdpgd.schedules.Schedule` instance gets a
        :class:`~skdpgd.schedules.Problem` built from public constants (see Notes); only its
        noise shape and number of steps are used (the step size is always
        ``learning_rate``).

    decay : float in (0, 1] or None, default=None
        For 'hong': Hong's gamma (the per-step decay of a step's influence on the result);
        None sets ``gamma = 0.1 ** (1 / max_iter)`` (``skdpgd.policy.MLP_HONG_INFLUENCE``).
        For 'exponential': the ratio between consecutive multipliers; None means 0.99
        (``skdpgd.policy.MLP_EXPONENTIAL_DECAY``). Ignored by the other schedules.

    momentum : float in [0, 1), default=0.0
        Momentum (bias-corrected moving average of the noisy gradients, Hong et al., Eq. 3).

    neighbouring : {"auto", "replace", "add_remove"}, default='auto'
        Neighbouring relation of the guarantee. 'replace': datasets differ in one example
        (sensitivity of the gradient sum 2C); 'add_remove': one example added or removed
        (sensitivity C; the normaliser stays the public N). 'auto' is 'add_remove' for Poisson
        minibatches (the only relation the subsampled accountant supports; 'replace' with
        minibatches is an error) and, for full batch, the relation of ``budget`` when one is
        given, else 'replace'.

    n_samples : float or None, default=None
        Only under add/remove-one neighbours (``neighbouring='add_remove'``, or minibatches):
        a public stand-in for the number of training rows, which is private there. It sets
        ``q = batch_size / n_samples``, the normaliser and the default delta (its value need
        not be exact). None releases a noisy count of the rows first (2% of the budget,
        accounted).

    n_jobs : int or None, default=None
        Threads torch may use during ``fit``. None means 1, which behaves well when the
        machine is shared (measured on a busy 2-core machine: 0.84 s with one thread against
        6.4 s with torch's default of one thread per core); -1 uses every core. The setting
        is restored after the fit.

    verbose : int, default=0
        1 prints what the fit releases; 2 adds about ten progress lines (step, epsilon spent
        so far, elapsed time). Only public or released values are printed.

    random_state : int, RandomState instance or None, default=None
        Seeds the initial weights, the minibatch sampling and the noise (one numpy Generator, which
        also seeds the torch Generator); an int makes a fit reproducible (on a given device: CPU
        and CUDA generators draw different numbers). None (the default) draws fresh
        operating-system entropy for each fit (unaffected by ``np.random.seed``): use it for a
        model you publish. An int or a RandomState makes the noise reproducible by anyone who knows
        it: for experiments (the user guide's "Publishing a model").

    importance : None, 'auto' or ImportanceMask, default=None
        Importance-masked DP-SGD (AdaDPIGU, :class:`~skdpgd.ImportanceMask`): after a
        pre-training share of the steps only the parameters whose *released* noisy gradients
        were largest are updated and noised (the kept share growing back towards all), with
        optional coordinate-wise scaling before the clip. Same steps, noise multipliers and
        ``epsilon_`` as without it. None: off; 'auto': off (no gain measured on the
        benchmark suite's tuning sets).

    device : str or torch.device, default='cpu'
        Where the per-example gradients, their float64 clipped sums and the noise are
        computed ('cpu', 'cuda', 'cuda:1', ...). The accounting is the same on every device;
        the random draws differ between devices. 'cuda' without a CUDA device raises a
        ValueError before anything is released.

    budget : PrivacyBudget or None, default=None
        A shared budget this fit is charged to (see :class:`~skdpgd.PrivacyBudget`), as for
        the linear models: a fit that would overspend it raises
        :class:`~skdpgd.BudgetExceededError` and releases nothing. Minibatch fits need an
        add/remove-one budget.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features, when X has string column names.

    coefs_ : list of ndarray
        Weight matrices, ``coefs_[k]`` of shape (fan_in, fan_out) (scikit-learn's layout).

    intercepts_ : list of ndarray
        Bias vectors.

    n_layers_ : int
        Number of layers, input and output included.

    n_outputs_ : int
        Output units (1 for two classes, else n_classes).

    out_activation_ : str
        'logistic' or 'softmax'.

    epsilon_ : float
        Epsilon spent (an upper bound, never above ``epsilon``).

    delta_ : float
        Delta the guarantee is stated for.

    mu_ : float or None
        Gaussian-DP parameter of a full-batch fit (exact); None for Poisson minibatches,
        which are accounted with Renyi DP.

    rho_ : float or None
        zCDP parameter ``mu_**2 / 2`` (None for minibatches).

    noise_ : {"gaussian", "discrete"}
        The noise the fit drew: ``'gaussian'`` (floating point, the default mode) or
        ``'discrete'`` (exact discrete Gaussian on a lattice, in secure mode: see
        :func:`skdpgd.config_context` and the Security model page).

    noise_multipliers_ : ndarray of shape (`n_iter_`,)
        Noise standard deviation of each step divided by the sensitivity of the sum.

    n_iter_ : int
        Number of noisy steps taken.

    schedule_ : str
        The schedule that ran.

    decay_ : float or None
        The decay the schedule used ('hong': gamma; 'exponential': ratio), else None.

    sampling_rate_ : float
        Poisson sampling rate q (1.0 for full batch).

    neighbouring_ : str
        'replace-one' or 'add/remove-one'.

    clip_norm_ : float
        The clip norm C.

    learning_rate_ : float
        The step size that ran (``learning_rate``, or its 'auto' value).

    data_norm_ : float
        The row-norm bound the rows were clipped to.

    sensitivity_ : float
        L2 sensitivity of each step's clipped gradient sum (2C or C).

    importance_kept_ : ndarray of int or None
        With ``importance``: the number of parameters each stage updated (pre-training
        first); None otherwise.

    See Also
    --------
    sklearn.neural_network.MLPClassifier : The non-private estimator.
    DPLogisticRegression : Convex, with schedules chosen by theory.

    Notes
    -----
    **Privacy.** Step t releases ``sum_i clip_C(g_i) + N(0, (z_t Delta)^2 I)`` over the full
    batch or a Poisson-sampled batch. Each clipped gradient has norm at most C, so the sum's
    L2 sensitivity ``Delta`` is 2C under replace-one and C under add/remove-one. Dividing by
    the public normaliser, momentum and the update are post-processing. Full batch is
    accounted exactly as Gaussian DP (``mu = sqrt(sum z_t^-2)``, exact (epsilon, delta)
    curve); Poisson minibatches with Renyi DP of the subsampled Gaussian. Public: N,
    the number of features and classes, the architecture, ``data_norm`` and all hyperparameters
    (including ``clip_norm``, ``learning_rate``, ``max_iter``; their 'auto' values are functions
    of N, D, the budget and ``data_norm`` only); ``classes_`` reveals the labels present.
    The initial weights are drawn independently of the data. The training loss is not
    recorded (it would be computed on private data without noise).

    **What theory carries over.** The privacy guarantee holds for any model (clipping
    bounds the sensitivity whatever the loss). Hong et al.'s Lemma 4.3, that noise
    variances ``sigma_t^2 proportional to q_t^(-1/2)`` minimise ``sum_t q_t sigma_t^2`` under a
    fixed budget, is exact for any influences q_t. The *influences* ``q_t = gamma^(T - t)``,
    their gamma (``1 - 1/kappa``) and the number of steps come from their Theorem 4.4 for
    losses satisfying the Polyak-Lojasiewicz condition, which a network does not; here gamma
    is a public parameter and T is ``max_iter``: a heuristic, motivated by their Fig. 1
    (influences measured by retraining were roughly exponential in t). 'pur' takes Fay et
    al.'s convex schedule with the smoothness M = 1 / (2 learning_rate) (so that its step
    1/(2M) is ``learning_rate``) and loss bound ``B = log(max(n_classes, 2))``; neither is a
    true constant of the network. The :class:`~skdpgd.schedules.Problem` given to a schedule
    object has those constants, ``n_params`` = number of weights, ``sensitivity`` = Delta,
    ``lipschitz`` = C and ``strong_convexity = 0``.

    **Per-example gradients** are exact. ``fit`` gets them from one backward pass as outer
    products per Linear layer (``||g_i||^2 = sum_layers ||delta_i||^2 (||a_i||^2 + 1)``, the
    clipped sum a matrix product); the backend's ``torch.func`` path (``vmap(grad(loss))``
    with ``functional_call``) computes the same numbers (tested) but is memory-bound.

    **Numerics.** The network is trained in float32 (per-example gradients dominate the
    cost); norms for clipping are computed in float64 and clipping aims a hair
    (``CLIP_MARGIN``) inside C. An example whose gradient is not finite (float32 overflow,
    e.g. an input near 3e38) contributes 0, which keeps the sensitivity; whether that
    happened depends on the private rows, so it changes nothing else. The fit stops with
    :class:`~skdpgd.exceptions.DivergenceError` only when the parameters after a noisy step
    (released values) are not finite. The
    noise comes from torch's floating-point Gaussian sampler, which, like every peer's, is
    not hardened against floating-point side channels. Prediction is float64 numpy.

    References
    ----------
    Hong, Wang and Zhou (2022), Dynamic privacy budget allocation improves data efficiency of
    differentially private gradient descent. Fay, Magnusson, Sjolund and Johansson (2023),
    Adaptive hyperparameter selection for differentially private gradient descent. Abadi et
    al. (2016), Deep learning with differential privacy. Mironov, Talwar and Zhang (2019),
    Renyi differential privacy of the sampled Gaussian mechanism.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd.neural import DPMLPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 4))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> clf = DPMLPClassifier(hidden_layer_sizes=(16,), epsilon=2.0, clip_norm=1.0,
    ...                       learning_rate=0.5, max_iter=50, random_state=0)
    >>> clf = clf.fit(X, y)  # doctest: +SKIP
    >>> clf.epsilon_ <= 2.0  # doctest: +SKIP
    True
    """

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._core.capability
    _skdpgd_privacy = DP_MINIBATCH_ESTIMATOR

    _parameter_constraints: dict = {
        "hidden_layer_sizes": ["array-like", Interval(numbers.Integral, 1, None, closed="left")],
        "activation": [StrOptions({"relu", "tanh", "logistic"})],
        "epsilon": [Interval(numbers.Real, 0, np.inf, closed="right")],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "data_norm": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "clip_norm": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "learning_rate": [
            Interval(numbers.Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "schedule": [StrOptions(_SCHEDULE_NAMES), HasMethods(["plan"])],
        "decay": [Interval(numbers.Real, 0, 1, closed="right"), None],
        "momentum": [Interval(numbers.Real, 0, 1, closed="left")],
        "neighbouring": [StrOptions({"auto", *RELATIONS})],
        "random_state": ["random_state"],
        "classes": ["array-like", None],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "n_samples": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_jobs": [Interval(numbers.Integral, None, None, closed="neither"), None],
        "verbose": ["verbose"],
        "importance": [None, StrOptions({"auto"}), HasMethods(["stages", "validate"])],
        "device": "no_validation",  # checked in fit (torch is imported there)
        "budget": [HasMethods(["charge"]), None],
    }

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        epsilon=1.0,
        delta=None,
        data_norm=None,
        classes=None,
        class_weight=None,
        clip_norm="auto",
        learning_rate="auto",
        max_iter="auto",
        batch_size=None,
        schedule="uniform",
        decay=None,
        momentum=0.0,
        neighbouring="auto",
        n_samples=None,
        n_jobs=None,
        verbose=0,
        random_state=None,
        importance=None,
        device="cpu",
        budget=None,
    ):
        self.budget = budget
        self.importance = importance
        self.device = device
        self.classes = classes
        self.class_weight = class_weight
        self.n_samples = n_samples
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.clip_norm = clip_norm
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.schedule = schedule
        self.decay = decay
        self.momentum = momentum
        self.neighbouring = neighbouring
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.non_deterministic = self.random_state is None
        return with_privacy(self, tags)  # the capability the class itself declares

    # ---- resolution of the public quantities (no data read here) -------------------------

    def _hidden_sizes(self):
        sizes = self.hidden_layer_sizes
        sizes = [sizes] if isinstance(sizes, numbers.Integral) else list(sizes)
        if not all(isinstance(s, numbers.Integral) and s >= 1 for s in sizes):
            raise ValueError(
                f"hidden_layer_sizes must be positive integers, got {self.hidden_layer_sizes!r}."
            )
        return [int(s) for s in sizes]

    # ---- fit ------------------------------------------------------------------------------

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the network privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (dense).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-example weights in [0, 1] (each example's clipped gradient is multiplied by
            its weight, so its contribution stays within ``clip_norm``).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        with fit_transaction(self):
            self._fit(X, y, sample_weight)
        return self

    def _fit(self, X, y, sample_weight):
        X, _, sample_weight, _, classes, y_index = classification_data(
            self,
            X,
            y,
            sample_weight,
            self.classes,
            dtype=np.float64,
            accept_sparse=False,
            dask=False,
        )
        data_norm = resolve_data_norm(self.data_norm, X)
        X = _clip_rows(X, data_norm)
        if X.size and np.max(np.abs(X)) > np.finfo(np.float32).max:
            raise ValueError(
                "X has values beyond the float32 range (|x| > 3.4e38) that the network is "
                "trained in: data_norm is too large for it; scale the features (the gradient "
                "clip bounds their influence, not their size)."
            )
        auto = policy.mlp_auto_clip_norm, policy.mlp_auto_learning_rate
        config = TorchConfig(
            hidden_layer_sizes=tuple(self._hidden_sizes()),
            activation=self.activation,
            data_norm=data_norm,
            clip_norm=auto[0](data_norm) if self.clip_norm == "auto" else self.clip_norm,
            learning_rate=(
                auto[1](data_norm) if self.learning_rate == "auto" else self.learning_rate
            ),
            max_iter=None if self.max_iter == "auto" else self.max_iter,
            batch_size=self.batch_size,
            schedule=self.schedule,
            decay=self.decay,
            momentum=self.momentum,
            device=self.device,
            importance=self.importance,
            n_jobs=self.n_jobs,
        )
        road = TorchRoad(config, X, y_index, classes.shape[0])
        data = FitRows(X.shape[0], sample_weight=sample_weight, classes=classes, y_index=y_index)
        fitted = private_fit(PrivacySpec.of(self), road, data)
        self.classes_ = classes
        set_fitted(self, fitted)

    # ---- prediction (numpy, no torch needed) ----------------------------------------------

    def decision_function(self, X):
        """Output-layer scores: shape (n_samples,) for two classes, else (n_samples, n_classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores = _forward(self.coefs_, self.intercepts_, self.activation, X)
        return scores[:, 0] if self.n_outputs_ == 1 else scores

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]


def _clip_rows(X, bound):
    """Rows with norm above ``bound`` scaled down to it, in a copy; X itself when every row is
    inside (those rows are left bit for bit as given). The norms are the linear estimators'
    (:func:`skdpgd._compute.kernels.row_clip_factors`: no overflow for huge entries)."""
    if not X.size:
        return X
    scale, _ = row_clip_factors(X, bound, fit_intercept=False)
    over = scale < 1.0
    if not np.any(over):
        return X
    X = X.copy()
    X[over] *= scale[over, None]
    return X

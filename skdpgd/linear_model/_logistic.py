"""Differentially private logistic regression (full-batch noisy gradient descent)."""

from __future__ import annotations

from .._core.capability import DP_ESTIMATOR
from .._core.docstrings import (
    _FITTED_PRIVACY_DOC,
    _PRIVACY_PARAMS_DOC,
    _ROW_CLIP_DOC,
    _SCHEDULE_PARAMS_DOC,
)
from .._core.docstrings import CLASS_WEIGHT_DOC as _CLASS_WEIGHT_DOC
from .._core.docstrings import CLASSES_DOC as _CLASSES_DOC
from .._core.estimators import ProbaFromScoresMixin
from ..losses import BinaryLogistic, MultinomialLogistic
from ._base import _DPGLMClassifier

__all__ = ["DPLogisticRegression"]


class DPLogisticRegression(ProbaFromScoresMixin, _DPGLMClassifier):
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

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._core.capability
    _skdpgd_privacy = DP_ESTIMATOR

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=None,
        data_norm=None,
        classes=None,
        class_weight=None,
        row_clip="auto",
        alpha="auto",
        fit_intercept=True,
        intercept_scaling=0.5,
        schedule="auto",
        max_iter="auto",
        momentum=0.0,
        neighbouring="auto",
        n_samples=None,
        random_state=None,
        budget=None,
        verbose=0,
    ):
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

    def _loss(self, n_classes):
        # the binary log-loss for two classes (one output), else the multinomial one
        return BinaryLogistic() if n_classes == 2 else MultinomialLogistic()

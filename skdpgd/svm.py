"""Differentially private linear support vector classification (full-batch noisy gradient
descent on the squared hinge loss; one-vs-rest for more than two classes)."""

from __future__ import annotations

from ._core.capability import DP_ESTIMATOR
from ._core.docstrings import (
    _FITTED_PRIVACY_DOC,
    _PRIVACY_PARAMS_DOC,
    _ROW_CLIP_DOC,
    _SCHEDULE_PARAMS_DOC,
)
from ._core.docstrings import CLASS_WEIGHT_DOC as _CLASS_WEIGHT_DOC
from ._core.docstrings import CLASSES_DOC as _CLASSES_DOC
from .linear_model._base import _DPGLMClassifier
from .losses import SquaredHinge, SquaredHingeOneVsRest

__all__ = ["DPLinearSVC"]


class DPLinearSVC(_DPGLMClassifier):
    __doc__ = f"""Differentially private linear support vector classifier.

    Minimises ``(1/N) sum_i w_i l(y_i (x_i . w + b)) + alpha/2 ||w||^2`` (the intercept is not
    penalised) by full-batch noisy gradient descent, where l is the squared hinge
    ``max(0, 1 - u)^2`` (scikit-learn's :class:`~sklearn.svm.LinearSVC` default loss) with
    each example's derivative clipped to ``|l'| <= 2``: the loss is ``(1 - u)^2`` for
    ``0 <= u < 1`` and continues as its tangent ``1 - 2u`` for misclassified examples
    (``u < 0``), a smoothed hinge that is convex, 2-Lipschitz in the margin and has the same
    minimiser as the squared hinge whenever no training example ends up misclassified.

    With K >= 3 classes it fits one-vs-rest, as :class:`~sklearn.svm.LinearSVC` does by
    default: K binary problems (class k, target +1, against the rest, target -1), fitted
    jointly, one weight row per class; ``decision_function`` gives K scores and ``predict``
    their argmax.

    Parameters
    ----------
{_PRIVACY_PARAMS_DOC}{_CLASSES_DOC}{_CLASS_WEIGHT_DOC}{_ROW_CLIP_DOC}
    alpha : float or 'auto', default='auto'
        L2 penalty on the weights. scikit-learn's ``LinearSVC(C=c)`` minimises
        ``||w||^2 / 2 + c sum_i l_i``, which has the same minimiser as ``alpha = 1 / (N c)``
        here (N public). 'auto' is ``1/N`` (``C = 1``, LinearSVC's default) plus
        ``0.3 G R sqrt(D) / (N mu)``, a term that vanishes as epsilon grows (see
        :class:`DPLogisticRegression`).

    fit_intercept : bool, default=True
        Whether to fit an intercept. Unlike LinearSVC (liblinear), the intercept is not
        penalised.

    intercept_scaling : float, default=0.5
        The intercept is learnt as the weight of a constant column equal to
        ``intercept_scaling * data_norm`` (see :class:`DPLogisticRegression`; LinearSVC's
        parameter of that name is the constant column itself).
{_SCHEDULE_PARAMS_DOC}
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.

    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Weights: one row for two classes, else one row per class (class k against the rest).

    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercept(s).

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features, when X has string column names.
{_FITTED_PRIVACY_DOC}
    See Also
    --------
    DPLogisticRegression : Differentially private logistic regression (multinomial for
        several classes).
    sklearn.svm.LinearSVC : The non-private estimator.

    Notes
    -----
    **Privacy.** Rows are clipped to ``data_norm``; the clipped squared hinge has
    ``|l'| <= 2``, so one example's gradient has norm at most ``G = 2 sqrt(data_norm**2 +
    c**2)`` with ``c = intercept_scaling * data_norm`` (without intercept: ``2 data_norm``);
    sample weights lie in [0, 1]. Each step releases the gradient sum plus Gaussian noise:
    sensitivity ``2G`` (replace-one) or ``G`` (add/remove-one). Accounting as in
    :class:`DPLogisticRegression` (exact Gaussian DP).

    **Several classes.** The K one-vs-rest problems are fitted together: each step releases
    the whole K x P gradient sum with one Gaussian noise draw per coordinate, and the budget
    is not split between the classes. Each output's derivative is capped as above, so
    output k's part of one example's gradient has norm at most G (the binary bound) and the
    whole gradient over the K outputs at most ``sqrt(K) G``: each release has sensitivity
    ``2 sqrt(K) G`` (replace-one) or ``sqrt(K) G`` (add/remove-one), and ``clip_norm_`` is
    ``sqrt(K) G``. Each class's weights thus get the noise of a binary fit whose Gaussian-DP
    budget ``mu`` is divided by ``sqrt(K)`` (what K separate binary fits composed exactly
    would get), less noise than splitting epsilon into K equal parts.

    **What differs from LinearSVC.** The noise; the unpenalised intercept; the derivative
    capped for misclassified examples (above); ``multi_class='crammer_singer'`` is not
    offered. (Wrapping a binary estimator in ``sklearn.multiclass.OneVsRestClassifier`` with
    a shared :class:`~skdpgd.PrivacyBudget` still works; the joint fit needs neither.)

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd import DPLinearSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 5))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = (X[:, 0] + 0.1 * rng.normal(size=2000) > 0).astype(int)
    >>> clf = DPLinearSVC(epsilon=1.0, data_norm=1.0, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.8)
    True
    >>> y3 = np.digitize(X[:, 0], [-0.3, 0.3])  # three classes: one-vs-rest
    >>> clf3 = DPLinearSVC(epsilon=1.0, data_norm=1.0, classes=[0, 1, 2], random_state=0)
    >>> clf3.fit(X, y3).decision_function(X).shape
    (2000, 3)
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
        self.delta = delta
        self.data_norm = data_norm
        self.classes = classes
        self.class_weight = class_weight
        self.row_clip = row_clip
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.schedule = schedule
        self.max_iter = max_iter
        self.momentum = momentum
        self.neighbouring = neighbouring
        self.n_samples = n_samples
        self.random_state = random_state
        self.budget = budget
        self.verbose = verbose

    def _loss(self, n_classes):
        if n_classes == 2:
            # labels +-1; each gradient release has sensitivity 2G (replace-one) or G
            # (add/remove-one), G = 2 * row_bound (SquaredHinge.lipschitz, the kernels' clip)
            return SquaredHinge()
        # labels = class index; K outputs, each derivative capped as in the binary case, so one
        # example's gradient over the K x P parameters has norm at most G = sqrt(K) * 2 *
        # row_bound (SquaredHingeOneVsRest.lipschitz, the kernels' clip): each release of the
        # joint gradient sum has sensitivity 2G (replace-one) or G (add/remove-one);
        # tests/linear_model/test_linear_svc.py checks the bound
        return SquaredHingeOneVsRest()

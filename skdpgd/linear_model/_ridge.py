"""Differentially private ridge regression (full-batch noisy gradient descent)."""

from __future__ import annotations

import numbers

from .._core.capability import DP_ESTIMATOR
from .._compat import Interval, StrOptions
from .._core.docstrings import _FITTED_PRIVACY_DOC, _PRIVACY_PARAMS_DOC, _SCHEDULE_PARAMS_DOC
from .._core.estimators import COMMON_CONSTRAINTS
from ..losses import SquaredError
from ._base import _DPGLMRegressor

__all__ = ["DPRidge"]


class DPRidge(_DPGLMRegressor):
    __doc__ = f"""Differentially private ridge regression.

    Minimises ``(1/N) sum_i w_i h(x_i . w + b - y_i) + alpha/2 ||w||^2`` by full-batch noisy
    gradient descent, where ``h`` is the squared loss ``r^2/2`` with each example's gradient
    clipped to ``clip_norm`` (equivalently, a Huber loss with threshold ``clip_norm/||x~_i||``).
    Targets are clipped to the public range ``y_bound`` and centred on its middle.

    Parameters
    ----------
{_PRIVACY_PARAMS_DOC}
    row_clip : {"data_norm", "auto"}, default='data_norm'
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
        :class:`DPLogisticRegression` with 1.0 instead of 0.3 and G divided by the target
        range's half-width Y (G grows with Y: the penalty does not depend on the targets'
        units), so that the fit tends to ``Ridge(alpha=1.0)``'s as epsilon grows.
        scikit-learn's ``Ridge(alpha=a)`` minimises ``||y - Xw||^2 + a ||w||^2``, which has the
        same minimiser as ``alpha = a / N`` here (without clipping).

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

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._core.capability
    _skdpgd_privacy = DP_ESTIMATOR

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "y_bound": [Interval(numbers.Real, 0, None, closed="neither"), "array-like", None],
        "clip_norm": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=None,
        data_norm=None,
        row_clip="data_norm",
        y_bound=None,
        clip_norm="auto",
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

    def _loss(self, y_bound):
        # the fit sees y - centre within [-y_bound, y_bound]: the sensitivities use y_bound
        clip_norm = None if self.clip_norm == "auto" else float(self.clip_norm)
        return SquaredError(clip_norm=clip_norm, y_bound=y_bound)

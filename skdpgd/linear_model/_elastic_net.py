"""Differentially private elastic net (full-batch proximal noisy gradient descent)."""

from __future__ import annotations

import functools
import numbers

from .._core.capability import DP_ESTIMATOR
from .._compat import Interval, StrOptions
from .._core.docstrings import _FITTED_PRIVACY_DOC, _PRIVACY_PARAMS_DOC, _SCHEDULE_PARAMS_DOC
from .._core.estimators import COMMON_CONSTRAINTS
from ..losses import SquaredError
from ..penalties import ElasticNet
from ._base import _DPGLMRegressor

__all__ = ["DPElasticNet"]


class DPElasticNet(_DPGLMRegressor):
    __doc__ = f"""Differentially private linear regression with the elastic-net penalty.

    Minimises ``(1/N) sum_i w_i h(x_i . w + b - y_i) + alpha * l1_ratio * ||w||_1 +
    0.5 * alpha * (1 - l1_ratio) * ||w||^2`` by full-batch proximal noisy gradient descent,
    where ``h`` is the squared loss ``r^2/2`` with each example's gradient clipped to
    ``clip_norm`` (as in :class:`DPRidge`). Without clipping and noise this is
    scikit-learn's :class:`~sklearn.linear_model.ElasticNet` objective with the same
    ``alpha`` and ``l1_ratio`` (its ``1/(2N) ||y - Xw||^2`` is our average of ``r^2/2``).
    Targets are clipped to the public range ``y_bound`` and centred on its middle.

    Parameters
    ----------
{_PRIVACY_PARAMS_DOC}
    row_clip : {{"data_norm", "auto"}}, default='data_norm'
        As in :class:`DPRidge`.

    y_bound : float, (lo, hi) or None, default=None
        Public range of the targets, as in :class:`DPRidge`. None infers ``max |y|`` from the
        data with a :class:`~skdpgd.PrivacyLeakWarning`.

    clip_norm : float or 'auto', default='auto'
        Per-example gradient clipping norm (the G of the sensitivity), as in
        :class:`DPRidge`.

    alpha : float or 'auto', default='auto'
        Strength of the penalty on the weights (not the intercept), in scikit-learn's
        ElasticNet normalisation. 'auto' is :class:`DPRidge`'s rule,
        ``alpha_ = 1/N + (G / Y) R sqrt(D) / (N mu)`` (see
        :func:`skdpgd.policy.consistent_alpha`), split as ``l1_ratio / N`` on ``||w||_1``
        and the rest on ``||w||^2 / 2``: the term for the noise conditions the noisy descent
        through the objective's strong convexity, as in DPRidge (all of it L1 would leave the
        lasso with none). It shrinks with the noise, and the fit tends to
        ``ElasticNet(alpha=1/N, l1_ratio=l1_ratio)``'s as epsilon grows (not to
        scikit-learn's default ``alpha=1.0``, which on rows of norm at most 1 sets every
        weight to 0). A number is used as given (both parts as scikit-learn splits it).

    l1_ratio : float in [0, 1], default=0.5
        The L1 share of the penalty: 0 is :class:`DPRidge`'s L2 penalty (and the same fit),
        1 the lasso. With an L1 part only noisy gradient descent runs the fit (its proximal
        step is post-processing); ``schedule='auto'`` chooses among its schedules, and a
        schedule of another mechanism ('output', 'newton', 'ssp', ...) is refused.

    fit_intercept : bool, default=True
        Whether to fit an intercept.

    intercept_scaling : float, default=0.5
        The intercept is learnt as the weight of a constant column equal to
        ``intercept_scaling * data_norm`` (see :class:`DPLogisticRegression`).
{_SCHEDULE_PARAMS_DOC}
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Weights (exact zeros where the last proximal step set them to 0).

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
    DPRidge : The same model with an L2 penalty only.
    sklearn.linear_model.ElasticNet : The non-private estimator.

    Notes
    -----
    **Privacy.** As :class:`DPRidge`: each step releases the clipped gradient sum, of
    sensitivity ``2 clip_norm`` (replace-one) or ``clip_norm`` (add/remove-one), with
    Gaussian noise; exact Gaussian-DP accounting. The proximal step (soft thresholding of the
    weights) reads only the released iterate: post-processing, no privacy cost. Rows are
    clipped to ``data_norm`` and targets to ``y_bound``; both must be public for epsilon to
    hold.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd import DPElasticNet
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(5000, 3)) / np.sqrt(3)
    >>> y = X @ np.array([1.0, -2.0, 0.0]) + 0.05 * rng.normal(size=5000)
    >>> reg = DPElasticNet(epsilon=1.0, data_norm=1.0, y_bound=2.0, random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.8)
    True
    """

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._core.capability
    _skdpgd_privacy = DP_ESTIMATOR

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "y_bound": [Interval(numbers.Real, 0, None, closed="neither"), "array-like", None],
        "clip_norm": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "l1_ratio": [Interval(numbers.Real, 0, 1, closed="both")],
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
        l1_ratio=0.5,
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
        self.l1_ratio = l1_ratio
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

    def _penalty(self):
        # the elastic net of this l1_ratio; its alpha is resolved by the road ('auto': the
        # rule DPRidge's alpha follows)
        return functools.partial(ElasticNet, l1_ratio=float(self.l1_ratio))

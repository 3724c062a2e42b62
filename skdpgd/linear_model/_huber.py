"""Differentially private Huber regression (full-batch noisy gradient descent)."""

from __future__ import annotations

import numbers

from .._core.capability import DP_ESTIMATOR
from .._compat import Interval
from .._core.docstrings import _FITTED_PRIVACY_DOC, _PRIVACY_PARAMS_DOC, _SCHEDULE_PARAMS_DOC
from .._core.estimators import COMMON_CONSTRAINTS
from ..losses import Huber
from ._base import Targets, _DPGLMRegressor

__all__ = ["DPHuberRegressor"]

#: Without ``y_bound``, the schedules' loss-gap constant B (it sets the number of steps and
#: their size, never the noise) is the Huber loss's bound ``t Y`` at ``Y = HUBER_GAP_SCALES``
#: times the scale: targets within a few scales of the intercept's start, 0.
HUBER_GAP_SCALES = 3.0


class DPHuberRegressor(_DPGLMRegressor):
    __doc__ = f"""Differentially private linear regression with the Huber loss.

    Minimises ``(1/N) sum_i w_i h_t(y_i - x_i . w - b) + alpha/2 ||w||^2`` by full-batch noisy
    gradient descent, where ``h_t`` is the Huber loss with threshold
    ``t = huber_threshold * scale``: ``r^2 / 2`` for ``|r| <= t``, ``t |r| - t^2 / 2`` beyond.
    Its derivative in the residual is bounded by t, so one example's gradient has a bounded
    norm whatever its target: unlike :class:`DPRidge`, the gradient's sensitivity needs no
    range of the targets.

    Parameters
    ----------
{_PRIVACY_PARAMS_DOC}
    row_clip : {{'data_norm', 'auto'}}, default='data_norm'
        As in :class:`DPRidge` (a regression's predictions scale with x, so rows are clipped
        to ``data_norm`` only by default).

    huber_threshold : float, default=1.35
        Threshold of the Huber loss in units of ``scale`` (scikit-learn's ``epsilon`` of
        :class:`~sklearn.linear_model.HuberRegressor`, renamed because ``epsilon`` is the
        privacy budget here; 1.35 is its default too).

    scale : float, default=1.0
        Public scale sigma of the residuals: the threshold in target units is
        ``huber_threshold * scale``. scikit-learn's HuberRegressor fits sigma jointly with
        the weights; here it is fixed and must be public (a guess of the noise level of the
        targets, in their units). It sets the sensitivity: ``G = huber_threshold * scale *
        sqrt(r**2 + c**2)``. The default suits targets of unit scale: targets in other
        units need their own public ``scale`` (and, far from 0, ``y_bound``); with neither,
        a fit on targets in the hundreds stays near 0 and scores far below the mean.

    y_bound : float, (lo, hi) or None, default=None
        Optional public range of the targets: ``Y`` for ``[-Y, Y]`` or ``(lo, hi)``. When
        given, the targets are clipped to it and centred on its middle (added back to the
        intercept), which is what the intercept needs when the targets lie far from 0: the
        intercept moves by at most ``t`` per unit step, so a fit that starts at 0 may not
        reach a distant level within its steps. It also gives the schedules their loss gap
        ``B = t * half_width`` and allows ``schedule='prior'`` (the intercept-only model,
        a release of the clipped target sum). None: the targets enter as they are (no range
        is needed for privacy) and B assumes targets within ``3 * scale`` of 0.

    alpha : float or 'auto', default='auto'
        L2 penalty on the weights (not the intercept); 'auto' as in
        :class:`DPLogisticRegression`: ``1/N`` plus a term that vanishes as epsilon grows.
        scikit-learn's ``HuberRegressor(alpha=a)`` with a fixed scale sigma has the same
        minimiser as ``alpha = a * sigma / N`` here (its objective is ``2 / sigma`` times ours
        summed over the rows, with ``a ||w||^2``).

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

    scale_ : float
        The public scale used (``scale``; scikit-learn fits it, here it is a parameter).

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features, when X has string column names.

    y_bound_ : float or None
        The half-width of the target range (None without ``y_bound``).

    y_range_ : tuple of float or None
        The range ``(lo, hi)`` the targets were clipped to (None without ``y_bound``).

{_FITTED_PRIVACY_DOC}
    See Also
    --------
    DPRidge : Differentially private ridge regression (squared loss; needs a target range).
    sklearn.linear_model.HuberRegressor : The non-private estimator.

    Notes
    -----
    **Privacy.** Rows are clipped to ``data_norm``; the Huber derivative satisfies
    ``|h_t'| <= t``, so one example's gradient ``h_t'(r) (x, c)`` has norm at most
    ``G = t sqrt(data_norm**2 + c**2)`` (``t data_norm`` without intercept), for any target.
    Each step releases the gradient sum plus Gaussian noise: sensitivity ``2G``
    (replace-one) or ``G`` (add/remove-one); the intercept's coordinate is part of that
    gradient and bounded by ``t c`` with it. Accounting as in :class:`DPLogisticRegression`
    (exact Gaussian DP). Public: ``data_norm``, ``scale``, ``huber_threshold``, ``y_bound``,
    N, the number of features, the hyperparameters. scikit-learn's ``outliers_`` (which
    training rows have a large residual) is not offered: it would publish one bit per
    training example.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd import DPHuberRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(5000, 3)) / np.sqrt(3)
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + 0.05 * rng.standard_t(2, size=5000)
    >>> reg = DPHuberRegressor(epsilon=1.0, data_norm=1.0, scale=0.1, random_state=0)
    >>> bool(reg.fit(X, y).score(X, y) > 0.8)
    True
    """

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._core.capability
    _skdpgd_privacy = DP_ESTIMATOR

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "huber_threshold": [Interval(numbers.Real, 0, None, closed="neither")],
        "scale": [Interval(numbers.Real, 0, None, closed="neither")],
        "y_bound": [Interval(numbers.Real, 0, None, closed="neither"), "array-like", None],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=None,
        data_norm=None,
        row_clip="data_norm",
        huber_threshold=1.35,
        scale=1.0,
        y_bound=None,
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
        self.row_clip = row_clip
        self.huber_threshold = huber_threshold
        self.scale = scale
        self.y_bound = y_bound
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

    def _skdpgd_reads_if_none(self):
        # without y_bound the targets enter as given (the gradient is bounded by the threshold)
        # and the steps start at 0: nothing is read from the rows (see _targets)
        return ()

    def _check_fit_params(self, y):
        super()._check_fit_params(y)
        if self.y_bound is None and isinstance(self.schedule, str) and self.schedule == "prior":
            raise ValueError(
                "schedule='prior' (the intercept-only model) releases the sum of "
                "the clipped targets and needs a public y_bound."
            )

    def _targets(self, y):
        if self.y_bound is None:  # targets as given: the gradient's bound needs no range
            gap_bound = HUBER_GAP_SCALES * float(self.scale)  # public: B only (steps, not noise)
            return Targets(y, 0.0, None, gap_bound)
        # public: a bound Y (the range [-Y, Y]) or a range (lo, hi); the loss-gap constant is
        # the range's half-width
        return super()._targets(y)

    def _loss(self, y_bound):
        # sensitivity of each gradient release: 2G (replace-one) or G (add/remove-one) with
        # G = threshold * row_bound (Huber.lipschitz), whatever the targets
        scale = float(self.scale)
        return Huber(threshold=float(self.huber_threshold) * scale, y_bound=y_bound, scale=scale)

    def _target_attributes(self, targets):
        return {"scale_": float(self.scale), **super()._target_attributes(targets)}

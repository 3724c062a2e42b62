"""Differentially private Poisson regression (log link; full-batch noisy gradient descent)."""

from __future__ import annotations

import numbers

from .._core.capability import DP_ESTIMATOR
from .._compat import Interval, StrOptions
from .._core.docstrings import _FITTED_PRIVACY_DOC, _PRIVACY_PARAMS_DOC, _SCHEDULE_PARAMS_DOC
from .._core.estimators import COMMON_CONSTRAINTS
from ..losses import Poisson
from ._base import _DPLogLinkRegressor

__all__ = ["DPPoissonRegressor"]


class DPPoissonRegressor(_DPLogLinkRegressor):
    __doc__ = f"""Differentially private Poisson regression (log link).

    Minimises ``(1/N) sum_i w_i l(x_i . w + b; y_i) + alpha/2 ||w||^2`` by full-batch noisy
    gradient descent, where ``l(z; y) = exp(z) - y z`` is half the Poisson deviance up to a
    term in y alone (scikit-learn's :class:`~sklearn.linear_model.PoissonRegressor` objective,
    same normalisation), with each example's gradient clipped to ``clip_norm``. Predictions
    are ``exp(x . w + b)``.

    Parameters
    ----------
{_PRIVACY_PARAMS_DOC}
    row_clip : {{'data_norm', 'auto'}}, default='data_norm'
        As in :class:`DPRidge`.

    y_bound : float, (0, Y) or None, default=None
        Public bound Y on the counts: targets are clipped to ``[0, Y]`` (a negative target
        becomes 0). The pair ``(0, Y)`` is the same range, written as :class:`DPRidge`'s
        ``(lo, hi)``; a pair whose lower end is not 0 is refused (counts start at 0).
        It sets the default clip norm, the loss's smoothness and gap constants,
        and the intercept-only model's release. None infers ``max |y|`` from the data with a
        :class:`~skdpgd.PrivacyLeakWarning`.

    clip_norm : float or 'auto', default='auto'
        Per-example gradient clipping norm (the G of the sensitivity). 'auto' uses
        ``max(1, Y) * sqrt(r**2 + c**2)`` (r the row-clipping bound, c the intercept column):
        every example's gradient norm at the start, 0, is within it.

    alpha : float or 'auto', default='auto'
        L2 penalty on the weights (not the intercept), in scikit-learn's normalisation:
        ``PoissonRegressor(alpha=a)`` minimises the same objective as ``alpha=a`` here
        (without clipping). 'auto' as in :class:`DPLogisticRegression`: ``1/N`` plus a term
        that vanishes as epsilon grows (not PoissonRegressor's default 1.0, a strong penalty
        in this normalisation).

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
        Intercept of the linear predictor (0.0 when ``fit_intercept=False``).

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features, when X has string column names.

    y_bound_ : float
        The bound on the counts the fit used.

{_FITTED_PRIVACY_DOC}
    See Also
    --------
    DPRidge : Differentially private ridge regression.
    sklearn.linear_model.PoissonRegressor : The non-private estimator.

    Notes
    -----
    **Privacy.** ``l'(z) = exp(z) - y`` has no bound, so each example's gradient
    ``l'(z) (x, c)`` is scaled to norm at most ``clip_norm`` in closed form; the gradient sum
    has sensitivity ``2 clip_norm`` (replace-one) or ``clip_norm`` (add/remove-one). Clipping
    a non-decreasing derivative keeps it non-decreasing: the fit minimises a convex loss
    (``exp(z) - y z`` continued by its tangents where the gradient is clipped), so output
    perturbation applies too. Rows are clipped to ``data_norm`` and counts to ``[0, y_bound]``;
    both must be public for epsilon to hold. Accounting as in :class:`DPLogisticRegression`
    (exact Gaussian DP).

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd import DPPoissonRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 3)) / np.sqrt(3)
    >>> y = rng.poisson(np.exp(X @ np.array([1.0, -1.0, 0.5]) + 1.0))
    >>> reg = DPPoissonRegressor(epsilon=1.0, data_norm=1.0, y_bound=20, random_state=0)
    >>> bool(reg.fit(X, y).score(X, y) > 0.2)
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
        self.n_samples = n_samples
        self.random_state = random_state
        self.budget = budget
        self.verbose = verbose

    def _loss(self, y_bound):
        # counts in [0, y_bound]; the sensitivity of each gradient release is 2 clip_norm
        # (replace-one) or clip_norm (add/remove-one), G = Poisson.lipschitz
        clip_norm = None if self.clip_norm == "auto" else float(self.clip_norm)
        return Poisson(clip_norm=clip_norm, y_bound=y_bound)

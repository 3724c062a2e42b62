"""Differentially private Tweedie regression (log link, power in [1, 2]; full-batch noisy
gradient descent)."""

from __future__ import annotations

import numbers

from .._core.capability import DP_ESTIMATOR
from .._compat import Interval, StrOptions
from .._core.docstrings import _FITTED_PRIVACY_DOC, _PRIVACY_PARAMS_DOC, _SCHEDULE_PARAMS_DOC
from .._core.estimators import COMMON_CONSTRAINTS
from ..losses import Tweedie
from ._base import _DPLogLinkRegressor

__all__ = ["DPTweedieRegressor"]


class DPTweedieRegressor(_DPLogLinkRegressor):
    __doc__ = f"""Differentially private Tweedie regression (log link), power in [1, 2].

    Minimises ``(1/N) sum_i w_i l(x_i . w + b; y_i) + alpha/2 ||w||^2`` by full-batch noisy
    gradient descent, where ``l`` is half the Tweedie deviance of power ``p`` up to terms in y
    alone (scikit-learn's ``TweedieRegressor(power=p, link='log')`` objective, same
    normalisation), with each example's gradient clipped to ``clip_norm``. Predictions are
    ``exp(x . w + b)``. ``power=1`` is Poisson regression (the same fit as
    :class:`DPPoissonRegressor`), ``power=2`` Gamma regression, powers in between compound
    Poisson-Gamma (non-negative targets with exact zeros).

    Parameters
    ----------
    power : float in [1, 2], default=1.5
        The Tweedie power p. Only ``1 <= p <= 2`` is accepted: there the deviance is convex
        in ``x . w + b`` with the log link, which the privacy analysis needs (scikit-learn's
        default, 0, is the normal distribution: use :class:`DPRidge`).
{_PRIVACY_PARAMS_DOC}
    row_clip : {{'data_norm', 'auto'}}, default='data_norm'
        As in :class:`DPRidge`.

    y_bound : float, (lo, hi) or None, default=None
        Public range of the targets: a number Y clips them to ``[0, Y]``, a pair to
        ``[lo, hi]`` with ``0 <= lo < hi``. ``power=2`` needs a pair with ``lo > 0`` (the
        Gamma deviance has no minimum at y = 0). Y sets the default clip norm and the loss's
        smoothness and gap constants (lo the gap too). None infers ``max |y|`` from the data
        with a :class:`~skdpgd.PrivacyLeakWarning`.

    clip_norm : float or 'auto', default='auto'
        Per-example gradient clipping norm (the G of the sensitivity). 'auto' as in
        :class:`DPPoissonRegressor`: ``max(1, Y) * sqrt(r**2 + c**2)``, which every example's
        gradient norm at the start, 0, is within (``l'(0) = 1 - y`` for every power).

    alpha : float or 'auto', default='auto'
        L2 penalty on the weights (not the intercept), in scikit-learn's normalisation
        (``TweedieRegressor(alpha=a)``); 'auto' as in :class:`DPPoissonRegressor`.

    fit_intercept : bool, default=True
        Whether to fit an intercept.

    intercept_scaling : float, default=0.5
        As in :class:`DPPoissonRegressor`.
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
        The upper bound on the targets the fit used.

{_FITTED_PRIVACY_DOC}
    See Also
    --------
    DPPoissonRegressor : The same model at power 1.
    sklearn.linear_model.TweedieRegressor : The non-private estimator.

    Notes
    -----
    **Privacy.** ``l'(z) = exp((2-p) z) - y exp((1-p) z)`` has no bound, so each example's
    gradient is scaled to norm at most ``clip_norm`` in closed form; the gradient sum has
    sensitivity ``2 clip_norm`` (replace-one) or ``clip_norm`` (add/remove-one). Clipping a
    non-decreasing derivative keeps it non-decreasing: the fit minimises a convex loss, so
    output perturbation applies too. The constants the schedules read are derived in
    :class:`skdpgd.losses.Tweedie`. Rows are clipped to ``data_norm`` and targets to the
    range ``y_bound``; both must be public for epsilon to hold. ``score`` is D^2 of the
    Tweedie deviance of the estimator's power.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd import DPTweedieRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 3)) / np.sqrt(3)
    >>> y = rng.gamma(2.0, np.exp(X @ np.array([1.0, -1.0, 0.5]) + 1.0) / 2.0)
    >>> reg = DPTweedieRegressor(power=2, epsilon=1.0, data_norm=1.0, y_bound=(0.05, 40),
    ...                          random_state=0)
    >>> bool(reg.fit(X, y).score(X, y) > 0.05)
    True
    """

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._core.capability
    _skdpgd_privacy = DP_ESTIMATOR
    _allows_floor = True  # y_bound=(lo, hi) with lo > 0: the Gamma deviance needs a floor

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "power": [Interval(numbers.Real, 1, 2, closed="both")],
        "y_bound": [Interval(numbers.Real, 0, None, closed="neither"), "array-like", None],
        "clip_norm": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
    }

    def __init__(
        self,
        *,
        power=1.5,
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
        self.power = power
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
        # targets in [lo, y_bound] (lo = 0 unless y_bound is a pair); the sensitivity of each
        # gradient release is 2 clip_norm (replace-one) or clip_norm (add/remove-one),
        # G = Tweedie.lipschitz
        clip_norm = None if self.clip_norm == "auto" else float(self.clip_norm)
        return Tweedie(float(self.power), clip_norm, y_bound, self._y_floor())

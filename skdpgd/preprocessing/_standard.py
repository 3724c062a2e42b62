"""DPStandardScaler: means and variances released by the Gaussian mechanism."""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import policy
from .._core.capability import (
    DP_TRANSFORMER,
    with_privacy,
)
from .._compat import HasMethods, Interval, StrOptions, fit_context
from .._core.fit import FitRows, PrivacySpec, Road, RoadResult, mu_of, private_fit
from .._core.fitted import ScalerAttributes, set_fitted
from .._core.noise import gaussian
from .._core.transaction import fit_transaction
from ..accounting import RELATIONS, Release, sum_rounding_margin
from ._bounded import _resolve_bounds, _to_unit

# ------------------------------------------------------------------------------------------
# DP standardisation
# ------------------------------------------------------------------------------------------


class DPStandardScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardise with differentially private means and variances (Gaussian mechanism).

    Each column is clipped to its public range and mapped to [-1, 1] (as
    :class:`BoundedScaler` does), giving rows ``u_i`` in ``[-1, 1]^d``. The fit releases

    * ``S1 = sum_i u_i + N(0, (z_1 Delta_1)^2 I_d)``: changing one row moves each coordinate
      by at most 2 (replace-one) or adding/removing one moves it by at most 1, so
      ``Delta_1 = 2 sqrt(d)`` (replace-one) and ``sqrt(d)`` (add/remove-one);
    * ``S2 = sum_i u_i^2 + N(0, (z_2 Delta_2)^2 I_d)`` (squares taken coordinate-wise): each
      ``u_ij^2`` lies in [0, 1], so ``Delta_2 = sqrt(d)`` under both relations;
    * under add/remove-one, without a public ``n_samples``, a noisy row count (sensitivity 1,
      as in the estimators).

    Both sensitivities are raised by the float64 rounding margin of a sum
    (:func:`skdpgd.accounting.sum_rounding_margin`). The means and variances are
    post-processing: ``m = clip(S1~ / N, -1, 1)``, ``v = S2~ / N - m^2``, and the scale
    ``s = sqrt(max(v, STD_FLOOR^2))`` (``skdpgd.policy.STD_FLOOR``). All releases are calibrated
    together so that they compose to exactly (epsilon, delta) in Gaussian DP, the sums sharing
    what the count leaves equally.

    The output ``(u - m) / s`` is clipped to ``[-clip_std, clip_std]``: the bound is public
    because it is a parameter (no released value enters it), so every output row has L2 norm at
    most ``clip_std * sqrt(d)`` (``output_bound_``), whatever the noise drew.

    **Input.** As for :class:`BoundedScaler`, the rows are assumed to be numbers (NaN for a
    missing value); a cell that is not a number makes the fit raise before anything is
    released, and whether it fails depends on that row (not accounted). Convert such cells to
    missing first (cell by cell, as :func:`schema_transformer` does for its columns).

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of the fit (> 0; ``inf``: no noise).
    bounds : (lo, hi), array-like of shape (n_features, 2) or dict
        Public range of each column (as in :class:`BoundedScaler`). Required.
    delta : float or None, default=None
        Delta of the guarantee; None: ``min(1e-5, 1/N^2)`` as in the estimators.
    budget : PrivacyBudget or None, default=None
        A shared budget charged with every release before it is drawn.
    neighbouring : {'auto', 'replace', 'add_remove'}, default='auto'
        Neighbouring relation ('auto': the budget's, else replace-one), as in the estimators.
    n_samples : float or None, default=None
        Public row count under add/remove-one (otherwise a noisy count is released).
    clip_std : float, default=3.0
        Outputs are clipped to this many (released) standard deviations.
    missing_value : float in [-1, 1] or None, default=0.0
        Where a missing (NaN) entry sits on the [-1, 1] scale, in the fit's sums and in
        ``transform``: a public constant, by default the middle of the range (the sensitivities
        hold since it lies in [-1, 1]). None: a NaN is an error.
    random_state : int, RandomState instance or None, default=None
        Seeds the noise.

    Attributes
    ----------
    mean_, scale_, var_ : ndarray of shape (n_features,)
        The released statistics in the original units (``scale_`` includes the floor).
    output_bound_ : float
        Public L2 bound of an output row: ``clip_std * sqrt(n_features)``.
    output_ranges_ : ndarray of shape (n_features, 2)
    noise_ : {'gaussian', 'discrete'}
        The noise the fit drew: ``'gaussian'`` (floating point, the default mode) or
        ``'discrete'`` (exact discrete Gaussian on a lattice, in secure mode: see
        :func:`skdpgd.config_context` and the Security model page).

    releases_ : list of :class:`skdpgd.accounting.Release`
    epsilon_, delta_, mu_ : float
        What the fit spent (an upper bound; ``mu_`` in Gaussian DP).
    n_samples_ : float
        The N used (public, or the noisy count).
    neighbouring_ : str

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd.preprocessing import DPStandardScaler
    >>> X = np.random.default_rng(0).uniform(0, 10, size=(5000, 2))
    >>> sc = DPStandardScaler(epsilon=1.0, bounds=(0, 10), random_state=0).fit(X)
    >>> np.round(sc.mean_, 1)
    array([5., 5.])
    """

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._core.capability
    _skdpgd_privacy = DP_TRANSFORMER

    _parameter_constraints = {
        "epsilon": [Interval(numbers.Real, 0, np.inf, closed="right")],
        "bounds": ["array-like", dict, tuple, None],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "budget": [HasMethods(["charge"]), None],
        "neighbouring": [StrOptions({"auto", *RELATIONS})],
        "n_samples": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "clip_std": [Interval(numbers.Real, 0, None, closed="neither")],
        "missing_value": [Interval(numbers.Real, -1, 1, closed="both"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        bounds=None,
        delta=None,
        budget=None,
        neighbouring="auto",
        n_samples=None,
        clip_std=3.0,
        missing_value=0.0,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.bounds = bounds
        self.delta = delta
        self.budget = budget
        self.neighbouring = neighbouring
        self.n_samples = n_samples
        self.clip_std = clip_std
        self.missing_value = missing_value
        self.random_state = random_state

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the private means and variances of the clipped columns.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : object
        """
        with fit_transaction(self):
            X = validate_data(self, X, dtype=np.float64, reset=True, ensure_all_finite=False)
            set_fitted(self, self._fit(X))
        return self

    def _fit(self, X):
        lo, hi = _resolve_bounds(
            self.bounds, X.shape[1], getattr(self, "feature_names_in_", None), "DPStandardScaler"
        )
        return private_fit(
            PrivacySpec.of(self),
            _ScalerRoad(self._unit(X, lo, hi), lo, hi, self.clip_std),
            FitRows(X.shape[0]),
        )

    def _unit(self, X, lo, hi):
        """Rows clipped to the public ranges, mapped to [-1, 1], NaN at ``missing_value``."""
        nan = np.isnan(X)
        if self.missing_value is None and np.any(nan):
            raise ValueError(
                "DPStandardScaler got a missing value (NaN); set missing_value (a public "
                "position in [-1, 1], e.g. 0.0) or impute with a public constant first."
            )
        U = _to_unit(X, lo, hi)
        U[nan] = 0.0 if self.missing_value is None else float(self.missing_value)
        return U

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.missing_value is not None
        return with_privacy(self, tags)  # the capability the class itself declares

    def transform(self, X):
        """Clip to the public ranges, standardise with the released statistics, clip to
        ``[-clip_std, clip_std]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False, ensure_all_finite=False)
        U = self._unit(X, self.lo_, self.hi_)
        B = float(self.clip_std)
        return np.clip((U - self.unit_mean_) / self.unit_scale_, -B, B)


class _ScalerRoad(Road):
    """DPStandardScaler's two releases (column sums and sums of squares of the rows mapped to
    [-1, 1]) as a road of :func:`skdpgd._core.fit.private_fit`."""

    def __init__(self, U, lo, hi, clip_std):
        self.U, self.lo, self.hi, self.clip_std = U, lo, hi, float(clip_std)

    def setup(self, fit):
        # the float64 rounding margin of the sums, from a public bound on the rows summed
        self.margin = sum_rounding_margin(fit.rows_summed_bound(), self.U.shape[1])

    def releases(self, fit):
        root_d = math.sqrt(self.U.shape[1])
        # S1 = sum_i u_i: one row replaced moves each coordinate by <= 2, one row added or
        # removed by <= 1  ->  L2 sensitivity 2 sqrt(d) (replace), sqrt(d) (add/remove)
        # S2 = sum_i u_i^2 (per coordinate): each term in [0, 1], so a replaced, added or
        # removed row moves each coordinate by <= 1  ->  sqrt(d) under both relations
        # (both raised by the rounding margin at calibration)
        return [
            Release(
                "column sums", [1.0], {"replace": 2.0 * root_d, "add_remove": root_d}, fit.relation
            ),
            Release(
                "column sums of squares",
                [1.0],
                {"replace": root_d, "add_remove": root_d},
                fit.relation,
            ),
        ]

    def run(self, fit, releases):
        U, d = self.U, self.U.shape[1]
        S1 = np.sum(U, axis=0, dtype=np.float64)
        S2 = np.sum(U * U, axis=0, dtype=np.float64)
        sums, squares = releases
        if sums.multipliers[0] > 0:
            S1 = gaussian(S1, sums.noise_std[0], fit.gen, sums.own_sensitivity)
            S2 = gaussian(S2, squares.noise_std[0], fit.gen, squares.own_sensitivity)
        # post-processing of the released sums (N is public or released)
        m = np.clip(S1 / fit.n_public, -1.0, 1.0)
        v = np.clip(S2 / fit.n_public, 0.0, 1.0) - m * m
        s = np.sqrt(np.maximum(v, policy.current().STD_FLOOR ** 2))
        mu = mu_of(fit.setup_releases + list(releases))
        half = 0.5 * (self.hi - self.lo)
        B = self.clip_std
        return RoadResult(
            ScalerAttributes(
                lo_=self.lo,
                hi_=self.hi,
                unit_mean_=m,
                unit_scale_=s,
                mean_=0.5 * (self.lo + self.hi) + half * m,
                scale_=half * s,
                var_=(half * np.sqrt(np.maximum(v, 0.0))) ** 2,
                output_ranges_=np.tile([-B, B], (d, 1)),
                output_bound_=B * math.sqrt(d),
                mu_=mu,
            ),
        )

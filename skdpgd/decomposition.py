"""Differentially private principal components: a step for ``make_private_pipeline``.

:class:`DPPCA` releases the second-moment matrix of the rows (clipped to a public L2 norm) with
symmetric Gaussian noise, "Analyze Gauss" (Dwork, Talwar, Thakurta and Zhang, STOC 2014), and
keeps the top eigenvectors of the noisy matrix: every later use of them is post-processing.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._core.capability import DP_TRANSFORMER, with_privacy
from ._compat import HasMethods, Interval, StrOptions, fit_context
from ._core.fit import FitRows, PrivacySpec, Road, RoadResult, mu_of, private_fit
from ._core.fitted import PCAAttributes, set_fitted
from ._core.noise import gaussian, is_secure, symmetric_release
from ._core.transaction import fit_transaction
from .accounting import Release, sum_rounding_margin

__all__ = ["DPPCA"]

#: Relative noise multiplier of the column sums against the second moments when ``center``:
#: 2 gives the sums 1/5 of the budget's mu^2 and the second moments 4/5 (a public choice).
CENTER_MULTIPLIER = 2.0


class DPPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Principal component analysis with a differentially private fit (Gaussian mechanism).

    Every row is clipped to the public L2 norm ``data_norm`` (``x -> x min(1, C / ||x||)``).
    The fit releases

    * ``A = sum_i x_i x_i^T + E``, ``E`` symmetric with independent ``N(0, s^2)`` entries on and
      above the diagonal. Adding or removing a row moves ``A`` by ``x x^T``, of Frobenius norm
      ``||x||^2 <= C^2``; replacing ``x`` by ``x'`` moves it by ``x x^T - x' x'^T``, whose
      squared Frobenius norm is ``||x||^4 + ||x'||^4 - 2 (x . x')^2 <= 2 C^4``. The upper
      triangle (diagonal included) is released, whose L2 norm is at most the Frobenius norm:
      sensitivity ``sqrt(2) C^2`` (replace-one) and ``C^2`` (add/remove-one);
    * with ``center=True``, the column sums ``sum_i x_i + N(0, s_1^2 I)``, of L2 sensitivity
      ``2 C`` (replace-one) or ``C`` (add/remove-one), with a noise multiplier
      ``CENTER_MULTIPLIER`` times the matrix's (a fifth of the budget's ``mu^2``);
    * under add/remove-one without a public ``n_samples``, a noisy row count (as every
      estimator does).

    Both sensitivities are raised by the float64 rounding margin of a sum, and all releases
    compose to exactly ``(epsilon, delta)`` in Gaussian DP. The rest is post-processing: the
    mean ``m`` (the released sums over N, projected onto the ball of radius C), the
    covariance ``A / N - m m^T``, its top ``n_components`` eigenvectors (sign fixed so that the
    largest entry of each is positive) and eigenvalues (floored at 0).

    ``transform`` returns ``(clip(x) - m) V`` (``m = 0`` without centring) for the orthonormal
    components ``V``: its L2 norm is at most ``||clip(x)|| + ||m|| <= 2 C`` with centring and
    ``C`` without (``output_bound_``), whatever the noise drew, so a private pipeline can pass
    it on as the next step's public bound.

    Parameters
    ----------
    n_components : int, default=2
        Number of components kept (public, at most the number of features).
    epsilon : float, default=1.0
        Privacy budget of the fit (> 0; ``inf``: no noise).
    data_norm : float or None, default=None
        Public L2 bound of the input rows (rows above it are clipped). Required when fitted
        on its own; inside :func:`~skdpgd.pipeline.make_private_pipeline`, None takes the
        bound the earlier steps declare.
    center : bool, default=True
        Centre on a released mean (one more release, see above) before projecting.
    delta : float or None, default=None
        Delta of the guarantee; None: ``min(1e-5, 1/N^2)`` as in the estimators.
    budget : PrivacyBudget or None, default=None
        A shared budget charged with every release before it is drawn.
    neighbouring : {'auto', 'replace', 'add_remove'}, default='auto'
        Neighbouring relation ('auto': the budget's, else replace-one).
    n_samples : float or None, default=None
        Public row count under add/remove-one (otherwise a noisy count is released).
    random_state : int, RandomState instance or None, default=None
        Seeds the noise.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Orthonormal principal axes of the noisy covariance, largest eigenvalue first.
    explained_variance_ : ndarray of shape (n_components,)
        Their (noisy, floored at 0) eigenvalues.
    mean_ : ndarray of shape (n_features,)
        The released mean (zeros without centring).
    output_bound_ : float
        Public L2 bound of an output row (``2 data_norm``, or ``data_norm`` without centring).
    data_norm_ : float
        The bound the fit used.
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
    >>> from skdpgd.decomposition import DPPCA
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20000, 3)) * [1.0, 0.3, 0.1]
    >>> X /= np.linalg.norm(X, axis=1).max()
    >>> pca = DPPCA(n_components=1, epsilon=1.0, data_norm=1.0, random_state=0).fit(X)
    >>> bool(abs(pca.components_[0, 0]) > 0.99)
    True
    """

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._core.capability
    _skdpgd_privacy = DP_TRANSFORMER

    _parameter_constraints = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "epsilon": [Interval(numbers.Real, 0, np.inf, closed="right")],
        "data_norm": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "center": ["boolean"],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "budget": [HasMethods(["charge"]), None],
        "neighbouring": [StrOptions({"auto", "replace", "add_remove"})],
        "n_samples": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=2,
        *,
        epsilon=1.0,
        data_norm=None,
        center=True,
        delta=None,
        budget=None,
        neighbouring="auto",
        n_samples=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.epsilon = epsilon
        self.data_norm = data_norm
        self.center = center
        self.delta = delta
        self.budget = budget
        self.neighbouring = neighbouring
        self.n_samples = n_samples
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        return with_privacy(self, tags)  # the capability the class itself declares

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the noisy second moments (and mean) and keep their top eigenvectors.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : object
        """
        with fit_transaction(self):
            X = validate_data(self, X, dtype=np.float64, reset=True)
            if self.data_norm is None:
                raise ValueError(
                    "DPPCA needs a public data_norm (an L2 bound on the rows, which are clipped "
                    "to it): reading it from the data would leak. Inside make_private_pipeline "
                    "it is taken from the bound the earlier steps declare."
                )
            if self.n_components > X.shape[1]:
                raise ValueError(
                    f"n_components={self.n_components} exceeds the number of "
                    f"features ({X.shape[1]})."
                )
            C = float(self.data_norm)
            road = _PCARoad(_clip_rows(X, C), C, int(self.n_components), bool(self.center))
            set_fitted(self, private_fit(PrivacySpec.of(self), road, FitRows(X.shape[0])))
        return self

    def transform(self, X):
        """Project the clipped, centred rows on the components.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (_clip_rows(X, self.data_norm_) - self.mean_) @ self.components_.T

    @property
    def _n_features_out(self):
        return self.components_.shape[0]


def _clip_rows(X, bound):
    """Rows scaled down to L2 norm ``<= bound`` (rows already inside are unchanged)."""
    norms = np.linalg.norm(X, axis=1)
    scale = np.minimum(1.0, bound / np.maximum(norms, np.finfo(float).tiny))
    return X * scale[:, None]


class _PCARoad(Road):
    """DPPCA's releases (the noisy second-moment matrix, and the column sums when centring)
    as a road of :func:`skdpgd._core.fit.private_fit`."""

    def __init__(self, X, bound, n_components, center):
        self.X, self.C, self.k, self.center = X, bound, n_components, center

    def setup(self, fit):
        d = self.X.shape[1]
        # an entry x_j x_k of a term carries the relative errors of two clipped coordinates
        # and one product: below gamma_{2d + 17}, which the margin's "dim" covers
        self.margin = sum_rounding_margin(fit.rows_summed_bound(), 2 * d + 9)

    def releases(self, fit):
        C2 = self.C * self.C
        # A = sum_i x_i x_i^T, released as its upper triangle (diagonal included), whose L2
        # norm is at most the Frobenius norm. Add/remove-one: x x^T, norm ||x||^2 <= C^2.
        # Replace-one: ||x x^T - y y^T||_F^2 = ||x||^4 + ||y||^4 - 2 (x.y)^2 <= 2 C^4
        #   ->  sqrt(2) C^2 (replace-one), C^2 (add/remove-one)
        out = [
            Release(
                "second moments",
                [1.0],
                {"replace": math.sqrt(2.0) * C2, "add_remove": C2},
                fit.relation,
            )
        ]
        if self.center:
            # S = sum_i x_i with ||x_i|| <= C  ->  2 C (replace-one), C (add/remove-one)
            out.append(
                Release(
                    "column sums",
                    [CENTER_MULTIPLIER],
                    {"replace": 2.0 * self.C, "add_remove": self.C},
                    fit.relation,
                )
            )
        return out

    def run(self, fit, releases):
        X, d = self.X, self.X.shape[1]
        A = X.T @ X
        S = np.sum(X, axis=0, dtype=np.float64)
        moments = releases[0]
        if moments.multipliers[0] > 0 and is_secure(fit.gen):
            # the upper triangle (diagonal included) as one vector on a lattice, symmetrised
            A = symmetric_release(A, moments.noise_std[0], fit.gen, moments.own_sensitivity, 1.0)
            if self.center:
                S = gaussian(S, releases[1].noise_std[0], fit.gen, releases[1].own_sensitivity)
        elif moments.multipliers[0] > 0:
            upper = np.triu(fit.gen.standard_normal((d, d)))
            A = A + moments.noise_std[0] * (upper + np.triu(upper, 1).T)
            if self.center:
                S = S + releases[1].noise_std[0] * fit.gen.standard_normal(d)
        # post-processing of the released values (N is public or released)
        n = fit.n_public
        mean = np.zeros(d)
        if self.center:
            mean = S / n
            norm = np.linalg.norm(mean)
            if norm > self.C:  # onto the ball of radius C: keeps the output bound
                mean *= self.C / norm
        cov = A / n - np.outer(mean, mean)
        values, vectors = np.linalg.eigh(0.5 * (cov + cov.T))
        order = np.argsort(values)[::-1][: self.k]
        V = vectors[:, order].T
        signs = np.sign(V[np.arange(self.k), np.argmax(np.abs(V), axis=1)])
        V *= np.where(signs == 0, 1.0, signs)[:, None]
        return RoadResult(
            PCAAttributes(
                components_=V,
                explained_variance_=np.maximum(values[order], 0.0),
                mean_=mean,
                data_norm_=self.C,
                output_bound_=(2.0 if self.center else 1.0) * self.C,
                mu_=mu_of(fit.setup_releases + list(releases)),
            ),
        )

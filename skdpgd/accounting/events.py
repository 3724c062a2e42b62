"""What a fit released, as accountants read it: :class:`Release` (a group of Gaussian
releases, each with its L2 sensitivity under every neighbouring relation, and a sampling
rate), :class:`GaussianSteps` (a release known by its multipliers alone), the relations, and
the rounding margins that keep a computed sum within its stated sensitivity."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RELATIONS", "Release", "GaussianSteps", "COUNT_BOUND_SIGMAS", "sum_rounding_margin",
           "with_margin"]


def _frozen_multipliers(multipliers):
    """Noise multipliers as a read-only 1-D float array (each >= 0; 0 is no noise)."""
    z = np.array(multipliers, dtype=float).ravel()
    if np.any(np.isnan(z)) or np.any(z < 0):
        raise ValueError("noise multipliers must be >= 0.")
    z.setflags(write=False)
    return z


#: The neighbouring relations a guarantee can be stated for.
RELATIONS = ("replace", "add_remove")


@dataclass(frozen=True, eq=False)
class Release:
    """A group of Gaussian releases made by one fit, as accountants and budgets see them.

    Each release adds ``N(0, (z_t * sensitivity[relation])^2 I)`` to a quantity whose L2
    sensitivity between neighbouring datasets is ``sensitivity[r]`` under relation ``r``.
    The same noise is a different multiplier under the other relation, and the rule depends
    on the quantity: a clipped gradient sum moves by ``2C`` (replace-one) or ``C``
    (add/remove-one), a clipped norm sum by ``R`` under both, a count by 0 (N is public
    under replace-one) or 1. So each release carries its own sensitivities.

    Parameters
    ----------
    name : str
        What was released (shown in budgets and fitted attributes).
    multipliers : array of shape (T,)
        Noise standard deviation of each release divided by ``sensitivity[relation]``.
    sensitivity : dict
        ``{'replace': float, 'add_remove': float}``, the L2 sensitivity of one released
        quantity under each relation (in the units of the noise).
    relation : {'replace', 'add_remove'}
        The relation the fit calibrated its noise for.
    sampling_rate : float, default=1.0
        Poisson sampling rate of each release (1: full batch).
    """

    name: str
    multipliers: np.ndarray
    sensitivity: dict
    relation: str
    sampling_rate: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "multipliers", _frozen_multipliers(self.multipliers))
        if self.relation not in RELATIONS or set(self.sensitivity) != set(RELATIONS):
            raise ValueError("a release needs a relation and a sensitivity for each of "
                             f"{RELATIONS}.")
        if any(not v >= 0 for v in self.sensitivity.values()):
            raise ValueError("sensitivities must be >= 0.")
        q = float(self.sampling_rate)
        if not 0.0 < q <= 1.0:
            raise ValueError(f"sampling_rate must be in (0, 1], got {q!r}.")
        object.__setattr__(self, "sampling_rate", q)

    # the accountants read a release as a run of Gaussian steps: multipliers and a rate
    @property
    def noise_multipliers(self):
        """The multipliers (under the release's own relation), as accountants read them."""
        return self.multipliers

    @property
    def n_steps(self):
        return int(self.multipliers.shape[0])

    def calibrated(self, multipliers, sensitivity=None):
        """The same release with the accountant's ``multipliers`` (its shape scaled to the
        budget) and, if given, a ``sensitivity`` raised by a rounding margin."""
        return Release(self.name, multipliers,
                       dict(self.sensitivity if sensitivity is None else sensitivity),
                       self.relation, self.sampling_rate)

    def multipliers_under(self, relation):
        """The multipliers of the same noise under ``relation``: ``z * s_own / s_relation``.

        A sensitivity of 0 under ``relation`` makes the release free there (multiplier inf).
        The ratio is rounded down by two ulps, so a conversion never under-charges.
        """
        own = float(self.sensitivity[self.relation])
        other = float(self.sensitivity[relation])
        if relation == self.relation:
            return self.multipliers.copy()
        if other == 0.0:
            return np.full(self.multipliers.shape, np.inf)
        return self.multipliers * (own / other) * (1.0 - 2.0 * np.finfo(float).eps)

    @property
    def noise_std(self):
        """Standard deviation of the noise of each release."""
        return self.multipliers * float(self.sensitivity[self.relation])


#: Sensitivities of a release described by its multipliers alone (:class:`GaussianSteps`).
_UNIT_SENSITIVITY = {"replace": 1.0, "add_remove": 1.0}


class GaussianSteps(Release):
    """A release described by its noise multipliers and sampling rate only: what an
    accountant reads (epsilon for a delta, delta for an epsilon). The same type as every
    other :class:`Release`, with a unit sensitivity under add/remove-one.

    Parameters
    ----------
    noise_multipliers : array of shape (T,)
        ``z_t``: the noise standard deviation of step t divided by the L2 sensitivity of
        the released sum. 0 means no noise (infinite privacy loss).
    sampling_rate : float, default=1.0
        Poisson sampling rate q of each step; 1.0 is full batch.
    """

    def __init__(self, noise_multipliers, sampling_rate=1.0):
        super().__init__("steps", noise_multipliers, dict(_UNIT_SENSITIVITY), "add_remove",
                         sampling_rate)


#: Standard deviations a Gaussian count lands below the true count with probability
#: ``Phi(-40) < 1e-300`` (below the smallest double): the public row bound of
#: :func:`sum_rounding_margin` under add/remove-one with a noisy count is ``N~ + 40 z_c``.
COUNT_BOUND_SIGMAS = 40.0


def sum_rounding_margin(n_rows, dim):
    """Relative margin that covers floating-point error in a released sum of clipped terms.

    A sum of ``n`` terms, each of L2 norm ``<= C`` in exact arithmetic, is computed in float64
    in any order (the kernels use fastmath and threads, which reassociate): each coordinate's
    error is at most ``gamma_{n-1} sum_i |t_ij|`` (Higham, *Accuracy and Stability of
    Numerical Algorithms*, 4.2, valid for every summation order) with
    ``gamma_k = k u / (1 - k u)``, ``u = 2^-53``, so the L2 error is at most
    ``gamma_{n-1} sum_i ||t_i|| <= gamma_n n C``. Each term itself is computed with a relative
    error below ``gamma_{dim + 8}`` (a norm over ``dim`` coordinates, a clip factor, a
    product), which raises its norm to at most ``C (1 + gamma_{dim+8})``. Two neighbouring
    sums then differ by at most ``Delta + 2 gamma_n n C (1 + ...)``, and since
    ``Delta >= C`` the noise is calibrated to ``Delta (1 + margin)`` with::

        margin = 2 n gamma_{n+1} (1 + g_d) + 2 g_d,   g_d = gamma_{dim + 8}.

    This is the worst case, not the typical error (about ``sqrt(n) u`` relative): at
    ``n = 1e5`` the margin is 2.2e-6, at 1e6 2.2e-4, at 1e7 about 0.022. ``n_rows`` must be a
    public upper bound on the rows summed.
    """
    u = 2.0 ** -53

    def gamma(k):
        return k * u / (1.0 - k * u)

    n = float(n_rows) + 1.0
    if not n * u < 0.5:
        raise ValueError("too many rows for the float64 rounding margin.")
    g_d = gamma(float(dim) + 8.0)
    return 2.0 * n * gamma(n) * (1.0 + g_d) + 2.0 * g_d


def with_margin(sensitivity, margin):
    """A sensitivity dict scaled by ``1 + margin`` (rounded up)."""
    factor = (1.0 + margin) * (1.0 + 4.0 * np.finfo(float).eps)
    return {k: float(v) * factor for k, v in sensitivity.items()}


"""Penalties of the full-batch linear models: what the solvers need to know of the
regulariser, described in one place.

A penalty is a frozen object with a strength ``alpha`` (every part of it proportional to
``alpha``) that gives the solvers two things:

* ``l2``: the coefficient of its smooth part ``l2 / 2 ||w||^2``. It is the objective's
  strong convexity, a term ``l2 w`` of its gradient, and it adds ``l2`` to its smoothness.
* ``prox(w, step)``: the proximal step of its non-smooth part ``h``,
  ``argmin_u h(u) + ||u - w||^2 / (2 step)`` (the identity when there is none; then
  ``smooth`` is True).

The intercept is never penalised: ``w`` is the weights only. Penalties follow
scikit-learn's normalisation of :class:`sklearn.linear_model.ElasticNet`:

    ``alpha * l1_ratio * ||w||_1 + 0.5 * alpha * (1 - l1_ratio) * ||w||^2``

added to the average loss ``(1/N) sum_i l_i`` (for the squared loss ``l = r^2 / 2``, the
average is scikit-learn's ``1/(2N) ||y - Xw||^2``: the same alpha).

**Privacy.** A penalty is public (a parameter, or a rule of public constants): it shapes the
objective, never reads the data. Its proximal step acts on an iterate that is already
released (the noisy gradient step), so it is post-processing and costs no privacy. Only the
mechanisms that declare ``accepts_nonsmooth`` (noisy gradient descent) run a penalty whose
``smooth`` is False; output perturbation's sensitivity argument (strong convexity of a smooth
objective) and the Newton and sufficient-statistics solvers need a smooth one.

Adding a penalty is one class: derive from :class:`Penalty` (a frozen dataclass with an
``alpha`` field), give ``l2``, ``prox`` and ``value``, and ``smooth`` when ``prox`` is not the
identity.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np

__all__ = ["Penalty", "L2", "L1", "ElasticNet", "soft_threshold"]


def soft_threshold(w, threshold):
    """``sign(w) max(|w| - threshold, 0)``: the proximal step of ``threshold * ||w||_1``
    (elementwise; a new array)."""
    w = np.asarray(w, dtype=np.float64)
    return np.sign(w) * np.maximum(np.abs(w) - float(threshold), 0.0)


def _check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"a penalty's alpha is a number, got {alpha!r}.")
    if not (math.isfinite(alpha) and alpha >= 0.0):
        raise ValueError(f"a penalty's alpha is finite and >= 0, got {alpha!r}.")
    return float(alpha)


@dataclasses.dataclass(frozen=True)
class Penalty:
    """Base class: no penalty at all (``alpha`` unused); see the module docstring.

    Subclasses are frozen dataclasses whose every strength is proportional to ``alpha``
    (:meth:`scaled` relies on it)."""

    alpha: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "alpha", _check_alpha(self.alpha))

    @property
    def l2(self):
        """The coefficient of the smooth part ``l2 / 2 ||w||^2`` (strong convexity)."""
        return 0.0

    @property
    def smooth(self):
        """Whether the penalty has no non-smooth part (``prox`` is the identity)."""
        return True

    def prox(self, w, step):
        """The proximal step of the non-smooth part with step size ``step`` (the identity)."""
        return np.asarray(w, dtype=np.float64)

    def value(self, w):
        """The penalty of the weights ``w`` (the intercept is not penalised)."""
        w = np.asarray(w, dtype=np.float64)
        return 0.5 * self.l2 * float(np.sum(w * w))

    def scaled(self, factor):
        """The same penalty with every strength times ``factor`` (class weights divided by
        their largest shrink the loss by that factor; the penalty follows)."""
        return dataclasses.replace(self, alpha=self.alpha * float(factor))

    def with_l2_beyond(self, base):
        """The penalty of strength ``alpha`` whose first ``base`` is in this penalty's own
        form and whose rest, ``alpha - base``, is L2.

        ``alpha='auto'`` is ``base = 1/N`` (the non-private counterpart's penalty,
        :func:`skdpgd.policy.sklearn_alpha`) plus a term for the noise, which conditions the
        noisy descent through the objective's strong convexity: that term belongs to the
        smooth part, as in ``DPRidge``. Here (a penalty that is L2 already, or one that does
        not say otherwise): the penalty unchanged."""
        return self


@dataclasses.dataclass(frozen=True)
class L2(Penalty):
    """``alpha / 2 ||w||^2`` (ridge): smooth, strongly convex with constant ``alpha``."""

    @property
    def l2(self):
        return self.alpha


@dataclasses.dataclass(frozen=True)
class L1(Penalty):
    """``alpha ||w||_1`` (lasso): not smooth; its proximal step is soft thresholding at
    ``step * alpha``."""

    @property
    def smooth(self):
        return self.alpha == 0.0

    def prox(self, w, step):
        return soft_threshold(w, float(step) * self.alpha)

    def value(self, w):
        return self.alpha * float(np.sum(np.abs(np.asarray(w, dtype=np.float64))))

    def with_l2_beyond(self, base):
        # L1 of strength min(base, alpha), L2 of the rest: an elastic net
        return ElasticNet(self.alpha).with_l2_beyond(base, l1_ratio=1.0)


@dataclasses.dataclass(frozen=True)
class ElasticNet(Penalty):
    """``alpha * l1_ratio * ||w||_1 + 0.5 * alpha * (1 - l1_ratio) * ||w||^2`` (scikit-learn's
    :class:`~sklearn.linear_model.ElasticNet` normalisation). ``l1_ratio = 0`` is
    :class:`L2`, ``l1_ratio = 1`` is :class:`L1`."""

    l1_ratio: float = 0.5

    def __post_init__(self):
        super().__post_init__()
        r = self.l1_ratio
        if isinstance(r, bool) or not isinstance(r, numbers.Real) or not 0.0 <= r <= 1.0:
            raise ValueError(f"l1_ratio lies in [0, 1], got {r!r}.")
        object.__setattr__(self, "l1_ratio", float(r))

    @property
    def l1(self):
        """The coefficient of ``||w||_1``."""
        return self.alpha * self.l1_ratio

    @property
    def l2(self):
        return self.alpha * (1.0 - self.l1_ratio)

    @property
    def smooth(self):
        return self.l1 == 0.0

    def prox(self, w, step):
        return soft_threshold(w, float(step) * self.l1)

    def value(self, w):
        w = np.asarray(w, dtype=np.float64)
        return self.l1 * float(np.sum(np.abs(w))) + 0.5 * self.l2 * float(np.sum(w * w))

    def with_l2_beyond(self, base, l1_ratio=None):
        # the elastic net of strength base in its own l1_ratio, the rest L2: the same alpha,
        # l1_ratio * min(base, alpha) / alpha of it L1 (l1_ratio 0 stays exactly 0: DPRidge's)
        ratio = self.l1_ratio if l1_ratio is None else float(l1_ratio)
        if self.alpha == 0.0 or ratio == 0.0:
            return dataclasses.replace(self, l1_ratio=ratio)
        share = min(float(base), self.alpha) / self.alpha
        return dataclasses.replace(self, l1_ratio=min(1.0, ratio * share))

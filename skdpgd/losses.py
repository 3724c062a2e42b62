"""Losses and their public constants.

Each loss names the kernel code that evaluates its derivative and carries the constants that
the schedules need, all computed from public quantities only (never from the data):

* ``lipschitz(row_bound, n_outputs)``: G, a bound on the norm of one example's gradient for a
  row whose augmented norm ``||(x, 1)||`` (or ``||x||`` without intercept) is ``row_bound``.
  The kernels clip every per-example gradient to this norm, so the bound holds by construction;
  for the logistic losses clipping never changes anything (the bound is a theorem), for the
  squared loss it is what makes the sensitivity finite.
* ``smoothness(row_bound, n_outputs)``: M, the smoothness of the average loss (the L2 penalty
  adds ``alpha``).
* ``initial_gap(n_outputs, y_bound)``: B >= F(0) - F*, the loss-gap bound at theta_0 = 0.

Notation: rows are clipped to ``||x_i|| <= data_norm``; with an intercept the augmented row
``(x_i, 1)`` has norm at most ``r = sqrt(data_norm^2 + 1)``, otherwise ``r = data_norm``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from ._compute import kernels as K

__all__ = [
    "Loss",
    "BinaryLogistic",
    "MultinomialLogistic",
    "SquaredError",
    "Hinge",
    "ModifiedHuber",
    "SquaredHinge",
    "SquaredHingeOneVsRest",
    "Huber",
    "Poisson",
    "Tweedie",
]


@dataclass(frozen=True)
class Loss:
    """Base class: a loss, its kernel code and its public constants."""

    name = "loss"
    code = -1
    #: the full-batch second-order mechanism this loss admits ('newton', 'ssp' or None)
    second_order = None
    #: whether y is a real target (regression) rather than a class; the intercept-only model
    #: then releases the sum of the clipped targets instead of the class counts
    regression = False
    #: h, the Frobenius norm of one example's Hessian per squared row norm (``||H_i||_F <= h
    #: ||x~||^2``; see :mod:`skdpgd._full_batch.second_order`); None: no Hessian release for this
    #: loss
    hessian_frobenius = None
    #: whether ``schedule='auto'`` may start the gradient steps from the intercept-only model
    #: of a released target mean (regression losses with a public ``y_bound``)
    warm_start = False
    #: the link from the margin to a regressor's prediction: 'identity' or 'log' (Poisson)
    link = "identity"

    @property
    def output_scale(self):
        """The public scale of the model's outputs, in the targets' units: 1 for a margin or a
        log link (classifiers, Poisson); a regression on the identity link gives its public
        target scale, so that ``alpha='auto'`` does not depend on the targets' units
        (:func:`skdpgd.policy.consistent_alpha`)."""
        return 1.0

    @property
    def param(self):
        """The extra scalar the kernel reads for this loss (Huber's threshold; else 0)."""
        return 0.0

    def lipschitz(self, row_bound, n_outputs=1):
        raise NotImplementedError

    def smoothness(self, row_bound, n_outputs=1):
        raise NotImplementedError

    def initial_gap(self, n_outputs=1, y_bound=None):
        raise NotImplementedError


@dataclass(frozen=True)
class BinaryLogistic(Loss):
    """``log(1 + exp(-y z))`` with ``y in {-1, +1}``.

    ``|l'(z)| = 1 / (1 + exp(y z)) <= 1`` so G = r; ``l'' <= 1/4`` so M = r^2 / 4;
    F(0) = log 2 and F* >= 0 so B = log 2.
    """

    name = "log_loss"
    code = K.LOSS_LOGISTIC
    second_order = "newton"
    #: ``s(1 - s) x x^T`` with ``s(1 - s) <= 1/4``
    hessian_frobenius = 0.25

    def lipschitz(self, row_bound, n_outputs=1):
        return float(row_bound)

    def smoothness(self, row_bound, n_outputs=1):
        return float(row_bound) ** 2 / 4.0

    def initial_gap(self, n_outputs=1, y_bound=None):
        return math.log(2.0)


@dataclass(frozen=True)
class MultinomialLogistic(Loss):
    """Softmax cross-entropy over K classes, one weight row per class.

    The gradient with respect to the K x d parameters is ``(p - e_y) x^T`` with
    ``||p - e_y||^2 = (1 - p_y)^2 + sum_{k != y} p_k^2 <= 2``, so G = sqrt(2) r.
    The Hessian is ``(diag(p) - p p^T) (x) x x^T`` and ``diag(p) - p p^T`` has largest
    eigenvalue at most 1/2, so M = r^2 / 2. F(0) = log K and F* >= 0 so B = log K.
    """

    name = "multinomial_log_loss"
    code = K.LOSS_MULTINOMIAL
    second_order = "newton"
    #: ``(diag(p) - p p^T) (x) x x^T`` with ``||diag(p) - p p^T||_F <= 1/2``
    hessian_frobenius = 0.5

    def lipschitz(self, row_bound, n_outputs=2):
        return math.sqrt(2.0) * float(row_bound)

    def smoothness(self, row_bound, n_outputs=2):
        return float(row_bound) ** 2 / 2.0

    def initial_gap(self, n_outputs=2, y_bound=None):
        return math.log(n_outputs)


@dataclass(frozen=True)
class SquaredError(Loss):
    """``(z - y)^2 / 2`` with per-example gradients clipped to ``clip_norm``.

    ``clip_norm=None`` uses ``y_bound * row_bound``, the largest gradient norm at theta = 0.

    The unclipped gradient ``(z - y) x`` has no bound, so each example's gradient is scaled to
    norm at most ``clip_norm`` in closed form (its norm is ``|z - y| ||x||``). Clipping turns the
    loss into a Huber loss in the residual with threshold ``clip_norm / ||x||``; the kernels and
    the exact solver use that loss, which is ``clip_norm``-Lipschitz. M = r^2 (Hessian x x^T),
    and with targets clipped to ``|y| <= y_bound``: F(0) <= y_bound^2 / 2 and F* >= 0.
    """

    clip_norm: float | None = None
    y_bound: float | None = None

    name = "squared_error"
    code = K.LOSS_SQUARED
    second_order = "ssp"
    regression = True
    #: ``x x^T``
    hessian_frobenius = 1.0

    @property
    def output_scale(self):
        """``y_bound``, the half-width of the public target range (1 without one)."""
        return 1.0 if self.y_bound is None else float(self.y_bound)

    def lipschitz(self, row_bound, n_outputs=1):
        if self.clip_norm is not None:
            return float(self.clip_norm)
        if self.y_bound is None:
            raise ValueError("the squared loss needs clip_norm or y_bound.")
        return float(self.y_bound) * float(row_bound)

    def smoothness(self, row_bound, n_outputs=1):
        return float(row_bound) ** 2

    def initial_gap(self, n_outputs=1, y_bound=None):
        if y_bound is None:
            raise ValueError("the squared loss needs a public bound on |y|.")
        return float(y_bound) ** 2 / 2.0


# --- margin losses of the minibatch classifier (y in {-1, +1}) ------------------------------
# For these (and Huber) the smoothness is only used to set the default step size; the hinge is
# not smooth, so its "M" is the one of its smoothed versions, a heuristic stated in DPSGD's docs.


@dataclass(frozen=True)
class Hinge(Loss):
    """``max(0, 1 - y z)``: ``|l'| <= 1`` so G = r; l(0) = 1 and l >= 0 so B = 1.

    Not smooth: "M" here is the logistic loss's ``r^2 / 4``, used as the scale of the
    problem for the default step and ``alpha='auto'``. (With ``r^2``, the 'auto' penalty is so
    strong that no margin reaches 1, the objective is flat in the intercept and noisy SGD lets
    the intercept drift: measured test accuracy 0.64 instead of 0.94 without noise.)
    """

    name = "hinge"
    code = K.LOSS_HINGE

    def lipschitz(self, row_bound, n_outputs=1):
        return float(row_bound)

    def smoothness(self, row_bound, n_outputs=1):
        return float(row_bound) ** 2 / 4.0

    def initial_gap(self, n_outputs=1, y_bound=None):
        return 1.0


@dataclass(frozen=True)
class ModifiedHuber(Loss):
    """Zhang's smoothed hinge: ``max(0, 1 - y z)^2`` for ``y z >= -1``, else ``-4 y z``.

    ``|l'| <= 4`` so G = 4 r; ``l'' <= 2`` so M = 2 r^2; B = l(0) = 1.
    """

    name = "modified_huber"
    code = K.LOSS_MODIFIED_HUBER

    def lipschitz(self, row_bound, n_outputs=1):
        return 4.0 * float(row_bound)

    def smoothness(self, row_bound, n_outputs=1):
        return 2.0 * float(row_bound) ** 2

    def initial_gap(self, n_outputs=1, y_bound=None):
        return 1.0


@dataclass(frozen=True)
class SquaredHinge(Loss):
    """``max(0, 1 - y z)^2``: the derivative is unbounded, so the public gradient bound is its
    value at the start (``|l'(0)| = 2``, G = 2 r) and the kernels clip to it; M = 2 r^2; B = 1."""

    name = "squared_hinge"
    code = K.LOSS_SQUARED_HINGE

    def lipschitz(self, row_bound, n_outputs=1):
        return 2.0 * float(row_bound)

    def smoothness(self, row_bound, n_outputs=1):
        return 2.0 * float(row_bound) ** 2

    def initial_gap(self, n_outputs=1, y_bound=None):
        return 1.0


@dataclass(frozen=True)
class SquaredHingeOneVsRest(Loss):
    """K squared hinges fitted jointly, one-vs-rest: output k's target is ``y_k = +1`` for the
    examples of class k and -1 for the others, and its loss is the clipped squared hinge of
    :class:`SquaredHinge` (the kernels cap each output's ``|l'_k|`` at ``G_1 / ||x~||`` with
    ``G_1 = 2 r``, the one-output bound). The objective is the sum of the K binary ones, so its
    minimiser is the K binary minimisers.

    One example's gradient is ``(l'_1 y_1, ..., l'_K y_K) (x) x~``: its norm is at most
    ``sqrt(sum_k l'_k^2) ||x~|| <= sqrt(K) G_1``, so G = 2 sqrt(K) r (the kernels clip the
    whole gradient to it as well). Each step's release of the K x P gradient sum then has
    sensitivity 2G = 4 sqrt(K) r replace-one and G = 2 sqrt(K) r add/remove-one. The Hessian
    is block diagonal with blocks ``2 x~ x~^T`` (where not capped), so M = 2 r^2;
    F(0) = K and F* >= 0, so B = K.
    """

    name = "squared_hinge_ovr"
    code = K.LOSS_SQUARED_HINGE_OVR

    def lipschitz(self, row_bound, n_outputs=3):
        return math.sqrt(n_outputs) * 2.0 * float(row_bound)

    def smoothness(self, row_bound, n_outputs=3):
        return 2.0 * float(row_bound) ** 2

    def initial_gap(self, n_outputs=3, y_bound=None):
        return float(n_outputs)


@dataclass(frozen=True)
class Huber(Loss):
    """Huber loss of the residual with threshold ``threshold``: ``|l'| <= threshold`` so
    G = threshold r whatever the targets (the kernels' clip at G never acts); M = r^2; with
    ``|y| <= y_bound``, B = l(0) <= threshold y_bound.

    ``y_bound`` (optional): the public bound on the (centred, clipped) targets, which only the
    intercept-only model's release of the target sum needs; the gradient does not.
    ``scale``: the public scale of the residuals (the threshold is a multiple of it), the
    outputs' scale for ``alpha='auto'``."""

    threshold: float = 1.0
    y_bound: float | None = None
    scale: float = 1.0

    name = "huber"
    code = K.LOSS_HUBER
    regression = True
    warm_start = True

    @property
    def param(self):
        return float(self.threshold)

    @property
    def output_scale(self):
        return float(self.scale)

    def lipschitz(self, row_bound, n_outputs=1):
        return float(self.threshold) * float(row_bound)

    def smoothness(self, row_bound, n_outputs=1):
        return float(row_bound) ** 2

    def initial_gap(self, n_outputs=1, y_bound=None):
        if y_bound is None:
            raise ValueError("the Huber loss needs a public bound on |y| for B.")
        return float(self.threshold) * float(y_bound)


@dataclass(frozen=True)
class Poisson(Loss):
    """Poisson deviance with the log link, ``exp(z) - y z`` (half the deviance up to a term in
    y alone), for counts ``0 <= y <= y_bound``, with per-example gradients clipped to
    ``clip_norm``.

    ``l'(z) = exp(z) - y`` has no bound in z, so each example's gradient ``l'(z) x~`` is scaled
    to norm at most ``C = clip_norm`` in closed form, as for the squared loss; clipping a
    non-decreasing derivative to ``[-C/||x~||, C/||x~||]`` leaves it non-decreasing, so the
    clipped loss is convex (``exp(z) - y z`` continued by its tangents where ``|l'|`` exceeds
    the threshold) and C-Lipschitz: G = C. ``clip_norm=None`` uses ``max(1, y_bound) r``, which
    bounds every example's gradient norm at the start (``|1 - y| <= max(1, y_bound)``).
    Where the derivative is not clipped, ``l'' = exp(z) <= y + C / ||x~||``, so
    M = y_bound r^2 + C r. F(0) = 1 and ``min_z l = y - y log y >= min(0, Y - Y log Y)``
    (the clipped loss has the same minimum), so B = 1 + max(0, Y log Y - Y) with Y = y_bound.
    """

    clip_norm: float | None = None
    y_bound: float | None = None

    name = "poisson"
    code = K.LOSS_POISSON
    regression = True
    warm_start = True
    link = "log"

    def _y_bound(self):
        if self.y_bound is None:
            raise ValueError("the Poisson loss needs a public bound y_bound on the counts.")
        return float(self.y_bound)

    def lipschitz(self, row_bound, n_outputs=1):
        if self.clip_norm is not None:
            return float(self.clip_norm)
        return max(1.0, self._y_bound()) * float(row_bound)

    def smoothness(self, row_bound, n_outputs=1):
        r = float(row_bound)
        return self._y_bound() * r * r + self.lipschitz(row_bound, n_outputs) * r

    def initial_gap(self, n_outputs=1, y_bound=None):
        y = self._y_bound() if y_bound is None else float(y_bound)
        return 1.0 + (max(0.0, y * math.log(y) - y) if y > 0 else 0.0)


def _expm1_ratio(a, u):
    """``(e^{a u} - 1) / a``, and ``u`` at ``a = 0``."""
    return u if a == 0.0 else math.expm1(a * u) / a


@dataclass(frozen=True)
class Tweedie(Loss):
    """Tweedie deviance of power ``1 <= p <= 2`` with the log link, for targets
    ``y_min <= y <= y_bound``, with per-example gradients clipped to ``clip_norm``.

    With ``mu = e^z``, half the deviance up to terms in y alone is
    ``l(z) = E(2-p, z) - y E(1-p, z)``, ``E(a, z) = (e^{a z} - 1) / a`` (z at a = 0), so
    ``l(0) = 0``, ``l'(z) = e^{(2-p) z} - y e^{(1-p) z}`` (``1 - y`` at 0) and
    ``l''(z) = (2-p) e^{(2-p) z} + (p-1) y e^{(1-p) z} >= 0``: convex for ``1 <= p <= 2``
    (p = 1 Poisson, p = 2 Gamma), not outside, where the power is refused. Power 1 is the
    Poisson loss itself: its kernel code (``LOSS_POISSON``, whose value ``e^z - y z`` differs
    by the constant 1) and, below, the same constants bit for bit.

    * **G = C** (``clip_norm``). l' is unbounded (as z -> inf for p < 2, as z -> -inf for
      y > 0 and p > 1), so each example's gradient ``l'(z) x~`` is scaled to norm at most C
      in closed form; clipping a non-decreasing derivative to ``[-t, t]`` (t = C / ||x~||)
      leaves it non-decreasing, so the clipped loss is convex (l continued by its tangents
      where |l'| > t) and C-Lipschitz. ``clip_norm=None`` uses ``max(1, Y) r`` (Y =
      y_bound), every example's gradient norm at the start ``|1 - y| ||x~||``.
    * **M = Y^(2-p) r^2 + C r.** Write ``a = e^{(2-p) z}``, ``b = y e^{(1-p) z}`` (both
      >= 0): ``l' = a - b`` and ``l'' = (2-p) a + (p-1) b <= max(a, b) = min(a, b) + |l'|``.
      ``min(a, b) <= y^(2-p)``: if ``e^z <= y`` then ``a <= y^(2-p)``, else
      ``b <= y y^(1-p)``. So where the derivative is not clipped (``|l'| <= t``),
      ``l'' ||x~||^2 <= y^(2-p) ||x~||^2 + C ||x~||``, and the clipped loss has ``l'' = 0``
      elsewhere: the bound holds for every margin, wherever the fit goes (for Gamma, whose
      ``l' = 1 - y e^{-z}`` runs to -inf, too: the clip caps it, and ``l'' = y e^{-z} =
      1 - l' <= 1 + t``).
    * **B = max(g(y_min), g(Y))**, ``g(y) = l(0) - min_z l(z) = y E(1-p, log y) - E(2-p,
      log y)`` (the minimum at ``e^z = y``; the clipped loss has the same minimum and lies
      below l, so its gap is no larger), ``g(0) = 1 / (2-p)`` (the infimum as z -> -inf).
      ``g'(y) = (1 - y^(1-p)) / (p-1)`` (``log y`` at p = 1) is negative below 1 and positive
      above, so over ``[y_min, Y]`` g is largest at an end. At p = 2, ``g(0)`` is infinite
      (``l = z`` for y = 0 has no minimum): Gamma needs ``y_min > 0``, and is refused
      without it.

    The intercept-only minimiser ``e^b = mean y`` is the same for every power (the gradient
    sum is ``e^{(1-p) b} sum_i (e^b - y_i)``), so the Poisson warm start from the noisy mean
    serves every power (``warm_start``). No second-order mechanism (``second_order`` None:
    no Hessian release is bounded for this loss).
    """

    power: float = 1.5
    clip_norm: float | None = None
    y_bound: float | None = None
    y_min: float = 0.0

    name = "tweedie"
    regression = True
    warm_start = True
    link = "log"

    def __post_init__(self):
        p = self.power
        if not (isinstance(p, numbers.Real) and not isinstance(p, bool) and 1.0 <= p <= 2.0):
            raise ValueError(
                f"power must be in [1, 2] (the Tweedie deviance with the log link is convex "
                f"in the margin only there: 1 Poisson, 2 Gamma), got {p!r}."
            )
        if not (math.isfinite(self.y_min) and self.y_min >= 0.0):
            raise ValueError(f"y_min must be a finite number >= 0, got {self.y_min!r}.")
        if p == 2.0 and self.y_min == 0.0:
            raise ValueError(
                "power=2 (Gamma deviance) has no minimum at y = 0: it needs a public lower "
                "bound y_min > 0 on the targets."
            )

    @property
    def code(self):
        # power 1: Poisson's kernel code (same derivative; value differs by a constant)
        return K.LOSS_POISSON if self.power == 1.0 else K.LOSS_TWEEDIE

    @property
    def param(self):
        """The power p (the kernel reads it)."""
        return float(self.power)

    def _y_bound(self):
        if self.y_bound is None:
            raise ValueError("the Tweedie loss needs a public bound y_bound on the targets.")
        return float(self.y_bound)

    def lipschitz(self, row_bound, n_outputs=1):
        if self.clip_norm is not None:
            return float(self.clip_norm)
        return max(1.0, self._y_bound()) * float(row_bound)

    def smoothness(self, row_bound, n_outputs=1):
        r = float(row_bound)
        scale = self._y_bound() ** (2.0 - float(self.power))  # Y^(2-p), 1 at p = 2
        return scale * r * r + self.lipschitz(row_bound, n_outputs) * r

    def gap(self, y):
        """``g(y) = l(0) - min_z l(z; y)`` (see the class docstring)."""
        p, y = float(self.power), float(y)
        if y == 0.0:
            return math.inf if p == 2.0 else 1.0 / (2.0 - p)
        if p == 1.0:  # Poisson's expression, to the bit
            return 1.0 + (y * math.log(y) - y)
        u = math.log(y)
        return y * _expm1_ratio(1.0 - p, u) - _expm1_ratio(2.0 - p, u)

    def initial_gap(self, n_outputs=1, y_bound=None):
        y = self._y_bound() if y_bound is None else float(y_bound)
        return max(self.gap(self.y_min), self.gap(y))

"""The importance mask's public rule and its post-processing of released values, shared by
the linear DP-SGD road (:mod:`skdpgd._minibatch.importance`) and the torch road
(:mod:`skdpgd._network.torch_backend`): which coordinates to keep and how to scale them, from
released noisy gradients only (the privacy argument is in :mod:`skdpgd._minibatch.importance`
and docs/theory.md, "Importance masks"). Neither road family imports the other.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import policy


class ImportanceMask:
    """Importance-masked DP-SGD (AdaDPIGU, Zhang and Xie), computed privately.

    Pass an instance as the ``importance`` parameter of :class:`~skdpgd.DPSGDClassifier`,
    :class:`~skdpgd.DPSGDRegressor` or :class:`~skdpgd.DPMLPClassifier`.

    The first ``pretrain_fraction`` of the T steps are ordinary DP-SGD; each coordinate is
    scored by the mean magnitude of its *released* (noisy) mean gradient over them. The top
    ``keep`` fraction of the coordinates is then kept; the retained fraction grows linearly
    back towards 1 over ``unfreeze`` equal stages of the remaining steps (1 stage: a fixed
    mask). Masked coordinates are not updated and get no noise. With ``scaling``, each
    example's masked gradient is divided coordinate-wise by a scale s (the running RMS of the
    released gradients, normalised, within a bounded ratio) before it is clipped, and the
    noisy sum is multiplied back by s.

    The number of steps, the sampling rate and the noise multipliers are those of the plain
    run: the privacy guarantee (and ``epsilon_``) is the same, because every quantity that
    shapes the mask or the scale is a released value and every step's sum has sensitivity
    ``clip_norm`` (the clip comes after the mask and the scale).

    Parameters
    ----------
    pretrain_fraction : float in (0, 1), default=0.1
        Share of the steps spent in the unmasked pre-training phase (the paper gives no
        value; 0.1 is ours).
    keep : float in (0, 1], default=0.6
        Retained fraction r of the coordinates after pre-training (the paper's r = 0.6).
    unfreeze : int >= 1, default=4
        Number of equal stages of the masked phase; in stage k (0-based) the retained fraction
        is ``keep + (1 - keep) k / unfreeze`` (the paper's progressive unfreezing; its schedule
        is not given). 1 keeps the mask fixed.
    scaling : bool, default=False
        Coordinate-wise scaling of each example's gradient before the clip (the paper's
        adaptive clipping, without the mean subtraction). The paper uses it; it is off by
        default because it lost to the mask alone on the benchmark's tuning sets (digits and
        chile at epsilon 1, 2 and 4, computers at 1 and 2; up to 26 points on digits; level
        at epsilon 8; see the theory page): the scale concentrates the noise on the coordinates
        with the largest gradients and, normalised to RMS 1, amplifies the others, so most
        examples are clipped harder.

    Notes
    -----
    For the linear estimators a coordinate is a feature (its weights for every output); the
    intercept is always kept. For the MLP a coordinate is a parameter (weight or bias). Masked
    weights keep their value (frozen; they still enter the predictions). Setting them to 0
    instead, the paper's pruned forward pass ``l(m * theta)``, was behind freezing on the
    benchmark's tuning sets at 3 of 4 budgets (``skdpgd.policy.IMPORTANCE_LINEAR_FREEZE``).
    """

    def __init__(self, *, pretrain_fraction=0.1, keep=0.6, unfreeze=4, scaling=False):
        self.pretrain_fraction = pretrain_fraction
        self.keep = keep
        self.unfreeze = unfreeze
        self.scaling = scaling

    def __repr__(self):
        return (
            f"ImportanceMask(pretrain_fraction={self.pretrain_fraction!r}, "
            f"keep={self.keep!r}, unfreeze={self.unfreeze!r}, scaling={self.scaling!r})"
        )

    def __eq__(self, other):
        return type(other) is type(self) and vars(self) == vars(other)

    def __hash__(self):
        return hash(tuple(sorted(vars(self).items())))

    def validate(self):
        """Raise ValueError for a parameter out of range; return self."""
        pf, keep, unf = self.pretrain_fraction, self.keep, self.unfreeze
        if not (isinstance(pf, numbers.Real) and 0.0 < pf < 1.0):
            raise ValueError(f"ImportanceMask: pretrain_fraction must be in (0, 1), got {pf!r}.")
        if not (isinstance(keep, numbers.Real) and 0.0 < keep <= 1.0):
            raise ValueError(f"ImportanceMask: keep must be in (0, 1], got {keep!r}.")
        if not (isinstance(unf, numbers.Integral) and not isinstance(unf, bool) and unf >= 1):
            raise ValueError(f"ImportanceMask: unfreeze must be an int >= 1, got {unf!r}.")
        if not isinstance(self.scaling, (bool, np.bool_)):
            raise ValueError(f"ImportanceMask: scaling must be a bool, got {self.scaling!r}.")
        return self

    def stages(self, n_steps):
        """``[(t0, t1, kept fraction)]``: the pre-training stage (fraction 1), then the
        ``unfreeze`` stages of the masked phase (empty stages dropped). Public: a function of
        the parameters and T only."""
        n_steps = int(n_steps)
        t_pre = min(n_steps, max(1, int(round(float(self.pretrain_fraction) * n_steps))))
        out = [(0, t_pre, 1.0)]
        k = int(self.unfreeze)
        bounds = np.linspace(t_pre, n_steps, k + 1).round().astype(int)
        for i in range(k):
            if bounds[i + 1] > bounds[i]:
                frac = float(self.keep) + (1.0 - float(self.keep)) * i / k
                out.append((int(bounds[i]), int(bounds[i + 1]), frac))
        return out


def resolve_importance(importance):
    """The ImportanceMask to run, or None. 'auto' follows
    :data:`skdpgd.policy.AUTO_IMPORTANCE`."""
    if importance is None:
        return None
    if isinstance(importance, str):
        if importance != "auto":
            raise ValueError(
                f"importance must be None, 'auto' or an ImportanceMask; got {importance!r}."
            )
        return ImportanceMask() if policy.current().AUTO_IMPORTANCE else None
    if not isinstance(importance, ImportanceMask):
        raise ValueError(
            f"importance must be None, 'auto' or an ImportanceMask; got {importance!r}."
        )
    return importance.validate()


def kept_coordinates(score, fraction):
    """Indices (sorted) of the ``max(1, floor(fraction * d))`` coordinates with the largest
    scores (ties: the lower index first; a non-finite score ranks last). A function of the
    released scores only."""
    score = np.asarray(score, dtype=float)
    d = score.shape[0]
    k = d if fraction >= 1.0 else max(1, int(math.floor(fraction * d)))
    key = np.where(np.isfinite(score), score, -np.inf)
    order = np.argsort(-key, kind="stable")
    return np.sort(order[:k])


def coordinate_scale(second, kept, scaling):
    """Scale s over ``kept`` from the running second moments of the released gradients:
    ``sqrt(max(second, 0))`` normalised to RMS 1 over the kept coordinates, within
    [1/r, r] (r = ``skdpgd.policy.IMPORTANCE_SCALE_RATIO``); ones without scaling or when the
    moments carry nothing. Post-processing of released values."""
    ones = np.ones(kept.shape[0])
    if not scaling:
        return ones
    u = np.sqrt(np.maximum(np.asarray(second, dtype=float)[kept], 0.0))
    rms = math.sqrt(float(np.mean(u * u))) if u.size else 0.0
    if not (rms > 0.0 and math.isfinite(rms)):
        return ones
    r = policy.current().IMPORTANCE_SCALE_RATIO
    return np.clip(u / rms, 1.0 / r, r)


def _mask_scores(released_scores, coef, intercept):
    """The scores the mask is chosen from: the released ones. (benchmarks/bench_importance.py
    replaces this function to measure what a *non-private* score would buy; nothing in the
    package does. ``coef, intercept`` are the released iterate: the linear model's weights
    and intercepts, or the MLP's parameter dict and the order of its names.)"""
    return released_scores

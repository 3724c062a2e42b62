"""Importance-masked DP-SGD (seed 002, AdaDPIGU), made private.

AdaDPIGU (Zhang and Xie) runs ordinary DP-SGD for a pre-training share of the steps while
scoring each coordinate by the mean magnitude of its gradient, then keeps the top ``r * d``
coordinates (the rest are masked: not updated, and no noise is paid for them), lets the kept
fraction grow back towards 1 (progressive unfreezing), and standardises each example's
gradient coordinate-wise before clipping it.

The privacy argument here (docs/theory.md, "Importance masks"):

* **Scores and statistics come from released values only.** The score of coordinate j is
  ``mean_t |g^_{t,j}|`` over the pre-training steps, where ``g^_t`` is the *released* noisy
  mean gradient of step t (its noisy clipped sum divided by the public expected batch size);
  the running second moments that set the scaling are computed from the same released
  vectors (minus the noise's known variance, a public number). The mask and the scaling are
  therefore post-processing of earlier releases: public when the next step is taken.
* **Every step is a Poisson-subsampled Gaussian release with sensitivity clip_norm.** In a
  masked stage each example's gradient is masked (a coordinate projection), divided
  coordinate-wise by the public scale s, and *then* clipped to clip_norm in L2, so adding or
  removing one example moves the released sum (a vector over the kept coordinates) by at most
  clip_norm, whatever the mask and the scale. The masked coordinates of the sum are
  identically 0: nothing is released for them, so no noise is needed there.
* **Same T, q and noise multipliers as plain DP-SGD.** The steps are the same mechanism
  (adaptively composed: each step's mask is fixed by earlier outputs, which RDP/PLD
  composition allows), so ``epsilon_`` is exactly the plain run's.

What is left out of the paper: the per-example top-k after standardisation (a second,
data-dependent pruning inside each example's gradient; private too, since it happens before
the clip, but it adds a d log d sort per example), and the subtraction of the running mean
before scaling (it would break the closed-form clip of the linear kernels, whose per-example
gradient is a multiple of the row). The scaling here divides by a running RMS only.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._core import importance_mask as mask_rule
from .. import policy

#: Linear models with ``skdpgd.policy.IMPORTANCE_LINEAR_FREEZE``: a frozen weight still enters
#: every margin; the kernels see only the kept columns, so the frozen part of each margin,
#: ``x_i[masked] . theta[masked]`` (one per output), rides along as an extra column divided by
#: this scale whose weight is that scale and is never updated (step 0). Its coordinate of the
#: per-example gradient is tiny and, like every coordinate, inside the clip.
FROZEN_COLUMN_SCALE = 1e6


def _stage_data(X, kept, s, row_scale, fit_intercept):
    """X restricted to the kept columns and divided by s (a copy; X is not modified), and the
    augmented norms of the transformed rows in the kernel's coordinates (``row_scale`` applied,
    plus the intercept column 1): the clip bound of the row kernels."""
    w = 1.0 / s
    if sp.issparse(X):
        Xs = X[:, kept].tocsr()
        Xs.sort_indices()
        Xs.data = Xs.data * w[Xs.indices]
        from .._compute.kernels_sgd import csr_row_norms

        norms = csr_row_norms(Xs.data, Xs.indptr)
        Xk = (
            Xs.data.astype(np.float64, copy=False),
            Xs.indices.astype(np.int64),
            Xs.indptr.astype(np.int64),
        )
    else:
        Xk = np.ascontiguousarray(X[:, kept] * w)
        m = np.max(np.abs(Xk), axis=1) if Xk.shape[1] else np.zeros(Xk.shape[0])
        safe = np.where(m > 0, m, 1.0)
        norms = m * np.sqrt(np.sum((Xk / safe[:, None]) ** 2, axis=1))
    scaled = row_scale * norms
    aug = np.sqrt(scaled**2 + 1.0) if fit_intercept else scaled
    # a hair above the computed norm: the clip bound must not be below the true norm
    return Xk, aug * (1.0 + 1e-12), float(np.max(w)) if w.size else 1.0


def run_linear(
    mask,
    X,
    y,
    sample_weight,
    row_scale,
    row_norm_aug,
    common,
    state,
    n_steps,
    average_start,
    gen,
    row_bound_kernel,
    max_margin,
    fit_intercept,
    coef_scale,
    on_stage=None,
):
    """Run the T steps of importance-masked DP-SGD for a linear model.

    ``common`` is the plain kernel's tuple ``(loss, param, clip, fit_intercept, alpha, q,
    n_norm, steps, noise_std, momentum, max_norm)`` in the kernel's coordinates; ``state`` is
    :func:`skdpgd._compute.kernels_sgd.sgd_state` in full coordinates (updated in place). Returns
    ``(bad_step, info)``: the first step whose iterate broke the public bound (-1: none) and
    a dict of released-only diagnostics (kept counts per stage, the scores).
    """
    from .._compute.kernels_sgd import sgd_masked

    k_out, d = state[0].shape
    (loss, param, clip, fit_int, alpha, q, n_norm, steps, noise_std, momentum, _) = common
    score = np.zeros((k_out, d))
    second = np.zeros((k_out, d))
    coef, intercept, vcoef, vint, acoef, aint, beta = state
    info = {"kept": [], "stages": mask.stages(n_steps)}
    dense_X = X if not sp.issparse(X) else None
    released_score = None
    for stage, (t0, t1, frac) in enumerate(info["stages"]):
        if stage == 0:  # pre-training: all coordinates, s = 1
            kept = np.arange(d)
            s = np.ones(d)
            if sp.issparse(X):
                Xk = (
                    X.data.astype(np.float64, copy=False),
                    X.indices.astype(np.int64),
                    X.indptr.astype(np.int64),
                )
            else:
                Xk = dense_X
            aug, wmax = row_norm_aug, 1.0
        else:
            if released_score is None:  # end of pre-training: the scores (released values)
                released_score = np.sum(score, axis=0) / max(1, t0)
                ranking_score = mask_rule._mask_scores(released_score, coef / coef_scale, intercept)
            kept = mask_rule.kept_coordinates(ranking_score, frac)
            s = mask_rule.coordinate_scale(np.mean(second, axis=0), kept, mask.scaling)
            dropped = np.setdiff1d(np.arange(d), kept)
            vcoef[:, dropped] = 0.0  # a masked weight does not move
            n_frozen = 0
            if policy.current().IMPORTANCE_LINEAR_FREEZE and dropped.size:
                n_frozen = k_out  # one column per output: the frozen part of its margins
                offsets = np.asarray(X[:, dropped] @ coef[:, dropped].T)  # (n, k_out)
                Xs = (
                    sp.hstack([X, sp.csr_matrix(offsets)], format="csr")
                    if sp.issparse(X)
                    else np.hstack([X, offsets])
                )
                cols = np.concatenate([kept, d + np.arange(k_out)])
                s_cols = np.concatenate([s, np.full(k_out, FROZEN_COLUMN_SCALE)])
                Xk, aug, wmax = _stage_data(Xs, cols, s_cols, row_scale, fit_intercept)
            else:  # pruned: the kernel sees only the kept columns, so the weight must be 0
                coef[:, dropped] = 0.0
                Xk, aug, wmax = _stage_data(X, kept, s, row_scale, fit_intercept)
        info["kept"].append(int(kept.shape[0]))
        nk = kept.shape[0]
        s_run, pre = s, s * s
        sub = (
            np.ascontiguousarray(coef[:, kept] * s),
            intercept,
            np.ascontiguousarray(vcoef[:, kept] * s),
            vint,
            np.ascontiguousarray(acoef[:, kept] * s),
            aint,
            beta,
        )
        if stage > 0 and n_frozen:
            # weight FROZEN_COLUMN_SCALE on output k's own frozen column (theta' = theta s with
            # theta = 1), step 0 so it never moves
            extra = np.eye(k_out) * FROZEN_COLUMN_SCALE
            sub = (
                np.ascontiguousarray(np.hstack([sub[0], extra])),
                intercept,
                np.ascontiguousarray(np.hstack([sub[2], np.zeros((k_out, k_out))])),
                vint,
                np.ascontiguousarray(np.hstack([sub[4], np.zeros((k_out, k_out))])),
                aint,
                beta,
            )
            s_run = np.concatenate([s, np.full(k_out, FROZEN_COLUMN_SCALE)])
            pre = np.concatenate([s * s, np.zeros(k_out)])
        n_run = sub[0].shape[1]
        stats = (
            np.zeros((k_out, n_run)),
            np.ascontiguousarray(np.hstack([second[:, kept], np.zeros((k_out, n_run - nk))])),
        )
        max_norm = max_margin / max(row_bound_kernel * wmax, 1.0)
        if n_run > nk:  # the frozen columns' weights count in the iterate's norm
            max_norm += k_out * FROZEN_COLUMN_SCALE
        run_common = (
            loss,
            param,
            clip,
            fit_int,
            alpha,
            q,
            n_norm,
            steps,
            noise_std,
            momentum,
            max_norm,
        )
        bad = sgd_masked(
            Xk,
            y,
            sample_weight,
            row_scale,
            aug,
            *run_common,
            sub,
            int(t0),
            int(t1),
            average_start,
            gen,
            pre,
            s_run,
            stats,
            policy.current().IMPORTANCE_MOMENT_DECAY,
        )
        coef[:, kept] = sub[0][:, :nk] / s
        vcoef[:, kept] = sub[2][:, :nk] / s
        acoef[:, kept] = sub[4][:, :nk] / s
        if stage > 0 and n_frozen:  # the frozen weights, in every averaged iterate
            acoef[:, dropped] += coef[:, dropped] * max(0, t1 - max(t0, average_start))
        score[:, kept] += stats[0][:, :nk]
        second[:, kept] = stats[1][:, :nk]
        if on_stage is not None:
            on_stage(t1)
        if bad >= 0:
            return bad, info
    info["scores"] = released_score
    return -1, info

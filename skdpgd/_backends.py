"""Backends: where the training rows live, and the reductions over them that mechanisms use.

A mechanism never touches X. It asks a backend for a handful of sums over the rows, each a
sum of per-example terms whose norm the backend bounds (that bound is what the mechanism's
sensitivity rests on), and it adds the noise itself:

* :meth:`Rows.norm_sum` -- ``sum_i w_i min(||x_i||, R)``, each term in ``[0, R]``;
* :meth:`Rows.grad_sum` -- ``sum_i w_i clip_C(grad l(theta; x'_i, y_i))``, each term of
  norm ``<= C``; a term that is not finite contributes 0 and is counted;
* :meth:`Rows.hessian_sum` -- ``sum_i w_i l''(theta; x'_i, y_i)``, each term PSD with
  Frobenius norm ``<= h ||x'_i||^2`` (h = 1/4 binary logistic, 1/sqrt(2) multinomial,
  1 squared loss);
* :meth:`Rows.suff_stats` -- ``(sum_i w_i x'_i x'_i^T, sum_i w_i y_i x'_i)``.

All in the *kernel coordinates*: rows are clipped to norm ``R`` (:meth:`Rows.clip_rows`) and
divided by the intercept column ``c``; with an intercept a column of ones is appended, so
``x'_i = (s_i x_i / c, 1)`` with ``s_i = min(1, R / ||x_i||)``. (A problem with column c is
the same problem in the coordinates ``w' = c w`` on rows ``x / c``; see
:func:`skdpgd._base.fit_full_batch`.) Sums are accumulated in float64.

:func:`make_rows` picks the backend from the type of X: a dense array or a CSR matrix (never
densified). A distributed backend supplies the same methods over chunks.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import _kernels
from ._kernels_sgd import csr_row_norms


def make_rows(X, y, sample_weight, fit_intercept):
    """The backend for X (dense ndarray or scipy sparse)."""
    if sp.issparse(X):
        return CSRRows(X, y, sample_weight, fit_intercept)
    return DenseRows(X, y, sample_weight, fit_intercept)


class Rows:
    """Base class of the backends (see the module docstring for the reductions)."""

    def __init__(self, y, sample_weight, fit_intercept):
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64)
        self.fit_intercept = bool(fit_intercept)
        self._norms = self._row_norms()
        self.clip_rows(np.inf, 1.0)

    # --- to be supplied by a backend -----------------------------------------------------
    def _row_norms(self):  # pragma: no cover - interface
        raise NotImplementedError

    # --- row clipping ----------------------------------------------------------------------
    def clip_rows(self, bound, column):
        """Clip rows to norm ``bound`` and divide them by the intercept column ``column``."""
        norms = self._norms
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(norms > bound, bound / np.where(norms > 0, norms, 1.0), 1.0)
        clipped = np.minimum(norms, bound) / column
        self.row_bound = float(bound)
        self.row_scale = np.ascontiguousarray(scale / column)
        self.row_norm_aug = np.ascontiguousarray(
            np.sqrt(clipped * clipped + (1.0 if self.fit_intercept else 0.0)))

    def norm_sum(self, bound):
        """``sum_i w_i min(||x_i||, bound)``: each term lies in ``[0, bound]``."""
        return float(np.dot(self.sample_weight, np.minimum(self._norms, bound)))

    @property
    def n_params(self):
        return self.n_features + int(self.fit_intercept)

    def augmented_rows(self, lo, hi):
        """Dense ``x'_i`` for rows ``lo <= i < hi`` (float64, shape (hi - lo, n_params))."""
        raise NotImplementedError  # pragma: no cover - interface

    # --- reductions ------------------------------------------------------------------------
    def hessian_sum(self, coef, intercept, loss_code):
        """``sum_i w_i H_i`` with ``H_i`` the Hessian of one example's loss at ``theta``.

        Binary logistic: ``s_i (1 - s_i) x'_i x'_i^T`` (``s_i`` the sigmoid of the margin);
        multinomial: ``(diag(p_i) - p_i p_i^T) (x) x'_i x'_i^T`` with parameters ordered
        class-major (index ``k * n_params + j``); squared loss: ``x'_i x'_i^T``.
        Returns an array of shape ``(K n_params, K n_params)``.
        """
        k_out = coef.shape[0]
        P = self.n_params
        H = np.zeros((k_out * P, k_out * P))
        for lo, hi in self._chunks():
            A = self.augmented_rows(lo, hi)
            w = self.sample_weight[lo:hi]
            theta = np.hstack([coef, intercept[:, None]]) if self.fit_intercept else coef
            Z = A @ theta.T
            if loss_code == _kernels.LOSS_LOGISTIC:
                s = 1.0 / (1.0 + np.exp(-Z[:, 0]))
                H += (A * (w * s * (1.0 - s))[:, None]).T @ A
            elif loss_code == _kernels.LOSS_MULTINOMIAL:
                Z = Z - Z.max(axis=1, keepdims=True)
                p = np.exp(Z)
                p /= p.sum(axis=1, keepdims=True)
                for a in range(k_out):
                    for b in range(a, k_out):
                        f = w * (p[:, a] * ((a == b) - p[:, b]))
                        block = (A * f[:, None]).T @ A
                        H[a * P:(a + 1) * P, b * P:(b + 1) * P] += block
                        if b != a:
                            H[b * P:(b + 1) * P, a * P:(a + 1) * P] += block
            elif loss_code == _kernels.LOSS_SQUARED:
                H += (A * w[:, None]).T @ A
            else:
                raise ValueError(f"no Hessian for loss code {loss_code}.")
        return H

    def suff_stats(self):
        """``(sum_i w_i x'_i x'_i^T, sum_i w_i y_i x'_i)`` (the targets as stored)."""
        P = self.n_params
        A_tot = np.zeros((P, P))
        b_tot = np.zeros(P)
        for lo, hi in self._chunks():
            A = self.augmented_rows(lo, hi)
            w = self.sample_weight[lo:hi]
            A_tot += (A * w[:, None]).T @ A
            b_tot += A.T @ (w * self.y[lo:hi])
        return A_tot, b_tot

    def _chunks(self, entries=1 << 20):
        n = self.n_samples
        step = max(1, entries // max(1, self.n_params))
        return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


class DenseRows(Rows):
    """Rows in a dense C-ordered float64 array (not copied when it already is one)."""

    def __init__(self, X, y, sample_weight, fit_intercept):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.n_samples, self.n_features = self.X.shape
        super().__init__(y, sample_weight, fit_intercept)

    def _row_norms(self):
        _, norms = _kernels.row_clip_factors(self.X, np.inf, False)
        return norms

    def augmented_rows(self, lo, hi):
        A = self.X[lo:hi] * self.row_scale[lo:hi, None]
        if self.fit_intercept:
            A = np.hstack([A, np.ones((hi - lo, 1))])
        return A

    def grad_sum(self, coef, intercept, loss_code, param, clip_norm):
        """``(sum_i w_i clip(g_i) for the weights, ... for the intercepts, n_bad)``.

        Each per-example term has norm ``<= clip_norm`` (closed-form clip of
        ``l'(z_i) x'_i``), so the sum moves by at most ``clip_norm`` when a row is added or
        removed and ``2 clip_norm`` when one is replaced. ``n_bad`` counts rows whose
        gradient was not finite; they contribute 0. The rows are summed in blocks fixed by
        the shape of X (threads sum disjoint blocks when X is large), then the blocks are
        added in order: the same numbers on any number of threads.
        """
        return _kernels.dense_grad_sum(self.X, self.y, self.sample_weight, self.row_scale,
                                       self.row_norm_aug, loss_code, param, clip_norm, coef,
                                       intercept)

    def objective(self, coef, intercept, loss_code, param, clip_norm, alpha, alpha_intercept):
        """Exact regularised clipped objective and its gradient (no noise; for exact solvers)."""
        gcoef = np.zeros_like(coef)
        gint = np.zeros(coef.shape[0])
        f = _kernels.objective_and_gradient(
            self.X, self.y, self.sample_weight, self.row_scale, self.row_norm_aug,
            int(loss_code), float(param), float(clip_norm), self.fit_intercept, float(alpha),
            float(alpha_intercept), np.ascontiguousarray(coef), np.ascontiguousarray(intercept),
            gcoef, gint)
        return f, gcoef, gint


class CSRRows(Rows):
    """Rows in a canonical CSR matrix, never densified (only row blocks, for the Hessian)."""

    def __init__(self, X, y, sample_weight, fit_intercept):
        X = sp.csr_matrix(X) if not sp.isspmatrix_csr(X) else X
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        self.X = X
        self.data = np.ascontiguousarray(X.data, dtype=np.float64)
        self.indices = np.ascontiguousarray(X.indices, dtype=np.int64)
        self.indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
        self.n_samples, self.n_features = X.shape
        super().__init__(y, sample_weight, fit_intercept)

    def _row_norms(self):
        if self.n_samples == 0:
            return np.zeros(0)
        return csr_row_norms(self.data, self.indptr)

    def augmented_rows(self, lo, hi):
        A = self.X[lo:hi].multiply(self.row_scale[lo:hi, None]).toarray()
        if self.fit_intercept:
            A = np.hstack([A, np.ones((hi - lo, 1))])
        return A

    def grad_sum(self, coef, intercept, loss_code, param, clip_norm):
        """As :meth:`DenseRows.grad_sum`, for CSR rows."""
        k_out, d = coef.shape
        gcoef = np.zeros((k_out, d))
        gint = np.zeros(k_out)
        bad = _kernels._sum_rows_csr(
            self.data, self.indices, self.indptr, self.y, self.sample_weight, self.row_scale,
            self.row_norm_aug, np.empty(0, np.int64), 0, self.n_samples, int(loss_code),
            float(param), float(clip_norm), np.ascontiguousarray(coef, dtype=np.float64),
            np.ascontiguousarray(intercept, dtype=np.float64), gcoef, gint)
        return gcoef, gint, int(bad)

    def objective(self, coef, intercept, loss_code, param, clip_norm, alpha, alpha_intercept):
        """Exact regularised clipped objective and gradient, computed on dense row blocks."""
        k_out = coef.shape[0]
        total = 0.0
        gcoef = np.zeros_like(coef)
        gint = np.zeros(k_out)
        for lo, hi in self._chunks():
            block = DenseRows.__new__(DenseRows)
            block.X = self.X[lo:hi].toarray()
            block.y = self.y[lo:hi]
            block.sample_weight = self.sample_weight[lo:hi]
            block.row_scale = self.row_scale[lo:hi]
            block.row_norm_aug = self.row_norm_aug[lo:hi]
            block.fit_intercept = self.fit_intercept
            m = hi - lo
            f, gc, gi = block.objective(coef, intercept, loss_code, param, clip_norm, 0.0, 0.0)
            total += f * m
            gcoef += gc * m
            gint += gi * m
        n = self.n_samples
        total = total / n + 0.5 * alpha * float(np.sum(coef * coef))
        gcoef = gcoef / n + alpha * coef
        if self.fit_intercept:
            total += 0.5 * alpha_intercept * float(np.sum(intercept * intercept))
            gint = gint / n + alpha_intercept * intercept
        else:
            gint = np.zeros(k_out)
        return total, gcoef, gint

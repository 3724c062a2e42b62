"""Backends: the Hessian sum, the sufficient statistics and the objective of the dense and CSR
rows against the numpy oracle (tests/_support/reference.py), and their threading."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdpgd._compute import kernels as K
from skdpgd._compute import kernels_second as K2
from skdpgd._compute.backends import CSRRows, DenseRows
from skdpgd._core.data import make_rows

from _support import reference as ref

CASES = [("logistic", 1), ("multinomial", 3), ("multinomial", 4), ("squared", 1)]
CODES = {"logistic": K.LOSS_LOGISTIC, "multinomial": K.LOSS_MULTINOMIAL, "squared": K.LOSS_SQUARED}


def make_problem(loss, k_out, n=203, d=11, density=1.0, seed=0):
    """Rows of varied norms (about half above the bound 2 used below), weights in [0, 1]."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 2.0, size=(n, 1))
    if density < 1.0:
        X[rng.random((n, d)) > density] = 0.0
    if loss == "logistic":
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    elif loss == "multinomial":
        y = rng.integers(0, k_out, n).astype(float)
    else:
        y = rng.normal(size=n)
    w = rng.uniform(0, 1, n)
    w[::17] = 0.0
    coef = rng.normal(size=(k_out, d)) * 0.7
    intercept = rng.normal(size=k_out)
    return X, y, w, coef, intercept


def backends(X, y, w, fit_intercept, bound=2.0, column=1.3):
    """Dense and CSR rows over the same data, rows clipped to ``bound``, intercept column c."""
    out = []
    for rows in (DenseRows(X, y, w, fit_intercept), CSRRows(sp.csr_matrix(X), y, w, fit_intercept)):
        rows.clip_rows(bound, column if fit_intercept else 1.0)
        out.append(rows)
    if bound == 2.0:  # the default: some rows are clipped
        assert np.any(out[0].row_scale * (column if fit_intercept else 1.0) < 1.0)
    return out


def oracle_rows(rows, X):
    return ref.augmented_rows(X, rows.row_scale, rows.fit_intercept)


def theta_of(coef, intercept, fit_intercept):
    return np.hstack([coef, intercept[:, None]]) if fit_intercept else coef


@pytest.mark.parametrize("loss,k_out", CASES)
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("density", [1.0, 0.3])
def test_hessian_sum_matches_oracle(loss, k_out, fit_intercept, density):
    X, y, w, coef, b = make_problem(loss, k_out, density=density)
    for rows in backends(X, y, w, fit_intercept):
        H = rows.hessian_sum(coef, b, CODES[loss])
        want = ref.hessian_sum(
            oracle_rows(rows, X), w, CODES[loss], theta_of(coef, b, fit_intercept)
        )
        assert H.shape == want.shape == (k_out * rows.n_params,) * 2
        np.testing.assert_allclose(H, want, rtol=1e-11, atol=1e-12)
        np.testing.assert_array_equal(H, H.T)  # mirrored exactly


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("density", [1.0, 0.3])
def test_suff_stats_match_oracle(fit_intercept, density):
    X, y, w, _, _ = make_problem("squared", 1, density=density)
    for rows in backends(X, y, w, fit_intercept):
        A, bvec = rows.suff_stats()
        A_ref, b_ref = ref.suff_stats(oracle_rows(rows, X), w, y)
        np.testing.assert_allclose(A, A_ref, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(bvec, b_ref, rtol=1e-11, atol=1e-12)
        np.testing.assert_array_equal(A, A.T)


@pytest.mark.parametrize("loss,k_out", CASES)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_objective_matches_oracle_dense_and_csr(loss, k_out, fit_intercept):
    X, y, w, coef, b = make_problem(loss, k_out, density=0.5)
    b = b if fit_intercept else np.zeros(k_out)
    # the clip binds for the squared loss (a Huber loss); it is above the logistic losses'
    # Lipschitz bound, so it never binds there (as in the estimators)
    clip = 0.8 if loss == "squared" else 10.0
    results = []
    for rows in backends(X, y, w, fit_intercept):
        # sums over the rows, no penalty and no normaliser (the mechanism adds those)
        f, gc, gb = rows.objective(coef, b, CODES[loss], 0.0, clip)
        fs, G = ref.objective(
            oracle_rows(rows, X), y, w, CODES[loss], clip, theta_of(coef, b, fit_intercept)
        )
        assert f == pytest.approx(fs, rel=1e-11)
        np.testing.assert_allclose(gc, G[:, : X.shape[1]], rtol=1e-10, atol=1e-12)
        if fit_intercept:
            np.testing.assert_allclose(gb, G[:, -1], rtol=1e-10, atol=1e-12)
        results.append((f, gc, gb))
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("loss,k_out", CASES)
def test_grad_sum_dense_and_csr_agree_with_oracle(loss, k_out):
    X, y, w, coef, b = make_problem(loss, k_out, density=0.4)
    for rows in backends(X, y, w, True):
        gc, gb, bad = rows.grad_sum(coef, b, CODES[loss], 0.0, 0.7)
        S, n_bad = ref.clipped_gradient_sum(
            oracle_rows(rows, X), y, w, CODES[loss], 0.7, theta_of(coef, b, True)
        )
        assert bad == n_bad == 0
        np.testing.assert_allclose(gc, S[:, :-1], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(gb, S[:, -1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("loss,k_out", CASES)
def test_same_numbers_on_any_thread_count_and_panel_split(loss, k_out, monkeypatch):
    """Threads split the result's rows; each entry is summed in the same order whoever
    computes it: bit for bit the same with one thread, two, and tiny panels."""
    X, y, w, coef, b = make_problem(loss, k_out, n=1001, d=37, density=0.6)
    Xc = sp.csr_matrix(X)
    rows = DenseRows(X, y, w, True)
    rows.clip_rows(2.0, 1.3)
    dense = (X, rows.row_scale, w, True, CODES[loss], coef, b)
    csr = (
        Xc.data.astype(float),
        Xc.indices.astype(np.int64),
        Xc.indptr.astype(np.int64),
        X.shape[1],
        rows.row_scale,
        w,
        True,
        CODES[loss],
        coef,
        b,
    )
    runs = {}
    for key, panel in [("big", K2.PANEL_BYTES), ("small", 800)]:
        monkeypatch.setattr(K2, "PANEL_BYTES", panel)
        for par in (False, True):
            runs[key, par] = (
                K2.hessian_sum(*dense, parallel=par),
                K2.hessian_sum_csr(*csr, parallel=par),
                K2.suff_stats(X, rows.row_scale, w, True, y, parallel=par),
                K2.suff_stats_csr(*csr[:7], y, parallel=par),
            )
    for key in [("big", True), ("small", False), ("small", True)]:
        for u, v in zip(runs["big", False], runs[key]):
            for p, q in zip(
                u if isinstance(u, tuple) else (u,), v if isinstance(v, tuple) else (v,)
            ):
                np.testing.assert_array_equal(p, q)


def test_chunks_are_summed_in_order(monkeypatch):
    """Chunks of data rows (fixed by the shape) change nothing but rounding."""
    X, y, w, coef, b = make_problem("logistic", 1, n=999, d=13)
    rows = DenseRows(X, y, w, True)
    H1 = rows.hessian_sum(coef, b, K.LOSS_LOGISTIC)
    monkeypatch.setattr(K2, "CHUNK_BYTES", 8 * 14 * 40)  # chunks of 40 rows
    H2 = rows.hessian_sum(coef, b, K.LOSS_LOGISTIC)
    np.testing.assert_allclose(H1, H2, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("loss,k_out", CASES[:2])
def test_hessian_rows_with_non_finite_margins_contribute_zero(loss, k_out):
    X, y, w, coef, b = make_problem(loss, k_out, n=50, d=5)
    X[:, 0] = 0.0
    X[::5, 0] = 10.0
    coef[:, 0] = 1e308
    b[:] = -np.inf  # rows with x_0 = 10: inf - inf = NaN; the others: -inf
    for rows in backends(X, y, np.ones(50), True, bound=1e6):
        H = rows.hessian_sum(coef, b, CODES[loss])
        assert np.all(np.isfinite(H))
        if loss == "logistic":  # -inf margins: weight 0; NaN margins: left out
            np.testing.assert_array_equal(H, 0.0)


def test_bad_loss_code_raises():
    X, y, w, coef, b = make_problem("logistic", 1, n=10, d=3)
    for rows in backends(X, y, w, True):
        with pytest.raises(ValueError, match="no Hessian"):
            rows.hessian_sum(coef, b, K.LOSS_HINGE)


def test_csr_is_never_densified(monkeypatch):
    X, y, w, coef, b = make_problem("multinomial", 3, n=40, d=6, density=0.3)
    rows = make_rows(sp.csr_matrix(X), y, w, True)
    rows.clip_rows(2.0, 1.3)

    def refuse(*args, **kwargs):
        raise AssertionError("CSR rows were densified")

    formats = ("csr", "csc", "coo", "bsr", "lil", "dok", "dia")
    for cls in [getattr(sp, f"{f}_{kind}") for f in formats for kind in ("matrix", "array")]:
        for name in ("toarray", "todense", "__array__"):
            monkeypatch.setattr(cls, name, refuse, raising=False)
    rows.hessian_sum(coef, b, K.LOSS_MULTINOMIAL)
    rows.grad_sum(coef, b, K.LOSS_MULTINOMIAL, 0.0, 1.0)
    rows.objective(coef, b, K.LOSS_MULTINOMIAL, 0.0, 1.0)
    rows.suff_stats()
    rows.norm_sum(1.0)


def test_empty_and_tiny_inputs():
    for n in (1, 2, 3, 5):
        X, y, w, coef, b = make_problem("logistic", 1, n=n, d=4)
        for rows in backends(X, y, np.ones(n), True, bound=1e6):
            H = rows.hessian_sum(coef, b, K.LOSS_LOGISTIC)
            want = ref.hessian_sum(
                oracle_rows(rows, X), np.ones(n), K.LOSS_LOGISTIC, theta_of(coef, b, True)
            )
            np.testing.assert_allclose(H, want, rtol=1e-12, atol=1e-14)

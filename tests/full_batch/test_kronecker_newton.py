"""The Kronecker-factored DP Newton of the multinomial loss: its two new reductions, their
sensitivities, its accounting and its convergence."""

import math

import numpy as np
import pytest
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from skdpgd import DPLogisticRegression, policy
from skdpgd._core.data import make_rows
from skdpgd._full_batch.second_order import floored_eigh, kronecker_solve
from skdpgd.accounting import compose_gdp
from skdpgd.schedules import KroneckerNewton


def _data(n=600, d=4, seed=0, classes=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / (2 * math.sqrt(d))
    W = rng.normal(size=(d, classes)) * 4
    y = np.argmax(X @ W + rng.gumbel(size=(n, classes)), axis=1)
    return X, y


def _direct(X, w, coef, intercept):
    z = X @ coef.T + intercept
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return sum(wi * (np.diag(pi) - np.outer(pi, pi)) for wi, pi in zip(w, p))


@pytest.mark.parametrize("kind", ["dense", "csr", "large"])
def test_class_curvature_sum_is_the_class_factor_of_the_hessian(kind):
    rng = np.random.default_rng(0)
    n, d, k = (2000, 40, 4) if kind == "large" else (200, 5, 3)
    X = rng.normal(size=(n, d))
    X[rng.random(size=X.shape) < 0.5] = 0.0
    w = rng.uniform(0.2, 1.0, size=n)
    coef, b = rng.normal(size=(k, d)), rng.normal(size=k)
    rows = make_rows(sparse.csr_matrix(X) if kind == "csr" else X, np.zeros(n), w, True)
    rows.clip_rows(np.inf, 1.0)
    A = rows.class_curvature_sum(coef, b)
    np.testing.assert_allclose(A, _direct(X, w, coef, b), rtol=1e-10, atol=1e-10)
    assert np.allclose(A, A.T) and np.allclose(A.sum(axis=1), 0.0, atol=1e-9)


@pytest.mark.parametrize("small", [True, False])
def test_class_curvature_sum_ignores_rows_with_non_finite_margins(small):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1e308, 1e308]])
    rows = make_rows(X, np.zeros(3), np.ones(3), True)
    rows.small = small  # numpy (small problems) or the kernel
    rows.clip_rows(np.inf, 1.0)  # unclipped: the third row's margin overflows
    coef = np.array([[10.0, 0.0], [0.0, 0.0], [0.0, 10.0]])
    A = rows.class_curvature_sum(coef, np.zeros(3))
    np.testing.assert_allclose(A, _direct(X[:2], np.ones(2), coef, np.zeros(3)), atol=1e-12)


@pytest.mark.parametrize("classes", [3, 5])
def test_class_curvature_sensitivity_bound_holds_and_is_nearly_attained(classes):
    """One row's term is PSD with Frobenius norm <= 1/2: replace-one moves the sum by at most
    sqrt(2)/2, add/remove-one by 1/2, whatever the rows and the iterate."""
    rng = np.random.default_rng(1)
    n, d = 40, 3
    X = rng.normal(size=(n, d))
    coef, b = rng.normal(size=(classes, d)) * 3, rng.normal(size=classes)

    def A(Xm, w):
        rows = make_rows(Xm, np.zeros(n), w, True)
        rows.clip_rows(np.inf, 1.0)
        return rows.class_curvature_sum(coef, b)

    base = A(X, np.ones(n))
    worst_replace = worst_remove = 0.0
    for i in range(n):
        for _ in range(5):
            X2 = X.copy()
            X2[i] = rng.normal(size=d) * rng.choice([0.1, 1.0, 10.0])
            worst_replace = max(worst_replace, np.linalg.norm(base - A(X2, np.ones(n))))
        w = np.ones(n)
        w[i] = 0.0
        worst_remove = max(worst_remove, np.linalg.norm(base - A(X, w)))
    assert worst_replace <= math.sqrt(2) / 2 * (1 + 1e-12)
    assert worst_remove <= 0.5 * (1 + 1e-12)
    # a row with two classes at probability 1/2 attains 1/2 exactly
    coef2 = np.zeros((classes, d))
    b2 = np.full(classes, -50.0)
    b2[:2] = 0.0
    rows = make_rows(X[:1], np.zeros(1), np.ones(1), True)
    rows.clip_rows(np.inf, 1.0)
    assert np.linalg.norm(rows.class_curvature_sum(coef2, b2)) == pytest.approx(0.5, rel=1e-12)


def test_xtx_release_sensitivity_bound_holds():
    """X'X over the clipped augmented rows: sqrt(2) R^2 replace-one, R^2 add/remove-one."""
    from skdpgd._compute.kernels import LOSS_SQUARED

    rng = np.random.default_rng(2)
    n, d = 30, 3
    X = rng.normal(size=(n, d)) * 3

    def S(Xm, w):
        rows = make_rows(Xm, np.zeros(n), w, True)
        rows.clip_rows(1.0, 1.0)
        return rows.hessian_sum(np.zeros((1, d)), np.zeros(1), LOSS_SQUARED)

    r2 = 2.0  # ||x'||^2 <= 1 + 1 with the intercept column
    base = S(X, np.ones(n))
    for i in range(n):
        X2 = X.copy()
        X2[i] = rng.normal(size=d) * 5
        assert np.linalg.norm(base - S(X2, np.ones(n))) <= math.sqrt(2) * r2 * (1 + 1e-12)
        w = np.ones(n)
        w[i] = 0.0
        assert np.linalg.norm(base - S(X, w)) <= r2 * (1 + 1e-12)


def test_kronecker_solve_inverts_the_kronecker_preconditioner():
    rng = np.random.default_rng(3)
    k, p, n, ridge = 3, 4, 50.0, 0.7
    Bk, Bp = rng.normal(size=(k, k)), rng.normal(size=(p, p))
    A, S = Bk @ Bk.T, Bp @ Bp.T
    G = rng.normal(size=(k, p))
    D = kronecker_solve(floored_eigh(A, 0.0), floored_eigh(S, 0.0), ridge, G, n)
    M = np.kron(A, S) / n + ridge * np.eye(k * p)  # class-major parameters
    np.testing.assert_allclose(M @ D.ravel(), G.ravel(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("relation", ["replace", "add_remove"])
def test_accounting_is_exact_gdp_over_every_release(relation):
    X, y = _data()
    fit = DPLogisticRegression(
        epsilon=1.0,
        delta=1e-6,
        data_norm=1.0,
        schedule="kronecker",
        neighbouring=relation,
        n_samples=600,
        row_clip="data_norm",
        random_state=0,
    ).fit(X, y)
    assert [r.name for r in fit.releases_] == ["gradient sums", "X'X", "class curvature sums"]
    z = np.concatenate([r.multipliers for r in fit.releases_])
    assert fit.mu_ == pytest.approx(compose_gdp(z), rel=1e-12)
    assert fit.epsilon_ <= 1.0 and fit.epsilon_ == pytest.approx(1.0, rel=1e-9)
    # the shares of mu^2: 0.85 gradients, 0.05 class factors, 0.10 X'X
    inv2 = [float(np.sum(1.0 / r.multipliers**2)) for r in fit.releases_]
    assert np.allclose(np.array(inv2) / sum(inv2), [0.85, 0.10, 0.05])
    unit = math.sqrt(2.0) if relation == "replace" else 1.0
    curv = fit.releases_[2]
    assert curv.sensitivity[relation] == pytest.approx(unit * 0.5, rel=1e-6)
    xtx = fit.releases_[1]
    # R^2 = ||x||^2 + c^2 with the intercept column c = intercept_scaling * data_norm = 0.5
    assert xtx.sensitivity[relation] == pytest.approx(unit * 1.25, rel=1e-6)
    assert fit.mechanism_ == "kronecker" and fit.n_iter_ == 8


def test_without_noise_reaches_sklearn_in_a_few_iterations():
    X, y = _data(n=1500, d=6, seed=4, classes=4)
    n = X.shape[0]
    fit = DPLogisticRegression(
        epsilon=np.inf,
        data_norm=2.0,
        schedule=KroneckerNewton(n_iter=40),
        alpha=1.0 / n,
        row_clip="data_norm",
    ).fit(X, y)
    ref = LogisticRegression(tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(fit.coef_, ref.coef_ - ref.coef_.mean(axis=0), atol=1e-5)
    np.testing.assert_allclose(
        fit.intercept_ - fit.intercept_.mean(), ref.intercept_ - ref.intercept_.mean(), atol=1e-5
    )


def test_reproducible_and_sparse_equals_dense():
    X, y = _data(n=800, d=5, seed=5)
    kw = dict(epsilon=2.0, data_norm=1.0, schedule="kronecker", random_state=7)
    a = DPLogisticRegression(**kw).fit(X, y)
    b = DPLogisticRegression(**kw).fit(X, y)
    c = DPLogisticRegression(**kw).fit(sparse.csr_matrix(X), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_allclose(a.coef_, c.coef_, rtol=1e-8, atol=1e-10)


def test_refuses_a_binary_problem_and_bad_shares():
    X, y = _data(classes=2)
    with pytest.raises(ValueError, match="three or more classes"):
        DPLogisticRegression(epsilon=1.0, data_norm=1.0, schedule="kronecker").fit(X, y)
    X, y = _data()
    with pytest.raises(ValueError, match="curvature_share"):
        DPLogisticRegression(
            epsilon=1.0,
            data_norm=1.0,
            schedule=KroneckerNewton(gradient_share=0.9, curvature_share=0.2),
        ).fit(X, y)


def test_auto_runs_it_for_many_classes_and_features_only():
    def mech(n, d, k, eps):
        X, y = _data(n=n, d=d, classes=k)
        return DPLogisticRegression(epsilon=eps, data_norm=1.0, random_state=0).fit(X, y)

    wide = mech(3000, 90, 3, 1e6)  # 273 parameters
    assert wide.mechanism_ == "kronecker" and wide.hessian_rates_ is not None
    assert mech(3000, 80, 3, 1e6).mechanism_ == "newton"  # 243 parameters: the full Hessian
    with policy.using(AUTO_KRONECKER_MAX_FEATURES=50):
        assert mech(3000, 90, 3, 1e6).mechanism_ == "output"


def test_subsampled_class_curvature_is_the_sum_over_the_poisson_rows_and_dask_agrees():
    da = pytest.importorskip("dask.array")
    from skdpgd._compute.backends import poisson_subsample

    rng = np.random.default_rng(8)
    X = rng.normal(size=(70_001, 3)) / 3
    w = rng.uniform(0.5, 1.0, size=X.shape[0])
    coef, b = rng.normal(size=(3, 3)), rng.normal(size=3)
    mem = make_rows(X, np.zeros(X.shape[0]), w, True)
    dsk = make_rows(da.from_array(X, chunks=(20_000, 3)), np.zeros(X.shape[0]), w, True)
    for rows in (mem, dsk):
        rows.clip_rows(np.inf, 1.0)
    idx = poisson_subsample(5, 0.3, 0, X.shape[0])
    A = mem.class_curvature_sum(coef, b, sample=(5, 0.3))
    np.testing.assert_allclose(A, _direct(X[idx], w[idx], coef, b), rtol=1e-10)
    np.testing.assert_allclose(dsk.class_curvature_sum(coef, b, sample=(5, 0.3)), A, rtol=1e-11)
    np.testing.assert_allclose(
        dsk.class_curvature_sum(coef, b), mem.class_curvature_sum(coef, b), rtol=1e-11
    )


def test_subsampled_fit_is_reproducible_and_dask_equals_in_memory():
    da = pytest.importorskip("dask.array")
    X, y = _data(n=3000, d=5, seed=6)
    kw = dict(
        epsilon=3.0,
        data_norm=1.0,
        schedule=KroneckerNewton(hessian_rate=0.4),
        row_clip="data_norm",
        random_state=2,
    )
    a = DPLogisticRegression(**kw).fit(X, y)
    b = DPLogisticRegression(**kw).fit(da.from_array(X, chunks=(1000, 5)), y)
    assert a.hessian_rates_ == (0.4,)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-9, atol=1e-12)
    assert a.score(X, y) > 0.6


def test_auto_penalty_is_the_consistent_one_when_auto_runs_it():
    """The penalty of 'auto' follows the mechanism it runs: output perturbation's larger
    penalty only when it runs output perturbation."""
    X, y = _data(n=3000, d=90, classes=3)
    auto = DPLogisticRegression(epsilon=1e6, data_norm=1.0, random_state=0).fit(X, y)
    explicit = DPLogisticRegression(
        epsilon=1e6, data_norm=1.0, random_state=0, schedule="kronecker"
    ).fit(X, y)
    assert auto.mechanism_ == "kronecker"
    assert auto.alpha_ == pytest.approx(explicit.alpha_, rel=1e-12)
    with policy.using(AUTO_KRONECKER_MAX_FEATURES=50):
        out = DPLogisticRegression(epsilon=1e6, data_norm=1.0, random_state=0).fit(X, y)
    assert out.mechanism_ == "output" and out.alpha_ > 1.05 * auto.alpha_

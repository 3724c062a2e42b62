"""DP damped Newton and sufficient statistics: sensitivities, noise, accounting, consistency."""

import math

import numpy as np
import pytest
from scipy import sparse
from sklearn.linear_model import LogisticRegression, Ridge

from skdpgd import DPLogisticRegression, DPRidge, PrivacyBudget
from skdpgd._core.data import make_rows
from skdpgd._full_batch.second_order import symmetric_noise
from skdpgd.accounting import compose_gdp, gdp_epsilon
from skdpgd.losses import BinaryLogistic, MultinomialLogistic

#: the loss object of each kernel code the tests run (its Hessian's Frobenius bound)
_LOSS = {0: BinaryLogistic(), 1: MultinomialLogistic()}


def _data(n=600, d=4, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / (2 * math.sqrt(d))
    W = rng.normal(size=(d, classes)) * 4
    y = np.argmax(X @ W + rng.gumbel(size=(n, classes)), axis=1)
    return X, y


@pytest.mark.parametrize("loss,classes", [(0, 2), (1, 3)])
def test_hessian_sum_sensitivity_bound_holds_and_is_nearly_attained(loss, classes):
    """Replace-one: sqrt(2) h R^2; add/remove: h R^2 (R: bound on ||x'||, here with the
    intercept column). Random pairs stay below; a constructed pair comes close."""
    rng = np.random.default_rng(1)
    n, d = 50, 3
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)  # ||x|| = 1, so ||x'||^2 = 2
    y = rng.integers(0, classes, n).astype(float)
    if classes == 2:
        y = np.where(y == 1, 1.0, -1.0)
    k_out = 1 if classes == 2 else classes
    coef, b = np.zeros((k_out, d)), np.zeros(k_out)  # margins 0: the largest curvature
    h, r2 = _LOSS[loss].hessian_frobenius, 2.0

    def H(Xm, w):
        rows = make_rows(Xm, y, w, True)
        rows.clip_rows(1.0, 1.0)
        return rows.hessian_sum(coef, b, loss)

    base = H(X, np.ones(n))
    worst_replace = worst_remove = 0.0
    for i in range(n):
        X2 = X.copy()
        X2[i] = rng.normal(size=d)
        X2[i] /= np.linalg.norm(X2[i])
        worst_replace = max(worst_replace, np.linalg.norm(base - H(X2, np.ones(n))))
        w = np.ones(n)
        w[i] = 0.0
        worst_remove = max(worst_remove, np.linalg.norm(base - H(X, w)))
    assert worst_replace <= math.sqrt(2) * h * r2 * (1 + 1e-12)
    assert worst_remove <= h * r2 * (1 + 1e-12)
    assert worst_remove >= 0.7 * h * r2  # the bound is nearly attained (margins at 0)
    # a constructed replace pair: (e1, 1) -> (-e1, 1) ... rows of Frobenius terms nearly
    # orthogonal get close to sqrt(2) h r2
    X2 = X.copy()
    X2[0] = -X[0]
    assert np.linalg.norm(base - H(X2, np.ones(n))) >= 0.9 * h * r2


def test_symmetric_noise_has_the_claimed_covariance():
    gen = np.random.default_rng(0)
    draws = np.array([symmetric_noise(gen, 4, 2.0) for _ in range(20000)])
    assert np.allclose(draws, np.transpose(draws, (0, 2, 1)))
    diag = draws[:, [0, 1, 2, 3], [0, 1, 2, 3]]
    off = draws[:, [0, 0, 1, 2], [1, 3, 2, 3]]
    assert np.var(diag) == pytest.approx(4.0, rel=0.03)
    assert np.var(off) == pytest.approx(2.0, rel=0.03)  # so that ||E||_F matches v(E)


@pytest.mark.parametrize("Est,schedule", [(DPLogisticRegression, "newton"), (DPRidge, "ssp")])
@pytest.mark.parametrize("relation", ["replace", "add_remove"])
def test_accounting_is_exact_gdp_over_every_release(Est, schedule, relation):
    X, y = _data()
    kw = (
        dict(classes=[0, 1], row_clip="data_norm")
        if Est is DPLogisticRegression
        else dict(y_bound=1.0)
    )
    yy = y if Est is DPLogisticRegression else X[:, 0]
    fit = Est(
        epsilon=1.0,
        delta=1e-6,
        data_norm=1.0,
        schedule=schedule,
        neighbouring=relation,
        n_samples=600,
        random_state=0,
        **kw,
    ).fit(X, yy)
    z = np.concatenate([r.multipliers for r in fit.releases_])
    assert fit.mu_ == pytest.approx(compose_gdp(z), rel=1e-12)
    assert fit.epsilon_ <= 1.0 and fit.epsilon_ == pytest.approx(1.0, rel=1e-9)
    assert fit.mechanism_ == schedule
    names = [r.name for r in fit.releases_]
    assert names == (["gradient sums", "Hessian sums"] if schedule == "newton" else ["X'y", "X'X"])
    # a budget charges the matrix releases by their own (sqrt 2 vs 1) rule (a replace-one fit
    # cannot be charged to an add/remove-one budget: it reads N, private there)
    if relation == "replace":
        return
    other = "replace"
    budget = PrivacyBudget(epsilon=50.0, delta=1e-6, neighbouring=other)
    Est(
        epsilon=1.0,
        delta=1e-6,
        data_norm=1.0,
        schedule=schedule,
        neighbouring=relation,
        n_samples=600,
        random_state=0,
        budget=budget,
        **kw,
    ).fit(X, yy)
    inv2 = sum(
        float(np.sum((r.sensitivity[other] / (r.multipliers * r.sensitivity[relation])) ** 2))
        for r in fit.releases_
    )
    assert budget.spent_epsilon() == pytest.approx(gdp_epsilon(1e-6, math.sqrt(inv2)), rel=1e-9)


@pytest.mark.parametrize("alpha_n", [1.0, 1e-4])
def test_newton_without_noise_reaches_sklearn_in_a_few_iterations(alpha_n):
    """alpha = alpha_n / N is scikit-learn's C = 1 / alpha_n: ill-conditioned for small
    alpha_n, where gradient descent would need thousands of steps."""
    X, y = _data(n=800, seed=3)
    n = X.shape[0]
    fit = DPLogisticRegression(
        epsilon=np.inf,
        data_norm=2.0,
        classes=[0, 1],
        schedule="newton",
        max_iter=10,
        alpha=alpha_n / n,
        row_clip="data_norm",
    ).fit(X, y)
    ref = LogisticRegression(C=1.0 / alpha_n, tol=1e-12, max_iter=10_000).fit(X, y)
    assert fit.n_iter_ == 10
    np.testing.assert_allclose(fit.coef_, ref.coef_, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(fit.intercept_, ref.intercept_, rtol=1e-6, atol=1e-6)


def test_ssp_without_noise_is_sklearn_ridge_and_sparse_equals_dense():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 5)) / 5
    X[rng.random(X.shape) < 0.5] = 0.0
    y = X @ rng.normal(size=5) + 0.1 * rng.normal(size=500)
    y = np.clip(y, -1, 1)
    fit = DPRidge(epsilon=np.inf, data_norm=3.0, y_bound=1.0, schedule="ssp", alpha=2.0 / 500).fit(
        X, y
    )
    ref = Ridge(alpha=2.0).fit(X, y)
    np.testing.assert_allclose(fit.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    assert fit.intercept_ == pytest.approx(ref.intercept_, abs=1e-12)
    for schedule, Est, yy, kw in [
        ("ssp", DPRidge, y, {"y_bound": 1.0}),
        ("newton", DPLogisticRegression, (y > 0).astype(int), {"classes": [0, 1]}),
    ]:
        dense = Est(epsilon=1.0, data_norm=1.0, schedule=schedule, random_state=0, **kw).fit(X, yy)
        csr = Est(epsilon=1.0, data_norm=1.0, schedule=schedule, random_state=0, **kw).fit(
            sparse.csr_matrix(X), yy
        )
        np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-8, atol=1e-10)
    with pytest.raises(ValueError, match="squared loss"):
        DPLogisticRegression(data_norm=1.0, classes=[0, 1], schedule="ssp").fit(X, (y > 0))


def test_auto_ssp_uses_its_public_share_and_composes_exactly():
    """schedule='auto' above the SSP threshold: X'y gets AUTO_SSP_SHARE of mu^2, X'X the rest,
    and the two compose to the closed-form mu of (epsilon, delta)."""
    from skdpgd.accounting import gdp_mu
    from skdpgd.policy import AUTO_SSP_SHARE

    X, _ = _data(n=4000, d=4)
    y = np.clip(X @ np.array([1.0, -1.0, 0.5, 0.0]), -1, 1)
    fit = DPRidge(epsilon=1.0, delta=1e-6, data_norm=1.0, y_bound=1.0, random_state=0).fit(X, y)
    assert fit.mechanism_ == "ssp"
    (zb,), (za,) = (r.multipliers for r in fit.releases_)
    mu = gdp_mu(1.0, 1e-6)
    assert zb**-2 == pytest.approx(AUTO_SSP_SHARE * mu**2, rel=1e-9)
    assert za**-2 == pytest.approx((1 - AUTO_SSP_SHARE) * mu**2, rel=1e-9)
    assert fit.epsilon_ == pytest.approx(1.0, rel=1e-9) and fit.epsilon_ <= 1.0


def test_ssp_eigenvalue_floor_is_the_public_constant():
    """The floor (post-processing) scales with SSP_FLOOR: a huge floor shrinks the weights
    towards 0, no floor leaves the noisy solve; the releases do not change."""
    from skdpgd import policy

    X, _ = _data(n=300, d=4)  # few rows: the floor binds
    y = np.clip(X @ np.array([1.0, -1.0, 0.5, 0.0]), -1, 1)

    def fit(f):
        with policy.using(SSP_FLOOR=f):
            return DPRidge(
                epsilon=0.5, data_norm=1.0, y_bound=1.0, alpha=1e-6, schedule="ssp", random_state=0
            ).fit(X, y)

    base, none, huge = fit(policy.SSP_FLOOR), fit(0.0), fit(1e6)
    assert [r.multipliers for r in base.releases_] == [r.multipliers for r in huge.releases_]
    assert np.linalg.norm(huge.coef_) < 1e-3 * np.linalg.norm(base.coef_)
    assert not np.allclose(none.coef_, base.coef_)


# --- fused pass, subsampled Hessian releases, fewer Hessian releases ----------------------

from skdpgd._compute.backends import poisson_subsample  # noqa: E402
from skdpgd.policy import hessian_rate  # noqa: E402
from skdpgd.schedules import Newton, hessian_steps  # noqa: E402


@pytest.mark.parametrize("loss,classes", [(0, 2), (1, 3)])
@pytest.mark.parametrize("sparse_x", [False, True])
def test_fused_pass_equals_the_two_sums(loss, classes, sparse_x):
    rng = np.random.default_rng(4)
    n, d = 3001, 6
    X = rng.normal(size=(n, d))
    X[rng.random(X.shape) < 0.3] = 0.0
    y = rng.integers(0, classes, n).astype(float)
    if classes == 2:
        y = np.where(y == 1, 1.0, -1.0)
    k_out = 1 if classes == 2 else classes
    coef, b = rng.normal(size=(k_out, d)), rng.normal(size=k_out)
    coef[0, 0] = np.inf  # infinite margins, and NaN ones (0 * inf in dense rows): counted
    rows = make_rows(sparse.csr_matrix(X) if sparse_x else X, y, rng.random(n), True)
    rows.clip_rows(1.5, 0.7)
    g1, i1, bad1 = rows.grad_sum(coef, b, loss, 0.0, 0.8)
    H1 = rows.hessian_sum(coef, b, loss)
    g2, i2, bad2, H2 = rows.grad_hessian_sum(coef, b, loss, 0.0, 0.8)
    assert bad1 == bad2
    np.testing.assert_allclose(g2, g1, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(i2, i1, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(H2, H1, rtol=1e-12, atol=1e-12)


def test_poisson_subsample_is_a_function_of_seed_and_position():
    full = poisson_subsample(11, 0.2, 0, 300_000)
    # any cut into chunks (as a dask array's) selects the same rows
    cuts = [0, 1, 65_535, 65_537, 200_001, 300_000]
    parts = np.concatenate(
        [poisson_subsample(11, 0.2, a, b) + a for a, b in zip(cuts[:-1], cuts[1:])]
    )
    np.testing.assert_array_equal(parts, full)
    assert abs(full.size / 300_000 - 0.2) < 5 * math.sqrt(0.2 * 0.8 / 300_000)
    assert not np.array_equal(full, poisson_subsample(12, 0.2, 0, 300_000))
    np.testing.assert_array_equal(poisson_subsample(11, 1.0, 5, 9), np.arange(4))


@pytest.mark.parametrize("loss,classes", [(0, 2), (1, 3)])
def test_subsampled_hessian_sensitivity_is_the_full_sums_for_every_subsample(loss, classes):
    """For every realisation of the subsample, neighbours (indicators coupled row by row)
    differ by at most sqrt(2) h R^2 (replace-one) and h R^2 (add/remove-one), and adversarial
    pairs come close: the release needs no more noise than the full sum."""
    rng = np.random.default_rng(2)
    n, d = 40, 3
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.integers(0, classes, n).astype(float)
    if classes == 2:
        y = np.where(y == 1, 1.0, -1.0)
    k_out = 1 if classes == 2 else classes
    coef, b = np.zeros((k_out, d)), np.zeros(k_out)  # margins 0: the largest curvature
    h, r2 = _LOSS[loss].hessian_frobenius, 2.0

    def H(Xm, w, sample):
        rows = make_rows(Xm, y, w, True)
        rows.clip_rows(1.0, 1.0)
        return rows.hessian_sum(coef, b, loss, sample=sample)

    worst_replace = worst_remove = 0.0
    for seed in range(12):
        sample = (seed, 0.5)
        chosen = poisson_subsample(seed, 0.5, 0, n)
        base = H(X, np.ones(n), sample)
        for i in range(n):
            X2 = X.copy()
            X2[i] = -X[i]  # adversarial: the same term's opposite direction
            X2[i, 0] += 0.3 * rng.normal()
            X2[i] /= np.linalg.norm(X2[i])
            worst_replace = max(worst_replace, np.linalg.norm(base - H(X2, np.ones(n), sample)))
            w = np.ones(n)
            w[i] = 0.0  # the row removed, the other rows' indicators unchanged
            diff = np.linalg.norm(base - H(X, w, sample))
            worst_remove = max(worst_remove, diff)
            if i not in chosen:
                assert diff == 0.0
    assert worst_replace <= math.sqrt(2) * h * r2 * (1 + 1e-12)
    assert worst_remove <= h * r2 * (1 + 1e-12)
    assert worst_remove >= 0.7 * h * r2
    assert worst_replace >= 0.9 * h * r2


def test_hessian_steps_and_rate_rule():
    assert hessian_steps(8, None) == tuple(range(8))
    assert hessian_steps(8, 4) == (0, 2, 4, 6)
    assert hessian_steps(8, 3) == (0, 2, 5)
    assert hessian_steps(3, 10) == (0, 1, 2)
    # no noise: only the rows-per-parameter floor; much noise: the full sum
    assert hessian_rate(1e6, 51, 0.0, math.sqrt(2)) == pytest.approx(100 * 51 / 1e6)
    assert hessian_rate(4e3, 51, 0.0, math.sqrt(2)) == 1.0
    assert hessian_rate(1e6, 201, 500.0, math.sqrt(2)) == 1.0
    q1 = hessian_rate(1e6, 51, 50.0, math.sqrt(2))
    assert 100 * 51 / 1e6 < q1 < 1.0
    # the noise-floor term, in closed form: rho sqrt(2) z u D^1.5 / (N s)
    from skdpgd.policy import AUTO_HESSIAN_SNR

    assert q1 == pytest.approx(AUTO_HESSIAN_SNR * 2 * 50.0 * 51**1.5 / 1e6, rel=1e-12)
    # larger multiplier or smaller signal scale: larger rate; add/remove-one: smaller
    assert hessian_rate(1e6, 51, 100.0, math.sqrt(2)) > q1
    assert hessian_rate(1e6, 51, 50.0, math.sqrt(2), 0.5) > q1
    assert hessian_rate(1e6, 51, 50.0, 1.0) < q1
    # the multinomial's rows-per-parameter floor counts the outputs
    assert hessian_rate(1e6, 60, 0.0, 1.0, 1.0, 3) == pytest.approx(3 * 100 * 60 / 1e6)


@pytest.mark.parametrize("relation", ["replace", "add_remove"])
def test_fewer_and_subsampled_hessian_releases_are_accounted_exactly(relation):
    X, y = _data(n=4000)
    sched = Newton(n_iter=6, gradient_share=0.8, n_hessians=3, hessian_rate=0.4)
    fit = DPLogisticRegression(
        epsilon=1.0,
        delta=1e-6,
        data_norm=1.0,
        classes=[0, 1],
        row_clip="data_norm",
        schedule=sched,
        neighbouring=relation,
        n_samples=4000,
        random_state=0,
    ).fit(X, y)
    grads, hess = fit.releases_
    assert (grads.name, hess.name) == ("gradient sums", "Hessian sums")
    assert grads.multipliers.shape == (6,) and hess.multipliers.shape == (3,)
    np.testing.assert_array_equal(fit.hessian_rates_, [0.4] * 3)
    z = np.concatenate([r.multipliers for r in fit.releases_])
    assert fit.mu_ == pytest.approx(compose_gdp(z), rel=1e-12)
    # the split: the gradients get 80% of mu^2, the Hessians 20%
    g2, h2 = np.sum(grads.multipliers**-2.0), np.sum(hess.multipliers**-2.0)
    assert g2 / (g2 + h2) == pytest.approx(0.8, rel=1e-12)
    # the subsampled release keeps the full sum's sensitivity (no amplification claimed)
    r2 = fit.releases_[1].sensitivity
    assert r2["replace"] == pytest.approx(math.sqrt(2) * r2["add_remove"], rel=1e-12)
    assert fit.epsilon_ == pytest.approx(1.0, rel=1e-9) and fit.epsilon_ <= 1.0
    assert fit.epsilon_ == pytest.approx(gdp_epsilon(1e-6, compose_gdp(z)), rel=1e-9)


def test_subsampled_newton_is_reproducible_and_its_draws_come_from_random_state():
    X, y = _data(n=3000)
    sched = Newton(n_iter=5, n_hessians=2, hessian_rate=0.3)

    def fit(eps, rs):
        return DPLogisticRegression(
            epsilon=eps, data_norm=1.0, classes=[0, 1], schedule=sched, random_state=rs
        ).fit(X, y)

    np.testing.assert_array_equal(fit(1.0, 3).coef_, fit(1.0, 3).coef_)
    # without noise only the subsample is random: it follows random_state
    a, b = fit(np.inf, 3), fit(np.inf, 4)
    np.testing.assert_array_equal(a.coef_, fit(np.inf, 3).coef_)
    assert not np.array_equal(a.coef_, b.coef_)


def test_subsampled_newton_without_noise_reaches_sklearn():
    """The gradient is exact, the subsampled Hessian only preconditions: the iterates still
    converge to scikit-learn's minimiser."""
    X, y = _data(n=20000, d=5, seed=5)
    n = X.shape[0]
    fit = DPLogisticRegression(
        epsilon=np.inf,
        data_norm=2.0,
        classes=[0, 1],
        schedule=Newton(n_iter=12, hessian_rate=0.05, n_hessians=6),
        alpha=1.0 / n,
        row_clip="data_norm",
        random_state=0,
    ).fit(X, y)
    ref = LogisticRegression(tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(fit.coef_, ref.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fit.intercept_, ref.intercept_, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("classes", [2, 3])
def test_default_at_huge_epsilon_matches_sklearn_with_subsampled_hessians(classes):
    X, y = _data(n=30000, d=4, seed=6, classes=classes)
    Xt, yt = _data(n=20000, d=4, seed=7, classes=classes)
    fit = DPLogisticRegression(
        epsilon=1e6, data_norm=2.0, classes=list(range(classes)), random_state=0
    ).fit(X, y)
    assert fit.mechanism_ == "newton"
    assert np.all(fit.hessian_rates_ < 0.2)  # the subsampled releases ran
    ref = LogisticRegression().fit(X, y)
    assert abs(fit.score(Xt, yt) - ref.score(Xt, yt)) <= 0.002
    np.testing.assert_allclose(fit.coef_, ref.coef_, rtol=0.02, atol=0.02)


def test_dask_subsampled_hessian_equals_in_memory():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(8)
    X = rng.normal(size=(70_001, 3)) / 3
    y = np.where(rng.random(X.shape[0]) < 0.5, 1.0, -1.0)
    w = np.ones(X.shape[0])
    coef, b = rng.normal(size=(1, 3)), np.zeros(1)
    mem = make_rows(X, y, w, True)
    dsk = make_rows(da.from_array(X, chunks=(20_000, 3)), y, w, True)
    for rows in (mem, dsk):
        rows.clip_rows(1.0, 1.0)
    np.testing.assert_allclose(
        dsk.hessian_sum(coef, b, 0, sample=(5, 0.3)),
        mem.hessian_sum(coef, b, 0, sample=(5, 0.3)),
        rtol=1e-12,
    )
    g1 = mem.grad_hessian_sum(coef, b, 0, 0.0, 1.0)
    g2 = dsk.grad_hessian_sum(coef, b, 0, 0.0, 1.0)
    for u, v in zip(g1, g2):
        np.testing.assert_allclose(v, u, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("schedule", ["auto", "newton", "uniform"])
def test_float32_x_is_read_as_is_with_float64_sums(schedule):
    """float32 X is not copied to float64; the kernels read each entry exactly as its float64
    value, so the fit is the fit on the float64 copy (up to the float32 rounding of coef_)."""
    X, y = _data(n=3000, d=5, seed=9)
    X32 = X.astype(np.float32)
    rows = make_rows(X32, np.where(y == 1, 1.0, -1.0), np.ones(3000), True)
    assert rows.X.dtype == np.float32 and np.shares_memory(rows.X, X32)
    assert rows._norms.dtype == np.float64
    np.testing.assert_allclose(
        rows._norms, np.linalg.norm(X32.astype(np.float64), axis=1), rtol=1e-15
    )
    kw = dict(epsilon=1.0, data_norm=1.0, classes=[0, 1], schedule=schedule, random_state=0)
    a = DPLogisticRegression(**kw).fit(X32, y)
    b = DPLogisticRegression(**kw).fit(X32.astype(np.float64), y)
    assert a.coef_.dtype == np.float32
    np.testing.assert_allclose(a.coef_, b.coef_.astype(np.float32), rtol=1e-6, atol=1e-7)


def test_dask_fused_subsampled_pass_equals_in_memory():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(10)
    X = rng.normal(size=(50_001, 4)) / 4
    y = rng.integers(0, 3, X.shape[0]).astype(float)
    w = np.ones(X.shape[0])
    coef, b = rng.normal(size=(3, 4)), np.zeros(3)
    mem = make_rows(X, y, w, True)
    dsk = make_rows(da.from_array(X, chunks=(15_000, 4)), y, w, True)
    for rows in (mem, dsk):
        rows.clip_rows(1.0, 1.0)
    want = mem.grad_hessian_sum(coef, b, 1, 0.0, 1.0, sample=(9, 0.2))
    got = dsk.grad_hessian_sum(coef, b, 1, 0.0, 1.0, sample=(9, 0.2))
    assert got[2] == want[2]
    for u, v in zip(want[:2] + want[3:], got[:2] + got[3:]):
        np.testing.assert_allclose(v, u, rtol=1e-11, atol=1e-11)


def test_mechanism_imports_point_one_way():
    """second_order imports mechanisms, and the registry imports both; neither mechanism
    module imports the registry or the other way round, lazily or not."""
    import ast
    import pathlib

    import skdpgd

    root = pathlib.Path(skdpgd.__file__).parent / "_full_batch"

    def imported(module):
        names = set()
        for node in ast.walk(ast.parse((root / f"{module}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names.add(node.module or "")
                names.update(a.name for a in node.names if not node.module)
        return names

    assert "second_order" not in imported("mechanisms")
    assert "registry" not in imported("mechanisms") | imported("second_order")
    assert {"mechanisms", "second_order"} <= imported("registry")


def test_hessian_rates_are_reported_when_newton_runs_from_the_warm_start():
    """A Newton fit started from the class prior (WarmStart) reports its Hessian releases'
    Poisson rates (public), as the fit from 0 does; when the warm start switches to the
    intercept-only model, Newton does not run and the rates are None."""
    from skdpgd.schedules import Auto

    X, y = _data(n=4000)
    kw = dict(delta=1e-6, data_norm=1.0, classes=[0, 1], random_state=0)
    cold = DPLogisticRegression(epsilon=5.0, **kw).fit(X, y)
    warm = DPLogisticRegression(epsilon=5.0, schedule=Auto(prior_share=0.1), **kw).fit(X, y)
    assert cold.mechanism_ == warm.mechanism_ == "newton"
    assert [r.name for r in warm.releases_][-1] == "class counts (start)"
    hess = next(r for r in warm.releases_ if r.name == "Hessian sums")
    assert warm.hessian_rates_ is not None
    assert warm.hessian_rates_.shape == hess.multipliers.shape
    assert np.all((warm.hessian_rates_ > 0) & (warm.hessian_rates_ <= 1))
    # the rates are a public function of N, D and the release's multiplier: the warm start's
    # Hessian multipliers are larger (the counts take a share), so its rates are no smaller
    assert np.all(warm.hessian_rates_ >= cold.hessian_rates_)
    # the switch to the intercept-only model: Newton never ran
    imbalanced = (X[:, 0] > 0.4).astype(int)
    prior = DPLogisticRegression(
        epsilon=5.0, schedule=Auto(prior_share=0.1, prior_switch=(1e9, 0.5)), **kw
    ).fit(X, imbalanced)
    assert prior.mechanism_ == "prior" and prior.hessian_rates_ is None

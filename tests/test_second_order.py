"""DP damped Newton and sufficient statistics: sensitivities, noise, accounting, consistency."""

import math

import numpy as np
import pytest
from scipy import sparse
from sklearn.linear_model import LogisticRegression, Ridge

from skdpgd import DPLogisticRegression, DPRidge, PrivacyBudget
from skdpgd._backends import make_rows
from skdpgd._second_order import HESSIAN_FROBENIUS, symmetric_noise
from skdpgd.accounting import compose_gdp, gdp_epsilon


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
    h, r2 = HESSIAN_FROBENIUS[loss], 2.0

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
    kw = (dict(classes=[0, 1], row_clip="data_norm") if Est is DPLogisticRegression
          else dict(y_bound=1.0))
    yy = y if Est is DPLogisticRegression else X[:, 0]
    fit = Est(epsilon=1.0, delta=1e-6, data_norm=1.0, schedule=schedule, neighbouring=relation,
              n_samples=600, random_state=0, **kw).fit(X, yy)
    z = np.concatenate([r.multipliers for r in fit.releases_])
    assert fit.mu_ == pytest.approx(compose_gdp(z), rel=1e-12)
    assert fit.epsilon_ <= 1.0 and fit.epsilon_ == pytest.approx(1.0, rel=1e-9)
    assert fit.mechanism_ == schedule
    names = [r.name for r in fit.releases_]
    assert names == (["gradient sums", "Hessian sums"] if schedule == "newton"
                     else ["X'y", "X'X"])
    # a budget charges the matrix releases by their own (sqrt 2 vs 1) rule (a replace-one fit
    # cannot be charged to an add/remove-one budget: it reads N, private there)
    if relation == "replace":
        return
    other = "replace"
    budget = PrivacyBudget(epsilon=50.0, delta=1e-6, neighbouring=other)
    Est(epsilon=1.0, delta=1e-6, data_norm=1.0, schedule=schedule, neighbouring=relation,
        n_samples=600, random_state=0, budget=budget, **kw).fit(X, yy)
    inv2 = sum(float(np.sum((r.sensitivity[other] / (r.multipliers * r.sensitivity[relation]))
                            ** 2)) for r in fit.releases_)
    assert budget.spent_epsilon() == pytest.approx(gdp_epsilon(1e-6, math.sqrt(inv2)), rel=1e-9)


@pytest.mark.parametrize("alpha_n", [1.0, 1e-4])
def test_newton_without_noise_reaches_sklearn_in_a_few_iterations(alpha_n):
    """alpha = alpha_n / N is scikit-learn's C = 1 / alpha_n: ill-conditioned for small
    alpha_n, where gradient descent would need thousands of steps."""
    X, y = _data(n=800, seed=3)
    n = X.shape[0]
    fit = DPLogisticRegression(epsilon=np.inf, data_norm=2.0, classes=[0, 1], schedule="newton",
                               max_iter=10, alpha=alpha_n / n, row_clip="data_norm").fit(X, y)
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
    fit = DPRidge(epsilon=np.inf, data_norm=3.0, y_bound=1.0, schedule="ssp",
                  alpha=2.0 / 500).fit(X, y)
    ref = Ridge(alpha=2.0).fit(X, y)
    np.testing.assert_allclose(fit.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    assert fit.intercept_ == pytest.approx(ref.intercept_, abs=1e-12)
    for schedule, Est, yy, kw in [("ssp", DPRidge, y, {"y_bound": 1.0}),
                                  ("newton", DPLogisticRegression, (y > 0).astype(int),
                                   {"classes": [0, 1]})]:
        dense = Est(epsilon=1.0, data_norm=1.0, schedule=schedule, random_state=0,
                    **kw).fit(X, yy)
        csr = Est(epsilon=1.0, data_norm=1.0, schedule=schedule, random_state=0,
                  **kw).fit(sparse.csr_matrix(X), yy)
        np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-8, atol=1e-10)
    with pytest.raises(ValueError, match="squared loss"):
        DPLogisticRegression(data_norm=1.0, classes=[0, 1], schedule="ssp").fit(X, (y > 0))


def test_auto_ssp_uses_its_public_share_and_composes_exactly():
    """schedule='auto' above the SSP threshold: X'y gets AUTO_SSP_SHARE of mu^2, X'X the rest,
    and the two compose to the closed-form mu of (epsilon, delta)."""
    from skdpgd.accounting import gdp_mu
    from skdpgd.schedules import AUTO_SSP_SHARE

    X, _ = _data(n=4000, d=4)
    y = np.clip(X @ np.array([1.0, -1.0, 0.5, 0.0]), -1, 1)
    fit = DPRidge(epsilon=1.0, delta=1e-6, data_norm=1.0, y_bound=1.0, random_state=0).fit(X, y)
    assert fit.mechanism_ == "ssp"
    (zb,), (za,) = (r.multipliers for r in fit.releases_)
    mu = gdp_mu(1.0, 1e-6)
    assert zb ** -2 == pytest.approx(AUTO_SSP_SHARE * mu ** 2, rel=1e-9)
    assert za ** -2 == pytest.approx((1 - AUTO_SSP_SHARE) * mu ** 2, rel=1e-9)
    assert fit.epsilon_ == pytest.approx(1.0, rel=1e-9) and fit.epsilon_ <= 1.0


def test_ssp_eigenvalue_floor_is_the_public_constant(monkeypatch):
    """The floor (post-processing) scales with SSP_FLOOR: a huge floor shrinks the weights
    towards 0, no floor leaves the noisy solve; the releases do not change."""
    from skdpgd import _second_order

    X, _ = _data(n=300, d=4)  # few rows: the floor binds
    y = np.clip(X @ np.array([1.0, -1.0, 0.5, 0.0]), -1, 1)

    def fit(f):
        monkeypatch.setattr(_second_order, "SSP_FLOOR", f)
        return DPRidge(epsilon=0.5, data_norm=1.0, y_bound=1.0, alpha=1e-6, schedule="ssp",
                       random_state=0).fit(X, y)

    base, none, huge = fit(_second_order.SSP_FLOOR), fit(0.0), fit(1e6)
    assert [r.multipliers for r in base.releases_] == [r.multipliers for r in huge.releases_]
    assert np.linalg.norm(huge.coef_) < 1e-3 * np.linalg.norm(base.coef_)
    assert not np.allclose(none.coef_, base.coef_)

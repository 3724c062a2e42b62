"""DPLinearSVC: scikit-learn's LinearSVC without noise, its gradient bound, its accounting,
and its refusals; with three or more classes, one-vs-rest fitted jointly."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from skdpgd import DPLinearSVC, PrivacyBudget, PrivacyLeakWarning, privacy_report
from skdpgd.accounting import compose_gdp, gdp_epsilon, gdp_mu


def _data(n=1500, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    X /= max(1.0, np.linalg.norm(X, axis=1).max())
    y = (X @ rng.normal(size=d) + 0.2 * rng.normal(size=n) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return X / np.linalg.norm(X, axis=1).max(), y


def _check_report(est):
    """privacy_report reads the fit's releases: its epsilon at the fit's delta is epsilon_."""
    report = privacy_report(est)
    assert report.stated == (est.epsilon_, est.delta_)
    assert report.epsilon(est.delta_) == pytest.approx(est.epsilon_, rel=1e-6)
    # the gradient sums' row shows the replace-one sensitivity 2G (G = clip_norm_)
    grad = next(r for r in report.rows if r.name == "gradient sums")
    assert grad.sensitivity == pytest.approx(2.0 * est.clip_norm_, rel=1e-6)


@pytest.mark.parametrize("schedule", ["auto", "uniform"])
def test_near_linearsvc_without_noise_generated(schedule):
    X, y = _data()
    dp = DPLinearSVC(
        epsilon=1e6, data_norm=1.0, classes=[0, 1], schedule=schedule, random_state=0
    ).fit(X, y)
    sk = LinearSVC(C=1.0 / (X.shape[0] * dp.alpha_), max_iter=20000).fit(X, y)
    assert abs(dp.score(X, y) - sk.score(X, y)) < 0.005
    # same direction (LinearSVC penalises its intercept; ours is not penalised)
    cos = float(dp.coef_[0] @ sk.coef_[0] / np.linalg.norm(dp.coef_) / np.linalg.norm(sk.coef_))
    assert cos > 0.99
    assert dp.decision_function(X).shape == (X.shape[0],)


def test_near_linearsvc_without_noise_breast_cancer(cancer):
    X, y = cancer
    dp = DPLinearSVC(epsilon=1e6, data_norm=1.0, classes=[0, 1], random_state=0).fit(X, y)
    sk = LinearSVC(C=1.0 / (X.shape[0] * dp.alpha_), max_iter=20000).fit(X, y)
    assert abs(dp.score(X, y) - sk.score(X, y)) < 0.005


def test_one_example_gradient_is_bounded():
    """The clipped squared hinge: one example's gradient has norm at most G = 2 ||(x, c)||
    at any iterate (the sensitivity of every release), reached for a misclassified row."""
    from skdpgd._compute import kernels as K
    from skdpgd._compute.backends import DenseRows

    rng = np.random.default_rng(3)
    c = 0.5
    x = rng.normal(size=(1, 4))
    x /= np.linalg.norm(x)
    G = 2.0 * np.sqrt(1.0 + c * c)
    worst = 0.0
    for label in (1.0, -1.0):
        rows = DenseRows(x, np.array([label]), np.ones(1), True)
        rows.clip_rows(1.0, c)
        for scale in (0.1, 10.0, 1e4):
            coef, b = rng.normal(size=(1, 4)) * scale, rng.normal(size=1) * scale
            g, gi, bad = rows.grad_sum(coef, b, K.LOSS_SQUARED_HINGE, 0.0, G / c)
            norm = c * np.sqrt(np.sum(g**2) + gi[0] ** 2)
            assert bad == 0 and norm <= G * (1 + 1e-12)
            worst = max(worst, norm)
    assert worst == pytest.approx(G)
    est = DPLinearSVC(
        epsilon=1.0, data_norm=1.0, row_clip="data_norm", classes=[0, 1], random_state=0
    ).fit(*_data(n=300))
    assert est.clip_norm_ == pytest.approx(G)


@pytest.mark.parametrize("epsilon,delta", [(0.3, 1e-6), (2.0, 1e-5)])
def test_epsilon_is_an_upper_bound_recomputed_independently(epsilon, delta, cancer):
    X, y = cancer
    est = DPLinearSVC(
        epsilon=epsilon,
        delta=delta,
        data_norm=1.0,
        classes=[0, 1],
        class_weight="balanced",
        random_state=0,
    ).fit(X, y)
    z = np.concatenate([r.multipliers for r in est.releases_])
    mu = float(np.sqrt(np.sum(z**-2.0)))  # Gaussian DP composition, by hand
    assert mu == pytest.approx(compose_gdp(z))
    assert est.mu_ == pytest.approx(mu, rel=1e-9)
    assert mu <= gdp_mu(epsilon, delta) * (1 + 1e-9)
    assert est.epsilon_ <= epsilon
    assert gdp_epsilon(delta, mu) == pytest.approx(est.epsilon_, rel=1e-6)
    names = [r.name for r in est.releases_]
    assert "row norm sum" in names  # row_clip='auto' by default, as DPLogisticRegression


def test_sparse_is_the_dense_model_and_labels_are_kept():
    X, y = _data(n=600)
    X[np.abs(X) < 0.3] = 0.0
    labels = np.where(y == 1, "yes", "no")
    kw = dict(epsilon=1.0, data_norm=1.0, classes=["no", "yes"], random_state=2)
    dense = DPLinearSVC(**kw).fit(X, labels)
    csr = DPLinearSVC(**kw).fit(sp.csr_matrix(X), labels)
    np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    assert set(dense.predict(X)) <= {"no", "yes"}
    np.testing.assert_array_equal(csr.predict(sp.csr_matrix(X)), dense.predict(X))


def test_one_vs_rest_under_a_shared_budget():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(900, 3)) / 2
    X /= max(1.0, np.linalg.norm(X, axis=1).max())
    y = np.digitize(X[:, 0], [-0.15, 0.15])
    budget = PrivacyBudget(epsilon=3.0, delta=1e-6)
    ovr = OneVsRestClassifier(
        DPLinearSVC(
            epsilon=1.0,
            delta=1e-6 / 3,
            data_norm=1.0,
            classes=[0, 1],
            budget=budget,
            random_state=0,
        )
    )
    ovr.fit(X, y)
    assert len(ovr.estimators_) == 3
    assert budget.spent_epsilon() <= 3.0


def test_pipeline_and_report(cancer):
    X, y = cancer
    pipe = make_pipeline(
        StandardScaler(), DPLinearSVC(epsilon=1.0, data_norm=8.0, classes=[0, 1], random_state=0)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        pipe.fit(X, y)
    assert pipe.score(X, y) > 0.8
    _check_report(pipe[-1])


# --- three or more classes: one-vs-rest, fitted jointly ----------------------------------


def _three_classes(n=900, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / 2
    X /= max(1.0, np.linalg.norm(X, axis=1).max())
    y = np.digitize(X[:, 0] - 0.5 * X[:, 1], [-0.15, 0.15])
    return X, y


@pytest.mark.parametrize("labels", [[0, 1, 2], ["a", "b", "c", "d"]])
def test_several_classes_have_linearsvc_shapes_and_predict_the_argmax(labels):
    X, y = _three_classes()
    if len(labels) == 4:
        y = np.where(X[:, 2] > 0.3, 3, y)
    y = np.asarray(labels)[y]
    K = len(labels)
    est = DPLinearSVC(epsilon=1.0, data_norm=1.0, classes=labels, random_state=0).fit(X, y)
    sk = LinearSVC().fit(X, y)
    assert est.coef_.shape == sk.coef_.shape == (K, X.shape[1])
    assert est.intercept_.shape == sk.intercept_.shape == (K,)
    scores = est.decision_function(X)
    assert scores.shape == sk.decision_function(X).shape == (X.shape[0], K)
    np.testing.assert_allclose(scores, X @ est.coef_.T + est.intercept_, rtol=1e-12)
    np.testing.assert_array_equal(est.predict(X), est.classes_[np.argmax(scores, axis=1)])
    np.testing.assert_array_equal(est.classes_, sk.classes_)
    assert est.score(X, y) > 1.0 / K + 0.2  # learns something at epsilon = 1
    # float32 in, float32 out, as in the binary case
    est32 = DPLinearSVC(epsilon=1.0, data_norm=1.0, classes=labels, random_state=0)
    est32.fit(X.astype(np.float32), y)
    assert est32.coef_.dtype == est32.intercept_.dtype == np.float32


def _scaled(loader):
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return X / np.linalg.norm(X, axis=1).max(), y  # rows of norm <= 1


@pytest.mark.parametrize("loader", [load_iris, load_wine])
@pytest.mark.parametrize("schedule", ["auto", "uniform"])
def test_several_classes_near_linearsvc_without_noise(loader, schedule):
    """epsilon = 1e6: the one-vs-rest model of LinearSVC(C = 1 / (N alpha_)) (measured: the
    same training accuracy, 0.947 on iris and 0.994 on wine, and each class's weights within
    a cosine of 0.9995 of LinearSVC's, whose intercept is penalised)."""
    X, y = _scaled(loader)
    dp = DPLinearSVC(
        epsilon=1e6, data_norm=1.0, classes=[0, 1, 2], schedule=schedule, random_state=0
    ).fit(X, y)
    sk = LinearSVC(C=1.0 / (X.shape[0] * dp.alpha_), max_iter=100000).fit(X, y)
    assert abs(dp.score(X, y) - sk.score(X, y)) <= 0.02
    for mine, theirs in zip(dp.coef_, sk.coef_):
        assert mine @ theirs / np.linalg.norm(mine) / np.linalg.norm(theirs) > 0.99
    assert dp.clip_norm_ == pytest.approx(np.sqrt(3) * 2.0 * np.sqrt(1.0 + 0.5**2))


@pytest.mark.parametrize("path", ["numpy", "kernel", "csr"])
def test_one_example_joint_gradient_is_bounded_by_sqrt_k_g(path, monkeypatch):
    """The declared sensitivity: one example's gradient over the K x P parameters has norm
    at most sqrt(K) G with G = 2 ||(x, c)|| (each output's derivative capped at 2), so each
    release moves by at most 2 sqrt(K) G (replace-one) or sqrt(K) G (add/remove-one). Checked
    on adversarial rows and parameters for the numpy path, the dense kernel and the CSR
    kernel; the bound is reached where every output is violated at once."""
    from skdpgd._compute import kernels as Kn
    from skdpgd._compute import small_problems
    from skdpgd._compute.backends import CSRRows, DenseRows

    monkeypatch.setattr(small_problems, "SMALL_PROBLEM_ENTRIES", 10**9 if path == "numpy" else 0)
    rng = np.random.default_rng(7)
    c, d = 0.5, 5
    G1 = 2.0 * np.sqrt(1.0 + c * c)  # one output's bound for a row of norm 1
    worst = {}
    for K in (3, 4, 7):
        G = np.sqrt(K) * G1
        for trial in range(40):
            x = rng.normal(size=(1, d)) * rng.choice([1e-3, 1.0, 1e3])  # clipped to norm 1
            label = int(rng.integers(K))
            u = x[0] / np.linalg.norm(x[0])
            if trial % 2 == 0:  # every output violated: its class far negative, others positive
                sign = np.where(np.arange(K) == label, -1.0, 1.0)
                coef = sign[:, None] * u[None, :] * rng.choice([2.0, 1e3, 1e6])
                b = sign * rng.uniform(0, 5, K)
            else:  # random parameters, any scale
                scale = rng.choice([0.1, 10.0, 1e5])
                coef, b = rng.normal(size=(K, d)) * scale, rng.normal(size=K) * scale
            X1 = sp.csr_matrix(x) if path == "csr" else x
            rows = (CSRRows if path == "csr" else DenseRows)(
                X1, np.array([float(label)]), np.ones(1), True
            )
            rows.clip_rows(1.0, c)
            g, gi, bad = rows.grad_sum(coef, b, Kn.LOSS_SQUARED_HINGE_OVR, 0.0, G / c)
            norm = c * np.sqrt(np.sum(g**2) + np.sum(gi**2))
            assert bad == 0 and norm <= G * (1 + 1e-12)
            worst[K] = max(worst.get(K, 0.0), norm)
        assert worst[K] == pytest.approx(G, rel=1e-9)


@pytest.mark.parametrize("neighbouring", ["replace", "add_remove"])
def test_several_classes_declare_sqrt_k_sensitivity_and_epsilon_is_an_upper_bound(neighbouring):
    X, y = _three_classes()
    y = np.where(X[:, 2] > 0.3, 3, y)  # K = 4
    kw = dict(epsilon=1.0, delta=1e-6, data_norm=1.0, classes=[0, 1, 2, 3], random_state=0)
    if neighbouring == "add_remove":
        kw.update(neighbouring="add_remove", n_samples=X.shape[0])
    est = DPLinearSVC(row_clip="data_norm", **kw).fit(X, y)
    G = 2.0 * np.sqrt(1.0 + 0.5**2)
    assert est.clip_norm_ == pytest.approx(np.sqrt(4) * G, rel=1e-12)
    report = privacy_report(est)
    grad = next(r for r in report.rows if r.name == "gradient sums")
    factor = 2.0 if neighbouring == "replace" else 1.0
    # the declared sensitivity (raised by the sums' rounding margin, at most 1e-6 relative)
    assert grad.sensitivity == pytest.approx(factor * est.clip_norm_, rel=1e-6)
    assert grad.sensitivity >= factor * est.clip_norm_
    # one release per step for the K outputs together: no split of the budget
    (grads,) = [r for r in est.releases_ if r.name == "gradient sums"]
    assert len(grads.multipliers) == est.n_iter_ > 0
    z = np.concatenate([r.multipliers for r in est.releases_])
    mu = float(np.sqrt(np.sum(z**-2.0)))
    assert est.mu_ == pytest.approx(mu, rel=1e-9)
    assert mu <= gdp_mu(1.0, 1e-6) * (1 + 1e-9)
    assert est.epsilon_ <= 1.0
    assert gdp_epsilon(1e-6, mu) == pytest.approx(est.epsilon_, rel=1e-6)
    assert report.epsilon(est.delta_) == pytest.approx(est.epsilon_, rel=1e-6)


def test_several_classes_sparse_is_the_dense_model_and_class_weight_works():
    X, y = _three_classes(n=1200)
    X[np.abs(X) < 0.15] = 0.0
    kw = dict(epsilon=2.0, data_norm=1.0, classes=[0, 1, 2], random_state=1)
    dense = DPLinearSVC(**kw).fit(X, y)
    csr = DPLinearSVC(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(csr.intercept_, dense.intercept_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(csr.predict(sp.csr_matrix(X)), dense.predict(X))
    balanced = DPLinearSVC(class_weight="balanced", **kw).fit(X, y)
    assert balanced.coef_.shape == (3, X.shape[1])
    assert np.all(np.isfinite(balanced.coef_))


def test_several_classes_objective_is_the_sum_of_the_binary_ones():
    """The K outputs are K separate binary problems: the joint clipped objective and its
    gradient are the sums of the binary squared hinge's (class k: +1, the rest: -1), each
    with the one-output bound G1 (the joint clip is sqrt(K) G1)."""
    from skdpgd._compute import kernels as Kn
    from skdpgd._compute.backends import DenseRows

    X, y = _three_classes(n=400, d=4)
    rng = np.random.default_rng(5)
    coef, b = rng.normal(size=(3, 4)) * 3, rng.normal(size=3)
    G1 = 0.7
    joint = DenseRows(X, y.astype(float), np.ones(len(y)), True)
    joint.clip_rows(1.0, 1.0)
    f, gc, gb = joint.objective(coef, b, Kn.LOSS_SQUARED_HINGE_OVR, 0.0, np.sqrt(3) * G1)
    total = 0.0
    for k in range(3):
        one = DenseRows(X, np.where(y == k, 1.0, -1.0), np.ones(len(y)), True)
        one.clip_rows(1.0, 1.0)
        fk, gck, gbk = one.objective(coef[k : k + 1], b[k : k + 1], Kn.LOSS_SQUARED_HINGE, 0.0, G1)
        total += fk
        np.testing.assert_allclose(gc[k], gck[0], rtol=1e-12, atol=1e-12)
        assert gb[k] == pytest.approx(gbk[0], rel=1e-12, abs=1e-12)
    assert f == pytest.approx(total, rel=1e-12)

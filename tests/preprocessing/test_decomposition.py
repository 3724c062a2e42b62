"""DPPCA: the noisy second-moment matrix, its accounting, its output bound, and the pipeline."""

import math

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.datasets import load_breast_cancer
from sklearn.decomposition import PCA

from skdpgd import DPLogisticRegression, PrivacyBudget
from skdpgd.decomposition import DPPCA
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import BoundedScaler


def _data(n=3000, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.linspace(2.0, 0.2, d) + 0.3
    return X / np.linalg.norm(X, axis=1).max()


@pytest.mark.parametrize("center", [True, False])
def test_without_noise_it_is_pca(center):
    """epsilon = inf: the components and variances of the (uncentred) second moments; with
    centring, scikit-learn's PCA up to its N - 1 normaliser and the components' signs."""
    X = _data()
    pca = DPPCA(n_components=3, epsilon=math.inf, data_norm=1.0, center=center).fit(X)
    if center:
        ref = PCA(n_components=3).fit(X)
        np.testing.assert_allclose(
            np.abs(np.sum(pca.components_ * ref.components_, axis=1)), 1.0, atol=1e-10
        )
        n = X.shape[0]
        np.testing.assert_allclose(
            pca.explained_variance_, ref.explained_variance_ * (n - 1) / n, rtol=1e-10
        )
        np.testing.assert_allclose(pca.mean_, X.mean(axis=0), rtol=1e-12)
    else:
        values, vectors = np.linalg.eigh(X.T @ X / X.shape[0])
        np.testing.assert_allclose(pca.explained_variance_, values[::-1][:3], rtol=1e-10)
        assert np.all(pca.mean_ == 0)
    np.testing.assert_allclose(pca.components_ @ pca.components_.T, np.eye(3), atol=1e-12)
    Z = pca.transform(X)
    np.testing.assert_allclose(Z, (X - pca.mean_) @ pca.components_.T, rtol=1e-12)
    assert pca.get_feature_names_out().tolist() == ["dppca0", "dppca1", "dppca2"]


@pytest.mark.parametrize("neighbouring", ["replace", "add_remove"])
@pytest.mark.parametrize("center", [True, False])
def test_epsilon_is_the_closed_form_of_the_multipliers(neighbouring, center):
    """epsilon_ against the Gaussian-DP closed form computed here from the releases' noise
    multipliers (delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2))."""
    X = _data()
    kw = dict(n_samples=3000) if neighbouring == "add_remove" else {}
    pca = DPPCA(
        n_components=2,
        epsilon=0.7,
        data_norm=1.0,
        center=center,
        neighbouring=neighbouring,
        random_state=0,
        **kw,
    ).fit(X)
    names = [r.name for r in pca.releases_]
    assert names == (["second moments", "column sums"] if center else ["second moments"])
    sens = {"replace": (math.sqrt(2.0), 2.0), "add_remove": (1.0, 1.0)}[neighbouring]
    for release, s in zip(pca.releases_, sens):
        # C = 1; raised by the float64 rounding margin of the sums
        assert release.sensitivity[neighbouring] == pytest.approx(s, rel=1e-6)
        assert release.sensitivity[neighbouring] >= s
    if center:  # the column sums get a fifth of mu^2
        z = [float(r.multipliers[0]) for r in pca.releases_]
        assert z[1] == pytest.approx(2.0 * z[0], rel=1e-12)
    mu = math.sqrt(sum(float(r.multipliers[0]) ** -2 for r in pca.releases_))
    delta = norm.cdf(-pca.epsilon_ / mu + mu / 2) - math.exp(pca.epsilon_) * norm.cdf(
        -pca.epsilon_ / mu - mu / 2
    )
    assert pca.epsilon_ <= 0.7
    assert delta <= pca.delta_ * (1 + 1e-6)
    assert mu == pytest.approx(pca.mu_, rel=1e-9)


def test_noise_is_drawn_at_the_declared_scale():
    """The released matrix minus the exact one over many seeds: every entry on and above the
    diagonal has the declared standard deviation (multiplier x sensitivity, margin included),
    and the entries are uncorrelated. The rows alternate (1, 0) and (0, 1), so both eigenvalues
    stay far above 0 and the fitted attributes rebuild the released matrix exactly."""
    n = 400
    X = np.zeros((n, 2))
    X[0::2, 0] = 1.0
    X[1::2, 1] = 1.0
    noise, pca = [], None
    for seed in range(600):
        pca = DPPCA(
            n_components=2, epsilon=1.0, data_norm=1.0, center=False, random_state=seed
        ).fit(X)
        A = n * (pca.components_.T * pca.explained_variance_) @ pca.components_
        E = A - X.T @ X
        noise.append([E[0, 0], E[1, 1], E[0, 1]])
    noise = np.array(noise)
    std = float(pca.releases_[0].noise_std[0])
    # 600 draws: the sample std is within 10% of the true one with probability > 0.999
    np.testing.assert_allclose(noise.std(axis=0), std, rtol=0.1)
    assert np.all(np.abs(np.corrcoef(noise, rowvar=False)[np.triu_indices(3, 1)]) < 0.15)


def test_transform_respects_the_declared_bound_whatever_the_rows():
    X = _data()
    for center in (True, False):
        pca = DPPCA(n_components=3, epsilon=0.05, data_norm=0.5, center=center, random_state=1).fit(
            X
        )
        huge = np.random.default_rng(2).normal(size=(200, X.shape[1])) * 1e6
        out = np.linalg.norm(pca.transform(np.vstack([X, huge])), axis=1)
        assert np.all(out <= pca.output_bound_ * (1 + 1e-12))
        assert pca.output_bound_ == (2 * 0.5 if center else 0.5)


def test_refusals_release_nothing():
    X = _data()
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="public data_norm"):
        DPPCA(epsilon=0.5, budget=budget).fit(X)
    with pytest.raises(ValueError, match="n_components=7 exceeds"):
        DPPCA(n_components=7, epsilon=0.5, data_norm=1.0, budget=budget).fit(X)
    assert budget.spent_epsilon() == 0.0
    DPPCA(epsilon=0.5, data_norm=1.0, budget=budget, random_state=0).fit(X)
    assert 0.0 < budget.spent_epsilon() <= 0.5 + 1e-9


def test_in_a_private_pipeline_its_bound_comes_from_the_earlier_steps():
    """data_norm=None inside make_private_pipeline: the earlier steps' declared bound; the
    final step gets DPPCA's bound; the user's objects are untouched; the total is the
    pipeline's epsilon."""
    X, y = load_breast_cancer(return_X_y=True)
    lo, hi = X.min(axis=0), X.max(axis=0)  # stand-ins for public ranges in a test
    pca = DPPCA(n_components=4)
    pipe = make_private_pipeline(
        BoundedScaler(np.c_[lo, hi]),
        pca,
        DPLogisticRegression(classes=[0, 1]),
        epsilon=2.0,
        random_state=0,
    ).fit(X, y)
    fitted = pipe.steps_[1][1] if hasattr(pipe, "steps_") else pipe.named_steps["dppca"]
    assert fitted.data_norm is None and fitted.data_norm_ == pytest.approx(math.sqrt(30))
    assert pca.get_params()["data_norm"] is None and not hasattr(pca, "components_")
    assert pipe.data_norm_ == pytest.approx(2 * math.sqrt(30))
    assert pipe.epsilon_ <= 2.0 + 1e-9
    assert pipe.score(X, y) > 0.85


def test_private_components_keep_the_spiked_signal():
    """20 columns, 3 strong directions, 20,000 rows at epsilon = 1: the 3 private components
    keep at least 95% of the variance the exact top 3 hold (against the exact covariance)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20000, 20)) * np.r_[3.0, 2.5, 2.0, np.full(17, 0.3)]
    X = X @ np.linalg.qr(rng.normal(size=(20, 20)))[0]
    X = X / np.linalg.norm(X, axis=1).max()
    cov = np.cov(X, rowvar=False, bias=True)
    exact = np.sort(np.linalg.eigvalsh(cov))[::-1][:3].sum()
    pca = DPPCA(n_components=3, epsilon=1.0, data_norm=1.0, random_state=0).fit(X)
    kept = np.trace(pca.components_ @ cov @ pca.components_.T)
    assert kept > 0.95 * exact

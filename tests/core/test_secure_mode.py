"""Secure mode (``skdpgd.config_context(secure_noise=True)``): every private object runs in it,
draws its noise on a lattice from the cryptographic stream, and is accounted in zCDP / Renyi
DP; plain mode is untouched by it."""

import importlib.util
import math
import threading
import warnings

import numpy as np
import pytest

import skdpgd
from skdpgd import (
    DPElasticNet,
    DPHuberRegressor,
    DPLinearSVC,
    DPLogisticRegression,
    DPMLPClassifier,
    DPPoissonRegressor,
    DPRidge,
    DPSGDClassifier,
    DPSGDRegressor,
    PrivacyBudget,
    PrivacyUsageWarning,
    privacy_report,
)
from skdpgd._core.noise import SecureGenerator, SecureModeError
from skdpgd.accounting import (
    GaussianSteps,
    Release,
    compose,
    gdp_epsilon,
    gdp_mu,
    rdp_subsampled_gaussian,
)
from skdpgd.accounting.gdp import zcdp_view
from skdpgd.accounting.rdp import DEFAULT_ORDERS, rdp_epsilon

HAS_TORCH = importlib.util.find_spec("torch") is not None


def _secure():
    return skdpgd.config_context(secure_noise=True)


@pytest.fixture(scope="module")
def classification():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4)) / 4
    y = (X[:, 0] - X[:, 1] + 0.05 * rng.normal(size=3000) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 3)) / 4
    y = X @ np.array([1.0, -0.5, 0.25]) + 0.05 * rng.normal(size=3000)
    return X, np.clip(y, -1, 1)


# --- the setting ---------------------------------------------------------------------------


def test_config_context_is_thread_local_and_restored():
    assert skdpgd.get_config()["secure_noise"] is False
    seen = {}

    def other():
        seen["other"] = skdpgd.get_config()["secure_noise"]

    with _secure():
        assert skdpgd.get_config()["secure_noise"] is True
        t = threading.Thread(target=other)
        t.start()
        t.join()
        with skdpgd.config_context(secure_noise=False):
            assert skdpgd.get_config()["secure_noise"] is False
        assert skdpgd.get_config()["secure_noise"] is True
    assert seen["other"] is False
    assert skdpgd.get_config()["secure_noise"] is False
    with pytest.raises(RuntimeError):
        with _secure():
            raise RuntimeError("restored on the way out")
    assert skdpgd.get_config()["secure_noise"] is False
    with pytest.raises(TypeError):
        skdpgd.set_config(secure_noise="yes")
    skdpgd.set_config(secure_noise=True)
    try:
        assert skdpgd.get_config()["secure_noise"] is True
    finally:
        skdpgd.set_config(secure_noise=False)


# --- every estimator ---------------------------------------------------------------------

CLASSIFIERS = [
    lambda: DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1]),
    lambda: DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], schedule="pur"),
    lambda: DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], schedule="output"),
    lambda: DPLinearSVC(epsilon=1.0, data_norm=1.0, classes=[0, 1]),
    lambda: DPSGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1]),
]
REGRESSORS = [
    lambda: DPRidge(epsilon=1.0, data_norm=1.0, y_bound=1.0),
    lambda: DPRidge(epsilon=1.0, data_norm=1.0, y_bound=1.0, schedule="ssp"),
    lambda: DPElasticNet(epsilon=1.0, data_norm=1.0, y_bound=1.0),
    lambda: DPHuberRegressor(epsilon=1.0, data_norm=1.0),
    lambda: DPSGDRegressor(epsilon=1.0, data_norm=1.0, y_bound=1.0),
]


CASES = [(make, "classification", 0.8) for make in CLASSIFIERS] + [
    (make, "regression", 0.5) for make in REGRESSORS
]


@pytest.mark.parametrize("make,data,least", CASES, ids=lambda v: repr(v()) if callable(v) else "")
def test_every_estimator_fits_with_discrete_noise(make, data, least, request):
    X, y = request.getfixturevalue(data)
    with _secure():
        est = make().fit(X, y)
    assert est.noise_ == "discrete"
    assert all(r.noise == "discrete" for r in est.releases_)
    assert est.epsilon_ <= 1.0
    # the reported epsilon is what the releases compose to, read outside secure mode too
    assert compose(est.releases_, est.delta_) <= 1.0 + 1e-9
    assert est.score(X, y) > least
    plain = make().fit(X, y)
    assert plain.noise_ == "gaussian"
    assert all(r.noise == "gaussian" for r in plain.releases_)


def test_poisson_regressor_and_multinomial_fit_in_secure_mode(classification):
    X, y = classification
    rng = np.random.default_rng(3)
    counts = rng.poisson(np.exp(X[:, 0]))
    with _secure():
        p = DPPoissonRegressor(epsilon=2.0, data_norm=1.0, y_bound=10.0).fit(X, counts)
        y3 = np.digitize(X[:, 0] - X[:, 1], [-0.15, 0.15])
        m = DPLogisticRegression(epsilon=2.0, data_norm=1.0, classes=[0, 1, 2]).fit(X, y3)
        s = DPSGDClassifier(epsilon=2.0, data_norm=1.0, classes=[0, 1, 2]).fit(X, y3)
    for est in (p, m, s):
        assert est.noise_ == "discrete" and est.epsilon_ <= 2.0
    assert m.score(X, y3) > 0.6


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
def test_network_fits_with_discrete_noise(classification):
    X, y = classification
    with _secure():
        net = DPMLPClassifier(
            hidden_layer_sizes=(4,), max_iter=5, epsilon=1.0, learning_rate=0.5
        ).fit(X, y)
    assert net.noise_ == "discrete" and net.epsilon_ <= 1.0


def test_a_seed_is_ignored_with_a_warning_and_fits_differ(classification):
    X, y = classification
    with _secure():
        with pytest.warns(PrivacyUsageWarning, match="ignored in secure mode"):
            a = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0)
            a.fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyUsageWarning)
            b = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0)
            b.fit(X, y)
    assert not np.array_equal(a.coef_, b.coef_)


def test_secure_generator_refuses_floating_point_normals():
    gen = SecureGenerator()
    with pytest.raises(SecureModeError):
        gen.standard_normal(3)
    with pytest.raises(SecureModeError):
        gen.bit_generator  # noqa: B018
    u = gen.random(1000)
    assert np.all((u >= 0) & (u < 1)) and np.all(u * 2.0**53 == np.floor(u * 2.0**53))
    k = gen.integers(0, 2**63 - 1, size=50)
    assert np.all((k >= 0) & (k < 2**63 - 1))


# --- accounting ----------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon,delta", [(0.1, 1e-5), (1.0, 1e-5), (4.0, 1e-8), (10.0, 1e-6)])
def test_zcdp_view_is_between_exact_gdp_and_the_standard_conversion(epsilon, delta):
    mu_gdp = gdp_mu(epsilon, delta)
    with zcdp_view():
        mu_z = gdp_mu(epsilon, delta)
        assert gdp_epsilon(delta, mu_z) <= epsilon
    rho_std = (math.sqrt(epsilon + math.log(1 / delta)) - math.sqrt(math.log(1 / delta))) ** 2
    # the improved conversion certifies more than the standard one, less than exact GDP
    assert math.sqrt(2 * rho_std) < mu_z < mu_gdp
    # the same mu read in GDP spends less: the zCDP view never under-states
    with zcdp_view():
        eps_z = gdp_epsilon(delta, mu_gdp)
    assert eps_z > gdp_epsilon(delta, mu_gdp)


def test_zcdp_view_against_dp_accounting():
    dp_accounting = pytest.importorskip("dp_accounting")
    for mu, delta in [(0.3, 1e-5), (1.0, 1e-6), (2.5, 1e-8)]:
        acc = dp_accounting.rdp.RdpAccountant()
        acc.compose(dp_accounting.GaussianDpEvent(1.0 / mu))
        theirs = acc.get_epsilon(delta)
        with zcdp_view():
            ours = gdp_epsilon(delta, mu)
        # the same RDP curve and conversion, optimised over all orders here: never above
        # dp-accounting's (its orders are a grid), and within 1% of it
        assert ours <= theirs * (1 + 1e-9)
        assert ours >= theirs * 0.99


def test_discrete_releases_compose_in_zcdp_outside_secure_mode():
    sens = {"replace": 2.0, "add_remove": 1.0}
    plain = Release("g", [1.0, 2.0], sens, "replace", noise="gaussian")
    discrete = plain.with_noise("discrete")
    with _secure():
        built = Release("g", [1.0, 2.0], sens, "replace")
    assert built.noise == "discrete"
    e_plain = compose([plain], 1e-5)
    e_disc = compose([discrete], 1e-5)
    mu = math.sqrt(1 + 0.25)
    assert e_plain == pytest.approx(gdp_epsilon(1e-5, mu), rel=1e-12)
    with zcdp_view():
        assert e_disc == pytest.approx(gdp_epsilon(1e-5, mu), rel=1e-12)
    assert e_disc > e_plain
    # a mixed ledger is read in zCDP as a whole
    assert compose([plain, discrete], 1e-5) >= compose([plain, plain], 1e-5)


@pytest.mark.parametrize("q,z,steps", [(0.01, 1.0, 1000), (0.001, 0.8, 3000), (0.05, 5.0, 50)])
def test_sampled_discrete_steps_are_read_at_integer_orders(q, z, steps):
    ints = DEFAULT_ORDERS[DEFAULT_ORDERS == np.round(DEFAULT_ORDERS)]
    cont = rdp_subsampled_gaussian(q, [z] * steps)
    disc = rdp_subsampled_gaussian(q, [z] * steps, discrete=True)
    at_int = np.isin(DEFAULT_ORDERS, ints)
    # integer orders: the same binomial sum (the lattice-shift identity); a fractional order
    # is read at the next integer one, never below the continuous curve there
    np.testing.assert_array_equal(disc[at_int], cont[at_int])
    assert np.all(disc >= cont * (1 - 1e-12))
    frac = np.flatnonzero(~at_int)
    nxt = np.ceil(DEFAULT_ORDERS[frac])
    # RDP at a fractional order: the next integer order's value (RDP grows with the order)
    np.testing.assert_allclose(disc[frac], cont[np.searchsorted(DEFAULT_ORDERS, nxt)], rtol=1e-12)
    assert rdp_epsilon(disc, DEFAULT_ORDERS, 1e-5) >= rdp_epsilon(cont, DEFAULT_ORDERS, 1e-5)
    steps_event = GaussianSteps([z] * steps, q, noise="discrete")
    assert compose([steps_event], 1e-5) == pytest.approx(
        rdp_epsilon(disc, DEFAULT_ORDERS, 1e-5), rel=1e-9
    )


def test_a_budget_charged_in_secure_mode_reads_the_fit_in_zcdp(classification):
    X, y = classification
    budget = PrivacyBudget(epsilon=3.0, delta=1e-5)
    with _secure():
        est = DPLogisticRegression(
            epsilon=1.0, delta=1e-5, data_norm=1.0, classes=[0, 1], budget=budget
        ).fit(X, y)
    assert est.noise_ == "discrete"
    assert budget.spent_epsilon() == pytest.approx(est.epsilon_, rel=1e-6)
    text = str(privacy_report(est))
    assert "exact discrete Gaussian" in text
    assert "floating-point Gaussian" in str(
        privacy_report(DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1]).fit(X, y))
    )


def test_pld_is_refused_in_secure_mode(classification):
    pytest.importorskip("dp_accounting")
    X, y = classification
    with _secure():
        with pytest.raises(ValueError, match="accountant='rdp'"):
            DPSGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1], accountant="pld").fit(X, y)


# --- transformers, pipelines, searches, counts, Dask ---------------------------------------


def test_transformers_pipeline_and_search_run_in_secure_mode(classification):
    from skdpgd.decomposition import DPPCA
    from skdpgd.model_selection import PrivateRandomSearchCV
    from skdpgd.pipeline import make_private_pipeline
    from skdpgd.preprocessing import BoundedScaler, DPStandardScaler

    X, y = classification
    with _secure():
        scaler = DPStandardScaler(bounds=(-2, 2), epsilon=0.5).fit(X)
        pca = DPPCA(n_components=2, data_norm=1.0, epsilon=0.5).fit(X)
        pipe = make_private_pipeline(
            BoundedScaler(bounds=(-2, 2)),
            DPLogisticRegression(classes=[0, 1]),
            epsilon=1.0,
        ).fit(X, y)
        search = PrivateRandomSearchCV(
            DPLogisticRegression(data_norm=1.0, classes=[0, 1]),
            {"alpha": ["auto", 1e-3]},
            epsilon=1.0,
            n_iter=2,
        ).fit(X, y)
    for obj in (scaler, pca, pipe):
        assert all(r.noise == "discrete" for r in obj.releases_)
        assert obj.epsilon_ <= 1.0
    assert pipe.score(X, y) > 0.8
    assert search.epsilon_ <= 1.0 and search.best_estimator_.noise_ == "discrete"


def test_integer_counts_are_released_on_the_lattice_without_rounding():
    import pandas as pd

    from skdpgd.preprocessing import out_of_domain_counts

    df = pd.DataFrame({"sex": ["male", "female"] * 500, "age": [30, 130] * 500})
    with _secure():
        check = out_of_domain_counts(df, {"sex": ["Male", "Female"], "age": (18, 100)}, epsilon=0.1)
    std = check.noise_std
    gamma = min(2.0 ** (math.floor(math.log2(std)) - 24), 1.0)
    exact = {"sex": 1000.0, "age": 500.0}  # every 'male'/'female' is off the codebook
    for name, v in check.counts.items():
        k = v / gamma
        assert k == math.floor(k)  # on the lattice gamma Z
        assert abs(v - exact[name]) < 6 * std


def test_dask_fit_runs_in_secure_mode(classification):
    da = pytest.importorskip("dask.array")
    X, y = classification
    Xd, yd = da.from_array(X, chunks=1000), da.from_array(y, chunks=1000)
    with _secure():
        est = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1]).fit(Xd, yd)
    assert est.noise_ == "discrete" and est.score(X, y) > 0.8

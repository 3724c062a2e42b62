"""PrivateRandomSearchCV: its epsilon against closed forms computed here, refusals (the leak
audit of its estimator among them), and the warning for DP fits inside scikit-learn's
model-selection helpers."""

import math
import pickle
import warnings

import mpmath
import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import FunctionTransformer, Normalizer, StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdpgd import (
    BudgetExceededError,
    DPLogisticRegression,
    DPRidge,
    DPSGDClassifier,
    PrivacyBudget,
    PrivacyLeakWarning,
)
from skdpgd.accounting import RDP_DEFAULT_ORDERS as DEFAULT_ORDERS
from skdpgd.accounting import RepeatedSelection, truncated_negative_binomial_gamma
from skdpgd.model_selection import PrivateRandomSearchCV, draw_n_trials
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import BoundedScaler
from _support.poison import Poison as _Poison

mpmath.mp.dps = 40


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3)) / 3
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=600) > 0).astype(int)
    return X, y


def _lr(**kw):
    return DPLogisticRegression(data_norm=2.0, classes=[0, 1], **kw)


GRID = {"schedule": ["auto", "uniform"], "alpha": ["auto", 1e-3]}


# ---------------------------------------------------------------------------------------------
# Independent closed forms (mpmath), from the statements of Papernot and Steinke (2022)
# ---------------------------------------------------------------------------------------------


def _mp_gamma(mean, eta):
    """gamma of the truncated negative binomial of mean ``mean``, solved here by bisection."""

    def m(g):
        g = mpmath.mpf(g)
        if eta == 0:
            return (1 / g - 1) / mpmath.log(1 / g)
        return eta * (1 - g) / (g * (1 - g**eta))

    lo, hi = mpmath.mpf("1e-30"), mpmath.mpf(1) - mpmath.mpf("1e-30")
    for _ in range(200):  # the mean decreases in gamma
        mid = (lo + hi) / 2
        if m(mid) > mean:
            lo = mid
        else:
            hi = mid
    return lo, m(lo)


def _mp_conversion(rdp_of, delta):
    """min over DEFAULT_ORDERS of rdp + log(1 - 1/a) - (log delta + log a)/(a - 1), with the
    running minimum of the RDP from above (RDP grows with the order)."""
    orders = [mpmath.mpf(float(a)) for a in DEFAULT_ORDERS]
    rdp = [rdp_of(a) for a in orders]
    for i in range(len(rdp) - 2, -1, -1):
        rdp[i] = min(rdp[i], rdp[i + 1])
    d = mpmath.mpf(delta)
    return min(
        r + mpmath.log(1 - 1 / a) - (mpmath.log(d) + mpmath.log(a)) / (a - 1)
        for r, a in zip(rdp, orders)
    )


def _mp_tnb_epsilon(mu, gamma, mean_k, eta, delta):
    """Theorem 2 with a mu-GDP base (RDP a mu^2 / 2), minimised numerically over lam_hat >= 1."""
    mu = mpmath.mpf(mu)
    L = -mpmath.log(gamma)

    def inner(lh):
        return (1 - 1 / lh) * lh * mu**2 / 2 + L / lh

    # the inner function is convex in lam_hat: golden-section search on [1, 1e8]
    a, b = mpmath.mpf(1), mpmath.mpf(10) ** 8
    phi = (mpmath.sqrt(5) - 1) / 2
    for _ in range(300):
        c, d = b - phi * (b - a), a + phi * (b - a)
        if inner(c) < inner(d):
            b = d
        else:
            a = c
    c_min = min(inner(a), inner(mpmath.mpf(1)))
    return _mp_conversion(
        lambda lam: lam * mu**2 / 2 + (1 + eta) * c_min + mpmath.log(mean_k) / (lam - 1), delta
    )


def _mp_gdp_delta(eps, mu):
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


def _mp_poisson_epsilon(mu, m, delta):
    """Theorem 6 with e_hat = log(1 + 1/(lam - 1)) and d_hat the exact delta of mu-GDP."""
    mu, m = mpmath.mpf(mu), mpmath.mpf(m)
    return _mp_conversion(
        lambda lam: (
            lam * mu**2 / 2
            + m * _mp_gdp_delta(mpmath.log(1 + 1 / (lam - 1)), mu)
            + mpmath.log(m) / (lam - 1)
        ),
        delta,
    )


@pytest.mark.parametrize(
    "eta,mean,epsilon,delta",
    [(1.0, 10, 1.0, 1e-5), (0.0, 5, 0.5, 1e-6), (0.5, 3, 3.0, 1e-5), (2.0, 20, 8.0, 1e-7)],
)
def test_epsilon_is_the_closed_form_bound_for_the_negative_binomial(
    data, eta, mean, epsilon, delta
):
    X, y = data
    s = PrivateRandomSearchCV(
        _lr(), GRID, epsilon=epsilon, delta=delta, n_iter=mean, shape=eta, random_state=0
    ).fit(X, y)
    gamma, mean_k = _mp_gamma(mean, eta)
    assert float(s.releases_[0].gamma) == pytest.approx(float(gamma), rel=1e-9)
    assert float(mean_k) == pytest.approx(mean, rel=1e-9)
    ref = float(_mp_tnb_epsilon(s.base_mu_, gamma, mean_k, eta, delta))
    assert s.epsilon_ == pytest.approx(ref, rel=1e-9)
    # the whole budget is used, and never exceeded
    assert epsilon * (1 - 1e-8) <= s.epsilon_ <= epsilon
    assert s.delta_ == delta
    # each trial was given its share: the winner spent at most base_mu_ (exact GDP)
    assert s.best_estimator_.mu_ <= s.base_mu_
    assert s.best_estimator_.mu_ == pytest.approx(s.base_mu_, rel=1e-6)


@pytest.mark.parametrize("mean,epsilon", [(3, 1.0), (10, 2.0)])
def test_epsilon_is_the_closed_form_bound_for_poisson(mean, epsilon):
    delta = 1e-5
    from skdpgd.accounting import calibrate_base_mu

    mu = calibrate_base_mu(epsilon, delta, "poisson", mean)
    sel = RepeatedSelection(mu, "poisson", mean)
    ref = float(_mp_poisson_epsilon(mu, mean, delta))
    assert sel.epsilon(delta) == pytest.approx(ref, rel=1e-9)
    assert epsilon * (1 - 1e-8) <= sel.epsilon(delta) <= epsilon


@pytest.mark.parametrize("eta,mean,mu", [(1.0, 10, 0.2), (0.0, 5, 0.05), (2.0, 30, 1.0)])
def test_rdp_against_dp_accounting(eta, mean, mu):
    """dp-accounting's RepeatAndSelectDpEvent minimises over lam_hat on the order grid; the
    bound here minimises over every lam_hat >= 1, so it is at most dp-accounting's, and
    close."""
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant as rpa

    orders = [float(a) for a in DEFAULT_ORDERS]
    acc = rpa.RdpAccountant(orders=orders)
    event = dpa.dp_event.GaussianDpEvent(1.0 / mu)
    acc.compose(dpa.dp_event.RepeatAndSelectDpEvent(event, mean, eta))
    theirs = acc.get_epsilon(1e-6)
    gamma = truncated_negative_binomial_gamma(mean, eta)
    ours = RepeatedSelection(mu, "negative_binomial", mean, eta, gamma).epsilon(1e-6)
    assert ours <= theirs * (1 + 1e-6)
    assert ours >= theirs * 0.97


def test_poisson_is_at_most_dp_accounting():
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant as rpa

    acc = rpa.RdpAccountant(orders=[float(a) for a in DEFAULT_ORDERS])
    event = dpa.dp_event.GaussianDpEvent(1.0 / 0.2)
    acc.compose(dpa.dp_event.RepeatAndSelectDpEvent(event, 10, np.inf))
    ours = RepeatedSelection(0.2, "poisson", 10).epsilon(1e-6)
    assert ours <= acc.get_epsilon(1e-6) * (1 + 1e-9)


@pytest.mark.parametrize(
    "distribution,eta",
    [
        ("negative_binomial", 1.0),
        ("negative_binomial", 0.0),
        ("negative_binomial", 0.5),
        ("poisson", 1.0),
    ],
)
def test_number_of_trials_has_the_stated_mean(distribution, eta):
    mean = 6.0
    gamma = truncated_negative_binomial_gamma(mean, eta) if distribution != "poisson" else math.nan
    gen = np.random.default_rng(1)
    k = np.array([draw_n_trials(gen, distribution, mean, eta, gamma) for _ in range(20000)])
    assert abs(k.mean() - mean) < 5 * k.std() / math.sqrt(k.size)
    if distribution != "poisson":
        assert k.min() >= 1


# ---------------------------------------------------------------------------------------------
# Budget, refusals, reproducibility
# ---------------------------------------------------------------------------------------------


class _CountingLR(DPLogisticRegression):
    # counts fits and calls DPLogisticRegression's: it keeps that class's promise, and says so
    # (a subclass is not trusted by inheritance)
    _skdpgd_privacy = DPLogisticRegression._skdpgd_privacy
    fits = 0

    def fit(self, X, y, sample_weight=None):
        type(self).fits += 1
        return super().fit(X, y, sample_weight)


def test_budget_just_below_refuses_before_any_trial_and_sets_nothing(data):
    X, y = data
    delta = 1e-5
    done = PrivateRandomSearchCV(
        _lr(), GRID, epsilon=1.0, delta=delta, n_iter=4, random_state=0
    ).fit(X, y)
    spent = done.epsilon_

    budget = PrivacyBudget(spent * (1 - 1e-6), delta, neighbouring="replace")
    search = PrivateRandomSearchCV(
        _CountingLR(data_norm=2.0, classes=[0, 1]),
        GRID,
        epsilon=1.0,
        delta=delta,
        n_iter=4,
        random_state=0,
        budget=budget,
    )
    before = dict(search.__dict__)
    _CountingLR.fits = 0
    with pytest.raises(BudgetExceededError):
        search.fit(X, y)
    assert _CountingLR.fits == 0  # no trial ran
    assert search.__dict__ == before  # nothing set
    assert not [k for k in vars(search) if k.endswith("_")]
    assert budget.spent_epsilon() == 0.0

    budget = PrivacyBudget(spent * (1 + 1e-9), delta, neighbouring="replace")
    search.set_params(budget=budget).fit(X, y)
    assert _CountingLR.fits >= 1
    assert budget.spent_epsilon() == pytest.approx(spent, rel=1e-12)
    # and the ledger is full: a further tiny fit is refused
    with pytest.raises(BudgetExceededError):
        _lr(epsilon=0.01, delta=delta, budget=budget).fit(X, y)


def test_estimator_budget_is_charged_once_for_the_whole_search(data):
    X, y = data
    budget = PrivacyBudget(2.0, 1e-5, neighbouring="replace")
    s = PrivateRandomSearchCV(
        _lr(budget=budget), GRID, epsilon=1.0, delta=1e-5, n_iter=5, random_state=0
    ).fit(X, y)
    assert len(budget.rdp_charges) == 1 and not budget.charges
    assert budget.spent_epsilon() == pytest.approx(s.epsilon_, rel=1e-12)
    # the winner carries the budget you gave the estimator (a refit of it is charged there),
    # never the search's setting for its trials
    assert s.best_estimator_.budget is budget


def test_budget_rdp_charges_survive_pickling_detached(data):
    X, y = data
    budget = PrivacyBudget(2.0, 1e-5, neighbouring="replace")
    PrivateRandomSearchCV(
        _lr(), GRID, epsilon=1.0, delta=1e-5, n_iter=3, random_state=0, budget=budget
    ).fit(X, y)
    _lr(epsilon=0.5, delta=1e-5, budget=budget).fit(X, y)
    copy = pickle.loads(pickle.dumps(budget))
    assert copy.detached
    assert copy.spent_epsilon() == pytest.approx(budget.spent_epsilon(), rel=1e-12)
    with pytest.raises(RuntimeError, match="detached"):
        copy.charge_rdp(np.zeros(len(DEFAULT_ORDERS)), "replace")


def test_add_remove_budget_is_refused_before_any_trial(data):
    X, y = data
    _CountingLR.fits = 0
    search = PrivateRandomSearchCV(
        _CountingLR(data_norm=2.0, classes=[0, 1]),
        GRID,
        epsilon=1.0,
        budget=PrivacyBudget(5.0, 1e-5),
    )
    with pytest.raises(ValueError, match="replace"):
        search.fit(X, y)
    assert _CountingLR.fits == 0
    assert not [k for k in vars(search) if k.endswith("_")]


def test_winner_is_reproducible_with_random_state(data):
    X, y = data
    fits = [
        PrivateRandomSearchCV(_lr(), GRID, epsilon=1.0, n_iter=5, random_state=7).fit(X, y)
        for _ in range(2)
    ]
    a, b = fits
    assert a.best_params_ == b.best_params_
    assert a.best_score_ == b.best_score_
    np.testing.assert_array_equal(a.best_estimator_.coef_, b.best_estimator_.coef_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    c = PrivateRandomSearchCV(_lr(), GRID, epsilon=1.0, n_iter=5, random_state=8).fit(X, y)
    assert c.best_score_ != a.best_score_


def test_only_released_values_are_stored(data):
    X, y = data
    s = PrivateRandomSearchCV(_lr(), GRID, epsilon=1.0, n_iter=8, random_state=0).fit(X, y)
    assert s.cv_results_["params"] == [s.best_params_]
    assert s.cv_results_["mean_test_score"].tolist() == [s.best_score_]
    assert set(s.best_params_) <= set(GRID)
    # K and the losing trials are not stored anywhere
    fitted = {k for k in vars(s) if k.endswith("_")}
    assert not {k for k in fitted if "trials" in k or "n_iter" in k}
    assert s.n_train_ + s.n_validation_ == X.shape[0]
    assert s.best_estimator_.n_samples_ == s.n_train_  # trained on the training split only


def test_a_verbose_estimator_prints_nothing_per_trial(data, capsys):
    """Lines per trial would reveal K: the trials run silent, the winner keeps verbose."""
    X, y = data
    s = PrivateRandomSearchCV(
        _lr().set_params(verbose=2), GRID, epsilon=1.0, n_iter=8, random_state=0
    ).fit(X, y)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert s.best_estimator_.verbose == 2  # the user's setting, as published


def test_refuses_what_it_cannot_account(data):
    X, y = data
    with pytest.raises(TypeError, match="replace-one"):
        PrivateRandomSearchCV(
            DPSGDClassifier(data_norm=2.0, classes=[0, 1]), {"alpha": [1e-3]}, epsilon=1.0
        ).fit(X, y)
    with pytest.raises(ValueError, match="replace"):
        PrivateRandomSearchCV(_lr(neighbouring="add_remove", n_samples=600), GRID, epsilon=1.0).fit(
            X, y
        )
    with pytest.raises(ValueError, match="may not set"):
        PrivateRandomSearchCV(_lr(), {"epsilon": [1.0, 2.0]}, epsilon=1.0).fit(X, y)
    _CountingLR.fits = 0
    s = PrivateRandomSearchCV(
        _CountingLR(data_norm=2.0, classes=[0, 1]),
        GRID,
        epsilon=np.inf,
        budget=PrivacyBudget(5.0, 1e-5, neighbouring="replace"),
    )
    with pytest.raises(ValueError, match="epsilon=inf"):
        s.fit(X, y)
    assert _CountingLR.fits == 0 and not [k for k in vars(s) if k.endswith("_")]
    yr = X[:, 0]
    s = PrivateRandomSearchCV(DPRidge(data_norm=2.0), {"schedule": ["auto"]}, epsilon=1.0)
    with pytest.raises(ValueError, match="y_bound"):
        s.fit(X, yr)
    assert not [k for k in vars(s) if k.endswith("_")]


def test_noisy_score_sensitivity():
    """The value released before noise moves by at most the stated sensitivity when one
    validation row is replaced, including rows far outside the public bound."""

    class Fixed:
        def __init__(self, pred):
            self.pred = pred

        def predict(self, X):
            return self.pred

    rng = np.random.default_rng(0)
    n = 50
    score = PrivateRandomSearchCV._noisy_score
    for _ in range(200):
        pred = rng.integers(0, 2, n)
        yv = rng.integers(0, 2, n)
        y2 = yv.copy()
        y2[rng.integers(n)] = 1 - y2[0]
        a = score(Fixed(pred), None, yv, "accuracy", None, n, 1.0, 0.0)
        b = score(Fixed(pred), None, y2, "accuracy", None, n, 1.0, 0.0)
        assert abs(a - b) <= 1.0 / n + 1e-15
        B = 2.0
        pr = rng.normal(scale=5, size=n)
        yr = rng.normal(scale=5, size=n)
        yr2 = yr.copy()
        yr2[rng.integers(n)] = rng.choice([-1e6, 1e6, 0.0])
        a = score(Fixed(pr), None, yr, "neg_mean_squared_error", (-B, B), n, 1.0, 0.0)
        b = score(Fixed(pr), None, yr2, "neg_mean_squared_error", (-B, B), n, 1.0, 0.0)
        assert abs(a - b) <= 4 * B * B / n * (1 + 1e-12)
        # an off-centre range (lo, hi): the squared width
        a = score(Fixed(pr + 5), None, yr + 5, "neg_mean_squared_error", (1, 9), n, 1.0, 0.0)
        b = score(Fixed(pr + 5), None, yr2 + 5, "neg_mean_squared_error", (1, 9), n, 1.0, 0.0)
        assert abs(a - b) <= 64.0 / n * (1 + 1e-12)
    # the noise has standard deviation sensitivity / mu
    a = score(Fixed(np.ones(n)), None, np.ones(n), "accuracy", None, n, 0.5, 1.0)
    assert a == pytest.approx(1.0 + (1.0 / n) / 0.5)


# ---------------------------------------------------------------------------------------------
# Pipelines
# ---------------------------------------------------------------------------------------------


def test_search_over_a_pipeline(data):
    X, y = data
    pipe = Pipeline([("norm", Normalizer()), ("clf", _lr())])
    s = PrivateRandomSearchCV(
        pipe, {"clf__schedule": ["auto", "uniform"]}, epsilon=1.0, n_iter=3, random_state=0
    ).fit(X, y)
    assert isinstance(s.best_estimator_, Pipeline)
    assert s.best_estimator_[-1].mu_ <= s.base_mu_
    assert s.predict(X).shape == y.shape
    assert s.predict_proba(X).shape == (X.shape[0], 2)
    assert 0.0 <= s.score(X, y) <= 1.0
    # an explicit epsilon_param is the same
    t = PrivateRandomSearchCV(
        pipe,
        {"clf__schedule": ["auto", "uniform"]},
        epsilon=1.0,
        n_iter=3,
        random_state=0,
        epsilon_param="clf__epsilon",
    ).fit(X, y)
    assert t.best_score_ == s.best_score_


def test_search_as_a_pipeline_step(data):
    X, y = data
    pipe = Pipeline(
        [
            ("norm", Normalizer()),
            ("search", PrivateRandomSearchCV(_lr(), GRID, epsilon=1.0, n_iter=3, random_state=0)),
        ]
    ).fit(X, y)
    assert pipe[-1].epsilon_ <= 1.0
    assert pipe.predict(X).shape == y.shape


def test_column_vector_target_is_scored_as_one_column(data):
    X, y = data
    a = PrivateRandomSearchCV(_lr(), GRID, epsilon=1.0, n_iter=3, random_state=0).fit(X, y)
    with pytest.warns(Warning, match="column-vector y"):
        b = PrivateRandomSearchCV(_lr(), GRID, epsilon=1.0, n_iter=3, random_state=0).fit(
            X, y[:, None]
        )
    assert a.best_score_ == b.best_score_  # an (n, 1) y once broadcast to (n, n)


def test_regression_search(data):
    X, _ = data
    rng = np.random.default_rng(3)
    y = X @ np.array([1.0, -1.0, 0.5]) + 0.1 * rng.normal(size=X.shape[0])
    s = PrivateRandomSearchCV(
        DPRidge(data_norm=2.0, y_bound=2.0),
        {"schedule": ["auto", "ssp"]},
        epsilon=2.0,
        n_iter=3,
        random_state=0,
    ).fit(X, y)
    assert s.scoring_ == "neg_mean_squared_error"
    assert s.epsilon_ <= 2.0
    assert s.predict(X).shape == y.shape


# ---------------------------------------------------------------------------------------------
# The leak audit of the estimator (the private pipeline's), before any row is read
# ---------------------------------------------------------------------------------------------


def _refused(search, match):
    """``search.fit`` is refused before reading a row, charging or setting anything."""
    budget = PrivacyBudget(10.0, 1e-5, neighbouring="replace")
    search.set_params(budget=budget)
    with pytest.raises(ValueError, match=match):
        search.fit(_Poison(), _Poison())
    assert not [k for k in vars(search) if k.endswith("_")]
    assert budget.spent_epsilon() == 0.0 and not budget.rdp_charges


def test_a_pipeline_step_that_learns_from_the_rows_is_refused(data):
    X, y = data
    leaky = Pipeline([("s", StandardScaler()), ("m", _lr())])
    _refused(
        PrivateRandomSearchCV(
            leaky, {"m__schedule": ["auto", "uniform"]}, epsilon=1.0, n_iter=3, random_state=0
        ),
        r"step 's' \(StandardScaler\).*Private alternative: DPStandardScaler.*"
        "ran no trial",
    )
    # on real rows too: the exact means would be published in best_estimator_
    with pytest.raises(ValueError, match="StandardScaler"):
        PrivateRandomSearchCV(
            leaky, {"m__schedule": ["auto"]}, epsilon=1.0, n_iter=3, random_state=0
        ).fit(X, y)
    # nested, and in a private pipeline given to the search
    nested = Pipeline([("u", FeatureUnion([("s", StandardScaler())])), ("m", _lr())])
    _refused(
        PrivateRandomSearchCV(nested, {"m__schedule": ["auto"]}, epsilon=1.0),
        r"step 'u__s' \(StandardScaler\)",
    )
    private = make_private_pipeline(
        StandardScaler(), Normalizer(), DPLogisticRegression(classes=[0, 1]), epsilon=1.0
    )
    _refused(
        PrivateRandomSearchCV(private, {"dplogisticregression__schedule": ["auto"]}, epsilon=1.0),
        r"step 'standardscaler' \(StandardScaler\)",
    )


def test_a_final_estimator_reading_its_classes_or_bounds_is_refused():
    grid = {"schedule": ["auto"]}
    _refused(
        PrivateRandomSearchCV(DPLogisticRegression(data_norm=2.0), grid),
        r"the estimator \(DPLogisticRegression\): classes=None",
    )
    _refused(
        PrivateRandomSearchCV(DPLogisticRegression(classes=[0, 1]), grid),
        "data_norm=None reads the largest row norm",
    )
    _refused(PrivateRandomSearchCV(DPRidge(data_norm=2.0), grid, y_bound=2.0), "y_bound=None")
    # a plain Pipeline does not pass on the bound its steps declare (a private pipeline does)
    _refused(
        PrivateRandomSearchCV(
            Pipeline([("n", Normalizer()), ("m", DPLogisticRegression(classes=[0, 1]))]),
            {"m__schedule": ["auto"]},
        ),
        r"step 'm' \(DPLogisticRegression\): data_norm=None.*make_private_pipeline",
    )
    _refused(
        PrivateRandomSearchCV(
            make_private_pipeline(
                FunctionTransformer(np.tanh), DPLogisticRegression(classes=[0, 1]), epsilon=1.0
            ),
            {"dplogisticregression__schedule": ["auto"]},
        ),
        "declare no public row bound",
    )


def test_an_estimator_subclass_is_refused_unless_it_declares_its_privacy():
    class Peeking(DPLogisticRegression):
        def fit(self, X, y, sample_weight=None):
            self.largest_ = float(np.max(np.abs(X)))
            return super().fit(X, y, sample_weight)

    _refused(
        PrivateRandomSearchCV(Peeking(data_norm=2.0, classes=[0, 1]), GRID),
        "subclass of DPLogisticRegression.*_skdpgd_privacy",
    )
    _refused(
        PrivateRandomSearchCV(
            Pipeline([("p", Peeking(data_norm=2.0, classes=[0, 1]))]), {"p__schedule": ["auto"]}
        ),
        "final step 'p'.*not a skdpgd DP estimator",
    )


def test_public_bound_pipelines_are_searched_without_a_warning(data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        s = PrivateRandomSearchCV(
            Pipeline([("s", BoundedScaler(bounds=(-1, 1))), ("m", _lr())]),
            {"m__schedule": ["auto", "uniform"]},
            epsilon=1.0,
            n_iter=3,
            random_state=0,
        ).fit(X, y)
        assert s.epsilon_ <= 1.0 and s.best_estimator_[-1].mu_ <= s.base_mu_
        assert type(s.best_estimator_[0]) is BoundedScaler
        private = make_private_pipeline(
            BoundedScaler(bounds=(-1, 1)), DPLogisticRegression(classes=[0, 1]), epsilon=1.0
        )
        t = PrivateRandomSearchCV(
            private,
            {"dplogisticregression__schedule": ["auto"]},
            epsilon=1.0,
            n_iter=3,
            random_state=0,
        ).fit(X, y)
        assert t.epsilon_ <= 1.0 and t.best_estimator_.mu_ <= t.base_mu_


@pytest.mark.filterwarnings(
    "ignore:DPLogisticRegression is the final step:skdpgd.exceptions.PrivacyLeakWarning"
)
def test_allow_leaks_warns_and_searches(data):
    X, y = data
    leaky = Pipeline([("s", StandardScaler()), ("m", _lr())])
    search = PrivateRandomSearchCV(
        leaky, {"m__schedule": ["auto"]}, epsilon=1.0, n_iter=3, allow_leaks=True, random_state=0
    )
    with pytest.warns(PrivacyLeakWarning, match="step 's' .*epsilon_ does not cover") as rec:
        search.fit(X, y)
    assert rec[0].filename == __file__  # the warning points at the caller's fit
    assert search.epsilon_ <= 1.0
    with pytest.raises(ValueError, match="allow_leaks"):
        PrivateRandomSearchCV(leaky, {"m__schedule": ["auto"]}, allow_leaks="yes").fit(X, y)


# ---------------------------------------------------------------------------------------------
# The warning for scikit-learn's helpers
# ---------------------------------------------------------------------------------------------


def test_warning_in_gridsearchcv_and_cross_val_score_not_in_a_plain_fit(data):
    X, y = data
    with pytest.warns(PrivacyLeakWarning, match="PrivateRandomSearchCV"):
        GridSearchCV(_lr(), {"alpha": ["auto", 1e-3]}, cv=2).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="PrivateRandomSearchCV"):
        cross_val_score(_lr(), X, y, cv=2)
    # a search is warned about even with a budget: the budget does not cover the selection
    budget = PrivacyBudget(100.0, 1e-5)
    with pytest.warns(PrivacyLeakWarning, match="selection"):
        GridSearchCV(_lr(budget=budget), {"alpha": ["auto", 1e-3]}, cv=2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        _lr().fit(X, y)  # a plain fit
        _lr().fit(X, y)  # and a second one: the user's own loop is not a helper
        cross_val_score(_lr(budget=PrivacyBudget(100.0, 1e-5)), X, y, cv=2)  # accounted
        cross_val_score(_lr(epsilon=np.inf), X, y, cv=2)  # not private at all
        PrivateRandomSearchCV(_lr(), GRID, epsilon=1.0, n_iter=3, random_state=0).fit(X, y)


def test_warning_in_one_vs_rest_without_a_budget(data):
    from sklearn.multiclass import OneVsRestClassifier

    X, y = data
    y3 = y + (X[:, 2] > 0.2)
    with pytest.warns(PrivacyLeakWarning, match="OneVsRestClassifier"):
        OneVsRestClassifier(_lr()).fit(X, y3)  # one binary fit per class, classes [0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        OneVsRestClassifier(_lr(budget=PrivacyBudget(100.0, 1e-5))).fit(X, y3)


def test_warning_names_the_search_for_a_private_search_in_cross_validation(data):
    X, y = data
    with pytest.warns(PrivacyLeakWarning, match="PrivateRandomSearchCV is being fitted"):
        cross_val_score(
            PrivateRandomSearchCV(_lr(), GRID, epsilon=1.0, n_iter=2, random_state=0), X, y, cv=2
        )


# ---------------------------------------------------------------------------------------------
# scikit-learn's estimator contract
# ---------------------------------------------------------------------------------------------


@parametrize_with_checks(
    [
        PrivateRandomSearchCV(
            DPLogisticRegression(),
            {"schedule": ["auto", "uniform"]},
            n_iter=2,
            allow_leaks=True,
            random_state=0,
        ),
        PrivateRandomSearchCV(
            DPRidge(y_bound=5.0),
            {"schedule": ["auto", "uniform"]},
            n_iter=2,
            allow_leaks=True,
            random_state=0,
        ),
    ]
)
def test_sklearn_compatible_search(estimator, check):
    # the checks' data has no public classes or row bound: the estimators read them from the
    # rows, which the search allows only with allow_leaks=True (and a PrivacyLeakWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)


def test_charge_rdp_composes_with_gaussian_fits_in_rdp():
    from skdpgd.accounting import Release, gdp_epsilon, rdp_epsilon

    mu = 0.3
    curve = DEFAULT_ORDERS * mu * mu / 2.0  # a mu-GDP release, by its RDP curve
    budget = PrivacyBudget(5.0, 1e-6, neighbouring="replace")
    spent = budget.charge_rdp(curve, "replace", label="curve")
    assert spent == pytest.approx(rdp_epsilon(curve, DEFAULT_ORDERS, 1e-6), rel=1e-12)
    assert spent >= gdp_epsilon(1e-6, mu)  # RDP conversion is looser than exact GDP
    # a Gaussian fit's release composes with it by adding RDP curves
    z = 2.0
    budget.charge([Release("steps", [z], {"replace": 2.0, "add_remove": 1.0}, "replace")])
    both = rdp_epsilon(curve + DEFAULT_ORDERS / (2 * z * z), DEFAULT_ORDERS, 1e-6)
    assert budget.spent_epsilon() == pytest.approx(both, rel=1e-9)
    with pytest.raises(ValueError, match="relation|neighbour"):
        budget.charge_rdp(curve, "add_remove")
    with pytest.raises(ValueError, match="DEFAULT_ORDERS"):
        budget.charge_rdp(curve[:-1], "replace")
    with pytest.raises(BudgetExceededError):
        budget.charge_rdp(curve * 100, "replace")
    assert len(budget.rdp_charges) == 1


def test_search_over_a_full_batch_mlp(data):
    pytest.importorskip("torch")
    from skdpgd import DPMLPClassifier

    X, y = data
    s = PrivateRandomSearchCV(
        DPMLPClassifier(hidden_layer_sizes=(8,), max_iter=20, data_norm=1.0, classes=[0, 1]),
        {"learning_rate": [0.1, 0.5]},
        epsilon=1.0,
        n_iter=2,
        random_state=0,
    ).fit(X, y)
    assert s.epsilon_ <= 1.0
    assert s.best_estimator_.neighbouring_ == "replace-one"
    assert s.best_estimator_.mu_ <= s.base_mu_
    with pytest.raises(TypeError, match="minibatches"):
        PrivateRandomSearchCV(
            DPMLPClassifier(batch_size=32, data_norm=1.0, classes=[0, 1]),
            {"learning_rate": [0.1]},
            epsilon=1.0,
        ).fit(X, y)


def test_best_score_is_clipped_to_the_range_of_the_score():
    # a perfectly separable set: every trial scores 1.0 before its noise, so the noisy maximum
    # lies above 1 more often than not; what is reported is clipped (post-processing)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2)) / 2
    y = (X[:, 0] > 0).astype(int)
    X[:, 0] += np.where(y == 1, 0.3, -0.3)
    scores = []
    for seed in range(5):
        s = PrivateRandomSearchCV(
            DPLogisticRegression(data_norm=2.0, classes=[0, 1]),
            {"alpha": [1e-3]},
            epsilon=1.0,
            n_iter=3,
            random_state=seed,
        ).fit(X, y)
        scores.append(s.best_score_)
        assert s.cv_results_["mean_test_score"].tolist() == [s.best_score_]
    assert all(0.0 <= v <= 1.0 for v in scores)
    assert max(scores) == 1.0


# ---------------------------------------------------------------------------------------------
# The estimator as given is always a candidate; a private pipeline needs no epsilon of its own
# ---------------------------------------------------------------------------------------------
def _drawn(search, X, y, monkeypatch):
    """The candidates the search's trials drew (recorded at each trial's fit)."""
    seen = []
    real = DPLogisticRegression.fit

    def fit(self, *args, **kw):
        seen.append((self.schedule, self.alpha))
        return real(self, *args, **kw)

    monkeypatch.setattr(DPLogisticRegression, "fit", fit)
    search.fit(X, y)
    return seen


def test_a_grid_without_the_estimators_values_gets_them_as_one_more_point(data, monkeypatch):
    X, y = data
    search = PrivateRandomSearchCV(
        _lr(), {"alpha": [1e-3, 1e-2]}, epsilon=1.0, n_iter=30, random_state=0
    )
    seen = _drawn(search, X, y, monkeypatch)
    assert ("auto", "auto") in seen  # the estimator as given (alpha='auto')
    assert {a for _, a in seen} <= {"auto", 1e-3, 1e-2}
    if search.best_params_ == {}:  # the defaults won: reported as the empty candidate
        assert search.best_estimator_.alpha == "auto"


def test_a_grid_listing_the_estimators_values_is_sampled_as_given(data, monkeypatch):
    """GRID lists the defaults (schedule='auto', alpha='auto'): nothing is added, and no
    draw moves (the search's golden-master cases rely on it)."""
    X, y = data
    search = PrivateRandomSearchCV(_lr(), GRID, epsilon=1.0, n_iter=30, random_state=0)
    seen = _drawn(search, X, y, monkeypatch)
    assert set(seen) <= {(s, a) for s in GRID["schedule"] for a in GRID["alpha"]}
    assert search.best_params_ != {}


def test_a_distribution_cannot_list_the_default_so_it_is_added():
    from scipy.stats import loguniform

    from skdpgd.model_selection import _lists_current_values

    params = _lr().get_params()
    assert not _lists_current_values({"alpha": loguniform(1e-4, 1e-1)}, params)
    assert not _lists_current_values({"alpha": [1e-3]}, params)
    assert _lists_current_values({"alpha": ["auto", 1e-3]}, params)
    assert _lists_current_values({}, params)


def test_an_empty_grid_searches_the_estimator_as_given(data):
    X, y = data
    search = PrivateRandomSearchCV(_lr(), {}, epsilon=1.0, n_iter=2, random_state=0).fit(X, y)
    assert search.best_params_ == {}
    assert search.epsilon_ <= 1.0


def test_a_private_pipeline_needs_no_epsilon_of_its_own(data):
    X, y = data
    pipe = make_private_pipeline(
        BoundedScaler(bounds=(-2.0, 2.0)), DPLogisticRegression(classes=[0, 1])
    )
    search = PrivateRandomSearchCV(
        pipe,
        {"dplogisticregression__schedule": ["auto", "uniform"]},
        epsilon=2.0,
        n_iter=2,
        random_state=0,
    ).fit(X, y)
    assert search.epsilon_ <= 2.0
    # the winner ran at the trial's epsilon, which the search set on the pipeline
    assert search.best_estimator_.epsilon_ <= search.trial_epsilon_ * (1 + 1e-9)


def test_a_private_pipeline_ending_in_a_minibatch_estimator_is_refused_before_any_trial():
    pipe = make_private_pipeline(BoundedScaler(bounds=(-2.0, 2.0)), DPSGDClassifier(classes=[0, 1]))
    search = PrivateRandomSearchCV(pipe, {"dpsgdclassifier__alpha": [1e-3]}, epsilon=1.0)
    with pytest.raises(TypeError, match="add/remove-one"):
        search.fit(_Poison(), _Poison())
    assert not hasattr(search, "best_estimator_")

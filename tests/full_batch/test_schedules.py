"""Schedules: shapes against hand computations, the paper-to-code mappings, exact spending."""

import math

import numpy as np
import pytest

from skdpgd.accounting import GaussianDPAccountant, GaussianSteps, gdp_mu, zcdp_rho
from skdpgd.policy import MAX_AUTO_ITER, MAX_SHAPE_RATIO
from skdpgd.schedules import (
    PUR,
    Exponential,
    Hong,
    OutputPerturbation,
    Problem,
    Uniform,
    get_schedule,
    hong_momentum_eta0,
    hong_momentum_log_influence,
)


#: the logistic loss's gradient bound for rows of norm 1 with an intercept, and its value at 0
LOGISTIC_G, LOGISTIC_B = math.sqrt(2), math.log(2)


def problem(n=500, d=10, alpha=1e-2, G=LOGISTIC_G, replace=True, momentum=0.0, B=LOGISTIC_B):
    return Problem(
        n_samples=n,
        n_params=d,
        sensitivity=(2 * G if replace else G),
        lipschitz=G,
        smoothness=G * G / 4 + alpha,
        strong_convexity=alpha,
        loss_bound=B,
        momentum=momentum,
    )


SCHEDULES = [Uniform(), Hong(), PUR(), Exponential(0.98), Hong(), OutputPerturbation()]


# --- the budget is spent exactly -----------------------------------------------------------


@pytest.mark.parametrize("schedule", ["uniform", "hong", "pur", "output", "exponential"])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
@pytest.mark.parametrize("n,d,alpha", [(100, 3, 1e-1), (5000, 50, 1e-3), (10**6, 20, 1e-4)])
def test_plan_then_calibrate_spends_exactly(schedule, epsilon, delta, n, d, alpha):
    p = problem(n=n, d=d, alpha=alpha)
    acc = GaussianDPAccountant()
    plan = get_schedule(schedule).plan(p, acc.budget(epsilon, delta))
    z = acc.calibrate(plan.noise_multipliers, epsilon, delta)
    spent = acc.epsilon(GaussianSteps(z), delta)
    assert spent <= epsilon
    assert spent >= epsilon * (1 - 1e-9)
    assert plan.n_steps <= MAX_AUTO_ITER


# --- uniform --------------------------------------------------------------------------------


def test_uniform_T_minimises_hong_theorem_4_2_bound():
    """T is the integer minimiser of gamma^T + alpha_H kappa (1 - gamma^T) T (brute force)."""
    p = problem(n=1000, d=20, alpha=0.01)
    mu = 0.5
    kappa = p.smoothness / 0.01
    gamma = 1 - 1 / kappa
    a = 20 * (2 * math.sqrt(2)) ** 2 / (2 * mu**2 * p.smoothness * 1000**2 * math.log(2))
    Ts = np.arange(1, MAX_AUTO_ITER + 1)
    bound = gamma**Ts + a * kappa * (1 - gamma**Ts) * Ts
    plan = Uniform().plan(p, mu)
    assert plan.n_steps == Ts[np.argmin(bound)]
    assert 1 < plan.n_steps < MAX_AUTO_ITER  # an interior minimum: the test means something
    assert np.all(plan.noise_multipliers == 1)
    assert np.allclose(plan.step_sizes, 1 / p.smoothness)
    # without strong convexity the bound's minimiser tends to 1 / alpha_H
    p0 = problem(n=1000, d=20, alpha=0.0)
    assert Uniform().plan(p0, mu).n_steps == math.ceil(1 / p0.hong_alpha(mu))


def test_theorem_closed_forms_overshoot_when_noise_dominates():
    """Erratum (docs/theory.md): Hong's closed-form T is ~2 kappa alpha_H too long there."""
    p = problem(n=100, d=20, alpha=0.05)
    mu = 0.3
    kappa, a = p.kappa, p.hong_alpha(mu)
    assert kappa * a > 1
    closed = math.ceil(2 * kappa * math.log(1 + 1 / (kappa * a)))
    assert Hong().plan(p, mu).n_steps < closed / 2


# --- Hong et al. ----------------------------------------------------------------------------


def test_hong_alpha_maps_their_normalisation_onto_ours():
    """Hong et al. add sigma_t G / N to the mean gradient with sum sigma_t^-2 = R (= 2 rho).

    Our add/remove mean-gradient noise is z_t G / N with sum z_t^-2 = mu^2, so z_t = sigma_t,
    R = mu^2 and their alpha is ours. Replace-one doubles the sensitivity: G -> 2G.
    """
    n, d, G, alpha = 800, 12, 1.3, 0.02
    M, B = G * G / 4 + alpha, math.log(2)
    rho = zcdp_rho(4.0, 1e-8)  # their experiment's budget: 0.1963-zCDP
    R = 2 * rho
    theirs = d * G**2 / (2 * R * M * n**2 * B)
    add_remove = Problem(n, d, G, G, M, alpha, B)
    replace = Problem(n, d, 2 * G, G, M, alpha, B)
    assert add_remove.hong_alpha(math.sqrt(R)) == pytest.approx(theirs, rel=1e-12)
    assert replace.hong_alpha(math.sqrt(R)) == pytest.approx(4 * theirs, rel=1e-12)
    # and the noise a plan implies on the mean gradient is sigma_t G / N
    plan = Hong().plan(add_remove, math.sqrt(R))
    z = GaussianDPAccountant().calibrate(plan.noise_multipliers, 4.0, 1e-8)
    assert np.sum(z**-2.0) <= gdp_mu(4.0, 1e-8) ** 2  # exact GDP budget >= zCDP's R


def test_hong_gd_shape_and_T_are_theorem_4_4():
    p = problem(n=2000, d=10, alpha=0.05)
    mu = 0.7
    kappa = p.smoothness / 0.05
    gamma = 1 - 1 / kappa
    a = p.hong_alpha(mu)
    plan = Hong().plan(p, mu)
    # T minimises Theorem 4.4's bound with Lemma 4.3's optimal variances (brute force)
    Ts = np.arange(1, MAX_AUTO_ITER + 1)
    bound = gamma**Ts + a * np.array(
        [np.sum(gamma ** ((T - np.arange(1, T + 1)) / 2)) ** 2 for T in Ts[:2000]]
        + [np.inf] * (len(Ts) - 2000)
    )
    assert plan.n_steps == Ts[np.argmin(bound)]
    # sigma_t^2 proportional to gamma^(t/2): consecutive multipliers shrink by gamma^(1/4)
    z = plan.noise_multipliers
    T = plan.n_steps
    assert gamma ** (-T / 4) < 10  # the MAX_SHAPE_RATIO cap does not bind here
    np.testing.assert_allclose(z[1:] / z[:-1], gamma**0.25, rtol=1e-12)
    # Lemma 4.3 closed form for the calibrated values: sigma_t^2 = (1/R) sum_i sqrt(q_i/q_t)
    q = gamma ** (T - np.arange(1, T + 1))
    R = mu * mu
    expected = np.sqrt(np.sum(np.sqrt(q)) / np.sqrt(q) / R)
    zc = z * math.sqrt(np.sum(z**-2.0) / R)  # scale to sum z^-2 = R
    np.testing.assert_allclose(zc, expected, rtol=1e-10)
    np.testing.assert_allclose(plan.step_sizes, 1 / p.smoothness)


def test_hong_shape_is_capped_at_max_shape_ratio():
    p = problem(n=100_000, d=10, alpha=1e-3)
    z = Hong().plan(p, 2.0).noise_multipliers
    assert z.max() / z.min() == pytest.approx(MAX_SHAPE_RATIO)
    assert np.all(np.diff(z) <= 1e-12)  # never increasing


def test_hong_momentum_influence_matches_brute_force_double_sum():
    T, gamma, beta = 40, 0.97, 0.6
    t = np.arange(1, T + 1)
    b = (1 - beta) / (1 - beta**t)
    q = np.array(
        [
            sum(gamma ** (T - s) * b[s - 1] ** 2 * beta ** (2 * (s - i)) for s in range(i, T + 1))
            for i in range(1, T + 1)
        ]
    )
    np.testing.assert_allclose(hong_momentum_log_influence(T, gamma, beta), np.log(q), rtol=1e-12)


def test_hong_momentum_step_and_eta0_fixed_point():
    beta, kappa = 0.5, 200.0
    eta0 = hong_momentum_eta0(beta, kappa)
    gamma = 1 - eta0 / kappa
    bound = 8 / (math.sqrt(1 + 64 * beta * gamma / ((gamma - beta) ** 2 * (1 - beta) ** 3)) + 1)
    assert eta0 == pytest.approx(bound, rel=1e-10)
    p = problem(alpha=0.01, momentum=beta)
    plan = Hong().plan(p, 0.5)
    np.testing.assert_allclose(
        plan.step_sizes, hong_momentum_eta0(beta, p.kappa) / (2 * p.smoothness)
    )


def test_hong_and_output_refuse_without_strong_convexity():
    p = problem(alpha=0.0)
    with pytest.raises(ValueError, match="strongly convex|alpha > 0"):
        Hong().plan(p, 1.0)
    with pytest.raises(ValueError, match="alpha > 0"):
        OutputPerturbation().plan(p, 1.0)


# --- PUR (Fay et al.) ------------------------------------------------------------------------


def test_pur_strongly_convex_shape_and_remainder():
    p = problem(n=20000, d=10, alpha=0.05)
    mu = 2.0
    plan = PUR().plan(p, mu)
    z = plan.noise_multipliers
    T = len(z)
    r = 1 - 0.05 / (2 * p.smoothness)
    # sigma_t on the mean gradient, z_t = sigma_t N / Delta, t = 0, 1, ...
    sigma = np.sqrt(2 * 0.05 * math.log(2) * r ** np.arange(T - 1) / 10)
    np.testing.assert_allclose(z[:-1], sigma * 20000 / p.sensitivity, rtol=1e-12)
    # the budget is exhausted exactly, the last step takes the remainder (noisier or equal)
    assert np.sum(z**-2.0) == pytest.approx(mu * mu, rel=1e-12)
    assert z[-1] >= z[-2] * r**0.5 * (1 - 1e-12)
    np.testing.assert_allclose(plan.step_sizes, 1 / (2 * p.smoothness))


def test_pur_convex_shape_decays_as_one_over_t():
    p = problem(n=20000, d=10, alpha=0.0)
    plan = PUR().plan(p, 1.5)
    z = plan.noise_multipliers[:-1]
    t = np.arange(1, len(z) + 1)
    expected = 4 * p.smoothness * math.sqrt(math.log(2)) / (math.sqrt(10) * t)
    np.testing.assert_allclose(z, expected * 20000 / p.sensitivity, rtol=1e-12)
    assert np.sum(plan.noise_multipliers**-2.0) == pytest.approx(1.5**2, rel=1e-12)


# --- exponential --------------------------------------------------------------------------


def test_exponential_shape():
    p = problem()
    plan = Exponential(decay=0.95, n_iter=30).plan(p, 1.0)
    assert plan.n_steps == 30
    z = plan.noise_multipliers
    np.testing.assert_allclose(z[1:] / z[:-1], 0.95, rtol=1e-12)
    # Du et al.: mu_t = rho^(t/T) mu_0  <=>  z_t = z_0 rho^(-t/T): decay = rho^(-1/T)
    rho_mu = 4.0
    plan = Exponential(decay=rho_mu ** (-1 / 30), n_iter=30).plan(p, 1.0)
    assert plan.noise_multipliers[0] / plan.noise_multipliers[-1] == pytest.approx(
        rho_mu ** (29 / 30)
    )


def test_max_iter_overrides_theory():
    p = problem()
    for s in [Uniform(), Hong(), Exponential(0.99)]:
        plan = s.plan(p, 1.0, max_iter=17)
        assert plan.n_steps == 17
    assert PUR().plan(problem(n=10**7), 1.0, max_iter=17).n_steps <= 17


def test_infinite_budget_runs_the_capped_horizon():
    p = problem()
    assert Uniform().plan(p, math.inf).n_steps == MAX_AUTO_ITER
    assert PUR().plan(p, math.inf).n_steps == MAX_AUTO_ITER


# --- the intercept-only model (schedule='prior') ---------------------------------------------


def test_prior_releases_the_class_prior_with_its_sensitivity():
    import math
    from skdpgd import DPLogisticRegression, DPRidge
    from skdpgd.accounting import compose_gdp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4)) / 3
    y = (rng.uniform(size=3000) < 0.3).astype(int)
    exact = DPLogisticRegression(
        epsilon=np.inf, data_norm=1.0, classes=[0, 1], schedule="prior"
    ).fit(X, y)
    assert np.all(exact.coef_ == 0)
    assert exact.intercept_[0] == pytest.approx(math.log(y.mean() / (1 - y.mean())), rel=1e-12)
    noisy = DPLogisticRegression(
        epsilon=1.0,
        delta=1e-6,
        data_norm=1.0,
        classes=[0, 1],
        schedule="prior",
        row_clip="data_norm",
        random_state=0,
    ).fit(X, y)
    (release,) = noisy.releases_
    assert release.name == "class counts"
    # relabelling one example moves two counts by one (replace-one); adding one moves one
    # (raised by the rounding margin of a weighted sum)
    assert math.sqrt(2.0) <= release.sensitivity["replace"] <= math.sqrt(2.0) * (1 + 1e-6)
    assert 1.0 <= release.sensitivity["add_remove"] <= 1.0 + 1e-6
    assert noisy.mu_ == pytest.approx(compose_gdp(release.multipliers), rel=1e-12)
    assert noisy.epsilon_ <= 1.0
    three = DPLogisticRegression(
        epsilon=np.inf, data_norm=1.0, classes=[0, 1, 2], schedule="prior"
    ).fit(X, y)
    logf = np.log(np.array([np.mean(y == 0), np.mean(y == 1), 0.5 / len(y)]))
    np.testing.assert_allclose(three.intercept_, logf - logf.mean(), rtol=1e-12)
    yr = X[:, 0] + 0.2
    ridge = DPRidge(epsilon=np.inf, data_norm=1.0, y_bound=2.0, schedule="prior").fit(X, yr)
    assert float(ridge.intercept_) == pytest.approx(yr.mean(), rel=1e-12)
    noisy_r = DPRidge(
        epsilon=1.0,
        delta=1e-6,
        data_norm=1.0,
        y_bound=2.0,
        schedule="prior",
        row_clip="data_norm",
        random_state=0,
    ).fit(X, yr)
    assert 4.0 <= noisy_r.releases_[0].sensitivity["replace"] <= 4.0 * (1 + 1e-6)
    with pytest.raises(ValueError, match="fit_intercept"):
        DPRidge(epsilon=1.0, data_norm=1.0, y_bound=2.0, schedule="prior", fit_intercept=False).fit(
            X, yr
        )


# --- the warm start from the class prior (schedule='auto') -----------------------------------


def _imbalanced(n=3000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / (2 * math.sqrt(d))
    y = (X[:, 0] + 0.05 * rng.normal(size=n) > 0.35).astype(int)  # about 6% positives
    return X, y


@pytest.mark.parametrize("epsilon", [0.1, 1.0])  # gradient descent, then DP damped Newton
@pytest.mark.parametrize("neighbouring", ["replace", "add_remove"])
def test_warm_start_spends_its_share_and_composes_exactly(epsilon, neighbouring):
    from skdpgd import DPLogisticRegression
    from skdpgd.accounting import compose_gdp
    from skdpgd.schedules import Auto

    X, y = _imbalanced()
    kw = dict(
        epsilon=epsilon,
        delta=1e-6,
        data_norm=1.0,
        classes=[0, 1],
        random_state=0,
        row_clip="data_norm",
        neighbouring=neighbouring,
    )
    if neighbouring == "add_remove":
        kw["n_samples"] = len(y)  # a public N keeps the noisy count out of the shares
    est = DPLogisticRegression(
        schedule=Auto(prior_share=0.2, prior_switch=False, select=False), **kw
    ).fit(X, y)
    *fit, counts = est.releases_
    assert counts.name == "class counts (start)"
    unit = math.sqrt(2.0) if neighbouring == "replace" else 1.0
    assert unit <= counts.sensitivity[neighbouring] <= unit * (1 + 1e-6)
    inv2 = [np.sum(np.asarray(r.multipliers, float) ** -2.0) for r in est.releases_]
    assert inv2[-1] / sum(inv2) == pytest.approx(0.2, rel=1e-9)
    assert est.mu_ == pytest.approx(
        compose_gdp(np.concatenate([r.multipliers for r in est.releases_])), rel=1e-12
    )
    assert est.mu_ == pytest.approx(gdp_mu(epsilon, 1e-6), rel=1e-6)
    assert est.epsilon_ <= epsilon
    # the fit's own releases come first; share 0 releases no counts at all
    assert fit[0].name == "gradient sums"
    cold = DPLogisticRegression(
        schedule=Auto(prior_share=0.0, prior_switch=False, select=False), **kw
    ).fit(X, y)
    assert all(r.name != "class counts (start)" for r in cold.releases_)
    assert cold.mu_ == pytest.approx(est.mu_, rel=1e-9)


def test_warm_start_keeps_a_noisy_fit_at_the_majority_class(use_policy):
    """Where the weights are mostly noise, the gradient-descent fit started from 0 falls below
    the trivial model on a 6%-minority set; started from the released prior it does not
    (median over 5 seeds, within 0.005)."""
    from skdpgd import DPLogisticRegression
    from skdpgd.schedules import Auto

    use_policy(AUTO_LOW_OUTPUT_MIN_SNR=math.inf)  # gradient descent here

    X, y = _imbalanced()
    majority = max(y.mean(), 1 - y.mean())
    warm, cold = [], []
    for seed in range(5):
        kw = dict(epsilon=0.05, data_norm=1.0, classes=[0, 1], random_state=seed)
        warm.append(
            DPLogisticRegression(
                schedule=Auto(prior_share=0.1, prior_switch=False, select=False), **kw
            )
            .fit(X, y)
            .score(X, y)
        )
        cold.append(
            DPLogisticRegression(
                schedule=Auto(prior_share=0.0, prior_switch=False, select=False), **kw
            )
            .fit(X, y)
            .score(X, y)
        )
    assert np.median(warm) >= majority - 0.005
    assert np.median(cold) < majority - 0.005  # the failure the warm start removes


def test_warm_start_is_reproducible_and_leaves_the_exact_fit_alone():
    from skdpgd import DPLogisticRegression

    from skdpgd.schedules import Auto

    X, y = _imbalanced(n=800)
    kw = dict(epsilon=0.5, data_norm=1.0, classes=[0, 1], random_state=3)

    def warm_start():
        return Auto(prior_share=0.1, prior_switch=False, select=False)

    a = DPLogisticRegression(schedule=warm_start(), **kw).fit(X, y)
    b = DPLogisticRegression(schedule=warm_start(), **kw).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert a.releases_[-1].name == "class counts (start)"
    # the counts' noise comes from a separate stream: with a vanishing share the fit draws the
    # same gradient noise as the fit from 0 (and the default, share 0, releases no counts)
    tiny = DPLogisticRegression(
        schedule=Auto(prior_share=1e-12, prior_switch=False, select=False), **kw
    ).fit(X, y)
    cold = DPLogisticRegression(schedule=Auto(prior_switch=False, select=False), **kw).fit(X, y)
    assert all(r.name != "class counts (start)" for r in cold.releases_)
    np.testing.assert_allclose(tiny.coef_, cold.coef_, rtol=1e-3, atol=1e-3)
    exact = DPLogisticRegression(epsilon=np.inf, data_norm=1.0, classes=[0, 1]).fit(X, y)
    assert all(r.name != "class counts (start)" for r in exact.releases_)


@pytest.mark.parametrize("switch", [(1e9, 0.0), (1e9, 1.01), (0.0, 0.0)])
def test_prior_switch_spends_the_same_budget_on_either_branch(switch):
    """The switch to the intercept-only model decides on the released counts only (and the
    public signal-to-noise ratio) and both branches compose to the calibrated mu."""
    from skdpgd import DPLogisticRegression, PrivacyBudget
    from skdpgd.accounting import compose_gdp
    from skdpgd.schedules import Auto

    X, y = _imbalanced(n=1500)
    budget = PrivacyBudget(epsilon=2.0, delta=1e-6, neighbouring="replace")
    est = DPLogisticRegression(
        epsilon=0.3,
        delta=1e-6,
        data_norm=1.0,
        classes=[0, 1],
        random_state=0,
        row_clip="data_norm",
        budget=budget,
        schedule=Auto(prior_share=0.1, prior_switch=switch),
    ).fit(X, y)
    names = [r.name for r in est.releases_]
    switched = switch[0] > 0 and switch[1] <= 1.0  # snr below 1e9, any majority share
    if switched:
        assert names == ["class counts (start)", "class counts"]
        assert est.mechanism_ == "prior" and est.schedule_ == "prior"
        assert np.all(est.coef_ == 0)
        # two noisy counts combined: the log-odds of the imbalanced classes
        assert est.intercept_[0] < -1.0
        assert est.n_iter_ == 0
    else:
        assert names[-1] == "class counts (start)" and "class counts" not in names
        assert est.mechanism_ != "prior"
    assert est.mu_ == pytest.approx(
        compose_gdp(np.concatenate([r.multipliers for r in est.releases_])), rel=1e-12
    )
    assert est.mu_ == pytest.approx(gdp_mu(0.3, 1e-6), rel=1e-6)
    assert budget.spent_epsilon() == pytest.approx(0.3, rel=1e-9)
    assert est.epsilon_ <= 0.3


#: the prior switch's tiers as shipped before the selection replaced them (still an option)
TIERS = ((10.0, 0.5, 0.1), (100.0, 0.7, 0.05))


def test_a_switch_takes_the_prior_only_below_its_signal_to_noise_ratio(use_policy):
    """Auto(prior_switch=tiers): below the first tier's ratio a binary fit takes the
    intercept-only model from two releases of the counts; above the last tier the fit is
    exactly the one without the rule (no counts released, the same noise drawn)."""
    from skdpgd import DPLogisticRegression
    from skdpgd.policy import signal_to_noise
    from skdpgd.schedules import Auto

    use_policy(AUTO_PRIOR_MAX_SNR_BINARY=0.0)  # the switch alone

    X, y = _imbalanced(n=1000)
    kw = dict(delta=1e-6, data_norm=1.0, classes=[0, 1], random_state=0, row_clip="data_norm")
    low = DPLogisticRegression(epsilon=0.01, schedule=Auto(prior_switch=TIERS), **kw).fit(X, y)
    assert signal_to_noise(1000, X.shape[1] + 1, gdp_mu(0.01, 1e-6)) < TIERS[0][0]
    assert low.mechanism_ == "prior" and np.all(low.coef_ == 0)
    assert [r.name for r in low.releases_] == ["class counts (start)", "class counts"]
    assert low.predict(X).tolist() == [0] * len(y)  # the majority class
    high = DPLogisticRegression(epsilon=30.0, schedule=Auto(prior_switch=TIERS), **kw).fit(X, y)
    off = DPLogisticRegression(
        epsilon=30.0, schedule=Auto(prior_switch=False, select=False), **kw
    ).fit(X, y)
    assert all(r.name != "class counts (start)" for r in high.releases_)
    np.testing.assert_array_equal(high.coef_, off.coef_)


def test_the_default_selects_below_its_ratio_and_fits_alone_above_it():
    """schedule='auto': below AUTO_SELECT's ratio the fit releases the counts and the
    selection; above it the fit is exactly the one without the rule."""
    from skdpgd import DPLogisticRegression
    from skdpgd.policy import AUTO_SELECT, signal_to_noise
    from skdpgd.schedules import Auto

    X, y = _imbalanced(n=1000)
    kw = dict(delta=1e-6, data_norm=1.0, classes=[0, 1], random_state=0, row_clip="data_norm")
    low = DPLogisticRegression(epsilon=0.3, **kw).fit(X, y)
    assert signal_to_noise(1000, X.shape[1] + 1, gdp_mu(0.3, 1e-6)) < AUTO_SELECT[0]
    names = [r.name for r in low.releases_]
    assert names[-2] == "class counts (start)" and names[-1].startswith("selection")
    eps = 1e4
    assert signal_to_noise(1000, X.shape[1] + 1, gdp_mu(eps, 1e-6)) > AUTO_SELECT[0]
    high = DPLogisticRegression(epsilon=eps, **kw).fit(X, y)
    off = DPLogisticRegression(
        epsilon=eps, schedule=Auto(prior_switch=False, select=False), **kw
    ).fit(X, y)
    assert all("class counts" not in r.name for r in high.releases_)
    np.testing.assert_array_equal(high.coef_, off.coef_)


# --- the rules live in skdpgd.policy, and only there -----------------------------------------


def test_fits_read_the_policy_and_no_module_serves_old_names(use_policy):
    """A fit reads skdpgd.policy (patching it changes what 'auto' picks), and no module keeps a
    compatibility alias for a name that moved there (no module ``__getattr__``)."""
    import importlib
    import pkgutil

    import skdpgd
    from skdpgd import DPLogisticRegression

    for info in pkgutil.iter_modules(skdpgd.__path__, "skdpgd."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional backend (torch, dask) not installed
            continue
        assert not hasattr(module, "_POLICY_NAMES"), info.name
        assert "__getattr__" not in vars(module), info.name
    schedules = importlib.import_module("skdpgd.schedules")
    with pytest.raises(AttributeError):
        schedules.AUTO_SECOND_ORDER_MIN_SNR  # noqa: B018 (it lives in skdpgd.policy only)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    kw = dict(epsilon=5.0, data_norm=2.0, classes=[0, 1], random_state=0)
    assert DPLogisticRegression(**kw).fit(X, y).mechanism_ == "newton"
    use_policy(AUTO_SECOND_ORDER_MIN_SNR=math.inf, AUTO_LOW_OUTPUT_MIN_SNR=math.inf)
    assert DPLogisticRegression(**kw).fit(X, y).mechanism_ == "gradient"


def test_hong_shape_is_lemma_4_3_for_a_given_gamma():
    """The MLP's 'hong': z_t proportional to gamma^(t/4) (sigma_t^2 ~ gamma^(t/2)), T steps,
    not capped (unlike the linear models' Hong)."""
    from skdpgd.schedules import hong_shape

    gamma, T = 0.5, 40
    plan = hong_shape(gamma, T).plan(problem(), 1.0)
    z = plan.noise_multipliers
    assert plan.n_steps == T
    np.testing.assert_allclose(
        z / z[-1], gamma ** (np.arange(T) / 4.0) / gamma ** ((T - 1) / 4), rtol=1e-12
    )
    assert z[0] / z[-1] > MAX_SHAPE_RATIO  # the spread is not capped


def test_policy_imports_nothing_from_the_package():
    """skdpgd.policy is a leaf: every module may read it without an import cycle."""
    import ast
    import pathlib

    import skdpgd

    tree = ast.parse((pathlib.Path(skdpgd.__file__).parent / "policy.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and not (node.module or "").startswith("skdpgd"), node.module
        if isinstance(node, ast.Import):
            assert not any(a.name.startswith("skdpgd") for a in node.names)


# --- the prior switch's tiers ---------------------------------------------------------------


def test_prior_switch_tiers_parse_one_pair_triples_and_off():
    from skdpgd.policy import AUTO_PRIOR_SWITCH_SHARE, prior_switch_tiers

    assert prior_switch_tiers(False) == () and prior_switch_tiers(None) == ()
    assert prior_switch_tiers((10, 0.5)) == ((10.0, 0.5, AUTO_PRIOR_SWITCH_SHARE),)
    assert prior_switch_tiers((np.int64(10), np.float32(0.5), 0.2)) == ((10.0, 0.5, 0.2),)
    assert prior_switch_tiers([[10, 0.5], (100, 0.7, 0.05)]) == (
        (10.0, 0.5, AUTO_PRIOR_SWITCH_SHARE),
        (100.0, 0.7, 0.05),
    )
    assert prior_switch_tiers(((10, 0.5, 0.1), (100, 0.7, 0.05))) == (
        (10.0, 0.5, 0.1),
        (100.0, 0.7, 0.05),
    )
    for bad in [
        ((100, 0.5), (10, 0.7)),
        ((10, 0.5, 1.0),),
        ((10,),),
        ((-1, 0.5),),
        ((10, float("nan")),),
    ]:
        with pytest.raises(ValueError, match="prior-switch tier"):
            prior_switch_tiers(bad)


def _snr_between(n, d, lo, hi, delta=1e-6):
    """The epsilon whose default fit has N mu / sqrt(D) at the middle of (lo, hi) (geometric)."""
    from scipy.optimize import brentq

    from skdpgd.accounting import gdp_mu
    from skdpgd.policy import signal_to_noise

    target = math.sqrt(lo * hi)
    return brentq(lambda e: signal_to_noise(n, d + 1, gdp_mu(e, delta)) - target, 1e-4, 50.0)


def test_second_tier_switches_an_imbalanced_set_and_spends_its_own_share():
    """Between the tiers' ratios (10, 100) an imbalanced binary set (6% positives, so one
    class far above p = 0.7) takes the intercept-only model; the first release of the counts
    takes the second tier's share (5%) of mu^2, and both releases compose to the budget."""
    from skdpgd import DPLogisticRegression
    from skdpgd.accounting import compose_gdp, gdp_mu
    from skdpgd.policy import signal_to_noise
    from skdpgd.schedules import Auto

    (s1, _, _), (s2, p2, share2) = TIERS
    X, y = _imbalanced(n=1500)
    eps = _snr_between(1500, X.shape[1], s1, s2)
    assert s1 < signal_to_noise(1500, X.shape[1] + 1, gdp_mu(eps, 1e-6)) < s2
    kw = dict(
        epsilon=eps, delta=1e-6, data_norm=1.0, classes=[0, 1], random_state=0, row_clip="data_norm"
    )
    est = DPLogisticRegression(schedule=Auto(prior_switch=TIERS), **kw).fit(X, y)
    assert est.mechanism_ == "prior" and np.all(est.coef_ == 0)
    first, second = est.releases_
    z = np.array([first.multipliers[0], second.multipliers[0]])
    assert first.multipliers[0] ** -2 / np.sum(z**-2) == pytest.approx(share2, rel=1e-9)
    assert est.mu_ == pytest.approx(gdp_mu(eps, 1e-6), rel=1e-6)
    assert est.mu_ == pytest.approx(compose_gdp(z), rel=1e-12)
    # the first tier alone keeps the fit there, with no counts released
    first_only = DPLogisticRegression(schedule=Auto(prior_switch=TIERS[:1]), **kw).fit(X, y)
    assert first_only.mechanism_ != "prior"
    assert all("class counts" not in r.name for r in first_only.releases_)


def test_second_tier_keeps_the_fit_of_a_balanced_set_started_from_its_prior():
    """Between the tiers' ratios a balanced set is not dominated at p = 0.7: the fit runs,
    started from the counts' prior, the counts took the tier's share, the budget is exact."""
    from skdpgd import DPLogisticRegression
    from skdpgd.accounting import compose_gdp, gdp_mu
    from skdpgd.schedules import Auto

    (s1, _, _), (s2, _, share2) = TIERS
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1500, 5)) / (2 * math.sqrt(5))
    y = (X[:, 0] > 0).astype(int)
    eps = _snr_between(1500, 5, s1, s2)
    est = DPLogisticRegression(
        epsilon=eps,
        delta=1e-6,
        data_norm=1.0,
        classes=[0, 1],
        random_state=0,
        row_clip="data_norm",
        schedule=Auto(prior_switch=TIERS),
    ).fit(X, y)
    assert est.mechanism_ != "prior"
    names = [r.name for r in est.releases_]
    assert names[-1] == "class counts (start)" and "class counts" not in names
    z_counts = est.releases_[-1].multipliers
    z_all = np.concatenate([r.multipliers for r in est.releases_])
    assert np.sum(z_counts**-2) / np.sum(z_all**-2) == pytest.approx(share2, rel=1e-9)
    assert est.mu_ == pytest.approx(compose_gdp(z_all), rel=1e-12)
    assert est.mu_ == pytest.approx(gdp_mu(est.epsilon, 1e-6), rel=1e-6)
    assert np.any(est.coef_ != 0)


def test_below_a_tiny_ratio_a_binary_fit_is_the_majority_class_with_the_whole_budget():
    """AUTO_PRIOR_MAX_SNR_BINARY: where the selection could see nothing, a binary classifier
    releases only its class counts (the whole budget); a multiclass one keeps its fit."""
    from skdpgd import DPLogisticRegression
    from skdpgd.policy import AUTO_PRIOR_MAX_SNR_BINARY, signal_to_noise

    X, y = _imbalanced(n=1000)
    kw = dict(delta=1e-6, data_norm=1.0, random_state=0, row_clip="data_norm")
    assert signal_to_noise(1000, X.shape[1] + 1, gdp_mu(0.01, 1e-6)) < AUTO_PRIOR_MAX_SNR_BINARY
    binary = DPLogisticRegression(epsilon=0.01, classes=[0, 1], **kw).fit(X, y)
    assert binary.mechanism_ == "prior" and [r.name for r in binary.releases_] == ["class counts"]
    assert binary.mu_ == pytest.approx(gdp_mu(0.01, 1e-6), rel=1e-9)
    three = np.where(X[:, 1] > 0.1, 2, y)
    multi = DPLogisticRegression(epsilon=0.01, classes=[0, 1, 2], **kw).fit(X, three)
    assert [r.name for r in multi.releases_] != ["class counts"]  # the fit ran
    assert any(r.name == "gradient sums" for r in multi.releases_)


def test_policy_is_a_frozen_value_changed_only_inside_a_block():
    """The rules read the active Policy: ``using`` changes it for a block and restores it after
    (also on an error); assigning a module constant is refused; unknown names are errors."""
    import dataclasses

    from skdpgd import DPLogisticRegression, policy

    assert policy.current() is policy.DEFAULT
    assert all(getattr(policy.DEFAULT, n) == getattr(policy, n) for n in policy.NAMES)
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.DEFAULT.AUTO_SELECT_BIAS = 0.0
    with pytest.raises(AttributeError, match="using"):
        policy.AUTO_SELECT_BIAS = 0.0
    assert policy.AUTO_SELECT_BIAS == policy.DEFAULT.AUTO_SELECT_BIAS
    with pytest.raises(TypeError, match="NOT_A_CONSTANT"):
        with policy.using(NOT_A_CONSTANT=1):
            pass
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    kw = dict(epsilon=5.0, data_norm=2.0, classes=[0, 1], random_state=0)
    with pytest.raises(RuntimeError):
        with policy.using(AUTO_SECOND_ORDER_MIN_SNR=math.inf) as active:
            assert policy.current() is active and active.AUTO_SECOND_ORDER_MIN_SNR == math.inf
            with policy.using(AUTO_LOW_OUTPUT_MIN_SNR=math.inf):  # nested: both changes
                assert DPLogisticRegression(**kw).fit(X, y).mechanism_ == "gradient"
            assert DPLogisticRegression(**kw).fit(X, y).mechanism_ == "output"
            raise RuntimeError
    assert policy.current() is policy.DEFAULT
    assert DPLogisticRegression(**kw).fit(X, y).mechanism_ == "newton"


def test_policy_fields_are_the_module_constants_written_once():
    """``Policy`` is written out field by field and cannot drift from the module's constants:
    its fields are exactly the upper-case assignments of ``skdpgd/policy.py`` (read from the
    source), in their order (also :data:`NAMES`'s); each default *is* the constant and is
    written in the class as the constant's bare name (the value appears once, at the constant);
    each annotation admits the value."""
    import ast
    import dataclasses
    import inspect
    import typing

    from skdpgd import policy

    tree = ast.parse(inspect.getsource(policy))
    assigned = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        targets = [node.target] if isinstance(node, ast.AnnAssign) else targets
        assigned += [t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper()]
    constants = [n for n in assigned if n not in ("NAMES", "DEFAULT") and not n.startswith("_")]
    fields = dataclasses.fields(policy.Policy)
    assert [f.name for f in fields] == constants == list(policy.NAMES)
    assert len(constants) == len(set(constants))  # no constant assigned twice

    hints = typing.get_type_hints(policy.Policy)
    for f in fields:
        value = getattr(policy, f.name)
        assert f.default is value, f.name
        assert getattr(policy.DEFAULT, f.name) is value, f.name
        assert isinstance(value, hints[f.name]), (f.name, hints[f.name], value)

    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Policy"]
    body = [n for n in cls.body if isinstance(n, ast.AnnAssign)]
    assert [n.target.id for n in body] == constants
    for node in body:
        assert isinstance(node.value, ast.Name) and node.value.id == node.target.id, (
            f"Policy.{node.target.id}'s default must name the module constant, not repeat it"
        )


def test_a_policy_block_in_one_thread_leaves_the_others_on_theirs():
    """``using`` is thread-local: while one thread runs a study, a fit in another thread (and
    in a thread started inside the block) reads the default policy."""
    import threading

    from skdpgd import DPLogisticRegression, policy

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    kw = dict(epsilon=5.0, data_norm=2.0, classes=[0, 1], random_state=0)
    inside, seen = threading.Event(), {}
    release = threading.Event()

    def study():
        with policy.using(AUTO_SECOND_ORDER_MIN_SNR=math.inf):
            seen["study"] = DPLogisticRegression(**kw).fit(X, y).mechanism_
            inside.set()
            release.wait(30)

    t = threading.Thread(target=study)
    t.start()
    inside.wait(30)
    try:
        seen["other"] = DPLogisticRegression(**kw).fit(X, y).mechanism_
        assert policy.current() is policy.DEFAULT
    finally:
        release.set()
        t.join()
    assert seen == {"study": "output", "other": "newton"}

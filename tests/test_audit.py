"""Empirical privacy audit: attack the released models and lower-bound epsilon.

For each mechanism we fit the real estimator many times on two neighbouring datasets built so
that one example's effect is as large as the sensitivity allows, apply a threshold test to the
released coefficient, and turn its false-positive and false-negative rates into a lower bound
on epsilon (Clopper-Pearson upper confidence limits, Bonferroni over the thresholds tried):

    epsilon >= log((1 - delta - FNR) / FPR)   and   log((1 - delta - FPR) / FNR).

The lower bound must not exceed the claimed epsilon. The same audit run on a deliberately
broken mechanism (noise scaled down after calibration) must exceed it, so the audit can fail.

Worst case: 1-D rows x = 1, targets +-Y with Y far above anything the model reaches, so every
clipped per-example gradient of the squared loss is exactly +-C, whatever the iterate. The
canary example flips its target (replace-one) or its weight goes from 1 to 0 (add/remove with
the normaliser fixed): every step's gradient sum then moves by exactly the sensitivity, and
the released coefficient is a Gaussian (full batch) whose mean moves by the whole budget.
Thresholds are placed from a separate calibration run, not from the audited samples.
"""

import math

import numpy as np
import pytest
from scipy import stats

from skdpgd import DPRidge, DPSGDRegressor
from skdpgd.accounting import GaussianDPAccountant, RDPAccountant

N = 8
Y = 1e6
CONFIDENCE = 0.95


def _clopper_pearson_upper(k, n, level):
    return 1.0 if k >= n else float(stats.beta.ppf(level, k + 1, n - k))


def epsilon_lower_bound(out0, out1, thresholds, delta):
    """Largest epsilon the threshold tests prove (one-sided CP limits, Bonferroni)."""
    level = 1 - (1 - CONFIDENCE) / (2 * len(thresholds))
    best = 0.0
    n0, n1 = len(out0), len(out1)
    for t in thresholds:
        # guess "D1" when the statistic is above t
        fpr = _clopper_pearson_upper(int(np.sum(out0 > t)), n0, level)
        fnr = _clopper_pearson_upper(int(np.sum(out1 <= t)), n1, level)
        for a, b in ((fpr, fnr), (fnr, fpr)):
            if 1 - delta - b > 0 and a > 0:
                best = max(best, math.log((1 - delta - b) / a))
    return best


def _data(flip):
    X = np.ones((N, 1))
    y = np.full(N, Y)
    if flip:
        y[0] = -Y
    return X, y


def _fits(make, n_runs, seed0, **data_kw):
    out = np.empty(n_runs)
    X, y = _data(data_kw.get("flip", False))
    w = data_kw.get("sample_weight")
    for k in range(n_runs):
        out[k] = make(seed0 + k).fit(X, y, sample_weight=w).coef_[0]
    return out


def audit(make, pair, n_runs, delta):
    """(epsilon lower bound, thresholds) for estimator factory ``make`` on ``pair``."""
    kw0, kw1 = pair
    # calibration runs place the thresholds between the two outputs' quantiles
    c0 = _fits(make, 300, 10**6, **kw0)
    c1 = _fits(make, 300, 2 * 10**6, **kw1)
    lo, hi = np.quantile(np.concatenate([c0, c1]), [0.05, 0.95])
    thresholds = np.linspace(lo, hi, 15)
    if np.mean(c1) < np.mean(c0):  # orient: D1's statistic is the larger one
        thresholds = -thresholds

        def sign(a):
            return -a
    else:
        def sign(a):
            return a
    out0 = sign(_fits(make, n_runs, 0, **kw0))
    out1 = sign(_fits(make, n_runs, 5 * 10**6, **kw1))
    return epsilon_lower_bound(out0, out1, thresholds, delta)


REPLACE = ({"flip": False}, {"flip": True})
REMOVE = ({"flip": True}, {"flip": True, "sample_weight": np.r_[0.0, np.ones(N - 1)]})

# A large claimed epsilon makes the audit informative (the attack's power grows with mu).
EPSILON, DELTA = 4.0, 1e-5


def ridge(schedule, **kw):
    def make(seed):
        return DPRidge(epsilon=EPSILON, delta=DELTA, data_norm=1.0, y_bound=Y, clip_norm=1.0,
                       fit_intercept=False, schedule=schedule, random_state=seed, **kw)
    return make


MECHANISMS = {
    # (mechanism, neighbouring pair, smallest lower bound the attack must reach: the final
    # coefficient weights the steps equally, which is a weaker test for decaying noise)
    "gd-uniform": (ridge("uniform", max_iter=10), REPLACE),
    "gd-hong": (ridge("hong", max_iter=10), REPLACE),
    "gd-pur": (ridge("pur", max_iter=10), REPLACE),
    "gd-exponential": (ridge("exponential", max_iter=10), REPLACE),
    "gd-add-remove": (ridge("uniform", max_iter=5, neighbouring="add_remove"), REMOVE),
    "output-perturbation": (ridge("output", alpha=1.0), REPLACE),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_audit_lower_bound_stays_below_claimed_epsilon(name):
    make, pair = MECHANISMS[name]
    eps_lb = audit(make, pair, 1500, DELTA)
    print(f"\naudit {name}: epsilon lower bound {eps_lb:.3f} <= claimed {EPSILON}")
    assert eps_lb <= EPSILON
    # the audit is not vacuous: the worst-case pair is distinguishable
    assert eps_lb > 0.1


@pytest.mark.slow
def test_audit_poisson_sgd(monkeypatch):
    # every fit calibrates the same shape; memoise the (deterministic) RDP calibration so the
    # thousands of fits take seconds (the multipliers are exactly the accountant's)
    calibrate, memo = RDPAccountant.calibrate, {}

    def cached(self, shape, epsilon, delta, sampling_rate=1.0, prior=()):
        key = (np.asarray(shape).tobytes(), epsilon, delta, sampling_rate)
        if key not in memo:
            memo[key] = calibrate(self, shape, epsilon, delta, sampling_rate, prior)
        return memo[key].copy()

    monkeypatch.setattr(RDPAccountant, "calibrate", cached)

    def make(seed):
        return DPSGDRegressor(epsilon=EPSILON, delta=DELTA, data_norm=1.0, y_bound=Y,
                              clip_norm=1.0, fit_intercept=False, batch_size=N // 2, epochs=2,
                              average=False, random_state=seed)
    eps_lb = audit(make, REMOVE, 1500, DELTA)
    print(f"\naudit Poisson DP-SGD: epsilon lower bound {eps_lb:.3f} <= claimed {EPSILON}")
    assert 0.1 < eps_lb <= EPSILON


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gd-uniform", "output-perturbation"])
def test_audit_catches_a_mechanism_with_too_little_noise(name, monkeypatch):
    """Scale the calibrated multipliers by 0.2 (the fit still claims epsilon = 4)."""
    calibrate = GaussianDPAccountant.calibrate
    monkeypatch.setattr(GaussianDPAccountant, "calibrate",
                        lambda self, *a, **k: 0.2 * calibrate(self, *a, **k))
    make, pair = MECHANISMS[name]
    eps_lb = audit(make, pair, 1500, DELTA)
    print(f"\naudit broken {name}: epsilon lower bound {eps_lb:.3f} > claimed {EPSILON}")
    assert eps_lb > EPSILON


def test_lower_bound_arithmetic_on_known_rates():
    """Perfectly separated outputs give log((1 - delta - FNR_ub) / FPR_ub) with CP limits."""
    out0 = np.zeros(1000)
    out1 = np.ones(1000)
    lb = epsilon_lower_bound(out0, out1, [0.5], 0.0)
    ub = _clopper_pearson_upper(0, 1000, 1 - 0.05 / 2)
    assert lb == pytest.approx(math.log((1 - ub) / ub))
    # identical outputs prove nothing
    assert epsilon_lower_bound(out0, out0, [0.5], 0.0) == 0.0

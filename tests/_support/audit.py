"""Statistics of the empirical privacy audit (used by tests/package/test_audit.py).

Two analyses of the same samples of a scalar statistic of the released model, one sample set
from each of two neighbouring datasets D0 and D1:

* :func:`epsilon_lower_bound` (assumption-free): threshold tests "say D1 when the statistic
  is above t". Any (epsilon, delta)-DP mechanism has, for every test,
  ``FPR + e^eps FNR >= 1 - delta`` and ``FNR + e^eps FPR >= 1 - delta``, so with upper
  confidence limits on the two error rates
  ``eps >= max(log((1 - delta - FNR_ub) / FPR_ub), log((1 - delta - FPR_ub) / FNR_ub))``.
  The limits are one-sided Clopper-Pearson limits; with several thresholds the level is
  Bonferroni-corrected over all the limits computed, so the bound holds with probability at
  least ``confidence`` jointly over the thresholds.
* :func:`gdp_mu_interval` (parametric): when the statistic is Gaussian with the same
  variance under D0 and D1 (true for full-batch GD and output perturbation on the audit's
  worst-case pairs: the released coefficient is an affine function of the Gaussian noise), the
  mechanism restricted to this statistic is mu-GDP with ``mu = |m1 - m0| / sigma``. The
  standardised mean difference is a scaled noncentral t variable, which gives exact confidence
  limits on mu. It is far sharper than the threshold audit (which cannot see tails
  below about 1/n_runs) but only valid under the Gaussian assumption.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats


def clopper_pearson_upper(k, n, level):
    """One-sided upper confidence limit (at ``level``) of a binomial rate from k of n."""
    if k >= n:
        return 1.0
    return float(stats.beta.ppf(level, k + 1, n - k))


def epsilon_lower_bound(out0, out1, thresholds, delta, confidence=0.95):
    """Largest epsilon the threshold tests prove at ``confidence`` (0 if none proves any).

    ``out0``/``out1`` are samples of the statistic under D0/D1, oriented so that D1 tends to
    give larger values. Thresholds must not have been chosen by looking at these samples.
    """
    out0 = np.asarray(out0, dtype=float)
    out1 = np.asarray(out1, dtype=float)
    thresholds = np.atleast_1d(np.asarray(thresholds, dtype=float))
    # two limits (FPR and FNR) per threshold
    level = 1.0 - (1.0 - confidence) / (2 * thresholds.size)
    n0, n1 = out0.size, out1.size
    best = 0.0
    for t in thresholds:
        fpr = clopper_pearson_upper(int(np.sum(out0 > t)), n0, level)
        fnr = clopper_pearson_upper(int(np.sum(out1 <= t)), n1, level)
        for a, b in ((fpr, fnr), (fnr, fpr)):
            if a > 0 and 1.0 - delta - b > 0:
                best = max(best, math.log((1.0 - delta - b) / a))
    return best


def place_thresholds(cal0, cal1, n_thresholds=15, quantiles=(0.02, 0.98)):
    """(sign, thresholds) from calibration samples only (never the audited ones).

    ``sign`` orients the statistic so that D1 is the larger side; the thresholds span the
    pooled calibration quantiles of the oriented statistic.
    """
    sign = 1.0 if np.mean(cal1) >= np.mean(cal0) else -1.0
    pooled = sign * np.concatenate([np.asarray(cal0, float), np.asarray(cal1, float)])
    lo, hi = np.quantile(pooled, quantiles)
    return sign, np.linspace(lo, hi, n_thresholds)


def standardised_shift(out0, out1):
    """(d, df, scale): d = (mean1 - mean0) / pooled sd; d * scale ~ noncentral t(df, mu * scale)."""
    out0 = np.asarray(out0, dtype=float)
    out1 = np.asarray(out1, dtype=float)
    n0, n1 = out0.size, out1.size
    df = n0 + n1 - 2
    sd = math.sqrt(((n0 - 1) * out0.var(ddof=1) + (n1 - 1) * out1.var(ddof=1)) / df)
    d = (out1.mean() - out0.mean()) / sd
    return d, df, math.sqrt(n0 * n1 / (n0 + n1))


def gdp_mu_interval(out0, out1, confidence=0.999):
    """Exact two-sided confidence interval on mu = (m1 - m0) / sigma (equal-variance Gaussians).

    Returns (mu_hat, lower, upper); each one-sided limit has level ``1 - (1 - confidence)/2``.
    """
    d, df, scale = standardised_shift(out0, out1)
    t_obs = d * scale
    tail = (1.0 - confidence) / 2.0
    # The pivot T = d * scale has spread about sqrt(1 + nc^2 / (2 df)) around nc, so +-10 such
    # units bracket both limits (much further out scipy's noncentral t returns NaN).
    w = 10.0 * math.sqrt(1.0 + t_obs * t_obs / (2.0 * df))
    # P(T >= t_obs; nc) increases with nc: the lower limit is where it equals the tail.
    a = max(0.0, t_obs - w)
    if a > 0.0 and stats.nct.sf(t_obs, df, a) >= tail:
        a = 0.0
    if stats.nct.sf(t_obs, df, a) >= tail:
        lower = a
    else:
        lower = optimize.brentq(
            lambda nc: stats.nct.sf(t_obs, df, nc) - tail, a, t_obs + w, xtol=1e-10
        )
    # P(T <= t_obs; nc) decreases with nc: the upper limit is where it equals the tail.
    upper = optimize.brentq(
        lambda nc: stats.nct.cdf(t_obs, df, nc) - tail, t_obs - w, t_obs + w, xtol=1e-10
    )
    return d, lower / scale, upper / scale


def gd_effective_mu(step_sizes, noise_multipliers, alpha):
    """GDP parameter of the *final iterate* of plain GD on a worst-case pair (a scalar model).

    On the audit's pairs every step's gradient sum moves by exactly the sensitivity and the
    update ``theta <- (1 - eta_t alpha) theta - eta_t (S_t + N(0, (z_t Delta)^2)) / n`` is
    affine, so the final coefficient is ``sum_t b_t (S_t + noise_t)`` with
    ``b_t = eta_t prod_{s > t} (1 - eta_s alpha)`` (up to the common factor -1/n). Its shift over
    its standard deviation is ``sum_t b_t / sqrt(sum_t b_t^2 z_t^2)``; by Cauchy-Schwarz it is
    at most ``sqrt(sum_t z_t^-2)``, the mu of the whole run, with equality when
    ``b_t`` is proportional to ``z_t^-2``.
    """
    eta = np.asarray(step_sizes, dtype=float)
    z = np.asarray(noise_multipliers, dtype=float)
    decay = 1.0 - eta * alpha
    # b_t = eta_t * prod_{s>t} decay_s
    tail = np.ones_like(eta)
    for t in range(eta.size - 2, -1, -1):
        tail[t] = tail[t + 1] * decay[t + 1]
    b = eta * tail
    return float(np.sum(np.abs(b)) / math.sqrt(np.sum((b * z) ** 2)))

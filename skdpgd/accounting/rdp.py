"""Renyi-DP accounting of Poisson-subsampled Gaussian steps (one multiplier per step).

Privacy model
-------------
Neighbouring datasets differ by adding or removing one example. Each step includes every
example independently with probability ``q`` (Poisson sampling) and releases the clipped sum
of the sampled contributions plus ``N(0, (z_t C)^2 I)``: the *sampled Gaussian mechanism*
with noise multiplier ``z_t``. Steps with ``q = 1`` are plain Gaussian releases.

RDP of one step (Mironov, Talwar and Zhang, 2019, "Renyi Differential Privacy of the
Sampled Gaussian Mechanism", arXiv:1908.10530): with ``mu0 = N(0, z^2)`` and the mixture
``mu = (1 - q) N(0, z^2) + q N(1, z^2)``, the order-alpha RDP is ``log(A_alpha) / (alpha - 1)``,

    A_alpha = E_{x ~ mu0} [ (mu(x) / mu0(x))^alpha ]
            = E_{x ~ mu0} [ (1 - q + q exp((2x - 1) / (2 z^2)))^alpha ],

the divergence of the "remove" direction. Add/remove neighbours also need the other
direction, ``D_alpha(mu0 || mu)``; Mironov et al. argue it is the smaller one, and
dp-accounting and Opacus use ``A_alpha`` alone as well. This module relies on that (it does
not re-prove it); ``tests/accounting/test_rdp.py`` checks it by numerical integration on a grid of
(q, z, alpha). RDP composes by addition, so a schedule
with a different multiplier per step costs the sum of the per-step curves; equal
multipliers are grouped, and the per-step values form one array over orders x distinct
multipliers, filled by vectorised numpy code (no compiled kernel: a first fit compiles
nothing here).

Every value is an upper bound of the exact one, including the floating-point rounding
(an allowance of ~1e-12 relative, see ``_ROUNDING_RTOL``, plus, for fractional orders, an
absolute ~1e-13 on log A, visible only when the RDP itself is tiny; for integer orders a
relative allowance that grows with the order, ~1e-8 at alpha ~ 1e6, where log C(alpha, k)
is a difference of log-gammas of ~1e7):

* integer alpha: the binomial expansion
  ``A - 1 = sum_k C(alpha, k) q^k (1-q)^(alpha-k) (exp(k (k-1) / (2 z^2)) - 1)`` (the binomial
  weights sum to 1, so A - 1 keeps its relative precision when it is tiny; dp-accounting sums
  A itself). The log-terms ``f(k)`` have second differences ``1/z^2 - h(k)`` with ``h``
  convex, so ``f`` is concave, convex, concave: at most two peaks. The peaks are located by
  bisection (and so are the ends of the ranges summed, each side of a peak being
  monotone) and only the terms within ``_LOG_CUTOFF`` nats of the largest term of A - 1 are
  summed; by that shape every other term is below the last one summed on its side, so the
  skipped mass is bounded by (number skipped) x (that term) and *added*, not dropped. The
  work per (order, multiplier) therefore does not grow with alpha.
* fractional alpha: the two series of Mironov et al. (their Section 3.3), split at
  ``z0 = z^2 log(1/q - 1) + 1/2``. Their terms are ``C(alpha, k)`` times a moment of a
  quantity in [0, 1], and the binomial coefficients of a non-integer alpha are positive up
  to ``k = ceil(alpha)`` and alternate after it; the tail magnitudes form a moment sequence
  (Beta-function moments times the moments above), so each tail is minus an alternating
  series of a completely monotone sequence. It is summed with the acceleration of Cohen,
  Rodriguez Villegas and Zagier (2000), whose error is at most ``1/T_n(3) ~ 5.8^-n`` of
  the sum, and a *lower* bound of it is subtracted. dp-accounting 0.6 instead sums the
  absolute values of these terms: also an upper bound, but loose (up to 100x at small
  orders) and it returns inf when its stopping rule is not met within 1000 terms.

Conversion to (epsilon, delta): the improved bound of Balle et al. (2020, "Hypothesis
testing interpretations and Renyi differential privacy") and Canonne, Kamath and Steinke
(2020), the same as dp-accounting's::

    epsilon = rdp + log1p(-1/alpha) - (log(delta) + log(alpha)) / (alpha - 1),

minimised over the orders; an RDP of exactly 0 (nothing released) gives epsilon = 0.
(dp-accounting also returns epsilon = 0 whenever the RDP is below about delta^2, through a
total-variation bound; that corner is not used here, so there the epsilon reported here can
be larger by up to ~log(1/delta)/4096.)

Default orders (:data:`DEFAULT_ORDERS`, 154 of them): 1.1, 1.2, ..., 1.9; 2.25, 2.5, 2.75,
3.25, ..., 10.75 (quarter steps); every integer 2..64; then integers about 8% apart (69, 75,
81, ..., 3781, 4084) and 4096. With small q the RDP curve of a run rises steeply past an
order ~ 2 z^2 log(1/q) (subsampling stops helping there) and the best order sits just below
that cliff, so a grid that is sparse there loses epsilon. On random small-q problems with
epsilon in [0.05, 50] this grid is within 0.75% of a 9000-order grid in 90% of cases (5% at
worst, from cliffs between integer orders 11..64); dp-accounting's default (fractional
orders in steps of 0.1 up to 10.9, then 11..63, 128, 256, 512, 1024) is off by 3.4% in 10%
of the cases and by up to 98% (cliffs between 64 and 1024). Large integer orders cost no
more than small ones here; fractional orders cost several times more, and
:meth:`RDPAccountant.epsilon` only evaluates those that can attain the minimum.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import erfc as _erfc
from scipy.special import gammaln

from .._checks import check_delta as _check_delta
from .._checks import check_epsilon as _check_epsilon
from .._config import secure_noise
from .accountant import Accountant, negative_side
from .events import gaussian_runs

__all__ = [
    "DEFAULT_ORDERS",
    "RDPAccountant",
    "rdp_subsampled_gaussian",
    "rdp_epsilon",
    "rdp_delta",
    "rdp_profile",
]


def _default_orders():
    # 1.1, ..., 1.9 and 2.25, 2.5, ..., 10.75 (without the integers)
    frac = np.concatenate([np.arange(11, 20) / 10.0, np.arange(9, 44) / 4.0])
    frac = frac[frac != np.round(frac)]
    large = np.round(64.0 * 1.08 ** np.arange(1, 55))  # 69, 75, ..., 4084: 8% apart
    # 4096 to ~1e6, 25% apart: only tiny epsilons need them. The conversion's offset is
    # ~(log(1/delta) - log(alpha)) / alpha, so epsilon ~ 1e-6 needs orders near 1/delta. The
    # integer orders' binomial table costs alpha floats each (~20 MB in all up to 1e6).
    huge = np.round(4096.0 * 1.25 ** np.arange(1, 25))
    orders = np.unique(np.concatenate([frac, np.arange(2.0, 65.0), large, [4096.0], huge]))
    return orders


DEFAULT_ORDERS = _default_orders()
DEFAULT_ORDERS.setflags(write=False)

# Terms more than this many nats below the largest term of A - 1 are not summed (their total
# is bounded and added instead, see the module docstring): at most 4097 e^-40 ~ 2e-14 of A - 1.
_LOG_CUTOFF = 40.0
# Multiplicative recurrences between exact restarts (bounds the rounding drift to ~1e-14).
_RESYNC = 32
# Relative allowance added to every log A_alpha for floating-point rounding (the sums below
# are accurate to ~1e-14 relative; the allowance keeps the result on the safe side).
_ROUNDING_RTOL = 1e-12
_EPS = np.finfo(float).eps
# Fractional orders: most tail terms fed to the alternating-series acceleration (its
# relative error is 1/T_n(3) ~ 2 * 5.83^-n; fewer terms are used when the tail is small).
_CRVZ_TERMS = 24
# Calibration: relative distance below the target epsilon that still counts as "spent".
_CALIB_RTOL = 1e-10
_LOG_2PI_HALF = 0.5 * math.log(2.0 * math.pi)


def _crvz_weights(n):
    """Weights of the Cohen-Rodriguez Villegas-Zagier (2000) alternating-series acceleration.

    For ``a_k = int t^k dnu(t)`` with nu a positive measure on [0, 1], the sum
    ``E = sum_k (-1)^k a_k = int dnu / (1 + t)`` satisfies ``|E - sum_k w_k a_k| <= E / d``
    with ``d = T_n(3)``: take ``P(t) = T_n(1 - 2t)`` (|P| <= 1 on [0, 1]) and
    ``sum_k w_k t^k = (P(-1) - P(t)) / ((1 + t) P(-1))``. Computed with exact integers.
    Returns (w, 1/d, sum |w|).
    """

    def mul(p, r):
        out = [0] * (len(p) + len(r) - 1)
        for i, x in enumerate(p):
            for j, y in enumerate(r):
                out[i + j] += x * y
        return out

    y = [1, -2]  # 1 - 2t
    t_prev, t_cur = [1], y[:]
    for _ in range(1, n):
        nxt = mul([2 * c for c in y], t_cur)
        nxt = [c - (t_prev[i] if i < len(t_prev) else 0) for i, c in enumerate(nxt)]
        t_prev, t_cur = t_cur, nxt
    d = sum(c * (-1) ** k for k, c in enumerate(t_cur))  # P(-1) = T_n(3)
    rem = [d - t_cur[0]] + [-c for c in t_cur[1:]]  # d - P(t), degree n
    quo = [0] * n  # (d - P(t)) / (1 + t)
    quo[n - 1] = rem[n]
    for k in range(n - 1, 0, -1):
        quo[k - 1] = rem[k] - quo[k]
    assert rem[0] == quo[0]  # exact division
    w = np.array([c / d for c in quo], dtype=float)  # int / int: correctly rounded
    return w, 1.0 / d, float(np.sum(np.abs(w)))


def _crvz_tables(n_max):
    w = np.zeros((n_max + 1, n_max))
    inv_d = np.ones(n_max + 1)
    w_abs = np.zeros(n_max + 1)
    for n in range(1, n_max + 1):
        w[n, :n], inv_d[n], w_abs[n] = _crvz_weights(n)
    for arr in (w, inv_d, w_abs):
        arr.setflags(write=False)
    return w, inv_d, w_abs


_CRVZ_W, _CRVZ_INV_D, _CRVZ_ABS = _crvz_tables(_CRVZ_TERMS)


# ---------------------------------------------------------------------------------------
# log A_alpha, vectorised (numpy): one entry per (order, 1/z^2) pair
# ---------------------------------------------------------------------------------------
# Plain numpy, not numba: these are a few hundred scalar operations per pair, and compiling
# them cost a first DP-SGD fit about 3 s, several times what they take to run. Every value
# is computed by the same formulas, in the same order, as the scalar algorithm described in
# the module docstring (tests/_support/rdp_numba.py keeps the former numba kernels; the tests check
# the two agree to rounding).


def _log_ndtr(x):
    """log Phi(x) for the standard normal cdf, accurate in both tails (elementwise)."""
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    hi = x > 5.0
    mid = (x > -30.0) & ~hi
    lo = ~(hi | mid)
    out[hi] = np.log1p(-0.5 * _erfc(x[hi] / math.sqrt(2.0)))
    out[mid] = np.log(0.5 * _erfc(-x[mid] / math.sqrt(2.0)))
    # Asymptotic series: Phi(x) = phi(x)/(-x) * (1 - 1/x^2 + 3/x^4 - 15/x^6 + ...);
    # at x <= -30 ten terms are exact to ~1e-21.
    xl = x[lo]
    y = 1.0 / (xl * xl)
    term = np.ones_like(xl)
    acc = np.ones_like(xl)
    for n in range(1, 11):
        term = term * (-(2 * n - 1) * y)
        acc = acc + term
    out[lo] = -0.5 * xl * xl - np.log(-xl) - _LOG_2PI_HALF + np.log(acc)
    return out


def _one_minus_exp_neg(x):
    """1 - exp(-x) for x >= 0, rounded up to 1 where it is within 1e-16 of 1."""
    return np.where(x > 37.0, 1.0, -np.expm1(-np.minimum(x, 37.0)))


def _first_true(pred, lo, hi):
    """Per entry, the first k in [lo, hi] with ``pred`` true, for a predicate that is false
    then true on that range (``hi`` if it is never true before). ``pred(k, i)`` evaluates
    entries ``i`` at ``k``. The same bisection (same midpoints) as a scalar loop."""
    lo = np.array(lo, dtype=np.int64)
    hi = np.array(hi, dtype=np.int64)
    while True:
        i = np.flatnonzero(lo < hi)
        if i.size == 0:
            return lo
        mid = (lo[i] + hi[i]) // 2
        t = pred(mid, i)
        hi[i] = np.where(t, mid, hi[i])
        lo[i] = np.where(t, lo[i], mid + 1)


def _log_a_int(alpha, off, v, lgc, a, l1q):
    """Upper bounds of log A_alpha for integer orders alpha >= 2 (0 < q < 1, 0 < v < inf).

    ``alpha``, ``off`` (offset of alpha's row in the table ``lgc`` of log C(alpha, k)) and
    ``v = 1/z^2`` are arrays, one entry per pair; ``a = log(q/(1-q))``, ``l1q = log(1-q)``.
    """
    n_p = alpha.size
    alpha_f = alpha.astype(float)
    d1 = -np.expm1(-v)
    log_d1 = np.log(d1)

    def f(k, i):  # log of the k-th binomial term of A without the common factor (1-q)^alpha
        return lgc[off[i] + k] + k * a + 0.5 * k * (k - 1.0) * v[i]

    def dif(k, i):  # f(k+1) - f(k)
        return lgc[off[i] + k + 1] - lgc[off[i] + k] + a + k * v[i]

    def curv(k, i):  # second difference of log C(alpha, k) plus v
        o = off[i]
        return lgc[o + k + 2] - 2.0 * lgc[o + k + 1] + lgc[o + k] + v[i]

    def first_nonpos(lo, hi, i):  # first k in [lo, hi] with D(k) <= 0 (D non-increasing)
        k = _first_true(lambda kk, j: dif(kk, i[j]) <= 0.0, lo, hi)
        return np.where(dif(hi, i) > 0.0, hi + 1, k)

    every = np.arange(n_p)
    # --- peaks of f (module docstring): D(k+1) - D(k) = c(k) + v, c concave, symmetric
    # about (alpha - 2)/2, so D decreases, increases on [k_a, k_b + 1], then decreases.
    kc = (alpha - 2) // 2
    p1 = np.full(n_p, -1, dtype=np.int64)
    p2 = np.full(n_p, -1, dtype=np.int64)
    one = curv(kc, every) <= 0.0  # D non-increasing everywhere: a single peak
    i = np.flatnonzero(one)
    p1[i] = first_nonpos(np.zeros(i.size, np.int64), alpha[i] - 1, i)
    i = np.flatnonzero(~one)
    if i.size:
        k_a = _first_true(lambda kk, j: curv(kk, i[j]) > 0.0, np.zeros(i.size, np.int64), kc[i])
        k_b = alpha[i] - 2 - k_a
        p = first_nonpos(np.zeros(i.size, np.int64), k_a, i)
        q1 = np.where(p <= k_a, p, -1)
        rise = dif(k_b + 1, i) > 0.0
        q2 = np.full(i.size, -1, dtype=np.int64)
        j = np.flatnonzero(rise)
        q2[j] = first_nonpos(k_b[j] + 1, alpha[i[j]] - 1, i[j])
        swap = q1 < 0
        p1[i] = np.where(swap, q2, q1)
        p2[i] = np.where(swap, -1, q2)
    two = p2 >= 0
    f1 = f(p1, every)
    f2 = np.where(two, f(np.maximum(p2, 0), every), -np.inf)
    big = np.maximum(f1, f2)
    # a lower bound of the largest term of A - 1: at k = 2 or at a peak
    with np.errstate(divide="ignore"):
        g = f(np.full(n_p, 2), every) + log_d1
        g = np.where(
            p1 >= 2, np.maximum(g, f1 + np.log(_one_minus_exp_neg(0.5 * p1 * (p1 - 1.0) * v))), g
        )
        g = np.where(
            p2 >= 2, np.maximum(g, f2 + np.log(_one_minus_exp_neg(0.5 * p2 * (p2 - 1.0) * v))), g
        )
    thr = g - _LOG_CUTOFF

    # --- ranges of the terms >= thr around each peak; f_out: largest term left out. f rises
    # to p1 and falls after it (one peak), or rises to p1, falls to a valley V, rises to p2
    # and falls (two peaks); each side is monotone, so each range end is a bisection.
    def first_above(lo, hi, i):  # f non-decreasing on [lo, hi], f(hi) >= thr
        return _first_true(lambda kk, j: f(kk, i[j]) >= thr[i[j]], lo, hi)

    def last_above(lo, hi, i):  # f non-increasing on [lo, hi], f(lo) >= thr
        return _first_true(lambda kk, j: f(kk, i[j]) < thr[i[j]], lo, hi + 1) - 1

    f_out = np.full(n_p, -np.inf)
    lo1 = p1.copy()
    hi1 = p1 - 1  # empty
    lo2 = np.zeros(n_p, dtype=np.int64)
    hi2 = np.full(n_p, -1, dtype=np.int64)  # empty
    zero = np.zeros(n_p, dtype=np.int64)

    def left_out(i, k):  # the term at k (left out of the sum) bounds the ones beyond it
        np.maximum.at(f_out, i, f(k, i))

    # range 1: one peak, or the first of two with f(p1) >= thr
    i = np.flatnonzero(~two | (f1 >= thr))
    lo1[i] = first_above(zero[i], p1[i], i)
    left_out(i[lo1[i] > 0], lo1[i][lo1[i] > 0] - 1)
    j = i[~two[i]]
    hi1[j] = last_above(p1[j], alpha[j], j)
    left_out(j[hi1[j] < alpha[j]], hi1[j][hi1[j] < alpha[j]] + 1)
    t = np.flatnonzero(two)
    valley = np.zeros(n_p, dtype=np.int64)
    valley[t] = _first_true(lambda kk, jj: dif(kk, t[jj]) > 0.0, p1[t], p2[t] - 1)
    high_valley = two & (f(valley, every) >= thr)  # then f >= thr on [p1, p2]
    j = i[two[i]]
    hv = high_valley[j]
    hi1[j[hv]] = p2[j[hv]] - 1
    jl = j[~hv]
    hi1[jl] = last_above(p1[jl], valley[jl], jl)
    left_out(jl, hi1[jl] + 1)  # below thr: hi1 < valley
    # the first peak below thr: everything up to the valley is <= f(p1)
    i = np.flatnonzero(two & (f1 < thr))
    np.maximum.at(f_out, i, f1[i])
    # range 2: the second peak with f(p2) >= thr
    i = np.flatnonzero(two & (f2 >= thr))
    joined = high_valley[i] & (hi1[i] >= lo1[i])
    lo2[i[joined]] = p2[i[joined]]
    jl = i[~joined]
    lo2[jl] = first_above(valley[jl], p2[jl], jl)
    left_out(jl, lo2[jl] - 1)  # lo2 > valley >= the end of range 1
    hi2[i] = last_above(p2[i], alpha[i], i)
    left_out(i[hi2[i] < alpha[i]], hi2[i][hi2[i] < alpha[i]] + 1)
    i = np.flatnonzero(two & (f2 < thr))
    np.maximum.at(f_out, i, f2[i])

    # --- sum of the terms of A - 1 in the ranges, relative to exp(big) ---
    len1 = np.maximum(hi1 - lo1 + 1, 0)
    len2 = np.maximum(hi2 - lo2 + 1, 0)
    starts = np.concatenate([lo1, lo2])
    lens = np.concatenate([len1, len2])
    owner = np.repeat(np.concatenate([every, every]), lens)
    first = np.cumsum(lens) - lens
    k = np.repeat(starts - first, lens) + np.arange(int(lens.sum()))
    lt = f(k, owner) - big[owner]
    with np.errstate(under="ignore"):
        # A - 1 = sum_k C(alpha,k) q^k (1-q)^(alpha-k) (exp(k(k-1)v/2) - 1): the binomial
        # weights sum to 1, so A - 1 keeps its relative precision when it is tiny. A term
        # near the bottom of the double range is counted as exp(-575).
        term = np.where(
            lt < -575.0,
            math.exp(-575.0),
            np.exp(np.maximum(lt, -575.0)) * _one_minus_exp_neg(0.5 * k * (k - 1.0) * v[owner]),
        )
    s = np.bincount(owner, weights=term, minlength=n_p)
    n_in = len1 + len2
    n_out = alpha + 1 - n_in
    with np.errstate(under="ignore"):
        s = s + np.where(n_out > 0, n_out * np.exp(f_out - big), 0.0)  # each <= exp(f_out)
    lam1 = alpha_f * l1q + big + np.log(s)  # log(A - 1)
    # log A = log(1 + exp(lam1)); frac = (A - 1)/A
    with np.errstate(over="ignore", under="ignore"):
        e = np.exp(np.where(lam1 > 0.0, -lam1, lam1))
    log_a = np.where(lam1 > 0.0, lam1 + np.log1p(e), np.log1p(e))
    frac = np.where(lam1 > 0.0, 1.0 / (1.0 + e), e / (1.0 + e))
    # rounding allowance: the log-terms carry absolute errors of a few ulps of their parts,
    # i.e. relative errors of A - 1, which move log A by that much times (A - 1)/A. The parts
    # of log C(alpha, k) are three log-gammas of up to log Gamma(alpha + 1) each (about
    # alpha log alpha: 1e7 at alpha = 1e6, far above log C itself), those of k a and
    # k (k - 1) v / 2 grow with k up to the last term summed.
    k_top = np.maximum(hi1, hi2).astype(float)
    parts = (
        np.abs(big)
        + np.abs(alpha_f * l1q)
        + 3.0 * gammaln(alpha_f + 1.0)
        + k_top * abs(a)
        + 0.5 * k_top * (k_top - 1.0) * v
    )
    err = 8.0 * _EPS * (2.0 + parts + n_in)
    return log_a * (1.0 + _ROUNDING_RTOL) + err * frac


def _log_a_frac(alpha, v, log_q, l1q):
    """Upper bounds of log A_alpha for non-integer orders alpha > 1 (0 < q < 1, 0 < v < inf),
    one per entry of the arrays ``alpha`` and ``v``.

    A = head - E0 - E1: ``head`` sums both series up to k = ceil(alpha) (positive terms);
    each tail is minus an alternating series with completely monotone magnitudes (a moment
    sequence: the product of |C(alpha, k)|, a Beta-integral moment sequence for k > alpha,
    and a moment of r(x)^k with 0 <= r <= 1), so E >= 0 and the Cohen-Rodriguez Villegas-Zagier
    sum gives E to relative 1/d; subtracting a *lower* bound of E keeps A an upper bound.
    """
    a = log_q - l1q
    n_p = alpha.size
    sv = np.sqrt(v)[:, None]
    z0 = (-a / v + 0.5)[:, None]  # z^2 log((1 - q)/q) + 1/2
    vv = v[:, None]
    al = alpha[:, None]
    n = np.ceil(alpha).astype(np.int64)
    n_cols = int(n.max()) + 1 + _CRVZ_TERMS
    kk = np.arange(n_cols, dtype=np.int64)[None, :]
    # lc[:, k] = log |C(alpha, k)|, by the recurrence lc_{k+1} = lc_k + log(|alpha - k|/(k+1))
    lc = np.zeros((n_p, n_cols))
    np.cumsum(np.log(np.abs(al - kk[:, :-1]) / (kk[:, :-1] + 1.0)), axis=1, out=lc[:, 1:])

    def term(series, k, lck):  # log |k-th term| of series 0 or 1 (Mironov et al., Sec. 3.3)
        if series == 0:
            return lck + al * l1q + k * a + 0.5 * k * (k - 1.0) * vv + _log_ndtr((z0 - k) * sv)
        j = al - k
        return lck + al * log_q - k * a + 0.5 * j * (j - 1.0) * vv + _log_ndtr((j - z0) * sv)

    # head: k = 0..n of both series. Sums run over the columns in a fixed order (terms
    # beyond an entry's n add exact zeros), so no entry's value depends on the others.
    kh = kk[:, : n_cols - _CRVZ_TERMS]
    valid = kh <= n[:, None]
    head = [np.where(valid, term(s, kh, lc[:, : kh.shape[1]]), -np.inf) for s in (0, 1)]
    mp = np.maximum(np.max(head[0], axis=1), np.max(head[1], axis=1))
    sp = np.zeros(n_p)
    wp = np.zeros(n_p)  # sum of |log-term| weighted by the term: the scale of their rounding
    with np.errstate(under="ignore"):
        for k in range(kh.shape[1]):
            for t in (head[0][:, k], head[1][:, k]):
                e = np.exp(t - mp)
                sp = sp + e
                wp = wp + np.where(valid[:, k], e * np.abs(np.where(valid[:, k], t, 0.0)), 0.0)
    lhead = mp + np.log(sp)
    # tail accuracy target: 1e-13 of A - 1 (floored at 1e-30 A); a tail whose first term is
    # below it is dropped (E >= 0: still an upper bound)
    with np.errstate(divide="ignore"):
        lam1 = np.where(lhead > 0.0, np.log(-np.expm1(-np.maximum(lhead, 0.0))), -745.0)
    log_tol = lhead + np.maximum(lam1, -39.0) - 30.0
    e_sum = np.zeros(n_p)  # lower bound of (E0 + E1) / head
    n_terms = 2.0 * (n + 1)
    kt = n[:, None] + 1 + np.arange(_CRVZ_TERMS)[None, :]  # k = n + 1 + m
    lck = np.take_along_axis(lc, kt, axis=1)
    nn = np.arange(1, _CRVZ_TERMS + 1)[None, :]
    for series in range(2):
        lb = term(series, kt, lck)
        lb0 = lb[:, 0]
        used = ~(lb0 < log_tol)
        # fewest terms with error bound E/d_n <= b0/d_n below the tolerance (d_n >= 5.8^n/2)
        fits = (lb0[:, None] - math.log(0.5) - nn * 1.7627) < log_tol[:, None]
        nt = np.where(fits.any(axis=1), np.argmax(fits, axis=1) + 1, _CRVZ_TERMS)
        cw = _CRVZ_W[nt]  # zero beyond nt
        acc = np.zeros(n_p)
        acc_err = np.zeros(n_p)
        with np.errstate(under="ignore"):
            for m in range(_CRVZ_TERMS):  # weights beyond nt are 0: exact zeros added
                et = np.where(m < nt, np.exp(np.where(m < nt, lb[:, m] - lb0, 0.0)), 0.0)
                acc = acc + cw[:, m] * et
                acc_err = acc_err + np.abs(cw[:, m]) * et * (2.0 + np.abs(lb[:, m]) + np.abs(lb0))
        # |E - acc| <= E inv_d; rounding: a few ulps of each log-term and of the sum
        e_low = (
            acc / (1.0 + _CRVZ_INV_D[nt]) - 8.0 * _EPS * acc_err - 4.0 * nt * _EPS * _CRVZ_ABS[nt]
        )
        add = used & (e_low > 0.0)
        with np.errstate(under="ignore"):
            e_sum = e_sum + np.where(add, np.exp(np.where(add, lb0 - lhead, 0.0)) * e_low, 0.0)
        n_terms = n_terms + np.where(used, nt, 0)
    e_sum = np.where(e_sum >= 1.0, 0.0, e_sum)  # cannot happen (A >= 1); stay an upper bound
    log_a = lhead + np.log1p(-e_sum)
    # rounding allowance (absolute, on log A): a few ulps of each log-term (weighted by the
    # term) and of each addition, amplified by the cancellation head -> head (1 - e_sum)
    err = (8.0 * _EPS * (2.0 + wp / sp) + 4.0 * _EPS * n_terms) / (1.0 - e_sum)
    return log_a * (1.0 + _ROUNDING_RTOL) + err


def _log_a_grid(orders, is_int, lgc, offsets, log_q, l1q, v):
    """Upper bounds of log A: one row per order, one column per v = 1/z^2 (0 < q < 1,
    0 < v < inf)."""
    out = np.empty((orders.size, v.size))
    a = log_q - l1q
    ii = np.flatnonzero(is_int)
    if ii.size:
        rows, cols = np.repeat(ii, v.size), np.tile(np.arange(v.size), ii.size)
        out[rows, cols] = _log_a_int(
            orders[rows].astype(np.int64), offsets[rows], v[cols], lgc, a, l1q
        )
    fi = np.flatnonzero(~is_int)
    if fi.size:
        rows, cols = np.repeat(fi, v.size), np.tile(np.arange(v.size), fi.size)
        out[rows, cols] = _log_a_frac(orders[rows], v[cols], log_q, l1q)
    return out


# ---------------------------------------------------------------------------------------
# Vectorised front end
# ---------------------------------------------------------------------------------------


def _check_orders(orders):
    orders = np.array(DEFAULT_ORDERS if orders is None else orders, dtype=float).ravel()
    if orders.size == 0 or not np.all(np.isfinite(orders)) or np.any(orders <= 1.0):
        raise ValueError("RDP orders must be a non-empty array of finite values > 1.")
    return orders


def _check_q(q):
    q = float(q)
    if not 0.0 < q <= 1.0:  # also rejects NaN
        raise ValueError(f"sampling_rate must be in (0, 1], got {q!r}.")
    return q


@lru_cache(maxsize=256)
def _order_tables(orders_key):
    """Integer-order mask and the flat table of log C(alpha, k) for the integer orders."""
    orders = np.array(orders_key, dtype=float)
    is_int = np.array([float(o).is_integer() for o in orders_key], dtype=np.bool_)
    offsets = np.zeros(orders.size, dtype=np.int64)
    chunks = []
    pos = 0
    for i, o in enumerate(orders_key):
        if is_int[i]:
            n = int(o)
            k = np.arange(n + 1, dtype=float)
            chunks.append(gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0))
            offsets[i] = pos
            pos += n + 1
    lgc = np.concatenate(chunks) if chunks else np.zeros(1)
    for arr in (orders, is_int, offsets, lgc):
        arr.setflags(write=False)
    return orders, is_int, offsets, lgc


def _log_a_matrix(q, sigmas, orders):
    """Upper bounds of log A_alpha: one row per order, one column per sigma (0 < q < 1)."""
    orders_arr, is_int, offsets, lgc = _order_tables(tuple(float(o) for o in orders))
    with np.errstate(over="ignore"):
        v = 1.0 / (np.asarray(sigmas, dtype=float) ** 2)
    out = np.full((orders_arr.size, v.size), np.inf)  # 1/z^2 overflowing: z ~ 0, no privacy
    ok = np.isfinite(v)
    if ok.all():
        out = _log_a_grid(orders_arr, is_int, lgc, offsets, math.log(q), math.log1p(-q), v)
    elif ok.any():
        out[:, ok] = _log_a_grid(
            orders_arr, is_int, lgc, offsets, math.log(q), math.log1p(-q), v[ok]
        )
    # log A >= 0 (a Renyi divergence is >= 0): clipping rounding below 0 keeps an upper bound
    return np.maximum(out, 0.0)


def _log_a_discrete(q, sigmas, orders):
    """Upper bounds of ``(alpha - 1) x RDP`` of one Poisson-sampled step of secure mode's
    *discrete* Gaussian, one row per order, one column per multiplier (0 < q < 1).

    Secure mode rounds the sum to a lattice and adds the discrete Gaussian ``N_Z(0, s^2)``
    (``s >= 2^24`` lattice units), widened so that two neighbours' rounded sums differ by an
    integer vector ``v`` with ``||v|| / s <= 1 / z``. At an integer order alpha the remove
    direction's moment ``A_alpha = E_0[(1 - q + q L)^alpha]`` (``L`` the likelihood ratio of
    the shifted and the centred discrete Gaussians) expands into the terms
    ``E_0[L^k] = sum_x N_Z(x - k v) ... = exp(k (k - 1) ||v||^2 / (2 s^2))``: shifting the
    lattice sum by the integer vector ``k v`` leaves its normalising constant unchanged, so
    every term, and ``A_alpha``, equals the continuous Gaussian's with multiplier ``z``
    (Mironov, Talwar and Zhang's binomial sum). The add direction is taken to be the smaller
    one, as for the continuous Gaussian (their Section 3.3; the package relies on it in plain
    mode as well), where the discrete and continuous expectations differ by aliasing terms of
    order ``exp(-2 pi^2 s^2)`` (Poisson summation), below any float. A fractional order alpha is
    read at ``b = ceil(alpha)`` (RDP does not decrease with the order), scaled to
    ``(alpha - 1) RDP(b)``.
    """
    orders = np.asarray(orders, dtype=float)
    ceil = np.maximum(2.0, np.ceil(orders))
    uniq, inverse = np.unique(ceil, return_inverse=True)
    log_a = _log_a_matrix(q, sigmas, uniq)  # integer orders: the binomial sums
    rdp_b = log_a / (uniq - 1.0)[:, None]
    scaled = rdp_b[inverse] * ((orders - 1.0) * (1.0 + 4.0 * _EPS))[:, None]  # rounded up
    return np.where((orders == ceil)[:, None], log_a[inverse], scaled)


def _secure_default():
    return bool(secure_noise())


class _Group:
    """One sampling rate and its distinct finite positive multipliers with their counts;
    ``discrete``: the exact discrete Gaussian of secure mode (:func:`_log_a_discrete`)."""

    __slots__ = ("q", "sigmas", "counts", "infinite", "discrete")

    def __init__(self, q, noise_multipliers, discrete=False):
        self.discrete = bool(discrete)
        self.q = _check_q(q)
        z = np.asarray(noise_multipliers, dtype=float).ravel()
        if np.any(np.isnan(z)) or np.any(z < 0):
            raise ValueError("noise multipliers must be >= 0.")
        self.infinite = bool(np.any(z == 0))  # no noise: infinite privacy loss
        z = z[z > 0]
        with np.errstate(over="ignore"):
            z = z[1.0 / (z * z) > 0]  # sigma = inf (or 1/sigma^2 = 0) releases nothing
        self.sigmas, counts = np.unique(z, return_counts=True)
        self.counts = counts.astype(float)

    def rdp(self, orders):
        """Total RDP at ``orders``; each order's value depends on that order only."""
        if self.infinite:
            return np.full(orders.size, np.inf)
        if self.sigmas.size == 0:
            return np.zeros(orders.size)
        if self.q == 1.0:
            return orders * (0.5 * float(np.sum(self.counts / (self.sigmas * self.sigmas))))
        log_a = _log_a_any(self.q, self.sigmas, orders, self.discrete)
        # row-wise sums (not a matrix product) so that a row does not depend on the others
        return np.sum(log_a * self.counts, axis=1) / (orders - 1.0)


def _log_a_any(q, sigmas, orders, discrete):
    """:func:`_log_a_discrete` for discrete steps, else :func:`_log_a_matrix`."""
    if discrete:
        return _log_a_discrete(q, sigmas, orders)
    return _log_a_matrix(q, sigmas, orders)


def _compose(groups, orders):
    total = np.zeros(orders.size)
    for g in groups:
        total = total + g.rdp(orders)
    return total


def rdp_subsampled_gaussian(sampling_rate, noise_multipliers, orders=None, discrete=False):
    """RDP curve of a composition of Poisson-subsampled Gaussian steps (add/remove-one).

    Parameters
    ----------
    sampling_rate : float in (0, 1]
        Poisson sampling rate q of every step (1 = full batch, no amplification).
    noise_multipliers : array-like of shape (T,)
        Noise multiplier of each step (noise std / L2 sensitivity). 0 means no noise
        (infinite RDP), ``np.inf`` means nothing released (zero RDP). Equal values are
        grouped, so the cost grows with the number of *distinct* multipliers.
    orders : array-like of orders > 1, default :data:`DEFAULT_ORDERS`
    discrete : bool, default=False
        The steps draw the exact discrete Gaussian of secure mode: Poisson-sampled steps are
        then read with the general bound of Zhu and Wang (:func:`_log_a_discrete`).

    Returns
    -------
    rdp : ndarray of shape (len(orders),)
        Upper bound of the Renyi DP of the whole composition at each order: the sum over
        steps of the per-step RDP of Mironov, Talwar and Zhang (2019). ``q = 1`` gives the
        Gaussian mechanism's ``alpha / (2 z^2)`` per step, exactly (continuous or discrete).
    """
    return _Group(sampling_rate, noise_multipliers, discrete).rdp(_check_orders(orders))


def _conversion_offsets(orders, delta):
    """epsilon_alpha = rdp_alpha + offset_alpha (improved conversion at a fixed delta)."""
    return np.log1p(-1.0 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1.0)


def _eps_per_order(rdp, offsets):
    # RDP 0 at any order means the two output distributions are equal: epsilon 0
    return np.where(rdp == 0, 0.0, rdp + offsets)  # inf stays inf


def _check_curve(rdp, orders):
    rdp = np.asarray(rdp, dtype=float).ravel()
    if rdp.shape != orders.shape:
        raise ValueError("rdp and orders must have the same length.")
    if np.any(np.isnan(rdp)) or np.any(rdp < 0):
        raise ValueError("RDP values must be >= 0.")
    return rdp


def rdp_epsilon(rdp, orders, delta, return_order=False):
    """Smallest epsilon such that an RDP curve implies (epsilon, delta)-DP (an upper bound).

    Per order ``rdp + log1p(-1/alpha) - (log(delta) + log(alpha)) / (alpha - 1)`` (Balle et
    al. 2020; Canonne, Kamath and Steinke 2020), minimised over the orders and clipped at 0;
    an RDP of exactly 0 (nothing released) gives 0.
    Stable for any delta in (0, 1) and any epsilon (nothing is exponentiated). With
    ``return_order=True`` also returns the order attaining it.
    """
    delta = _check_delta(delta)
    orders = _check_orders(orders)
    rdp = _check_curve(rdp, orders)
    eps = _eps_per_order(rdp, _conversion_offsets(orders, delta))
    i = int(np.argmin(eps))
    e = max(0.0, float(eps[i]))
    return (e, float(orders[i])) if return_order else e


def rdp_delta(rdp, orders, epsilon, return_order=False):
    """Smallest delta such that an RDP curve implies (epsilon, delta)-DP (an upper bound).

    The same conversion solved for delta, in log space:
    ``log delta = (alpha - 1)(rdp - epsilon + log1p(-1/alpha)) - log(alpha)``, minimised over
    the orders and capped at 1.
    """
    epsilon = float(epsilon)
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}.")
    orders = _check_orders(orders)
    rdp = _check_curve(rdp, orders)
    if math.isinf(epsilon):
        return (0.0, float(orders[0])) if return_order else 0.0
    log_d = (orders - 1.0) * (rdp - epsilon + np.log1p(-1.0 / orders)) - np.log(orders)
    log_d = np.where(rdp == 0, -np.inf, log_d)  # equal output distributions: delta 0
    i = int(np.argmin(log_d))
    d = math.exp(min(float(log_d[i]), 0.0))
    return (d, float(orders[i])) if return_order else d


# ---------------------------------------------------------------------------------------
# Accountant
# ---------------------------------------------------------------------------------------


def _anchor_mask(orders, is_int):
    """A coarse subset of the integer orders (ratio >= 1.5 between neighbours, plus both ends)."""
    mask = np.zeros(orders.size, dtype=bool)
    idx = np.flatnonzero(is_int)
    if idx.size == 0:
        return ~mask  # nothing to bound the others with: compute everything
    idx = idx[np.argsort(orders[idx])]
    last = -np.inf
    for i in idx:
        if orders[i] >= 1.5 * last:
            mask[i] = True
            last = orders[i]
    mask[idx[-1]] = True
    return mask


def _lower_bounds(orders, rdp, known):
    """Lower bounds of the RDP at the orders not in ``known`` from the values at ``known``.

    Uses two facts about the true curve only: RDP is non-decreasing in the order, and
    ``LA(alpha) = (alpha - 1) RDP_alpha = log E[L^alpha]`` is convex in alpha (Hoelder), with
    ``LA(0) = LA(1) = 0``, so it lies above the extension of any chord. The known values are
    upper bounds that may exceed the truth by a relative ~1e-12: each bound discounts the
    values it uses with a positive sign by 1e-9 (those with a negative sign only loosen it).
    """
    ko = np.concatenate([[0.0, 1.0], orders[known]])
    kla = np.concatenate([[0.0, 0.0], (orders[known] - 1.0) * rdp[known]])
    srt = np.argsort(ko)
    ko, kla = ko[srt], kla[srt]
    low = np.zeros(orders.size)
    disc = 1.0 - 1e-9
    with np.errstate(invalid="ignore"):  # an infinite known value gives NaN: no bound
        for i in np.flatnonzero(~known):
            low[i] = _lower_bound_at(orders[i], ko, kla, disc)
    return low


def _lower_bound_at(alpha, ko, kla, disc):
    """One order's bound for :func:`_lower_bounds` (0 when none is finite)."""
    j = int(np.searchsorted(ko, alpha))  # ko[j-1] < alpha < ko[j]
    best = 0.0
    if j >= 2:  # monotone in the order, and the chord through the two known points below
        x1, x2, y1, y2 = ko[j - 2], ko[j - 1], kla[j - 2], kla[j - 1]
        if x2 > 1.0:
            best = max(best, y2 * disc / (x2 - 1.0))
        w = (alpha - x2) / (x2 - x1)
        best = max(best, ((1.0 + w) * y2 * disc - w * y1) / (alpha - 1.0))
    if j + 1 < ko.size:  # the chord through the two known points above, extended down
        x1, x2, y1, y2 = ko[j], ko[j + 1], kla[j], kla[j + 1]
        w = (x1 - alpha) / (x2 - x1)
        best = max(best, ((1.0 + w) * y1 * disc - w * y2) / (alpha - 1.0))
    return best if math.isfinite(best) else 0.0


def _illinois(g, a, ga, b, gb, tol):
    """Root of a decreasing g bracketed by g(a) > 0 >= g(b): Illinois regula falsi.

    Returns the admissible end (b, g(b)) once -tol <= g(b) <= 0 or the bracket is a few ulps
    wide; it never leaves the bracket and converges superlinearly on smooth g.
    """
    side = 0
    for _ in range(300):
        if gb >= -tol or abs(b - a) <= 4e-16 * max(1.0, abs(b)):
            break
        t = b - gb * (b - a) / (gb - ga)
        if not min(a, b) < t < max(a, b):
            t = 0.5 * (a + b)
        gt = g(t)
        if gt > 0:
            a, ga = t, gt
            if side == -1:
                gb *= 0.5
            side = -1
        else:
            b, gb = t, gt
            if side == 1:
                ga *= 0.5
            side = 1
    return b, gb


def _bracket(g, t, gt, step):
    """From (t, g(t)) for a decreasing g, step (doubling) until g changes sign.

    Returns (a, g(a), b, g(b)) with g(a) > 0 >= g(b).
    """
    for _ in range(200):
        if gt > 0:
            a, ga = t, gt
            t += step
            gt = g(t)
            if gt <= 0:
                return a, ga, t, gt
        else:
            b, gb = t, gt
            t -= step
            gt = g(t)
            if gt > 0:
                return t, gt, b, gb
        step *= 2.0
    raise RuntimeError("calibration could not bracket the noise scale")


class RDPAccountant(Accountant):
    """Renyi-DP accountant for (Poisson-subsampled) Gaussian steps, add/remove-one neighbours.

    Same interface as :class:`~skdpgd.accounting.GaussianDPAccountant`. ``steps`` may be one
    :class:`~skdpgd.accounting.GaussianSteps` or a sequence of them (composed, each with its
    own sampling rate). Every epsilon/delta it returns is an upper bound; at sampling rate 1
    it is looser than the exact GDP accountant (the RDP -> (epsilon, delta) conversion is
    lossy).

    Parameters
    ----------
    orders : array-like of orders > 1, default :data:`DEFAULT_ORDERS`
        Stored sorted and without repeats in ``self.orders``.
    noise : {'gaussian', 'discrete'} or None, default=None
        The noise of the steps it calibrates: 'discrete' reads Poisson-sampled steps with the
        general bound that covers the exact discrete Gaussian of secure mode. None: discrete
        while secure mode is on (read at each call). A release marked discrete is always
        read as discrete.
    """

    name = "rdp"
    label = "RDP"
    composes_rdp_curves = True

    def __init__(self, orders=None, noise=None):
        if noise not in (None, "gaussian", "discrete"):
            raise ValueError(f"noise must be None, 'gaussian' or 'discrete', got {noise!r}.")
        self.noise = noise
        self.orders = np.unique(_check_orders(orders))  # sorted, without repeats
        self.orders.setflags(write=False)
        self._is_int = np.array([float(o).is_integer() for o in self.orders])
        self._anchors = _anchor_mask(self.orders, self._is_int)

    def supports(self, steps):
        """Any sampling rate in (0, 1]."""
        try:
            return all(0.0 < float(s.sampling_rate) <= 1.0 for s in gaussian_runs(steps))
        except (TypeError, ValueError):
            return False

    @property
    def discrete(self):
        """Whether the steps it calibrates are read as discrete Gaussian ones."""
        return self.noise == "discrete" or (self.noise is None and _secure_default())

    def _groups(self, steps):
        discrete = self.discrete
        return [
            _Group(s.sampling_rate, s.noise_multipliers, discrete or s.noise == "discrete")
            for s in gaussian_runs(steps)
        ]

    def rdp(self, steps):
        """Total RDP curve of ``steps`` at ``self.orders`` (upper bounds)."""
        return _compose(self._groups(steps), self.orders)

    def _min_epsilon(self, curve, offsets):
        """min over the orders of ``rdp_alpha + offsets_alpha``, computing few orders.

        ``curve(mask)`` returns the RDP at ``self.orders[mask]``; each order's value must not
        depend on which others are asked for. A coarse subset of integer orders is computed
        first; then the other integer orders whose epsilon could be below the best so far
        (by :func:`_lower_bounds`); then the fractional ones the same way, most promising
        first, one at a time. The result is exactly the minimum over all orders.
        Returns (epsilon, index of the order, rdp with NaN where not computed).
        """
        orders = self.orders
        rdp = np.full(orders.size, np.nan)
        known = np.zeros(orders.size, dtype=bool)

        def compute(mask):
            rdp[mask] = curve(mask)
            known[mask] = True
            eps = np.where(known, _eps_per_order(rdp, offsets), np.inf)
            return float(np.min(eps))

        best = compute(self._anchors)
        if not math.isfinite(best):
            best = compute(~known)
        for step in ("integer", "rest"):
            if known.all():
                break
            low = _lower_bounds(orders, rdp, known) + offsets
            todo = ~known & (low < best)
            if step == "integer":
                todo &= self._is_int
                if todo.any():
                    best = compute(todo)
            else:
                for i in np.flatnonzero(todo)[np.argsort(low[todo])]:
                    if low[i] >= best:
                        break
                    one = np.zeros(orders.size, dtype=bool)
                    one[i] = True
                    best = compute(one)
        eps = np.where(known, _eps_per_order(rdp, offsets), np.inf)
        i = int(np.argmin(eps))
        return max(0.0, float(eps[i])), i, rdp

    def _epsilon(self, groups, delta):
        """(epsilon, order) of composed groups: exactly ``rdp_epsilon(self.rdp(...))``."""
        orders = self.orders
        e, i, _ = self._min_epsilon(
            lambda mask: _compose(groups, orders[mask]), _conversion_offsets(orders, delta)
        )
        return e, float(orders[i])

    def epsilon(self, steps, delta):
        """Smallest epsilon (an upper bound) for which ``steps`` is (epsilon, delta)-DP.

        Equal to ``rdp_epsilon(self.rdp(steps), self.orders, delta)``.
        """
        delta = _check_delta(delta)
        return self._epsilon(self._groups(steps), delta)[0]

    def delta(self, steps, epsilon):
        """Smallest delta (an upper bound) for which ``steps`` is (epsilon, delta)-DP."""
        return rdp_delta(self.rdp(steps), self.orders, epsilon)

    def budget(self, epsilon, delta):
        """RDP budget per order: a run is (epsilon, delta)-DP if its RDP is <= this at some order.

        Unlike the GDP accountant's scalar mu, an RDP budget is a curve (one value per order
        of ``self.orders``); a value <= 0 means that order cannot certify (epsilon, delta).
        ``epsilon = inf`` gives an all-inf curve.
        """
        epsilon = _check_epsilon(epsilon)
        delta = _check_delta(delta)
        if math.isinf(epsilon):
            return np.full(self.orders.size, np.inf)
        return epsilon - _conversion_offsets(self.orders, delta)

    def calibrate(self, shape, epsilon, delta, sampling_rate=1.0, prior=()):
        """Scale ``shape`` so the run spends (epsilon, delta): returns ``z = c * shape``.

        ``prior`` lists multipliers of full-batch Gaussian releases (sampling rate 1) already
        made; they are composed (in RDP) with the new steps, which run at ``sampling_rate``.
        The result satisfies ``epsilon * (1 - 1e-9) <= self.epsilon([GaussianSteps(prior),
        GaussianSteps(z, sampling_rate)], delta) <= epsilon``. ``epsilon = inf`` gives zeros.

        Method: the RDP at every order decreases as ``c`` grows, and the run is within budget
        iff its RDP is within :meth:`budget` at some order, so the smallest admissible ``c``
        is the smallest of the per-order roots ``c_alpha``. (1) A bracketing root-finder on
        log c (Illinois) runs on a 128-block summary of the shape, all orders at once, which
        is cheap and locates c and the best order to ~1e-6. (2) That order's exact root is
        found on its own (one order is cheap), and the exact curve (:meth:`epsilon`) is
        evaluated there; if another order spends less at that c, its root is lower and is
        solved next. (3) The final c is checked with the same computation as :meth:`epsilon`
        and nudged up if rounding put it over budget, so it never overspends.
        """
        epsilon = _check_epsilon(epsilon)
        delta = _check_delta(delta)
        q = _check_q(sampling_rate)
        shape = np.asarray(shape, dtype=float).ravel()
        if shape.size == 0 or np.any(~np.isfinite(shape)) or np.any(shape <= 0):
            raise ValueError(
                "a schedule shape must be a non-empty array of positive finite values."
            )
        prior = np.asarray(prior, dtype=float).ravel()
        if math.isinf(epsilon):
            return np.zeros_like(shape)
        orders = self.orders
        discrete = self.discrete
        prior_groups = [_Group(1.0, prior)] if prior.size else []
        rdp_prior = _compose(prior_groups, orders)
        slack = self.budget(epsilon, delta) - rdp_prior  # RDP the new steps may spend
        if not np.any(slack > 0):
            # with no release at all the RDP is 0 and epsilon is the conversion's offset:
            # below its minimum over the orders, no noise level can certify (epsilon, delta)
            eps_min = float(np.min(_conversion_offsets(orders, delta)))
            if not np.any(self.budget(epsilon, delta) > 0):
                raise ValueError(
                    f"epsilon={epsilon:g} is below the smallest epsilon the RDP accountant can "
                    f"certify at delta={delta:g} with its orders (up to {orders.max():.3g}): "
                    f"{eps_min:.3g}. Use a larger epsilon or delta, or a full-batch estimator "
                    "(DPLogisticRegression, DPRidge: exact Gaussian-DP accounting certifies "
                    "any epsilon)."
                )
            raise ValueError(
                "the budget cannot be met at any RDP order: the releases made before these "
                f"steps (e.g. a noisy row count) already spend epsilon={epsilon:g} at "
                f"delta={delta:g}."
            )

        u, counts = np.unique(shape, return_counts=True)
        counts = counts.astype(float)

        offsets = _conversion_offsets(orders, delta)
        feasible = slack > 0

        # --- 1. Search on a coarse summary of the schedule (cheap, approximate) ---------
        # Up to 128 blocks of consecutive distinct shape values, each represented by its
        # middle value with the block's total count: only used to locate c and the order.
        n_blocks = 128
        if u.size > 2 * n_blocks:
            edges = np.linspace(0, u.size, n_blocks + 1).astype(int)
            rep_u = u[(edges[:-1] + edges[1:]) // 2]
            rep_n = np.add.reduceat(counts, edges[:-1])
        else:
            rep_u, rep_n = u, counts

        def approx_gap(t):
            c = math.exp(t)

            def curve(mask):
                o = orders[mask]
                if q == 1.0:
                    new = o * (0.5 * float(np.sum(rep_n / (c * rep_u) ** 2)))
                else:
                    new = np.sum(_log_a_any(q, c * rep_u, o, discrete) * rep_n, axis=1) / (o - 1.0)
                return new + rdp_prior[mask]

            e, approx_gap.order, _ = self._min_epsilon(curve, offsets)
            return (e - epsilon) / epsilon

        # Admissible start: the noise at which full-batch Gaussian steps (q = 1) would meet
        # the budget at some order; subsampling only lowers the RDP.
        s2 = 0.5 * float(np.sum(counts / u**2))
        with np.errstate(divide="ignore", invalid="ignore"):
            c_gauss = np.sqrt(np.where(feasible, orders * s2 / slack, np.inf))
        t0 = math.log(float(np.min(c_gauss)))
        ta, ga, tb, gb = _bracket(approx_gap, t0, approx_gap(t0), 0.5)
        tb, gb = _illinois(approx_gap, ta, ga, tb, gb, 1e-6)
        approx_gap(tb)
        i = approx_gap.order

        # --- 2. Exact: solve the chosen order on its own, then check the whole curve -----
        def new_rdp(i, c):
            """Exact RDP of the new steps at order i with multipliers c * u (one order only)."""
            o = orders[i : i + 1]
            if q == 1.0:
                return float(o[0] * 0.5 * np.sum(counts / (c * u) ** 2))
            return float(np.sum(_log_a_any(q, c * u, o, discrete)[0] * counts) / (o[0] - 1.0))

        def order_gap(i):
            log_target = math.log(slack[i])

            def g(t):  # log(RDP of the new steps / what is left at order i), t = log c
                r = new_rdp(i, math.exp(t))
                return (math.log(r) if r > 0 else -745.0) - log_target

            return g

        def total_eps(c):  # the reporting computation (as self.epsilon)
            return self._epsilon(prior_groups + [_Group(q, c * shape, discrete)], delta)

        t = tb
        eps_c = None
        for _ in range(orders.size):
            if not feasible[i]:
                break
            g = order_gap(i)
            gt = g(t)
            # first step: RDP ~ c^-2, and the search put t within ~1e-6 of the root
            a_, ga_, b_, gb_ = _bracket(g, t, gt, max(1e-6, min(0.5 * abs(gt), 0.1)) * 1.5)
            t, _ = _illinois(g, a_, ga_, b_, gb_, 1e-12)
            eps_c, best_order = total_eps(math.exp(t))
            if eps_c >= epsilon * (1.0 - _CALIB_RTOL):
                break
            j = int(np.flatnonzero(orders == best_order)[0])
            if j == i:
                break
            i = j  # another order spends less here: its root is lower
        c = math.exp(t)
        if eps_c is None:
            eps_c = total_eps(c)[0]
        # never overspend: nudge c up until the reporting computation is within budget
        step = 1e-15
        while eps_c > epsilon:
            c *= 1.0 + step
            step *= 2.0
            eps_c = total_eps(c)[0]
        return c * shape

    def epsilon_profile(self, steps, rdp_curves=()):
        """``delta -> epsilon`` of ``steps`` composed with ``rdp_curves`` (selections known by
        their Renyi-DP curve at :attr:`orders`): the RDP curves summed once, converted at each
        delta; an infinite multiplier adds nothing. 0 when nothing is composed."""
        runs = gaussian_runs(steps)
        if not runs and not len(rdp_curves):
            return lambda delta: 0.0
        total = np.zeros(self.orders.size)
        for curve in rdp_curves:
            total = total + np.asarray(curve, dtype=float)
        for r in runs:
            z = r.multipliers[np.isfinite(r.multipliers)]
            if z.size:
                total = total + rdp_subsampled_gaussian(
                    r.sampling_rate, z, self.orders, discrete=self.discrete or r.noise == "discrete"
                )
        return lambda delta: rdp_epsilon(total, self.orders, delta)

    def profile(self, steps, t_max=None, n_table=2049):
        """:func:`rdp_profile` of the steps' RDP curve (:meth:`rdp`): every real t, no table."""
        curve = self.rdp(steps)
        return lambda t: rdp_profile(t, curve, self.orders)


_EPS = float(np.finfo(float).eps)


def rdp_profile(t, rdp, orders):
    """Upper bound on the privacy profile at every real ``t`` of a mechanism whose Renyi
    divergences (both directions) are at most ``rdp`` at ``orders``:
    ``min_alpha exp((alpha - 1)(rho_alpha - t + log(1 - 1/alpha)) - log alpha)`` (the conversion
    of :func:`rdp_delta`, valid for every real t), and for t < 0 also ``1 - e^t + e^t`` times
    that bound at ``-t``; at most 1."""
    t = np.asarray(t, dtype=float)
    rdp = np.asarray(rdp, dtype=float).ravel()
    orders = np.asarray(orders, dtype=float).ravel()
    ok = np.isfinite(rdp)
    if not ok.any():
        return np.ones_like(t)
    rdp, orders = rdp[ok], orders[ok]
    if np.all(rdp == 0):  # nothing released
        return np.maximum(0.0, -np.expm1(np.minimum(t, 0.0))) * (1.0 + 4 * _EPS)
    am1 = orders - 1.0
    c = np.log1p(-1.0 / orders)
    log_a = np.log(orders)

    def direct(tt):
        tt = np.asarray(tt, dtype=float).ravel()
        out = np.empty(tt.shape)
        for s in range(0, tt.size, 2048):  # bounded memory: 2048 x orders at a time
            x = tt[s : s + 2048, None]
            e = am1 * (rdp - x + c) - log_a
            # the exponent's rounding: a few ulps of each of its parts
            e = e + 8.0 * _EPS * (am1 * (rdp + np.abs(x) + np.abs(c)) + log_a)
            with np.errstate(under="ignore", over="ignore"):
                out[s : s + 2048] = np.exp(np.minimum(np.min(e, axis=1), 0.0)) * (1 + 4 * _EPS)
        return np.minimum(out, 1.0)

    flat = t.ravel()
    out = direct(flat)
    neg = flat < 0
    if neg.any():
        out[neg] = np.minimum(out[neg], negative_side(flat[neg], direct))
    return np.minimum(out, 1.0).reshape(t.shape)

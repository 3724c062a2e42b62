"""Reference for tests only: the numba kernels that computed log A_alpha in
skdpgd.accounting.rdp before it moved to vectorised numpy (so that a first DP-SGD fit does not
compile them). Kept verbatim, with the constants they read, so the numpy version can be
checked against them."""

import math

import numba
import numpy as np

from skdpgd.accounting.rdp import _EPS, _LOG_2PI_HALF, _LOG_CUTOFF, _RESYNC, _ROUNDING_RTOL

njit = numba.njit


@njit
def _log_ndtr(x):
    """log Phi(x) for the standard normal cdf, accurate in both tails."""
    if x > 5.0:
        return math.log1p(-0.5 * math.erfc(x / math.sqrt(2.0)))
    if x > -30.0:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2.0)))
    # Asymptotic series: Phi(x) = phi(x)/(-x) * (1 - 1/x^2 + 3/x^4 - 15/x^6 + ...);
    # at x <= -30 ten terms are exact to ~1e-21.
    y = 1.0 / (x * x)
    term = 1.0
    acc = 1.0
    for n in range(1, 11):
        term *= -(2 * n - 1) * y
        acc += term
    return -0.5 * x * x - math.log(-x) - _LOG_2PI_HALF + math.log(acc)


@njit
def _one_minus_exp_neg(x):
    """1 - exp(-x) for x >= 0, rounded up to 1 where it is within 1e-16 of 1."""
    if x > 37.0:
        return 1.0
    return -math.expm1(-x)


@njit
def _f_int(lgc, off, k, a, v):
    # log of the k-th binomial term of A without the common factor (1-q)^alpha
    return lgc[off + k] + k * a + 0.5 * k * (k - 1.0) * v


@njit
def _d_int(lgc, off, k, a, v):
    # f(k+1) - f(k)
    return lgc[off + k + 1] - lgc[off + k] + a + k * v


@njit
def _first_nonpos(lgc, off, a, v, lo, hi):
    """First k in [lo, hi] with D(k) <= 0, for D non-increasing there; hi + 1 if none."""
    if _d_int(lgc, off, hi, a, v) > 0.0:
        return hi + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if _d_int(lgc, off, mid, a, v) <= 0.0:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit
def _sum_am1(lgc, off, alpha, lo, hi, a, v, big, ev, d1):
    """sum_{k=lo}^{hi} exp(f(k) - big) * (1 - exp(-k(k-1)v/2)): the terms of A - 1.

    A - 1 = sum_k C(alpha,k) q^k (1-q)^(alpha-k) (exp(k(k-1)v/2) - 1), because the binomial
    weights sum to 1; written this way A - 1 keeps full relative precision when it is tiny.
    Consecutive terms by multiplicative recurrences (no exp per term), restarted exactly
    every _RESYNC terms.
    """
    s = 0.0
    k = lo
    while k <= hi:
        lt = _f_int(lgc, off, k, a, v) - big
        if lt < -575.0:  # near the bottom of the double range: count it as exp(-575)
            s += math.exp(-575.0)
            k += 1
            continue
        stop = min(hi, k + _RESYNC - 1)
        t = math.exp(lt)
        c = _one_minus_exp_neg(0.5 * k * (k - 1.0) * v)  # 1 - exp(-M_k v)
        d = _one_minus_exp_neg(k * v)  # 1 - exp(-k v)
        x = a + k * v  # log(q/(1-q) e^{k v}), the ratio's growing factor
        rec = x > -600.0 and x + (stop - k) * v < 600.0
        w = math.exp(x) if rec else 0.0
        while True:
            s += t * c
            if k >= stop:
                k += 1
                break
            if rec:
                t *= (alpha - k) / (k + 1.0) * w
                w *= ev
            else:
                t = math.exp(_f_int(lgc, off, k + 1, a, v) - big)
            c = c * (1.0 - d) + d
            d = d * (1.0 - d1) + d1
            k += 1
            if t < 1e-250:  # restart exactly at k (never lose a term to underflow)
                break
    return s


@njit
def _log_a_int(alpha, lgc, off, a, l1q, v, ev, d1, log_d1):
    """Upper bound of log A_alpha for an integer order alpha >= 2 (0 < q < 1, 0 < v < inf).

    ``ev = exp(v)``, ``d1 = 1 - exp(-v)``, ``log_d1 = log(d1)`` (shared by all orders).
    """
    lgc_max = lgc[off + alpha // 2]
    # --- peaks of f (see module docstring) ---
    # D(k+1) - D(k) = c(k) + v, c(k) the second difference of log C(alpha, k): concave,
    # symmetric about (alpha - 2)/2. So D decreases, increases on [k_a, k_b + 1], decreases.
    kc = (alpha - 2) // 2
    p1 = -1
    p2 = -1
    if lgc[off + kc + 2] - 2.0 * lgc[off + kc + 1] + lgc[off + kc] + v <= 0.0:
        p1 = _first_nonpos(lgc, off, a, v, 0, alpha - 1)  # D non-increasing everywhere
    else:
        lo = 0
        hi = kc
        while lo < hi:  # k_a = first k with c(k) + v > 0 (c increasing on [0, kc])
            mid = (lo + hi) // 2
            if lgc[off + mid + 2] - 2.0 * lgc[off + mid + 1] + lgc[off + mid] + v > 0.0:
                hi = mid
            else:
                lo = mid + 1
        k_a = lo
        k_b = alpha - 2 - k_a
        p = _first_nonpos(lgc, off, a, v, 0, k_a)
        if p <= k_a:
            p1 = p
        if _d_int(lgc, off, k_b + 1, a, v) > 0.0:
            p2 = _first_nonpos(lgc, off, a, v, k_b + 1, alpha - 1)
        if p1 < 0:
            p1 = p2
            p2 = -1
    f1 = _f_int(lgc, off, p1, a, v)
    f2 = _f_int(lgc, off, p2, a, v) if p2 >= 0 else -np.inf
    big = max(f1, f2)
    # a lower bound of the largest term of A - 1: at k = 2 or at a peak
    g = _f_int(lgc, off, 2, a, v) + log_d1
    if p1 >= 2:
        g = max(g, f1 + math.log(_one_minus_exp_neg(0.5 * p1 * (p1 - 1.0) * v)))
    if p2 >= 2:
        g = max(g, f2 + math.log(_one_minus_exp_neg(0.5 * p2 * (p2 - 1.0) * v)))
    thr = g - _LOG_CUTOFF
    # --- ranges of terms >= thr around each peak; f_out: largest term left out ---
    f_out = -np.inf
    lo1 = p1
    hi1 = p1 - 1  # empty
    lo2 = 0
    hi2 = -1  # empty
    if p2 < 0:
        lo1 = p1
        while lo1 > 0:
            t = _f_int(lgc, off, lo1 - 1, a, v)
            if t < thr:
                f_out = max(f_out, t)
                break
            lo1 -= 1
        hi1 = p1
        while hi1 < alpha:
            t = _f_int(lgc, off, hi1 + 1, a, v)
            if t < thr:
                f_out = max(f_out, t)
                break
            hi1 += 1
    else:
        # two peaks p1 < p2: f rises to p1, falls to a valley, rises to p2, falls.
        if f1 >= thr:
            lo1 = p1
            while lo1 > 0:
                t = _f_int(lgc, off, lo1 - 1, a, v)
                if t < thr:
                    f_out = max(f_out, t)
                    break
                lo1 -= 1
            hi1 = p1
            while hi1 < p2 - 1:
                t = _f_int(lgc, off, hi1 + 1, a, v)
                if t < thr:
                    f_out = max(f_out, t)
                    break
                hi1 += 1
        else:
            f_out = max(f_out, f1)  # everything up to the valley is <= f(p1)
        if f2 >= thr:
            floor = hi1 + 1 if hi1 >= lo1 else 0
            lo2 = p2
            while lo2 - 1 >= floor:
                t = _f_int(lgc, off, lo2 - 1, a, v)
                if t < thr:
                    f_out = max(f_out, t)
                    break
                lo2 -= 1
            hi2 = p2
            while hi2 < alpha:
                t = _f_int(lgc, off, hi2 + 1, a, v)
                if t < thr:
                    f_out = max(f_out, t)
                    break
                hi2 += 1
        else:
            f_out = max(f_out, f2)
    s = 0.0
    n_in = 0
    if hi1 >= lo1:
        s += _sum_am1(lgc, off, alpha, lo1, hi1, a, v, big, ev, d1)
        n_in += hi1 - lo1 + 1
    if hi2 >= lo2:
        s += _sum_am1(lgc, off, alpha, lo2, hi2, a, v, big, ev, d1)
        n_in += hi2 - lo2 + 1
    n_out = alpha + 1 - n_in
    if n_out > 0:
        s += n_out * math.exp(f_out - big)  # every left-out term is <= exp(f_out)
    n_terms = n_in
    lam1 = alpha * l1q + big + math.log(s)  # log(A - 1)
    # log A = log(1 + exp(lam1)); frac = (A - 1)/A
    if lam1 > 0.0:
        e = math.exp(-lam1)
        log_a = lam1 + math.log1p(e)
        frac = 1.0 / (1.0 + e)
    else:
        e = math.exp(lam1)
        log_a = math.log1p(e)
        frac = e / (1.0 + e)
    # rounding allowance: the log-terms carry absolute errors of a few ulps of their parts,
    # i.e. relative errors of A - 1, which move log A by that much times (A - 1)/A
    err = 8.0 * _EPS * (2.0 + abs(big) + abs(alpha * l1q) + abs(lgc_max) + n_terms)
    return log_a * (1.0 + _ROUNDING_RTOL) + err * frac


@njit
def _frac_term(series, k, lck, alpha, log_q, l1q, a, v, sv, z0):
    """log |k-th term| of series 0 or 1 of A_alpha (Mironov et al. 2019, Sec. 3.3)."""
    if series == 0:
        return lck + alpha * l1q + k * a + 0.5 * k * (k - 1.0) * v + _log_ndtr((z0 - k) * sv)
    j = alpha - k
    return lck + alpha * log_q - k * a + 0.5 * j * (j - 1.0) * v + _log_ndtr((j - z0) * sv)


@njit
def _log_a_frac(alpha, log_q, l1q, v, cw, inv_d, cw_abs):
    """Upper bound of log A_alpha for a non-integer order alpha > 1 (0 < q < 1, 0 < v < inf).

    A = head - E0 - E1: ``head`` sums both series up to k = ceil(alpha) (positive terms);
    each tail is minus an alternating series with completely monotone magnitudes (a moment
    sequence: the product of |C(alpha, k)|, a Beta-integral moment sequence for k > alpha,
    and a moment of r(x)^k with 0 <= r <= 1), so E >= 0 and the Cohen-Rodriguez Villegas-Zagier
    sum gives E to relative 1/d; subtracting a *lower* bound of E keeps A an upper bound.
    """
    a = log_q - l1q
    sv = math.sqrt(v)
    z0 = -a / v + 0.5  # z^2 log((1 - q)/q) + 1/2
    n = int(math.ceil(alpha))
    terms = np.empty(2 * (n + 1))
    lc = 0.0  # log |C(alpha, k)|
    for k in range(n + 1):
        terms[2 * k] = _frac_term(0, k, lc, alpha, log_q, l1q, a, v, sv, z0)
        terms[2 * k + 1] = _frac_term(1, k, lc, alpha, log_q, l1q, a, v, sv, z0)
        lc += math.log(abs(alpha - k) / (k + 1.0))
    mp = np.max(terms)
    sp = 0.0
    wp = 0.0  # sum of |log-term| weighted by the term: the scale of their rounding errors
    for t in terms:
        e = math.exp(t - mp)
        sp += e
        wp += e * abs(t)
    lhead = mp + math.log(sp)
    # tail accuracy target: 1e-13 of A - 1 (floored at 1e-30 A); a tail whose first term is
    # below it is dropped (E >= 0: still an upper bound)
    lam1 = math.log(-math.expm1(-lhead)) if lhead > 0.0 else -745.0
    log_tol = lhead + max(lam1, -39.0) - 30.0
    e_sum = 0.0  # lower bound of (E0 + E1) / head
    n_terms = 2 * (n + 1)
    for series in range(2):
        k = n + 1
        lck = lc
        lb0 = _frac_term(series, k, lck, alpha, log_q, l1q, a, v, sv, z0)
        if lb0 < log_tol:
            continue
        # fewest terms with error bound E/d_n <= b0/d_n below the tolerance (d_n >= 5.8^n/2)
        nt = cw.shape[1]
        for nn in range(1, cw.shape[1] + 1):
            if lb0 - math.log(0.5) - nn * 1.7627 < log_tol:  # log(3 + sqrt 8) = 1.7627...
                nt = nn
                break
        acc = 0.0
        acc_err = 0.0
        for m in range(nt):
            lb = _frac_term(series, k, lck, alpha, log_q, l1q, a, v, sv, z0)
            e = math.exp(lb - lb0)
            acc += cw[nt, m] * e
            acc_err += abs(cw[nt, m]) * e * (2.0 + abs(lb) + abs(lb0))
            lck += math.log(abs(alpha - k) / (k + 1.0))
            k += 1
        n_terms += nt
        # |E - acc| <= E inv_d; rounding: a few ulps of each log-term and of the sum
        e_low = acc / (1.0 + inv_d[nt]) - 8.0 * _EPS * acc_err - 4.0 * nt * _EPS * cw_abs[nt]
        if e_low > 0.0:
            e_sum += math.exp(lb0 - lhead) * e_low
    if e_sum >= 1.0:  # cannot happen (A >= 1); stay an upper bound
        e_sum = 0.0
    log_a = lhead + math.log1p(-e_sum)
    # rounding allowance (absolute, on log A): a few ulps of each log-term (weighted by the
    # term) and of each addition, amplified by the cancellation head -> head (1 - e_sum)
    err = (8.0 * _EPS * (2.0 + wp / sp) + 4.0 * _EPS * n_terms) / (1.0 - e_sum)
    return log_a * (1.0 + _ROUNDING_RTOL) + err


@njit
def _log_a_grid(orders, is_int, lgc, offsets, log_q, l1q, v, cw, inv_d, cw_abs, out):
    """out[i, j] = upper bound of log A_{orders[i]} at 1/z^2 = v[j] (0 < q < 1, 0 < v < inf)."""
    a = log_q - l1q
    n_o = orders.shape[0]
    for j in range(v.shape[0]):
        vj = v[j]
        ev = math.exp(vj)
        d1 = -math.expm1(-vj)
        log_d1 = math.log(d1)
        for i in range(n_o):
            if is_int[i]:
                out[i, j] = _log_a_int(int(orders[i]), lgc, offsets[i], a, l1q, vj, ev, d1, log_d1)
            else:
                out[i, j] = _log_a_frac(orders[i], log_q, l1q, vj, cw, inv_d, cw_abs)

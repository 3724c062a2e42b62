"""Secure noise: a ChaCha20 random source and exact discrete Gaussian sampling on a lattice.

Plain mode draws its Gaussian noise from numpy's ``Generator`` in floating point. That is
fine for experiments, but a floating-point sampler is not an exact implementation of the
mechanism the accountant analyses (Mironov 2012 showed how the low bits of a floating-point
Laplace draw leak), and a PCG64 stream is predictable from its output. This module gives the
secure alternative, compiled with numba:

* a ChaCha20 stream keyed from the operating system (:func:`new_state`, :func:`next_u32`,
  :func:`next_u64`, :func:`uniform_int`, :func:`uniform_float`);
* exact samplers in integer arithmetic, after Canonne, Kamath and Steinke (2020), "The
  Discrete Gaussian for Differential Privacy", Algorithms 1-3 (:func:`bernoulli_exp_neg`,
  :func:`discrete_laplace`, :func:`discrete_gaussian`): no floating-point number takes
  part in any decision;
* the lattice release that replaces ``value + std * N(0, 1)`` (:func:`lattice_parameters`,
  :func:`release_value`, :func:`release`, :func:`ratio_for`, :func:`noise_factor`);
* one dispatch point for the kernels (:func:`noisy_value`, :func:`uniform`): the same
  compiled kernel draws from a numpy ``Generator`` (plain mode, bit for bit as before) or
  from a secure generator ``(state, ratio_array)`` (see :func:`secure_generator`).

Generator state
---------------
The state is one C-contiguous ``np.ndarray`` of ``STATE_SIZE = 31`` words of dtype uint32:

======== ================================================================================
words    meaning
======== ================================================================================
0:8      the 256-bit ChaCha20 key (little-endian words, as in RFC 8439)
8:10     the 64-bit block counter, low word first
10:12    the 64-bit nonce
12:28    the current 16-word output block
28       how many words of the output block are used (16: none left, refill first)
29       a reservoir of stream bits for small uniform draws (the low ones are next)
30       how many bits the reservoir holds
======== ================================================================================

This is the original ChaCha20 of Bernstein (2008): the input block is the four constants,
the key, then words 8:12 of the state (64-bit counter, 64-bit nonce). RFC 8439 runs the
same block function on the same 16 input words, reading words 12-15 as a 32-bit counter and
a 96-bit nonce; only the reading differs, so RFC 8439's test vectors apply unchanged (put
its counter in word 8 and its nonce in words 9:12, see :func:`chacha20_block`). The 64-bit
counter never wraps (2^64 blocks of 64 bytes).

:func:`new_state` draws the key and the nonce from ``os.urandom``. There is no seed
argument, on purpose: a secure state can never be reproduced, and two states never share a
stream. The state *is* the key: whoever reads it can predict the following draws and
recompute the earlier ones of the current block, so it must stay private, and it must not be
copied into two workers (a ``fork`` or a pickled copy repeats the stream): give each worker
its own :func:`new_state`. Numba code updates the array in place and is not thread safe:
one state per thread.

Exactness
---------
Every decision compares integers drawn by rejection from the stream: a uniform draw on
{0, ..., n-1} takes the smallest power-of-two mask above n - 1 and redraws values >= n, and
a Bernoulli(p/q) is ``uniform_int(q) < p``. The samplers are therefore exact, with one
documented exception: a discrete Laplace draw whose geometric part reaches 2^30 (an event of
probability exp(-2^30)) is redrawn so that no int64 overflows. The sampler's running time
depends on its random draws only, never on the value being released: the samplers never
see it.

Privacy
-------
What is proven here, per release: the lattice release of :func:`release` (and of
:func:`noisy_value` on a secure generator) is ``rho``-zCDP with ``rho <= 1 / (2 z^2)``,
``z = std / sens``, by CKS Theorem 14 (see :func:`lattice_parameters`); that is the Renyi
curve ``alpha * rho`` of the calibrated continuous Gaussian, so a Renyi or zCDP composition
of unsampled releases carries over unchanged. Not proven here: that accountants using the
continuous Gaussian's exact privacy profile (privacy-loss distributions, the analytic
Gaussian calibration) or its exact Poisson-subsampled Renyi divergence apply as they stand
to the discrete Gaussian; a secure mode that relies on them needs its own argument.
"""

import math
from os import urandom
from fractions import Fraction

import numpy as np
from numba import types
from numba.extending import overload

from .jit import njit

#: Words in a generator state (see the module docstring for the layout).
STATE_SIZE = 31

_KEY, _COUNTER, _NONCE, _BLOCK, _USED, _BITS, _NBITS = 0, 8, 10, 12, 28, 29, 30
# Uniform draws on at most 2^_SMALL_BITS values take their bits from the reservoir (a 32-bit
# word of the stream serves several of them: the exact samplers make many such draws).
_SMALL_BITS = 8

_M32 = np.uint64(0xFFFFFFFF)
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U2 = np.uint64(2)
_R16 = np.uint64(16)
_R12 = np.uint64(12)
_R8 = np.uint64(8)
_R7 = np.uint64(7)
_S32 = np.uint64(32)
_S11 = np.uint64(11)
# "expand 32-byte k", the ChaCha constants.
_C0 = np.uint64(0x61707865)
_C1 = np.uint64(0x3320646E)
_C2 = np.uint64(0x79622D32)
_C3 = np.uint64(0x6B206574)

_TWO_M53 = 1.0 / 9007199254740992.0  # 2^-53
_MAX_N = 2**62  # largest n for uniform_int, largest den for bernoulli_exp_neg
_MAX_TM = 2**31  # largest t and m of the discrete Gaussian (and t of the discrete Laplace)
# The geometric part V of a discrete Laplace draw stays below this cap (else it is redrawn):
# X = U + t V < t (V + 1) <= 2^31 * 2^30 = 2^61.
_V_CAP = 2**30

# Lattice release.
_GAMMA_SHIFT = 24  # gamma = 2^(floor(log2 std) - 24): std / gamma lies in [2^24, 2^25)
_STD_MIN = 2.0**-1000  # gamma >= 2^-1024 stays representable (subnormal floats reach 2^-1074)
_STD_MAX = 2.0**980  # gamma * 2^63 <= std * 2^39 < 2^1024: an output is never infinite
_SIGMA_MAX = 2.0**31 - 1.0  # needed sigma <= this keeps t, m <= 2^31
_UP = 1.0 + 2.0**-50  # a factor that rounds a float step upward (see lattice_parameters)
_Q_MAX = 2.0**62  # the clamp on a lattice index (a float that converts to int64 exactly)
#: Exact (integer) statistics keep gamma <= 1 up to this std; above it they are rounded.
EXACT_STD_MAX = 2.0**30


# --------------------------------------------------------------------------------------
# ChaCha20
# --------------------------------------------------------------------------------------


@njit(inline="always")
def _rotl(x, c):
    """Rotate the 32-bit word ``x`` (held in a uint64) left by ``c`` bits."""
    return ((x << c) | (x >> (_S32 - c))) & _M32


@njit(inline="always")
def _quarter(a, b, c, d):
    """The ChaCha quarter round on four 32-bit words held in uint64 (sums masked to 32 bits:
    numba widens uint32 arithmetic to uint64, so wrap-around is done by the mask)."""
    a = (a + b) & _M32
    d = _rotl(d ^ a, _R16)
    c = (c + d) & _M32
    b = _rotl(b ^ c, _R12)
    a = (a + b) & _M32
    d = _rotl(d ^ a, _R8)
    c = (c + d) & _M32
    b = _rotl(b ^ c, _R7)
    return a, b, c, d


@njit(inline="always")
def _input_word(state, i):
    """Word ``i`` of the ChaCha20 input block: 4 constants, then state words 0:12."""
    if i == 0:
        return _C0
    if i == 1:
        return _C1
    if i == 2:
        return _C2
    if i == 3:
        return _C3
    return np.uint64(state[i - 4])


@njit
def _refill(state):
    """Write the block for the current counter into words 12:28, advance the counter (with
    carry into its high word) and mark the block unused."""
    x0, x1, x2, x3 = _C0, _C1, _C2, _C3
    x4 = np.uint64(state[0])
    x5 = np.uint64(state[1])
    x6 = np.uint64(state[2])
    x7 = np.uint64(state[3])
    x8 = np.uint64(state[4])
    x9 = np.uint64(state[5])
    x10 = np.uint64(state[6])
    x11 = np.uint64(state[7])
    x12 = np.uint64(state[8])
    x13 = np.uint64(state[9])
    x14 = np.uint64(state[10])
    x15 = np.uint64(state[11])
    for _ in range(10):  # 20 rounds: a column round then a diagonal round, 10 times
        x0, x4, x8, x12 = _quarter(x0, x4, x8, x12)
        x1, x5, x9, x13 = _quarter(x1, x5, x9, x13)
        x2, x6, x10, x14 = _quarter(x2, x6, x10, x14)
        x3, x7, x11, x15 = _quarter(x3, x7, x11, x15)
        x0, x5, x10, x15 = _quarter(x0, x5, x10, x15)
        x1, x6, x11, x12 = _quarter(x1, x6, x11, x12)
        x2, x7, x8, x13 = _quarter(x2, x7, x8, x13)
        x3, x4, x9, x14 = _quarter(x3, x4, x9, x14)
    mixed = (x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15)
    for i in range(16):
        # Read the input word before the block overwrites anything it depends on: input
        # words come from state[0:12] only, the output goes to state[12:28].
        state[_BLOCK + i] = np.uint32((mixed[i] + _input_word(state, i)) & _M32)
    low = np.uint64(state[_COUNTER]) + _U1
    if low > _M32:
        state[_COUNTER] = np.uint32(0)
        state[_COUNTER + 1] = np.uint32((np.uint64(state[_COUNTER + 1]) + _U1) & _M32)
    else:
        state[_COUNTER] = np.uint32(low)
    state[_USED] = np.uint32(0)


@njit
def chacha20_block(key, counter_nonce):
    """The ChaCha20 block function: 16 uint32 output words.

    Parameters
    ----------
    key : ndarray of uint32, shape (8,)
        The 256-bit key as little-endian words.
    counter_nonce : ndarray of uint32, shape (4,)
        Input words 12-15: the original variant's 64-bit counter (low word first) and
        64-bit nonce, or RFC 8439's 32-bit counter and 96-bit nonce (the same words).

    Returns
    -------
    ndarray of uint32, shape (16,)
        The block (serialise each word little-endian for the key stream bytes).
    """
    state = np.zeros(STATE_SIZE, dtype=np.uint32)
    for i in range(8):
        state[_KEY + i] = key[i]
    for i in range(4):
        state[_COUNTER + i] = counter_nonce[i]
    _refill(state)
    return state[_BLOCK : _BLOCK + 16].copy()


def new_state():
    """A fresh generator state keyed from the operating system (``os.urandom``).

    Returns
    -------
    ndarray of uint32, shape (STATE_SIZE,)
        Key from 32 random bytes, nonce from 8 more, counter 0, no block drawn yet. There is
        no seed: a secure state can never be reproduced.
    """
    state = np.zeros(STATE_SIZE, dtype=np.uint32)
    state[_KEY : _KEY + 8] = np.frombuffer(urandom(32), dtype="<u4")
    state[_NONCE : _NONCE + 2] = np.frombuffer(urandom(8), dtype="<u4")
    state[_USED] = 16
    return state


def _check_state(state):
    if not (
        isinstance(state, np.ndarray)
        and state.dtype == np.uint32
        and state.shape == (STATE_SIZE,)
        and state.flags.c_contiguous
        and state.flags.writeable
    ):
        raise ValueError(
            f"a secure generator state is a writeable uint32 array of {STATE_SIZE} words "
            "made by new_state()"
        )


@njit(inline="always")
def next_u32(state):
    """The next 32-bit word of the stream (uint32)."""
    used = np.int64(state[_USED])
    if used >= 16:
        _refill(state)
        used = 0
    word = state[_BLOCK + used]
    state[_USED] = np.uint32(used + 1)
    return word


@njit(inline="always")
def next_u64(state):
    """The next 64 bits of the stream (uint64): two words, the first one high."""
    high = np.uint64(next_u32(state))
    return (high << _S32) | np.uint64(next_u32(state))


@njit(inline="always")
def _reservoir_bits(state, k):
    """``k`` fresh uniform bits (1 <= k <= 8) as a uint64: the reservoir's low bits, refilled
    with the next stream word when fewer than ``k`` remain (the leftover bits are dropped:
    every bit of the stream is used at most once, so the draws stay independent)."""
    have = np.int64(state[_NBITS])
    if have < k:
        state[_BITS] = next_u32(state)
        have = 32
    bits = np.uint64(state[_BITS])
    out = bits & ((_U1 << np.uint64(k)) - _U1)
    state[_BITS] = np.uint32(bits >> np.uint64(k))
    state[_NBITS] = np.uint32(have - k)
    return out


@njit(inline="always")
def _below(state, n):
    """Exactly uniform on {0, ..., n-1} for a uint64 ``1 <= n <= 2^63`` (uint64 result).

    Rejection on the smallest mask ``2^k - 1 >= n - 1``: each try succeeds with probability
    above 1/2. Masks of at most 8 bits take their bits from the reservoir, masks below 2^32
    draw one word per try, larger ones two.
    """
    if n <= _U1:
        return _U0
    mask = n - _U1
    mask |= mask >> _U1
    mask |= mask >> _U2
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> _R16
    mask |= mask >> _S32
    if mask < (_U1 << np.uint64(_SMALL_BITS)):
        k = 0
        mm = mask
        while mm != _U0:
            k += 1
            mm >>= _U1
        while True:
            x = _reservoir_bits(state, k)
            if x < n:
                return x
    if mask <= _M32:
        while True:
            x = np.uint64(next_u32(state)) & mask
            if x < n:
                return x
    while True:
        x = next_u64(state) & mask
        if x < n:
            return x


@njit
def uniform_int(state, n):
    """Exactly uniform on {0, ..., n-1} (int64), for an integer ``1 <= n <= 2^62``."""
    if n < 1 or n > _MAX_N:
        raise ValueError("uniform_int needs 1 <= n <= 2^62")
    return np.int64(_below(state, np.uint64(n)))


@njit
def uniform_float(state):
    """``k / 2^53`` with ``k`` uniform on 53 bits: exactly the uniform distribution on the
    dyadic grid of step 2^-53 in [0, 1) (every value is a float64, no rounding)."""
    return np.float64(next_u64(state) >> _S11) * _TWO_M53


# --------------------------------------------------------------------------------------
# Exact Bernoulli, discrete Laplace and discrete Gaussian samplers (uint64 inside)
# --------------------------------------------------------------------------------------


@njit(inline="always")
def _bern_exp_one(state):
    """True with probability exp(-1): CKS Algorithm 1 at gamma = 1 (each step's
    Bernoulli(1/K) is ``uniform(K) == 0``; at K = 1 it succeeds without a draw)."""
    k = _U1
    while _below(state, k) == _U0:
        k += _U1
    return (k & _U1) == _U1


@njit(inline="always")
def _bern_exp_frac(state, r, den):
    """True with probability exp(-r/den) for uint64 ``0 <= r <= den``, ``1 <= den <= 2^63``.

    CKS Algorithm 1: K = 1; while Bernoulli(gamma/K): K += 1; return K odd. The draw of
    Bernoulli(r / (den K)) is Bernoulli(r/den) and Bernoulli(1/K), two independent draws, so
    ``den * K`` is never formed. ``r = 0`` is exp(0) = 1: True without a draw.
    """
    if r == _U0:
        return True
    k = _U1
    while True:
        if _below(state, den) >= r:
            break
        if _below(state, k) != _U0:
            break
        k += _U1
    return (k & _U1) == _U1


@njit
def _bern_exp(state, num, den):
    """True with probability exp(-num/den) for uint64 ``num`` and ``1 <= den <= 2^63``:
    floor(num/den) independent exp(-1) trials (stopping at the first failure, so the
    expected work is bounded whatever the quotient), then the remainder."""
    q = num // den
    r = num - q * den
    i = _U0
    while i < q:
        if not _bern_exp_one(state):
            return False
        i += _U1
    return _bern_exp_frac(state, r, den)


@njit
def _bern_exp_product(state, x, y):
    """True with probability exp(-x*y) for uint64 ``x, y < 2^63`` without forming ``x*y``:
    x*y exp(-1) trials in two nested counts, stopping at the first failure."""
    if x == _U0 or y == _U0:
        return True
    i = _U0
    while i < x:
        j = _U0
        while j < y:
            if not _bern_exp_one(state):
                return False
            j += _U1
        i += _U1
    return True


@njit
def bernoulli_exp_neg(state, num, den):
    """True with probability exactly exp(-num/den).

    Parameters
    ----------
    state : ndarray of uint32
        A generator state (:func:`new_state`), advanced in place.
    num : int
        ``num >= 0`` (int64).
    den : int
        ``1 <= den <= 2^62``.

    Notes
    -----
    CKS Algorithm 1: floor(num/den) Bernoulli(exp(-1)) trials that must all succeed, then
    Bernoulli(exp(-r/den)) for the remainder r by the alternating-series loop.
    """
    if num < 0 or den < 1 or den > _MAX_N:
        raise ValueError("bernoulli_exp_neg needs num >= 0 and 1 <= den <= 2^62")
    return _bern_exp(state, np.uint64(num), np.uint64(den))


@njit
def _discrete_laplace(state, t):
    """Discrete Laplace of scale ``t`` (uint64, 1 <= t <= 2^31) as int64 (CKS Algorithm 2
    with s = 1); |result| < 2^61."""
    while True:
        u = _below(state, t)
        if not _bern_exp_frac(state, u, t):
            continue
        v = 0
        capped = False
        while _bern_exp_one(state):
            v += 1
            if v >= _V_CAP:  # probability exp(-2^30): redraw rather than overflow
                capped = True
                break
        if capped:
            continue
        x = np.int64(u) + np.int64(t) * v  # < t (v + 1) <= 2^31 * 2^30
        negative = _below(state, _U2) == _U1
        if negative and x == 0:
            continue
        return -x if negative else x


@njit
def discrete_laplace(state, t):
    """An exact draw with P(Y = y) proportional to exp(-|y| / t), y in Z.

    Parameters
    ----------
    state : ndarray of uint32
        A generator state, advanced in place.
    t : int
        The scale, ``1 <= t <= 2^31``.

    Notes
    -----
    CKS Algorithm 2: U uniform on {0, ..., t-1} kept with probability exp(-U/t); V the
    number of exp(-1) successes before the first failure; X = U + t V; a fair sign, the
    negative zero rejected. (A V reaching 2^30, probability exp(-2^30), is redrawn so that
    no int64 overflows.)
    """
    if t < 1 or t > _MAX_TM:
        raise ValueError("discrete_laplace needs 1 <= t <= 2^31")
    return _discrete_laplace(state, np.uint64(t))


@njit
def _discrete_gaussian(state, t, m):
    """See :func:`discrete_gaussian`; ``t`` and ``m`` are uint64 in [1, 2^31]."""
    two_t = _U2 * t
    two_tm = two_t * m  # <= 2^63: fits a uint64
    m_signed = np.int64(m)
    while True:
        y = _discrete_laplace(state, t)  # |y| < 2^61
        d = abs(y) - m_signed
        w = np.uint64(d if d >= 0 else -d)  # w = | |y| - m | < 2^61 + 2^31 < 2^62
        # w^2 / (2tm) with w = a m + b (0 <= b < m) is
        #   b^2 / (2tm) + a b / t + a^2 m / (2t),
        # and with c = a m = c1 (2t) + c0 and a = a1 (2t) + a0 (0 <= c0, a0 < 2t), the last
        # term a c / (2t) = a c1 + a1 c0 + a0 c0 / (2t). Every product formed fits a uint64:
        #   b^2 < m^2 <= 2^62 and 2tm <= 2^63;   a b <= a (m - 1) < a m <= w < 2^62;
        #   c = a m <= w < 2^62;   a0 c0 < (2t)^2 <= 2^64 (strictly below 2^64).
        # The products a c1 and a1 c0 may not fit: they are counts of exp(-1) trials, run in
        # two nested loops that stop at the first failure.
        a = w // m
        b = w - a * m
        c = a * m
        c1 = c // two_t
        c0 = c - c1 * two_t
        a1 = a // two_t
        a0 = a - a1 * two_t
        if not _bern_exp(state, b * b, two_tm):
            continue
        if not _bern_exp(state, a * b, t):
            continue
        if not _bern_exp_product(state, a, c1):
            continue
        if not _bern_exp_product(state, a1, c0):
            continue
        if not _bern_exp(state, a0 * c0, two_t):
            continue
        return y


@njit
def discrete_gaussian(state, t, m):
    """An exact draw from the discrete Gaussian N_Z(0, sigma^2) with sigma^2 = t * m.

    P(Z = z) is proportional to exp(-z^2 / (2 sigma^2)) on the integers.

    Parameters
    ----------
    state : ndarray of uint32
        A generator state, advanced in place.
    t, m : int
        ``1 <= t, m <= 2^31`` and ``m <= 16 t``. The Laplace proposal has scale ``t``; for a
        large sigma a proposal is accepted with probability about
        ``sqrt(pi x / 2) exp(-x / 2)``, ``x = m / t``: 0.76 at ``t = m`` (take
        ``t = ceil(sigma), m = ceil(sigma^2 / t)``), 0.002 at ``m = 16 t`` (beyond, the
        loop would practically never end, so it raises), and about ``sqrt(m / t)`` when
        ``t`` is much larger than ``m`` (slow, but it ends).

    Notes
    -----
    CKS Algorithm 3 with an integer sigma^2 / t = m: Y ~ DLap(t), accepted with probability
    exp(-(|Y| - m)^2 / (2 t m)). Correct for any t > 0: the proposal times the acceptance is
    exp(-|y|/t - (y^2 - 2|y| m + m^2) / (2tm)) = exp(-y^2 / (2tm)) * exp(-m / (2t)), and the
    last factor does not depend on y. The exponent w^2 / (2tm), w = ||Y| - m|, is split into
    integer-ratio parts whose exp(-.) Bernoullis are drawn independently and must all
    succeed, so that no product overflows (see the comments in the code). The running time
    depends on the random draws only: the sampler never sees the value being released.
    """
    if t < 1 or t > _MAX_TM or m < 1 or m > _MAX_TM:
        raise ValueError("discrete_gaussian needs 1 <= t, m <= 2^31")
    if m > 16 * t:
        raise ValueError("discrete_gaussian needs m <= 16 t (take t close to sigma)")
    return _discrete_gaussian(state, np.uint64(t), np.uint64(m))


# --------------------------------------------------------------------------------------
# Lattice release
# --------------------------------------------------------------------------------------


@njit
def lattice_parameters(std, ratio, exact):
    """The lattice step and the discrete Gaussian for a secure release of noise ``std``.

    Parameters
    ----------
    std : float
        The calibrated noise standard deviation (``std = z * sens``), in [2^-1000, 2^980].
    ratio : float
        ``sqrt(dim) / sens`` rounded up (:func:`ratio_for`); 0 for an exact statistic.
    exact : bool
        The statistic is integer-valued: gamma is capped at 1 so nothing is rounded.

    Returns
    -------
    gamma : float
        ``2^(floor(log2 std) - 24)`` (capped at 1 when exact): a power of two.
    t, m : int
        The discrete Gaussian's parameters, ``t * m >= sigma_int^2`` with
        ``sigma_int = std / gamma + std * ratio``.

    Notes
    -----
    Two neighbours' lattice indices ``rint(v / gamma)`` differ by at most
    ``sens / gamma + sqrt(dim)`` in L2 (the scaling is exact and each coordinate's rounding
    error lies in [-1/2, 1/2]; the clamp of :func:`release_value` is 1-Lipschitz). With
    ``sigma_int >= z (sens / gamma + sqrt(dim))`` the multivariate discrete Gaussian is
    ``rho``-zCDP with ``rho <= 1 / (2 z^2)`` (CKS Theorem 14), the continuous release's value.

    Every float step is rounded upward: with u = 2^-53 the unit roundoff, each computed
    quantity is at least the exact one times (1 - u)^3, and the factor (1 + 2^-50) applied
    before each ceil more than makes up for it, since (1 - u)^3 (1 + 2^-50) > 1.
    """
    if not (std >= _STD_MIN and std <= _STD_MAX):
        raise ValueError("the secure release needs 2^-1000 <= std <= 2^980")
    if not (ratio >= 0.0 and ratio <= math.inf):
        raise ValueError("the secure release needs ratio >= 0")
    exponent = math.frexp(std)[1]  # std = f 2^exponent, f in [1/2, 1)
    shift = np.int64(exponent) - 1 - _GAMMA_SHIFT
    if exact and shift > 0:
        shift = 0
    gamma = math.ldexp(1.0, shift)
    needed = (std / gamma + std * ratio) * _UP  # std / gamma is exact (power-of-two scaling)
    if not needed <= _SIGMA_MAX:
        raise ValueError(
            "the secure release needs std * sqrt(dim) / sens below about 2^31 (and std "
            "below 2^31 for an exact statistic)"
        )
    t = math.ceil(needed)
    m = math.ceil(needed * needed / t * _UP)
    return gamma, np.int64(t), np.int64(m)


@njit
def _lattice_index(value, gamma):
    """``rint(value / gamma)`` clamped to |q| <= 2^62 (a float holding an integer; NaN
    stays NaN). Dividing by a power of two is exact (an overflow to infinity is clamped), so
    the rounding error is at most 1/2; the clamp is 1-Lipschitz per coordinate, so it cannot
    raise the sensitivity. It acts only on |value| > 2^62 gamma (at least 2^32 std)."""
    q = np.rint(value / gamma)
    if q > _Q_MAX:
        q = _Q_MAX
    elif q < -_Q_MAX:
        q = -_Q_MAX
    return q


@njit
def _release_on_lattice(value, gamma, t, m, state):
    """``gamma * (q + Z)``, q the lattice index of ``value`` and Z ~ N_Z(0, t m)."""
    q = _lattice_index(value, gamma)
    z = _discrete_gaussian(state, np.uint64(t), np.uint64(m))  # drawn whatever the value
    if q != q:  # NaN in, NaN out, as in plain mode (callers release finite statistics)
        return q
    # |q| <= 2^62 and |z| < 2^61 + 2^31: the int64 sum q + z is exact and cannot overflow.
    # It is the private release; what follows is post-processing. Its float64 conversion is
    # exact while |q + z| <= 2^53, i.e. unless |value| comes within a few noise deviations
    # of 2^53 gamma (at least 2^23 std) or beyond; there float64 cannot hold every lattice
    # point anyway (its spacing exceeds gamma), and the conversion rounds to the nearest
    # float. Times the power of two gamma the result is exact and finite
    # (gamma * 2^63 <= std * 2^39 < 2^1024 for std <= 2^980).
    s = np.int64(q) + z
    return gamma * np.float64(s)


@njit
def release_value(value, std, ratio, exact, state):
    """One coordinate of a secure Gaussian release: ``gamma * (rint(value / gamma) + Z)``.

    Parameters
    ----------
    value : float
        The coordinate of the statistic.
    std : float
        The calibrated noise standard deviation; 0 returns ``value`` unchanged (no noise,
        epsilon infinite, no draw).
    ratio : float
        ``sqrt(dim) / sens`` rounded up for the whole vector (:func:`ratio_for`).
    exact : bool
        The statistic is integer-valued (see :func:`lattice_parameters`).
    state : ndarray of uint32
        A generator state, advanced in place.

    Returns
    -------
    float
        A multiple of gamma. The lattice index is clamped to |q| <= 2^62 (1-Lipschitz, so
        the sensitivity bound holds) and ``q + Z`` is formed exactly in int64, then
        converted to float64 (exact while ``|q + Z| <= 2^53``, see the code).
    """
    if std == 0.0:
        return value
    gamma, t, m = lattice_parameters(std, ratio, exact)
    return _release_on_lattice(value, gamma, t, m, state)


@njit
def _release_array(values, std, ratio, exact, state):
    """:func:`release_value` on every entry of the 1-D array ``values``, in place."""
    gamma, t, m = lattice_parameters(std, ratio, exact)
    for i in range(values.shape[0]):
        values[i] = _release_on_lattice(values[i], gamma, t, m, state)


def ratio_for(sens, dim, exact=False):
    """``sqrt(dim) / sens`` rounded up to a float (0.0 for an exact statistic).

    Parameters
    ----------
    sens : float
        The statistic's L2 sensitivity, > 0.
    dim : int
        The number of coordinates rounded onto the lattice.
    exact : bool, default=False
        Integer-valued statistic: nothing is rounded, the ratio is 0.

    Returns
    -------
    float
        ``r`` with ``r * sens >= sqrt(dim)`` checked in exact rational arithmetic.
    """
    sens = float(sens)
    if not (math.isfinite(sens) and sens > 0.0):
        raise ValueError(f"sens must be a positive finite number, got {sens!r}")
    dim = int(dim)
    if dim < 0:
        raise ValueError(f"dim must be >= 0, got {dim}")
    if exact or dim == 0:
        return 0.0
    r = math.sqrt(dim) / sens
    while math.isfinite(r) and (Fraction(r) * Fraction(sens)) ** 2 < dim:
        r = math.nextafter(r, math.inf)
    return r


def _resolve(std, sens, dim, exact):
    """Validate, decide whether an exact statistic stays exact, and return
    ``(std, ratio, exact)`` as the compiled functions take them."""
    std = float(std)
    if not (math.isfinite(std) and std >= 0.0):
        raise ValueError(f"std must be a finite number >= 0, got {std!r}")
    exact = bool(exact) and std < EXACT_STD_MAX
    ratio = ratio_for(sens, dim, exact)
    if std > 0.0:
        lattice_parameters(std, ratio, exact)  # raises ValueError out of range
    return std, ratio, exact


def release(values, std, sens, state, exact=False):
    """A secure Gaussian release of ``values`` on the lattice ``gamma * Z``.

    Parameters
    ----------
    values : array-like of float
        The statistic, any shape; one lattice and one discrete Gaussian for all of it
        (``dim = values.size``).
    std : float
        The calibrated noise standard deviation, ``z * sens``; 0 returns a copy unchanged.
    sens : float
        The statistic's L2 sensitivity (over all its coordinates).
    state : ndarray of uint32
        A generator state (:func:`new_state`), advanced in place.
    exact : bool, default=False
        The statistic is integer-valued (counts): gamma <= 1 divides every integer, so
        nothing is rounded and no sqrt(dim) is added to the noise. Checked: non-integer
        values raise. For ``std >= EXACT_STD_MAX`` (2^30) the values are rounded like any
        other statistic (and the noise pays for it).

    Returns
    -------
    ndarray of float64
        A new array of the shape of ``values``; every entry a multiple of gamma.

    Notes
    -----
    **Privacy.** The release is ``gamma * (q + Z)``, q the clamped lattice indices and Z a
    vector of independent discrete Gaussians of variance ``t * m >= sigma_int^2``:
    ``rho``-zCDP with ``rho <= 1 / (2 z^2)``, ``z = std / sens`` (see
    :func:`lattice_parameters`). The actual noise standard deviation exceeds ``std`` by
    :func:`noise_factor`.
    """
    _check_state(state)
    out = np.array(values, dtype=np.float64, order="C", copy=True)
    std, ratio, exact = _resolve(std, sens, out.size, exact)
    if std == 0.0:
        return out
    if exact and not np.array_equal(np.rint(out), out):
        raise ValueError("exact=True needs integer-valued values")
    _release_array(out.reshape(-1), std, ratio, exact, state)
    return out


def noise_factor(std, sens, dim, exact=False):
    """The secure release's noise standard deviation over the calibrated ``std``.

    ``sqrt(t * m) * gamma / std`` for the parameters :func:`release` would use: at least 1,
    and close to it (below ``1 + 1e-3`` while ``z sqrt(dim) <= 1000``, ``z = std / sens``).
    1.0 when ``std`` is 0 (no noise either way).
    """
    std, ratio, exact = _resolve(std, sens, dim, exact)
    if std == 0.0:
        return 1.0
    gamma, t, m = lattice_parameters(std, ratio, exact)
    return math.sqrt(int(t) * int(m)) * gamma / std


# --------------------------------------------------------------------------------------
# One dispatch point for the compiled kernels
# --------------------------------------------------------------------------------------


def secure_generator(ratio=0.0):
    """The secure "gen" that kernels accept in place of a numpy ``Generator``.

    A tuple ``(state, ratio_array)``: a fresh :func:`new_state` and a float64 array of length
    1 holding ``ratio`` (:func:`ratio_for` of the released vector's sensitivity and size).
    A tuple of arrays keeps numba's on-disk cache usable.
    """
    return new_state(), np.array([float(ratio)], dtype=np.float64)


def _is_secure_type(gen):
    """Whether a numba type is the secure generator's ``(uint32[:], float64[:])`` tuple."""
    if not (isinstance(gen, types.BaseTuple) and len(gen.types) == 2):
        return False
    state, ratio = gen.types
    return (
        isinstance(state, types.Array)
        and state.ndim == 1
        and state.dtype == types.uint32
        and isinstance(ratio, types.Array)
        and ratio.ndim == 1
        and ratio.dtype == types.float64
    )


def noisy_value(value, std, gen):
    """``value`` plus the noise of standard deviation ``std`` drawn from ``gen``.

    Callable from numba code, where the choice is made at compile time from the type of
    ``gen``: a numpy ``Generator`` gives ``value + std * gen.standard_normal()`` (no draw
    when ``std`` is 0), the plain mode's arithmetic bit for bit; a secure generator
    ``(state, ratio_array)`` (:func:`secure_generator`) gives
    ``release_value(value, std, ratio_array[0], False, state)``. From Python it does the
    same.
    """
    if isinstance(gen, np.random.Generator):
        return value + std * gen.standard_normal() if std > 0.0 else value
    state, ratio = gen
    return release_value(value, std, ratio[0], False, state)


def uniform(gen):
    """A uniform draw in [0, 1): ``gen.random()`` for a numpy ``Generator``,
    :func:`uniform_float` for a secure generator (see :func:`noisy_value`)."""
    if isinstance(gen, np.random.Generator):
        return gen.random()
    return uniform_float(gen[0])


@overload(noisy_value)
def _noisy_value_overload(value, std, gen):
    if isinstance(gen, types.NumPyRandomGeneratorType):

        def plain(value, std, gen):
            if std > 0.0:
                return value + std * gen.standard_normal()
            return value

        return plain
    if _is_secure_type(gen):

        def secure(value, std, gen):
            return release_value(value, std, gen[1][0], False, gen[0])

        return secure
    return None


@overload(uniform)
def _uniform_overload(gen):
    if isinstance(gen, types.NumPyRandomGeneratorType):
        return lambda gen: gen.random()
    if _is_secure_type(gen):
        return lambda gen: uniform_float(gen[0])
    return None

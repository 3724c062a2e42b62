"""The secure random source and the exact samplers: ChaCha20 against RFC 8439, uniformity,
the exact Bernoulli / discrete Laplace / discrete Gaussian distributions, the lattice release
and the compile-time dispatch between numpy's Generator and the secure generator.

The secure stream cannot be seeded, so the statistical checks use thresholds whose false
alarm probability is about 1e-6 each.
"""

import math
import os
import subprocess
import sys
import textwrap
import time
from fractions import Fraction

import numba
import numpy as np
import pytest
from scipy import stats

from skdpgd._compute import secure_random as S

P_MIN = 1e-6  # chi-square p-values below this fail


@numba.njit(cache=True)
def _draw_u32(state, size):
    out = np.empty(size, np.int64)
    for i in range(size):
        out[i] = S.next_u32(state)
    return out


@numba.njit(cache=True)
def _draw_int(state, n, size):
    out = np.empty(size, np.int64)
    for i in range(size):
        out[i] = S.uniform_int(state, n)
    return out


@numba.njit(cache=True)
def _draw_float(state, size):
    out = np.empty(size, np.float64)
    for i in range(size):
        out[i] = S.uniform_float(state)
    return out


@numba.njit(cache=True)
def _count_bern(state, num, den, size):
    hits = 0
    for _ in range(size):
        if S.bernoulli_exp_neg(state, num, den):
            hits += 1
    return hits


@numba.njit(cache=True)
def _draw_laplace(state, t, size):
    out = np.empty(size, np.int64)
    for i in range(size):
        out[i] = S.discrete_laplace(state, t)
    return out


@numba.njit(cache=True)
def _draw_gauss(state, t, m, size):
    out = np.empty(size, np.int64)
    for i in range(size):
        out[i] = S.discrete_gaussian(state, t, m)
    return out


@numba.njit(cache=True)
def _draw_normal(gen, size):
    out = np.empty(size, np.float64)
    for i in range(size):
        out[i] = gen.standard_normal()
    return out


@numba.njit(cache=True)
def _noisy_kernel(values, std, gen):
    out = np.empty_like(values)
    for i in range(values.shape[0]):
        out[i] = S.noisy_value(values[i], std, gen)
    return out


@numba.njit(cache=True)
def _today_kernel(values, std, gen):
    """The plain mode's noise as the kernels write it today."""
    out = np.empty_like(values)
    for i in range(values.shape[0]):
        g = values[i]
        if std > 0.0:
            g += std * gen.standard_normal()
        out[i] = g
    return out


@numba.njit(cache=True)
def _uniform_kernel(gen, size):
    out = np.empty(size, np.float64)
    for i in range(size):
        out[i] = S.uniform(gen)
    return out


def _chi_square_p(counts, expected):
    counts = np.asarray(counts, dtype=float)
    expected = np.asarray(expected, dtype=float)
    statistic = ((counts - expected) ** 2 / expected).sum()
    return stats.chi2.sf(statistic, len(counts) - 1)


def _binned_fit(samples, support, pmf, min_expected=20.0):
    """Chi-square p-value of integer ``samples`` against ``pmf`` on ``support`` (which
    carries all but a negligible mass): adjacent values are merged into bins of expected
    count >= min_expected, and the tails beyond ``support`` join the outer bins."""
    n = samples.size
    expected = pmf * n
    edges = [0]
    acc = 0.0
    for i, e in enumerate(expected):
        acc += e
        if acc >= min_expected:
            edges.append(i + 1)
            acc = 0.0
    edges[-1] = len(support)  # the remainder joins the last bin
    lo = support[0]
    index = np.clip(samples - lo, 0, len(support) - 1)
    counts = np.add.reduceat(np.bincount(index, minlength=len(support)), edges[:-1])
    exp_binned = np.add.reduceat(expected, edges[:-1])
    return _chi_square_p(counts, exp_binned)


# --- ChaCha20 ---------------------------------------------------------------------------


def test_chacha20_block_matches_rfc8439_test_vector():
    # RFC 8439 section 2.3.2: key 00:01:..:1f, nonce 00:00:00:09:00:00:00:4a:00:00:00:00,
    # block count 1. Words 12-15 of the input: the counter, then the nonce's three words.
    key = np.frombuffer(bytes(range(32)), dtype="<u4")
    counter_nonce = np.frombuffer(bytes.fromhex("01000000000000090000004a00000000"), "<u4")
    expected = bytes.fromhex(
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
    )
    block = S.chacha20_block(key, counter_nonce)
    assert block.dtype == np.uint32
    assert block.astype("<u4").tobytes() == expected


def test_stream_is_the_keystream_with_a_64_bit_counter():
    # The production layout: key, 64-bit counter (low word first), 64-bit nonce. Start one
    # block before the low word wraps, so the carry into the high word is exercised.
    state = S.new_state()
    key = state[0:8].copy()
    state[8], state[9] = 0xFFFFFFFF, 7
    nonce = state[10:12].copy()
    words = _draw_u32(state, 48).astype(np.uint32)
    for block, (low, high) in enumerate([(0xFFFFFFFF, 7), (0, 8), (1, 8)]):
        counter_nonce = np.array([low, high, nonce[0], nonce[1]], dtype=np.uint32)
        assert np.array_equal(
            words[16 * block : 16 * block + 16], S.chacha20_block(key, counter_nonce)
        )
    assert (state[8], state[9]) == (2, 8)


def test_new_states_differ_and_have_the_documented_layout():
    a, b = S.new_state(), S.new_state()
    assert a.dtype == np.uint32 and a.shape == (S.STATE_SIZE,)
    assert a[28] == 16 and a[8] == 0 and a[9] == 0  # nothing drawn yet, counter 0
    assert not np.array_equal(a[0:8], b[0:8])
    assert not np.array_equal(_draw_u32(a, 64), _draw_u32(b, 64))


def test_next_u64_and_uniform_float():
    state = S.new_state()
    x = S.next_u64(state)
    assert isinstance(x, (int, np.integer)) and 0 <= int(x) < 2**64
    u = _draw_float(state, 200_000)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert np.all(u * 2.0**53 == np.floor(u * 2.0**53))  # on the grid of step 2^-53
    counts = np.bincount((u * 16).astype(np.int64), minlength=16)
    assert _chi_square_p(counts, np.full(16, u.size / 16)) > P_MIN


# --- uniform_int --------------------------------------------------------------------------


def test_uniform_int_small_n():
    state = S.new_state()
    x = _draw_int(state, 7, 140_000)
    assert x.min() >= 0 and x.max() <= 6
    assert _chi_square_p(np.bincount(x, minlength=7), np.full(7, x.size / 7)) > P_MIN


def test_uniform_int_large_n():
    n = 2**40 + 3
    state = S.new_state()
    x = _draw_int(state, n, 200_000)
    assert x.min() >= 0 and x.max() < n
    # Low bits (the classes mod 16 differ in size by 1 in 2^36: negligible) and high bits.
    low = np.bincount(x % 16, minlength=16)
    assert _chi_square_p(low, np.full(16, x.size / 16)) > P_MIN
    high = np.bincount(x * 8 // n, minlength=8)
    assert _chi_square_p(high, np.full(8, x.size / 8)) > P_MIN


def test_uniform_int_edges():
    state = S.new_state()
    assert S.uniform_int(state, 1) == 0
    x = _draw_int(state, 2**62, 1000)
    assert x.min() >= 0 and x.max() < 2**62 and x.max() > 2**61  # the top bit is used
    for bad in (0, -1, 2**62 + 1):
        with pytest.raises(ValueError):
            S.uniform_int(state, bad)


# --- Bernoulli(exp(-x)) ---------------------------------------------------------------


@pytest.mark.parametrize(
    "num, den",
    [
        (0, 2**61),
        (2**60, 3 * 2**60),  # 1/3
        (2**61, 2**61),  # 1
        (5 * 2**60, 2**61),  # 2.5
        (7 * 2**60, 2**61),  # 3.5
        (1, 1),
        (7, 2),
    ],
)
def test_bernoulli_exp_neg_frequencies(num, den):
    size = 200_000
    p = math.exp(-num / den)
    hits = _count_bern(S.new_state(), num, den, size)
    sd = math.sqrt(size * p * (1 - p))
    assert abs(hits - size * p) <= 5 * sd + 1e-9


def test_bernoulli_exp_neg_rejects_bad_arguments():
    state = S.new_state()
    for num, den in [(-1, 1), (1, 0), (1, 2**62 + 1)]:
        with pytest.raises(ValueError):
            S.bernoulli_exp_neg(state, num, den)
    assert not S.bernoulli_exp_neg(state, 2**62, 1)  # exp(-2^62): stops at the first failure


# --- discrete Laplace and discrete Gaussian -------------------------------------------


@pytest.mark.parametrize("t", [1, 3, 40])
def test_discrete_laplace_matches_pmf(t):
    x = _draw_laplace(S.new_state(), t, 60_000)
    support = np.arange(-40 * t, 40 * t + 1)
    weights = np.exp(-np.abs(support) / t)
    assert _binned_fit(x, support, weights / weights.sum()) > P_MIN


@pytest.mark.parametrize("t, m", [(1, 1), (2, 3), (5, 5), (40, 41)])
def test_discrete_gaussian_matches_pmf(t, m):
    sigma2 = t * m
    x = _draw_gauss(S.new_state(), t, m, 60_000)
    half = int(14 * math.sqrt(sigma2)) + 2
    support = np.arange(-half, half + 1)
    weights = np.exp(-(support.astype(float) ** 2) / (2 * sigma2))
    assert _binned_fit(x, support, weights / weights.sum()) > P_MIN


@pytest.mark.parametrize("t, m", [(2**20, 2**20), (2**31, 2**31), (2**29, 2**31), (2**31, 2**27)])
def test_discrete_gaussian_large_sigma_mean_and_variance(t, m):
    size = 20_000
    x = _draw_gauss(S.new_state(), t, m, size).astype(float)
    sigma2 = float(t) * float(m)
    assert abs(x.mean()) <= 5.5 * math.sqrt(sigma2 / size)
    # CKS: the discrete Gaussian's variance is below sigma^2 (and very close to it here).
    tolerance = 5.5 * math.sqrt(2.0 / size)
    assert x.var() <= sigma2 * (1 + tolerance)
    assert x.var() >= sigma2 * (1 - tolerance)


def test_sampler_arguments_are_checked():
    state = S.new_state()
    for t, m in [(0, 1), (1, 0), (2**31 + 1, 1), (1, 2**31 + 1), (1, 17), (2**20, 2**25)]:
        with pytest.raises(ValueError):
            S.discrete_gaussian(state, t, m)
    for t in (0, 2**31 + 1):
        with pytest.raises(ValueError):
            S.discrete_laplace(state, t)


def test_sampling_throughput(capsys):
    """Printed, not asserted: the cost of an exact draw next to numpy's."""
    state, gen = S.new_state(), np.random.default_rng()
    _draw_gauss(state, 2**24, 2**24, 10)
    _draw_normal(gen, 10)
    size = 300_000
    start = time.perf_counter()
    _draw_gauss(state, 2**24, 2**24, size)
    secure = size / (time.perf_counter() - start)
    start = time.perf_counter()
    _draw_normal(gen, 10 * size)
    plain = 10 * size / (time.perf_counter() - start)
    start = time.perf_counter()
    gen.standard_normal(10 * size)
    vector = 10 * size / (time.perf_counter() - start)
    with capsys.disabled():
        print(
            f"\ndiscrete_gaussian(t = m = 2^24): {secure:.3g}/s; numba Generator."
            f"standard_normal(): {plain:.3g}/s; numpy standard_normal(size): {vector:.3g}/s"
        )


# --- lattice release ------------------------------------------------------------------


def test_ratio_for_rounds_up():
    for sens, dim in [(1.0, 2), (0.3, 7), (3.0, 10**6 + 1), (1e-7, 5)]:
        r = S.ratio_for(sens, dim)
        assert (Fraction(r) * Fraction(sens)) ** 2 >= dim
        assert r <= math.sqrt(dim) / sens * (1 + 1e-15)
    assert S.ratio_for(2.0, 10, exact=True) == 0.0
    assert S.ratio_for(2.0, 0) == 0.0
    with pytest.raises(ValueError):
        S.ratio_for(0.0, 3)


@pytest.mark.parametrize("std", [1e-300, 1e-9, 0.7, 1.0, 3.0e7, 1e200])
@pytest.mark.parametrize("z_sqrt_dim", [0.0, 0.5, 1000.0, 1e6])
def test_lattice_parameters_bound_the_needed_sigma(std, z_sqrt_dim):
    ratio = z_sqrt_dim / std
    for exact in (False, True):
        if exact and (ratio > 0.0 or std >= S.EXACT_STD_MAX):
            continue
        gamma, t, m = S.lattice_parameters(std, ratio, exact)
        exponent = math.frexp(gamma)[1] - 1
        assert gamma == 2.0**exponent  # a power of two
        assert 2.0**24 * gamma <= std < 2.0**25 * gamma or (exact and gamma == 1.0)
        if exact:
            assert gamma <= 1.0
        needed = Fraction(std) / Fraction(gamma) + Fraction(std) * Fraction(ratio)
        assert Fraction(int(t) * int(m)) >= needed**2
        assert 1 <= t <= 2**31 and 1 <= m <= 2**31


def test_lattice_parameters_reject_out_of_range():
    for std, ratio, exact in [
        (0.0, 0.0, False),
        (-1.0, 0.0, False),
        (math.nan, 0.0, False),
        (2.0**985, 0.0, False),
        (1.0, -1.0, False),
        (1.0, 3e9, False),  # std * sqrt(dim) / sens beyond 2^31
        (2.0**31, 0.0, True),
    ]:
        with pytest.raises(ValueError):
            S.lattice_parameters(std, ratio, exact)


def _index_distance_ok(v, w, sens, gamma):
    """The lattice indices of ``v`` and ``w`` (with ``||v - w|| <= sens``, checked exactly)
    differ by at most ``sens / gamma + sqrt(dim)`` in L2 (integer arithmetic, float bound)."""
    dist2 = sum((Fraction(a) - Fraction(b)) ** 2 for a, b in zip(v, w))
    assert dist2 <= Fraction(sens) ** 2
    q = [int(S._lattice_index(x, gamma)) for x in v]
    r = [int(S._lattice_index(x, gamma)) for x in w]
    diff2 = sum((a - b) ** 2 for a, b in zip(q, r))
    return math.sqrt(diff2) <= (float(sens) / gamma + math.sqrt(v.size)) * (1 + 1e-12)


@pytest.mark.parametrize("std", [1e-6, 1.0, 5e8])
def test_lattice_rounding_keeps_the_sensitivity_bound(std):
    rng = np.random.default_rng(0)
    dim, sens = 40, std / 2
    gamma = S.lattice_parameters(std, S.ratio_for(sens, dim), False)[0]
    for trial in range(60):
        scale = 10.0 ** rng.integers(-300, 300) if trial % 3 == 0 else gamma * 1e3
        v = rng.normal(size=dim) * scale
        d = rng.normal(size=dim)
        d *= sens * rng.uniform(0.0, 0.999) / np.linalg.norm(d)
        if trial % 4 == 1:
            # Half-integers on the lattice, every coordinate pushed across its half: the
            # rounding errors of the two vectors are +-1/2 in opposite directions.
            v = (np.floor(rng.normal(size=dim) * 1e3) + 0.5) * gamma
            d = np.where(rng.random(dim) < 0.5, -1.0, 1.0) * min(gamma / 4, 0.999 * sens / dim**0.5)
        assert _index_distance_ok(v, v + d, sens, gamma)
    step = np.full(dim, 0.999 * sens / math.sqrt(dim))
    for magnitude in (1e300, 2.0**62 * gamma, 2.0**53 * gamma, 1e-300, 0.0):
        v = np.full(dim, magnitude)
        assert _index_distance_ok(v, v - step, sens, gamma)  # clamped, huge or tiny


def test_release_outputs_are_on_the_lattice():
    state = S.new_state()
    values = np.random.default_rng(1).normal(size=(30, 7)) * 12.0
    std, sens = 0.8, 2.0
    out = S.release(values, std, sens, state)
    assert out.shape == values.shape and out is not values
    gamma = S.lattice_parameters(std, S.ratio_for(sens, values.size), False)[0]
    assert np.all(np.rint(out / gamma) == out / gamma)
    assert np.array_equal(S.release(values, 0.0, sens, state), values)


def test_release_noise_has_the_calibrated_scale():
    state = S.new_state()
    values = np.linspace(-5.0, 5.0, 40_000)
    std, sens = 0.3, 1.0
    noise = S.release(values, std, sens, state) - values
    factor = S.noise_factor(std, sens, values.size)
    assert abs(noise.mean()) <= 5.5 * std / math.sqrt(noise.size)
    assert abs(noise.std() / (std * factor) - 1.0) <= 5.5 * math.sqrt(0.5 / noise.size) + 1e-4


@pytest.mark.parametrize("std", [3.0, 1e8])
def test_exact_release_of_counts_is_not_rounded(std):
    state = S.new_state()
    counts = np.array([0.0, 1.0, 5.0, 1000.0, 2.0**36, 123456789.0])
    gamma = S.lattice_parameters(std, 0.0, True)[0]
    assert gamma <= 1.0
    for c in counts:
        assert S._lattice_index(c, gamma) == c / gamma
    out = S.release(counts, std, 1.0, state, exact=True)
    z = out / gamma - counts / gamma
    assert np.all(np.rint(z) == z)  # gamma * (count / gamma + Z), Z integer
    with pytest.raises(ValueError):
        S.release(counts + 0.5, std, 1.0, state, exact=True)


def test_exact_release_beyond_the_cap_is_rounded_and_pays_for_it():
    std, sens, dim = 2.0**31, 2.0**30, 4
    assert S.noise_factor(std, sens, dim, exact=True) == S.noise_factor(std, sens, dim)
    out = S.release(np.arange(4.0), std, sens, S.new_state(), exact=True)
    gamma = S.lattice_parameters(std, S.ratio_for(sens, dim), False)[0]
    assert gamma == 2.0**7 and np.all(np.rint(out / gamma) == out / gamma)


@pytest.mark.parametrize("z, dim", [(1.0, 1), (5.0, 40_000), (1000.0, 1), (0.01, 10**6)])
@pytest.mark.parametrize("sens", [1e-4, 1.0, 3e5])
def test_noise_factor_is_close_to_one(z, dim, sens):
    factor = S.noise_factor(z * sens, sens, dim)
    assert 1.0 <= factor < 1.0 + 1e-3
    assert 1.0 <= S.noise_factor(z * sens, sens, dim, exact=True) < 1.0 + 1e-6
    assert S.noise_factor(0.0, sens, dim) == 1.0


# --- dispatch for the kernels ------------------------------------------------------------


def test_noisy_value_is_bit_identical_for_a_numpy_generator():
    values = np.random.default_rng(2).normal(size=500)
    for std in (0.0, 0.37, 5.0):
        a = _noisy_kernel(values, std, np.random.default_rng(3))
        b = _today_kernel(values, std, np.random.default_rng(3))
        assert np.array_equal(a, b)
        gen = np.random.default_rng(3)
        c = np.array([S.noisy_value(x, std, gen) for x in values])  # the Python stub
        assert np.array_equal(a, c)
    gen = np.random.default_rng(4)
    before = gen.bit_generator.state
    _noisy_kernel(values, 0.0, gen)
    assert gen.bit_generator.state == before  # std 0 draws nothing


def test_noisy_value_releases_on_the_lattice_for_a_secure_generator():
    values = np.random.default_rng(5).normal(size=500) * 3.0
    std, sens = 0.5, 1.0
    ratio = S.ratio_for(sens, values.size)
    gen = S.secure_generator(ratio)
    out = _noisy_kernel(values, std, gen)
    gamma = S.lattice_parameters(std, ratio, False)[0]
    assert np.all(np.rint(out / gamma) == out / gamma)
    assert 0.3 < np.std(out - values) < 0.7
    assert np.array_equal(_noisy_kernel(values, 0.0, gen), values)
    py = np.array([S.noisy_value(x, std, gen) for x in values[:5]])
    assert np.all(np.rint(py / gamma) == py / gamma)
    sig = {str(s) for s in _noisy_kernel.signatures}
    assert len(sig) == 2  # one compilation per generator type


def test_uniform_dispatch():
    a = _uniform_kernel(np.random.default_rng(6), 100)
    assert np.array_equal(a, np.random.default_rng(6).random(100))
    u = _uniform_kernel(S.secure_generator(), 50_000)
    assert u.min() >= 0.0 and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.01


_CACHE_SCRIPT = """
import numba
import numpy as np
from skdpgd._compute import secure_random as S

@numba.njit(cache=True)
def kernel(value, std, gen):
    return S.noisy_value(value, std, gen) + 0.0 * S.uniform(gen)

kernel(1.0, 0.5, np.random.default_rng(0))
kernel(1.0, 0.5, S.secure_generator(1.0))
S.release_value(1.0, 0.5, 1.0, False, S.new_state())
hits = sum(kernel.stats.cache_hits.values()) + sum(S.release_value.stats.cache_hits.values())
misses = sum(kernel.stats.cache_misses.values()) + sum(S.release_value.stats.cache_misses.values())
print(hits, misses)
"""


def test_kernels_using_the_dispatch_load_from_the_disk_cache(tmp_path):
    script = tmp_path / "cached_kernel.py"
    script.write_text(textwrap.dedent(_CACHE_SCRIPT))
    root = os.path.dirname(os.path.dirname(os.path.abspath(S.__file__)))
    env = dict(os.environ, PYTHONPATH=os.path.dirname(root))
    runs = [
        subprocess.run(
            [sys.executable, str(script)], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    hits, misses = map(int, runs[1])
    assert (hits, misses) == (3, 0), runs

"""A floating-point membership attack on a count release (in the style of Mironov 2012 and of
Jin et al., S&P 2022), run against plain mode and secure mode over many neighbouring trials.

The release is one count ``c`` in {c0, c0 + 1} (sensitivity 1) plus Gaussian noise of
standard deviation ``std``, drawn by the package's one release function
(:func:`skdpgd._core.noise.gaussian`). Plain mode computes ``y = c + fl(std * Z)`` in binary64.
With ``std = 1.5 * 2^20`` the noise is much larger than the count, so the addition of the
integer ``c`` is exact and ``y - c = fl(std * Z)`` under the true hypothesis. But multiplying
by a constant whose mantissa is 1.5 reaches only about 2/3 of the floats of a binade, so
``y - c'`` for the wrong count ``c'`` is often not ``fl(std * z)`` for any float ``z``: the
output rules that hypothesis out. The attacker guesses the hypothesis whose difference is
reachable (a coin flip when both are), so its success rate is 1/2 plus half the probability
that the wrong one is ruled out.

Secure mode releases ``gamma (q + Z)`` with ``gamma`` a power of two, ``q`` the count on the
lattice (exact) and ``Z`` an exact discrete Gaussian: ``y / gamma - c / gamma`` has the same
law under both counts up to the shift the privacy proof covers, and the attack is at chance.
"""

import math

import numpy as np
import pytest

import skdpgd
from skdpgd._core.noise import SecureGenerator, gaussian

STD = 1.5 * 2.0**20
C0 = 5.0
TRIALS = 20_000


def _reachable(d, std):
    """Whether each float ``d`` equals ``fl(std * z)`` for some float ``z`` (the candidates
    ``fl(d / std)`` and its two float neighbours on each side cover the rounding)."""
    z = d / std
    hit = np.zeros(d.shape, dtype=bool)
    for steps in (-2, -1, 0, 1, 2):
        zz = z
        for _ in range(abs(steps)):
            zz = np.nextafter(zz, np.inf if steps > 0 else -np.inf)
        hit |= std * zz == d
    return hit


def _attack(y, rng):
    """Guess the count (0: c0, 1: c0 + 1) of each release ``y``: the hypothesis whose
    difference is reachable by the noise's multiplication, a coin flip when both (or
    neither) are."""
    r0 = _reachable(y - C0, STD)
    r1 = _reachable(y - (C0 + 1.0), STD)
    guess = rng.integers(0, 2, size=y.shape[0])
    guess[r0 & ~r1] = 0
    guess[r1 & ~r0] = 1
    return guess


def _success(gen_factory, rng):
    secret = rng.integers(0, 2, size=TRIALS)
    y = np.empty(TRIALS)
    gen = gen_factory()
    for i, b in enumerate(secret):
        y[i] = gaussian(C0 + float(b), STD, gen, 1.0, exact=True)
    right = int(np.sum(_attack(y, rng) == secret))
    rate = right / TRIALS
    half = 3.9 * math.sqrt(0.25 / TRIALS)  # a 99.99% normal interval around 1/2
    return rate, half


def test_the_attack_reads_plain_mode_and_is_at_chance_in_secure_mode(capsys):
    rng = np.random.default_rng(20221028)
    plain, half = _success(lambda: np.random.default_rng(7), rng)
    secure, _ = _success(SecureGenerator, rng)
    sd = math.sqrt(0.25 / TRIALS)
    with capsys.disabled():
        print(
            f"\nfloating-point attack on a count, {TRIALS} neighbouring trials: plain mode "
            f"{plain:.4f} (95% CI +/- {1.96 * sd:.4f}), secure mode {secure:.4f} "
            f"(95% CI +/- {1.96 * sd:.4f}); chance 0.5"
        )
    # plain mode leaks measurably: far outside chance (about 2/3 expected: see the docstring)
    assert plain > 0.5 + 2 * half
    # secure mode: at chance, within the 99.99% interval
    assert abs(secure - 0.5) <= half


def test_secure_releases_of_neighbouring_counts_share_their_lattice():
    """The structural reason: both counts and every output lie on the same lattice gamma Z,
    and the output minus either count is reachable the same way."""
    gen = SecureGenerator()
    gamma = min(2.0 ** (math.floor(math.log2(STD)) - 24), 1.0)
    ys = np.array([gaussian(C0 + b, STD, gen, 1.0, exact=True) for b in (0.0, 1.0) * 200])
    assert np.all(ys / gamma == np.floor(ys / gamma))
    assert np.all((ys - C0) / gamma == np.floor((ys - C0) / gamma))


def test_the_count_release_of_a_fit_uses_the_same_path_in_each_mode():
    """The class counts an intercept-only fit releases go through the same release function:
    plain mode's output is generally off the lattice, secure mode's on it."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2)) / 4
    y = (rng.random(400) < 0.9).astype(int)
    with skdpgd.config_context(secure_noise=True):
        est = skdpgd.DPLogisticRegression(
            epsilon=0.05, data_norm=1.0, classes=[0, 1], class_weight="balanced"
        ).fit(X, y)
    assert est.noise_ == "discrete"
    assert any(r.name == "class counts" and r.noise == "discrete" for r in est.releases_)


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-s"])

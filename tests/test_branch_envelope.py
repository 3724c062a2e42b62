"""The privacy of a fit that chooses its mechanism from a Gaussian release (DP-SGD's prior
switch): the envelope of the branches (skdpgd._envelope, docs/theory.md)."""

import math
import warnings

import numpy as np
import pytest
from scipy import integrate
from scipy.special import log_ndtr

from skdpgd import DPSGDClassifier, policy
from skdpgd._envelope import (branch_profile, envelope_delta, envelope_epsilon,
                              gaussian_profile, rdp_profile)
from skdpgd.accounting import (GaussianDPAccountant, RDP_DEFAULT_ORDERS, RDPAccountant,
                               gdp_delta, gdp_mu, gdp_mu_of_releases, rdp_subsampled_gaussian)


def _gdp_delta_independent(t, mu):
    """Phi(-t/mu + mu/2) - e^t Phi(-t/mu - mu/2), written here again (scipy only)."""
    a = log_ndtr(-t / mu + mu / 2)
    b = t + log_ndtr(-t / mu - mu / 2)
    return -math.exp(a) * math.expm1(b - a) if b < a else 0.0


def _expectation(fn, mu1, lo=-14.0, hi=14.0, pieces=56):
    """E[fn(L)], L ~ N(mu1^2/2, mu1^2), by adaptive quadrature on pieces of the standard
    normal variable (beyond +-14 the mass is below 1e-44)."""
    edges = np.linspace(lo, hi, pieces + 1)
    dens = lambda u: math.exp(-0.5 * u * u) / math.sqrt(2 * math.pi)  # noqa: E731
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        val, _ = integrate.quad(lambda u: dens(u) * fn(0.5 * mu1 * mu1 + mu1 * u), a, b,
                                epsabs=0.0, epsrel=1e-13, limit=200)
        total += val
    return total


@pytest.mark.parametrize("epsilon,mu1,mu_a", [(1.0, 0.3, 0.8), (0.1, 0.03, 0.09),
                                              (5.0, 1.0, 2.0), (0.01, 0.002, 0.005)])
def test_one_gaussian_branch_is_the_exact_gdp_composition(epsilon, mu1, mu_a):
    """The derivation, checked: with one Gaussian branch and no max, the envelope
    E_L[delta_a(eps - L)] over the first release's privacy loss L ~ N(mu1^2/2, mu1^2) is the
    exact GDP delta of sqrt(mu1^2 + mu_a^2)."""
    exact = gdp_delta(epsilon, math.hypot(mu1, mu_a))
    quad = _expectation(lambda loss: _gdp_delta_independent(epsilon - loss, mu_a), mu1)
    assert quad == pytest.approx(exact, rel=1e-9)
    # the package's bound: above the exact value, and close to it
    bound = envelope_delta(epsilon, mu1, lambda t: gaussian_profile(t, mu_a), rtol=1e-9)
    assert exact <= bound.upper <= exact * (1 + 1e-7)
    assert bound.estimate == pytest.approx(exact, rel=1e-7)
    # the default accuracy (what fits use) stays within 1e-4
    assert exact <= envelope_delta(epsilon, mu1,
                                   lambda t: gaussian_profile(t, mu_a)).upper <= exact * 1.0001


def test_one_gaussian_branch_in_high_precision():
    """The same identity in 40 digits (mpmath): the integral and the closed form agree far
    below double precision."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    eps, mu1, mu_a = mp.mpf("0.7"), mp.mpf("0.25"), mp.mpf("0.6")

    def gdp(t, mu):
        return mp.ncdf(-t / mu + mu / 2) - mp.e ** t * mp.ncdf(-t / mu - mu / 2)

    integral = mp.quad(lambda u: mp.npdf(u) * gdp(eps - (mu1 ** 2 / 2 + mu1 * u), mu_a),
                       mp.linspace(-25, 25, 51))
    assert abs(integral / gdp(eps, mp.sqrt(mu1 ** 2 + mu_a ** 2)) - 1) < mp.mpf("1e-30")


def test_branch_profiles_hold_for_negative_arguments():
    """Every profile is at least 1 - e^t below 0 (a hockey-stick divergence is), and the
    Gaussian one is the exact formula on both sides."""
    t = np.linspace(-5, 5, 41)
    exact = np.array([_gdp_delta_independent(x, 0.7) for x in t])
    got = gaussian_profile(t, 0.7)
    assert np.all(got >= exact) and np.allclose(got, exact, rtol=1e-12, atol=1e-16)
    rdp = rdp_subsampled_gaussian(0.05, np.full(50, 1.5), RDP_DEFAULT_ORDERS)
    prof = rdp_profile(t, rdp, RDP_DEFAULT_ORDERS)
    assert np.all(prof >= -np.expm1(np.minimum(t, 0))) and np.all(prof <= 1)
    assert np.all(np.diff(prof) <= 1e-15)  # non-increasing

"""One contract, run by every accountant (skdpgd.accounting.ACCOUNTANTS): the fit path relies
on nothing else. Each accountant states upper bounds, calibrates within its tolerance without
overspending, reads a Release and a GaussianSteps alike, composes sequences, and is monotone
in the noise."""

import math

import numpy as np
import pytest

from skdpgd.accounting import ACCOUNTANTS, Accountant, GaussianDPAccountant, GaussianSteps, Release

#: relative tolerance of each accountant's calibration (how close to epsilon it lands); an
#: accountant not listed uses the generic search's: twice its relative precision on the scale
#: (epsilon falls at most as fast as the scale squared)
TOLERANCE = {"gdp": 1e-9, "rdp": 1e-8, "pld": 2e-3}


def _tolerance(acc):
    return TOLERANCE.get(acc.name, 2.0 * acc.calibration_rtol)


def _accountants():
    out = []
    for cls in ACCOUNTANTS:
        if cls.__name__ == "PLDAccountant":
            pytest.importorskip("dp_accounting")
            out.append(cls(value_discretization_interval=1e-3))  # coarser: a faster test
            continue
        out.append(cls())
    return out


def _rates(acc):
    """The sampling rates the contract runs ``acc`` at: full batch, and 0.05 if supported."""
    return [1.0, 0.05] if acc.supports(GaussianSteps([1.0], 0.05)) else [1.0]


@pytest.fixture(params=[cls.__name__ for cls in ACCOUNTANTS])
def accountant(request):
    (acc,) = [a for a in _accountants() if type(a).__name__ == request.param]
    return acc


def test_every_accountant_is_an_accountant(accountant):
    assert isinstance(accountant, Accountant)
    assert isinstance(accountant.name, str) and accountant.name != Accountant.name


@pytest.mark.parametrize("epsilon,delta", [(0.5, 1e-5), (2.0, 1e-6)])
def test_calibration_spends_at_most_the_budget_and_nearly_all_of_it(accountant, epsilon, delta):
    shape = np.array([1.0] * 5 + [0.8] * 5)
    prior = np.array([40.0])
    for q in _rates(accountant):
        z = np.asarray(accountant.calibrate(shape, epsilon, delta, sampling_rate=q, prior=prior))
        assert z.shape == shape.shape
        np.testing.assert_allclose(z / z[0], shape / shape[0], rtol=1e-12)  # one scale
        runs = [GaussianSteps(z, q), GaussianSteps(prior, 1.0)]
        spent = accountant.epsilon(runs, delta)
        assert spent <= epsilon
        assert spent >= epsilon * (1 - _tolerance(accountant)) - 1e-12
        # the dual statement agrees: delta at the spent epsilon is within the target
        assert accountant.delta(runs, epsilon) <= delta * (1 + 1e-6)


def test_no_noise_is_infinite_and_infinite_budget_is_no_noise(accountant):
    q = _rates(accountant)[-1]
    assert np.all(accountant.calibrate(np.ones(3), math.inf, 1e-5, sampling_rate=q) == 0)
    assert math.isinf(accountant.epsilon([GaussianSteps([0.0, 1.0], q)], 1e-5))


def test_more_noise_never_costs_more(accountant):
    for q in _rates(accountant):
        eps = [accountant.epsilon([GaussianSteps(np.full(4, z), q)], 1e-5) for z in (0.8, 1.5, 3.0)]
        assert eps[0] > eps[1] > eps[2] > 0


def test_a_release_reads_as_its_multipliers_and_rate(accountant):
    """A fit's Release (any name, sensitivity, relation) and a GaussianSteps with the same
    multipliers and rate are the same run to an accountant; a sequence composes."""
    for q in _rates(accountant):
        z = np.array([2.0, 2.5, 3.0])
        r = Release("gradient sums", z, {"replace": 4.0, "add_remove": 2.0}, "add_remove", q)
        s = GaussianSteps(z, q)
        assert accountant.supports(r) and accountant.supports([r, s])
        assert accountant.epsilon(r, 1e-5) == pytest.approx(accountant.epsilon(s, 1e-5), rel=1e-12)
        both = accountant.epsilon([r, s], 1e-5)
        assert both > accountant.epsilon(s, 1e-5)
        assert both == pytest.approx(
            accountant.epsilon(GaussianSteps(np.r_[z, z], q), 1e-5), rel=_tolerance(accountant)
        )


def test_full_batch_gdp_is_the_tightest():
    """At sampling rate 1 the exact GDP statement is never above what RDP or PLD state."""
    steps = GaussianSteps(np.full(10, 3.0))
    gdp = GaussianDPAccountant().epsilon(steps, 1e-5)
    for acc in _accountants():
        assert acc.epsilon(steps, 1e-5) >= gdp * (1 - 1e-9)

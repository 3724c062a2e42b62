"""The event tree of skdpgd.accounting and its one reader: compose (exact GDP where it can, RDP
or an accountant otherwise), calibrate, the relations, and a new accountant added as one class
plus an export (the contract of tests/accounting/test_accountant_contract.py holds for it
unchanged)."""

import math
import re
import types
from pathlib import Path

import numpy as np
import pytest

import test_accountant_contract as contract
from skdpgd import PrivacyBudget
from skdpgd import accounting
from skdpgd.accounting import (
    RDP_DEFAULT_ORDERS,
    Composed,
    GaussianDPAccountant,
    GaussianSteps,
    PoissonSampled,
    RDPAccountant,
    RDPCurve,
    Relation,
    Release,
    RepeatedSelection,
    calibrate,
    compose,
    flatten,
    gdp_epsilon,
    rdp_epsilon,
    rdp_subsampled_gaussian,
)
from skdpgd.accounting.events import gaussian_runs

GRAD = {"replace": 2.0, "add_remove": 1.0}  # a clipped gradient sum, per unit of C
NORM = {"replace": 1.0, "add_remove": 1.0}


def test_relation_is_a_string_enum_read_from_values_and_words():
    assert Relation.REPLACE == "replace" and {"add_remove": 1}[Relation.ADD_REMOVE] == 1
    assert Relation.of("add/remove-one") is Relation.ADD_REMOVE
    assert Relation.of(Relation.REPLACE).words == "replace-one"
    assert accounting.RELATIONS == ("replace", "add_remove")
    with pytest.raises(ValueError, match="unknown neighbouring relation"):
        Relation.of("swap")
    r = Release("sums", [2.0], GRAD, "replace")
    assert r.relation is Relation.REPLACE


def test_full_batch_releases_compose_to_the_gdp_closed_form():
    a = Release("gradient sums", [3.0, 4.0, 5.0], GRAD, "replace")
    b = Release("norm sum", [10.0], NORM, "replace")
    mu = math.sqrt(3.0**-2 + 4.0**-2 + 5.0**-2 + 10.0**-2)
    want = gdp_epsilon(1e-6, mu)
    assert compose([a, b], 1e-6) == pytest.approx(want, rel=1e-14)
    # a list, a Composed and a nested Composed are the same composition
    assert compose(Composed((a, b)), 1e-6) == compose([a, b], 1e-6)
    assert compose(Composed((Composed((a,)), b)), 1e-6) == compose([a, b], 1e-6)
    assert compose([], 1e-6) == 0.0
    assert math.isinf(compose([a, Release("no noise", [0.0], NORM, "replace")], 1e-6))


def test_compose_reads_each_release_under_the_relation_asked():
    """Under add/remove-one a replace-one gradient sum's multiplier doubles (sensitivity C
    instead of 2C); a norm sum's stays (R under both)."""
    a = Release("gradient sums", [3.0], GRAD, "replace")
    b = Release("norm sum", [10.0], NORM, "replace")
    got = compose([a, b], 1e-6, relation="add_remove")
    mu = math.sqrt((2 * 3.0) ** -2 + 10.0**-2)
    assert got == pytest.approx(gdp_epsilon(1e-6, mu), rel=1e-12)
    assert got < compose([a, b], 1e-6)


def test_a_poisson_sampled_event_is_composed_in_rdp_or_by_the_accountant_given():
    z, q = np.full(50, 1.2), 0.02
    event = PoissonSampled(q, GaussianSteps(z))
    want = rdp_epsilon(rdp_subsampled_gaussian(q, z, RDP_DEFAULT_ORDERS), RDP_DEFAULT_ORDERS, 1e-5)
    assert compose(event, 1e-5) == pytest.approx(want, rel=1e-12)
    by_rdp = RDPAccountant().epsilon(GaussianSteps(z, q), 1e-5)
    assert compose(event, 1e-5, accountant=RDPAccountant()) == by_rdp
    # sampling a sample multiplies the rates; the leaf itself is unchanged
    (leaf,), _ = flatten(PoissonSampled(0.5, PoissonSampled(0.2, GaussianSteps([1.0]))))
    assert leaf.sampling_rate == pytest.approx(0.1)
    with pytest.raises(ValueError, match="sampling rate"):
        PoissonSampled(1.5, GaussianSteps([1.0]))


def test_a_selection_composes_by_adding_its_rdp_curve():
    sel = RepeatedSelection(0.3, "poisson", 10.0)
    fit = Release("gradient sums", [4.0], GRAD, "replace")
    curve = sel.rdp(RDP_DEFAULT_ORDERS) + RDP_DEFAULT_ORDERS / (2 * 4.0**2)
    want = rdp_epsilon(curve, RDP_DEFAULT_ORDERS, 1e-6)
    assert compose([sel, fit], 1e-6) == pytest.approx(want, rel=1e-9)
    assert compose([sel, fit], 1e-6) > compose([fit], 1e-6)
    # a curve cannot be converted between relations
    with pytest.raises(ValueError, match="cannot be converted"):
        compose([sel], 1e-6, relation="add_remove")
    # nor read by an accountant of Gaussian steps, nor sampled
    with pytest.raises(TypeError, match="reads releases only"):
        gaussian_runs([sel])
    with pytest.raises(ValueError, match="Poisson sample"):
        flatten(PoissonSampled(0.5, sel))


def test_the_budget_charges_any_event_and_refuses_a_curve_of_the_other_relation():
    budget = PrivacyBudget(3.0, 1e-6, neighbouring="replace")
    fit = Release("gradient sums", [4.0], GRAD, "replace")
    sel = RepeatedSelection(0.3, "poisson", 10.0)
    spent = budget.charge(Composed((fit, sel)), label="search")
    assert spent == pytest.approx(compose([fit, sel], 1e-6), rel=1e-12)
    # a charge of several leaves names each after the label and its own name
    assert [c[0] for c in budget.charges] == ["search (gradient sums)"]
    assert [c[0] for c in budget.rdp_charges] == ["search (private selection)"]
    with pytest.raises(ValueError, match="cannot be converted"):
        budget.charge(RDPCurve("curve", sel.rdp(), "add_remove"))
    assert budget.spent_epsilon() == spent  # the refused charge recorded nothing


def test_calibrate_keeps_the_gdp_closed_form_and_spends_the_budget():
    shapes = [
        Release("gradient sums", [1.0, 1.0, 2.0], GRAD, "replace"),
        Release("norm sum", [0.5], NORM, "replace"),
    ]
    prior = [Release("count", [20.0], NORM, "replace")]
    out = calibrate(shapes, 1.0, 1e-6, prior=prior)
    z = np.concatenate([r.multipliers for r in out])
    closed = GaussianDPAccountant().calibrate(
        np.array([1.0, 1.0, 2.0, 0.5]), 1.0, 1e-6, prior=[20.0]
    )
    np.testing.assert_array_equal(z, closed)
    assert [r.name for r in out] == ["gradient sums", "norm sum"]
    spent = compose(out + prior, 1e-6)
    assert 1.0 * (1 - 1e-9) <= spent <= 1.0
    # subsampled shapes default to RDP
    sub = calibrate([Release("steps", np.ones(20), GRAD, "add_remove", 0.05)], 1.0, 1e-6)
    assert compose(sub, 1e-6, accountant=RDPAccountant()) <= 1.0


# --- a new accountant: one module in the package plus an export -----------------------------
# The module is the worked example of docs/how_a_fit_works.md ("Adding an accountant"), run
# here as the file skdpgd/accounting/zcdp.py would be.

DOC = Path(__file__).resolve().parents[2] / "docs" / "how_a_fit_works.md"


def _zcdp_module():
    block = re.search(
        r"```python\n# skdpgd/accounting/zcdp.py\n(.*?)^```", DOC.read_text(), re.S | re.M
    )
    assert block, "the worked example is missing from docs/how_a_fit_works.md"
    module = types.ModuleType("skdpgd.accounting.zcdp")
    module.__package__ = "skdpgd.accounting"  # its relative imports resolve in the package
    exec(compile(block.group(1), "skdpgd/accounting/zcdp.py (docs)", "exec"), module.__dict__)
    return module


ZCDPAccountant = _zcdp_module().ZCDPAccountant


@pytest.fixture
def with_zcdp(monkeypatch):
    """The export: the new class listed in the registry's ACCOUNTANTS (and so the package's),
    as its module would be."""
    extended = accounting.ACCOUNTANTS + (ZCDPAccountant,)
    monkeypatch.setattr(accounting.registry, "ACCOUNTANTS", extended)
    monkeypatch.setattr(accounting, "ACCOUNTANTS", extended)
    return ZCDPAccountant()


def test_a_new_accountant_passes_the_contract_unchanged(with_zcdp):
    acc = with_zcdp
    assert ZCDPAccountant in accounting.ACCOUNTANTS
    assert type(accounting.accountant_named("zcdp")) is ZCDPAccountant  # selectable by name
    assert contract._rates(acc) == [1.0]  # it says it reads full batch only
    contract.test_every_accountant_is_an_accountant(acc)
    for epsilon, delta in [(0.5, 1e-5), (2.0, 1e-6)]:
        contract.test_calibration_spends_at_most_the_budget_and_nearly_all_of_it(
            acc, epsilon, delta
        )
    contract.test_no_noise_is_infinite_and_infinite_budget_is_no_noise(acc)
    contract.test_more_noise_never_costs_more(acc)
    contract.test_a_release_reads_as_its_multipliers_and_rate(acc)
    # and the fit path's calibration takes it as it takes the built-in ones
    out = calibrate(
        [Release("gradient sums", np.ones(5), GRAD, "replace")], 1.0, 1e-6, accountant=acc
    )
    assert acc.epsilon(out, 1e-6) <= 1.0
    assert compose(out, 1e-6) < 1.0  # exact GDP states less for the same noise


def test_the_contract_fails_for_an_accountant_whose_calibration_overspends():
    """The contract can fail: a new accountant whose calibration returns 10% less noise than
    its own epsilon needs is caught by the calibration check."""

    class Overspends(ZCDPAccountant):
        name = "overspends"

        def calibrate(self, shape, epsilon, delta, sampling_rate=1.0, prior=()):
            return 0.9 * super().calibrate(shape, epsilon, delta, sampling_rate, prior)

    with pytest.raises(AssertionError):
        contract.test_calibration_spends_at_most_the_budget_and_nearly_all_of_it(
            Overspends(), 0.5, 1e-5
        )


@pytest.mark.parametrize(
    "count,share,ref_share,T", [(1, 0.2, 0.8, 8), (8, 0.05, 0.8, 8), (3, 0.3, 0.5, 1)]
)
def test_relative_multiplier_gives_each_group_its_share_of_mu_squared(count, share, ref_share, T):
    from skdpgd.accounting import relative_multiplier

    ref = np.linspace(1.0, 2.0, T)  # any reference multipliers
    inv2 = float(np.sum(ref**-2.0))
    z = relative_multiplier(count, share, ref_share, inv2)
    assert (count / z**2) / inv2 == pytest.approx(share / ref_share, rel=1e-12)

"""privacy_report of a budget names each charge and shows its releases' sensitivities and
noise; PrivacyReport.to_dict / to_json export what the printed report shows, as plain data."""

import json

import numpy as np
import pytest

import skdpgd
from skdpgd import DPLogisticRegression, PrivacyBudget, privacy_report
from skdpgd.accounting import Release


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(800, 3)) / 4
    return X, (X[:, 0] > 0).astype(int)


@pytest.fixture(scope="module")
def two_fits(data):
    X, y = data
    budget = PrivacyBudget(epsilon=3.0, delta=1e-6)
    fits = [
        DPLogisticRegression(
            epsilon=eps, delta=1e-6, data_norm=1.0, classes=[0, 1], budget=budget, random_state=k
        ).fit(X, y)
        for k, eps in enumerate((0.5, 1.0))
    ]
    return budget, fits


def test_a_budget_report_tells_the_charges_apart_with_their_sensitivities(two_fits):
    budget, fits = two_fits
    rep = privacy_report(budget)
    text = str(rep)
    assert [c["number"] for c in rep.charges] == [1, 2]
    assert [c["label"] for c in rep.charges] == ["DPLogisticRegression"] * 2
    assert "neighbouring datasets: add/remove-one" in text
    assert rep.charges[0]["spent_epsilon"] < rep.charges[1]["spent_epsilon"]
    assert rep.charges[1]["spent_epsilon"] == pytest.approx(budget.spent_epsilon(), rel=1e-12)
    for k, fit in enumerate(fits, start=1):
        rows = [r for r in rep.rows if r.charge == k]
        assert len(rows) == len(fit.releases_)
        for row, release in zip(rows, fit.releases_):
            assert row.name == f"#{k} DPLogisticRegression ({release.name})"
            assert row.sensitivity == pytest.approx(release.sensitivity["add_remove"], rel=1e-12)
            assert row.std_median == pytest.approx(float(np.median(release.noise_std)), rel=1e-9)
            assert row.name in text and f"{row.sensitivity:.4g}" in text
    assert "  -  " not in text.split("release", 1)[1].split("delta")[0]  # no unknown column


def test_to_json_round_trips_and_matches_the_printed_numbers(two_fits):
    budget, _ = two_fits
    rep = privacy_report(budget)
    out = json.loads(rep.to_json())
    assert out == rep.to_dict()
    assert out["relation"] == "add_remove" and out["accountant"] == rep.accountant
    assert out["budget"] == {
        "epsilon": 3.0,
        "delta": 1e-6,
        "spent_epsilon": budget.spent_epsilon(),
    }
    assert out["epsilon"] == pytest.approx(budget.spent_epsilon(), rel=1e-9)
    assert out["noise"] == ["gaussian"]
    assert [c["label"] for c in out["charges"]] == ["DPLogisticRegression"] * 2
    lines = str(rep).splitlines()
    for d, e in zip(out["deltas"], out["epsilons"]):
        assert any(line.startswith(f"{d:<10.3g}") and f"{e:.4g}" in line for line in lines)
    for r in out["releases"]:
        line = next(line for line in lines if line.startswith(r["name"] + " "))
        z, s = r["noise_multiplier"], r["noise_std"]
        assert f"{z['min']:.4g} / {z['median']:.4g} / {z['max']:.4g}" in line
        assert f"{s['min']:.4g} / {s['median']:.4g} / {s['max']:.4g}" in line
        assert f"{r['sensitivity']:.4g}" in line and str(r["count"]) in line
    assert sum(len(c["releases"]) for c in out["charges"]) == len(out["releases"])


def test_an_estimators_report_exports_its_guarantee(data):
    X, y = data
    clf = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1]).fit(X, y)
    out = json.loads(privacy_report(clf).to_json(indent=2))
    assert out["stated"] == {"epsilon": clf.epsilon_, "delta": clf.delta_}
    assert out["epsilon"] == pytest.approx(clf.epsilon_, rel=1e-6)
    assert out["relation_words"] == "replace-one" and out["charges"] == []
    assert [r["name"] for r in out["releases"]] == [r.name for r in clf.releases_]
    for r, release in zip(out["releases"], clf.releases_):
        assert r["sensitivity"] == pytest.approx(release.sensitivity["replace"])
        assert r["count"] == release.multipliers.size and r["charge"] is None


def test_values_that_are_not_finite_are_exported_as_strings():
    budget = PrivacyBudget(epsilon=2.0, delta=1e-6, neighbouring="replace")
    # a count: free under replace-one (N public), so its multiplier there is infinite
    count = Release("a count", [5.0], {"replace": 0.0, "add_remove": 1.0}, "add_remove")
    budget.charge([count], label="count")
    text = privacy_report(budget).to_json()  # strict JSON: no NaN or Infinity
    out = json.loads(text)
    assert out["releases"][0]["noise_multiplier"]["max"] == "inf"
    assert float(out["releases"][0]["noise_multiplier"]["max"]) == float("inf")


def test_a_metric_and_a_fit_charged_to_one_budget_are_told_apart(data):
    from skdpgd.metrics import dp_accuracy_score

    X, y = data
    budget = PrivacyBudget(epsilon=3.0, delta=1e-6)
    with skdpgd.config_context(budget=budget):
        clf = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1]).fit(X, y)
        dp_accuracy_score(y, clf.predict(X), epsilon=0.2, label="holdout accuracy")
    out = privacy_report(budget).to_dict()
    assert [c["label"] for c in out["charges"]] == ["DPLogisticRegression", "holdout accuracy"]
    assert out["releases"][-1]["name"] == "#2 holdout accuracy"

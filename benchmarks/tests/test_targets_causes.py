"""The benchmark suite's cause classifier (benchmarks/suite/targets.py): each miss gets the
category its measured values imply. Synthetic medians, so every branch is exercised with known
numbers. A check of the lab's tooling, not of the package: run it with
``python -m pytest -q benchmarks/tests`` (the package's suite, ``tests/``, does not collect it)."""

import math

import pandas as pd

from benchmarks.suite import targets as T


def _tables(
    score,
    n_iter=8,
    mechanism="newton",
    sklearn=0.80,
    majority=0.70,
    est="DPLogisticRegression",
    eps=1.0,
    sgd=None,
):
    rows = [
        ("d", "a", est, eps, score),
        ("d", "a", "majority", eps, majority),
        ("d", "a", "sklearn", eps, sklearn),
        ("d", "a", "sgd_objective", eps, sklearn),
    ]
    if sgd is not None:
        rows.append(("d", "a", "sklearn_sgd", eps, sgd))
    med = pd.DataFrame(rows, columns=["dataset", "protocol", "method", "epsilon", "score"])
    raw = pd.DataFrame(
        {
            "dataset": ["d"],
            "epsilon": [eps],
            "method": [est],
            "n_iter": [n_iter],
            "mechanism": [mechanism],
        }
    )
    return med, raw


def test_floor_budget_against_rule():
    med, raw = _tables(0.60, eps=0.01)
    miss = "d@0.01: 0.600 < 0.700"
    cat, _ = T.cause(
        "floor",
        "DPLogisticRegression",
        "report",
        "a",
        miss,
        med,
        raw,
        {("report", "d", "a", 0.01): 0.65},
    )
    assert cat == "floor: budget"
    cat, detail = T.cause(
        "floor",
        "DPLogisticRegression",
        "report",
        "a",
        miss,
        med,
        raw,
        {("report", "d", "a", 0.01): 0.70},
    )
    assert cat == "floor: rule" and "newton" in detail
    cat, _ = T.cause("floor", "DPLogisticRegression", "report", "a", miss, med, raw, {})
    assert cat.startswith("floor: intercept-only bound not measured")


def test_peer_limit_noise_and_prior_switch():
    miss = "d@1: 0.790 < 0.820"
    med, raw = _tables(0.797, sklearn=0.80)
    assert (
        T.cause("peer", "DPLogisticRegression", "report", "a", miss, med, raw, {})[0]
        == "peer: limit"
    )
    med, raw = _tables(0.75, n_iter=2, mechanism="gradient")
    assert (
        T.cause("peer", "DPLogisticRegression", "report", "a", miss, med, raw, {})[0]
        == "peer: noise (gradient (1-3 steps))"
    )
    med, raw = _tables(0.70, n_iter=0, mechanism="prior", majority=0.70)
    assert (
        T.cause("peer", "DPLogisticRegression", "report", "a", miss, med, raw, {})[0]
        == "peer: prior switch"
    )


def test_sgd_consistency_above_or_below_the_early_stopped_run():
    med, raw = _tables(
        0.90,
        est="DPSGDClassifier",
        eps=1e6,
        sgd=0.85,
        sklearn=0.90,
        mechanism="uniform",
        n_iter=5000,
    )
    miss = "d: 0.900 vs 0.850"
    assert (
        T.cause("consistency", "DPSGDClassifier", "report", "a", miss, med, raw, {})[0]
        == "consistency: above scikit-learn's early-stopped SGD"
    )
    med, raw = _tables(0.80, est="DPSGDClassifier", eps=1e6, sgd=0.85, sklearn=0.80)
    cat, detail = T.cause("consistency", "DPSGDClassifier", "report", "a", miss, med, raw, {})
    assert cat == "consistency: below scikit-learn's early-stopped SGD"
    assert "+0.000" in detail  # equal to the converged objective


def test_monotone_names_the_prior_at_the_lower_budget():
    raw = pd.DataFrame(
        {
            "dataset": ["d", "d"],
            "epsilon": [0.1, 0.3],
            "method": ["DPLogisticRegression"] * 2,
            "n_iter": [0, 8],
            "mechanism": ["prior", "newton"],
        }
    )
    cat, detail = T.cause(
        "monotone",
        "DPLogisticRegression",
        "report",
        "a",
        "d@0.1->0.3: 0.700 -> 0.680",
        None,
        raw,
        {},
    )
    assert cat.startswith("monotone: intercept-only") and detail == "prior->newton"
    assert not math.isnan(T._iters(raw, "d", 0.3, "DPLogisticRegression"))

"""private_fit never sees an estimator: it runs from a PrivacySpec (the privacy parameters,
read once by PrivacySpec.of), a road built with its own parameters resolved, and the rows'
FitRows. A fit run that way from hand-built values equals the estimator's fit with the same
parameters and seed; and no road module reads an estimator (checked on the source)."""

import ast
import dataclasses
import inspect
import textwrap
from pathlib import Path

import numpy as np
import pytest

from skdpgd import DPLogisticRegression, DPSGDClassifier
from skdpgd._core.fit import FitRows, PrivacySpec, private_fit
from skdpgd._full_batch.road import FullBatchConfig, FullBatchRoad
from skdpgd._minibatch.road import MinibatchConfig, fit_minibatch
from skdpgd.budget import PrivacyBudget
from skdpgd.losses import BinaryLogistic

ROOT = Path(__file__).resolve().parents[2] / "skdpgd"

#: Modules that hold nothing but the generic road or a road family.
ROAD_MODULES = ["_core/fit.py", "_full_batch/road.py", "_minibatch/road.py", "_network/road.py"]
#: Modules with an estimator and its road: only the road class is checked.
ROAD_CLASSES = {
    "preprocessing/_standard.py": "_ScalerRoad",
    "decomposition.py": "_PCARoad",
}

#: The attributes every fit publishes that the comparisons below read.
COMPARED = (
    "coef_",
    "intercept_",
    "epsilon_",
    "delta_",
    "n_samples_",
    "noise_multipliers_",
    "alpha_",
    "n_iter_",
)


def _data(n=600, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1).max()
    y = (X @ np.arange(1.0, d + 1) + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _assert_same(fitted, est):
    for name in COMPARED:
        if name not in fitted:
            continue
        got, want = fitted[name], getattr(est, name)
        if name in ("coef_", "intercept_"):  # the estimator reshapes nothing for two classes
            want = np.asarray(want)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=name)


FULL_BATCH_CASES = {
    "defaults": {},
    "add/remove-one, noisy count, balanced weights": {
        "neighbouring": "add_remove",
        "class_weight": "balanced",
    },
    "fixed alpha, schedule and steps": {
        "alpha": 0.01,
        "schedule": "uniform",
        "max_iter": 40,
        "row_clip": "data_norm",
        "fit_intercept": False,
    },
    "budget, public n_samples, explicit delta": {
        "neighbouring": "add_remove",
        "n_samples": 600,
        "delta": 1e-6,
        "budget": "add_remove",
    },
}


@pytest.mark.parametrize("case", list(FULL_BATCH_CASES))
def test_the_full_batch_road_runs_from_a_spec_without_an_estimator(case):
    params = dict(FULL_BATCH_CASES[case])
    budgets = {}
    if "budget" in params:  # one budget each: both fits must be admitted
        relation = params.pop("budget")
        budgets = {k: PrivacyBudget(10.0, 1e-4, neighbouring=relation) for k in ("a", "b")}
    X, y = _data()
    est = DPLogisticRegression(
        epsilon=0.8,
        data_norm=1.0,
        classes=[0, 1],
        random_state=7,
        budget=budgets.get("a"),
        **params,
    ).fit(X, y)

    privacy = {
        k: params[k] for k in ("neighbouring", "class_weight", "n_samples", "delta") if k in params
    }
    spec = PrivacySpec(
        label="DPLogisticRegression",
        epsilon=0.8,
        random_state=7,
        budget=budgets.get("b"),
        **privacy,
    )
    road_params = {
        k: params[k]
        for k in ("alpha", "schedule", "max_iter", "row_clip", "fit_intercept")
        if k in params
    }
    config = FullBatchConfig(data_norm=1.0, **road_params)
    road = FullBatchRoad(X, np.where(y == 1, 1.0, -1.0), BinaryLogistic(), 1, config)
    rows = FitRows(
        X.shape[0], sample_weight=np.ones(X.shape[0]), classes=np.array([0, 1]), y_index=y
    )
    result = private_fit(spec, road, rows)

    fitted = result.fitted()
    fitted["coef_"], fitted["intercept_"] = result.model
    _assert_same(fitted, est)
    assert fitted["mechanism_"] == est.mechanism_
    assert fitted["neighbouring_"] == est.neighbouring_
    if budgets:  # the same releases charged to each budget
        assert budgets["a"].spent_epsilon() == budgets["b"].spent_epsilon()
        assert budgets["b"].spent_epsilon() > 0


def test_the_minibatch_road_runs_from_a_spec_without_an_estimator():
    X, y = _data()
    est = DPSGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1], epochs=2, random_state=3).fit(
        X, y
    )
    spec = PrivacySpec(label="DPSGDClassifier", epsilon=1.0, random_state=3)
    config = MinibatchConfig(data_norm=1.0, epochs=2)
    result = fit_minibatch(
        spec,
        config,
        X,
        np.where(y == 1, 1.0, -1.0),
        np.ones(X.shape[0]),
        BinaryLogistic(),
        1,
        classes=np.array([0, 1]),
        y_index=y,
    )
    fitted = result.fitted()
    fitted["coef_"], fitted["intercept_"] = result.model
    _assert_same(fitted, est)
    assert fitted["sampling_rate_"] == est.sampling_rate_


def test_the_spec_is_read_once_from_the_estimator_and_checked():
    est = DPLogisticRegression(epsilon=2, delta=1e-7, n_samples=100, verbose=1, random_state=1)
    spec = PrivacySpec.of(est)
    assert spec == PrivacySpec(
        label="DPLogisticRegression",
        epsilon=2.0,
        delta=1e-7,
        neighbouring="auto",
        budget=None,
        random_state=1,
        n_samples=100,
        class_weight=None,
        verbose=1,
    )
    assert isinstance(spec.epsilon, float)
    assert PrivacySpec.of(est, label="step 2").label == "step 2"
    # DP-SGD has no neighbouring parameter: its road fixes add/remove-one
    assert PrivacySpec.of(DPSGDClassifier()).neighbouring == "auto"
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.epsilon = 3.0
    for bad, match in [
        ({"epsilon": 0.0}, "epsilon must be positive"),
        ({"epsilon": -1.0}, "epsilon must be positive"),
        ({"delta": 1.0}, r"delta must be in \(0, 1\)"),
        ({"neighbouring": "swap"}, "neighbouring must be 'auto'"),
        ({"n_samples": 0}, "n_samples must be positive"),
    ]:
        with pytest.raises(ValueError, match=match):
            PrivacySpec(**{"label": "x", "epsilon": 1.0, **bad})


def test_private_fit_takes_a_spec_a_road_and_the_rows():
    assert list(inspect.signature(private_fit).parameters) == ["spec", "road", "data"]


def _estimator_reads(tree, skip=()):
    """``[(line, what)]``: every name or attribute ``est`` / ``estimator`` and every
    parameter so named under ``tree``, but for the nodes under those in ``skip``."""
    names = {"est", "estimator"}
    skipped = {id(n) for top in skip for n in ast.walk(top)}
    out = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Attribute) and node.attr in names:
            out.append((node.lineno, f".{node.attr}"))
        elif isinstance(node, ast.Name) and node.id in names:
            out.append((node.lineno, node.id))
        elif isinstance(node, ast.arg) and node.arg in names:
            out.append((node.lineno, f"parameter {node.arg}"))
    return out


def _spec_of(tree):
    """The ``PrivacySpec.of`` function node of ``_core/fit.py``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "PrivacySpec":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "of":
                    return item
    raise AssertionError("PrivacySpec.of not found")


@pytest.mark.parametrize("module", ROAD_MODULES)
def test_no_road_module_reads_an_estimator(module):
    tree = ast.parse((ROOT / module).read_text())
    skip = ()
    if module == "_core/fit.py":  # the one reader of an estimator's privacy parameters
        skip = (_spec_of(tree),)
        assert _estimator_reads(skip[0]), "PrivacySpec.of reads the estimator"
    reads = _estimator_reads(tree, skip)
    assert reads == [], f"{module} reads an estimator at {reads}"


@pytest.mark.parametrize("module", sorted(ROAD_CLASSES))
def test_no_road_class_reads_an_estimator(module):
    tree = ast.parse((ROOT / module).read_text())
    (road,) = [
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == ROAD_CLASSES[module]
    ]
    assert _estimator_reads(road) == []


def test_the_check_sees_an_estimator_read():
    # the check above fails on the road as it was: a method reading fit.est
    old = ast.parse(
        textwrap.dedent(
            """
            class R:
                def setup(self, fit):
                    est = fit.est
                    return est.alpha
            """
        )
    )
    assert sorted(w for _, w in _estimator_reads(old)) == [".est", "est", "est"]

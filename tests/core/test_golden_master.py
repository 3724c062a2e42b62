"""Every estimator x mechanism x input kind reproduces its stored fit
(tests/_support/golden_master.py).

The master was written before the one-fit-path refactor; a change that moves a
noise draw or changes the arithmetic of a release shows up here as a mismatch.
"""

import json
import math

import numpy as np
import pytest

from _support import golden_master as gm

MASTER = json.loads(gm.PATH.read_text())
#: relative to the largest entry of the compared vector (at least 1): float64 rounding of
#: a few reordered operations, nothing a changed draw could hide in
TOL = 1e-12


def _close(got, want):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    return np.all(np.abs(got - want) <= TOL * scale)


def _check(name, factory):
    want = MASTER[name]
    got = gm.fit_case(factory)
    assert got["n_iter_"] == want["n_iter_"], name
    if math.isinf(want["epsilon_"]):
        assert math.isinf(got["epsilon_"])
    else:
        assert abs(got["epsilon_"] - want["epsilon_"]) <= TOL * max(1.0, want["epsilon_"]), name
    keys = ["weights"] if "weights" in want else ["coef_", "intercept_"]
    for key in keys:
        if key == "weights":
            assert len(got[key]) == len(want[key])
            for g, w in zip(got[key], want[key]):
                assert _close(g, w), name
        else:
            assert _close(got[key], want[key]), (name, key, got[key], want[key])


def test_master_covers_every_case():
    names = {name for name, _ in gm.cases()}
    assert names <= set(MASTER)
    assert len(names) > 80


@pytest.mark.parametrize("name,factory", gm.cases(), ids=[n for n, _ in gm.cases()])
def test_fit_matches_master(name, factory):
    _check(name, factory)


def _same(got, want, where):
    """Nested records: numbers to TOL, everything else (names, parameters) exactly."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), where
        for key in want:
            _same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert _close(got, want), (where, got, want)
    elif isinstance(want, float):
        assert isinstance(got, float), where
        if math.isinf(want):
            assert got == want, where
        else:
            assert abs(got - want) <= TOL * max(1.0, abs(want)), (where, got, want)
    else:
        assert got == want, (where, got, want)


def test_master_covers_the_composites():
    names = {name for name, _ in gm.composite_cases()}
    assert names <= set(MASTER)
    assert {"scaler-replace", "pipeline-dpscaler-logreg", "search-logreg"} <= names


@pytest.mark.parametrize(
    "name,factory", gm.composite_cases(), ids=[n for n, _ in gm.composite_cases()]
)
def test_composite_matches_master(name, factory):
    """DPStandardScaler's released statistics, PrivatePipeline's steps and final fit, and
    PrivateRandomSearchCV's choice, winner and spent epsilon."""
    _same(gm.fit_case(factory), MASTER[name], name)


@pytest.mark.parametrize("name,factory", gm.mlp_cases(), ids=[n for n, _ in gm.mlp_cases()])
def test_mlp_matches_master(name, factory):
    pytest.importorskip("torch")
    _check(name, factory)


_KERNEL_CASES = [(n, f) for n, f in gm.cases() if "-csr" not in n]


@pytest.mark.parametrize("name,factory", _KERNEL_CASES, ids=[n for n, _ in _KERNEL_CASES])
def test_fit_on_the_numba_kernels_matches_master(name, factory, monkeypatch):
    # the master's problems are small, so the fits above reduce dense X in numpy
    # (skdpgd._compute.small_problems); the numba kernels of larger X must give the same fits
    from skdpgd._compute import small_problems as _small_problems

    monkeypatch.setattr(_small_problems, "SMALL_PROBLEM_ENTRIES", 0)
    _check(name, factory)

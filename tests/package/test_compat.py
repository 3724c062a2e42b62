"""scikit-learn's private API is used in skdpgd._compat only, and its fallbacks work."""

import os
import pathlib
import re
import subprocess
import sys

import skdpgd

PACKAGE = pathlib.Path(skdpgd.__file__).parent


def test_private_sklearn_names_only_in_compat():
    private = re.compile(r"(from|import)\s+sklearn[\w.]*\._\w+|sklearn\.\w+\._\w+|import _\w+")
    offenders = []
    for path in PACKAGE.glob("*.py"):
        if path.name == "_compat.py":
            continue
        for line in path.read_text().splitlines():
            if "sklearn" in line and private.search(line):
                offenders.append(f"{path.name}: {line.strip()}")
    assert offenders == []


def test_fallback_validation_runs_without_sklearn_private_api():
    code = """
import numpy as np, warnings
warnings.simplefilter("ignore")
import skdpgd._compat as c
assert not c.USING_SKLEARN_PRIVATE
from skdpgd import DPLogisticRegression, DPSGDRegressor
X = np.random.default_rng(0).normal(size=(50, 3)) / 3
y = (X[:, 0] > 0).astype(int)
DPLogisticRegression(data_norm=1.0, classes=[0, 1], random_state=0).fit(X, y)
for bad in [dict(epsilon=-1.0), dict(epsilon=float("nan")), dict(data_norm=np.inf),
            dict(schedule="nope"), dict(fit_intercept="yes"), dict(max_iter=0)]:
    try:
        DPLogisticRegression(**bad).fit(X, y)
    except ValueError as exc:
        assert "parameter of DPLogisticRegression must be" in str(exc), exc
    else:
        raise AssertionError(bad)
try:
    DPSGDRegressor(batch_size=0).fit(X, X[:, 0])
except ValueError as exc:
    assert "'batch_size' parameter" in str(exc)
print("ok")
"""
    env = {**os.environ, "SKDPGD_SKLEARN_PRIVATE": "0"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")

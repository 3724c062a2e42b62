"""A fresh install's first default fit of each estimator on a small problem compiles no numba
kernel (small dense problems are reduced in numpy, skdpgd._compute.small_problems):
scikit-learn users expect a first fit to be instant. benchmarks/bench_startup.py measures the
time."""

import json
import os
import pathlib
import subprocess
import sys

import skdpgd

_FIRST_FITS = r"""
import json, sys, warnings
import numpy as np
from numba.core import event
warnings.simplefilter("ignore")
import skdpgd
from skdpgd import (DPHuberRegressor, DPLinearSVC, DPLogisticRegression, DPPoissonRegressor,
                    DPRidge, DPSGDClassifier, DPSGDRegressor)

rng = np.random.default_rng(0)
X = rng.standard_normal((1000, 20))
X /= np.linalg.norm(X, axis=1).max()
y = (X[:, 0] > 0).astype(int)
yr = np.clip(X @ rng.standard_normal(20), -1.0, 1.0)
y3 = np.digitize(X[:, 1], [-0.05, 0.05])
counts = rng.poisson(np.exp(X @ rng.standard_normal(20)))
fits = {
    "DPLogisticRegression": lambda: DPLogisticRegression(
        epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0).fit(X, y),
    "DPRidge": lambda: DPRidge(epsilon=1.0, data_norm=1.0, y_bound=1.0,
                               random_state=0).fit(X, yr),
    "DPSGDClassifier": lambda: DPSGDClassifier(
        epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0).fit(X, y),
    "DPSGDRegressor": lambda: DPSGDRegressor(epsilon=1.0, data_norm=1.0, y_bound=1.0,
                                             random_state=0).fit(X, yr),
    "DPHuberRegressor": lambda: DPHuberRegressor(epsilon=1.0, data_norm=1.0, y_bound=1.0,
                                                 random_state=0).fit(X, yr),
    "DPPoissonRegressor": lambda: DPPoissonRegressor(epsilon=1.0, data_norm=1.0, y_bound=10.0,
                                                     random_state=0).fit(X, counts),
    "DPLinearSVC": lambda: DPLinearSVC(epsilon=1.0, data_norm=1.0, classes=[0, 1],
                                       random_state=0).fit(X, y),
    # the other roads a default fit takes on other budgets and label sets
    "DPLogisticRegression eps=0.2": lambda: DPLogisticRegression(
        epsilon=0.2, data_norm=1.0, classes=[0, 1], random_state=0).fit(X, y),
    "DPLogisticRegression eps=0.05": lambda: DPLogisticRegression(
        epsilon=0.05, data_norm=1.0, classes=[0, 1], random_state=0).fit(X, y),
    "DPLogisticRegression 3 classes": lambda: DPLogisticRegression(
        epsilon=1.0, data_norm=1.0, classes=[0, 1, 2], random_state=0).fit(X, y3),
    "DPSGDClassifier 3 classes": lambda: DPSGDClassifier(
        epsilon=1.0, data_norm=1.0, classes=[0, 1, 2], random_state=0).fit(X, y3),
    "DPLinearSVC 3 classes": lambda: DPLinearSVC(
        epsilon=1.0, data_norm=1.0, classes=[0, 1, 2], random_state=0).fit(X, y3),
}
roads = {}
out = {"file": skdpgd.__file__}
for name, fit in fits.items():
    with event.install_recorder("numba:compile") as rec:
        est = fit()
    roads[name] = est.schedule_
    out[name] = sorted({str(ev.data["dispatcher"].py_func.__qualname__)
                        for _, ev in rec.buffer if ev.is_start})
out["roads"] = roads
print(json.dumps(out))
"""


def test_first_small_default_fits_compile_no_numba_kernel(tmp_path):
    # a new process with an empty numba cache: whatever a fit calls compiles (and is seen)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    root = str(pathlib.Path(skdpgd.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
    res = subprocess.run(
        [sys.executable, "-c", _FIRST_FITS],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert pathlib.Path(out.pop("file")).resolve() == pathlib.Path(skdpgd.__file__).resolve()
    roads = out.pop("roads")
    assert out == {name: [] for name in out}, out
    assert len(out) == 12
    # every full-batch road of a default fit was taken
    assert {"newton", "output", "uniform", "ssp"} <= set(roads.values()), roads

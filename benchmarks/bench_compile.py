"""Cold first fit of each estimator in a fresh process: import, compile, and which kernels.

For each estimator a fresh interpreter gets ``NUMBA_CACHE_DIR`` set to a new empty directory
(so nothing is loaded from numba's cache: every kernel a fit uses is compiled), imports
skdpgd, and fits the estimator with its default parameters on small data (``--n`` x ``--d``,
rows of norm <= 1, ``data_norm=1``); then it fits a second time in the same process (the
compiled kernels are in memory: what is left is the fit itself). A second fresh interpreter
with the cache directory now filled times a *warm* first fit (kernels loaded from the cache).

With ``--reductions`` the same for each reduction of the backends called alone (the Hessian
sum, the sufficient statistics, the objective, dense and CSR): what a mechanism that uses it
adds to a fit's compilation (kernels already compiled by the fit are not compiled again).

Reported per estimator: import time, cold first fit, the refit, cold fit minus refit (the
compilation), warm first fit; and, from numba's compile events (``numba:compile``), every
kernel compiled during the cold fit with its exclusive compile time (the time of the kernels
it calls, compiled while it was being typed, is subtracted) and the number of
specialisations. ``--runs`` repeats the cold measurement in new cache directories and keeps
the minimum (the machine may be shared).

Run ``python benchmarks/bench_compile.py`` (about a minute on an idle machine).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ESTIMATORS = {
    "DPLogisticRegression": "skdpgd.DPLogisticRegression(data_norm=1.0).fit(X, y)",
    "DPLogisticRegression (3 classes)": "skdpgd.DPLogisticRegression(data_norm=1.0).fit(X, y)",
    "DPRidge": "skdpgd.DPRidge(data_norm=1.0, y_bound=1.0).fit(X, y)",
    "DPSGDClassifier": "skdpgd.DPSGDClassifier(data_norm=1.0).fit(X, y)",
}
#: The reductions alone (``--reductions``): what a mechanism that uses them adds to a fit.
_R = "from skdpgd._core.data import make_rows; import scipy.sparse as sp; "
_D = _R + "rows = make_rows(X, y, w, True); "
_S = _R + "rows = make_rows(sp.csr_matrix(X), y, w, True); "
REDUCTIONS = {
    "hessian_sum, binary, dense": _D + "rows.hessian_sum(c1, b1, 0)",
    "hessian_sum, 3 classes, dense": _D + "rows.hessian_sum(c3, b3, 1)",
    "suff_stats, dense": _D + "rows.suff_stats()",
    "objective, binary, dense": _D + "rows.objective(c1, b1, 0, 0.0, 1.0)",
    "grad_sum, binary, CSR": _S + "rows.grad_sum(c1, b1, 0, 0.0, 1.0)",
    "hessian_sum, binary, CSR": _S + "rows.hessian_sum(c1, b1, 0)",
    "suff_stats, CSR": _S + "rows.suff_stats()",
    "objective, binary, CSR": _S + "rows.objective(c1, b1, 0, 0.0, 1.0)",
}

_CHILD = r"""
import json, sys, time
import numpy as np
from numba.core import event
name, action, n, d = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(0)
X = rng.standard_normal((n, d))
X /= np.linalg.norm(X, axis=1).max()
if "Ridge" in name:
    y = np.clip(X @ rng.standard_normal(d), -1, 1)
elif "3 classes" in name:
    y = np.digitize(X[:, 0], [-0.02, 0.02])
else:
    y = (X[:, 0] > 0).astype(int)
w = np.ones(n)
c1, b1 = rng.standard_normal((1, d)), np.zeros(1)
c3, b3 = rng.standard_normal((3, d)), np.zeros(3)
t0 = time.perf_counter()
import skdpgd
t1 = time.perf_counter()
with event.install_recorder("numba:compile") as rec:
    t2 = time.perf_counter()
    exec(action)
    t3 = time.perf_counter()
exec(action)
t4 = time.perf_counter()
spans = []
starts = {}
for ts, ev in rec.buffer:
    key = id(ev.data["dispatcher"]), str(ev.data["args"])
    if ev.is_start:
        starts[key] = ts
    else:
        disp = ev.data["dispatcher"]
        spans.append((starts.pop(key), ts, disp.py_func.__module__ + "." + disp.py_func.__name__,
                      str(ev.data["args"])))
kernels = {}
for s0, s1, qual, args in spans:
    inner = sum(c1 - c0 for c0, c1, _, _ in spans if s0 < c0 and c1 < s1 and not any(
        s0 < p0 < c0 and c1 < p1 < s1 for p0, p1, _, _ in spans))
    k = kernels.setdefault(qual, [0.0, 0])
    k[0] += (s1 - s0) - inner
    k[1] += 1
print(json.dumps({"import": t1 - t0, "fit": t3 - t2, "refit": t4 - t3, "kernels": kernels}))
"""


def run_child(name, action, n, d, cache):
    env = dict(
        os.environ,
        NUMBA_CACHE_DIR=cache,
        PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
    )
    r = subprocess.run(
        [sys.executable, "-c", _CHILD, name, action, str(n), str(d)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--d", type=int, default=20)
    p.add_argument("--runs", type=int, default=2, help="cold runs per estimator (min kept)")
    p.add_argument("--only", default=None, help="substring of the estimator names to run")
    p.add_argument(
        "--reductions",
        action="store_true",
        help="also the reductions alone (Hessian, sufficient statistics, CSR)",
    )
    args = p.parse_args()
    import numba

    print(f"# numba {numba.__version__}, {os.cpu_count()} cpus, data {args.n} x {args.d}\n")
    head = [
        "estimator / reduction",
        "import",
        "cold fit",
        "refit",
        "compile (cold - refit)",
        "warm fit",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    details = []
    worst = 0.0
    todo = dict(ESTIMATORS, **(REDUCTIONS if args.reductions else {}))
    for name, ctor in todo.items():
        if args.only and args.only not in name:
            continue
        best, warm = None, None
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as cache:
                cold = run_child(name, ctor, args.n, args.d, cache)
                w = run_child(name, ctor, args.n, args.d, cache)
            if best is None or cold["fit"] < best["fit"]:
                best = cold
            warm = w if warm is None or w["fit"] < warm["fit"] else warm
        comp = best["fit"] - best["refit"]
        if name in ESTIMATORS:
            worst = max(worst, comp)
        lines.append(
            f"| {name} | {best['import']:.2f} s | {best['fit']:.2f} s | "
            f"{best['refit']:.3f} s | {comp:.2f} s | {warm['fit']:.2f} s |"
        )
        ks = sorted(best["kernels"].items(), key=lambda kv: -kv[1][0])
        details.append(
            f"{name}: "
            + ", ".join(
                f"{q.rsplit('.', 1)[-1]} {t:.2f} s" + (f" (x{c})" if c > 1 else "")
                for q, (t, c) in ks
            )
            + f"; total {sum(t for t, _ in best['kernels'].values()):.2f} s"
        )
    print("\n".join(lines))
    print("\nkernels compiled during the cold fit (exclusive compile time, specialisations):")
    print("\n".join("- " + s for s in details))
    print(
        f"\ncold compile <= 3 s per estimator: worst {worst:.2f} s -> "
        f"{'MET' if worst <= 3 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()

"""Fit time and peak memory against the size of X, full batch and DP-SGD, N up to 1e6.

Each fit runs in a fresh child process (warm numba cache) that builds X, records its peak
resident memory, fits once with the defaults (epsilon = 1, data_norm = 1) and records the
peak again; the growth during the fit is what the estimator allocates (a copy of X would show
up as + size(X)). Usage: ``python benchmarks/bench_scale.py [--quick] [--d 50]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import resource, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from skdpgd import {est}
n, d = {n}, {d}
rng = np.random.default_rng(0)
X = rng.normal(size=(n, d))
X /= np.linalg.norm(X, axis=1).max()
y = (X[:, 0] + 0.1 * X[:, 0].std() * rng.normal(size=n) > 0).astype(np.int64)
{est}(epsilon=1.0, data_norm=1.0, random_state=0).fit(X[:500], y[:500])  # load the JIT cache
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
t0 = time.perf_counter()
m = {est}(epsilon=1.0, data_norm=1.0, random_state=0).fit(X, y)
t = time.perf_counter() - t0
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(t, before, after, X.nbytes, m.n_iter_, m.score(X[:100000], y[:100000]))
"""


def run(est, n, d):
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", CHILD.format(est=est, n=n, d=d)],
                         capture_output=True, text=True, env=env, check=True).stdout.split()
    t, before, after, xbytes, steps, acc = out
    return float(t), int(before), int(after), int(xbytes), int(steps), float(acc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--d", type=int, default=50)
    args = ap.parse_args()
    sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    mib = 2 ** 20
    print(f"d = {args.d}, epsilon = 1, defaults otherwise; memory in MiB\n")
    print("| estimator | N | size(X) | steps | fit time | peak before fit | peak after | "
          "growth / size(X) | train acc |")
    print("|---|---|---|---|---|---|---|---|---|")
    for est in ("DPLogisticRegression", "DPSGDClassifier"):
        for n in sizes:
            t, before, after, xbytes, steps, acc = run(est, n, args.d)
            print(f"| {est} | {n:,} | {xbytes / mib:.0f} | {steps} | {t:.2f} s | "
                  f"{before / mib:.0f} | {after / mib:.0f} | {(after - before) / xbytes:.2f} | "
                  f"{acc:.3f} |", flush=True)


if __name__ == "__main__":
    main()

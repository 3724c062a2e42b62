"""Fit time and peak memory against the size of X, full batch and DP-SGD, N up to 1e6.

Each estimator and size runs in a fresh child process (warm numba cache): it builds X, fits
once to load every compiled kernel the path needs, then fits again while ``tracemalloc``
records the peak of the memory numpy and Python allocate during that fit (a copy of X would
show up as 1.0 x size(X); the kernels' own small buffers are not traced) and the process's
peak resident memory. Usage: ``python benchmarks/bench_scale.py [--quick] [--d 50]``.
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
import tracemalloc
{est}(epsilon=1.0, data_norm=1.0, random_state=0).fit(X, y)  # loads the compiled path
tracemalloc.start()
t0 = time.perf_counter()
m = {est}(epsilon=1.0, data_norm=1.0, random_state=0).fit(X, y)
t = time.perf_counter() - t0
traced = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(t, traced, rss, X.nbytes, m.n_iter_, m.score(X[:100000], y[:100000]))
"""


def run(est, n, d):
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(est=est, n=n, d=d)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.split()
    t, traced, rss, xbytes, steps, acc = out
    return float(t), int(traced), int(rss), int(xbytes), int(steps), float(acc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--d", type=int, default=50)
    args = ap.parse_args()
    sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    mib = 2**20
    print(f"d = {args.d}, epsilon = 1, defaults otherwise; memory in MiB\n")
    print(
        "| estimator | N | size(X) | steps | fit time | traced peak in fit | "
        "traced / size(X) | process peak RSS | train acc |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for est in ("DPLogisticRegression", "DPSGDClassifier"):
        for n in sizes:
            t, traced, rss, xbytes, steps, acc = run(est, n, args.d)
            print(
                f"| {est} | {n:,} | {xbytes / mib:.1f} | {steps} | {t:.2f} s | "
                f"{traced / mib:.1f} | {traced / xbytes:.2f} | {rss / mib:.0f} | "
                f"{acc:.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()

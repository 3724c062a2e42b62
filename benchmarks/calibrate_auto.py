"""How the public constants behind the defaults were chosen (and what they cost elsewhere).

The defaults of the full-batch estimators depend on three public constants that no theorem
fixes: ``AUTO_KAPPA`` (``alpha='auto'`` sets the condition number), ``ROW_CLIP_FACTOR``
(``row_clip='auto'`` clips rows at this fraction of a private mean-norm estimate) and, for
DP-SGD, ``SGD_CLIP_FACTOR``. This script measures mean test accuracy over a grid of each
(the others at their defaults) on synthetic data of several shapes, which is public by
construction, and on the bundled sets for reference. Choosing a constant here looks at
benchmark data, never at a user's private data: the constants are fixed in the code.

Usage: ``python benchmarks/calibrate_auto.py [--quick] [--reps 10]``
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import skdpgd._base as base  # noqa: E402
import skdpgd._minibatch as mb  # noqa: E402
import skdpgd.schedules as sched  # noqa: E402
from skdpgd import DPLogisticRegression, DPSGDClassifier  # noqa: E402

EPSILONS = (0.3, 1.0, 3.0)


def synthetic(n, d, seed, margin_noise=0.5):
    """Rows with heterogeneous norms (log-normal scale), a sparse-ish linear rule, label noise."""
    rng = np.random.default_rng(seed)
    scale = rng.lognormal(0.0, 0.5, size=(n, 1))
    X = rng.normal(size=(n, d)) * scale
    w = rng.normal(size=d) * (rng.random(d) < 0.5)
    y = (X @ w + margin_noise * np.linalg.norm(w) * rng.normal(size=n) > 0).astype(int)
    X = X - X.mean(0)
    X /= np.linalg.norm(X, axis=1).max()
    cut = int(0.75 * n)
    return X[:cut], X[cut:], y[:cut], y[cut:]


def bundled(name, seed):
    from benchmarks._data import load

    s = load(name, seed=seed)
    return s.X_train, s.X_test, s.y_train, s.y_test


def mean_accuracy(make, datasets, eps):
    return float(np.mean([make(eps, s).fit(a, c).score(b, d)
                          for s, (a, b, c, d) in enumerate(datasets)]))


def sweep(label, module, attr, values, make, datasets):
    old = getattr(module, attr)
    print(f"\n{label}: {attr} (default {old})")
    print("  value   " + "  ".join(f"eps={e:<5g}" for e in EPSILONS))
    try:
        for v in values:
            setattr(module, attr, v)
            accs = [mean_accuracy(make, datasets, e) for e in EPSILONS]
            mark = " <- default" if v == old else ""
            print(f"  {v:<7g} " + "  ".join(f"{a:9.3f}" for a in accs) + mark)
    finally:
        setattr(module, attr, old)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    reps = 3 if args.quick else args.reps
    warnings.simplefilter("ignore")
    t0 = time.time()
    sets = {
        "synthetic n=600 d=20": [synthetic(800, 20, s) for s in range(reps)],
        "synthetic n=6000 d=50": [synthetic(8000, 50, s) for s in range(reps)],
    }
    if not args.quick:
        sets["breast_cancer (reference)"] = [bundled("breast_cancer", s) for s in range(reps)]
        sets["digits_3_vs_5 (reference)"] = [bundled("digits_3_vs_5", s) for s in range(reps)]

    def full(eps, seed):
        return DPLogisticRegression(epsilon=eps, data_norm=1.0, random_state=seed)

    def sgd(eps, seed):
        return DPSGDClassifier(epsilon=eps, data_norm=1.0, random_state=seed)

    for name, data in sets.items():
        print(f"\n=== {name}: mean test accuracy over {len(data)} splits ===")
        sweep("DPLogisticRegression", sched, "AUTO_KAPPA", (5.0, 10.0, 20.0, 50.0, 200.0),
              full, data)
        sweep("DPLogisticRegression", base, "ROW_CLIP_FACTOR", (0.2, 0.35, 0.5, 0.75, 1.0),
              full, data)
        if math.prod(data[0][0].shape) > 50_000:
            sweep("DPSGDClassifier", mb, "SGD_CLIP_FACTOR", (0.1, 0.25, 0.5, 1.0), sgd, data)
    print(f"\n(total {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()

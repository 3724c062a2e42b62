"""Binary DP-SGD below the prior switch's ratio on a balanced, separable 300-row set.

Rows ``X ~ N(0, I / d)`` scaled to norm at most 1, label ``x_0 > 0`` (300 training rows, 300
test rows, a new draw per seed), ``DPSGDClassifier(epsilon, data_norm=1, random_state=seed)``
with everything else 'auto' (a noisy row count, default delta). Prints, per (d, epsilon), the
median, worst and mean test accuracy over the seeds and how many fits returned the
intercept-only model (``schedule_ == 'prior'``). Before 2026-11-28 the switch at p = 0.5 chose
that model on every binary fit below its ratio.

Run ``PYTHONPATH=. python benchmarks/bench_sgd_binary_select.py`` (a few seconds); ``--policy
'{"SGD_BINARY_SELECT": null}'`` runs it under changed policy constants (JSON).
"""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np

from skdpgd import DPSGDClassifier, policy


def data(seed, d, n=300):
    rng = np.random.default_rng(1000 + seed)
    X = rng.normal(size=(2 * n, d)) / np.sqrt(d)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = (X[:, 0] > 0).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--d", type=int, nargs="+", default=[20, 64, 100, 300])
    p.add_argument("--eps", type=float, nargs="+", default=[0.3, 1.0])
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--policy", default="{}", help="policy constants to change (JSON)")
    args = p.parse_args(argv)
    changes = {
        k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(args.policy).items()
    }
    print("| d | eps | median | worst | mean | intercept-only |")
    print("|---|---|---|---|---|---|")
    with policy.using(**changes):
        for d in args.d:
            for eps in args.eps:
                acc, constant = [], 0
                for seed in range(args.seeds):
                    Xtr, ytr, Xte, yte = data(seed, d)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        clf = DPSGDClassifier(epsilon=eps, data_norm=1.0, random_state=seed)
                        clf.fit(Xtr, ytr)
                    acc.append(clf.score(Xte, yte))
                    constant += clf.schedule_ == "prior"
                a = np.array(acc)
                print(
                    f"| {d} | {eps:g} | {np.median(a):.3f} | {a.min():.3f} | {a.mean():.3f} | "
                    f"{constant}/{args.seeds} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()

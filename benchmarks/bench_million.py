"""The default DPLogisticRegression at N = 1e6 against scikit-learn's LogisticRegression.

Issue 11's speed target: the default fit (only ``epsilon`` and ``data_norm`` given) at
N = 1e6 rows with d = 50 and d = 200 takes no longer than scikit-learn's
``LogisticRegression().fit`` on the same data. Both run in this process, one after the other,
on the same array (the compiled kernels are loaded by a small warm-up fit first, so the
timing is of the fit, not of numba's compilation). Printed: the fit times, their ratio, the
mechanism the 'auto' rule chose, its passes over X (a Newton iteration reads X twice: the
gradient sum and the Hessian sum; a gradient step once; the row-norm query once) and the
test accuracy of both.

Usage: ``python benchmarks/bench_million.py [--n 1000000] [--d 50,200] [--eps 1]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def make(n, d, seed=0):
    """A logistic model with a few informative directions (the same for every seed); rows of
    norm <= 1."""
    w = np.zeros(d)
    w[: min(d, 10)] = np.random.default_rng(12345).standard_normal(min(d, 10)) * 6.0
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.sqrt(d) * 2.0
    np.clip(X, -1.0, 1.0, out=X)
    norms = np.linalg.norm(X, axis=1)
    X /= np.maximum(norms, 1.0)[:, None]
    p = 1.0 / (1.0 + np.exp(-(X @ w + 0.3)))
    y = (rng.random(n) < p).astype(np.int64)
    return X, y


def passes(est):
    """Passes over X of a fitted default estimator."""
    norm_query = 1 if est.row_clip_noise_multiplier_ is not None else 0
    if est.mechanism_ == "newton":
        return 2 * est.n_iter_ + norm_query
    if est.mechanism_ == "gradient":
        return est.n_iter_ + norm_query
    return float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", default="50,200")
    ap.add_argument("--eps", default="1")
    args = ap.parse_args(argv)
    from sklearn.linear_model import LogisticRegression

    from skdpgd import DPLogisticRegression

    warnings.simplefilter("ignore")
    Xw, yw = make(2000, 5)
    for e in (1.0, 1e6):  # load every compiled kernel the default may use
        DPLogisticRegression(epsilon=e, data_norm=1.0, classes=[0, 1], random_state=0).fit(Xw, yw)
    print("| N | d | eps | mechanism | passes | skdpgd fit (s) | sklearn fit (s) | ratio "
          "| acc skdpgd | acc sklearn |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for d in (int(v) for v in args.d.split(",")):
        X, y = make(args.n, d)
        Xt, yt = make(200_000, d, seed=1)
        t0 = time.perf_counter()
        sk = LogisticRegression().fit(X, y)
        t_sk = time.perf_counter() - t0
        for eps in (float(v) for v in args.eps.split(",")):
            t0 = time.perf_counter()
            est = DPLogisticRegression(epsilon=eps, data_norm=1.0, classes=[0, 1],
                                       random_state=0).fit(X, y)
            t_dp = time.perf_counter() - t0
            print(f"| {args.n:.0e} | {d} | {eps:g} | {est.mechanism_} ({est.schedule_}) "
                  f"| {passes(est)} | {t_dp:.2f} | {t_sk:.2f} | {t_dp / t_sk:.2f} "
                  f"| {est.score(Xt, yt):.4f} | {sk.score(Xt, yt):.4f} |", flush=True)


if __name__ == "__main__":
    main()

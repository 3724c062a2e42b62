"""The default DPLogisticRegression at N = 1e6 against scikit-learn's LogisticRegression.

Targets: the default fit (only ``epsilon``, ``data_norm`` and ``classes`` given) at
N = 1e6 rows takes <= 0.5x scikit-learn's ``LogisticRegression().fit`` at d = 50 and <= 1.0x
at d = 200, at epsilon 1 and 1e6, with accuracy within 0.002 of scikit-learn's at
epsilon = 1e6; the same at d = 200 with 3 classes (scikit-learn's multinomial fit). Both
run in this process, one after the other, on the same array (the compiled kernels are loaded
by a small warm-up fit first, so the timing is of the fit, not of numba's compilation; each
time is the best of ``--repeat`` runs).

Printed per row: the fit times and their ratio, the mechanism the 'auto' rule chose, the
passes over X (gradient passes, each fused with the full Hessian sum when one is released
at rate 1, plus the row-norm query), the Hessian work in full-pass equivalents (the sum of
the Hessian releases' Poisson rates), and the test accuracy of both.

Usage::

    python benchmarks/bench_million.py [--n 1000000] [--quick] [--repeat 2]

``--quick``: N = 2e5, one repeat (a sanity check on a loaded machine: report ratios only).
``--before``: also fit with the earlier Newton plan (a Hessian at every iteration, over all
rows, 70% of mu^2 on the gradients) on today's kernels (fused pass, one BLAS thread for the
solve), rows marked "every-Hessian plan", for a before/after table from one process.
"""

from __future__ import annotations

import argparse
import contextlib
import time
import warnings

import numpy as np


def make(n, d, seed=0, classes=2):
    """A linear model with a few informative directions (the same for every seed); rows of
    norm <= 1. Two classes: logistic labels; more: the argmax of noisy class scores."""
    k = 1 if classes == 2 else classes
    W = np.zeros((d, k))
    W[: min(d, 10)] = np.random.default_rng(12345).standard_normal((min(d, 10), k)) * 6.0
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.sqrt(d) * 2.0
    np.clip(X, -1.0, 1.0, out=X)
    norms = np.linalg.norm(X, axis=1)
    X /= np.maximum(norms, 1.0)[:, None]
    if classes == 2:
        p = 1.0 / (1.0 + np.exp(-(X @ W[:, 0] + 0.3)))
        y = (rng.random(n) < p).astype(np.int64)
    else:
        y = np.argmax(X @ W + rng.gumbel(size=(n, k)), axis=1).astype(np.int64)
    return X, y


def passes(est):
    """``(passes over X, Hessian work in full passes)`` of a fitted default estimator."""
    norm_query = 1 if est.row_clip_noise_multiplier_ is not None else 0
    if est.mechanism_ == "newton":
        rates = np.asarray(est.hessian_rates_, dtype=float)
        # a Hessian at rate 1 is fused with its iteration's gradient pass; a subsampled one
        # reads its rows (a fraction `rate` of X) once more
        extra = float(np.sum(rates[rates < 1.0]))
        return est.n_iter_ + norm_query + extra, float(np.sum(rates))
    if est.mechanism_ == "kronecker":
        # a gradient pass per iteration, the class factor over the subsample (rate q) at each,
        # and X'X once over the subsample
        q = float(est.hessian_rates_[0])
        return est.n_iter_ * (1.0 + q) + norm_query + q, q
    if est.mechanism_ == "gradient":
        return est.n_iter_ + norm_query, 0.0
    return float("nan"), float("nan")


@contextlib.contextmanager
def _plan(name):
    """``'today'``: the shipped constants; ``'every-Hessian plan'``: a Hessian at every iteration,
    over all rows, share 0.7 (the policy is back to the shipped one afterwards)."""
    import skdpgd.policy as S

    changes = (
        {}
        if name == "today"
        else dict(
            AUTO_NEWTON_SHARE=0.7,
            AUTO_HESSIAN_MIN_ROWS=float("inf"),
            AUTO_HESSIAN_MAX_WORK=float("inf"),
        )
    )
    with S.using(**changes):
        yield


def best_time(fn, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument(
        "--quick",
        action="store_true",
        help="N = 2e5 and one repeat (sanity check on a loaded machine)",
    )
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--cases", default="2:50,2:200,3:200", help="classes:d pairs, comma-separated")
    ap.add_argument("--eps", default="1,1e6")
    ap.add_argument(
        "--before",
        action="store_true",
        help="also fit with the earlier Newton plan (see the module docstring)",
    )
    args = ap.parse_args(argv)
    n = int(2e5 if args.quick else args.n)
    repeat = 1 if args.quick else args.repeat
    from sklearn.linear_model import LogisticRegression

    from skdpgd import DPLogisticRegression

    warnings.simplefilter("ignore")
    for k in (2, 3):  # load every compiled kernel the default may use
        Xw, yw = make(4000, 5, classes=k)
        for e in (1.0, 1e6):
            DPLogisticRegression(
                epsilon=e, data_norm=1.0, classes=list(range(k)), random_state=0
            ).fit(Xw, yw)
    print(
        f"N = {n:.0e}, best of {repeat}; ratio = skdpgd fit / sklearn "
        "LogisticRegression().fit in this process"
    )
    print(
        "| classes | d | eps | mechanism | passes over X | Hessian work (full passes) "
        "| skdpgd (s) | sklearn (s) | ratio | acc skdpgd | acc sklearn | acc diff |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for case in args.cases.split(","):
        k, d = (int(v) for v in case.split(":"))
        X, y = make(n, d, classes=k)
        Xt, yt = make(200_000, d, seed=1, classes=k)
        t_sk, sk = best_time(lambda: LogisticRegression().fit(X, y), repeat)
        acc_sk = sk.score(Xt, yt)
        for eps in (float(v) for v in args.eps.split(",")):
            for plan in ["today", "every-Hessian plan"] if args.before else ["today"]:
                with _plan(plan):
                    t_dp, est = best_time(
                        lambda: DPLogisticRegression(
                            epsilon=eps, data_norm=1.0, classes=list(range(k)), random_state=0
                        ).fit(X, y),
                        repeat,
                    )
                n_pass, h_work = passes(est)
                acc = est.score(Xt, yt)
                label = "" if plan == "today" else f", {plan}"
                print(
                    f"| {k} | {d} | {eps:g} | {est.mechanism_} ({est.schedule_}{label}) "
                    f"| {n_pass:.2f} | {h_work:.2f} | {t_dp:.2f} | {t_sk:.2f} "
                    f"| {t_dp / t_sk:.2f} | {acc:.4f} | {acc_sk:.4f} | {acc - acc_sk:+.4f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()

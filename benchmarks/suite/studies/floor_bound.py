"""Can any intercept-only release meet the floor where the default misses it?

For every (half, set, protocol, epsilon) cell where a default's median score is more than
0.005 below the floor (the majority class's accuracy; R^2 = 0), this fits the intercept-only
model with the *whole* budget (``schedule='prior'``: the class counts or the mean of y, one
Gaussian release, the estimators' own sensitivities) on the same 5 splits, with 20 noise
draws per split, and prints its mean score beside the floor and the default's median. Where
even that release is below the floor, the cell's miss is the budget's, not the rule's: the
counts' noise hides which class is the majority, or the mean's noise alone costs more than
0.005 of R^2, and every model needs that intercept. Measured numbers only; nothing chosen.

    PYTHONPATH=. python -m benchmarks.suite.studies.floor_bound [--results DIR] [--version NAME]

It reads ``peers_<half>.csv`` and ``NAME_<half>.csv`` (default ``after``) from the results
folder (default ``benchmarks/out/suite``; see :mod:`benchmarks.suite.targets`) and writes
``floor_bound.csv`` there (one row per cell), which ``targets --causes`` reads to name the
floor misses' cause.
"""

import argparse
import os
import warnings

import numpy as np
import pandas as pd

from skdpgd import DPLogisticRegression, DPRidge

from .. import datasets as D
from .. import protocols as P
from ..run import RESULTS

TOL = 0.005
DRAWS = 20


def floor_misses(version, results=RESULTS):
    """[(half, dataset, protocol, epsilon, task, estimator, default median, floor)]."""
    out = []
    for half in ("design", "report"):
        ours = pd.read_csv(os.path.join(results, f"{version}_{half}.csv"))
        peers = pd.read_csv(os.path.join(results, f"peers_{half}.csv"))
        maj = peers[peers["method"] == "majority"].groupby(["dataset", "protocol"])["score"]
        maj = maj.median()
        med = ours.groupby(["dataset", "protocol", "epsilon", "task", "method"])["score"]
        for (ds, pr, eps, task, m), s in med.median().items():
            floor = float(maj[(ds, pr)]) if task == "classification" else 0.0
            if s < floor - TOL:
                out.append((half, ds, pr, float(eps), task, m, float(s), floor))
    return out


def prior_score(ds, protocol, eps, task, seeds=5, draws=DRAWS):
    """Mean test score of the intercept-only model released with the whole budget."""
    raw = D.load(ds)
    scores = []
    for seed in range(seeds):
        p = P.prepare(raw, protocol, seed)
        for k in range(draws):
            rs = 1000 * seed + k
            if task == "classification":
                m = DPLogisticRegression(
                    epsilon=eps, data_norm=p.data_norm, schedule="prior", random_state=rs
                )
            else:
                m = DPRidge(
                    epsilon=eps,
                    data_norm=p.data_norm,
                    y_bound=p.y_bound,
                    schedule="prior",
                    random_state=rs,
                )
            scores.append(m.fit(p.X_train, p.y_train).score(p.X_test, p.y_test))
    return float(np.mean(scores))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", default=RESULTS)
    ap.add_argument("--version", default="after")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    misses = floor_misses(args.version, args.results)
    cache, rows = {}, []
    print(
        "| half | set | protocol | eps | estimator | default | floor | intercept-only, whole "
        "budget | floor reachable by it |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for half, ds, pr, eps, task, m, s, floor in misses:
        key = (ds, pr, eps)
        if key not in cache:
            cache[key] = prior_score(ds, pr, eps, task)
        b = cache[key]
        rows.append(
            {
                "half": half,
                "dataset": ds,
                "protocol": pr,
                "epsilon": eps,
                "task": task,
                "prior_score": b,
                "floor": floor,
            }
        )
        print(
            f"| {half} | {ds} | {pr} | {eps:g} | {m} | {s:.3f} | {floor:.3f} | {b:.3f} | "
            f"{'yes' if b >= floor - TOL else 'no'} |"
        )
    out = pd.DataFrame(rows).drop_duplicates(["half", "dataset", "protocol", "epsilon"])
    out.to_csv(os.path.join(args.results, "floor_bound.csv"), index=False)


if __name__ == "__main__":
    main()

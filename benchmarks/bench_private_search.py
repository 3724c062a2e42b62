"""When does a private hyperparameter search beat the default fit, at equal total epsilon?

Protocol
--------
* Data: sets of the **report** half of ``benchmarks/suite`` (``--sets``; by default the binary
  classification sets breast_cancer, hdma, benefits, fair and the regression set slid;
  autompg needs mlxtend, diamonds is large), preprocessed by the suite's protocol (b) (public
  ranges and level lists, rows of norm <= 1, ``data_norm=1``; regression targets mapped from
  their public range to [-1, 1], ``y_bound=1``), the suite's 75/25 split with ``seed`` in
  ``--seeds`` (default 0..4). The class list is the codebook's (every label of the set), passed
  as ``classes``.
* default: ``DPLogisticRegression(epsilon, delta=1e-5, data_norm=1, classes, random_state=seed)``
  (``DPRidge(..., y_bound=1)`` for regression) on all training rows.
* search: ``PrivateRandomSearchCV(DPLogisticRegression(data_norm=1, classes), GRID, epsilon,
  delta=1e-5, n_iter=m, random_state=seed)`` for m in ``--n-iter`` (the mean number of trials;
  truncated negative binomial with shape 1, i.e. geometric). Its epsilon covers every trial
  and the choice; its model is trained on 80% of the training rows.
* after the fact (a reference a private user cannot reach): every candidate of GRID fitted
  at the full epsilon on all training rows, the one with the best mean *test* accuracy over
  the seeds.
* Score: test accuracy (R^2 for regression), mean over the seeds; "s.e." is the standard
  error over the seeds of the paired difference search - default (E[K] = 10).

GRID (public): ``alpha`` in {'auto', 1e-4, 1e-3, 1e-2} x ``schedule`` in {'auto', 'uniform',
'hong', 'output'}: 16 candidates (penalty and schedule; the mechanism follows the schedule).

Run ``python benchmarks/bench_private_search.py`` (prints a markdown table).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from benchmarks.suite.datasets import load  # noqa: E402
from benchmarks.suite.protocols import prepare  # noqa: E402
from benchmarks.suite.split import half_of  # noqa: E402
from benchmarks.suite.datasets import REGRESSION  # noqa: E402
from skdpgd import DPLogisticRegression, DPRidge  # noqa: E402
from skdpgd.model_selection import PrivateRandomSearchCV  # noqa: E402

GRID = {"alpha": ["auto", 1e-4, 1e-3, 1e-2], "schedule": ["auto", "uniform", "hong", "output"]}
DELTA = 1e-5


def _candidates():
    return [{"alpha": a, "schedule": s} for a in GRID["alpha"] for s in GRID["schedule"]]


def run(sets, seeds, epsilons, n_iters):
    rows = []
    t_default = t_search = 0.0
    for name in sets:
        if half_of(name) != "report":
            raise SystemExit(f"{name} is not in the report half")
        raw = load(name)
        if raw.task == REGRESSION:

            def make(**kw):
                return DPRidge(data_norm=1.0, y_bound=1.0, **kw)
        else:
            classes = np.unique(raw.y)

            def make(**kw):
                return DPLogisticRegression(data_norm=1.0, classes=classes, **kw)

        for eps in epsilons:
            acc = {"default": [], "oracle": {i: [] for i in range(len(_candidates()))}}
            acc.update({m: [] for m in n_iters})
            for seed in seeds:
                p = prepare(raw, "b", seed)
                t0 = time.perf_counter()
                est = make(epsilon=eps, delta=DELTA, random_state=seed)
                est.fit(p.X_train, p.y_train)
                t_default += time.perf_counter() - t0
                acc["default"].append(est.score(p.X_test, p.y_test))
                for m in n_iters:
                    t0 = time.perf_counter()
                    s = PrivateRandomSearchCV(
                        make(), GRID, epsilon=eps, delta=DELTA, n_iter=m, random_state=seed
                    )
                    s.fit(p.X_train, p.y_train)
                    t_search += time.perf_counter() - t0
                    assert s.epsilon_ <= eps
                    acc[m].append(s.score(p.X_test, p.y_test))
                for i, cand in enumerate(_candidates()):
                    e = make(epsilon=eps, delta=DELTA, random_state=seed, **cand)
                    e.fit(p.X_train, p.y_train)
                    acc["oracle"][i].append(e.score(p.X_test, p.y_test))
            best = max(acc["oracle"], key=lambda i: np.mean(acc["oracle"][i]))
            ref = n_iters[len(n_iters) // 2] if 10 not in n_iters else 10
            diff = np.array(acc[ref]) - np.array(acc["default"])
            se = float(np.std(diff, ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else np.nan
            rows.append(
                {
                    "set": name,
                    "n_train": p.n_train,
                    "epsilon": eps,
                    "se": se,
                    "default": np.mean(acc["default"]),
                    **{m: np.mean(acc[m]) for m in n_iters},
                    "oracle": np.mean(acc["oracle"][best]),
                    "oracle_params": _candidates()[best],
                }
            )
            print(rows[-1], flush=True)
    return rows, t_search / max(t_default, 1e-12)


def table(rows, n_iters):
    head = (
        "| set (N train) | epsilon | default | "
        + " | ".join(f"search, E[K]={m}" for m in n_iters)
        + " | s.e. | best candidate, chosen after the fact |"
    )
    lines = [head, "|" + "---|" * (5 + len(n_iters))]
    for r in rows:
        cells = [f"{r['set']} ({r['n_train']})", f"{r['epsilon']:g}", f"{r['default']:.3f}"]
        cells += [f"{r[m]:.3f}" for m in n_iters]
        cells.append(f"{r['se']:.3f}")
        op = r["oracle_params"]
        cells.append(f"{r['oracle']:.3f} (alpha={op['alpha']}, {op['schedule']})")
        lines.append("| " + " | ".join(cells) + " |")
    beats = []
    for r in rows:
        first = next((m for m in n_iters if r[m] > r["default"]), None)
        beats.append(
            f"{r['set']} eps={r['epsilon']:g}: "
            + (f"E[K]={first}" if first else f"never up to E[K]={n_iters[-1]}")
        )
    return "\n".join(lines), beats


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--sets", nargs="+", default=["breast_cancer", "hdma", "benefits", "fair", "slid"]
    )
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--epsilons", nargs="+", type=float, default=[0.3, 1.0, 3.0])
    ap.add_argument("--n-iter", nargs="+", type=float, default=[2, 5, 10, 20])
    args = ap.parse_args(argv)
    n_iters = [int(m) if float(m).is_integer() else m for m in args.n_iter]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows, ratio = run(args.sets, args.seeds, args.epsilons, n_iters)
    text, beats = table(rows, n_iters)
    print()
    print(text)
    print()
    print("First mean number of trials whose search beats the default (mean test score):")
    for b in beats:
        print("  " + b)
    print(
        f"\nsearch time / default fit time (summed over all runs, same process): {ratio:.1f}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()

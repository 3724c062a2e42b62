"""Tables, target checks and plots from the suite's CSV (``run.py``).

Usage::

    python -m benchmarks.suite.report benchmarks/out/suite/design.csv \
        benchmarks/out/suite/report.csv \
        [--half report] [--protocol a,b] [--task classification,regression] [--no-plots]

For each task, protocol and half it prints markdown (medians over seeds throughout):

1. the median score per (set, epsilon, method); non-private methods are repeated at every
   epsilon; ``naive_tuned`` is the naive DP-GD grid point with the best median **test**
   score for that set and epsilon (tuned after the fact);
2. a summary counting, for every skdpgd estimator (and every extra method), how many cells
   meet each target, and the list of cells that miss:

   * ``peer``: at epsilon in {0.1, 0.3, 1, 3, 10}, score >= best private peer - 0.005 (peers:
     diffprivlib and naive_tuned);
   * ``floor``: at every epsilon run (0.01 .. 1e6), score >= majority class - 0.005
     (regression: R^2 >= -0.005);
   * ``consistency``: at epsilon = 1e6, |score - non-private counterpart| <= 0.005 (counterpart:
     ``LogisticRegression()``, C=1, for both classifiers; ``Ridge(alpha=1)``, i.e. our alpha
     = 1/N, for both regressors);
   * ``monotone``: for every pair of epsilons run with ratio 2.9 .. 3.5 (0.1 -> 0.3, 0.3 -> 1,
     1 -> 3, 3 -> 10), the score at the larger epsilon >= the score at the smaller - 0.005;
3. the median over sets of the gap to the non-private counterpart, per epsilon;
4. the median fit time as a ratio to the sklearn fit on the same split (same process).

Plots (score vs epsilon per set; median gap vs epsilon) go to ``benchmarks/out/img/suite/``.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import pandas as pd

from .. import _data as B
from . import split as S

TOL = 0.005
PEER_EPS = (0.1, 0.3, 1.0, 3.0, 10.0)
CONSISTENCY_EPS = 1e6
PRIVATE_PEERS = ("diffprivlib", "naive_tuned")
COUNTERPART = "sklearn"
MONOTONE_RATIO = (2.9, 3.5)
TARGETS = ("peer", "floor", "consistency", "monotone")
IMG = os.path.join(B.IMG, "suite")
SHOW = ("naive_tuned", "diffprivlib", "sklearn", "sklearn_sgd", "majority")


def load(paths):
    df = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    df = df.drop_duplicates(
        subset=["dataset", "protocol", "seed", "method", "epsilon"], keep="last"
    )
    return df


def medians(df):
    """Median score per (dataset, protocol, method, epsilon); non-private rows broadcast to
    every epsilon present; naive grid points collapsed into ``naive_tuned``."""
    eps_all = sorted(df["epsilon"].dropna().unique())
    priv = df[df["epsilon"].notna()]
    nonpriv = df[df["epsilon"].isna()]
    med = priv.groupby(["dataset", "protocol", "method", "epsilon"])["score"].median()
    med = med.reset_index()
    np_med = nonpriv.groupby(["dataset", "protocol", "method"])["score"].median().reset_index()
    np_med = np_med.merge(pd.DataFrame({"epsilon": eps_all}), how="cross")
    med = pd.concat([med, np_med], ignore_index=True)
    naive = med[med["method"].str.startswith("naive[")]
    if len(naive):
        idx = naive.groupby(["dataset", "protocol", "epsilon"])["score"].idxmax()
        best = naive.loc[idx.dropna()].copy()
        best["config"] = best["method"]
        best["method"] = "naive_tuned"
        med = pd.concat([med, best], ignore_index=True)
    return med


def estimators(df):
    """skdpgd estimators and extra methods present, in a stable order."""
    kinds = df.drop_duplicates("method").set_index("method")["kind"]
    order = ["DPLogisticRegression", "DPSGDClassifier", "DPRidge", "DPSGDRegressor"]
    est = [m for m in order if m in kinds.index]
    est += sorted(m for m, k in kinds.items() if k == "extra")
    return est


def _pivot(med):
    return med.pivot_table(index=["dataset", "epsilon"], columns="method", values="score")


def check_targets(med, task, ests):
    """Per estimator and target: (number met, number of cells, list of misses)."""
    tab = _pivot(med)
    eps_run = sorted(med["epsilon"].unique())
    out = {}
    for e in ests:
        if e not in tab.columns:
            continue
        res = {t: [0, 0, []] for t in TARGETS}
        for ds in sorted(med["dataset"].unique()):
            row = tab.loc[ds]

            def val(method, eps):
                try:
                    return float(row.loc[eps, method])
                except KeyError:
                    return np.nan

            for eps in eps_run:
                s = val(e, eps)
                # peer
                if any(np.isclose(eps, p) for p in PEER_EPS):
                    peers = [val(p, eps) for p in PRIVATE_PEERS]
                    peers = [p for p in peers if np.isfinite(p)]
                    if peers:
                        ref = max(peers)
                        _count(res["peer"], s >= ref - TOL, f"{ds}@{eps:g}: {s:.3f} < {ref:.3f}")
                # floor
                ref = val("majority", eps) if task == "classification" else 0.0
                if np.isfinite(ref):
                    _count(res["floor"], s >= ref - TOL, f"{ds}@{eps:g}: {s:.3f} < {ref:.3f}")
                # consistency
                if np.isclose(eps, CONSISTENCY_EPS):
                    ref = val(COUNTERPART, eps)
                    if np.isfinite(ref):
                        _count(
                            res["consistency"],
                            abs(s - ref) <= TOL,
                            f"{ds}@{eps:g}: {s:.3f} vs {ref:.3f}",
                        )
            # monotone
            for i, e1 in enumerate(eps_run):
                for e2 in eps_run[i + 1 :]:
                    if MONOTONE_RATIO[0] <= e2 / e1 <= MONOTONE_RATIO[1]:
                        s1, s2 = val(e, e1), val(e, e2)
                        _count(
                            res["monotone"],
                            s2 >= s1 - TOL,
                            f"{ds}@{e1:g}->{e2:g}: {s1:.3f} -> {s2:.3f}",
                        )
        out[e] = res
    return out


def _count(cell, ok, miss):
    cell[1] += 1
    if ok is True or (isinstance(ok, (bool, np.bool_)) and bool(ok)):
        cell[0] += 1
    else:
        cell[2].append(miss)  # NaN scores count as misses


def gaps(med, ests):
    tab = _pivot(med)
    rows = []
    for eps in sorted(med["epsilon"].unique()):
        sub = tab.xs(eps, level="epsilon")
        r = [f"{eps:g}"]
        for e in ests:
            if e in sub.columns and COUNTERPART in sub.columns:
                r.append(float(np.nanmedian(sub[COUNTERPART] - sub[e])))
            else:
                r.append(float("nan"))
        rows.append(r)
    return rows


def time_ratios(df, ests):
    d = df[df["method"].isin(list(ests) + ["diffprivlib"]) & df["baseline_time"].notna()]
    d = d[d["baseline_time"] > 0]
    out = []
    for ds, g in d.groupby("dataset"):
        r = [ds]
        for e in ests:
            ge = g[g["method"] == e]
            r.append(
                float(np.median(ge["fit_time"] / ge["baseline_time"])) if len(ge) else float("nan")
            )
        out.append(r)
    return out


def section(df, task, protocol, half, plots=True, log=print):
    d = df[(df["task"] == task) & (df["protocol"] == protocol)]
    if half != "all":
        d = d[d["dataset"].isin(S.sets(half, task))]
    if d.empty:
        return
    med = medians(d)
    ests = estimators(d)
    sets = [s for s in S.sets("all", task) if s in set(d["dataset"])]
    nseeds = d.groupby(["dataset"])["seed"].nunique()
    log(f"\n## {task}, protocol ({protocol}), {half} half\n")
    log(
        f"Sets: {', '.join(sets)}. Seeds per set: {int(nseeds.min())}-{int(nseeds.max())}. "
        "Medians over seeds.\n"
    )
    # 1. medians
    tab = _pivot(med)
    cols = [c for c in ests + list(SHOW) if c in tab.columns]
    rows = []
    for ds in sets:
        for eps in sorted(med["epsilon"].unique()):
            try:
                r = tab.loc[(ds, eps)]
            except KeyError:
                continue
            rows.append([ds, f"{eps:g}"] + [float(r.get(c, np.nan)) for c in cols])
    log(f"### Median {'accuracy' if task == 'classification' else 'R^2'}\n")
    log(B.md_table(["set", "eps"] + cols, rows))
    # 2. targets
    res = check_targets(med, task, ests)
    log("\n### Targets met (cells)\n")
    log(
        B.md_table(
            ["estimator"] + list(TARGETS),
            [[e] + [f"{res[e][t][0]}/{res[e][t][1]}" for t in TARGETS] for e in res],
        )
    )
    for e in res:
        for t in TARGETS:
            miss = res[e][t][2]
            if miss:
                log(f"\n- {e}, {t} misses ({len(miss)}): " + "; ".join(miss))
    # 3. gap
    log(f"\n### Median over sets of the gap to the non-private counterpart ({COUNTERPART})\n")
    g = gaps(med, ests)
    log(B.md_table(["eps"] + ests, g))
    # 4. time
    tr = time_ratios(d, ests)
    if tr:
        log("\n### Median fit time / sklearn fit time on the same split (all eps)\n")
        log(B.md_table(["set"] + ests, tr))
    if plots:
        _plot_sets(med, task, protocol, half, sets, ests)
    return {"targets": res, "gaps": g, "ests": ests}


def _plot_sets(med, task, protocol, half, sets, ests):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(IMG, exist_ok=True)
    n = len(sets)
    ncol = min(3, n)
    nrow = int(np.ceil(n / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.0 * nrow), squeeze=False)
    tab = _pivot(med)
    for k, ds in enumerate(sets):
        ax = axes[k // ncol][k % ncol]
        sub = tab.xs(ds, level="dataset")
        x = sub.index.to_numpy(dtype=float)
        for c in ests + ["naive_tuned", "diffprivlib"]:
            if c in sub.columns:
                ax.plot(x, sub[c].to_numpy(), marker="o", ms=3, label=c)
        for c, ls in (("sklearn", "--"), ("majority", ":")):
            if c in sub.columns:
                ax.axhline(float(np.nanmedian(sub[c])), color="k", ls=ls, lw=1, label=c)
        ax.set_xscale("log")
        ax.set_title(ds, fontsize=9)
        lo = np.nanmin(sub.to_numpy())
        if task == "regression":
            ax.set_ylim(max(lo, -1.0) - 0.05, 1.0)
        ax.tick_params(labelsize=7)
    for k in range(n, nrow * ncol):
        axes[k // ncol][k % ncol].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7)
    fig.suptitle(
        f"{task}, protocol ({protocol}), {half} half: median score vs epsilon", fontsize=10
    )
    fig.tight_layout(rect=(0, 0.08, 1, 0.96))
    path = os.path.join(IMG, f"{task}_{protocol}_{half}_sets.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_gaps(all_gaps, half):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not all_gaps:
        return
    os.makedirs(IMG, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    for (_task, protocol), info in sorted(all_gaps.items()):
        g = info["gaps"]
        x = [float(r[0]) for r in g]
        for j, e in enumerate(info["ests"]):
            ax.plot(
                x,
                [r[j + 1] for r in g],
                marker="o",
                ms=3,
                ls="-" if protocol == "a" else "--",
                label=f"{e} ({protocol})",
            )
    ax.set_xscale("log")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xlabel("epsilon")
    ax.set_ylabel("median gap to non-private")
    ax.set_title(f"{half} half: median over sets of (non-private - private)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(IMG, f"gap_{half}.png"), dpi=90)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Report the suite's results")
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--half", default="design,report", help="design, report, all (comma-sep.)")
    ap.add_argument("--protocol", default="a,b")
    ap.add_argument("--task", default="classification,regression")
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args(argv)
    df = load(args.csv)
    for half in args.half.split(","):
        all_gaps = {}
        for task in args.task.split(","):
            for protocol in args.protocol.split(","):
                r = section(df, task, protocol, half, plots=not args.no_plots)
                if r:
                    all_gaps[(task, protocol)] = r
        if not args.no_plots:
            plot_gaps(all_gaps, half)


if __name__ == "__main__":
    sys.exit(main())

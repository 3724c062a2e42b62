"""The four targets (peer, floor, consistency, monotone), before and after a change, from the
suite's CSVs, and each missed cell's measured cause (measured numbers only).

Usage::

    python -m benchmarks.suite.targets [--results DIR] [--misses after|before|none]
        [--after NAME]

``--after NAME`` reads ``NAME_<half>.csv`` as the "after" rows (default ``after``); the
"before" rows are ``before_<half>.csv``. The results folder defaults to ``benchmarks/out/suite``
(git-ignored), where ``python -m benchmarks.suite.run --out ...`` writes.

Reads, for each half (design, report), ``peers_<half>.csv`` (the peers and the
non-private references, run once with the package at the "after" commit: naive DP-GD grid,
diffprivlib 0.6.6, ``sklearn``, ``sklearn_sgd``, ``sgd_objective``, ``majority``) and the
defaults' rows ``before_<half>.csv`` / ``after_<half>.csv``
(``DPLogisticRegression``, ``DPSGDClassifier``, ``DPRidge``, ``DPSGDRegressor`` with only
``epsilon``, ``data_norm`` and ``y_bound`` given). Each version's rows are joined with the same
peer rows and counted with :func:`benchmarks.suite.report.check_targets` (medians over seeds):

* peer: eps in {0.1, 0.3, 1, 3, 10}, score >= best of diffprivlib and naive DP-GD tuned on the
  test score - 0.005;
* floor: every eps run, score >= majority class - 0.005 (R^2 >= -0.005);
* consistency: eps = 1e6, within 0.005 of ``LogisticRegression()`` / ``Ridge(alpha=1)``
  (``sklearn``) for DPLogisticRegression / DPRidge, and of ``SGDClassifier()`` /
  ``SGDRegressor()`` (``sklearn_sgd``) for the DP-SGD estimators; the DP-SGD estimators'
  consistency against ``sgd_objective`` (the converged minimiser of scikit-learn's SGD
  objective) is printed as an extra row;
* monotone: no drop of more than 0.005 when eps goes up by a factor 2.9-3.5.

Prints one markdown table (rows: estimator x target; columns: half x protocol; each cell
``before -> after``) and the missed cells of the chosen version, each with the best peer's name.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import pandas as pd

from . import report as R
from . import split as S
from .run import RESULTS

VERSIONS = ("before", "after")
HALVES = ("design", "report")
PROTOCOLS = ("a", "b")
TASK_ESTS = {
    "classification": ("DPLogisticRegression", "DPSGDClassifier"),
    "regression": ("DPRidge", "DPSGDRegressor"),
}
SGD = ("DPSGDClassifier", "DPSGDRegressor")
# the targets asked of the defaults (per estimator, report half, each protocol)
TARGET_TEXT = {
    "classification": {
        "peer": ">= 42/45",
        "floor": "63/63",
        "consistency": "9/9",
        "monotone": "36/36",
    },
    "regression": {"peer": ">= 14/15", "floor": "21/21", "consistency": "3/3", "monotone": "-"},
}


def load(results, half, version, after="after"):
    peers = pd.read_csv(os.path.join(results, f"peers_{half}.csv"))
    name = after if version == "after" else version
    ours = pd.read_csv(os.path.join(results, f"{name}_{half}.csv"))
    ours = ours[ours["kind"] == "skdpgd"]
    return pd.concat([peers, ours], ignore_index=True)


def consistency(med, est, counterpart):
    """(met, cells, misses) of |est - counterpart| <= TOL at eps = 1e6."""
    tab = R._pivot(med)
    met, n, miss = 0, 0, []
    for ds in sorted(med["dataset"].unique()):
        try:
            s = float(tab.loc[(ds, R.CONSISTENCY_EPS), est])
            ref = float(tab.loc[(ds, R.CONSISTENCY_EPS), counterpart])
        except KeyError:
            continue
        if not np.isfinite(ref):
            continue
        n += 1
        if abs(s - ref) <= R.TOL:
            met += 1
        else:
            miss.append(f"{ds}: {s:.3f} vs {ref:.3f}")
    return [met, n, miss]


def best_peer(med, ds, eps):
    """Name of the best private peer at one cell (naive grid point or diffprivlib)."""
    sub = med[(med["dataset"] == ds) & np.isclose(med["epsilon"], eps)]
    cand = sub[sub["method"].isin(R.PRIVATE_PEERS)].sort_values("score", ascending=False)
    if cand.empty:
        return "?"
    r = cand.iloc[0]
    return r["config"] if r["method"] == "naive_tuned" else r["method"]


def _val(med, ds, eps, method):
    m = med[(med["dataset"] == ds) & np.isclose(med["epsilon"], eps) & (med["method"] == method)]
    return float(m["score"].iloc[0]) if len(m) else float("nan")


def _cell(miss):
    """'ds@eps: ...' / 'ds@e1->e2: ...' / 'ds: ...' (eps = 1e6) -> (ds, [eps, ...])."""
    head = miss.split(":")[0]
    if "@" not in head:
        return head, [R.CONSISTENCY_EPS]
    ds, eps = head.split("@")
    return ds, [float(e) for e in eps.split("->")]


def _iters(raw, ds, eps, est):
    r = raw[(raw["dataset"] == ds) & np.isclose(raw["epsilon"], eps) & (raw["method"] == est)]
    return float(np.median(r["n_iter"])) if len(r) and r["n_iter"].notna().all() else np.nan


def _annotate(miss, target, est, med, med_other, other, raw=None):
    """Add the best peer (peer misses), "= majority's score" (the score equals the majority
    class's), the non-private model of the same objective (``sklearn``; ``sgd_objective`` for
    the DP-SGD estimators), the median ``n_iter_`` (full-batch estimators: 0 where no iterative
    solve ran, i.e. the intercept-only model or output perturbation) and the other version's
    score(s) in the same cell."""
    ds, eps = _cell(miss)
    notes = []
    if target == "peer":
        notes.append(f"best peer {best_peer(med, ds, eps[0])}")
    if len(eps) == 1 and target in ("peer", "floor"):
        s, maj = _val(med, ds, eps[0], est), _val(med, ds, eps[0], "majority")
        if np.isfinite(maj) and abs(s - maj) < 1e-12:
            notes.append("= majority's score")
        ref = "sgd_objective" if est in SGD else "sklearn"
        notes.append(f"{ref} {_val(med, ds, eps[0], ref):.3f}")
    if raw is not None and est not in SGD:
        notes.append("n_iter_ " + "->".join(f"{_iters(raw, ds, e, est):g}" for e in eps))
    if med_other is not None:
        vals = "->".join(f"{_val(med_other, ds, e, est):.3f}" for e in eps)
        notes.append(f"{other} {vals}")
    return f"{miss} ({', '.join(notes)})" if notes else miss


def _floor_bounds(results):
    """{(half, set, protocol, eps): the intercept-only model's mean score at the whole budget}
    from ``floor_bound.csv`` (empty when that file is absent)."""
    path = os.path.join(results, "floor_bound.csv")
    if not os.path.exists(path):
        return {}
    fb = pd.read_csv(path)
    return {
        (r.half, r.dataset, r.protocol, float(r.epsilon)): float(r.prior_score)
        for r in fb.itertuples()
    }


def _mechanism(raw, ds, eps, est):
    """The most common ``mechanism`` over the seeds (the suite's column: ``mechanism_`` of the
    full-batch estimators, ``schedule_`` of DP-SGD), '?' for CSVs without it."""
    if "mechanism" not in raw.columns:
        return "?"
    r = raw[(raw["dataset"] == ds) & np.isclose(raw["epsilon"], eps) & (raw["method"] == est)]
    m = r["mechanism"].dropna()
    return str(m.mode().iloc[0]) if len(m) else "?"


def cause(target, est, half, protocol, miss, med, raw, bounds):
    """The measured cause of one missed cell: ``(category, detail)``. Reads only measured
    values: the default's median score, median ``n_iter_`` and most common mechanism, its own
    non-private model (``sklearn``: LogisticRegression() / Ridge(); ``sgd_objective``: the
    converged minimiser of scikit-learn's SGD objective), scikit-learn's early-stopped
    ``SGDClassifier()`` / ``SGDRegressor()`` (``sklearn_sgd``), the majority class and the
    intercept-only model at the whole budget (:mod:`benchmarks.suite.studies.floor_bound`).

    * floor, *budget*: the intercept-only model released with the whole budget also scores
      below the floor (its noise hides the majority class, or the mean's noise alone costs more
      than 0.005 of R^2);
    * floor, *rule*: that model would meet the floor, the public rule ran a fit instead;
    * peer, *prior switch*: the rule returned the intercept-only model and a tuned peer's fit
      scored higher;
    * peer, *limit*: the default is within 0.005 of (or above) its own non-private model: the
      gap is the penalty the peer tuned on the test score;
    * peer, *noise*: the default is below its own non-private model (by mechanism);
    * consistency: above scikit-learn's early-stopped SGD, or the gap to the non-private model
      with the mechanism that ran;
    * monotone: the intercept-only model at the lower budget, or two fits' noise."""
    ds, eps = _cell(miss)
    ref_name = "sgd_objective" if est in SGD else "sklearn"
    if target == "monotone":
        mechs = [_mechanism(raw, ds, e, est) for e in eps]
        if mechs[0] == "prior" and mechs[1] != "prior":
            return (
                "monotone: intercept-only model at the lower budget, the fit at the higher",
                "->".join(mechs),
            )
        return "monotone: two fits' noise", "->".join(mechs)
    e = eps[0]
    s = _val(med, ds, e, est)
    ref = _val(med, ds, e, ref_name)
    it = _iters(raw, ds, e, est)
    mech = _mechanism(raw, ds, e, est)
    if target == "floor":
        b = bounds.get((half, ds, protocol, e))
        floor = _val(med, ds, e, "majority") if est in TASK_ESTS["classification"] else 0.0
        if b is None:
            return "floor: intercept-only bound not measured", mech
        if b < floor - R.TOL:
            return "floor: budget", f"intercept-only model at the whole budget {b:.3f}"
        return "floor: rule", f"ran {mech}, n_iter_ {it:g}; intercept-only {b:.3f}"
    if target == "consistency" and est in SGD:
        sk = _val(med, ds, e, "sklearn_sgd")
        if s > sk:
            return "consistency: above scikit-learn's early-stopped SGD", f"{s:.3f} vs {sk:.3f}"
        return (
            "consistency: below scikit-learn's early-stopped SGD",
            f"{s - sk:+.3f}; against the converged objective {s - ref:+.3f}",
        )
    if target.startswith("consistency"):
        return f"{target}: {mech}", f"{s - ref:+.3f} against {ref_name}, n_iter_ {it:g}"
    maj = _val(med, ds, e, "majority")
    if mech == "prior" or (est not in SGD and it == 0 and abs(s - maj) < 1e-12):
        return "peer: prior switch", f"{s:.3f} = the majority class"
    if np.isfinite(ref) and s >= ref - R.TOL:
        return "peer: limit", f"{ref_name} {ref:.3f}"
    if est not in SGD and mech == "gradient" and it <= 3:
        mech = "gradient (1-3 steps)"
    return f"peer: noise ({mech})", f"{s - ref:+.3f} against {ref_name}, n_iter_ {it:g}"


def _groups(results, halves, versions, after):
    """(half, version, task, protocol, rows, medians) for each table cell group."""
    for half in halves:
        for version in versions:
            df = load(results, half, version, after)
            for task in TASK_ESTS:
                for protocol in PROTOCOLS:
                    d = df[
                        (df["task"] == task)
                        & (df["protocol"] == protocol)
                        & df["dataset"].isin(S.sets(half, task))
                    ]
                    yield half, version, task, protocol, d, R.medians(d)


def causes(out, version, results, halves=HALVES, after="after"):
    """Every missed cell of ``version`` with its :func:`cause`, and a count per category."""
    bounds = _floor_bounds(results)
    lines, tally = [], {}
    for h, _, task, p, d, med in _groups(results, halves, (version,), after):
        for e in TASK_ESTS[task]:
            for t, (_met, _n, miss) in out[(h, p, version, e)].items():
                for m in miss:
                    cat, detail = cause(t, e, h, p, m.split(" (")[0], med, d, bounds)
                    tally[(h, e, cat)] = tally.get((h, e, cat), 0) + 1
                    lines.append(f"- {h} ({p}) {e} {m.split(' (')[0]}: {cat} ({detail})")
    summary = [f"- {h} {e}: {c}: {k}" for (h, e, c), k in sorted(tally.items())]
    return "\n".join(lines), "\n".join(summary)


def counts(results, halves=HALVES, after="after"):
    """{(half, protocol, version, estimator): {target: [met, cells, misses]}}; each miss
    annotated (see :func:`_annotate`)."""
    out, meds, raws = {}, {}, {}
    for half, version, task, protocol, d, med in _groups(results, halves, VERSIONS, after):
        meds[(half, protocol, version, task)] = med
        raws[(half, protocol, version, task)] = d
        res = R.check_targets(med, task, list(TASK_ESTS[task]))
        for e in TASK_ESTS[task]:
            r = res[e]
            if e in SGD:  # SGDClassifier() / SGDRegressor()
                r["consistency"] = consistency(med, e, "sklearn_sgd")
                r["consistency (sgd_objective)"] = consistency(med, e, "sgd_objective")
            out[(half, protocol, version, e)] = r
    for (half, protocol, version, e), r in out.items():
        task = next(t for t, es in TASK_ESTS.items() if e in es)
        other = "before" if version == "after" else "after"
        med = meds[(half, protocol, version, task)]
        med_other = meds[(half, protocol, other, task)]
        for t in r:
            r[t][2] = [
                _annotate(m, t, e, med, med_other, other, raws[(half, protocol, version, task)])
                for m in r[t][2]
            ]
    return out


def table(out, halves=HALVES):
    cols = [(h, p) for h in halves for p in PROTOCOLS]
    header = ["estimator", "target", "target asked"] + [f"{h} ({p})" for h, p in cols]
    rows = []
    for task, ests in TASK_ESTS.items():
        for e in ests:
            targets = list(R.TARGETS) + (["consistency (sgd_objective)"] if e in SGD else [])
            for t in targets:
                cells = []
                for h, p in cols:
                    b = out[(h, p, "before", e)][t]
                    a = out[(h, p, "after", e)][t]
                    cells.append(f"{b[0]}/{b[1]} → {a[0]}/{a[1]}")
                rows.append([e, t, TARGET_TEXT[task].get(t, "-")] + cells)
    return R.B.md_table(header, rows)


def misses(out, version, halves=HALVES):
    lines = []
    for h in halves:
        for p in PROTOCOLS:
            for ests in TASK_ESTS.values():
                for e in ests:
                    r = out[(h, p, version, e)]
                    for t, (met, n, miss) in r.items():
                        if miss:
                            lines.append(
                                f"- {h} ({p}) {e} {t} {met}/{n}, misses: " + "; ".join(miss)
                            )
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=RESULTS)
    ap.add_argument("--misses", default="after", choices=["after", "before", "none"])
    ap.add_argument("--halves", default="design,report")
    ap.add_argument(
        "--after", default="after", help="the after rows: AFTER_<half>.csv (default: after)"
    )
    ap.add_argument(
        "--causes",
        action="store_true",
        help="each missed cell of the after rows with its measured cause",
    )
    args = ap.parse_args(argv)
    halves = args.halves.split(",")
    out = counts(args.results, halves, args.after)
    print(
        "Cells met, before → after (medians over the seeds in the CSVs; before:"
        f" before_<half>.csv, after: {args.after}_<half>.csv):\n"
    )
    print(table(out, halves))
    if args.causes:
        lines, summary = causes(out, "after", args.results, halves, args.after)
        print("\nMissed cells (after) and their measured causes:\n")
        print(lines)
        print("\nCount per half, estimator and cause:\n")
        print(summary)
        return 0
    if args.misses != "none":
        print(f"\nMissed cells ({args.misses}):\n")
        print(misses(out, args.misses, halves))


if __name__ == "__main__":
    sys.exit(main())

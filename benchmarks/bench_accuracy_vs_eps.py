"""Test accuracy and excess empirical risk against epsilon, for every skdpgd schedule and peers.

Protocol
--------
* Data: breast_cancer and digits 3-vs-5 (``benchmarks/_data.py``: standardised, rows scaled so
  the largest training row has norm 1, ``data_norm=1``); ``--reps`` random stratified 75/25
  splits (seed = repetition index; the same seed drives every method's noise).
* Budget: epsilon in {0.1, 0.3, 1, 3, 10}; delta = 1e-5 for every (epsilon, delta) method
  (the setting of the "figures to beat" in DESIGN.md, section 6); diffprivlib is pure eps-DP.
* skdpgd: ``DPLogisticRegression(epsilon, delta=1e-5, data_norm=1, schedule=s,
  random_state=seed)`` with every other parameter at its default (``alpha='auto'``,
  ``row_clip='auto'``, ``max_iter='auto'``), for s in auto, uniform, hong, pur, output,
  exponential.
* "naive DP-GD": what a user gets from a plain textbook DP-GD, written here in numpy: weights
  and intercept from 0, T = 100 full-batch steps of size 1/M (M = G^2/4 + alpha, G = sqrt(2),
  the norm bound of a row (x, 1)), alpha = 1e-3, the same noise multiplier at every step
  calibrated exactly to (epsilon, delta) with skdpgd's accountant (``gdp_mu``:
  z = sqrt(T) / mu, replace-one sensitivity 2G of the gradient sum).
* "naive, tuned after the fact" (a reference a private user cannot reach): the best of
  (T, alpha) in {(100, 1e-3), (1000, 1e-4), (3000, 1e-5)} chosen per data set and epsilon by
  the median *test* accuracy.
* diffprivlib 0.6.x ``LogisticRegression(epsilon, data_norm=1)`` (objective perturbation,
  pure eps-DP; defaults otherwise), if importable.
* Ceiling: non-private ``sklearn.linear_model.LogisticRegression()``; floor: the majority
  class of the training labels.

Excess empirical risk is measured on one common yardstick per fit: the regularised logistic
objective ``F(w, b) = mean log(1 + exp(-s (x.w + b))) + alpha_ref/2 ||w||^2`` on the training
rows as given (norm <= 1), with ``alpha_ref`` the ``alpha_`` that ``schedule='auto'`` resolved
for that seed and epsilon (every skdpgd schedule resolves the same value: it depends on public
constants and on the private row-norm release, which draws the same noise for the same
seed), minus its exact minimum. Peers are scored on the same F, whatever their own objective.

Run ``python benchmarks/bench_accuracy_vs_eps.py`` (50 seeds; writes benchmarks/out/img/*.png and
the section of benchmarks/LAB_NOTES.md) or ``--quick`` (5 seeds, neither).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import _data as D  # noqa: E402
from skdpgd import DPLogisticRegression  # noqa: E402
from skdpgd.accounting import gdp_mu  # noqa: E402

EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
DELTA = 1e-5
SCHEDULES = ("auto", "uniform", "hong", "pur", "output", "exponential")
NAIVE_CONFIGS = ((100, 1e-3), (1000, 1e-4), (3000, 1e-5))
DATASETS = ("breast_cancer", "digits_3_vs_5")


def naive_dpgd(X, y, epsilon, delta, T, alpha, rng):
    """Textbook full-batch DP-GD for binary logistic regression with an intercept.

    Rows must have norm <= 1, so one example's gradient (over (w, b)) has norm <= G = sqrt(2)
    and the gradient sum has replace-one sensitivity 2G. Constant noise multiplier
    z = sqrt(T) / mu with mu the exact GDP budget: T steps of 1/z-GDP compose to mu-GDP.
    """
    n, d = X.shape
    G = np.sqrt(2.0)
    mu = gdp_mu(epsilon, delta)
    z = np.sqrt(T) / mu
    std = z * 2.0 * G / n  # noise std on the mean gradient
    M = G * G / 4.0 + alpha
    step = 1.0 / M
    s = 2.0 * y - 1.0
    w = np.zeros(d)
    b = 0.0
    for _ in range(T):
        m = s * (X @ w + b)
        r = -s * np.exp(-np.logaddexp(0.0, m)) / n
        gw = X.T @ r + alpha * w + std * rng.standard_normal(d)
        gb = r.sum() + std * rng.standard_normal()
        w -= step * gw
        b -= step * gb
    return w, b


def accuracy(w, b, X, y):
    return float(np.mean(((X @ np.ravel(w) + b) > 0).astype(int) == y))


def run(datasets, reps, epsilons, log=print):
    from sklearn.linear_model import LogisticRegression

    DLR, dpl_version = D.diffprivlib_logistic()
    methods = list(SCHEDULES) + ["naive"] + [f"naive T={T} a={a:g}" for T, a in NAIVE_CONFIGS[1:]]
    if DLR is not None:
        methods.append("diffprivlib")
    # acc[ds][method][eps] -> list; same for excess risk
    acc = {ds: {m: {e: [] for e in epsilons} for m in methods} for ds in datasets}
    exc = {ds: {m: {e: [] for e in epsilons} for m in methods} for ds in datasets}
    niter = {ds: {e: [] for e in epsilons} for ds in datasets}
    auto_choice = {ds: {e: {} for e in epsilons} for ds in datasets}
    ceiling = {ds: [] for ds in datasets}
    floor = {ds: [] for ds in datasets}
    cache = D.OptimumCache()
    for ds in datasets:
        t0 = time.time()
        for seed in range(reps):
            sp = D.load(ds, seed=seed)
            X, y, Xt, yt = sp.X_train, sp.y_train, sp.X_test, sp.y_test
            ceiling[ds].append(LogisticRegression().fit(X, y).score(Xt, yt))
            floor[ds].append(float(np.mean(yt == np.bincount(y).argmax())))
            for eps in epsilons:
                alpha_ref = None
                for s in SCHEDULES:
                    m = DPLogisticRegression(
                        epsilon=eps, delta=DELTA, data_norm=1.0, schedule=s, random_state=seed
                    ).fit(X, y)
                    if alpha_ref is None:
                        alpha_ref = m.alpha_
                        fstar = cache.get((ds, seed, "train"), X, y, alpha_ref)
                        niter[ds][eps].append(m.n_iter_)
                        auto_choice[ds][eps][m.schedule_] = (
                            auto_choice[ds][eps].get(m.schedule_, 0) + 1
                        )
                    elif not np.isclose(m.alpha_, alpha_ref, rtol=1e-12):
                        raise AssertionError(f"{s}: alpha_ {m.alpha_} != auto's {alpha_ref}")
                    acc[ds][s][eps].append(m.score(Xt, yt))
                    exc[ds][s][eps].append(
                        D.logistic_objective(m.coef_, m.intercept_, X, y, alpha_ref) - fstar
                    )
                rng = np.random.default_rng([seed, int(eps * 1000), 7])
                for k, (T, a) in enumerate(NAIVE_CONFIGS):
                    name = "naive" if k == 0 else f"naive T={T} a={a:g}"
                    w, b = naive_dpgd(X, y, eps, DELTA, T, a, rng)
                    acc[ds][name][eps].append(accuracy(w, b, Xt, yt))
                    exc[ds][name][eps].append(D.logistic_objective(w, b, X, y, alpha_ref) - fstar)
                if DLR is not None:
                    m = DLR(epsilon=eps, data_norm=1.0, random_state=seed).fit(X, y)
                    acc[ds]["diffprivlib"][eps].append(m.score(Xt, yt))
                    exc[ds]["diffprivlib"][eps].append(
                        D.logistic_objective(m.coef_, m.intercept_, X, y, alpha_ref) - fstar
                    )
        log(f"  {ds}: {reps} seeds in {time.time() - t0:.1f} s")
    return dict(
        acc=acc,
        exc=exc,
        niter=niter,
        auto_choice=auto_choice,
        ceiling=ceiling,
        floor=floor,
        methods=methods,
        dpl_version=dpl_version,
    )


def tuned_after_fact(R, ds, eps):
    """The naive config with the best median test accuracy (looks at the test set)."""
    names = ["naive"] + [f"naive T={T} a={a:g}" for T, a in NAIVE_CONFIGS[1:]]
    best = max(names, key=lambda n: np.median(R["acc"][ds][n][eps]))
    return best


def tables(R, datasets, epsilons):
    out = []
    checks = []
    sched_others = [s for s in SCHEDULES]
    for ds in datasets:
        hdr = ["method"] + [f"eps={e:g}" for e in epsilons]
        rows_a, rows_e = [], []
        show = (
            list(SCHEDULES) + ["naive"] + (["diffprivlib"] if "diffprivlib" in R["methods"] else [])
        )
        for mth in show:
            label = {
                "naive": "naive DP-GD (T=100, alpha=1e-3)",
                "diffprivlib": f"diffprivlib {R['dpl_version']} LogisticRegression",
            }.get(mth, f"skdpgd schedule='{mth}'")
            rows_a.append([label] + [f"{np.median(R['acc'][ds][mth][e]):.3f}" for e in epsilons])
            rows_e.append(
                [label] + [D.fmt(float(np.median(R["exc"][ds][mth][e])), 3) for e in epsilons]
            )
        tuned = [tuned_after_fact(R, ds, e) for e in epsilons]
        rows_a.append(
            ["naive, tuned after the fact (looks at test acc.; not private)"]
            + [f"{np.median(R['acc'][ds][t][e]):.3f}" for t, e in zip(tuned, epsilons)]
        )
        rows_e.append(
            ["naive, tuned after the fact (same pick)"]
            + [D.fmt(float(np.median(R["exc"][ds][t][e])), 3) for t, e in zip(tuned, epsilons)]
        )
        ceil = f"{np.median(R['ceiling'][ds]):.3f}"
        flo = f"{np.median(R['floor'][ds]):.3f}"
        rows_a.append(["non-private sklearn LogisticRegression()"] + [ceil] * len(epsilons))
        rows_a.append(["majority class"] + [flo] * len(epsilons))
        rows_a.append(
            ["'auto' resolved to (count over seeds), median T"]
            + [
                ", ".join(f"{k} {v}" for k, v in sorted(R["auto_choice"][ds][e].items()))
                + f"; T={int(np.median(R['niter'][ds][e]))}"
                for e in epsilons
            ]
        )
        out.append((ds, D.md_table(hdr, rows_a), D.md_table(hdr, rows_e)))
        # targets
        for e in epsilons:
            med = {s: float(np.median(R["exc"][ds][s][e])) for s in sched_others}
            best = min(med, key=med.get)
            ok_sched = med["auto"] <= 1.1 * med[best]
            a_auto = float(np.median(R["acc"][ds]["auto"][e]))
            a_naive = float(np.median(R["acc"][ds]["naive"][e]))
            a_tuned = float(np.median(R["acc"][ds][tuned[epsilons.index(e)]][e]))
            a_dpl = (
                float(np.median(R["acc"][ds]["diffprivlib"][e]))
                if "diffprivlib" in R["methods"]
                else float("nan")
            )
            checks.append(
                dict(
                    ds=ds,
                    eps=e,
                    auto=med["auto"],
                    best=best,
                    best_val=med[best],
                    ok_sched=ok_sched,
                    a_auto=a_auto,
                    a_naive=a_naive,
                    a_tuned=a_tuned,
                    a_dpl=a_dpl,
                    ok_naive=a_auto >= a_naive,
                    ok_dpl=(a_auto >= a_dpl) if a_dpl == a_dpl else None,
                )
            )
    return out, checks


def checks_table(checks):
    hdr = [
        "data set",
        "eps",
        "auto excess",
        "best schedule (excess)",
        "auto <= 1.1 x best",
        "acc auto",
        "acc naive",
        "acc naive tuned*",
        "acc diffprivlib",
        "auto >= naive",
        "auto >= diffprivlib",
    ]
    rows = []
    for c in checks:
        rows.append(
            [
                c["ds"],
                f"{c['eps']:g}",
                D.fmt(c["auto"], 3),
                f"{c['best']} ({D.fmt(c['best_val'], 3)})",
                "yes" if c["ok_sched"] else f"**no** ({c['auto'] / c['best_val']:.2f}x)",
                f"{c['a_auto']:.3f}",
                f"{c['a_naive']:.3f}",
                f"{c['a_tuned']:.3f}",
                "n/a" if c["a_dpl"] != c["a_dpl"] else f"{c['a_dpl']:.3f}",
                "yes" if c["ok_naive"] else "**no**",
                "n/a" if c["ok_dpl"] is None else ("yes" if c["ok_dpl"] else "**no**"),
            ]
        )
    return D.md_table(hdr, rows)


STYLE = {
    "auto": dict(color="k", lw=2.5, marker="o"),
    "uniform": dict(color="tab:blue", marker="s"),
    "hong": dict(color="tab:orange", marker="^"),
    "pur": dict(color="tab:green", marker="v"),
    "output": dict(color="tab:purple", marker="D"),
    "exponential": dict(color="tab:brown", marker="x"),
    "naive": dict(color="tab:red", ls="--", marker="."),
    "diffprivlib": dict(color="tab:gray", ls=":", marker="*"),
}


def plots(R, datasets, epsilons, img_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(img_dir, exist_ok=True)
    show = list(SCHEDULES) + ["naive"] + (["diffprivlib"] if "diffprivlib" in R["methods"] else [])
    paths = []
    for key, ylabel, fname, logy in (
        ("acc", "median test accuracy", "accuracy_vs_eps.png", False),
        ("exc", "median excess empirical risk (train)", "excess_risk_vs_eps.png", True),
    ):
        fig, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4.4), squeeze=False)
        for ax, ds in zip(axes[0], datasets):
            for mth in show:
                vals = np.array([np.median(R[key][ds][mth][e]) for e in epsilons])
                lab = "naive DP-GD (T=100)" if mth == "naive" else mth
                ax.plot(epsilons, vals, label=lab, **STYLE[mth])
                if mth == "auto":
                    q = np.array([np.percentile(R[key][ds][mth][e], [25, 75]) for e in epsilons])
                    ax.fill_between(epsilons, q[:, 0], q[:, 1], color="k", alpha=0.12)
            if key == "acc":
                ax.axhline(
                    np.median(R["ceiling"][ds]),
                    color="g",
                    ls="-.",
                    lw=1,
                    label="non-private sklearn",
                )
                ax.axhline(
                    np.median(R["floor"][ds]), color="r", ls="-.", lw=1, label="majority class"
                )
            ax.set_xscale("log")
            if logy:
                ax.set_yscale("log")
            ax.set_xlabel("epsilon (delta = 1e-5; diffprivlib: pure eps-DP)")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{ds} ({len(R['ceiling'][ds])} splits; band: IQR of auto)")
            ax.grid(alpha=0.3, which="both")
        axes[0][-1].legend(fontsize=8, loc="best")
        fig.tight_layout()
        p = os.path.join(img_dir, fname)
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="5 seeds, no plots or lab notes")
    ap.add_argument("--reps", type=int, default=None, help="number of random splits (default 50)")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument(
        "--no-docs", action="store_true", help="do not write the plots or the lab notes"
    )
    args = ap.parse_args(argv)
    D.quiet()
    reps = args.reps or (5 if args.quick else 50)
    write_docs = not (args.quick or args.no_docs)
    t0 = time.time()
    print(f"bench_accuracy_vs_eps: {reps} seeds, eps {EPSILONS}, delta {DELTA}")
    R = run(args.datasets, reps, EPSILONS)
    tabs, checks = tables(R, args.datasets, EPSILONS)
    for ds, ta, te in tabs:
        print(
            f"\n## {ds}: median test accuracy\n{ta}\n\n## {ds}: median excess empirical risk\n{te}"
        )
    ct = checks_table(checks)
    print("\n## targets\n" + ct)
    if R["dpl_version"] is None:
        print("\n(diffprivlib not importable: its rows are omitted)")
    elapsed = time.time() - t0
    print(f"\ntotal {elapsed:.0f} s")
    if write_docs:
        plots(R, args.datasets, EPSILONS, D.IMG)
        cmd = "PYTHONPATH=. python benchmarks/bench_accuracy_vs_eps.py" + (
            f" --reps {args.reps}" if args.reps else ""
        )
        parts = [
            "## Accuracy and excess risk against epsilon (all schedules, naive DP-GD, diffprivlib)",
            "",
            f"Produced by `{cmd}` on {D.today()} ({reps} random stratified 75/25 splits per data "
            f"set, {elapsed:.0f} s on 2 shared cores). Protocol in the script's docstring: every "
            "skdpgd schedule with its defaults (`alpha='auto'`, `row_clip='auto'`, "
            "`max_iter='auto'`), `data_norm=1`, `delta=1e-5`; naive DP-GD = T=100 steps of "
            "1/M, alpha=1e-3, constant noise calibrated exactly (skdpgd's `gdp_mu`); "
            "diffprivlib is pure eps-DP (objective perturbation). Excess risk: training "
            "objective with the alpha that `'auto'` resolved (intercept unpenalised) minus its "
            "exact minimum, the same yardstick for every method. Medians over splits.",
            "",
            "![accuracy vs eps](img/accuracy_vs_eps.png)",
            "",
            "![excess risk vs eps](img/excess_risk_vs_eps.png)",
            "",
        ]
        for ds, ta, te in tabs:
            parts += [
                f"### {ds}: median test accuracy",
                "",
                ta,
                "",
                f"### {ds}: median excess empirical risk",
                "",
                te,
                "",
            ]
        parts += [
            "### Targets",
            "",
            "'auto' within 10% of the best schedule's median excess risk; median test "
            "accuracy of 'auto' at least that of naive DP-GD and of diffprivlib. "
            "(*tuned after the fact: a reference only; it picks by test accuracy.)",
            "",
            ct,
            "",
        ]
        D.write_doc_section("accuracy_vs_eps", "\n".join(parts))
        print(
            "wrote benchmarks/LAB_NOTES.md and benchmarks/out/img/accuracy_vs_eps.png, "
            "excess_risk_vs_eps.png"
        )


if __name__ == "__main__":
    main()

"""Study: a choice among the package's own mechanisms by an accounted look at the data.

``schedule='auto'`` picks one mechanism from public quantities and, below ``AUTO_SELECT``'s
ratio, compares it with the majority-class model. The candidates here instead fit several
mechanisms, each with a share of the budget, and return the one with the largest noisy
training accuracy (or the intercept-only model): :class:`skdpgd._full_batch.choice.Choice`,
switched on by ``policy.AUTO_CHOICE``. Factories for ``run.py`` (``module:callable``)::

    M=benchmarks.suite.studies.mechanism_choice
    S=benchmarks.suite.studies.signal_choice
    python -m benchmarks.suite.run --task classification --half design --protocol a,b \\
        --eps 0.1,0.3,1,3,10 --seeds 5 --workers 1 \\
        --out benchmarks/out/suite/choice_design.csv \\
        --methods DPLogisticRegression,majority,$S:fixed_uniform,$S:fixed_newton,\\
$S:fixed_output,$M:ch_aog_50,...

``python -m benchmarks.suite.studies.mechanism_choice RESULTS.csv`` prints, for the shipped default
and every candidate in the file, the counts the adoption rule reads (self-oracle, floor,
worst seed at epsilon >= 0.3, mean gap) and the weak-signal cells where a candidate loses
more than 0.02 against the default. Candidates are chosen on the design half only.
"""

from __future__ import annotations

import sys

from ..methods import UnderPolicy


def candidate(name, rule=(300.0, 0.05, 0.05), **constants):
    """A factory: ``DPLogisticRegression`` (only epsilon, data_norm and the seed given) fitted
    with ``AUTO_CHOICE = rule`` and the other policy constants in ``constants``."""
    changes = dict(AUTO_CHOICE=rule, **constants)

    def factory(ctx):
        from skdpgd import DPLogisticRegression

        if ctx.task != "classification":
            return None
        est = DPLogisticRegression(
            epsilon=ctx.epsilon, data_norm=ctx.data_norm, random_state=ctx.seed
        )
        return UnderPolicy(est, changes)

    factory.suite_name = name
    return factory


AOG = ("auto", "output", "gradient")
ALL = ("auto", "newton", "output", "gradient")
# the mechanism 'auto' picks, output perturbation and gradient descent (two of them where
# 'auto' picks one of these); the first gets the share in the name (%), the others the rest
ch_aog_50 = candidate("ch_aog_50", AUTO_CHOICE_CANDIDATES=AOG, AUTO_CHOICE_MAIN_SHARE=0.5)
ch_aog_70 = candidate("ch_aog_70", AUTO_CHOICE_CANDIDATES=AOG, AUTO_CHOICE_MAIN_SHARE=0.7)
# every mechanism: 'auto''s pick first, then the other two of newton, output, gradient
ch_all_50 = candidate("ch_all_50", AUTO_CHOICE_CANDIDATES=ALL, AUTO_CHOICE_MAIN_SHARE=0.5)
ch_all_34 = candidate("ch_all_34", AUTO_CHOICE_CANDIDATES=ALL, AUTO_CHOICE_MAIN_SHARE=1 / 3)


# gated: only where the comparison's noise (a difference of two counts) is at most n% of N;
# elsewhere today's selection. k2: at most two fits ('auto''s pick and the next of AOG)
ch_k2_50_n5 = candidate(
    "ch_k2_50_n5",
    AUTO_CHOICE_CANDIDATES=AOG,
    AUTO_CHOICE_MAX_FITS=2,
    AUTO_CHOICE_MAIN_SHARE=0.5,
    AUTO_CHOICE_MAX_NOISE=0.05,
)
ch_k2_70_n5 = candidate(
    "ch_k2_70_n5",
    AUTO_CHOICE_CANDIDATES=AOG,
    AUTO_CHOICE_MAX_FITS=2,
    AUTO_CHOICE_MAIN_SHARE=0.7,
    AUTO_CHOICE_MAX_NOISE=0.05,
)
ch_k3_50_n5 = candidate(
    "ch_k3_50_n5",
    AUTO_CHOICE_CANDIDATES=AOG,
    AUTO_CHOICE_MAIN_SHARE=0.5,
    AUTO_CHOICE_MAX_NOISE=0.05,
)
ch_k2_50_n3 = candidate(
    "ch_k2_50_n3",
    AUTO_CHOICE_CANDIDATES=AOG,
    AUTO_CHOICE_MAX_FITS=2,
    AUTO_CHOICE_MAIN_SHARE=0.5,
    AUTO_CHOICE_MAX_NOISE=0.03,
)
ch_k2_50_n5_r10 = candidate(
    "ch_k2_50_n5_r10",
    (300.0, 0.05, 0.10),
    AUTO_CHOICE_CANDIDATES=AOG,
    AUTO_CHOICE_MAX_FITS=2,
    AUTO_CHOICE_MAIN_SHARE=0.5,
    AUTO_CHOICE_MAX_NOISE=0.05,
)


# free candidates: 'auto''s fit alone with 90% of mu^2 (as today's selection), and its blends
# b * fit + (1 - b) * prior with the intercept-only model (post-processing)
ch_b50 = candidate("ch_b50", AUTO_CHOICE_MAX_FITS=1, AUTO_CHOICE_BLENDS=(0.5,))
ch_b50_25 = candidate("ch_b50_25", AUTO_CHOICE_MAX_FITS=1, AUTO_CHOICE_BLENDS=(0.5, 0.25))
ch_b25 = candidate("ch_b25", AUTO_CHOICE_MAX_FITS=1, AUTO_CHOICE_BLENDS=(0.25,))
# two fits (70% / 30% of the fits' share) and a blend of each, where the comparison is precise
ch_k2_70_n5_b50 = candidate(
    "ch_k2_70_n5_b50",
    AUTO_CHOICE_CANDIDATES=AOG,
    AUTO_CHOICE_MAX_FITS=2,
    AUTO_CHOICE_MAIN_SHARE=0.7,
    AUTO_CHOICE_MAX_NOISE=0.05,
    AUTO_CHOICE_BLENDS=(0.5,),
)


# the same with a bias toward the first fit: another model must beat its noisy count by
# AUTO_CHOICE_MAIN_BIAS * s_d^2 / N
ch_b50_m3 = candidate(
    "ch_b50_m3", AUTO_CHOICE_MAX_FITS=1, AUTO_CHOICE_BLENDS=(0.5,), AUTO_CHOICE_MAIN_BIAS=3.0
)
ch_b50_m10 = candidate(
    "ch_b50_m10", AUTO_CHOICE_MAX_FITS=1, AUTO_CHOICE_BLENDS=(0.5,), AUTO_CHOICE_MAIN_BIAS=10.0
)
# the blend's own effect: the fit's lead over the intercept-only model as today's (3 units),
# the blend between them without a bias; and a lead of 6 units
ch_b50_m3_s0 = candidate(
    "ch_b50_m3_s0",
    AUTO_CHOICE_MAX_FITS=1,
    AUTO_CHOICE_BLENDS=(0.5,),
    AUTO_CHOICE_MAIN_BIAS=3.0,
    AUTO_SELECT_BIAS=0.0,
)
ch_b50_m6_s0 = candidate(
    "ch_b50_m6_s0",
    AUTO_CHOICE_MAX_FITS=1,
    AUTO_CHOICE_BLENDS=(0.5,),
    AUTO_CHOICE_MAIN_BIAS=6.0,
    AUTO_SELECT_BIAS=0.0,
)
ch_k2_70_n5_b50_m3 = candidate(
    "ch_k2_70_n5_b50_m3",
    AUTO_CHOICE_CANDIDATES=AOG,
    AUTO_CHOICE_MAX_FITS=2,
    AUTO_CHOICE_MAIN_SHARE=0.7,
    AUTO_CHOICE_MAX_NOISE=0.05,
    AUTO_CHOICE_BLENDS=(0.5,),
    AUTO_CHOICE_MAIN_BIAS=3.0,
)
ch_k2_70_n3_m3 = candidate(
    "ch_k2_70_n3_m3",
    AUTO_CHOICE_CANDIDATES=AOG,
    AUTO_CHOICE_MAX_FITS=2,
    AUTO_CHOICE_MAIN_SHARE=0.7,
    AUTO_CHOICE_MAX_NOISE=0.03,
    AUTO_CHOICE_MAIN_BIAS=3.0,
)


# controls: no choice, today's selection with a larger lead for the fit over the prior
# (AUTO_SELECT_BIAS; 3 ships): what the blends' runs gained without any blend
sel_b6 = candidate("sel_b6", None, AUTO_SELECT_BIAS=6.0)
sel_b10 = candidate("sel_b10", None, AUTO_SELECT_BIAS=10.0)


#: what the adoption rule compares
ORACLE = ("fixed_uniform", "fixed_newton", "fixed_output")
DEFAULT = "DPLogisticRegression"


def cells(path, eps_min=0.1, eps_max=10.0):
    """Per (set, protocol, epsilon, method): the median and worst score over seeds, with the
    cell's majority-class median and best fixed mechanism's median."""
    import pandas as pd

    df = pd.read_csv(path)
    df = df[df.error.isna() | (df.error == "")]
    df = df[df.task == "classification"]
    maj = df[df.method == "majority"].groupby(["dataset", "protocol"]).score.median()
    fit = df[(df.method != "majority") & df.epsilon.between(eps_min, eps_max)]
    agg = fit.groupby(["dataset", "protocol", "epsilon", "method"]).score.agg(["median", "min"])
    agg = agg.reset_index()
    fixed = agg[agg.method.isin(ORACLE)].groupby(["dataset", "protocol", "epsilon"])["median"]
    agg = agg.join(fixed.max().rename("best_fixed"), on=["dataset", "protocol", "epsilon"])
    agg["majority"] = [maj.get((d, p)) for d, p in zip(agg.dataset, agg.protocol)]
    return agg


def summary(path, margin=0.02, floor_margin=0.005, weak_margin=0.02):
    """One row per method (the default and every non-fixed method in the file): cells,
    self-oracle (median >= max(best fixed, majority) - margin), floor (median >= majority -
    floor_margin), worst seed at epsilon >= 0.3 (>= majority - 0.02 and >= median - 0.10),
    mean gap to max(best fixed, majority), and, on the weak-signal cells (the best fixed
    mechanism's median at most ``weak_margin`` above the majority's), the number where the
    method's median is more than 0.02 below the default's and the largest such loss."""
    import numpy as np
    import pandas as pd

    agg = cells(path)
    target = np.maximum(agg.best_fixed, agg.majority)
    agg["oracle_ok"] = agg["median"] >= target - margin
    agg["floor_ok"] = agg["median"] >= agg.majority - floor_margin
    agg["worst_ok"] = (agg["min"] >= agg.majority - 0.02) & (agg["min"] >= agg["median"] - 0.10)
    agg["gap"] = agg["median"] - target
    agg["weak"] = agg.best_fixed <= agg.majority + weak_margin
    default = agg[agg.method == DEFAULT].set_index(["dataset", "protocol", "epsilon"])["median"]
    agg["vs_default"] = (
        agg["median"].values
        - default.reindex(pd.MultiIndex.from_frame(agg[["dataset", "protocol", "epsilon"]])).values
    )
    rows = []
    for method, g in agg.groupby("method"):
        if method in ORACLE:
            continue
        late = g[g.epsilon >= 0.3]
        weak = g[g.weak]
        rows.append(
            dict(
                method=method,
                cells=len(g),
                self_oracle=int(g.oracle_ok.sum()),
                floor=int(g.floor_ok.sum()),
                worst_seed=f"{int(late.worst_ok.sum())}/{len(late)}",
                mean_gap=round(float(g.gap.mean()), 4),
                weak_cells=len(weak),
                weak_losses=int((weak.vs_default < -0.02).sum()),
                weak_worst=round(float(weak.vs_default.min()), 3) if len(weak) else 0.0,
            )
        )
    return pd.DataFrame(rows), agg


def main(argv=None):
    import argparse

    import pandas as pd

    ap = argparse.ArgumentParser(description="adoption counts of the choice candidates")
    ap.add_argument("results")
    ap.add_argument("--cells", default=None, help="print every cell of this method")
    args = ap.parse_args(argv)
    table, agg = summary(args.results)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(table.to_string(index=False))
        if args.cells:
            g = agg[agg.method == args.cells].drop(columns=["method"])
            print(g.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Study: the default against the package's own fixed mechanisms (the "self-oracle").

A default must never be far below the best of the package's own fixed mechanisms at the same
epsilon, nor below the constant model. These factories fit the default estimators with one
mechanism forced (everything else as shipped), so that a suite run gives, per (set, epsilon),
the best a user could have had from the package by picking the mechanism after the fact::

    python -m benchmarks.suite.run --task classification --half design --protocol a,b \
        --eps 0.1,0.3,1,3,10 --seeds 3 --out signal_design_cls.csv \
        --methods skdpgd,majority,benchmarks.suite.studies.signal_choice:fixed_uniform,\
benchmarks.suite.studies.signal_choice:fixed_newton,benchmarks.suite.studies.signal_choice:fixed_output

(``fixed_ssp`` and ``fixed_prior`` for regression; ``fixed_prior`` is the intercept-only
model with the whole budget). ``python -m benchmarks.suite.studies.signal_choice RESULTS.csv``
prints the self-oracle and floor tables of a results file.
"""

from __future__ import annotations

import sys


def _fixed(schedule, task=None):
    def factory(ctx):
        if task is not None and ctx.task != task:
            return None
        k = ctx.n_classes if ctx.task == "classification" and (ctx.n_classes or 2) > 2 else 1
        if schedule == "newton" and k * (ctx.n_features + 1) > 256:
            return None  # a D^2 Hessian per row: hours on mnist5k (7850 coefficients)
        if schedule == "kronecker" and k < 3:
            return None  # the multinomial loss only
        if ctx.task == "classification":
            from skdpgd import DPLogisticRegression

            return DPLogisticRegression(
                epsilon=ctx.epsilon,
                data_norm=ctx.data_norm,
                schedule=schedule,
                random_state=ctx.seed,
            )
        from skdpgd import DPRidge

        return DPRidge(
            epsilon=ctx.epsilon,
            data_norm=ctx.data_norm,
            y_bound=ctx.y_bound,
            schedule=schedule,
            random_state=ctx.seed,
        )

    factory.suite_name = f"fixed_{schedule}"
    return factory


fixed_uniform = _fixed("uniform")
fixed_newton = _fixed("newton", "classification")
fixed_output = _fixed("output", "classification")
fixed_kronecker = _fixed("kronecker", "classification")
fixed_ssp = _fixed("ssp", "regression")
fixed_prior = _fixed("prior")

#: the fixed mechanisms of each task that the self-oracle takes the best of
ORACLE = {
    "classification": ("fixed_uniform", "fixed_newton", "fixed_output"),
    "regression": ("fixed_uniform", "fixed_ssp"),
}


#: the shipped defaults' method names in a results file
DEFAULTS = {"classification": "DPLogisticRegression", "regression": "DPRidge"}


def tables(path, default=None, eps_min=0.1, eps_max=10.0, margin=0.02, floor_margin=0.005):
    """Per (set, protocol, epsilon): the default's median score, the best fixed mechanism's,
    the floor (majority / R^2 = 0); and the counts of cells that meet the self-oracle target
    (default >= max(best fixed, floor) - margin) and the floor target."""
    import numpy as np
    import pandas as pd

    df = pd.read_csv(path)
    df = df[df.error.isna() | (df.error == "")]
    med = df.groupby(["dataset", "task", "protocol", "epsilon", "method"]).score.median()
    med = med.reset_index()
    floor = df[df.method == "majority"].groupby(["dataset", "protocol"]).score.median()
    rows = []
    for (ds, task, prot, eps), g in med.groupby(["dataset", "task", "protocol", "epsilon"]):
        if not (eps_min <= eps <= eps_max):
            continue
        scores = dict(zip(g.method, g.score))
        name = default or DEFAULTS[task]
        if name not in scores:
            continue
        fixed = [scores[m] for m in ORACLE[task] if m in scores]
        best = max(fixed) if fixed else np.nan
        base = 0.0 if task == "regression" else floor.get((ds, prot), np.nan)
        target = max(best, base) - margin
        rows.append(
            dict(
                dataset=ds,
                protocol=prot,
                epsilon=eps,
                default=scores[name],
                best_fixed=best,
                floor=base,
                oracle_ok=scores[name] >= target,
                floor_ok=scores[name] >= base - floor_margin,
                gap=scores[name] - max(best, base),
                best_name=max(ORACLE[task], key=lambda m: scores.get(m, -np.inf)),
            )
        )
    return pd.DataFrame(rows)


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description="self-oracle and floor tables of a suite run")
    ap.add_argument("results")
    ap.add_argument("--default", default=None, help="method name (default: the shipped ones)")
    args = ap.parse_args(argv)
    t = tables(args.results, args.default)
    import pandas as pd

    with pd.option_context("display.width", 160, "display.max_rows", 500):
        print(t.round(3).to_string(index=False))
    print(
        f"\nself-oracle met in {int(t.oracle_ok.sum())} of {len(t)} cells; floor in "
        f"{int(t.floor_ok.sum())} of {len(t)}; mean gap to max(best fixed, floor) "
        f"{t.gap.mean():+.4f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())


# ------------------------------------------------------------------------------------------
# candidates for the accounted choice between the fit and the constant model
# ------------------------------------------------------------------------------------------

#: module constants a candidate may override, with the values the library ships
KNOBS = {
    "AUTO_SECOND_ORDER_MIN_SNR": 20.0,
    "AUTO_SELECT_BIAS": 0.0,
    "AUTO_LOW_OUTPUT_MIN_SNR": float("inf"),
    "AUTO_PRIOR_MAX_SNR": 0.0,
    "AUTO_PRIOR_MAX_SNR_BINARY": 0.0,
}
#: the constants as shipped (the candidates above were run against KNOBS, the values before)


def candidate(name, select, prior_switch=False, **knobs):
    """A factory: the default classifier with ``Auto(select=select, prior_switch=...)`` and
    the policy constants in ``knobs`` (the others as shipped) active during its fit only."""
    return _auto(name, select, prior_switch, dict(KNOBS, **knobs))


def _auto(name, select, prior_switch, knobs):
    """A factory: the default classifier with ``Auto(select=select,
    prior_switch=prior_switch)``, the policy constants ``knobs`` active during its fit only."""

    def factory(ctx):
        from skdpgd import DPLogisticRegression
        from skdpgd.schedules import Auto

        from ..methods import UnderPolicy

        if ctx.task != "classification":
            return None
        est = DPLogisticRegression(
            epsilon=ctx.epsilon,
            data_norm=ctx.data_norm,
            schedule=Auto(select=select, prior_switch=prior_switch),
            random_state=ctx.seed,
        )
        return UnderPolicy(est, knobs)

    factory.suite_name = name
    return factory


INF = float("inf")
c_sel_5_10 = candidate("c_sel_5_10", (INF, 0.05, 0.10))
c_sel_5_5 = candidate("c_sel_5_5", (INF, 0.05, 0.05))
c_sel_10_10 = candidate("c_sel_10_10", (INF, 0.10, 0.10))
c_sel_5_15 = candidate("c_sel_5_15", (INF, 0.05, 0.15))
c_sel100_5_10 = candidate("c_sel100_5_10", (100.0, 0.05, 0.10))
c_nosel = candidate("c_nosel", False)
c_sel_5_10_n5 = candidate("c_sel_5_10_n5", (INF, 0.05, 0.10), AUTO_SECOND_ORDER_MIN_SNR=5.0)
c_sel_5_10_n10 = candidate("c_sel_5_10_n10", (INF, 0.05, 0.10), AUTO_SECOND_ORDER_MIN_SNR=10.0)
c_sel_5_5_b1 = candidate("c_sel_5_5_b1", (INF, 0.05, 0.05), AUTO_SELECT_BIAS=1.0)
c_sel_5_5_b3 = candidate("c_sel_5_5_b3", (INF, 0.05, 0.05), AUTO_SELECT_BIAS=3.0)
c_sel_5_5_b10 = candidate("c_sel_5_5_b10", (INF, 0.05, 0.05), AUTO_SELECT_BIAS=10.0)
c_sel_5_10_b3 = candidate("c_sel_5_10_b3", (INF, 0.05, 0.10), AUTO_SELECT_BIAS=3.0)
c_sel100_5_5_b3 = candidate("c_sel100_5_5_b3", (100.0, 0.05, 0.05), AUTO_SELECT_BIAS=3.0)
c_sel_3_5_b3 = candidate("c_sel_3_5_b3", (INF, 0.03, 0.05), AUTO_SELECT_BIAS=3.0)
c_sel_3_3_b3 = candidate("c_sel_3_3_b3", (INF, 0.03, 0.03), AUTO_SELECT_BIAS=3.0)
c_sel_3_5_b1 = candidate("c_sel_3_5_b1", (INF, 0.03, 0.05), AUTO_SELECT_BIAS=1.0)
c_sel_3_5_b10 = candidate("c_sel_3_5_b10", (INF, 0.03, 0.05), AUTO_SELECT_BIAS=10.0)
c_sel100_5_5_b3 = candidate("c_sel100_5_5_b3", (100.0, 0.05, 0.05), AUTO_SELECT_BIAS=3.0)
c_sel300_5_5_b3 = candidate("c_sel300_5_5_b3", (300.0, 0.05, 0.05), AUTO_SELECT_BIAS=3.0)
c_sel1000_5_5_b3 = candidate("c_sel1000_5_5_b3", (1000.0, 0.05, 0.05), AUTO_SELECT_BIAS=3.0)
c_sel_5_5_b3_o2 = candidate(
    "c_sel_5_5_b3_o2", (INF, 0.05, 0.05), AUTO_SELECT_BIAS=3.0, AUTO_LOW_OUTPUT_MIN_SNR=2.0
)
c_sel_5_5_b3_o5 = candidate(
    "c_sel_5_5_b3_o5", (INF, 0.05, 0.05), AUTO_SELECT_BIAS=3.0, AUTO_LOW_OUTPUT_MIN_SNR=5.0
)
c_sel_5_5_b3_o0 = candidate(
    "c_sel_5_5_b3_o0", (INF, 0.05, 0.05), AUTO_SELECT_BIAS=3.0, AUTO_LOW_OUTPUT_MIN_SNR=0.0
)
#: the rule before the selection (the public-ratio prior switch's two tiers, gradient descent
#: below the second-order threshold), for before/after tables
c_before = candidate("c_before", False, prior_switch=((10.0, 0.5, 0.1), (100.0, 0.7, 0.05)))


def _sgd(schedule):
    def factory(ctx):
        if ctx.task != "classification":
            return None
        from skdpgd import DPSGDClassifier

        return DPSGDClassifier(
            epsilon=ctx.epsilon, data_norm=ctx.data_norm, schedule=schedule, random_state=ctx.seed
        )

    factory.suite_name = f"sgd_{schedule}"
    return factory


#: DP-SGD with its fit always kept (no switch to the majority-class model)
sgd_uniform = _sgd("uniform")

#: the shipped selection with the whole budget on the majority-class model below a public
#: ratio (where the selection's own noise is larger than any difference it could see)
_SHIPPED = dict(AUTO_SELECT_BIAS=3.0, AUTO_LOW_OUTPUT_MIN_SNR=5.0)
c_ship_p0 = candidate("c_ship_p0", (300.0, 0.05, 0.05), AUTO_PRIOR_MAX_SNR=0.0, **_SHIPPED)
c_ship_p1 = candidate("c_ship_p1", (300.0, 0.05, 0.05), AUTO_PRIOR_MAX_SNR=1.0, **_SHIPPED)
c_ship_p2 = candidate("c_ship_p2", (300.0, 0.05, 0.05), AUTO_PRIOR_MAX_SNR=2.0, **_SHIPPED)
c_ship_p4 = candidate("c_ship_p4", (300.0, 0.05, 0.05), AUTO_PRIOR_MAX_SNR=4.0, **_SHIPPED)
c_ship_b2 = candidate("c_ship_b2", (300.0, 0.05, 0.05), AUTO_PRIOR_MAX_SNR_BINARY=2.0, **_SHIPPED)
c_ship_b3 = candidate("c_ship_b3", (300.0, 0.05, 0.05), AUTO_PRIOR_MAX_SNR_BINARY=3.0, **_SHIPPED)
c_ship_b4 = candidate("c_ship_b4", (300.0, 0.05, 0.05), AUTO_PRIOR_MAX_SNR_BINARY=4.0, **_SHIPPED)
c_ship_b6 = candidate("c_ship_b6", (300.0, 0.05, 0.05), AUTO_PRIOR_MAX_SNR_BINARY=6.0, **_SHIPPED)


def shipped(name, select=None, **knobs):
    """A factory: the default classifier with ``Auto(select=select)`` (None: the shipped
    rule) and only the policy constants in ``knobs`` changed, during its fit only."""
    return _auto(name, select, None, knobs)


#: the selection's bias and share with its counts in the released model's coordinates (the
#: candidates above were run while the selection evaluated the fit in its kernel coordinates)
s_b0 = shipped("s_b0", AUTO_SELECT_BIAS=0.0)
s_b1 = shipped("s_b1", AUTO_SELECT_BIAS=1.0)
s_bm1 = shipped("s_bm1", AUTO_SELECT_BIAS=-1.0)
s_sh10_b1 = shipped("s_sh10_b1", (300.0, 0.05, 0.10), AUTO_SELECT_BIAS=1.0)
s_sh10_b3 = shipped("s_sh10_b3", (300.0, 0.05, 0.10), AUTO_SELECT_BIAS=3.0)

#: the penalty factor where 'auto' runs DP damped Newton (AUTO_ALPHA_NOISE_NEWTON)
s_newton_a1 = shipped("s_newton_a1", AUTO_ALPHA_NOISE_NEWTON=0.1)
s_newton_a03 = shipped("s_newton_a03", AUTO_ALPHA_NOISE_NEWTON=0.03)

"""Protocols (b) and (c) as private pipelines on the raw frame.

For each classification set, seed and epsilon, on the suite's split (``protocols.split_indices``):

``a``      the suite's protocol (a) arrays (statistics read from the training rows without
           privacy), then ``DPLogisticRegression(data_norm=1)``;
``b``      the suite's hand-written protocol (b) arrays, then ``DPLogisticRegression(data_norm=1)``;
``b-pipe`` ``make_private_pipeline(schema_transformer(codebook), DPLogisticRegression())`` on the
           raw frame: the same public map as (b), expressed with skdpgd.preprocessing (the
           script checks that the transformed rows equal (b)'s);
``c``      ``make_private_pipeline(ColumnTransformer([DPStandardScaler(ranges) on the numeric
           columns, OneHotEncoder(levels) on the categorical ones]), DPLogisticRegression())``:
           the scaler spends part of the same epsilon (the pipeline's default split, 30% of
           mu^2), the model the rest.

Every model gets the public class list. Usage::

    python -m benchmarks.suite.pipelines --half report --eps 0.3,1,3 --seeds 3 --out res.csv
"""

from __future__ import annotations

import argparse
import csv
import math
import time
import warnings

import numpy as np
import pandas as pd

from . import datasets as D
from . import protocols as P
from . import split as S

FIELDS = [
    "dataset",
    "half",
    "protocol",
    "seed",
    "epsilon",
    "score",
    "epsilon_spent",
    "fit_time",
    "n_train",
    "error",
]


def raw_frame(raw):
    """The raw columns of a set as a DataFrame, and its public codebook."""
    num_names, cat_names = [str(n) for n in raw.num_names], [str(n) for n in raw.cat_names]
    df = pd.DataFrame(raw.X_num, columns=num_names)
    for j, name in enumerate(cat_names):
        df[name] = raw.X_cat[:, j]
    schema = {n: (float(lo), float(hi)) for n, (lo, hi) in zip(num_names, raw.num_ranges)}
    schema.update({n: list(lv) for n, lv in zip(cat_names, raw.cat_levels)})
    return df, schema


def _model(eps, seed, classes, **kw):
    from skdpgd import DPLogisticRegression

    return DPLogisticRegression(epsilon=eps, classes=classes, random_state=seed, **kw)


def _pipeline_b(schema, eps, seed, classes):
    from skdpgd.pipeline import make_private_pipeline
    from skdpgd.preprocessing import schema_transformer

    return make_private_pipeline(
        schema_transformer(schema), _model(eps, seed, classes), epsilon=eps, random_state=seed
    )


def _pipeline_c(raw, eps, seed, classes, share=None):
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    from skdpgd.pipeline import make_private_pipeline
    from skdpgd.preprocessing import DPStandardScaler

    parts = []
    if raw.num_names:
        parts.append(
            (
                "num",
                DPStandardScaler(bounds=np.asarray(raw.num_ranges, dtype=float)),
                [str(n) for n in raw.num_names],
            )
        )
    if raw.cat_names:
        parts.append(
            (
                "cat",
                OneHotEncoder(
                    categories=[list(lv) for lv in raw.cat_levels],
                    handle_unknown="ignore",
                    sparse_output=False,
                ),
                [str(n) for n in raw.cat_names],
            )
        )
    ct = ColumnTransformer(parts, sparse_threshold=0)
    shares = None
    if share is not None and raw.num_names:
        shares = {"columntransformer__num": share, "dplogisticregression": 1.0 - share}
    return make_private_pipeline(
        ct, _model(eps, seed, classes), epsilon=eps, random_state=seed, shares=shares
    )


def run_set(name, seeds, epsilons, max_train=P.MAX_TRAIN, check=True, c_shares=()):
    raw = D.load(name)
    df, schema = raw_frame(raw)
    classes = np.unique(raw.y)
    rows = []
    for seed in seeds:
        tr, te, _ = P.split_indices(raw, seed, max_train=max_train)
        pa = P.prepare(raw, "a", seed, max_train=max_train)
        pb = P.prepare(raw, "b", seed, max_train=max_train)
        Xtr, Xte = df.iloc[tr].reset_index(drop=True), df.iloc[te].reset_index(drop=True)
        ytr, yte = raw.y[tr], raw.y[te]
        if check:  # the pipeline's map is protocol (b)'s
            from skdpgd.preprocessing import schema_transformer

            mapped = schema_transformer(schema).fit(Xtr).transform(Xtr)
            gap = float(np.max(np.abs(mapped - pb.X_train)))
            if gap > 1e-12:
                raise AssertionError(f"{name}: schema_transformer differs from (b) by {gap}")
        for eps in epsilons:
            jobs = {
                "a": (
                    lambda: _model(eps, seed, classes, data_norm=1.0),
                    pa.X_train,
                    pa.y_train,
                    pa.X_test,
                    pa.y_test,
                ),
                "b": (
                    lambda: _model(eps, seed, classes, data_norm=1.0),
                    pb.X_train,
                    pb.y_train,
                    pb.X_test,
                    pb.y_test,
                ),
                "b-pipe": (lambda: _pipeline_b(schema, eps, seed, classes), Xtr, ytr, Xte, yte),
                "c": (lambda: _pipeline_c(raw, eps, seed, classes), Xtr, ytr, Xte, yte),
            }
            for share in c_shares:  # (c) at other scaler shares of mu^2 (design runs)
                jobs[f"c{share:g}"] = (
                    lambda share=share: _pipeline_c(raw, eps, seed, classes, share),
                    Xtr,
                    ytr,
                    Xte,
                    yte,
                )
            for protocol, (make, X1, y1, X2, y2) in jobs.items():
                row = {
                    "dataset": name,
                    "half": S.half_of(name),
                    "protocol": protocol,
                    "seed": seed,
                    "epsilon": eps,
                    "n_train": len(y1),
                    "error": "",
                }
                t0 = time.perf_counter()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est = make().fit(X1, y1)
                    row["fit_time"] = time.perf_counter() - t0
                    row["score"] = float(est.score(X2, y2))
                    row["epsilon_spent"] = float(est.epsilon_)
                except Exception as exc:  # recorded, not raised
                    row.update(score=math.nan, error=f"{type(exc).__name__}: {exc}"[:200])
                rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--half", default="report")
    ap.add_argument(
        "--sets", default=None, help="comma-separated; default: the half's classification sets"
    )
    ap.add_argument("--eps", default="0.3,1,3")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--max-train", type=int, default=P.MAX_TRAIN)
    ap.add_argument("--out", default=None)
    ap.add_argument(
        "--c-shares",
        default="",
        help="extra scaler shares of mu^2 for (c), e.g. 0.03,0.3 (design runs)",
    )
    args = ap.parse_args(argv)
    names = args.sets.split(",") if args.sets else S.sets(args.half, D.CLASSIFICATION)
    epsilons = [float(e) for e in args.eps.split(",")]
    rows = []
    for name in names:
        t0 = time.perf_counter()
        shares = [float(v) for v in args.c_shares.split(",") if v]
        got = run_set(name, range(args.seeds), epsilons, args.max_train, c_shares=shares)
        rows += got
        print(f"{name}: {len(got)} fits in {time.perf_counter() - t0:.0f}s", flush=True)
        if args.out:
            with open(args.out, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=FIELDS)
                w.writeheader()
                w.writerows(rows)
    table = pd.DataFrame(rows).pivot_table(
        index=["dataset", "epsilon"], columns="protocol", values="score", aggfunc="mean"
    )
    print(table.round(3).to_string())
    return rows


if __name__ == "__main__":
    main()

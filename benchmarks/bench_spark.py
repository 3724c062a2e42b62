"""The default DPLogisticRegression on a Spark DataFrame, against MLlib, in-memory and Dask.

Generates ``--rows`` x ``--d`` Gaussian features on the Spark side (``spark.range`` and
``randn``: nothing of size N is built on the driver), a linear rule with label noise, one
``pyspark.ml`` vector column, cached; then, in one ``local[2]`` session (``--master``):

* the passes over the data of a default fit (``DPLogisticRegression(epsilon, data_norm=1,
  classes=[0, 1])``): on Spark, every ``mapInArrow`` job (validation included), counted from
  the backend's own reduce calls; in memory and on Dask (same rows, when ``--rows`` is at most
  ``--compare-max-rows``), the reductions the fit asks its backend for (Dask: plus its one
  validation pass);
* the time of the Spark fit against Spark MLlib's non-private ``LogisticRegression().fit`` on
  the same cached DataFrame, as a ratio (each timed ``--repeat`` times, median);
* the driver's peak Python memory during the Spark fit (``tracemalloc``: numpy buffers
  included), at ``--rows`` and at a quarter of it: the reductions keep it O(d^2), so it does
  not grow with N. The JVM driver's heap is not measured.

Everything printed is measured in this process; nothing is hard-coded. The issue's target
size is ``--rows 10000000 --d 50`` (the default); on a shared machine run it smaller, e.g.
``PYTHONPATH=. python benchmarks/bench_spark.py --rows 200000``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
import warnings

import numpy as np


def session(master):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spark = (
        SparkSession.builder.master(master)
        .appName("skdpgd-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.executorEnv.PYTHONPATH", root)
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def table(spark, rows, d, partitions, seed=0):
    """Features of norm about 1/2 (``randn / (2 sqrt d)``), label ``x0 - x1 + noise > 0``."""
    from pyspark.ml.feature import VectorAssembler
    from pyspark.sql import functions as F

    scale = 1.0 / (2.0 * np.sqrt(d))
    cols = [(F.randn(seed + j) * scale).alias(f"x{j}") for j in range(d)]
    df = spark.range(0, rows, numPartitions=partitions).select("id", *cols)
    df = df.withColumn(
        "label", ((F.col("x0") - F.col("x1") + 0.3 * scale * F.randn(seed + d)) > 0).cast("int")
    )
    vec = VectorAssembler(inputCols=[f"x{j}" for j in range(d)], outputCol="features")
    out = vec.transform(df).select("id", "features", "label").cache()
    out.count()  # materialise the cache before anything is timed
    return out


def count_spark_passes():
    """Wrap the Spark backend's reduce: each call is one pass over the table."""
    from skdpgd._compute import spark_backend

    counter = {"n": 0}
    original = spark_backend.SparkData.reduce

    def reduce(self, *args, **kwargs):
        counter["n"] += 1
        return original(self, *args, **kwargs)

    spark_backend.SparkData.reduce = reduce
    return counter


REDUCTIONS = (
    "norm_sum",
    "grad_sum",
    "hessian_sum",
    "grad_hessian_sum",
    "suff_stats",
    "class_curvature_sum",
    "correct_counts",
    "closer_sum",
    "objective",
    "weight_sum",
)


def count_reductions(cls):
    """Wrap a backend class's reductions; each outermost call reads every row once (a
    reduction that calls others, as the in-memory gradient-and-Hessian sum over a subsample
    does, is one pass)."""
    counter = {"n": 0, "depth": 0}
    for name in REDUCTIONS:
        original = getattr(cls, name, None)
        if original is None:
            continue

        def wrapped(self, *args, _original=original, **kwargs):
            counter["n"] += counter["depth"] == 0
            counter["depth"] += 1
            try:
                return _original(self, *args, **kwargs)
            finally:
                counter["depth"] -= 1

        setattr(cls, name, wrapped)
    return counter


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--compare-max-rows", type=int, default=2_000_000)
    args = parser.parse_args()
    warnings.simplefilter("ignore", FutureWarning)

    from pyspark.ml.classification import LogisticRegression

    from skdpgd import DPLogisticRegression
    from skdpgd._compute.backends import DenseRows
    from skdpgd.spark import SparkData

    spark = session(args.master)
    kw = dict(epsilon=args.epsilon, data_norm=1.0, classes=[0, 1], random_state=0)
    spark_passes = count_spark_passes()
    print(f"rows {args.rows:,} x {args.d}, {args.partitions} partitions, {args.master}")

    # --- the driver's peak memory at N / 4 and N, and the passes of a default fit
    peaks = {}
    for rows in (args.rows // 4, args.rows):
        df = table(spark, rows, args.d, args.partitions)
        data = SparkData(df, "features", label="label")
        spark_passes["n"] = 0
        tracemalloc.start()
        fit = DPLogisticRegression(**kw).fit(data.X, data.y)
        peaks[rows] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        passes = spark_passes["n"]
        df.unpersist()
    D = args.d + 1
    for rows, peak in peaks.items():
        print(
            f"driver peak Python memory, N={rows:,}: {peak / 2**20:.2f} MiB "
            f"(one D x D sum: {D * D * 8 / 2**20:.3f} MiB; X itself: "
            f"{rows * args.d * 8 / 2**20:.0f} MiB)"
        )
    print(f"peak ratio N / (N/4): {peaks[args.rows] / peaks[args.rows // 4]:.3f} (O(N) would be 4)")
    print(f"default fit: mechanism {fit.mechanism_}, n_iter_ {fit.n_iter_}, eps {fit.epsilon_:.4f}")
    print(f"passes over the data, Spark (validation included): {passes}")

    # --- the same count in memory and on Dask (same rule, rows generated in numpy)
    if args.rows <= args.compare_max_rows:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(args.rows, args.d)) / (2.0 * np.sqrt(args.d))
        y = X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=args.rows) / (2 * np.sqrt(args.d)) > 0
        y = y.astype(int)
        mem = count_reductions(DenseRows)
        DPLogisticRegression(**kw).fit(X, y)
        print(f"passes over the data, in memory (reductions): {mem['n']}")
        try:
            import dask.array as da

            from skdpgd._compute.dask_backend import DaskRows

            dsk = count_reductions(DaskRows)
            chunk = max(1, args.rows // args.partitions)
            Xd = da.from_array(X, chunks=(chunk, args.d))
            DPLogisticRegression(**kw).fit(Xd, da.from_array(y, chunks=chunk))
            print(f"passes over the data, Dask (reductions + 1 validation): {dsk['n'] + 1}")
        except ImportError:
            print("Dask: not installed")

    # --- time against MLlib's LogisticRegression on the same cached DataFrame
    df = table(spark, args.rows, args.d, args.partitions)
    data = SparkData(df, "features", label="label")
    ours, mllib = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        DPLogisticRegression(**kw).fit(data.X, data.y)
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        LogisticRegression(featuresCol="features", labelCol="label").fit(df)
        mllib.append(time.perf_counter() - t)
    a, b = statistics.median(ours), statistics.median(mllib)
    print(f"DPLogisticRegression().fit on Spark: {a:.2f} s (median of {args.repeat})")
    print(f"MLlib LogisticRegression().fit:      {b:.2f} s (median of {args.repeat})")
    print(f"time ratio, skdpgd / MLlib: {a / b:.2f}")
    spark.stop()


if __name__ == "__main__":
    main()

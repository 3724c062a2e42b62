"""
A private fit on a Spark DataFrame
==================================

:class:`skdpgd.spark.SparkData` names the columns of a Spark DataFrame; a full-batch
estimator then computes every release as one pass over the table on the executors, and the
driver receives one sum per release (O(d^2) numbers) and draws the noise. Predictions are
Spark column expressions, computed on the executors. With a row-id column 0..N-1 the fit is
the in-memory fit on the rows ordered by id, however the table is partitioned. Needs Java and
``pip install "skdpgd[spark]"``.
"""

import os
import shutil
import sys

import numpy as np

from skdpgd import DPLogisticRegression

rng = np.random.default_rng(0)
n, d = 20_000, 6
X = rng.normal(size=(n, d)) / (2 * np.sqrt(d))
X = X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))  # rows of norm <= 1
y = (X[:, 0] - X[:, 1] > 0).astype(int)

try:
    import pandas as pd
    from pyspark.sql import SparkSession
except ImportError:  # the docs build without the spark extra
    SparkSession = None
    print("pyspark is not installed: pip install 'skdpgd[spark]'")

if SparkSession is not None and shutil.which("java") is None:
    SparkSession = None
    print("Spark needs Java: no `java` on the PATH")

if SparkSession is not None:
    from skdpgd.spark import SparkData

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers' Python
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    columns = [f"x{j}" for j in range(d)]
    pdf = pd.DataFrame(X, columns=columns).assign(label=y, row=np.arange(n))
    df = spark.createDataFrame(pdf).repartition(4).cache()  # every release reads it once

    data = SparkData(df, features=columns, label="label", row_id="row")
    kw = dict(epsilon=0.5, data_norm=1.0, classes=[0, 1], random_state=0)
    on_spark = DPLogisticRegression(**kw).fit(data.X, data.y)
    in_memory = DPLogisticRegression(**kw).fit(X, y)
    print(
        "largest coefficient difference, Spark vs in memory:",
        float(np.max(np.abs(on_spark.coef_ - in_memory.coef_))),
    )
    print("epsilon spent:", on_spark.epsilon_, " mechanism:", on_spark.mechanism_)

    # predictions never leave the cluster: a column expression, evaluated by the executors
    scored = df.withColumn("pred", on_spark.predict(data.X))
    accuracy = scored.selectExpr("avg(cast(pred = label as double)) as acc").first()["acc"]
    print("accuracy (computed on the executors):", accuracy)
    spark.stop()

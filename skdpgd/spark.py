"""Spark input for the full-batch estimators: :class:`SparkData` names a DataFrame's columns.

>>> data = SparkData(df, features=["a", "b", "c"], label="y")  # doctest: +SKIP
>>> clf = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1])  # doctest: +SKIP
>>> clf.fit(data.X, data.y)  # doctest: +SKIP
>>> df.withColumn("pred", clf.predict(data.X))  # doctest: +SKIP

Each release is one ``mapInArrow`` pass over the table: the executors compute the sums, the
driver receives O(d^2) numbers per release and draws the noise. Predictions are Spark column
expressions, computed on the executors. Needs the ``spark`` extra (``pip install
skdpgd[spark]``); importing this module does not import pyspark. See the Spark section of
the large-data guide.
"""

from ._compute.spark_backend import SparkData

SparkData.__module__ = __name__  # its public home

__all__ = ["SparkData"]

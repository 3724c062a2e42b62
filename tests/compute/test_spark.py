"""The full-batch estimators on Spark DataFrames: the in-memory model, the same epsilon.

One ``local[2]`` session for the module (the reductions run in Spark's Python workers, the
noise is drawn on the driver). The rows carry an id 0..N-1 and are shuffled across
partitions: the in-memory fit reads them ordered by id. Skips without Java or the spark extra.
"""

import os
import pathlib
import pickle
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("pyspark", reason="the spark extra (pyspark) is not installed")
pytest.importorskip("pyarrow", reason="the spark extra (pyarrow) is not installed")


def _java_ok():
    java = shutil.which("java")
    if java is None:
        return False
    try:
        return subprocess.run([java, "-version"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


if not _java_ok():
    pytest.skip("Spark needs Java, and no working `java` is on the PATH", allow_module_level=True)

from skdpgd import (  # noqa: E402
    DPHuberRegressor,
    DPLinearSVC,
    DPLogisticRegression,
    DPPoissonRegressor,
    DPRidge,
    DPSGDClassifier,
    privacy_report,
)
from skdpgd._compute import spark_backend  # noqa: E402
from skdpgd.spark import SparkData  # noqa: E402

N = 1200
#: same model as in memory (the sums differ by their summation order only)
TOL = 1e-10
#: output perturbation: the exact solver stops at its public certificate's tolerance, and its
#: path follows the sums' rounding, so two minimisers agree to that tolerance only
OUTPUT_TOL = 1e-6


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    root = str(pathlib.Path(__file__).resolve().parents[2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = (
            SparkSession.builder.master("local[2]")
            .appName("skdpgd-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.default.parallelism", "2")
            .config("spark.executorEnv.PYTHONPATH", root)  # the workers import this skdpgd
            .config("spark.sql.execution.arrow.maxRecordsPerBatch", "500")  # several batches
            .getOrCreate()
        )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 5)) / 3
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=N) > 0).astype(int)
    y3 = np.digitize(X[:, 0] + 0.2 * rng.normal(size=N), [-0.2, 0.2])
    target = X[:, 0] - 0.5 * X[:, 2] + 0.1 * rng.normal(size=N)
    counts = np.floor(np.exp(X[:, 0] + 1.0))
    w = rng.uniform(0.2, 1.0, size=N)
    return {"X": X, "y": y, "y3": y3, "target": target, "counts": counts, "w": w}


def _frame(spark, d, partitions=3, seed=1):
    """The rows shuffled into ``partitions`` partitions, with their id, cached."""
    import pandas as pd

    pdf = pd.DataFrame(d["X"], columns=[f"x{j}" for j in range(d["X"].shape[1])])
    for name in ("y", "y3", "target", "counts", "w"):
        pdf[name] = d[name]
    pdf["id"] = np.arange(N)
    pdf = pdf.sample(frac=1.0, random_state=seed)
    return spark.createDataFrame(pdf).repartition(partitions).cache()


@pytest.fixture(scope="module")
def frame(spark, data):
    return _frame(spark, data)


FEATURES = [f"x{j}" for j in range(5)]


def _same_model(dist, mem, tol=TOL):
    np.testing.assert_allclose(dist.coef_, mem.coef_, rtol=tol, atol=tol)
    np.testing.assert_allclose(dist.intercept_, mem.intercept_, rtol=tol, atol=tol)
    assert dist.epsilon_ == mem.epsilon_
    assert repr(dist.releases_) == repr(mem.releases_)  # Release holds arrays
    assert str(privacy_report(dist)) == str(privacy_report(mem))


# every full-batch mechanism of the logistic loss; few steps (each step is one pass)
LOGISTIC = [
    ("auto", {}),  # DP damped Newton with subsampled Hessians, warm start and a selection
    ("hong", {"max_iter": 6}),
    ("pur", {"max_iter": 6}),
    ("exponential", {"max_iter": 6}),
    ("output", {"alpha": 0.1}),
    ("uniform", {"row_clip": "auto", "max_iter": 6}),
    ("prior", {}),
]


@pytest.mark.parametrize("schedule,extra", LOGISTIC, ids=[s for s, _ in LOGISTIC])
def test_logistic_on_spark_is_the_in_memory_model(frame, data, schedule, extra):
    sd = SparkData(frame, FEATURES, label="y", row_id="id")
    kw = dict(epsilon=1.0, data_norm=1.0, classes=[0, 1], schedule=schedule, random_state=0)
    mem = DPLogisticRegression(**kw, **extra).fit(data["X"], data["y"])
    dist = DPLogisticRegression(**kw, **extra).fit(sd.X, sd.y)
    _same_model(dist, mem, OUTPUT_TOL if schedule == "output" else TOL)


@pytest.mark.parametrize("schedule", ["auto", "kronecker", "newton"])
def test_multinomial_on_spark_is_the_in_memory_model(frame, data, schedule):
    sd = SparkData(frame, FEATURES, label="y3", row_id="id")
    kw = dict(epsilon=1.0, data_norm=1.0, classes=[0, 1, 2], schedule=schedule, random_state=0)
    mem = DPLogisticRegression(**kw).fit(data["X"], data["y3"])
    dist = DPLogisticRegression(**kw).fit(sd.X, sd.y)
    _same_model(dist, mem)
    if schedule == "kronecker":
        assert mem.hessian_rates_[0] < 1  # a Poisson subsample, selected by row id
    pred = frame.select("id", dist.predict(sd.X).alias("p"), dist.predict_proba(sd.X).alias("q"))
    out = pred.orderBy("id").toPandas()
    np.testing.assert_array_equal(out["p"].to_numpy(), mem.predict(data["X"]))
    np.testing.assert_allclose(np.stack(out["q"]), mem.predict_proba(data["X"]), atol=1e-12)


@pytest.mark.parametrize(
    "schedule,extra",
    [("auto", {}), ("uniform", {"max_iter": 6}), ("ssp", {}), ("output", {"alpha": 0.1})],
)
@pytest.mark.parametrize("relation", ["replace", "add_remove"])
def test_ridge_on_spark_is_the_in_memory_model(frame, data, schedule, extra, relation):
    sd = SparkData(frame, FEATURES, label="target", sample_weight="w")
    kw = dict(epsilon=1.0, data_norm=1.0, y_bound=1.0, schedule=schedule, random_state=0)
    kw.update(neighbouring=relation, **extra)
    mem = DPRidge(**kw).fit(data["X"], data["target"], sample_weight=data["w"])
    dist = DPRidge(**kw).fit(sd.X, sd.y)
    _same_model(dist, mem, OUTPUT_TOL if schedule == "output" else TOL)
    out = frame.select("id", dist.predict(sd.X).alias("p")).orderBy("id").toPandas()
    np.testing.assert_allclose(out["p"], dist.predict(data["X"]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("schedule,extra", [("auto", {}), ("output", {})])
def test_huber_poisson_and_linear_svc_on_spark_are_the_in_memory_models(
    frame, data, schedule, extra
):
    kw = dict(epsilon=1.0, data_norm=1.0, schedule=schedule, random_state=0, **extra)
    cases = [
        (DPHuberRegressor, {"y_bound": 1.0}, "target"),
        (DPPoissonRegressor, {"y_bound": 10.0}, "counts"),
        (DPLinearSVC, {"classes": [0, 1]}, "y"),
        (DPLinearSVC, {"classes": [0, 1, 2]}, "y3"),
    ]
    for cls, params, label in cases:
        sd = SparkData(frame, FEATURES, label=label)
        mem = cls(**params, **kw).fit(data["X"], data[label])
        dist = cls(**params, **kw).fit(sd.X, sd.y)
        _same_model(dist, mem, OUTPUT_TOL if schedule == "output" else TOL)
        out = frame.select("id", dist.predict(sd.X).alias("p")).orderBy("id").toPandas()
        np.testing.assert_allclose(out["p"], dist.predict(data["X"]), rtol=1e-12, atol=1e-12)


def test_the_partitioning_does_not_change_the_model(spark, data):
    # with a row id (the in-memory subsample) and without one (a keyed hash of the row)
    kw = dict(epsilon=1.0, data_norm=1.0, classes=[0, 1, 2], schedule="kronecker", random_state=3)
    fits = {True: [], False: []}
    for parts, seed in [(1, 2), (4, 5)]:
        df = _frame(spark, data, partitions=parts, seed=seed)
        for with_id in (True, False):
            sd = SparkData(df, FEATURES, label="y3", row_id="id" if with_id else None)
            fits[with_id].append(DPLogisticRegression(**kw).fit(sd.X, sd.y))
        df.unpersist()
    for a, b in fits.values():
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=TOL, atol=TOL)
        assert a.hessian_rates_[0] < 1
    mem = DPLogisticRegression(**kw).fit(data["X"], data["y3"])
    np.testing.assert_allclose(fits[True][0].coef_, mem.coef_, rtol=TOL, atol=TOL)
    # the content hash selects another subsample than the row positions: another model
    assert np.max(np.abs(fits[False][0].coef_ - mem.coef_)) > 1e-6


def test_content_hash_subsample_has_the_rate_and_ignores_the_order(data):
    b = {"X": data["X"], "w": np.ones(N)}
    idx = spark_backend.subsample_positions(b, None, seed=11, rate=0.3)
    assert abs(idx.shape[0] / N - 0.3) < 4 * np.sqrt(0.3 * 0.7 / N)
    perm = np.random.default_rng(0).permutation(N)
    shuffled = {"X": data["X"][perm], "w": np.ones(N)}
    again = spark_backend.subsample_positions(shuffled, None, seed=11, rate=0.3)
    np.testing.assert_array_equal(np.sort(perm[again]), idx)
    other = spark_backend.subsample_positions(b, None, seed=12, rate=0.3)
    assert not np.array_equal(idx, other)


def test_no_code_path_collects_rows(spark, data, monkeypatch):
    """Every collect of a fit (and of a prediction's set-up) brings at most TREE_FAN_IN
    results of O(d^2) values to the driver, whatever N: the largest collect is the same size
    at N and at 4 N; no other way of reading rows is used."""
    from pyspark import RDD
    from pyspark.sql import DataFrame

    sizes = []

    def spy(original):
        def collect(self, *a, **k):
            out = original(self, *a, **k)
            sizes.append(len(pickle.dumps([tuple(r) for r in out])))
            assert len(out) <= spark_backend.TREE_FAN_IN
            return out

        return collect

    def refuse(*a, **k):
        raise AssertionError("rows read to the driver")

    monkeypatch.setattr(DataFrame, "collect", spy(DataFrame.collect))
    monkeypatch.setattr(RDD, "collect", spy(RDD.collect))
    for name in ("toPandas", "toLocalIterator", "take", "head", "first", "tail"):
        monkeypatch.setattr(DataFrame, name, refuse)
    monkeypatch.setattr(RDD, "take", refuse)
    import pandas as pd

    largest = []
    rng = np.random.default_rng(1)
    for n in (N, 4 * N):
        X = rng.normal(size=(n, 5)) / 3
        pdf = pd.DataFrame(X, columns=FEATURES)
        pdf["y"] = np.digitize(X[:, 0], [-0.2, 0.2])
        df = spark.createDataFrame(pdf).repartition(9)  # more than TREE_FAN_IN: a tree
        sd = SparkData(df, FEATURES, label="y")
        sizes.clear()
        kw = dict(epsilon=1.0, data_norm=1.0, classes=[0, 1, 2], random_state=0)
        for schedule in ("auto", "kronecker"):
            DPLogisticRegression(schedule=schedule, **kw).fit(sd.X, sd.y)
        largest.append(max(sizes))
    d = 6 * 3  # parameters of the 3-class model
    assert largest[1] <= largest[0] + 256  # the same size at 4 N (a count may take more bytes)
    assert largest[0] < 64 * d * d * 8  # a few pickled d x d sums


def test_spark_bad_input_is_refused_before_any_release(spark, data):
    import pandas as pd

    pdf = pd.DataFrame(data["X"][:50], columns=FEATURES)
    pdf["y"] = data["y"][:50]
    pdf["w"] = 1.0
    bad = pdf.copy()
    bad.loc[3, "x1"] = np.nan
    kw = dict(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0)
    cases = [
        (SparkData(spark.createDataFrame(bad), FEATURES, label="y"), "NaN or infinity"),
        (SparkData(spark.createDataFrame(pdf.assign(w=1.5)), FEATURES, "y", "w"), r"\[0, 1\]"),
        (SparkData(spark.createDataFrame(pdf.assign(y=pdf.y * 5)), FEATURES, "y"), "outside"),
    ]
    for sd, match in cases:
        est = DPLogisticRegression(**kw)
        with pytest.raises(ValueError, match=match):
            est.fit(sd.X, sd.y)
        assert not [k for k in vars(est) if k.endswith("_")]  # a refused fit sets nothing
    sd = SparkData(spark.createDataFrame(pdf), FEATURES, label="y")
    with pytest.raises(ValueError, match="name the weight column"):
        DPLogisticRegression(**kw).fit(sd.X, sd.y, sample_weight=np.ones(50))
    with pytest.raises(TypeError, match="does not take Spark data"):
        DPSGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1]).fit(sd.X, sd.y)
    with pytest.raises(ValueError, match="not in the DataFrame"):
        SparkData(spark.createDataFrame(pdf), ["nope"], label="y")
    fitted = DPLogisticRegression(**kw).fit(sd.X, sd.y)
    fewer = SparkData(spark.createDataFrame(pdf), FEATURES[:3], label="y")
    with pytest.raises(ValueError, match="expecting 5 features"):
        fitted.predict(fewer.X)


def test_vector_column_is_the_named_columns(spark, frame, data):
    from pyspark.ml.feature import VectorAssembler

    vec = VectorAssembler(inputCols=FEATURES, outputCol="features").transform(frame)
    kw = dict(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0)
    a = DPLogisticRegression(**kw).fit(*_xy(SparkData(vec, "features", "y", row_id="id")))
    b = DPLogisticRegression(**kw).fit(*_xy(SparkData(frame, FEATURES, "y", row_id="id")))
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=TOL, atol=TOL)
    sd = SparkData(vec, "features", "y")
    out = vec.select("id", a.decision_function(sd.X).alias("s")).orderBy("id").toPandas()
    np.testing.assert_allclose(out["s"], a.decision_function(data["X"]), atol=1e-12)


def _xy(sd):
    return sd.X, sd.y


def test_bounds_read_from_the_data_warn_and_match_in_memory(frame, data):
    from skdpgd import PrivacyLeakWarning

    sd = SparkData(frame, FEATURES, label="target")
    kw = dict(epsilon=1.0, schedule="ssp", random_state=0)  # data_norm, y_bound read: warned
    with pytest.warns(PrivacyLeakWarning):
        dist = DPRidge(**kw).fit(sd.X, sd.y)
    with pytest.warns(PrivacyLeakWarning):
        mem = DPRidge(**kw).fit(data["X"], data["target"])
    assert dist.data_norm_ == pytest.approx(mem.data_norm_, rel=1e-14)
    assert dist.y_bound_ == pytest.approx(mem.y_bound_, rel=1e-14)
    _same_model(dist, mem)

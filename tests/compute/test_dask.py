"""The full-batch estimators on dask arrays: the in-memory model, the same epsilon.

Runs on a LocalCluster with two process workers (the reductions run in other processes, the
noise is drawn on the driver). Skips without the dask extra.
"""

import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from skdpgd import DPLogisticRegression, DPRidge, DPSGDClassifier  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5)) / 3
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=3000) > 0).astype(int)
    y3 = np.digitize(X[:, 0] + 0.2 * rng.normal(size=3000), [-0.2, 0.2])
    return X, y, y3, da.from_array(X, chunks=(700, 5))


# every mechanism; gradient schedules with few steps (each step is one pass over the chunks)
LOGISTIC = [
    ("auto", {}),
    ("hong", {"max_iter": 15}),
    ("pur", {"max_iter": 15}),
    ("exponential", {"max_iter": 15}),
    ("output", {"alpha": 0.1}),
    ("newton", {}),
    ("uniform", {"row_clip": "auto", "max_iter": 15}),
]


@pytest.mark.parametrize("schedule,extra", LOGISTIC)
def test_logistic_on_dask_is_the_in_memory_model(client, data, schedule, extra):
    X, y, y3, Xd = data
    for labels, classes in [(y, [0, 1]), (y3, [0, 1, 2])]:
        kw = dict(
            epsilon=1.0, data_norm=1.0, classes=classes, schedule=schedule, random_state=0, **extra
        )
        mem = DPLogisticRegression(**kw).fit(X, labels)
        dist = DPLogisticRegression(**kw).fit(Xd, da.from_array(labels, chunks=700))
        np.testing.assert_allclose(dist.coef_, mem.coef_, rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(dist.intercept_, mem.intercept_, rtol=1e-8, atol=1e-8)
        assert dist.epsilon_ == pytest.approx(mem.epsilon_, rel=1e-12)
        assert dist.n_iter_ == mem.n_iter_
        pred = dist.predict(Xd)
        assert isinstance(pred, da.Array)  # lazy
        np.testing.assert_array_equal(pred.compute(), mem.predict(X))
        proba = dist.predict_proba(Xd)
        assert isinstance(proba, da.Array)
        np.testing.assert_allclose(proba.compute(), mem.predict_proba(X), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize(
    "schedule,extra", [("uniform", {"max_iter": 15}), ("ssp", {}), ("output", {"alpha": 0.1})]
)
@pytest.mark.parametrize("relation", ["replace", "add_remove"])
def test_ridge_on_dask_is_the_in_memory_model(client, data, schedule, extra, relation):
    X, _, _, Xd = data
    kw = dict(
        epsilon=1.0,
        data_norm=1.0,
        y_bound=1.0,
        schedule=schedule,
        random_state=0,
        neighbouring=relation,
        **extra,
    )
    target = X[:, 0] - 0.5 * X[:, 2]
    mem = DPRidge(**kw).fit(X, target)
    dist = DPRidge(**kw).fit(Xd, da.from_array(target, chunks=700))
    np.testing.assert_allclose(dist.coef_, mem.coef_, rtol=1e-8, atol=1e-8)
    assert dist.intercept_ == pytest.approx(mem.intercept_, abs=1e-8)
    assert dist.epsilon_ == pytest.approx(mem.epsilon_, rel=1e-12)
    assert isinstance(dist.predict(Xd), da.Array)


def test_dataframe_input_bad_input_and_dp_sgd_refusal(client, data):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, _, Xd = data
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcde")), npartitions=4)
    kw = dict(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0)
    fit = DPLogisticRegression(**kw).fit(frame, y)
    np.testing.assert_allclose(
        fit.coef_, DPLogisticRegression(**kw).fit(X, y).coef_, rtol=1e-8, atol=1e-8
    )
    bad = Xd.copy()
    bad[0, 0] = np.nan
    est = DPLogisticRegression(**kw)
    with pytest.raises(ValueError, match="NaN or infinity"):
        est.fit(bad, y)
    assert not [k for k in vars(est) if k.endswith("_")]
    with pytest.raises(ValueError, match="outside classes"):
        DPLogisticRegression(**{**kw, "classes": [0, 5]}).fit(Xd, y)
    with pytest.raises(TypeError, match="full-batch estimators"):
        DPSGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1]).fit(Xd, y)


# the class list is checked once (skdpgd._core.data.resolve_classes) for in-memory and dask labels:
# each bad input gets the same error, whichever kind of y it comes in
BAD_CLASSES = [
    ("2-D classes", {"classes": [[0, 1], [2, 3]]}, None),
    ("one class listed", {"classes": [1]}, None),
    ("labels outside classes", {"classes": [0, 5]}, None),
    ("incomparable types", {"classes": ["a", "b"]}, None),
    ("one class in y", {"classes": None}, "single"),
    ("continuous labels", {"classes": None}, "continuous"),
]


@pytest.mark.parametrize("name,params,labels", BAD_CLASSES, ids=[c[0] for c in BAD_CLASSES])
def test_dask_labels_get_the_in_memory_errors(data, name, params, labels):
    X, y, _, Xd = data
    if labels == "single":
        y = np.zeros_like(y)
    elif labels == "continuous":
        y = X[:, 0].copy()
    kw = dict(epsilon=1.0, data_norm=1.0, random_state=0, **params)
    errors = []
    for Xin, yin in [(X, y), (Xd, da.from_array(y, chunks=700))]:
        est = DPLogisticRegression(**kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError) as info:
                est.fit(Xin, yin)
        assert not [k for k in vars(est) if k.endswith("_")]  # a refused fit sets nothing
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_dask_class_weight_is_refused_before_any_pass(data):
    X, y, _, Xd = data
    est = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], class_weight="balanced")
    with pytest.raises(ValueError, match="class_weight is not supported for dask"):
        est.fit(Xd, y)
    assert not [k for k in vars(est) if k.endswith("_")]


@pytest.mark.parametrize(
    "schedule,extra", [("auto", {}), ("uniform", {"max_iter": 15}), ("output", {})]
)
def test_huber_poisson_and_linear_svc_on_dask_are_the_in_memory_models(
    client, data, schedule, extra
):
    from skdpgd import DPHuberRegressor, DPLinearSVC, DPPoissonRegressor

    X, y, y3, Xd = data
    target = X[:, 0] - 0.5 * X[:, 2]
    counts = np.floor(np.exp(X[:, 0] + 1.0))
    kw = dict(epsilon=1.0, data_norm=1.0, schedule=schedule, random_state=0, **extra)
    for mem, dist, labels in [
        (DPHuberRegressor(y_bound=1.0, **kw), DPHuberRegressor(y_bound=1.0, **kw), target),
        (DPPoissonRegressor(y_bound=10.0, **kw), DPPoissonRegressor(y_bound=10.0, **kw), counts),
        (DPLinearSVC(classes=[0, 1], **kw), DPLinearSVC(classes=[0, 1], **kw), y),
        # three classes: one-vs-rest, one release of the 3 x P gradient per step
        (DPLinearSVC(classes=[0, 1, 2], **kw), DPLinearSVC(classes=[0, 1, 2], **kw), y3),
    ]:
        mem.fit(X, labels)
        dist.fit(Xd, da.from_array(labels, chunks=700))
        # output perturbation: the exact solver's path follows the sums' rounding (chunked
        # on dask), so the two minimisers agree to its tolerance, not to the last bits
        tol = 1e-6 if schedule == "output" else 1e-8
        np.testing.assert_allclose(dist.coef_, mem.coef_, rtol=tol, atol=tol)
        np.testing.assert_allclose(dist.intercept_, mem.intercept_, rtol=tol, atol=tol)
        assert dist.epsilon_ == pytest.approx(mem.epsilon_, rel=1e-12)
        pred = dist.predict(Xd)
        assert isinstance(pred, da.Array)  # lazy
        np.testing.assert_allclose(pred.compute(), mem.predict(X), rtol=1e-7, atol=1e-9)

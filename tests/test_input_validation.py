"""One input-handling matrix over every public estimator.

Each case is either a clear ValueError/TypeError whose message names the problem, or a correct
fit; never a numba traceback, a crash or a NaN model. Inputs are never modified.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import skdpgd

pd = pytest.importorskip("pandas")

ESTIMATORS = {
    "DPLogisticRegression": dict(),
    "DPRidge": dict(y_bound=2.0),
    "DPSGDClassifier": dict(),
    "DPSGDRegressor": dict(y_bound=2.0),
}
if getattr(skdpgd, "DPMLPClassifier", None) is not None:
    try:
        import torch  # noqa: F401

        ESTIMATORS["DPMLPClassifier"] = dict(hidden_layer_sizes=(4,), max_iter=5)
    except ImportError:
        pass

CLASSIFIERS = {"DPLogisticRegression", "DPSGDClassifier", "DPMLPClassifier"}
SPARSE_OK = {"DPSGDClassifier", "DPSGDRegressor"}


def make(name, **params):
    kw = dict(epsilon=1.0, random_state=0, **ESTIMATORS[name])
    if name != "DPMLPClassifier":  # the net clips gradients, it has no row bound
        kw["data_norm"] = 3.0
    kw.update(params)
    return getattr(skdpgd, name)(**kw)


def data(name, n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] > 0).astype(int) if name in CLASSIFIERS else X[:, 0] - X[:, 1]
    return X, y


def check_fitted_ok(est, X):
    pred = est.predict(X)
    assert np.all(np.isfinite(np.asarray(pred, dtype=float) if pred.dtype.kind in "fiu"
                              else np.zeros(1)))
    coefs = est.coefs_ if hasattr(est, "coefs_") else [est.coef_]
    for c in coefs:
        assert np.all(np.isfinite(c)), "NaN or infinite model"


def _bad_X(kind, X):
    if kind == "nan":
        X = X.copy()
        X[3, 1] = np.nan
    elif kind == "inf":
        X = X.copy()
        X[3, 1] = np.inf
    elif kind == "object":
        X = X.astype(object)
        X[0, 0] = "a"
    elif kind == "string":
        X = X.astype(str)
        X[0, 0] = "x"
    elif kind == "3d":
        X = X.reshape(X.shape[0], X.shape[1], 1)
    return X


X_ERRORS = {
    "nan": (ValueError, "NaN"),
    "inf": (ValueError, "infinity|inf"),
    "object": (ValueError, "could not convert|float"),
    "string": (ValueError, "could not convert|float"),
    "3d": (ValueError, "2D|dim"),
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("kind", sorted(X_ERRORS))
def test_bad_X_is_a_clear_error(name, kind):
    X, y = data(name)
    Xb = _bad_X(kind, X)
    before = Xb.copy()
    exc, msg = X_ERRORS[kind]
    with pytest.raises(exc, match=msg):
        make(name).fit(Xb, y)
    if Xb.dtype.kind == "f":
        np.testing.assert_array_equal(Xb, before)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_shapes_and_sizes(name):
    X, y = data(name)
    with pytest.raises(ValueError, match="inconsistent numbers of samples|samples"):
        make(name).fit(X, y[:-1])
    with pytest.raises(ValueError, match="0 sample|empty|minimum"):
        make(name).fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="0 feature|minimum"):
        make(name).fit(X[:, :0], y)
    # one row: a classifier has one class (refused); a regressor fits
    if name in CLASSIFIERS:
        with pytest.raises(ValueError, match="one class|1 class|2 classes"):
            make(name).fit(X[:1], y[:1])
    else:
        check_fitted_ok(make(name).fit(X[:1], y[:1]), X)
    # predicting with the wrong number of features
    est = make(name).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])


@pytest.mark.parametrize("name", sorted(CLASSIFIERS & set(ESTIMATORS)))
def test_classifier_labels(name):
    X, y = data(name)
    with pytest.raises(ValueError, match="one class"):
        make(name).fit(X, np.zeros_like(y))
    labels = np.where(y == 1, "spam", "ham")
    est = make(name).fit(X, labels)
    assert set(est.predict(X)) <= {"spam", "ham"}
    np.testing.assert_array_equal(est.classes_, ["ham", "spam"])
    with pytest.raises(ValueError, match="Unknown label type|continuous"):
        make(name).fit(X, X[:, 0])


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_dataframe_with_feature_names(name):
    X, y = data(name)
    df = pd.DataFrame(X, columns=["age", "income", "score"])
    before = df.copy()
    est = make(name).fit(df, y)
    np.testing.assert_array_equal(est.feature_names_in_, ["age", "income", "score"])
    check_fitted_ok(est, df)
    pd.testing.assert_frame_equal(df, before)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_sparse_input(name):
    X, y = data(name)
    Xs = sp.csr_matrix(X)
    if name in SPARSE_OK:
        check_fitted_ok(make(name).fit(Xs, y), Xs)
    else:
        with pytest.raises(TypeError, match="[Ss]parse"):
            make(name).fit(Xs, y)


BAD_PARAMS = [
    ({"epsilon": 0.0}, "epsilon"),
    ({"epsilon": -1.0}, "epsilon"),
    ({"epsilon": np.nan}, "epsilon"),
    ({"delta": 0.0}, "delta"),
    ({"delta": 1.0}, "delta"),
    ({"delta": 1.5}, "delta"),
]


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("params,word", BAD_PARAMS)
def test_bad_privacy_parameters(name, params, word):
    X, y = data(name)
    with pytest.raises(ValueError, match=word):
        make(name, **params).fit(X, y)


@pytest.mark.parametrize("name", sorted(set(ESTIMATORS) - {"DPMLPClassifier"}))
def test_bad_data_norm(name):
    X, y = data(name)
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match="data_norm"):
            make(name, data_norm=bad).fit(X, y)


@pytest.mark.parametrize("name", sorted(set(ESTIMATORS) - {"DPMLPClassifier"}))
def test_sample_weights_outside_zero_one(name):
    X, y = data(name)
    for w in (np.full(len(y), 2.0), np.r_[-0.5, np.ones(len(y) - 1)], np.full(len(y), np.nan)):
        with pytest.raises(ValueError, match=r"sample_weight"):
            make(name).fit(X, y, sample_weight=w)
    w = np.linspace(0.1, 1.0, len(y))
    before = w.copy()
    check_fitted_ok(make(name).fit(X, y, sample_weight=w), X)
    np.testing.assert_array_equal(w, before)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_extreme_values_do_not_give_nan_models(name):
    X, y = data(name)
    X = X.copy()
    X[:5] *= 1e300  # rows whose squared norm overflows
    before = X.copy()
    if name == "DPMLPClassifier":  # trained in float32: a clear error instead
        with pytest.raises(ValueError, match="float32"):
            make(name).fit(X, y)
        return
    est = make(name).fit(X, y)
    check_fitted_ok(est, X[5:])
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_inputs_are_not_modified(name):
    X, y = data(name)
    X = np.asfortranarray(X)
    Xc, yc = X.copy(), y.copy()
    make(name).fit(X, y)
    np.testing.assert_array_equal(X, Xc)
    np.testing.assert_array_equal(y, yc)

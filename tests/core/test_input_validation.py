"""One input-handling matrix: every public estimator x every kind of bad (or awkward) input.

Each case is either a clear ValueError/TypeError whose message names the problem (``match=``),
or a correct fit (finite model, finite predictions); never a numba traceback, a crash or a NaN
model. Every case also checks that the inputs (X, y, sample_weight) are not modified.

The estimator list is built from what ``skdpgd`` exports, so estimators added later join the
matrix; a case that does not apply to an estimator (sample weights for a ``fit`` without
``sample_weight``, labels for a regressor, ...) is left out of the matrix, not skipped.
"""

import copy
import importlib.util
import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import is_classifier

import skdpgd

pd = pytest.importorskip("pandas")

# extra constructor parameters per estimator (kept small so every fit is fast)
_EXTRA = {
    "DPLogisticRegression": dict(),
    "DPRidge": dict(y_bound=2.0),
    "DPElasticNet": dict(y_bound=2.0),
    "DPHuberRegressor": dict(),
    "DPPoissonRegressor": dict(y_bound=2.0),
    "DPTweedieRegressor": dict(y_bound=2.0),
    "DPLinearSVC": dict(),
    "DPSGDClassifier": dict(),
    "DPSGDRegressor": dict(y_bound=2.0),
    "DPMLPClassifier": dict(hidden_layer_sizes=(4,), max_iter=5),
}


def _available():
    names = []
    for name in _EXTRA:
        cls = getattr(skdpgd, name, None)
        if cls is None:
            continue
        if name == "DPMLPClassifier" and importlib.util.find_spec("torch") is None:
            continue
        names.append(name)
    return names


ESTIMATORS = _available()


def _cls(name):
    return getattr(skdpgd, name)


def _has_param(name, param):
    return param in _cls(name)().get_params()


def _accepts_sample_weight(name):
    return "sample_weight" in inspect.signature(_cls(name).fit).parameters


def _is_classifier(name):
    return is_classifier(_cls(name)())


def _supports_sparse(name):
    return bool(_cls(name)().__sklearn_tags__().input_tags.sparse)


def make(name, **params):
    kw = dict(epsilon=1.0, random_state=0, **_EXTRA[name])
    if _has_param(name, "data_norm"):
        kw["data_norm"] = 3.0
    kw.update(params)
    return _cls(name)(**kw)


def data(name, n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] > 0).astype(int) if _is_classifier(name) else X[:, 0] - X[:, 1]
    return X, y


# --------------------------------------------------------------------------------------------
# cases: each takes the estimator name and returns a dict
#   X, y, params (constructor), fit (extra fit kwargs), and either
#   raises=(exception types, regex) or check=callable(est, X) for a successful fit
# --------------------------------------------------------------------------------------------


def _with(X, i, j, v, dtype=None):
    X = X.astype(dtype) if dtype is not None else X.copy()
    X[i, j] = v
    return X


def _x_case(transform, raises):
    def case(name):
        X, y = data(name)
        return dict(X=transform(X), y=y, raises=raises)

    return case


def _param_case(params, word):
    def case(name):
        X, y = data(name)
        return dict(X=X, y=y, params=params, raises=(ValueError, word))

    return case


def _weights_case(make_w, ok=False):
    def case(name):
        X, y = data(name)
        out = dict(X=X, y=y, fit=dict(sample_weight=make_w(len(y))))
        if not ok:
            out["raises"] = (ValueError, "sample_weight")
        return out

    return case


def _readonly(X):
    X = X.copy()
    X.setflags(write=False)
    return X


def _noncontiguous(X):
    wide = np.repeat(X, 2, axis=1)
    return wide[:, ::2]


def case_one_row(name):
    X, y = data(name)
    if _is_classifier(name):  # one row has one class
        return dict(X=X[:1], y=y[:1], raises=(ValueError, "one class|1 class|2 classes"))
    return dict(X=X[:1], y=y[:1])


def case_single_class(name):
    X, y = data(name)
    return dict(X=X, y=np.zeros_like(y), raises=(ValueError, "one class"))


def case_string_labels(name):
    X, y = data(name)

    def check(est, X):
        np.testing.assert_array_equal(est.classes_, ["ham", "spam"])
        assert set(est.predict(X)) <= {"ham", "spam"}

    return dict(X=X, y=np.where(y == 1, "spam", "ham"), check=check)


def case_continuous_labels(name):
    X, y = data(name)
    return dict(X=X, y=X[:, 0], raises=(ValueError, "Unknown label type|continuous"))


def case_y_nan(name):
    X, y = data(name)
    y = y.astype(float)
    y[2] = np.nan
    return dict(X=X, y=y, raises=(ValueError, "NaN"))


def case_y_column_vector(name):
    X, y = data(name)
    return dict(X=X, y=y.reshape(-1, 1))


def case_dataframe(name):
    X, y = data(name)
    df = pd.DataFrame(X, columns=["age", "income", "score"])

    def check(est, X):
        np.testing.assert_array_equal(est.feature_names_in_, ["age", "income", "score"])
        assert est.n_features_in_ == 3

    return dict(X=df, y=y, check=check)


def case_sparse(name):
    X, y = data(name)
    Xs = sp.csr_matrix(X)
    if _supports_sparse(name):
        return dict(X=Xs, y=y)
    return dict(X=Xs, y=y, raises=(TypeError, "[Ss]parse"))


def case_extreme_values_with_data_norm(name):
    X, y = data(name)
    X = X.copy()
    X[:5] *= 1e300  # rows whose squared norm overflows
    if not _has_param(name, "data_norm"):  # trained in float32: a clear error instead
        return dict(X=X, y=y, raises=(ValueError, "float32"))
    return dict(X=X, y=y)


def case_extreme_values_without_data_norm(name):
    X, y = data(name)
    X = X.copy()
    X[:5] *= 1e300
    return dict(X=X, y=y, params=dict(data_norm=None), raises=(ValueError, "data_norm"))


def case_wrong_sample_weight_length(name):
    X, y = data(name)
    return dict(
        X=X,
        y=y,
        fit=dict(sample_weight=np.ones(len(y) - 1)),
        raises=(ValueError, "sample_weight|inconsistent|samples"),
    )


ALL = lambda name: True  # noqa: E731
CLF = _is_classifier
REG = lambda name: not _is_classifier(name)  # noqa: E731
DATA_NORM = lambda name: _has_param(name, "data_norm")  # noqa: E731
WEIGHTS = _accepts_sample_weight

CASES = {
    # X
    "X-nan": (ALL, _x_case(lambda X: _with(X, 3, 1, np.nan), (ValueError, "NaN"))),
    "X-inf": (ALL, _x_case(lambda X: _with(X, 3, 1, np.inf), (ValueError, "infinity|inf"))),
    "X-object-dtype": (
        ALL,
        _x_case(lambda X: _with(X, 0, 0, "a", object), (ValueError, "could not convert|float")),
    ),
    "X-string-dtype": (
        ALL,
        _x_case(lambda X: _with(X, 0, 0, "x", str), (ValueError, "could not convert|float")),
    ),
    "X-3d": (ALL, _x_case(lambda X: X.reshape(X.shape[0], X.shape[1], 1), (ValueError, "2D|dim"))),
    "X-1d": (ALL, _x_case(lambda X: X[:, 0], (ValueError, "2D array"))),
    "X-zero-features": (ALL, _x_case(lambda X: X[:, :0], (ValueError, "0 feature|minimum"))),
    "X-float32": (ALL, _x_case(lambda X: X.astype(np.float32), None)),
    "X-int": (ALL, _x_case(lambda X: np.round(3 * X).astype(np.int64), None)),
    "X-list": (ALL, _x_case(lambda X: X.tolist(), None)),
    "X-fortran-order": (ALL, _x_case(np.asfortranarray, None)),
    "X-non-contiguous": (ALL, _x_case(_noncontiguous, None)),
    "X-read-only": (ALL, _x_case(_readonly, None)),
    "X-dataframe": (ALL, case_dataframe),
    "X-sparse": (ALL, case_sparse),
    "X-extreme-values-with-data-norm": (ALL, case_extreme_values_with_data_norm),
    "X-extreme-values-without-data-norm": (DATA_NORM, case_extreme_values_without_data_norm),
    # sizes
    "mismatched-lengths": (
        ALL,
        lambda n: dict(
            X=data(n)[0],
            y=data(n)[1][:-1],
            raises=(ValueError, "inconsistent numbers of samples|samples"),
        ),
    ),
    "empty": (
        ALL,
        lambda n: dict(
            X=data(n)[0][:0], y=data(n)[1][:0], raises=(ValueError, "0 sample|empty|minimum")
        ),
    ),
    "one-row": (ALL, case_one_row),
    # y
    "y-single-class": (CLF, case_single_class),
    "y-string-labels": (CLF, case_string_labels),
    "y-continuous-for-classifier": (CLF, case_continuous_labels),
    "y-nan": (REG, case_y_nan),
    "y-column-vector": (ALL, case_y_column_vector),
    # privacy parameters
    "epsilon-zero": (ALL, _param_case(dict(epsilon=0.0), "epsilon")),
    "epsilon-negative": (ALL, _param_case(dict(epsilon=-1.0), "epsilon")),
    "epsilon-nan": (ALL, _param_case(dict(epsilon=np.nan), "epsilon")),
    "delta-zero": (ALL, _param_case(dict(delta=0.0), "delta")),
    "delta-one": (ALL, _param_case(dict(delta=1.0), "delta")),
    "delta-above-one": (ALL, _param_case(dict(delta=1.5), "delta")),
    "delta-negative": (ALL, _param_case(dict(delta=-1e-5), "delta")),
    "delta-nan": (ALL, _param_case(dict(delta=np.nan), "delta")),
    "data_norm-zero": (DATA_NORM, _param_case(dict(data_norm=0.0), "data_norm")),
    "data_norm-negative": (DATA_NORM, _param_case(dict(data_norm=-1.0), "data_norm")),
    "data_norm-nan": (DATA_NORM, _param_case(dict(data_norm=np.nan), "data_norm")),
    "data_norm-inf": (DATA_NORM, _param_case(dict(data_norm=np.inf), "data_norm")),
    # sample weights
    "sample_weight-above-one": (WEIGHTS, _weights_case(lambda n: np.full(n, 2.0))),
    "sample_weight-negative": (WEIGHTS, _weights_case(lambda n: np.r_[-0.5, np.ones(n - 1)])),
    "sample_weight-nan": (WEIGHTS, _weights_case(lambda n: np.full(n, np.nan))),
    "sample_weight-wrong-length": (WEIGHTS, case_wrong_sample_weight_length),
    "sample_weight-valid": (WEIGHTS, _weights_case(lambda n: np.linspace(0.1, 1.0, n), ok=True)),
}

MATRIX = [
    pytest.param(est, case, id=f"{est}-{case}")
    for est in ESTIMATORS
    for case, (applies, _) in CASES.items()
    if applies(est)
]


def _snapshot(obj):
    if obj is None:
        return None
    if sp.issparse(obj):
        return obj.copy()
    return copy.deepcopy(obj)


def _assert_same(before, after):
    if before is None:
        assert after is None
    elif sp.issparse(before):
        assert (before != after).nnz == 0
        assert before.dtype == after.dtype
    elif isinstance(before, pd.DataFrame):
        pd.testing.assert_frame_equal(after, before)
    elif isinstance(before, list):
        assert after == before
    else:
        after = np.asarray(after)
        assert after.dtype == before.dtype and after.shape == before.shape
        np.testing.assert_array_equal(after, before)


def _assert_fitted_ok(est, X):
    coefs = est.coefs_ if hasattr(est, "coefs_") else [est.coef_]
    for c in coefs:
        assert np.all(np.isfinite(c)), "NaN or infinite model"
    if hasattr(est, "intercept_"):
        assert np.all(np.isfinite(est.intercept_)), "NaN or infinite intercept"
    Xp = X
    if isinstance(X, np.ndarray) and X.dtype.kind == "f":
        Xp = np.where(np.abs(X) > 1e200, 0.0, X)  # predictions on the extreme rows overflow
    pred = np.asarray(est.predict(Xp))
    if pred.dtype.kind in "fiu":
        assert np.all(np.isfinite(pred))


@pytest.mark.parametrize("name,case", MATRIX)
def test_input_handling(name, case):
    spec = CASES[case][1](name)
    X, y = spec["X"], spec["y"]
    fit_kw = spec.get("fit", {})
    est = make(name, **spec.get("params", {}))
    before = [_snapshot(X), _snapshot(y)] + [_snapshot(v) for v in fit_kw.values()]
    raises = spec.get("raises")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PrivacyLeakWarning, DataConversionWarning
        if raises is not None:
            exc, pattern = raises
            with pytest.raises(exc, match=pattern):
                est.fit(X, y, **fit_kw)
        else:
            est.fit(X, y, **fit_kw)
            _assert_fitted_ok(est, X)
            if "check" in spec:
                spec["check"](est, X)
    after = [X, y] + list(fit_kw.values())
    for b, a in zip(before, after):
        _assert_same(b, a)


def test_matrix_covers_every_exported_estimator():
    exported = {
        n
        for n in getattr(skdpgd, "__all__", dir(skdpgd))
        if n.startswith("DP") and isinstance(getattr(skdpgd, n, None), type)
    }
    missing = exported - set(_EXTRA)
    assert not missing, f"add {sorted(missing)} to the input-validation matrix"


@pytest.mark.parametrize("name", ESTIMATORS)
def test_predict_with_wrong_number_of_features(name):
    X, y = data(name)
    est = make(name).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])


def test_an_empty_frame_gets_a_clear_error_from_a_private_pipeline():
    import pandas as pd

    from skdpgd import DPLogisticRegression
    from skdpgd.pipeline import make_private_pipeline
    from skdpgd.preprocessing import schema_transformer

    df = pd.DataFrame({"a": pd.Series([], dtype=float), "b": pd.Series([], dtype=object)})
    pipe = make_private_pipeline(
        schema_transformer({"a": (0, 1), "b": ["x", "y"]}),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=1.0,
    )
    with pytest.raises(ValueError, match="0 sample"):
        pipe.fit(df, np.array([], dtype=int))
    assert not hasattr(pipe, "epsilon_")


def test_a_tiny_epsilon_refusal_names_an_epsilon_that_works():
    """At epsilon = 1e-6 on 60 rows DP-SGD's set-up releases (the noisy row count, the class
    counts) spend the whole budget at the delta the noisy count sets; the refusal names the
    smallest epsilon with room at that delta, and that epsilon fits."""
    import re

    from skdpgd import DPSGDClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    est = DPSGDClassifier(epsilon=1e-6, data_norm=1.0, classes=[0, 1], random_state=0)
    with pytest.raises(ValueError, match="epsilon of at least") as info:
        est.fit(X, y)
    assert "n_samples" in str(info.value) and "explicit delta" in str(info.value)
    assert not hasattr(est, "coef_")
    need = float(re.search(r"at least ([0-9.e+-]+)", str(info.value)).group(1))
    fitted = DPSGDClassifier(
        epsilon=1.01 * need, data_norm=1.0, classes=[0, 1], random_state=0
    ).fit(X, y)
    assert fitted.epsilon_ <= 1.01 * need

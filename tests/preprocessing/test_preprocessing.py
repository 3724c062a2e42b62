"""skdpgd.preprocessing: public-bound and DP transformers."""

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer, OneHotEncoder

from skdpgd import BudgetExceededError, PrivacyBudget
from skdpgd.accounting import gdp_epsilon, sum_rounding_margin
from skdpgd.policy import STD_FLOOR
from skdpgd.preprocessing import BoundedScaler, DPStandardScaler, output_bound, schema_transformer


def _mixed_frame(n=400, seed=0):
    """Mixed dtypes, missing values, out-of-range numbers, unseen levels."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.uniform(-50, 250, n),  # public range (18, 100)
            "income": rng.lognormal(10, 2, n),  # public range (0, 200_000)
            "hours": pd.array(rng.integers(0, 120, n), dtype="Int64"),  # nullable integer
            "job": rng.choice(
                ["clerk", "nurse", "pilot", "astronaut", None], n
            ),  # 'astronaut' unseen
            "grade": rng.choice([1, 2, 3, 9], n).astype(float),  # numeric levels; 9 unseen
            "region": pd.Categorical(rng.choice(["N", "S", "E"], n)),
        }
    )
    df.loc[::7, "age"] = np.nan
    df.loc[::11, "income"] = np.inf
    df.loc[::13, "hours"] = pd.NA
    df.loc[::5, "grade"] = np.nan
    df.loc[::9, "region"] = np.nan
    return df


SCHEMA = {
    "age": (18, 100),
    "income": (0, 200_000),
    "hours": (0, 80),
    "job": ["clerk", "nurse", "pilot"],
    "grade": [1, 2, 3],
    "region": ["N", "S", "E", "W"],
}


# ------------------------------------------------------------------------------------------
# BoundedScaler
# ------------------------------------------------------------------------------------------


def test_bounded_scaler_maps_and_clips():
    X = np.array([[0.0, 5.0], [100.0, -1.0], [50.0, np.inf], [-np.inf, 10.0]])
    out = BoundedScaler(bounds=[(0, 100), (0, 10)]).fit_transform(X)
    np.testing.assert_allclose(out, [[-1, 0], [1, -1], [0, 1], [-1, 1]])
    inv = BoundedScaler(bounds=[(0, 100), (0, 10)]).fit(X).inverse_transform(out)
    np.testing.assert_allclose(inv, [[0, 5], [100, 0], [50, 10], [0, 10]])


def test_bounded_scaler_fit_reads_only_the_shape():
    a = BoundedScaler(bounds=(0, 1)).fit(np.zeros((3, 4)))
    b = BoundedScaler(bounds=(0, 1)).fit(np.random.default_rng(0).normal(size=(500, 4)) * 1e9)
    assert set(vars(a)) == set(vars(b))
    for key, value in vars(a).items():
        np.testing.assert_array_equal(value, vars(b)[key])
    assert a.output_bound_ == 2.0


def test_bounded_scaler_missing_values():
    X = np.array([[np.nan, 1.0]])
    np.testing.assert_array_equal(BoundedScaler(bounds=(0, 2)).fit_transform(X), [[0.0, 0.0]])
    np.testing.assert_array_equal(
        BoundedScaler(bounds=(0, 2), missing_value=-1.0).fit_transform(X), [[-1.0, 0.0]]
    )
    with pytest.raises(ValueError, match="missing value"):
        BoundedScaler(bounds=(0, 2), missing_value=None).fit_transform(X)


def test_bounded_scaler_dict_bounds_and_pandas_output():
    df = pd.DataFrame({"a": [0.0, 10.0, 20.0], "b": [1, 2, 3]})
    sc = BoundedScaler(bounds={"b": (1, 3), "a": (0, 20), "unused": (0, 1)})
    sc.set_output(transform="pandas")
    out = sc.fit_transform(df)
    assert list(out.columns) == ["a", "b"]
    np.testing.assert_allclose(out.to_numpy(), [[-1, -1], [0, 0], [1, 1]])
    assert list(sc.get_feature_names_out()) == ["a", "b"]
    with pytest.raises(ValueError, match="no public bounds for column"):
        BoundedScaler(bounds={"a": (0, 1)}).fit(df)
    with pytest.raises(ValueError, match="no column names"):
        BoundedScaler(bounds={"a": (0, 1)}).fit(df.to_numpy())


@pytest.mark.parametrize("bounds", [None, [(0, 1)], [(1, 0), (0, 1)], [(0, np.inf), (0, 1)]])
def test_bounded_scaler_bad_bounds(bounds):
    with pytest.raises(ValueError):
        BoundedScaler(bounds=bounds).fit(np.zeros((2, 2)))


# ------------------------------------------------------------------------------------------
# DPStandardScaler
# ------------------------------------------------------------------------------------------


def _worst_pair(d, n=50):
    """Two datasets differing in one row: that row at the bottom vs the top of every range."""
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 10, size=(n, d))
    X2 = X.copy()
    X[0], X2[0] = 0.0, 10.0
    return X, X2


def test_dp_standard_scaler_sensitivities_hold():
    """Noiseless fits (epsilon=inf) expose the exact sums: two neighbours move them by no more
    than the sensitivities written in the code (attained by the worst pair)."""
    d = 3
    X, X2 = _worst_pair(d)
    a = DPStandardScaler(epsilon=np.inf, bounds=(0, 10)).fit(X)
    b = DPStandardScaler(epsilon=np.inf, bounds=(0, 10)).fit(X2)
    n = X.shape[0]
    ds1 = np.linalg.norm(n * (a.unit_mean_ - b.unit_mean_))
    second_a = a.unit_mean_**2 + a.unit_scale_**2  # scale floor not hit on this data
    second_b = b.unit_mean_**2 + b.unit_scale_**2
    ds2 = np.linalg.norm(n * (second_a - second_b))
    sums, squares = [r for r in a.releases_ if "column" in r.name]
    margin = 1 + sum_rounding_margin(n, d)
    assert sums.sensitivity["replace"] == pytest.approx(2 * math.sqrt(d) * margin)
    assert sums.sensitivity["add_remove"] == pytest.approx(math.sqrt(d) * margin)
    assert squares.sensitivity["replace"] == pytest.approx(math.sqrt(d) * margin)
    assert ds1 == pytest.approx(2 * math.sqrt(d))  # the bound is attained
    assert ds1 <= sums.sensitivity["replace"]
    assert ds2 <= squares.sensitivity["replace"]
    # a row 0 -> midpoint moves each square by exactly 1: the squares' bound is attained too
    X3 = X.copy()
    X3[0] = 5.0
    c = DPStandardScaler(epsilon=np.inf, bounds=(0, 10)).fit(X3)
    ds2b = np.linalg.norm(n * (second_a - (c.unit_mean_**2 + c.unit_scale_**2)))
    assert ds2b == pytest.approx(math.sqrt(d))


def test_dp_standard_scaler_accounting_is_exact():
    X = np.random.default_rng(0).uniform(0, 10, size=(3000, 4))
    sc = DPStandardScaler(epsilon=0.7, delta=1e-6, bounds=(0, 10), random_state=0).fit(X)
    mu = math.sqrt(sum(float(np.sum(r.multipliers**-2.0)) for r in sc.releases_))
    assert sc.mu_ == pytest.approx(mu, rel=1e-12)
    assert sc.epsilon_ == pytest.approx(gdp_epsilon(1e-6, mu), rel=1e-9)
    assert sc.epsilon_ <= 0.7 and sc.epsilon_ == pytest.approx(0.7, rel=1e-6)
    assert sc.neighbouring_ == "replace-one"
    ar = DPStandardScaler(
        epsilon=0.7, delta=1e-6, bounds=(0, 10), neighbouring="add_remove", random_state=0
    ).fit(X)
    assert [r.name for r in ar.releases_][0] == "row count"
    assert ar.epsilon_ <= 0.7


def test_dp_standard_scaler_estimates_and_output_bound():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(3, 1, 20000), rng.normal(7, 0.5, 20000)])
    sc = DPStandardScaler(epsilon=2.0, bounds=(0, 10), random_state=0).fit(X)
    np.testing.assert_allclose(sc.mean_, [3, 7], atol=0.05)
    np.testing.assert_allclose(sc.scale_, [1, 0.5], rtol=0.05)
    out = sc.transform(np.vstack([X, [[-1e9, 1e9]]]))
    assert np.abs(out).max() <= sc.clip_std
    assert np.linalg.norm(out, axis=1).max() <= sc.output_bound_
    assert sc.output_bound_ == pytest.approx(3 * math.sqrt(2))


def test_dp_standard_scaler_tiny_epsilon_keeps_the_bound():
    X = np.random.default_rng(0).uniform(0, 1, size=(20, 3))
    sc = DPStandardScaler(epsilon=1e-3, bounds=(0, 1), clip_std=2.0, random_state=0).fit(X)
    assert np.all(sc.unit_scale_ >= STD_FLOOR)
    assert np.linalg.norm(sc.transform(X), axis=1).max() <= sc.output_bound_


def test_dp_standard_scaler_budget_and_refusal_sets_nothing():
    X = np.random.default_rng(0).uniform(0, 10, size=(500, 2))
    budget = PrivacyBudget(1.0, 1e-6, neighbouring="replace")
    sc = DPStandardScaler(
        epsilon=0.8, delta=1e-6, bounds=(0, 10), budget=budget, random_state=0
    ).fit(X)
    assert budget.spent_epsilon() == pytest.approx(sc.epsilon_, rel=1e-9)
    again = DPStandardScaler(epsilon=0.8, delta=1e-6, bounds=(0, 10), budget=budget)
    with pytest.raises(BudgetExceededError):
        again.fit(X)
    assert not hasattr(again, "mean_") and not hasattr(again, "n_features_in_")
    assert len(budget.charges) == 2


def test_dp_standard_scaler_reproducible_and_pickles():
    X = np.random.default_rng(0).uniform(0, 10, size=(300, 2))
    a = DPStandardScaler(bounds=(0, 10), random_state=3).fit(X)
    b = DPStandardScaler(bounds=(0, 10), random_state=3).fit(X)
    np.testing.assert_array_equal(a.mean_, b.mean_)
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(c.transform(X), a.transform(X))


# ------------------------------------------------------------------------------------------
# schema_transformer and output bounds
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("missing", ["constant", "indicator"])
def test_schema_transformer_rows_within_bound(missing):
    df = _mixed_frame()
    ct = schema_transformer(SCHEMA, missing=missing)
    out = ct.fit_transform(df)
    assert isinstance(ct, ColumnTransformer)
    assert np.all(np.isfinite(out))
    bound = output_bound(ct)
    assert bound == pytest.approx(1.0)
    assert np.linalg.norm(out, axis=1).max() <= bound
    # unseen data at transform time too
    other = _mixed_frame(seed=5)
    other["job"] = "martian"
    assert np.linalg.norm(ct.transform(other), axis=1).max() <= bound
    n_levels = 3 + 3 + 4 + (3 if missing == "indicator" else 0)
    assert out.shape[1] == 3 + n_levels


def test_schema_transformer_encodes_as_documented():
    df = pd.DataFrame({"age": [18.0, 100.0, np.nan, 500.0], "job": ["a", "b", None, "zz"]})
    out = schema_transformer({"age": (18, 100), "job": ["a", "b"]}).fit_transform(df)
    s = 1 / math.sqrt(2)
    np.testing.assert_allclose(out, [[-s, s, 0], [s, 0, s], [0, 0, 0], [s, 0, 0]])
    ind = schema_transformer({"age": (18, 100), "job": ["a", "b"]}, missing="indicator")
    out = ind.fit_transform(df)
    np.testing.assert_allclose(out[2], [0, 0, 0, s])


def test_schema_transformer_fit_reads_no_value():
    """Two frames of the same columns give the same fitted encoding."""
    a = schema_transformer(SCHEMA).fit(_mixed_frame(seed=1))
    b = schema_transformer(SCHEMA).fit(_mixed_frame(n=50, seed=2))
    probe = _mixed_frame(seed=3)
    np.testing.assert_array_equal(a.transform(probe), b.transform(probe))


def test_schema_transformer_pandas_output_and_arrays():
    df = _mixed_frame()
    ct = schema_transformer(SCHEMA).set_output(transform="pandas")
    out = ct.fit_transform(df)
    assert isinstance(out, pd.DataFrame)
    assert "categorical__job_nurse" in out.columns
    X = np.random.default_rng(0).uniform(-5, 5, size=(30, 2))
    arr = schema_transformer({0: (-1, 1), 1: (0, 2)}).fit_transform(X)
    assert np.linalg.norm(arr, axis=1).max() <= 1.0


@pytest.mark.parametrize("schema", [{}, {"a": (1, 0)}, {"a": []}, {"a": "x"}, {"a": ["u", "u"]}])
def test_schema_transformer_bad_schema(schema):
    with pytest.raises(ValueError):
        schema_transformer(schema)


def test_output_bound_of_sklearn_pieces():
    X = np.random.default_rng(0).uniform(-3, 3, size=(40, 3))
    assert output_bound(Normalizer().fit(X)) == 1.0
    assert output_bound(Normalizer(norm="max").fit(X)) == pytest.approx(math.sqrt(3))
    enc = OneHotEncoder(categories=[[0, 1]] * 3, handle_unknown="ignore").fit(X > 0)
    assert output_bound(enc) == pytest.approx(math.sqrt(3))
    pipe = make_pipeline(BoundedScaler(bounds=(-3, 3)), Normalizer()).fit(X)
    assert output_bound(pipe) == 1.0
    ct = ColumnTransformer(
        [("a", BoundedScaler(bounds=(-3, 3)), [0, 1]), ("b", "passthrough", [2])]
    ).fit(X)
    assert output_bound(ct) is None  # a raw column has no public bound
    ct = ColumnTransformer(
        [("a", BoundedScaler(bounds=(-3, 3)), [0, 1]), ("b", BoundedScaler(bounds=(-3, 3)), [2])],
        transformer_weights={"a": 0.5, "b": 2.0},
    ).fit(X)
    assert output_bound(ct) == pytest.approx(math.sqrt(0.25 * 2 + 4 * 1))
    out = ct.transform(X * 100)
    assert np.linalg.norm(out, axis=1).max() <= output_bound(ct) * (1 + 1e-12)


def test_dp_standard_scaler_missing_values():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(2000, 2))
    X[::4, 0] = np.nan
    sc = DPStandardScaler(epsilon=np.inf, bounds=(0, 10)).fit(X)
    filled = np.where(np.isnan(X), 5.0, X)  # missing_value=0.0 is the middle of the range
    ref = DPStandardScaler(epsilon=np.inf, bounds=(0, 10)).fit(filled)
    np.testing.assert_allclose(sc.mean_, ref.mean_)
    np.testing.assert_allclose(sc.transform(X), ref.transform(filled))
    noisy = DPStandardScaler(epsilon=0.5, bounds=(0, 10), random_state=0).fit(X)
    assert np.linalg.norm(noisy.transform(X), axis=1).max() <= noisy.output_bound_
    with pytest.raises(ValueError, match="missing value"):
        DPStandardScaler(bounds=(0, 10), missing_value=None).fit(X)


def test_dp_standard_scaler_noise_has_the_declared_scale():
    """The released sums carry Gaussian noise of standard deviation z * sensitivity (the
    scale the accounting assumes): measured over many seeds on fixed data."""
    X = np.random.default_rng(0).uniform(0, 10, size=(200, 2))
    exact = DPStandardScaler(epsilon=np.inf, bounds=(0, 10)).fit(X)
    sums = []
    for seed in range(400):
        sc = DPStandardScaler(epsilon=2.0, bounds=(0, 10), random_state=seed).fit(X)
        sums.append(200 * (sc.unit_mean_ - exact.unit_mean_))
    release = sc.releases_[0]
    assert release.name == "column sums"
    expected = release.noise_std[0]
    # the clip of the mean to [-1, 1] never binds here (noise << N)
    measured = np.std(np.asarray(sums), axis=0)
    np.testing.assert_allclose(measured, expected, rtol=0.12)


# ------------------------------------------------------------------------------------------
# schema_transformer: fitted attributes fixed by the schema, values outside the domain
# ------------------------------------------------------------------------------------------


def _fitted_attributes(obj, path="ct", out=None):
    """``{path: value}`` of every fitted attribute (name ending in '_') of ``obj`` and of the
    estimators fitted inside it, at any depth."""
    from sklearn.base import BaseEstimator
    from sklearn.pipeline import Pipeline

    out = {} if out is None else out
    if isinstance(obj, BaseEstimator):
        for key, value in vars(obj).items():
            if key.endswith("_") and not key.startswith("__"):
                _fitted_attributes(value, f"{path}.{key}", out)
        if isinstance(obj, Pipeline):
            for name, step in obj.steps:
                _fitted_attributes(step, f"{path}[{name}]", out)
    elif isinstance(obj, dict):
        for key, value in obj.items():
            _fitted_attributes(value, f"{path}[{key!r}]", out)
    elif isinstance(obj, (list, tuple)):
        for k, value in enumerate(obj):
            _fitted_attributes(value, f"{path}[{k}]", out)
    else:
        out[path] = obj
    return out


def _assert_same_fitted_attributes(a, b):
    fa, fb = _fitted_attributes(a), _fitted_attributes(b)
    assert fa.keys() == fb.keys()
    for key in fa:
        va, vb = fa[key], fb[key]
        assert type(va) is type(vb), key
        if isinstance(va, np.ndarray):
            assert va.dtype == vb.dtype, key
            assert va.shape == vb.shape, key
            assert all(x == y or (x != x and y != y) for x, y in zip(va.ravel(), vb.ravel())), key
        elif isinstance(va, float) and math.isnan(va):
            assert math.isnan(vb), key
        else:
            assert va == vb, key


def _int_frame(n=60):
    k = np.arange(n)
    return pd.DataFrame(
        {
            "level": k % 3 + 1,  # int64, levels [1, 2, 3]
            "half": k % 3,  # int64, levels [0.5, 1, 2]
            "job": np.where(k % 2 == 0, "a", "b"),
            "age": 20 + k,
        }
    )


INT_SCHEMA = {"level": [1, 2, 3], "half": [0.5, 1, 2], "job": ["a", "b"], "age": (18, 100)}


@pytest.mark.parametrize("missing", ["constant", "indicator"])
@pytest.mark.parametrize("cell", [np.nan, 2.5, "x", None])
def test_schema_transformer_fitted_attributes_do_not_depend_on_the_rows(missing, cell):
    """One odd cell in an integer column (missing, a float, a string) changes neither a
    fitted attribute (value or dtype) nor the encoding of the other rows."""
    clean = _int_frame()
    odd = clean.astype({"level": object})
    odd.loc[5, "level"] = cell
    a = schema_transformer(INT_SCHEMA, missing=missing).fit(clean)
    b = schema_transformer(INT_SCHEMA, missing=missing).fit(odd)
    _assert_same_fitted_attributes(a, b)
    odd_numeric = clean.astype({"level": float})
    odd_numeric.loc[5, "level"] = np.nan if cell is None or isinstance(cell, str) else cell
    c = schema_transformer(INT_SCHEMA, missing=missing).fit(odd_numeric)
    _assert_same_fitted_attributes(a, c)
    out = a.transform(clean)
    np.testing.assert_array_equal(b.transform(clean), out)
    np.testing.assert_array_equal(c.transform(clean), out)
    rows = np.arange(len(clean)) != 5
    np.testing.assert_array_equal(a.fit_transform(odd)[rows], out[rows])


def test_schema_transformer_keeps_float_levels_of_an_integer_column():
    """Levels 0.5, 1, 2 declared on an integer column are not truncated: 0 is no level."""
    df = pd.DataFrame({"half": [0, 1, 2, 3]})
    ct = schema_transformer({"half": [0.5, 1, 2]}).fit(df)
    cats = [v for k, v in _fitted_attributes(ct).items() if "categories_" in k]
    assert len(cats) == 1
    np.testing.assert_array_equal(cats[0].astype(float), [0.5, 1.0, 2.0])
    np.testing.assert_array_equal(ct.transform(df), [[0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]])


def _odd_frame():
    """Cells of the wrong type or outside the declared domain, and the same frame with those
    cells missing."""
    df = pd.DataFrame(
        {
            "age": [30.0, 40.0, 50.0, 60.0, 70.0, 80.0],
            "job": ["a", "b", "a", "b", "a", "b"],
            "grade": [1.0, 2.0, 3.0, 1.0, 2.0, 3.0],
        }
    ).astype(object)
    odd, gone = df.copy(), df.copy()
    for row, col, value in [
        (0, "age", "forty"),
        (1, "age", None),
        (2, "age", np.inf),
        (3, "age", -np.inf),
        (4, "age", pd.Timestamp("2020-01-01")),
        (0, "job", 7),
        (2, "job", "zz"),
        (3, "job", 2.5),
        (1, "grade", "2"),
        (4, "grade", 2.5),
    ]:
        odd.loc[row, col] = value
        gone.loc[row, col] = np.nan
    odd.loc[5, "grade"] = True  # a bool is a number: True is level 1
    gone.loc[5, "grade"] = 1
    return odd, gone


@pytest.mark.parametrize("missing", ["constant", "indicator"])
def test_schema_transformer_values_outside_the_domain_are_missing(missing):
    odd, gone = _odd_frame()
    schema = {"age": (18, 100), "job": ["a", "b"], "grade": [1, 2, 3]}
    ct = schema_transformer(schema, missing=missing, numeric_fill=0.25)
    out = ct.fit_transform(odd)  # no error: one row cannot make the fit fail
    np.testing.assert_array_equal(
        out, schema_transformer(schema, missing=missing, numeric_fill=0.25).fit_transform(gone)
    )
    np.testing.assert_array_equal(out, ct.transform(gone))
    s = 1 / math.sqrt(3)
    assert out[0, 0] == pytest.approx(0.25 * s)  # 'forty' -> numeric_fill
    assert out[2, 0] == pytest.approx(0.25 * s)  # inf -> missing, not the top of the range
    job = out[:, 1:3] if missing == "constant" else out[:, 1:4]
    assert np.all(job[[0, 2, 3], :2] == 0)  # 7, 'zz', 2.5 are no job level
    if missing == "indicator":
        np.testing.assert_allclose(job[[0, 2, 3], 2], s)  # they count as missing
    assert np.linalg.norm(out, axis=1).max() <= 1.0 + 1e-12
    assert output_bound(ct) == pytest.approx(1.0)


def test_schema_transformer_on_arrays_of_objects():
    X = np.array([[30, "a"], ["x", "b"], [None, 3], [250, "a"]], dtype=object)
    out = schema_transformer({0: (18, 100), 1: ["a", "b"]}).fit_transform(X)
    s = 1 / math.sqrt(2)
    np.testing.assert_allclose(out, [[(30 - 59) / 41 * s, s, 0], [0, 0, s], [0, 0, 0], [s, s, 0]])


def test_schema_transformer_mixed_levels_are_refused():
    with pytest.raises(ValueError, match="levels"):
        schema_transformer({"a": ["x", 1]})


# --- typed schema entries and the dtype checks (dtypes are public; no value is read) -------


def _codebook_frame():
    import pandas as pd

    return pd.DataFrame(
        {
            "age": [30, 45, 60, 41],
            "sex": ["Male", "Female", "Male", "Male"],
            "code": [1, 2, 6, 3],
            "flag": [0, 1, 1, 0],
            "day": pd.to_datetime(["2020-01-01"] * 4),
        }
    )


def test_typed_entries_are_the_shorthands():
    from skdpgd.preprocessing import categorical, numeric, schema_transformer

    df = _codebook_frame()
    typed = schema_transformer({"age": numeric(18, 90), "sex": categorical(["Male", "Female"])})
    short = schema_transformer({"age": (18, 90), "sex": ["Male", "Female"]})
    np.testing.assert_array_equal(typed.fit_transform(df), short.fit_transform(df))


def test_a_range_written_as_a_list_is_an_error_naming_the_fix():
    from skdpgd.preprocessing import categorical, schema_transformer

    df = _codebook_frame()
    with pytest.raises(ValueError, match=r"numeric\(30, 60\).*categorical\(\[30, 60\]\)"):
        schema_transformer({"age": [30, 60]}).fit(df)
    # explicit levels, or consecutive integers (a 0/1 flag), are level lists
    out = schema_transformer({"age": categorical([30, 60])}).fit_transform(df)
    assert out.sum() == pytest.approx(2.0)  # rows 0 and 2 hit a level
    out = schema_transformer({"flag": [0, 1]}).fit_transform(df)
    assert out.sum() == pytest.approx(4.0)


@pytest.mark.parametrize(
    "schema, match",
    [
        ({"code": ["yes", "no"]}, "holds numbers"),
        ({"sex": (0, 1)}, "holds text"),
        ({"day": (0, 1)}, "holds dates"),
    ],
)
def test_a_declared_type_that_contradicts_the_dtype_is_refused(schema, match):
    from skdpgd.preprocessing import schema_transformer

    with pytest.raises(ValueError, match=match):
        schema_transformer(schema).fit(_codebook_frame())


def test_the_dtype_check_reads_no_value():
    """The refusal is the same whatever the cells hold (it depends on dtypes only)."""
    from skdpgd.preprocessing import schema_transformer

    a, b = _codebook_frame(), _codebook_frame()
    b["code"] = [9, 9, 9, 9]
    messages = []
    for df in (a, b):
        with pytest.raises(ValueError) as info:
            schema_transformer({"code": ["yes", "no"]}).fit(df)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_out_of_domain_counts_are_noisy_counts_of_cells_outside_the_codebook():
    import pandas as pd

    from skdpgd import PrivacyBudget, privacy_report
    from skdpgd.accounting import gdp_mu
    from skdpgd.preprocessing import out_of_domain_counts

    df = pd.DataFrame(
        {
            "sex": ["male", "Male", "female", None] * 250,
            "age": [30.0, 130.0, np.nan, 50.0] * 250,
            "n": ["1", 2, 3, 4] * 250,
        }
    )
    schema = {"sex": ["Male", "Female"], "age": (18, 100), "n": [1, 2, 3, 4]}
    exact = out_of_domain_counts(df, schema, epsilon=1e9, random_state=0)  # hardly any noise
    assert exact.counts == pytest.approx({"age": 500.0, "sex": 750.0, "n": 250.0}, abs=1e-3)
    budget = PrivacyBudget(1.0, 1e-6, neighbouring="replace")
    check = out_of_domain_counts(df, schema, epsilon=0.1, delta=1e-6, budget=budget, random_state=0)
    # one release of 3 counts: L2 sensitivity sqrt(3), noise sqrt(3) / mu, exactly charged
    assert check.noise_std == pytest.approx(np.sqrt(3) / gdp_mu(0.1, 1e-6), rel=1e-9)
    assert check.epsilon_ <= 0.1 and budget.spent_epsilon() == pytest.approx(0.1, rel=1e-9)
    assert privacy_report(check).epsilon(1e-6) == pytest.approx(0.1, rel=1e-6)
    # a dtype that contradicts the codebook is refused before any value is read or charged
    spent = budget.spent_epsilon()
    with pytest.raises(ValueError, match="holds numbers"):
        out_of_domain_counts(
            pd.DataFrame({"c": [1, 2]}), {"c": ["yes", "no"]}, epsilon=0.1, budget=budget
        )
    assert budget.spent_epsilon() == spent

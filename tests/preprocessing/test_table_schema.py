"""A codebook read from a data dictionary (Frictionless Table Schema), and columns the codebook
does not list: never dropped without a word."""

import json
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from skdpgd import DPLogisticRegression
from skdpgd._core.capability import PUBLIC_TRANSFORMER, privacy_capability
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import (
    Categorical,
    Numeric,
    codebook_from_table_schema,
    numeric,
    out_of_domain_counts,
    output_bound,
    schema_transformer,
)

#: a data dictionary as a survey would publish it (every field type this reader maps)
TABLE_SCHEMA = {
    "fields": [
        {"name": "age", "type": "integer", "constraints": {"minimum": 17, "maximum": 90}},
        {"name": "income", "type": "number", "constraints": {"minimum": "0", "maximum": "2e5"}},
        {"name": "born", "type": "year", "constraints": {"minimum": 1900, "maximum": 2010}},
        {"name": "grade", "type": "integer", "constraints": {"enum": [3, 1, 2]}},
        {"name": "sex", "type": "string", "constraints": {"enum": ["Female", "Male"]}},
        {
            "name": "region",
            "type": "string",
            "categories": [{"value": "N", "label": "north"}, {"value": "S", "label": "south"}],
        },
        {"name": "smoker", "type": "boolean"},
        {"name": "code", "type": "any", "constraints": {"enum": ["x", "y"]}},
        {"name": "id", "type": "string"},
        {"name": "target", "type": "integer", "constraints": {"enum": [0, 1]}},
    ],
    "missingValues": ["", "NA", "-99"],
}

EXPECTED = {
    "age": Numeric(17.0, 90.0, (-99.0,)),
    "income": Numeric(0.0, 200_000.0, (-99.0,)),
    "born": Numeric(1900.0, 2010.0, (-99.0,)),
    "grade": Categorical((3, 1, 2)),
    "sex": Categorical(("Female", "Male")),
    "region": Categorical(("N", "S")),
    "smoker": Categorical((False, True)),
    "code": Categorical(("x", "y")),
    "target": Categorical((0, 1)),
}


def test_each_field_type_gives_its_entry():
    codebook = codebook_from_table_schema(TABLE_SCHEMA, exclude=["id"])
    assert codebook == EXPECTED
    assert list(codebook) == list(EXPECTED)  # the schema's field order
    # the exclusive bounds of version 2 (the tighter end wins when both are given)
    two = {
        "fields": [
            {
                "name": "x",
                "type": "number",
                "constraints": {"exclusiveMinimum": 0, "minimum": -1, "exclusiveMaximum": 1},
            }
        ]
    }
    assert codebook_from_table_schema(two) == {"x": Numeric(0.0, 1.0, ())}


def test_a_json_file_reads_as_its_dict(tmp_path):
    path = tmp_path / "dictionary.json"
    path.write_text(json.dumps(TABLE_SCHEMA), encoding="utf-8")
    from_file = codebook_from_table_schema(path, exclude="id")
    assert from_file == codebook_from_table_schema(str(path), exclude=["id"]) == EXPECTED
    path.write_text("{fields: oops", encoding="utf-8")
    with pytest.raises(ValueError, match="dictionary.json.*not valid JSON"):
        codebook_from_table_schema(path)
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="JSON object"):
        codebook_from_table_schema(path)


def test_missing_values_top_level_per_field_and_in_levels():
    schema = {
        "fields": [
            {"name": "a", "type": "number", "constraints": {"minimum": 0, "maximum": 10}},
            {  # its own list replaces the schema's (version 2), objects with labels too
                "name": "b",
                "type": "number",
                "constraints": {"minimum": 0, "maximum": 10},
                "missingValues": [{"value": "999", "label": "refused"}, "."],
            },
            {"name": "c", "type": "string", "constraints": {"enum": ["u", "v", "NA"]}},
            {"name": "d", "type": "integer", "constraints": {"enum": [1, 2, 9]}},
            {"name": "e", "type": "number", "constraints": {"minimum": 0, "maximum": 1}},
        ],
        "missingValues": ["NA", "9", "-1", "nan"],
    }
    codebook = codebook_from_table_schema(schema)
    assert codebook["a"] == Numeric(0.0, 10.0, (-1.0, 9.0))  # text and NaN need no code
    assert codebook["b"] == Numeric(0.0, 10.0, (999.0,))
    assert codebook["c"] == Categorical(("u", "v"))  # a missing value is no level
    assert codebook["d"] == Categorical((1, 2))
    # the same by hand; a code must be a finite number
    assert numeric(0, 10, missing=[-1, 9]) == Numeric(0, 10, (-1, 9))
    with pytest.raises(ValueError, match="missing codes of column 'a' must be finite numbers"):
        schema_transformer({"a": numeric(0, 10, missing=["NA"])})
    # no missingValues at all: the default [""] (no number)
    plain = codebook_from_table_schema({"fields": schema["fields"][:1]})
    assert plain["a"] == Numeric(0.0, 10.0, ())

    # a code is missing (numeric_fill), not clipped into the range; text and NaN as before
    df = pd.DataFrame(
        {
            "a": [-1.0, 9.0, 5.0, np.nan, 20.0],
            "b": [999, 3, 10, -1, 0],
            "c": ["u", "NA", "v", None, "w"],
            "d": [1, 9, 2, 3, 1],
            "e": [0.5] * 5,
        }
    )
    out = schema_transformer(codebook).fit_transform(df)
    s = 1 / math.sqrt(5)
    np.testing.assert_allclose(out[:, 0], [0, 0, 0, 0, s])  # 9 is a code here, 20 clipped
    np.testing.assert_allclose(out[:, 1], [0, -0.4 * s, s, -s, -s])  # -1 is clipped here
    np.testing.assert_allclose(out[:, 3:5], [[s, 0], [0, 0], [0, s], [0, 0], [0, 0]])  # c
    np.testing.assert_allclose(out[:, 5:7], [[s, 0], [0, 0], [0, s], [0, 0], [s, 0]])  # d


def test_boolean_fields_and_their_text_forms():
    schema = {
        "fields": [
            {
                "name": "yes",
                "type": "boolean",
                "constraints": {"enum": ["yes"]},
                "trueValues": ["yes"],
            },
            {"name": "any", "type": "boolean", "constraints": {"enum": [True, "0"]}},
        ]
    }
    assert codebook_from_table_schema(schema) == {
        "yes": Categorical((True,)),
        "any": Categorical((False, True)),
    }
    bad = {"fields": [{"name": "b", "type": "boolean", "constraints": {"enum": ["maybe"]}}]}
    with pytest.raises(ValueError, match="'b'.*'maybe'.*neither true nor false"):
        codebook_from_table_schema(bad)
    # a boolean column (or 0/1) matches; a column of text is refused from its dtype
    ct = schema_transformer(
        {
            "flag": codebook_from_table_schema({"fields": [{"name": "flag", "type": "boolean"}]})[
                "flag"
            ]
        }
    )
    out = ct.fit_transform(pd.DataFrame({"flag": [True, False, None]}, dtype=object))
    np.testing.assert_allclose(out, [[0, 1], [1, 0], [0, 0]])
    with pytest.raises(ValueError, match="'flag' holds text"):
        ct.fit(pd.DataFrame({"flag": ["yes", "no"]}))


@pytest.mark.parametrize(
    "field, message",
    [
        (
            {"name": "pay", "type": "number"},
            r"'pay'.*minimum and maximum nor.*enum.*exclude=\['pay'\]",
        ),
        (
            {"name": "pay", "type": "integer", "constraints": {"minimum": 0}},
            r"'pay' \(integer\) has no constraints.maximum\. Add the public range",
        ),
        ({"name": "who"}, r"'who' \(string\) has no constraints.enum.*exclude=\['who'\]"),
        ({"name": "any", "type": "any"}, r"'any' \(any\) has no constraints.enum"),
        ({"name": "day", "type": "date"}, r"'day' has type 'date'.*exclude=\['day'\].*numeric"),
        ({"name": "z", "type": "decimal"}, r"'z' has type 'decimal', which is not a Table"),
        (
            {"name": "z", "type": "number", "constraints": {"minimum": 5, "maximum": 5}},
            "'z' needs minimum < maximum",
        ),
        (
            {"name": "z", "type": "number", "constraints": {"minimum": "low", "maximum": 5}},
            "'z': constraints.minimum must be a number, got 'low'",
        ),
        (
            {"name": "z", "type": "string", "constraints": {"enum": ["a", 1]}},
            "'z' is a string field but its constraints.enum holds values that are not strings",
        ),
        (
            {"name": "z", "type": "integer", "constraints": {"enum": [True, 2]}},
            "'z': a value of constraints.enum must be a number",
        ),
        (
            {"name": "z", "type": "string", "constraints": {"enum": ["NA"]}},
            "'z': every value of its constraints.enum is also a missing value",
        ),
        ({"type": "string"}, "field 0 has no 'name'"),
    ],
)
def test_a_field_without_public_bounds_or_levels_is_refused_naming_it(field, message):
    with pytest.raises(ValueError, match=message):
        codebook_from_table_schema({"fields": [field], "missingValues": ["NA"]})


def test_schema_level_errors():
    with pytest.raises(ValueError, match="non-empty list 'fields'"):
        codebook_from_table_schema({"name": "x"})
    with pytest.raises(ValueError, match="Data Package.*resources"):
        codebook_from_table_schema({"resources": [{"schema": TABLE_SCHEMA}]})
    with pytest.raises(ValueError, match="'a' is listed twice"):
        codebook_from_table_schema({"fields": [{"name": "a"}, {"name": "a"}]})
    with pytest.raises(ValueError, match=r"exclude names \['ID'\], which are not fields"):
        codebook_from_table_schema(TABLE_SCHEMA, exclude=["ID"])
    with pytest.raises(ValueError, match="every field is excluded"):
        codebook_from_table_schema({"fields": [{"name": "a"}]}, exclude=["a"])
    with pytest.raises(ValueError, match="missingValues of the schema must be a list"):
        codebook_from_table_schema({"fields": [{"name": "a"}], "missingValues": "NA"})


def _frame(n=400, seed=0):
    """A small table with signal in age and sex, an identifier column the codebook leaves
    out, and the target."""
    rng = np.random.default_rng(seed)
    age = rng.integers(17, 91, n).astype(float)
    sex = rng.choice(["Female", "Male"], n)
    logit = 0.08 * (age - 50) + np.where(sex == "Male", 1.5, -1.5)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    age[::17] = -99  # a missing-value code
    df = pd.DataFrame({"id": [f"p{i}" for i in range(n)], "age": age, "sex": sex})
    return df, y


SMALL_SCHEMA = {
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "age", "type": "integer", "constraints": {"minimum": 17, "maximum": 90}},
        {"name": "sex", "type": "string", "constraints": {"enum": ["Female", "Male"]}},
        {"name": "target", "type": "integer", "constraints": {"enum": [0, 1]}},
    ],
    "missingValues": ["", "-99"],
}


def test_columns_not_in_the_codebook_warn_or_are_refused_or_dropped_on_request():
    df, _ = _frame(n=30)
    codebook = codebook_from_table_schema(SMALL_SCHEMA, exclude=["id", "target"])
    with pytest.warns(UserWarning, match=r"not in the codebook: 'id'; dropped.*remainder='drop'"):
        warned = schema_transformer(codebook).fit(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dropped = schema_transformer(codebook, remainder="drop").fit(df)
        listed = schema_transformer(codebook).fit(df[["age", "sex"]])  # nothing to say
    np.testing.assert_array_equal(warned.transform(df), dropped.transform(df))
    np.testing.assert_array_equal(warned.transform(df), listed.transform(df[["age", "sex"]]))
    assert output_bound(warned) == pytest.approx(1.0) == output_bound(dropped)
    with pytest.raises(ValueError, match="not in the codebook: 'id'; they would be dropped"):
        schema_transformer(codebook, remainder="error").fit(df)
    with pytest.raises(ValueError, match="remainder must be"):
        schema_transformer(codebook, remainder="passthrough")
    # arrays: by position
    X = np.random.default_rng(0).uniform(0, 1, size=(5, 3))
    with pytest.warns(UserWarning, match="not in the codebook: 1 by position"):
        schema_transformer({0: (0, 1), 2: (0, 1)}).fit(X)
    # the part that warns reads names only, declares it (a public transformer), outputs
    # nothing, and travels with the transformer (clone, pickle, pandas output)
    rest = warned.named_transformers_["remainder"]
    assert privacy_capability(rest) == PUBLIC_TRANSFORMER and rest.output_bound_ == 0.0
    assert rest.transform(df[["id"]]).shape == (30, 0)
    again = pickle.loads(pickle.dumps(warned))
    np.testing.assert_array_equal(again.transform(df), warned.transform(df))
    with pytest.warns(UserWarning, match="'id'"):
        out = clone(warned).set_output(transform="pandas").fit_transform(df)
    assert list(out.columns) == ["numeric__age", "categorical__sex_Female", "categorical__sex_Male"]


def test_a_level_typo_is_found_by_out_of_domain_counts():
    """'male' in the rows, 'Male' in the dictionary: every cell of the column is missing,
    silently; the accounted count says so, and is about zero once the dictionary is right."""
    df, _ = _frame(n=2000)
    lower = df.assign(sex=df.sex.str.lower())
    codebook = codebook_from_table_schema(SMALL_SCHEMA, exclude=["id", "target"])
    check = out_of_domain_counts(lower[["age", "sex"]], codebook, epsilon=1.0, random_state=0)
    std = check.noise_std
    assert std < 10
    assert abs(check.counts["sex"] - 2000) < 5 * std  # the whole column
    n_codes = int(np.sum(df.age == -99))  # the missing-value code counts as missing
    assert abs(check.counts["age"] - n_codes) < 5 * std
    fixed = dict(SMALL_SCHEMA, fields=[dict(f) for f in SMALL_SCHEMA["fields"]])
    fixed["fields"][2] = {
        "name": "sex",
        "type": "string",
        "constraints": {"enum": ["female", "male"]},
    }
    codebook = codebook_from_table_schema(fixed, exclude=["id", "target"])
    check = out_of_domain_counts(lower[["age", "sex"]], codebook, epsilon=1.0, random_state=0)
    assert abs(check.counts["sex"]) < 5 * std
    # the docs of both functions, and the one warning a fit can give for free, point to it
    assert "out_of_domain_counts" in codebook_from_table_schema.__doc__
    assert "out_of_domain_counts" in schema_transformer.__doc__
    with pytest.warns(UserWarning, match="out_of_domain_counts"):
        schema_transformer(codebook).fit(lower)


def test_a_private_pipeline_on_a_table_schema():
    df, y = _frame(n=600)
    codebook = codebook_from_table_schema(SMALL_SCHEMA, exclude=["id"])
    classes = list(codebook.pop("target").levels)  # the class list is public too
    assert classes == [0, 1]

    def fit(remainder, epsilon, seed=0):
        return make_private_pipeline(
            schema_transformer(codebook, remainder=remainder),
            DPLogisticRegression(classes=classes),
            epsilon=epsilon,
            random_state=seed,
        ).fit(df, y)

    with pytest.warns(UserWarning, match="'id'"):
        warned = fit("warn", 1.0)
    quiet = fit("drop", 1.0)
    np.testing.assert_array_equal(warned[-1].coef_, quiet[-1].coef_)  # same noise, same model
    assert warned.epsilon_ <= 1.0 and warned.data_norm_ == pytest.approx(1.0)
    rows = warned[:-1].transform(df)
    assert np.linalg.norm(rows, axis=1).max() <= 1.0 + 1e-12
    # a useful model when the budget is ample (majority: the larger class share)
    majority = max(np.mean(y), 1 - np.mean(y))
    ample = fit("drop", 50.0)
    assert ample.score(df, y) > majority + 0.1

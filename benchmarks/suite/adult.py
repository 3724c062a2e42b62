"""UCI Adult (census income) from the shared copy, with its public codebook.

Adult is the field's most used benchmark for private logistic regression; here it is a
**design** set (defaults may be tuned by looking at it) and the set of the benchmarks page's
comparison with published figures. It is not registered in ``datasets.DATASETS``: the suite's
halves (``split.py``) were fixed before it was added, and its 32,561 training rows come with
their own published test file, not a 75/25 split.

Files: ``/work/shared/data/adult/`` (``ADULT_DIR`` overrides), as published by UCI
(Becker and Kohavi, 1996; CC BY 4.0): ``adult.data.gz`` (32,561 training rows) and
``adult.test.gz`` (16,281 test rows, a comment on its first line, labels ending with a full
stop). ``?`` marks a missing value. Nothing is downloaded.

Two views of the same rows:

:func:`raw_frames`
    the published rows as pandas frames (missing values as NaN, every row kept) and the target
    ``income > 50K`` as 1; :func:`codebook` is the public schema a user writes for
    ``skdpgd.preprocessing.schema_transformer``.
:func:`public_bound_protocol`
    arrays preprocessed by public knowledge only: rows with a missing value dropped (a rule
    that reads each row alone), numeric columns mapped to [0, 1] by their public bounds
    (clipped), categoricals one-hot over the documented levels, and every row divided by
    ``sqrt(14)`` (14 original columns; each contributes at most 1 to the squared norm), so
    ``||row|| <= 1``: ``data_norm=1`` is a public bound. ``numeric='symmetric'`` maps the
    numeric columns to [-1, 1] instead (what ``schema_transformer`` does), for comparison.

The levels below are the ones listed in the data set's documentation (``adult.names``), written
out here; none is read from the rows. A value outside them is a loader bug and raises.
One-hot over these lists gives 6 + 99 = 105 columns. The literature's 104 (Iyengar et al. 2019,
followed by Yu et al. 2019) is what levels read from the complete rows give: no row without a
missing value has ``workclass = Never-worked`` (all 7 such training rows lack an occupation),
so that column is all zeros here.
"""

from __future__ import annotations

import gzip
import os

import numpy as np
import pandas as pd

ADULT_DIR = os.environ.get("ADULT_DIR", "/work/shared/data/adult")

#: the published column order (the last one is the target)
COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
TARGET = "income"

#: public bounds of the numeric columns (the data set's documentation, shared README)
NUMERIC_BOUNDS = {
    "age": (17.0, 90.0),
    "fnlwgt": (0.0, 1_500_000.0),
    "education-num": (1.0, 16.0),
    "capital-gain": (0.0, 99_999.0),
    "capital-loss": (0.0, 4_356.0),
    "hours-per-week": (1.0, 99.0),
}

#: public levels of the categorical columns, as listed in the data set's documentation
LEVELS = {
    "workclass": [
        "Private",
        "Self-emp-not-inc",
        "Self-emp-inc",
        "Federal-gov",
        "Local-gov",
        "State-gov",
        "Without-pay",
        "Never-worked",
    ],
    "education": [
        "Bachelors",
        "Some-college",
        "11th",
        "HS-grad",
        "Prof-school",
        "Assoc-acdm",
        "Assoc-voc",
        "9th",
        "7th-8th",
        "12th",
        "Masters",
        "1st-4th",
        "10th",
        "Doctorate",
        "5th-6th",
        "Preschool",
    ],
    "marital-status": [
        "Married-civ-spouse",
        "Divorced",
        "Never-married",
        "Separated",
        "Widowed",
        "Married-spouse-absent",
        "Married-AF-spouse",
    ],
    "occupation": [
        "Tech-support",
        "Craft-repair",
        "Other-service",
        "Sales",
        "Exec-managerial",
        "Prof-specialty",
        "Handlers-cleaners",
        "Machine-op-inspct",
        "Adm-clerical",
        "Farming-fishing",
        "Transport-moving",
        "Priv-house-serv",
        "Protective-serv",
        "Armed-Forces",
    ],
    "relationship": [
        "Wife",
        "Own-child",
        "Husband",
        "Not-in-family",
        "Other-relative",
        "Unmarried",
    ],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native-country": [
        "United-States",
        "Cambodia",
        "England",
        "Puerto-Rico",
        "Canada",
        "Germany",
        "Outlying-US(Guam-USVI-etc)",
        "India",
        "Japan",
        "Greece",
        "South",
        "China",
        "Cuba",
        "Iran",
        "Honduras",
        "Philippines",
        "Italy",
        "Poland",
        "Jamaica",
        "Vietnam",
        "Mexico",
        "Portugal",
        "Ireland",
        "France",
        "Dominican-Republic",
        "Laos",
        "Ecuador",
        "Taiwan",
        "Haiti",
        "Columbia",
        "Hungary",
        "Guatemala",
        "Nicaragua",
        "Scotland",
        "Thailand",
        "Yugoslavia",
        "El-Salvador",
        "Trinadad&Tobago",
        "Peru",
        "Hong",
        "Holand-Netherlands",
    ],
}

#: feature columns in the published order
FEATURES = [c for c in COLUMNS if c != TARGET]
NUMERIC = [c for c in FEATURES if c in NUMERIC_BOUNDS]
CATEGORICAL = [c for c in FEATURES if c in LEVELS]
#: columns after one-hot: numeric columns first, then each categorical's levels in the
#: codebook's order
N_ONEHOT = len(NUMERIC) + sum(len(v) for v in LEVELS.values())

#: published sizes (checked by the loader)
N_TRAIN_RAW, N_TEST_RAW = 32_561, 16_281
N_TRAIN_COMPLETE, N_TEST_COMPLETE = 30_162, 15_060


def codebook():
    """The public schema for ``skdpgd.preprocessing.schema_transformer``: ``(lo, hi)`` for
    a numeric column, the documented level list for a categorical one (a fresh dict)."""
    schema = {}
    for col in FEATURES:
        schema[col] = tuple(NUMERIC_BOUNDS[col]) if col in NUMERIC_BOUNDS else list(LEVELS[col])
    return schema


def _read(name, skip_comment):
    path = os.path.join(ADULT_DIR, name)
    with gzip.open(path, "rt") as f:
        df = pd.read_csv(
            f,
            header=None,
            names=COLUMNS,
            skiprows=1 if skip_comment else 0,
            skipinitialspace=True,
            na_values=["?"],
            keep_default_na=False,
        )
    df = df.dropna(how="all")  # a trailing empty line, if any
    labels = df[TARGET].astype(str).str.rstrip(".")  # the test file's labels end with '.'
    unknown = sorted(set(labels) - {"<=50K", ">50K"})
    if unknown:
        raise ValueError(f"adult: unexpected labels {unknown[:5]} in {name}")
    y = (labels == ">50K").astype(int).rename(TARGET)
    X = df[FEATURES].reset_index(drop=True)
    for col in NUMERIC:
        X[col] = X[col].astype(float)
    return X, y.reset_index(drop=True)


_CACHE: dict = {}


def raw_frames():
    """``(X_train, y_train, X_test, y_test)``: the published rows as frames (copies).

    Every row is kept; ``?`` is NaN. ``y`` is 1 for ``income > 50K``.
    """
    if "raw" not in _CACHE:
        Xtr, ytr = _read("adult.data.gz", skip_comment=False)
        Xte, yte = _read("adult.test.gz", skip_comment=True)
        if (len(Xtr), len(Xte)) != (N_TRAIN_RAW, N_TEST_RAW):
            raise AssertionError(
                f"adult: {len(Xtr)} training / {len(Xte)} test rows, expected "
                f"{N_TRAIN_RAW} / {N_TEST_RAW}"
            )
        _check_levels(Xtr, "train")
        _check_levels(Xte, "test")
        _CACHE["raw"] = (Xtr, ytr, Xte, yte)
    return tuple(v.copy() for v in _CACHE["raw"])


def _check_levels(X, which):
    for col in CATEGORICAL:
        values = set(X[col].dropna())
        unknown = sorted(values - set(LEVELS[col]))
        if unknown:
            raise ValueError(
                f"adult ({which}): column {col} has values {unknown[:5]} outside the "
                "documented levels (a loader bug)"
            )


def _encode(X, numeric):
    """Public map of complete rows: numeric columns to [0, 1] (``numeric='unit'``) or [-1, 1]
    (``'symmetric'``) by their public bounds, one-hot blocks, rows / sqrt(14)."""
    n = len(X)
    parts = []
    for col in NUMERIC:
        lo, hi = NUMERIC_BOUNDS[col]
        v = np.clip((X[col].to_numpy(dtype=float) - lo) / (hi - lo), 0.0, 1.0)
        parts.append((v if numeric == "unit" else 2.0 * v - 1.0)[:, None])
    for col in CATEGORICAL:
        index = {level: k for k, level in enumerate(LEVELS[col])}
        codes = np.fromiter((index[v] for v in X[col]), dtype=np.int64, count=n)
        block = np.zeros((n, len(index)))
        block[np.arange(n), codes] = 1.0
        parts.append(block)
    Z = np.hstack(parts) / np.sqrt(len(FEATURES))
    # each original column adds at most 1 to the squared norm before the division; guard the
    # last ulp of rounding so the public bound holds exactly
    norms = np.linalg.norm(Z, axis=1)
    over = norms > 1.0
    if np.any(over):
        Z[over] *= np.nextafter(1.0 / norms[over], 0.0)[:, None]
    return np.ascontiguousarray(Z)


def public_bound_protocol(numeric="unit"):
    """``(X_train, y_train, X_test, y_test)`` as float arrays under the public-bound protocol.

    Rows with a missing value are dropped (30,162 training and 15,060 test rows remain);
    105 columns (see the module docstring); every row has L2 norm at most 1. The function
    checks these invariants and that every encoded row has exactly one level per categorical
    column, and raises if one fails.

    ``numeric='unit'`` maps each numeric column to [0, 1] by its public bounds (the protocol);
    ``'symmetric'`` to [-1, 1] (the middle of the public range at 0, as
    ``schema_transformer`` does), everything else unchanged.
    """
    if numeric not in ("unit", "symmetric"):
        raise ValueError(f"numeric must be 'unit' or 'symmetric', got {numeric!r}")
    key = ("protocol", numeric)
    if key not in _CACHE:
        Xtr, ytr, Xte, yte = raw_frames()
        out = []
        for X, y, n_expected in (
            (Xtr, ytr, N_TRAIN_COMPLETE),
            (Xte, yte, N_TEST_COMPLETE),
        ):
            complete = X.notna().all(axis=1).to_numpy()
            Z = _encode(X[complete], numeric)
            _check_protocol(Z, n_expected)
            out += [Z, y.to_numpy()[complete].astype(int)]
        _CACHE[key] = tuple(out)
    return tuple(v.copy() for v in _CACHE[key])


def _check_protocol(Z, n_expected):
    if Z.shape != (n_expected, N_ONEHOT):
        raise AssertionError(f"adult protocol: shape {Z.shape}, expected ({n_expected}, 105)")
    if not np.all(np.isfinite(Z)):
        raise AssertionError("adult protocol: non-finite values")
    if np.max(np.linalg.norm(Z, axis=1)) > 1.0:
        raise AssertionError("adult protocol: a row norm exceeds the public bound 1")
    s = np.sqrt(len(FEATURES))
    start = len(NUMERIC)
    for col in CATEGORICAL:
        width = len(LEVELS[col])
        ones = np.round(Z[:, start : start + width].sum(axis=1) * s, 9)
        if not np.all(ones == 1.0):
            raise AssertionError(f"adult protocol: column {col} is not one level per row")
        start += width


def majority_class(y_train):
    """The majority class of the training labels (a non-private reference, 0 on Adult)."""
    return int(np.bincount(np.asarray(y_train, dtype=int)).argmax())

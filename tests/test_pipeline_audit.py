"""The private pipeline's leak audit: what it accepts and refuses before any row is read.

* a ``ColumnTransformer`` picks its columns by public means only: names, positions, slices of
  those, or ``make_column_selector`` (names and dtypes); a callable or a boolean mask, which
  may have read the values, is refused at every nesting depth;
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.pipeline import FeatureUnion, make_pipeline
from sklearn.preprocessing import Normalizer

from skdpgd import DPLogisticRegression, PrivacyLeakWarning
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import BoundedScaler


class _Poison:
    """X that fails the test if anything reads it."""

    def __getattr__(self, name):
        raise AssertionError(f"the private rows were read ({name}) before the check")

    def __len__(self):
        raise AssertionError("the private rows were read (len) before the check")

    def __array__(self, *args, **kwargs):
        raise AssertionError("the private rows were read (array) before the check")


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"num_a": rng.uniform(-5, 5, n), "num_b": rng.uniform(-5, 5, n),
                       "other": rng.uniform(-5, 5, n)})
    y = (df["num_a"] > 0).astype(int).to_numpy()
    return df, y


def _fitted_state(est):
    return {k for k in vars(est) if k.endswith("_") and not k.startswith("_")}


def _pipe(*steps, **kw):
    kw.setdefault("epsilon", 1.0)
    return make_private_pipeline(*steps, DPLogisticRegression(classes=[0, 1]), **kw)


def _scaled_columns(columns):
    return ColumnTransformer([("num", BoundedScaler(bounds=(-5, 5)), columns)],
                             sparse_threshold=0)


def _two_levels_down(ct):
    """``ct`` inside a Pipeline inside a FeatureUnion inside a ColumnTransformer."""
    return ColumnTransformer(
        [("outer", FeatureUnion([("inner", make_pipeline(ct, Normalizer()))]),
          ["num_a", "num_b", "other"])], sparse_threshold=0)


# ------------------------------------------------------------------------------------------
# column specifications of a ColumnTransformer
# ------------------------------------------------------------------------------------------

def _reads_values(X):
    return X.columns[X.mean() > 0]


class _SubclassedSelector(make_column_selector):
    pass


@pytest.mark.parametrize("nest", [lambda ct: ct, _two_levels_down], ids=["top", "nested"])
@pytest.mark.parametrize("columns", [lambda X: X.columns[X.mean() > 0], _reads_values,
                                     _SubclassedSelector(pattern="^num_")],
                         ids=["lambda", "function", "subclassed-selector"])
def test_a_callable_column_selector_is_refused_before_reading(columns, nest):
    pipe = _pipe(nest(_scaled_columns(columns)), Normalizer())
    with pytest.raises(ValueError, match=r"callable.*Private alternative: name the columns.*"
                                         r"make_column_selector\(pattern="):
        pipe.fit(_Poison(), np.zeros(3))
    assert not _fitted_state(pipe)


@pytest.mark.parametrize("mask", [[True, False, True], np.array([True, False, True]),
                                  pd.Series([True, False, True],
                                            index=["num_a", "num_b", "other"])],
                         ids=["list", "array", "series"])
def test_a_boolean_mask_of_columns_is_refused_before_reading(mask):
    pipe = _pipe(_scaled_columns(mask), Normalizer())
    with pytest.raises(ValueError, match="boolean mask.*Private alternative"):
        pipe.fit(_Poison(), np.zeros(3))
    pipe = _pipe(_two_levels_down(_scaled_columns(mask)), Normalizer())
    with pytest.raises(ValueError, match="boolean mask"):
        pipe.fit(_Poison(), np.zeros(3))


def test_a_callable_in_a_dropped_part_is_refused_too():
    ct = ColumnTransformer([("num", BoundedScaler(bounds=(-5, 5)), ["num_a"]),
                            ("drop_some", "drop", _reads_values)],
                           remainder=BoundedScaler(bounds=(-5, 5)), sparse_threshold=0)
    with pytest.raises(ValueError, match="callable"):
        _pipe(ct, Normalizer()).fit(_Poison(), np.zeros(3))


@pytest.mark.parametrize("columns", [
    ["num_a", "num_b"], "num_a", [0, 1], np.array([0, 2]), 1, slice("num_a", "num_b"),
    slice(0, 2), pd.Index(["num_a", "other"]), make_column_selector(pattern="^num_"),
    make_column_selector(dtype_include=np.number), make_column_selector(dtype_exclude=object)],
    ids=repr)
def test_public_column_specifications_are_accepted(columns):
    problems, _ = _pipe(_scaled_columns(columns), Normalizer()).audit()
    assert problems == []
    problems, _ = _pipe(_two_levels_down(_scaled_columns(columns))).audit()
    assert problems == []


def test_a_pattern_selector_fits_and_declares_its_bound():
    df, y = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe = _pipe(_scaled_columns(make_column_selector(pattern="^num_")),
                     random_state=0).fit(df, y)
    assert pipe.data_norm_ == pytest.approx(math.sqrt(2))
    assert list(pipe[0].transformers_[0][2]) == ["num_a", "num_b"]

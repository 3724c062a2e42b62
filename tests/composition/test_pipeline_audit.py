"""The private pipeline's leak audit: what it accepts and refuses before any row is read.

* a ``ColumnTransformer`` picks its columns by public means only: names, positions, slices of
  those, or ``make_column_selector`` (names and dtypes); a callable or a boolean mask, which
  may have read the values, is refused at every nesting depth;
* a class's privacy is trusted only where it is declared: a subclass of a trusted step
  (``BoundedScaler``, ``Normalizer``, a DP estimator, ...) that does not declare its own is
  refused, and declares no row bound;
* the refusal message gives a ``FunctionTransformer`` as an alternative only with its caveat.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.pipeline import FeatureUnion, make_pipeline
from sklearn.preprocessing import Normalizer, OneHotEncoder

from skdpgd import DPLogisticRegression, PrivacyLeakWarning
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import BoundedScaler, DPStandardScaler, output_bound
from _support.poison import Poison as _Poison


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "num_a": rng.uniform(-5, 5, n),
            "num_b": rng.uniform(-5, 5, n),
            "other": rng.uniform(-5, 5, n),
        }
    )
    y = (df["num_a"] > 0).astype(int).to_numpy()
    return df, y


def _fitted_state(est):
    return {k for k in vars(est) if k.endswith("_") and not k.startswith("_")}


def _pipe(*steps, **kw):
    kw.setdefault("epsilon", 1.0)
    return make_private_pipeline(*steps, DPLogisticRegression(classes=[0, 1]), **kw)


def _scaled_columns(columns):
    return ColumnTransformer([("num", BoundedScaler(bounds=(-5, 5)), columns)], sparse_threshold=0)


def _two_levels_down(ct):
    """``ct`` inside a Pipeline inside a FeatureUnion inside a ColumnTransformer."""
    return ColumnTransformer(
        [
            (
                "outer",
                FeatureUnion([("inner", make_pipeline(ct, Normalizer()))]),
                ["num_a", "num_b", "other"],
            )
        ],
        sparse_threshold=0,
    )


# ------------------------------------------------------------------------------------------
# column specifications of a ColumnTransformer
# ------------------------------------------------------------------------------------------


def _reads_values(X):
    return X.columns[X.mean() > 0]


class _SubclassedSelector(make_column_selector):
    pass


@pytest.mark.parametrize("nest", [lambda ct: ct, _two_levels_down], ids=["top", "nested"])
@pytest.mark.parametrize(
    "columns",
    [lambda X: X.columns[X.mean() > 0], _reads_values, _SubclassedSelector(pattern="^num_")],
    ids=["lambda", "function", "subclassed-selector"],
)
def test_a_callable_column_selector_is_refused_before_reading(columns, nest):
    pipe = _pipe(nest(_scaled_columns(columns)), Normalizer())
    with pytest.raises(
        ValueError,
        match=r"callable.*Private alternative: name the columns.*"
        r"make_column_selector\(pattern=",
    ):
        pipe.fit(_Poison(), np.zeros(3))
    assert not _fitted_state(pipe)


@pytest.mark.parametrize(
    "mask",
    [
        [True, False, True],
        np.array([True, False, True]),
        pd.Series([True, False, True], index=["num_a", "num_b", "other"]),
    ],
    ids=["list", "array", "series"],
)
def test_a_boolean_mask_of_columns_is_refused_before_reading(mask):
    pipe = _pipe(_scaled_columns(mask), Normalizer())
    with pytest.raises(ValueError, match="boolean mask.*Private alternative"):
        pipe.fit(_Poison(), np.zeros(3))
    pipe = _pipe(_two_levels_down(_scaled_columns(mask)), Normalizer())
    with pytest.raises(ValueError, match="boolean mask"):
        pipe.fit(_Poison(), np.zeros(3))


def test_a_callable_in_a_dropped_part_is_refused_too():
    ct = ColumnTransformer(
        [("num", BoundedScaler(bounds=(-5, 5)), ["num_a"]), ("drop_some", "drop", _reads_values)],
        remainder=BoundedScaler(bounds=(-5, 5)),
        sparse_threshold=0,
    )
    with pytest.raises(ValueError, match="callable"):
        _pipe(ct, Normalizer()).fit(_Poison(), np.zeros(3))


@pytest.mark.parametrize(
    "columns",
    [
        ["num_a", "num_b"],
        "num_a",
        [0, 1],
        np.array([0, 2]),
        1,
        slice("num_a", "num_b"),
        slice(0, 2),
        pd.Index(["num_a", "other"]),
        make_column_selector(pattern="^num_"),
        make_column_selector(dtype_include=np.number),
        make_column_selector(dtype_exclude=object),
    ],
    ids=repr,
)
def test_public_column_specifications_are_accepted(columns):
    problems, _ = _pipe(_scaled_columns(columns), Normalizer()).audit()
    assert problems == []
    problems, _ = _pipe(_two_levels_down(_scaled_columns(columns))).audit()
    assert problems == []


def test_a_pattern_selector_fits_and_declares_its_bound():
    df, y = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe = _pipe(_scaled_columns(make_column_selector(pattern="^num_")), random_state=0).fit(
            df, y
        )
    assert pipe.data_norm_ == pytest.approx(math.sqrt(2))
    assert list(pipe[0].transformers_[0][2]) == ["num_a", "num_b"]


# ------------------------------------------------------------------------------------------
# subclasses of trusted steps
# ------------------------------------------------------------------------------------------


class _PeekingScaler(BoundedScaler):
    """Its fit reads each column's minimum and maximum from the rows it is given."""

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=float)
        self.bounds = np.column_stack([X.min(axis=0), X.max(axis=0)])
        return super().fit(X, y)


class _LooseNormalizer(Normalizer):
    """A Normalizer whose transform does not normalise."""

    def transform(self, X, copy=None):
        return np.asarray(X, dtype=float)


class _OwnLevels(OneHotEncoder):
    def fit(self, X, y=None):
        self.categories = [sorted(set(np.asarray(X)[:, 0]))]
        return super().fit(X, y)


class _WrappedLR(DPLogisticRegression):
    def fit(self, X, y, sample_weight=None):
        self.seen_max_ = float(np.max(X))
        return super().fit(X, y, sample_weight)


def test_a_subclass_of_bounded_scaler_that_overrides_fit_is_refused():
    pipe = _pipe(_PeekingScaler(bounds=(-5, 5)))
    with pytest.raises(
        ValueError,
        match=r"step '_peekingscaler' \(_PeekingScaler\): .*"
        r"subclass of BoundedScaler.*_skdpgd_privacy",
    ):
        pipe.fit(_Poison(), np.zeros(3))
    assert not _fitted_state(pipe)
    # the same inside a ColumnTransformer, and the plain BoundedScaler is still accepted
    with pytest.raises(ValueError, match="step 'columntransformer__num' \\(_PeekingScaler\\)"):
        _pipe(
            ColumnTransformer([("num", _PeekingScaler(bounds=(-5, 5)), [0, 1])], sparse_threshold=0)
        ).fit(_Poison(), np.zeros(3))
    assert _pipe(BoundedScaler(bounds=(-5, 5))).audit()[0] == []
    df, y = _frame()
    pipe = _pipe(BoundedScaler(bounds=(-5, 5)), random_state=0).fit(df, y)
    assert pipe.data_norm_ == pytest.approx(math.sqrt(3))


@pytest.mark.parametrize(
    "step",
    [_LooseNormalizer(), _OwnLevels(categories=[[0, 1]], handle_unknown="ignore")],
    ids=["normalizer", "onehotencoder"],
)
def test_a_subclass_of_a_trusted_sklearn_transformer_is_refused(step):
    with pytest.raises(
        ValueError, match=f"{type(step).__name__}.*subclass of {type(step).__mro__[1].__name__}"
    ):
        _pipe(step, Normalizer()).fit(_Poison(), np.zeros(3))


def test_a_subclass_of_a_dp_estimator_is_not_a_dp_estimator():
    with pytest.raises(ValueError, match="_WrappedLR.*not a skdpgd DP estimator.*_skdpgd_privacy"):
        make_private_pipeline(Normalizer(), _WrappedLR(classes=[0, 1]), epsilon=1.0).fit(
            _Poison(), np.zeros(3)
        )
    # nor is one that borrows the name and module of the real class
    impostor = type(
        "DPLogisticRegression",
        (DPLogisticRegression,),
        {"__module__": "skdpgd.linear_model", "fit": _WrappedLR.fit},
    )
    with pytest.raises(ValueError, match="not a skdpgd DP estimator"):
        make_private_pipeline(Normalizer(), impostor(classes=[0, 1]), epsilon=1.0).fit(
            _Poison(), np.zeros(3)
        )
    with pytest.raises(ValueError, match="step '_wrappedlr'"):
        make_private_pipeline(
            _WrappedLR(classes=[0, 1]),
            Normalizer(),
            DPLogisticRegression(classes=[0, 1]),
            epsilon=1.0,
        ).fit(_Poison(), np.zeros(3))


def test_a_subclass_declares_no_row_bound_even_when_leaks_are_allowed():
    df, y = _frame()
    X = df.to_numpy() * 100
    loose = _LooseNormalizer().fit(X)
    assert output_bound(loose) is None
    assert output_bound(_PeekingScaler(bounds=(-5, 5)).fit(X)) is None
    assert output_bound(make_pipeline(_LooseNormalizer()).fit(X)) is None
    pipe = _pipe(_LooseNormalizer(), allow_leaks=True, random_state=0)
    with pytest.warns(PrivacyLeakWarning):
        pipe.fit(X, y)
    assert pipe.data_norm_ is None  # not the 1.0 a Normalizer would have promised
    # the plain classes still declare theirs
    assert output_bound(Normalizer().fit(X)) == 1.0
    assert output_bound(BoundedScaler(bounds=(-5, 5)).fit(X)) == pytest.approx(math.sqrt(3))
    assert output_bound(DPStandardScaler(bounds=(-5, 5), epsilon=np.inf).fit(X)) == pytest.approx(
        3 * math.sqrt(3)
    )


def test_a_subclass_that_declares_its_own_privacy_is_trusted():
    class _VouchedScaler(BoundedScaler):
        """Keeps BoundedScaler's promise (halves its output) and says so in its own body."""

        _skdpgd_privacy = BoundedScaler._skdpgd_privacy

        def transform(self, X):
            return super().transform(X) * 0.5

    df, y = _frame()
    assert _pipe(_VouchedScaler(bounds=(-5, 5))).audit()[0] == []
    pipe = _pipe(_VouchedScaler(bounds=(-5, 5)), random_state=0).fit(df, y)
    assert pipe.data_norm_ == pytest.approx(math.sqrt(3))  # its bound, as it declared


# ------------------------------------------------------------------------------------------
# the alternatives the refusal suggests
# ------------------------------------------------------------------------------------------


class _Unknown(TransformerMixin, BaseEstimator):
    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return X


@pytest.mark.parametrize(
    "step", [_Unknown(), pytest.param("PCA", id="pca")], ids=["unknown", "pca"]
)
def test_the_refusal_gives_function_transformer_only_with_its_caveat(step):
    if step == "PCA":
        from sklearn.decomposition import PCA

        step = PCA(n_components=1)
    with pytest.raises(ValueError) as err:
        _pipe(step, Normalizer()).fit(_Poison(), np.zeros(3))
    message = str(err.value)
    assert "FunctionTransformer" in message
    assert "each row alone" in message and "public" in message


# ------------------------------------------------------------------------------------------
# the same audit for any estimator a private fit is given
# ------------------------------------------------------------------------------------------


def test_audit_estimator_covers_plain_pipelines_private_pipelines_and_estimators():
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from skdpgd.pipeline import audit_estimator

    final = DPLogisticRegression(classes=[0, 1], data_norm=1.0)
    assert audit_estimator(final) == []
    assert audit_estimator(Pipeline([("b", BoundedScaler(bounds=(-5, 5))), ("m", final)])) == []
    assert audit_estimator(_pipe(BoundedScaler(bounds=(-5, 5)))) == []
    leaky = audit_estimator(Pipeline([("s", StandardScaler()), ("m", final)]))
    assert len(leaky) == 1 and leaky[0].startswith("step 's' (StandardScaler)")
    assert (
        audit_estimator(_pipe(StandardScaler(), Normalizer()))
        == _pipe(StandardScaler(), Normalizer()).audit()[0]
    )
    # a final step or an estimator that is no DP estimator is one more problem
    not_dp = audit_estimator(
        Pipeline(
            [("b", BoundedScaler(bounds=(-5, 5))), ("m", _WrappedLR(classes=[0, 1], data_norm=1.0))]
        )
    )
    assert len(not_dp) == 1 and "not a skdpgd DP estimator" in not_dp[0]
    assert "not a skdpgd DP estimator" in audit_estimator(Normalizer())[0]

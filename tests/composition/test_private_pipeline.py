"""skdpgd.pipeline: a pipeline whose epsilon covers every step."""

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.exceptions import NotFittedError
from sklearn.impute import SimpleImputer
from sklearn.model_selection import cross_val_score
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
    Normalizer,
    OneHotEncoder,
    RobustScaler,
    StandardScaler,
    TargetEncoder,
)
from sklearn.utils.validation import check_is_fitted

from skdpgd import (
    BudgetExceededError,
    DPLogisticRegression,
    DPRidge,
    DPSGDClassifier,
    PrivacyBudget,
    PrivacyLeakWarning,
)
from skdpgd.accounting import gdp_epsilon, gdp_mu
from skdpgd.pipeline import PrivatePipeline, make_private_pipeline
from skdpgd.policy import DP_TRANSFORMER_SHARE
from skdpgd.preprocessing import BoundedScaler, DPStandardScaler, schema_transformer
from _support.poison import Poison as _Poison

SCHEMA = {
    "age": (18, 100),
    "income": (0, 200_000),
    "job": ["clerk", "nurse", "pilot"],
    "region": ["N", "S", "E", "W"],
}


def _frame(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.uniform(10, 110, n),
            "income": rng.lognormal(10.5, 0.6, n),
            "job": rng.choice(["clerk", "nurse", "pilot", "astronaut", None], n),
            "region": rng.choice(["N", "S", "E"], n),
        }
    )
    y = ((df["age"] > 50) ^ (df["job"] == "pilot")).astype(int).to_numpy()
    df.loc[::7, "age"] = np.nan
    df.loc[::9, "job"] = None
    return df, y


NUMERIC = ColumnTransformer(
    [
        (
            "num",
            DPStandardScaler(bounds={"age": (18, 100), "income": (0, 200_000)}),
            ["age", "income"],
        ),
        (
            "cat",
            OneHotEncoder(categories=[["N", "S", "E", "W"]], handle_unknown="ignore"),
            ["region"],
        ),
    ],
    sparse_threshold=0,
)


def _spending_pipeline(**kw):
    kw.setdefault("epsilon", 1.0)
    kw.setdefault("random_state", 0)
    return make_private_pipeline(clone(NUMERIC), DPLogisticRegression(classes=[0, 1]), **kw)


def _composed_epsilon(releases, delta, relation="replace"):
    inv2 = sum(float(np.sum(r.multipliers_under(relation) ** -2.0)) for r in releases)
    return gdp_epsilon(delta, math.sqrt(inv2))


def _fitted_state(est):
    return {k for k in vars(est) if k.endswith("_") and not k.startswith("_")}


# ------------------------------------------------------------------------------------------
# accounting
# ------------------------------------------------------------------------------------------


def test_epsilon_is_the_closed_form_composition_of_the_steps():
    df, y = _frame()
    df = df.fillna({"age": 50.0})
    pipe = _spending_pipeline(delta=1e-6).fit(df, y)
    names = [r.name for r in pipe.releases_]
    assert any(n.startswith("columntransformer__num: column sums") for n in names)
    assert any(n.startswith("dplogisticregression: ") for n in names)
    closed = _composed_epsilon(pipe.releases_, 1e-6)
    assert pipe.epsilon_ == pytest.approx(closed, rel=1e-9)
    assert pipe.epsilon_ <= 1.0 and pipe.epsilon_ == pytest.approx(1.0, rel=1e-6)
    assert pipe.delta_ == 1e-6
    # the default split: the DP transformer spends DP_TRANSFORMER_SHARE of mu^2
    scaler = pipe[0].named_transformers_["num"]
    mu_scaler = math.sqrt(sum(float(np.sum(r.multipliers**-2.0)) for r in scaler.releases_))
    assert (mu_scaler / gdp_mu(1.0, 1e-6)) ** 2 == pytest.approx(DP_TRANSFORMER_SHARE, rel=1e-6)
    assert scaler.epsilon_ == pytest.approx(pipe.step_epsilons_["columntransformer__num"])


def test_a_budget_just_below_refuses_before_reading_and_sets_nothing():
    df, y = _frame()
    df = df.fillna({"age": 50.0})
    spent = _spending_pipeline(delta=1e-6).fit(df, y).epsilon_
    budget = PrivacyBudget(spent * (1 - 1e-6), 1e-6, neighbouring="replace")
    pipe = _spending_pipeline(delta=1e-6, budget=budget)
    with pytest.raises(BudgetExceededError):
        pipe.fit(_Poison(), y)
    assert budget.charges == [] and budget.spent_epsilon() == 0.0
    assert not _fitted_state(pipe)
    with pytest.raises(NotFittedError):
        check_is_fitted(pipe[0])
    # a budget that holds it admits it and is charged exactly what the pipeline reports
    budget = PrivacyBudget(1.0, 1e-6, neighbouring="replace")
    pipe = _spending_pipeline(delta=1e-6, budget=budget).fit(df, y)
    assert budget.spent_epsilon() == pytest.approx(pipe.epsilon_, rel=1e-9)
    with pytest.raises(BudgetExceededError):  # nothing left for a second one
        _spending_pipeline(delta=1e-6, budget=budget).fit(df, y)


def test_user_shares_and_add_remove_budget():
    df, y = _frame()
    df = df.fillna({"age": 50.0})
    budget = PrivacyBudget(2.0, 1e-6)  # add/remove-one
    pipe = _spending_pipeline(
        delta=1e-6,
        budget=budget,
        shares={"columntransformer__num": 1.0, "dplogisticregression": 3.0},
    ).fit(df, y)
    assert pipe.neighbouring_ == "add/remove-one"
    mu = gdp_mu(1.0, 1e-6)
    scaler = pipe[0].named_transformers_["num"]
    mu_s = math.sqrt(sum(float(np.sum(r.multipliers**-2.0)) for r in scaler.releases_))
    assert (mu_s / mu) ** 2 == pytest.approx(0.25, rel=1e-6)
    assert pipe.epsilon_ == pytest.approx(
        _composed_epsilon(pipe.releases_, 1e-6, "add_remove"), rel=1e-9
    )
    assert budget.spent_epsilon() == pytest.approx(pipe.epsilon_, rel=1e-9)
    with pytest.raises(ValueError, match="shares"):
        _spending_pipeline(shares={"dplogisticregression": 1.0}).fit(df, y)


# ------------------------------------------------------------------------------------------
# refusals
# ------------------------------------------------------------------------------------------


class _ThirdParty(TransformerMixin, BaseEstimator):
    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return X


LEAKING = [
    StandardScaler(),
    MinMaxScaler(),
    RobustScaler(),
    PCA(n_components=2),
    SimpleImputer(strategy="mean"),
    SimpleImputer(strategy="median"),
    SimpleImputer(strategy="most_frequent"),
    SimpleImputer(strategy="constant", add_indicator=True),
    OneHotEncoder(),
    OneHotEncoder(categories=[["a"]]),  # handle_unknown='error'
    OneHotEncoder(categories=[["a"]], handle_unknown="ignore", min_frequency=5),
    TargetEncoder(),
    _ThirdParty(),
    FunctionTransformer(np.log1p, inverse_func=np.expm1),
]


@pytest.mark.parametrize("leaky", LEAKING, ids=lambda e: repr(e)[:40])
def test_every_leaking_transformer_is_refused_before_reading(leaky):
    final = DPLogisticRegression(classes=[0, 1])
    name = type(leaky).__name__.lower()
    pipe = make_private_pipeline(clone(leaky), Normalizer(), final, epsilon=1.0)
    with pytest.raises(ValueError, match=f"step '{name}'.*Private alternative"):
        pipe.fit(_Poison(), np.zeros(3))
    assert not _fitted_state(pipe)
    # nested inside a ColumnTransformer: the path names it
    ct = ColumnTransformer([("part", clone(leaky), [0])], sparse_threshold=0)
    pipe = make_private_pipeline(ct, Normalizer(), final, epsilon=1.0)
    with pytest.raises(ValueError, match="step 'columntransformer__part'"):
        pipe.fit(_Poison(), np.zeros(3))


def test_allow_leaks_warns_and_fits():
    X = np.random.default_rng(0).normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    pipe = make_private_pipeline(
        StandardScaler(),
        Normalizer(),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=1.0,
        allow_leaks=True,
        random_state=0,
    )
    with pytest.warns(PrivacyLeakWarning, match="standardscaler"):
        pipe.fit(X, y)
    assert pipe.data_norm_ == 1.0


def test_accepted_steps_and_structure_errors():
    X = np.random.default_rng(0).normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_private_pipeline(
            FunctionTransformer(np.tanh),
            SimpleImputer(strategy="constant", fill_value=0.0),
            Normalizer(),
            DPLogisticRegression(classes=[0, 1]),
            epsilon=1.0,
        ).fit(X, y)
    with pytest.raises(ValueError, match="not a skdpgd DP estimator"):
        make_private_pipeline(Normalizer(), epsilon=1.0).fit(X, y)
    with pytest.raises(ValueError, match="only be the final step"):
        make_private_pipeline(
            DPLogisticRegression(), Normalizer(), DPLogisticRegression(), epsilon=1.0
        ).fit(X, y)
    # a function whose output has no public bound, and no data_norm: refused
    pipe = make_private_pipeline(
        FunctionTransformer(np.tanh), DPLogisticRegression(classes=[0, 1]), epsilon=1.0
    )
    with pytest.raises(ValueError, match="declare no public row bound"):
        pipe.fit(_Poison(), y)
    assert not _fitted_state(pipe)
    with pytest.raises(ValueError, match="sparse_threshold"):
        make_private_pipeline(
            ColumnTransformer(
                [("c", OneHotEncoder(categories=[[0, 1]], handle_unknown="ignore"), [0])]
            ),
            DPLogisticRegression(classes=[0, 1]),
            epsilon=1.0,
        ).fit(X, y)


# ------------------------------------------------------------------------------------------
# the row bound, the user's objects, scikit-learn behaviour
# ------------------------------------------------------------------------------------------


def test_declared_bound_is_passed_on_without_touching_the_user_estimator():
    df, y = _frame()
    final = DPLogisticRegression(classes=[0, 1])
    before = final.get_params()
    ct = schema_transformer(SCHEMA)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no PrivacyLeakWarning about data_norm
        pipe = make_private_pipeline(ct, final, epsilon=1.0, random_state=0).fit(df, y)
    assert pipe.data_norm_ == pytest.approx(1.0)
    assert pipe[-1].data_norm_ == pytest.approx(1.0)
    assert pipe[-1].data_norm is None  # the fitted copy keeps the user's parameters
    assert final.get_params() == before and not _fitted_state(final)
    assert not _fitted_state(ct)
    assert pipe[-1] is not final
    # a useful model (majority class 0.544): mean over three noise draws, one draw is noisy
    scores = [pipe.score(df, y)] + [
        make_private_pipeline(
            schema_transformer(SCHEMA),
            DPLogisticRegression(classes=[0, 1]),
            epsilon=1.0,
            random_state=seed,
        )
        .fit(df, y)
        .score(df, y)
        for seed in (1, 2)
    ]
    assert np.mean(scores) > 0.7
    # a data_norm the user gives wins
    pipe = make_private_pipeline(
        schema_transformer(SCHEMA),
        DPLogisticRegression(classes=[0, 1], data_norm=0.5),
        epsilon=1.0,
        random_state=0,
    ).fit(df, y)
    assert pipe.data_norm_ is None and pipe[-1].data_norm_ == 0.5


def test_rows_fed_to_the_estimator_respect_the_bound():
    df, y = _frame()
    df.loc[::3, "income"] = 1e12
    pipe = make_private_pipeline(
        schema_transformer(SCHEMA),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=1.0,
        random_state=0,
    ).fit(df, y)
    rows = pipe[:-1].transform(df)
    assert np.linalg.norm(rows, axis=1).max() <= pipe.data_norm_


def test_reproducible_clone_pickle_and_cross_validation():
    df, y = _frame()
    df = df.fillna({"age": 50.0})
    a = _spending_pipeline(random_state=4).fit(df, y)
    b = _spending_pipeline(random_state=4).fit(df, y)
    np.testing.assert_array_equal(a[-1].coef_, b[-1].coef_)
    c = clone(a)
    assert not _fitted_state(c) and c.get_params()["epsilon"] == 1.0
    loaded = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(loaded.predict(df), a.predict(df))
    assert loaded.epsilon_ == a.epsilon_
    # room for exactly three pipelines of epsilon 1 (composed in Gaussian DP)
    room = gdp_epsilon(1e-6, math.sqrt(3) * gdp_mu(1.0, 1e-6)) * (1 + 1e-9)
    budget = PrivacyBudget(room, 1e-6, neighbouring="replace")
    scores = cross_val_score(
        _spending_pipeline(delta=1e-6, budget=budget, random_state=None), df, y, cv=3
    )
    assert scores.shape == (3,) and np.all(scores > 0.5)
    # three pipelines of epsilon 1 composed exactly on the shared ledger
    inv2 = sum(float(np.sum(z**-2.0)) for _, z, _ in budget.charges)
    assert budget.spent_epsilon() == pytest.approx(gdp_epsilon(1e-6, math.sqrt(inv2)))
    assert budget.spent_epsilon() <= room
    n_charges = len(budget.charges)
    with pytest.raises(BudgetExceededError):
        _spending_pipeline(delta=1e-6, budget=budget).fit(_Poison(), y)
    assert len(budget.charges) == n_charges


def test_ridge_and_minibatch_final_steps():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(3000, 3))
    yr = X[:, 0] / 10 + rng.normal(0, 0.1, 3000)
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=(0, 10)), DPRidge(y_bound=2.0), epsilon=1.0, random_state=0
    ).fit(X, yr)
    assert pipe.epsilon_ <= 1.0 and pipe.score(X, yr) > 0.3
    yc = (X[:, 0] > 5).astype(int)
    sgd = make_private_pipeline(
        BoundedScaler(bounds=(0, 10)), DPSGDClassifier(classes=[0, 1]), epsilon=1.0, random_state=0
    ).fit(X, yc)
    assert sgd.neighbouring_ == "add/remove-one" and sgd.epsilon_ <= 1.0
    assert sgd.data_norm_ == pytest.approx(math.sqrt(3))
    with pytest.raises(ValueError, match="not supported yet"):
        make_private_pipeline(
            DPStandardScaler(bounds=(0, 10)), DPSGDClassifier(classes=[0, 1]), epsilon=1.0
        ).fit(X, yc)


def test_private_pipeline_is_a_pipeline():
    pipe = make_private_pipeline(BoundedScaler(bounds=(0, 1)), DPLogisticRegression(), epsilon=0.5)
    assert isinstance(pipe, PrivatePipeline)
    assert pipe.get_params()["epsilon"] == 0.5
    assert "boundedscaler__bounds" in pipe.get_params()


def test_free_steps_and_one_estimator_equal_the_hand_written_fit():
    """A pipeline of public-bound steps and one estimator is exactly the estimator fitted on
    the transformed rows with the declared data_norm (same noise: same random_state)."""
    df, y = _frame()
    pipe = make_private_pipeline(
        schema_transformer(SCHEMA),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=0.5,
        delta=1e-6,
        random_state=7,
    ).fit(df, y)
    rows = schema_transformer(SCHEMA).fit_transform(df)
    alone = DPLogisticRegression(
        classes=[0, 1],
        epsilon=pipe.step_epsilons_["dplogisticregression"],
        delta=1e-6,
        data_norm=pipe.data_norm_,
        random_state=7,
        budget=PrivacyBudget(1.0, 1e-6, neighbouring="replace"),
    ).fit(rows, y)
    np.testing.assert_allclose(pipe[-1].coef_, alone.coef_, rtol=1e-10, atol=1e-12)
    assert pipe.epsilon_ == pytest.approx(alone.epsilon_, rel=1e-9)


@pytest.mark.parametrize("missing", ["constant", "indicator"])
def test_cells_outside_the_schema_fit_as_missing_values(missing):
    """A string in a numeric column and a number in a text column neither make the fit fail
    nor change it: the fitted model is the one of the frame with those cells missing."""
    df, y = _frame(n=800)
    odd, gone = df.astype({"age": object, "job": object}), df.copy()
    odd.loc[3, "age"], gone.loc[3, "age"] = "forty", np.nan
    odd.loc[4, "job"], gone.loc[4, "job"] = 7, None
    odd.loc[5, "income"], gone.loc[5, "income"] = np.inf, np.nan

    def fit(frame):
        pipe = make_private_pipeline(
            schema_transformer(SCHEMA, missing=missing),
            DPLogisticRegression(classes=[0, 1]),
            epsilon=1.0,
            random_state=3,
        )
        assert pipe.audit() == ([], ["dplogisticregression"])
        return pipe.fit(frame, y)

    a, b = fit(odd), fit(gone)
    np.testing.assert_array_equal(a[-1].coef_, b[-1].coef_)
    np.testing.assert_array_equal(a[-1].intercept_, b[-1].intercept_)
    assert a.epsilon_ == b.epsilon_ and a.data_norm_ == b.data_norm_ == pytest.approx(1.0)
    np.testing.assert_array_equal(a[:-1].transform(odd), b[:-1].transform(gone))


def test_dp_scaler_nested_in_column_transformer_pipeline_and_feature_union():
    from sklearn.pipeline import FeatureUnion, Pipeline

    df, y = _frame()
    num = Pipeline(
        [
            ("fill", SimpleImputer(strategy="constant", fill_value=59.0)),
            ("scale", DPStandardScaler(bounds=(18, 100), clip_std=2.0)),
        ]
    )
    ct = ColumnTransformer(
        [
            ("age", num, ["age"]),
            (
                "job",
                OneHotEncoder(categories=[["clerk", "nurse", "pilot"]], handle_unknown="ignore"),
                ["job"],
            ),
        ],
        sparse_threshold=0,
    )
    pipe = make_private_pipeline(
        ct, DPLogisticRegression(classes=[0, 1]), epsilon=1.0, delta=1e-6, random_state=0
    ).fit(df, y)
    assert set(pipe.step_epsilons_) == {"columntransformer__age__scale", "dplogisticregression"}
    assert pipe.data_norm_ == pytest.approx(math.sqrt(4 + 1))
    assert pipe.epsilon_ == pytest.approx(_composed_epsilon(pipe.releases_, 1e-6), rel=1e-9)
    fitted = pipe[0].named_transformers_["age"]["scale"]
    assert fitted.budget is None and fitted.epsilon == 1.0  # the user's parameters back
    assert fitted.epsilon_ == pytest.approx(pipe.step_epsilons_["columntransformer__age__scale"])
    X = np.random.default_rng(0).uniform(0, 10, size=(500, 2))
    yy = (X[:, 0] > 5).astype(int)
    fu = FeatureUnion(
        [("a", DPStandardScaler(bounds=(0, 10))), ("b", BoundedScaler(bounds=(0, 10)))]
    )
    two = make_private_pipeline(
        fu, DPLogisticRegression(classes=[0, 1]), epsilon=1.0, delta=1e-6, random_state=0
    ).fit(X, yy)
    assert two.data_norm_ == pytest.approx(math.sqrt(9 * 2 + 2))
    assert two.epsilon_ == pytest.approx(_composed_epsilon(two.releases_, 1e-6), rel=1e-9)


@pytest.mark.parametrize(
    "kw", [{"epsilon": 0}, {"epsilon": -1.0}, {"delta": 1.5}, {"neighbouring": "other"}]
)
def test_bad_pipeline_parameters(kw):
    X = np.random.default_rng(0).normal(size=(50, 2))
    y = (X[:, 0] > 0).astype(int)
    params = {"epsilon": 1.0, **kw}
    pipe = make_private_pipeline(Normalizer(), DPLogisticRegression(classes=[0, 1]), **params)
    with pytest.raises(ValueError):
        pipe.fit(X, y)
    assert not _fitted_state(pipe)


def test_final_step_reading_labels_or_target_bound_is_refused():
    y = np.array([0, 1, 0])
    with pytest.raises(ValueError, match="classes=None"):
        make_private_pipeline(Normalizer(), DPLogisticRegression(), epsilon=1.0).fit(_Poison(), y)
    with pytest.raises(ValueError, match="y_bound=None"):
        make_private_pipeline(Normalizer(), DPRidge(), epsilon=1.0).fit(_Poison(), y)


def test_step_with_its_own_budget_or_relation_is_refused():
    X = np.random.default_rng(0).normal(size=(50, 2))
    y = (X[:, 0] > 0).astype(int)
    own = PrivacyBudget(1.0, 1e-6)
    with pytest.raises(ValueError, match="its own budget"):
        make_private_pipeline(
            Normalizer(), DPLogisticRegression(classes=[0, 1], budget=own), epsilon=1.0
        ).fit(_Poison(), y)
    with pytest.raises(ValueError, match="neighbouring"):
        make_private_pipeline(
            Normalizer(),
            DPLogisticRegression(classes=[0, 1], neighbouring="add_remove"),
            epsilon=1.0,
        ).fit(_Poison(), y)
    assert own.charges == []


def test_pickled_pipeline_with_a_budget_is_detached_and_minibatch_charges_the_budget():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(1500, 3))
    y = (X[:, 0] > 5).astype(int)
    budget = PrivacyBudget(3.0, 1e-6)
    pipe = make_private_pipeline(
        BoundedScaler(bounds=(0, 10)),
        DPSGDClassifier(classes=[0, 1]),
        epsilon=1.0,
        delta=1e-6,
        budget=budget,
        random_state=0,
    ).fit(X, y)
    assert budget.spent_epsilon() > 0 and pipe.releases_
    assert all(r.name.startswith("dpsgdclassifier: ") for r in pipe.releases_)
    loaded = pickle.loads(pickle.dumps(pipe))
    assert loaded.budget.detached
    np.testing.assert_array_equal(loaded.predict(X), pipe.predict(X))
    with pytest.raises(RuntimeError, match="detached"):
        loaded.fit(X, y)
    assert loaded.epsilon_ == pipe.epsilon_  # the failed refit set nothing new


def test_a_dp_scaler_whose_column_selector_selects_nothing_is_no_error():
    """A DPStandardScaler branch with no numeric columns is skipped by the ColumnTransformer:
    it releases nothing and declares no bound; the other parts' bound goes to the model."""
    import pandas as pd
    from sklearn.compose import ColumnTransformer, make_column_selector
    from sklearn.preprocessing import OneHotEncoder

    from skdpgd import DPLogisticRegression
    from skdpgd.pipeline import make_private_pipeline
    from skdpgd.preprocessing import DPStandardScaler

    df = pd.DataFrame({"a": ["x", "y"] * 50, "c": ["u", "v", "w", "u"] * 25})
    y = np.arange(100) % 2
    ct = ColumnTransformer(
        [
            ("num", DPStandardScaler(bounds=(0, 1)), make_column_selector(dtype_include=np.number)),
            (
                "cat",
                OneHotEncoder(categories=[["x", "y"], ["u", "v", "w"]], handle_unknown="ignore"),
                ["a", "c"],
            ),
        ],
        remainder="drop",
        sparse_threshold=0,
    )
    pipe = make_private_pipeline(
        ct, DPLogisticRegression(classes=[0, 1]), epsilon=1.0, random_state=0
    ).fit(df, y)
    assert pipe.data_norm_ == pytest.approx(np.sqrt(2.0))
    assert pipe.epsilon_ <= 1.0
    assert all(not r.name.startswith("columntransformer") for r in pipe.releases_)


def test_a_private_pipeline_ends_with_the_network():
    """The pipeline passes its public row bound to the network's data_norm, as to the linear
    models (it once said "Invalid parameter 'data_norm'")."""
    pytest.importorskip("torch")
    from skdpgd import DPMLPClassifier
    from skdpgd.pipeline import make_private_pipeline
    from skdpgd.preprocessing import BoundedScaler

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(300, 4))
    y = (X[:, 0] > 0.5).astype(int)
    pipe = make_private_pipeline(
        BoundedScaler(bounds=(0, 1)),
        DPMLPClassifier(classes=[0, 1], max_iter=5),
        epsilon=1.0,
        random_state=0,
    ).fit(X, y)
    assert (
        pipe.epsilon_ <= 1.0 and pipe.data_norm_ == pipe[-1].data_norm_ == 2.0
    )  # 4 columns in [-1, 1]
    assert pipe.predict(X).shape == (300,)


# --- a step's own epsilon or delta: the pipeline's governs, and says so -------------------
@pytest.mark.parametrize("own", [{"epsilon": 5.0}, {"delta": 1e-7}])
def test_a_step_with_its_own_budget_setting_is_refused(own):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    step = DPLogisticRegression(classes=[0, 1], **own)
    pipe = make_private_pipeline(BoundedScaler(bounds=(-1, 1)), step, epsilon=1.0)
    (key,) = own
    with pytest.raises(ValueError, match=f"its own {key}=.*pipeline's {key}"):
        pipe.fit(X, y)
    assert not hasattr(pipe, "epsilon_")


def test_a_step_at_its_default_budget_settings_stays_silent():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pipe = make_private_pipeline(
            BoundedScaler(bounds=(-1, 1)),
            DPLogisticRegression(classes=[0, 1]),
            epsilon=2.0,
            random_state=0,
        ).fit(X, y)
    assert pipe.step_epsilons_ == {"dplogisticregression": pytest.approx(2.0, rel=1e-6)}
    assert pipe[-1].epsilon_ == pytest.approx(2.0, rel=1e-6)


def test_make_private_pipeline_defaults_to_epsilon_one():
    pipe = make_private_pipeline(BoundedScaler(bounds=(-1, 1)), DPRidge(y_bound=1.0))
    assert pipe.epsilon == 1.0

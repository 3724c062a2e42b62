"""The privacy capability in scikit-learn's tags: what each class declares, never inherited,
and what the leak audit of private pipelines and of the private search reads."""

import dataclasses
import warnings

import numpy as np
import pytest
import sklearn.utils
from sklearn.preprocessing import FunctionTransformer, Normalizer, StandardScaler
from sklearn.utils import get_tags

from skdpgd import (
    DPElasticNet,
    DPHuberRegressor,
    DPLinearSVC,
    DPLogisticRegression,
    DPMLPClassifier,
    DPPoissonRegressor,
    DPRidge,
    DPSGDClassifier,
    DPSGDRegressor,
    DPTweedieRegressor,
    PrivacyBudget,
)
from skdpgd._core.capability import (
    DP_ESTIMATOR,
    DP_MINIBATCH_ESTIMATOR,
    DP_TRANSFORMER,
    PUBLIC_TRANSFORMER,
    PrivacyTags,
    Tags,
    privacy_capability,
)
from skdpgd._compat import tags_as
from skdpgd.decomposition import DPPCA
from skdpgd.model_selection import PrivateRandomSearchCV
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import BoundedScaler, DPStandardScaler
from _support.poison import Poison

DECLARED = [
    (DPLogisticRegression, DP_ESTIMATOR),
    (DPRidge, DP_ESTIMATOR),
    (DPElasticNet, DP_ESTIMATOR),
    (DPPoissonRegressor, DP_ESTIMATOR),
    (DPTweedieRegressor, DP_ESTIMATOR),
    (DPHuberRegressor, DP_ESTIMATOR),
    (DPLinearSVC, DP_ESTIMATOR),
    (DPSGDClassifier, DP_MINIBATCH_ESTIMATOR),
    (DPSGDRegressor, DP_MINIBATCH_ESTIMATOR),
    (DPMLPClassifier, DP_MINIBATCH_ESTIMATOR),
    (BoundedScaler, PUBLIC_TRANSFORMER),
    (DPStandardScaler, DP_TRANSFORMER),
    (DPPCA, DP_TRANSFORMER),
]


#: what each estimator's tags say it reads from the rows when these parameters are None (the
#: leak audit refuses exactly those); None: not declared (the audit's safe side)
READS_IF_NONE = {
    "DPLogisticRegression": ("classes",),
    "DPRidge": ("y_bound",),
    "DPPoissonRegressor": ("y_bound",),
    "DPTweedieRegressor": ("y_bound",),
    "DPElasticNet": ("y_bound",),
    "DPHuberRegressor": (),
    "DPLinearSVC": ("classes",),
    "DPSGDRegressor": ("y_bound",),
}


@pytest.mark.parametrize("cls, capability", DECLARED, ids=lambda v: getattr(v, "__name__", v))
def test_get_tags_shows_the_capability_each_class_declares(cls, capability):
    tags = get_tags(cls())
    assert isinstance(tags, Tags) and isinstance(tags, sklearn.utils.Tags)
    assert tags.privacy == PrivacyTags(
        capability=capability, reads_if_none=READS_IF_NONE.get(cls.__name__)
    )
    assert privacy_capability(cls()) == capability
    # scikit-learn's own entries are still there (the mixins' and the class's)
    if capability in (PUBLIC_TRANSFORMER, DP_TRANSFORMER):
        assert tags.transformer_tags is not None
    else:
        assert tags.estimator_type in ("classifier", "regressor")


def test_the_privacy_entry_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_tags(DPRidge()).privacy.capability = None


def test_tags_as_keeps_every_scikit_learn_field():
    base = sklearn.utils.Tags(
        estimator_type="regressor",
        target_tags=sklearn.utils.TargetTags(required=True),
        non_deterministic=True,
        requires_fit=False,
    )
    base.input_tags.sparse = True
    out = tags_as(base, Tags, privacy=PrivacyTags(DP_ESTIMATOR))
    for field in dataclasses.fields(sklearn.utils.Tags):
        assert getattr(out, field.name) == getattr(base, field.name), field.name
    assert out.privacy.capability == DP_ESTIMATOR
    assert Tags(estimator_type=None, target_tags=base.target_tags).privacy == PrivacyTags(None)


def test_objects_whose_tags_carry_no_privacy_entry_declare_nothing():
    assert not hasattr(get_tags(StandardScaler()), "privacy")
    for obj in (StandardScaler(), Normalizer(), None, "passthrough", "drop", DPRidge, object()):
        assert privacy_capability(obj) is None

    class Broken(DPRidge):
        _skdpgd_privacy = DP_ESTIMATOR

        def __sklearn_tags__(self):
            raise RuntimeError("no tags")

    assert privacy_capability(Broken()) is None  # unreadable tags: audited as unknown


# ---- subclasses: trusted only for what they declare themselves ---------------------------


class _PeekingScaler(DPStandardScaler):
    """Overrides fit and reads the rows' largest value; declares nothing."""

    def fit(self, X, y=None):
        self.peeked_ = float(np.max(np.abs(np.asarray(X))))
        return super().fit(X, y)


class _PeekingScalerWithTags(_PeekingScaler):
    """Calls super().__sklearn_tags__() (and changes a tag) but declares nothing."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class _VouchedScaler(DPStandardScaler):
    """Keeps DPStandardScaler's promise and says so in its own body."""

    _skdpgd_privacy = DPStandardScaler._skdpgd_privacy

    def fit(self, X, y=None):
        return super().fit(X, y)


class _PeekingLR(DPLogisticRegression):
    def fit(self, X, y, sample_weight=None):
        self.peeked_ = float(np.max(np.abs(np.asarray(X))))
        return super().fit(X, y, sample_weight)


class _VouchedLR(DPLogisticRegression):
    _skdpgd_privacy = DP_ESTIMATOR

    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y, sample_weight)


class _TagsOnlyLR(DPLogisticRegression):
    """Declares in its tags alone (no class attribute): the tags are what the audit reads."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        return dataclasses.replace(tags, privacy=PrivacyTags(DP_ESTIMATOR))


class _AttributeButPlainTags(DPLogisticRegression):
    """Has the attribute but returns tags without the privacy entry: not trusted."""

    _skdpgd_privacy = DP_ESTIMATOR

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        fields = dataclasses.fields(sklearn.utils.Tags)
        return sklearn.utils.Tags(**{f.name: getattr(tags, f.name) for f in fields})


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = (X[:, 0] > 0).astype(int)
    return X, y


@pytest.mark.parametrize("cls", [_PeekingScaler, _PeekingScalerWithTags])
def test_a_dp_scaler_subclass_that_declares_nothing_is_refused(cls):
    assert get_tags(cls(bounds=(-1, 1))).privacy.capability is None
    pipe = make_private_pipeline(
        cls(bounds=(-1, 1)), DPLogisticRegression(classes=[0, 1]), epsilon=1.0
    )
    with pytest.raises(ValueError, match=f"{cls.__name__}.*subclass of DPStandardScaler"):
        pipe.fit(Poison(), np.zeros(3))
    assert not [k for k in vars(pipe) if k.endswith("_") and not k.startswith("_")]


def test_a_dp_scaler_subclass_that_declares_is_accepted():
    assert get_tags(_VouchedScaler(bounds=(-1, 1))).privacy.capability == DP_TRANSFORMER
    X, y = _data()
    pipe = make_private_pipeline(
        _VouchedScaler(bounds=(-1, 1)),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=1.0,
        random_state=0,
    )
    # accepted, and a spender the pipeline splits its budget with (as DPStandardScaler)
    assert pipe.audit() == ([], ["_vouchedscaler", "dplogisticregression"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no leak warning either
        pipe.fit(X, y)
    assert 0 < pipe.epsilon_ <= 1.0 + 1e-9


@pytest.mark.parametrize("cls", [_PeekingLR, _AttributeButPlainTags])
def test_a_dp_estimator_subclass_without_a_tag_is_refused_by_pipeline_and_search(cls):
    assert privacy_capability(cls()) is None
    why = "subclass of DPLogisticRegression" if cls is _PeekingLR else "returns tags without"
    with pytest.raises(ValueError, match=f"{cls.__name__}.*not a skdpgd DP estimator.*{why}"):
        make_private_pipeline(Normalizer(), cls(classes=[0, 1]), epsilon=1.0).fit(
            Poison(), np.zeros(3)
        )
    budget = PrivacyBudget(10.0, 1e-5, neighbouring="replace")
    search = PrivateRandomSearchCV(
        cls(data_norm=1.0, classes=[0, 1]), {"schedule": ["auto"]}, budget=budget
    )
    with pytest.raises(ValueError, match=f"{cls.__name__}.*not a skdpgd DP estimator"):
        search.fit(Poison(), Poison())
    assert budget.spent_epsilon() == 0.0 and not budget.rdp_charges


@pytest.mark.parametrize("cls", [_VouchedLR, _TagsOnlyLR])
def test_a_dp_estimator_subclass_that_declares_is_accepted_by_pipeline_and_search(cls):
    assert privacy_capability(cls()) == DP_ESTIMATOR
    X, y = _data()
    pipe = make_private_pipeline(
        Normalizer(), cls(classes=[0, 1]), epsilon=1.0, random_state=0
    ).fit(X, y)
    assert 0 < pipe.epsilon_ <= 1.0 + 1e-9
    search = PrivateRandomSearchCV(
        cls(data_norm=1.0, classes=[0, 1]),
        {"schedule": ["auto", "uniform"]},
        epsilon=1.0,
        n_iter=2,
        random_state=0,
    ).fit(X, y)
    assert type(search.best_estimator_) is cls
    assert 0 < search.epsilon_ <= 1.0 + 1e-9


def test_the_pipeline_reads_the_tag_to_pick_the_minibatch_rules():
    # a DP-SGD final step is accounted in Renyi DP: with a DP transformer too it is refused
    # (read from its tags' DP_MINIBATCH_ESTIMATOR); a Normalizer before it is accepted
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=(0, 10)), DPSGDClassifier(classes=[0, 1]), epsilon=1.0
    )
    with pytest.raises(ValueError, match="Renyi DP.*not supported yet"):
        pipe.fit(Poison(), Poison())
    ok = make_private_pipeline(
        FunctionTransformer(), DPSGDClassifier(classes=[0, 1], data_norm=1.0), epsilon=1.0
    )
    assert ok.audit()[0] == []

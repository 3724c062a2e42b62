"""scikit-learn's estimator contract, run over every public estimator."""

import importlib.util

import numpy as np
from sklearn.utils.estimator_checks import parametrize_with_checks

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
)

HAS_TORCH = importlib.util.find_spec("torch") is not None

# Each expected failure with the reason a maintainer can check.
_WEIGHTS_ABOVE_ONE = (
    "uses sample weights above 1; the privacy proof bounds each example's contribution by the "
    "clip norm only for weights in [0, 1], so such weights are rejected with a ValueError"
)
_EXPECTED_FAILURES = {
    "check_sample_weights_list": _WEIGHTS_ABOVE_ONE,
    "check_sample_weights_not_overwritten": _WEIGHTS_ABOVE_ONE,
    "check_sample_weight_equivalence_on_sparse_data": (
        _WEIGHTS_ABOVE_ONE + " (the sparse variant of the check below)"
    ),
    "check_sample_weight_equivalence_on_dense_data": (
        _WEIGHTS_ABOVE_ONE + "; besides, integer weights cannot equal repeated rows under DP: "
        "the noise is calibrated to N, which repeating rows changes"
    ),
}


_CLASS_WEIGHT_EXPECTED_FAILURES = {
    "check_class_weight_classifiers": (
        "fits 50 rows of very noisy blobs with class_weight={0: 1000, 1: 1e-4} and max_iter=1000 "
        "at our default epsilon=1 and asserts 87% of predictions are class 0. The weights are "
        "rescaled into [0, 1] (the privacy proof needs it) with alpha compensated, which the "
        "test of the noiseless fit checks (tests/core/test_class_list_and_row_count.py: same "
        "minimiser "
        "as scikit-learn's class_weight); with 1000 noisy steps on 50 rows the noise dominates "
        "(measured: 0.52 at epsilon=1, 0.92 at epsilon=inf)"
    ),
    "check_class_weight_balanced_linear_classifier": (
        "compares class_weight='balanced' with the same weights given by hand. The class counts "
        "'balanced' needs are private, so they are released with accounted Gaussian noise and "
        "the weights differ from the exact ones (and the noise draws shift); without noise "
        "(epsilon=inf) both give the same model, which "
        "tests/core/test_class_list_and_row_count.py checks"
    ),
}


def expected_failed_checks(estimator):
    if "class_weight" in estimator.get_params():
        failures = {**_EXPECTED_FAILURES, **_CLASS_WEIGHT_EXPECTED_FAILURES}
        if isinstance(estimator, DPSGDClassifier):
            # passes since the DP-SGD defaults scale with the budget (penalty, steps and batch
            # from N, d and epsilon): the weighted model is reached on the check's data
            failures.pop("check_class_weight_classifiers")
        return failures
    return _EXPECTED_FAILURES


ESTIMATORS = [
    DPLogisticRegression(random_state=0),
    DPRidge(random_state=0),
    DPElasticNet(random_state=0),
    DPSGDClassifier(random_state=0),
    DPSGDRegressor(random_state=0),
    DPHuberRegressor(random_state=0),
    DPPoissonRegressor(random_state=0),
    DPTweedieRegressor(random_state=0),
    DPLinearSVC(random_state=0),
]
if HAS_TORCH:  # tiny network, few steps
    ESTIMATORS.append(
        DPMLPClassifier(
            hidden_layer_sizes=(8,), max_iter=20, learning_rate=0.5, clip_norm=1.0, random_state=0
        )
    )


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


# the transformers of skdpgd.preprocessing and skdpgd.decomposition
from skdpgd.decomposition import DPPCA  # noqa: E402
from skdpgd.preprocessing import BoundedScaler, DPStandardScaler  # noqa: E402

TRANSFORMERS = [
    BoundedScaler(bounds=(-10, 10)),
    DPStandardScaler(bounds=(-10, 10), random_state=0),
    DPPCA(n_components=1, data_norm=10.0, random_state=0),
]


@parametrize_with_checks(TRANSFORMERS)
def test_sklearn_compatible_transformer(estimator, check):
    check(estimator)


def test_init_parameters_are_keyword_only_after_sklearns_positional_ones():
    """scikit-learn's convention: only the parameters the non-private counterpart
    keeps positional are positional (SGDClassifier's loss, MLPClassifier's hidden_layer_sizes
    and activation, RandomizedSearchCV's estimator and param_distributions, MinMaxScaler's
    range: BoundedScaler's bounds); every other parameter is keyword-only."""
    import inspect

    from skdpgd import ImportanceMask
    from skdpgd.model_selection import PrivateRandomSearchCV
    from skdpgd.pipeline import PrivatePipeline

    positional = {
        DPLogisticRegression: [],
        DPRidge: [],
        DPSGDClassifier: ["loss"],
        DPSGDRegressor: ["loss"],
        DPMLPClassifier: ["hidden_layer_sizes", "activation"],
        PrivateRandomSearchCV: ["estimator", "param_distributions"],
        BoundedScaler: ["bounds"],
        DPStandardScaler: [],
        ImportanceMask: [],
        DPPCA: ["n_components"],
        PrivatePipeline: ["steps"],
    }
    for cls, names in positional.items():
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
        got = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
        assert got == names, cls.__name__
        assert all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params)


# the same contract in secure mode (skdpgd.config_context(secure_noise=True)); the seeds the
# checks set are ignored with a warning. These checks fit twice with the same random_state and
# compare the two models: secure noise comes from the operating system's cryptographic source
# and cannot be reproduced, so the two fits differ by their noise (a seed that reproduced it
# would make it predictable); the plain-mode run above covers what they check.
import hashlib  # noqa: E402
import warnings  # noqa: E402

import skdpgd  # noqa: E402
from skdpgd import PrivacyUsageWarning  # noqa: E402
from skdpgd._compute import secure_random  # noqa: E402
from skdpgd.linear_model._base import _DPGLM  # noqa: E402

_SAME_SEED_TWICE = (
    "fits twice with the same random_state and compares the models; secure mode's noise cannot "
    "be reproduced (the plain-mode run of this check passes)"
)
_SECURE_FAILURES = {
    name: _SAME_SEED_TWICE
    for name in (
        "check_fit_idempotent",
        "check_classifier_data_not_an_array",
        "check_regressor_data_not_an_array",
        "check_regressors_int",
        "check_supervised_y_2d",
    )
}
# an accounted selection (the fit or the intercept-only model) decides n_iter_; with the plain
# seed the check's small data set keeps the fit, with fresh secure noise not always
_SELECTION_N_ITER = (
    "asserts n_iter_ >= 1; on the check's small data set the accounted selection between the "
    "fit and the intercept-only model (n_iter_ = 0) keeps the fit with the plain-mode seed, and "
    "returns the intercept-only model on some secure draws"
)
# DPSGDClassifier passes it with the plain seed; with fresh secure noise it is a coin flip
_SECURE_FAILURES["check_class_weight_classifiers"] = (
    "asserts 87% of noisy blobs classified as the heavy class after a noisy fit; DPSGDClassifier "
    "passes with the plain-mode seed, and secure mode's fresh noise (no seed) fails it on some "
    "draws (the other estimators fail it in plain mode too: see above)"
)


def secure_expected_failed_checks(estimator):
    if "random_state" not in estimator.get_params():  # no noise (BoundedScaler)
        return expected_failed_checks(estimator)
    out = {**expected_failed_checks(estimator), **_SECURE_FAILURES}
    if isinstance(estimator, _DPGLM):  # every full-batch GLM makes the accounted selection
        out["check_non_transformer_estimators_n_iter"] = _SELECTION_N_ITER
    return out


@parametrize_with_checks(
    [*ESTIMATORS, *TRANSFORMERS], expected_failed_checks=secure_expected_failed_checks
)
def test_sklearn_compatible_in_secure_mode(estimator, check, request, monkeypatch):
    # The checks assert thresholds on noisy fits (training accuracy, class weights), which a
    # fresh draw fails now and then. As the plain run fixes random_state, this run fixes the
    # operating-system entropy that keys each secure fit's ChaCha20 stream, one stream of
    # bytes per check: every fit still draws its own key, through the real secure sampler, and
    # a failure replays exactly.
    digest = hashlib.sha256(request.node.nodeid.encode()).digest()
    entropy = np.random.default_rng(list(digest))
    monkeypatch.setattr(secure_random, "urandom", lambda n: entropy.bytes(n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyUsageWarning)
        with skdpgd.config_context(secure_noise=True):
            check(estimator)

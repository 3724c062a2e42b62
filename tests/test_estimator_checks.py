"""scikit-learn's estimator contract, run over every public estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skdpgd import DPLogisticRegression, DPRidge, DPSGDClassifier, DPSGDRegressor

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


_RIDGE_EXPECTED_FAILURES = {
    "check_regressors_train": (
        "asserts R^2 > 0.5 on 200 rows of make_regression at our default epsilon=1; "
        "the Gaussian noise that epsilon=1 needs on 200 rows keeps the private fit near "
        "R^2 = 0.05-0.1 (it passes only from roughly epsilon=10 on). DPLogisticRegression "
        "passes the classifier counterpart at epsilon=1"
    ),
}


def expected_failed_checks(estimator):
    if isinstance(estimator, (DPRidge, DPSGDRegressor)):
        return {**_EXPECTED_FAILURES, **_RIDGE_EXPECTED_FAILURES}
    return _EXPECTED_FAILURES


@parametrize_with_checks(
    [DPLogisticRegression(random_state=0), DPRidge(random_state=0),
     DPSGDClassifier(random_state=0), DPSGDRegressor(random_state=0)],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)

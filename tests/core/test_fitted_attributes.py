"""The fitted attributes: set through one helper (:func:`skdpgd._core.fitted.set_fitted`), and
for each estimator exactly the set it reported before the results were typed."""

import importlib.util
import pathlib
import warnings

import numpy as np
import pytest

from skdpgd import (
    DPElasticNet,
    DPHuberRegressor,
    DPLinearSVC,
    DPLogisticRegression,
    DPMLPClassifier,
    DPPoissonRegressor,
    DPTweedieRegressor,
    DPRidge,
    DPSGDClassifier,
    DPSGDRegressor,
)
from skdpgd.decomposition import DPPCA
from skdpgd.preprocessing import BoundedScaler, DPStandardScaler

HAS_TORCH = importlib.util.find_spec("torch") is not None
PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "skdpgd"

# recorded from the estimators before the fitted attributes went through set_fitted: what
# every full-batch linear model and every DP-SGD model reports, then each one's own
FULL_BATCH = [
    "alpha_",
    "clip_norm_",
    "coef_",
    "count_noise_multiplier_",
    "data_norm_",
    "delta_",
    "epsilon_",
    "hessian_rates_",
    "intercept_",
    "mechanism_",
    "mu_",
    "n_features_in_",
    "n_iter_",
    "n_iter_theory_",
    "n_samples_",
    "neighbouring_",
    "noise_",
    "noise_multipliers_",
    "releases_",
    "rho_",
    "row_clip_",
    "row_clip_noise_multiplier_",
    "schedule_",
    "step_sizes_",
]
MINIBATCH = [
    "accountant_",
    "alpha_",
    "batch_size_",
    "clip_norm_",
    "coef_",
    "count_noise_multiplier_",
    "data_norm_",
    "delta_",
    "epsilon_",
    "importance_kept_",
    "intercept_",
    "learning_rate_",
    "n_features_in_",
    "n_iter_",
    "n_samples_",
    "neighbouring_",
    "noise_",
    "noise_multipliers_",
    "prior_switch_",
    "releases_",
    "sampling_rate_",
    "schedule_",
]
EXPECTED = {
    "DPLogisticRegression": sorted(FULL_BATCH + ["classes_"]),
    "DPRidge": sorted(FULL_BATCH + ["y_bound_", "y_range_"]),
    "DPElasticNet": sorted(FULL_BATCH + ["y_bound_", "y_range_"]),
    "DPHuberRegressor": sorted(FULL_BATCH + ["scale_", "y_bound_", "y_range_"]),
    "DPPoissonRegressor": sorted(FULL_BATCH + ["y_bound_"]),
    "DPTweedieRegressor": sorted(FULL_BATCH + ["y_bound_"]),
    "DPLinearSVC": sorted(FULL_BATCH + ["classes_"]),
    "DPSGDClassifier": sorted(MINIBATCH + ["classes_"]),
    "DPSGDRegressor": sorted(MINIBATCH + ["y_bound_", "y_range_"]),
    "DPMLPClassifier": [
        "classes_",
        "clip_norm_",
        "coefs_",
        "count_noise_multiplier_",
        "data_norm_",
        "decay_",
        "delta_",
        "epsilon_",
        "importance_kept_",
        "intercepts_",
        "learning_rate_",
        "mu_",
        "n_features_in_",
        "n_iter_",
        "n_layers_",
        "n_outputs_",
        "n_samples_",
        "neighbouring_",
        "noise_",
        "noise_multipliers_",
        "out_activation_",
        "releases_",
        "rho_",
        "sampling_rate_",
        "schedule_",
        "sensitivity_",
    ],
    "DPStandardScaler": [
        "count_noise_multiplier_",
        "delta_",
        "epsilon_",
        "hi_",
        "lo_",
        "mean_",
        "mu_",
        "n_features_in_",
        "n_samples_",
        "neighbouring_",
        "noise_",
        "output_bound_",
        "output_ranges_",
        "releases_",
        "scale_",
        "unit_mean_",
        "unit_scale_",
        "var_",
    ],
    "BoundedScaler": ["hi_", "lo_", "n_features_in_", "output_bound_", "output_ranges_"],
    "DPPCA": [
        "components_",
        "count_noise_multiplier_",
        "data_norm_",
        "delta_",
        "epsilon_",
        "explained_variance_",
        "mean_",
        "mu_",
        "n_features_in_",
        "n_samples_",
        "neighbouring_",
        "noise_",
        "output_bound_",
        "releases_",
    ],
}

rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, (60, 3))
yc = (X[:, 0] > 0).astype(int)
yr = X[:, 0] + 0.1
yp = np.abs(yr)
cases = [
    ("DPLogisticRegression", lambda: DPLogisticRegression(random_state=0, data_norm=2.0), yc),
    ("DPRidge", lambda: DPRidge(random_state=0, data_norm=2.0, y_bound=2.0), yr),
    ("DPElasticNet", lambda: DPElasticNet(random_state=0, data_norm=2.0, y_bound=2.0), yr),
    ("DPHuberRegressor", lambda: DPHuberRegressor(random_state=0, data_norm=2.0), yr),
    (
        "DPPoissonRegressor",
        lambda: DPPoissonRegressor(random_state=0, data_norm=2.0, y_bound=2.0),
        yp,
    ),
    (
        "DPTweedieRegressor",
        lambda: DPTweedieRegressor(random_state=0, data_norm=2.0, y_bound=2.0),
        yp,
    ),
    ("DPLinearSVC", lambda: DPLinearSVC(random_state=0, data_norm=2.0), yc),
    ("DPSGDClassifier", lambda: DPSGDClassifier(random_state=0, data_norm=2.0), yc),
    ("DPSGDRegressor", lambda: DPSGDRegressor(random_state=0, data_norm=2.0, y_bound=2.0), yr),
    (
        "DPMLPClassifier",
        lambda: DPMLPClassifier(hidden_layer_sizes=(4,), max_iter=3, random_state=0),
        yc,
    ),
    ("DPStandardScaler", lambda: DPStandardScaler(bounds=(-1, 1), random_state=0), None),
    ("BoundedScaler", lambda: BoundedScaler(bounds=(-1, 1)), None),
    ("DPPCA", lambda: DPPCA(n_components=1, data_norm=2.0, random_state=0), None),
]


def test_no_dict_update_in_the_package():
    found = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "__dict__.update" in path.read_text()
    ]
    assert found == []


@pytest.mark.parametrize("name, make, y", cases, ids=[c[0] for c in cases])
def test_fitted_attributes_are_the_recorded_set(name, make, y):
    if name == "DPMLPClassifier" and not HAS_TORCH:
        pytest.skip("torch not installed")
    est = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X) if y is None else est.fit(X, y)
    assert sorted(k for k in vars(est) if k.endswith("_")) == EXPECTED[name]
    # nothing else: the parameters and the fitted attributes only
    assert set(vars(est)) - set(est.get_params()) - set(EXPECTED[name]) == set()

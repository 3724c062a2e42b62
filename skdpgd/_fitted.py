"""The fitted attributes: the one place an estimator or transformer gets them set.

Every private fit reports :data:`PRIVACY` (set by :func:`skdpgd._fit.private_fit`); each road
adds its own (:data:`ROADS`); an estimator adds the attributes of its targets
(:data:`TARGETS`). :func:`set_fitted` sets them, and refuses a name none of these lists.
"""

from __future__ import annotations

#: what every private fit reports
PRIVACY = (
    "releases_",
    "noise_",
    "n_samples_",
    "count_noise_multiplier_",
    "delta_",
    "neighbouring_",
    "epsilon_",
)

#: each road's own attributes (besides the model it returns)
ROADS = {
    "full_batch": (
        "noise_multipliers_",
        "row_clip_",
        "row_clip_noise_multiplier_",
        "clip_norm_",
        "n_iter_",
        "n_iter_theory_",
        "step_sizes_",
        "mu_",
        "rho_",
        "schedule_",
        "data_norm_",
        "alpha_",
        "mechanism_",
        "hessian_rates_",
    ),
    "minibatch": (
        "noise_multipliers_",
        "sampling_rate_",
        "batch_size_",
        "n_iter_",
        "clip_norm_",
        "alpha_",
        "learning_rate_",
        "schedule_",
        "accountant_",
        "data_norm_",
        "importance_kept_",
        "prior_switch_",
    ),
    "torch": (
        "coefs_",
        "intercepts_",
        "n_layers_",
        "n_outputs_",
        "out_activation_",
        "noise_multipliers_",
        "n_iter_",
        "mu_",
        "rho_",
        "schedule_",
        "decay_",
        "sampling_rate_",
        "clip_norm_",
        "sensitivity_",
        "importance_kept_",
    ),
    "scaler": (
        "lo_",
        "hi_",
        "unit_mean_",
        "unit_scale_",
        "mean_",
        "scale_",
        "var_",
        "output_ranges_",
        "output_bound_",
        "mu_",
    ),
    "pca": (
        "components_",
        "explained_variance_",
        "mean_",
        "data_norm_",
        "output_bound_",
        "mu_",
    ),
}

#: the attributes of a regressor's targets
TARGETS = ("y_bound_", "y_range_", "scale_")

NAMES = frozenset(PRIVACY).union(TARGETS, *ROADS.values())


def set_fitted(est, attributes):
    """Set the fitted ``attributes`` (name -> value) on ``est``; each name must be one listed
    above."""
    unknown = sorted(set(attributes) - NAMES)
    if unknown:
        raise AssertionError(f"undocumented fitted attributes for {type(est).__name__}: {unknown}")
    for name, value in attributes.items():
        setattr(est, name, value)

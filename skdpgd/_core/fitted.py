"""The fitted attributes: typed, and the one place an estimator or transformer gets them set.

A road's ``run`` returns its own attributes as one of the dataclasses below
(:class:`FullBatchAttributes`, :class:`MinibatchAttributes`, :class:`TorchAttributes`,
:class:`ScalerAttributes`, :class:`PCAAttributes`); :func:`skdpgd._core.fit.private_fit` returns a
:class:`FitResult`, which adds what every private fit reports. Each field is named as the
fitted attribute it becomes. :func:`set_fitted` sets them on the estimator, with the
attributes of a regressor's targets (:data:`TARGETS`), and refuses any other name.
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class FullBatchAttributes:
    """The full-batch road's attributes (:class:`skdpgd._full_batch.road.FullBatchRoad`)."""

    noise_multipliers_: np.ndarray
    row_clip_: object
    row_clip_noise_multiplier_: float | None
    clip_norm_: float
    n_iter_: int
    n_iter_theory_: object
    step_sizes_: np.ndarray
    mu_: float
    rho_: float
    schedule_: str
    data_norm_: float
    alpha_: float
    mechanism_: str
    hessian_rates_: object


@dataclasses.dataclass(frozen=True)
class MinibatchAttributes:
    """DP-SGD's attributes (:class:`skdpgd._minibatch.road.MinibatchRoad`)."""

    noise_multipliers_: np.ndarray
    sampling_rate_: float
    batch_size_: float
    n_iter_: int
    clip_norm_: float
    alpha_: float
    learning_rate_: float
    schedule_: str
    accountant_: str
    data_norm_: float
    importance_kept_: np.ndarray | None
    prior_switch_: object


@dataclasses.dataclass(frozen=True)
class TorchAttributes:
    """The torch network's attributes (:class:`skdpgd._network.road.TorchRoad`)."""

    coefs_: list
    intercepts_: list
    n_layers_: int
    n_outputs_: int
    out_activation_: str
    noise_multipliers_: np.ndarray
    n_iter_: int
    mu_: float | None
    rho_: float | None
    schedule_: str
    decay_: object
    sampling_rate_: float
    clip_norm_: float
    learning_rate_: float
    data_norm_: float
    sensitivity_: float
    importance_kept_: np.ndarray | None


@dataclasses.dataclass(frozen=True)
class ScalerAttributes:
    """The private scaler's attributes (:class:`skdpgd.preprocessing.DPStandardScaler`)."""

    lo_: np.ndarray
    hi_: np.ndarray
    unit_mean_: np.ndarray
    unit_scale_: np.ndarray
    mean_: np.ndarray
    scale_: np.ndarray
    var_: np.ndarray
    output_ranges_: np.ndarray
    output_bound_: float
    mu_: float | None


@dataclasses.dataclass(frozen=True)
class PCAAttributes:
    """The private PCA's attributes (:class:`skdpgd.decomposition.DPPCA`)."""

    components_: np.ndarray
    explained_variance_: np.ndarray
    mean_: np.ndarray
    data_norm_: float
    output_bound_: float
    mu_: float | None


ROAD_ATTRIBUTES = (
    FullBatchAttributes,
    MinibatchAttributes,
    TorchAttributes,
    ScalerAttributes,
    PCAAttributes,
)


@dataclasses.dataclass(frozen=True)
class FitResult:
    """What :func:`skdpgd._core.fit.private_fit` returns: ``model`` (a linear road's ``(coef,
    intercept)``, shapes (n_outputs, d) and (n_outputs,), which the estimator reshapes; None
    for a road whose attributes hold its model), ``attributes`` (the road's own, one of
    :data:`ROAD_ATTRIBUTES`) and what every private fit reports."""

    attributes: object
    model: tuple | None
    releases_: list
    noise_: str
    n_samples_: float
    count_noise_multiplier_: float | None
    delta_: float
    neighbouring_: str
    epsilon_: float

    def fitted(self):
        """The fitted attributes, name -> value: the road's own, then what every fit
        reports (not ``model``)."""
        out = {f.name: getattr(self.attributes, f.name) for f in _fields(self.attributes)}
        out.update({name: getattr(self, name) for name in PRIVACY})
        return out


#: what every private fit reports
PRIVACY = tuple(f.name for f in dataclasses.fields(FitResult) if f.name.endswith("_"))

#: the attributes of a regressor's targets (set by the estimator, from a mapping)
TARGETS = ("y_bound_", "y_range_", "scale_")


def _fields(attributes):
    if type(attributes) not in ROAD_ATTRIBUTES:
        raise TypeError(f"not a road's attributes: {type(attributes).__name__}")
    return dataclasses.fields(attributes)


def set_fitted(est, fitted):
    """Set the fitted attributes on ``est``: those of a :class:`FitResult` (the road's own
    and what every fit reports), or a mapping of the targets' attributes (names in
    :data:`TARGETS`)."""
    if isinstance(fitted, FitResult):
        attributes = fitted.fitted()
    else:
        unknown = sorted(set(fitted) - set(TARGETS))
        if unknown:
            raise AssertionError(
                f"undocumented fitted attributes for {type(est).__name__}: {unknown}"
            )
        attributes = fitted
    for name, value in attributes.items():
        setattr(est, name, value)

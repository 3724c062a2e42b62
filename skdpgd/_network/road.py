"""The network's road: a fully connected network trained by noisy (full-batch or
Poisson-sampled) gradient descent, its releases declared to the accountant and its steps run
by the torch backend (:mod:`skdpgd._network.torch_backend`, imported inside ``run``: torch
stays out of ``import skdpgd``).

:class:`TorchConfig` holds the road's own parameters, resolved by
:class:`skdpgd.DPMLPClassifier` before the fit; :class:`TorchRoad` is the road
:func:`skdpgd._core.fit.private_fit` drives.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import policy
from .._core.fit import Road, RoadResult, mu_of
from .._core.fitted import TorchAttributes
from .._core.noise import is_secure
from .._core.setup import require_add_remove_budget, resolve_relation
from ..accounting import (
    GaussianDPAccountant,
    RDPAccountant,
    Release,
    remaining_mu,
    sum_rounding_margin,
)
from ..schedules import PUR, Exponential, Problem, Uniform, get_schedule, hong_shape

__all__ = ["TorchConfig", "TorchRoad"]


def _glorot_init(layer_sizes, activation, gen):
    """Glorot-uniform weights and biases as scikit-learn's MLPClassifier draws them.

    ``U(-b, b)`` with ``b = sqrt(f / (fan_in + fan_out))``, f = 2 for the logistic activation,
    6 otherwise. Drawn from the fit's numpy Generator: data-independent, costs no privacy.
    """
    factor = 2.0 if activation == "logistic" else 6.0
    coefs, intercepts = [], []
    for fan_in, fan_out in zip(layer_sizes[:-1], layer_sizes[1:]):
        bound = math.sqrt(factor / (fan_in + fan_out))
        coefs.append(gen.uniform(-bound, bound, size=(fan_in, fan_out)))
        intercepts.append(gen.uniform(-bound, bound, size=fan_out))
    return coefs, intercepts


def _resolve_device(torch, device):
    """``device`` as a torch.device; ValueError for an unknown one or a CUDA device that
    is not there (raised before anything is released)."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise ValueError(
            f"device must be 'cpu', 'cuda' or a torch.device; got {device!r}."
        ) from exc
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"device={device!r} asks for CUDA, but torch sees no CUDA device "
                "(or this torch build has no CUDA support); use device='cpu'."
            )
    elif dev.type != "cpu":
        raise ValueError(f"device must be a CPU or CUDA device; got {device!r}.")
    return dev


def _mlp_schedule(schedule, decay, T):
    """(Schedule, decay used, name) for the network's ``schedule`` parameter over T steps.
    'hong' and 'exponential' mean the MLP's versions (see the ``schedule`` parameter), not
    the linear models'."""
    if schedule == "hong":
        gamma = policy.mlp_hong_gamma(T, decay)
        return hong_shape(gamma, T), gamma, "hong"
    if schedule == "exponential":
        decay = policy.mlp_exponential_decay(decay)
        return Exponential(decay=decay, n_iter=T), decay, "exponential"
    if schedule == "uniform":
        return Uniform(), None, "uniform"
    if schedule == "pur":
        return PUR(), None, "pur"
    resolved = get_schedule(schedule)
    return resolved, None, getattr(resolved, "name", type(resolved).__name__)


@dataclasses.dataclass(frozen=True)
class TorchConfig:
    """The network road's own parameters, resolved by the estimator before the fit:
    ``hidden_layer_sizes`` (a tuple of positive ints), ``activation``, ``data_norm`` (the
    public row bound the rows were clipped to), ``clip_norm`` and ``learning_rate`` (floats),
    ``max_iter`` (int, or None: :func:`skdpgd.policy.mlp_auto_steps` from the budget, chosen
    in ``setup``), ``batch_size`` (None: full batch),
    ``schedule`` and ``decay`` (the parameters, see :func:`_mlp_schedule`), ``momentum``
    (float), ``device``, ``importance`` (the parameter) and ``n_jobs``. The defaults are
    the estimator's defaults."""

    hidden_layer_sizes: tuple = (100,)
    activation: str = "relu"
    data_norm: float | None = None
    clip_norm: float = 1.0
    learning_rate: float = 0.1
    max_iter: int | None = 100
    batch_size: int | None = None
    schedule: object = "uniform"
    decay: object = None
    momentum: float = 0.0
    device: object = "cpu"
    importance: object = None
    n_jobs: object = None

    def __post_init__(self):
        object.__setattr__(
            self, "hidden_layer_sizes", tuple(int(h) for h in self.hidden_layer_sizes)
        )
        object.__setattr__(self, "clip_norm", float(self.clip_norm))
        object.__setattr__(self, "learning_rate", float(self.learning_rate))
        if self.max_iter is not None:
            object.__setattr__(self, "max_iter", int(self.max_iter))
        object.__setattr__(self, "momentum", float(self.momentum))


class TorchRoad(Road):
    """The network's noisy gradient steps (:mod:`skdpgd._network.torch_backend`) as a road of
    :func:`skdpgd._core.fit.private_fit`: full batch (exact GDP, either relation) or Poisson
    minibatches (``batch_size`` set: RDP, add/remove-one). ``config``: its
    :class:`TorchConfig`."""

    def __init__(self, config, X, y_index, n_classes):
        hidden = list(config.hidden_layer_sizes)
        from . import torch_backend as _torch_backend
        from .._core.importance_mask import resolve_importance

        self.config = config
        self.backend = _torch_backend
        self.torch = _torch_backend.import_torch()
        self.device = _resolve_device(self.torch, config.device)
        self.mask = resolve_importance(config.importance)  # a parameter: checked before release
        self.X = X
        self.y_k = y_index.astype(np.float64)  # 0/1 for two classes, else class indices
        self.n_classes = n_classes
        self.minibatch = config.batch_size is not None
        n_outputs = 1 if n_classes == 2 else n_classes
        self.layer_sizes = [X.shape[1], *hidden, n_outputs]
        self.n_outputs = n_outputs

    def relation(self, spec):
        if self.minibatch:
            if spec.neighbouring == "replace":
                raise ValueError(
                    "Poisson minibatches (batch_size set) are accounted under add/remove-one "
                    "neighbours only; use neighbouring='add_remove' or 'auto', or "
                    "batch_size=None for replace-one full-batch training."
                )
            require_add_remove_budget(spec.budget)
            return "add_remove"
        return resolve_relation(spec.neighbouring, spec.budget)

    def charge_immediately(self, fit):
        # Poisson steps: delta and q are functions of the count, charged as it is drawn
        return True if self.minibatch else super().charge_immediately(fit)

    def setup(self, fit):
        cfg = self.config
        clip_norm = cfg.clip_norm
        # q from the public N; a batch_size >= N is full batch
        q = 1.0 if not self.minibatch else min(1.0, cfg.batch_size / fit.n_public)
        self.accountant = GaussianDPAccountant() if q == 1.0 else RDPAccountant()
        n_params = sum((a + 1) * b for a, b in zip(self.layer_sizes[:-1], self.layer_sizes[1:]))
        mu_left = remaining_mu(fit.mu_total, fit.setup_releases)
        # max_iter='auto': T from public N, D and the budget left after the set-up releases
        T = (
            policy.mlp_auto_steps(fit.n_public, n_params, mu_left)
            if cfg.max_iter is None
            else cfg.max_iter
        )
        schedule, decay_used, schedule_name = _mlp_schedule(cfg.schedule, cfg.decay, T)
        if schedule_name == "pur" and self.minibatch:  # decided by the parameter, not by q
            raise ValueError(
                "schedule='pur' runs until a full-batch budget is spent; it "
                "supports batch_size=None only."
            )
        # One example's clipped gradient has norm <= C: the sum moves by <= C when it is
        # added or removed, by <= 2C when it is replaced by another (two clipped terms differ).
        self.sensitivity = {"replace": 2.0 * clip_norm, "add_remove": clip_norm}
        # Rounding: each term is clipped to C (1 - CLIP_MARGIN) with norms good to ~1e-6, so it
        # stays within C (1 - CLIP_MARGIN / 2); the float64 sum of at most n rows (a public
        # bound) rounds by sum_rounding_margin(n, 0) of the sensitivity in the worst case. The
        # part the clip's slack does not absorb raises the sensitivity at calibration
        # (Road.calibrate): 0 below about 1.5e5 rows, 2.2e-4 at 1e6.
        slack = 0.5 * self.backend.CLIP_MARGIN
        self.margin = max(0.0, sum_rounding_margin(fit.rows_summed_bound(), 0) - slack)
        problem = Problem(
            n_samples=fit.n_public,
            n_params=n_params,
            sensitivity=self.sensitivity[fit.relation],
            lipschitz=clip_norm,
            smoothness=1.0 / (2.0 * cfg.learning_rate),
            strong_convexity=0.0,
            loss_bound=math.log(max(self.n_classes, 2)),
            momentum=cfg.momentum,
            sampling_rate=q,
        )
        plan = schedule.plan(problem, mu_left, T)
        if plan.mechanism != "gradient":
            raise ValueError(
                f"schedule {schedule_name!r} is not a gradient schedule; "
                "DPMLPClassifier runs noisy gradient steps only."
            )
        self.q, self.plan, self.decay, self.schedule_name = q, plan, decay_used, schedule_name
        self.clip_norm = clip_norm

    def releases(self, fit):
        return [
            Release(
                "gradient sums",
                self.plan.noise_multipliers,
                dict(self.sensitivity),
                fit.relation,
                self.q,
            )
        ]

    def describe(self, fit, releases):
        return (
            f"DPMLPClassifier: {releases[0].n_steps} noisy steps at rate q = {self.q:.4g}, "
            f"N (public) = {fit.n_public:g}, epsilon = {fit.epsilon:g}, "
            f"delta = {fit.delta:.3g}"
        )

    def run(self, fit, releases):
        from ..policy import current as _policy

        cfg, q, progress = self.config, self.q, fit.progress
        z = releases[0].multipliers
        # --- initial weights (data-independent) ---
        coefs0, intercepts0 = _glorot_init(self.layer_sizes, cfg.activation, fit.gen)

        def report(step):  # after step `step` (1-based) has been released
            if q < 1.0:
                progress.released_steps(self.accountant, z[:step], q, fit.delta, step, z.shape[0])
            else:
                progress.released(z[step - 1 : step], step - 1, z.shape[0])

        importance = (
            None
            if self.mask is None
            else {
                "stages": self.mask.stages(z.shape[0]),
                "scaling": bool(self.mask.scaling),
                "decay": _policy().IMPORTANCE_MOMENT_DECAY,
            }
        )
        run_info = {}
        normaliser = q * fit.n_public  # N for full batch; expected batch size for Poisson
        with self.backend.torch_threads(cfg.n_jobs):
            coefs, intercepts = self.backend.run_noisy_gd(
                self.X,
                self.y_k,
                self.n_outputs,
                self.layer_sizes,
                cfg.activation,
                coefs0,
                intercepts0,
                clip_norm=self.clip_norm,
                learning_rate=cfg.learning_rate * fit.weight_scale,
                momentum=cfg.momentum,
                noise_std=z * self.sensitivity[fit.relation],
                sampling_rate=q,
                normaliser=normaliser,
                seed=self.backend.torch_seed(fit.gen),
                sample_weight=fit.sample_weight,
                callback=report if fit.spec.verbose else None,
                importance=importance,
                device=self.device,
                info=run_info,
                secure=fit.gen if is_secure(fit.gen) else None,
                sensitivity=float(self.sensitivity[fit.relation]),
            )
        mu = mu_of(fit.setup_releases + list(releases))
        return RoadResult(
            TorchAttributes(
                coefs_=coefs,
                intercepts_=intercepts,
                n_layers_=len(self.layer_sizes),
                n_outputs_=self.n_outputs,
                out_activation_="logistic" if self.n_outputs == 1 else "softmax",
                noise_multipliers_=z,
                n_iter_=int(z.shape[0]),
                mu_=mu,
                rho_=None if mu is None else mu**2 / 2.0,
                schedule_=self.schedule_name,
                decay_=self.decay,
                sampling_rate_=q,
                clip_norm_=self.clip_norm,
                learning_rate_=cfg.learning_rate,
                data_norm_=cfg.data_norm,
                sensitivity_=self.sensitivity[fit.relation],
                importance_kept_=(np.asarray(run_info["kept"]) if "kept" in run_info else None),
            ),
        )

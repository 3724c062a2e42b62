"""Optional PyTorch backend for small neural networks (used by :mod:`skdpgd.neural`).

Nothing here runs at ``import skdpgd``: :func:`import_torch` is called inside ``fit``, and
the estimators predict with numpy. Every function takes plain arrays and numbers and does
no privacy arithmetic: the noise standard deviations arrive already calibrated by an
accountant, and this module only clips, sums, draws the noise and steps.

One step of :func:`run_noisy_gd` releases

    S_t = sum_{i in batch_t} clip_C(g_i) + N(0, std_t^2 I),     clip_C(g) = g min(1, C / ||g||),

where ``g_i`` is example i's gradient with respect to *all* parameters (flattened), so every
example's contribution has L2 norm at most C. Dividing by the normaliser, momentum and the
parameter update are post-processing of ``S_t``.

Two exact ways to get ``sum_i clip_C(g_i)`` (:data:`PER_EXAMPLE_METHOD` picks one):

* ``'vmap'``: per-example gradients with ``torch.func`` (``vmap(grad(loss))`` over the rows,
  ``functional_call`` on the module), clipped and summed. General (any module), but it writes
  n x D floats per step: memory-bound.
* ``'outer'`` (the default, for the MLPs here): a Linear layer's per-example weight gradient
  is the outer product ``delta_i a_i^T`` of the back-propagated signal ``delta_i`` (gradient of
  the summed loss with respect to the layer's pre-activation row i: one ordinary backward
  pass, since example i's loss depends on row i only) and the layer input ``a_i``; the bias
  gradient is ``delta_i``. So ``||g_i||^2 = sum_layers ||delta_i||^2 (||a_i||^2 + 1)`` and the
  clipped sum is ``sum_i f_i delta_i a_i^T = (f * delta)^T A``: a matrix product, no n x D
  tensor (Goodfellow, 2015; "ghost clipping", Lee and Kifer, 2021). The same numbers as 'vmap'
  up to float32 rounding (tested), 10-50x faster on CPU.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

from ..exceptions import DivergenceError

#: What the optional extra asks for (torch.func appeared in 2.0; tested with 2.13.0, CPU build).
TORCH_REQUIREMENT = "torch>=2.0"

#: Per-example gradients are clipped to ``clip_norm * (1 - CLIP_MARGIN)``: norms are computed
#: in float32 ('vmap': cascade summation over D entries, relative error ~1e-6) or float64 from
#: float32 factors ('outer'), and the clipped vector is rounded to float32 (~1e-7 relative);
#: the margin keeps every contribution within clip_norm despite that rounding.
CLIP_MARGIN = 1e-5

#: How :func:`clipped_grad_sum` gets per-example gradients: 'outer' or 'vmap' (see above).
PER_EXAMPLE_METHOD = "outer"

#: Per-example gradients are computed in chunks of at most this many floats (n_chunk * D), so
#: memory stays bounded and the chunk stays cache-friendly (measured fastest near 4M on CPU).
CHUNK_FLOATS = 2**22


def import_torch():
    """Import torch, or raise an ImportError that says how to install it."""
    try:
        import torch
        import torch.func  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "skdpgd's neural-network estimators need PyTorch, an optional dependency "
            f"({TORCH_REQUIREMENT}). Without a GPU, install its CPU build:  pip install torch "
            "--index-url https://download.pytorch.org/whl/cpu  (a plain 'pip install torch' on "
            "Linux pulls several GB of CUDA libraries); with one:  pip install torch. From a "
            'clone of skdpgd, pip install ".[torch]" then adds nothing else.'
        ) from exc
    return torch


_ACTIVATIONS = {"relu": "ReLU", "tanh": "Tanh", "logistic": "Sigmoid"}


def build_mlp(layer_sizes, activation):
    """``torch.nn.Sequential`` of Linear layers with ``activation`` between them (float32).

    ``layer_sizes = (n_features, hidden_1, ..., n_outputs)``. Linear layer k sits at index
    ``2 k`` of the Sequential, so its parameters are named ``"{2k}.weight"``/``"{2k}.bias"``.
    """
    torch = import_torch()
    layers = []
    for k in range(len(layer_sizes) - 1):
        if k > 0:
            layers.append(getattr(torch.nn, _ACTIVATIONS[activation])())
        layers.append(torch.nn.Linear(layer_sizes[k], layer_sizes[k + 1]))
    return torch.nn.Sequential(*layers).to(torch.float32)


def params_to_torch(coefs, intercepts):
    """Numpy weights (sklearn layout: coef of shape (fan_in, fan_out)) -> torch parameter dict."""
    torch = import_torch()
    params = {}
    for k, (W, b) in enumerate(zip(coefs, intercepts)):
        params[f"{2 * k}.weight"] = torch.tensor(np.asarray(W).T, dtype=torch.float32)
        params[f"{2 * k}.bias"] = torch.tensor(np.asarray(b), dtype=torch.float32)
    return params


def params_to_numpy(params, n_layers):
    """Inverse of :func:`params_to_torch` (float64 numpy arrays)."""
    coefs = [
        params[f"{2 * k}.weight"].detach().cpu().numpy().T.astype(np.float64)
        for k in range(n_layers)
    ]
    intercepts = [
        params[f"{2 * k}.bias"].detach().cpu().numpy().astype(np.float64) for k in range(n_layers)
    ]
    return coefs, intercepts


def example_loss(model, n_outputs):
    """Loss of one example as a function ``(params, x, y) -> scalar`` for ``torch.func``.

    One output: binary log-loss on the logit, ``softplus(-s (2y - 1))`` with y in {0, 1}.
    More outputs: cross-entropy of the softmax, ``-sum_k y_k log_softmax(s)_k`` with y the
    one-hot row of the class (see :func:`encode_targets`; indexing by a class index is
    data-dependent control flow, which ``vmap`` does not support).
    """
    torch = import_torch()
    from torch.func import functional_call

    if n_outputs == 1:

        def loss(params, x, y):
            s = functional_call(model, params, (x.unsqueeze(0),))[0, 0]
            return torch.nn.functional.softplus(-(2.0 * y - 1.0) * s)
    else:

        def loss(params, x, y):
            s = functional_call(model, params, (x.unsqueeze(0),))[0]
            return -(y * torch.log_softmax(s, dim=0)).sum()

    return loss


def encode_targets(y, n_outputs):
    """Class indices -> float32 tensor: as is for one output (0/1), one-hot rows otherwise."""
    torch = import_torch()
    y = np.asarray(y)
    if n_outputs == 1:
        return torch.as_tensor(y, dtype=torch.float32)
    onehot = np.zeros((y.shape[0], n_outputs), dtype=np.float32)
    onehot[np.arange(y.shape[0]), y.astype(np.int64)] = 1.0
    return torch.as_tensor(onehot)


def per_example_grads(model, params, X, y, n_outputs):
    """Gradient of each example's loss: dict name -> tensor of shape (n, *param.shape).

    ``vmap(grad(loss))`` over the rows of X (torch.func), with the parameters shared; y as
    made by :func:`encode_targets`.
    """
    import_torch()
    from torch.func import grad, vmap

    return vmap(grad(example_loss(model, n_outputs)), in_dims=(None, 0, 0))(params, X, y)


def clip_factors(grads, clip_norm):
    """Per-example scale ``min(1, C (1 - CLIP_MARGIN) / ||g_i||)`` and the norms ``||g_i||``.

    Norms are of the full flattened gradient (all layers); each layer's in float32 (in float64
    for the examples where float32 overflows), combined in float64. Non-finite entries must have
    been zeroed before (see :func:`clipped_grad_sum`).
    """
    torch = import_torch()
    per_param = []
    for g in grads.values():
        n = torch.linalg.vector_norm(g.flatten(1), dim=1).double()
        bad = ~torch.isfinite(n)  # the float32 sum of squares overflowed: redo in float64
        if bool(bad.any()):
            n[bad] = torch.linalg.vector_norm(g.flatten(1)[bad].double(), dim=1)
        per_param.append(n)
    norms = torch.linalg.vector_norm(torch.stack(per_param), dim=0)
    target = float(clip_norm) * (1.0 - CLIP_MARGIN)
    factors = torch.clamp(target / torch.clamp(norms, min=1e-300), max=1.0)
    return factors, norms


def clipped_grad_sum(model, params, X, y, n_outputs, clip_norm, method=None):
    """``sum_i clip_C(g_i)`` over the rows of X; dict name -> float64 tensor shaped like params.

    See :func:`clipped_grad_sum_checked`, which also returns how many rows were left out.
    """
    return clipped_grad_sum_checked(model, params, X, y, n_outputs, clip_norm, method)[0]


def clipped_grad_sum_checked(model, params, X, y, n_outputs, clip_norm, method=None, weights=None):
    """``(sum_i w_i clip_C(g_i), n_bad)`` over the rows of X (``weights``: float64 tensor of
    per-row weights in [0, 1], or None for all ones).

    Sensitivity: each term has L2 norm at most C (the whole parameter vector of one example is
    scaled together), so adding/removing one row moves the sum by at most C and replacing one
    row by at most 2C. The terms are accumulated in **float64**: a float32 sum of 2e5 aligned
    terms rounds by about 1% of C (measured: removing one row moved it by 1.0097 C), which
    would break that bound. A row whose gradient has a non-finite entry (overflow) contributes
    0 and is counted in ``n_bad``, so the sum stays bounded. ``n_bad`` depends on the private
    rows: :func:`run_noisy_gd` does not let it decide anything (it stops only when the
    parameters, which are released values, are not finite).
    ``method`` defaults to :data:`PER_EXAMPLE_METHOD`; 'outer' needs ``model`` to be a
    :func:`build_mlp` network.
    """
    method = PER_EXAMPLE_METHOD if method is None else method
    if method == "outer":
        return _clipped_grad_sum_outer(model, params, X, y, n_outputs, clip_norm, weights)
    if method != "vmap":
        raise ValueError(f"unknown per-example method {method!r}.")
    torch = import_torch()
    total = {
        k: torch.zeros(v.shape, dtype=torch.float64, device=v.device) for k, v in params.items()
    }
    n = X.shape[0]
    n_bad = 0
    if n == 0:
        return total, n_bad
    n_params = sum(v.numel() for v in params.values())
    chunk = max(1, min(n, CHUNK_FLOATS // max(n_params, 1)))
    for start in range(0, n, chunk):
        grads = per_example_grads(
            model, params, X[start : start + chunk], y[start : start + chunk], n_outputs
        )
        finite = torch.stack([torch.isfinite(g.flatten(1)).all(1) for g in grads.values()])
        finite = finite.all(0)
        n_bad += int((~finite).sum())
        grads = {k: torch.nan_to_num(g, nan=0.0, posinf=0.0, neginf=0.0) for k, g in grads.items()}
        factors, _ = clip_factors(grads, clip_norm)
        f = torch.where(finite, factors, torch.zeros_like(factors))  # float64
        if weights is not None:
            f = f * weights[start : start + chunk]
        for k, g in grads.items():
            total[k] += torch.tensordot(f, g.double(), dims=1)
    return total, n_bad


def _mlp_signals(model, params, X, y, n_outputs):
    """Layer inputs ``a_k`` (n, fan_in), back-propagated signals ``delta_k`` (n, fan_out),
    and which rows were finite throughout.

    ``delta_k[i]`` is the gradient of example i's loss with respect to layer k's
    pre-activation row i, obtained as the gradient of the *summed* loss (row i of the
    pre-activation only enters example i's loss). Non-finite entries are set to 0.
    """
    torch = import_torch()
    n_layers = len([m for m in model if isinstance(m, torch.nn.Linear)])
    act_name = None
    for m in model:
        if not isinstance(m, torch.nn.Linear):
            act_name = type(m).__name__
            break
    act = {"ReLU": torch.relu, "Tanh": torch.tanh, "Sigmoid": torch.sigmoid, None: None}[act_name]
    inputs, pres = [], []
    with torch.enable_grad():
        a = X
        for k in range(n_layers):
            inputs.append(a.detach())
            z = a @ params[f"{2 * k}.weight"].T + params[f"{2 * k}.bias"]
            if k == 0:
                z = z.detach().requires_grad_(True)  # the graph starts here (X needs no grad)
            pres.append(z)
            a = act(z) if k < n_layers - 1 else z
        if n_outputs == 1:
            loss = torch.nn.functional.softplus(-(2.0 * y - 1.0) * a[:, 0]).sum()
        else:
            loss = -(y * torch.log_softmax(a, dim=1)).sum()
        deltas = torch.autograd.grad(loss, pres)
    finite = torch.ones(X.shape[0], dtype=torch.bool, device=X.device)
    for t in [*inputs, *deltas]:
        finite &= torch.isfinite(t.detach()).all(1)
    clean = [torch.nan_to_num(t, nan=0.0, posinf=0.0, neginf=0.0) for t in inputs]
    deltas = [torch.nan_to_num(t.detach(), nan=0.0, posinf=0.0, neginf=0.0) for t in deltas]
    return clean, deltas, finite


def _clipped_grad_sum_outer(model, params, X, y, n_outputs, clip_norm, weights=None, coord=None):
    """'outer' method of :func:`clipped_grad_sum` (see the module docstring).

    ``coord`` (dict name -> tensor shaped like the parameter, or None): per-coordinate
    multipliers applied to each example's gradient *before* the clip (the importance mask
    divided by the public scale, 0 for a masked coordinate). The norm of the transformed
    gradient of a Linear layer is still closed-form,
    ``sum_{o,i} delta_o^2 W_oi^2 a_i^2 = ((delta^2) @ (W^2) . a^2)``, and the clip applies to
    it: each example's transformed, clipped contribution has norm <= C whatever ``coord`` is.
    """
    torch = import_torch()
    total = {
        k: torch.zeros(v.shape, dtype=torch.float64, device=v.device) for k, v in params.items()
    }
    if X.shape[0] == 0:
        return total, 0
    inputs, deltas, finite = _mlp_signals(model, params, X, y, n_outputs)
    # ||g_i||^2 = sum_k ||delta_ik||^2 (||a_ik||^2 + 1), in float64 (n x width: cheap)
    sq = torch.zeros(X.shape[0], dtype=torch.float64, device=X.device)
    for k, (a, d) in enumerate(zip(inputs, deltas)):
        d2, a2 = d.double() ** 2, a.double() ** 2
        if coord is None:
            sq += d2.sum(1) * (a2.sum(1) + 1.0)
        else:
            Ww, Wb = coord[f"{2 * k}.weight"], coord[f"{2 * k}.bias"]
            sq += ((d2 @ (Ww * Ww)) * a2).sum(1) + (d2 * (Wb * Wb)).sum(1)
    norms = torch.sqrt(sq)
    target = float(clip_norm) * (1.0 - CLIP_MARGIN)
    f = torch.clamp(target / torch.clamp(norms, min=1e-300), max=1.0)
    f = torch.where(finite & torch.isfinite(norms), f, torch.zeros_like(f))
    if weights is not None:
        f = f * weights
    # the sums over rows in float64 (see clipped_grad_sum_checked)
    for k, (a, d) in enumerate(zip(inputs, deltas)):
        fd = d.double() * f[:, None]
        total[f"{2 * k}.weight"] = fd.T @ a.double()
        total[f"{2 * k}.bias"] = fd.sum(0)
        if coord is not None:
            total[f"{2 * k}.weight"] *= coord[f"{2 * k}.weight"]
            total[f"{2 * k}.bias"] *= coord[f"{2 * k}.bias"]
    return total, int((~finite).sum())


def _importance_stage(importance, names, params, score, second, frac, device):
    """Kept mask (dict of 0/1 float64 tensors), scale s (dict) and the per-coordinate
    multipliers ``m / s`` for a stage with kept fraction ``frac``: from the released scores
    and second moments only (post-processing; see :mod:`skdpgd._minibatch.importance`)."""
    torch = import_torch()
    from .._core import importance_mask as mask_rule

    sizes = [params[k].numel() for k in names]
    flat_score = np.concatenate([score[k].cpu().numpy().ravel() for k in names])
    flat_second = np.concatenate([second[k].cpu().numpy().ravel() for k in names])
    ranking = mask_rule._mask_scores(flat_score, params, names)  # the released scores (see there)
    kept = mask_rule.kept_coordinates(ranking, frac)
    s_kept = mask_rule.coordinate_scale(flat_second, kept, importance["scaling"])
    m = np.zeros(flat_score.shape[0])
    m[kept] = 1.0
    s = np.ones(flat_score.shape[0])
    s[kept] = s_kept
    out_m, out_s, out_w = {}, {}, {}
    start = 0
    for k, size in zip(names, sizes):
        sl = slice(start, start + size)
        shape = params[k].shape
        out_m[k] = torch.as_tensor(m[sl].reshape(shape), dtype=torch.float64, device=device)
        out_s[k] = torch.as_tensor(s[sl].reshape(shape), dtype=torch.float64, device=device)
        out_w[k] = out_m[k] / out_s[k]
        start += size
    return out_m, out_s, out_w, int(kept.shape[0])


def run_noisy_gd(
    X,
    y,
    n_outputs,
    layer_sizes,
    activation,
    coefs,
    intercepts,
    *,
    clip_norm,
    learning_rate,
    momentum,
    noise_std,
    sampling_rate,
    normaliser,
    seed,
    sample_weight=None,
    callback=None,
    importance=None,
    device=None,
    info=None,
    secure=None,
    sensitivity=None,
):
    """Noisy (minibatch) gradient descent on an MLP; returns (coefs, intercepts) as numpy.

    Parameters
    ----------
    X : ndarray (n, d); y : ndarray (n,)
        Data; y holds class indices (0/1 when ``n_outputs == 1``).
    coefs, intercepts : lists of ndarray
        Initial weights in scikit-learn's layout.
    clip_norm : float
        C, bound on each example's gradient norm.
    noise_std : ndarray of shape (T,)
        Standard deviation of the Gaussian noise added to the clipped *sum* at each step
        (already ``z_t * sensitivity``: this function does no privacy arithmetic). 0 = no noise.
    sampling_rate : float
        q: each row joins a step's batch independently with probability q (Poisson sampling);
        1 is full batch.
    normaliser : float
        The public number the noisy sum is divided by (N, or the expected batch size qN).
    seed : int
        Seeds the one ``torch.Generator`` that draws the batches and the noise.
    sample_weight : ndarray of shape (n,) or None
        Per-example weights in [0, 1] (checked by the estimator): contribution
        ``w_i clip_C(g_i)``, still of norm at most C.
    callback : callable or None
        Called with the 1-based step number after each step's release (progress output).
    importance : dict or None
        Importance-masked steps (:mod:`skdpgd._minibatch.importance`): ``{"stages": [(t0, t1, kept
        fraction)], "scaling": bool, "decay": float}``. In a masked stage each example's
        gradient is masked and divided by the public scale s, then clipped to C (sensitivity
        C); noise is added to the kept coordinates; ``g^ = s (S + noise) / normaliser`` on
        them, 0 elsewhere (masked parameters keep their value). Scores and scales come from
        earlier ``g^`` only.
    device : torch.device or None
        Where the tensors live (None: CPU). Sums are float64 on the device too.
    info : dict or None
        Filled with released-only diagnostics (``kept`` per stage) when given.
    secure : skdpgd._core.noise.SecureGenerator or None
        Secure mode: each step's sums (all parameters, in the fixed order, as one vector on
        the CPU) are released on a lattice with exact discrete Gaussian noise of ``noise_std``
        (:meth:`~skdpgd._core.noise.SecureGenerator.release`, L2 ``sensitivity`` of the whole
        vector); masked coordinates sum to 0 and get noise too, which the mask then zeroes.
    sensitivity : float or None
        The L2 sensitivity of one step's sum under the fit's relation (secure mode).

    Update (Hong et al., Eq. 3, bias-corrected momentum; momentum 0 is plain GD):
    ``g_t = S_t / normaliser``, ``v_t = beta v_{t-1} + (1 - beta) g_t``,
    ``theta_{t+1} = theta_t - lr v_t / (1 - beta^t)``.
    """
    torch = import_torch()
    device = torch.device("cpu") if device is None else torch.device(device)
    gen = torch.Generator(device=device).manual_seed(int(seed))
    model = build_mlp(layer_sizes, activation)
    params = {k: v.to(device) for k, v in params_to_torch(coefs, intercepts).items()}
    # a private, writable copy on the device
    Xt = torch.from_numpy(np.array(X, dtype=np.float32)).to(device)
    yt = encode_targets(y, n_outputs).to(device)
    n = Xt.shape[0]
    wt = (
        None
        if sample_weight is None
        else torch.from_numpy(np.asarray(sample_weight, dtype=np.float64)).to(device)
    )
    beta = float(momentum)
    velocity = {k: torch.zeros_like(v) for k, v in params.items()}
    beta_pow = 1.0
    names = list(params)
    stage_of = None
    keep_m = scale = coord = None
    if importance is not None:
        stage_of = np.empty(len(noise_std), dtype=int)
        for i, (t0, t1, _) in enumerate(importance["stages"]):
            stage_of[t0:t1] = i
        score = {
            k: torch.zeros(v.shape, dtype=torch.float64, device=device) for k, v in params.items()
        }
        second = {
            k: torch.zeros(v.shape, dtype=torch.float64, device=device) for k, v in params.items()
        }
        decay = float(importance["decay"])
        kept_counts = []
    # parameters are plain tensors (no autograd graph): torch.func.grad differentiates inside
    for step, std in enumerate(np.asarray(noise_std, dtype=float)):
        if sampling_rate < 1.0:
            keep = torch.rand(n, generator=gen, dtype=torch.float64, device=device) < sampling_rate
            Xb, yb, wb = Xt[keep], yt[keep], None if wt is None else wt[keep]
        else:
            Xb, yb, wb = Xt, yt, wt
        if stage_of is not None and (step == 0 or stage_of[step] != stage_of[step - 1]):
            stage = int(stage_of[step])
            if stage == 0:
                kept_counts.append(sum(v.numel() for v in params.values()))
            else:  # the mask and the scale of this stage, from released values only
                keep_m, scale, coord, n_kept = _importance_stage(
                    importance, names, params, score, second, importance["stages"][stage][2], device
                )
                kept_counts.append(n_kept)
                for k in names:  # a masked coordinate stops moving
                    velocity[k] = velocity[k] * keep_m[k].to(velocity[k].dtype)
        # rows with a non-finite gradient contributed 0 (the sum keeps its sensitivity); how
        # many there were depends on the private rows, so it decides nothing
        if coord is None:
            total, _ = clipped_grad_sum_checked(
                model, params, Xb, yb, n_outputs, clip_norm, weights=wb
            )
        else:  # masked and scaled before the clip: sensitivity C
            total, _ = _clipped_grad_sum_outer(
                model, params, Xb, yb, n_outputs, clip_norm, weights=wb, coord=coord
            )
        beta_pow *= beta
        released = None
        if secure is not None and std > 0:  # one lattice release of the whole vector
            flat = np.concatenate([total[k].detach().cpu().numpy().ravel() for k in params])
            out = secure.release(flat, float(std), float(sensitivity))
            released, at = {}, 0
            for k in params:
                size = total[k].numel()
                released[k] = (
                    torch.from_numpy(out[at : at + size].reshape(tuple(total[k].shape)))
                    .to(device)
                    .double()
                )
                at += size
        for k in params:  # fixed order: the noise draws are reproducible
            noisy = total[k]  # float64
            if released is not None:
                noisy = released[k]
            elif std > 0:
                draw = (
                    float(std)
                    * torch.randn(
                        noisy.shape, generator=gen, dtype=torch.float32, device=device
                    ).double()
                )
                noisy = noisy + (draw if keep_m is None else draw * keep_m[k])
            if stage_of is not None:  # the released mean gradient, restored to theta's scale
                ghat = noisy / float(normaliser)
                nv = (float(std) / float(normaliser)) ** 2
                if scale is not None:
                    ghat = ghat * scale[k] * keep_m[k]
                    nv = nv * (scale[k] * keep_m[k]) ** 2
                if stage_of[step] == 0:
                    score[k] += ghat.abs()
                second[k] = decay * second[k] + (1.0 - decay) * (ghat * ghat - nv)
                g = ghat.float()
            else:
                g = (noisy / float(normaliser)).float()
            if beta > 0:
                velocity[k] = beta * velocity[k] + (1.0 - beta) * g
                g = velocity[k] / (1.0 - beta_pow)
            params[k] = params[k] - float(learning_rate) * g
        # divergence is judged on the parameters: released values (post-processing)
        if not all(bool(torch.isfinite(v).all()) for v in params.values()):
            raise DivergenceError(
                f"the fit diverged: the parameters after step {step + 1} are not finite (in "
                "float32); the fit stopped there. Lower learning_rate."
            )
        if callback is not None:
            callback(step + 1)
    if info is not None and stage_of is not None:
        info["kept"] = kept_counts
    return params_to_numpy(params, len(layer_sizes) - 1)


@contextlib.contextmanager
def torch_threads(n_jobs):
    """Run the block with ``n_jobs`` torch threads (None: 1; -1: every core), then restore."""
    torch = import_torch()
    before = torch.get_num_threads()
    if n_jobs is None:
        n = 1
    elif n_jobs < 0:
        n = max(1, (os.cpu_count() or 1) + 1 + int(n_jobs))
    else:
        n = max(1, int(n_jobs))
    torch.set_num_threads(n)
    try:
        yield n
    finally:
        torch.set_num_threads(before)


def torch_seed(gen):
    """A torch seed drawn from the fit's generator (so random_state fixes everything; in
    secure mode a secret seed of the Poisson sampling, whose noise does not use torch)."""
    return int(gen.integers(0, 2**63 - 1))


__all__ = [
    "import_torch",
    "run_noisy_gd",
    "clipped_grad_sum",
    "per_example_grads",
    "clip_factors",
    "clipped_grad_sum_checked",
    "torch_threads",
    "build_mlp",
    "encode_targets",
    "PER_EXAMPLE_METHOD",
    "params_to_torch",
    "params_to_numpy",
    "torch_seed",
    "TORCH_REQUIREMENT",
    "CLIP_MARGIN",
]

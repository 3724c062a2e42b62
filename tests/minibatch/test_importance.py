"""Importance-masked DP-SGD (seed 002, AdaDPIGU, made private): sensitivity, accounting,
scores from released values only, equivalence with plain DP-SGD when nothing is masked."""

import importlib.util

import numpy as np
import pytest
import scipy.sparse as sp

from skdpgd import DPSGDClassifier, DPSGDRegressor, ImportanceMask
from skdpgd._core.importance_mask import coordinate_scale, kept_coordinates, resolve_importance
from skdpgd._minibatch.importance import _stage_data, run_linear
from skdpgd._compute.kernels import LOSS_LOGISTIC, LOSS_MULTINOMIAL
from skdpgd._compute.kernels_sgd import sgd_dense, sgd_masked, sgd_state

HAS_TORCH = importlib.util.find_spec("torch") is not None


def _data(n=2000, d=60, seed=0, informative=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = np.zeros(d)
    w[:informative] = 2.0
    y = (X @ w + rng.normal(size=n) > 0).astype(int)
    return X / np.sqrt(d), y


# --- the mask's parameters -------------------------------------------------------------------


def test_stages_are_public_and_cover_every_step():
    m = ImportanceMask(pretrain_fraction=0.1, keep=0.6, unfreeze=4)
    st = m.stages(1000)
    assert st[0] == (0, 100, 1.0)
    assert [s[2] for s in st[1:]] == pytest.approx([0.6, 0.7, 0.8, 0.9])
    assert st[-1][1] == 1000
    assert all(a[1] == b[0] for a, b in zip(st[:-1], st[1:]))
    assert ImportanceMask(unfreeze=1).stages(10) == [(0, 1, 1.0), (1, 10, 0.6)]


@pytest.mark.parametrize(
    "bad",
    [
        dict(keep=0.0),
        dict(keep=1.5),
        dict(pretrain_fraction=1.0),
        dict(unfreeze=0),
        dict(unfreeze=2.5),
        dict(scaling="yes"),
    ],
)
def test_bad_mask_parameters_raise_and_fit_nothing(bad):
    X, y = _data(300, 5)
    est = DPSGDClassifier(
        data_norm=1.0, n_samples=300, random_state=0, importance=ImportanceMask(**bad)
    )
    with pytest.raises(ValueError, match="ImportanceMask"):
        est.fit(X, y)
    assert not hasattr(est, "coef_") and not hasattr(est, "epsilon_")


def test_auto_is_off_and_default_is_none():
    assert DPSGDClassifier().importance is None
    assert resolve_importance("auto") is None
    assert resolve_importance(None) is None
    with pytest.raises(ValueError):
        resolve_importance("on")


def test_kept_coordinates_are_the_top_scores():
    score = np.array([0.1, 5.0, np.nan, 3.0, 3.0, 0.0])
    assert list(kept_coordinates(score, 0.5)) == [1, 3, 4]
    assert list(kept_coordinates(score, 0.01)) == [1]  # at least one
    assert list(kept_coordinates(score, 1.0)) == list(range(6))


def test_scale_is_bounded_and_normalised():
    second = np.array([0.0, 1e-30, 1.0, 4.0, 1e6])
    kept = np.arange(5)
    s = coordinate_scale(second, kept, True)
    assert np.all(s >= 0.1 - 1e-15) and np.all(s <= 10.0 + 1e-12)
    assert np.all(coordinate_scale(second, kept, False) == 1.0)
    assert np.all(coordinate_scale(np.zeros(5), kept, True) == 1.0)


# --- sensitivity after the mask and the scale ----------------------------------------------


def _released_sum(Xk, y, w, row_scale, aug, loss, clip, n_out, d_kept, s):
    """One noiseless step at q = 1 from theta = 0 (lr 1, no penalty): the released sum S is
    ``coef' * n_norm / s^2`` (the step is ``pre * S / n_norm`` with ``pre = s^2``)."""
    n = row_scale.shape[0]
    state = sgd_state(n_out, d_kept)
    stats = (np.zeros((n_out, d_kept)), np.zeros((n_out, d_kept)))
    assert (
        sgd_masked(
            Xk,
            y,
            w,
            row_scale,
            aug,
            loss,
            0.0,
            clip,
            True,
            0.0,
            1.0,
            float(n),
            np.ones(1),
            np.zeros(1),
            0.0,
            np.inf,
            state,
            0,
            1,
            0,
            np.random.default_rng(0),
            s * s,
            s,
            stats,
            0.99,
        )
        == -1
    )
    return np.concatenate([(-state[0] * n / (s * s)).ravel(), -state[1] * n])


@pytest.mark.parametrize("sparse_input", [False, True])
@pytest.mark.parametrize("n_out", [1, 3])
@pytest.mark.parametrize("clip", [0.05, 1.0])
def test_adversarial_neighbour_moves_the_masked_scaled_sum_by_at_most_clip(
    sparse_input, n_out, clip
):
    """Neighbouring pairs D, D + {x*}: x* with huge values in the masked columns only (it must
    contribute exactly 0), x* huge in the kept column with the smallest scale (amplified 10x
    before the clip), x* with NaN in a masked column. Each moves the released sum by <= C."""
    rng = np.random.default_rng(1)
    n, d = 40, 12
    kept = np.array([0, 3, 4, 7, 9])
    masked = np.setdiff1d(np.arange(d), kept)
    s = np.array([10.0, 0.1, 1.0, 3.0, 0.1])  # public scale, extreme ratios
    base = rng.normal(size=(n, d)) * 3
    adversaries = []
    a = np.zeros(d)
    a[masked] = 1e150
    adversaries.append(a)
    a = np.zeros(d)
    a[kept[1]] = 1e150
    adversaries.append(a)
    a = rng.normal(size=d) * 50
    a[masked[0]] = np.nan
    adversaries.append(a)
    a = rng.normal(size=d) * 50
    adversaries.append(a)
    y_base = rng.integers(0, n_out if n_out > 1 else 2, n).astype(float)
    if n_out == 1:
        y_base = np.where(y_base > 0, 1.0, -1.0)
    loss = LOSS_LOGISTIC if n_out == 1 else LOSS_MULTINOMIAL
    data_norm = 2.0
    for k, adv in enumerate(adversaries):
        sums = []
        for with_adv in (False, True):
            X = np.vstack([base, adv]) if with_adv else base
            m = n + int(with_adv)
            y = np.concatenate([y_base, [1.0]]) if with_adv else y_base
            Xc = np.where(np.isfinite(X), X, 0.0)  # the data-norm clip uses the finite part
            norms = np.sqrt(np.sum((Xc / 1e100) ** 2, axis=1)) * 1e100
            row_scale = np.minimum(1.0, data_norm / np.maximum(norms, 1e-300))
            Xin = sp.csr_matrix(np.where(np.isfinite(X), X, 0.0)) if sparse_input else Xc
            if sparse_input and not np.all(np.isfinite(X)):
                Xin = sp.csr_matrix(Xc)
            Xk, aug, _ = _stage_data(Xin, kept, s, row_scale, True)
            sums.append(
                _released_sum(
                    Xk, y, np.ones(m), row_scale, aug, loss, clip, n_out, kept.shape[0], s
                )
            )
        diff = np.linalg.norm(sums[1] - sums[0])
        assert diff <= clip * (1 + 1e-9), (k, diff)
        if k == 0:  # entirely in masked columns: only the intercept column can move
            assert np.all(np.abs((sums[1] - sums[0])[:-n_out]) < 1e-9 * clip)


def test_scores_are_the_mean_magnitude_of_the_released_gradients():
    """Pre-training steps are the plain kernel's; the scores equal mean_t |g^_t| recomputed
    from the released iterates only (g^_t = (theta_t - theta_{t+1}) / eta - alpha theta_t)."""
    rng = np.random.default_rng(2)
    n, d, T = 300, 8, 30
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    aug = np.sqrt(np.sum(X**2, axis=1) + 1)
    rs, w = np.ones(n), np.ones(n)
    lr, alpha, q, std = 0.5, 0.01, 0.2, 3.0
    steps, noise = np.full(T, lr), np.full(T, std)
    common = (LOSS_LOGISTIC, 0.0, 1.0, True, alpha, q, q * n, steps, noise, 0.0, np.inf)
    mask = ImportanceMask(pretrain_fraction=0.5, keep=0.5, unfreeze=1, scaling=False)
    state = sgd_state(1, d)
    _, info = run_linear(
        mask, X, y, w, rs, aug, common, state, T, T, np.random.default_rng(5), 1.0, 1e150, True, 1.0
    )
    # replay the pre-training with the plain kernel, one step at a time
    state = sgd_state(1, d)
    gen = np.random.default_rng(5)
    ghat = []
    for t in range(T // 2):
        before = state[0].copy()
        sgd_dense(X, y, w, rs, aug, *common, state, t, t + 1, T, gen)
        ghat.append((before - state[0]) / lr - alpha * before)
    expected = np.mean(np.abs(np.array(ghat)), axis=0)[0]
    np.testing.assert_allclose(info["scores"], expected, rtol=1e-9, atol=1e-12)
    assert info["kept"] == [d, d // 2]


# --- fits -----------------------------------------------------------------------------------


@pytest.mark.parametrize("sparse_input", [False, True])
def test_nothing_masked_and_no_scaling_is_plain_dp_sgd(sparse_input):
    X, y = _data(1500, 20)
    Xf = sp.csr_matrix(X) if sparse_input else X
    kw = dict(epsilon=1.0, data_norm=1.0, n_samples=1500, random_state=0)
    a = DPSGDClassifier(**kw).fit(Xf, y)
    b = DPSGDClassifier(**kw, importance=ImportanceMask(keep=1.0, unfreeze=1, scaling=False)).fit(
        Xf, y
    )
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-9, atol=1e-12)
    assert a.importance_kept_ is None and list(b.importance_kept_) == [20, 20]


@pytest.mark.parametrize("Est,target", [(DPSGDClassifier, "cls"), (DPSGDRegressor, "reg")])
@pytest.mark.parametrize(
    "mask",
    [
        ImportanceMask(scaling=True),
        ImportanceMask(keep=0.2, unfreeze=1),
        ImportanceMask(scaling=False, pretrain_fraction=0.3),
    ],
)
def test_epsilon_and_noise_equal_plain_dp_sgd(Est, target, mask):
    X, y = _data(1200, 30)
    if target == "reg":
        y = X[:, 0] * 3 + 0.1
    kw = dict(
        epsilon=2.0,
        delta=1e-6,
        data_norm=1.0,
        n_samples=1200,
        random_state=0,
        batch_size=100,
        epochs=3,
    )
    if target == "reg":
        kw["y_bound"] = 2.0
    plain = Est(**kw).fit(X, y)
    masked = Est(**kw, importance=mask).fit(X, y)
    assert masked.epsilon_ == plain.epsilon_ <= 2.0
    assert masked.n_iter_ == plain.n_iter_
    assert masked.sampling_rate_ == plain.sampling_rate_
    np.testing.assert_array_equal(masked.noise_multipliers_, plain.noise_multipliers_)
    assert masked.clip_norm_ == plain.clip_norm_
    assert masked.importance_kept_[0] == 30
    assert masked.importance_kept_[1] == int(np.floor(mask.keep * 30))


@pytest.mark.parametrize("sparse_input", [False, True])
def test_masked_fit_learns_sparse_signal_and_is_reproducible(sparse_input):
    X, y = _data(3000, 200, informative=5)
    Xf = sp.csr_matrix(X) if sparse_input else X
    kw = dict(
        epsilon=4.0,
        data_norm=1.0,
        n_samples=3000,
        random_state=3,
        importance=ImportanceMask(scaling=False),
    )
    a = DPSGDClassifier(**kw).fit(Xf, y)
    b = DPSGDClassifier(**kw).fit(Xf, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.score(X, y) > 0.75
    # the top-5 weights are mostly the informative features
    top = np.argsort(-np.abs(a.coef_[0]))[:5]
    assert np.sum(top < 5) >= 3


def test_multinomial_masked_fit_runs_with_the_same_budget():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(900, 15)) / 4
    y = np.argmax(X[:, :3], axis=1)
    kw = dict(epsilon=1.0, data_norm=1.0, n_samples=900, random_state=0, classes=[0, 1, 2])
    a = DPSGDClassifier(**kw).fit(X, y)
    b = DPSGDClassifier(**kw, importance=ImportanceMask(scaling=True)).fit(X, y)
    assert b.coef_.shape == (3, 15) and b.epsilon_ == a.epsilon_
    assert np.all(np.isfinite(b.coef_))


# --- the MLP ---------------------------------------------------------------------------------

torch_only = pytest.mark.skipif(not HAS_TORCH, reason="needs torch")


def _digits_small():
    from sklearn.datasets import load_digits

    X, y = load_digits(n_class=4, return_X_y=True)
    return X[:500] / 16.0, y[:500]


@torch_only
def test_mlp_coordinate_weights_clip_the_transformed_gradient_exactly():
    """The closed-form norm of the masked, scaled gradient (outer products) equals the norm
    of the per-example gradients from torch.func multiplied by the weights; so does the sum."""
    import torch

    from skdpgd._network import torch_backend as tb

    rng = np.random.default_rng(0)
    sizes = [6, 5, 3]
    model = tb.build_mlp(sizes, "tanh")
    coefs = [rng.normal(size=(a, b)) for a, b in zip(sizes[:-1], sizes[1:])]
    ints = [rng.normal(size=b) for b in sizes[1:]]
    params = tb.params_to_torch(coefs, ints)
    X = torch.tensor(rng.normal(size=(30, 6)) * 2, dtype=torch.float32)
    y = tb.encode_targets(rng.integers(0, 3, 30), 3)
    coord = {
        k: torch.tensor(rng.choice([0.0, 0.1, 1.0, 10.0], size=v.shape), dtype=torch.float64)
        for k, v in params.items()
    }
    clip = 0.3
    total, _ = tb._clipped_grad_sum_outer(model, params, X, y, 3, clip, coord=coord)
    grads = tb.per_example_grads(model, params, X, y, 3)
    grads = {k: g.double() * coord[k] for k, g in grads.items()}
    norms = torch.sqrt(sum((g.flatten(1) ** 2).sum(1) for g in grads.values()))
    f = torch.clamp(clip * (1 - tb.CLIP_MARGIN) / norms, max=1.0)
    for k, g in grads.items():
        np.testing.assert_allclose(
            total[k].numpy(), torch.tensordot(f, g, dims=1).numpy(), rtol=2e-4, atol=1e-6
        )


@torch_only
@pytest.mark.parametrize("clip", [0.1, 2.0])
def test_mlp_adversarial_neighbour_moves_the_masked_scaled_sum_by_at_most_clip(clip):
    import torch

    from skdpgd._network import torch_backend as tb

    rng = np.random.default_rng(1)
    sizes = [5, 4, 1]
    model = tb.build_mlp(sizes, "relu")
    params = tb.params_to_torch(
        [rng.normal(size=(a, b)) for a, b in zip(sizes[:-1], sizes[1:])],
        [rng.normal(size=b) for b in sizes[1:]],
    )
    coord = {
        k: torch.tensor(rng.choice([0.0, 0.1, 10.0], size=v.shape), dtype=torch.float64)
        for k, v in params.items()
    }
    coord["0.weight"][:, 0] = 0.0  # input feature 0 reaches only masked weights
    X = torch.tensor(rng.normal(size=(25, 5)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 2, 25), dtype=torch.float32)
    base, _ = tb._clipped_grad_sum_outer(model, params, X, y, 1, clip, coord=coord)
    for adv in (
        [1e30, 0, 0, 0, 0],
        [0, 1e30, -1e30, 0, 0],
        [np.nan, 1, 1, 1, 1],
        [3.0, -2.0, 5.0, 1.0, 0.5],
    ):
        Xa = torch.cat([X, torch.tensor([adv], dtype=torch.float32)])
        ya = torch.cat([y, torch.tensor([1.0])])
        tot, _ = tb._clipped_grad_sum_outer(model, params, Xa, ya, 1, clip, coord=coord)
        diff = torch.sqrt(sum(((tot[k] - base[k]) ** 2).sum() for k in tot))
        assert float(diff) <= clip, (adv, float(diff))
        for k in tot:  # masked coordinates of the sum stay exactly 0
            assert torch.all(tot[k][coord[k] == 0] == 0)


@torch_only
def test_mlp_nothing_masked_is_plain_and_budget_is_the_same():
    from skdpgd import DPMLPClassifier

    X, y = _digits_small()
    kw = dict(
        hidden_layer_sizes=(8,),
        epsilon=2.0,
        clip_norm=1.0,
        learning_rate=1.0,
        max_iter=30,
        batch_size=100,
        n_samples=500,
        classes=[0, 1, 2, 3],
        random_state=0,
    )
    a = DPMLPClassifier(**kw).fit(X, y)
    b = DPMLPClassifier(**kw, importance=ImportanceMask(keep=1.0, unfreeze=1, scaling=False)).fit(
        X, y
    )
    for ca, cb in zip(a.coefs_ + a.intercepts_, b.coefs_ + b.intercepts_):
        np.testing.assert_array_equal(ca, cb)
    c = DPMLPClassifier(**kw, importance=ImportanceMask(scaling=True)).fit(X, y)
    assert c.epsilon_ == a.epsilon_ and c.n_iter_ == a.n_iter_
    np.testing.assert_array_equal(c.noise_multipliers_, a.noise_multipliers_)
    n_params = 64 * 8 + 8 + 8 * 4 + 4
    assert c.importance_kept_[0] == n_params
    assert c.importance_kept_[1] == int(np.floor(0.6 * n_params))
    assert a.importance_kept_ is None
    assert np.all(np.isfinite(c.coefs_[0]))


@torch_only
def test_mlp_masked_parameters_do_not_move():
    """With a fixed mask (one stage), after pre-training the masked parameters keep their value:
    fitting T and T_pre steps (same seed, same pre-training) must agree on them."""
    from skdpgd import DPMLPClassifier

    X, y = _digits_small()
    kw = dict(
        hidden_layer_sizes=(8,),
        epsilon=np.inf,
        clip_norm=1.0,
        learning_rate=1.0,
        n_samples=500,
        classes=[0, 1, 2, 3],
        random_state=0,
        batch_size=100,
    )
    full = DPMLPClassifier(
        **kw,
        max_iter=40,
        importance=ImportanceMask(pretrain_fraction=0.25, keep=0.3, unfreeze=1, scaling=False),
    ).fit(X, y)
    pre = DPMLPClassifier(**kw, max_iter=10).fit(X, y)
    w_full = np.concatenate([c.ravel() for c in full.coefs_ + full.intercepts_])
    w_pre = np.concatenate([c.ravel() for c in pre.coefs_ + pre.intercepts_])
    same = np.isclose(w_full, w_pre, rtol=0, atol=0)
    # about 70% of the parameters were masked (the rest moved)
    assert 0.6 <= same.mean() <= 0.75


# --- device -----------------------------------------------------------------------------------


@torch_only
def test_device_cpu_forms_agree_and_bad_devices_raise():
    import torch

    from skdpgd import DPMLPClassifier

    X, y = _digits_small()
    kw = dict(
        hidden_layer_sizes=(8,),
        epsilon=2.0,
        max_iter=10,
        learning_rate=1.0,
        classes=[0, 1, 2, 3],
        random_state=0,
    )
    a = DPMLPClassifier(**kw).fit(X, y)
    b = DPMLPClassifier(**kw, device=torch.device("cpu")).fit(X, y)
    for ca, cb in zip(a.coefs_, b.coefs_):
        np.testing.assert_array_equal(ca, cb)
    for bad in ("tpu-ish", 3.5):
        est = DPMLPClassifier(**kw, device=bad)
        with pytest.raises(ValueError, match="device"):
            est.fit(X, y)
        assert not hasattr(est, "coefs_")
    if not torch.cuda.is_available():
        est = DPMLPClassifier(**kw, device="cuda")
        with pytest.raises(ValueError, match="CUDA"):
            est.fit(X, y)
        assert not hasattr(est, "epsilon_")


@torch_only
def test_cuda_fit_has_the_same_accounting_and_learns():
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from skdpgd import DPMLPClassifier

    X, y = _digits_small()
    kw = dict(
        hidden_layer_sizes=(16,),
        epsilon=4.0,
        max_iter=60,
        learning_rate=1.0,
        batch_size=128,
        n_samples=500,
        classes=[0, 1, 2, 3],
        random_state=0,
    )
    cpu = DPMLPClassifier(**kw).fit(X, y)
    gpu = DPMLPClassifier(**kw, device="cuda").fit(X, y)
    assert gpu.epsilon_ == cpu.epsilon_
    np.testing.assert_array_equal(gpu.noise_multipliers_, cpu.noise_multipliers_)
    assert gpu.score(X, y) > 0.7 and cpu.score(X, y) > 0.7
    masked = DPMLPClassifier(**kw, device="cuda", importance=ImportanceMask(scaling=True)).fit(X, y)
    assert masked.epsilon_ == cpu.epsilon_


# --- scikit-learn's contract with the mask on ------------------------------------------------


def _masked_estimators():
    est = [
        DPSGDClassifier(random_state=0, importance=ImportanceMask()),
        DPSGDRegressor(random_state=0, importance=ImportanceMask(scaling=True)),
    ]
    if HAS_TORCH:
        from skdpgd import DPMLPClassifier

        est.append(
            DPMLPClassifier(
                hidden_layer_sizes=(8,),
                max_iter=20,
                learning_rate=0.5,
                clip_norm=1.0,
                random_state=0,
                importance=ImportanceMask(),
            )
        )
    return est


def _expected_failed(estimator):
    from tests.package.test_estimator_checks import expected_failed_checks

    return expected_failed_checks(estimator)


from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402


@parametrize_with_checks(_masked_estimators(), expected_failed_checks=_expected_failed)
def test_masked_estimators_keep_the_sklearn_contract(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    "extra",
    [
        dict(momentum=0.5),
        dict(average=False),
        dict(class_weight="balanced"),
        dict(schedule="hong"),
        dict(schedule="exponential"),
        dict(fit_intercept=False),
        dict(accountant="pld", epochs=2, batch_size=100),
    ],
)
def test_mask_composes_with_the_other_options(extra):
    X, y = _data(800, 12)
    kw = dict(epsilon=2.0, data_norm=1.0, n_samples=800, random_state=0, classes=[0, 1], **extra)
    plain = DPSGDClassifier(**kw).fit(X, y)
    masked = DPSGDClassifier(**kw, importance=ImportanceMask(scaling=True)).fit(X, y)
    assert masked.epsilon_ == plain.epsilon_
    np.testing.assert_array_equal(masked.noise_multipliers_, plain.noise_multipliers_)
    assert np.all(np.isfinite(masked.coef_)) and masked.score(X, y) > 0.6


@pytest.mark.parametrize("sparse_input", [False, True])
@pytest.mark.parametrize("classes", [[0, 1], [0, 1, 2]])
def test_linear_masked_weights_are_frozen_and_still_in_the_margins(sparse_input, classes):
    """Noiseless, no averaging: the masked weights after the full fit equal those after the
    pre-training steps alone (same seed, same batches); and freezing differs from pruning
    (the frozen part of the margins is used: the kept weights end elsewhere)."""
    import skdpgd.policy as policy

    rng = np.random.default_rng(4)
    X = rng.normal(size=(600, 10)) / 3
    y = np.argmax(X[:, : len(classes)] + 0.3 * X[:, 5 : 5 + len(classes)], axis=1)
    Xf = sp.csr_matrix(X) if sparse_input else X
    kw = dict(
        epsilon=np.inf,
        data_norm=2.0,
        n_samples=600,
        random_state=0,
        classes=classes,
        batch_size=60,
        average=False,
        alpha=1e-3,
    )
    mask = ImportanceMask(pretrain_fraction=0.25, keep=0.5, unfreeze=1)
    full = DPSGDClassifier(**kw, epochs=4.0, importance=mask).fit(Xf, y)
    pre = DPSGDClassifier(**kw, epochs=1.0).fit(Xf, y)
    assert full.n_iter_ == 40 and pre.n_iter_ == 10
    same = np.all(np.isclose(full.coef_, pre.coef_, rtol=1e-12, atol=1e-14), axis=0)
    assert same.sum() == 5  # the 5 masked features did not move; the 5 kept ones did
    with policy.using(IMPORTANCE_LINEAR_FREEZE=False):
        pruned = DPSGDClassifier(**kw, epochs=4.0, importance=mask).fit(Xf, y)
    assert np.all(pruned.coef_[:, same] == 0.0)
    assert not np.allclose(pruned.coef_[:, ~same], full.coef_[:, ~same])


@pytest.mark.parametrize("sparse_input", [False, True])
@pytest.mark.parametrize("n_out", [1, 3])
def test_frozen_margin_columns_stay_inside_the_clip(sparse_input, n_out):
    """The frozen part of the margins rides along as extra columns (divided by 1e6); an
    adversary with huge values in the masked (frozen) features makes those columns huge: the
    row kernel's clipped sum (what step t releases before the noise) still moves by <= C."""
    from skdpgd._minibatch.importance import FROZEN_COLUMN_SCALE
    from skdpgd._compute.kernels import _sum_rows_csr, _sum_rows_multi, _sum_rows_single

    rng = np.random.default_rng(7)
    n, d, clip = 30, 8, 0.5
    kept, dropped = np.array([0, 2, 5]), np.array([1, 3, 4, 6, 7])
    frozen = rng.normal(size=(n_out, dropped.size)) * 5
    coef_kept = rng.normal(size=(n_out, kept.size))
    s = np.array([0.1, 1.0, 10.0])
    loss = LOSS_LOGISTIC if n_out == 1 else LOSS_MULTINOMIAL
    base = rng.normal(size=(n, d))
    y_base = (
        np.where(rng.random(n) < 0.5, 1.0, -1.0)
        if n_out == 1
        else rng.integers(0, n_out, n).astype(float)
    )
    for scale_adv in (1e150, 1e3, 1.0):
        adv = np.zeros(d)
        adv[dropped] = scale_adv
        sums = []
        for X, y in ((base, y_base), (np.vstack([base, adv]), np.append(y_base, 1.0))):
            m = X.shape[0]
            norms = np.sqrt(np.sum((X / 1e100) ** 2, axis=1)) * 1e100
            row_scale = np.minimum(1.0, 3.0 / norms)
            offsets = X[:, dropped] @ frozen.T
            cols = np.concatenate([kept, d + np.arange(n_out)])
            s_cols = np.concatenate([s, np.full(n_out, FROZEN_COLUMN_SCALE)])
            Xs = np.hstack([X, offsets])
            Xk, aug, _ = _stage_data(
                sp.csr_matrix(Xs) if sparse_input else Xs, cols, s_cols, row_scale, True
            )
            coef = np.ascontiguousarray(
                np.hstack([coef_kept * s, np.eye(n_out) * FROZEN_COLUMN_SCALE])
            )
            gcoef, gint = np.zeros((n_out, cols.size)), np.zeros(n_out)
            args = (
                y,
                np.ones(m),
                row_scale,
                aug,
                np.arange(m, dtype=np.int64),
                0,
                m,
                loss,
                0.0,
                clip,
                coef,
                np.zeros(n_out),
                gcoef,
                gint,
            )
            if sparse_input:
                _sum_rows_csr(*Xk, *args)
            elif n_out == 1:
                _sum_rows_single(Xk, *args)
            else:
                _sum_rows_multi(Xk, *args)
            sums.append(np.concatenate([gcoef.ravel(), gint]))
        diff = np.linalg.norm(sums[1] - sums[0])
        assert np.all(np.isfinite(sums[1])) and diff <= clip * (1 + 1e-9), (scale_adv, diff)
        if scale_adv == 1.0:  # a moderate adversary does contribute (the test can see it)
            assert diff > 0.01 * clip

"""DPMLPClassifier and the optional torch backend.

Tests that need torch take the ``torch`` fixture (``pytest.importorskip``); the import-error
and lazy-import tests run without it.
"""

import importlib.util
import math
import subprocess
import sys

import numpy as np
import pytest

from skdpgd._core.setup import generator as _generator
from skdpgd.accounting import GaussianDPAccountant, GaussianSteps, RDPAccountant, compose_gdp
from skdpgd._network.road import _glorot_init
from skdpgd.neural import DPMLPClassifier
from skdpgd import policy
from skdpgd.exceptions import PrivacyLeakWarning
from skdpgd.policy import MLP_HONG_INFLUENCE

HAS_TORCH = importlib.util.find_spec("torch") is not None


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """One intra-op thread: on a busy machine every multi-threaded matmul waits ~20 ms for
    a descheduled worker, which made these tiny fits ~15x slower."""
    if not HAS_TORCH:
        yield
        return
    import torch

    n_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n_threads)


def _data(n=60, d=3, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if n_classes == 2:
        y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    else:
        y = np.digitize(X[:, 0], np.linspace(-0.6, 0.6, n_classes - 1))
    return X, y


# ---------------------------------------------------------------------------------------
# without torch
# ---------------------------------------------------------------------------------------


def test_import_skdpgd_does_not_import_torch():
    code = (
        "import sys, skdpgd, skdpgd.neural, skdpgd.accounting, skdpgd.schedules; "
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_clear_import_error_without_torch(monkeypatch):
    # None in sys.modules makes ``import torch`` raise ImportError, as if it were missing.
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "torch.func", None)
    X, y = _data()
    with pytest.raises(
        ImportError, match=r"pip install torch --index-url https://download.pytorch.org/whl/cpu"
    ):
        DPMLPClassifier(hidden_layer_sizes=(4,), max_iter=2).fit(X, y)


def test_validation_errors_before_torch():
    X, y = _data()
    with pytest.raises(ValueError, match="at least 2 classes"):
        DPMLPClassifier().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError):
        DPMLPClassifier(hidden_layer_sizes=(4, 0)).fit(X, y)
    with pytest.raises(ValueError):
        DPMLPClassifier(activation="softsign").fit(X, y)


# ---------------------------------------------------------------------------------------
# backend: per-example gradients and clipping
# ---------------------------------------------------------------------------------------


def _loop_grads(torch, layer_sizes, activation, coefs, intercepts, X, y, n_outputs):
    """Per-example gradients the slow way: one autograd backward per example."""
    from skdpgd._network import torch_backend as tb

    model = tb.build_mlp(layer_sizes, activation)
    init = tb.params_to_torch(coefs, intercepts)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(init[name])
    out = []
    for i in range(X.shape[0]):
        model.zero_grad()
        s = model(torch.tensor(X[i : i + 1], dtype=torch.float32))
        if n_outputs == 1:
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                s[:, 0], torch.tensor([float(y[i])])
            )
        else:
            loss = torch.nn.functional.cross_entropy(s, torch.tensor([int(y[i])]))
        loss.backward()
        out.append({name: p.grad.detach().clone() for name, p in model.named_parameters()})
    return out


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("activation", ["relu", "tanh", "logistic"])
def test_per_example_grads_match_loop(torch, n_classes, activation):
    from skdpgd._network import torch_backend as tb

    X, y = _data(n=9, d=3, n_classes=n_classes, seed=1)
    n_outputs = 1 if n_classes == 2 else n_classes
    layer_sizes = [3, 5, 4, n_outputs]
    coefs, intercepts = _glorot_init(layer_sizes, activation, np.random.default_rng(0))
    model = tb.build_mlp(layer_sizes, activation)
    params = tb.params_to_torch(coefs, intercepts)
    grads = tb.per_example_grads(
        model,
        params,
        torch.tensor(X, dtype=torch.float32),
        tb.encode_targets(y, n_outputs),
        n_outputs,
    )
    loop = _loop_grads(torch, layer_sizes, activation, coefs, intercepts, X, y, n_outputs)
    for i, ref in enumerate(loop):
        for name, g in ref.items():
            np.testing.assert_allclose(grads[name][i].numpy(), g.numpy(), rtol=1e-5, atol=1e-6)


def test_clipped_contributions_within_clip_norm(torch):
    from skdpgd._network import torch_backend as tb

    X, y = _data(n=40, d=3, seed=2)
    X[0] *= 1e3  # a far-out row: large gradient
    layer_sizes = [3, 6, 1]
    coefs, intercepts = _glorot_init(layer_sizes, "relu", np.random.default_rng(1))
    model = tb.build_mlp(layer_sizes, "relu")
    params = tb.params_to_torch(coefs, intercepts)
    Xt, yt = torch.tensor(X, dtype=torch.float32), tb.encode_targets(y, 1)
    grads = tb.per_example_grads(model, params, Xt, yt, 1)
    for C in (1e-3, 0.05, 1.0):
        factors, norms = tb.clip_factors(grads, C)
        assert float(norms.max()) > C  # clipping is active for some rows
        clipped = [
            torch.cat([(factors[i].float() * g[i]).flatten() for g in grads.values()])
            for i in range(X.shape[0])
        ]
        clipped_norms = np.array(
            [float(torch.linalg.vector_norm(c, dtype=torch.float64)) for c in clipped]
        )
        assert np.all(clipped_norms <= C), clipped_norms.max() / C
        # the released sum of one row is one clipped contribution: norm <= C (sensitivity)
        for i in (0, 1):
            for method in ("outer", "vmap"):
                s = tb.clipped_grad_sum(
                    model, params, Xt[i : i + 1], yt[i : i + 1], 1, C, method=method
                )
                total = math.sqrt(sum(float((v.double() ** 2).sum()) for v in s.values()))
                assert total <= C


@pytest.mark.parametrize("hidden", [(), (6,), (5, 4)])
@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("activation", ["relu", "tanh", "logistic"])
def test_outer_method_matches_vmap(torch, hidden, n_classes, activation):
    """The fast outer-product clipped sum equals the torch.func (vmap) one."""
    from skdpgd._network import torch_backend as tb

    X, y = _data(n=30, d=3, n_classes=n_classes, seed=9)
    X[:3] *= 30.0  # some rows clipped, some not
    n_outputs = 1 if n_classes == 2 else n_classes
    layer_sizes = [3, *hidden, n_outputs]
    coefs, intercepts = _glorot_init(layer_sizes, activation, np.random.default_rng(2))
    model = tb.build_mlp(layer_sizes, activation)
    params = tb.params_to_torch(coefs, intercepts)
    Xt, yt = torch.tensor(X, dtype=torch.float32), tb.encode_targets(y, n_outputs)
    for C in (0.05, 1.0, 1e6):
        a = tb.clipped_grad_sum(model, params, Xt, yt, n_outputs, C, method="outer")
        b = tb.clipped_grad_sum(model, params, Xt, yt, n_outputs, C, method="vmap")
        for k in params:
            np.testing.assert_allclose(a[k].numpy(), b[k].numpy(), rtol=1e-4, atol=1e-6)


def test_estimator_same_with_either_method(torch, monkeypatch):
    from skdpgd._network import torch_backend as tb

    X, y = _data(n=40, n_classes=3, seed=10)
    params = dict(hidden_layer_sizes=(5,), epsilon=2.0, clip_norm=0.3, max_iter=8, random_state=0)
    a = DPMLPClassifier(**params).fit(X, y)
    monkeypatch.setattr(tb, "PER_EXAMPLE_METHOD", "vmap")
    b = DPMLPClassifier(**params).fit(X, y)
    for wa, wb in zip(a.coefs_ + a.intercepts_, b.coefs_ + b.intercepts_):
        np.testing.assert_allclose(wa, wb, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("method", ["outer", "vmap"])
def test_non_finite_gradients_are_zeroed(torch, method):
    from skdpgd._network import torch_backend as tb

    layer_sizes = [2, 3, 1]
    coefs, intercepts = _glorot_init(layer_sizes, "relu", np.random.default_rng(0))
    model = tb.build_mlp(layer_sizes, "relu")
    params = tb.params_to_torch(coefs, intercepts)
    X = torch.tensor([[3e38, 3e38], [1.0, -1.0]], dtype=torch.float32)
    s = tb.clipped_grad_sum(
        model, params, X, tb.encode_targets(np.array([0, 1]), 1), 1, 1.0, method=method
    )
    assert all(bool(torch.isfinite(v).all()) for v in s.values())
    total = math.sqrt(sum(float((v.double() ** 2).sum()) for v in s.values()))
    assert total <= 2.0


# ---------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("momentum", [0.0, 0.5])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_noise_off_matches_plain_full_batch_gd(torch, momentum, n_classes):
    """epsilon=inf and a clip norm that never binds: the plain mean-loss GD of torch."""
    X, y = _data(n=50, d=4, n_classes=n_classes, seed=3)
    T, lr = 15, 0.3
    clf = DPMLPClassifier(
        hidden_layer_sizes=(7,),
        activation="tanh",
        epsilon=np.inf,
        clip_norm=1e6,
        learning_rate=lr,
        max_iter=T,
        momentum=momentum,
        random_state=5,
    ).fit(X, y)
    assert np.all(clf.noise_multipliers_ == 0)

    n_outputs = 1 if n_classes == 2 else n_classes
    layer_sizes = [4, 7, n_outputs]
    coefs, intercepts = _glorot_init(layer_sizes, "tanh", _generator(5))
    model = torch.nn.Sequential(
        torch.nn.Linear(4, 7), torch.nn.Tanh(), torch.nn.Linear(7, n_outputs)
    )
    with torch.no_grad():
        for k, idx in enumerate((0, 2)):
            model[idx].weight.copy_(torch.tensor(coefs[k].T))
            model[idx].bias.copy_(torch.tensor(intercepts[k]))
    Xt = torch.tensor(X, dtype=torch.float32)
    velocity = [torch.zeros_like(p) for p in model.parameters()]
    for t in range(1, T + 1):
        model.zero_grad()
        s = model(Xt)
        if n_outputs == 1:
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                s[:, 0], torch.tensor(y, dtype=torch.float32)
            )
        else:
            loss = torch.nn.functional.cross_entropy(s, torch.tensor(y))
        loss.backward()
        with torch.no_grad():
            for v, p in zip(velocity, model.parameters()):
                if momentum:
                    v.mul_(momentum).add_((1 - momentum) * p.grad)
                    p -= lr * v / (1 - momentum**t)
                else:
                    p -= lr * p.grad
    for k, idx in enumerate((0, 2)):
        np.testing.assert_allclose(
            clf.coefs_[k], model[idx].weight.detach().numpy().T, rtol=1e-4, atol=1e-5
        )
        np.testing.assert_allclose(
            clf.intercepts_[k], model[idx].bias.detach().numpy(), rtol=1e-4, atol=1e-5
        )
    assert clf.score(X, y) > 0.7


@pytest.mark.parametrize("schedule", ["uniform", "hong", "exponential", "pur"])
@pytest.mark.parametrize("neighbouring", ["replace", "add_remove"])
def test_accounting_matches_gdp_accountant(torch, schedule, neighbouring):
    X, y = _data(n=80, seed=4)
    eps, delta, T, C = 1.5, 1e-6, 12, 0.7
    clf = DPMLPClassifier(
        hidden_layer_sizes=(3,),
        epsilon=eps,
        delta=delta,
        clip_norm=C,
        max_iter=T,
        schedule=schedule,
        neighbouring=neighbouring,
        n_samples=80,
        random_state=0,
    ).fit(X, y)
    acc = GaussianDPAccountant()
    if schedule == "uniform":
        shape = np.ones(T)
    elif schedule == "hong":
        gamma = MLP_HONG_INFLUENCE ** (1 / T)
        assert clf.decay_ == pytest.approx(gamma)
        shape = gamma ** (np.arange(T) / 4.0)  # z_t^2 ~ gamma^(t/2)
    elif schedule == "exponential":
        shape = 0.99 ** np.arange(T)  # the default decay of 'exponential'
    else:
        shape = clf.noise_multipliers_  # PUR picks its own T; its shape is checked below
        assert clf.n_iter_ <= T
        t = np.arange(1, clf.n_iter_)
        np.testing.assert_allclose(shape[:-1] * t, shape[0], rtol=1e-10)  # 1/t decay
    z = acc.calibrate(shape, eps, delta)
    np.testing.assert_allclose(clf.noise_multipliers_, z, rtol=1e-12)
    # epsilon_ is recomputed from the multipliers actually used
    assert clf.epsilon_ == acc.epsilon(GaussianSteps(clf.noise_multipliers_), delta)
    assert clf.epsilon_ <= eps and clf.epsilon_ == pytest.approx(eps, rel=1e-9)
    assert clf.mu_ == pytest.approx(compose_gdp(z)) and clf.rho_ == pytest.approx(clf.mu_**2 / 2)
    assert clf.delta_ == delta and clf.schedule_ == schedule
    assert clf.sensitivity_ == (2 * C if neighbouring == "replace" else C)
    assert clf.neighbouring_ == ("replace-one" if neighbouring == "replace" else "add/remove-one")


@pytest.mark.parametrize("neighbouring", ["replace", "add_remove"])
def test_noise_scale_is_multiplier_times_sensitivity(torch, neighbouring):
    """With X = 0 the first layer's weights get no gradient: their change is pure noise,
    ``-lr * N(0, (z Delta)^2) / N``, which measures the Delta the code really uses."""
    n, d, C, lr = 50, 40, 0.3, 0.7
    X = np.zeros((n, d))
    y = np.arange(n) % 2
    clf = DPMLPClassifier(
        hidden_layer_sizes=(100,),
        epsilon=1.0,
        clip_norm=C,
        learning_rate=lr,
        max_iter=1,
        neighbouring=neighbouring,
        n_samples=n,
        random_state=0,
    ).fit(X, y)
    coefs0, _ = _glorot_init([d, 100, 1], "relu", _generator(0))
    noise = (clf.coefs_[0] - coefs0[0]) * (-n / lr)
    delta_sum = 2 * C if neighbouring == "replace" else C
    expected = clf.noise_multipliers_[0] * delta_sum
    assert noise.std() == pytest.approx(expected, rel=0.05)
    assert abs(noise.mean()) < 0.05 * expected


def test_reproducible_with_random_state(torch):
    X, y = _data(n=40, seed=6)
    params = dict(hidden_layer_sizes=(5,), epsilon=1.0, max_iter=5)
    a = DPMLPClassifier(**params, random_state=3).fit(X, y)
    b = DPMLPClassifier(**params, random_state=3).fit(X, y)
    c = DPMLPClassifier(**params, random_state=4).fit(X, y)
    for wa, wb, wc in zip(a.coefs_, b.coefs_, c.coefs_):
        np.testing.assert_array_equal(wa, wb)
        assert not np.array_equal(wa, wc)
    Xc = X.copy()
    a.predict(X)
    np.testing.assert_array_equal(X, Xc)  # inputs not mutated


def test_predict_proba_consistent(torch):
    X, y = _data(n=60, n_classes=3, seed=7)
    clf = DPMLPClassifier(hidden_layer_sizes=(6,), epsilon=5.0, max_iter=5, random_state=0).fit(
        X, y
    )
    p = clf.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), p, rtol=1e-10)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[p.argmax(axis=1)])


def test_schedule_object(torch):
    from skdpgd.schedules import Exponential, OutputPerturbation

    X, y = _data(n=50)
    clf = DPMLPClassifier(
        hidden_layer_sizes=(3,),
        max_iter=6,
        epsilon=1.0,
        schedule=Exponential(decay=0.8),
        random_state=0,
    ).fit(X, y)
    z = clf.noise_multipliers_
    np.testing.assert_allclose(z[1:] / z[:-1], 0.8, rtol=1e-12)
    assert clf.n_iter_ == 6 and clf.epsilon_ <= 1.0
    with pytest.raises(ValueError, match="strong convexity|gradient"):
        DPMLPClassifier(schedule=OutputPerturbation(), max_iter=2).fit(X, y)


def test_minibatch_argument_errors(torch):
    X, y = _data(n=40)
    with pytest.raises(ValueError, match="add/remove"):
        DPMLPClassifier(batch_size=10, neighbouring="replace", max_iter=2).fit(X, y)
    with pytest.raises(ValueError, match="pur"):
        DPMLPClassifier(batch_size=10, schedule="pur", max_iter=2).fit(X, y)


def test_batch_size_at_least_n_is_full_batch(torch):
    """A batch size at least the public N is full batch, still under add/remove-one: whether
    a batch size covers the data must not be decided by the private N."""
    X, y = _data(n=30)
    a = DPMLPClassifier(
        hidden_layer_sizes=(3,), max_iter=3, batch_size=30, n_samples=30, random_state=0
    )
    b = DPMLPClassifier(
        hidden_layer_sizes=(3,), max_iter=3, neighbouring="add_remove", n_samples=30, random_state=0
    )
    a.fit(X, y), b.fit(X, y)
    assert a.sampling_rate_ == 1.0 and a.neighbouring_ == "add/remove-one"
    np.testing.assert_array_equal(a.coefs_[0], b.coefs_[0])


def test_poisson_minibatch_accounting(torch):
    X, y = _data(n=200, seed=8)
    eps, delta, T, C, b = 2.0, 1e-5, 20, 0.5, 20
    clf = DPMLPClassifier(
        hidden_layer_sizes=(4,),
        epsilon=eps,
        delta=delta,
        clip_norm=C,
        max_iter=T,
        batch_size=b,
        n_samples=200,
        random_state=0,
    ).fit(X, y)
    acc = RDPAccountant()
    z = acc.calibrate(np.ones(T), eps, delta, sampling_rate=b / 200)
    np.testing.assert_allclose(clf.noise_multipliers_, z, rtol=1e-12)
    assert clf.epsilon_ == acc.epsilon(GaussianSteps(z, sampling_rate=b / 200), delta)
    assert clf.epsilon_ <= eps
    assert clf.sampling_rate_ == b / 200 and clf.neighbouring_ == "add/remove-one"
    assert clf.sensitivity_ == C and clf.mu_ is None


def test_poisson_noise_scale(torch):
    """As the full-batch noise test: Delta = C, and the sum is divided by q N."""
    n, d, C, lr, b = 200, 40, 0.3, 0.7, 50
    X = np.zeros((n, d))
    y = np.arange(n) % 2
    clf = DPMLPClassifier(
        hidden_layer_sizes=(100,),
        epsilon=1.0,
        clip_norm=C,
        learning_rate=lr,
        max_iter=1,
        batch_size=b,
        n_samples=n,
        random_state=0,
    ).fit(X, y)
    coefs0, _ = _glorot_init([d, 100, 1], "relu", _generator(0))
    noise = (clf.coefs_[0] - coefs0[0]) * (-b / lr)
    assert noise.std() == pytest.approx(clf.noise_multipliers_[0] * C, rel=0.05)


# ---------------------------------------------------------------------------------------
# privacy checks and scikit-learn parity
# ---------------------------------------------------------------------------------------


def test_leave_one_out_sensitivity_at_200k(torch):
    """Removing one of 2e5 rows must move the released sum by at most C. Summed in float32,
    the totals round by ~1e-2 C at this size, and on this data removing the first row moved the
    sum by 1.0052 C (the old code); summed in float64 it moves by exactly that row's clipped
    gradient."""
    from skdpgd._network import torch_backend as tb

    n, C = 200_000, 1.0
    rng = np.random.default_rng(4)
    layer_sizes = [2, 1]
    coefs, intercepts = _glorot_init(layer_sizes, "tanh", np.random.default_rng(4))
    model = tb.build_mlp(layer_sizes, "tanh")
    params = tb.params_to_torch(coefs, intercepts)
    X = torch.tensor(rng.uniform(-3, 3, size=(n, 2)), dtype=torch.float32)
    y = tb.encode_targets(rng.integers(0, 2, n), 1)
    full = tb.clipped_grad_sum(model, params, X, y, 1, C)
    less = tb.clipped_grad_sum(model, params, X[1:], y[1:], 1, C)
    one = tb.clipped_grad_sum(model, params, X[:1], y[:1], 1, C)
    moved = math.sqrt(sum(float(((full[k] - less[k]) ** 2).sum()) for k in full))
    own = math.sqrt(sum(float((one[k] ** 2).sum()) for k in one))
    assert moved <= C
    assert moved == pytest.approx(own, rel=1e-6)


def test_mlp_classes_public_n_sample_weight_and_divergence(torch):
    from skdpgd import PrivacyLeakWarning
    from skdpgd.exceptions import DivergenceError

    X, y = _data(n=60, n_classes=2, seed=11)
    kw = dict(hidden_layer_sizes=(4,), max_iter=5, random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        DPMLPClassifier(**kw).fit(X, y)
    clf = DPMLPClassifier(classes=[0, 1, 2], **kw).fit(X, y)  # class 2 absent: 3 outputs
    assert clf.n_outputs_ == 3 and list(clf.classes_) == [0, 1, 2]
    with pytest.raises(ValueError, match="outside classes"):
        DPMLPClassifier(classes=[0, 5], **kw).fit(X, y)
    # add/remove-one without a public N: an accounted noisy count
    ar = DPMLPClassifier(classes=[0, 1], neighbouring="add_remove", **kw).fit(X, y)
    assert ar.count_noise_multiplier_ is not None and ar.epsilon_ <= 1.0
    assert ar.mu_ == pytest.approx(
        compose_gdp(np.concatenate([r.multipliers for r in ar.releases_]))
    )
    # sample weights in [0, 1]: weight 0 is the example removed
    w = np.ones(60)
    w[0] = 0.0
    a = DPMLPClassifier(classes=[0, 1], epsilon=np.inf, **kw).fit(X, y, sample_weight=w)
    b = DPMLPClassifier(
        classes=[0, 1], epsilon=np.inf, n_samples=60, neighbouring="add_remove", **kw
    ).fit(X[1:], y[1:])
    for wa, wb in zip(a.coefs_, b.coefs_):
        assert np.abs(wa - wb).max() < 0.05  # same data but the normaliser (60 vs 59 ... 60)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        DPMLPClassifier(classes=[0, 1], **kw).fit(X, y, sample_weight=np.full(60, 2.0))
    # a diverging step size stops the fit and sets nothing
    est = DPMLPClassifier(
        classes=[0, 1], learning_rate=1e38, hidden_layer_sizes=(4,), max_iter=20, random_state=0
    )
    with pytest.raises(DivergenceError, match="diverged"):
        est.fit(X * 1e3, y)
    assert not [k for k in vars(est) if k.endswith("_")]


def test_mlp_n_jobs_sets_and_restores_torch_threads(torch, monkeypatch):
    from skdpgd._network import torch_backend as tb

    seen = []
    real = tb.run_noisy_gd

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(tb, "run_noisy_gd", spy)
    before = torch.get_num_threads()
    X, y = _data(n=40, seed=12)
    DPMLPClassifier(hidden_layer_sizes=(3,), max_iter=2, classes=[0, 1], random_state=0).fit(X, y)
    DPMLPClassifier(
        hidden_layer_sizes=(3,), max_iter=2, classes=[0, 1], n_jobs=2, random_state=0
    ).fit(X, y)
    assert seen == [1, 2] and torch.get_num_threads() == before


def test_one_overflowing_row_contributes_zero_and_stops_nothing(torch):
    """A row near the float32 limit overflows the forward pass. Before, it stopped the fit
    (DivergenceError) while the same data without it fitted, so the error revealed the row.
    Now it contributes 0: with a public N the model is the one fitted without it."""
    X, y = _data(n=300, d=20, seed=3)
    Xo = np.vstack([X, np.full((1, 20), 3e38)])
    yo = np.append(y, 1)
    kw = dict(
        hidden_layer_sizes=(8,),
        epsilon=1.0,
        data_norm=1e300,  # a (silly) public bound that clips nothing
        clip_norm=1.0,
        learning_rate=0.1,
        max_iter=5,
        classes=[0, 1],
        n_samples=300,
        neighbouring="add_remove",
        random_state=0,
    )
    without = DPMLPClassifier(**kw).fit(X, y)
    with_row = DPMLPClassifier(**kw).fit(Xo, yo)
    for a, b in zip(without.coefs_ + without.intercepts_, with_row.coefs_ + with_row.intercepts_):
        np.testing.assert_array_equal(a, b)
    assert with_row.epsilon_ == without.epsilon_


# ---- budget= (one fit path: charged like the linear models) ------------------------------


def _budget_data(n=200, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    return X, (X[:, 0] > 0).astype(int)


def test_mlp_full_batch_fit_is_charged_to_its_budget_exactly():
    from skdpgd import PrivacyBudget

    X, y = _budget_data()
    budget = PrivacyBudget(3.0, 1e-5, neighbouring="replace")
    clf = DPMLPClassifier(
        hidden_layer_sizes=(4,), epsilon=1.0, delta=1e-5, max_iter=10, random_state=0, budget=budget
    ).fit(X, y)
    assert clf.neighbouring_ == "replace-one"
    ((label, z, q),) = budget.charges
    assert label == "DPMLPClassifier" and q == 1.0
    np.testing.assert_array_equal(z, clf.noise_multipliers_)
    assert budget.spent_epsilon() == pytest.approx(clf.epsilon_, rel=1e-9)
    # the same fit without a budget draws the same noise: charging changes nothing else
    alone = DPMLPClassifier(
        hidden_layer_sizes=(4,), epsilon=1.0, delta=1e-5, max_iter=10, random_state=0
    ).fit(X, y)
    for a, b in zip(alone.coefs_, clf.coefs_):
        np.testing.assert_array_equal(a, b)


def test_mlp_budget_refusal_releases_nothing_and_sets_nothing():
    from skdpgd import BudgetExceededError, PrivacyBudget

    X, y = _budget_data()
    budget = PrivacyBudget(0.5, 1e-5, neighbouring="replace")
    clf = DPMLPClassifier(
        hidden_layer_sizes=(4,), epsilon=1.0, delta=1e-5, max_iter=5, random_state=0, budget=budget
    )
    with pytest.raises(BudgetExceededError):
        clf.fit(X, y)
    assert budget.charges == [] and budget.spent_epsilon() == 0.0
    assert not hasattr(clf, "coefs_")


def test_mlp_auto_relation_follows_the_budget_and_minibatches_need_add_remove():
    from skdpgd import PrivacyBudget

    X, y = _budget_data()
    budget = PrivacyBudget(5.0, 1e-5)  # add/remove-one: N is private
    clf = DPMLPClassifier(
        hidden_layer_sizes=(4,), epsilon=1.0, max_iter=5, random_state=0, budget=budget
    ).fit(X, y)
    assert clf.neighbouring_ == "add/remove-one"
    assert clf.count_noise_multiplier_ is not None  # a noisy count, charged
    assert [label for label, _, _ in budget.charges] == [
        "DPMLPClassifier (row count)",
        "DPMLPClassifier (gradient sums)",
    ]
    with pytest.raises(ValueError, match="replace-one"):
        DPMLPClassifier(
            hidden_layer_sizes=(4,),
            batch_size=20,
            max_iter=5,
            random_state=0,
            budget=PrivacyBudget(5.0, 1e-5, neighbouring="replace"),
        ).fit(X, y)
    mb = PrivacyBudget(5.0, 1e-5)
    clf = DPMLPClassifier(
        hidden_layer_sizes=(4,), batch_size=20, max_iter=5, n_samples=200, random_state=0, budget=mb
    ).fit(X, y)
    assert mb.spent_epsilon() <= 5.0 and clf.epsilon_ <= 1.0
    ((label, z, q),) = mb.charges
    assert q == pytest.approx(0.1)
    np.testing.assert_array_equal(z, clf.noise_multipliers_)


# ---------------------------------------------------------------------------------------
# data_norm and the 'auto' clip norm, step size and number of steps
# ---------------------------------------------------------------------------------------


def test_data_norm_clips_rows_so_a_far_row_moves_the_model_as_one_at_the_bound(torch):
    X, y = _data(n=60, d=3, seed=8)
    bound = 2.0
    X = X * np.minimum(1.0, bound / np.linalg.norm(X, axis=1))[:, None]  # inside the bound
    direction = np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    at_bound, far = X.copy(), X.copy()
    at_bound[0] = bound * direction
    far[0] = 1e4 * direction
    far_given = far.copy()
    kw = dict(hidden_layer_sizes=(5,), epsilon=2.0, data_norm=bound, max_iter=8, random_state=0)
    a = DPMLPClassifier(**kw).fit(at_bound, y)
    b = DPMLPClassifier(**kw).fit(far, y)
    np.testing.assert_array_equal(far, far_given)  # the input is not modified
    for wa, wb in zip(a.coefs_ + a.intercepts_, b.coefs_ + b.intercepts_):
        np.testing.assert_allclose(wb, wa, rtol=1e-6, atol=1e-9)
    assert a.data_norm_ == b.data_norm_ == bound
    # without the bound (inferred from the data) the far row does move the model
    with pytest.warns(PrivacyLeakWarning):
        c = DPMLPClassifier(**{**kw, "data_norm": None, "clip_norm": 1.0, "learning_rate": 0.1})
        c.fit(far, y)
    d = DPMLPClassifier(**{**kw, "clip_norm": 1.0, "learning_rate": 0.1}).fit(far, y)
    assert not np.allclose(c.coefs_[0], d.coefs_[0])


def test_data_norm_none_reads_the_largest_row_norm_with_a_warning(torch):
    X, y = _data(n=40, seed=9)
    with pytest.warns(PrivacyLeakWarning, match="data_norm was not given"):
        clf = DPMLPClassifier(hidden_layer_sizes=(3,), max_iter=3, random_state=0).fit(X, y)
    assert clf.data_norm_ == pytest.approx(np.linalg.norm(X, axis=1).max(), rel=1e-12)
    r2 = clf.data_norm_**2 + 1.0
    assert clf.clip_norm_ == pytest.approx(np.sqrt(r2)) and clf.learning_rate_ == pytest.approx(
        1 / r2
    )


@pytest.mark.parametrize("neighbouring", ["replace", "add_remove"])
def test_auto_takes_more_steps_at_a_larger_budget_and_spends_it_exactly(torch, neighbouring):
    X, y = _data(n=200, d=3, seed=10)
    kw = dict(
        hidden_layer_sizes=(4,),
        data_norm=4.0,
        neighbouring=neighbouring,
        n_samples=200,
        random_state=0,
    )
    steps = []
    for eps in (0.5, 2.0, 8.0):
        clf = DPMLPClassifier(epsilon=eps, **kw).fit(X, y)
        assert clf.epsilon_ <= eps and clf.epsilon_ == pytest.approx(eps, rel=1e-9)
        s = 200 * clf.mu_ / np.sqrt(clf.coefs_[0].size + 4 + 4 + 1)  # N mu / sqrt(D)
        assert clf.n_iter_ == max(10, min(1000, math.ceil(policy.MLP_STEPS_PER_SNR * s)))
        assert clf.learning_rate_ == pytest.approx(1 / 17) and clf.clip_norm_ == pytest.approx(
            17**0.5
        )
        steps.append(clf.n_iter_)
    assert steps[0] < steps[1] < steps[2]
    with policy.using(MLP_MAX_STEPS=7):  # without noise: the cap
        clf = DPMLPClassifier(epsilon=np.inf, **kw).fit(X, y)
    assert clf.n_iter_ == 7


def test_explicit_values_are_used_as_given(torch):
    X, y = _data(n=50, seed=11)
    clf = DPMLPClassifier(
        hidden_layer_sizes=(3,), data_norm=3.0, clip_norm=0.4, learning_rate=0.2, max_iter=6
    ).fit(X, y)
    assert (clf.clip_norm_, clf.learning_rate_, clf.n_iter_) == (0.4, 0.2, 6)


def test_auto_is_more_accurate_at_epsilon_10_than_at_0_3(torch):
    """Mean test accuracy over four seeds (initial weights and noise) on a generated problem
    with a clear margin: the budget must show in the result."""
    rng = np.random.default_rng(12)
    X = rng.uniform(-1, 1, size=(1000, 4))
    y = (X[:, 0] - X[:, 1] + 0.5 * X[:, 2] * X[:, 3] > 0).astype(int)
    Xtr, ytr, Xte, yte = X[:300], y[:300], X[300:], y[300:]

    def accuracy(eps):
        scores = [
            DPMLPClassifier(
                hidden_layer_sizes=(16,), epsilon=eps, data_norm=2.0, classes=[0, 1], random_state=s
            )
            .fit(Xtr, ytr)
            .score(Xte, yte)
            for s in range(4)
        ]
        return np.mean(scores)

    low, high = accuracy(0.3), accuracy(10.0)
    assert high > low + 0.1, (low, high)  # measured: 0.676 and 0.937
    assert high > 0.9, high

"""Throughput of DP-SGD logistic regression: skdpgd's numba core vs numpy (and Opacus).

Prints examples per second (expected batch examples processed per second of training) for
N in {1e5, 1e6}, d = 100, batch sizes 256..4096, for

* skdpgd: the numba kernel alone (warm JIT cache), and the whole ``DPSGDClassifier.fit``
  (validation, RDP calibration of the schedule, kernel);
* a plain numpy DP-SGD loop (same Poisson sampling, per-example clipping, noise);
* Opacus (``PrivacyEngine`` on a ``torch.nn.Linear``) when torch and opacus import
  (``pip install ".[torch]"`` first, then ``pip install opacus``: opacus requires torch, and
  installing it before the CPU wheel would pull the multi-GB CUDA build).

and, in separate processes, the peak resident memory of a fit on N = 1e6, d = 100 next to the
size of X. Usage: ``python benchmarks/bench_sgd.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from skdpgd import DPSGDClassifier
from skdpgd._compute import kernels as _kernels
from skdpgd._compute import kernels_sgd as _kernels_sgd


def make_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = (X @ rng.normal(size=d) > 0).astype(np.int64)
    return X, y


def numpy_dpsgd(X, y, batch, steps, clip=1.0, z=1.0, lr=1.0, seed=0):
    """Textbook DP-SGD in numpy: Poisson batch, per-example gradients, clip, noise, step."""
    rng = np.random.default_rng(seed)
    n, d = X.shape
    q = batch / n
    w = np.zeros(d)
    b = 0.0
    ys = 2.0 * y - 1.0
    for _ in range(steps):
        idx = np.flatnonzero(rng.random(n) < q)
        Xb, yb = X[idx], ys[idx]
        m = Xb @ w + b
        f = -yb / (1.0 + np.exp(yb * m))  # dl/dz
        norms = np.abs(f) * np.sqrt(np.einsum("ij,ij->i", Xb, Xb) + 1.0)
        f = f * np.minimum(1.0, clip / np.maximum(norms, 1e-300))
        g = f @ Xb + z * clip * rng.normal(size=d)
        gb = f.sum() + z * clip * rng.normal()
        w -= lr * g / (q * n)
        b -= lr * gb / (q * n)
    return w, b


def opacus_rate(X, y, batch, steps):
    try:
        import torch
        from opacus import PrivacyEngine
    except Exception as exc:  # noqa: BLE001 - any import problem means "not available"
        return None, f"not available ({type(exc).__name__})"
    torch.set_num_threads(os.cpu_count() or 1)
    Xt = torch.tensor(X, dtype=torch.float32)
    yt = torch.tensor(y, dtype=torch.float32)
    ds = torch.utils.data.TensorDataset(Xt, yt)
    loader = torch.utils.data.DataLoader(ds, batch_size=batch)
    model = torch.nn.Linear(X.shape[1], 1)
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    engine = PrivacyEngine(accountant="rdp")
    model, opt, loader = engine.make_private(
        module=model,
        optimizer=opt,
        data_loader=loader,
        noise_multiplier=1.0,
        max_grad_norm=1.0,
        poisson_sampling=True,
    )
    lossf = torch.nn.BCEWithLogitsLoss()
    done = 0
    t0 = time.perf_counter()
    for xb, yb in loader:
        if done >= steps:
            break
        opt.zero_grad()
        lossf(model(xb).squeeze(-1), yb).backward()
        opt.step()
        done += 1
    return batch * done / (time.perf_counter() - t0), "float32"


def time_kernel(X, y, batch, steps):
    """Seconds for ``steps`` DP-SGD steps of the numba kernel (logistic loss, clip 1)."""
    n, d = X.shape
    scale, aug = _kernels.row_clip_factors(X, 3.0, True)
    yk = np.where(y == 1, 1.0, -1.0)
    args = (
        X,
        yk,
        np.ones(n),
        scale,
        aug,
        _kernels.LOSS_LOGISTIC,
        0.0,
        1.0,
        True,
        1e-3,
        batch / n,
        float(batch),
        np.full(steps, 0.5),
        np.full(steps, 1.0),
        0.0,
        np.inf,
        _kernels_sgd.sgd_state(1, d),
        0,
        steps,
        steps // 2,
        np.random.default_rng(0),
    )
    t0 = time.perf_counter()
    _kernels_sgd.sgd_dense(*args)
    return time.perf_counter() - t0


def peak_memory(n, d):
    """Peak RSS of a child process that builds X and fits once (bytes), and len(X) bytes."""
    code = f"""
import resource, numpy as np, warnings
warnings.simplefilter('ignore')
from skdpgd import DPSGDClassifier
rng = np.random.default_rng(0)
X = rng.normal(size=({n}, {d})) / {d} ** 0.5
y = (X[:, 0] > 0).astype(np.int64)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
DPSGDClassifier(epsilon=1.0, data_norm=3.0, batch_size=1024, epochs=0.5,
                random_state=0).fit(X, y)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(base * 1024, peak * 1024, X.nbytes)
"""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    return [int(v) for v in out]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    d = 100
    sizes = [100_000] if args.quick else [100_000, 1_000_000]
    batches = [256, 4096] if args.quick else [256, 1024, 4096]
    DPSGDClassifier(epsilon=1.0, data_norm=3.0, random_state=0).fit(*make_data(2000, d))  # JIT
    print(f"DP-SGD logistic regression, d = {d}: examples per second (higher is better)\n")
    print(
        "| N | batch | skdpgd kernel | skdpgd fit | numpy | kernel/numpy | Opacus | kernel/Opacus |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        X, y = make_data(n, d)
        for batch in batches:
            epochs = max(200 * batch / n, 0.05)  # about 200 steps
            est = DPSGDClassifier(
                epsilon=1.0, data_norm=3.0, batch_size=batch, epochs=epochs, random_state=0
            )
            t0 = time.perf_counter()
            est.fit(X, y)
            t_fit = time.perf_counter() - t0
            steps = est.n_iter_
            # the kernel alone (what runs per step), on the arrays the estimator prepares
            kernel_rate = batch * steps / time_kernel(X, y, batch, steps)
            fit_rate = batch * steps / t_fit
            t0 = time.perf_counter()
            np_steps = max(20, steps // 4)
            numpy_dpsgd(X, y, batch, np_steps)
            numpy_rate = batch * np_steps / (time.perf_counter() - t0)
            op_rate, note = opacus_rate(X, y, batch, min(steps, 100))
            op_txt = f"{op_rate:,.0f}" if op_rate else note
            ratio = f"{kernel_rate / op_rate:.1f}x" if op_rate else "-"
            print(
                f"| {n:,} | {batch} | {kernel_rate:,.0f} | {fit_rate:,.0f} | {numpy_rate:,.0f} "
                f"| {kernel_rate / numpy_rate:.1f}x | {op_txt} | {ratio} |",
                flush=True,
            )
    if not args.quick:
        base, peak, xbytes = peak_memory(1_000_000, d)
        print(
            f"\nPeak memory, N = 1e6, d = 100: X = {xbytes / 2**20:.0f} MiB; process peak "
            f"{peak / 2**20:.0f} MiB, of which {base / 2**20:.0f} MiB before the fit (X, the "
            f"temporaries that built it, interpreter and libraries); growth during the fit "
            f"= {(peak - base) / xbytes:.2f} x size(X)"
        )
    print(json.dumps({"cpu_count": os.cpu_count()}))


if __name__ == "__main__":
    main()

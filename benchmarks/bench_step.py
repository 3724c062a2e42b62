"""Time per DP-GD step of the full-batch path, next to a one-pass floor and plain numpy.

What is measured (binary logistic loss, intercept, per-example clipping that binds for some
rows, Gaussian noise at every step):

* **skdpgd**: one step as the gradient-descent mechanism takes it: ``DenseRows.grad_sum``
  (the clipped gradient sum; it picks one thread or several by the size of X) then
  ``_kernels._noisy_update`` (noise and step), from a Python loop. With ``--detail`` also the
  sum alone on one thread and on all threads forced (``_kernels.dense_grad_sum``), each with
  the same row blocks.
* **floor**: the least work a step can do: a numba kernel that reads X once, computing
  ``z_i = x_i . w + b`` and accumulating ``l'(z_i) x_i`` row by row (no clipping, no noise),
  on one thread and on all threads (prange over row blocks); the floor is the faster of the
  two. Next to it, the time to stream X once at the measured copy bandwidth (``np.copyto``
  of a 256 MiB array; bandwidth counted as bytes read + bytes written).
* **numpy**: the same DP-GD loop in plain numpy (two BLAS passes over X per step:
  ``z = s * (X @ w) + b``, the clipped factors, ``X.T @ (s f)``, noise, update).

Each step time is ``min`` (and median) over ``--reps`` runs of T steps, T chosen so that one
run lasts at least ``--min-time`` seconds. The machine may be shared, so the minimum is the
figure compared with the targets; the median shows the spread.

**First fit**: a fresh interpreter runs ``import skdpgd`` and
``DPLogisticRegression(epsilon=1, data_norm=1).fit(X, y)`` with ``NUMBA_CACHE_DIR`` set to a
new empty directory (cold: the kernels are compiled), then again with that directory filled
(warm: the kernels are loaded from the cache). Import and fit are timed separately; the
small shape sums on one thread, the large one on several. (``benchmarks/bench_compile.py``
does the same for every estimator and lists the kernels each fit compiles.)

Targets: per step <= 2x the floor at N = 1e6, d = 50; faster than numpy at every
size; cold first fit < 3 s; cached start well under that.

Run ``python benchmarks/bench_step.py`` (all sizes, about 3 minutes) or ``--quick``
(N <= 1e5). ``--doc`` writes the table into benchmarks/LAB_NOTES.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from numba import njit, prange

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from skdpgd._compute import kernels as K  # noqa: E402
from skdpgd._compute.backends import DenseRows  # noqa: E402

SIZES = [
    (1_000, 20),
    (1_000, 100),
    (10_000, 20),
    (10_000, 100),
    (100_000, 20),
    (100_000, 100),
    (1_000_000, 20),
    (1_000_000, 50),
    (1_000_000, 100),
]
TARGET = (1_000_000, 50)


# ------------------------------------------------------------------------------------------
# the one-pass floor
# ------------------------------------------------------------------------------------------


@njit(fastmath={"reassoc", "contract", "nsz", "arcp"})
def _floor_rows(X, y, w, b, lo, hi, g):
    """``g[:d] = sum_i l'(z_i) x_i``, ``g[d] = sum_i l'(z_i)`` over rows lo..hi-1."""
    d = X.shape[1]
    for j in range(d + 1):
        g[j] = 0.0
    gi = 0.0
    for i in range(lo, hi):
        z = b
        for j in range(d):
            z += X[i, j] * w[j]
        f = -y[i] / (1.0 + math.exp(y[i] * z))
        gi += f
        for j in range(d):
            g[j] += f * X[i, j]
    g[d] = gi


@njit
def floor_serial(X, y, w, b, eta, T):
    d = X.shape[1]
    g = np.zeros(d + 1)
    for _ in range(T):
        _floor_rows(X, y, w, b, 0, X.shape[0], g)
        for j in range(d):
            w[j] -= eta * g[j] / X.shape[0]
        b -= eta * g[d] / X.shape[0]
    return b


@njit(parallel=True)
def floor_parallel(X, y, w, b, eta, T, n_blocks):
    n, d = X.shape
    g = np.zeros((n_blocks, d + 1))
    for _ in range(T):
        for c in prange(n_blocks):
            _floor_rows(X, y, w, b, c * n // n_blocks, (c + 1) * n // n_blocks, g[c])
        for j in range(d):
            w[j] -= eta * g[:, j].sum() / n
        b -= eta * g[:, d].sum() / n
    return b


# ------------------------------------------------------------------------------------------
# plain numpy DP-GD (same release: per-example clipping, Gaussian noise on the sum)
# ------------------------------------------------------------------------------------------


def numpy_dpgd(X, y, sw, s, a, clip, alpha, eta, std, T, gen):
    n, d = X.shape
    w = np.zeros(d)
    b = 0.0
    for _ in range(T):
        z = s * (X @ w) + b
        with np.errstate(over="ignore"):
            dz = -y / (1.0 + np.exp(y * z))  # an overflow gives -0, as it should
        gn = np.abs(dz) * a
        c = sw * np.minimum(1.0, clip / np.maximum(gn, 1e-300))
        f = c * dz  # each example's clipped gradient f_i (s_i x_i, 1) has norm <= clip
        gw = X.T @ (f * s) + std * gen.standard_normal(d)
        gb = f.sum() + std * gen.standard_normal()
        w -= eta * (gw / n + alpha * w)
        b -= eta * gb / n
    return w, b


# ------------------------------------------------------------------------------------------
# timing
# ------------------------------------------------------------------------------------------


def time_steps(run, min_time, reps, t_max=100_000):
    """(min, median) seconds per step of ``run(T)`` with T so that a run lasts >= min_time."""
    T = 2
    while True:
        t0 = time.perf_counter()
        run(T)
        el = time.perf_counter() - t0
        if el >= min_time or T >= t_max:
            break
        T = int(min(t_max, max(2 * T, math.ceil(1.2 * T * min_time / max(el, 1e-9)))))
    per = []
    for _ in range(reps):
        t0 = time.perf_counter()
        run(T)
        per.append((time.perf_counter() - t0) / T)
    return float(np.min(per)), float(np.median(per)), T


def copy_bandwidth(reps):
    """Bytes read + written per second by np.copyto of a 256 MiB array (best of reps)."""
    src = np.ones(32 * 2**20)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    best = math.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return 2 * src.nbytes / best


def make_problem(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X *= (rng.uniform(0.2, 1.2, n) / np.linalg.norm(X, axis=1))[:, None]  # some rows > 1
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def skdpgd_dpgd(rows, clip, alpha, eta, std, T, gen):
    """T steps of noisy GD as the mechanism takes them: grad_sum, then noise and the step."""
    d = rows.n_features
    coef, b = np.zeros((1, d)), np.zeros(1)
    vcoef, vb = np.zeros((1, d)), np.zeros(1)
    n = float(rows.n_samples)
    for _ in range(T):
        gc, gb, _ = rows.grad_sum(coef, b, K.LOSS_LOGISTIC, 0.0, clip)
        K._noisy_update(
            gc[None], gb[None], std, n, alpha, eta, 0.0, 0.0, True, coef, b, vcoef, vb, gen
        )
    return coef, b


def bench_size(n, d, min_time, reps, detail):
    X, y = make_problem(n, d)
    sw = np.ones(n)
    rows = DenseRows(X, y, sw, True)
    rows.clip_rows(1.0, 1.0)  # rows clipped to norm 1, augmented by 1
    s, a = rows.row_scale, rows.row_norm_aug
    clip, alpha, eta, std = 0.6, 1e-3, 0.5, 3.0  # clip < sqrt(2) * max|l'|: it binds
    blocks = K.n_row_blocks(n, d)

    row = {"n": n, "d": d, "parallel": bool(K.use_parallel(n, d)), "blocks": blocks}
    gen = np.random.default_rng(0)
    row["kernel"] = time_steps(
        lambda T: skdpgd_dpgd(rows, clip, alpha, eta, std, T, gen), min_time, reps
    )
    if detail:
        coef, b = np.full((1, d), 0.1), np.zeros(1)
        for key, par in (("serial", False), ("par", True)):

            def run(T, par=par):
                for _ in range(T):
                    K.dense_grad_sum(
                        X,
                        y,
                        sw,
                        s,
                        a,
                        K.LOSS_LOGISTIC,
                        0.0,
                        clip,
                        coef,
                        b,
                        n_blocks=blocks,
                        parallel=par,
                    )

            row[key] = time_steps(run, min_time, reps)
    w0 = np.zeros(d)
    row["floor1"] = time_steps(lambda T: floor_serial(X, y, w0.copy(), 0.0, 0.1, T), min_time, reps)
    nb = max(2, blocks)
    row["floorp"] = time_steps(
        lambda T: floor_parallel(X, y, w0.copy(), 0.0, 0.1, T, nb), min_time, reps
    )
    row["numpy"] = time_steps(
        lambda T: numpy_dpgd(X, y, sw, s, a, clip, alpha, eta, std, T, gen),
        min_time,
        reps,
        t_max=20_000,
    )
    row["xbytes"] = X.nbytes
    return row


# ------------------------------------------------------------------------------------------
# first fit in a fresh process
# ------------------------------------------------------------------------------------------

_FIT = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
n, d = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
X = rng.standard_normal((n, d)); X /= np.linalg.norm(X, axis=1).max()
y = (X[:, 0] > 0).astype(int)
t1 = time.perf_counter()
from skdpgd import DPLogisticRegression
t2 = time.perf_counter()
m = DPLogisticRegression(epsilon=1, data_norm=1).fit(X, y)
t3 = time.perf_counter()
DPLogisticRegression(epsilon=1, data_norm=1).fit(X, y)
t4 = time.perf_counter()
print(json.dumps({"import": t2 - t1, "fit": t3 - t2, "refit": t4 - t3, "steps": int(m.n_iter_)}))
"""


def first_fit(n, d, reps):
    """Cold and warm first fits in fresh interpreters, ``reps`` fresh cache dirs each."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = {"cold": [], "warm": []}
    for _ in range(reps):
        with tempfile.TemporaryDirectory() as cache:
            env["NUMBA_CACHE_DIR"] = cache
            for kind in ("cold", "warm"):
                r = subprocess.run(
                    [sys.executable, "-c", _FIT, str(n), str(d)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                out[kind].append(json.loads(r.stdout.strip().splitlines()[-1]))
    return out


# ------------------------------------------------------------------------------------------


def us(t):
    return f"{t * 1e6:,.0f} µs" if t < 1e-2 else f"{t * 1e3:,.1f} ms"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="N <= 1e5 only")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.25)
    p.add_argument("--detail", action="store_true", help="also serial/parallel forced")
    p.add_argument("--fit-reps", type=int, default=3)
    p.add_argument("--no-fit", action="store_true", help="skip the first-fit subprocesses")
    p.add_argument(
        "--doc", action="store_true", help="write the section of benchmarks/LAB_NOTES.md"
    )
    args = p.parse_args()
    sizes = [s for s in SIZES if not args.quick or s[0] <= 100_000]

    import numba

    print(
        f"# numpy {np.__version__}, numba {numba.__version__}, "
        f"{numba.config.NUMBA_NUM_THREADS} threads, {os.cpu_count()} cpus\n",
        flush=True,
    )
    bw = copy_bandwidth(args.reps)
    # warm the JIT of everything timed below (not part of the step times)
    bench_size(1000, 4, 0.0, 1, args.detail)

    rows = []
    for n, d in sizes:
        r = bench_size(n, d, args.min_time, args.reps, args.detail)
        rows.append(r)
        print(f"  measured N={n:,} d={d}: {us(r['kernel'][0])}/step", file=sys.stderr, flush=True)

    head = [
        "N",
        "d",
        "path",
        "skdpgd /step (min, med)",
        "floor /step",
        "X at copy BW",
        "numpy /step",
        "skdpgd / floor",
        "numpy / skdpgd",
    ]
    if args.detail:
        head[4:4] = ["sum, 1 thread", "sum, threads"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    verdicts = []
    for r in rows:
        k = r["kernel"][0]
        fl = min(r["floor1"][0], r["floorp"][0])
        cells = [
            f"{r['n']:,}",
            str(r["d"]),
            ("parallel" if r["parallel"] else "serial") + f" ({r['blocks']} blk)",
            f"{us(k)} ({us(r['kernel'][1])})",
            f"{us(fl)}",
            us(r["xbytes"] / bw),
            us(r["numpy"][0]),
            f"{k / fl:.2f}",
            f"{r['numpy'][0] / k:.2f}",
        ]
        if args.detail:
            cells[4:4] = [us(r["serial"][0]), us(r["par"][0])]
        lines.append("| " + " | ".join(cells) + " |")
        verdicts.append(((r["n"], r["d"]), k / fl, r["numpy"][0] / k))
    table = "\n".join(lines)
    print(table)
    print(
        f"\ncopy bandwidth (np.copyto, 256 MiB, read + write): {bw / 1e9:.1f} GB/s; "
        "floor = faster of the one-pass kernel on 1 thread and on all threads; "
        "step times are the minimum over the runs (median in brackets)."
    )

    fit_lines = []
    if not args.no_fit:
        fit_head = [
            "first fit (fresh process)",
            "N x d",
            "import",
            "fit (min)",
            "fit (median)",
            "steps",
            "import + fit (min)",
        ]
        fit_lines = ["| " + " | ".join(fit_head) + " |", "|" + "---|" * len(fit_head)]
        fits = {}
        for n, d in [(1_000, 20), (100_000, 50)]:
            res = first_fit(n, d, args.fit_reps)
            for kind in ("cold", "warm"):
                f = [x["fit"] for x in res[kind]]
                imp = [x["import"] for x in res[kind]]
                tot = [x["fit"] + x["import"] for x in res[kind]]
                fits[(kind, n, d)] = min(f)
                label = "cold (compile)" if kind == "cold" else "warm (numba cache)"
                label += ", " + ("serial" if not K.use_parallel(n, d) else "parallel")
                fit_lines.append(
                    f"| {label} | {n:,} x {d} | {min(imp):.2f} s | {min(f):.2f} s | "
                    f"{float(np.median(f)):.2f} s | {res[kind][0]['steps']} | "
                    f"{min(tot):.2f} s |"
                )
            fits[("refit", n, d)] = min(x["refit"] for x in res["warm"])
        print()
        print("\n".join(fit_lines))
        print(
            f"\n(a refit in the same process takes {fits[('refit', 1000, 20)]:.2f} s "
            f"at 1,000 x 20 and {fits[('refit', 100000, 50)]:.2f} s at 100,000 x 50: "
            "the rest of the first fit is compilation or cache loading)"
        )

    print("\n## targets")
    for (n, d), ratio, _vs_np in verdicts:
        if (n, d) == TARGET:
            print(
                f"per step <= 2x floor at N={n:,}, d={d}: {ratio:.2f}x -> "
                f"{'MET' if ratio <= 2 else 'MISSED'}"
            )
    slow = [(n, d, v) for (n, d), _, v in verdicts if v <= 1.0]
    print(
        "faster than numpy at every size: "
        + (
            "MET"
            if not slow
            else "MISSED at " + ", ".join(f"{n:,}x{d} (numpy/skdpgd {v:.2f})" for n, d, v in slow)
        )
    )
    if not args.no_fit:
        cold = max(fits[("cold", 1000, 20)], fits[("cold", 100000, 50)])
        print(
            f"cold first fit (compile, excluding import) < 3 s: worst {cold:.2f} s -> "
            f"{'MET' if cold < 3 else 'MISSED'}"
        )
        warm = max(fits[("warm", 1000, 20)], fits[("warm", 100000, 50)])
        print(f"cached first fit: worst {warm:.2f} s")

    if args.doc:
        from benchmarks import _data as D

        text = (
            f"## Time per DP-GD step ({D.today()})\n\n`python benchmarks/bench_step.py`\n\n"
            + table
            + "\n\n"
            + "\n".join(fit_lines)
        )
        D.write_doc_section("bench_step", text)


if __name__ == "__main__":
    main()

"""Time of the second-order reductions (Hessian sum, sufficient statistics) next to numpy/scipy.

What is measured (rows clipped to a norm bound, an intercept column, unit weights):

* **skdpgd**: ``DenseRows.hessian_sum`` (binary logistic) and ``DenseRows.suff_stats``
  (numba kernels of :mod:`skdpgd._compute.kernels_second`: upper triangles only, four rows at a
  time), on one thread and on all threads (``parallel=`` forced); and the same on CSR rows
  (``CSRRows``), which are never densified.
* **one pass**: ``X @ v`` (one BLAS read of X), the memory floor of any reduction over X.
* **numpy**: ``(A * h[:, None]).T @ A`` on a prebuilt dense augmented ``A = (s X, 1)`` with
  the Hessian weights ``h`` (BLAS ``dgemm``, the full square, all threads; building A, the
  weights and the margins is not counted), and for the sufficient statistics the same plus
  ``A.T @ (w y)``. For CSR: scipy's sparse product ``(S.multiply(h[:, None])).T @ S`` turned
  into a dense array (S the CSR augmented rows; the product of two sparse matrices, so X is
  not densified either).

Also the multiply-add rate of the kernel: a Hessian sum over upper triangles costs
``N P (P + 1) / 2`` multiply-adds (``P = d + 1``), and a dense pass reads X once per panel
(once at these sizes).

Each time is the minimum over ``--reps`` runs (the machine may be shared). Run
``python benchmarks/bench_reductions.py`` (about a minute) or ``--quick``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import scipy.sparse as sp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from skdpgd._compute import kernels as K  # noqa: E402
from skdpgd._compute import kernels_second as K2  # noqa: E402
from skdpgd._compute.backends import CSRRows, DenseRows  # noqa: E402

DENSE = [(10_000, 50), (100_000, 50), (1_000_000, 50), (100_000, 200)]
SPARSE = [(100_000, 1_000, 0.01), (1_000_000, 100, 0.05)]


def best(fn, reps):
    fn()
    out = np.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t0)
    return out


def ms(t):
    return f"{t * 1e3:,.1f} ms" if t >= 1e-3 else f"{t * 1e6:,.0f} µs"


def problem(n, d, density=1.0, seed=0):
    rng = np.random.default_rng(seed)
    if density < 1.0:
        X = sp.random(
            n, d, density=density, format="csr", random_state=seed, data_rvs=rng.standard_normal
        )
    else:
        X = rng.standard_normal((n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    coef = rng.standard_normal((1, d)) * 0.3
    return X, y, coef


def hessian_weights(rows, coef, b):
    """Margins and logistic Hessian weights in numpy (for the numpy side, not timed)."""
    z = rows.row_scale * (rows.X @ coef[0]) + b[0]
    e = np.exp(-np.abs(z))
    return rows.sample_weight * e / (1.0 + e) ** 2


def bench_dense(n, d, reps):
    X, y, coef = problem(n, d)
    w = np.ones(n)
    rows = DenseRows(X, y, w, True)
    rows.clip_rows(np.sqrt(d) * 0.8, 1.0)
    b = np.zeros(1)
    args = (X, rows.row_scale, w, True, K.LOSS_LOGISTIC, coef, b)
    r = {"n": n, "d": d}
    r["pass"] = best(lambda: X @ coef[0], reps)
    r["h1"] = best(lambda: K2.hessian_sum(*args, parallel=False), reps)
    r["hp"] = best(lambda: K2.hessian_sum(*args, parallel=True), reps)
    r["s1"] = best(lambda: K2.suff_stats(X, rows.row_scale, w, True, y, parallel=False), reps)
    r["sp"] = best(lambda: K2.suff_stats(X, rows.row_scale, w, True, y, parallel=True), reps)
    A = np.hstack([X * rows.row_scale[:, None], np.ones((n, 1))])
    h = hessian_weights(rows, coef, b)
    r["h_np"] = best(lambda: (A * h[:, None]).T @ A, reps)
    r["s_np"] = best(lambda: ((A * w[:, None]).T @ A, A.T @ (w * y)), reps)
    H = rows.hessian_sum(coef, b, K.LOSS_LOGISTIC)
    r["err"] = float(np.max(np.abs(H - (A * h[:, None]).T @ A)) / np.max(np.abs(H)))
    r["madds"] = n * (d + 1) * (d + 2) / 2.0
    return r


def bench_csr(n, d, density, reps):
    X, y, coef = problem(n, d, density)
    w = np.ones(n)
    rows = CSRRows(X, y, w, True)
    rows.clip_rows(3.0, 1.0)
    b = np.zeros(1)
    args = (
        rows.data,
        rows.indices,
        rows.indptr,
        d,
        rows.row_scale,
        w,
        True,
        K.LOSS_LOGISTIC,
        coef,
        b,
    )
    r = {"n": n, "d": d, "density": density}
    r["h1"] = best(lambda: K2.hessian_sum_csr(*args, parallel=False), reps)
    r["hp"] = best(lambda: K2.hessian_sum_csr(*args, parallel=True), reps)
    S = sp.hstack([X.multiply(rows.row_scale[:, None]), np.ones((n, 1))], format="csr")
    z = rows.row_scale * (X @ coef[0]) + b[0]
    e = np.exp(-np.abs(z))
    h = e / (1.0 + e) ** 2
    r["h_sp"] = best(lambda: (S.multiply(h[:, None]).tocsr().T @ S).toarray(), reps)
    H = rows.hessian_sum(coef, b, K.LOSS_LOGISTIC)
    ref = (S.multiply(h[:, None]).tocsr().T @ S).toarray()
    r["err"] = float(np.max(np.abs(H - ref)) / np.max(np.abs(H)))
    nnz_row = X.nnz / n + 1
    r["madds"] = n * nnz_row * (nnz_row + 1) / 2.0
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="N <= 1e5 only")
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args()
    import numba

    print(
        f"# numpy {np.__version__}, numba {numba.__version__}, {K.n_threads()} threads, "
        f"{os.cpu_count()} cpus\n",
        flush=True,
    )
    head = [
        "N",
        "d",
        "one pass (X @ v)",
        "Hessian, 1 thread",
        "threads",
        "numpy (A*h).T @ A",
        "numpy / skdpgd",
        "Gmadd/s (1 thread)",
        "suff. stats, 1 thread",
        "threads",
        "numpy",
        "numpy / skdpgd",
        "rel. diff",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n, d in DENSE:
        if args.quick and n > 100_000:
            continue
        r = bench_dense(n, d, args.reps)
        h, s = min(r["h1"], r["hp"]), min(r["s1"], r["sp"])
        lines.append(
            f"| {n:,} | {d} | {ms(r['pass'])} | {ms(r['h1'])} | {ms(r['hp'])} | "
            f"{ms(r['h_np'])} | {r['h_np'] / h:.2f} | {r['madds'] / r['h1'] / 1e9:.1f} | "
            f"{ms(r['s1'])} | {ms(r['sp'])} | {ms(r['s_np'])} | {r['s_np'] / s:.2f} | "
            f"{r['err']:.0e} |"
        )
        print(f"  measured dense {n:,} x {d}", file=sys.stderr, flush=True)
    print("\n".join(lines))
    head = [
        "N",
        "d",
        "density",
        "Hessian, 1 thread",
        "threads",
        "scipy sparse product",
        "scipy / skdpgd",
        "Gmadd/s (1 thread)",
        "rel. diff",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n, d, dens in SPARSE:
        if args.quick and n > 100_000:
            continue
        r = bench_csr(n, d, dens, args.reps)
        h = min(r["h1"], r["hp"])
        lines.append(
            f"| {n:,} | {d:,} | {dens:g} | {ms(r['h1'])} | {ms(r['hp'])} | {ms(r['h_sp'])} | "
            f"{r['h_sp'] / h:.2f} | {r['madds'] / r['h1'] / 1e9:.2f} | {r['err']:.0e} |"
        )
        print(f"  measured CSR {n:,} x {d:,}", file=sys.stderr, flush=True)
    print()
    print("\n".join(lines))
    print(
        "\nnumpy / skdpgd and scipy / skdpgd compare the faster of skdpgd's two columns; "
        "times are minima over the runs."
    )


if __name__ == "__main__":
    main()

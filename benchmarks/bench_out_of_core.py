"""Out-of-core fit: a synthetic classification set stored as Zarr, fitted on a LocalCluster.

Writes ``--rows`` x ``--d`` float32 rows (Gaussian features, a linear rule with label noise;
rows scaled so that their norm is at most 1) to an uncompressed Zarr store in chunks of
``--chunk`` rows, chunk by chunk (no full-size array is ever held), then, on a LocalCluster of
``--workers`` processes (one thread each, ``--memory`` each):

* one plain dask pass over the data, ``X.sum(axis=0).compute()`` (the baseline), before and
  after the fits,
* ``DPLogisticRegression`` fits (``--schedules``; default ``newton,auto``) on the Zarr-backed
  dask array, never loaded into memory: total time, the passes over X (counted from the chunks
  actually read, so validation passes are counted, not assumed), time per release pass as a
  ratio to the plain pass,
* accuracy on a held-out part against an in-memory fit on a subsample of ``--sub`` rows,
* with ``--plan-auto``, the pass count of the default schedule (``schedule='auto'``) without
  running all of it: ``n_iter_theory_`` of a ``max_iter=1`` fit (decided by public constants
  only) and the time of that fit's one gradient pass.

Everything is printed; nothing is hard-coded. Example (about a minute):
``python benchmarks/bench_out_of_core.py --rows 4000000 --d 50 --schedules newton``. The
larger-than-memory run in ``docs/large_data.md`` (25.3 GiB on disk, 23.5 GiB of RAM) was
``--rows 135000000 --schedules newton --plan-auto --dir DIR`` (needs 27 GB of free disk; the
default schedule's ~400 gradient passes were too long to run in full there).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
import warnings

import numpy as np


def write_store(path, rows, d, chunk, seed=0):
    """Generate and write X (float32) and y (int8) chunk by chunk, in one dask computation
    (each chunk of X is generated once and written; nothing of full size is ever held)."""
    import dask
    import dask.array as da

    rng = da.random.default_rng(seed)
    w = np.random.default_rng(seed).normal(size=d)
    X = rng.standard_normal((rows, d), chunks=(chunk, d), dtype=np.float32) / np.float32(
        2 * np.sqrt(d)
    )
    norms = da.sqrt((X * X).sum(axis=1, keepdims=True))
    X = X / da.maximum(norms, 1.0)  # rows of norm <= 1 by construction (public bound 1)
    margin = X @ w.astype(np.float32) + 0.3 * rng.standard_normal(rows, chunks=chunk)
    y = (margin > 0).astype(np.int8)
    # uncompressed: the bytes on disk are the array's size (and no decompression per pass)
    dask.compute(
        da.to_zarr(X, os.path.join(path, "X"), overwrite=True, compute=False, compressors=None),
        da.to_zarr(y, os.path.join(path, "y"), overwrite=True, compute=False, compressors=None),
    )


def _count_read(block, log):
    """Identity on a chunk of X that appends one byte to ``log``: the log's size is the number
    of chunks of X read from the store (by any process), so passes over X are counted, not
    assumed."""
    with open(log, "ab") as f:
        f.write(b".")
    return block


def auto_passes(sizes, d=50, epsilon=1.0):
    """Gradient passes the default schedule (``schedule='auto'``) plans for ``N`` rows, for
    each N in ``sizes``, without data of that size: the plan depends on public constants only
    (N, d, epsilon, delta = default_delta(N), the share of the budget the row-norm estimate
    spends; not on the row bound, which ``alpha='auto'`` cancels). The problem is captured from
    a small in-memory fit and only N, delta and the budget left are changed, with the formulas
    of ``skdpgd._full_batch.road.fit_full_batch``; check it against ``n_iter_theory_`` of a real fit
    (``--plan-auto``), as the docs do."""
    import dataclasses
    import math

    from skdpgd import DPLogisticRegression, policy, schedules

    from skdpgd._core import setup as _setup
    from skdpgd.accounting import GaussianDPAccountant

    seen = {}
    real = schedules.Auto.plan

    def capture(self, problem, mu, max_iter=None):
        seen["problem"] = problem
        return real(self, problem, mu, max_iter)

    schedules.Auto.plan = capture
    try:
        rng = np.random.default_rng(0)
        Xs = rng.standard_normal((20_000, d)) / (2 * np.sqrt(d))
        small = DPLogisticRegression(
            epsilon=epsilon, data_norm=1.0, classes=[0, 1], max_iter=1, random_state=0
        ).fit(Xs, (Xs[:, 0] > 0).astype(int))
    finally:
        schedules.Auto.plan = real

    def plan(n):
        mu_total = GaussianDPAccountant().budget(epsilon, _setup.default_delta(n))
        mu_q = min(
            math.sqrt(policy.ROW_CLIP_MAX_SHARE) * mu_total,
            4.0 / (policy.ROW_CLIP_TARGET_RELATIVE_ERROR * n),
        )
        problem = dataclasses.replace(seen["problem"], n_samples=int(n))
        return real(schedules.Auto(), problem, math.sqrt(mu_total**2 - mu_q**2))

    assert plan(20_000).n_iter_theory == small.n_iter_theory_  # the formulas match the fit's
    return {int(n): (plan(n).schedule, plan(n).n_iter_theory) for n in sizes}


def _du(path):
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def _load():
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--chunk", type=int, default=250_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory", default="4GiB")
    ap.add_argument("--sub", type=int, default=200_000)
    ap.add_argument(
        "--dir",
        default=None,
        help="where the Zarr store goes (default: a temp dir, "
        "deleted at the end; a given directory is kept)",
    )
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="use the store in --dir if it has the requested shape (no rewrite)",
    )
    ap.add_argument(
        "--schedules",
        default="newton,auto",
        help="comma-separated schedules to fit ('auto', the default, takes one pass "
        "per gradient step: hundreds at large N)",
    )
    ap.add_argument(
        "--plan-auto",
        action="store_true",
        help="also fit the default schedule with max_iter=1: its n_iter_theory_ is "
        "the number of gradient passes the default fit makes (it depends on "
        "public constants only), and the one step times a gradient pass",
    )
    args = ap.parse_args()
    warnings.simplefilter("ignore")

    import dask.array as da
    from distributed import Client, LocalCluster

    from skdpgd import DPLogisticRegression
    from skdpgd._compute import dask_backend as _dask_backend

    path = args.dir or tempfile.mkdtemp(prefix="skdpgd-ooc-")
    os.makedirs(path, exist_ok=True)
    log = os.path.join(path, "chunk_reads.log")
    cluster = LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=args.memory,
        dashboard_address=None,
    )
    client = Client(cluster)
    print(
        f"start: {time.strftime('%Y-%m-%d %H:%M:%S')}, {_load()}, {os.cpu_count()} cores",
        flush=True,
    )
    try:
        reused = False
        if args.reuse:
            try:
                old = da.from_zarr(os.path.join(path, "X"))
                reused = old.shape == (args.rows, args.d) and old.chunks[0][0] == args.chunk
            except Exception:  # no store there yet
                reused = False
        t = time.perf_counter()
        if not reused:
            write_store(path, args.rows, args.d, args.chunk)
        t_write = time.perf_counter() - t
        X = da.from_zarr(os.path.join(path, "X"))
        y = da.from_zarr(os.path.join(path, "y"))
        X = X.map_blocks(_count_read, log, dtype=X.dtype)
        n_test = min(args.rows // 10, 500_000)
        n_train = args.rows - n_test
        Xtr, ytr = X[:n_train], y[:n_train]
        Xte, yte = X[n_train:].compute(), y[n_train:].compute()
        n_chunks = len(Xtr.chunks[0])
        print(
            f"store: {args.rows:,} x {args.d} float32 ({X.nbytes / 2**30:.2f} GiB "
            f"uncompressed), {_du(path) / 2**30:.2f} GiB on disk in {path} "
            f"({'reused' if reused else f'written in {t_write:.0f} s'}); chunks of "
            f"{args.chunk:,} rows ({args.chunk * args.d * 4 / 2**20:.0f} MiB); training "
            f"part {n_train:,} rows in {n_chunks} chunks, test part {n_test:,} rows",
            flush=True,
        )
        print(
            f"cluster: {args.workers} worker processes x 1 thread, memory limit "
            f"{args.memory} each; {_load()}",
            flush=True,
        )

        def reads():
            return os.path.getsize(log) if os.path.exists(log) else 0

        def plain_pass():
            r0, t0 = reads(), time.perf_counter()
            Xtr.sum(axis=0).compute()
            dt = time.perf_counter() - t0
            print(
                f"one plain dask pass, X.sum(axis=0).compute(): {dt:.2f} s "
                f"({(reads() - r0) / n_chunks:g} passes read; {_load()})",
                flush=True,
            )
            return dt

        t_pass = [plain_pass()]
        fits = []
        for schedule in args.schedules.split(","):
            stats = {}
            real_map = _dask_backend.DaskRows._map

            def timed_map(self, fn, *a, _real=real_map):
                t0 = time.perf_counter()
                out = _real(self, fn, *a)
                n, s = stats.get(fn.__name__.strip("_"), (0, 0.0))
                stats[fn.__name__.strip("_")] = (n + 1, s + time.perf_counter() - t0)
                return out

            _dask_backend.DaskRows._map = timed_map
            r0 = reads()
            try:
                t = time.perf_counter()
                clf = DPLogisticRegression(
                    epsilon=1.0, data_norm=1.0, classes=[0, 1], schedule=schedule, random_state=0
                ).fit(Xtr, ytr)
                t_fit = time.perf_counter() - t
            finally:
                _dask_backend.DaskRows._map = real_map
            x_passes = (reads() - r0) / n_chunks
            n_rel = sum(n for n, _ in stats.values())
            t_rel = sum(s for _, s in stats.values())
            acc = clf.score(Xte, yte)
            sub = DPLogisticRegression(
                epsilon=1.0, data_norm=1.0, classes=[0, 1], schedule=schedule, random_state=0
            )
            sub.fit(Xtr[: args.sub].compute(), ytr[: args.sub].compute())
            acc_sub = sub.score(Xte, yte)
            fits.append((schedule, clf, t_fit, x_passes, n_rel, t_rel, stats, acc, acc_sub))
            kinds = "; ".join(f"{k}: {n} x {s / n:.2f} s" for k, (n, s) in stats.items())
            print(
                f"schedule={schedule!r} ({clf.schedule_}, mechanism {clf.mechanism_}, "
                f"n_iter_={clf.n_iter_}): fit {t_fit:.1f} s; {x_passes:g} passes over X read "
                f"= {n_rel} release passes ({kinds}) + {x_passes - n_rel:g} other "
                f"(validation, row-norm sum), {t_fit - t_rel:.1f} s outside releases; "
                f"epsilon_={clf.epsilon_:.4f}; accuracy {acc:.4f} vs {acc_sub:.4f} in memory "
                f"on {args.sub:,} rows; {_load()}",
                flush=True,
            )
        if args.plan_auto:
            stats = {}
            real_map = _dask_backend.DaskRows._map

            def timed_map1(self, fn, *a, _real=real_map):
                t0 = time.perf_counter()
                out = _real(self, fn, *a)
                stats[fn.__name__] = time.perf_counter() - t0
                return out

            _dask_backend.DaskRows._map = timed_map1
            r0 = reads()
            try:
                t = time.perf_counter()
                one = DPLogisticRegression(
                    epsilon=1.0, data_norm=1.0, classes=[0, 1], max_iter=1, random_state=0
                ).fit(Xtr, ytr)
                t_one = time.perf_counter() - t
            finally:
                _dask_backend.DaskRows._map = real_map
            print(
                f"default schedule ('auto' -> {one.schedule_}) with max_iter=1: "
                f"n_iter_theory_={one.n_iter_theory_:g} (the gradient passes a default fit "
                f"makes); this fit: {t_one:.1f} s, {(reads() - r0) / n_chunks:g} passes over X "
                f"read, the one gradient pass {stats.get('_grad', float('nan')):.2f} s; "
                f"{_load()}",
                flush=True,
            )
        t_pass.append(plain_pass())
        base = sum(t_pass) / len(t_pass)
        print(
            f"plain pass: {t_pass[0]:.2f} s before the fits, {t_pass[-1]:.2f} s after; "
            f"ratios below are to their mean {base:.2f} s",
            flush=True,
        )
        for schedule, _clf, t_fit, x_passes, n_rel, t_rel, stats, acc, acc_sub in fits:
            kinds = ", ".join(f"{k} {s / n / base:.2f}" for k, (n, s) in stats.items())
            print(
                f"  {schedule}: time per release pass / plain pass = {t_rel / n_rel / base:.2f} "
                f"({kinds}); fit time / plain pass = {t_fit / base:.1f} for {x_passes:g} "
                f"passes ({t_fit / x_passes / base:.2f} per pass); accuracy {acc:.4f} vs "
                f"{acc_sub:.4f}",
                flush=True,
            )
        print(f"end: {time.strftime('%Y-%m-%d %H:%M:%S')}, {_load()}", flush=True)
    finally:
        client.close()
        cluster.close()
        if args.dir is None:
            shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()

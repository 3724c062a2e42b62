"""Out-of-core fit: a synthetic classification set stored as Zarr, fitted on a LocalCluster.

Writes ``--rows`` x ``--d`` float32 rows (Gaussian features, a linear rule with label noise;
rows scaled so that their norm is at most 1) to a Zarr store in chunks of ``--chunk`` rows,
then, on a LocalCluster of ``--workers`` processes (one thread each, ``--memory`` each):

* one plain dask pass over the data, ``X.sum(axis=0).compute()`` (the baseline),
* the default ``DPLogisticRegression`` (and ``schedule='newton'``) fit on the Zarr-backed dask
  array, never loaded into memory: total time, number of passes over X, time per release as a
  ratio to the plain pass,
* accuracy on a held-out part against an in-memory fit on a subsample of ``--sub`` rows.

Everything is printed; nothing is hard-coded. Example (about a minute):
``python benchmarks/bench_out_of_core.py --rows 4000000 --d 50``. A store larger than memory
(24 GiB here) is ``--rows 150000000`` (30 GB of float32; needs that much free disk).
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
    import dask.array as da

    rng = da.random.default_rng(seed)
    w = np.random.default_rng(seed).normal(size=d)
    X = rng.standard_normal((rows, d), chunks=(chunk, d), dtype=np.float32) / np.float32(
        2 * np.sqrt(d))
    norms = da.sqrt((X * X).sum(axis=1, keepdims=True))
    X = X / da.maximum(norms, 1.0)  # rows of norm <= 1 by construction (public bound 1)
    margin = X @ w.astype(np.float32) + 0.3 * rng.standard_normal(rows, chunks=chunk)
    y = (margin > 0).astype(np.int8)
    da.to_zarr(X, os.path.join(path, "X"), overwrite=True)
    da.to_zarr(y, os.path.join(path, "y"), overwrite=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--chunk", type=int, default=250_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory", default="4GiB")
    ap.add_argument("--sub", type=int, default=200_000)
    ap.add_argument("--dir", default=None, help="where the Zarr store goes (default: a temp dir)")
    ap.add_argument("--schedules", default="newton,auto",
                    help="comma-separated schedules to fit ('auto' may take hundreds of passes)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")

    import dask.array as da
    from distributed import Client, LocalCluster

    from skdpgd import DPLogisticRegression

    path = args.dir or tempfile.mkdtemp(prefix="skdpgd-ooc-")
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           memory_limit=args.memory, dashboard_address=None)
    client = Client(cluster)
    try:
        t = time.perf_counter()
        write_store(path, args.rows, args.d, args.chunk)
        t_write = time.perf_counter() - t
        X = da.from_zarr(os.path.join(path, "X"))
        y = da.from_zarr(os.path.join(path, "y"))
        n_test = min(args.rows // 10, 500_000)
        Xtr, ytr = X[: args.rows - n_test], y[: args.rows - n_test]
        Xte, yte = X[args.rows - n_test:].compute(), y[args.rows - n_test:].compute()
        gb = X.nbytes / 2 ** 30
        print(f"store: {args.rows:,} x {args.d} float32 = {gb:.1f} GiB on disk in {path} "
              f"(written in {t_write:.0f} s); cluster: {args.workers} processes x "
              f"{args.memory}")
        t = time.perf_counter()
        Xtr.sum(axis=0).compute()
        t_pass = time.perf_counter() - t
        print(f"one plain dask pass, X.sum(axis=0).compute(): {t_pass:.2f} s")

        from skdpgd import _dask_backend

        for schedule in args.schedules.split(","):
            counter = {"passes": 0}
            real_map = _dask_backend.DaskRows._map

            def counting_map(self, fn, *a, _real=real_map):
                counter["passes"] += 1
                return _real(self, fn, *a)

            _dask_backend.DaskRows._map = counting_map
            try:
                t = time.perf_counter()
                clf = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1],
                                           schedule=schedule, random_state=0).fit(Xtr, ytr)
                t_fit = time.perf_counter() - t
            finally:
                _dask_backend.DaskRows._map = real_map
            passes = counter["passes"]
            acc = clf.score(Xte, yte)
            sub = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1],
                                       schedule=schedule, random_state=0)
            sub.fit(Xtr[: args.sub].compute(), ytr[: args.sub].compute())
            print(f"schedule={schedule!r} ({clf.schedule_}, mechanism {clf.mechanism_}): fit "
                  f"{t_fit:.1f} s, {passes} release passes over X (+3 validation passes), "
                  f"{t_fit / max(passes + 3, 1) / t_pass:.2f} x the plain pass per pass; "
                  f"accuracy {acc:.4f} vs {sub.score(Xte, yte):.4f} in memory on "
                  f"{args.sub:,} rows")
    finally:
        client.close()
        cluster.close()
        if args.dir is None:
            shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()

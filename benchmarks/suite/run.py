"""Run the suite: every (set, protocol, seed, epsilon, method), one CSV row each.

Usage::

    python -m benchmarks.suite.run --task classification --half design --protocol a,b \
        --eps 0.01,0.1,0.3,1,3,10,1e6 --seeds 5 --methods all --out results.csv

Each (set, protocol, seed) is one 75/25 split (stratified for classification, ``seed`` as the
random state; ``protocols.py``); every method sees the same split, private methods get
``random_state=seed``. A row records the test score (accuracy or R^2), the fit time, the time
of the non-private sklearn fit on the same split (so timings can be read as ratios to a
baseline run in the same process) and, when the estimator has them, ``epsilon_``,
``n_iter_`` and ``alpha_``. A fit that raises is recorded with its error and a NaN score.

diffprivlib runs in its own venv (``--diffprivlib-python``, default
``/work/venvs/diffprivlib/bin/python``) as a subprocess, one per data set, on the same
preprocessed arrays (passed through temporary .npz files); its results are cached in
``benchmarks/out/suite/diffprivlib_cache.csv`` under a hash of the arrays, so reruns are cheap.

``--workers 2`` runs splits in two processes (each with one numba/BLAS thread).
``--append`` adds to an existing CSV and skips the (set, protocol, seed, method) already in it.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

from . import datasets as D
from . import methods as M
from . import protocols as P
from . import split as S

HERE = os.path.dirname(os.path.abspath(__file__))
#: where the suite's CSVs go by default (git-ignored)
RESULTS = os.path.join(os.path.dirname(HERE), "out", "suite")
DPL_CACHE = os.path.join(RESULTS, "diffprivlib_cache.csv")
DPL_PYTHON = "/work/venvs/diffprivlib/bin/python"

FIELDS = [
    "dataset",
    "task",
    "half",
    "protocol",
    "seed",
    "method",
    "kind",
    "epsilon",
    "score",
    "fit_time",
    "baseline_time",
    "epsilon_spent",
    "n_iter",
    "alpha",
    "n_train",
    "n_features",
    "n_classes",
    "subsampled_from",
    "error",
    "mechanism",
]


# ------------------------------------------------------------------------------------------
# one split, in-process methods
# ------------------------------------------------------------------------------------------


def _ctx(p, eps):
    return M.Context(
        task=p.task,
        dataset=p.dataset,
        protocol=p.protocol,
        seed=p.seed,
        epsilon=eps,
        n_train=p.n_train,
        n_features=p.n_features,
        n_classes=p.n_classes,
        data_norm=p.data_norm,
        y_bound=p.y_bound,
        feature_bounds=p.feature_bounds,
    )


def _fit_one(method, p, eps):
    """Fit and score one method on one split; never raises."""
    row = {"method": method.name, "kind": method.kind, "epsilon": eps, "error": ""}
    try:
        est = method.factory(_ctx(p, eps))
    except Exception as exc:
        row.update(score=math.nan, fit_time=math.nan, error=_err(exc))
        return row
    if est is None:
        return None
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(p.X_train, p.y_train)
        row["fit_time"] = time.perf_counter() - t0
        row["score"] = float(est.score(p.X_test, p.y_test))
    except Exception as exc:
        row.update(score=math.nan, fit_time=time.perf_counter() - t0, error=_err(exc))
        return row
    # what the fit ran: the full-batch estimators' mechanism_, DP-SGD's schedule_ ('prior' when
    # its switch returned the intercept-only model)
    mech = getattr(est, "mechanism_", None) or getattr(est, "schedule_", None)
    if isinstance(mech, str):
        row["mechanism"] = mech
    for attr, col in (("epsilon_", "epsilon_spent"), ("n_iter_", "n_iter"), ("alpha_", "alpha")):
        v = getattr(est, attr, None)
        if v is not None:
            try:
                row[col] = float(np.max(np.asarray(v, dtype=float)))
            except (TypeError, ValueError):
                pass
    return row


def _err(exc):
    return f"{type(exc).__name__}: {exc}".replace("\n", " ")[:300]


def run_split(job):
    """Worker entry: (dataset, protocol, seed, epsilons, method specs, options) -> rows."""
    name, protocol, seed, epsilons, spec, naive_grid, max_train, skip = job
    warnings.filterwarnings("ignore")
    raw = D.load(name)
    p = P.prepare(raw, protocol, seed, max_train=max_train)
    methods = [m for m in M.resolve(spec, raw.task, naive_grid) if not m.external]
    base = {
        "dataset": name,
        "task": raw.task,
        "half": S.half_of(name),
        "protocol": protocol,
        "seed": seed,
        "n_train": p.n_train,
        "n_features": p.n_features,
        "n_classes": p.n_classes if p.n_classes is not None else "",
        "subsampled_from": p.subsampled_from if p.subsampled_from is not None else "",
    }
    # the baseline timing: the non-private sklearn fit on this split, in this process
    baseline = _fit_one(M.builtin_methods()["sklearn"], p, math.nan)
    base["baseline_time"] = baseline["fit_time"]
    rows = []
    for m in methods:
        if m.name in skip:
            continue
        for eps in epsilons if m.private else [math.nan]:
            r = _fit_one(m, p, eps)
            if r is not None:
                rows.append({**base, **r})
    return rows


def _init_worker():
    warnings.filterwarnings("ignore")


# ------------------------------------------------------------------------------------------
# diffprivlib, in its own venv, cached
# ------------------------------------------------------------------------------------------


def _data_hash(p):
    h = hashlib.sha1()
    for a in (
        p.X_train,
        np.asarray(p.y_train, dtype=str) if p.task == D.CLASSIFICATION else p.y_train,
        p.X_test,
    ):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def _read_cache():
    if not os.path.exists(DPL_CACHE):
        return {}
    with open(DPL_CACHE) as f:
        return {(r["hash"], float(r["epsilon"]), int(r["seed"])): r for r in csv.DictReader(f)}


_CACHE_FIELDS = [
    "hash",
    "dataset",
    "protocol",
    "seed",
    "epsilon",
    "score",
    "fit_time",
    "dpl_version",
    "error",
]


def _append_cache(rows):
    os.makedirs(RESULTS, exist_ok=True)
    new = not os.path.exists(DPL_CACHE)
    with open(DPL_CACHE, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=_CACHE_FIELDS)
        if new:
            w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in _CACHE_FIELDS})


def run_diffprivlib(name, protocols, seeds, epsilons, max_train, python, log):
    """diffprivlib rows for one set (all protocols and seeds), from the cache or a subprocess."""
    raw = D.load(name)
    cache = _read_cache()
    splits, todo = {}, []
    for protocol in protocols:
        for seed in seeds:
            p = P.prepare(raw, protocol, seed, max_train=max_train)
            key = _data_hash(p)
            splits[(protocol, seed)] = (p, key)
            missing = [e for e in epsilons if (key, float(e), int(seed)) not in cache]
            if missing:
                todo.append((p, key, missing))
    if todo:
        if not os.path.exists(python):
            log(f"  diffprivlib: {python} not found; skipped (create the venv, see README)")
            return []
        t0 = time.time()
        with tempfile.TemporaryDirectory(prefix="suite_dpl_") as tmp:
            jobs = []
            for k, (p, key, missing) in enumerate(todo):
                path = os.path.join(tmp, f"split{k}.npz")
                y_tr = (
                    np.asarray(p.y_train).astype(str) if p.task == D.CLASSIFICATION else p.y_train
                )
                y_te = np.asarray(p.y_test).astype(str) if p.task == D.CLASSIFICATION else p.y_test
                np.savez(
                    path,
                    X_train=p.X_train,
                    y_train=y_tr,
                    X_test=p.X_test,
                    y_test=y_te,
                    feature_bounds=p.feature_bounds,
                )
                jobs.append(
                    {
                        "key": key,
                        "npz": path,
                        "task": p.task,
                        "seed": p.seed,
                        "epsilons": [float(e) for e in missing],
                        "protocol": p.protocol,
                    }
                )
            jobs_path, out_path = os.path.join(tmp, "jobs.json"), os.path.join(tmp, "out.json")
            with open(jobs_path, "w") as f:
                json.dump(jobs, f)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            worker = os.path.join(HERE, "_diffprivlib_worker.py")
            proc = subprocess.run(
                [python, worker, jobs_path, out_path], env=env, capture_output=True, text=True
            )
            if proc.returncode != 0:
                log(f"  diffprivlib failed on {name}: {proc.stderr[-500:]}")
                return []
            with open(out_path) as f:
                out = json.load(f)
        meta = {j["key"]: j for j in jobs}
        new_rows = [
            {
                "hash": r["key"],
                "dataset": name,
                "protocol": meta[r["key"]]["protocol"],
                "seed": meta[r["key"]]["seed"],
                "epsilon": r["epsilon"],
                "score": r["score"],
                "fit_time": r["fit_time"],
                "dpl_version": r["dpl_version"],
                "error": r["error"],
            }
            for r in out
        ]
        _append_cache(new_rows)
        cache = _read_cache()
        log(f"  diffprivlib on {name}: {len(out)} fits in {time.time() - t0:.1f} s")
    rows = []
    for (protocol, seed), (p, key) in splits.items():
        for eps in epsilons:
            c = cache.get((key, float(eps), int(seed)))
            if c is None:
                continue
            rows.append(
                {
                    "dataset": name,
                    "task": raw.task,
                    "half": S.half_of(name),
                    "protocol": protocol,
                    "seed": seed,
                    "method": "diffprivlib",
                    "kind": "peer",
                    "epsilon": float(eps),
                    "score": float(c["score"]),
                    "fit_time": float(c["fit_time"]),
                    "baseline_time": "",
                    "n_train": p.n_train,
                    "n_features": p.n_features,
                    "n_classes": p.n_classes if p.n_classes is not None else "",
                    "subsampled_from": p.subsampled_from or "",
                    "error": c["error"],
                }
            )
    return rows


# ------------------------------------------------------------------------------------------
# driver
# ------------------------------------------------------------------------------------------


def _write(path, rows, header):
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        if header:
            w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k, "")) for k in FIELDS})


def _done(path):
    """(dataset, protocol, seed, method) already in an existing CSV."""
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {
            (r["dataset"], r["protocol"], int(r["seed"]), r["method"]) for r in csv.DictReader(f)
        }


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--task",
        default="classification,regression",
        help="classification, regression or both (comma-separated)",
    )
    ap.add_argument("--half", default="design", choices=["design", "report", "all"])
    ap.add_argument("--protocol", default="a,b", help="a, b or a,b")
    ap.add_argument("--eps", default="0.01,0.1,0.3,1,3,10,1e6")
    ap.add_argument("--seeds", type=int, default=5, help="seeds 0..seeds-1")
    ap.add_argument(
        "--methods",
        default="all",
        help="comma-separated: all, skdpgd, naive, peers, cheap, a method name, or module:callable",
    )
    ap.add_argument("--sets", default=None, help="restrict to these sets (comma-separated)")
    ap.add_argument(
        "--naive-grid",
        default=None,
        help="T:alpha pairs of the naive peer, e.g. 100:1e-3,1000:1e-4",
    )
    ap.add_argument("--max-train", type=int, default=P.MAX_TRAIN)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--diffprivlib-python", default=DPL_PYTHON)
    ap.add_argument("--out", default=os.path.join(RESULTS, "results.csv"))
    ap.add_argument(
        "--append",
        action="store_true",
        help="append to --out, skipping (set, protocol, seed, method) present",
    )
    args = ap.parse_args(argv)

    tasks = [t.strip() for t in args.task.split(",")]
    protocols = [p.strip() for p in args.protocol.split(",")]
    epsilons = [float(e) for e in args.eps.split(",")]
    seeds = list(range(args.seeds))
    grid = M.parse_grid(args.naive_grid) if args.naive_grid else M.NAIVE_GRID
    names = []
    for t in tasks:
        names += S.sets(args.half, t)
    if args.sets:
        want = set(args.sets.split(","))
        unknown = want - set(D.DATASETS)
        if unknown:
            raise SystemExit(f"unknown sets: {sorted(unknown)}")
        names = [n for n in names if n in want]
    for t in tasks:  # fail early on a bad method spec
        M.resolve(args.methods, t, grid)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    done = _done(args.out) if args.append else set()
    if not args.append and os.path.exists(args.out):
        os.remove(args.out)
    header = not os.path.exists(args.out)

    def log(msg):
        print(msg, flush=True)

    t_start = time.time()
    log(
        f"sets: {names}; protocols {protocols}; eps {epsilons}; seeds {len(seeds)}; "
        f"workers {args.workers}"
    )

    # diffprivlib first (subprocess per set, cached)
    for name in names:
        ms = M.resolve(args.methods, D.DATASETS[name].task, grid)
        if any(m.external for m in ms):
            todo_seeds = [
                s
                for s in seeds
                if any((name, pr, s, "diffprivlib") not in done for pr in protocols)
            ]
            if not todo_seeds:
                continue
            rows = run_diffprivlib(
                name, protocols, todo_seeds, epsilons, args.max_train, args.diffprivlib_python, log
            )
            rows = [
                r
                for r in rows
                if (r["dataset"], r["protocol"], r["seed"], "diffprivlib") not in done
            ]
            _write(args.out, rows, header)
            header = False

    jobs = []
    for name in names:
        task = D.DATASETS[name].task
        ms = [m for m in M.resolve(args.methods, task, grid) if not m.external]
        for protocol in protocols:
            for seed in seeds:
                skip = {m.name for m in ms if (name, protocol, seed, m.name) in done}
                if len(skip) < len(ms):
                    jobs.append(
                        (name, protocol, seed, epsilons, args.methods, grid, args.max_train, skip)
                    )

    n_done = 0
    if args.workers > 1:
        import multiprocessing as mp

        # one thread per worker process: set before the children import numba / BLAS
        for var in (
            "NUMBA_NUM_THREADS",
            "OMP_NUM_THREADS",
            "OPENBLAS_NUM_THREADS",
            "MKL_NUM_THREADS",
        ):
            os.environ[var] = "1"
        with mp.get_context("spawn").Pool(args.workers, initializer=_init_worker) as pool:
            for rows in pool.imap_unordered(run_split, jobs):
                _write(args.out, rows, header)
                header = False
                n_done += 1
                r0 = rows[0] if rows else {}
                log(
                    f"[{n_done}/{len(jobs)}] {r0.get('dataset')} {r0.get('protocol')} "
                    f"seed {r0.get('seed')}: {len(rows)} rows, {time.time() - t_start:.0f} s"
                )
    else:
        for job in jobs:
            rows = run_split(job)
            _write(args.out, rows, header)
            header = False
            n_done += 1
            log(
                f"[{n_done}/{len(jobs)}] {job[0]} {job[1]} seed {job[2]}: {len(rows)} rows, "
                f"{time.time() - t_start:.0f} s"
            )
    log(f"done in {time.time() - t_start:.0f} s -> {args.out}")


if __name__ == "__main__":
    sys.exit(main())

"""Start-up cost of a fresh install: ``import skdpgd`` and the first fit's numba compilation.

Usage (from the repository root; a few minutes on a 2-core machine)::

    python benchmarks/bench_startup.py [--venv DIR] [--source DIR] [--repeats 3]

1. Makes a **brand-new virtual environment** (``--venv``, default a new temporary directory;
   an existing directory is refused) and installs skdpgd into it from ``--source`` (default:
   this checkout) with a regular, non-editable ``pip install``, so nothing compiled before
   can be found in the package directory. By default the new venv sees this interpreter's
   third-party packages through a ``.pth`` file placed after its own site-packages, and only
   skdpgd is installed into it (seconds, no network); ``--isolated`` makes a venv with its
   own pip and installs every dependency from the package index instead.
2. **First fit of each estimator** (DPLogisticRegression, DPRidge, DPSGDClassifier,
   DPSGDRegressor, DPHuberRegressor, DPPoissonRegressor, DPLinearSVC, each with its defaults
   on small generated data, ``--n`` x ``--d``, rows of norm <= 1; a dense X of at most 50,000
   entries is reduced in numpy, a larger one by the numba kernels, so ``--n 30000 --d 100``
   times their compilation): for each,
   ``--repeats`` new processes, each with ``NUMBA_CACHE_DIR`` pointed at a new empty
   directory, import skdpgd and fit twice. The first fit compiles every kernel it uses; the
   second is the same fit with the kernels in memory; their difference is the compilation.
   Reported as wall time and as the CPU time of the process (all its threads), which other
   processes on a shared machine inflate much less than the wall time. One more process per
   estimator with the cache directory filled times a first fit that loads the kernels from
   the cache.
3. **Import time**: ``import sklearn.linear_model`` and ``import skdpgd`` in new processes,
   interleaved, after a discarded round that warms the file-system cache; medians over
   ``--imports`` rounds, wall and CPU, of the import statement alone (interpreter start-up
   excluded).

The load average is printed before and after: on a busy machine every wall-clock figure is
inflated (the targets are stated for an idle machine).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import site
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]

ESTIMATORS = {
    "DPLogisticRegression": "DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], "
    "random_state=0).fit(X, y)",
    "DPRidge": "DPRidge(epsilon=1.0, data_norm=1.0, y_bound=1.0, random_state=0).fit(X, yr)",
    "DPSGDClassifier": "DPSGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1], "
    "random_state=0).fit(X, y)",
    "DPSGDRegressor": "DPSGDRegressor(epsilon=1.0, data_norm=1.0, y_bound=1.0, "
    "random_state=0).fit(X, yr)",
    "DPHuberRegressor": "DPHuberRegressor(epsilon=1.0, data_norm=1.0, y_bound=1.0, "
    "random_state=0).fit(X, yr)",
    "DPPoissonRegressor": "DPPoissonRegressor(epsilon=1.0, data_norm=1.0, y_bound=10.0, "
    "random_state=0).fit(X, counts)",
    "DPLinearSVC": "DPLinearSVC(epsilon=1.0, data_norm=1.0, classes=[0, 1], "
    "random_state=0).fit(X, y)",
}

_FIT_CHILD = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
n, d, stmt = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
X = rng.standard_normal((n, d))
X /= np.linalg.norm(X, axis=1).max()
y = (X[:, 0] > 0).astype(int)
yr = np.clip(X @ rng.standard_normal(d), -1.0, 1.0)
counts = rng.poisson(np.exp(X @ rng.standard_normal(d)))
t0, c0 = time.perf_counter(), time.process_time()
from skdpgd import (DPHuberRegressor, DPLinearSVC, DPLogisticRegression, DPPoissonRegressor,
                    DPRidge, DPSGDClassifier, DPSGDRegressor)
t1, c1 = time.perf_counter(), time.process_time()
exec(stmt)
t2, c2 = time.perf_counter(), time.process_time()
exec(stmt)
t3, c3 = time.perf_counter(), time.process_time()
import skdpgd
print(json.dumps({"import": [t1 - t0, c1 - c0], "first": [t2 - t1, c2 - c1],
                  "second": [t3 - t2, c3 - c2], "file": skdpgd.__file__}))
"""

_IMPORT_CHILD = (
    "import time; t, c = time.perf_counter(), time.process_time(); {stmt}; "
    "print(time.perf_counter() - t, time.process_time() - c)"
)

IMPORTS = {"sklearn.linear_model": "import sklearn.linear_model", "skdpgd": "import skdpgd"}


def _run(cmd, **kw):
    res = subprocess.run(cmd, text=True, capture_output=True, **kw)
    if res.returncode:
        sys.exit(
            f"failed ({res.returncode}): {' '.join(map(str, cmd))}\n{res.stdout}\n{res.stderr}"
        )
    return res


def make_venv(where, source, isolated):
    """A new venv at ``where`` with skdpgd installed from ``source``; returns its python."""
    if isolated:
        _run([sys.executable, "-m", "venv", str(where)])
        py = str(where / "bin" / "python")
        _run([py, "-m", "pip", "install", "--quiet", str(source)])
        return py
    # Without a pip of its own: this environment's packages (pip, the build back end, every
    # dependency) are visible through a .pth file, after the venv's own site-packages.
    _run([sys.executable, "-m", "venv", "--without-pip", str(where)])
    py = str(where / "bin" / "python")
    purelib = _run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    ).stdout.strip()
    parents = [p for p in site.getsitepackages() if os.path.isdir(p)]
    pathlib.Path(purelib, "_parent_env.pth").write_text("\n".join(parents) + "\n")
    _run([py, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", str(source)])
    return py


def fit_once(py, stmt, n, d, cache, cwd):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env.pop("PYTHONPATH", None)
    out = _run([py, "-c", _FIT_CHILD, str(n), str(d), stmt], env=env, cwd=cwd).stdout
    return json.loads(out.strip().splitlines()[-1])


def import_once(py, stmt, cwd):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    wall, cpu = _run([py, "-c", _IMPORT_CHILD.format(stmt=stmt)], env=env, cwd=cwd).stdout.split()
    return float(wall), float(cpu)


def _load():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--venv",
        type=pathlib.Path,
        default=None,
        help="where to make the new venv (must not exist; default: a temp dir, removed afterwards)",
    )
    p.add_argument(
        "--source",
        type=pathlib.Path,
        default=ROOT,
        help="skdpgd source tree to install (default: this checkout)",
    )
    p.add_argument(
        "--isolated",
        action="store_true",
        help="install every dependency into the new venv from the package index",
    )
    p.add_argument("--repeats", type=int, default=3, help="cold first fits per estimator")
    p.add_argument("--imports", type=int, default=7, help="import-time rounds (median)")
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--d", type=int, default=20)
    p.add_argument("--only", default=None, help="substring of the estimator names to run")
    p.add_argument("--json", type=pathlib.Path, default=None, help="also write the results")
    args = p.parse_args(argv)

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="skdpgd-startup-"))
    venv = args.venv if args.venv is not None else tmp / "venv"
    if venv.exists():
        sys.exit(f"{venv} exists: the benchmark needs a brand-new venv")
    try:
        py = make_venv(venv, args.source.resolve(), args.isolated)
        cwd = tmp  # not the source tree, so the installed copy is the one imported
        info = _run(
            [
                py,
                "-c",
                "import numba, sklearn, sys, skdpgd; print(skdpgd.__file__); "
                "print(numba.__version__, sklearn.__version__, sys.version.split()[0])",
            ],
            cwd=cwd,
        ).stdout.splitlines()
        pkg = pathlib.Path(info[0]).parent
        stale = [f for f in pkg.rglob("*") if f.suffix in (".nbi", ".nbc")]
        if stale:
            sys.exit(f"the new install already holds numba cache files: {stale[:3]}")
        results = {
            "load_before": os.getloadavg(),
            "cpus": os.cpu_count(),
            "fits": {},
            "imports": {},
        }
        print(
            f"# new venv {venv} ({'isolated' if args.isolated else 'dependencies seen from '}"
            f"{'' if args.isolated else sys.prefix}); skdpgd from {args.source.resolve()}"
        )
        print(f"# imported from {info[0]}; numba, scikit-learn, python: {info[1]}")
        print(f"# {os.cpu_count()} cpus; load average before: {_load()}")
        print(
            f"\n## First fit, {args.n} x {args.d}, empty numba cache "
            f"({args.repeats} new processes each; min and median)"
        )
        print(
            "| estimator | compile wall (min / median) | compile CPU (min / median) "
            "| first fit wall / CPU (min) | second fit | cached first fit |"
        )
        print("|---|---|---|---|---|---|")
        for name, stmt in ESTIMATORS.items():
            if args.only and args.only not in name:
                continue
            runs = []
            for r in range(args.repeats):
                cache = tmp / f"numba-{name}-{r}"
                cache.mkdir()
                runs.append(fit_once(py, stmt, args.n, args.d, cache, cwd))
            cached = fit_once(py, stmt, args.n, args.d, cache, cwd)  # last cache, now filled
            comp = [[x["first"][i] - x["second"][i] for x in runs] for i in (0, 1)]
            first = [min(x["first"][i] for x in runs) for i in (0, 1)]
            second = min(x["second"][0] for x in runs)
            results["fits"][name] = {"runs": runs, "cached": cached}
            print(
                f"| {name} | {min(comp[0]):.2f} / {statistics.median(comp[0]):.2f} s "
                f"| {min(comp[1]):.2f} / {statistics.median(comp[1]):.2f} s "
                f"| {first[0]:.2f} / {first[1]:.2f} s | {second * 1e3:.0f} ms "
                f"| {cached['first'][0]:.2f} s wall, {cached['first'][1]:.2f} s CPU |",
                flush=True,
            )
        rounds = {k: [] for k in IMPORTS}
        for r in range(args.imports + 1 if args.imports > 0 else 0):
            for key, stmt in IMPORTS.items():
                t = import_once(py, stmt, cwd)
                if r:  # round 0 warms the file-system cache
                    rounds[key].append(t)
        if args.imports <= 0:
            return
        med = {k: [statistics.median(t[i] for t in v) for i in (0, 1)] for k, v in rounds.items()}
        results["imports"] = rounds
        base = med["sklearn.linear_model"]
        print(f"\n## Import time, median of {args.imports} new processes")
        print("| statement | wall | CPU | wall - sklearn | CPU - sklearn |")
        print("|---|---|---|---|---|")
        for key, stmt in IMPORTS.items():
            w, c = med[key]
            print(
                f"| `{stmt}` | {w:.2f} s | {c:.2f} s | {w - base[0]:+.2f} s | "
                f"{c - base[1]:+.2f} s |"
            )
        results["load_after"] = os.getloadavg()
        print(f"\n# load average after: {_load()}")
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

"""DPHuberRegressor, DPPoissonRegressor and DPLinearSVC against scikit-learn and the floor.

Protocol
--------
* Data: suite sets under protocol (b) (``benchmarks/suite/protocols.py``: public feature
  ranges, rows of norm at most 1, ``data_norm=1``), 75/25 splits, ``--seeds`` seeds.
  Regression: diabetes, computers, budgetfood. DPHuberRegressor sees the targets mapped to
  [-1, 1] (``y_bound=1``) with ``scale=0.1``; DPPoissonRegressor sees the raw targets (all
  non-negative) in a public unit, ``POISSON_BOUND / hi`` times them with ``hi`` the upper end
  of the set's public target range, and ``y_bound=POISSON_BOUND`` (the sensitivity grows
  with the bound; D^2 and the weights of the unpenalised fit do not change with the unit).
  Classification: breast_cancer, biopsy, digits_3v8 (two classes) and wine (three classes:
  DPLinearSVC and LinearSVC both one-vs-rest).
* Each estimator with ``schedule='auto'`` and only ``epsilon``, ``data_norm`` and the public
  bounds given, at epsilon in {0.3, 1, 3, 1e6}.
* Counterpart, same penalty: ``HuberRegressor(epsilon=1.35, alpha=alpha_ * N / scale)``
  (it fits its own scale), ``PoissonRegressor(alpha=alpha_)``, ``LinearSVC(C=1 / (N alpha_))``,
  with the ``alpha_`` each private fit resolved (at 1e6: ``1/N``).
* Scores on the test rows: R^2 (Huber), D^2 (Poisson, as PoissonRegressor.score), accuracy
  (SVC). Floors: R^2 = D^2 = 0 (the mean of the training targets), the majority class.

Targets: at epsilon = 1e6 the median score within 0.005 of the counterpart's on every set;
at epsilon >= 0.3 the median at least the floor. The script prints the measured medians.

Run: ``python -m benchmarks.bench_glm_targets [--seeds 3]``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from sklearn.linear_model import HuberRegressor, PoissonRegressor
from sklearn.metrics import d2_tweedie_score
from sklearn.svm import LinearSVC

from skdpgd import DPHuberRegressor, DPLinearSVC, DPPoissonRegressor

from .suite.datasets import load
from .suite.protocols import prepare

EPSILONS = (0.3, 1.0, 3.0, 1e6)
REGRESSION = ("diabetes", "computers", "budgetfood")
CLASSIFICATION = ("breast_cancer", "biopsy", "digits_3v8", "wine")
HUBER_SCALE = 0.1
POISSON_BOUND = 20.0


def _huber(p, eps, seed):
    m = DPHuberRegressor(
        epsilon=eps, data_norm=1.0, y_bound=1.0, scale=HUBER_SCALE, random_state=seed
    ).fit(p.X_train, p.y_train)
    sk = HuberRegressor(alpha=m.alpha_ * p.n_train / HUBER_SCALE, max_iter=2000)
    sk.fit(p.X_train, p.y_train)
    return m.score(p.X_test, p.y_test), sk.score(p.X_test, p.y_test), 0.0, m.schedule_


def _poisson(p, raw, eps, seed):
    # raw targets (non-negative) on the same split, bound: the public range's upper end
    y_tr, y_te = _raw_targets(p, raw)
    unit = POISSON_BOUND / float(raw.y_range[1])
    y_tr, y_te, y_bound = y_tr * unit, y_te * unit, POISSON_BOUND
    m = DPPoissonRegressor(epsilon=eps, data_norm=1.0, y_bound=y_bound, random_state=seed).fit(
        p.X_train, y_tr
    )
    sk = PoissonRegressor(alpha=m.alpha_, max_iter=2000).fit(p.X_train, y_tr)
    floor = d2_tweedie_score(y_te, np.full(y_te.shape, y_tr.mean()), power=1)
    return m.score(p.X_test, y_te), sk.score(p.X_test, y_te), floor, m.schedule_


def _raw_targets(p, raw):
    lo, hi = raw.y_range  # protocol (b) maps y to 2 (y - lo) / (hi - lo) - 1
    return ((p.y_train + 1.0) / 2.0 * (hi - lo) + lo, (p.y_test + 1.0) / 2.0 * (hi - lo) + lo)


def _svc(p, eps, seed):
    classes = np.unique(p.y_train)
    m = DPLinearSVC(epsilon=eps, data_norm=1.0, classes=classes, random_state=seed).fit(
        p.X_train, p.y_train
    )
    sk = LinearSVC(C=1.0 / (p.n_train * m.alpha_), max_iter=20000).fit(p.X_train, p.y_train)
    values, counts = np.unique(p.y_train, return_counts=True)
    floor = float(np.mean(p.y_test == values[np.argmax(counts)]))
    return m.score(p.X_test, p.y_test), sk.score(p.X_test, p.y_test), floor, m.schedule_


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    for name, sets in (
        ("DPHuberRegressor", REGRESSION),
        ("DPPoissonRegressor", REGRESSION),
        ("DPLinearSVC", CLASSIFICATION),
    ):
        for ds in sets:
            raw = load(ds)
            preps = [prepare(raw, "b", seed) for seed in range(args.seeds)]
            for eps in EPSILONS:
                out = []
                for seed, p in enumerate(preps):
                    if name == "DPHuberRegressor":
                        out.append(_huber(p, eps, seed))
                    elif name == "DPPoissonRegressor":
                        out.append(_poisson(p, raw, eps, seed))
                    else:
                        out.append(_svc(p, eps, seed))
                dp = float(np.median([o[0] for o in out]))
                sk = float(np.median([o[1] for o in out]))
                floor = float(np.median([o[2] for o in out]))
                sched = sorted({o[3] for o in out})
                rows.append((name, ds, eps, dp, sk, floor, sched))
                target = (abs(dp - sk) <= 0.005) if eps >= 1e5 else (dp >= floor)
                print(
                    f"{name:19s} {ds:14s} eps={eps:<9g} dp={dp:.4f} sklearn={sk:.4f} "
                    f"diff={dp - sk:+.4f} floor={floor:.4f} schedule={','.join(sched):8s} "
                    f"{'meets' if target else 'MISSES'} target",
                    flush=True,
                )
    return rows


if __name__ == "__main__":
    main()

"""The private search against the default fit on scikit-learn's digits (10 classes).

Protocol
--------
* Data: ``sklearn.datasets.load_digits`` (1797 images, 64 pixels in 0..16 by construction: a
  public range), split 75/25 with ``train_test_split(random_state=seed)``.
* default: ``make_private_pipeline(BoundedScaler(bounds=(0, 16)),
  DPLogisticRegression(classes=range(10)), epsilon, random_state=seed)`` on all training rows
  (the docs' first fit).
* search: ``PrivateRandomSearchCV`` of the same private pipeline, built without an epsilon,
  over GRID (which lists the defaults), at the same total epsilon, ``n_iter`` in
  ``--n-iter`` (geometric number of trials), ``random_state=seed``; its model is the winning
  trial's, trained on 80% of the training rows.
* Score: test accuracy, per seed and the mean over the seeds. Accuracy only: no timing.

Run ``python benchmarks/bench_search_digits.py`` (prints a markdown table).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from skdpgd import DPLogisticRegression  # noqa: E402
from skdpgd.model_selection import PrivateRandomSearchCV  # noqa: E402
from skdpgd.pipeline import make_private_pipeline  # noqa: E402
from skdpgd.preprocessing import BoundedScaler  # noqa: E402

GRID = {
    "dplogisticregression__alpha": ["auto", 1e-4, 1e-3, 1e-2],
    "dplogisticregression__schedule": ["auto", "uniform", "output"],
}


def _pipe(**kw):
    return make_private_pipeline(
        BoundedScaler(bounds=(0, 16)), DPLogisticRegression(classes=list(range(10))), **kw
    )


def run(epsilons, seeds, n_iters):
    X, y = load_digits(return_X_y=True)
    print("| epsilon | seed | default | " + " | ".join(f"search, E[K]={m}" for m in n_iters) + " |")
    print("|---|---|---|" + "---|" * len(n_iters))
    means = {}
    for eps in epsilons:
        for seed in seeds:
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                default = _pipe(epsilon=eps, random_state=seed).fit(X_tr, y_tr).score(X_te, y_te)
                row = [default]
                for m in n_iters:
                    search = PrivateRandomSearchCV(
                        _pipe(), GRID, epsilon=eps, n_iter=m, random_state=seed
                    ).fit(X_tr, y_tr)
                    assert search.epsilon_ <= eps
                    row.append(search.score(X_te, y_te))
            means.setdefault(eps, []).append(row)
            print(f"| {eps:g} | {seed} | " + " | ".join(f"{v:.3f}" for v in row) + " |", flush=True)
    for eps, rows in means.items():
        mean = np.mean(rows, axis=0)
        print(f"| {eps:g} | mean | " + " | ".join(f"{v:.3f}" for v in mean) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 3.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--n-iter", type=float, nargs="+", default=[5.0, 10.0])
    args = parser.parse_args()
    run(args.epsilons, args.seeds, args.n_iter)

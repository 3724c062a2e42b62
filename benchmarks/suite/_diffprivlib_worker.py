"""Fit diffprivlib peers in diffprivlib's own venv (scikit-learn < 1.8).

Run by ``run.py`` as ``<venv>/bin/python _diffprivlib_worker.py jobs.json results.json``; it
imports neither skdpgd nor the suite (only numpy, scikit-learn and diffprivlib).

``jobs.json``: a list of {"key", "npz", "task", "seed", "epsilons"}; each npz holds the
preprocessed ``X_train, y_train, X_test, y_test, feature_bounds`` of one split (rows have norm
<= 1, regression targets lie in [-1, 1]). Models: ``LogisticRegression(epsilon, data_norm=1)``
(objective perturbation; multiclass one-vs-rest as diffprivlib does it) and
``LinearRegression(epsilon, bounds_X=feature_bounds, bounds_y=(-1, 1))`` (functional
mechanism), both pure epsilon-DP, ``random_state=seed``, a fresh ``BudgetAccountant`` each.
"""

import json
import sys
import time
import warnings

import numpy as np


def main(jobs_path, out_path):
    warnings.filterwarnings("ignore")
    import diffprivlib
    from diffprivlib import BudgetAccountant
    from diffprivlib.models import LinearRegression, LogisticRegression

    with open(jobs_path) as f:
        jobs = json.load(f)
    results = []
    for job in jobs:
        d = np.load(job["npz"], allow_pickle=False)
        Xtr, ytr, Xte, yte = d["X_train"], d["y_train"], d["X_test"], d["y_test"]
        bounds = d["feature_bounds"]
        for eps in job["epsilons"]:
            row = {"key": job["key"], "epsilon": eps, "dpl_version": diffprivlib.__version__}
            t0 = time.perf_counter()
            try:
                if job["task"] == "classification":
                    m = LogisticRegression(
                        epsilon=eps,
                        data_norm=1.0,
                        random_state=job["seed"],
                        accountant=BudgetAccountant(),
                    )
                else:
                    m = LinearRegression(
                        epsilon=eps,
                        bounds_X=(bounds[:, 0], bounds[:, 1]),
                        bounds_y=(-1.0, 1.0),
                        random_state=job["seed"],
                        accountant=BudgetAccountant(),
                    )
                m.fit(Xtr, ytr)
                row["fit_time"] = time.perf_counter() - t0
                row["score"] = float(m.score(Xte, yte))
                row["error"] = ""
            except Exception as exc:  # recorded, not hidden
                row["fit_time"] = time.perf_counter() - t0
                row["score"] = float("nan")
                row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            results.append(row)
    with open(out_path, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

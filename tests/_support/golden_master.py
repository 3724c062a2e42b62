"""Golden master of every estimator x mechanism x input kind, and of the private scaler,
pipelines and search.

Each case fits one estimator at a fixed ``random_state`` and records ``coef_``, ``intercept_``,
``epsilon_`` and ``n_iter_`` (and, for the network, every weight).
``tests/core/test_golden_master.py``
refits each case and compares with the stored values (``tests/data/golden_master.json``): a
refactor that keeps every draw in its place reproduces them to rounding.

Regenerate (only when a change of draw order is intended and explained in the commit):

    PYTHONPATH=. python tests/_support/golden_master.py --write

Add new cases only (the stored ones untouched):

    PYTHONPATH=. python tests/_support/golden_master.py --add

Refit named cases only (a change of what those fits compute, intended and explained in the
commit; every other stored case untouched):

    PYTHONPATH=. python tests/_support/golden_master.py --replace NAME[,NAME...]
"""

from __future__ import annotations

import json
import pathlib
import sys
import warnings

import numpy as np
import scipy.sparse as sp

PATH = pathlib.Path(__file__).parent.parent / "data" / "golden_master.json"


def _binary(n=240, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = (X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _multi(n=300, d=5, k=3, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = np.argmax(X @ rng.normal(size=(d, k)) + 0.3 * rng.normal(size=(n, k)), axis=1)
    return X, y


def _regression(n=260, d=5, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = X @ rng.normal(size=d) + 0.2 * rng.normal(size=n)
    return X, np.clip(y, -2, 2)


def _counts(n=260, d=5, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    return X, rng.poisson(np.exp(X @ rng.normal(size=d) + 1.0)).astype(float)


def _sparse_binary():
    X, y = _binary(seed=3)
    X[np.abs(X) < 0.4] = 0.0
    return X, y


def _as(kind, X):
    if kind == "dense":
        return X
    if kind == "float32":
        return X.astype(np.float32)
    if kind == "csr":
        return sp.csr_matrix(X)
    if kind == "dask":
        import dask.array as da

        return da.from_array(X, chunks=(97, X.shape[1]))
    raise ValueError(kind)


def cases():
    """(name, factory) pairs; factory() -> (estimator, X, y) ready to fit."""
    from skdpgd import (
        DPLogisticRegression,
        DPRidge,
        DPSGDClassifier,
        DPSGDRegressor,
        ImportanceMask,
        PrivacyBudget,
    )

    out = []

    def add(name, make, data, kind="dense", budget=None):
        def factory():
            X, y = data()
            est = make()
            if budget is not None:
                est.set_params(budget=PrivacyBudget(**budget))
            return est, _as(kind, X), y

        out.append((name, factory))

    logistic_schedules = ["auto", "uniform", "hong", "pur", "exponential", "output", "newton"]
    for kind in ("dense", "float32", "csr", "dask"):
        for sched in logistic_schedules:
            if kind == "dask" and sched in ("hong", "pur", "exponential"):
                continue
            for eps in (0.05, 1.0, 30.0) if sched == "auto" else (1.0,):
                add(
                    f"logreg-{sched}-{kind}-eps{eps}",
                    lambda s=sched, e=eps: DPLogisticRegression(
                        epsilon=e, data_norm=1.0, schedule=s, random_state=0
                    ),
                    _sparse_binary if kind == "csr" else _binary,
                    kind,
                )
        for sched in ("auto", "uniform", "newton"):
            add(
                f"logreg-multi-{sched}-{kind}",
                lambda s=sched: DPLogisticRegression(
                    epsilon=2.0, data_norm=1.0, schedule=s, random_state=1
                ),
                _multi,
                kind,
            )
        for sched in ("auto", "ssp", "uniform", "output", "hong"):
            if kind == "dask" and sched == "hong":
                continue
            add(
                f"ridge-{sched}-{kind}",
                lambda s=sched: DPRidge(
                    epsilon=1.0, data_norm=1.0, y_bound=2.0, schedule=s, random_state=2
                ),
                _regression,
                kind,
            )
    # options that open other set-up releases
    add(
        "logreg-balanced",
        lambda: DPLogisticRegression(
            epsilon=1.0, data_norm=1.0, class_weight="balanced", random_state=3
        ),
        _binary,
    )
    add(
        "logreg-add_remove",
        lambda: DPLogisticRegression(
            epsilon=1.0, data_norm=1.0, neighbouring="add_remove", random_state=4
        ),
        _binary,
    )
    add(
        "logreg-add_remove-nsamples",
        lambda: DPLogisticRegression(
            epsilon=1.0, data_norm=1.0, neighbouring="add_remove", n_samples=240, random_state=4
        ),
        _binary,
    )
    add(
        "logreg-rowclip-data_norm",
        lambda: DPLogisticRegression(
            epsilon=1.0, data_norm=1.0, row_clip="data_norm", momentum=0.5, random_state=5
        ),
        _binary,
    )
    add(
        "logreg-budget-add_remove",
        lambda: DPLogisticRegression(epsilon=0.5, data_norm=1.0, random_state=6),
        _binary,
        budget={"epsilon": 2.0, "delta": 1e-5},
    )
    add(
        "logreg-budget-replace",
        lambda: DPLogisticRegression(epsilon=0.5, data_norm=1.0, random_state=6),
        _binary,
        budget={"epsilon": 2.0, "delta": 1e-5, "neighbouring": "replace"},
    )
    add(
        "ridge-add_remove",
        lambda: DPRidge(
            epsilon=1.0, data_norm=1.0, y_bound=2.0, neighbouring="add_remove", random_state=7
        ),
        _regression,
    )
    add(
        "logreg-inf",
        lambda: DPLogisticRegression(epsilon=np.inf, data_norm=1.0, random_state=0),
        _binary,
    )
    # DP-SGD
    for kind in ("dense", "float32", "csr"):
        data = _sparse_binary if kind == "csr" else _binary
        add(
            f"sgdc-log-{kind}",
            lambda: DPSGDClassifier(epsilon=1.0, data_norm=1.0, random_state=8),
            data,
            kind,
        )
        add(
            f"sgdr-{kind}",
            lambda: DPSGDRegressor(epsilon=1.0, data_norm=1.0, y_bound=2.0, random_state=9),
            _regression,
            kind,
        )
    for loss in ("hinge", "modified_huber", "squared_hinge"):
        add(
            f"sgdc-{loss}",
            lambda name=loss: DPSGDClassifier(
                loss=name, epsilon=1.0, data_norm=1.0, random_state=10
            ),
            _binary,
        )
    add("sgdc-multi", lambda: DPSGDClassifier(epsilon=2.0, data_norm=1.0, random_state=11), _multi)
    add(
        "sgdc-balanced-hong",
        lambda: DPSGDClassifier(
            epsilon=1.0, data_norm=1.0, class_weight="balanced", schedule="hong", random_state=12
        ),
        _binary,
    )
    add(
        "sgdc-nsamples-exponential",
        lambda: DPSGDClassifier(
            epsilon=1.0, data_norm=1.0, n_samples=240, schedule="exponential", random_state=13
        ),
        _binary,
    )
    add(
        "sgdc-importance",
        lambda: DPSGDClassifier(
            epsilon=2.0, data_norm=1.0, importance=ImportanceMask(), random_state=14
        ),
        _binary,
    )
    add(
        "sgdc-pld",
        lambda: DPSGDClassifier(
            epsilon=1.0, data_norm=1.0, accountant="pld", epochs=2, random_state=15
        ),
        _binary,
    )
    add(
        "sgdc-budget",
        lambda: DPSGDClassifier(epsilon=0.5, data_norm=1.0, random_state=16),
        _binary,
        budget={"epsilon": 2.0, "delta": 1e-5},
    )
    add(
        "sgdr-huber",
        lambda: DPSGDRegressor(
            loss="huber", epsilon=1.0, data_norm=1.0, y_bound=2.0, random_state=17
        ),
        _regression,
    )
    # the Huber, Poisson and squared hinge estimators on the full-batch road
    from skdpgd import DPHuberRegressor, DPLinearSVC, DPPoissonRegressor
    from skdpgd.schedules import KroneckerNewton

    for kind in ("dense", "float32", "csr", "dask"):
        for sched in ("auto", "uniform", "output"):
            add(
                f"huber-{sched}-{kind}",
                lambda s=sched: DPHuberRegressor(
                    epsilon=1.0,
                    data_norm=1.0,
                    y_bound=(-2.0, 2.0),
                    scale=0.2,
                    schedule=s,
                    random_state=21,
                ),
                _regression,
                kind,
            )
            add(
                f"poisson-{sched}-{kind}",
                lambda s=sched: DPPoissonRegressor(
                    epsilon=1.0, data_norm=1.0, y_bound=12.0, schedule=s, random_state=22
                ),
                _counts,
                kind,
            )
            add(
                f"linear-svc-{sched}-{kind}",
                lambda s=sched: DPLinearSVC(
                    epsilon=1.0, data_norm=1.0, schedule=s, random_state=23
                ),
                _sparse_binary if kind == "csr" else _binary,
                kind,
            )
    add(
        "huber-no-range",
        lambda: DPHuberRegressor(epsilon=1.0, data_norm=1.0, random_state=24),
        _regression,
    )
    add(
        "huber-auto-eps30",
        lambda: DPHuberRegressor(epsilon=30.0, data_norm=1.0, y_bound=2.0, random_state=25),
        _regression,
    )
    add(
        "poisson-add_remove",
        lambda: DPPoissonRegressor(
            epsilon=1.0, data_norm=1.0, y_bound=12.0, neighbouring="add_remove", random_state=26
        ),
        _counts,
    )
    # DPTweedieRegressor: compound Poisson-Gamma (power 1.5), and Gamma with a public floor
    from skdpgd import DPTweedieRegressor

    for kind in ("dense", "csr"):
        for sched in ("auto", "uniform", "output"):
            add(
                f"tweedie-{sched}-{kind}",
                lambda s=sched: DPTweedieRegressor(
                    power=1.5, epsilon=1.0, data_norm=1.0, y_bound=12.0, schedule=s, random_state=28
                ),
                _counts,
                kind,
            )
    add(
        "tweedie-gamma",
        lambda: DPTweedieRegressor(
            power=2, epsilon=1.0, data_norm=1.0, y_bound=(0.5, 12.0), random_state=29
        ),
        _counts,
    )
    add(
        "linear-svc-balanced",
        lambda: DPLinearSVC(epsilon=1.0, data_norm=1.0, class_weight="balanced", random_state=27),
        _binary,
    )
    # three classes: one-vs-rest squared hinge, fitted jointly
    for kind in ("dense", "float32", "csr", "dask"):
        for sched in ("auto", "uniform", "output"):
            add(
                f"linear-svc-ovr-{sched}-{kind}",
                lambda s=sched: DPLinearSVC(
                    epsilon=1.0, data_norm=1.0, schedule=s, random_state=28
                ),
                _multi,
                kind,
            )
    add(
        "linear-svc-ovr-balanced",
        lambda: DPLinearSVC(epsilon=1.0, data_norm=1.0, class_weight="balanced", random_state=29),
        _multi,
    )
    # the Kronecker-factored Newton of the multinomial loss
    for kind in ("dense", "float32", "csr", "dask"):
        add(
            f"logreg-multi-kronecker-{kind}",
            lambda: DPLogisticRegression(
                epsilon=2.0, data_norm=1.0, schedule="kronecker", random_state=31
            ),
            _multi,
            kind,
        )
    add(
        "logreg-multi-kronecker-subsampled-kernel",
        lambda: DPLogisticRegression(
            epsilon=2.0,
            data_norm=1.0,
            schedule=KroneckerNewton(hessian_rate=0.5),
            random_state=32,
        ),
        lambda: _multi(n=12000),
    )
    add(
        "logreg-multi-auto-kronecker",
        lambda: DPLogisticRegression(epsilon=1e6, data_norm=1.0, random_state=33),
        lambda: _multi(n=3000, d=90),
    )
    # large enough for the numba row kernel (more than 50 000 entries)
    add(
        "linear-svc-ovr-kernel",
        lambda: DPLinearSVC(epsilon=1.0, data_norm=1.0, random_state=30),
        lambda: _multi(n=12000),
    )
    # the elastic net: proximal gradient descent (numpy for small problems, numba beyond)
    from skdpgd import DPElasticNet

    for kind in ("dense", "csr"):
        for sched in ("auto", "uniform"):
            add(
                f"elastic-net-{sched}-{kind}",
                lambda s=sched: DPElasticNet(
                    epsilon=3.0, data_norm=1.0, y_bound=2.0, schedule=s, random_state=35
                ),
                _regression,
                kind,
            )
    add(
        "elastic-net-lasso-kernel",
        lambda: DPElasticNet(
            epsilon=3.0,
            alpha=0.01,
            l1_ratio=1.0,
            max_iter=200,
            data_norm=1.0,
            y_bound=2.0,
            random_state=36,
        ),
        lambda: _regression(n=12000, d=8),
    )
    return out


def mlp_cases():
    from skdpgd import DPMLPClassifier, ImportanceMask

    out = []
    for name, kw, data in [
        ("mlp-uniform", {}, _binary),
        ("mlp-hong", {"schedule": "hong"}, _binary),
        ("mlp-exponential", {"schedule": "exponential"}, _binary),
        ("mlp-pur", {"schedule": "pur"}, _binary),
        ("mlp-poisson", {"batch_size": 60}, _binary),
        ("mlp-add_remove", {"neighbouring": "add_remove"}, _binary),
        ("mlp-balanced", {"class_weight": "balanced"}, _binary),
        ("mlp-multi", {}, _multi),
        ("mlp-importance", {"importance": ImportanceMask()}, _binary),
    ]:

        def factory(kw=kw, data=data):
            X, y = data()
            # the defaults before 'auto' (clip_norm=1, learning_rate=0.1), passed explicitly
            params = dict(
                hidden_layer_sizes=(6,),
                epsilon=2.0,
                clip_norm=1.0,
                learning_rate=0.1,
                max_iter=15,
                random_state=20,
            )
            params.update(kw)
            return DPMLPClassifier(**params), X, y

        out.append((name, factory))
    return out


def _frame(n=400, seed=5):
    """A small table with numbers, categories and missing cells."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.uniform(10, 110, n),
            "income": rng.lognormal(10.5, 0.6, n),
            "job": rng.choice(["clerk", "nurse", "pilot", "astronaut", None], n),
        }
    )
    y = ((df["age"] > 50) ^ (df["job"] == "pilot")).astype(int).to_numpy()
    df.loc[::7, "age"] = np.nan
    return df, y


def composite_cases():
    """(name, factory) pairs for the private transformer, pipelines and search."""
    from skdpgd import DPLogisticRegression, DPRidge, PrivateRandomSearchCV
    from skdpgd.pipeline import make_private_pipeline
    from skdpgd.preprocessing import BoundedScaler, DPStandardScaler, schema_transformer

    def _scaled(data):
        """The rows moved into the public range (-2, 3) the scalers are given."""

        def make():
            X, y = data()
            return 2.5 * X + 0.5, y

        return make

    out = []

    def add(name, make, data):
        def factory():
            X, y = data()
            return make(), X, y

        out.append((name, factory))

    # the private scaler (its means and variances are the release)
    add(
        "scaler-replace",
        lambda: DPStandardScaler(epsilon=1.0, bounds=(-2.0, 3.0), random_state=30),
        _scaled(_binary),
    )
    add(
        "scaler-add_remove-count",
        lambda: DPStandardScaler(
            epsilon=0.5, bounds=(-2.0, 3.0), neighbouring="add_remove", random_state=31
        ),
        _scaled(_regression),
    )
    add(
        "scaler-add_remove-nsamples-clip",
        lambda: DPStandardScaler(
            epsilon=2.0,
            bounds=(-2.0, 3.0),
            neighbouring="add_remove",
            n_samples=260,
            clip_std=2.0,
            delta=1e-6,
            random_state=32,
        ),
        _scaled(_regression),
    )
    # private pipelines: the steps' releases and the final fit under one epsilon
    add(
        "pipeline-dpscaler-logreg",
        lambda: make_private_pipeline(
            DPStandardScaler(bounds=(-2.0, 3.0)),
            DPLogisticRegression(classes=[0, 1]),
            epsilon=1.0,
            random_state=33,
        ),
        _scaled(_binary),
    )
    add(
        "pipeline-bounded-ridge",
        lambda: make_private_pipeline(
            BoundedScaler(bounds=(-2.0, 3.0)), DPRidge(y_bound=2.0), epsilon=1.0, random_state=34
        ),
        _scaled(_regression),
    )
    try:
        import pandas  # noqa: F401
    except ImportError:  # pragma: no cover - pandas is in the test extra
        pass
    else:
        add(
            "pipeline-schema-logreg",
            lambda: make_private_pipeline(
                schema_transformer(
                    {"age": (18, 100), "income": (0, 200_000), "job": ["clerk", "nurse", "pilot"]}
                ),
                DPLogisticRegression(classes=[0, 1]),
                epsilon=1.0,
                random_state=35,
            ),
            _frame,
        )
    # the private search: the selection, the winner's fit and the spent epsilon
    add(
        "search-logreg",
        lambda: PrivateRandomSearchCV(
            DPLogisticRegression(data_norm=1.0, classes=[0, 1]),
            {"schedule": ["auto", "uniform"], "alpha": ["auto", 1e-3]},
            epsilon=1.0,
            delta=1e-5,
            n_iter=3,
            random_state=36,
        ),
        _binary,
    )
    add(
        "search-pipeline",
        lambda: PrivateRandomSearchCV(
            make_private_pipeline(
                BoundedScaler(bounds=(-2.0, 3.0)), DPLogisticRegression(classes=[0, 1]), epsilon=1.0
            ),
            {"dplogisticregression__schedule": ["auto", "uniform", "newton"]},
            epsilon=1.0,
            n_iter=2,
            random_state=37,
        ),
        _scaled(_binary),
    )
    return out


def _plain(value):
    """A parameter value as JSON keeps it."""
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    return value


def _record_composite(est):
    from skdpgd import PrivateRandomSearchCV
    from skdpgd.pipeline import PrivatePipeline

    rec = {"epsilon_": float(est.epsilon_)}
    if isinstance(est, PrivateRandomSearchCV):
        rec["best_params_"] = {k: _plain(v) for k, v in sorted(est.best_params_.items())}
        rec["best_score_"] = float(est.best_score_)
        rec["trial_epsilon_"] = float(est.trial_epsilon_)
        rec["final"] = (
            _record_composite(est.best_estimator_)
            if isinstance(est.best_estimator_, PrivatePipeline)
            else record(est.best_estimator_)
        )
    elif isinstance(est, PrivatePipeline):
        rec["step_epsilons_"] = {k: float(v) for k, v in sorted(est.step_epsilons_.items())}
        rec["data_norm_"] = None if est.data_norm_ is None else float(est.data_norm_)
        for name, step in est.steps[:-1]:
            if hasattr(step, "mean_"):
                rec[name] = _record_composite(step)
        rec["final"] = record(est.steps[-1][1])
    else:  # the private scaler
        rec["n_samples_"] = float(est.n_samples_)
        for key in ("mean_", "scale_", "var_"):
            rec[key] = np.asarray(getattr(est, key), dtype=float).tolist()
    return rec


def record(est):
    """The values a refactor must keep."""
    if not hasattr(est, "n_iter_"):
        return _record_composite(est)
    rec = {"epsilon_": float(est.epsilon_), "n_iter_": int(est.n_iter_)}
    if hasattr(est, "coefs_"):
        rec["weights"] = [
            np.asarray(w, dtype=float).ravel().tolist()
            for w in list(est.coefs_) + list(est.intercepts_)
        ]
    else:
        rec["coef_"] = np.asarray(est.coef_, dtype=float).ravel().tolist()
        rec["intercept_"] = np.atleast_1d(np.asarray(est.intercept_, dtype=float)).tolist()
    return rec


def fit_case(factory):
    est, X, y = factory()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return record(est)


def all_cases(with_mlp):
    return cases() + composite_cases() + (mlp_cases() if with_mlp else [])


def main(argv):
    if "--add" in argv:  # fit the cases the master lacks; keep every stored one as it is
        master = json.loads(PATH.read_text())
        new = {name: fit_case(factory) for name, factory in cases() if name not in master}
        master.update(new)
        PATH.write_text(json.dumps(master, indent=0, sort_keys=True) + "\n")
        print(f"added {len(new)} cases to {PATH}")
        return 0
    if "--replace" in argv:  # refit the named cases; keep every other stored one as it is
        names = set(argv[argv.index("--replace") + 1].split(","))
        master = json.loads(PATH.read_text())
        known = {name: factory for name, factory in cases() + composite_cases()}
        unknown = sorted(names - set(known))
        if unknown:
            print(f"unknown cases: {', '.join(unknown)}")
            return 1
        for name in sorted(names):
            master[name] = fit_case(known[name])
        PATH.write_text(json.dumps(master, indent=0, sort_keys=True) + "\n")
        print(f"replaced {len(names)} cases in {PATH}")
        return 0
    if "--write" not in argv:
        print(__doc__)
        return 1
    try:
        import torch  # noqa: F401

        with_mlp = True
    except ImportError:  # pragma: no cover - the master is written with torch
        with_mlp = False
    master = {name: fit_case(factory) for name, factory in all_cases(with_mlp)}
    PATH.parent.mkdir(exist_ok=True)
    PATH.write_text(json.dumps(master, indent=0, sort_keys=True) + "\n")
    print(f"wrote {len(master)} cases to {PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

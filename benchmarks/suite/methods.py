"""Named method factories for the suite.

A method is a factory ``f(ctx) -> estimator or None`` (None: not applicable to this task)
plus a few flags. The runner fits ``f(ctx)`` on the training rows of a prepared split and
scores it on the test rows (accuracy or R^2). ``ctx`` is a :class:`Context`; a private method
is called once per epsilon, a non-private one once per split (its rows have ``epsilon = nan``).

Built-in methods
----------------
skdpgd (only the budget and the public bounds are given, everything else is a default):
    ``DPLogisticRegression(epsilon, data_norm=1, random_state=seed)``,
    ``DPSGDClassifier(epsilon, data_norm=1, random_state=seed)``,
    ``DPRidge(epsilon, data_norm=1, y_bound=1, random_state=seed)``,
    ``DPSGDRegressor(epsilon, data_norm=1, y_bound=1, random_state=seed)``.
naive DP-GD (peer; "tuned after the fact" by the report, which keeps per set and epsilon the
    grid point with the best median *test* score, something a private user cannot do):
    ``DPLogisticRegression`` / ``DPRidge`` with ``schedule='uniform'`` (constant noise
    multiplier), ``row_clip='data_norm'``, ``alpha=a``, ``max_iter=T`` for (T, a) in
    :data:`NAIVE_GRID`; named ``naive[T=...,a=...]``.
diffprivlib (peer; run in its own venv, see ``_diffprivlib_worker.py``):
    ``LogisticRegression(epsilon, data_norm=1)`` and
    ``LinearRegression(epsilon, bounds_X=feature_bounds, bounds_y=(-1, 1))``.
sklearn (non-private counterpart): ``LogisticRegression()`` (C=1, i.e. alpha = 1/N in our
    objective); ``Ridge(alpha=1.0)`` (i.e. alpha = 1/N in our per-example objective,
    ``alpha_sklearn = N * alpha_ours``).
sklearn_sgd (non-private): ``SGDClassifier(loss='log_loss')`` / ``SGDRegressor()``.
majority (floor): ``DummyClassifier('most_frequent')`` / ``DummyRegressor('mean')``.

Extra methods
-------------
``module:callable`` on the command line imports ``callable`` and uses it as a factory. It may
carry attributes ``private`` (default True) and ``suite_name`` (default ``module:callable``).
Example (a candidate default, without editing the suite)::

    # mycandidates.py
    from skdpgd import DPLogisticRegression
    def lr_kappa50(ctx):
        if ctx.task != "classification":
            return None
        return DPLogisticRegression(epsilon=ctx.epsilon, data_norm=ctx.data_norm,
                                    alpha=..., random_state=ctx.seed)

    python -m benchmarks.suite.run --methods skdpgd,mycandidates:lr_kappa50 ...
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field

CLASSIFICATION, REGRESSION = "classification", "regression"

# (T, alpha) grid of the naive uniform DP-GD peer. DESIGN.md's "figures to beat" used
# (100, 1e-3), (1000, 1e-4), (3000, 1e-5); the suite stops at T = 1000 because T = 3000 costs
# ~40 s per fit on mnist5k (784 features x 10 classes) and the grid runs at every epsilon.
# ``--naive-grid 100:1e-3,1000:1e-4,3000:1e-5`` restores it.
NAIVE_GRID = ((100, 1e-3), (300, 1e-4), (1000, 1e-5))


@dataclass
class Context:
    """What a factory may use: the task, public sizes, the budget, the seed, public bounds."""

    task: str
    dataset: str
    protocol: str
    seed: int
    epsilon: float  # nan for non-private methods
    n_train: int
    n_features: int
    n_classes: int | None
    data_norm: float = 1.0
    y_bound: float | None = None
    feature_bounds: object = None  # (d, 2) array of public per-feature bounds


@dataclass
class Method:
    name: str
    factory: object
    private: bool = True
    kind: str = "extra"  # 'skdpgd', 'naive', 'peer', 'nonprivate', 'floor', 'extra'
    external: bool = False  # run outside this process (diffprivlib)
    tasks: tuple = (CLASSIFICATION, REGRESSION)
    params: dict = field(default_factory=dict)


# ------------------------------------------------------------------------------------------
# factories
# ------------------------------------------------------------------------------------------


def _dp_logistic(ctx):
    from skdpgd import DPLogisticRegression

    return DPLogisticRegression(epsilon=ctx.epsilon, data_norm=ctx.data_norm, random_state=ctx.seed)


def _dp_sgd_classifier(ctx):
    from skdpgd import DPSGDClassifier

    return DPSGDClassifier(epsilon=ctx.epsilon, data_norm=ctx.data_norm, random_state=ctx.seed)


def _dp_ridge(ctx):
    from skdpgd import DPRidge

    return DPRidge(
        epsilon=ctx.epsilon, data_norm=ctx.data_norm, y_bound=ctx.y_bound, random_state=ctx.seed
    )


def _dp_sgd_regressor(ctx):
    from skdpgd import DPSGDRegressor

    return DPSGDRegressor(
        epsilon=ctx.epsilon, data_norm=ctx.data_norm, y_bound=ctx.y_bound, random_state=ctx.seed
    )


class UnderPolicy:
    """``est`` fitted with the policy changes ``changes`` active (:func:`skdpgd.policy.using`);
    every other attribute (predict, score, the fitted attributes) is ``est``'s. For studies of
    the policy's constants: the suite fits what a factory returns, so the changes must travel
    with the estimator."""

    def __init__(self, est, changes):
        self.est, self.changes = est, dict(changes)

    def fit(self, X, y, **kwargs):
        from skdpgd import policy

        with policy.using(**self.changes):
            self.est.fit(X, y, **kwargs)
        return self

    def __getattr__(self, name):
        if name in ("est", "changes"):
            raise AttributeError(name)
        return getattr(self.est, name)


def naive_factory(T, alpha):
    """Uniform DP-GD with a fixed (T, alpha): one point of the after-the-fact-tuned peer."""

    def f(ctx):
        common = dict(
            epsilon=ctx.epsilon,
            data_norm=ctx.data_norm,
            schedule="uniform",
            row_clip="data_norm",
            alpha=alpha,
            max_iter=int(T),
            random_state=ctx.seed,
        )
        if ctx.task == CLASSIFICATION:
            from skdpgd import DPLogisticRegression

            return DPLogisticRegression(**common)
        from skdpgd import DPRidge

        return DPRidge(y_bound=ctx.y_bound, **common)

    return f


def naive_name(T, alpha):
    return f"naive[T={int(T)},a={alpha:g}]"


def _sklearn(ctx):
    if ctx.task == CLASSIFICATION:
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(max_iter=5000)  # C=1; more iterations only to converge
    from sklearn.linear_model import Ridge

    return Ridge(alpha=1.0)


def _sklearn_sgd(ctx):
    if ctx.task == CLASSIFICATION:
        from sklearn.linear_model import SGDClassifier

        return SGDClassifier(loss="log_loss", random_state=ctx.seed)
    from sklearn.linear_model import SGDRegressor

    return SGDRegressor(random_state=ctx.seed)


def _sgd_objective(ctx):
    """The exact minimiser of ``SGDClassifier()`` / ``SGDRegressor()``'s objective (log-loss or
    squared error plus ``alpha/2 ||w||^2`` with sklearn's alpha = 1e-4, intercept free): what
    their SGD converges to when run long enough. scikit-learn's own default stops early
    (tol=1e-3 with 5 epochs of patience), so its score is one point of a run that has not
    converged; DP-SGD's consistency at a huge epsilon is measured against both."""
    alpha = 1e-4
    if ctx.task == CLASSIFICATION:
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=1.0 / (alpha * ctx.n_train), max_iter=10000, tol=1e-8)
    from sklearn.linear_model import Ridge

    return Ridge(alpha=alpha * ctx.n_train)


def _majority(ctx):
    if ctx.task == CLASSIFICATION:
        from sklearn.dummy import DummyClassifier

        return DummyClassifier(strategy="most_frequent")
    from sklearn.dummy import DummyRegressor

    return DummyRegressor(strategy="mean")


def _external(ctx):  # placeholder: the runner sends these to a subprocess
    raise RuntimeError("external methods are run by the runner's subprocess")


SKDPGD = {
    CLASSIFICATION: ("DPLogisticRegression", "DPSGDClassifier"),
    REGRESSION: ("DPRidge", "DPSGDRegressor"),
}


def builtin_methods(naive_grid=NAIVE_GRID):
    ms = [
        Method("DPLogisticRegression", _dp_logistic, kind="skdpgd", tasks=(CLASSIFICATION,)),
        Method("DPSGDClassifier", _dp_sgd_classifier, kind="skdpgd", tasks=(CLASSIFICATION,)),
        Method("DPRidge", _dp_ridge, kind="skdpgd", tasks=(REGRESSION,)),
        Method("DPSGDRegressor", _dp_sgd_regressor, kind="skdpgd", tasks=(REGRESSION,)),
    ]
    ms += [
        Method(
            naive_name(T, a),
            naive_factory(T, a),
            kind="naive",
            params={"T": int(T), "alpha": float(a)},
        )
        for T, a in naive_grid
    ]
    ms += [
        Method("diffprivlib", _external, kind="peer", external=True),
        Method("sklearn", _sklearn, private=False, kind="nonprivate"),
        Method("sklearn_sgd", _sklearn_sgd, private=False, kind="nonprivate"),
        Method("sgd_objective", _sgd_objective, private=False, kind="nonprivate"),
        Method("majority", _majority, private=False, kind="floor"),
    ]
    return {m.name: m for m in ms}


GROUPS = {
    "skdpgd": ["DPLogisticRegression", "DPSGDClassifier", "DPRidge", "DPSGDRegressor"],
    "naive": None,  # the naive grid
    "peers": ["diffprivlib", "sklearn", "sklearn_sgd", "majority"],
    "cheap": ["sklearn", "sklearn_sgd", "majority"],
}


def parse_grid(text):
    """'100:1e-3,1000:1e-4' -> ((100, 1e-3), (1000, 1e-4))."""
    out = []
    for part in text.split(","):
        T, a = part.split(":")
        out.append((int(T), float(a)))
    return tuple(out)


def resolve(spec, task, naive_grid=NAIVE_GRID):
    """Methods named by a comma-separated spec ('all', group names, method names,
    'module:callable'), restricted to those that apply to ``task``; in spec order."""
    builtins = builtin_methods(naive_grid)
    names = []
    for item in [s.strip() for s in spec.split(",") if s.strip()]:
        if item == "all":
            names += list(builtins)
        elif item == "naive":
            names += [naive_name(T, a) for T, a in naive_grid]
        elif item in GROUPS:
            names += GROUPS[item]
        elif item in builtins:
            names.append(item)
        elif ":" in item:
            names.append(item)
        else:
            raise ValueError(
                f"unknown method {item!r}; known: {sorted(builtins)}, groups "
                f"{sorted(GROUPS)}, or module:callable"
            )
    out, seen = [], set()
    for n in names:
        if n in seen:
            continue
        seen.add(n)
        m = builtins.get(n) or load_extra(n)
        if task in m.tasks:
            out.append(m)
    return out


def load_extra(spec):
    """A ``module:callable`` factory as a :class:`Method` (kind 'extra')."""
    mod, _, attr = spec.partition(":")
    f = importlib.import_module(mod)
    for part in attr.split("."):
        f = getattr(f, part)
    if not callable(f):
        raise TypeError(f"{spec} is not callable")
    return Method(
        getattr(f, "suite_name", spec), f, private=bool(getattr(f, "private", True)), kind="extra"
    )


def is_nan(x):
    return isinstance(x, float) and math.isnan(x)

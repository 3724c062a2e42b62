"""Study: the defaults of DPHuberRegressor, DPPoissonRegressor, DPLinearSVC and
DPTweedieRegressor on the halves.

What is measured
----------------
Method factories (``module:callable`` for ``run.py``) for the three estimators with their
defaults (``schedule='auto'``, only ``epsilon``, ``data_norm`` and the public bounds given),
with a fixed mechanism (``schedule='uniform'`` / ``'output'``), with candidate values of the
two 'auto' constants that were set without the design half, and their scikit-learn
counterparts; then ``python -m benchmarks.suite.studies.glm_defaults design|report CSV`` prints the
candidate and miss tables of a results file.

* DPHuberRegressor: the suite's regression targets (in [-1, 1] under both protocols) with
  ``y_bound=1`` and ``scale=HUBER_SCALE``, scored by R^2, as ``benchmarks/bench_glm_targets.py``.
* DPPoissonRegressor: every suite regression set has non-negative raw targets. The factory
  re-derives the split's rows (``protocols.split_indices``, the same seed) and fits the raw
  targets in a unit ``POISSON_BOUND / hi`` with ``y_bound=POISSON_BOUND``: ``hi`` is the
  public range's upper end under protocol (b) and the training maximum under protocol (a)
  (that protocol reads the target scale without privacy). Scored by D^2 on the test rows'
  raw targets in the same unit (D^2 does not change with the unit).
* DPLinearSVC: the classification sets (``classes`` public), accuracy.
* DPTweedieRegressor (``gamma``: power 2, ``tweedie``: power 1.5): the Poisson rows and
  targets in the same unit, with Poisson's 'auto' rules (same alpha, clip norm and schedule
  rules). Gamma needs a public floor above 0: ``y_bound=(GAMMA_FLOOR, POISSON_BOUND)``, and
  its test targets are scored clipped to the floor too (D^2 of power 2 needs ``y > 0``; every
  suite regression set has positive targets, so the clip rarely acts). Scored by D^2 of their
  own power. No candidate constants: they were added after the design run, to report the
  defaults on the report half (``methods report``).
* Counterparts at epsilon >= 1e5 only (``*_sklearn``): the default fitted first for its
  ``alpha_``, then ``HuberRegressor(alpha=alpha_ N / scale)``, ``PoissonRegressor(alpha=alpha_)``,
  ``TweedieRegressor(power=p, link='log', alpha=alpha_)``, ``LinearSVC(C=1 / (N alpha_))``
  (one-vs-rest) on the same rows.
* Candidates (``*_snr1e2`` ...: ``AUTO_NEAR_EXACT_OUTPUT_MIN_SNR``; ``*_share03`` ...:
  ``AUTO_REGRESSION_START_SHARE``, Huber and Poisson only) run below epsilon 1e5 only: at
  1e6 every candidate threshold picks output perturbation as the default does.

Floors: R^2 = 0 and D^2 = 0 (the training mean's score is about 0), the majority class (the
suite's ``majority`` method). Self-oracle: the best of ``*_uniform`` and ``*_output``.

Rule for the constants (fixed before the design run): a candidate replaces today's value only
if, over the design cells it can change (epsilon < 1e5), it has strictly fewer misses (floor
or more than 0.02 below the best fixed mechanism) summed over the estimators it affects AND
a mean median-score gain of at least +0.01 over those cells AND no cell more than 0.05 below
today's value. Otherwise today's value is kept.

Run (design, then report with the chosen values)::

    python -m benchmarks.suite.run --task regression,classification --half design \\
        --protocol a,b --eps 0.3,1,3,10,1e6 --seeds 3 --workers 2 \\
        --out benchmarks/out/suite/glm_design.csv --methods majority,$(python -m \\
        benchmarks.suite.studies.glm_defaults methods design)
    python -m benchmarks.suite.studies.glm_defaults design benchmarks/out/suite/glm_design.csv
"""

from __future__ import annotations

import functools
import sys

import numpy as np

from ..methods import UnderPolicy

HUBER_SCALE = 0.1
POISSON_BOUND = 20.0
NEAR_EXACT_SNR = (1e2, 1e3, 1e4)  # today: 1e5
START_SHARE = (0.03, 0.3)  # today: 0.1
BIG_EPS = 1e5
MARGIN = 0.02
FLOOR_MARGIN = 0.005

GAMMA_FLOOR = 0.1  # public floor of the Gamma targets in the unit (0.5% of POISSON_BOUND)

ESTIMATORS = ("huber", "poisson", "svc", "gamma", "tweedie")
TASK = {
    "huber": "regression",
    "poisson": "regression",
    "svc": "classification",
    "gamma": "regression",
    "tweedie": "regression",
}
#: the log-link estimators (fitted on the raw targets in the unit) and their Tweedie power
POWER = {"poisson": 1, "tweedie": 1.5, "gamma": 2}
#: the estimators of the design run's candidate constants
DESIGNED = ("huber", "poisson", "svc")


# ------------------------------------------------------------------------------------------
# Poisson targets: the split's raw (non-negative) targets in a public unit
# ------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _raw(name):
    from ..datasets import load

    return load(name)


def _counts(ctx, floor=0.0):
    """The split's raw targets in the unit: training ones within ``[floor, POISSON_BOUND]``,
    test ones at least ``floor``."""
    from ..protocols import split_indices

    raw = _raw(ctx.dataset)
    tr, te, _ = split_indices(raw, ctx.seed)
    y_tr, y_te = np.asarray(raw.y[tr], float), np.asarray(raw.y[te], float)
    if np.any(y_tr < 0) or np.any(y_te < 0):
        raise ValueError(f"{ctx.dataset}: negative targets, not a Poisson set")
    hi = float(raw.y_range[1]) if ctx.protocol == "b" else float(y_tr.max())
    unit = POISSON_BOUND / hi
    return np.clip(y_tr * unit, floor, POISSON_BOUND), np.maximum(y_te * unit, floor)


class OnCounts:
    """``est`` fitted and scored on the split's raw targets in the public unit (the suite's
    transformed targets are ignored; the rows must be the same split's)."""

    def __init__(self, est, y_train, y_test):
        self.est, self.y_train, self.y_test = est, y_train, y_test

    def fit(self, X, y=None):
        if X.shape[0] != self.y_train.shape[0]:
            raise ValueError("rows do not match the split's targets")
        self.est.fit(X, self.y_train)
        return self

    def score(self, X, y=None):
        if X.shape[0] != self.y_test.shape[0]:
            raise ValueError("rows do not match the split's test targets")
        return self.est.score(X, self.y_test)

    def __getattr__(self, name):
        if name in ("est", "y_train", "y_test"):
            raise AttributeError(name)
        return getattr(self.est, name)


class Counterpart:
    """The default private fit (for its ``alpha_``), then the scikit-learn model with the same
    penalty on the same rows; scores are the scikit-learn model's."""

    def __init__(self, kind, private):
        self.kind, self.private = kind, private

    def fit(self, X, y):
        from sklearn.linear_model import HuberRegressor, PoissonRegressor, TweedieRegressor
        from sklearn.svm import LinearSVC

        self.private.fit(X, y)
        a, n = float(np.max(self.private.alpha_)), X.shape[0]
        if self.kind == "huber":
            self.sk_ = HuberRegressor(alpha=a * n / HUBER_SCALE, max_iter=2000)
        elif self.kind == "poisson":
            self.sk_ = PoissonRegressor(alpha=a, max_iter=2000)
        elif self.kind in POWER:
            self.sk_ = TweedieRegressor(power=POWER[self.kind], link="log", alpha=a, max_iter=2000)
        else:
            self.sk_ = LinearSVC(C=1.0 / (n * a), max_iter=20000)
        self.sk_.fit(X, y)
        self.alpha_ = a
        return self

    def score(self, X, y):
        return self.sk_.score(X, y)


# ------------------------------------------------------------------------------------------
# factories
# ------------------------------------------------------------------------------------------


def _estimator(kind, ctx, **params):
    common = dict(epsilon=ctx.epsilon, data_norm=ctx.data_norm, random_state=ctx.seed, **params)
    if kind == "huber":
        from skdpgd import DPHuberRegressor

        return DPHuberRegressor(y_bound=ctx.y_bound, scale=HUBER_SCALE, **common)
    if kind == "poisson":
        from skdpgd import DPPoissonRegressor

        return DPPoissonRegressor(y_bound=POISSON_BOUND, **common)
    if kind in POWER:
        from skdpgd import DPTweedieRegressor

        y_bound = (GAMMA_FLOOR, POISSON_BOUND) if kind == "gamma" else POISSON_BOUND
        return DPTweedieRegressor(power=POWER[kind], y_bound=y_bound, **common)
    from skdpgd import DPLinearSVC

    return DPLinearSVC(**common)


def _factory(kind, name, params=None, changes=None, only_big=False, below_big=False, sk=False):
    params, changes = dict(params or {}), dict(changes or {})

    def factory(ctx):
        if ctx.task != TASK[kind]:
            return None
        if (only_big and ctx.epsilon < BIG_EPS) or (below_big and ctx.epsilon >= BIG_EPS):
            return None
        est = _estimator(kind, ctx, **params)
        if changes:
            est = UnderPolicy(est, changes)
        if sk:
            est = Counterpart(kind, est)
        if kind in POWER:
            est = OnCounts(est, *_counts(ctx, GAMMA_FLOOR if kind == "gamma" else 0.0))
        return est

    factory.suite_name = name
    return factory


def _tag(v):
    return f"{v:.0e}".replace("+0", "").replace("+", "") if v >= 100 else f"{v:g}".replace(".", "")


#: method name -> factory, and the candidates' (constant, value)
FACTORIES, CANDIDATES = {}, {}
for _k in ESTIMATORS:
    FACTORIES[f"{_k}_default"] = _factory(_k, f"{_k}_default")
    FACTORIES[f"{_k}_uniform"] = _factory(_k, f"{_k}_uniform", {"schedule": "uniform"})
    FACTORIES[f"{_k}_output"] = _factory(_k, f"{_k}_output", {"schedule": "output"})
    FACTORIES[f"{_k}_sklearn"] = _factory(_k, f"{_k}_sklearn", only_big=True, sk=True)
    # the default without its accounted choice between the fit and the intercept-only model
    _off = {"AUTO_SELECT": None} if _k == "svc" else {"AUTO_REGRESSION_SELECT": None}
    FACTORIES[f"{_k}_noselect"] = _factory(_k, f"{_k}_noselect", changes=_off, below_big=True)
    if _k not in DESIGNED:
        continue
    for _v in NEAR_EXACT_SNR:
        _n = f"{_k}_snr{_tag(_v)}"
        FACTORIES[_n] = _factory(
            _k, _n, changes={"AUTO_NEAR_EXACT_OUTPUT_MIN_SNR": _v}, below_big=True
        )
        CANDIDATES[_n] = ("AUTO_NEAR_EXACT_OUTPUT_MIN_SNR", _v)
    if _k != "svc":
        for _v in START_SHARE:
            _n = f"{_k}_share{_tag(_v)}"
            FACTORIES[_n] = _factory(
                _k, _n, changes={"AUTO_REGRESSION_START_SHARE": _v}, below_big=True
            )
            CANDIDATES[_n] = ("AUTO_REGRESSION_START_SHARE", _v)
globals().update(FACTORIES)


def method_spec(which="design"):
    """The ``--methods`` list: all factories ('design') or without the candidates ('report')."""
    names = [n for n in FACTORIES if which == "design" or n not in CANDIDATES]
    return ",".join(f"benchmarks.suite.studies.glm_defaults:{n}" for n in names)


# ------------------------------------------------------------------------------------------
# tables
# ------------------------------------------------------------------------------------------


def _medians(path):
    import pandas as pd

    df = pd.read_csv(path)
    bad = df[~(df.error.isna() | (df.error == ""))]
    if len(bad):
        print(f"{len(bad)} failed fits:", bad.groupby("method").error.first().to_dict())
    df = df[df.error.isna() | (df.error == "")]
    med = df.groupby(["dataset", "protocol", "epsilon", "method"]).score.median()
    floor = df[df.method == "majority"].groupby(["dataset", "protocol"]).score.median()
    return med, floor


def cells(path, kind, method=None, eps_min=0.3):
    """Per (set, protocol, epsilon) of estimator ``kind``: ``method``'s median score (default:
    the default's), the best fixed mechanism's, the floor, the misses, and at epsilon >= 1e5
    the scikit-learn counterpart's median."""
    import pandas as pd

    med, floor = _medians(path)
    method = method or f"{kind}_default"
    rows = []
    for (ds, prot, eps), g in med.groupby(level=[0, 1, 2]):
        s = g.droplevel([0, 1, 2]).to_dict()
        if method not in s or eps < eps_min:
            continue
        fixed = {m: s[m] for m in (f"{kind}_uniform", f"{kind}_output") if m in s}
        best = max(fixed.values()) if fixed else np.nan
        base = 0.0 if TASK[kind] == "regression" else float(floor.get((ds, prot), np.nan))
        rows.append(
            dict(
                dataset=ds,
                protocol=prot,
                epsilon=eps,
                score=s[method],
                best_fixed=best,
                best_name=max(fixed, key=fixed.get).split("_")[-1] if fixed else "",
                floor=base,
                below_floor=s[method] < base - FLOOR_MARGIN,
                below_oracle=s[method] < best - MARGIN,
                sklearn=s.get(f"{kind}_sklearn", np.nan),
            )
        )
    return pd.DataFrame(rows)


def _print(df, cols=None):
    import pandas as pd

    with pd.option_context("display.width", 200, "display.max_rows", 1000):
        print((df[cols] if cols else df).round(4).to_string(index=False))


def misses(path, label):
    """The report the rule for defaults asks for, per estimator; returns the counts."""
    out = {}
    for kind in ESTIMATORS:
        t = cells(path, kind)
        if t.empty:
            continue
        priv = t[t.epsilon < BIG_EPS]
        big = t[t.epsilon >= BIG_EPS].copy()
        big["gap_sklearn"] = big.score - big.sklearn
        nf, no = int(t.below_floor.sum()), int(t.below_oracle.sum())
        print(
            f"\n== {kind} ({label}): {len(t)} cells, {nf} below the floor, {no} more than "
            f"{MARGIN} below the best fixed mechanism; {len(priv)} cells at eps < 1e5"
        )
        cols = ["dataset", "protocol", "epsilon", "score", "best_fixed", "best_name", "floor"]
        if nf:
            print("-- below the floor:")
            _print(t[t.below_floor], cols)
        if no:
            print("-- more than 0.02 below the best fixed mechanism:")
            _print(t[t.below_oracle], cols)
        print("-- eps = 1e6, default against the scikit-learn counterpart:")
        _print(big, ["dataset", "protocol", "score", "sklearn", "gap_sklearn"])
        out[kind] = dict(
            cells=len(t),
            below_floor=nf,
            below_oracle=no,
            max_abs_gap_sklearn=float(big.gap_sklearn.abs().max()) if len(big) else np.nan,
        )
    return out


def candidates(path):
    """Per candidate: over the cells it can change (eps < 1e5), its misses against today's,
    the mean score difference and the worst cell; and whether the rule above adopts it."""
    med, _ = _medians(path)
    by_const = {}
    for name, (const, value) in CANDIDATES.items():
        by_const.setdefault((const, value), []).append(name)
    rows = []
    for (const, value), names in sorted(by_const.items()):
        m_def = m_cand = 0
        diffs, per = [], []
        for name in names:
            kind = name.split("_")[0]
            t_def = cells(path, kind)
            t_can = cells(path, kind, method=name)
            if t_can.empty:
                continue
            t_def = t_def[t_def.epsilon < BIG_EPS].reset_index(drop=True)
            t_can = t_can[t_can.epsilon < BIG_EPS].reset_index(drop=True)
            j = t_def.merge(t_can, on=["dataset", "protocol", "epsilon"], suffixes=("", "_c"))
            d = j.score_c - j.score
            diffs.append(d.to_numpy())
            m_def += int((j.below_floor | j.below_oracle).sum())
            m_cand += int((j.below_floor_c | j.below_oracle_c).sum())
            per.append(
                f"{kind}: misses {int((j.below_floor | j.below_oracle).sum())}->"
                f"{int((j.below_floor_c | j.below_oracle_c).sum())}, mean {d.mean():+.4f}, "
                f"min {d.min():+.4f} ({j.dataset[d.idxmin()]} {j.protocol[d.idxmin()]} "
                f"eps={j.epsilon[d.idxmin()]:g})"
            )
        d = np.concatenate(diffs) if diffs else np.array([np.nan])
        adopt = m_cand < m_def and d.mean() >= 0.01 and d.min() >= -0.05
        rows.append((const, value, m_def, m_cand, d.mean(), d.min(), adopt))
        print(
            f"{const} = {value:g}: misses {m_def} (today) -> {m_cand}, mean diff "
            f"{d.mean():+.4f}, worst {d.min():+.4f}, {len(d)} cells: "
            f"{'ADOPT' if adopt else 'keep today'}"
        )
        for line in per:
            print(f"    {line}")
    return rows


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "methods":
        print(method_spec(argv[1] if len(argv) > 1 else "design"))
        return 0
    if len(argv) != 2 or argv[0] not in ("design", "report"):
        print(
            "usage: python -m benchmarks.suite.studies.glm_defaults methods [design|report]\n"
            "       python -m benchmarks.suite.studies.glm_defaults design|report RESULTS.csv"
        )
        return 2
    which, path = argv
    counts = misses(path, which)
    if which == "design":
        print("\n== candidates (design half, eps < 1e5)")
        candidates(path)
    print(
        "\n== counts:",
        {k: (v["below_floor"], v["below_oracle"], v["cells"]) for k, v in counts.items()},
        "(below floor, below best fixed - 0.02, cells)",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

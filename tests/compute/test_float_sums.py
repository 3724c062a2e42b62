"""Floating point is part of the proof: every released sum, computed in float64 on any
backend, stays within its sensitivity raised by the rounding margin the fit charges.

* Adversarial neighbouring pairs on each backend (numpy's small-problem path, the dense and
  CSR kernels, dask): many rows, huge rows (clipped to the bound) mixed with tiny ones, the
  differing row placed first or last. Their exact difference is the idealised sensitivity;
  the computed sums (the backends' reductions, before any noise) differ by more than it (a
  nonzero excess, measured exactly with rationals: a margin of 0 would fail), never by more
  than the margin.
* The margin is applied: each full-batch release's sensitivity is the idealised one times
  ``1 + margin`` (rounded up), and the noise the mechanisms draw has the standard deviation
  recorded in ``releases_`` (multiplier x sensitivity).
* Integer counts are exact; output perturbation's certificate bounds the rounding of its
  computed gradient (an exact rational reference), and its tolerance grows where the
  worst-case rounding would reach it (large N).
"""

import dataclasses
import math
import types
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from skdpgd import DPLogisticRegression, DPRidge
from skdpgd._compute import kernels, small_problems
from skdpgd._compute.backends import CSRRows, DenseRows
from skdpgd._full_batch import mechanisms, second_order
from skdpgd._full_batch.mechanisms import (
    InterceptOnly,
    OutputPerturbationMechanism,
    rounding_margin,
)
from skdpgd.accounting import sum_rounding_margin, with_margin

IGNORE_LEAK_WARNINGS = pytest.mark.filterwarnings("ignore::skdpgd.PrivacyLeakWarning")

D = 4
#: rows of each backend's adversarial data: numpy's path needs n d <= 50,000 entries
N_ROWS = {"small": 12_000, "dense": 100_000, "csr": 100_000, "dask": 100_000}
BACKENDS = list(N_ROWS)
#: configurations of each pair: (seed, the differing row first or last)
CONFIGS = [(seed, where) for seed in range(3) for where in ("first", "last")]
#: more of them where the rounding's sign is measured (each pair's excess is a few ulps of the
#: partial sums, of either sign)
MANY_CONFIGS = [(seed, where) for seed in range(8) for where in ("first", "last")]
#: huge rows (clipped to norm 1), a few far past the pre-scaling threshold 2^300, tiny rows
HUGE, HUGER, TINY = 1e80, 1e200, 1e-12


def _rows(kind, X, y, w, fit_intercept=False):
    """The backend's rows, clipped to norm 1 (no intercept column), as a fit clips them."""
    if kind == "dask":
        da = pytest.importorskip("dask.array")
        from skdpgd._compute.dask_backend import DaskRows

        # chunks of 25,000 x 4 entries: each reduced by the kernels, summed by dask's tree
        rows = DaskRows(da.from_array(X, chunks=(25_000, X.shape[1])), y, w, fit_intercept)
    elif kind == "csr":
        rows = CSRRows(sp.csr_matrix(X), y, w, fit_intercept)
    else:
        rows = DenseRows(X, y, w, fit_intercept)
        assert rows.small == (kind == "small")
    rows.clip_rows(1.0, 1.0)
    return rows


def _sq_dist(a, b):
    """``||a - b||^2``, exactly (rationals)."""
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    return sum((Fraction(float(x)) - Fraction(float(y))) ** 2 for x, y in zip(a, b))


def _excess(a, b, delta):
    """``||a - b|| / delta - 1`` (from the exact squared distance)."""
    return math.sqrt(float(_sq_dist(a, b) / Fraction(delta) ** 2)) - 1.0


def _within(a, b, bound):
    """``||a - b|| <= bound``, decided exactly."""
    return _sq_dist(a, b) <= Fraction(float(bound)) ** 2


def _base(n, seed, at):
    """Rows aligned with one direction (the partial sums grow to n times a term), half of
    them huge (clipped to the bound 1), half tiny (absorbed by the large partial sums), with
    weights in [0.5, 1] (real-valued sums); row ``at`` gets weight 1."""
    rng = np.random.default_rng(seed)
    u = np.ones(D) / math.sqrt(D)
    X = u + 1e-3 * rng.normal(size=(n, D))
    p = rng.random(n)
    X *= np.where(p < 0.01, HUGER, np.where(p < 0.5, HUGE, TINY))[:, None]
    w = rng.uniform(0.5, 1.0, size=n)
    w[at] = 1.0
    return rng, X, w


def _at(n, where):
    return 0 if where == "first" else n - 1


def _pair_gradient(n, seed, where):
    """The squared loss at theta = 0 with targets far past the clip: every huge row's term has
    norm C = 1. The differing row (norm past the bound, a random direction) has its target's
    sign flipped: its term goes from t to -t, an exact difference of 2C."""
    at = _at(n, where)
    rng, X, w = _base(n, seed, at)
    v = rng.normal(size=D)
    X[at] = HUGER * v / np.linalg.norm(v)
    y = np.full(n, 1e6)
    y2 = y.copy()
    y2[at] = -y[at]
    return (X, y, w), (X, y2, w), 2.0


def _grad(rows):
    gcoef, _, bad = rows.grad_sum(np.zeros((1, D)), np.zeros(1), kernels.LOSS_SQUARED, 0.0, 1.0)
    assert bad == 0
    return gcoef


def _orthogonal_pair(n, seed, where):
    """Two datasets that differ in one row, ``a = (p, q, 0, 0)`` or ``b = (q, -p, 0, 0)``
    (random p, q, norm past the bound): the same norm, ``a . b = 0`` exactly, so the two
    clipped rank-one terms ``a a^T``, ``b b^T`` (each of Frobenius norm R^2 = 1) differ by
    exactly sqrt(2) R^2."""
    at = _at(n, where)
    rng, X, w = _base(n, seed, at)
    p, q = rng.normal(size=2)
    X2 = X.copy()
    X[at] = HUGER * np.array([p, q, 0.0, 0.0])
    X2[at] = HUGER * np.array([q, -p, 0.0, 0.0])
    y = np.zeros(n)
    return (X, y, w), (X2, y, w)


def _pair_hessian(n, seed, where):
    # the binary log-loss at theta = 0: each term (1/4) x' x'^T (s (1 - s) = 1/4 exactly)
    one, two = _orthogonal_pair(n, seed, where)
    return one, two, math.sqrt(2.0) / 4.0


def _hessian(rows):
    return rows.hessian_sum(np.zeros((1, D)), np.zeros(1), kernels.LOSS_LOGISTIC)


def _pair_xtx(n, seed, where):
    one, two = _orthogonal_pair(n, seed, where)
    return one, two, math.sqrt(2.0)


def _xtx(rows):
    return rows.suff_stats()[0]


def _pair_xty(n, seed, where):
    """X'y with |y| <= Y = 3: the differing row (clipped to R = 1) has y = Y or -Y: 2 Y R."""
    at = _at(n, where)
    rng, X, w = _base(n, seed, at)
    v = rng.normal(size=D)
    X[at] = HUGER * v / np.linalg.norm(v)
    y = rng.uniform(2.0, 3.0, size=n)
    y[at] = 3.0
    y2 = y.copy()
    y2[at] = -3.0
    return (X, y, w), (X, y2, w), 6.0


def _xty(rows):
    return rows.suff_stats()[1]


def _pair_norms(n, seed, where):
    """The row-norm statistic: the differing row is clipped to R = 1 or is 0: a difference R."""
    at = _at(n, where)
    rng, X, w = _base(n, seed, at)
    X2 = X.copy()
    X2[at] = 0.0
    y = np.zeros(n)
    return (X, y, w), (X2, y, w), 1.0


def _norms(rows):
    return np.array([rows.norm_sum(1.0)])


#: K = 4 classes: feature 0 gives p = (1/2, 1/2, 0, 0), feature 1 p = (0, 0, 1/2, 1/2) (exactly:
#: e^-1000 is 0), feature 2 leans to class 0 (the aligned rows: p_0 near 1, terms near 0)
CURVATURE_COEF = np.array(
    [[0.0, -1e3, 20.0, 0.0], [0.0, -1e3, 0.0, 0.0], [-1e3, 0.0, 0.0, 0.0], [-1e3, 0.0, 0.0, 0.0]]
)


def _pair_curvature(n, seed, where):
    """The class factor of the Kronecker Newton: the differing row (past the bound, clipped
    to norm 1) is e_0 or e_1, whose terms ``diag(p) - p p^T`` have Frobenius norm 1/2 each
    and disjoint supports: an exact difference sqrt(2) / 2."""
    at = _at(n, where)
    rng, X, w = _base(n, seed, at)
    X2 = X.copy()
    X[at] = HUGER * np.eye(D)[0]
    X2[at] = HUGER * np.eye(D)[1]
    y = np.zeros(n)
    return (X, y, w), (X2, y, w), math.sqrt(2.0) / 2.0


def _curvature(rows):
    return rows.class_curvature_sum(CURVATURE_COEF, np.zeros(4))


#: released statistic -> (the neighbouring pair, the reduction, the fit's number of outputs)
STATISTICS = {
    "gradient sum": (_pair_gradient, _grad, 1),
    "Hessian sum": (_pair_hessian, _hessian, 1),
    "X'X": (_pair_xtx, _xtx, 1),
    "X'y": (_pair_xty, _xty, 1),
    "row norm sum": (_pair_norms, _norms, 1),
    "class curvature": (_pair_curvature, _curvature, 4),
}


def _measure(statistic, kind, configs=CONFIGS):
    pair, reduce, k_out = STATISTICS[statistic]
    n = N_ROWS[kind]
    excesses = []
    for seed, where in configs:
        one, two, delta = pair(n, seed, where)
        s1 = reduce(_rows(kind, *one))
        s2 = reduce(_rows(kind, *two))
        # what the fit charges: the idealised sensitivity times 1 + its margin (N rows,
        # replace-one: N is the public bound on the rows summed), rounded up
        margin = rounding_margin(n, k_out, D)
        charged = with_margin({"replace": delta, "add_remove": delta}, margin)
        assert _within(s1, s2, charged["replace"]), (statistic, kind, seed, where)
        excesses.append(_excess(s1, s2, delta))
    return excesses


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize("statistic", list(STATISTICS))
def test_adversarial_pairs_stay_within_the_margin(statistic, kind):
    """The computed statistic of neighbouring datasets moves by at most the charged
    sensitivity, on every backend; the excess over the idealised one is below the margin."""
    excesses = _measure(statistic, kind)
    margin = rounding_margin(N_ROWS[kind], STATISTICS[statistic][2], D)
    assert max(excesses) <= margin


@pytest.mark.parametrize("kind", BACKENDS)
def test_the_rounding_is_measurable_so_a_zero_margin_fails(kind):
    """On every backend some adversarial pair's computed gradient sums differ by more than the
    idealised 2C (measured exactly: about 1e-12 relative at 1e5 rows): a release calibrated to
    2C alone would not hold. The worst measured excess is far below the margin (2.2e-6)."""
    excesses = _measure("gradient sum", kind, MANY_CONFIGS)
    assert max(excesses) > 0.0
    assert max(excesses) < 1e-3 * rounding_margin(N_ROWS[kind], 1, D)


def test_margin_sizes():
    """The margin's size at the row counts the docs quote (2 n gamma_{n+1} dominates)."""
    got = {n: sum_rounding_margin(n, 2 * (10 + 1) + 9) for n in (1e3, 1e5, 1e6, 1e7)}
    assert got[1e3] == pytest.approx(2.2e-10, rel=0.02)
    assert got[1e5] == pytest.approx(2.2e-6, rel=0.02)
    assert got[1e6] == pytest.approx(2.2e-4, rel=0.02)
    assert got[1e7] == pytest.approx(0.0222, rel=0.02)


# --- counts: exact integers without real-valued weights ------------------------------------


@pytest.mark.parametrize("kind", BACKENDS)
def test_counts_with_unit_weights_are_exact_integers(kind):
    """Sums of 0/1 terms are exact in float64 whatever the order (below 2^53): the class
    counts, the rows a released model predicts right, a regressor's closer-minus-farther count
    are the exact integers on every backend; with real weights they are not (the margin)."""
    n = N_ROWS[kind]
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, D))
    y = np.where(rng.random(n) < 0.3, 1.0, -1.0)
    setup = types.SimpleNamespace(loss=types.SimpleNamespace(regression=False), n_outputs=1)
    coef = rng.normal(size=(1, D))
    models = [(coef, np.array([0.1])), (np.zeros((1, D)), np.array([-0.2]))]
    for w in (np.ones(n), (rng.random(n) < 0.7).astype(float)):
        rows = _rows(kind, X, y, w)
        counts = InterceptOnly(None).class_counts(rows, setup)
        exact = [int(np.sum(w[y == -1])), int(np.sum(w[y == 1]))]
        assert counts.tolist() == exact
        right = rows.correct_counts(models)
        for got, (c, b) in zip(right, models):
            pred = np.where(X @ c[0] + b[0] > 0, 1.0, -1.0)
            assert got == int(np.sum(w * (pred == y)))
        closer = rows.closer_sum(models[0], models[1])
        p1, p0 = X @ coef[0] + 0.1, np.full(n, -0.2)
        sign = np.sign(np.abs(y - p0) - np.abs(y - p1))
        assert closer == int(np.sum(w * sign))


# --- the fit applies the margin ------------------------------------------------------------


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5)) / 2.0  # many rows past the bound 1: clipped
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=600) > 0).astype(int)
    y3 = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(600, 3)), axis=1)
    yr = np.clip(X[:, 0] - X[:, 2] + 0.2 * rng.normal(size=600), -1.0, 1.0)
    return X, y, y3, yr


def _idealised(fit, release, K):
    """The release's sensitivity in exact arithmetic (docs/theory.md), from public values."""
    R = fit.row_clip_
    c = 0.5 * R  # the intercept column: intercept_scaling * row bound
    rt2 = R * R + c * c  # the augmented row's squared bound
    G = fit.clip_norm_
    name = release.name
    r2 = math.sqrt(2.0)
    if name == "gradient sums":
        return {"replace": 2 * G, "add_remove": G}
    if name == "Hessian sums":
        h = 0.25 if K == 1 else 0.5
        return {"replace": r2 * h * rt2, "add_remove": h * rt2}
    if name == "X'X":
        return {"replace": r2 * rt2, "add_remove": rt2}
    if name == "X'y":
        return {"replace": 2 * math.sqrt(rt2), "add_remove": math.sqrt(rt2)}  # y_bound 1
    if name == "class curvature sums":
        return {"replace": r2 / 2, "add_remove": 0.5}
    if name.startswith("class counts"):
        return {"replace": r2, "add_remove": 1.0}
    if name.startswith("target sum"):
        return {"replace": 2.0, "add_remove": 1.0}  # y_bound 1
    if name.startswith("selection"):
        return {"replace": 2.0, "add_remove": 1.0}
    if name == "row norm sum":
        return {"replace": fit.data_norm_, "add_remove": fit.data_norm_}
    if name == "solution":
        n, a = fit.n_samples_, fit.alpha_
        g = 1e-4 * 2 * G / n  # the default tolerance factor, replace-one
        return {r: s / (n * a) + 2 * g / a for r, s in {"replace": 2 * G, "add_remove": G}.items()}
    raise AssertionError(f"unknown release {name!r}")


FITS = {
    "gradient": (DPLogisticRegression, dict(schedule="uniform", max_iter=5, classes=[0, 1]), 1),
    "newton": (DPLogisticRegression, dict(schedule="newton", classes=[0, 1]), 1),
    "kronecker": (DPLogisticRegression, dict(schedule="kronecker", classes=[0, 1, 2]), 3),
    "output": (DPLogisticRegression, dict(schedule="output", classes=[0, 1]), 1),
    "auto": (DPLogisticRegression, dict(classes=[0, 1]), 1),
    "ssp": (DPRidge, dict(schedule="ssp", y_bound=1.0), 1),
    "ridge auto": (DPRidge, dict(y_bound=1.0), 1),
    "prior": (DPRidge, dict(schedule="prior", y_bound=1.0), 1),
}


def _fit(name, data, **extra):
    X, y, y3, yr = data
    Est, kw, K = FITS[name]
    target = yr if Est is DPRidge else (y3 if K == 3 else y)
    return Est(epsilon=1.0, delta=1e-6, data_norm=1.0, random_state=0, **kw, **extra).fit(X, target)


@IGNORE_LEAK_WARNINGS
@pytest.mark.parametrize("name", list(FITS))
def test_every_release_carries_the_margin(name, data):
    """Each release of a full-batch fit but the (integer) row count has the idealised
    sensitivity times 1 + the margin of the public row bound (N, replace-one), rounded up."""
    fit = _fit(name, data)
    K = FITS[name][2]
    X = data[0]
    margin = rounding_margin(X.shape[0], K if K > 2 else 1, X.shape[1])
    assert 0 < margin < 1e-9
    seen = set()
    for r in fit.releases_:
        base = _idealised(fit, r, K if K > 2 else 1)
        want = with_margin(base, margin)
        for rel in ("replace", "add_remove"):
            assert r.sensitivity[rel] == pytest.approx(want[rel], rel=1e-15), (r.name, rel)
            assert r.sensitivity[rel] > base[rel] * (1 + 0.5 * margin), (r.name, rel)
        seen.add(r.name)
    assert seen


@IGNORE_LEAK_WARNINGS
def test_noise_drawn_is_the_recorded_std(data, monkeypatch):
    """The mechanisms draw noise of standard deviation multiplier x sensitivity (with its
    margin), as ``releases_`` records it: gradient steps (kernel coordinates: divided by the
    intercept column c), Hessian sums (by c^2), the intercept-only model's target sum."""
    stds = {"update": [], "matrix": [], "mean": []}
    upd = small_problems.noisy_update
    sym = second_order.symmetric_noise
    mean = mechanisms._prior.noisy_mean

    def spy_update(gcoef, gint, std, *a):
        stds["update"].append(std)
        return upd(gcoef, gint, std, *a)

    def spy_sym(gen, size, std):
        stds["matrix"].append(std)
        return sym(gen, size, std)

    def spy_mean(total, std, *a, **k):
        stds["mean"].append(std)
        return mean(total, std, *a, **k)

    monkeypatch.setattr(small_problems, "noisy_update", spy_update)
    monkeypatch.setattr(second_order, "symmetric_noise", spy_sym)
    monkeypatch.setattr(mechanisms._prior, "noisy_mean", spy_mean)
    X = data[0]
    margin = rounding_margin(X.shape[0], 1, X.shape[1])

    gd = _fit("gradient", data)
    grads = next(r for r in gd.releases_ if r.name == "gradient sums")
    c = 0.5 * gd.row_clip_
    want = grads.multipliers * 2 * gd.clip_norm_ * (1 + margin) / c
    np.testing.assert_allclose(stds["update"], want, rtol=1e-14)

    newton = _fit("newton", data)
    hess = next(r for r in newton.releases_ if r.name == "Hessian sums")
    c = 0.5 * newton.row_clip_
    rt2 = newton.row_clip_**2 + c * c
    want = hess.multipliers * math.sqrt(2.0) * 0.25 * rt2 * (1 + margin) / (c * c)
    np.testing.assert_allclose(stds["matrix"], want, rtol=1e-14)

    prior = _fit("prior", data)
    (total,) = prior.releases_
    np.testing.assert_allclose(stds["mean"], total.multipliers * 2.0 * (1 + margin), rtol=1e-14)


# --- output perturbation: the certificate reads a computed gradient ------------------------


def _captured_output(monkeypatch, X, y, **kw):
    """Fit DPRidge by output perturbation; return the rows, Setup and plan its run saw."""
    seen = {}
    run = OutputPerturbationMechanism.run

    def spy(self, rows, setup, plan, releases, gen, start=None):
        seen.update(rows=rows, setup=setup, plan=plan, start=start)
        return run(self, rows, setup, plan, releases, gen, start=start)

    monkeypatch.setattr(OutputPerturbationMechanism, "run", spy)
    fit = DPRidge(
        epsilon=1.0,
        delta=1e-6,
        data_norm=1.0,
        y_bound=1.0,
        schedule="output",
        alpha=1e-3,
        random_state=0,
        **kw,
    ).fit(X, y)
    return fit, seen


def _exact_gradient(rows, setup, coef, b, b0):
    """``c grad F`` (the certificate's coordinates) at kernel coordinates ``(coef, b)``, with
    rationals: the clipped squared loss on the rows ``(s_i x_i, 1)`` as the kernels clip them
    (``s_i``, the threshold ``C / ||x~_i||`` from the stored, computed constants)."""
    c = Fraction(setup.column)
    n = Fraction(setup.n_public)
    alpha = Fraction(setup.l2 / (setup.column * setup.column))
    clip = Fraction(setup.lipschitz / setup.column)
    coef_f = [Fraction(float(v)) for v in coef.ravel()]
    b_f = Fraction(float(b[0]))
    X = np.asarray(rows.X, dtype=float)
    total = [Fraction(0)] * (len(coef_f) + 1)
    for i in range(X.shape[0]):
        s = Fraction(float(rows.row_scale[i]))
        x = [s * Fraction(float(v)) for v in X[i]] + [Fraction(1)]
        z = sum(a * t for a, t in zip(x[:-1], coef_f)) + b_f
        t = clip / Fraction(float(rows.row_norm_aug[i]))
        r = min(max(z - Fraction(float(rows.y[i])), -t), t)
        f = Fraction(float(rows.sample_weight[i])) * r
        total = [acc + f * xj for acc, xj in zip(total, x)]
    grad = [g / n + alpha * w for g, w in zip(total[:-1], coef_f)]
    grad.append(total[-1] / n + alpha * (b_f - Fraction(float(b0))))
    return [c * g for g in grad]


@IGNORE_LEAK_WARNINGS
@pytest.mark.parametrize("n, d", [(3000, 6), (3000, 20)])  # numpy's path, then the kernel's
def test_certificate_bounds_the_computed_gradients_rounding(n, d, monkeypatch):
    """At points far from the minimiser (a large gradient, a large norm), on rows huge and
    tiny, the computed gradient of output perturbation's objective is within
    :meth:`gradient_error` of the exact one (rationals); the error is nonzero."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, d)) * np.where(rng.random(n) < 0.5, 1e120, 1e-9)[:, None]
    y = rng.uniform(-1.0, 1.0, size=n)
    _, seen = _captured_output(monkeypatch, X, y)
    rows, setup = seen["rows"], seen["setup"]
    assert rows.small == (n * d <= small_problems.SMALL_PROBLEM_ENTRIES)
    b0 = 0.0 if seen["start"] is None else float(np.asarray(seen["start"])[0])
    c = setup.column
    alpha = setup.l2 / (c * c)
    errors = []
    for scale in (1.0, 30.0):
        coef = scale * rng.normal(size=(1, d))
        b = np.array([scale * rng.normal()])
        _, gcoef, gint = rows.objective(coef, b, kernels.LOSS_SQUARED, 0.0, setup.lipschitz / c)
        vec = np.concatenate(
            [
                (gcoef / setup.n_public + alpha * coef).ravel(),
                gint / setup.n_public + alpha * (b - b0),
            ]
        )
        computed = c * np.asarray(vec)
        exact = _exact_gradient(rows, setup, coef, b, b0)
        err2 = sum((Fraction(float(v)) - e) ** 2 for v, e in zip(computed, exact))
        theta_norm = float(np.linalg.norm(np.append(coef, b))) / c
        r = OutputPerturbationMechanism._weight_scale(rows, setup)
        bound = OutputPerturbationMechanism.gradient_error(
            setup, theta_norm, r, float(np.linalg.norm(computed))
        )
        assert err2 <= Fraction(bound) ** 2
        errors.append(math.sqrt(float(err2)))
    assert max(errors) > 0.0


@IGNORE_LEAK_WARNINGS
def test_output_tolerance_grows_where_rounding_would_reach_it(monkeypatch):
    """The certified gradient norm g is the default tol x Delta / N at small N (so the golden
    master's fits are unchanged), and four times the public bound on the descent's rounding
    where that is larger: from about 5e5 rows (the worst-case float64 sum error gamma_N G
    there reaches a quarter of g). A computed norm of exactly g is not a certificate."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5)) / 2.0
    y = np.clip(X[:, 0], -1, 1)
    fit, seen = _captured_output(monkeypatch, X, y)
    setup, plan = seen["setup"], seen["plan"]
    mech = OutputPerturbationMechanism(None)
    own = setup.grad_sensitivity[setup.relation]
    g_tol = plan.solver_tol_factor * own / setup.n_public
    assert mech.tolerance(setup, plan) == g_tol
    assert 4 * mech.descent_error(setup, g_tol) < 1e-3 * g_tol
    big = dataclasses.replace(setup, n_public=1e7, rows_bound=1e7)
    g_big = plan.solver_tol_factor * own / 1e7
    raised = mech.tolerance(big, plan)
    assert raised > 10 * g_big
    assert raised == 4 * mech.descent_error(big, g_big)
    # the solution's sensitivity is the larger g's (public: N and the constants only)
    (release,) = mech.releases(big, plan)
    a = big.l2
    assert release.sensitivity["replace"] == pytest.approx(
        2 * fit.clip_norm_ / (1e7 * a) + 2 * raised / a
    )
    # the certificate: a computed norm g plus its (nonzero) rounding bound exceeds g
    theta = np.zeros(setup.problem.n_params)
    grad = np.zeros_like(theta)
    grad[0] = g_tol / setup.column
    assert not OutputPerturbationMechanism._certifies(setup, theta, grad, g_tol, 1.0)
    assert OutputPerturbationMechanism._certifies(setup, theta, 0.5 * grad, g_tol, 1.0)


# --- the network's sums --------------------------------------------------------------------


@IGNORE_LEAK_WARNINGS
def test_network_margin_beyond_its_clip_slack():
    """DPMLPClassifier clips each term to C (1 - CLIP_MARGIN): below ~1.5e5 rows that slack
    covers the float64 sum's rounding (the sensitivity is 2C); a public row bound of 1e6 raises
    the sensitivity by the rest of the margin."""
    pytest.importorskip("torch")
    from skdpgd import DPMLPClassifier
    from skdpgd._network.torch_backend import CLIP_MARGIN

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    kw = dict(epsilon=1.0, delta=1e-8, hidden_layer_sizes=(4,), max_iter=2, random_state=0)
    small = DPMLPClassifier(**kw).fit(X, y)
    assert small.releases_[-1].sensitivity["replace"] == 2 * small.clip_norm_
    big = DPMLPClassifier(neighbouring="add_remove", n_samples=1e6, **kw).fit(X, y)
    extra = sum_rounding_margin(1e6, 0) - CLIP_MARGIN / 2
    assert extra > 1e-4
    assert big.releases_[-1].sensitivity["add_remove"] == pytest.approx(
        big.clip_norm_ * (1 + extra), rel=1e-14
    )


def test_private_search_score_carries_the_margin():
    """The private search's noisy validation score: the accuracy divides an exact count by
    n_val (one rounding per dataset) and the squared error sums reals, so its noise is
    sensitivity x (1 + margin of n_val terms) / mu."""
    from skdpgd.model_selection import PrivateRandomSearchCV

    class Fixed:
        def predict(self, X):
            return np.asarray(X)[:, 0]

    n_val, mu = 1000, 0.5
    X = np.tile([1.0, 0.0], (n_val, 1))
    y = np.ones(n_val)
    m = sum_rounding_margin(n_val, 1)
    acc = PrivateRandomSearchCV._noisy_score(Fixed(), X, y, "accuracy", None, n_val, mu, 1.0)
    assert acc == pytest.approx(1.0 + (1.0 / n_val) * (1 + m) / mu, rel=1e-15)
    assert acc > 1.0 + (1.0 / n_val) / mu
    mse = PrivateRandomSearchCV._noisy_score(
        Fixed(), X, y, "neg_mean_squared_error", (-2.0, 2.0), n_val, mu, 1.0
    )
    assert mse == pytest.approx((16.0 / n_val) * (1 + m) / mu, rel=1e-15)

"""The accounted choice between the fit and the intercept-only model (``Auto(select=...)``).

The selection is one more Gaussian release: the weighted number of training rows the fit
predicts right minus the number the intercept-only model predicts right. Each row's term lies
in [-1, 1], so its sensitivity is 2 (replace-one) or 1 (add/remove-one); every release is made
whatever the data, so the fit composes exactly in Gaussian DP.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from skdpgd import DPLinearSVC, DPLogisticRegression, PrivacyBudget
from skdpgd._compute.backends import CSRRows, DenseRows
from skdpgd._full_batch.mechanisms import SELECTION_SENSITIVITY
from skdpgd.accounting import gdp_mu
from skdpgd.schedules import Auto

SELECT = Auto(select=(math.inf, 0.05, 0.05), prior_switch=False)


def _reference_counts(X, y, w, models):
    out = []
    for coef, intercept in models:
        z = X @ np.asarray(coef).T + intercept
        pred = np.where(z[:, 0] > 0, 1.0, -1.0) if z.shape[1] == 1 else np.argmax(z, axis=1)
        out.append(float(np.sum(w * (pred == y))))
    return np.array(out)


def _rows(kind, X, y, w):
    if kind == "dask":
        da = pytest.importorskip("dask.array")
        from skdpgd._compute.dask_backend import DaskRows

        return DaskRows(da.from_array(X, chunks=(128, X.shape[1])), y, w, True)
    return (DenseRows if kind == "dense" else CSRRows)(
        X if kind == "dense" else sp.csr_matrix(X), y, w, True
    )


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("kind", ["dense", "csr", "dask"])
def test_correct_counts_evaluate_the_released_model_on_the_rows_as_given(k, kind):
    # whatever clipping bound and intercept column the fit ran with, the counts are those of
    # the model as released (coef_ applied to the raw rows): clipping a row or dividing it by
    # the column would change which side of the hyperplane it falls on
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4)) * rng.uniform(0.1, 3.0, size=(500, 1))
    y = rng.choice([-1.0, 1.0], 500) if k == 1 else rng.integers(0, k, 500).astype(float)
    w = rng.uniform(0, 1, 500)
    models = [(rng.normal(size=(k, 4)), rng.normal(size=k)), (np.zeros((k, 4)), rng.normal(size=k))]
    rows = _rows(kind, X, y, w)
    rows.clip_rows(0.5, 0.7)
    got = rows.correct_counts(models)
    np.testing.assert_allclose(got, _reference_counts(X, y, w, models), rtol=1e-12)


def test_a_nan_margin_predicts_nothing_right_and_an_infinite_one_its_sign():
    X = np.array([[10.0, 10.0], [0.0, 1.0], [10.0, 0.0]])
    rows = DenseRows(X, np.array([1.0, 1.0, 1.0]), np.ones(3), True)
    # row 0: inf - inf (NaN, wrong); row 1: margin -1e308 (wrong); row 2: +inf (right)
    got = rows.correct_counts([(np.array([[1e308, -1e308]]), np.array([0.0]))])
    assert got[0] == 1.0


def _capture_counts(monkeypatch):
    """Record every call of the rows' correct_counts (in memory and on dask)."""
    from skdpgd._compute.backends import Rows

    seen = []
    classes = [Rows]
    try:
        from skdpgd._compute.dask_backend import DaskRows

        classes.append(DaskRows)
    except ImportError:  # pragma: no cover - dask is a test dependency
        pass
    for cls in classes:
        original = cls.__dict__.get("correct_counts")
        if original is None:
            continue

        def wrapped(self, models, *args, _original=original):
            out = _original(self, models, *args)
            seen.append(np.array(out))
            return out

        monkeypatch.setattr(cls, "correct_counts", wrapped)
    return seen


@pytest.mark.parametrize("Est", [DPLogisticRegression, DPLinearSVC])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("kind", ["small", "dense", "csr", "dask"])
def test_the_selection_counts_what_the_released_models_predict(monkeypatch, kind, n_classes, Est):
    # the noise-free counts of the selection (fit, then intercept-only model) are the rows each
    # released model's own predict gets right; the fit's coordinates (row clip below
    # data_norm, intercept column) must not leak into them
    from skdpgd import policy

    n = 400 if kind == "small" else 12_000  # small: reduced in numpy; else the kernels
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, 6)) * rng.uniform(0.2, 1.0, size=(n, 1))
    X /= np.linalg.norm(X, axis=1).max()  # rows of norm <= 1 = data_norm
    scores = X[:, :n_classes] + 0.3 * rng.normal(size=(n, n_classes)) * 0.2
    y = np.argmax(scores, axis=1) if n_classes > 2 else (scores[:, 0] > 0).astype(int)
    data = X
    if kind == "csr":
        data = sp.csr_matrix(X)
    elif kind == "dask":
        da = pytest.importorskip("dask.array")
        data = da.from_array(X, chunks=(3000, 6))
    seen = _capture_counts(monkeypatch)
    for bias, kept in ((1e12, True), (-1e12, False)):  # keep the fit / return the prior
        seen.clear()
        with policy.using(AUTO_SELECT_BIAS=bias):
            clf = Est(
                epsilon=1.0,
                data_norm=1.0,
                classes=list(range(n_classes)),
                schedule=SELECT,
                random_state=0,
            ).fit(data, y)
        assert clf.releases_[-1].name.startswith("selection")
        assert clf.row_clip_ < 1.0  # the fit ran in other coordinates than the raw rows
        assert (clf.mechanism_ != "prior") == kept
        counts = seen[-1]  # on dask the chunks' counts come first, their sum last
        right = float(np.sum(clf.predict(X) == y))
        assert counts[0 if kept else 1] == right


def _data(n, strong, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)) / 3
    y = (X[:, 0] > 0).astype(int) if strong else rng.integers(0, 2, n)
    return X, y


def test_the_selection_is_a_release_with_its_sensitivity_and_composes_exactly():
    X, y = _data(2000, True)
    clf = DPLogisticRegression(
        epsilon=1.0, data_norm=1.0, classes=[0, 1], schedule=SELECT, random_state=0
    ).fit(X, y)
    names = [r.name for r in clf.releases_]
    assert names[-1].startswith("selection")
    sel = clf.releases_[-1]
    assert sel.sensitivity["replace"] >= SELECTION_SENSITIVITY["replace"]
    assert sel.sensitivity["add_remove"] >= SELECTION_SENSITIVITY["add_remove"]
    # shares of mu^2 left after the set-up release (the row-norm statistic): 5% counts, 5%
    # selection, the rest the fit; the whole composes exactly to the budget's mu
    inv2 = [float(np.sum(r.multipliers**-2.0)) for r in clf.releases_ if r.name != "row norm sum"]
    total = sum(inv2)
    assert inv2[-1] / total == pytest.approx(0.05, rel=1e-9)
    assert inv2[-2] / total == pytest.approx(0.05, rel=1e-9)
    assert clf.mu_ == pytest.approx(gdp_mu(1.0, clf.delta_), rel=1e-9)
    assert clf.mu_ <= gdp_mu(1.0, clf.delta_)
    assert clf.epsilon_ <= 1.0


def test_strong_signal_keeps_the_fit_and_pure_noise_returns_the_constant_model():
    X, y = _data(3000, True)
    kept = [
        DPLogisticRegression(
            epsilon=1.0, data_norm=1.0, classes=[0, 1], schedule=SELECT, random_state=s
        )
        .fit(X, y)
        .mechanism_
        for s in range(5)
    ]
    assert "prior" not in kept
    # a 10% minority independent of X: the noisy fit predicts worse than the majority class,
    # and the selection returns the constant model
    rng = np.random.default_rng(1)
    y = (rng.uniform(size=3000) < 0.1).astype(int)
    fits = [
        DPLogisticRegression(
            epsilon=0.3, data_norm=1.0, classes=[0, 1], schedule=SELECT, random_state=s
        ).fit(X, y)
        for s in range(10)
    ]
    # (a kept fit predicts nearly every row as the majority too: it is kept only when its
    # noisy count is within the selection's noise of the constant model's)
    assert [f.mechanism_ for f in fits].count("prior") >= 5
    assert np.median([f.score(X, y) for f in fits]) >= 1 - y.mean() - 0.005
    assert min(f.score(X, y) for f in fits) >= 1 - y.mean() - 0.01


def test_the_selection_charges_a_budget_once_with_every_release():
    X, y = _data(1000, True)
    budget = PrivacyBudget(2.0, 1e-6, neighbouring="replace")
    clf = DPLogisticRegression(
        epsilon=1.0,
        delta=1e-6,
        data_norm=1.0,
        classes=[0, 1],
        schedule=SELECT,
        budget=budget,
        random_state=0,
    ).fit(X, y)
    assert budget.spent_epsilon() == pytest.approx(clf.epsilon_, rel=1e-9)
    assert len(budget.charges) == len(clf.releases_)


class _WithSelection:
    """A schedule: another schedule's plan with the counts and the selection added."""

    def __init__(self, inner):
        self.inner, self.name = inner, inner.name

    def plan(self, problem, mu, max_iter=None):
        from dataclasses import replace

        return replace(self.inner.plan(problem, mu, max_iter), prior_share=0.05, select_share=0.05)


@pytest.mark.parametrize("name", ["output", "newton", "uniform"])
def test_the_selection_wraps_every_mechanism_of_the_classifier(name):
    from skdpgd.schedules import get_schedule

    X, y = _data(4000, True)
    clf = DPLogisticRegression(
        epsilon=3.0,
        data_norm=1.0,
        classes=[0, 1],
        schedule=_WithSelection(get_schedule(name)),
        random_state=1,
    ).fit(X, y)
    assert clf.releases_[-1].name.startswith("selection")
    assert clf.mechanism_ == ("gradient" if name == "uniform" else name)
    assert clf.score(X, y) > 0.9
    assert clf.epsilon_ <= 3.0


def test_a_plan_with_a_selection_needs_the_counts():
    from skdpgd.schedules import NoisePlan

    with pytest.raises(ValueError, match="select_share"):
        NoisePlan(np.ones(1), np.ones(1), prior_share=0.5, select_share=0.5)
    with pytest.raises(ValueError, match="prior_share"):
        NoisePlan(np.ones(1), np.ones(1), select_share=0.1)

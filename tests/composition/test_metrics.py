"""skdpgd.metrics: accuracy, R^2 and ROC AUC on private rows as accounted Gaussian releases.

Checked here: each released statistic's sensitivity (by brute force over neighbouring data
sets), the noise drawn against the calibrated standard deviation, the epsilon charged to a
budget against the epsilon asked, the non-private score at a huge epsilon, refusals before
any draw, and secure mode's noise path."""

import math

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, r2_score, roc_auc_score

import skdpgd
import skdpgd.metrics as metrics
from skdpgd import BudgetExceededError, PrivacyBudget, privacy_report
from skdpgd.accounting import gdp_mu
from skdpgd.exceptions import PrivacyUsageWarning
from skdpgd.metrics import dp_accuracy_score, dp_r2_score, dp_roc_auc_score

RELATIONS = ["replace", "add_remove"]


def _classification(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    score = y + rng.normal(size=n)
    return y, score, (score > 0.5).astype(int)


def _regression(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.uniform(-2, 3, size=n)
    return y, y + rng.normal(scale=0.8, size=n)


def _call(name, relation, **kw):
    y, score, pred = _classification()
    yr, pr = _regression()
    kw.setdefault("epsilon", 1.0)
    kw.setdefault("neighbouring", relation)
    if name == "accuracy":
        return dp_accuracy_score(y, pred, **kw)
    if name == "r2":
        return dp_r2_score(yr, pr, y_bound=(-2, 3), **kw)
    return dp_roc_auc_score(y, score, **kw)


def _exact(name):
    y, score, pred = _classification()
    yr, pr = _regression()
    if name == "accuracy":
        return accuracy_score(y, pred)
    if name == "r2":
        return r2_score(yr, np.clip(pr, -2, 3))
    return roc_auc_score(y, score)


class _Capture:
    """Wraps the module's noise draw: records (exact values, std, sensitivity, noisy)."""

    def __init__(self, monkeypatch, noise=True):
        self.calls = []
        real = metrics.gaussian

        def draw(values, std, gen, sens, exact=False):
            out = real(values, std, gen, sens, exact) if noise else values
            self.calls.append((np.array(values, float), float(std), float(sens), np.array(out)))
            return out

        monkeypatch.setattr(metrics, "gaussian", draw)


NAMES = ["accuracy", "r2", "auc"]


# --- sensitivities -----------------------------------------------------------------------------
def _neighbours(rng, n, make_row):
    """A data set of n rows and its neighbours: each row replaced, each removed, one added."""
    base = [make_row(rng) for _ in range(n)]
    replaced = [base[:i] + [make_row(rng)] + base[i + 1 :] for i in range(n)]
    removed = [base[:i] + base[i + 1 :] for i in range(n)]
    added = [base + [make_row(rng)] for _ in range(n)]
    return base, replaced, removed + added


def test_accuracy_counts_move_by_their_stated_sensitivity(monkeypatch):
    rng = np.random.default_rng(1)
    for _ in range(20):
        base, replaced, add_remove = _neighbours(rng, 7, lambda r: tuple(r.integers(0, 2, 2)))
        for relation, others in (("replace", replaced), ("add_remove", add_remove)):
            cap = _Capture(monkeypatch, noise=False)
            for rows in [base] + others:
                yt, yp = np.array(rows).T
                d = dp_accuracy_score(
                    yt, yp, epsilon=1.0, neighbouring=relation, return_details=True
                )
            sens = d.releases_[0].own_sensitivity
            stats = [c[0] for c in cap.calls]
            assert max(np.linalg.norm(np.atleast_1d(s - stats[0])) for s in stats) <= sens


def test_r2_sums_move_by_their_stated_sensitivity(monkeypatch):
    rng = np.random.default_rng(2)

    def row(r):  # targets and predictions at and beyond the bound, ties included
        return tuple(r.choice([-3.0, -2.0, 0.5, 3.0, 4.0, r.uniform(-2, 3)], size=2))

    for _ in range(20):
        base, replaced, add_remove = _neighbours(rng, 6, row)
        for relation, others in (("replace", replaced), ("add_remove", add_remove)):
            cap = _Capture(monkeypatch, noise=False)
            for rows in [base] + others:
                yt, yp = np.array(rows).T
                d = dp_r2_score(
                    yt, yp, epsilon=1.0, y_bound=(-2, 3), neighbouring=relation,
                    return_details=True,
                )  # fmt: skip
            sens = d.releases_[0].own_sensitivity
            stats = [c[0] for c in cap.calls]
            assert max(np.linalg.norm(s - stats[0]) for s in stats) <= sens


def test_mann_whitney_u_moves_by_at_most_the_larger_class_count():
    rng = np.random.default_rng(3)

    def row(r):
        return (int(r.integers(0, 2)), float(r.integers(0, 4)))  # many ties

    for _ in range(200):
        base, replaced, add_remove = _neighbours(rng, int(rng.integers(2, 9)), row)
        yb, sb = (np.array(v) for v in zip(*base))
        u = metrics._mann_whitney_twice(yb == 1, sb) / 2
        pos = int(np.sum(yb == 1))
        # the exact U of sklearn's AUC where both classes occur
        if 0 < pos < yb.size:
            assert u / (pos * (yb.size - pos)) == pytest.approx(roc_auc_score(yb, sb))
        for rows in replaced:  # replace-one: at most N - 1
            y2, s2 = (np.array(v) for v in zip(*rows))
            assert abs(metrics._mann_whitney_twice(y2 == 1, s2) / 2 - u) <= yb.size - 1
        for rows in add_remove:  # add/remove-one: at most max(P, Q) of the smaller set
            y2, s2 = (np.array(v) for v in zip(*rows))
            u2 = metrics._mann_whitney_twice(y2 == 1, s2) / 2
            small = y2 if y2.size < yb.size else yb
            assert abs(u2 - u) <= max(np.sum(small == 1), np.sum(small != 1))


# --- the noise -----------------------------------------------------------------------------
@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("name", NAMES)
def test_the_noise_drawn_has_the_calibrated_std(monkeypatch, name, relation):
    cap = _Capture(monkeypatch)
    details = [_call(name, relation, random_state=s, return_details=True) for s in range(400)]
    releases = details[0].releases_
    # every release's multiplier is the calibrated one: exact GDP of (epsilon, delta)
    mu = gdp_mu(1.0, details[0].delta_)
    z = np.concatenate([r.multipliers for r in releases])
    assert np.sum(z**-2.0) == pytest.approx(mu**2, rel=1e-9)
    per_call = len(releases)
    for k, release in enumerate(releases):
        calls = cap.calls[k::per_call]
        assert all(c[1] == pytest.approx(float(release.noise_std[0]), rel=1e-12) for c in calls)
        assert all(c[2] == release.own_sensitivity for c in calls)
        noise = np.concatenate([(c[3] - c[0]).ravel() / c[1] for c in calls])
        # standardised draws: mean 0, std 1 (400+ draws: a 6-sigma band)
        assert abs(noise.mean()) < 6 / math.sqrt(noise.size)
        assert abs(noise.std() - 1) < 6 / math.sqrt(2 * noise.size)


def test_the_accuracy_spread_matches_the_calibrated_std():
    y, _, pred = _classification()
    values = np.array(
        [dp_accuracy_score(y, pred, epsilon=0.5, random_state=s) for s in range(2000)]
    )
    d = dp_accuracy_score(y, pred, epsilon=0.5, return_details=True)
    std = float(d.releases_[0].noise_std[0]) / y.size
    assert values.std() == pytest.approx(std, rel=0.1)
    assert values.mean() == pytest.approx(accuracy_score(y, pred), abs=5 * std / math.sqrt(2000))


# --- accounting ----------------------------------------------------------------------------
@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("name", NAMES)
def test_the_budget_is_charged_the_epsilon_asked(name, relation):
    budget = PrivacyBudget(epsilon=2.0, delta=1e-6, neighbouring=relation)
    d = _call(name, "auto", epsilon=0.7, delta=1e-6, budget=budget, return_details=True)
    assert d.epsilon_ == pytest.approx(0.7, rel=1e-9)
    assert budget.spent_epsilon() == pytest.approx(0.7, rel=1e-9)
    assert d.neighbouring_ == skdpgd.accounting.Relation(relation).words
    assert [e["label"] for e in budget.entries] == [
        f"dp_{ {'auc': 'roc_auc'}.get(name, name) }_score"
    ]


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("name", NAMES)
def test_a_huge_epsilon_gives_the_non_private_score(name, relation):
    assert _call(name, relation, epsilon=1e15) == pytest.approx(_exact(name), abs=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_refused_when_the_budget_is_spent_and_nothing_is_drawn(monkeypatch, name):
    budget = PrivacyBudget(epsilon=1.0, delta=1e-6)
    _call(name, "auto", epsilon=0.9, delta=1e-6, budget=budget)
    n, spent = len(budget.entries), budget.spent_epsilon()
    cap = _Capture(monkeypatch)
    with pytest.raises(BudgetExceededError, match="Nothing was released"):
        _call(name, "auto", epsilon=0.9, delta=1e-6, budget=budget)
    assert cap.calls == [] and len(budget.entries) == n and budget.spent_epsilon() == spent


def test_a_replace_one_score_cannot_be_charged_to_an_add_remove_budget(monkeypatch):
    budget = PrivacyBudget(epsilon=1.0, delta=1e-6)
    cap = _Capture(monkeypatch)
    with pytest.raises(ValueError, match="N is private"):
        _call("accuracy", "replace", budget=budget)
    assert cap.calls == [] and budget.entries == []


def test_the_report_reads_a_private_score():
    d = _call("auc", "add_remove", return_details=True)
    rep = privacy_report(d)
    assert rep.epsilon(d.delta_) == pytest.approx(1.0, rel=1e-9)
    out = rep.to_dict()
    assert [r["name"] for r in out["releases"]] == [r.name for r in d.releases_]
    assert out["releases"][1]["sensitivity"] == pytest.approx(d.releases_[1].own_sensitivity)


# --- secure mode ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_secure_mode_draws_through_the_secure_release(monkeypatch, name):
    from skdpgd._core.noise import SecureGenerator

    calls = []
    real = SecureGenerator.release

    def release(self, values, std, sens, exact=False):
        calls.append((std, sens, exact))
        return real(self, values, std, sens, exact)

    monkeypatch.setattr(SecureGenerator, "release", release)
    with skdpgd.config_context(secure_noise=True):
        d = _call(name, "auto", return_details=True)
        with pytest.warns(PrivacyUsageWarning, match="ignored in secure mode"):
            _call(name, "auto", random_state=0)
    assert d.noise_ == "discrete" and all(r.noise == "discrete" for r in d.releases_)
    assert len(calls) == 2 * len(d.releases_)
    assert [c[1] for c in calls[: len(d.releases_)]] == [r.own_sensitivity for r in d.releases_]
    lo = -math.inf if name == "r2" else 0.0
    assert lo <= d.value <= 1.0


# --- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: dp_accuracy_score([0, 1], [0], epsilon=1.0), "same length"),
        (lambda: dp_accuracy_score([], [], epsilon=1.0), "no rows"),
        (lambda: dp_accuracy_score([0, 1], [0, 1], epsilon=0.0), "epsilon"),
        (lambda: dp_accuracy_score([0, 1], [0, 1], epsilon=math.inf), "epsilon"),
        (lambda: dp_accuracy_score([[0, 1]], [[0, 1]], epsilon=1.0), "1-D"),
        (lambda: dp_accuracy_score([0, 1], [0, 1], epsilon=1.0, neighbouring="x"), "neighbour"),
        (lambda: dp_r2_score([0.0, 1.0], [0.0, 1.0], epsilon=1.0, y_bound=(1, 0)), "lo < hi"),
        (lambda: dp_r2_score([0.0, 1.0], [0.0, 1.0], epsilon=1.0, y_bound=3), "pair"),
        (lambda: dp_r2_score([0.0, 1.0], [0.0, np.nan], epsilon=1.0, y_bound=(0, 1)), "NaN"),
        (lambda: dp_roc_auc_score([0, 1], ["a", "b"], epsilon=1.0), "numeric"),
    ],
)
def test_bad_input_is_refused_clearly(call, match):
    with pytest.raises(ValueError, match=match):
        call()

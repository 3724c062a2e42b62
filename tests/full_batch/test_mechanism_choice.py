"""The accounted choice among the package's own mechanisms (``schedules.Choice``,
``policy.AUTO_CHOICE``): K fits, each with its share of the budget, the class counts, and one
Gaussian release of the K + 1 counts of training rows each released model predicts right
(sensitivity sqrt(K + 1) under both relations); the model with the largest noisy count (plus
its public offset) is returned. Every release is made whatever the data: exact GDP.
"""

import copy
import math

import numpy as np
import pytest
import scipy.sparse as sp

from skdpgd import DPLogisticRegression, PrivacyBudget, policy
from skdpgd._compute.backends import DenseRows
from skdpgd._full_batch.choice import choice_sensitivity
from skdpgd.accounting import Relation, gdp_mu
from skdpgd.schedules import AutoGradient, Choice, NoisePlan, Newton

SHARES = (0.45, 0.25, 0.2)
CHOICE = Choice(
    (
        (Newton(n_iter=4, gradient_share=0.8), SHARES[0]),
        ("output", SHARES[1]),
        (AutoGradient(), SHARES[2]),
    ),
    count_share=0.05,
    select_share=0.05,
)
#: the same with a free candidate per fit: its margins blended half-way with the prior's
BLENDED = Choice(CHOICE.candidates, 0.05, 0.05, blends=(0.5,))


def _data(n, k=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)) * rng.uniform(0.2, 1.0, size=(n, 1))
    X /= np.linalg.norm(X, axis=1).max()  # rows of norm <= 1 = data_norm
    scores = X[:, :k] + 0.05 * rng.normal(size=(n, k))
    y = np.argmax(scores, axis=1) if k > 2 else (scores[:, 0] > 0).astype(int)
    return X, y


def _fit(X, y, k=2, schedule=CHOICE, **kw):
    params = dict(
        epsilon=1.0, data_norm=1.0, classes=list(range(k)), schedule=schedule, random_state=0
    )
    params.update(kw)
    return DPLogisticRegression(**params).fit(X, y)


def _inv2(release):
    return float(np.sum(np.asarray(release.multipliers, dtype=float) ** -2.0))


@pytest.mark.parametrize("relation", ["replace", "add_remove"])
def test_the_releases_their_shares_and_sensitivities(relation):
    X, y = _data(3000)
    kw = {} if relation == "replace" else dict(neighbouring="add_remove", n_samples=3000)
    clf = _fit(X, y, **kw)
    names = [r.name for r in clf.releases_]
    assert names[0] == "row norm sum"
    main = clf.releases_[1:]
    groups = [[r for r in main if r.name.startswith(f"candidate {j + 1} ")] for j in range(3)]
    assert [len(g) for g in groups] == [2, 1, 1]  # Newton: gradients, Hessians
    assert groups[0][0].name.endswith("gradient sums") and groups[1][0].name.endswith("solution")
    counts, comparison = main[-2], main[-1]
    assert counts.name.startswith("class counts") and comparison.name.startswith("choice")
    # the comparison: sqrt(K + 1) = 2 under both relations (the rounding margin on top)
    for r, s in choice_sensitivity(4).items():
        assert s == 2.0
        assert s <= comparison.sensitivity[r] <= s * (1 + 1e-6)
    assert counts.sensitivity["replace"] >= math.sqrt(2.0)
    assert counts.sensitivity["add_remove"] >= 1.0
    # every release's share of mu^2 as planned, under the fit's relation
    total = sum(_inv2(r) for r in main)
    for group, share in zip(groups, SHARES):
        assert sum(_inv2(r) for r in group) / total == pytest.approx(share, rel=1e-9)
    assert _inv2(counts) / total == pytest.approx(0.05, rel=1e-9)
    assert _inv2(comparison) / total == pytest.approx(0.05, rel=1e-9)
    # exact composition: the whole spends the budget's mu, and epsilon is an upper bound
    assert clf.mu_ == pytest.approx(gdp_mu(1.0, clf.delta_), rel=1e-9)
    assert clf.mu_ <= gdp_mu(1.0, clf.delta_) * (1 + 1e-12)
    assert clf.epsilon_ <= 1.0
    assert Relation.of(clf.neighbouring_) == relation
    assert all(r.relation == relation for r in main)


def _neighbour_counts(rows_of, X, y, w, models, relation, i, new):
    """The count vectors of the data and of its neighbour (row i replaced by ``new``, or
    removed)."""
    a = rows_of(X, y, w).correct_counts(models)
    if relation == "replace":
        X2, y2, w2 = X.copy(), y.copy(), w.copy()
        X2[i], y2[i], w2[i] = new
    else:
        keep = np.arange(len(y)) != i
        X2, y2, w2 = X[keep], y[keep], w[keep]
    return a, rows_of(X2, y2, w2).correct_counts(models)


@pytest.mark.parametrize("relation", ["replace", "add_remove"])
@pytest.mark.parametrize("k", [1, 3])
def test_the_comparison_sensitivity_is_attained_and_never_exceeded(relation, k):
    rng = np.random.default_rng(1)
    n, d, m = 60, 3, 4  # m released models: three fits and the intercept-only one
    X = rng.normal(size=(n, d))
    y = rng.choice([-1.0, 1.0], n) if k == 1 else rng.integers(0, k, n).astype(float)
    w = rng.uniform(0, 1, n)

    def rows_of(X, y, w):
        return DenseRows(X, y, w, True)

    models = [(rng.normal(size=(k, d)), rng.normal(size=k)) for _ in range(m - 1)]
    models.append((np.zeros((k, d)), rng.normal(size=k)))
    bound = choice_sensitivity(m)[relation]
    worst = 0.0
    for _ in range(300):
        i = int(rng.integers(n))
        new = (
            rng.normal(size=d) * 3,
            float(rng.choice([-1.0, 1.0]) if k == 1 else rng.integers(0, k)),
            float(rng.uniform()),
        )
        a, b = _neighbour_counts(rows_of, X, y, w, models, relation, i, new)
        worst = max(worst, float(np.linalg.norm(a - b)))
    assert worst <= bound + 1e-12
    # attained: a row of weight 1 that every model gets right, replaced by one that every
    # model gets wrong (or removed); the models all predict the same class at x0
    x0 = np.zeros(d)
    same = [(np.zeros((k, d)), np.eye(k)[0] if k > 1 else np.ones(1)) for _ in range(m)]
    label = 0.0 if k > 1 else 1.0
    X[0], y[0], w[0] = x0, label, 1.0
    wrong = (x0, 1.0 if k > 1 else -1.0, 1.0)
    a, b = _neighbour_counts(rows_of, X, y, w, same, relation, 0, wrong)
    assert float(np.linalg.norm(a - b)) == pytest.approx(bound, rel=1e-12)


def _capture(monkeypatch):
    """Record the models and the counts of every call of the rows' correct_counts."""
    from skdpgd._compute.backends import Rows

    seen = []
    original = Rows.__dict__["correct_counts"]

    def wrapped(self, models, *args):
        out = original(self, models, *args)
        seen.append(([(np.array(c), np.array(b)) for c, b in models], np.array(out)))
        return out

    monkeypatch.setattr(Rows, "correct_counts", wrapped)
    return seen


@pytest.mark.parametrize("blended", [False, True])
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("kind", ["small", "kernels", "csr"])
def test_the_noise_free_counts_are_what_each_released_model_predicts(monkeypatch, kind, k, blended):
    # each count is the number of training rows the candidate's released model gets right
    # through the estimator's own predict, although every fit ran on clipped rows in other
    # coordinates (row clip below data_norm, an intercept column)
    n = 400 if kind == "small" else 12_000
    X, y = _data(n, k, seed=3)
    data = sp.csr_matrix(X) if kind == "csr" else X
    seen = _capture(monkeypatch)
    clf = _fit(data, y, k, schedule=BLENDED if blended else CHOICE)
    assert clf.row_clip_ < 1.0
    models, counts = seen[-1]
    assert len(models) == (7 if blended else 4)
    assert clf.releases_[-1].sensitivity["replace"] >= math.sqrt(len(models))
    for (coef, intercept), count in zip(models, counts):
        model = copy.deepcopy(clf)
        model.coef_, model.intercept_ = coef.reshape(clf.coef_.shape), intercept.reshape(-1)
        assert count == float(np.sum(model.predict(X) == y))
    # the estimator is one of the released models
    returned = [
        j
        for j, (coef, intercept) in enumerate(models)
        if np.array_equal(coef.reshape(clf.coef_.shape), clf.coef_)
        and np.array_equal(intercept.reshape(-1), clf.intercept_)
    ]
    assert returned
    names = ["newton", "output", "gradient"]
    owners = [x for x in names for _ in range(2)] if blended else names
    assert clf.mechanism_ == (owners + ["prior"])[returned[0]]
    if blended:  # a blend: b times the fit's margins plus 1 - b times the prior's
        prior_intercept = models[-1][1]
        for j in range(3):
            (c1, b1), (c2, b2) = models[2 * j], models[2 * j + 1]
            np.testing.assert_allclose(c2, 0.5 * c1, rtol=1e-15)
            np.testing.assert_allclose(b2, 0.5 * b1 + 0.5 * prior_intercept, rtol=1e-12)


def test_the_noisy_maximum_follows_its_public_offsets():
    X, y = _data(2000)
    with policy.using(AUTO_CHOICE_MAIN_BIAS=1e12):
        assert _fit(X, y).mechanism_ == "newton"
    with policy.using(AUTO_SELECT_BIAS=-1e12):  # the intercept-only model's offset: +1e12
        clf = _fit(X, y)
        assert clf.mechanism_ == "prior" and np.all(clf.coef_ == 0)
    with policy.using(AUTO_CHOICE_MAIN_BIAS=-1e12, AUTO_SELECT_BIAS=1e12):
        clf = _fit(X, y)
    assert clf.mechanism_ in ("output", "gradient")
    # the returned candidate reports its own plan and penalty
    if clf.mechanism_ == "output":
        assert clf.n_iter_ == 1 and clf.schedule_ == "output"
    else:
        assert clf.schedule_ in ("uniform", "hong") and clf.step_sizes_.size == clf.n_iter_


def test_each_candidate_gets_the_penalty_of_its_own_share():
    X, y = _data(2000)
    picks = {}
    for bias in (1e12, -1e12):
        with policy.using(AUTO_CHOICE_MAIN_BIAS=bias, AUTO_SELECT_BIAS=1e12):
            clf = _fit(X, y, schedule=Choice(((Newton(), 0.6), ("output", 0.3)), 0.05, 0.05))
        picks[clf.mechanism_] = clf
    assert set(picks) == {"newton", "output"}
    newton, output = picks["newton"], picks["output"]
    mu_left = math.sqrt(newton.mu_**2 - newton.row_clip_noise_multiplier_**-2.0)
    n, d = 2000, 6
    G = newton.clip_norm_
    R = math.sqrt(newton.row_clip_**2 + (0.5 * newton.row_clip_) ** 2)
    assert newton.alpha_ == pytest.approx(
        policy.consistent_alpha(n, d, G, R, mu_left * math.sqrt(0.6)), rel=1e-9
    )
    assert output.alpha_ == pytest.approx(
        policy.output_alpha(n, d, G, R, mu_left * math.sqrt(0.3)), rel=1e-9
    )


def test_reproducible_with_random_state():
    X, y = _data(1500, 3)
    a, b = _fit(X, y, 3, random_state=7), _fit(X, y, 3, random_state=7)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert a.mechanism_ == b.mechanism_
    assert [r.name for r in a.releases_] == [r.name for r in b.releases_]
    c = _fit(X, y, 3, random_state=8)
    assert not np.array_equal(a.coef_, c.coef_)


def test_a_budget_is_charged_once_per_release():
    X, y = _data(1000)
    budget = PrivacyBudget(2.0, 1e-6, neighbouring="replace")
    clf = _fit(X, y, delta=1e-6, budget=budget)
    assert len(budget.charges) == len(clf.releases_)
    assert budget.spent_epsilon() == pytest.approx(clf.epsilon_, rel=1e-9)
    assert clf.epsilon_ <= 1.0


def test_auto_runs_the_choice_only_where_its_rule_applies():
    X, y = _data(2000)
    auto = dict(schedule="auto")

    def names(**changes):
        with policy.using(**changes):
            clf = _fit(X, y, **auto)
        return [r.name for r in clf.releases_]

    # off by default (see benchmarks/DECISIONS.md#auto_choice): today's selection
    assert policy.AUTO_CHOICE is None
    assert names()[-1].startswith("selection")
    on = dict(AUTO_CHOICE=(300.0, 0.05, 0.05))
    got = names(**on)
    assert got[-1].startswith("choice")
    # 'auto''s pick (ratio 20-300: Newton) first, then output perturbation, gradient descent
    assert [x for x in got if x.endswith("gradient sums") or x.endswith("solution")] == [
        "candidate 1 (newton): gradient sums",
        "candidate 2 (output): solution",
        "candidate 3 (gradient): gradient sums",
    ]
    assert names(**on, AUTO_CHOICE_MAX_FITS=2)[1].startswith("candidate 1 (newton)")
    assert sum(x.endswith("solution") for x in names(**on, AUTO_CHOICE_MAX_FITS=2)) == 1
    # one fit: the choice only with free candidates (blends), else today's selection
    assert names(**on, AUTO_CHOICE_MAX_FITS=1)[-1].startswith("selection")
    with policy.using(**on, AUTO_CHOICE_MAX_FITS=1, AUTO_CHOICE_BLENDS=(0.5,)):
        clf = _fit(X, y, **auto)
    assert [r.name.split(":")[0] for r in clf.releases_[1:]] == [
        "candidate 1 (newton)",
        "candidate 1 (newton)",
        "class counts (start)",
        "choice",
    ]
    assert clf.releases_[-1].sensitivity["replace"] >= math.sqrt(3.0)
    # above the ratio, or where the comparison's noise is above the gate: no choice
    assert not names(AUTO_CHOICE=(1.0, 0.05, 0.05))[-1].startswith("choice")
    assert names(**on, AUTO_CHOICE_MAX_NOISE=1e-6)[-1].startswith("selection")
    # a user max_iter keeps gradient descent
    with policy.using(**on):
        clf = _fit(X, y, schedule="auto", max_iter=5)
    assert clf.mechanism_ in ("gradient", "prior") and "choice" not in clf.releases_[-1].name


def test_the_choice_gate_is_the_noise_of_a_difference_of_its_counts():
    # sqrt(2 m) / (sqrt(r) N mu): the std of a difference of two of the m released counts,
    # over N, when the comparison spends r of mu^2
    n, mu, m, r = 1000, 0.5, 4, 0.05
    z = 1.0 / (math.sqrt(r) * mu)  # the comparison's multiplier
    std = z * choice_sensitivity(m)["replace"]
    assert policy.choice_noise(n, mu, m, r) == pytest.approx(math.sqrt(2.0) * std / n, rel=1e-12)
    # and the fitted release's noise is that std: K = 3 fits and the prior, all of mu_left
    X, y = _data(2000)
    clf = _fit(X, y)
    mu_left = math.sqrt(clf.mu_**2 - clf.row_clip_noise_multiplier_**-2.0)
    comparison = clf.releases_[-1]
    std = float(comparison.multipliers[0]) * comparison.sensitivity["replace"]
    assert math.sqrt(2.0) * std / 2000 == pytest.approx(
        policy.choice_noise(2000, mu_left, 4, 0.05), rel=1e-6
    )


def test_a_choice_plan_has_candidates_whose_shares_sum_to_one():
    with pytest.raises(ValueError, match="sum to 1"):
        NoisePlan(
            np.ones(1),
            np.zeros(1),
            mechanism="choice",
            prior_share=0.05,
            select_share=0.05,
            candidates=(("output", 0.5),),
        )
    with pytest.raises(ValueError, match="candidates"):
        NoisePlan(np.ones(1), np.zeros(1), mechanism="choice")
    X, y = _data(500)
    with pytest.raises(ValueError, match="max_iter"):
        _fit(X, y, max_iter=3)

"""What a published model carries: never a seed or budget the package drew or set itself.

A fitted model whose noise seed is known lets anyone who holds the other rows refit a
neighbouring data set with the same noise and compare: the noise no longer hides the row.
"""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from skdpgd import DPLogisticRegression, DPRidge, PrivacyBudget, privacy_report
from skdpgd.model_selection import PrivateRandomSearchCV
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import BoundedScaler, DPStandardScaler

X_TILE = np.tile([0.3, -0.2, 0.4], (200, 1))


def _attacker_says_one(label):
    """The attack of a neighbour-distinguishing adversary who refits the published winner on
    the neighbour where row 0 has label 1 and checks whether the noise is the same."""
    y = np.zeros(200, int)
    y[0] = label
    s = PrivateRandomSearchCV(
        DPLogisticRegression(data_norm=1.0, classes=[0, 1]),
        {"alpha": [1e-2, 1e-3]},
        epsilon=1.0,
        n_iter=3,
    ).fit(X_TILE, y)
    est = s.best_estimator_
    yt = np.zeros(s.n_train_, int)
    yt[0] = 1
    g = clone(est).fit(X_TILE[: s.n_train_], yt)
    return bool(np.allclose(g.coef_, est.coef_) and np.allclose(g.intercept_, est.intercept_))


def test_refitting_the_published_search_winner_tells_neighbours_apart_no_better_than_chance():
    # with the trial's seed on best_estimator_, the attacker said "1" in 9 of 10 runs on the
    # neighbour with label 1 and in 0 of 10 on the other; with fresh noise, never
    says = [_attacker_says_one(label) for label in (0, 1) for _ in range(10)]
    assert sum(says) == 0


def _seeds_and_budgets(est):
    params = est.get_params(deep=True)
    return {
        k: v
        for k, v in params.items()
        if k == "random_state"
        or k.endswith("__random_state")
        or k == "budget"
        or k.endswith("__budget")
    }


@pytest.mark.parametrize("user_seed", [None, 7])
def test_search_restores_the_users_seed_and_budget_on_the_winner(user_seed):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    est = DPLogisticRegression(data_norm=1.0, classes=[0, 1], random_state=user_seed)
    s = PrivateRandomSearchCV(
        est, {"alpha": [1e-2, 1e-3]}, epsilon=1.0, n_iter=3, random_state=0
    ).fit(X, y)
    assert s.best_estimator_.random_state == user_seed
    assert s.best_estimator_.budget is None
    assert s.best_estimator_.epsilon == s.trial_epsilon_  # what it was fitted with: public


def test_search_over_a_pipeline_restores_the_steps_seed_and_the_pipelines():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(400, 3))
    y = (X[:, 0] > 0).astype(int)
    plain = Pipeline(
        [
            ("s", BoundedScaler(bounds=(-1, 1))),
            ("m", DPLogisticRegression(data_norm=2.0, classes=[0, 1])),
        ]
    )
    s = PrivateRandomSearchCV(
        plain, {"m__alpha": [1e-2, 1e-3]}, epsilon=1.0, n_iter=3, random_state=0
    ).fit(X, y)
    assert all(v is None for v in _seeds_and_budgets(s.best_estimator_).values())

    private = make_private_pipeline(
        BoundedScaler(bounds=(-1, 1)), DPLogisticRegression(classes=[0, 1]), epsilon=1.0
    )
    s = PrivateRandomSearchCV(
        private,
        {"dplogisticregression__alpha": [1e-2, 1e-3]},
        epsilon=1.0,
        n_iter=3,
        random_state=0,
    ).fit(X, y)
    assert all(v is None for v in _seeds_and_budgets(s.best_estimator_).values())


@pytest.mark.parametrize("seed", [None, 3])
def test_private_pipeline_leaves_no_internal_seed_or_ledger_on_its_steps(seed):
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(500, 3))
    y = (X[:, 0] > 0).astype(int)
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=(-1, 1)),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=1.0,
        random_state=seed,
    ).fit(X, y)
    found = _seeds_and_budgets(pipe)
    assert found.pop("random_state") == seed
    assert found.pop("budget") is None
    assert all(v is None for v in found.values()), found


def test_budget_fits_carry_no_seed_of_the_budget():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 2)) / 2
    y = X[:, 0] + 0.1 * rng.normal(size=300)
    budget = PrivacyBudget(2.0, 1e-6)
    reg = DPRidge(epsilon=1.0, data_norm=1.0, y_bound=2.0, budget=budget).fit(X, y)
    assert reg.random_state is None


def _seed_note(report):
    return [n for n in report.notes if "reproducible" in n]


@pytest.mark.parametrize(
    "seed, flagged",
    [(0, True), (np.int64(5), True), (None, False), (np.random.RandomState(0), True)],
)
def test_report_flags_a_seed_that_makes_the_noise_reproducible(seed, flagged):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 2)) / 2
    y = (X[:, 0] > 0).astype(int)
    clf = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=seed).fit(
        X, y
    )
    notes = _seed_note(privacy_report(clf))
    assert bool(notes) == flagged
    if flagged:
        assert "do not publish it with the model" in notes[0]
        assert "random_state" in notes[0]
    # the flag is printed with the report, and survives pickling of the model
    assert bool(_seed_note(privacy_report(pickle.loads(pickle.dumps(clf))))) == flagged
    if flagged:
        assert "reproducible" in str(privacy_report(clf))


def test_report_names_the_parameter_that_holds_a_seed():
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(400, 3))
    y = (X[:, 0] > 0).astype(int)
    pipe = make_private_pipeline(
        BoundedScaler(bounds=(-1, 1)),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=1.0,
        random_state=11,
    ).fit(X, y)
    (note,) = _seed_note(privacy_report(pipe))
    assert note.startswith("random_state=11")
    plain = Pipeline(
        [
            ("s", BoundedScaler(bounds=(-1, 1))),
            (
                "m",
                DPLogisticRegression(epsilon=1.0, data_norm=2.0, classes=[0, 1], random_state=11),
            ),
        ]
    ).fit(X, y)
    (note,) = _seed_note(privacy_report(plain))
    assert note.startswith("m__random_state=11")


def test_an_unseeded_fit_ignores_numpys_global_seed():
    # scikit-learn's None reads numpy's global RandomState, which a notebook's np.random.seed
    # fixes: the noise of an "unseeded" fit would be reproducible from that line
    rng = np.random.default_rng(6)
    X = rng.normal(size=(300, 2)) / 2
    y = (X[:, 0] > 0).astype(int)
    coefs = []
    for _ in range(2):
        np.random.seed(0)
        clf = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1]).fit(X, y)
        coefs.append(clf.coef_.copy())
    assert not np.allclose(coefs[0], coefs[1])
    winners = []
    for _ in range(2):
        np.random.seed(0)
        s = PrivateRandomSearchCV(
            DPLogisticRegression(data_norm=1.0, classes=[0, 1]),
            {"alpha": [1e-2, 1e-3]},
            epsilon=1.0,
            n_iter=3,
        ).fit(X, y)
        winners.append(s.best_estimator_.coef_.copy())
    assert not np.allclose(winners[0], winners[1])

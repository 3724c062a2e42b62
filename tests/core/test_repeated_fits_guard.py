"""Warnings for fits whose epsilon does not cover what the user runs: a private pipeline
fitted repeatedly by scikit-learn's model-selection helpers, and a DP estimator at the end of
a plain scikit-learn Pipeline whose earlier steps learn from the rows."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer, StandardScaler

from skdpgd import DPLogisticRegression, PrivacyBudget
from skdpgd.exceptions import PrivacyLeakWarning
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import BoundedScaler, DPStandardScaler


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 3))
    return X, (X[:, 0] > 0).astype(int)


def _leak_messages(record):
    return [str(w.message) for w in record if issubclass(w.category, PrivacyLeakWarning)]


def test_cross_validating_a_private_pipeline_without_a_shared_budget_warns(data):
    X, y = data
    pipe = make_private_pipeline(
        BoundedScaler(bounds=(-1, 1)), DPLogisticRegression(classes=[0, 1]), epsilon=1.0
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        cross_val_score(pipe, X, y, cv=3)
    messages = _leak_messages(record)
    assert messages and all("PrivatePipeline" in m for m in messages)
    assert "budget=PrivacyBudget(...) to the pipeline" in messages[0]
    assert "PrivateRandomSearchCV" in messages[0]


def test_cross_validating_a_private_pipeline_on_a_shared_budget_reports_the_total(data):
    X, y = data
    budget = PrivacyBudget(10.0, 1e-5, neighbouring="replace")
    pipe = make_private_pipeline(
        BoundedScaler(bounds=(-1, 1)),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=1.0,
        budget=budget,
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        scores = cross_val_score(pipe, X, y, cv=3)
    assert not _leak_messages(record)
    assert np.all(scores > 0.7)
    # three fits of epsilon 1 each, composed (Gaussian DP) at the budget's delta
    assert 1.0 < budget.spent_epsilon() < 3.0
    assert len([c for c in budget.charges]) >= 3


@pytest.mark.parametrize("leaky", [StandardScaler(), make_pipeline(Normalizer(), StandardScaler())])
def test_a_dp_estimator_after_a_step_that_learns_from_the_rows_warns(data, leaky):
    X, y = data
    with pytest.warns(PrivacyLeakWarning, match="standardscaler.*make_private_pipeline"):
        make_pipeline(leaky, DPLogisticRegression(epsilon=1.0, data_norm=2.0, classes=[0, 1])).fit(
            X, y
        )


@pytest.mark.parametrize(
    "step",
    [BoundedScaler(bounds=(-1, 1)), Normalizer(), DPStandardScaler(bounds=(-1, 1), epsilon=1.0)],
)
def test_public_bound_and_dp_steps_in_a_plain_pipeline_do_not_warn(data, step):
    X, y = data
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        make_pipeline(step, DPLogisticRegression(epsilon=1.0, data_norm=2.0, classes=[0, 1])).fit(
            X, y
        )
    assert not _leak_messages(record)

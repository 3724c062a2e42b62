"""Every public DP estimator as the final step of a private pipeline and inside the private
search, read from ``skdpgd.__all__`` (an estimator added there is picked up without editing
this file): each is judged by what its tags declare, never by its name."""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import is_classifier

import skdpgd
from skdpgd import PrivacyLeakWarning
from skdpgd._core.capability import (
    DP_ESTIMATOR,
    DP_MINIBATCH_ESTIMATOR,
    privacy_capability,
    reads_if_none,
)
from skdpgd.model_selection import PrivateRandomSearchCV
from skdpgd.pipeline import audit_estimator, make_private_pipeline
from skdpgd.preprocessing import BoundedScaler


def _public_dp_estimators():
    found = []
    for name in skdpgd.__all__:
        cls = getattr(skdpgd, name)
        if not inspect.isclass(cls):
            continue
        try:
            est = cls()
        except TypeError:  # needs arguments: not an estimator with defaults
            continue
        if privacy_capability(est) in (DP_ESTIMATOR, DP_MINIBATCH_ESTIMATOR):
            found.append(cls)
    return found


ESTIMATORS = _public_dp_estimators()
SMALL = {  # keeps the network's fits short: parameters, not a name list of who is DP
    "hidden_layer_sizes": (4,),
    "max_iter": 5,
}


def _configured(cls):
    """``cls`` with the public values its tags say it would otherwise read from the rows, and
    small sizes where it has them."""
    est = cls(random_state=0)
    params = est.get_params()
    est.set_params(**{k: v for k, v in SMALL.items() if k in params})
    public = {"classes": [0, 1], "y_bound": 5.0}
    for name in reads_if_none(est):
        if name in params and params[name] is None:
            est.set_params(**{name: public[name]})
    return est


def _data(est, n=300):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(n, 3))
    signal = X @ np.array([1.0, -1.0, 0.5])
    if is_classifier(est):
        return X, (signal + 0.3 * rng.normal(size=n) > 0).astype(int)
    if "poisson" in type(est).__name__.lower() or est.__sklearn_tags__().target_tags.positive_only:
        return X, rng.poisson(np.exp(0.5 * signal)).astype(float)
    return X, signal + 0.3 * rng.normal(size=n)


def test_the_list_holds_every_estimator_of_the_package():
    names = {c.__name__ for c in ESTIMATORS}
    assert {
        "DPLogisticRegression",
        "DPRidge",
        "DPHuberRegressor",
        "DPPoissonRegressor",
        "DPLinearSVC",
        "DPSGDClassifier",
        "DPSGDRegressor",
    } <= names


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_final_step_of_a_private_pipeline(cls):
    est = _configured(cls)
    X, y = _data(est)
    pipe = make_private_pipeline(BoundedScaler(bounds=(-1, 1)), est, random_state=0)
    assert audit_estimator(pipe) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # nothing read outside epsilon
        pipe.fit(X, y)
    assert pipe.epsilon_ <= 1.0 + 1e-9
    assert pipe.predict(X).shape == (X.shape[0],)


def _search(est, make, X, y, prefix=""):
    key = next(k for k in ("alpha", "momentum") if k in est.get_params())
    return PrivateRandomSearchCV(
        make,
        {f"{prefix}{key}": [est.get_params()[key]]},
        epsilon=1.0,
        n_iter=2,
        y_bound=None if is_classifier(est) else (-5.0, 5.0),
        random_state=0,
    )


def _runs(search, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # nothing read outside epsilon
        search.fit(X, y)
    assert search.epsilon_ <= 1.0 + 1e-9
    assert search.predict(X).shape == (X.shape[0],)


def _refused(search, X, y):
    with pytest.raises(TypeError, match="replace-one"):
        search.fit(X, y)
    assert not hasattr(search, "best_estimator_")


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_inside_the_private_search(cls):
    """The estimator alone, and a private pipeline built without an epsilon: full-batch
    Gaussian trials run; trials accounted under add/remove-one (Poisson-sampled minibatches,
    or a minibatch estimator's step of a private pipeline) are refused before any trial,
    with a message saying why (never a silent wrong epsilon)."""
    est = _configured(cls)
    X, y = _data(est)
    minibatch = privacy_capability(est) == DP_MINIBATCH_ESTIMATOR
    alone = est.set_params(data_norm=float(np.sqrt(3))) if "data_norm" in est.get_params() else est
    search = _search(est, alone, X, y)
    if minibatch and est.get_params().get("batch_size", "poisson") is not None:
        _refused(search, X, y)
    else:
        _runs(search, X, y)
    pipe = make_private_pipeline(BoundedScaler(bounds=(-1, 1)), _configured(cls))
    search = _search(est, pipe, X, y, prefix=pipe.steps[-1][0] + "__")
    if minibatch:
        _refused(search, X, y)
    else:
        _runs(search, X, y)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_a_parameter_the_estimator_reads_from_the_rows_is_refused(cls):
    """What an estimator's tags say it reads when left None is refused by name, and only
    that: a pipeline ending in it with those parameters None is not run."""
    est = cls(random_state=0)
    read = [p for p in reads_if_none(est) if est.get_params().get(p, 0) is None]
    pipe = make_private_pipeline(BoundedScaler(bounds=(-1, 1)), est)
    problems = audit_estimator(pipe)
    assert len(problems) == len(read)
    for name, message in zip(read, problems):
        assert f"{name}=None" in message


def test_huber_needs_no_target_range_and_starts_at_zero():
    """DPHuberRegressor without y_bound: accepted (its gradient is bounded by the threshold),
    and no release of the targets' mean, so its steps start at 0, not from the rows."""
    est = skdpgd.DPHuberRegressor(random_state=0)
    assert reads_if_none(est) == ()
    X, y = _data(est)
    pipe = make_private_pipeline(BoundedScaler(bounds=(-1, 1)), est, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe.fit(X, y)
    assert not any("target" in r.name for r in pipe.releases_)
    assert pipe[-1].y_bound_ is None
    # with a bound, the mean of the clipped targets is released (accounted) and the fit starts
    # there
    with_bound = make_private_pipeline(
        BoundedScaler(bounds=(-1, 1)), skdpgd.DPHuberRegressor(y_bound=5.0), random_state=0
    ).fit(X, y)
    assert any("target sum" in r.name for r in with_bound.releases_)


def test_an_undeclared_estimator_is_judged_on_the_safe_side():
    """A DP estimator class that declares nothing about what it reads: classes and y_bound
    left None are both refused (the rule before declarations)."""

    class Plain(skdpgd.DPRidge):
        _skdpgd_privacy = DP_ESTIMATOR

        def _skdpgd_reads_if_none(self):
            return None

    assert reads_if_none(Plain()) == ("classes", "y_bound")
    problems = audit_estimator(make_private_pipeline(BoundedScaler(bounds=(-1, 1)), Plain()))
    assert len(problems) == 1 and "y_bound=None" in problems[0]

"""skdpgd.privacy_report: a table of releases and epsilon at several deltas,
by the tightest accountant, for estimators, searches, pipelines and budgets."""

import importlib.util
import math

import numpy as np
import pytest

import skdpgd
from skdpgd import PrivacyBudget, privacy_report
from skdpgd.accounting import gdp_epsilon, gdp_mu_of_releases

HAS_DPACC = importlib.util.find_spec("dp_accounting") is not None


def _data(n=2000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / 4
    return X, (X[:, 0] > 0).astype(int)


def test_full_batch_report_is_exact_gdp_and_matches_the_fit():
    X, y = _data()
    clf = skdpgd.DPLogisticRegression(
        epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0
    ).fit(X, y)
    rep = privacy_report(clf)
    assert rep.accountant == "Gaussian DP (exact)"
    assert rep.relation == "replace"
    mu = gdp_mu_of_releases(clf.releases_)
    for d, e in zip(rep.deltas, rep.epsilons):
        assert e == pytest.approx(gdp_epsilon(d, mu), rel=1e-12)
    assert rep.epsilon(clf.delta_) <= clf.epsilon + 1e-9
    assert rep.epsilon(clf.delta_) == pytest.approx(clf.epsilon_, rel=1e-6)
    assert clf.delta_ in rep.deltas
    # epsilon decreases as delta grows
    order = np.argsort(rep.deltas)
    assert np.all(np.diff(rep.epsilons[order]) <= 0)
    text = str(rep)
    for r in clf.releases_:
        assert r.name in text
    assert "replace-one" in text and "<table>" in rep._repr_html_()


def test_sgd_report_uses_the_tighter_of_rdp_and_pld():
    X, y = _data()
    sgd = skdpgd.DPSGDClassifier(
        epsilon=1.0, data_norm=1.0, classes=[0, 1], n_samples=2000, random_state=0
    ).fit(X, y)
    rep = privacy_report(sgd)
    assert rep.relation == "add_remove"
    rdp = rep.epsilons if rep.accountant == "RDP" else rep.others["RDP"]
    # the RDP column is the fit's own accounting
    k = int(np.flatnonzero(rep.deltas == sgd.delta_)[0])
    assert rdp[k] == pytest.approx(sgd.epsilon_, rel=1e-9)
    if HAS_DPACC:
        assert rep.accountant == "PLD (dp-accounting)"
        assert np.all(rep.epsilons <= rdp)
        assert rep.epsilons[k] < sgd.epsilon_  # PLD is tighter for this run


def test_budget_report_matches_the_budget():
    X, y = _data()
    b = PrivacyBudget(3.0, 1e-5, neighbouring="add_remove")
    skdpgd.DPSGDClassifier(
        epsilon=0.5, data_norm=1.0, classes=[0, 1], n_samples=2000, random_state=0, budget=b
    ).fit(X, y)
    skdpgd.DPLogisticRegression(
        epsilon=0.5,
        data_norm=1.0,
        classes=[0, 1],
        n_samples=2000,
        neighbouring="add_remove",
        random_state=0,
        budget=b,
    ).fit(X, y)
    rep = privacy_report(b)
    k = int(np.flatnonzero(rep.deltas == 1e-5)[0])
    rdp = rep.epsilons if rep.accountant == "RDP" else rep.others["RDP"]
    assert rdp[k] == pytest.approx(b.spent_epsilon(), rel=1e-9)
    assert len(rep.rows) == len(b.charges)
    assert "spent so far" in str(rep)


def test_replace_one_budget_of_full_batch_fits_is_exact():
    X, y = _data()
    b = PrivacyBudget(2.0, 1e-6, neighbouring="replace")
    for _ in range(2):
        skdpgd.DPRidge(epsilon=0.5, data_norm=1.0, y_bound=1.0, random_state=0, budget=b).fit(
            X, X[:, 0]
        )
    rep = privacy_report(b)
    assert rep.accountant == "Gaussian DP (exact)"
    assert rep.epsilon(1e-6) == pytest.approx(b.spent_epsilon(), rel=1e-9)


def test_search_report():
    X, y = _data()
    s = skdpgd.PrivateRandomSearchCV(
        skdpgd.DPLogisticRegression(data_norm=1.0, classes=[0, 1]),
        {"alpha": [1e-3, 1e-2]},
        epsilon=2.0,
        n_iter=2,
        random_state=0,
    ).fit(X, y)
    rep = privacy_report(s)
    assert rep.accountant == "RDP"
    assert rep.epsilon(s.delta_) == pytest.approx(s.epsilon_, rel=1e-9)


def test_pipeline_report_collects_its_private_steps():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X, y = _data()
    pipe = make_pipeline(
        FunctionTransformer(lambda A: A / 2.0),
        skdpgd.DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0),
    ).fit(X, y)
    rep = privacy_report(pipe)
    est = pipe[-1]
    assert rep.epsilon(est.delta_) == pytest.approx(est.epsilon_, rel=1e-6)


def test_unfitted_or_wrong_object_is_a_clear_error():
    with pytest.raises(TypeError, match="releases_"):
        privacy_report(skdpgd.DPLogisticRegression())
    with pytest.raises(ValueError, match="deltas"):
        X, y = _data(n=200)
        privacy_report(
            skdpgd.DPRidge(epsilon=1.0, data_norm=1.0, y_bound=1.0, random_state=0).fit(X, X[:, 0]),
            deltas=[0.0],
        )


def test_noiseless_fit_reports_infinite_epsilon():
    X, y = _data(n=200)
    clf = skdpgd.DPLogisticRegression(epsilon=math.inf, data_norm=1.0, classes=[0, 1]).fit(X, y)
    rep = privacy_report(clf)
    assert np.all(np.isinf(rep.epsilons)) and math.isinf(rep.epsilon(1e-5))
    assert "without noise" in rep.accountant


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib")
def test_plot_of_the_privacy_profile():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = _data(n=500)
    clf = skdpgd.DPLogisticRegression(
        epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0
    ).fit(X, y)
    fig, ax = plt.subplots()
    rep = privacy_report(clf, plot=True, ax=ax)
    line = ax.get_lines()[0]
    d, e = line.get_data()
    np.testing.assert_allclose(e, [rep.epsilon(x) for x in d])
    assert ax.get_xscale() == "log"
    plt.close(fig)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_mlp_reports_full_batch_exactly_and_minibatch_tighter():
    X, y = _data(n=300)
    kw = dict(epsilon=1.0, classes=[0, 1], hidden_layer_sizes=(4,), max_iter=5, random_state=0)
    full = skdpgd.DPMLPClassifier(**kw).fit(X, y)
    rep = privacy_report(full)
    assert rep.accountant == "Gaussian DP (exact)"
    assert rep.epsilon(full.delta_) == pytest.approx(full.epsilon_, rel=1e-9)
    mini = skdpgd.DPMLPClassifier(batch_size=50, **kw).fit(X, y)
    rep = privacy_report(mini)
    assert rep.relation == "add_remove"
    assert rep.epsilon(mini.delta_) <= mini.epsilon_ * (1 + 1e-9)


def _nested_pipeline(budget, prefitted_template=False):
    """A plain scikit-learn Pipeline whose private steps sit inside a ColumnTransformer (one
    of them inside a nested Pipeline) and a FeatureUnion, all charged to ``budget``."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion, Pipeline
    from sklearn.preprocessing import FunctionTransformer

    from skdpgd.preprocessing import BoundedScaler, DPStandardScaler

    scaler = DPStandardScaler(epsilon=1.0, bounds=(-1, 1), budget=budget, random_state=1)
    if prefitted_template:  # a template fitted on its own earlier: not part of this fit
        scaler.set_params(budget=None, epsilon=2.0).fit(np.zeros((50, 2)))
        scaler.set_params(budget=budget, epsilon=1.0)
    inner = Pipeline(
        [
            ("id", FunctionTransformer()),
            ("scale", DPStandardScaler(epsilon=0.5, bounds=(-1, 1), budget=budget, random_state=2)),
        ]
    )
    ct = ColumnTransformer(
        [("num", scaler, [0, 1]), ("inner", inner, [2]), ("drop", "drop", [3])], sparse_threshold=0
    )
    union = FeatureUnion(
        [
            ("dp", DPStandardScaler(epsilon=0.7, bounds=(-3, 3), budget=budget, random_state=3)),
            ("free", BoundedScaler(bounds=(-3, 3))),
        ]
    )
    final = skdpgd.DPLogisticRegression(
        epsilon=0.5, data_norm=math.sqrt(9 * 3 + 3), classes=[0, 1], budget=budget, random_state=0
    )
    return Pipeline([("ct", ct), ("union", union), ("clf", final)])


@pytest.mark.parametrize("prefitted_template", [False, True])
def test_report_of_a_plain_pipeline_walks_nested_private_steps(prefitted_template):
    """DP steps inside a ColumnTransformer, a nested Pipeline and a FeatureUnion are all
    counted, each once (the ColumnTransformer's fitted parts, never its templates)."""
    X, y = _data(n=1500)
    budget = PrivacyBudget(10.0, 1e-6, neighbouring="replace")
    pipe = _nested_pipeline(budget, prefitted_template).fit(X, y)
    nested = [
        pipe["ct"].named_transformers_["num"],
        pipe["ct"].named_transformers_["inner"]["scale"],
        pipe["union"].transformer_list[0][1],
        pipe["clf"],
    ]
    assert all(len(step.releases_) > 0 for step in nested)
    rep = privacy_report(pipe)
    assert rep.accountant == "Gaussian DP (exact)" and rep.relation == "replace"
    # exactly the composition of every nested release: the budget's ledger, the GDP closed form
    assert rep.epsilon(1e-6) == pytest.approx(budget.spent_epsilon(), rel=1e-9)
    releases = [r for step in nested for r in step.releases_]
    assert rep.epsilon(1e-6) == pytest.approx(
        gdp_epsilon(1e-6, gdp_mu_of_releases(releases)), rel=1e-9
    )
    assert len(rep.rows) == len(releases)
    for step in nested:
        assert rep.epsilon(step.delta_) >= step.epsilon_ * (1 - 1e-9)
    # a ColumnTransformer or FeatureUnion on its own is walked the same way
    rep_ct = privacy_report(pipe["ct"])
    ct_releases = [r for step in nested[:2] for r in step.releases_]
    assert rep_ct.epsilon(1e-6) == pytest.approx(
        gdp_epsilon(1e-6, gdp_mu_of_releases(ct_releases)), rel=1e-9
    )
    assert privacy_report(pipe["union"]).epsilon(1e-6) == pytest.approx(
        gdp_epsilon(1e-6, gdp_mu_of_releases(nested[2].releases_)), rel=1e-9
    )


def test_report_of_a_private_pipeline_nested_in_a_plain_one_uses_its_own_record():
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer

    from skdpgd.pipeline import make_private_pipeline
    from skdpgd.preprocessing import DPStandardScaler

    X, y = _data(n=1500)
    private = make_private_pipeline(
        DPStandardScaler(bounds=(-1, 1)),
        skdpgd.DPLogisticRegression(classes=[0, 1]),
        epsilon=1.0,
        random_state=0,
    )
    pipe = Pipeline([("id", FunctionTransformer()), ("model", private)]).fit(X, y)
    fitted = pipe["model"]
    rep = privacy_report(pipe)
    assert len(rep.rows) == len(fitted.releases_)
    assert rep.epsilon(fitted.delta_) == pytest.approx(fitted.epsilon_, rel=1e-9)


def test_plot_without_matplotlib_says_what_to_install(monkeypatch):
    import builtins

    import numpy as np

    from skdpgd import DPLogisticRegression, privacy_report

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2)) / 2
    y = (X[:, 0] > 0).astype(int)
    report = privacy_report(
        DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1]).fit(X, y)
    )
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        report.plot()

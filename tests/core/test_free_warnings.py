"""Warnings that cost no privacy: each is computed from public or already
released values only, so it is post-processing."""

import importlib.util
import warnings

import numpy as np
import pytest

import skdpgd
from skdpgd import PrivacyUsageWarning


def _data(n=200, d=4, scale=0.2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    y = (X[:, 0] + 0.1 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _usage(record):
    return [str(w.message) for w in record if issubclass(w.category, PrivacyUsageWarning)]


def _fit(est, X, y):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        est.fit(X, y)
    return _usage(record)


ESTIMATORS = {
    "DPLogisticRegression": lambda **kw: skdpgd.DPLogisticRegression(
        data_norm=1.0, classes=[0, 1], **kw
    ),
    "DPRidge": lambda **kw: skdpgd.DPRidge(data_norm=1.0, y_bound=1.0, **kw),
    "DPSGDClassifier": lambda **kw: skdpgd.DPSGDClassifier(data_norm=1.0, classes=[0, 1], **kw),
}
if importlib.util.find_spec("torch") is not None:
    ESTIMATORS["DPMLPClassifier"] = lambda **kw: skdpgd.DPMLPClassifier(
        classes=[0, 1], hidden_layer_sizes=(4,), max_iter=3, **kw
    )


# --- delta >= 1/N -------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_delta_at_least_one_over_n_warns(name):
    X, y = _data(n=200)
    make = ESTIMATORS[name]
    extra = {} if name != "DPSGDClassifier" else dict(n_samples=200)  # N public
    msgs = _fit(make(epsilon=1.0, delta=1 / 150, random_state=0, **extra), X, y)
    assert any("at least 1/N" in m and "N = 200" in m for m in msgs), msgs
    # well below 1/N: no warning
    assert not _fit(make(epsilon=1.0, delta=1e-6, random_state=0, **extra), X, y)


def test_delta_warning_uses_the_released_count_under_add_remove():
    """Without a public n_samples, DP-SGD releases a noisy count; the check reads that
    released value (post-processing), not the private N."""
    X, y = _data(n=200)
    msgs = _fit(
        skdpgd.DPSGDClassifier(
            epsilon=1.0, delta=0.5, data_norm=1.0, classes=[0, 1], random_state=0
        ),
        X,
        y,
    )
    assert any("at least 1/N" in m for m in msgs)


def test_delta_warning_from_the_private_search():
    X, y = _data(n=200)
    search = skdpgd.PrivateRandomSearchCV(
        skdpgd.DPLogisticRegression(data_norm=1.0, classes=[0, 1]),
        {"alpha": [1e-2, 1e-1]},
        epsilon=2.0,
        delta=0.01,
        n_iter=2,
        random_state=0,
    )
    assert any("at least 1/N" in m for m in _fit(search, X, y))


# --- data_norm below the rows' norms: a verbose line ------------------------------------------
def _verbose_fit(X, y, seed=0, eps=1.0, **kw):
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        skdpgd.DPLogisticRegression(
            epsilon=eps, classes=[0, 1], random_state=seed, verbose=1, **kw
        ).fit(X, y)
    return buf.getvalue()


def test_data_norm_far_below_the_row_norms_is_noted():
    """Rows of norm ~20 with data_norm=1: every row is clipped; the released row-norm
    statistic (row_clip='auto') shows it in the verbose output, and no warning is given (the
    statistic cannot tell such rows from rows normalised to data_norm)."""
    X, y = _data(n=2000, scale=10.0)
    hits = sum(
        "nearly every row is at least data_norm" in _verbose_fit(X, y, seed, data_norm=1.0)
        for seed in range(5)
    )
    assert hits >= 3  # the release's noise can hide it on some seeds (84% each)
    assert not _fit(
        skdpgd.DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0),
        X,
        y,
    )


def test_rows_inside_data_norm_give_no_note():
    X, y = _data(n=2000, scale=0.2)  # rows of norm ~0.4 under data_norm=1
    for seed in range(5):
        assert "nearly every row" not in _verbose_fit(X, y, seed, data_norm=1.0)
    X, y = _data(n=50, scale=0.2)  # few rows: a noisy release, still no note
    for seed in range(10):
        assert "nearly every row" not in _verbose_fit(X, y, seed, eps=0.1, data_norm=1.0)


def test_no_note_when_data_norm_was_inferred():
    """data_norm=None reads the largest row norm (with a PrivacyLeakWarning): the note would
    only restate that."""
    X, y = _data(n=2000, scale=10.0)
    X[:, :] = X / np.linalg.norm(X, axis=1, keepdims=True)  # every row at the inferred bound
    assert "nearly every row" not in _verbose_fit(X, y, 0)


def test_row_norm_note_reads_only_the_release():
    from skdpgd._full_batch import road as _base

    assert "nearly every row" in _base.row_norm_note(0.97, 0.05, 1.0)
    assert _base.row_norm_note(0.97, 0.2, 1.0) is None  # too noisy to tell
    assert _base.row_norm_note(0.5, 0.0, 1.0) is None

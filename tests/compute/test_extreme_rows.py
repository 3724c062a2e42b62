"""Rows with entries near the float64 limit are clipped like any other row.

Every estimator and input kind: a fit on rows with entries of 1e300 (and 1.7e308, whose norm
itself overflows) equals the fit on the same rows clipped to ``data_norm`` beforehand, with
the same random_state, up to rounding. Before, the full-batch estimators' row norms
overflowed or the squared row scale underflowed, and such a row silently counted as zero.
"""

import importlib.util
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import skdpgd
from skdpgd._compute import backends as _backends
from skdpgd._compute import kernels as _kernels
from skdpgd._compute import kernels_sgd as _kernels_sgd
from skdpgd.schedules import Newton

R = 1.0
N, D = 300, 4


def _data(value):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, D)) / 2
    yc = (X[:, 0] + 0.3 * rng.normal(size=N) > 0).astype(int)
    yr = X[:, 0] + 0.1 * rng.normal(size=N)
    Xe = X.copy()
    Xe[:5] = np.sign(rng.normal(size=(5, D))) * rng.uniform(0.5, 1.0, size=(5, D)) * value
    # the same rows clipped to norm R beforehand (computed after dividing by the largest entry)
    m = np.max(np.abs(Xe), axis=1, keepdims=True)
    unit = Xe / m
    un = np.linalg.norm(unit, axis=1, keepdims=True)
    with np.errstate(over="ignore"):
        Xc = np.where(m * un > R, unit * (R / un), Xe)
    return Xe, Xc, yc, yr


CASES = [
    ("DPLogisticRegression", dict(classes=[0, 1]), "c"),
    ("DPLogisticRegression", dict(classes=[0, 1], schedule="hong"), "c"),
    ("DPLogisticRegression", dict(classes=[0, 1], schedule="output"), "c"),
    # Poisson-subsampled Hessians: the subsample is gathered from the pre-scaled rows
    ("DPLogisticRegression", dict(classes=[0, 1], schedule=Newton(hessian_rate=0.5)), "c"),
    ("DPLogisticRegression", dict(classes=[0, 1], row_clip="auto", n_samples=N), "c"),
    ("DPLogisticRegression", dict(classes=[0, 1, 2]), "c3"),
    ("DPRidge", dict(y_bound=2.0), "r"),
    ("DPRidge", dict(y_bound=2.0, schedule="uniform"), "r"),
    ("DPSGDClassifier", dict(classes=[0, 1], n_samples=N), "c"),
    ("DPSGDRegressor", dict(y_bound=2.0, n_samples=N), "r"),
]
KINDS = ["dense", "csr", "dask"]


def _convert(kind, A):
    if kind == "csr":
        return sp.csr_matrix(A)
    if kind == "dask":
        import dask.array as da

        return da.from_array(A, chunks=(100, D))
    return A


def _labels(target, yc, yr):
    if target == "c3":
        return yc + (yr > 0.5)
    return yc if target.startswith("c") else yr


# scikit-learn's finite check sums X; over 1.7e308 entries that sum overflows (expected)
@pytest.mark.filterwarnings("ignore:invalid value encountered in reduce:RuntimeWarning")
# 1e95: above the one pre-scaling threshold (2^300 ~ 2e90), below DP-SGD's former own (1e100)
@pytest.mark.parametrize("value", [1e95, 1e300, 1.7e308])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,params,target", CASES)
def test_extreme_rows_fit_as_their_clipped_selves(name, params, target, kind, value):
    cls = getattr(skdpgd, name)
    if kind == "dask":
        pytest.importorskip("dask")
        if name.startswith("DPSGD"):  # DP-SGD refuses dask collections (its own clear error)
            with pytest.raises(TypeError, match="dask"):
                cls(epsilon=1.0, data_norm=R, **params).fit(
                    _convert(kind, _data(value)[0]), _labels(target, *_data(value)[2:])
                )
            return
    Xe, Xc, yc, yr = _data(value)
    y = _labels(target, yc, yr)
    Xe0 = Xe.copy()
    kw = dict(epsilon=1.0, data_norm=R, random_state=0, **params)
    with warnings.catch_warnings():
        # no overflow on the way in the package's code (scikit-learn's own finite check may
        # warn while it sums 1.7e308 entries)
        warnings.filterwarnings("error", category=RuntimeWarning, module="skdpgd")
        extreme = cls(**kw).fit(_convert(kind, Xe), y)
    clipped = cls(**kw).fit(_convert(kind, Xc), y)
    np.testing.assert_array_equal(Xe, Xe0)  # the caller's X is not modified
    np.testing.assert_allclose(extreme.coef_, clipped.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(extreme.intercept_, clipped.intercept_, rtol=1e-8, atol=1e-10)
    # and the extreme rows did count: dropping them changes the model
    keep = np.arange(5, N)
    kw_drop = dict(kw, n_samples=N - 5) if "n_samples" in kw else kw
    dropped = cls(**kw_drop).fit(_convert(kind, Xc[keep]), y[keep])
    assert not np.allclose(dropped.coef_, clipped.coef_, rtol=1e-6, atol=1e-8)


def test_row_norms_without_overflow_or_underflow():
    X = np.array(
        [
            [1e300, -1e300, 3.0],
            [0.0, 0.0, 0.0],
            [3.0, 4.0, 0.0],
            [3e-200, 4e-200, 0.0],
            [1.7e308, 1.7e308, 0.0],
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        norms = _kernels.row_norms(X)
    np.testing.assert_allclose(norms[:4], [np.sqrt(2) * 1e300, 0.0, 5.0, 5e-200], rtol=1e-14)
    assert norms[4] == np.inf  # the true norm is above the float64 range


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_torch_gradient_norms_do_not_overflow_in_float32():
    """Per-example gradient norms of float32 gradients whose squares overflow float32 are
    computed in float64: such an example is clipped, not dropped."""
    import torch

    from skdpgd._network.torch_backend import clip_factors

    g = torch.tensor([[3e30, 4e30], [3.0, 4.0]], dtype=torch.float32)
    factors, norms = clip_factors({"w": g}, 1.0)
    np.testing.assert_allclose(norms.numpy(), [5e30, 5.0], rtol=1e-6)
    assert factors[0] > 0


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_mlp_clips_huge_rows_to_data_norm_and_refuses_a_bound_beyond_float32():
    """The network trains in float32: rows are clipped to the public data_norm first (huge
    rows fit like rows at the bound); a bound read from such rows, or one beyond float32,
    is refused with a clear error."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[:3] *= 1e300
    y = (X[:, 0] > 0).astype(int)
    kw = dict(epsilon=1.0, classes=[0, 1], hidden_layer_sizes=(4,), max_iter=2, random_state=0)
    model = skdpgd.DPMLPClassifier(data_norm=1.0, **kw).fit(X, y)
    assert all(np.isfinite(c).all() for c in model.coefs_)
    with pytest.raises(ValueError, match="float32"):
        skdpgd.DPMLPClassifier(data_norm=1e300, **kw).fit(X, y)
    with pytest.raises(ValueError, match="data_norm"), warnings.catch_warnings():
        warnings.simplefilter("ignore", skdpgd.PrivacyLeakWarning)
        skdpgd.DPMLPClassifier(**kw).fit(X, y)


# ---- the one pre-scaler (skdpgd._compute.backends.prescale_huge_rows) ----------------------


def _huge_rows():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    X[3] *= 1e300
    X[7] *= 1e95  # above PRESCALE_NORM = 2^300 ~ 2e90
    X[9] = [1.7e308, -1.7e308, 0.0]  # its norm overflows
    X[11] *= 1e80  # below: left alone
    return X


@pytest.mark.parametrize("kind", ["dense", "csr"])
def test_the_pre_scaler_divides_huge_rows_by_powers_of_two_in_a_copy(kind):
    X = _huge_rows()
    A = sp.csr_matrix(X) if kind == "csr" else X.copy()
    norms = _kernels_sgd.csr_row_norms(A.data, A.indptr) if kind == "csr" else _kernels.row_norms(A)
    before = A.copy()
    B, pre, unit = _backends.prescale_huge_rows(A, norms)
    dense = B.toarray() if kind == "csr" else B
    # the caller's X is untouched; the huge rows (and only they) are divided, exactly
    np.testing.assert_array_equal(A.toarray() if kind == "csr" else A, X)
    assert (before != A).nnz == 0 if kind == "csr" else np.array_equal(before, A)
    huge = [3, 7, 9]
    assert np.flatnonzero(pre != 1.0).tolist() == huge
    mantissa, _ = np.frexp(pre[huge])
    assert np.all(mantissa == 0.5)  # powers of two
    np.testing.assert_array_equal(dense[huge] * pre[huge, None], X[huge])
    largest = np.max(np.abs(dense[huge]), axis=1)
    assert np.all((largest >= 1.0) & (largest < 2.0))
    others = np.setdiff1d(np.arange(40), huge)
    np.testing.assert_array_equal(dense[others], X[others])
    np.testing.assert_allclose(unit, np.linalg.norm(dense, axis=1), rtol=1e-15)
    # the scale clips the stored row to the true row clipped to norm R
    for R in (0.5, 10.0):
        clipped = dense * _backends.clip_scales(unit, pre, R)[:, None]
        np.testing.assert_allclose(np.linalg.norm(clipped[huge], axis=1), R, rtol=1e-15)
        np.testing.assert_allclose(clipped[11], X[11] * (R / np.linalg.norm(X[11])), rtol=1e-15)
    # nothing huge: X itself comes back, nothing is copied
    small = X[others[others != 11]]
    same, pre1, unit1 = _backends.prescale_huge_rows(small, _kernels.row_norms(small))
    assert same is small and np.all(pre1 == 1.0)


def test_both_roads_use_the_one_pre_scaler(monkeypatch):
    calls = []
    real = _backends.prescale_huge_rows

    def spy(X, norms):
        out = real(X, norms)
        calls.append(int(np.sum(out[1] != 1.0)))
        return out

    monkeypatch.setattr(_backends, "prescale_huge_rows", spy)
    X, _, yc, _ = _data(1e95)
    skdpgd.DPLogisticRegression(epsilon=1.0, data_norm=R, classes=[0, 1], random_state=0).fit(X, yc)
    assert calls and calls[-1] == 5
    calls.clear()
    skdpgd.DPSGDClassifier(
        epsilon=1.0, data_norm=R, classes=[0, 1], n_samples=N, random_state=0
    ).fit(X, yc)
    assert calls == [5]


@pytest.mark.parametrize("kind", ["csr", "dask"])
@pytest.mark.parametrize("bound", [1.0, 10.0])
def test_subsampled_hessians_read_the_pre_scaled_rows(kind, bound):
    """A Poisson-subsampled Hessian gathers its rows from the pre-scaled copy with their own
    scale: the CSR and dask backends sum what the dense one sums. (Before, CSR gathered the
    rows as given with the scale of the divided ones, a term pre_i^2 times too large, and
    dask rebuilt the subsample without the power of two, clipping a huge row too short.)"""
    if kind == "dask":
        pytest.importorskip("dask")
        import dask.array as da

        from skdpgd._compute.dask_backend import DaskRows
    X = _huge_rows()
    y = np.where(np.arange(40) % 3 == 0, 1.0, -1.0)
    w = np.ones(40)
    coef, intercept = np.array([[0.3, -0.2, 0.1]]), np.array([0.05])
    dense = _backends.DenseRows(X, y, w, True)
    other = (
        _backends.CSRRows(sp.csr_matrix(X), y, w, True)
        if kind == "csr"
        else DaskRows(da.from_array(X, chunks=(15, 3)), y, w, True)
    )
    for rows in (dense, other):
        rows.clip_rows(bound, 1.0)
    sample = (11, 0.7)
    want = dense.hessian_sum(coef, intercept, _kernels.LOSS_LOGISTIC, sample=sample)
    got = other.hessian_sum(coef, intercept, _kernels.LOSS_LOGISTIC, sample=sample)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # each term's row is clipped to the bound: the sum is at most (bound^2 + 1) / 4 per row
    assert np.linalg.norm(got) <= 40 * (bound**2 + 1) / 4

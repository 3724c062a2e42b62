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
from skdpgd._compute import kernels as _kernels

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
@pytest.mark.parametrize("value", [1e300, 1.7e308])
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
def test_mlp_refuses_values_beyond_float32_with_a_clear_error():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[:3] *= 1e300
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="float32"):
        skdpgd.DPMLPClassifier(
            epsilon=1.0, classes=[0, 1], hidden_layer_sizes=(4,), max_iter=2, random_state=0
        ).fit(X, y)

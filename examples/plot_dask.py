"""
Data in chunks: a private fit on a dask array
=============================================

The full-batch estimators take a dask array (or dataframe) and compute every release as a
sum of per-chunk sums, so the rows never need to fit in memory at once; the noise is drawn on
the driver from the estimator's one generator. The fit is the in-memory fit up to the order
of summation. Needs ``pip install "skdpgd[dask]"``.
"""

import numpy as np

from skdpgd import DPLogisticRegression

rng = np.random.default_rng(0)
n, d = 100_000, 8
X = rng.normal(size=(n, d)) / (2 * np.sqrt(d))
X = X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))  # rows of norm <= 1
y = (X[:, 0] - X[:, 1] > 0).astype(int)

try:
    import dask.array as da
except ImportError:  # the docs build without the dask extra
    da = None
    print("dask is not installed: pip install 'skdpgd[dask]'")

if da is not None:
    Xd = da.from_array(X, chunks=(10_000, d))  # ten chunks of rows
    yd = da.from_array(y, chunks=10_000)
    kw = dict(epsilon=0.5, data_norm=1.0, classes=[0, 1], random_state=0)
    chunked = DPLogisticRegression(**kw).fit(Xd, yd)
    in_memory = DPLogisticRegression(**kw).fit(X, y)
    print(
        "largest coefficient difference, chunked vs in memory:",
        float(np.max(np.abs(chunked.coef_ - in_memory.coef_))),
    )
    print("accuracy:", in_memory.score(X, y), " epsilon spent:", chunked.epsilon_)
    # predictions on a dask array stay lazy until computed
    print("first predictions:", chunked.predict(Xd)[:5].compute())

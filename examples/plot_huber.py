"""
Robust private regression with DPHuberRegressor
===============================================

A few gross outliers in the targets pull a squared-loss fit away from the bulk of the data;
the Huber loss caps each example's pull at a threshold. Under differential privacy the cap
does one more job: one example's gradient is bounded whatever its target, so
:class:`skdpgd.DPHuberRegressor` needs no range of the targets for its noise (the public
``scale``, a guess of the residuals' size, and ``huber_threshold`` set the bound).
:class:`skdpgd.DPRidge` must clip the targets to a public range instead. Synthetic data: a
linear rule with small noise and 5% of the targets replaced by values 20 times larger;
scores on clean test targets, median of 3 seeds.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import HuberRegressor

from skdpgd import DPHuberRegressor, DPRidge

rng = np.random.default_rng(0)
d, n = 5, 4000
w = rng.normal(size=d)


def sample(n, outliers):
    X = rng.uniform(-1, 1, size=(n, d)) / np.sqrt(d)  # rows of norm <= 1 by construction
    y = X @ w + 0.1 * rng.normal(size=n)
    if outliers:
        bad = rng.random(n) < 0.05
        y[bad] = 20.0 * rng.choice([-1.0, 1.0], size=bad.sum())
    return X, y


X_test, y_test = sample(5000, outliers=False)
epsilons = [0.3, 1.0, 3.0, 10.0]
huber, ridge = [], []
for eps in epsilons:
    h, r = [], []
    for seed in range(3):
        X, y = sample(n, outliers=True)
        h.append(
            DPHuberRegressor(
                epsilon=eps, data_norm=1.0, scale=0.1, y_bound=(-20, 20), random_state=seed
            )
            .fit(X, y)
            .score(X_test, y_test)
        )
        r.append(
            DPRidge(epsilon=eps, data_norm=1.0, y_bound=(-20, 20), random_state=seed)
            .fit(X, y)
            .score(X_test, y_test)
        )
    huber.append(np.median(h))
    ridge.append(np.median(r))
    print(f"epsilon={eps:5}: R^2 DPHuberRegressor {huber[-1]:.3f}, DPRidge {ridge[-1]:.3f}")

X, y = sample(n, outliers=True)
baseline = HuberRegressor().fit(X, y).score(X_test, y_test)
print(f"non-private HuberRegressor: R^2 {baseline:.3f}")

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.semilogx(epsilons, huber, "o-", label="DPHuberRegressor")
ax.semilogx(epsilons, ridge, "s-", label="DPRidge")
ax.axhline(baseline, color="k", ls="--", label="HuberRegressor (non-private)")
ax.set_xlabel("epsilon")
ax.set_ylabel("test R^2 (clean targets)")
ax.legend()
fig.tight_layout()

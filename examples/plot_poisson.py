"""
Private count regression with DPPoissonRegressor
================================================

:class:`skdpgd.DPPoissonRegressor` fits a Poisson regression (log link) to counts. The
derivative of its loss, ``exp(x . w + b) - y``, has no bound, so each example's gradient is
clipped to a norm set by the public bound ``y_bound`` on the counts (counts above it are
clipped too). Synthetic data: visits per patient, a log-linear rule in 4 features, counts
bounded by 30; scores are D^2 (the share of the Poisson deviance explained, as
:class:`~sklearn.linear_model.PoissonRegressor`'s ``score``) on test rows, median of 3 seeds.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import PoissonRegressor

from skdpgd import DPPoissonRegressor

rng = np.random.default_rng(0)
d = 4
w = np.array([1.0, -0.8, 0.5, 0.0])


def sample(n):
    X = rng.uniform(-1, 1, size=(n, d)) / np.sqrt(d)  # rows of norm <= 1 by construction
    return X, np.minimum(rng.poisson(np.exp(X @ w + 1.5)), 30)


X_test, y_test = sample(5000)
sizes = [1000, 10000]
epsilons = [0.3, 1.0, 3.0, 10.0]
fig, ax = plt.subplots(figsize=(5, 3.5))
for n in sizes:
    scores = []
    for eps in epsilons:
        s = [
            DPPoissonRegressor(epsilon=eps, data_norm=1.0, y_bound=30, random_state=seed)
            .fit(*sample(n))
            .score(X_test, y_test)
            for seed in range(3)
        ]
        scores.append(np.median(s))
        print(f"N={n:6}, epsilon={eps:5}: D^2 {scores[-1]:.3f}")
    ax.semilogx(epsilons, scores, "o-", label=f"DPPoissonRegressor, N={n}")

baseline = PoissonRegressor(alpha=1e-4).fit(*sample(10000)).score(X_test, y_test)
print(f"non-private PoissonRegressor: D^2 {baseline:.3f}")
ax.axhline(baseline, color="k", ls="--", label="PoissonRegressor (non-private)")
ax.set_xlabel("epsilon")
ax.set_ylabel("test D^2")
ax.legend()
fig.tight_layout()

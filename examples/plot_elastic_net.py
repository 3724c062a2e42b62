"""
Sparse private regression with DPElasticNet
===========================================

:class:`skdpgd.DPElasticNet` fits the squared loss with scikit-learn's elastic-net penalty
``alpha * l1_ratio * ||w||_1 + 0.5 * alpha * (1 - l1_ratio) * ||w||^2`` by proximal noisy
gradient descent: each step releases a noisy clipped gradient sum (the same release as
:class:`skdpgd.DPRidge`'s gradient descent) and then soft-thresholds the weights, which is
post-processing and costs no privacy. Synthetic data: 30 features, 5 of them used by the
true rule; test R^2 and the number of the 25 unused features whose weight is exactly 0,
median of 3 seeds. With ``alpha='auto'`` the L1 part is ``l1_ratio / N`` (what remains
without noise) and the penalty the noise calls for is L2, so the fit tracks DPRidge's
accuracy (measured: R^2 0.62 vs 0.67 at epsilon 3, 0.88 vs 0.89 at 10) and sets no weight to
exactly 0. A strong penalty chosen from public knowledge (here alpha 0.01, l1_ratio 0.9)
sets some unused weights to 0 (about a third at epsilon 1-10, two thirds at 100), at the
bias the non-private ElasticNet with the same penalty has too (R^2 0.66).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import ElasticNet

from skdpgd import DPElasticNet, DPRidge

rng = np.random.default_rng(0)
d, n, used = 30, 5000, 5
w = np.zeros(d)
w[:used] = rng.choice([-1.0, 1.0], size=used) * rng.uniform(1.0, 2.0, size=used)


def sample(n):
    X = rng.uniform(-1, 1, size=(n, d)) / np.sqrt(d)  # rows of norm <= 1 by construction
    return X, X @ w + 0.1 * rng.normal(size=n)


X_test, y_test = sample(5000)
models = {
    "DPElasticNet(alpha='auto')": lambda eps, s: DPElasticNet(
        epsilon=eps, data_norm=1.0, y_bound=(-4, 4), random_state=s
    ),
    "DPElasticNet(alpha=0.01, l1_ratio=0.9)": lambda eps, s: DPElasticNet(
        epsilon=eps, alpha=0.01, l1_ratio=0.9, data_norm=1.0, y_bound=(-4, 4), random_state=s
    ),
    "DPRidge": lambda eps, s: DPRidge(epsilon=eps, data_norm=1.0, y_bound=(-4, 4), random_state=s),
}
epsilons = [1.0, 3.0, 10.0, 100.0]
scores = {name: [] for name in models}
for eps in epsilons:
    line = []
    for name, make in models.items():
        r2, zeros = [], []
        for seed in range(3):
            X, y = sample(n)
            est = make(eps, seed).fit(X, y)
            r2.append(est.score(X_test, y_test))
            zeros.append(int(np.sum(est.coef_[used:] == 0.0)))
        scores[name].append(np.median(r2))
        line.append(f"{name}: R^2 {np.median(r2):.3f}, zeros {int(np.median(zeros))}/{d - used}")
    print(f"epsilon={eps:5}: " + "; ".join(line))

X, y = sample(n)
sk = ElasticNet(alpha=0.01, l1_ratio=0.9).fit(X, y)
print(
    f"non-private ElasticNet(alpha=0.01, l1_ratio=0.9): R^2 {sk.score(X_test, y_test):.3f}, "
    f"zeros {int(np.sum(sk.coef_[used:] == 0.0))}/{d - used}"
)

fig, ax = plt.subplots(figsize=(5.5, 3.5))
for (name, values), marker in zip(scores.items(), "o^s"):
    ax.semilogx(epsilons, values, marker + "-", label=name)
ax.axhline(sk.score(X_test, y_test), color="k", ls="--", label="ElasticNet (non-private)")
ax.set_xlabel("epsilon")
ax.set_ylabel("test R^2")
ax.legend(fontsize=8)
fig.tight_layout()

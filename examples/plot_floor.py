"""
When does a private model leave the floor?
==========================================

At a small epsilon the noise drowns the signal: the private model points in a random direction
and does no better than predicting the majority class (the *floor*; by chance it can do
worse); at a large one it approaches the non-private
model (the *ceiling*). Where it leaves the floor depends on the number of rows N: the noise
on an average over N rows shrinks as 1/N, so ten times the rows buys about the same accuracy
at a tenth of the epsilon. Synthetic data (a noisy linear rule in 10 features), test accuracy
median of 3 seeds.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression

from skdpgd import DPLogisticRegression

rng = np.random.default_rng(0)
d = 10
w = rng.normal(size=d)


def sample(n):
    X = rng.normal(size=(n, d)) / (2 * np.sqrt(d))
    X = X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))  # rows of norm <= 1
    y = (X @ w + 0.05 * rng.normal(size=n) > 0).astype(int)
    return X, y


X_test, y_test = sample(5000)
floor = max(y_test.mean(), 1 - y_test.mean())
epsilons = np.geomspace(0.01, 10, 9)
fig, ax = plt.subplots(figsize=(6.5, 4))
for n in [100, 1000, 10_000]:
    X, y = sample(n)
    acc = [
        np.median(
            [
                DPLogisticRegression(epsilon=e, data_norm=1.0, classes=[0, 1], random_state=s)
                .fit(X, y)
                .score(X_test, y_test)
                for s in range(3)
            ]
        )
        for e in epsilons
    ]
    ceiling = LogisticRegression().fit(X, y).score(X_test, y_test)
    (line,) = ax.plot(epsilons, acc, "o-", label=f"N = {n}")
    ax.axhline(ceiling, color=line.get_color(), ls=":", lw=1)
    print(f"N={n:>6}: " + "  ".join(f"{a:.3f}" for a in acc) + f"   (non-private {ceiling:.3f})")
ax.axhline(floor, color="k", ls="--", label="floor (majority class)")
ax.set_xscale("log")
ax.set_xlabel("epsilon")
ax.set_ylabel("test accuracy")
ax.set_title("dotted: non-private model on the same N rows")
ax.legend(fontsize=8)
plt.tight_layout()

"""
Noise schedules compared
========================

A full-batch fit spends its budget over several noisy releases; the *schedule* decides how
the noise is spread over them (the accountant then scales it so that the whole fit spends
exactly epsilon). ``schedule='auto'`` (the default) picks one from public constants only.
Here each schedule is forced on the same data over a range of epsilons (test accuracy,
median of 3 seeds).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from skdpgd import DPLogisticRegression
from skdpgd.preprocessing import BoundedScaler

X, y = load_digits(return_X_y=True)
y = (y >= 5).astype(int)  # a binary task: digits 0-4 against 5-9
# public scaling: pixels are 0..16 by construction; BoundedScaler reads nothing from the rows,
# and dividing by sqrt(64) = 8 bounds every row's norm by 1 (data_norm=1)
X = BoundedScaler(bounds=(0, 16)).fit_transform(X) / 8.0
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)

epsilons = [0.1, 0.3, 1.0, 3.0, 10.0]
schedules = {
    "auto": "picked from public constants",
    "newton": "DP damped Newton",
    "hong": "GD, noise shrinking over steps",
    "uniform": "GD, constant noise",
    "pur": "GD until the budget is spent",
    "output": "output perturbation",
}
fig, ax = plt.subplots(figsize=(6.5, 4))
for name, words in schedules.items():
    acc = []
    for eps in epsilons:
        scores = [
            DPLogisticRegression(
                epsilon=eps, data_norm=1.0, classes=[0, 1], schedule=name, random_state=s
            )
            .fit(X_train, y_train)
            .score(X_test, y_test)
            for s in range(3)
        ]
        acc.append(np.median(scores))
    print(f"{name:>8}: " + "  ".join(f"{a:.3f}" for a in acc))
    ax.plot(epsilons, acc, "o-", label=f"{name} ({words})", lw=2.5 if name == "auto" else 1)
ref = LogisticRegression().fit(X_train, y_train).score(X_test, y_test)
ax.axhline(ref, color="k", ls="--", label="non-private")
ax.set_xscale("log")
ax.set_xlabel("epsilon")
ax.set_ylabel("test accuracy")
ax.legend(fontsize=7)
plt.tight_layout()

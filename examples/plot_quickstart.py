"""
Quick start: a private logistic regression in a pipeline
========================================================

Fit :class:`skdpgd.DPLogisticRegression` on the breast-cancer data at a few privacy budgets
and compare it with scikit-learn's non-private ``LogisticRegression``. Every bound that shapes
the noise is public: the rows are scaled to norm 1 (``data_norm=1``) and the class list is
given (``classes``).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer, StandardScaler

from skdpgd import DPLogisticRegression

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)

epsilons = [0.1, 0.3, 1.0, 3.0, 10.0]
scores = []
for eps in epsilons:
    clf = make_pipeline(StandardScaler(), Normalizer(),
                        DPLogisticRegression(epsilon=eps, data_norm=1.0, classes=[0, 1],
                                             random_state=0))
    clf.fit(X_train, y_train)
    scores.append(clf.score(X_test, y_test))
    dp = clf[-1]
    print(f"epsilon={eps:5}: accuracy {scores[-1]:.3f}, spent epsilon_={dp.epsilon_:.3f}, "
          f"mechanism {dp.mechanism_} ({dp.schedule_}), {dp.n_iter_} steps")

baseline = make_pipeline(StandardScaler(), Normalizer(), LogisticRegression())
baseline.fit(X_train, y_train)

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.semilogx(epsilons, scores, "o-", label="DPLogisticRegression")
ax.axhline(baseline.score(X_test, y_test), color="k", ls="--", label="non-private")
ax.set_xlabel("epsilon")
ax.set_ylabel("test accuracy")
ax.legend()
fig.tight_layout()

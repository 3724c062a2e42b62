"""
Several fits under one privacy budget
=====================================

A :class:`skdpgd.PrivacyBudget` composes the releases of several fits exactly (Gaussian
DP while every fit is full batch) and refuses a fit that would overspend, before anything is
computed. Each release is charged by its own sensitivity under the budget's neighbouring
relation.
"""

import numpy as np
from sklearn.datasets import load_diabetes

from skdpgd import BudgetExceededError, DPRidge, PrivacyBudget

X, y = load_diabetes(return_X_y=True)
X = X / np.linalg.norm(X, axis=1).max()  # (a real deployment would use public ranges)
y = y / 400.0  # targets in [-1, 1] by the data set's documented range

budget = PrivacyBudget(epsilon=2.0, delta=1e-6, neighbouring="replace")
for eps in [1.0, 0.5, 0.5, 0.5]:
    reg = DPRidge(epsilon=eps, delta=1e-6, data_norm=1.0, y_bound=1.0, random_state=0,
                  budget=budget)
    try:
        reg.fit(X, y)
        print(f"fit at epsilon={eps}: R^2 {reg.score(X, y):.3f}; budget spent "
              f"{budget.spent_epsilon():.3f} of 2.0")
    except BudgetExceededError as exc:
        print(f"refused: {exc}")

for label, z, q in budget.charges:
    print(f"{label}: {len(z)} release(s), sampling rate {q}")

"""
Several fits under one privacy budget, and a refusal
====================================================

A :class:`skdpgd.PrivacyBudget` composes the releases of several fits exactly (Gaussian
DP while every fit is full batch) and refuses a fit that would overspend, *before* anything
is computed: a refused fit releases nothing and leaves the estimator unfitted. Each release is
charged by its own sensitivity under the budget's neighbouring relation.

The data: 20,000 rows of a linear model with noise, rows scaled by a public bound on their
norm, targets by a public bound on their size.
"""

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split

from skdpgd import BudgetExceededError, DPRidge, PrivacyBudget, privacy_report

rng = np.random.default_rng(0)
n, d = 20_000, 5
X = rng.uniform(-1, 1, size=(n, d)) / np.sqrt(d)  # |x_ij| <= 1/sqrt(d): row norms <= 1
w = rng.normal(size=d)
y = X @ w + 0.1 * rng.normal(size=n)
y = np.clip(y / 3.0, -1, 1)  # public target bound: |y| <= 1
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
plain = Ridge(alpha=1e-3).fit(X_train, y_train)
print(f"non-private Ridge: test R^2 {plain.score(X_test, y_test):.3f}")

budget = PrivacyBudget(epsilon=1.5, delta=1e-6, neighbouring="replace")
for seed, eps in enumerate([1.0, 0.5, 0.5, 1.0]):
    reg = DPRidge(
        epsilon=eps, delta=1e-6, data_norm=1.0, y_bound=1.0, random_state=seed, budget=budget
    )
    try:
        reg.fit(X_train, y_train)
        print(
            f"fit at epsilon={eps}: test R^2 {reg.score(X_test, y_test):.3f}; budget spent "
            f"{budget.spent_epsilon():.3f} of {budget.epsilon}"
        )
    except BudgetExceededError as exc:
        print(f"refused at epsilon={eps}: {exc}")
        print("fitted after the refusal?", hasattr(reg, "coef_"))

# %%
# What is left can still be spent: ``remaining_epsilon`` gives the largest epsilon a further
# full-batch fit may be given. (Gaussian DP composes more tightly than adding epsilons:
# 1.0 and 0.5 together cost less than 1.5.)
left = budget.remaining_epsilon()
reg = DPRidge(
    epsilon=left, delta=1e-6, data_norm=1.0, y_bound=1.0, random_state=4, budget=budget
).fit(X_train, y_train)
print(
    f"last fit at epsilon={left:.3f}: test R^2 {reg.score(X_test, y_test):.3f}; "
    f"spent {budget.spent_epsilon():.4f} of {budget.epsilon}"
)

# %%
# The budget's ledger, as a table (see :func:`skdpgd.privacy_report`).
print(privacy_report(budget))

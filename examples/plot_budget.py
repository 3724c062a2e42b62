"""
Several fits under one privacy budget
=====================================

A :class:`skdpgd.PrivacyBudget` composes the releases of several fits exactly (Gaussian
DP while every fit is full batch) and refuses a fit that would overspend, before anything is
computed. Each release is charged by its own sensitivity under the budget's neighbouring
relation.
"""

from sklearn.datasets import load_diabetes

from skdpgd import BudgetExceededError, DPRidge, PrivacyBudget
from skdpgd.preprocessing import schema_transformer

data = load_diabetes(scaled=False, as_frame=True)
# public codebook (clinical ranges, not read from the rows): rows of norm <= 1, nothing learnt
codebook = {"age": (0, 100), "sex": [1, 2], "bmi": (10, 60), "bp": (40, 160), "s1": (50, 400),
            "s2": (0, 300), "s3": (0, 120), "s4": (0, 12), "s5": (3, 7), "s6": (40, 200)}
X = schema_transformer(codebook).fit_transform(data.data)
y = (data.target.to_numpy() - 200.0) / 200.0  # in [-1, 1]: the documented range is 0..400

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

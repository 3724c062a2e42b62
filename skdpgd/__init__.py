"""skdpgd: differentially private gradient descent for scikit-learn.

Estimators fit convex models with noise schedules calibrated exactly to an (epsilon, delta)
budget. See ``skdpgd.accounting`` for the privacy arithmetic and ``skdpgd.schedules`` for
the schedules.
"""

from .exceptions import BudgetExceededError, PrivacyLeakWarning
from .linear_model import DPLogisticRegression, DPRidge

__version__ = "0.1.0"

__all__ = [
    "DPLogisticRegression",
    "DPRidge",
    "PrivacyLeakWarning",
    "BudgetExceededError",
    "__version__",
]

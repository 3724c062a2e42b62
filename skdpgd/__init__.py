"""skdpgd: differentially private gradient descent for scikit-learn.

Estimators fit convex models with noise schedules calibrated exactly to an (epsilon, delta)
budget. See ``skdpgd.accounting`` for the privacy arithmetic and ``skdpgd.schedules`` for
the schedules.
"""

from .exceptions import BudgetExceededError, PrivacyLeakWarning
from .budget import PrivacyBudget
from .linear_model import DPLogisticRegression, DPRidge
from .neural import DPMLPClassifier  # torch is imported only inside fit
from .sgd import DPSGDClassifier, DPSGDRegressor

__version__ = "0.1.0"

__all__ = [
    "DPLogisticRegression",
    "DPRidge",
    "DPMLPClassifier",
    "DPSGDClassifier",
    "DPSGDRegressor",
    "PrivacyBudget",
    "PrivacyLeakWarning",
    "BudgetExceededError",
    "__version__",
]

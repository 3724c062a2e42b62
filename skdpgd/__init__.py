"""skdpgd: differentially private gradient descent for scikit-learn.

Estimators fit convex models with noise schedules calibrated exactly to an (epsilon, delta)
budget. See ``skdpgd.accounting`` for the privacy arithmetic and ``skdpgd.schedules`` for
the schedules.
"""

from ._config import config_context, get_config, set_config
from .exceptions import BudgetExceededError, PrivacyLeakWarning, PrivacyUsageWarning
from ._core.importance_mask import ImportanceMask
from .budget import PrivacyBudget
from .linear_model import (
    DPElasticNet,
    DPHuberRegressor,
    DPLogisticRegression,
    DPPoissonRegressor,
    DPRidge,
    DPTweedieRegressor,
)
from .neural import DPMLPClassifier  # torch is imported only inside fit
from .sgd import DPSGDClassifier, DPSGDRegressor
from .svm import DPLinearSVC
from .report import privacy_report

__version__ = "0.1.0"


def __getattr__(name):
    # skdpgd.model_selection imports sklearn.model_selection (~0.06 s): only when asked for
    if name == "PrivateRandomSearchCV":
        from .model_selection import PrivateRandomSearchCV

        return PrivateRandomSearchCV
    raise AttributeError(f"module 'skdpgd' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"PrivateRandomSearchCV"})


__all__ = [
    "DPLogisticRegression",
    "DPRidge",
    "DPElasticNet",
    "DPHuberRegressor",
    "DPPoissonRegressor",
    "DPTweedieRegressor",
    "DPLinearSVC",
    "DPMLPClassifier",
    "DPSGDClassifier",
    "DPSGDRegressor",
    "ImportanceMask",
    "PrivacyBudget",
    "privacy_report",
    "PrivateRandomSearchCV",
    "PrivacyLeakWarning",
    "PrivacyUsageWarning",
    "BudgetExceededError",
    "config_context",
    "get_config",
    "set_config",
    "__version__",
]

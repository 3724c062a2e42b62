"""Differentially private linear models fitted by full-batch noisy gradient descent.

One module per estimator; what they share (validation, the call into the full-batch road,
the fitted attributes, prediction) lives in :mod:`skdpgd.linear_model._base`.
"""

from ._elastic_net import DPElasticNet
from ._huber import DPHuberRegressor
from ._logistic import DPLogisticRegression
from ._poisson import DPPoissonRegressor
from ._ridge import DPRidge
from ._tweedie import DPTweedieRegressor

__all__ = [
    "DPLogisticRegression",
    "DPRidge",
    "DPElasticNet",
    "DPHuberRegressor",
    "DPPoissonRegressor",
    "DPTweedieRegressor",
]

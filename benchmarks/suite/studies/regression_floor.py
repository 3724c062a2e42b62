"""The regressors' floor: the accounted choice between the fit and the intercept-only model
(``policy.AUTO_REGRESSION_SELECT``), as ``module:callable`` factories for ``run.py``.

Each factory builds a ``DPRidge`` (only ``epsilon``, ``data_norm``, ``y_bound`` and the seed
given) whose ``fit`` runs with the rule replaced (:class:`benchmarks.suite.methods.UnderPolicy`),
or a ``DPRidge`` with a fixed mechanism (the self-oracle's candidates). Example (the
design-half table of ``AUTO_REGRESSION_SELECT`` in ``benchmarks/DECISIONS.md``)::

    M=benchmarks.suite.studies.regression_floor
    python -m benchmarks.suite.run --task regression --half design --protocol a,b \\
        --eps 0.1,0.3,1,3,10 --seeds 5 --out benchmarks/out/suite/regression_floor.csv \\
        --methods DPRidge,majority,$M:sel_off,$M:sel_t15,$M:sel_t25,$M:fixed_ssp,\\
$M:fixed_uniform,$M:fixed_output

Candidates are chosen on the design half only (benchmarks/suite/split.py).
"""

import math


from ..methods import UnderPolicy
from .ridge_candidates import _patched  # DPRidge with policy changes or parameters


# the rule (s, target share, selection share); (300, 0.05, 0.05) is the default
sel_off = _patched("sel_off", {"AUTO_REGRESSION_SELECT": None})
sel_t15 = _patched("sel_t15", {"AUTO_REGRESSION_SELECT": (300.0, 0.15, 0.05)})
sel_t25 = _patched("sel_t25", {"AUTO_REGRESSION_SELECT": (300.0, 0.25, 0.05)})
sel_inf = _patched("sel_inf", {"AUTO_REGRESSION_SELECT": (math.inf, 0.05, 0.05)})
# the package's fixed mechanisms (no selection)
fixed_ssp = _patched("fixed_ssp", schedule="ssp")
fixed_uniform = _patched("fixed_uniform", schedule="uniform")
fixed_output = _patched("fixed_output", schedule="output")
# the target share raised at low ratios: max(0.05, min(0.3, c / ratio))
tr3 = _patched("tr3", {"AUTO_REGRESSION_TARGET_RATIO": 3.0})
tr10 = _patched("tr10", {"AUTO_REGRESSION_TARGET_RATIO": 10.0})
tr30 = _patched("tr30", {"AUTO_REGRESSION_TARGET_RATIO": 30.0})
tr10_s10 = _patched(
    "tr10_s10",
    {"AUTO_REGRESSION_TARGET_RATIO": 10.0, "AUTO_REGRESSION_SELECT": (300.0, 0.05, 0.1)},
)
# lower caps on the raised share, and a smaller selection share
tr3_c15 = _patched(
    "tr3_c15", {"AUTO_REGRESSION_TARGET_RATIO": 3.0, "AUTO_REGRESSION_TARGET_MAX_SHARE": 0.15}
)
tr1 = _patched("tr1", {"AUTO_REGRESSION_TARGET_RATIO": 1.0})
tr3_s3 = _patched(
    "tr3_s3",
    {"AUTO_REGRESSION_TARGET_RATIO": 3.0, "AUTO_REGRESSION_SELECT": (300.0, 0.05, 0.03)},
)
tr3_r30 = _patched(
    "tr3_r30",
    {"AUTO_REGRESSION_TARGET_RATIO": 3.0, "AUTO_REGRESSION_SELECT": (30.0, 0.05, 0.05)},
)


def _sgd(name, constants=None):
    constants = dict(constants or {})

    def factory(ctx):
        from skdpgd import DPSGDRegressor

        if ctx.task != "regression":
            return None
        est = DPSGDRegressor(
            epsilon=ctx.epsilon, data_norm=ctx.data_norm, y_bound=ctx.y_bound, random_state=ctx.seed
        )
        return UnderPolicy(est, constants)

    factory.suite_name = name
    return factory


# DPSGDRegressor: the floor as shipped for the full-batch regressors, off, and with a flat share
# (policy.SGD_REGRESSION_SELECT; the full-batch rule's values)
_ON = {"SGD_REGRESSION_SELECT": (300.0, 0.05, 0.05)}
sgd_floor = _sgd("sgd_floor", _ON)
sgd_off = _sgd("sgd_off")
sgd_flat = _sgd("sgd_flat", dict(_ON, AUTO_REGRESSION_TARGET_RATIO=0.0))
sgd_r30 = _sgd("sgd_r30", {"SGD_REGRESSION_SELECT": (30.0, 0.05, 0.05)})

"""DPRidge candidates (the sufficient statistics' share and floor, the SSP threshold), as
``module:callable`` factories for ``run.py``.

Each factory builds a ``DPRidge`` (only ``epsilon``, ``data_norm``, ``y_bound`` and the seed
given) whose ``fit`` runs with some public constants of :mod:`skdpgd.policy` replaced
(:class:`benchmarks.suite.methods.UnderPolicy`), or a ``DPRidge`` with other parameters.
Example (the tuning-sets table of
``AUTO_SSP_SHARE`` in ``benchmarks/DECISIONS.md``)::

    python -m benchmarks.suite.run --task regression --half design --protocol a,b \\
        --eps 0.01,0.1,0.3,1,3 --seeds 3 --out /tmp/ridge.csv --methods \\
        DPRidge,naive,benchmarks.suite.studies.ridge_candidates:ssp_old,benchmarks.suite.studies.ridge_candidates:sh7k05

Candidates are chosen on the design half only (benchmarks/suite/split.py).
"""

from skdpgd import DPRidge

from ..methods import UnderPolicy


def _patched(name, constants=None, **params):
    constants = dict(constants or {})

    def factory(ctx):
        if ctx.task != "regression":
            return None
        est = DPRidge(
            epsilon=ctx.epsilon,
            data_norm=ctx.data_norm,
            y_bound=ctx.y_bound,
            random_state=ctx.seed,
            **params,
        )
        return UnderPolicy(est, constants)

    factory.suite_name = name
    return factory


# (X'y share, eigenvalue floor) of the sufficient statistics; (0.6, 0.75) is the default
ssp_old = _patched("ssp_old", {"AUTO_SSP_SHARE": 0.5, "SSP_FLOOR": 1.0})
sh7k05 = _patched("sh7k05", {"AUTO_SSP_SHARE": 0.7, "SSP_FLOOR": 0.5})
sh7 = _patched("sh7", {"AUTO_SSP_SHARE": 0.7, "SSP_FLOOR": 1.0})
k05 = _patched("k05", {"AUTO_SSP_SHARE": 0.5, "SSP_FLOOR": 0.5})
# the SSP threshold on N mu / sqrt(D) and the consistent penalty's factor
thr40 = _patched("thr40", {"AUTO_SECOND_ORDER_MIN_SNR": 40.0})
thr10 = _patched("thr10", {"AUTO_SECOND_ORDER_MIN_SNR": 10.0})
ssp_always = _patched("ssp_always", {"AUTO_SECOND_ORDER_MIN_SNR": 0.0})
pen05 = _patched("pen05", {"AUTO_ALPHA_NOISE_SQUARED": 0.5})
pen2 = _patched("pen2", {"AUTO_ALPHA_NOISE_SQUARED": 2.0})
# other mechanisms / parameters
u30 = _patched("u30", schedule="uniform", max_iter=30)
u100 = _patched("u100", schedule="uniform", max_iter=100)
u300 = _patched("u300", schedule="uniform", max_iter=300)
hong = _patched("hong", schedule="hong")
rauto = _patched("rauto", row_clip="auto")

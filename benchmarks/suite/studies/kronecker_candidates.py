"""Candidates for the Kronecker-factored Newton of multinomial fits (when ``schedule='auto'``
runs it, and its budget shares), as ``module:callable`` factories for ``run.py``.

Each factory builds the default ``DPLogisticRegression`` (only ``epsilon``, ``data_norm`` and
the seed given) whose ``fit`` runs with some constants of :mod:`skdpgd.policy` replaced
(:class:`benchmarks.suite.methods.UnderPolicy`). Only multiclass fits with more than
``AUTO_SECOND_ORDER_MAX_PARAMS`` coefficients are affected, so the factories return None for
two-class sets. Example (the table of ``AUTO_KRONECKER_MIN_SNR`` in
``benchmarks/DECISIONS.md``)::

    python -m benchmarks.suite.run --task classification --half design --protocol a,b \\
        --eps 0.1,0.3,1,3,10,1e6 --seeds 5 --sets digits,bundesliga --out kron.csv --methods \\
        skdpgd,majority,benchmarks.suite.studies.kronecker_candidates:kron_snr100,...

Candidates are chosen on the design half only (benchmarks/suite/split.py).
"""

from skdpgd import DPLogisticRegression

from ..methods import UnderPolicy


def _patched(name, constants):
    constants = dict(constants)

    def factory(ctx):
        if ctx.task != "classification" or (ctx.n_classes or 2) < 3:
            return None
        est = DPLogisticRegression(
            epsilon=ctx.epsilon, data_norm=ctx.data_norm, random_state=ctx.seed
        )
        return UnderPolicy(est, constants)

    factory.suite_name = name
    return factory


# where 'auto' starts running it (s = N mu / sqrt(D)); the shipped default is in policy.py
kron_snr20 = _patched("kron_snr20", {"AUTO_KRONECKER_MIN_SNR": 20.0})
kron_snr100 = _patched("kron_snr100", {"AUTO_KRONECKER_MIN_SNR": 100.0})
kron_snr300 = _patched("kron_snr300", {"AUTO_KRONECKER_MIN_SNR": 300.0})
kron_never = _patched("kron_never", {"AUTO_KRONECKER_MIN_SNR": float("inf")})
# the gradients' share of mu^2 (the class factors keep 5%, X'X the rest)
kron_share6 = _patched("kron_share6", {"AUTO_KRONECKER_MIN_SNR": 20.0, "AUTO_KRONECKER_SHARE": 0.6})
kron_share9 = _patched("kron_share9", {"AUTO_KRONECKER_MIN_SNR": 20.0, "AUTO_KRONECKER_SHARE": 0.9})

"""Candidates for binary DP-SGD below the prior switch's ratio (``policy.SGD_BINARY_SELECT``), as
``module:callable`` factories for ``run.py``.

Each factory builds the default ``DPSGDClassifier`` (only ``epsilon``, ``data_norm`` and the
seed given) whose ``fit`` runs with ``SGD_BINARY_SELECT`` replaced
(:class:`benchmarks.suite.methods.UnderPolicy`). Only binary fits below the switch's ratio are
affected, so the factories return None for sets with more classes. The table of
``SGD_BINARY_SELECT`` in ``benchmarks/DECISIONS.md``::

    python -m benchmarks.suite.run --task classification --half design --protocol a,b \\
        --eps 0.01,0.03,0.1,0.3,1 --seeds 10 --out sgd_binary.csv \\
        --sets anes96,turnout,nwtco,aids2,rwm5yr,digits_3v8,digits_4v9,biopsy,crabs \\
        --methods majority,benchmarks.suite.studies.sgd_binary_candidates:sgd_public,...

("before" is the same command with ``--methods DPSGDClassifier,majority`` on the commit before
the rule.) Candidates are chosen on the design half only (benchmarks/suite/split.py).
"""

from skdpgd import DPSGDClassifier

from ..methods import UnderPolicy


def _patched(name, rule):
    def factory(ctx):
        if ctx.task != "classification" or (ctx.n_classes or 2) != 2:
            return None
        est = DPSGDClassifier(epsilon=ctx.epsilon, data_norm=ctx.data_norm, random_state=ctx.seed)
        return UnderPolicy(est, {"SGD_BINARY_SELECT": rule})

    factory.suite_name = name
    return factory


# (A): below the ratio the whole budget on the class counts, decided before any draw
sgd_public = _patched("sgd_public", None)
# (B): the counts (5%), DP-SGD, the selection (5%); below s0 (at the released count) as (A)
sgd_select_s0_0 = _patched("sgd_select_s0_0", (0.0, 0.05, 0.05))
sgd_select_s0_05 = _patched("sgd_select_s0_05", (0.5, 0.05, 0.05))  # shipped
sgd_select_s0_1 = _patched("sgd_select_s0_1", (1.0, 0.05, 0.05))
sgd_select_s0_15 = _patched("sgd_select_s0_15", (1.5, 0.05, 0.05))
sgd_select_s0_2 = _patched("sgd_select_s0_2", (2.0, 0.05, 0.05))
# a larger share for the selection
sgd_select_share10 = _patched("sgd_select_share10", (0.0, 0.05, 0.1))

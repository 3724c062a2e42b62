"""DPPCA as a pipeline step against public-bound preprocessing alone, on the suite's wide sets.

Methods for ``python -m benchmarks.suite.run --methods ...`` (classification only):
``benchmarks.suite.studies.pca_study:dppca_k10`` / ``dppca_k20`` fit
``make_private_pipeline(DPPCA(n_components=k), DPLogisticRegression())`` on the protocol's rows
(public bound ``data_norm``), the pipeline's default share for the DPPCA step; compare with the
plain ``skdpgd`` method (DPLogisticRegression on the same rows). The class list is read from
the labels as every suite method does (``allow_leaks=True``: the suite's convention, not a
user's). Example::

    M=benchmarks.suite.studies.pca_study
    python -m benchmarks.suite.run --task classification --half all --protocol a,b \\
        --sets digits,mnist5k,breast_cancer,movies --eps 0.3,1,3,10 --seeds 3 \\
        --methods skdpgd,$M:dppca_k10,$M:dppca_k20 --out benchmarks/out/pca_study.csv
"""

from __future__ import annotations


def _dppca(k):
    def factory(ctx):
        if ctx.task != "classification" or ctx.n_features <= k:
            return None
        from skdpgd import DPLogisticRegression
        from skdpgd.decomposition import DPPCA
        from skdpgd.pipeline import make_private_pipeline

        return make_private_pipeline(
            DPPCA(n_components=k, data_norm=ctx.data_norm),
            DPLogisticRegression(),
            epsilon=ctx.epsilon,
            random_state=ctx.seed,
            allow_leaks=True,
        )

    factory.suite_name = f"dppca_k{k}"
    return factory


dppca_k10 = _dppca(10)
dppca_k20 = _dppca(20)

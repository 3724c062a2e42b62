"""Candidates for the full-batch 'auto' rule, as run on the suite's design half.

Each candidate is a suite method factory (``module:callable``) that sets the rule's module
constants (``skdpgd.policy``'s ``AUTO_*``, ``ROW_CLIP_*``, ``AUTO_SIGNAL_POWER``) to
the library defaults, overrides some of them, and returns the default estimator. The runner
fits in one process (``--workers 1``), so the constants hold for that fit. This is how the
constants were chosen (benchmarks/LAB_NOTES.md, "Choosing the defaults")::

    python -m benchmarks.suite.run --task classification --half design \
        --eps 0.01,0.1,0.3,1,3,10,1e6 --seeds 3 --out design_cls.csv \
        --methods benchmarks.suite.studies.design_full_batch:c_default,...,sklearn,majority

Only the design half was used to choose; the report half is for reporting.
"""

from __future__ import annotations


#: the library's constants as shipped
DEFAULTS = dict(
    AUTO_ALPHA_NOISE=0.3,
    AUTO_ALPHA_NOISE_SQUARED=1.0,
    AUTO_SECOND_ORDER_MIN_SNR=20.0,
    AUTO_SECOND_ORDER_MAX_PARAMS=256,
    AUTO_OUTPUT_MIN_SNR=300.0,
    AUTO_OUTPUT_ALPHA=5.0,
    AUTO_NEWTON_ITER=8,
    AUTO_NEWTON_SHARE=0.8,
    AUTO_SIGNAL_POWER=2.0,
    ROW_CLIP_FACTOR=0.35,
    ROW_CLIP_SNR=20.0,
    ROW_CLIP_POWER=0.5,
    AUTO_PRIOR_MAX_SNR=0.0,
    AUTO_NEWTON_HESSIANS=2,
    AUTO_HESSIAN_SNR=1.0,
    AUTO_HESSIAN_MIN_ROWS=100.0,
    AUTO_HESSIAN_MAX_WORK=0.5,
    AUTO_HESSIAN_FREE_RATIO=0.01,
    AUTO_PRIOR_SWITCH=((10.0, 0.5, 0.1), (100.0, 0.7, 0.05)),
)


def make(name, row_clip=None, **knobs):
    """A factory fitting the default estimator with ``knobs`` overriding :data:`DEFAULTS`."""
    unknown = set(knobs) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown constants {sorted(unknown)}")

    def factory(ctx):
        from skdpgd import DPLogisticRegression, DPRidge

        from ..methods import UnderPolicy

        extra = {} if row_clip is None else {"row_clip": row_clip}
        if ctx.task == "classification":
            est = DPLogisticRegression(
                epsilon=ctx.epsilon, data_norm=ctx.data_norm, random_state=ctx.seed, **extra
            )
        else:
            est = DPRidge(
                epsilon=ctx.epsilon,
                data_norm=ctx.data_norm,
                y_bound=ctx.y_bound,
                random_state=ctx.seed,
                **extra,
            )
        return UnderPolicy(est, dict(DEFAULTS, **knobs))

    factory.suite_name = name
    return factory


# what was compared (see benchmarks/LAB_NOTES.md for the measured medians)
c_default = make("c_default")
# the penalty's noise term
c_a01 = make("c_a01", AUTO_ALPHA_NOISE=0.1, AUTO_ALPHA_NOISE_SQUARED=0.1)
c_a03 = make("c_a03", AUTO_ALPHA_NOISE_SQUARED=0.3)
c_a1 = make("c_a1", AUTO_ALPHA_NOISE=1.0)
c_a3 = make("c_a3", AUTO_ALPHA_NOISE=3.0, AUTO_ALPHA_NOISE_SQUARED=3.0)
c_a10 = make("c_a10", AUTO_ALPHA_NOISE_SQUARED=10.0)
# when to go second order
c_snr5 = make("c_snr5", AUTO_SECOND_ORDER_MIN_SNR=5.0)
c_snr100 = make("c_snr100", AUTO_SECOND_ORDER_MIN_SNR=100.0)
c_nosecond = make("c_nosecond", AUTO_SECOND_ORDER_MIN_SNR=1e300)
c_t4 = make("c_t4", AUTO_NEWTON_ITER=4)
c_share5 = make("c_share5", AUTO_NEWTON_SHARE=0.5)
# output perturbation above 200 coefficients
c_out100 = make("c_out100", AUTO_OUTPUT_MIN_SNR=100.0)
c_out1000 = make("c_out1000", AUTO_OUTPUT_MIN_SNR=1000.0)
c_oalpha20 = make("c_oalpha20", AUTO_OUTPUT_ALPHA=20.0)
c_oalpha50 = make("c_oalpha50", AUTO_OUTPUT_ALPHA=50.0)
# row clipping
c_clip_linear50 = make("c_clip_linear50", ROW_CLIP_SNR=50.0, ROW_CLIP_POWER=1.0)
c_clip_sqrt50 = make("c_clip_sqrt50", ROW_CLIP_SNR=50.0)
c_clip_cbrt50 = make("c_clip_cbrt50", ROW_CLIP_SNR=50.0, ROW_CLIP_POWER=1.0 / 3.0)
c_dnorm = make("c_dnorm", row_clip="data_norm")
c_signal0 = make("c_signal0", AUTO_SIGNAL_POWER=0.0)

# below which signal-to-noise ratio the intercept-only model is released
c_prior0 = make("c_prior0", AUTO_PRIOR_MAX_SNR=0.0)
c_prior3 = make("c_prior3", AUTO_PRIOR_MAX_SNR=3.0)
c_prior10 = make("c_prior10", AUTO_PRIOR_MAX_SNR=10.0)
c_prior20 = make("c_prior20", AUTO_PRIOR_MAX_SNR=20.0)
c_prior40 = make("c_prior40", AUTO_PRIOR_MAX_SNR=40.0)
c_prior1 = make("c_prior1", AUTO_PRIOR_MAX_SNR=1.0)
c_prior2 = make("c_prior2", AUTO_PRIOR_MAX_SNR=2.0)
# Hessian releases at fewer iterations than gradients (budget split re-chosen), and
# the Poisson rate of the Hessian releases (the suite's sets are small: the rate is mostly 1).
# The earlier plan: a Hessian at every iteration, over all rows, share 0.7.
c_h8_full = make(
    "c_h8_full", AUTO_NEWTON_HESSIANS=None, AUTO_NEWTON_SHARE=0.7, AUTO_HESSIAN_MIN_ROWS=1e12
)
c_h8 = make("c_h8", AUTO_NEWTON_HESSIANS=None, AUTO_NEWTON_SHARE=0.7)
c_h4 = make("c_h4", AUTO_NEWTON_HESSIANS=4, AUTO_NEWTON_SHARE=0.7)
c_h2 = make("c_h2", AUTO_NEWTON_HESSIANS=2, AUTO_NEWTON_SHARE=0.7)
c_h4_s8 = make("c_h4_s8", AUTO_NEWTON_HESSIANS=4)
c_h2_s8 = make("c_h2_s8")  # chosen (the shipped default)
c_h3_s8 = make("c_h3_s8", AUTO_NEWTON_HESSIANS=3)
c_h4_s6 = make("c_h4_s6", AUTO_NEWTON_HESSIANS=4, AUTO_NEWTON_SHARE=0.6)
# the noise-to-signal target of the Hessian releases' Poisson rate (matters only where
# 100 D K / N < 1: rwm5yr, nwtco, aids2 on the design half)
c_rho4 = make("c_rho4", AUTO_HESSIAN_SNR=4.0)  # the first candidate
c_rho1 = make("c_rho1")  # chosen (the shipped default)
c_rho05 = make("c_rho05", AUTO_HESSIAN_SNR=0.5)
# when a Hessian at every iteration counts as cheap (total rate, in passes over X)
c_work2 = make("c_work2", AUTO_HESSIAN_MAX_WORK=2.0)  # the first candidate
c_work05 = make("c_work05")  # chosen (the shipped default)
# a second, imbalanced-only tier of the prior switch ((s, p, share) tiers;
# the first tier alone is the rule before; classification only)
_FIRST = (10.0, 0.5, 0.1)
c_tier_none = make("c_tier_none", AUTO_PRIOR_SWITCH=(_FIRST,))
c_tier_20_7 = make("c_tier_20_7", AUTO_PRIOR_SWITCH=(_FIRST, (20.0, 0.7, 0.1)))
c_tier_40_7 = make("c_tier_40_7", AUTO_PRIOR_SWITCH=(_FIRST, (40.0, 0.7, 0.1)))
c_tier_40_8 = make("c_tier_40_8", AUTO_PRIOR_SWITCH=(_FIRST, (40.0, 0.8, 0.1)))
c_tier_60_7 = make("c_tier_60_7", AUTO_PRIOR_SWITCH=(_FIRST, (60.0, 0.7, 0.1)))
c_tier_100_65 = make("c_tier_100_65", AUTO_PRIOR_SWITCH=(_FIRST, (100.0, 0.65, 0.1)))
c_tier_100_7 = make("c_tier_100_7", AUTO_PRIOR_SWITCH=(_FIRST, (100.0, 0.7, 0.1)))
c_tier_100_8 = make("c_tier_100_8", AUTO_PRIOR_SWITCH=(_FIRST, (100.0, 0.8, 0.1)))
c_tier_200_7 = make("c_tier_200_7", AUTO_PRIOR_SWITCH=(_FIRST, (200.0, 0.7, 0.1)))
c_tier_100_7_s05 = make("c_tier_100_7_s05")  # chosen (the shipped default)
# a third tier between the two (no design-half gain: floor 101 of 108 for all, losses only)
_SECOND = (100.0, 0.7, 0.05)
c_tier3_20_6 = make("c_tier3_20_6", AUTO_PRIOR_SWITCH=(_FIRST, (20.0, 0.6, 0.05), _SECOND))
c_tier3_30_6 = make("c_tier3_30_6", AUTO_PRIOR_SWITCH=(_FIRST, (30.0, 0.6, 0.05), _SECOND))
c_tier3_50_6 = make("c_tier3_50_6", AUTO_PRIOR_SWITCH=(_FIRST, (50.0, 0.6, 0.05), _SECOND))
c_tier3_30_65 = make("c_tier3_30_65", AUTO_PRIOR_SWITCH=(_FIRST, (30.0, 0.65, 0.05), _SECOND))
c_tier3_50_65 = make("c_tier3_50_65", AUTO_PRIOR_SWITCH=(_FIRST, (50.0, 0.65, 0.05), _SECOND))
# a narrower first tier (a binary set below ratio 10 always takes the prior today): kept as is
c_tier1_3_6 = make("c_tier1_3_6", AUTO_PRIOR_SWITCH=((3.0, 0.5, 0.1), (10.0, 0.6, 0.1), _SECOND))
c_tier1_5_6 = make("c_tier1_5_6", AUTO_PRIOR_SWITCH=((5.0, 0.5, 0.1), (10.0, 0.6, 0.1), _SECOND))
c_tier1_5 = make("c_tier1_5", AUTO_PRIOR_SWITCH=((5.0, 0.5, 0.1), _SECOND))
c_tier1_3 = make("c_tier1_3", AUTO_PRIOR_SWITCH=((3.0, 0.5, 0.1), _SECOND))
c_tier1_5_55 = make("c_tier1_5_55", AUTO_PRIOR_SWITCH=((5.0, 0.5, 0.1), (10.0, 0.55, 0.1), _SECOND))
c_tier1_5_65 = make("c_tier1_5_65", AUTO_PRIOR_SWITCH=((5.0, 0.5, 0.1), (10.0, 0.65, 0.1), _SECOND))
c_tier1_3_65 = make("c_tier1_3_65", AUTO_PRIOR_SWITCH=((3.0, 0.5, 0.1), (10.0, 0.65, 0.1), _SECOND))

"""Policy: every tuned rule and constant of the package, each with where it was chosen.

A *rule* maps public quantities (N or a public stand-in, the number of parameters D, the GDP
budget mu, the loss's constants, released set-up statistics) to a choice the user left to
'auto': the penalty, the mechanism, the number of steps, a clipping bound, a budget share. A
*constant* is a number such a rule reads. None of them reads the private data, and none
does privacy arithmetic (that is :mod:`skdpgd.accounting`'s).

Where a value comes from, the comment next to it says so: "design half" means the design half
of ``benchmarks/suite`` (``benchmarks/suite/split.py``; the report half never chooses
anything), with the issue whose runs chose it and where the runs are written up
(``docs/benchmarks_lab_notes.md``, ``/work/notes``); "theory" names the paper and theorem.

The modules that used to hold these names (:mod:`skdpgd.schedules`, ``_base``, ``_minibatch``,
``neural``, ``_public``, ``pipeline``, ``_mechanisms``, ``_second_order``) still export them,
read from here at access time. To try another value, set it here (``skdpgd.policy.X = v``):
setting the old module's name has no effect on a fit.

This module imports nothing from the package: every other module may read it.
"""

from __future__ import annotations

import math
import numbers

# =============================================================================================
# The signal-to-noise ratio every full-batch 'auto' rule reads
# =============================================================================================


def signal_to_noise(n_samples, n_params, mu):
    """``N mu / sqrt(D)``: how many rows' worth of signal the budget leaves per noisy coordinate.

    A Gaussian release of a sum of N clipped per-example terms (D coordinates) with total GDP
    budget mu has noise norm ``~ sqrt(D) * sensitivity / mu`` against a signal of order
    ``N * sensitivity``; their ratio is this number. Every 'auto' rule of the full-batch
    estimators reads the budget through it (public: N, D, mu).
    """
    if math.isinf(mu):
        return math.inf
    return n_samples * mu / math.sqrt(n_params)


# =============================================================================================
# Full-batch estimators (DPLogisticRegression, DPRidge): number of steps and noise shapes
# =============================================================================================

#: Largest number of steps a schedule chooses by itself (``max_iter='auto'``). Theory asks for
#: ``O(kappa log(...))`` steps, which explodes when the L2 penalty is tiny; beyond this cap a
#: fit costs more time than it gains. ``n_iter_theory_`` on a fitted estimator shows the
#: uncapped value; pass an integer ``max_iter`` to override. Chosen for fit time (first
#: release, commit 76fdc47), not on accuracy.
MAX_AUTO_ITER = 10_000

#: Largest ratio between the noisiest and the least noisy step of Hong's dynamic schedule.
#: The bound's optimal shape spans orders of magnitude for long runs; its noisiest early steps
#: spend almost no budget but can throw a logistic model into the flat region of the loss,
#: where later steps cannot pull it back (measured: accuracy 0.60 instead of 0.80). Capped
#: steps spend at most 1% of what the least noisy one does. Also the spread of
#: ``Exponential(decay=None)``.
MAX_SHAPE_RATIO = 10.0

#: ``schedule='auto'`` uses Hong et al.'s dynamic schedule when ``kappa * alpha_H`` (the noise
#: of the whole budget relative to the problem's curvature) is below this, and the uniform
#: schedule otherwise: with so much noise that theory asks for a handful of steps, spreading
#: the budget unevenly over them costs more than it gains (measured, benchmarks/; commit
#: 215ad26, before the suite existed).
AUTO_DYNAMIC_THRESHOLD = 0.3

# =============================================================================================
# Full-batch estimators: the penalty (alpha='auto')
# =============================================================================================

#: ``alpha='auto'`` of the full-batch estimators is
#: ``1/N + AUTO_ALPHA_NOISE * G R sqrt(D) / (N mu)`` (see :func:`consistent_alpha`). Chosen on
#: the design half (issue 11; docs/benchmarks_lab_notes.md, "Choosing the defaults", candidates
#: in benchmarks/suite/design_full_batch.py).
AUTO_ALPHA_NOISE = 0.3
#: The same for the squared loss (DPRidge), where the design half preferred a larger penalty
#: (issue 11, same runs).
AUTO_ALPHA_NOISE_SQUARED = 1.0
#: Output perturbation's noise norm is ``sqrt(D) Delta / (N alpha mu)``; ``alpha='auto'`` makes it
#: ``2 / AUTO_OUTPUT_ALPHA`` times the predictor scale ``1 / R`` (see :func:`output_alpha`).
#: Design half (issue 11, same runs).
AUTO_OUTPUT_ALPHA = 5.0


def _sklearn_plus_noise_penalty(n_samples, n_params, lipschitz, row_bound, mu, factor):
    """``1/N + factor G R sqrt(D) / (N mu)``; ``1/N`` without noise (mu infinite)."""
    base = 1.0 / n_samples
    if math.isinf(mu):
        return base
    return base + factor * lipschitz * row_bound * math.sqrt(n_params) / (n_samples * mu)


def consistent_alpha(n_samples, n_params, lipschitz, row_bound, mu, squared=False):
    """``alpha='auto'`` of the full-batch estimators: a penalty that vanishes with the noise.

    ``alpha = 1/N + f G R sqrt(D) / (N mu)`` with ``f = AUTO_ALPHA_NOISE`` (or
    ``AUTO_ALPHA_NOISE_SQUARED`` for the squared loss, ``squared=True``). The first term is the
    non-private counterpart's penalty in our normalisation (scikit-learn's
    ``LogisticRegression(C=1)`` and ``Ridge(alpha=1)`` minimise ``sum_i l_i + ||w||^2 / 2``, i.e.
    ``(1/N) sum_i l_i + (1/(2N)) ||w||^2``). The second is the penalty that balances the
    regularisation bias ``alpha ||w*||^2 / 2`` against the excess risk of noisy gradient methods,
    ``~ G sqrt(D) ||w*|| / (N mu)``, for a predictor of scale ``||w*|| ~ 1 / R`` (R the row
    bound, G the per-example gradient bound). It goes to 0 as mu grows, so the fit converges
    to the non-private one. All inputs are public.
    """
    factor = AUTO_ALPHA_NOISE_SQUARED if squared else AUTO_ALPHA_NOISE
    return _sklearn_plus_noise_penalty(n_samples, n_params, lipschitz, row_bound, mu, factor)


def output_alpha(n_samples, n_params, lipschitz, row_bound, mu):
    """``alpha='auto'`` for output perturbation: ``1/N + AUTO_OUTPUT_ALPHA G R sqrt(D) / (N mu)``.

    The released minimiser carries noise of norm ``~ sqrt(D) 2G / (N alpha mu)`` (replace-one),
    which must stay small against a predictor of scale ``1 / R``; this penalty keeps it at
    ``2 / AUTO_OUTPUT_ALPHA`` of that scale. Like :func:`consistent_alpha` it tends to ``1/N``
    as mu grows.
    """
    return _sklearn_plus_noise_penalty(n_samples, n_params, lipschitz, row_bound, mu,
                                       AUTO_OUTPUT_ALPHA)


def auto_alpha(alpha_rule, n_samples, n_params, lipschitz, row_bound, mu, second_order,
               max_iter=None, signal_scale=1.0, fit_intercept=True):
    """``alpha='auto'`` of a full-batch fit, for a schedule whose ``alpha_rule`` is
    ``'output'`` (output perturbation: :func:`output_alpha`), ``'auto'`` (``schedule='auto'``:
    :func:`output_alpha` when :func:`auto_mechanism` picks output perturbation) or anything
    else (:func:`consistent_alpha`, with the squared loss's factor when ``second_order`` is
    ``'ssp'``). All inputs public: N, D, G, R, the budget left, the loss's second-order
    mechanism, the user's ``max_iter`` (None: 'auto') and the released signal scale."""
    kind = (auto_mechanism(n_samples, n_params, mu, second_order, max_iter, signal_scale,
                           fit_intercept)
            if alpha_rule == "auto" else None)
    if kind == "output" or alpha_rule == "output":
        return output_alpha(n_samples, n_params, lipschitz, row_bound, mu)
    return consistent_alpha(n_samples, n_params, lipschitz, row_bound, mu,
                            squared=second_order == "ssp")


# =============================================================================================
# Full-batch estimators: the mechanism schedule='auto' runs
# =============================================================================================

#: ``schedule='auto'`` uses the loss's second-order mechanism (DP damped Newton for the
#: logistic losses, sufficient statistics for the squared loss) when the signal-to-noise ratio
#: ``N mu / sqrt(D)`` is at least this and D is at most ``AUTO_SECOND_ORDER_MAX_PARAMS``.
#: Design half (issue 11; docs/benchmarks_lab_notes.md, "Choosing the defaults").
AUTO_SECOND_ORDER_MIN_SNR = 20.0
#: Share of the budget (of ``mu^2``) that the sufficient statistics chosen by
#: ``schedule='auto'`` spend on ``X'y`` (``X'X`` gets the rest), and the eigenvalue floor of
#: the noisy ``X'X`` as a multiple of its noise's operator-norm scale (see
#: :class:`skdpgd._second_order.SufficientStatisticsMechanism`). Chosen on the design half (issue 22,
#: suite, 3 seeds, both protocols; mean over diabetes, computers, budgetfood of the median R^2;
#: floor = cells with R^2 >= -0.005, peer = cells >= best naive DP-GD (tuned after the fact)
#: - 0.005; the cells below the SSP threshold, run by gradient descent, do not change):
#:
#: ============ ===== ===== ===== ===== ===== ===== ===== =====
#: share, floor prot  floor peer  e=0.1 e=0.3 e=1   e=3
#: ============ ===== ===== ===== ===== ===== ===== ===== =====
#: 0.5, 1.0     a     12/15 14/15 .063  .193  .387  .480   (before)
#: 0.6, 0.75    a     12/15 14/15 .078  .213  .390  .479   (chosen)
#: 0.7, 0.5     a     12/15 13/15 .079  .230  .390  .473
#: 0.7, 1.0     a     12/15 13/15 .116  .205  .391  .478
#: 0.5, 0.5     a     11/15 14/15 .000  .206  .372  .476
#: 0.5, 1.0     b     11/15 10/15 -.009 .101  .332  .418   (before)
#: 0.6, 0.75    b     11/15 10/15 .004  .108  .345  .421   (chosen)
#: 0.7, 0.5     b     11/15 10/15 .004  .099  .341  .413
#: 0.7, 1.0     b     11/15  9/15 .007  .116  .325  .414
#: 0.5, 0.5     b     10/15  9/15 -.046 .090  .305  .410
#: ============ ===== ===== ===== ===== ===== ===== ===== =====
#:
#: Per cell, (0.6, 0.75) gains in 17 of the 30 and loses at most 0.004 (computers at e=3).
#: (benchmarks/suite/ridge_candidates.py; /work/notes/issue22_ridge.md.)
AUTO_SSP_SHARE = 0.6
SSP_FLOOR = 0.75
#: Above this many parameters a second-order iteration (D^2 per row, D^3 per solve) costs more
#: than the first-order work it replaces. Measured at N = 1e6, d = 200 (D = 201), epsilon = 1
#: (benchmarks/bench_million.py data): DP damped Newton 11.4 s, accuracy 0.639; output
#: perturbation 28.1 s, 0.609; scikit-learn 2.9-3.3 s, 0.641. The design runs used 200; no
#: suite set has D between 201 and 256, so no suite cell changes.
AUTO_SECOND_ORDER_MAX_PARAMS = 256
#: Above ``AUTO_SECOND_ORDER_MAX_PARAMS``, ``schedule='auto'`` uses output perturbation (one
#: exact solve, one release) when ``N mu / sqrt(D)`` is at least this, with the larger penalty
#: of :func:`output_alpha`; gradient descent below it, where the penalty is large enough for
#: few steps. Design half (issue 11, docs/benchmarks_lab_notes.md).
AUTO_OUTPUT_MIN_SNR = 300.0
#: Losses without a second-order mechanism (DPHuberRegressor, DPPoissonRegressor,
#: DPLinearSVC) use output perturbation at most ``AUTO_SECOND_ORDER_MAX_PARAMS`` parameters
#: only when ``N mu / sqrt(D)`` is at least this, where its noise is negligible: their gradient
#: steps are sized by worst-case smoothness bounds and may not reach the optimum within
#: ``MAX_AUTO_ITER`` steps (Poisson on diabetes at epsilon = 1e6: D^2 0.506 against
#: PoissonRegressor's 0.513 after 10,000 steps). Below it, output perturbation's larger penalty
#: cost more than the noise it saves (examples/plot_huber.py's data, median of 3 seeds, R^2 of
#: output / gradient: 0.52 / 0.82 at epsilon 1, ratio 438; 0.82 / 0.83 at 100, ratio 17,000).
AUTO_NEAR_EXACT_OUTPUT_MIN_SNR = 1e5
#: Below ``AUTO_SECOND_ORDER_MIN_SNR`` (and at most ``AUTO_SECOND_ORDER_MAX_PARAMS``
#: parameters), classifiers use output perturbation instead of gradient descent when
#: ``N mu / sqrt(D)`` is at least this (inf: never).
AUTO_LOW_OUTPUT_MIN_SNR = 5.0
#: Iterations and gradient share of the DP damped Newton chosen by ``schedule='auto'`` (the
#: share of ``mu^2`` all gradient releases get together; the Hessian releases,
#: ``AUTO_NEWTON_HESSIANS`` of them, the rest). The iteration count: design half, issue 11 (no
#: difference between the candidates there; the shipped value is the one theory suggests); the
#: share: design half, issue 21 (see ``AUTO_NEWTON_HESSIANS``).
AUTO_NEWTON_ITER = 8
AUTO_NEWTON_SHARE = 0.8

#: ``schedule='auto'`` releases the intercept-only model (:class:`~skdpgd.schedules.Prior`) when
#: the budget's signal-to-noise ratio ``N mu / sqrt(D)`` is below this (and the model has an
#: intercept).
#: 0: never. Measured on the design half (3 seeds, both protocols, issue 22): thresholds
#: 1, 2, 3, 10, 20, 40 raised the classification floor count only at epsilon = 0.01 (4 -> 10
#: of 18 cells at 3, where a noisy prior still names the wrong majority class in about a third
#: of the cells), not at 0.03-0.1, and lowered the mean accuracy (digits, iris: balanced
#: multiclass sets where a noisy fit beats 1/K); for regression the shrunk noisy mean was no
#: better than the fit (diabetes at 0.01: -0.52 against -0.37). So it stays off.
AUTO_PRIOR_MAX_SNR = 0.0
#: The same for binary classifiers only: below this ratio the selection's noise is larger than
#: any difference of training accuracy it could see, a noisy binary fit is rarely above the
#: majority class, and the whole budget goes to the intercept-only model (0: never). Design
#: half (13 sets, 5 seeds; docs/benchmarks_lab_notes.md, "AUTO_SELECT"): floor at epsilon
#: 0.01 / 0.03 11 -> 20 / 17 -> 19 of 26 cells, no change at 0.3 and above (3 and 4 gained
#: more at 0.01-0.03 but took strong-signal binary sets to their majority at 0.3).
AUTO_PRIOR_MAX_SNR_BINARY = 2.0

#: ``schedule='auto'`` spends this share of the budget (of ``mu^2``) on the class counts of a
#: classifier with an intercept and starts its gradient-descent or Newton iterations from their
#: (shrunk) intercept-only model instead of 0 (:class:`skdpgd._mechanisms.WarmStart`); 0: off,
#: start at 0. ``Auto(prior_share=...)`` turns it on. Measured on the design half (issue 22;
#: 9 sets, both protocols, 8 seeds, epsilon 0.01-3, the counts' noise from a separate stream so
#: that both fits draw the same gradient noise): share 0.1 with shrinkage c = 4 met the floor in
#: 73 of 102 cells against 72 from 0, mean accuracy change +0.005 (s.e. 0.003) at epsilon 0.03,
#: -0.003 (0.001) at 1, within one s.e. of 0 elsewhere; share 0.1 / 0.05 with c = 1: 70/102.
#: (With a shared stream, 3 seeds, the same comparison had looked like +12 floor cells and -0.03
#: at epsilon 1: noise of the draws, not of the rule.) The floor misses come from the weights'
#: noise, not from the intercept's start, so it stays off.
AUTO_PRIOR_SHARE = 0.0

#: The first tier of :data:`AUTO_PRIOR_SWITCH` (classifiers with an intercept, gradient-descent
#: or Newton plans): below the signal-to-noise ratio ``s`` the fit
#: first releases the class counts with :data:`AUTO_PRIOR_SWITCH_SHARE` of the budget; when
#: their shrunk majority frequency is at least ``p`` the rest goes to a second release of the
#: counts (the intercept-only model), otherwise to the fit, started from their prior. At or
#: above ``s`` nothing changes. None: off. Chosen on the design half (issue 22; 9 sets, both
#: protocols, 8 seeds, epsilon 0.01-3, common random numbers; floor = cells at most 0.005
#: below the majority class, of 108; mean accuracy change against the fit from 0 at epsilon
#: 0.01 / 0.03 / 0.1 / 0.3 / 1):
#:
#: ==============  =====  ===========================================
#: (s, p)          floor  mean change (s.e. about 0.013/0.009/0.005)
#: ==============  =====  ===========================================
#: off             75     0
#: (10, 0.5)       95     +0.063 / +0.047 / -0.005 / -0.001 / -0.003
#: (10, 0.6)       78     0.000 / +0.008 / +0.002 / -0.001 / -0.003
#: (20, 0.6)       79     0.000 / +0.008 / +0.003 / -0.001 / -0.003
#: (40, 0.7)       79     0.000 / +0.008 / +0.007 / -0.001 / -0.003
#: ==============  =====  ===========================================
#:
#: (those runs spent the share at every epsilon; the shipped rule spends it only below ``s``,
#: so at and above it the fit is the one from 0). With p = 0.5 a binary problem takes the
#: prior whenever the ratio is below s; a multiclass one only when one class holds half the
#: (shrunk) counts, so balanced multiclass sets, where a noisy fit beats 1/K, keep the fit.
#: The share of the budget (of ``mu^2``) the first release of the counts takes below the
#: switch's signal-to-noise ratio (issue 22, the runs above).
AUTO_PRIOR_SWITCH_SHARE = 0.1

#: The prior switch of ``schedule='auto'``: tiers ``(s, p, share)`` in increasing ``s``; the
#: first whose ``s`` exceeds the fit's signal-to-noise ratio ``N mu / sqrt(D)`` (times the
#: released signal scale) is the :attr:`~skdpgd.schedules.NoisePlan.prior_switch` ``(s, p)``,
#: its ``share`` the budget share of the first release of the counts. At or above the last
#: ``s`` nothing changes. The first tier is the one above; the second (issue 22, stop 29)
#: extends the switch to ``s = 100`` for *imbalanced* problems only (one class at least 70% of
#: the shrunk counts), with a smaller first release (5%) because most fits there go on: a
#: noisy fit must beat a larger majority, and on the design half the fits between ratios 10
#: and 100 fell below it on imbalanced sets (nwtco .79 against .86 at eps 0.1, turnout .73
#: against .75 at 0.3). Design half, classification, both protocols, 8 seeds, eps 0.01-3, common
#: random numbers (floor of 108 cells; peer: >= best peer - 0.005, of 72 cells at eps 0.1-3;
#: mean / worst change of the median against the first tier alone;
#: ``benchmarks/suite/design_full_batch.py``, ``c_tier_*``):
#:
#: ==========================  =====  ====  ===========  ======
#: second tier (s, p, share)   floor  peer  mean change  worst
#: ==========================  =====  ====  ===========  ======
#: none (first tier only)      95     52    0            0
#: (20, 0.7, 0.1)              97     52    +0.0003      -0.026
#: (40, 0.7, 0.1)              98     53    +0.0009      -0.026
#: (40, 0.8, 0.1)              97     53    +0.0007      -0.026
#: (60, 0.7, 0.1)              100    53    +0.0010      -0.026
#: (100, 0.65, 0.1)            102    54    -0.0000      -0.069
#: (100, 0.7, 0.1)             101    54    +0.0011      -0.026
#: (100, 0.8, 0.1)             98     52    +0.0004      -0.028
#: (200, 0.7, 0.1)             101    54    +0.0011      -0.026
#: (100, 0.7, 0.05)            101    54    +0.0012      -0.016   (chosen)
#: ==========================  =====  ====  ===========  ======
#:
#: The chosen tier gains up to +0.07 (nwtco (a) at 0.1), loses at most 0.016 (rwm5yr (a) at
#: 0.03) and 0.009 (digits (a) at 1, the 5% spent on counts that then go to the fit). None: off.
#: Replaced by :data:`AUTO_SELECT` (None: off); ``Auto(prior_switch=...)`` still runs it.
AUTO_PRIOR_SWITCH = None


def prior_switch_tiers(switch):
    """The tiers ``((s, p, share), ...)`` of a prior switch given as :data:`AUTO_PRIOR_SWITCH`,
    one ``(s, p)`` or ``(s, p, share)`` (share :data:`AUTO_PRIOR_SWITCH_SHARE` when left out),
    or a sequence of those; ``()`` for None or False (off)."""
    if not switch:
        return ()
    if all(isinstance(v, numbers.Real) for v in switch):
        switch = (switch,)
    tiers = []
    for tier in switch:
        if len(tier) not in (2, 3):
            raise ValueError(f"a prior-switch tier is (s, p) or (s, p, share), got {tier!r}.")
        s, p = float(tier[0]), float(tier[1])
        share = float(tier[2]) if len(tier) == 3 else AUTO_PRIOR_SWITCH_SHARE
        if not (s >= 0 and math.isfinite(p) and 0.0 < share < 1.0):
            raise ValueError(f"a prior-switch tier needs s >= 0, a finite p (above 1: never "
                             f"switch) and share in (0, 1), got {tier!r}.")
        tiers.append((s, p, share))
    if any(a[0] >= b[0] for a, b in zip(tiers, tiers[1:])):
        raise ValueError(f"prior-switch tiers must have increasing s, got {switch!r}.")
    return tuple(tiers)


#: The selection of ``schedule='auto'`` (classifiers with an intercept): ``(s, count_share,
#: select_share)``. Below the signal-to-noise ratio ``s`` the fit releases the class counts
#: with ``count_share`` of the budget (their intercept-only model is the second candidate and
#: the fit's start), fits with the rest but ``select_share``, and spends that on a noisy
#: comparison of the two models' training accuracy (:class:`skdpgd._mechanisms.WarmStart`);
#: the better is returned. None: off.
#: Chosen on the design half (13 classification sets with the strong-signal ones, both
#: protocols, 5 seeds, epsilon 0.1-10; docs/benchmarks_lab_notes.md, "AUTO_SELECT"): against
#: the public-ratio prior switch it replaces, the self-oracle (within 0.02 of the best fixed
#: mechanism) 97 -> 104 of 130 cells and the floor 120 -> 127.
AUTO_SELECT = (300.0, 0.05, 0.05)
#: The selection returns the fit when its noisy difference of rows predicted right (fit minus
#: intercept-only model) is above ``-AUTO_SELECT_BIAS * sigma^2 / N`` (sigma the release's
#: noise standard deviation, N public): the decision of a posterior mean under a public prior
#: that expects the fit to be somewhat better; when the noise is large against N, the
#: difference must be clearly negative to return the constant model. 0: the larger wins.
AUTO_SELECT_BIAS = 3.0


def select_threshold(std, n_public):
    """The selection's threshold on the noisy difference (see :data:`AUTO_SELECT_BIAS`)."""
    return -AUTO_SELECT_BIAS * std * std / float(n_public)

#: ``c`` in the warm start's shrinkage of the noisy class counts towards their mean,
#: ``max(0, 1 - c (K - 1) s^2 / ||c~ - mean(c~)||^2)`` (1: positive-part James-Stein; 4 met the
#: floor in more design-half cells than 1, issue 22, see :data:`AUTO_PRIOR_SHARE`).
WARM_START_SHRINK = 4.0


def auto_mechanism(n_samples, n_params, mu, second_order, max_iter=None, signal_scale=1.0,
                   fit_intercept=True, binary=False):
    """What ``schedule='auto'`` runs: 'prior', 'newton', 'ssp', 'output' or 'gradient' (see
    :class:`~skdpgd.schedules.Auto`).

    ``signal_scale`` multiplies the signal-to-noise ratio (public: 1, or a function of a
    released row-norm estimate); ``binary``: a binary classifier (one output)."""
    if max_iter is not None:
        return "gradient"
    snr = signal_to_noise(n_samples, n_params, mu) * signal_scale
    if fit_intercept and (snr < AUTO_PRIOR_MAX_SNR
                          or (binary and snr < AUTO_PRIOR_MAX_SNR_BINARY)):
        return "prior"
    if n_params <= AUTO_SECOND_ORDER_MAX_PARAMS:
        if second_order is not None and snr >= AUTO_SECOND_ORDER_MIN_SNR:
            return second_order
        if second_order == "newton" and snr >= AUTO_LOW_OUTPUT_MIN_SNR:
            return "output"
        if second_order is None and snr >= AUTO_NEAR_EXACT_OUTPUT_MIN_SNR:
            return "output"
        return "gradient"
    if snr >= AUTO_OUTPUT_MIN_SNR:
        return "output"
    return "gradient"


def auto_schedule(problem, mu, max_iter=None):
    """The schedule ``schedule='auto'`` runs, as ``(name, parameters)``: the mechanism of
    :func:`auto_mechanism` and, for gradient descent, Hong et al.'s dynamic shape when
    ``kappa * alpha_H < AUTO_DYNAMIC_THRESHOLD``, else the uniform one. ``problem`` is the
    fit's :class:`~skdpgd.schedules.Problem` (public constants only)."""
    kind = auto_mechanism(problem.n_samples, problem.n_params, mu, problem.second_order,
                          max_iter, problem.signal_scale, problem.fit_intercept,
                          binary=problem.second_order == "newton" and problem.n_outputs == 1)
    if kind == "newton":
        return "newton", {"n_iter": AUTO_NEWTON_ITER, "gradient_share": AUTO_NEWTON_SHARE,
                          "n_hessians": "auto"}
    if kind == "ssp":
        return "ssp", {"gradient_share": AUTO_SSP_SHARE}
    if kind in ("prior", "output"):
        return kind, {}
    kappa = problem.kappa
    if math.isinf(kappa) or math.isinf(mu):
        return "uniform", {}
    if kappa * problem.hong_alpha(mu) < AUTO_DYNAMIC_THRESHOLD:
        return "hong", {}
    return "uniform", {}


def select_rule(select):
    """``(s, count_share, select_share)`` of a selection given as :data:`AUTO_SELECT`, or None
    (off) for None / False."""
    if not select:
        return None
    if len(select) != 3:
        raise ValueError(f"a selection rule is (s, count_share, select_share), got {select!r}.")
    s, count_share, select_share = (float(v) for v in select)
    if not (s >= 0 and 0.0 < count_share and 0.0 < select_share
            and count_share + select_share < 1.0):
        raise ValueError(f"a selection rule needs s >= 0 and positive shares that sum below 1, "
                         f"got {select!r}.")
    return s, count_share, select_share


#: Share of the budget (of ``mu^2``) that ``schedule='auto'`` spends on the target sum whose
#: intercept-only model starts the gradient steps of DPHuberRegressor (with ``y_bound``) and
#: DPPoissonRegressor. Their gradient steps are sized by worst-case smoothness bounds and move
#: the intercept slowly, so a start at 0 left the intercept short of the targets' level at
#: small budgets (Poisson, 2000 rows, epsilon = 1: D^2 -0.8 from 0; see
#: benchmarks/bench_glm_targets.py for the measured effect of the start).
AUTO_REGRESSION_START_SHARE = 0.1


def auto_prior_start(problem, mu, mechanism, prior_share=None, prior_switch=None, select=None):
    """The warm start, selection and switch to the intercept-only model that
    ``schedule='auto'`` adds to a plan whose mechanism is ``mechanism``: a dict of
    :class:`~skdpgd.schedules.NoisePlan` fields to replace (``prior_share``, ``select_share``,
    ``prior_switch``), empty for none. ``prior_share`` / ``prior_switch`` / ``select``: the
    :class:`~skdpgd.schedules.Auto` parameters (None: the constants :data:`AUTO_PRIOR_SHARE` /
    :data:`AUTO_PRIOR_SWITCH` / :data:`AUTO_SELECT`; a false value: off). Only for classifiers
    with an intercept (the logistic losses); the selection applies to gradient, Newton and
    output plans below its signal-to-noise ratio and takes precedence over the switch.

    A regression loss that admits it (``problem.regression_start``: Huber and Poisson with a
    public target bound) gets, for a gradient or output plan, a warm start only: the share
    :data:`AUTO_REGRESSION_START_SHARE` of the budget on the sum of the clipped targets, whose
    intercept-only model starts the steps (gradient) or centres the intercept's penalty
    (output perturbation)."""
    if getattr(problem, "regression_start", False):
        if (mechanism in ("gradient", "output") and problem.fit_intercept
                and not math.isinf(mu)):
            return {"prior_share": AUTO_REGRESSION_START_SHARE}
        return {}
    if not (problem.fit_intercept and problem.second_order == "newton"
            and not math.isinf(mu)):
        return {}
    snr = signal_to_noise(problem.n_samples, problem.n_params, mu) * problem.signal_scale
    # an explicit switch (and no explicit selection) runs the switch instead of the default
    explicit_switch = prior_switch is not None and bool(prior_switch)
    rule = select_rule((None if explicit_switch else AUTO_SELECT) if select is None else select)
    if (rule is not None and snr < rule[0]
            and mechanism in ("gradient", "newton", "output")):
        return {"prior_share": rule[1], "select_share": rule[2]}
    if mechanism not in ("gradient", "newton"):
        return {}
    share = AUTO_PRIOR_SHARE if prior_share is None else float(prior_share)
    switch = AUTO_PRIOR_SWITCH if prior_switch is None else prior_switch
    for s, p, tier_share in prior_switch_tiers(switch):
        if snr < s:
            return {"prior_share": share if share > 0 else tier_share, "prior_switch": (s, p)}
    if share > 0:
        return {"prior_share": share}
    return {}


# =============================================================================================
# Full-batch estimators: the Hessian releases of DP damped Newton
# =============================================================================================

#: ``hessian_rate='auto'``: each Hessian release sums over a Poisson subsample of the rows
#: with rate ``q = min(1, max(AUTO_HESSIAN_MIN_ROWS D / N, AUTO_HESSIAN_SNR * r))``, where
#: ``r = sqrt(2) z u D^1.5 / (N s)`` is the ratio of the noise's eigenvalue floor
#: ``sqrt(2) sigma sqrt(D)`` to a typical eigenvalue of the full Hessian sum,
#: ``N h R^2 s / D`` (``sigma = z u h R^2``: the release's noise, u = sqrt(2) replace-one and 1
#: add/remove-one; s the released signal scale). The subsample's noise is the full sum's, so
#: the ratio grows by 1/q: q is the smallest rate that keeps it below 1 / AUTO_HESSIAN_SNR
#: (1: the floor at most a typical eigenvalue; chosen on the design half, issue 21, where only
#: rwm5yr, nwtco and aids2 get rates below 1: against 4, mean accuracy +0.001 at epsilon 1-10,
#: worst cell -0.004 (turnout at 1), rwm5yr within 0.0025; 0.5 lost 0.004-0.007 on rwm5yr.
#: On the synthetic data of benchmarks/bench_million.py at N = 5e5, rates 4 to 0.5 gave the
#: same accuracy within 0.001 at d = 50 and 200, epsilon 0.3-3),
#: and keeps at least AUTO_HESSIAN_MIN_ROWS rows per parameter and output for the sampling
#: error (K outputs of the multinomial loss: its K(K+1)/2 Hessian blocks share the rows, and
#: at 100 rows per parameter only, 8 iterations at epsilon = 1e6 ended 1.2% of the largest
#: coefficient from scikit-learn's minimiser at K = 3, against 0.3% at 300; binary: 0.02%).
AUTO_HESSIAN_SNR = 1.0
AUTO_HESSIAN_MIN_ROWS = 100.0
#: Hessian releases of the DP damped Newton that ``schedule='auto'`` runs when a Hessian at
#: every iteration would cost more than ``AUTO_HESSIAN_MAX_WORK`` full passes over X (the sum
#: of their rates); spread over the iterations by :func:`~skdpgd.schedules.hessian_steps` (2 of
#: 8: iterations 0
#: and 4). Below that work (large budgets, where the rate is small) every iteration releases a
#: Hessian: with two only, the stale Hessian of iteration 0 slowed the last steps (multinomial,
#: 3 classes, epsilon = 1e6: 7% of the largest coefficient from scikit-learn's minimiser after
#: 8 iterations, against 0.3%). Chosen with AUTO_NEWTON_SHARE on the design half (issue 21; classification, both
#: protocols, epsilon 0.3-10, 6 seeds): against a Hessian at every iteration with share 0.7,
#: 2 Hessians with share 0.8 changed the mean accuracy by +0.0019 (worst set and epsilon:
#: aids2 at 0.3, -0.018), 3 with 0.8 by -0.0002 (worst -0.017), 4 with 0.8 by -0.0007
#: (worst iris at 3, -0.064); at epsilon = 1e6 (3 seeds) by -0.0006, 0, 0.
AUTO_NEWTON_HESSIANS = 2
#: 0.5 rather than 2: on the design half only rwm5yr changes (+0.0013 and +0.0012 at epsilon 3
#: and 10, 3 seeds); on bench_million.py's data at N = 1e6, d = 50, epsilon = 1, 2 Hessians at
#: rate 0.056 instead of 8 at 0.113 halved the fit time (0.33 s vs 0.64 s, loaded machine) at the
#: same accuracy (0.7289 vs 0.7286). (Issue 21.)
AUTO_HESSIAN_MAX_WORK = 0.5
#: ... and also when a Hessian at every iteration would cost almost no accuracy in noise: its
#: floor below this fraction of a typical eigenvalue (:func:`hessian_noise_ratio`). Then the
#: budget is not what limits the fit, and exact Newton steps make the fit tend to the
#: non-private one as epsilon grows (with 2 Hessians, 8 iterations without noise ended 5e-6
#: from scikit-learn's minimiser on iris, 3 classes; tests/test_linear_model.py asks 1e-6).
AUTO_HESSIAN_FREE_RATIO = 0.01


def _sensitivity_unit(problem):
    """sqrt(2) for replace-one (the gradient sensitivity is 2G), 1 for add/remove-one."""
    return math.sqrt(2.0) if problem.sensitivity > 1.5 * problem.lipschitz else 1.0


def auto_hessian_count(problem, mu, n_iter, gradient_share):
    """Hessian releases of the automatic Newton plan: all ``n_iter`` when their rates (for the
    multipliers the accountant will give them: ``sum z^-2 = mu^2`` over the plan) add up to at
    most ``AUTO_HESSIAN_MAX_WORK`` passes or their noise is negligible
    (``AUTO_HESSIAN_FREE_RATIO``), else ``AUTO_NEWTON_HESSIANS``. Public: N, D, mu and the
    plan's constants."""
    T = int(n_iter)
    if math.isinf(mu):
        z = 0.0
    else:
        z = math.sqrt(T / ((1.0 - gradient_share) * mu * mu))
    unit = _sensitivity_unit(problem)
    q = hessian_rate(problem.n_samples, problem.n_params, z, unit, problem.signal_scale,
                     problem.n_outputs)
    ratio = hessian_noise_ratio(problem.n_samples, problem.n_params, z, unit,
                                problem.signal_scale)
    if (T * q <= AUTO_HESSIAN_MAX_WORK or ratio <= AUTO_HESSIAN_FREE_RATIO
            or AUTO_NEWTON_HESSIANS is None):
        return None
    return AUTO_NEWTON_HESSIANS


def hessian_rate(n_samples, n_params, z, sensitivity_unit, signal_scale=1.0, n_outputs=1):
    """The Poisson rate of a Hessian release (see :data:`AUTO_HESSIAN_SNR`); all inputs public:
    N, D, the release's noise multiplier z, ``sensitivity_unit`` (sqrt(2) replace-one, 1
    add/remove-one), the released signal scale and the number of outputs."""
    n = float(n_samples)
    D = float(n_params)
    q_rows = AUTO_HESSIAN_MIN_ROWS * D * max(1, int(n_outputs)) / n
    if math.isinf(z) or math.isnan(z):
        return 1.0
    q_snr = AUTO_HESSIAN_SNR * hessian_noise_ratio(n, D, z, sensitivity_unit, signal_scale)
    return float(min(1.0, max(q_rows, q_snr)))


def hessian_noise_ratio(n_samples, n_params, z, sensitivity_unit, signal_scale=1.0):
    """``sqrt(2) z u D^1.5 / (N s)``: the noise floor of a full Hessian release with multiplier
    z over a typical eigenvalue of the Hessian sum (see :data:`AUTO_HESSIAN_SNR`)."""
    return (math.sqrt(2.0) * z * sensitivity_unit * float(n_params) ** 1.5
            / (float(n_samples) * max(signal_scale, 1e-12)))


# =============================================================================================
# Full-batch estimators: the row-clipping bound (row_clip='auto')
# =============================================================================================

#: Row clipping with ``row_clip='auto'``: rows are clipped to ``factor`` times a private
#: estimate of the mean row norm, ``factor = ROW_CLIP_FACTOR * max(1, s / ROW_CLIP_SNR) **
#: ROW_CLIP_POWER`` with
#: ``s = N mu / sqrt(D)`` the budget's signal-to-noise ratio (:func:`signal_to_noise`),
#: and never above ``data_norm``. Signal per unit of sensitivity is what a noisy mechanism pays
#: for: with much noise, clipping at a typical norm instead of the worst-case bound lowers the
#: noise for all rows at the cost of shrinking the largest ones; as the noise vanishes the
#: factor grows until nothing is clipped, so the fit converges to the non-private one (a model
#: fitted on clipped rows but applied to unclipped ones is off scale). Chosen on the design half
#: of ``benchmarks/suite`` (issue 11; docs/benchmarks_lab_notes.md, "Choosing the defaults":
#: "clip sqrt, s/20").
ROW_CLIP_FACTOR = 0.35
#: With ``row_clip='auto'`` the 'auto' rule reads the budget's signal-to-noise ratio times
#: ``(m / bound) ** AUTO_SIGNAL_POWER`` (m the released mean norm): the Hessian of a logistic
#: loss scales with the squared row norm while its noise scales with the squared bound. (Issue
#: 11: no difference on the design half; the value theory suggests.)
AUTO_SIGNAL_POWER = 2.0
ROW_CLIP_SNR = 20.0
ROW_CLIP_POWER = 0.5
#: Most of the budget (as a share of mu^2) the norm query may use (commit 215ad26; not tuned
#: on the suite).
ROW_CLIP_MAX_SHARE = 0.1
#: Target relative standard deviation of the norm estimate (assuming a mean norm of at
#: least a quarter of data_norm); it sets the query's share of the budget when below the cap.
ROW_CLIP_TARGET_RELATIVE_ERROR = 0.2


def row_clip_factor(snr):
    """The multiple of the (private) mean row norm that ``row_clip='auto'`` clips rows to."""
    if math.isinf(snr):
        return math.inf
    return ROW_CLIP_FACTOR * max(1.0, snr / ROW_CLIP_SNR) ** ROW_CLIP_POWER


#: Note when the released mean clipped row norm is at least
#: ROW_NORM_NOTE_SHARE * data_norm + ROW_NORM_NOTE_SIGMAS * (its noise's std): nearly every row
#: is then at least data_norm long. With the release's usual noise (std ~0.05 data_norm), rows
#: whose true mean clipped norm is data_norm trigger it 84% of the time, 0.8 data_norm 0.13%.
#: It is a ``verbose`` line, not a warning: the statistic min(||x||, R) cannot tell rows far
#: above R from rows normalised to exactly R (``Normalizer`` with data_norm=1, the documented
#: pipeline), where a warning would fire on every fit. (Chosen from those two rates, commit
#: bc04ccf; not on the suite.)
ROW_NORM_NOTE_SHARE = 0.9
ROW_NORM_NOTE_SIGMAS = 1.0


# =============================================================================================
# Set-up releases: budget shares of the noisy row count and class counts
# =============================================================================================

#: Share of the budget's mu^2 a noisy row count spends when N is private (add/remove-one
#: neighbours) and no public ``n_samples`` is given. A public constant (commit d6b6efe; not
#: tuned on the suite: the count needs little of the budget).
COUNT_SHARE = 0.02

#: Share of the budget's mu^2 that noisy class counts spend for ``class_weight='balanced'``
#: (commit c7999c0; as :data:`COUNT_SHARE`, not tuned on the suite).
CLASS_COUNT_SHARE = 0.02


# =============================================================================================
# DP-SGD (DPSGDClassifier, DPSGDRegressor): the 'auto' hyperparameters
# =============================================================================================

#: Default per-example clip norm as a fraction of the loss's worst-case gradient norm
#: ``G = |l'|_max * sqrt(data_norm^2 + c^2)``. Noise is paid for the clip norm, and most
#: examples' gradients are far below the worst case once the model starts to fit, so clipping
#: at a fraction of it buys signal per unit of noise at a small bias. A public constant: it
#: never reads the data. 0.25 (was 0.5) was chosen with the new defaults on the design half of
#: benchmarks/suite (classification and regression, both protocols): it gains most at small
#: epsilon and loses nothing measurable at epsilon = inf (tests against scikit-learn's SGD).
#: (Issue 11; docs/benchmarks_lab_notes.md, "DP-SGD defaults on the suite".)
SGD_CLIP_FACTOR = 0.25

#: The clip factor rises to 1 as the budget grows: ``1 - (1 - SGD_CLIP_FACTOR) exp(-mu /
#: SGD_CLIP_RELAX_MU)`` with ``mu = gdp_mu(epsilon, delta)``. Clipping below G only pays for
#: itself against noise; without noise it is a bias (it down-weights the badly fitted rows,
#: measured on a TF-IDF set at epsilon = inf: train accuracy 0.970 against scikit-learn's
#: 0.987). mu is about 1-3 at epsilon 3-10 (factor 0.26-0.29) and ~1e3 at epsilon 1e6 (1).
SGD_CLIP_RELAX_MU = 50.0


def sgd_clip_factor(mu):
    """The fraction of the loss's gradient bound G that ``clip_norm='auto'`` clips to."""
    return 1.0 - (1.0 - SGD_CLIP_FACTOR) * math.exp(-mu / SGD_CLIP_RELAX_MU)

# --- the defaults ('auto') of alpha, the number of steps and the batch size -------------------
# All are functions of public quantities only: the public N (``n_samples`` or the noisy count),
# the number of parameters p, the budget's GDP mu = gdp_mu(epsilon, delta), and the loss's
# public constants (clip norm C, row bound r, smoothness M). See :func:`sgd_defaults`.


#: The non-private part of ``alpha='auto'``: scikit-learn's ``SGDClassifier()`` /
#: ``SGDRegressor()`` default (same objective normalisation: mean loss + alpha/2 ||w||^2).
SGD_ALPHA_BASE = 1e-4

#: ``c`` in the budget-aware part of ``alpha='auto'``, ``c sqrt(p) C r / (N mu s)``: the
#: regularisation that balances the bias ``alpha R^2 / 2`` against the noise term
#: ``p sigma^2 / alpha`` with ``sigma = C / (N mu)``, which is ``sqrt(2 p) sigma / R``. With a
#: comparator whose outputs ``x . w`` are of size ``R0 s`` for rows of norm r (R = R0 s / r),
#: ``c = sqrt(2) / R0``; s is 1 for a classifier (R0 in logits) and the public target scale
#: (``y_bound``, else the Huber threshold) for a regressor, so that alpha does not change
#: when y is rescaled. One constant per task, chosen on the design half of the benchmark suite
#: (issue 11; docs/benchmarks_lab_notes.md, "DP-SGD defaults on the suite").
SGD_ALPHA_NOISE = 0.1
SGD_ALPHA_NOISE_REGRESSION = 0.5

#: Number of steps: ``T = SGD_FLOW * kappa`` (flow time ``eta T = SGD_FLOW / alpha``, what
#: gradient descent needs to contract the error in the flattest direction), within
#: [SGD_MIN_STEPS, SGD_MAX_STEPS]. (Design half, issue 11: T = 5 kappa helped one protocol only
#: for 2.5x the steps, so 2 was kept; the bounds are for fit time.)
SGD_FLOW = 2.0
SGD_MIN_STEPS = 100
SGD_MAX_STEPS = 20_000

#: Batch size: ``b = SGD_BATCH_FACTOR * N mu / sqrt(T)`` (so that ``q^2 T >= mu^2``: below it
#: the subsampled Gaussian's noise multiplier falls under ~1 and each step costs more privacy
#: per unit of signal), at least SGD_MIN_BATCH, and at most what keeps the run within
#: SGD_MAX_EPOCHS expected passes over the data (the fit time). (Design half, issue 11: batch x
#: 0.3 and x 3 did no better.)
SGD_BATCH_FACTOR = 1.0
SGD_MIN_BATCH = 32
SGD_MAX_EPOCHS = 30.0

#: Without a public ``n_samples`` the fit releases a noisy count ``N~ = N + z_c N(0, 1)``; the
#: mechanism then uses ``N~ + SGD_COUNT_MARGIN * z_c`` (post-processing, free), an upper
#: confidence bound on N. An N that is too small makes the normalised gradient ``N / N_pub``
#: times too large, so the constant step ``1 / (M + alpha)`` overshoots and the fit is thrown
#: far off (measured at epsilon 0.01-0.1 on a 331-row set: the noisy count came out as 1); an N
#: that is too large only shrinks the model towards 0, which is the safe side when the count
#: is that noisy. (Design half, issue 11.)
SGD_COUNT_MARGIN = 2.0

#: ``learning_rate='auto'`` is ``SGD_LR_FACTOR / (M + alpha)`` (design half, issue 11: a step
#: 3 times larger did no better).
SGD_LR_FACTOR = 1.0

#: ``average=True`` returns the mean of the iterates over the last half of the run (tail
#: averaging, post-processing of the released steps): with a constant step, the last iterate
#: of noisy SGD wanders around the optimum, and for the hinge loss its intercept drifts.
#: (Commit decccbb; not tuned on the suite.)
SGD_AVERAGE_FROM = 0.5


#: ``(s, p, share)``: DP-SGD's floor rule (issue 22 item 1), the full-batch prior switch
#: (:data:`AUTO_PRIOR_SWITCH`) for ``DPSGDClassifier(loss='log_loss', schedule='auto')`` with an
#: intercept: below the signal-to-noise ratio ``s`` (``N mu / sqrt(D)``, mu of the whole
#: budget) the class counts are released first with ``share`` of mu^2; when their shrunk
#: majority frequency is at least ``p`` the rest of the budget goes to a second release of the
#: counts and the intercept-only model is returned, otherwise DP-SGD runs with the rest,
#: started from their prior's intercept. None: off. Chosen on the design half (issue 22; 9
#: sets, both protocols, 8 seeds, epsilon 0.01-0.3, common random numbers: the counts draw
#: from a jumped stream; floor = cells at most 0.005 below the majority class, of 68; mean
#: accuracy at epsilon 0.01 / 0.03 / 0.1 / 0.3):
#:
#: ============  =====  ===================================
#: s             floor  mean accuracy
#: ============  =====  ===================================
#: off           62     .517 / .546 / .631 / .688
#: 2             62     .517 / .546 / .631 / .688
#: 3             64     .523 / .545 / .631 / .688
#: 5             66     .526 / .539 / .631 / .684
#: 10            66     .525 / .539 / .599 / .684
#: ============  =====  ===================================
#:
#: s = 10 (the full-batch value) switched a strong-signal binary set (anes96, .83-.85) to its
#: majority class (.585) at epsilon 0.1; s = 5 keeps it there and meets the floor as often.
#: The cost at 0.03 (-0.007) is the same set switched one budget lower; at 0.3 (-0.004) the
#: counts' share on balanced multiclass sets (iris, digits) where the switch does not fire.
SGD_PRIOR_SWITCH = (5.0, 0.5, 0.1)


def sgd_prior_switch(n_public, n_params, mu, fit_intercept, logistic, auto):
    """``(p, share)`` when DP-SGD's prior switch applies (see :data:`SGD_PRIOR_SWITCH`), else
    None. Public quantities only."""
    if SGD_PRIOR_SWITCH is None or not (fit_intercept and logistic and auto):
        return None
    s, p, share = SGD_PRIOR_SWITCH
    if math.isinf(mu) or signal_to_noise(n_public, n_params, mu) >= s:
        return None
    return float(p), float(share)


def sgd_defaults(n_public, n_params, mu, clip, row_bound, smoothness, alpha="auto",
                 batch_size="auto", epochs="auto", learning_rate="auto", alpha_noise=None,
                 target_scale=1.0):
    """Resolve the 'auto' hyperparameters of DP-SGD from public quantities only.

    Parameters
    ----------
    n_public : float
        The public N (``n_samples``, or the accounted noisy count).
    n_params : int
        Number of trained parameters p (weights and intercepts).
    mu : float
        GDP parameter of the whole budget, ``gdp_mu(epsilon, delta)`` (inf: no noise).
    clip, row_bound, smoothness : float
        Per-example clip norm C, bound r on the augmented row norm, loss smoothness M.
    alpha, batch_size, epochs, learning_rate : float or 'auto'
        The estimator's parameters; given values are kept.
    alpha_noise : float or None
        ``c`` below (None: :data:`SGD_ALPHA_NOISE`, the classifiers' constant).
    target_scale : float
        ``s`` below: 1 for a classifier, the public scale of y for a regressor.

    Returns
    -------
    alpha, learning_rate, sampling_rate, n_steps
        The expected batch size is ``sampling_rate * n_public``.

    Notes
    -----
    * ``alpha = SGD_ALPHA_BASE + c sqrt(p) C r / (N mu s)``. Noisy gradient
      methods with total GDP budget mu see the mean gradient through noise of standard
      deviation ``sigma = C / (N mu)`` per coordinate (summed over the run; for Poisson
      subsampling in the regime ``q^2 T >= mu^2``, as the batch rule below keeps it). With an
      L2 penalty alpha, the excess risk is bounded by ``alpha R^2 / 2 + p sigma^2 / alpha``,
      smallest at ``alpha = sqrt(2 p) sigma / R``; with the comparator's outputs of size
      ``R0 s`` (R = R0 s / r) this is the formula with ``c = sqrt(2) / R0``. The second
      term vanishes as epsilon grows (mu -> inf), leaving scikit-learn's default.
    * ``T = SGD_FLOW * kappa`` with ``kappa = (M + alpha) / alpha`` and the step
      ``1 / (M + alpha)``: the flow time ``eta T`` is ``SGD_FLOW / alpha``, what it takes to
      contract the error along the flattest direction; the tail average then removes the
      wandering. Bounded to [SGD_MIN_STEPS, SGD_MAX_STEPS].
    * ``b = SGD_BATCH_FACTOR * N mu / sqrt(T)``, at least SGD_MIN_BATCH, at most
      ``SGD_MAX_EPOCHS * N / T`` (fit time) and N.
    """
    n_public = float(n_public)
    if alpha == "auto":
        c = SGD_ALPHA_NOISE if alpha_noise is None else float(alpha_noise)
        noise = 0.0 if math.isinf(mu) else (
            c * math.sqrt(n_params) * clip * row_bound / (n_public * mu * target_scale))
        alpha = SGD_ALPHA_BASE + noise
    alpha = float(alpha)
    if learning_rate == "auto":
        learning_rate = SGD_LR_FACTOR / (smoothness + alpha)
    learning_rate = float(learning_rate)
    if epochs != "auto" and batch_size != "auto":
        q = min(1.0, float(batch_size) / n_public)
        return alpha, learning_rate, q, max(1, math.ceil(float(epochs) / q))
    if alpha > 0:
        kappa = (smoothness + alpha) / alpha
        t_target = int(min(SGD_MAX_STEPS, max(SGD_MIN_STEPS, math.ceil(SGD_FLOW * kappa))))
    else:
        t_target = SGD_MAX_STEPS
    if batch_size == "auto":
        if epochs != "auto":  # the batch whose steps give the target T
            b = float(epochs) * n_public / t_target
        else:
            b = n_public if math.isinf(mu) else (
                SGD_BATCH_FACTOR * n_public * mu / math.sqrt(t_target))
            b = min(b, SGD_MAX_EPOCHS * n_public / t_target)
        b = max(b, SGD_MIN_BATCH)
        q = min(1.0, math.ceil(b) / n_public)
    else:
        q = min(1.0, float(batch_size) / n_public)
    if epochs == "auto":
        n_steps = t_target
    else:
        n_steps = max(1, math.ceil(float(epochs) / q))
    return alpha, learning_rate, q, n_steps


# =============================================================================================
# Importance-masked DP-SGD (ImportanceMask, importance='auto')
# =============================================================================================

#: ``importance='auto'``: on only where the benchmark (benchmarks/bench_importance.py) shows a
#: gain on the design half of benchmarks/suite that holds on the report half. Measured (5
#: seeds, epsilon 1-8): the private mask was ahead of plain DP-SGD on no design-half set and
#: behind on digits (and chile at epsilon 2); on the high-dimensional sets it was level or a
#: few points ahead (one-hot d = 1200: +3.3 at epsilon 2). So 'auto' is off.
AUTO_IMPORTANCE = False

#: Linear models: masked weights keep their value (True) or are set to 0 (False, the paper's
#: pruned forward pass ``l(m * theta)``). Freezing won on the benchmark's design half at 3 of 4
#: budgets (benchmarks/bench_importance.py, its ``pruned_weights`` variant). How a frozen weight
#: rides along: ``skdpgd._importance.FROZEN_COLUMN_SCALE``.
IMPORTANCE_LINEAR_FREEZE = True

#: The scale s_j (RMS of the released gradient of coordinate j, normalised to RMS 1 over the
#: kept coordinates) is kept within [1 / IMPORTANCE_SCALE_RATIO, IMPORTANCE_SCALE_RATIO]: a
#: coordinate the noise made look silent cannot get an unbounded share of the clip budget.
#: (A safety bound, issue 24, commit fa20cfb; not tuned.)
IMPORTANCE_SCALE_RATIO = 10.0

#: Decay of the running second moment of the released gradients (per step), the paper's
#: gamma_2 (AdaDPIGU; not given there; not tuned).
IMPORTANCE_MOMENT_DECAY = 0.99


# =============================================================================================
# DPMLPClassifier: the defaults of its 'hong' and 'exponential' schedules
# =============================================================================================

#: DPMLPClassifier's ``schedule='hong'`` with ``decay=None``: Hong's gamma is set so that
#: ``gamma^T`` equals this, i.e. the first step's noise has this share of the last step's
#: influence on the final model. The noise multipliers then fall by
#: ``MLP_HONG_INFLUENCE ** (-1/4)`` (1.78x for 0.1) from the first to the last step, whatever
#: T. A heuristic (no theorem gives gamma for a non-convex loss), chosen as Hong et al. chose
#: theirs: on public auxiliary data (Gaussian rows of norm 10, a random linear teacher,
#: N = 750, the benchmark's network, T in {50, 100, 150}, 3 seeds): 0.3 and 0.1 tied with the
#: uniform schedule (within 0.6 points) and 0.01 was 0.5-1 point worse than 0.1; the
#: benchmark's own auxiliary grid (benchmarks/bench_hong_mlp.py) agrees at 4 of 5 values of
#: T. On MNIST 3 vs 5 no gamma differed significantly from uniform. (Not the linear models'
#: 'hong', whose gamma is ``1 - 1/kappa`` from Hong et al.'s Theorem 4.4.)
MLP_HONG_INFLUENCE = 0.1

#: DPMLPClassifier's ``schedule='exponential'`` with ``decay=None``: ratio between consecutive
#: multipliers (first release, commit decccbb; not tuned). The linear models'
#: ``Exponential(decay=None)`` spreads a :data:`MAX_SHAPE_RATIO` ratio over the run instead.
MLP_EXPONENTIAL_DECAY = 0.99


def mlp_hong_gamma(n_iter, decay=None):
    """DPMLPClassifier's gamma for ``schedule='hong'``: ``decay``, or
    ``MLP_HONG_INFLUENCE ** (1 / T)`` when it is None."""
    return MLP_HONG_INFLUENCE ** (1.0 / n_iter) if decay is None else float(decay)


def mlp_exponential_decay(decay=None):
    """DPMLPClassifier's ratio for ``schedule='exponential'``: ``decay``, or
    :data:`MLP_EXPONENTIAL_DECAY` when it is None."""
    return MLP_EXPONENTIAL_DECAY if decay is None else float(decay)


# =============================================================================================
# DPStandardScaler
# =============================================================================================

#: Smallest standard deviation DPStandardScaler divides by, in units of the public half-range
#: of a column (after the map to [-1, 1]). A noisy variance can be tiny or negative; the floor
#: is a public constant so that the scale never comes from an unreliable release. (Issue 20,
#: commit a5da93b; not tuned on the suite.)
STD_FLOOR = 0.01


# =============================================================================================
# PrivatePipeline: the DP transformers' share of the budget
# =============================================================================================

#: Share of the pipeline's mu^2 given to each DP transformer by default (public constant).
#: Chosen on the design half (issue 20: shares 0.03-0.5 of a DPStandardScaler before
#: DPLogisticRegression, 3 seeds, epsilon 0.3 / 1 / 3; commit 4f8dfc9).
DP_TRANSFORMER_SHARE = 0.3
#: Most of mu^2 the DP transformers take together by default (not tuned: keeps at least half
#: of the budget for the final estimator).
DP_TRANSFORMERS_MAX_SHARE = 0.5


def dp_transformer_share(n_transformers):
    """The share of the pipeline's mu^2 each of ``n_transformers`` DP transformers gets."""
    k = n_transformers
    return min(DP_TRANSFORMER_SHARE, DP_TRANSFORMERS_MAX_SHARE / k) if k else 0.0

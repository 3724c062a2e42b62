"""Policy: every tuned rule and constant of the package, each with where it was chosen.

A *rule* maps public quantities (N or a public stand-in, the number of parameters D, the GDP
budget mu, the loss's constants, released set-up statistics) to a choice the user left to
'auto': the penalty, the mechanism, the number of steps, a clipping bound, a budget share. A
*constant* is a number such a rule reads. None of them reads the private data, and none
does privacy arithmetic (that is :mod:`skdpgd.accounting`'s).

Each constant carries one or two lines saying what it decides and a pointer to its entry in
``benchmarks/DECISIONS.md`` (in the source repository), which records what was tried and the
numbers that chose the value: runs on the tuning sets of ``benchmarks/suite`` (the held-out sets
never choose anything), a paper's theorem, or a stated reason where nothing was tuned.

The module's constants are the defaults of a frozen :class:`Policy`; the rules read the *active*
policy, :func:`current`. To try other values (a study, a test), activate a changed copy for a
block: ``with skdpgd.policy.using(AUTO_SELECT_BIAS=1.0): est.fit(X, y)``. The block is
thread-local (a context variable: every other thread, and a thread started inside it, keeps
its own policy) and ends by restoring the policy that was active before; assigning a module
constant (``skdpgd.policy.X = v``) is refused, because no rule would read it.

This module imports nothing from the package: every other module may read it.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math
import numbers
import sys
import types

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

#: Largest number of steps a schedule chooses by itself (``max_iter='auto'``); for fit time
#: (``n_iter_theory_`` shows the uncapped value). (see benchmarks/DECISIONS.md#max_auto_iter)
MAX_AUTO_ITER = 10_000

#: Largest ratio between the noisiest and the least noisy step of Hong's dynamic schedule
#: (also the spread of ``Exponential(decay=None)``). (see benchmarks/DECISIONS.md#max_shape_ratio)
MAX_SHAPE_RATIO = 10.0

#: ``schedule='auto'`` uses Hong et al.'s dynamic schedule when ``kappa * alpha_H`` is below
#: this, the uniform one otherwise. (see benchmarks/DECISIONS.md#auto_dynamic_threshold)
AUTO_DYNAMIC_THRESHOLD = 0.3

# =============================================================================================
# Full-batch estimators: the penalty (alpha='auto')
# =============================================================================================

#: ``alpha='auto'`` of the full-batch estimators is
#: ``1/N + AUTO_ALPHA_NOISE * G R sqrt(D) / (N mu)`` (see :func:`consistent_alpha`).
#: (see benchmarks/DECISIONS.md#auto_alpha_noise)
AUTO_ALPHA_NOISE = 0.3
#: The same factor where ``schedule='auto'`` runs DP damped Newton (its steps need no penalty to
#: be well conditioned). (see benchmarks/DECISIONS.md#auto_alpha_noise_newton)
AUTO_ALPHA_NOISE_NEWTON = 0.3
#: The same factor for the squared loss (DPRidge).
#: (see benchmarks/DECISIONS.md#auto_alpha_noise_squared)
AUTO_ALPHA_NOISE_SQUARED = 1.0
#: Output perturbation's ``alpha='auto'`` factor: its noise norm is ``2 / AUTO_OUTPUT_ALPHA``
#: times the predictor scale ``1 / R`` (see :func:`output_alpha`).
#: (see benchmarks/DECISIONS.md#auto_output_alpha)
AUTO_OUTPUT_ALPHA = 5.0


def sklearn_alpha(n_samples):
    """``1/N``: the part of ``alpha='auto'`` that stays without noise, the non-private
    counterpart's penalty in our normalisation (see :func:`consistent_alpha`); the rest of
    'auto' is there for the noise. A penalty with a non-smooth part keeps only this part in
    its own form and adds the rest as L2 (:meth:`skdpgd.penalties.Penalty.with_l2_beyond`)."""
    return 1.0 / n_samples


def _sklearn_plus_noise_penalty(
    n_samples, n_params, lipschitz, row_bound, mu, factor, output_scale=1.0
):
    """``1/N + factor (G / s) R sqrt(D) / (N mu)``; ``1/N`` without noise (mu infinite)."""
    base = sklearn_alpha(n_samples)
    if math.isinf(mu):
        return base
    return base + factor * (lipschitz / float(output_scale)) * row_bound * math.sqrt(n_params) / (
        n_samples * mu
    )


def consistent_alpha(
    n_samples, n_params, lipschitz, row_bound, mu, squared=False, output_scale=1.0, factor=None
):
    """``alpha='auto'`` of the full-batch estimators: a penalty that vanishes with the noise.

    ``alpha = 1/N + f (G / s) R sqrt(D) / (N mu)`` with ``f = AUTO_ALPHA_NOISE`` (or
    ``AUTO_ALPHA_NOISE_SQUARED`` for the squared loss, ``squared=True``). The first term is the
    non-private counterpart's penalty in our normalisation (scikit-learn's
    ``LogisticRegression(C=1)`` and ``Ridge(alpha=1)`` minimise ``sum_i l_i + ||w||^2 / 2``, i.e.
    ``(1/N) sum_i l_i + (1/(2N)) ||w||^2``). The second is the penalty that balances the
    regularisation bias ``alpha ||w*||^2 / 2`` against the excess risk of noisy gradient methods,
    ``~ G sqrt(D) ||w*|| / (N mu)``, for a predictor of scale ``||w*|| ~ s / R`` (R the row
    bound, G the per-example gradient bound, s the public scale of the outputs,
    :attr:`skdpgd.losses.Loss.output_scale`: 1 for margins and log links, the target range's
    half-width for a regression on the identity link). G grows with s there, so ``G / s`` and
    the penalty do not depend on the targets' units: fitting ``c y`` with a range scaled by c
    gives the same penalty and predictions times c. It goes to 0 as mu grows, so the fit
    converges to the non-private one. All inputs are public.
    """
    pol = current()
    if factor is None:
        factor = pol.AUTO_ALPHA_NOISE_SQUARED if squared else pol.AUTO_ALPHA_NOISE
    return _sklearn_plus_noise_penalty(
        n_samples, n_params, lipschitz, row_bound, mu, factor, output_scale
    )


def output_alpha(n_samples, n_params, lipschitz, row_bound, mu, output_scale=1.0):
    """``alpha='auto'`` for output perturbation: ``1/N + AUTO_OUTPUT_ALPHA (G / s) R sqrt(D) /
    (N mu)``.

    The released minimiser carries noise of norm ``~ sqrt(D) 2G / (N alpha mu)`` (replace-one),
    which must stay small against a predictor of scale ``s / R`` (s the outputs' public scale,
    as in :func:`consistent_alpha`); this penalty keeps it at ``2 / AUTO_OUTPUT_ALPHA`` of that
    scale. Like :func:`consistent_alpha` it tends to ``1/N`` as mu grows.
    """
    return _sklearn_plus_noise_penalty(
        n_samples, n_params, lipschitz, row_bound, mu, current().AUTO_OUTPUT_ALPHA, output_scale
    )


def auto_alpha(
    alpha_rule,
    n_samples,
    n_params,
    lipschitz,
    row_bound,
    mu,
    second_order,
    max_iter=None,
    signal_scale=1.0,
    fit_intercept=True,
    n_outputs=1,
    output_scale=1.0,
    allowed=None,
):
    """``alpha='auto'`` of a full-batch fit, for a schedule whose ``alpha_rule`` is
    ``'output'`` (output perturbation: :func:`output_alpha`), ``'auto'`` (``schedule='auto'``:
    :func:`output_alpha` when :func:`auto_mechanism` picks output perturbation) or anything
    else (:func:`consistent_alpha`, with the squared loss's factor when ``second_order`` is
    ``'ssp'``). All inputs public: N, D, G, R, the budget left, the loss's second-order
    mechanism, the user's ``max_iter`` (None: 'auto'), the released signal scale, the number
    of outputs (the rule's mechanism depends on it: :func:`auto_mechanism`), the outputs'
    public scale (:func:`consistent_alpha`) and the mechanisms the penalty allows
    (``allowed``, :func:`auto_mechanism`)."""
    kind = (
        auto_mechanism(
            n_samples,
            n_params,
            mu,
            second_order,
            max_iter,
            signal_scale,
            fit_intercept,
            n_outputs=n_outputs,
            allowed=allowed,
        )
        if alpha_rule == "auto"
        else None
    )
    if kind == "output" or alpha_rule == "output":
        return output_alpha(n_samples, n_params, lipschitz, row_bound, mu, output_scale)
    return consistent_alpha(
        n_samples,
        n_params,
        lipschitz,
        row_bound,
        mu,
        squared=second_order == "ssp",
        output_scale=output_scale,
        factor=current().AUTO_ALPHA_NOISE_NEWTON if kind == "newton" else None,
    )


# =============================================================================================
# Full-batch estimators: the mechanism schedule='auto' runs
# =============================================================================================

#: ``schedule='auto'`` runs the loss's second-order mechanism (DP damped Newton, sufficient
#: statistics) from this ratio ``N mu / sqrt(D)``, for at most ``AUTO_SECOND_ORDER_MAX_PARAMS``.
#: (see benchmarks/DECISIONS.md#auto_second_order_min_snr)
AUTO_SECOND_ORDER_MIN_SNR = 20.0
#: Share of ``mu^2`` the sufficient statistics of ``schedule='auto'`` spend on ``X'y`` (``X'X``
#: gets the rest). (see benchmarks/DECISIONS.md#auto_ssp_share)
AUTO_SSP_SHARE = 0.6
#: Eigenvalue floor of the noisy ``X'X``, in units of its noise's operator-norm scale (see
#: :class:`skdpgd._full_batch.second_order.SufficientStatisticsMechanism`).
#: (see benchmarks/DECISIONS.md#ssp_floor)
SSP_FLOOR = 0.75
#: Above this many parameters a second-order iteration costs more than the first-order work it
#: replaces. (see benchmarks/DECISIONS.md#auto_second_order_max_params)
AUTO_SECOND_ORDER_MAX_PARAMS = 256
#: Above ``AUTO_SECOND_ORDER_MAX_PARAMS``, ``schedule='auto'`` uses output perturbation from
#: this ratio (with :func:`output_alpha`), gradient descent below it.
#: (see benchmarks/DECISIONS.md#auto_output_min_snr)
AUTO_OUTPUT_MIN_SNR = 300.0
#: Losses without a second-order mechanism (Huber, Poisson, squared hinge) use output
#: perturbation only from this ratio, where its noise is negligible.
#: (see benchmarks/DECISIONS.md#auto_near_exact_output_min_snr)
AUTO_NEAR_EXACT_OUTPUT_MIN_SNR = 1e5
#: Below ``AUTO_SECOND_ORDER_MIN_SNR`` (at most ``AUTO_SECOND_ORDER_MAX_PARAMS`` parameters),
#: classifiers use output perturbation instead of gradient descent from this ratio (inf: never).
#: (see benchmarks/DECISIONS.md#auto_low_output_min_snr)
AUTO_LOW_OUTPUT_MIN_SNR = 5.0
#: Above ``AUTO_SECOND_ORDER_MAX_PARAMS``, a multinomial fit with at most this many parameters
#: per class runs the Kronecker-factored Newton (its X'X is P x P) from the ratio
#: ``AUTO_KRONECKER_MIN_SNR``. (see benchmarks/DECISIONS.md#auto_kronecker_min_snr)
AUTO_KRONECKER_MAX_FEATURES = 2048
AUTO_KRONECKER_MIN_SNR = 300.0
#: Its iterations, and the shares of ``mu^2`` of its gradients and of its class factors
#: (X'X gets the rest). (see benchmarks/DECISIONS.md#auto_kronecker_min_snr)
AUTO_KRONECKER_ITER = 8
AUTO_KRONECKER_SHARE = 0.8
AUTO_KRONECKER_CURVATURE_SHARE = 0.05
#: Its X'X and class factors sum over a Poisson subsample at :func:`hessian_rate` for P
#: parameters with this in place of ``AUTO_HESSIAN_SNR``: the curvature only preconditions
#: the steps, so a floor above the typical eigenvalue costs little.
#: (see benchmarks/DECISIONS.md#auto_kronecker_rate_snr)
AUTO_KRONECKER_RATE_SNR = 0.15
#: Iterations of the DP damped Newton chosen by ``schedule='auto'``.
#: (see benchmarks/DECISIONS.md#auto_newton_iter)
AUTO_NEWTON_ITER = 8
#: Share of ``mu^2`` all its gradient releases get together (the Hessian releases the rest).
#: (see benchmarks/DECISIONS.md#auto_newton_share)
AUTO_NEWTON_SHARE = 0.8

#: ``schedule='auto'`` releases the intercept-only model (:class:`~skdpgd.schedules.Prior`)
#: below this ratio, for a model with an intercept (0: never).
#: (see benchmarks/DECISIONS.md#auto_prior_max_snr)
AUTO_PRIOR_MAX_SNR = 0.0
#: The same for binary classifiers only: below this ratio the whole budget goes to the
#: intercept-only model (0: never). (see benchmarks/DECISIONS.md#auto_prior_max_snr_binary)
AUTO_PRIOR_MAX_SNR_BINARY = 2.0

#: Share of ``mu^2`` that ``schedule='auto'`` spends on the class counts to start its iterations
#: from their shrunk intercept-only model (:class:`skdpgd._full_batch.mechanisms.WarmStart`); 0:
#: off. (see benchmarks/DECISIONS.md#auto_prior_share)
AUTO_PRIOR_SHARE = 0.0

#: Share of ``mu^2`` the first release of the class counts takes below a prior-switch tier's
#: ratio, when the tier gives none (see :data:`AUTO_PRIOR_SWITCH`).
#: (see benchmarks/DECISIONS.md#auto_prior_switch_share)
AUTO_PRIOR_SWITCH_SHARE = 0.1

#: The prior switch of ``schedule='auto'``, tiers ``(s, p, share)`` (see :func:`auto_prior_start`);
#: None: off, replaced by :data:`AUTO_SELECT`. (see benchmarks/DECISIONS.md#auto_prior_switch)
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
        share = float(tier[2]) if len(tier) == 3 else current().AUTO_PRIOR_SWITCH_SHARE
        if not (s >= 0 and math.isfinite(p) and 0.0 < share < 1.0):
            raise ValueError(
                f"a prior-switch tier needs s >= 0, a finite p (above 1: never "
                f"switch) and share in (0, 1), got {tier!r}."
            )
        tiers.append((s, p, share))
    if any(a[0] >= b[0] for a, b in zip(tiers, tiers[1:])):
        raise ValueError(f"prior-switch tiers must have increasing s, got {switch!r}.")
    return tuple(tiers)


#: ``(s, count_share, select_share)``: below the ratio ``s``, an accounted choice between the fit
#: and the intercept-only model (:class:`skdpgd._full_batch.mechanisms.WarmStart`); None: off.
#: (see benchmarks/DECISIONS.md#auto_select)
AUTO_SELECT = (300.0, 0.05, 0.10)
#: The same rule for a classifier on another loss than the logistic ones (DPLinearSVC's
#: squared hinge); None: off (measured, not adopted).
#: (see benchmarks/DECISIONS.md#auto_select_squared_hinge)
AUTO_SELECT_SQUARED_HINGE = None
#: The selection keeps the fit unless its noisy difference of rows predicted right (fit minus
#: intercept-only model) is below ``-AUTO_SELECT_BIAS * sigma^2 / N`` (0: the larger wins).
#: (see benchmarks/DECISIONS.md#auto_select_bias)
AUTO_SELECT_BIAS = 3.0


def select_threshold(std, n_public):
    """The selection's threshold on the noisy difference (see :data:`AUTO_SELECT_BIAS`)."""
    return -current().AUTO_SELECT_BIAS * std * std / float(n_public)


#: ``(s, count_share, select_share)``: below the ratio ``s``, ``schedule='auto'`` of a logistic
#: classifier with an intercept fits each mechanism of :data:`AUTO_CHOICE_CANDIDATES` with its
#: own share of the budget and returns one of them or the intercept-only model, by a noisy
#: maximum of their training accuracies (:class:`skdpgd._full_batch.choice.Choice`); None:
#: off (the selection of :data:`AUTO_SELECT` runs instead).
#: (see benchmarks/DECISIONS.md#auto_choice)
AUTO_CHOICE = None
#: The candidates of the choice, in order: ``'auto'`` (what :func:`auto_mechanism` picks with
#: the whole budget), ``'newton'`` (at most ``AUTO_SECOND_ORDER_MAX_PARAMS`` parameters),
#: ``'output'``, ``'gradient'`` (Hong's or the uniform shape, as ``'auto'`` picks them); a name
#: that repeats an earlier one is dropped. (see benchmarks/DECISIONS.md#auto_choice)
AUTO_CHOICE_CANDIDATES = ("auto", "output", "gradient")
#: At most this many fits (the first ones of :data:`AUTO_CHOICE_CANDIDATES` that remain).
#: (see benchmarks/DECISIONS.md#auto_choice)
AUTO_CHOICE_MAX_FITS = 3
#: Share of the fits' budget (of ``mu^2``) the first candidate gets; the others split the rest
#: equally. (see benchmarks/DECISIONS.md#auto_choice)
AUTO_CHOICE_MAIN_SHARE = 0.5
#: Free candidates: for each fit and each ``b`` here, the blend of its margins with the
#: intercept-only model's, ``b * fit + (1 - b) * prior`` (post-processing of the releases).
#: (see benchmarks/DECISIONS.md#auto_choice)
AUTO_CHOICE_BLENDS = ()
#: The choice runs only where the noise std of a difference of two of its released counts is
#: at most this fraction of N, ``sqrt(2 m) / (sqrt(select_share) N mu)`` for m released
#: models (inf: wherever :data:`AUTO_CHOICE` applies); elsewhere the selection of
#: :data:`AUTO_SELECT` runs. (see benchmarks/DECISIONS.md#auto_choice)
AUTO_CHOICE_MAX_NOISE = math.inf
#: The noisy maximum adds ``AUTO_CHOICE_MAIN_BIAS * s_d^2 / N`` to the first candidate's noisy
#: count (``s_d``: the noise std of a difference of two counts); the intercept-only model's
#: gets ``-AUTO_SELECT_BIAS * s_d^2 / N``. (see benchmarks/DECISIONS.md#auto_choice)
AUTO_CHOICE_MAIN_BIAS = 0.0


def choice_rule(choice):
    """``(s, count_share, select_share)`` of a choice given as :data:`AUTO_CHOICE`, or None
    (off) for None / False (checked as :func:`select_rule`)."""
    return select_rule(choice)


def gradient_schedule(problem, mu):
    """The gradient-descent shape ``schedule='auto'`` runs: ``'hong'`` when
    ``kappa * alpha_H < AUTO_DYNAMIC_THRESHOLD``, else ``'uniform'`` (public constants)."""
    kappa = problem.kappa
    if math.isinf(kappa) or math.isinf(mu):
        return "uniform"
    if kappa * problem.hong_alpha(mu) < current().AUTO_DYNAMIC_THRESHOLD:
        return "hong"
    return "uniform"


def auto_choice(problem, mu, max_iter=None, choice=None):
    """What ``schedule='auto'``'s choice among mechanisms runs, or None where it does not
    apply: ``{'candidates': ((kind, share), ...), 'count_share': c, 'select_share': r}`` with
    ``kind`` one of 'newton', 'output', 'gradient' and the shares of the whole ``mu^2`` (the
    candidates' and ``c + r`` sum to 1). Public quantities only.

    It applies to a logistic classifier with an intercept, without a user ``max_iter``, below
    the ratio ``s`` of :data:`AUTO_CHOICE` (or ``choice``), where :func:`auto_mechanism` does
    not return the intercept-only model, when at least two distinct fits remain or blends are
    asked for (:data:`AUTO_CHOICE_BLENDS`), and where the comparison is precise enough
    (:data:`AUTO_CHOICE_MAX_NOISE`)."""
    pol = current()
    rule = choice_rule(pol.AUTO_CHOICE if choice is None else choice)
    if rule is None or max_iter is not None or math.isinf(mu):
        return None
    if not (problem.fit_intercept and problem.second_order == "newton"):
        return None
    s, count_share, select_share = rule
    snr = signal_to_noise(problem.n_samples, problem.n_params, mu) * problem.signal_scale
    if snr >= s:
        return None
    main = auto_mechanism(
        problem.n_samples,
        problem.n_params,
        mu,
        problem.second_order,
        None,
        problem.signal_scale,
        problem.fit_intercept,
        binary=problem.n_outputs == 1,
        n_outputs=problem.n_outputs,
        allowed=problem.mechanisms,
    )
    if main == "prior":
        return None
    kinds = []
    for name in pol.AUTO_CHOICE_CANDIDATES:
        kind = main if name == "auto" else name
        if kind not in ("newton", "output", "gradient"):
            raise ValueError(
                f"a choice candidate is 'auto', 'newton', 'output' or 'gradient', got {name!r} "
                f"(resolved to {kind!r})."
            )
        if kind == "newton" and problem.n_params > pol.AUTO_SECOND_ORDER_MAX_PARAMS:
            continue
        if problem.mechanisms is not None and kind not in problem.mechanisms:
            continue  # it cannot run the penalty
        if kind not in kinds:
            kinds.append(kind)
    kinds = kinds[: max(1, int(pol.AUTO_CHOICE_MAX_FITS))]
    blends = tuple(float(b) for b in pol.AUTO_CHOICE_BLENDS)
    if any(not 0.0 < b < 1.0 for b in blends):
        raise ValueError(f"AUTO_CHOICE_BLENDS must lie in (0, 1), got {blends!r}.")
    if len(kinds) < 2 and not blends:
        return None
    n_models = len(kinds) * (1 + len(blends)) + 1
    if choice_noise(problem.n_samples, mu, n_models, select_share) > pol.AUTO_CHOICE_MAX_NOISE:
        return None
    fits = 1.0 - count_share - select_share
    main_share = float(pol.AUTO_CHOICE_MAIN_SHARE)
    if not 0.0 < main_share < 1.0:
        raise ValueError(f"AUTO_CHOICE_MAIN_SHARE must lie in (0, 1), got {main_share!r}.")
    if len(kinds) == 1:
        shares = [fits]
    else:
        rest = (1.0 - main_share) / (len(kinds) - 1)
        shares = [fits * main_share] + [fits * rest] * (len(kinds) - 1)
    return {
        "candidates": tuple(zip(kinds, shares)),
        "count_share": count_share,
        "select_share": select_share,
        "blends": blends,
    }


def choice_noise(n_samples, mu, n_models, select_share):
    """``sqrt(2 m) / (sqrt(select_share) N mu)``: the noise std of a difference of two of the
    choice's released counts (m released models, the intercept-only one included), as a
    fraction of N (:data:`AUTO_CHOICE_MAX_NOISE`; public: N, mu, m, the share)."""
    return math.sqrt(2.0 * n_models) / (math.sqrt(select_share) * n_samples * mu)


def choice_offsets(std, n_public, n_models):
    """What the choice's noisy maximum adds to each of its ``n_models`` noisy counts (the
    first candidate's fit, the other models, then the intercept-only model): the first gets
    ``AUTO_CHOICE_MAIN_BIAS * s_d^2 / N``, the last ``-AUTO_SELECT_BIAS * s_d^2 / N``, the
    others 0; ``s_d = sqrt(2) std`` is the noise std of a difference of two counts each
    released with noise ``std``."""
    pol = current()
    unit = 2.0 * std * std / float(n_public)
    out = [0.0] * n_models
    out[0] = pol.AUTO_CHOICE_MAIN_BIAS * unit
    out[-1] = -pol.AUTO_SELECT_BIAS * unit
    return out


#: ``c`` in the warm start's shrinkage of the noisy class counts towards their mean,
#: ``max(0, 1 - c (K - 1) s^2 / ||c~ - mean(c~)||^2)`` (1: positive-part James-Stein).
#: (see benchmarks/DECISIONS.md#warm_start_shrink)
WARM_START_SHRINK = 4.0


def auto_mechanism(
    n_samples,
    n_params,
    mu,
    second_order,
    max_iter=None,
    signal_scale=1.0,
    fit_intercept=True,
    binary=False,
    n_outputs=1,
    allowed=None,
):
    """What ``schedule='auto'`` runs: 'prior', 'newton', 'kronecker', 'ssp', 'output' or
    'gradient' (see :class:`~skdpgd.schedules.Auto`).

    ``signal_scale`` multiplies the signal-to-noise ratio (public: 1, or a function of a
    released row-norm estimate); ``binary``: a binary classifier (one output); ``n_outputs``:
    the rows of the coefficient matrix (K for the multinomial loss); ``allowed``: the
    mechanisms that can run the fit's penalty (:attr:`skdpgd.schedules.Problem.mechanisms`,
    None: every one): a mechanism outside it gives way to gradient descent."""
    kind = _auto_mechanism(
        n_samples,
        n_params,
        mu,
        second_order,
        max_iter,
        signal_scale,
        fit_intercept,
        binary,
        n_outputs,
    )
    if allowed is None or kind in allowed:
        return kind
    if "gradient" not in allowed:
        raise ValueError(f"no mechanism can run this penalty: allowed {allowed!r}.")
    return "gradient"


def _auto_mechanism(
    n_samples,
    n_params,
    mu,
    second_order,
    max_iter,
    signal_scale,
    fit_intercept,
    binary,
    n_outputs,
):
    """:func:`auto_mechanism` among every mechanism."""
    pol = current()
    if max_iter is not None:
        return "gradient"
    snr = signal_to_noise(n_samples, n_params, mu) * signal_scale
    if fit_intercept and (
        snr < pol.AUTO_PRIOR_MAX_SNR or (binary and snr < pol.AUTO_PRIOR_MAX_SNR_BINARY)
    ):
        return "prior"
    if n_params <= pol.AUTO_SECOND_ORDER_MAX_PARAMS:
        if second_order is not None and snr >= pol.AUTO_SECOND_ORDER_MIN_SNR:
            return second_order
        if second_order == "newton" and snr >= pol.AUTO_LOW_OUTPUT_MIN_SNR:
            return "output"
        if second_order is None and snr >= pol.AUTO_NEAR_EXACT_OUTPUT_MIN_SNR:
            return "output"
        return "gradient"
    if (
        second_order == "newton"
        and n_outputs >= 2
        and n_params // n_outputs <= pol.AUTO_KRONECKER_MAX_FEATURES
        and snr >= pol.AUTO_KRONECKER_MIN_SNR
    ):
        return "kronecker"
    if snr >= pol.AUTO_OUTPUT_MIN_SNR:
        return "output"
    return "gradient"


def auto_schedule(problem, mu, max_iter=None):
    """The schedule ``schedule='auto'`` runs, as ``(name, parameters)``: the mechanism of
    :func:`auto_mechanism` and, for gradient descent, Hong et al.'s dynamic shape when
    ``kappa * alpha_H < AUTO_DYNAMIC_THRESHOLD``, else the uniform one. ``problem`` is the
    fit's :class:`~skdpgd.schedules.Problem` (public constants only)."""
    pol = current()
    kind = auto_mechanism(
        problem.n_samples,
        problem.n_params,
        mu,
        problem.second_order,
        max_iter,
        problem.signal_scale,
        problem.fit_intercept,
        binary=problem.second_order == "newton" and problem.n_outputs == 1,
        n_outputs=problem.n_outputs,
        allowed=problem.mechanisms,
    )
    if kind == "kronecker":
        return "kronecker", {
            "n_iter": pol.AUTO_KRONECKER_ITER,
            "gradient_share": pol.AUTO_KRONECKER_SHARE,
            "curvature_share": pol.AUTO_KRONECKER_CURVATURE_SHARE,
        }
    if kind == "newton":
        return "newton", {
            "n_iter": pol.AUTO_NEWTON_ITER,
            "gradient_share": pol.AUTO_NEWTON_SHARE,
            "n_hessians": "auto",
        }
    if kind == "ssp":
        return "ssp", {"gradient_share": pol.AUTO_SSP_SHARE}
    if kind in ("prior", "output"):
        return kind, {}
    return gradient_schedule(problem, mu), {}


def select_rule(select):
    """``(s, count_share, select_share)`` of a selection given as :data:`AUTO_SELECT`, or None
    (off) for None / False."""
    if not select:
        return None
    if len(select) != 3:
        raise ValueError(f"a selection rule is (s, count_share, select_share), got {select!r}.")
    s, count_share, select_share = (float(v) for v in select)
    if not (
        s >= 0 and 0.0 < count_share and 0.0 < select_share and count_share + select_share < 1.0
    ):
        raise ValueError(
            f"a selection rule needs s >= 0 and positive shares that sum below 1, got {select!r}."
        )
    return s, count_share, select_share


#: Share of ``mu^2`` spent on the clipped target sum whose intercept-only model starts the
#: gradient steps of the Huber (with ``y_bound``) and Poisson regressors.
#: (see benchmarks/DECISIONS.md#auto_regression_start_share)
AUTO_REGRESSION_START_SHARE = 0.1

#: ``(s, target_share, select_share)``: below the ratio ``s``, a regressor with an intercept
#: and a public target range releases its clipped target sum (``target_share`` of ``mu^2``;
#: :data:`AUTO_REGRESSION_START_SHARE` for the losses that start their steps from it) and
#: makes an accounted choice between its fit and that intercept-only model: a noisy count of
#: the training rows the fit predicts closer minus those it predicts farther
#: (``select_share``; :class:`skdpgd._full_batch.mechanisms.WarmStart`). None: off.
#: (see benchmarks/DECISIONS.md#auto_regression_select)
AUTO_REGRESSION_SELECT = (300.0, 0.05, 0.05)
#: Below that ratio the target share is at least ``AUTO_REGRESSION_TARGET_RATIO / ratio`` (at
#: most ``AUTO_REGRESSION_TARGET_MAX_SHARE``): where the fit is weak, the intercept-only model
#: it may fall back to needs a precise mean. (see benchmarks/DECISIONS.md#auto_regression_select)
AUTO_REGRESSION_TARGET_RATIO = 3.0
AUTO_REGRESSION_TARGET_MAX_SHARE = 0.3


def regression_target_share(share, snr):
    """The share of ``mu^2`` a regressor's floor spends on its clipped target sum at the ratio
    ``snr``: ``max(share, min(AUTO_REGRESSION_TARGET_MAX_SHARE, AUTO_REGRESSION_TARGET_RATIO /
    snr))`` (see :data:`AUTO_REGRESSION_SELECT`). Public quantities only."""
    pol = current()
    if pol.AUTO_REGRESSION_TARGET_RATIO > 0:
        weak = pol.AUTO_REGRESSION_TARGET_RATIO / max(snr, 1e-12)
        share = max(share, min(pol.AUTO_REGRESSION_TARGET_MAX_SHARE, weak))
    return float(share)


def auto_prior_start(problem, mu, mechanism, prior_share=None, prior_switch=None, select=None):
    """The warm start, selection and switch to the intercept-only model that
    ``schedule='auto'`` adds to a plan whose mechanism is ``mechanism``: a dict of
    :class:`~skdpgd.schedules.NoisePlan` fields to replace (``prior_share``, ``select_share``,
    ``prior_switch``), empty for none. ``prior_share`` / ``prior_switch`` / ``select``: the
    :class:`~skdpgd.schedules.Auto` parameters (None: the constants :data:`AUTO_PRIOR_SHARE` /
    :data:`AUTO_PRIOR_SWITCH` / :data:`AUTO_SELECT`; a false value: off). Only for classifiers
    with an intercept; the selection applies to gradient, Newton and output plans below its
    signal-to-noise ratio and takes precedence over the switch; the warm start and the switch,
    which start the fit from the counts' log-odds, to the logistic losses only (a classifier
    on another loss, the squared hinge, gets the selection only, its fit started at 0).

    A regression loss that admits it (``problem.regression_start``: Huber and Poisson with a
    public target bound) gets, for a gradient or output plan, a warm start: the share
    :data:`AUTO_REGRESSION_START_SHARE` of the budget on the sum of the clipped targets, whose
    intercept-only model starts the steps (gradient) or centres the intercept's penalty
    (output perturbation). A regressor with a public target range
    (``problem.regression_select``) below the ratio of :data:`AUTO_REGRESSION_SELECT` (or
    ``select``) also gets the selection between its fit (gradient, output or sufficient
    statistics) and that intercept-only model."""
    pol = current()
    if getattr(problem, "regression_select", False) or getattr(problem, "regression_start", False):
        if not problem.fit_intercept or math.isinf(mu):
            return {}
        start = getattr(problem, "regression_start", False) and mechanism in ("gradient", "output")
        snr = signal_to_noise(problem.n_samples, problem.n_params, mu) * problem.signal_scale
        rule = select_rule(pol.AUTO_REGRESSION_SELECT if select is None else select)
        if (
            rule is not None
            and getattr(problem, "regression_select", False)
            and snr < rule[0]
            and mechanism in ("gradient", "output", "ssp")
        ):
            share = regression_target_share(
                pol.AUTO_REGRESSION_START_SHARE if start else rule[1], snr
            )
            return {"prior_share": share, "select_share": rule[2]}
        if start:
            return {"prior_share": pol.AUTO_REGRESSION_START_SHARE}
        return {}
    logistic = problem.second_order == "newton"
    classifier = logistic or getattr(problem, "classifier", False)
    if not (problem.fit_intercept and classifier and not math.isinf(mu)):
        return {}
    snr = signal_to_noise(problem.n_samples, problem.n_params, mu) * problem.signal_scale
    # an explicit switch (and no explicit selection) runs the switch instead of the default
    explicit_switch = prior_switch is not None and bool(prior_switch)
    default = pol.AUTO_SELECT if logistic else pol.AUTO_SELECT_SQUARED_HINGE
    rule = select_rule((None if explicit_switch else default) if select is None else select)
    if (
        rule is not None
        and snr < rule[0]
        and mechanism in ("gradient", "newton", "kronecker", "output")
    ):
        return {"prior_share": rule[1], "select_share": rule[2]}
    # the warm start and the switch start the fit from the counts' log-odds: logistic only
    if not logistic or mechanism not in ("gradient", "newton", "kronecker"):
        return {}
    share = pol.AUTO_PRIOR_SHARE if prior_share is None else float(prior_share)
    switch = pol.AUTO_PRIOR_SWITCH if prior_switch is None else prior_switch
    for s, p, tier_share in prior_switch_tiers(switch):
        if snr < s:
            return {"prior_share": share if share > 0 else tier_share, "prior_switch": (s, p)}
    if share > 0:
        return {"prior_share": share}
    return {}


# =============================================================================================
# Full-batch estimators: the Hessian releases of DP damped Newton
# =============================================================================================

#: ``hessian_rate='auto'``: the smallest Poisson rate that keeps the Hessian noise's eigenvalue
#: floor below ``1 / AUTO_HESSIAN_SNR`` of a typical eigenvalue (see :func:`hessian_rate`) ...
#: (see benchmarks/DECISIONS.md#auto_hessian_snr)
AUTO_HESSIAN_SNR = 1.0
#: ... and at least this many rows per parameter and output (the sampling error).
#: (see benchmarks/DECISIONS.md#auto_hessian_min_rows)
AUTO_HESSIAN_MIN_ROWS = 100.0
#: Hessian releases of the automatic Newton plan when a Hessian at every iteration would cost
#: more than ``AUTO_HESSIAN_MAX_WORK`` passes (spread by :func:`~skdpgd.schedules.hessian_steps`).
#: (see benchmarks/DECISIONS.md#auto_newton_hessians)
AUTO_NEWTON_HESSIANS = 2
#: Below this work (the sum of the Hessian releases' rates, in full passes over X) every
#: iteration releases a Hessian ... (see benchmarks/DECISIONS.md#auto_hessian_max_work)
AUTO_HESSIAN_MAX_WORK = 0.5
#: ... and also when a full Hessian's noise floor is below this fraction of a typical
#: eigenvalue (:func:`hessian_noise_ratio`): then exact steps reach the non-private fit.
#: (see benchmarks/DECISIONS.md#auto_hessian_free_ratio)
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
    pol = current()
    T = int(n_iter)
    if math.isinf(mu):
        z = 0.0
    else:
        z = math.sqrt(T / ((1.0 - gradient_share) * mu * mu))
    unit = _sensitivity_unit(problem)
    q = hessian_rate(
        problem.n_samples, problem.n_params, z, unit, problem.signal_scale, problem.n_outputs
    )
    ratio = hessian_noise_ratio(problem.n_samples, problem.n_params, z, unit, problem.signal_scale)
    if (
        T * q <= pol.AUTO_HESSIAN_MAX_WORK
        or ratio <= pol.AUTO_HESSIAN_FREE_RATIO
        or pol.AUTO_NEWTON_HESSIANS is None
    ):
        return None
    return pol.AUTO_NEWTON_HESSIANS


def hessian_rate(
    n_samples, n_params, z, sensitivity_unit, signal_scale=1.0, n_outputs=1, snr_target=None
):
    """The Poisson rate of a Hessian release (see :data:`AUTO_HESSIAN_SNR`); all inputs public:
    N, D, the release's noise multiplier z, ``sensitivity_unit`` (sqrt(2) replace-one, 1
    add/remove-one), the released signal scale, the number of outputs and the target in place
    of ``AUTO_HESSIAN_SNR`` (None: that constant)."""
    pol = current()
    target = pol.AUTO_HESSIAN_SNR if snr_target is None else float(snr_target)
    n = float(n_samples)
    D = float(n_params)
    q_rows = pol.AUTO_HESSIAN_MIN_ROWS * D * max(1, int(n_outputs)) / n
    if math.isinf(z) or math.isnan(z):
        return 1.0
    q_snr = target * hessian_noise_ratio(n, D, z, sensitivity_unit, signal_scale)
    return float(min(1.0, max(q_rows, q_snr)))


def hessian_noise_ratio(n_samples, n_params, z, sensitivity_unit, signal_scale=1.0):
    """``sqrt(2) z u D^1.5 / (N s)``: the noise floor of a full Hessian release with multiplier
    z over a typical eigenvalue of the Hessian sum (see :data:`AUTO_HESSIAN_SNR`)."""
    return (
        math.sqrt(2.0)
        * z
        * sensitivity_unit
        * float(n_params) ** 1.5
        / (float(n_samples) * max(signal_scale, 1e-12))
    )


# =============================================================================================
# Full-batch estimators: the row-clipping bound (row_clip='auto')
# =============================================================================================

#: ``row_clip='auto'`` clips rows to :func:`row_clip_factor` times a private estimate of the mean
#: row norm, never above ``data_norm``. (see benchmarks/DECISIONS.md#row_clip_factor)
ROW_CLIP_FACTOR = 0.35
#: With ``row_clip='auto'`` the 'auto' rules read the ratio times ``(m / bound) **
#: AUTO_SIGNAL_POWER`` (m the released mean norm). (see benchmarks/DECISIONS.md#auto_signal_power)
AUTO_SIGNAL_POWER = 2.0
#: See :data:`ROW_CLIP_FACTOR`. (see benchmarks/DECISIONS.md#row_clip_snr)
ROW_CLIP_SNR = 20.0
#: See :data:`ROW_CLIP_FACTOR`. (see benchmarks/DECISIONS.md#row_clip_power)
ROW_CLIP_POWER = 0.5
#: Most of the budget (share of ``mu^2``) the norm query may use.
#: (see benchmarks/DECISIONS.md#row_clip_max_share)
ROW_CLIP_MAX_SHARE = 0.1
#: Target relative standard deviation of the norm estimate (for a mean norm of at least a
#: quarter of data_norm); sets the query's share when below the cap.
#: (see benchmarks/DECISIONS.md#row_clip_target_relative_error)
ROW_CLIP_TARGET_RELATIVE_ERROR = 0.2


def row_clip_factor(snr):
    """The multiple of the (private) mean row norm that ``row_clip='auto'`` clips rows to:
    ``ROW_CLIP_FACTOR * max(1, snr / ROW_CLIP_SNR) ** ROW_CLIP_POWER``, ``snr`` the ratio of
    :func:`signal_to_noise` (it grows with the budget until nothing is clipped)."""
    pol = current()
    if math.isinf(snr):
        return math.inf
    return pol.ROW_CLIP_FACTOR * max(1.0, snr / pol.ROW_CLIP_SNR) ** pol.ROW_CLIP_POWER


#: A ``verbose`` note when the released mean clipped row norm is at least
#: ``ROW_NORM_NOTE_SHARE * data_norm + ROW_NORM_NOTE_SIGMAS * (its noise's std)``: nearly every row
#: is then at least data_norm long. (see benchmarks/DECISIONS.md#row_norm_note_share)
ROW_NORM_NOTE_SHARE = 0.9
#: See :data:`ROW_NORM_NOTE_SHARE`. (see benchmarks/DECISIONS.md#row_norm_note_sigmas)
ROW_NORM_NOTE_SIGMAS = 1.0


# =============================================================================================
# Set-up releases: budget shares of the noisy row count and class counts
# =============================================================================================

#: Share of ``mu^2`` a noisy row count spends when N is private (add/remove-one) and no public
#: ``n_samples`` is given. (see benchmarks/DECISIONS.md#count_share)
COUNT_SHARE = 0.02

#: Share of ``mu^2`` the noisy class counts of ``class_weight='balanced'`` spend.
#: (see benchmarks/DECISIONS.md#class_count_share)
CLASS_COUNT_SHARE = 0.02


# =============================================================================================
# DP-SGD (DPSGDClassifier, DPSGDRegressor): the 'auto' hyperparameters
# =============================================================================================

#: Default per-example clip norm (small budgets) as a fraction of the loss's worst-case gradient
#: norm ``G = |l'|_max * sqrt(data_norm^2 + c^2)``; a public constant.
#: (see benchmarks/DECISIONS.md#sgd_clip_factor)
SGD_CLIP_FACTOR = 0.25

#: The clip factor rises to 1 as the budget grows: ``1 - (1 - SGD_CLIP_FACTOR) exp(-mu /
#: SGD_CLIP_RELAX_MU)`` (without noise, clipping below G is only a bias).
#: (see benchmarks/DECISIONS.md#sgd_clip_relax_mu)
SGD_CLIP_RELAX_MU = 50.0


def sgd_clip_factor(mu):
    """The fraction of the loss's gradient bound G that ``clip_norm='auto'`` clips to."""
    pol = current()
    return 1.0 - (1.0 - pol.SGD_CLIP_FACTOR) * math.exp(-mu / pol.SGD_CLIP_RELAX_MU)


# --- the defaults ('auto') of alpha, the number of steps and the batch size -------------------
# All are functions of public quantities only: the public N (``n_samples`` or the noisy count),
# the number of parameters p, the budget's GDP mu = gdp_mu(epsilon, delta), and the loss's
# public constants (clip norm C, row bound r, smoothness M). See :func:`sgd_defaults`.


#: The non-private part of ``alpha='auto'``: scikit-learn's ``SGDClassifier()`` /
#: ``SGDRegressor()`` default (same objective normalisation).
#: (see benchmarks/DECISIONS.md#sgd_alpha_base)
SGD_ALPHA_BASE = 1e-4

#: ``c`` in the budget-aware part of ``alpha='auto'``, ``c sqrt(p) C r / (N mu s)`` (see
#: :func:`sgd_defaults`), for the classifiers ... (see benchmarks/DECISIONS.md#sgd_alpha_noise)
SGD_ALPHA_NOISE = 0.1
#: ... and for the regressors. (see benchmarks/DECISIONS.md#sgd_alpha_noise_regression)
SGD_ALPHA_NOISE_REGRESSION = 0.5

#: Number of steps ``T = SGD_FLOW * kappa``, within [SGD_MIN_STEPS, SGD_MAX_STEPS].
#: (see benchmarks/DECISIONS.md#sgd_flow)
SGD_FLOW = 2.0
#: See :data:`SGD_FLOW`. (see benchmarks/DECISIONS.md#sgd_min_steps)
SGD_MIN_STEPS = 100
#: See :data:`SGD_FLOW`. (see benchmarks/DECISIONS.md#sgd_max_steps)
SGD_MAX_STEPS = 20_000

#: Batch size ``b = SGD_BATCH_FACTOR * N mu / sqrt(T)``, at least SGD_MIN_BATCH, and at most
#: what keeps the run within SGD_MAX_EPOCHS expected passes.
#: (see benchmarks/DECISIONS.md#sgd_batch_factor)
SGD_BATCH_FACTOR = 1.0
#: See :data:`SGD_BATCH_FACTOR`. (see benchmarks/DECISIONS.md#sgd_min_batch)
SGD_MIN_BATCH = 32
#: See :data:`SGD_BATCH_FACTOR`. (see benchmarks/DECISIONS.md#sgd_max_epochs)
SGD_MAX_EPOCHS = 30.0

#: Without a public ``n_samples`` the mechanism uses ``N~ + SGD_COUNT_MARGIN * z_c``, an upper
#: confidence bound on the noisy count (post-processing).
#: (see benchmarks/DECISIONS.md#sgd_count_margin)
SGD_COUNT_MARGIN = 2.0

#: ``learning_rate='auto'`` is ``SGD_LR_FACTOR / (M + alpha)``.
#: (see benchmarks/DECISIONS.md#sgd_lr_factor)
SGD_LR_FACTOR = 1.0

#: ``average=True`` returns the mean of the iterates over the last ``1 - SGD_AVERAGE_FROM`` of
#: the run (tail averaging, post-processing). (see benchmarks/DECISIONS.md#sgd_average_from)
SGD_AVERAGE_FROM = 0.5


#: ``(s, p, share)``: DP-SGD's prior switch below the ratio ``s`` (see :func:`sgd_prior_switch`
#: and the theory page); None: off. (see benchmarks/DECISIONS.md#sgd_prior_switch)
SGD_PRIOR_SWITCH = (5.0, 0.5, 0.1)


def sgd_prior_switch(n_public, n_params, mu, fit_intercept, logistic, auto):
    """``(p, share)`` when DP-SGD's prior switch applies (see :data:`SGD_PRIOR_SWITCH`), else
    None. Public quantities only.

    It applies to ``DPSGDClassifier(loss='log_loss', schedule='auto')`` with an intercept, below
    the ratio ``s`` of the whole budget: the class counts are released first with ``share`` of
    ``mu^2``; when their shrunk majority frequency is at least ``p`` the rest goes to a second
    release of the counts (the intercept-only model), otherwise DP-SGD runs with the rest,
    started from their prior's intercept. Binary fits where it applies follow
    :func:`sgd_binary_rule` instead, and a fit with ``p <= 1/K`` takes the intercept-only model
    before any draw (its counts could not choose otherwise)."""
    pol = current()
    if pol.SGD_PRIOR_SWITCH is None or not (fit_intercept and logistic and auto):
        return None
    s, p, share = pol.SGD_PRIOR_SWITCH
    if math.isinf(mu) or signal_to_noise(n_public, n_params, mu) >= s:
        return None
    return float(p), float(share)


#: ``(s0, count_share, select_share)``: what a *binary* DP-SGD fit does where the prior switch
#: applies (below :data:`SGD_PRIOR_SWITCH`'s ratio). Two classes always have one that holds at
#: least half of their counts, so the switch's decision at ``p = 0.5`` cannot go either way:
#: instead, below the ratio ``s0`` the whole budget goes to the class counts (the
#: intercept-only model, a public decision made before any draw), and from ``s0`` on the
#: counts get ``count_share`` of ``mu^2`` (DP-SGD starts from their prior), DP-SGD runs, and a
#: release with ``select_share`` chooses between its fit and the counts' intercept-only model
#: (see :func:`sgd_binary_rule`). None: binary fits follow the switch's rule (which, at
#: ``p <= 1/2``, is the public decision). (see benchmarks/DECISIONS.md#sgd_binary_select)
SGD_BINARY_SELECT = (0.5, 0.05, 0.05)


#: ``(s, target_share, select_share)``: :data:`AUTO_REGRESSION_SELECT`'s floor for
#: ``DPSGDRegressor`` (the target share raised as there); None: off (measured, not adopted:
#: on the design half it cost DP-SGD's medians and worst seeds and gained no floor cell).
#: (see benchmarks/DECISIONS.md#sgd_regression_select)
SGD_REGRESSION_SELECT = None


def sgd_binary_rule(n_public, n_params, mu):
    """What a binary DP-SGD fit below the prior switch's ratio does (see
    :data:`SGD_BINARY_SELECT`): ``'prior'`` (the whole budget on the class counts, decided from
    public values), ``('select', count_share, select_share)``, or None (the switch's rule).
    ``n_public`` is the released row count itself (not raised by the margin the steps use) or
    the public ``n_samples``. Public quantities only; call it only where
    :func:`sgd_prior_switch` applies."""
    rule = current().SGD_BINARY_SELECT
    if rule is None:
        return None
    s0, count_share, select_share = (float(v) for v in rule)
    if not (
        s0 >= 0 and 0.0 < count_share and 0.0 < select_share and count_share + select_share < 1.0
    ):
        raise ValueError(
            f"SGD_BINARY_SELECT needs s0 >= 0 and positive shares that sum below 1, got {rule!r}."
        )
    if signal_to_noise(n_public, n_params, mu) < s0:
        return "prior"
    return "select", count_share, select_share


def sgd_defaults(
    n_public,
    n_params,
    mu,
    clip,
    row_bound,
    smoothness,
    alpha="auto",
    batch_size="auto",
    epochs="auto",
    learning_rate="auto",
    alpha_noise=None,
    target_scale=1.0,
):
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
    pol = current()
    n_public = float(n_public)
    if alpha == "auto":
        c = pol.SGD_ALPHA_NOISE if alpha_noise is None else float(alpha_noise)
        noise = (
            0.0
            if math.isinf(mu)
            else (c * math.sqrt(n_params) * clip * row_bound / (n_public * mu * target_scale))
        )
        alpha = pol.SGD_ALPHA_BASE + noise
    alpha = float(alpha)
    if learning_rate == "auto":
        learning_rate = pol.SGD_LR_FACTOR / (smoothness + alpha)
    learning_rate = float(learning_rate)
    if epochs != "auto" and batch_size != "auto":
        q = min(1.0, float(batch_size) / n_public)
        return alpha, learning_rate, q, max(1, math.ceil(float(epochs) / q))
    if alpha > 0:
        kappa = (smoothness + alpha) / alpha
        t_target = int(
            min(pol.SGD_MAX_STEPS, max(pol.SGD_MIN_STEPS, math.ceil(pol.SGD_FLOW * kappa)))
        )
    else:
        t_target = pol.SGD_MAX_STEPS
    if batch_size == "auto":
        if epochs != "auto":  # the batch whose steps give the target T
            b = float(epochs) * n_public / t_target
        else:
            b = (
                n_public
                if math.isinf(mu)
                else (pol.SGD_BATCH_FACTOR * n_public * mu / math.sqrt(t_target))
            )
            b = min(b, pol.SGD_MAX_EPOCHS * n_public / t_target)
        b = max(b, pol.SGD_MIN_BATCH)
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

#: ``importance='auto'``: whether the importance mask is on (off: no gain on the suite).
#: (see benchmarks/DECISIONS.md#auto_importance)
AUTO_IMPORTANCE = False

#: Linear models: masked weights keep their value (True) or are set to 0 (False, the paper's
#: pruned forward pass); see ``skdpgd._minibatch.importance.FROZEN_COLUMN_SCALE``.
#: (see benchmarks/DECISIONS.md#importance_linear_freeze)
IMPORTANCE_LINEAR_FREEZE = True

#: The per-coordinate scale stays within [1 / IMPORTANCE_SCALE_RATIO, IMPORTANCE_SCALE_RATIO]
#: (a safety bound: a coordinate the noise made look silent gets a bounded share of the clip).
#: (see benchmarks/DECISIONS.md#importance_scale_ratio)
IMPORTANCE_SCALE_RATIO = 10.0

#: Decay of the running second moment of the released gradients (the paper's gamma_2).
#: (see benchmarks/DECISIONS.md#importance_moment_decay)
IMPORTANCE_MOMENT_DECAY = 0.99


# =============================================================================================
# DPMLPClassifier: the defaults of its 'hong' and 'exponential' schedules
# =============================================================================================

#: DPMLPClassifier's ``schedule='hong'`` with ``decay=None``: gamma such that ``gamma^T`` equals
#: this (not the linear models' ``1 - 1/kappa`` from Hong et al.'s Theorem 4.4).
#: (see benchmarks/DECISIONS.md#mlp_hong_influence)
MLP_HONG_INFLUENCE = 0.1

#: DPMLPClassifier's ``schedule='exponential'`` with ``decay=None``: ratio between consecutive
#: multipliers. (see benchmarks/DECISIONS.md#mlp_exponential_decay)
MLP_EXPONENTIAL_DECAY = 0.99


def mlp_hong_gamma(n_iter, decay=None):
    """DPMLPClassifier's gamma for ``schedule='hong'``: ``decay``, or
    ``MLP_HONG_INFLUENCE ** (1 / T)`` when it is None."""
    return current().MLP_HONG_INFLUENCE ** (1.0 / n_iter) if decay is None else float(decay)


def mlp_exponential_decay(decay=None):
    """DPMLPClassifier's ratio for ``schedule='exponential'``: ``decay``, or
    :data:`MLP_EXPONENTIAL_DECAY` when it is None."""
    return current().MLP_EXPONENTIAL_DECAY if decay is None else float(decay)


# =============================================================================================
# DPMLPClassifier: its 'auto' clip norm, step size and number of steps
# =============================================================================================

#: ``clip_norm='auto'`` is ``MLP_CLIP_FACTOR * r`` with ``r = sqrt(data_norm^2 + 1)``, the
#: norm bound of an input row with its bias unit. (see benchmarks/DECISIONS.md#mlp_clip_factor)
MLP_CLIP_FACTOR = 1.0

#: ``learning_rate='auto'`` is ``MLP_STEP / r^2`` (the curvature of every layer scales as r^2).
#: (see benchmarks/DECISIONS.md#mlp_step)
MLP_STEP = 1.0

#: ``max_iter='auto'``: ``T = MLP_STEPS_PER_SNR * N mu / sqrt(D)`` full-batch steps, within
#: [MLP_MIN_STEPS, MLP_MAX_STEPS]. (see benchmarks/DECISIONS.md#mlp_steps_per_snr)
MLP_STEPS_PER_SNR = 30.0
#: See :data:`MLP_STEPS_PER_SNR`. (see benchmarks/DECISIONS.md#mlp_min_steps)
MLP_MIN_STEPS = 10
#: See :data:`MLP_STEPS_PER_SNR`; also the number of steps without noise (epsilon = inf).
#: (see benchmarks/DECISIONS.md#mlp_max_steps)
MLP_MAX_STEPS = 1000


def mlp_row_bound(data_norm):
    """``r = sqrt(data_norm^2 + 1)``: the norm bound of a row with the first layer's bias
    unit appended."""
    return math.sqrt(float(data_norm) ** 2 + 1.0)


def mlp_auto_clip_norm(data_norm):
    """DPMLPClassifier's ``clip_norm='auto'``: ``MLP_CLIP_FACTOR * sqrt(data_norm^2 + 1)``.

    A per-example gradient of the first layer is ``delta_i (x_i, 1)^T`` with
    ``||(x_i, 1)|| <= r``, and at the initial weights the later layers' gradients scale with
    the inputs in the same way (the activations are at most linear in them), so r is the
    scale of a gradient and the clip is set relative to it (public: ``data_norm``)."""
    return current().MLP_CLIP_FACTOR * mlp_row_bound(data_norm)


def mlp_auto_learning_rate(data_norm):
    """DPMLPClassifier's ``learning_rate='auto'``: ``MLP_STEP / (data_norm^2 + 1)`` (the
    curvature of the loss in each layer's weights scales as the squared input norm, as the
    logistic loss's smoothness ``r^2 / 4``)."""
    return current().MLP_STEP / mlp_row_bound(data_norm) ** 2


def mlp_auto_steps(n_samples, n_params, mu):
    """DPMLPClassifier's ``max_iter='auto'``: ``T = MLP_STEPS_PER_SNR * s`` rounded up, within
    [MLP_MIN_STEPS, MLP_MAX_STEPS], ``s = N mu / sqrt(D)`` (:func:`signal_to_noise`).

    With T uniform full-batch steps of size eta and clip C, each step's noise on the mean
    gradient has norm about ``2 C sqrt(T) / s`` (replace-one), so the noise's random walk
    over the run moves the weights by about ``2 C eta T / s``: proportional T keeps that
    movement the same at every budget while the run (``eta T``) grows with it. A larger
    budget gives more steps; without noise (mu = inf) the run is MLP_MAX_STEPS long."""
    pol = current()
    s = signal_to_noise(n_samples, n_params, mu)
    if math.isinf(s):
        return int(pol.MLP_MAX_STEPS)
    T = math.ceil(pol.MLP_STEPS_PER_SNR * s)
    return int(min(max(T, pol.MLP_MIN_STEPS), pol.MLP_MAX_STEPS))


# =============================================================================================
# DPStandardScaler
# =============================================================================================

#: Smallest standard deviation DPStandardScaler divides by, in units of a column's public
#: half-range: a public floor, so that the scale never comes from an unreliable release.
#: (see benchmarks/DECISIONS.md#std_floor)
STD_FLOOR = 0.01


# =============================================================================================
# PrivatePipeline: the DP transformers' share of the budget
# =============================================================================================

#: Share of the pipeline's ``mu^2`` given to each DP transformer by default.
#: (see benchmarks/DECISIONS.md#dp_transformer_share)
DP_TRANSFORMER_SHARE = 0.3
#: Most of ``mu^2`` the DP transformers take together by default.
#: (see benchmarks/DECISIONS.md#dp_transformers_max_share)
DP_TRANSFORMERS_MAX_SHARE = 0.5


def dp_transformer_share(n_transformers):
    """The share of the pipeline's mu^2 each of ``n_transformers`` DP transformers gets."""
    pol = current()
    k = n_transformers
    return min(pol.DP_TRANSFORMER_SHARE, pol.DP_TRANSFORMERS_MAX_SHARE / k) if k else 0.0


# =============================================================================================
# The policy object: the constants above as one frozen value, and the active one
# =============================================================================================

#: The names of the policy's constants, in the order they are defined above.
NAMES = tuple(
    name
    for name, value in list(globals().items())
    if name.isupper() and name != "NAMES" and not isinstance(value, types.ModuleType)
)


@dataclasses.dataclass(frozen=True)
class Policy:
    """Every constant of :mod:`skdpgd.policy` as one frozen value.

    One field per module constant, in the module's order (:data:`NAMES`): same name, default the
    constant itself. Each value is written once, in the constant's assignment above, next to the
    comment that says what it decides and where it was chosen (``benchmarks/DECISIONS.md``); a
    field's default only names that constant (a test checks that the fields and the constants
    agree: names, order, values). Change values with :func:`using`, not by assigning.
    """

    # Full-batch estimators (DPLogisticRegression, DPRidge): number of steps and noise shapes
    MAX_AUTO_ITER: int = MAX_AUTO_ITER
    MAX_SHAPE_RATIO: float = MAX_SHAPE_RATIO
    AUTO_DYNAMIC_THRESHOLD: float = AUTO_DYNAMIC_THRESHOLD

    # Full-batch estimators: the penalty (alpha='auto')
    AUTO_ALPHA_NOISE: float = AUTO_ALPHA_NOISE
    AUTO_ALPHA_NOISE_NEWTON: float = AUTO_ALPHA_NOISE_NEWTON
    AUTO_ALPHA_NOISE_SQUARED: float = AUTO_ALPHA_NOISE_SQUARED
    AUTO_OUTPUT_ALPHA: float = AUTO_OUTPUT_ALPHA

    # Full-batch estimators: the mechanism schedule='auto' runs
    AUTO_SECOND_ORDER_MIN_SNR: float = AUTO_SECOND_ORDER_MIN_SNR
    AUTO_SSP_SHARE: float = AUTO_SSP_SHARE
    SSP_FLOOR: float = SSP_FLOOR
    AUTO_SECOND_ORDER_MAX_PARAMS: int = AUTO_SECOND_ORDER_MAX_PARAMS
    AUTO_OUTPUT_MIN_SNR: float = AUTO_OUTPUT_MIN_SNR
    AUTO_NEAR_EXACT_OUTPUT_MIN_SNR: float = AUTO_NEAR_EXACT_OUTPUT_MIN_SNR
    AUTO_LOW_OUTPUT_MIN_SNR: float = AUTO_LOW_OUTPUT_MIN_SNR
    AUTO_KRONECKER_MAX_FEATURES: int = AUTO_KRONECKER_MAX_FEATURES
    AUTO_KRONECKER_MIN_SNR: float = AUTO_KRONECKER_MIN_SNR
    AUTO_KRONECKER_ITER: int = AUTO_KRONECKER_ITER
    AUTO_KRONECKER_SHARE: float = AUTO_KRONECKER_SHARE
    AUTO_KRONECKER_CURVATURE_SHARE: float = AUTO_KRONECKER_CURVATURE_SHARE
    AUTO_KRONECKER_RATE_SNR: float = AUTO_KRONECKER_RATE_SNR
    AUTO_NEWTON_ITER: int = AUTO_NEWTON_ITER
    AUTO_NEWTON_SHARE: float = AUTO_NEWTON_SHARE
    AUTO_PRIOR_MAX_SNR: float = AUTO_PRIOR_MAX_SNR
    AUTO_PRIOR_MAX_SNR_BINARY: float = AUTO_PRIOR_MAX_SNR_BINARY
    AUTO_PRIOR_SHARE: float = AUTO_PRIOR_SHARE
    AUTO_PRIOR_SWITCH_SHARE: float = AUTO_PRIOR_SWITCH_SHARE
    AUTO_PRIOR_SWITCH: tuple | None = AUTO_PRIOR_SWITCH
    AUTO_SELECT: tuple | None = AUTO_SELECT
    AUTO_SELECT_SQUARED_HINGE: tuple | None = AUTO_SELECT_SQUARED_HINGE
    AUTO_SELECT_BIAS: float = AUTO_SELECT_BIAS
    AUTO_CHOICE: tuple | None = AUTO_CHOICE
    AUTO_CHOICE_CANDIDATES: tuple = AUTO_CHOICE_CANDIDATES
    AUTO_CHOICE_MAX_FITS: int = AUTO_CHOICE_MAX_FITS
    AUTO_CHOICE_MAIN_SHARE: float = AUTO_CHOICE_MAIN_SHARE
    AUTO_CHOICE_BLENDS: tuple = AUTO_CHOICE_BLENDS
    AUTO_CHOICE_MAX_NOISE: float = AUTO_CHOICE_MAX_NOISE
    AUTO_CHOICE_MAIN_BIAS: float = AUTO_CHOICE_MAIN_BIAS
    WARM_START_SHRINK: float = WARM_START_SHRINK
    AUTO_REGRESSION_START_SHARE: float = AUTO_REGRESSION_START_SHARE
    AUTO_REGRESSION_SELECT: tuple | None = AUTO_REGRESSION_SELECT
    AUTO_REGRESSION_TARGET_RATIO: float = AUTO_REGRESSION_TARGET_RATIO
    AUTO_REGRESSION_TARGET_MAX_SHARE: float = AUTO_REGRESSION_TARGET_MAX_SHARE

    # Full-batch estimators: the Hessian releases of DP damped Newton
    AUTO_HESSIAN_SNR: float = AUTO_HESSIAN_SNR
    AUTO_HESSIAN_MIN_ROWS: float = AUTO_HESSIAN_MIN_ROWS
    AUTO_NEWTON_HESSIANS: int = AUTO_NEWTON_HESSIANS
    AUTO_HESSIAN_MAX_WORK: float = AUTO_HESSIAN_MAX_WORK
    AUTO_HESSIAN_FREE_RATIO: float = AUTO_HESSIAN_FREE_RATIO

    # Full-batch estimators: the row-clipping bound (row_clip='auto')
    ROW_CLIP_FACTOR: float = ROW_CLIP_FACTOR
    AUTO_SIGNAL_POWER: float = AUTO_SIGNAL_POWER
    ROW_CLIP_SNR: float = ROW_CLIP_SNR
    ROW_CLIP_POWER: float = ROW_CLIP_POWER
    ROW_CLIP_MAX_SHARE: float = ROW_CLIP_MAX_SHARE
    ROW_CLIP_TARGET_RELATIVE_ERROR: float = ROW_CLIP_TARGET_RELATIVE_ERROR
    ROW_NORM_NOTE_SHARE: float = ROW_NORM_NOTE_SHARE
    ROW_NORM_NOTE_SIGMAS: float = ROW_NORM_NOTE_SIGMAS

    # Set-up releases: budget shares of the noisy row count and class counts
    COUNT_SHARE: float = COUNT_SHARE
    CLASS_COUNT_SHARE: float = CLASS_COUNT_SHARE

    # DP-SGD (DPSGDClassifier, DPSGDRegressor): the 'auto' hyperparameters
    SGD_CLIP_FACTOR: float = SGD_CLIP_FACTOR
    SGD_CLIP_RELAX_MU: float = SGD_CLIP_RELAX_MU
    SGD_ALPHA_BASE: float = SGD_ALPHA_BASE
    SGD_ALPHA_NOISE: float = SGD_ALPHA_NOISE
    SGD_ALPHA_NOISE_REGRESSION: float = SGD_ALPHA_NOISE_REGRESSION
    SGD_FLOW: float = SGD_FLOW
    SGD_MIN_STEPS: int = SGD_MIN_STEPS
    SGD_MAX_STEPS: int = SGD_MAX_STEPS
    SGD_BATCH_FACTOR: float = SGD_BATCH_FACTOR
    SGD_MIN_BATCH: int = SGD_MIN_BATCH
    SGD_MAX_EPOCHS: float = SGD_MAX_EPOCHS
    SGD_COUNT_MARGIN: float = SGD_COUNT_MARGIN
    SGD_LR_FACTOR: float = SGD_LR_FACTOR
    SGD_AVERAGE_FROM: float = SGD_AVERAGE_FROM
    SGD_PRIOR_SWITCH: tuple | None = SGD_PRIOR_SWITCH
    SGD_BINARY_SELECT: tuple | None = SGD_BINARY_SELECT
    SGD_REGRESSION_SELECT: tuple | None = SGD_REGRESSION_SELECT

    # Importance-masked DP-SGD (ImportanceMask, importance='auto')
    AUTO_IMPORTANCE: bool = AUTO_IMPORTANCE
    IMPORTANCE_LINEAR_FREEZE: bool = IMPORTANCE_LINEAR_FREEZE
    IMPORTANCE_SCALE_RATIO: float = IMPORTANCE_SCALE_RATIO
    IMPORTANCE_MOMENT_DECAY: float = IMPORTANCE_MOMENT_DECAY

    # DPMLPClassifier: the defaults of its 'hong' and 'exponential' schedules
    MLP_HONG_INFLUENCE: float = MLP_HONG_INFLUENCE
    MLP_EXPONENTIAL_DECAY: float = MLP_EXPONENTIAL_DECAY

    # DPMLPClassifier: its 'auto' clip norm, step size and number of steps
    MLP_CLIP_FACTOR: float = MLP_CLIP_FACTOR
    MLP_STEP: float = MLP_STEP
    MLP_STEPS_PER_SNR: float = MLP_STEPS_PER_SNR
    MLP_MIN_STEPS: int = MLP_MIN_STEPS
    MLP_MAX_STEPS: int = MLP_MAX_STEPS

    # DPStandardScaler
    STD_FLOOR: float = STD_FLOOR

    # PrivatePipeline: the DP transformers' share of the budget
    DP_TRANSFORMER_SHARE: float = DP_TRANSFORMER_SHARE
    DP_TRANSFORMERS_MAX_SHARE: float = DP_TRANSFORMERS_MAX_SHARE


#: The package's policy: the module constants' values.
DEFAULT = Policy()

#: The active policy of the running thread (and asyncio task): a context variable, so that a
#: ``using`` block in one thread leaves every other thread's fits on theirs.
_ACTIVE = contextvars.ContextVar("skdpgd_policy", default=DEFAULT)


def current():
    """The active :class:`Policy` of this thread (:data:`DEFAULT` outside a :func:`using`
    block)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def using(policy=None, **changes):
    """Activate ``policy`` (default: the active one) with ``changes`` for the ``with`` block.

    ``changes`` name constants of this module (an unknown name is a ``TypeError``); the value
    active before the block comes back when it ends, also on an exception. Yields the active
    :class:`Policy`. Thread-local (a context variable): a thread started inside the block, and
    every other thread, keeps its own active policy (:data:`DEFAULT` unless it enters a block
    itself).
    """
    unknown = sorted(set(changes) - set(NAMES))
    if unknown:
        raise TypeError(f"skdpgd.policy has no constant {', '.join(unknown)}")
    if policy is not None and not isinstance(policy, Policy):
        raise TypeError(f"using() takes a skdpgd.policy.Policy, got {type(policy).__name__}")
    active = dataclasses.replace(policy if policy is not None else _ACTIVE.get(), **changes)
    token = _ACTIVE.set(active)
    try:
        yield active
    finally:
        _ACTIVE.reset(token)


class _PolicyModule(types.ModuleType):
    """Refuses assignments to the constants: the rules read :func:`current`, not the module."""

    def __setattr__(self, name, value):
        if name in NAMES:
            raise AttributeError(
                f"skdpgd.policy.{name} is a default of the frozen Policy and no rule reads the "
                f"module's copy: use `with skdpgd.policy.using({name}=...):` instead"
            )
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _PolicyModule

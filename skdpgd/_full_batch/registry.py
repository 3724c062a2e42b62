"""Which mechanism carries out a plan: the registry of the full-batch mechanisms.

It imports the modules that implement them (:mod:`skdpgd._full_batch.mechanisms`,
:mod:`skdpgd._full_batch.second_order`), which import nothing from here, so the imports point one
way.
"""

from __future__ import annotations

from .choice import Choice
from .mechanisms import GradientDescent, InterceptOnly, OutputPerturbationMechanism, WarmStart
from .second_order import DampedNewton, KroneckerNewtonMechanism, SufficientStatisticsMechanism

#: The mechanism class of each ``NoisePlan.mechanism``.
MECHANISMS = {
    "prior": InterceptOnly,
    "gradient": GradientDescent,
    "output": OutputPerturbationMechanism,
    "newton": DampedNewton,
    "kronecker": KroneckerNewtonMechanism,
    "ssp": SufficientStatisticsMechanism,
    "choice": Choice,
}


def mechanisms_accepting(penalty):
    """The names of the mechanisms that can run ``penalty`` (a
    :class:`skdpgd.penalties.Penalty`), as their class attribute ``accepts_nonsmooth`` says:
    None (every one) for a smooth penalty. ``schedule='auto'`` chooses among these
    (:attr:`skdpgd.schedules.Problem.mechanisms`)."""
    if penalty.smooth:
        return None
    return tuple(name for name, cls in MECHANISMS.items() if cls.accepts_nonsmooth)


def _check_penalty(mechanism, penalty):
    """Refuse a mechanism that cannot run the penalty (public values only: nothing is drawn
    on this account)."""
    if penalty is not None and not penalty.smooth and not mechanism.accepts_nonsmooth:
        raise ValueError(
            f"the {mechanism.name!r} mechanism needs a smooth penalty (its sensitivity or its "
            f"solver rests on it); {type(penalty).__name__} has a non-smooth part. Use "
            "schedule='auto' or a gradient-descent schedule ('uniform', 'hong', 'pur', "
            "'exponential'): proximal noisy gradient descent runs it."
        )
    return mechanism


def mechanism_for(schedule, plan, candidates=None, penalty=None):
    """The mechanism that carries out a schedule's plan; ``candidates``: for a 'choice' plan,
    its resolved :class:`~skdpgd._full_batch.choice.Candidate` fits (the road resolves them:
    each has its own penalty). ``penalty``: the fit's
    :class:`~skdpgd.penalties.Penalty`; a mechanism that cannot run it (a non-smooth penalty
    and no ``accepts_nonsmooth``) is refused."""
    if plan.mechanism not in MECHANISMS:
        raise ValueError(f"unknown mechanism {plan.mechanism!r}: one of {sorted(MECHANISMS)}.")
    if plan.mechanism == "choice":
        if not candidates:
            raise ValueError("a 'choice' plan needs its resolved candidates.")
        return _check_penalty(Choice(schedule, candidates), penalty)
    mechanism = _check_penalty(MECHANISMS[plan.mechanism](schedule), penalty)
    if plan.prior_share > 0:
        # output perturbation: with a selection, or for a regression loss, whose released
        # target mean centres the intercept's penalty (WarmStart.releases refuses a
        # classifier's output plan without a selection); sufficient statistics: with a
        # selection only (the regressor's floor)
        select = plan.select_share > 0
        if not (mechanism.warm_start or (select and mechanism.warm_start_with_selection)):
            raise ValueError(
                "a warm start from the prior needs a gradient or Newton plan (or "
                "an output perturbation or sufficient statistics with a selection)."
            )
        mechanism = WarmStart(mechanism)
    return mechanism

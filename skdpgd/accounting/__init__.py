"""Privacy accounting: every piece of privacy arithmetic in skdpgd lives in this package.

What a fit released is described by one immutable tree of events
(:mod:`~skdpgd.accounting.events`): :class:`Release` (Gaussian releases with a sensitivity per
:class:`Relation` and a sampling rate), :class:`PoissonSampled`, :class:`Composed` and
:class:`Selection` (known by its Renyi-DP curve, e.g. :class:`RepeatedSelection`). One reader,
:func:`compose`, gives epsilon(delta) of a tree, exactly in GDP where it can and by RDP (or a
given accountant) otherwise; one :func:`calibrate` scales a fit's releases to a budget; an
:class:`~skdpgd.PrivacyBudget` charges events. The estimators, the search, the pipeline and the
report call these and do no privacy arithmetic of their own.

Modules: ``events``; ``gdp`` (exact Gaussian DP, zCDP); ``rdp`` (Renyi DP of
Poisson-subsampled Gaussian steps); ``pld`` (dp-accounting's privacy-loss distributions);
``selection`` (private selection); ``envelope`` (a fit that chooses its mechanism from a
release); ``accountant`` (the interface and the generic calibration); ``composition``
(:func:`compose`, :func:`calibrate`, a ledger's :class:`Composition`). This package imports
nothing else of skdpgd but the parameter checks (``tests/test_imports.py``).

Privacy model
-------------
A fit releases, at each step t, the sum of per-example contributions plus Gaussian noise,
``sum_i c_i + N(0, (z_t * Delta)^2 I)``, where every contribution has norm at most ``C``
(enforced by clipping in the kernels) and ``Delta`` is the L2 sensitivity of the sum:

* replace-one neighbours (full-batch estimators, the default): ``Delta = 2 C``;
* add/remove-one neighbours (Poisson-sampled minibatches, or full batch on request): ``Delta = C``.

``z_t`` is the step's *noise multiplier*. Everything after the noisy sum (dividing by N, step
sizes, momentum) is post-processing. A mechanism is therefore *described* by its multipliers
and its sampling rate (:class:`GaussianSteps`); an accountant *interprets* a description
(epsilon for a delta, delta for an epsilon) and *calibrates* a schedule's shape to a budget.

Full batch (sampling rate 1) is accounted exactly with Gaussian differential privacy
(Dong, Roth and Su, 2022): a Gaussian step with multiplier ``z`` is ``1/z``-GDP, steps compose
to ``mu = sqrt(sum_t z_t^-2)``, and ``mu``-GDP is (epsilon, delta(epsilon))-DP for exactly

    delta(epsilon; mu) = Phi(-epsilon/mu + mu/2) - exp(epsilon) Phi(-epsilon/mu - mu/2),

which is the tightest (epsilon, delta) statement about a Gaussian composition. The zCDP view
(rho = mu^2 / 2) is reported for comparison with the literature.

Poisson-sampled minibatches are accounted with Renyi DP of the sampled Gaussian
(Mironov, Talwar and Zhang, 2019) and the improved RDP -> (epsilon, delta) conversion.
No accountant here returns an estimate: every epsilon is an upper bound.
"""

from .accountant import Accountant, geometric_bisection, smallest_scale
from .composition import (
    Composition,
    calibrate,
    compose,
    epsilon_profiles,
    remaining_mu,
    smallest_epsilon_with_room,
    spent_epsilon,
    split_budget,
    upper_bound_release,
)
from .envelope import envelope_delta, envelope_epsilon, switch_charge, switch_scale
from .events import (
    COUNT_BOUND_SIGMAS,
    RELATIONS,
    Composed,
    Event,
    GaussianSteps,
    PoissonSampled,
    Relation,
    Release,
    Selection,
    flatten,
    rounding_gamma,
    sum_rounding_margin,
    with_margin,
)
from .gdp import (
    GaussianDPAccountant,
    compose_gdp,
    gdp_delta,
    gdp_delta_upper,
    gdp_epsilon,
    gdp_mu,
    gdp_mu_of_releases,
    relative_multiplier,
    share_multiplier,
    zcdp_delta,
    zcdp_epsilon,
    zcdp_rho,
)
from .pld import PLDAccountant, pld_delta, pld_epsilon, pld_profile
from .rdp import DEFAULT_ORDERS as RDP_DEFAULT_ORDERS
from .rdp import RDPAccountant, rdp_delta, rdp_epsilon, rdp_subsampled_gaussian
from .registry import ACCOUNTANTS, accountant_named
from .selection import (
    RDPCurve,
    RepeatedSelection,
    calibrate_base_mu,
    trial_epsilon,
    truncated_negative_binomial_gamma,
)

__all__ = [
    "Accountant",
    "ACCOUNTANTS",
    "accountant_named",
    "COUNT_BOUND_SIGMAS",
    "Composed",
    "Composition",
    "Event",
    "PoissonSampled",
    "RDPCurve",
    "Relation",
    "Selection",
    "calibrate",
    "compose",
    "epsilon_profiles",
    "flatten",
    "geometric_bisection",
    "smallest_epsilon_with_room",
    "smallest_scale",
    "split_budget",
    "upper_bound_release",
    "GaussianDPAccountant",
    "GaussianSteps",
    "PLDAccountant",
    "RDPAccountant",
    "RDP_DEFAULT_ORDERS",
    "RELATIONS",
    "Release",
    "RepeatedSelection",
    "calibrate_base_mu",
    "compose_gdp",
    "envelope_delta",
    "envelope_epsilon",
    "gdp_delta",
    "gdp_delta_upper",
    "gdp_epsilon",
    "gdp_mu",
    "gdp_mu_of_releases",
    "pld_delta",
    "pld_epsilon",
    "pld_profile",
    "rdp_delta",
    "rdp_epsilon",
    "rdp_subsampled_gaussian",
    "relative_multiplier",
    "share_multiplier",
    "remaining_mu",
    "spent_epsilon",
    "rounding_gamma",
    "sum_rounding_margin",
    "switch_charge",
    "switch_scale",
    "trial_epsilon",
    "truncated_negative_binomial_gamma",
    "with_margin",
    "zcdp_delta",
    "zcdp_epsilon",
    "zcdp_rho",
]

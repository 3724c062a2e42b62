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
nothing else of skdpgd but the parameter checks (``tests/package/test_imports.py``).

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

from .accountant import Accountant
from .composition import calibrate, compose, epsilon_profiles
from .events import Composed, Event, GaussianSteps, PoissonSampled, Relation, Release, Selection
from .gdp import (
    GaussianDPAccountant,
    compose_gdp,
    gdp_delta,
    gdp_delta_upper,
    gdp_epsilon,
    gdp_mu,
    zcdp_delta,
    zcdp_epsilon,
    zcdp_rho,
)
from .pld import PLDAccountant, pld_delta, pld_epsilon
from .rdp import DEFAULT_ORDERS as RDP_DEFAULT_ORDERS
from .rdp import RDPAccountant, rdp_delta, rdp_epsilon, rdp_subsampled_gaussian
from .registry import ACCOUNTANTS, accountant_named
from .selection import RDPCurve, RepeatedSelection

# the package's own helpers, importable from here (explicit re-exports, not in __all__)
from .accountant import geometric_bisection as geometric_bisection, smallest_scale as smallest_scale
from .composition import (
    Composition as Composition,
    remaining_mu as remaining_mu,
    smallest_epsilon_with_room as smallest_epsilon_with_room,
    spent_epsilon as spent_epsilon,
    split_budget as split_budget,
    upper_bound_release as upper_bound_release,
)
from .envelope import (
    envelope_delta as envelope_delta,
    envelope_epsilon as envelope_epsilon,
    switch_charge as switch_charge,
    switch_scale as switch_scale,
)
from .events import (
    COUNT_BOUND_SIGMAS as COUNT_BOUND_SIGMAS,
    RELATIONS as RELATIONS,
    flatten as flatten,
    rounding_gamma as rounding_gamma,
    sum_rounding_margin as sum_rounding_margin,
    with_margin as with_margin,
)
from .gdp import (
    gdp_mu_of_releases as gdp_mu_of_releases,
    relative_multiplier as relative_multiplier,
    share_multiplier as share_multiplier,
)
from .pld import pld_profile as pld_profile
from .selection import (
    calibrate_base_mu as calibrate_base_mu,
    trial_epsilon as trial_epsilon,
    truncated_negative_binomial_gamma as truncated_negative_binomial_gamma,
)

#: The public surface (what users and docs/api.rst use). The package's own helpers are
#: imported above (``from skdpgd.accounting import ...`` keeps working) and stay importable by
#: module path, e.g. ``skdpgd.accounting.envelope.switch_charge``, but are not listed here.
__all__ = [
    # events
    "Event",
    "Release",
    "GaussianSteps",
    "PoissonSampled",
    "Composed",
    "Selection",
    "RepeatedSelection",
    "RDPCurve",
    "Relation",
    # reading and calibrating them
    "compose",
    "calibrate",
    "epsilon_profiles",
    # accountants and their registry
    "Accountant",
    "ACCOUNTANTS",
    "accountant_named",
    "GaussianDPAccountant",
    "RDPAccountant",
    "PLDAccountant",
    # conversions
    "gdp_delta",
    "gdp_delta_upper",
    "gdp_epsilon",
    "gdp_mu",
    "compose_gdp",
    "zcdp_rho",
    "zcdp_epsilon",
    "zcdp_delta",
    "RDP_DEFAULT_ORDERS",
    "rdp_epsilon",
    "rdp_delta",
    "rdp_subsampled_gaussian",
    "pld_epsilon",
    "pld_delta",
]

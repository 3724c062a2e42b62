"""Privacy accounting: every piece of privacy arithmetic in skdpgd lives in this package.

Layout: :mod:`~skdpgd.accounting.events` (what a fit released: :class:`Release`, the
relations), :mod:`~skdpgd.accounting.gdp` (exact Gaussian DP, zCDP), :mod:`~skdpgd.accounting.rdp`
(Renyi DP of Poisson-subsampled Gaussian steps), :mod:`~skdpgd.accounting.pld` (dp-accounting's
privacy-loss distributions), :mod:`~skdpgd.accounting.selection` (private selection),
:mod:`~skdpgd.accounting.envelope` (a fit that chooses its mechanism from a release) and
:mod:`~skdpgd.accounting.compose` (a fit's and a ledger's arithmetic). This package imports
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

from .accountant import Accountant
from .compose import Composition, calibrate_releases, remaining_mu, spent_epsilon
from .envelope import envelope_delta, envelope_epsilon, switch_scale
from .events import (COUNT_BOUND_SIGMAS, RELATIONS, GaussianSteps, Release, sum_rounding_margin,
                     with_margin)
from .gdp import (GaussianDPAccountant, compose_gdp, gdp_delta, gdp_delta_upper, gdp_epsilon,
                  gdp_mu, gdp_mu_of_releases, zcdp_delta, zcdp_epsilon, zcdp_rho)
from .pld import PLDAccountant, pld_delta, pld_epsilon, pld_profile
from .rdp import DEFAULT_ORDERS as RDP_DEFAULT_ORDERS
from .rdp import RDPAccountant, rdp_delta, rdp_epsilon, rdp_subsampled_gaussian
from .selection import RepeatedSelection, calibrate_base_mu, truncated_negative_binomial_gamma

# the Poisson-sampled accountants implement the same interface
Accountant.register(RDPAccountant)
Accountant.register(PLDAccountant)

#: Every accountant class, for the contract test.
ACCOUNTANTS = (GaussianDPAccountant, RDPAccountant, PLDAccountant)

__all__ = [
    "Accountant",
    "ACCOUNTANTS",
    "COUNT_BOUND_SIGMAS",
    "Composition",
    "GaussianDPAccountant",
    "GaussianSteps",
    "PLDAccountant",
    "RDPAccountant",
    "RDP_DEFAULT_ORDERS",
    "RELATIONS",
    "Release",
    "RepeatedSelection",
    "calibrate_base_mu",
    "calibrate_releases",
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
    "remaining_mu",
    "spent_epsilon",
    "sum_rounding_margin",
    "switch_scale",
    "truncated_negative_binomial_gamma",
    "with_margin",
    "zcdp_delta",
    "zcdp_epsilon",
    "zcdp_rho",
]

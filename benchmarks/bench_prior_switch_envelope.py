"""DP-SGD's prior switch: how far the envelope of its two branches was above the budget before
the common noise scale, and what the scale is.

For ``DPSGDClassifier(loss='log_loss', schedule='auto')`` fits below the switch's
signal-to-noise ratio (classes 3/10, epsilon 0.01-10, public N 50-1e5, delta 1e-5-1e-8, the
fewest features of 5/300/2000 that put the configuration below the ratio; a few rows of
synthetic data: only public values decide what is measured), it prints

* ``before``: ``(eps_env - eps) / eps`` where ``eps_env`` is the envelope's epsilon at the fit's
  delta with each branch calibrated on its own (composed with the first release of the counts:
  what the code did before the envelope was enforced);
* ``scale``: the common factor on both branches' noise the fit applies;
* ``after``: ``delta_env(eps) / delta - 1`` for the shipped fit, the envelope's certified
  delta at epsilon (at most 0).

Binary fits have had no switch on the released counts since 2026-11-28 (they select after the
fit, or take the intercept-only model decided before any draw: ``policy.SGD_BINARY_SELECT``),
so they pay no envelope and are not measured here; the tables in docs/theory.md measured
before that include classes 2.

Run ``PYTHONPATH=. python benchmarks/bench_prior_switch_envelope.py`` (a few minutes; add
``--accountant pld`` for dp-accounting's PLD, slower).
"""

from __future__ import annotations

import argparse
import itertools
import math
import warnings

import numpy as np

from skdpgd import DPSGDClassifier, policy
from skdpgd.accounting.envelope import branch_profile, envelope_delta, envelope_epsilon
from skdpgd.accounting import gdp_mu, gdp_mu_of_releases


def below_ratio(k, d, n, eps, delta):
    n_params = (d + 1) * (1 if k == 2 else k)
    return policy.sgd_prior_switch(n, n_params, gdp_mu(eps, delta), True, True, True) is not None


def envelope(fit, scale):
    """(mu1, integrand) of the envelope, the branches' noise divided by ``scale``."""
    first = fit.releases_[:-1]
    mu1 = gdp_mu_of_releases(first)
    branches = [
        [r.calibrated(r.multipliers / scale, r.sensitivity) for r in rels]
        for rels in fit.prior_switch_["releases"].values()
    ]
    profiles = [
        make(1.0)
        for make in (
            branch_profile(rels, fit.accountant, t_max=fit.epsilon + 40 * mu1 + 1)
            for rels in branches
        )
    ]
    return mu1, lambda t: np.max([p(t) for p in profiles], axis=0)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--accountant", choices=["rdp", "pld"], default="rdp")
    p.add_argument("--eps", type=float, nargs="+", default=[0.01, 0.03, 0.1, 0.3, 1, 3, 10])
    p.add_argument("--n", type=float, nargs="+", default=[50, 300, 1000, 1e4, 1e5])
    p.add_argument("--delta", type=float, nargs="+", default=[1e-5, 1e-6, 1e-8])
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    print("| classes | d | N | eps | delta | q | T | before | scale | after |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    before_all, scales = [], []
    for k, n, eps, delta in itertools.product([3, 10], args.n, args.eps, args.delta):
        d = next((d for d in (5, 300, 2000) if below_ratio(k, d, n, eps, delta)), None)
        if d is None:
            continue
        X = rng.normal(size=(80, d)) / math.sqrt(d)
        y = np.where(rng.random(80) < 0.8, 0, rng.integers(0, k, 80))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = DPSGDClassifier(
                epsilon=eps,
                delta=delta,
                data_norm=1.0,
                n_samples=n,
                classes=list(range(k)),
                accountant=args.accountant,
                random_state=0,
            ).fit(X, y)
        scale = fit.prior_switch_["noise_scale"]
        before = (envelope_epsilon(delta, *envelope(fit, scale), rtol=1e-5, xtol=1e-7) - eps) / eps
        after = envelope_delta(eps, *envelope(fit, 1.0), rtol=1e-5).upper / delta - 1.0
        grads = fit.prior_switch_["releases"]["sgd"][0]
        before_all.append(before)
        scales.append(scale)
        print(
            f"| {k} | {d} | {n:g} | {eps:g} | {delta:g} | {grads.sampling_rate:.3g} | "
            f"{grads.n_steps} | {before:+.3%} | {scale:.5f} | {after:+.2e} |",
            flush=True,
        )
    b = np.array(before_all)
    print(
        f"\n{b.size} configurations; before: min {b.min():+.3%}, median {np.median(b):+.3%}, "
        f"max {b.max():+.3%}; above the budget in {int(np.sum(b > 0))}; scale up to "
        f"{max(scales):.4f}"
    )


if __name__ == "__main__":
    main()

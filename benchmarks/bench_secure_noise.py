"""What secure mode costs: time and accuracy of the same fits in plain and secure mode.

Targets (issue "secure noise"): the default ``DPLogisticRegression`` at 1e6 x 50 in secure mode
takes <= 1.15x the plain fit's time, and DP-SGD's throughput in secure mode is >= 1/2 of plain
(time <= 2x). Both modes run in this process, one after the other, on the same arrays, after a
warm-up fit of each (numba compiles the secure kernels on first use); each time is the best of
``--repeat`` runs.

Also printed: the noise each mode adds for the same budget, as the ratio of the GDP ``mu``
plain mode calibrates to over the zCDP one secure mode calibrates to (secure mode accounts
the discrete Gaussian in zCDP: ``mu^2 = 2 rho``), and the test accuracy of both; the
sampler's raw throughput (exact discrete Gaussians per second against numpy's normals).

Usage::

    python benchmarks/bench_secure_noise.py [--n 1000000] [--d 50] [--repeat 2] [--quick]

``--quick``: N = 2e5, one repeat (ratios only, for a loaded machine).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def make(n, d, seed=0):
    """Rows of norm <= 1 and logistic labels from a few informative directions."""
    rng = np.random.default_rng(seed)
    w = np.zeros(d)
    w[: min(d, 10)] = np.random.default_rng(12345).standard_normal(min(d, 10)) * 6.0
    X = rng.standard_normal((n, d)) / (np.sqrt(d) * 2.0)
    X /= np.maximum(np.linalg.norm(X, axis=1), 1.0)[:, None]
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ w + 0.3)))).astype(np.int64)
    return X, y


def best_time(fit, repeat):
    best, est = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        est = fit()
        best = min(best, time.perf_counter() - t0)
    return best, est


def run_pair(label, make_est, X, y, Xt, yt, repeat):
    import skdpgd

    def plain():
        return make_est().fit(X, y)

    def secure():
        with skdpgd.config_context(secure_noise=True):
            return make_est().fit(X, y)

    plain()  # warm-up: compiled kernels loaded for both modes
    secure()
    t_plain, e_plain = best_time(plain, repeat)
    t_secure, e_secure = best_time(secure, repeat)
    print(
        f"{label:<34} plain {t_plain:7.3f} s  secure {t_secure:7.3f} s  "
        f"ratio {t_secure / t_plain:5.2f}  accuracy plain {e_plain.score(Xt, yt):.4f} "
        f"secure {e_secure.score(Xt, yt):.4f}"
    )
    return t_secure / t_plain


def sampler_throughput():
    from skdpgd._compute import secure_random as sr

    state = sr.new_state()
    n = 200_000
    sr.discrete_gaussian(state, 2**24, 2**24)  # compile
    t0 = time.perf_counter()
    for _ in range(n):
        sr.discrete_gaussian(state, 2**24, 2**24)
    t_dg = time.perf_counter() - t0
    vals = np.zeros(n)
    sr.release(vals[:10], 1.0, 1.0, state)  # compile
    t0 = time.perf_counter()
    sr.release(vals, 1.0, 1.0, state)
    t_rel = time.perf_counter() - t0
    gen = np.random.default_rng(0)
    t0 = time.perf_counter()
    gen.standard_normal(n)
    t_np = time.perf_counter() - t0
    print(
        f"sampler: {n / t_dg:,.0f} discrete Gaussians/s one call each, {n / t_rel:,.0f}/s "
        f"as one release of {n} values; numpy standard_normal {n / t_np:,.0f}/s"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.n, args.repeat = 200_000, 1
    warnings.simplefilter("ignore")

    from skdpgd import DPLogisticRegression, DPSGDClassifier
    from skdpgd.accounting import gdp_mu
    from skdpgd.accounting.gdp import zcdp_view

    for eps, delta in [(0.1, 1e-6), (1.0, 1e-6), (4.0, 1e-8)]:
        with zcdp_view():
            mu_z = gdp_mu(eps, delta)
        print(
            f"epsilon {eps:g}, delta {delta:g}: noise std secure / plain = "
            f"{gdp_mu(eps, delta) / mu_z:.3f} (GDP mu {gdp_mu(eps, delta):.4f}, zCDP {mu_z:.4f})"
        )
    sampler_throughput()

    X, y = make(args.n, args.d)
    Xt, yt = make(100_000, args.d, seed=1)
    print(f"N = {args.n:,}, d = {args.d}, best of {args.repeat}")
    r_lr = run_pair(
        "DPLogisticRegression (default)",
        lambda: DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1]),
        X,
        y,
        Xt,
        yt,
        args.repeat,
    )
    r_gd = run_pair(
        "DPLogisticRegression (gradient)",
        lambda: DPLogisticRegression(
            epsilon=1.0, data_norm=1.0, classes=[0, 1], schedule="uniform"
        ),
        X,
        y,
        Xt,
        yt,
        args.repeat,
    )
    r_sgd = run_pair(
        "DPSGDClassifier (1 epoch)",
        lambda: DPSGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1], epochs=1),
        X,
        y,
        Xt,
        yt,
        args.repeat,
    )
    print(
        f"targets: default fit ratio {r_lr:.2f} (<= 1.15), gradient descent {r_gd:.2f}, "
        f"DP-SGD time ratio {r_sgd:.2f} (<= 2)"
    )


if __name__ == "__main__":
    main()

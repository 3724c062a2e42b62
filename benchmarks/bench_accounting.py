"""Speed of the RDP accountant on long heterogeneous schedules, against dp-accounting.

    PYTHONPATH=. python benchmarks/bench_accounting.py [--quick] [--budget SECONDS]

1. skdpgd: calibrate a 10,000-step schedule whose 10,000 noise multipliers are all distinct
   (Poisson rate q), then report its epsilon; the target is under 1 s per calibration.
2. dp-accounting (optional): its RDP accountant and its PLD accountant on 1,000 distinct
   Poisson-subsampled Gaussian steps (one composed event per distinct multiplier). Each is
   stopped after --budget seconds; then the number of steps done is reported and the total
   is *extrapolated* (linearly, and said so).

Every number printed is measured on this machine in this run (wall clock and process CPU
time, which includes numba's worker threads); nothing is hard-coded.
"""

import argparse
import os
import time

import numpy as np

from skdpgd.accounting import GaussianSteps, RDPAccountant, rdp_epsilon, rdp_subsampled_gaussian


def timed(fn, *args, **kwargs):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - w0, time.process_time() - c0


def bench_skdpgd(n_steps, cases):
    acc = RDPAccountant()
    shape = np.exp(np.linspace(0.0, 1.0, n_steps))  # a decaying noise schedule, all distinct
    _, w, c = timed(acc.calibrate, shape[:4], 1.0, 1e-5, sampling_rate=0.01)  # numba load
    print(f"first call (numba compile or cache load): {w:.2f} s wall")
    print(
        f"\nskdpgd RDPAccountant, {n_steps} steps, {np.unique(shape).size} distinct multipliers, "
        f"{acc.orders.size} orders"
    )
    print(
        f"{'epsilon':>8} {'delta':>7} {'q':>6} | {'calibrate wall':>14} {'cpu':>6} | "
        f"{'epsilon() wall':>14} | {'spent/target - 1':>16} | z[0]"
    )
    walls = []
    for eps, delta, q in cases:
        z, w, c = timed(acc.calibrate, shape, eps, delta, sampling_rate=q)
        spent, w2, _ = timed(acc.epsilon, GaussianSteps(z, q), delta)
        walls.append(w)
        print(
            f"{eps:8g} {delta:7.0e} {q:6g} | {w:12.3f} s {c:6.2f} | {w2:12.3f} s | "
            f"{spent / eps - 1:16.2e} | {z[0]:.4f}"
        )
    print(
        f"calibrate: median {np.median(walls):.3f} s, max {np.max(walls):.3f} s wall (target < 1 s)"
    )
    curve, w, c = timed(rdp_subsampled_gaussian, 0.01, shape, acc.orders)
    print(
        f"full RDP curve, all {acc.orders.size} orders x {n_steps} multipliers: {w:.3f} s wall, "
        f"{c:.2f} s cpu"
    )
    return shape


def bench_dp_accounting(n_distinct, q, budget_s):
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
        from dp_accounting.rdp import rdp_privacy_accountant
    except ImportError:
        print('\ndp-accounting not installed: pip install "skdpgd[accounting]"')
        return
    sig = 1.0 * np.exp(np.linspace(0.0, 1.0, n_distinct))  # distinct multipliers
    ours = RDPAccountant()
    print(f"\n{n_distinct} distinct Poisson-subsampled steps (q = {q}), budget {budget_s:g} s each")

    orders_int = np.array([o for o in ours.orders if float(o).is_integer() and o <= 1024])
    for name, make in [
        ("dp-accounting RDP (default orders)", lambda: rdp_privacy_accountant.RdpAccountant()),
        (
            "dp-accounting RDP (our integer orders <= 1024)",
            lambda: rdp_privacy_accountant.RdpAccountant(orders_int),
        ),
        (
            "dp-accounting PLD (value_discretization_interval=1e-4)",
            lambda: pld_privacy_accountant.PLDAccountant(),
        ),
    ]:
        acc = make()
        w0 = time.perf_counter()
        done = 0
        for s in sig:
            event = dp_accounting.GaussianDpEvent(float(s))
            acc.compose(dp_accounting.PoissonSampledDpEvent(q, event))
            done += 1
            if time.perf_counter() - w0 > budget_s:
                break
        w_compose = time.perf_counter() - w0
        w1 = time.perf_counter()
        eps = acc.get_epsilon(1e-5)
        w_eps = time.perf_counter() - w1
        # ours on exactly the steps dp-accounting composed
        steps = GaussianSteps(sig[:done], q)
        e_ours, w_ours, _ = timed(ours.epsilon, steps, 1e-5)
        if done == n_distinct:
            total = f"{w_compose + w_eps:.2f} s"
        else:
            total = (
                f"stopped after {done} steps in {w_compose:.1f} s; linear extrapolation to "
                f"{n_distinct}: ~{w_compose * n_distinct / done:.0f} s"
            )
        print(
            f"  {name}: {total} (get_epsilon {w_eps:.2f} s); epsilon(1e-5) = {eps:.6f} "
            f"on {done} steps"
        )
        print(
            f"    skdpgd RDPAccountant.epsilon on the same {done} steps: {w_ours:.3f} s, "
            f"epsilon = {e_ours:.6f}"
        )
        if "our integer orders" in name:
            ours_curve = rdp_subsampled_gaussian(q, sig[:done], orders_int)
            rel = np.max(np.abs(ours_curve - acc.rdp) / acc.rdp)
            print(
                f"    max relative difference of the RDP curves (same orders): {rel:.1e}; "
                f"epsilon from our curve: {rdp_epsilon(ours_curve, orders_int, 1e-5):.6f}"
            )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer cases, smaller dp-accounting run")
    ap.add_argument(
        "--budget",
        type=float,
        default=60.0,
        help="seconds allowed to each dp-accounting accountant (default 60)",
    )
    args = ap.parse_args()
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    cases = [
        (1.0, 1e-5, 0.01),
        (8.0, 1e-5, 0.01),
        (0.3, 1e-6, 0.001),
        (3.0, 1e-8, 0.1),
        (50.0, 1e-5, 0.1),
    ]
    if args.quick:
        cases = cases[:2]
    bench_skdpgd(10_000, cases)
    bench_dp_accounting(
        200 if args.quick else 1_000, 0.01, min(args.budget, 20.0) if args.quick else args.budget
    )


if __name__ == "__main__":
    main()

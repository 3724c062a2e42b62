"""RDP against PLD for DP-SGD: how much tighter PLD reports, and what calibrating with it costs.

For default ``DPSGDClassifier`` fits (synthetic logistic data, d = 10, rows of norm <= 1,
``n_samples`` public, the default delta) at a few N and epsilon:

* the fit calibrated by RDP (the default, ``accountant='rdp'``): its PLD epsilon at the same
  delta, from :func:`skdpgd.privacy_report` (needs dp-accounting);
* the fit calibrated by PLD (``accountant='pld'``): its noise multiplier against RDP's, and the
  fit times of both in the same process (the machine may be shared: compare the ratio).

Run ``PYTHONPATH=. python benchmarks/bench_pld_calibration.py`` (about a minute) and
``--doc`` to write the section of benchmarks/LAB_NOTES.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import skdpgd
from skdpgd import privacy_report


def run(n, eps, acc, X, y):
    t = time.perf_counter()
    est = skdpgd.DPSGDClassifier(
        epsilon=eps, data_norm=1.0, classes=[0, 1], n_samples=n, random_state=0, accountant=acc
    ).fit(X, y)
    return est, time.perf_counter() - t


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, nargs="+", default=[2000, 20000])
    p.add_argument("--eps", type=float, nargs="+", default=[0.3, 1.0, 3.0])
    p.add_argument("--doc", action="store_true")
    args = p.parse_args(argv)
    rows = [
        "| N | eps | steps | PLD eps of the RDP-calibrated fit | z (RDP calibration) | "
        "z (PLD calibration) | ratio | fit time RDP / PLD (s) | accuracy RDP / PLD |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n in args.n:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n, 10)) / 6
        y = (X[:, 0] > 0).astype(int)
        for eps in args.eps:
            skdpgd.DPSGDClassifier(
                epsilon=eps, data_norm=1.0, classes=[0, 1], n_samples=n, random_state=0
            ).fit(X[:50], y[:50])  # compile first
            e_rdp, t_rdp = run(n, eps, "rdp", X, y)
            e_pld, t_pld = run(n, eps, "pld", X, y)
            rep = privacy_report(e_rdp)
            pld = (
                rep.epsilons
                if rep.accountant.startswith("PLD")
                else rep.others["PLD (dp-accounting)"]
            )
            k = int(np.flatnonzero(rep.deltas == e_rdp.delta_)[0])
            z_r, z_p = e_rdp.noise_multipliers_[0], e_pld.noise_multipliers_[0]
            rows.append(
                f"| {n} | {eps:g} | {e_rdp.n_iter_} | {pld[k]:.3f} | {z_r:.3f} | "
                f"{z_p:.3f} | {z_p / z_r:.3f} | {t_rdp:.2f} / {t_pld:.2f} | "
                f"{e_rdp.score(X, y):.3f} / {e_pld.score(X, y):.3f} |"
            )
            print(rows[-1], flush=True)
    if args.doc:
        from benchmarks import _data as D

        text = (
            f"## RDP against PLD for DP-SGD ({D.today()})\n\n"
            "`PYTHONPATH=. python benchmarks/bench_pld_calibration.py --doc` (d = 10, "
            "default delta; the machine was shared, so compare times within a row)\n\n"
            + "\n".join(rows)
        )
        D.write_doc_section("pld_calibration", text)


if __name__ == "__main__":
    main()

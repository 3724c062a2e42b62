"""Study: DPMLPClassifier's 'auto' step size and number of steps, designed on the design half.

What is measured
----------------
Test accuracy of ``DPMLPClassifier`` (one hidden layer of 100 ReLU units, full batch,
``schedule='uniform'``, ``data_norm`` and ``classes`` public, ``delta=None``) under:

* ``auto``: the package's 'auto' rule (``skdpgd.policy.mlp_auto_*``) with the active policy;
* candidates ``step{a}_sps{b}``: the same rule with ``MLP_STEP = a`` and
  ``MLP_STEPS_PER_SNR = b`` (``skdpgd.policy.using``);
* ``old``: the fixed defaults before 'auto' (``clip_norm=1, learning_rate=0.1,
  max_iter=100``);
* ``sklearn``: ``sklearn.neural_network.MLPClassifier(random_state=seed)`` (its defaults:
  100 ReLU units, adam, 200 epochs), non-private, on the same rows.

``design``: the design half's sets ``DESIGN_SETS`` (a subset of ``split.py``'s design half:
the whole half is too slow for torch on the shared 2-core machine), both protocols, seeds 0
and 1, epsilon 1, 3, 10, every candidate. ``report``: the report sets ``REPORT_SETS`` and
sklearn's digits in the user guide's setup (pixels / 16, ``data_norm = 8``, the bound of 64
pixels in [0, 1]), epsilon 1, 3, 10, 1e6, ``auto``, ``old`` and ``sklearn``.

Rule for choosing (fixed before the design run): the candidate with the highest mean
accuracy over all design cells (set x protocol x epsilon x seed); any candidate within 0.005
of it with fewer mean steps is preferred (a cheaper fit). The centre of the grid is the
policy's value before the run (MLP_STEP = 1, MLP_STEPS_PER_SNR = 10). If the winner is at
the grid's edge, ``design2`` runs one candidate a step beyond that edge (``EXTRA``) on the
same cells and the same rule chooses among all (decided after round 1, before round 2).
``design3`` (decided after the first report run showed the guide's digits at epsilon 1 below
the old fixed values, before round 3): ``MLP_CLIP_FACTOR`` 0.3 with ``MLP_STEP`` 1/0.3 (a
clipped step moves as far), against the chosen (1, 1, 30); the same rule decides.

Run::

    python -m benchmarks.suite.studies.mlp_defaults design benchmarks/out/suite/mlp_design.csv
    python -m benchmarks.suite.studies.mlp_defaults design2 benchmarks/out/suite/mlp_design.csv
    python -m benchmarks.suite.studies.mlp_defaults design3 benchmarks/out/suite/mlp_design.csv
    python -m benchmarks.suite.studies.mlp_defaults report benchmarks/out/suite/mlp_report.csv
    python -m benchmarks.suite.studies.mlp_defaults table benchmarks/out/suite/mlp_design.csv
"""

from __future__ import annotations

import csv
import os
import sys
import warnings

import numpy as np

DESIGN_SETS = ("iris", "crabs", "turnout", "digits")
REPORT_SETS = ("wine", "breast_cancer")
PROTOCOLS = ("a", "b")
CANDIDATES = ((1.0, 10.0), (0.3, 10.0), (3.0, 10.0), (1.0, 3.0), (1.0, 30.0))
EXTRA = ((1.0, 100.0),)
# round 3: a smaller clip, the step scaled up so that a clipped step moves as far (clip x step)
CLIP_CANDIDATES = ((0.3, 1 / 0.3, 30.0),)
HIDDEN = (100,)
FIELDS = ["set", "protocol", "seed", "eps", "method", "accuracy", "n_iter", "lr", "clip"]


def _private(X, y, Xt, yt, eps, seed, data_norm, classes, method):
    from skdpgd import DPMLPClassifier, policy

    kw = dict(
        hidden_layer_sizes=HIDDEN,
        epsilon=eps,
        data_norm=data_norm,
        classes=classes,
        random_state=seed,
    )
    if method == "old":
        kw.update(clip_norm=1.0, learning_rate=0.1, max_iter=100)
        changes = {}
    elif method == "auto":
        changes = {}
    else:
        changes = {}
        if method.startswith("clip"):
            c, method = method[len("clip") :].split("_", 1)
            changes["MLP_CLIP_FACTOR"] = float(c)
        a, b = method[len("step") :].split("_sps")
        changes.update(MLP_STEP=float(a), MLP_STEPS_PER_SNR=float(b))
    with policy.using(**changes):
        clf = DPMLPClassifier(**kw).fit(X, y)
    return clf.score(Xt, yt), clf.n_iter_, clf.learning_rate_, clf.clip_norm_


def _sklearn(X, y, Xt, yt, seed):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = MLPClassifier(hidden_layer_sizes=HIDDEN, random_state=seed).fit(X, y)
    return clf.score(Xt, yt), clf.n_iter_, float("nan"), float("nan")


def _splits(names, protocols, seeds):
    from ..datasets import load
    from ..protocols import prepare

    for name in names:
        raw = load(name)
        classes = sorted(np.unique(raw.y).tolist())
        for protocol in protocols:
            for seed in seeds:
                p = prepare(raw, protocol, seed)
                yield name, protocol, seed, p.X_train, p.y_train, p.X_test, p.y_test, 1.0, classes


def _digits_splits(seeds):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = X / 16.0  # pixels in [0, 16] by the data set's definition: rows have norm <= 8
    for seed in seeds:
        Xtr, Xte, ytr, yte = train_test_split(X, y, stratify=y, random_state=seed)
        yield "digits (guide)", "/16", seed, Xtr, ytr, Xte, yte, 8.0, list(range(10))


def _run(splits, epsilons, methods, path):
    import torch

    torch.set_num_threads(1)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    new = not os.path.exists(path)
    with open(path, "a", newline="") as fh:
        out = csv.writer(fh)
        if new:
            out.writerow(FIELDS)
        for name, protocol, seed, X, y, Xt, yt, bound, classes in splits:
            rows = []
            if "sklearn" in methods:
                rows.append(("inf", "sklearn", *_sklearn(X, y, Xt, yt, seed)))
            for eps in epsilons:
                for m in methods:
                    if m != "sklearn":
                        rows.append((eps, m, *_private(X, y, Xt, yt, eps, seed, bound, classes, m)))
            for eps, m, acc, n_iter, lr, clip in rows:
                out.writerow([name, protocol, seed, eps, m, f"{acc:.4f}", n_iter, lr, clip])
                print(name, protocol, seed, eps, m, f"{acc:.4f}", n_iter, flush=True)
            fh.flush()


def _md(frame, index_name):
    cols = list(frame.columns)
    lines = [f"| {index_name} | " + " | ".join(map(str, cols)) + " |"]
    lines.append("|---" * (len(cols) + 1) + "|")
    for idx, row in frame.iterrows():
        cells = ["" if v != v else f"{v:.3f}" for v in row.to_numpy(dtype=float)]
        lines.append(f"| {idx} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _table(path):
    """Markdown tables: per set, mean accuracy by method and epsilon (protocols and seeds
    pooled), then every candidate over all cells."""
    import pandas as pd

    df = pd.read_csv(path)
    df["eps"] = df["eps"].astype(float)
    for name, g in df.groupby("set", sort=False):
        t = g.pivot_table(index="method", columns="eps", values="accuracy", aggfunc="mean")
        t.columns = [f"eps {c:g}" if c != float("inf") else "non-private" for c in t.columns]
        print(f"\n{name} (mean over protocols and seeds)\n\n{_md(t, 'method')}")
    priv = df[df["method"] != "sklearn"]
    worst = priv.groupby(["method", "set", "protocol", "eps"])["accuracy"].min()
    summary = priv.groupby("method").agg(accuracy=("accuracy", "mean"), steps=("n_iter", "mean"))
    summary["worst seed"] = worst.groupby("method").mean()
    summary = summary.sort_values("accuracy", ascending=False)
    print("\nall cells (worst seed: mean over cells of the worse seed)\n")
    print(_md(summary, "method"))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    mode, path = argv[0], argv[1]
    if mode == "design":
        methods = ["old", "sklearn"] + [f"step{a:g}_sps{b:g}" for a, b in CANDIDATES]
        _run(_splits(DESIGN_SETS, PROTOCOLS, (0, 1)), (1.0, 3.0, 10.0), methods, path)
    elif mode == "design2":
        methods = [f"step{a:g}_sps{b:g}" for a, b in EXTRA]
        _run(_splits(DESIGN_SETS, PROTOCOLS, (0, 1)), (1.0, 3.0, 10.0), methods, path)
    elif mode == "design3":
        methods = [f"clip{c:g}_step{a:.4g}_sps{b:g}" for c, a, b in CLIP_CANDIDATES]
        _run(_splits(DESIGN_SETS, PROTOCOLS, (0, 1)), (1.0, 3.0, 10.0), methods, path)
    elif mode == "report":
        splits = list(_digits_splits((0, 1))) + list(_splits(REPORT_SETS, PROTOCOLS, (0, 1)))
        _run(splits, (1.0, 3.0, 10.0, 1e6), ["auto", "old", "sklearn"], path)
    elif mode == "table":
        _table(path)
    else:
        raise SystemExit("usage: mlp_defaults design|design2|design3|report|table CSV")


if __name__ == "__main__":
    main()

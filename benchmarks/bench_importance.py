"""Importance-masked DP-SGD (seed 002, AdaDPIGU) against plain DP-SGD.

Methods (same epsilon, delta, T, q, noise multipliers and clip: only the mask differs):

* ``plain``: DPSGDClassifier / DPSGDRegressor / DPMLPClassifier with ``importance=None``;
* ``mask``: ``ImportanceMask(scaling=False)`` (private: scores from released gradients);
* ``mask (pruned)``: the same, with the linear models' masked weights set to 0 (the paper's
  ``l(m * theta)``) instead of frozen;
* ``mask+scale``: ``ImportanceMask(scaling=True)`` (private, the paper's coordinate-wise
  scaling too);
* ``LEAK (not private)``: ``ImportanceMask(scaling=False)`` whose scores are replaced by the
  *unnoised* full-batch mean gradient magnitudes averaged over two points of the pre-training
  trajectory (its start and its end), read from the
  private data without any noise (the paper's importance computed without accounting). Its
  epsilon is NOT the reported one: it is here only to show what the leak buys. It is built by
  replacing a private function of the package for the duration of one fit, in this script only.

Sets: a few design-half sets of benchmarks/suite (protocol a) and their report-half partners,
plus high-dimensional sets: TF-IDF text (docstrings of four packages installed next to this
one, read with ``ast`` from their source files: offline), a synthetic sparse set (d = 20000,
10 informative coordinates), a wide synthetic one-hot set (30 columns of 40 levels, d = 1200),
and sklearn's digits for the MLP. Scores: accuracy (classification), R^2 (regression), median
over seeds.

    PYTHONPATH=. python benchmarks/bench_importance.py --part linear --seeds 3
    PYTHONPATH=. python benchmarks/bench_importance.py --part mlp --seeds 3
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import json
import math
import os
import sys
import time
import warnings
from unittest import mock

import numpy as np
import scipy.sparse as sp

EPSILONS = (1.0, 2.0, 4.0, 8.0)
METHODS = ("plain", "mask", "mask (pruned)", "mask+scale", "LEAK (not private)")


# --- data --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _docstrings(package, limit):
    """Docstrings (>= 80 characters) of the functions and classes in an installed package's
    source files, read with ast (nothing imported)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    root = os.path.dirname(spec.origin)
    out = []
    for dirpath, _, files in sorted(os.walk(root)):
        if "tests" in dirpath.split(os.sep):
            continue
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            try:
                with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                    tree = ast.parse(fh.read())
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node)
                    if doc and len(doc) >= 80:
                        out.append(doc)
                        if len(out) >= limit:
                            return tuple(out)
    return tuple(out)


def text_set(seed, per_class=1500):
    """4-class TF-IDF: which package (sympy, networkx, matplotlib, pandas) a docstring is from."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.model_selection import train_test_split

    docs, labels = [], []
    for k, pkg in enumerate(("sympy", "networkx", "matplotlib", "pandas")):
        d = list(_docstrings(pkg, per_class))
        docs += d
        labels += [k] * len(d)
    y = np.array(labels)
    tr, te = train_test_split(np.arange(len(docs)), test_size=0.25, random_state=seed, stratify=y)
    # vocabulary from the training documents (the usual convention; it reads private data)
    vec = TfidfVectorizer(max_features=20000, sublinear_tf=True, min_df=2)
    Xtr = vec.fit_transform([docs[i] for i in tr]).tocsr()
    Xte = vec.transform([docs[i] for i in te]).tocsr()
    return dict(
        name="text-tfidf",
        task="classification",
        Xtr=Xtr,
        ytr=y[tr],
        Xte=Xte,
        yte=y[te],
        classes=[0, 1, 2, 3],
    )


def sparse_set(seed, n=6000, d=20000, informative=10, nnz=30):
    """Synthetic sparse rows (nnz random coordinates of norm-1 rows), label from 10 coords."""
    rng = np.random.default_rng(1000 + seed)
    rows = np.repeat(np.arange(n), nnz)
    # informative coordinates appear often, the rest uniformly
    cols = np.where(
        rng.random(n * nnz) < 0.2,
        rng.integers(0, informative, n * nnz),
        rng.integers(0, d, n * nnz),
    )
    vals = rng.normal(size=n * nnz)
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(1.0 / np.maximum(norms, 1e-12)) @ X
    w = np.zeros(d)
    w[:informative] = rng.choice([-3.0, 3.0], informative)
    y = (X @ w + 0.3 * rng.normal(size=n) > 0).astype(int)
    cut = int(0.75 * n)
    X = X.tocsr()
    return dict(
        name=f"sparse-synth d={d}",
        task="classification",
        Xtr=X[:cut],
        ytr=y[:cut],
        Xte=X[cut:],
        yte=y[cut:],
        classes=[0, 1],
    )


def onehot_set(seed, n=20000, cols=30, levels=40):
    """Wide one-hot: 30 categorical columns of 40 levels (d = 1200); the label depends on the
    levels of 3 columns. Rows have norm 1 (each one-hot block / sqrt(cols))."""
    rng = np.random.default_rng(2000 + seed)
    codes = rng.integers(0, levels, size=(n, cols))
    effect = rng.normal(size=(3, levels)) * 1.5
    logit = sum(effect[k, codes[:, k]] for k in range(3))
    y = (logit + rng.logistic(size=n) * 0.5 > np.median(logit)).astype(int)
    rows = np.repeat(np.arange(n), cols)
    colidx = (np.arange(cols)[None, :] * levels + codes).ravel()
    X = sp.csr_matrix(
        (np.full(n * cols, 1 / math.sqrt(cols)), (rows, colidx)), shape=(n, cols * levels)
    )
    cut = int(0.75 * n)
    return dict(
        name="onehot-synth d=1200",
        task="classification",
        Xtr=X[:cut],
        ytr=y[:cut],
        Xte=X[cut:],
        yte=y[cut:],
        classes=[0, 1],
    )


def suite_set(name, seed):
    from benchmarks.suite.datasets import load
    from benchmarks.suite.protocols import prepare

    p = prepare(load(name), "a", seed, max_train=20000)
    classes = None if p.task == "regression" else sorted(np.unique(p.y_train).tolist())
    return dict(
        name=name,
        task=p.task,
        Xtr=p.X_train,
        ytr=p.y_train,
        Xte=p.X_test,
        yte=p.y_test,
        classes=classes,
        y_bound=p.y_bound,
    )


# --- the leaking variant (NOT private) ---------------------------------------------------------


@contextlib.contextmanager
def leaking_scores(X, y, task, classes):
    """Within the block, the package's mask is chosen from the *unnoised* full-batch mean
    gradient at the pre-trained iterate: a function of the private data without noise. NOT
    private; for this benchmark only."""
    import skdpgd._core.importance_mask as imp

    def grad_magnitude(coef, intercept):
        Z = np.asarray(X @ coef.T) + intercept
        if task == "regression":
            G = Z - np.clip(np.asarray(y, float), -1, 1)[:, None]
        elif coef.shape[0] == 1:
            s = np.where(np.asarray(y) == classes[1], 1.0, -1.0)[:, None]
            G = -s / (1.0 + np.exp(s * Z))
        else:
            P = np.exp(Z - Z.max(axis=1, keepdims=True))
            P /= P.sum(axis=1, keepdims=True)
            idx = np.searchsorted(classes, y)
            P[np.arange(len(y)), idx] -= 1.0
            G = P
        grad = np.asarray(X.T @ G).T / X.shape[0]  # (n_outputs, d)
        return np.sum(np.abs(grad), axis=0)

    def leak(released, coef, intercept):
        # the paper averages |g_t| over the pre-training trajectory; two points of it, the
        # start (theta = 0) and the end, both without noise
        return 0.5 * (
            grad_magnitude(np.zeros_like(coef), np.zeros_like(intercept))
            + grad_magnitude(coef, intercept)
        )

    with mock.patch.object(imp, "_mask_scores", leak):
        yield


@contextlib.contextmanager
def leaking_scores_mlp(X, y, n_outputs, layer_sizes, activation):
    """The MLP's version of :func:`leaking_scores`: the mask is chosen (once, at the end of
    pre-training) from the magnitudes of the *unnoised* full-batch mean gradient at the
    pre-trained parameters. NOT private; for this benchmark only."""
    import torch
    from torch.func import functional_call, grad

    import skdpgd._core.importance_mask as imp
    from skdpgd._network import torch_backend as tb

    cache = {}
    Xt = torch.tensor(np.asarray(X), dtype=torch.float32)
    Yt = tb.encode_targets(np.searchsorted(np.arange(max(n_outputs, 2)), y), n_outputs)
    model = tb.build_mlp(layer_sizes, activation)

    def mean_loss(p):
        s = functional_call(model, p, (Xt,))
        if n_outputs == 1:
            return torch.nn.functional.softplus(-(2.0 * Yt - 1.0) * s[:, 0]).mean()
        return -(Yt * torch.log_softmax(s, dim=1)).sum(1).mean()

    def leak(released, params, names):
        if "scores" not in cache:
            g = grad(mean_loss)({k: v.detach().cpu() for k, v in params.items()})
            cache["scores"] = np.concatenate([g[k].abs().numpy().ravel() for k in names])
        return cache["scores"]

    with mock.patch.object(imp, "_mask_scores", leak):
        yield


@contextlib.contextmanager
def pruned_weights():
    """Linear models: masked weights set to 0 instead of frozen (the paper's l(m * theta))."""
    import skdpgd.policy as policy

    with policy.using(IMPORTANCE_LINEAR_FREEZE=False):
        yield


# --- runs --------------------------------------------------------------------------------------


def _mask_for(method):
    """The ImportanceMask of a method name; 'mask:keep=0.3,pretrain_fraction=0.3,unfreeze=1'
    gives a variant (scaling off unless 'scaling=1' is listed)."""
    from skdpgd import ImportanceMask

    if method.startswith("mask:"):
        kw = {"scaling": False}
        for item in method[5:].split(";"):
            k, v = item.split("=")
            kw[k] = bool(int(v)) if k == "scaling" else (int(v) if k == "unfreeze" else float(v))
        return ImportanceMask(**kw)
    return {
        "plain": None,
        "mask": ImportanceMask(scaling=False),
        "mask (pruned)": ImportanceMask(scaling=False),
        "mask+scale": ImportanceMask(scaling=True),
        "LEAK (not private)": ImportanceMask(scaling=False),
    }[method]


def fit_linear(data, method, epsilon, seed):
    from skdpgd import DPSGDClassifier, DPSGDRegressor

    kw = dict(
        epsilon=epsilon,
        data_norm=1.0,
        random_state=seed,
        n_samples=float(data["Xtr"].shape[0]),
        importance=_mask_for(method),
    )
    if data["task"] == "regression":
        est = DPSGDRegressor(y_bound=data.get("y_bound") or 1.0, **kw)
    else:
        est = DPSGDClassifier(classes=data["classes"], **kw)
    ctx = (
        leaking_scores(data["Xtr"], data["ytr"], data["task"], data["classes"])
        if method.startswith("LEAK")
        else pruned_weights()
        if method == "mask (pruned)"
        else contextlib.nullcontext()
    )
    with ctx, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(data["Xtr"], data["ytr"])
    return float(est.score(data["Xte"], data["yte"])), float(est.epsilon_)


def fit_mlp(data, method, epsilon, seed, max_iter=300):
    from skdpgd import DPMLPClassifier

    est = DPMLPClassifier(
        hidden_layer_sizes=(32,),
        epsilon=epsilon,
        clip_norm=1.0,
        learning_rate=2.0,
        max_iter=max_iter,
        batch_size=256,
        classes=data["classes"],
        n_samples=float(data["Xtr"].shape[0]),
        random_state=seed,
        importance=_mask_for(method),
    )
    n_out = 1 if len(data["classes"]) == 2 else len(data["classes"])
    ctx = (
        leaking_scores_mlp(
            data["Xtr"], data["ytr"], n_out, [data["Xtr"].shape[1], 32, n_out], "relu"
        )
        if method.startswith("LEAK")
        else contextlib.nullcontext()
    )
    with ctx, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(data["Xtr"], data["ytr"])
    return float(est.score(data["Xte"], data["yte"])), float(est.epsilon_)


def digits_set(seed):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=seed, stratify=y)
    return dict(
        name="digits (MLP 64-32-10)",
        task="classification",
        Xtr=Xtr,
        ytr=ytr,
        Xte=Xte,
        yte=yte,
        classes=list(range(10)),
    )


DESIGN = ["digits", "bundesliga", "nwtco", "chile", "computers"]
REPORT = ["mnist5k", "car", "hdma", "benefits", "slid"]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=("linear", "mlp"), default="linear")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--sets", default="design,report,highdim")
    ap.add_argument(
        "--methods",
        default=",".join(METHODS),
        help="comma-separated; variants as 'mask:keep=0.3;pretrain_fraction=0.3'",
    )
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    methods = args.methods.split(",")
    results = []
    jobs = []
    if args.part == "mlp":
        jobs = [("mlp", "digits", digits_set)]
        methods = [m for m in methods if m != "mask (pruned)"]  # the MLP always freezes
    else:
        groups = args.sets.split(",")
        if "design" in groups:
            jobs += [("design", n, (lambda s, n=n: suite_set(n, s))) for n in DESIGN]
        if "report" in groups:
            jobs += [("report", n, (lambda s, n=n: suite_set(n, s))) for n in REPORT]
        if "highdim" in groups:
            jobs += [
                ("highdim", "text", text_set),
                ("highdim", "sparse", sparse_set),
                ("highdim", "onehot", onehot_set),
            ]
    t_start = time.time()
    for group, _name, loader in jobs:
        for seed in range(args.seeds):
            data = loader(seed)
            for eps in EPSILONS + ((math.inf,) if args.part == "mlp" else ()):
                for m in methods if math.isfinite(eps) else ["plain"]:
                    t0 = time.time()
                    fit = fit_mlp if args.part == "mlp" else fit_linear
                    score, eps_spent = fit(data, m, eps, seed)
                    results.append(
                        dict(
                            group=group,
                            set=data["name"],
                            seed=seed,
                            epsilon=eps,
                            method=m,
                            score=score,
                            epsilon_=eps_spent,
                            seconds=time.time() - t0,
                            d=int(data["Xtr"].shape[1]),
                            n=int(data["Xtr"].shape[0]),
                        )
                    )
            print(
                f"[{time.time() - t_start:6.0f}s] {group} {data['name']} seed {seed} done",
                file=sys.stderr,
                flush=True,
            )
            if args.out:
                with open(args.out, "w") as fh:
                    json.dump(results, fh)
    print(table(results, methods))
    print()
    print(summary(results))
    return results


def summary(results, a="mask", b="plain"):
    """Per half and epsilon: the mean over sets of the difference of the seed medians of
    method a and method b, and on how many sets a was ahead / behind by more than 0.005."""
    lines = [
        f"| half | eps | mean ({a}) - ({b}) over sets | sets ahead / behind (> 0.005) |",
        "|---|---|---|---|",
    ]
    groups = []
    for r in results:
        if r["group"] not in groups:
            groups.append(r["group"])
    for g in groups:
        for e in sorted({r["epsilon"] for r in results if r["group"] == g}):
            diffs = []
            for s in sorted({r["set"] for r in results if r["group"] == g}):
                rows = [r for r in results if (r["group"], r["set"], r["epsilon"]) == (g, s, e)]
                va = [r["score"] for r in rows if r["method"] == a]
                vb = [r["score"] for r in rows if r["method"] == b]
                if va and vb:
                    diffs.append(float(np.median(va) - np.median(vb)))
            if diffs:
                d = np.array(diffs)
                lines.append(
                    f"| {g} | {e:g} | {d.mean():+.3f} | {int(np.sum(d > 0.005))} / "
                    f"{int(np.sum(d < -0.005))} of {d.size} |"
                )
    return "\n".join(lines)


def table(results, methods):
    """Markdown: median score over seeds per (set, epsilon, method), and the private mask's
    gain over plain."""
    lines = [
        "| half | set (n, d) | eps | " + " | ".join(methods) + " | mask - plain |",
        "|---" * (len(methods) + 4) + "|",
    ]
    keys = []
    for r in results:
        k = (r["group"], r["set"], r["epsilon"])
        if k not in keys:
            keys.append(k)
    for g, s, e in keys:
        rows = [r for r in results if (r["group"], r["set"], r["epsilon"]) == (g, s, e)]
        med = {
            m: float(np.median([r["score"] for r in rows if r["method"] == m]))
            for m in methods
            if any(r["method"] == m for r in rows)
        }
        nd = f"({rows[0]['n']}, {rows[0]['d']})"
        gain = med.get("mask", np.nan) - med.get("plain", np.nan)
        lines.append(
            f"| {g} | {s} {nd} | {e:g} | "
            + " | ".join(f"{med.get(m, float('nan')):.3f}" for m in methods)
            + f" | {gain:+.3f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()

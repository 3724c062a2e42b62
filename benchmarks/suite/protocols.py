"""The two preprocessing protocols and the train/test split of the suite.

Protocol (a), "today's benchmark convention" (reads private data)
    Categoricals one-hot with the codebook levels; a ``StandardScaler`` fitted on the
    training rows; every row divided by the largest training row norm; test rows (and train
    rows, against rounding) clipped to norm 1. Regression targets: centred on the training
    mean and divided by the largest training ``|y - mean|``. The scaler statistics, the row
    factor and the target scale are read from the training data **without privacy** (the
    usual convention of DP benchmarks); ``data_norm = 1`` and ``y_bound = 1`` hold for the
    training rows by construction of those statistics.

Protocol (b), "a careful private user" (reads nothing from the data)
    Numeric column x with public range [lo, hi]: ``(x - lo) / (hi - lo) * 2 - 1`` clipped to
    [-1, 1]; categoricals one-hot over the public level list; every row divided by
    ``sqrt(n_columns)`` where ``n_columns`` is the number of original columns (numeric plus
    categorical: a one-hot block has norm 1), so ``||row|| <= 1`` holds by construction.
    Regression targets: the same affine map of the public target range, training targets
    clipped to [-1, 1] (test targets are mapped but not clipped: scores are on the real
    targets), ``y_bound = 1``.

Both protocols return per-feature public bounds (``feature_bounds``) for peers that want
box bounds (diffprivlib's LinearRegression): [-1, 1] in (a) (implied by the row norm bound);
[-1/sqrt(c), 1/sqrt(c)] for numeric and [0, 1/sqrt(c)] for one-hot columns in (b).

Split: 75/25 with ``random_state=seed``, stratified for classification; the training rows are
subsampled (stratified, seeded) to ``max_train`` when there are more. All methods see the same
split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import train_test_split

from .datasets import CLASSIFICATION, REGRESSION, RawData

PROTOCOLS = ("a", "b")
TEST_SIZE = 0.25
MAX_TRAIN = 50_000


@dataclass
class Prepared:
    """One preprocessed split of one set under one protocol."""

    dataset: str
    task: str
    protocol: str
    seed: int
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    feature_bounds: np.ndarray  # (d, 2), public per-feature bounds
    data_norm: float = 1.0
    y_bound: float | None = None
    subsampled_from: int | None = None  # training rows before subsampling, if subsampled

    @property
    def n_train(self):
        return int(self.X_train.shape[0])

    @property
    def n_features(self):
        return int(self.X_train.shape[1])

    @property
    def n_classes(self):
        return int(np.unique(self.y_train).shape[0]) if self.task == CLASSIFICATION else None


def one_hot(X_cat, levels):
    """One-hot encode with a public level list per column (values must be in the list)."""
    n = X_cat.shape[0]
    blocks = []
    for j, lv in enumerate(levels):
        index = {v: k for k, v in enumerate(lv)}
        codes = np.fromiter((index[v] for v in X_cat[:, j]), dtype=np.int64, count=n)
        B = np.zeros((n, len(lv)))
        B[np.arange(n), codes] = 1.0
        blocks.append(B)
    return np.hstack(blocks) if blocks else np.zeros((n, 0))


def split_indices(raw: RawData, seed, test_size=TEST_SIZE, max_train=MAX_TRAIN):
    """Train/test row indices for one seed (stratified for classification)."""
    idx = np.arange(raw.n)
    strat = raw.y if raw.task == CLASSIFICATION else None
    tr, te = train_test_split(idx, test_size=test_size, random_state=seed, stratify=strat)
    n_full = tr.shape[0]
    if max_train is not None and n_full > max_train:
        strat_tr = raw.y[tr] if raw.task == CLASSIFICATION else None
        tr, _ = train_test_split(
            tr, train_size=int(max_train), random_state=seed + 10_000, stratify=strat_tr
        )
        return tr, te, n_full
    return tr, te, None


def _protocol_a(raw, tr, te):
    X = np.hstack([raw.X_num, one_hot(raw.X_cat, raw.cat_levels)])
    Xtr, Xte = X[tr], X[te]
    # non-private statistics of the training rows (today's convention)
    mean = Xtr.mean(axis=0)
    std = Xtr.std(axis=0)
    std[std < 1e-12] = 1.0
    Xtr = (Xtr - mean) / std
    Xte = (Xte - mean) / std
    scale = float(np.max(np.linalg.norm(Xtr, axis=1)))
    scale = scale if scale > 0 else 1.0
    Xtr, Xte = _clip_rows(Xtr / scale), _clip_rows(Xte / scale)
    bounds = np.tile([-1.0, 1.0], (X.shape[1], 1))
    if raw.task == REGRESSION:
        ytr, yte = raw.y[tr], raw.y[te]
        centre = float(ytr.mean())
        s = float(np.max(np.abs(ytr - centre)))
        s = s if s > 0 else 1.0
        ytr = np.clip((ytr - centre) / s, -1.0, 1.0)  # clip against rounding only
        yte = (yte - centre) / s
        return Xtr, ytr, Xte, yte, bounds, 1.0
    return Xtr, raw.y[tr], Xte, raw.y[te], bounds, None


def _protocol_b(raw, tr, te):
    lo, hi = raw.num_ranges[:, 0], raw.num_ranges[:, 1]
    num = np.clip((raw.X_num - lo) / (hi - lo) * 2.0 - 1.0, -1.0, 1.0)
    cat = one_hot(raw.X_cat, raw.cat_levels)
    n_columns = raw.X_num.shape[1] + raw.X_cat.shape[1]
    s = 1.0 / np.sqrt(n_columns)
    X = np.hstack([num, cat]) * s
    # ||row||^2 <= n_num * 1 + n_cat * 1 = n_columns before the division: <= 1 after it.
    # Guard the last ulp of rounding so the public bound holds exactly.
    X = _clip_rows(X)
    bounds = np.vstack([np.tile([-s, s], (num.shape[1], 1)), np.tile([0.0, s], (cat.shape[1], 1))])
    if raw.task == REGRESSION:
        ylo, yhi = raw.y_range
        y = (raw.y - ylo) / (yhi - ylo) * 2.0 - 1.0
        return X[tr], np.clip(y[tr], -1.0, 1.0), X[te], y[te], bounds, 1.0
    return X[tr], raw.y[tr], X[te], raw.y[te], bounds, None


def _clip_rows(X, bound=1.0):
    norms = np.linalg.norm(X, axis=1)
    over = norms > bound
    if np.any(over):
        X = X.copy()
        X[over] *= (bound / norms[over])[:, None]
        # a second pass catches a rounding overshoot of the first
        norms = np.linalg.norm(X, axis=1)
        over = norms > bound
        X[over] *= np.nextafter(bound / norms[over], 0.0)[:, None]
    return X


def prepare(raw: RawData, protocol, seed, max_train=MAX_TRAIN):
    """Split and preprocess one set under protocol 'a' or 'b'."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    tr, te, n_full = split_indices(raw, seed, max_train=max_train)
    fn = _protocol_a if protocol == "a" else _protocol_b
    Xtr, ytr, Xte, yte, bounds, y_bound = fn(raw, tr, te)
    return Prepared(
        dataset=raw.name,
        task=raw.task,
        protocol=protocol,
        seed=int(seed),
        X_train=np.ascontiguousarray(Xtr),
        y_train=ytr,
        X_test=np.ascontiguousarray(Xte),
        y_test=yte,
        feature_bounds=bounds,
        data_norm=1.0,
        y_bound=y_bound,
        subsampled_from=n_full,
    )

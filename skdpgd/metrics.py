"""Private evaluation on private test rows: accuracy, R^2 and ROC AUC as accounted releases.

Scoring a model on rows that are themselves private publishes a function of those rows. Each
score here is one accounted Gaussian release (two for the AUC) of a few sums over the rows,
calibrated to ``(epsilon, delta)`` with the package's own accounting
(:func:`skdpgd.accounting.calibrate`, exact Gaussian DP), charged to a
:class:`~skdpgd.PrivacyBudget` (the ``budget`` argument, else the default budget of
:func:`skdpgd.config_context`) before anything is drawn, and drawn through the same noise
path as the estimators (secure mode's exact discrete Gaussian included). The score is
computed from the noisy sums and clipped to its range: post-processing.

Each row's contribution must depend on that row alone: ``y_pred[i]`` (or ``y_score[i]``) is a
public model applied to row ``i``. The neighbouring relation is ``'auto'`` by default: the
budget's relation when there is one, else replace-one (the number of test rows N is public and
read); under add/remove-one N is private and is released as part of the sums.

Every function returns a float; ``return_details=True`` returns a :class:`PrivateScore` with
the releases (their sensitivities and noise), ``epsilon_`` and ``delta_``, which
:func:`skdpgd.privacy_report` reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._config import resolve_budget
from ._core.noise import fit_generator, gaussian
from .accounting import COUNT_BOUND_SIGMAS, RELATIONS, Relation, Release, calibrate, compose

__all__ = ["PrivateScore", "dp_accuracy_score", "dp_r2_score", "dp_roc_auc_score"]

#: Each row's R^2 terms are rounded to a multiple of 2^-GRID_BITS (of their range), so that the
#: sums over up to 2^(52 - GRID_BITS) rows are exact in float64 and neighbouring sums differ by
#: exactly the per-row terms (no rounding margin, no public bound on N needed).
GRID_BITS = 20

#: The Mann-Whitney statistic is computed exactly in integers, and released exactly in float64,
#: for up to this many rows (2 P Q <= N^2 / 2 < 2^53).
MAX_AUC_ROWS = 2**26

_ROUND_UP = 1.0 + 4.0 * np.finfo(float).eps  # a sensitivity's square root, rounded up


@dataclass(frozen=True)
class PrivateScore:
    """What a private metric released (``return_details=True``).

    Attributes
    ----------
    value : float
        The private score (what the function returns by default).
    releases_ : list of Release
        The Gaussian releases, each with its L2 sensitivity under both relations and its noise
        (``noise_std``).
    epsilon_, delta_ : float
        The guarantee of the releases (epsilon an upper bound, at ``delta_``).
    neighbouring_ : str
        The neighbouring relation, in words.
    noise_ : str
        'gaussian' (floating point) or 'discrete' (secure mode).
    """

    value: float
    releases_: list
    epsilon_: float
    delta_: float
    neighbouring_: str
    noise_: str


# ---------------------------------------------------------------------------------------------
# shared steps: public checks, calibration, charge, draw
# ---------------------------------------------------------------------------------------------
def _rows(*arrays, names):
    """The arrays as 1-D numpy arrays of one length (a clear error otherwise)."""
    out = []
    for a, name in zip(arrays, names):
        v = np.asarray(a)
        if v.ndim == 2 and v.shape[1] == 1:
            v = v[:, 0]
        if v.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {np.shape(a)}.")
        out.append(v)
    n = {v.shape[0] for v in out}
    if len(n) != 1:
        raise ValueError(
            f"{' and '.join(names)} must have the same length, got {[v.shape[0] for v in out]}."
        )
    if out[0].shape[0] == 0:
        raise ValueError("no rows to score.")
    return out


def _numeric(v, name):
    try:
        v = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric.") from None
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} holds NaN or infinite values.")
    return v


class _Private:
    """The settled public part of one private score: relation, delta, budget, generator."""

    def __init__(self, label, epsilon, delta, budget, neighbouring, random_state, n_rows):
        from ._core.setup import check_release_epsilon, checked_delta, resolve_relation

        self.label = label
        self.epsilon = check_release_epsilon(epsilon)
        if neighbouring != "auto" and neighbouring not in RELATIONS:
            raise ValueError(
                f"neighbouring must be 'auto', 'replace' or 'add_remove', got {neighbouring!r}."
            )
        self.budget = resolve_budget(budget)  # else the default budget of config_context
        self.relation = resolve_relation(neighbouring, self.budget)  # may refuse: nothing read
        # N is read only where it is public (replace-one); else the default's cap
        self.delta = checked_delta(delta, self.relation, n_rows)
        self.n_rows = n_rows if self.relation == "replace" else None
        self.random_state = random_state

    def calibrate_and_charge(self, shapes):
        """The releases scaled to (epsilon, delta); the generator (secure mode refuses a seed
        here); the budget charged: a refusal comes before any draw."""
        releases = calibrate(shapes, self.epsilon, self.delta)
        self.gen = fit_generator(self.random_state, self.label)
        if self.budget is not None:
            self.budget.charge(releases, label=self.label)
        return releases

    def result(self, value, releases, details):
        from ._core.noise import noise_name

        if not details:
            return float(value)
        return PrivateScore(
            value=float(value),
            releases_=list(releases),
            epsilon_=compose(releases, self.delta),
            delta_=self.delta,
            neighbouring_=Relation(self.relation).words,
            noise_=noise_name(self.gen),
        )


def _shape(name, sensitivity, relation):
    """A release of one vector, before calibration (relative multiplier 1)."""
    return Release(name, [1.0], sensitivity, relation)


# ---------------------------------------------------------------------------------------------
def dp_accuracy_score(
    y_true,
    y_pred,
    *,
    epsilon,
    delta=None,
    budget=None,
    neighbouring="auto",
    random_state=None,
    label="dp_accuracy_score",
    return_details=False,
):
    """Accuracy on private rows, as one accounted Gaussian release.

    Privacy: replace-one (N public): the number of correct predictions is released; replacing
    one row moves it by at most 1 (L2 sensitivity 1), and the score is the noisy count over N.
    Add/remove-one (N private): the vector (correct, wrong) is released; adding or removing one
    row moves exactly one of the two by 1 (L2 sensitivity 1; replacing one row: sqrt(2)), and
    the score is the noisy correct count over the noisy total. The counts are exact integers
    (secure mode releases them without rounding). The score is clipped to [0, 1].

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True labels and a public model's predictions, row by row.
    epsilon : float > 0
        The release's epsilon (finite).
    delta : float in (0, 1) or None, default=None
        None: ``min(1e-5, 1/N^2)`` under replace-one, 1e-5 under add/remove-one.
    budget : PrivacyBudget or None, default=None
        Charged before anything is drawn (a refusal releases nothing); None: the default
        budget of :func:`skdpgd.config_context`, if any.
    neighbouring : {'auto', 'replace', 'add_remove'}, default='auto'
        'auto': the budget's relation, else replace-one.
    random_state : int, RandomState instance or None, default=None
        Fixes the noise (for experiments; never publish a score drawn with a known seed).
    label : str, default='dp_accuracy_score'
        The name of the charge in the budget (and its report).
    return_details : bool, default=False
        Return a :class:`PrivateScore` instead of a float.

    Returns
    -------
    float or PrivateScore

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd.metrics import dp_accuracy_score
    >>> y = np.arange(10_000) % 2
    >>> score = dp_accuracy_score(y, y, epsilon=1.0, random_state=0)
    >>> 0.99 <= score <= 1.0
    True
    """
    yt, yp = _rows(y_true, y_pred, names=("y_true", "y_pred"))
    n = yt.shape[0]
    p = _Private(label, epsilon, delta, budget, neighbouring, random_state, n)
    if p.relation == "replace":
        # one count; replace-one moves it by <= 1, add/remove-one by <= 1: sensitivity 1
        shape = _shape("correct predictions", {"replace": 1.0, "add_remove": 1.0}, p.relation)
    else:
        # (correct, wrong): add/remove-one moves one coordinate by 1 (L2 1); replace-one moves
        # one down and the other up by 1 (L2 sqrt 2)
        shape = _shape(
            "correct and wrong predictions",
            {"replace": math.sqrt(2.0) * _ROUND_UP, "add_remove": 1.0},
            p.relation,
        )
    (release,) = p.calibrate_and_charge([shape])

    correct = float(np.count_nonzero(yt == yp))
    std = float(release.noise_std[0])
    if p.relation == "replace":
        noisy = gaussian(correct, std, p.gen, release.own_sensitivity, exact=True)
        value = noisy / n
    else:
        counts = np.array([correct, float(n) - correct])
        noisy = np.maximum(gaussian(counts, std, p.gen, release.own_sensitivity, exact=True), 0)
        value = noisy[0] / max(float(noisy.sum()), 1.0)
    return p.result(float(np.clip(value, 0.0, 1.0)), [release], return_details)


# ---------------------------------------------------------------------------------------------
def _on_grid(t):
    """``t`` in [-1, 1] rounded to a multiple of 2^-GRID_BITS (it stays in [-1, 1])."""
    scale = float(2**GRID_BITS)
    return np.rint(t * scale) / scale


def dp_r2_score(
    y_true,
    y_pred,
    *,
    epsilon,
    y_bound,
    delta=None,
    budget=None,
    neighbouring="auto",
    random_state=None,
    label="dp_r2_score",
    return_details=False,
):
    """R^2 (coefficient of determination) on private rows, as one accounted Gaussian release.

    Targets and predictions are clipped to the public range ``y_bound = (lo, hi)``; with
    ``B = hi - lo`` and ``m = (lo + hi) / 2``, each row contributes ``a = ((y - p) / B)^2`` in
    [0, 1], ``c = (y - m) / (B / 2)`` in [-1, 1] and ``b = c^2`` in [0, 1] (each rounded to a
    multiple of 2^-20, so the float64 sums are exact).

    Privacy: replace-one (N public): the vector of sums (sum a, sum b, sum c) is released;
    replacing a row moves its coordinates by at most 1, 1 and 2, an L2 sensitivity of
    sqrt(6) (sqrt(3) for adding or removing one). Add/remove-one (N private): the vector
    (sum a, sum b, sum c, N); adding or removing a row moves it by at most sqrt(1 + 1 + 1 + 1)
    = 2 (replace-one: sqrt(6), N is unchanged). Post-processing: the residual sum of squares
    ``B^2 sum a``, the total sum of squares ``(B/2)^2 (sum b - (sum c)^2 / N)``, R^2 = 1 -
    their ratio, clipped to at most 1. Where the noisy total sum of squares is not positive
    (a tiny epsilon, nearly constant targets) R^2 is undefined: nan.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True targets and a public model's predictions, row by row.
    epsilon : float > 0
    y_bound : (float, float)
        The targets' public range ``(lo, hi)``, ``lo < hi``.
    delta, budget, neighbouring, random_state, label, return_details
        As for :func:`dp_accuracy_score`.

    Returns
    -------
    float or PrivateScore

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd.metrics import dp_r2_score
    >>> rng = np.random.default_rng(0)
    >>> y = rng.uniform(0, 10, size=20_000)
    >>> pred = y + rng.normal(scale=1.0, size=y.size)
    >>> score = dp_r2_score(y, pred, epsilon=1.0, y_bound=(0, 10), random_state=0)
    >>> 0.8 < score < 0.95
    True
    """
    yt, yp = _rows(y_true, y_pred, names=("y_true", "y_pred"))
    yt, yp = _numeric(yt, "y_true"), _numeric(yp, "y_pred")
    try:
        lo, hi = (float(v) for v in y_bound)
    except (TypeError, ValueError):
        raise ValueError(f"y_bound must be a pair (lo, hi), got {y_bound!r}.") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"y_bound must be finite with lo < hi, got {y_bound!r}.")
    n = yt.shape[0]
    if n > 2 ** (52 - GRID_BITS):
        raise ValueError(f"dp_r2_score scores at most {2 ** (52 - GRID_BITS)} rows at once.")
    p = _Private(label, epsilon, delta, budget, neighbouring, random_state, n)
    width, mid = hi - lo, (lo + hi) / 2.0
    if p.relation == "replace":
        # (sum a, sum b, sum c): ranges 1, 1, 2 under replace-one -> sqrt(6); one row's
        # coordinates under add/remove-one -> sqrt(3)
        sens = {"replace": math.sqrt(6.0) * _ROUND_UP, "add_remove": math.sqrt(3.0) * _ROUND_UP}
        name = "R^2 sums (squared residuals, squared and centred targets)"
    else:
        # (sum a, sum b, sum c, N): one row's coordinates, each at most 1 -> 2; replace-one
        # leaves N and moves the others by 1, 1, 2 -> sqrt(6)
        sens = {"replace": math.sqrt(6.0) * _ROUND_UP, "add_remove": 2.0}
        name = "R^2 sums (squared residuals, squared and centred targets, rows)"
    (release,) = p.calibrate_and_charge([_shape(name, sens, p.relation)])

    yt = np.clip(yt, lo, hi)
    yp = np.clip(yp, lo, hi)
    a = _on_grid(np.clip(((yt - yp) / width) ** 2, 0.0, 1.0))
    c = _on_grid(np.clip((yt - mid) / (width / 2.0), -1.0, 1.0))
    b = _on_grid(np.clip(c * c, 0.0, 1.0))
    sums = [float(np.sum(a)), float(np.sum(b)), float(np.sum(c))]  # exact: multiples of 2^-20
    if p.relation != "replace":
        sums.append(float(n))
    std = float(release.noise_std[0])
    noisy = gaussian(np.array(sums), std, p.gen, release.own_sensitivity)
    n_hat = float(n) if p.relation == "replace" else max(float(noisy[3]), 1.0)
    ss_res = width**2 * max(float(noisy[0]), 0.0)
    ss_tot = (width / 2.0) ** 2 * (float(noisy[1]) - float(noisy[2]) ** 2 / n_hat)
    value = min(1.0, 1.0 - ss_res / ss_tot) if ss_tot > 0 else math.nan
    return p.result(value, [release], return_details)


# ---------------------------------------------------------------------------------------------
def _mann_whitney_twice(positive, score):
    """``2 U``: twice the number of (positive, negative) pairs the positive row scores above,
    ties counting one half, as an exact integer."""
    neg = np.sort(score[~positive])
    pos = score[positive]
    below = np.searchsorted(neg, pos, side="left").astype(np.int64)
    at_most = np.searchsorted(neg, pos, side="right").astype(np.int64)
    return int(np.sum(below + at_most))  # 2 * below + ties = below + at_most


def dp_roc_auc_score(
    y_true,
    y_score,
    *,
    epsilon,
    pos_label=1,
    delta=None,
    budget=None,
    neighbouring="auto",
    random_state=None,
    label="dp_roc_auc_score",
    return_details=False,
):
    """Binary ROC AUC on private rows, as two accounted Gaussian releases.

    The AUC is ``U / (P Q)``: ``U`` the Mann-Whitney statistic (the number of (positive,
    negative) pairs where the positive row scores higher, ties counting one half), ``P`` and
    ``Q`` the numbers of positive and negative rows (rows whose label is not ``pos_label``
    are negative). Both releases get the same noise multiplier, calibrated together.

    Privacy:

    * the class counts. Replace-one (N public): ``P`` is released (sensitivity 1), ``Q = N -
      P``. Add/remove-one: the vector ``(P, Q)``; one row moves one of them by 1 (L2
      sensitivity 1; replace-one: sqrt(2)).
    * ``U``. Adding or removing a positive row changes ``U`` by its comparisons with the
      negative rows, at most ``Q`` (a negative row: at most ``P``); replacing a row removes one
      and adds one, and its change lies in ``[-max(P, Q), max(P, Q)]`` (a positive replaced by
      a positive: within ``[-Q, Q]``; by a negative: within ``[-Q, P - 1]``). So the
      sensitivity is at most ``max(P, Q) <= N - 1`` under replace-one: ``N - 1``, public.
      Under add/remove-one N is private, and the sensitivity is the bound ``max(P~, Q~) + 1 +
      40 sigma`` from the released counts ``P~, Q~`` (noise standard deviation ``sigma``),
      which holds unless the counts' noise exceeds 40 of its standard deviations (probability
      below 1e-300, the package's convention for a bound read from a released count).
      ``U / S`` is released, ``S`` that bound: sensitivity 1 (raised by 2^-20 for the
      division's rounding).

    Post-processing: the AUC is the noisy ``U`` over the product of the noisy counts (each
    at least 1), clipped to [0, 1]. ``U`` is computed exactly in integers (at most 2^26 rows).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels (binary: ``pos_label`` or not).
    y_score : array-like of shape (n_samples,)
        A public model's scores for the positive class, row by row (e.g.
        ``predict_proba(X)[:, 1]`` or ``decision_function(X)``).
    epsilon : float > 0
    pos_label : int, float, bool or str, default=1
        The positive class (public).
    delta, budget, neighbouring, random_state, label, return_details
        As for :func:`dp_accuracy_score`.

    Returns
    -------
    float or PrivateScore

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd.metrics import dp_roc_auc_score
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, size=20_000)
    >>> score = y + rng.normal(size=y.size)
    >>> auc = dp_roc_auc_score(y, score, epsilon=1.0, random_state=0)
    >>> 0.7 < auc < 0.8
    True
    """
    yt, ys = _rows(y_true, y_score, names=("y_true", "y_score"))
    ys = _numeric(ys, "y_score")
    n = yt.shape[0]
    if n > MAX_AUC_ROWS:
        raise ValueError(f"dp_roc_auc_score scores at most {MAX_AUC_ROWS} rows at once.")
    p = _Private(label, epsilon, delta, budget, neighbouring, random_state, n)
    if p.relation == "replace":
        counts_shape = _shape("positive rows", {"replace": 1.0, "add_remove": 1.0}, p.relation)
        u_sens = float(max(n - 1, 1))  # max(P, Q) <= N - 1, public under replace-one
    else:
        counts_shape = _shape(
            "positive and negative rows",
            {"replace": math.sqrt(2.0) * _ROUND_UP, "add_remove": 1.0},
            p.relation,
        )
        u_sens = None  # from the released counts, below
    # U is released divided by its sensitivity bound S (public under replace-one, from the
    # released counts under add/remove-one): sensitivity 1 under both relations, raised by the
    # rounding of the division (|U / S| <= N / 2, so at most N 2^-53 <= 2^-27)
    u_shape = _shape(
        "Mann-Whitney U over its sensitivity bound",
        {"replace": 1.0 + 2.0**-20, "add_remove": 1.0 + 2.0**-20},
        p.relation,
    )
    counts_release, u_release = p.calibrate_and_charge([counts_shape, u_shape])

    positive = yt == pos_label
    n_pos = int(np.count_nonzero(positive))
    z_counts = float(counts_release.noise_std[0])
    if p.relation == "replace":
        pos_hat = gaussian(float(n_pos), z_counts, p.gen, counts_release.own_sensitivity, True)
        pos_hat = float(np.clip(pos_hat, 0.0, n))
        neg_hat = float(n) - pos_hat
    else:
        counts = np.array([float(n_pos), float(n - n_pos)])
        noisy = gaussian(counts, z_counts, p.gen, counts_release.own_sensitivity, exact=True)
        pos_hat, neg_hat = (max(float(v), 0.0) for v in noisy)
        # max(P, Q) of either neighbour: the released counts are within 1 + 40 sigma of it
        u_sens = max(pos_hat, neg_hat) + 1.0 + COUNT_BOUND_SIGMAS * z_counts
    u = _mann_whitney_twice(positive, ys) / 2.0  # exact: 2U < 2^53
    noisy_ratio = gaussian(
        u / u_sens, float(u_release.noise_std[0]), p.gen, u_release.own_sensitivity
    )
    u_hat = float(noisy_ratio) * u_sens  # post-processing
    value = float(u_hat) / (max(pos_hat, 1.0) * max(neg_hat, 1.0))
    return p.result(float(np.clip(value, 0.0, 1.0)), [counts_release, u_release], return_details)

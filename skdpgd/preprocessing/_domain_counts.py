"""out_of_domain_counts: noisy counts of the cells outside a codebook (opt-in, accounted)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._config import resolve_budget
from .._core.noise import fit_generator, gaussian
from .._core.setup import check_release_epsilon, checked_delta
from ..accounting import RELATIONS, Release
from ._schema import schema_transformer

# ------------------------------------------------------------------------------------------
# an accounted look at how well the rows fit the codebook
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DomainCounts:
    """What :func:`out_of_domain_counts` released: per column, a noisy number of rows whose
    cell lies outside the codebook, and the release's accounting (read by
    :func:`skdpgd.privacy_report` and charged to a :class:`~skdpgd.PrivacyBudget`)."""

    counts: dict
    noise_std: float
    epsilon_: float
    delta_: float
    releases_: list
    neighbouring_: str


def check_count_release(epsilon, neighbouring):
    """The public parameters of an accounted count release (this module's and
    :func:`~skdpgd.preprocessing.out_of_range_target_count`'s), checked before any row is
    read: a relation and a finite epsilon > 0."""
    if neighbouring not in RELATIONS:
        raise ValueError(f"neighbouring must be 'replace' or 'add_remove', got {neighbouring!r}.")
    check_release_epsilon(epsilon)


def out_of_domain_counts(
    X, schema, *, epsilon, delta=None, budget=None, neighbouring="replace", random_state=None
):
    """Noisy counts of the rows whose cell lies outside a :func:`schema_transformer` codebook.

    A codebook that does not match the data (``'Male'`` declared where the rows hold
    ``'male'``, a range that misses most values) turns the columns into missing values without
    an error: every such cell is a valid row for the privacy proof. This opt-in check tells
    you, at a small budget you choose: for each listed column, the number of rows whose cell is
    missing, not a number (numeric column), outside the range, or not a listed level, plus
    Gaussian noise. Spend a small share (e.g. ``epsilon=0.05``) and charge it to the budget
    your pipeline draws from.

    Privacy: one release of the vector of ``k`` counts (``k`` listed columns). Replacing,
    adding or removing one row moves each count by at most 1, so the vector's L2 sensitivity is
    ``sqrt(k)`` under both relations; the noise's standard deviation is ``sqrt(k) / mu`` with
    ``mu`` the Gaussian-DP parameter of ``(epsilon, delta)`` (exact). The dtypes are checked
    against the codebook first (a refusal reads no value). Under replace-one the number of rows
    is public; under add/remove-one it is not read (delta defaults to 1e-5).

    Parameters
    ----------
    X : DataFrame or 2-D array
        The rows, as the pipeline would see them.
    schema : dict
        The codebook, as for :func:`schema_transformer`.
    epsilon : float > 0
    delta : float in (0, 1) or None, default=None
        None: ``min(1e-5, 1/N^2)`` under replace-one, 1e-5 under add/remove-one.
    budget : PrivacyBudget or None, default=None
        Charged before anything is drawn (a refusal reads nothing).
    neighbouring : {'replace', 'add_remove'}, default='replace'
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    DomainCounts

    Examples
    --------
    >>> import pandas as pd
    >>> from skdpgd.preprocessing import out_of_domain_counts
    >>> df = pd.DataFrame({"sex": ["male", "female"] * 500, "age": [30, 130] * 500})
    >>> check = out_of_domain_counts(df, {"sex": ["Male", "Female"], "age": (18, 100)},
    ...                              epsilon=0.1, random_state=0)
    >>> sorted(check.counts), round(check.counts["sex"], -2)
    (['age', 'sex'], 1000.0)
    """
    from ..accounting import Relation, calibrate, compose

    check_count_release(epsilon, neighbouring)
    transformer = schema_transformer(schema)  # validates the codebook
    numeric_part = dict((n, c) for n, _, c in transformer.transformers).get("numeric", [])
    categorical_part = dict((n, c) for n, _, c in transformer.transformers).get("categorical", [])
    steps = dict((n, t) for n, t, _ in transformer.transformers)
    n_rows = int(X.shape[0]) if hasattr(X, "shape") else len(X)
    delta = checked_delta(delta, neighbouring, n_rows)
    columns = list(numeric_part) + list(categorical_part)
    k = len(columns)
    # the counts are exact integers (sums of booleans); sqrt(k) is rounded up. One Gaussian
    # release of the vector, calibrated to (epsilon, delta): noise std z sqrt(k)
    sens = math.sqrt(k) * (1.0 + 4.0 * np.finfo(float).eps)
    (release,) = calibrate(
        [
            Release(
                "rows outside the codebook, per column",
                [1.0],
                {"replace": sens, "add_remove": sens},
                neighbouring,
            )
        ],
        float(epsilon),
        delta,
    )

    def table(cols, rows=slice(None)):
        if hasattr(X, "iloc"):
            return X[cols].iloc[rows]
        return np.asarray(X, dtype=object)[rows][:, cols]

    # the dtypes against the codebook first, on no row at all: a refusal reads no value and
    # charges nothing
    for part, cols in (("numeric", numeric_part), ("categorical", categorical_part)):
        if cols:
            domain = steps[part].steps[0][1]
            domain.func(table(cols, slice(0, 0)), **(domain.kw_args or {}))
    # the generator before any charge: secure mode refuses a seeded random_state here
    gen = fit_generator(random_state, "out_of_domain_counts")
    budget = resolve_budget(budget)  # else the default budget of config_context, if any
    if budget is not None:
        budget.charge([release], label="out_of_domain_counts")

    counts = np.zeros(k)
    if numeric_part:
        domain, scale = steps["numeric"].steps[0][1], steps["numeric"].steps[1][1]
        values = domain.func(table(numeric_part), **(domain.kw_args or {}))
        lo, hi = np.asarray(scale.bounds, dtype=float).T
        with np.errstate(invalid="ignore"):
            outside = ~((values >= lo) & (values <= hi))  # NaN (missing, not a number) too
        counts[: len(numeric_part)] = outside.sum(axis=0)
    if categorical_part:
        domain = steps["categorical"].steps[0][1]
        levels = domain.func(table(categorical_part), **(domain.kw_args or {}))
        missing = np.array(
            [[isinstance(v, float) and math.isnan(v) for v in row] for row in levels], dtype=bool
        ).reshape(levels.shape)
        counts[len(numeric_part) :] = missing.sum(axis=0)
    std = float(release.noise_std[0])
    # integer counts: released without rounding in secure mode
    noisy = gaussian(counts, std, gen, release.own_sensitivity, exact=True)
    return DomainCounts(
        counts=dict(zip(columns, (float(v) for v in noisy))),
        noise_std=std,
        epsilon_=compose([release], delta),
        delta_=delta,
        releases_=[release],
        neighbouring_=Relation(neighbouring).words,
    )

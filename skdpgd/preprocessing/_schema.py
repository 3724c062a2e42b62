"""schema_transformer: a ColumnTransformer from a public codebook."""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from .._core.capability import PUBLIC_TRANSFORMER, with_privacy
from ._bounded import BoundedScaler


# ------------------------------------------------------------------------------------------
# codebook -> ColumnTransformer
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Numeric:
    """A schema entry: a numeric column with the public range ``[lo, hi]`` and the public
    codes that mean "missing" in it (:func:`numeric`)."""

    lo: float
    hi: float
    missing: tuple = ()


@dataclass(frozen=True)
class Categorical:
    """A schema entry: a categorical column with these public levels (:func:`categorical`)."""

    levels: tuple


def numeric(lo, hi, *, missing=()):
    """A numeric column of :func:`schema_transformer` with the public range ``[lo, hi]``
    (the same as the shorthand ``(lo, hi)``; unambiguous in a codebook read from JSON or
    YAML, where a pair becomes a list).

    ``missing``: numbers that code a missing answer in this column (``-99``, ``999``, as a
    data dictionary lists them); a cell equal to one of them is missing, like text or NaN,
    instead of being clipped into the range."""
    return Numeric(lo, hi, tuple(missing))


def categorical(levels):
    """A categorical column of :func:`schema_transformer` with these public levels (the same
    as the shorthand ``[level, ...]``; a list of two numbers needs this form when the column
    holds numbers, see :func:`schema_transformer`)."""
    return Categorical(tuple(levels))


def _dtype_kind(col):
    """``'number'``, ``'text'``, ``'date'`` or ``None`` (object: anything) of a column's dtype
    (public, like its name)."""
    dtype = getattr(col, "dtype", None)
    if dtype is None:
        return None
    if isinstance(dtype, _pandas_category_types()):
        return _level_kind(list(dtype.categories)) if len(dtype.categories) else None
    kind = getattr(dtype, "kind", "O")
    if kind in "biuf":
        return "number"
    if kind in "mM":
        return "date"
    if (
        kind in "US"
        or str(dtype) in ("string", "str")
        or getattr(dtype, "name", "") in ("string", "str")
    ):
        return "text"
    return None


def _pandas_category_types():
    """The pandas categorical dtype class, or an empty tuple without pandas."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is optional
        return ()
    return (pd.CategoricalDtype,)


def _check_dtypes(X, names, declared, pairs=()):
    """Refuse, from the dtypes alone (public), a column whose dtype contradicts its schema
    entry: a number column declared with text levels, a text column declared numeric, a date
    column declared either way, and a number column declared by the list shorthand with two
    numbers that are not consecutive integers (a range written as a list). Reads no value."""
    for col, name, want, pair in zip(
        _table_columns(X), names, declared, pairs or [None] * len(declared)
    ):
        have = _dtype_kind(col)
        if have is None:
            continue
        if have == "date":
            raise ValueError(
                f"schema: column {name!r} holds dates (dtype {col.dtype}); map it to numbers "
                "(e.g. days since a public date) and declare numeric(lo, hi). Nothing was "
                "read."
            )
        if want == "text" and have == "number":
            raise ValueError(
                f"schema: column {name!r} holds numbers (dtype {col.dtype}) but is declared "
                "with text levels; declare its levels as the numbers it holds, "
                "categorical([1, 2, ...]), or numeric(lo, hi). Nothing was read."
            )
        if want == "number" and have == "text":
            raise ValueError(
                f"schema: column {name!r} holds text (dtype {col.dtype}) but is declared "
                f"{'with number levels' if pair is not None else 'numeric'}; declare "
                "categorical([...]) with its levels as they are written. Nothing was read."
            )
        if pair and have == "number":  # (None: a numeric entry; False: a level list)
            lo, hi = pair
            raise ValueError(
                f"schema: column {name!r} holds numbers and is declared [{lo!r}, {hi!r}], a "
                f"list: two levels, not a range. Write numeric({lo!r}, {hi!r}) (or the tuple "
                f"({lo!r}, {hi!r})) for a range, or categorical([{lo!r}, {hi!r}]) for two "
                "levels. Nothing was read."
            )


def _is_number(v):
    """Whether a cell counts as a number in a schema: a real number (Python or numpy, bools
    included), never text, None, a date or any other object."""
    return isinstance(v, (numbers.Real, np.bool_))


def _float_or_nan(v):
    if not _is_number(v):
        return math.nan
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return math.nan
    return f if math.isfinite(f) else math.nan


def _table_columns(X):
    """The columns of a 2-D table (DataFrame or array-like), each 1-D, read without
    converting a value."""
    if hasattr(X, "iloc") and hasattr(X, "columns"):  # pandas
        return [X.iloc[:, j] for j in range(X.shape[1])]
    A = X if isinstance(X, np.ndarray) else np.asarray(X, dtype=object)
    if A.ndim != 2:
        raise ValueError(f"expected a 2-D table, got an array of shape {A.shape}.")
    return [A[:, j] for j in range(A.shape[1])]


def _column_as_float(col):
    """1-D float64: numbers as floats; anything else (text, None, dates, NaN, +-inf) NaN.

    Cell by cell, so no value can make it fail; a column of a numeric dtype is converted at
    once (the same result)."""
    kind = getattr(getattr(col, "dtype", None), "kind", "O")
    if kind in "biuf":
        if hasattr(col, "to_numpy"):  # pandas, nullable dtypes included
            out = col.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            out = np.asarray(col, dtype=np.float64)
        out = np.array(out, dtype=np.float64)  # a copy: the input is never written to
        out[~np.isfinite(out)] = np.nan
        return out
    cells = (
        col.to_numpy(dtype=object) if hasattr(col, "to_numpy") else np.asarray(col, dtype=object)
    )
    return np.fromiter((_float_or_nan(v) for v in cells), dtype=np.float64, count=len(cells))


def _numbers_in_domain(X, names=None, missing=None):
    """A schema's numeric columns as a float64 array: every cell that is not a finite number
    (text, None, a date, NaN, +-inf) becomes NaN, i.e. missing, and so does a cell equal to
    one of its column's missing codes (``missing``: one tuple of numbers per column, or None).
    Stateless, cell by cell: the function of the schema's ``FunctionTransformer`` before
    :class:`BoundedScaler`. A column whose dtype contradicts the schema is refused first
    (``names``: the schema's)."""
    if names is not None:
        _check_dtypes(X, names, ["number"] * len(names))
    cols = _table_columns(X)
    out = np.empty((len(cols[0]) if cols else len(X), len(cols)), dtype=np.float64)
    for j, col in enumerate(cols):
        out[:, j] = _column_as_float(col)
        if missing is not None and missing[j]:
            out[np.isin(out[:, j], np.asarray(missing[j], dtype=np.float64)), j] = np.nan
    return out


def _levels_in_domain(X, levels, names=None, pairs=None):
    """A schema's categorical columns as an object array of their public levels (the level
    objects of the schema); every cell of the wrong type or not among its column's levels
    becomes NaN, i.e. missing. A number matches a numeric level of equal value (1, 1.0 and
    True are level 1), a string a text level equal to it. Stateless, cell by cell: the
    function of the schema's ``FunctionTransformer`` before ``OneHotEncoder``. A column
    whose dtype contradicts the schema is refused first (``names``: the schema's; ``pairs``:
    the two numbers of a list shorthand that may be a range written as a list, else False)."""
    if names is not None:
        _check_dtypes(X, names, [_level_kind(lv) for lv in levels], pairs)
    cols = _table_columns(X)
    if len(cols) != len(levels):
        raise ValueError(f"expected {len(levels)} categorical column(s), got {len(cols)}.")
    out = np.empty((len(cols[0]) if cols else len(X), len(cols)), dtype=object)
    for j, (col, lv) in enumerate(zip(cols, levels)):
        if _level_kind(lv) == "number":
            by_value = {float(v): v for v in lv}
            out[:, j] = [by_value.get(f, math.nan) for f in _column_as_float(col).tolist()]
        else:
            allowed = set(lv)
            cells = (
                col.to_numpy(dtype=object)
                if hasattr(col, "to_numpy")
                else np.asarray(col, dtype=object)
            )
            out[:, j] = [str(v) if isinstance(v, str) and v in allowed else math.nan for v in cells]
    return out


def _level_kind(levels):
    """'number' (every level a number), 'text' (every level a str) or None (anything else)."""
    if all(_is_number(v) for v in levels):
        return "number"
    if all(isinstance(v, str) for v in levels):
        return "text"
    return None


def _missing_codes(col, codes):
    """The missing codes of a numeric column as a tuple of finite floats."""
    codes = [v.item() if isinstance(v, np.generic) else v for v in codes]
    if not all(_is_number(v) and not isinstance(v, bool) for v in codes) or not all(
        math.isfinite(float(v)) for v in codes
    ):
        raise ValueError(
            f"schema: the missing codes of column {col!r} must be finite numbers, got {codes!r} "
            "(text and NaN are missing in a numeric column anyway)."
        )
    return tuple(float(v) for v in codes)


def _schema_levels(col, spec):
    """The public levels of a categorical column as Python objects: numbers sorted by value,
    or strings in the order given."""
    spec = [v.item() if isinstance(v, np.generic) else v for v in spec]
    kind = _level_kind(spec)
    if kind == "number":
        levels = sorted(spec, key=float)  # OneHotEncoder wants numbers sorted
        values = [float(v) for v in levels]
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"schema: column {col!r} has a level that is not finite.")
    elif kind == "text":
        levels = [str(v) for v in spec]
        values = levels
    else:
        raise ValueError(
            f"schema: the levels of column {col!r} must be all strings or all numbers, got "
            f"{spec!r}."
        )
    if len(set(values)) != len(values):
        raise ValueError(f"schema: column {col!r} lists a level twice.")
    return levels


class _UnlistedColumns(TransformerMixin, BaseEstimator):
    """The remainder of a :func:`schema_transformer`: the table's columns that the codebook
    does not list. It outputs no column; its fit reads their names (public, like the
    codebook's) and nothing else, and warns (``action='warn'``) or refuses the fit
    (``action='error'``) naming them, so that no column is dropped without a word."""

    #: what the leak audit trusts this class (not a subclass) to do: see skdpgd._core.capability
    _skdpgd_privacy = PUBLIC_TRANSFORMER

    def __init__(self, action="warn"):
        self.action = action

    def fit(self, X, y=None):
        """Warn about (or refuse) the columns it is given; reads their names only.

        Parameters
        ----------
        X : DataFrame or 2-D array
            The columns the codebook does not list (a ``ColumnTransformer`` passes them).
        y : ignored

        Returns
        -------
        self : object
        """
        if self.action not in ("warn", "error"):
            raise ValueError(f"action must be 'warn' or 'error', got {self.action!r}.")
        n_columns = int(np.shape(X)[1])
        names = [str(c) for c in X.columns] if hasattr(X, "columns") else None
        which = ", ".join(repr(c) for c in names) if names else f"{n_columns} by position"
        text = (
            f"schema_transformer: column(s) of the table not in the codebook: {which}; "
            f"{'they would be dropped' if self.action == 'error' else 'dropped'}. Add them "
            "to the codebook if the model should use them, or pass remainder='drop' to drop "
            "them without a word (column names are public; no value was read). A level or "
            "range that does not match the rows (a typo: 'Male' for 'male') is not caught "
            "here; skdpgd.preprocessing.out_of_domain_counts counts such cells, at an "
            "accounted budget."
        )
        if self.action == "error":
            raise ValueError(text)
        warnings.warn(text, UserWarning, stacklevel=2)
        self.n_features_in_ = n_columns
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        self.output_bound_ = 0.0  # it outputs no column
        return self

    def transform(self, X):
        """No column: an array of shape ``(n_rows, 0)``."""
        return np.zeros((int(np.shape(X)[0]), 0))

    def get_feature_names_out(self, input_features=None):
        """No column, no name."""
        return np.asarray([], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # fit reads no value
        tags.input_tags.string = True
        return with_privacy(self, tags)  # the capability the class itself declares


def schema_transformer(schema, *, missing="constant", numeric_fill=0.0, remainder="warn"):
    """A scikit-learn ``ColumnTransformer`` built from a public codebook; no budget spent.

    Parameters
    ----------
    schema : dict
        ``{column: numeric(lo, hi)}`` for a numeric column (its public range) and
        ``{column: categorical([level, ...])}`` for a categorical one (every public level).
        Shorthands: a tuple ``(lo, hi)`` of two numbers is a range, a list a level list.
        Columns are DataFrame names (or integer positions for arrays); columns not listed are
        dropped (see ``remainder``). A data dictionary in the Frictionless Table Schema format
        gives this dict: :func:`~skdpgd.preprocessing.codebook_from_table_schema`. The
        dtypes (public, like the names) are checked against the entries before any value is
        read: a number column declared with text levels, a text column declared
        numeric, a date column, and a number column declared by a two-number list (a range
        written as a list, as JSON and YAML give it; consecutive integers such as ``[0, 1]``
        are taken as levels) are errors that name the fix.
    missing : {'constant', 'indicator'}, default='constant'
        Missing categorical values: 'constant' encodes them as all-zero; 'indicator' adds a
        level for them (its own one-hot column). Missing numeric values always become
        ``numeric_fill``.
    numeric_fill : float in [-1, 1], default=0.0
        Output for a missing numeric value, on the [-1, 1] scale (0: the middle of the range).
    remainder : {'warn', 'drop', 'error'}, default='warn'
        The table's columns that the codebook does not list are never used. 'warn': the fit
        drops them with a ``UserWarning`` naming them; 'drop': without a word; 'error': the
        fit refuses the table, naming them. Only their names are read (public).

    Returns
    -------
    ColumnTransformer
        Numeric columns: a ``Pipeline`` of a stateless ``FunctionTransformer`` that reads
        every cell as a number, then :class:`BoundedScaler` (clipped to the range, mapped to
        [-1, 1]). Categorical columns: a ``Pipeline`` of a stateless ``FunctionTransformer``
        that maps every cell to its public level, then ``OneHotEncoder(categories=levels,
        handle_unknown='ignore')``. Each part is weighted by ``1 / sqrt(k)``
        (``transformer_weights``), ``k`` the number of listed columns: a numeric column
        contributes at most ``1/k`` to the squared row norm and a one-hot block at most
        ``1/k``, so **every output row has L2 norm at most 1**, a public bound
        (:func:`output_bound` returns it; a private pipeline passes it on as ``data_norm``).
        ``sparse_threshold=0``: the output's format does not depend on the rows. The
        columns not listed go to a remainder that outputs nothing (``remainder='drop'``, or
        a part that warns or refuses, naming them).

    Notes
    -----
    **Values outside the declared domain are missing values.** No cell can make the fit or
    the transform fail, and the fitted attributes (values and dtypes, the encoder's
    ``categories_`` included) are the same whatever the rows hold:

    * numeric column: a number (Python or numpy, a bool counts as 0 or 1) is clipped to
      ``(lo, hi)``; anything else (text, None, a date, NaN, ``+-inf``) is missing and
      becomes ``numeric_fill``;
    * a numeric column's missing codes (``numeric(lo, hi, missing=[-99])``) are missing too;
    * categorical column: levels are all strings or all numbers (a mix is refused). A string
      matches a text level equal to it, a number a numeric level of equal value (``1``,
      ``1.0`` and ``True`` are level 1; ``2.5`` is no level of ``[1, 2, 3]``). Any other cell
      (a level not listed, a value of the other type, None, NaN) is missing: all zeros, or
      the indicator column with ``missing='indicator'``. The encoder always sees an object
      array of the schema's level objects, so its ``categories_`` are the schema's levels
      (dtype object), whatever the column's dtype in the training rows.

    **A typo in the codebook is silent.** ``["Male", "Female"]`` declared for a column that
    holds ``"male"`` and ``"female"`` makes every cell of it missing, and the model then
    learns nothing from that column (or returns the majority class when every column is
    hit). Nothing here reads a value to catch it;
    :func:`~skdpgd.preprocessing.out_of_domain_counts` does, at a
    small accounted budget: noisy counts, per column, of the cells outside the codebook.

    Examples
    --------
    >>> import pandas as pd
    >>> from skdpgd.preprocessing import schema_transformer
    >>> df = pd.DataFrame({"age": [30, 200, None], "job": ["a", "zz", None]})
    >>> ct = schema_transformer({"age": (18, 100), "job": ["a", "b"]})
    >>> ct.fit_transform(df).round(3)
    array([[-0.5  ,  0.707,  0.   ],
           [ 0.707,  0.   ,  0.   ],
           [ 0.   ,  0.   ,  0.   ]])
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

    if not isinstance(schema, dict) or not schema:
        raise ValueError("schema must be a non-empty dict {column: (lo, hi) or [levels]}.")
    if missing not in ("constant", "indicator"):
        raise ValueError(f"missing must be 'constant' or 'indicator', got {missing!r}.")
    if not -1.0 <= float(numeric_fill) <= 1.0:
        raise ValueError("numeric_fill must lie in [-1, 1].")
    if not (isinstance(remainder, str) and remainder in ("warn", "drop", "error")):
        raise ValueError(f"remainder must be 'warn', 'drop' or 'error', got {remainder!r}.")
    numeric_cols, ranges, codes, categorical_cols, levels, pairs = [], [], [], [], [], []
    for col, spec in schema.items():
        if isinstance(col, np.generic):  # numpy scalars as plain str/int (ColumnTransformer)
            col = col.item()
        if isinstance(spec, Numeric) or (
            isinstance(spec, tuple)
            and len(spec) == 2
            and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in spec)
        ):
            lo, hi = (spec.lo, spec.hi) if isinstance(spec, Numeric) else spec
            if not (
                isinstance(lo, numbers.Real)
                and isinstance(hi, numbers.Real)
                and float(lo) < float(hi)
            ):
                raise ValueError(f"schema: column {col!r} needs numbers lo < hi, got {spec!r}.")
            numeric_cols.append(col)
            ranges.append((float(lo), float(hi)))
            codes.append(_missing_codes(col, spec.missing if isinstance(spec, Numeric) else ()))
        elif isinstance(spec, Categorical) or (
            isinstance(spec, (list, np.ndarray)) and len(spec) > 0
        ):
            lv = list(spec.levels) if isinstance(spec, Categorical) else list(spec)
            if not lv:
                raise ValueError(f"schema: column {col!r} needs at least one level.")
            categorical_cols.append(col)
            levels.append(_schema_levels(col, lv))
            # a list of two numbers that are not consecutive integers may be a range written
            # as a list (JSON and YAML have no tuples): refused on a number column at fit
            two = [v.item() if isinstance(v, np.generic) else v for v in lv]
            maybe_range = (
                not isinstance(spec, Categorical)
                and len(two) == 2
                and _level_kind(two) == "number"
                and not (
                    float(two[0]).is_integer()
                    and float(two[1]).is_integer()
                    and abs(float(two[1]) - float(two[0])) == 1.0
                )
            )
            pairs.append(tuple(two) if maybe_range else False)
        else:
            raise ValueError(
                f"schema: column {col!r} needs numeric(lo, hi) or a (lo, hi) tuple of numbers "
                f"(numeric), or categorical([...]) or a non-empty list of levels "
                f"(categorical), got {spec!r}."
            )
    numeric, categorical = numeric_cols, categorical_cols
    k = len(numeric) + len(categorical)
    w = 1.0 / math.sqrt(k)
    parts, weights = [], {}
    if numeric:
        parts.append(
            (
                "numeric",
                Pipeline(
                    [
                        (
                            "domain",
                            FunctionTransformer(
                                _numbers_in_domain,
                                validate=False,
                                check_inverse=False,
                                kw_args=(
                                    {"names": numeric, "missing": codes}
                                    if any(codes)
                                    else {"names": numeric}
                                ),
                                feature_names_out="one-to-one",
                            ),
                        ),
                        (
                            "scale",
                            BoundedScaler(
                                bounds=np.array(ranges), missing_value=float(numeric_fill)
                            ),
                        ),
                    ]
                ),
                numeric,
            )
        )
        weights["numeric"] = w
    if categorical:
        # the encoder sees one fixed type (object: the schema's level objects, NaN for
        # missing), so its categories_ are the schema's whatever the rows' dtypes
        categories = [
            np.array(lv + ([math.nan] if missing == "indicator" else []), dtype=object)
            for lv in levels
        ]  # NaN last: the indicator
        parts.append(
            (
                "categorical",
                Pipeline(
                    [
                        (
                            "domain",
                            FunctionTransformer(
                                _levels_in_domain,
                                validate=False,
                                check_inverse=False,
                                kw_args={"levels": levels, "names": categorical, "pairs": pairs},
                                feature_names_out="one-to-one",
                            ),
                        ),
                        (
                            "onehot",
                            OneHotEncoder(
                                categories=categories,
                                handle_unknown="ignore",
                                sparse_output=False,
                                dtype=np.float64,
                            ),
                        ),
                    ]
                ),
                categorical,
            )
        )
        weights["categorical"] = w
    return ColumnTransformer(
        parts,
        remainder="drop" if remainder == "drop" else _UnlistedColumns(remainder),
        sparse_threshold=0.0,
        transformer_weights=weights,
    )

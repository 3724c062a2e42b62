"""codebook_from_table_schema: the codebook of a data dictionary in the Frictionless Table
Schema format.

A data set is often published with a machine-readable data dictionary. The common one is the
Frictionless Data *Table Schema* (https://specs.frictionlessdata.io/table-schema/), a JSON
object. What this reader relies on, in short:

* ``fields``: a list with one object per column, in the column order; each has a ``name``
  (unique) and a ``type`` (``"string"`` when absent). Types: ``string``, ``number``,
  ``integer``, ``boolean``, ``year``, ``date``, ``time``, ``datetime``, ``yearmonth``,
  ``duration``, ``object``, ``array``, ``list``, ``geopoint``, ``geojson`` and ``any``.
* ``constraints`` (an object inside a field) may hold ``minimum`` and ``maximum``
  (inclusive), ``exclusiveMinimum`` and ``exclusiveMaximum`` (version 2), and ``enum``,
  the complete list of values a cell may take. A constraint value may be written as the
  logical value (the JSON number ``17``) or as its text form (``"17"``).
* Version 2 adds ``categories`` to string and integer fields: the list of values, each a bare
  value or an object ``{"value": ..., "label": ...}``.
* ``missingValues``: the strings that stand for a missing cell, at the top of the schema
  (``[""]`` when absent) and, in version 2, per field (which then replaces the top-level
  list). Each entry is a string or, in version 2, ``{"value": ..., "label": ...}``. A missing
  cell is missing before any type or constraint applies, so a value listed both in
  ``missingValues`` and in ``enum`` is missing.
* A boolean field's text forms are ``trueValues`` (default ``"true"``, ``"True"``,
  ``"TRUE"``, ``"1"``) and ``falseValues`` (default ``"false"``, ``"False"``, ``"FALSE"``,
  ``"0"``).

Why a hand-written reader: the maintained one, the ``frictionless`` package, is a 575 kB
wheel with about twenty required dependencies (pydantic, requests, jsonschema, typer, petl,
jinja2, ...), for a job that here needs a few constraint fields of a JSON object. This module
reads that subset, refuses what it does not understand with an error naming the field, and
never looks at a data file: a codebook must come from the documentation, not from the rows.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Mapping

from ._schema import Categorical, Numeric

_NUMBER_TYPES = ("number", "integer", "year")
_OTHER_TYPES = ("string", "boolean", "any")
_NOT_TABULAR = (
    "date",
    "time",
    "datetime",
    "yearmonth",
    "duration",
    "object",
    "array",
    "list",
    "geopoint",
    "geojson",
)
_DEFAULT_MISSING = ("",)
_DEFAULT_TRUE = ("true", "True", "TRUE", "1")
_DEFAULT_FALSE = ("false", "False", "FALSE", "0")


def codebook_from_table_schema(schema, *, exclude=()):
    """The codebook of a Frictionless Table Schema, for :func:`schema_transformer`.

    A data dictionary in the Table Schema format (JSON) lists each column with its type and
    constraints; this turns it into the ``{column: numeric(...) or categorical([...])}`` dict
    that :func:`~skdpgd.preprocessing.schema_transformer` and
    :func:`~skdpgd.preprocessing.out_of_domain_counts` take. It reads the schema only, never
    a row: every bound and level comes from the documentation, so the codebook is public.
    Spends no budget.

    Parameters
    ----------
    schema : dict or path
        The Table Schema as a dict (e.g. ``json.load``-ed, or a Data Package resource's
        ``"schema"``), or the path of its JSON file.
    exclude : iterable of str, default=()
        Fields to leave out of the codebook: the target column, identifiers, free text,
        dates. Each must be a field of the schema (a misspelt name is an error).

    Returns
    -------
    dict
        ``{name: Numeric or Categorical}`` in the schema's field order:

        * ``number``, ``integer`` and ``year`` fields with ``constraints.enum`` (or
          ``categories``): :func:`categorical` of those numbers (codes such as 1-5);
        * ``number``, ``integer`` and ``year`` fields with a ``minimum`` (or
          ``exclusiveMinimum``) and a ``maximum`` (or ``exclusiveMaximum``):
          :func:`numeric` over that range, an exclusive bound taken as the range's end (the
          range still holds every value); the ``missingValues`` that read as numbers
          (``"-99"``) become its missing codes, so a ``-99`` cell is missing, not clipped;
        * ``string`` fields with ``enum`` (or ``categories``): :func:`categorical` of those
          strings, in the schema's order;
        * ``boolean`` fields: :func:`categorical` of ``[False, True]`` (or of the ``enum``,
          text forms read through ``trueValues``/``falseValues``); the column should hold
          booleans (or 0/1), e.g. read with pandas' ``true_values``/``false_values``;
        * ``any`` fields with an ``enum`` of all strings or all numbers: its levels.

        A value listed in ``missingValues`` is dropped from the levels (it means missing).

    Raises
    ------
    ValueError
        A field that gives neither a range nor a list of values (a number without both
        bounds, a string without ``enum``), a date, time, object, array or geographic field,
        or anything this reader does not understand, names the field and what to add to the
        schema (or to ``exclude``). Bounds are never taken from the data: reading them from
        the rows would leak them.

    Notes
    -----
    A level that differs from the data by a letter (``"Male"`` in the schema, ``"male"`` in
    the rows) makes the column's cells missing without an error; so does a range in other
    units than the data. Check the fit of codebook and rows with
    :func:`~skdpgd.preprocessing.out_of_domain_counts`, an accounted (small) release of the
    number of cells outside the codebook per column.

    Examples
    --------
    >>> from skdpgd.preprocessing import codebook_from_table_schema
    >>> table_schema = {
    ...     "fields": [
    ...         {"name": "age", "type": "integer",
    ...          "constraints": {"minimum": 17, "maximum": 90}},
    ...         {"name": "sex", "type": "string",
    ...          "constraints": {"enum": ["Female", "Male"]}},
    ...         {"name": "smoker", "type": "boolean"},
    ...     ],
    ...     "missingValues": ["", "-99"],
    ... }
    >>> for name, entry in codebook_from_table_schema(table_schema).items():
    ...     print(name, entry)
    age Numeric(lo=17.0, hi=90.0, missing=(-99.0,))
    sex Categorical(levels=('Female', 'Male'))
    smoker Categorical(levels=(False, True))
    """
    schema, where = _load(schema)
    fields = schema.get("fields")
    if not isinstance(fields, list) or not fields:
        hint = (
            " It looks like a Data Package: pass one resource's schema, "
            "package['resources'][i]['schema']."
            if "resources" in schema
            else ""
        )
        raise ValueError(f"table schema{where}: needs a non-empty list 'fields'.{hint}")
    top_missing = _missing_strings(
        schema.get("missingValues", list(_DEFAULT_MISSING)), "the schema"
    )
    names = []
    for i, field in enumerate(fields):
        if not isinstance(field, Mapping):
            raise ValueError(f"table schema{where}: field {i} is not an object: {field!r}.")
        name = field.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"table schema{where}: field {i} has no 'name' (a non-empty string).")
        if name in names:
            raise ValueError(f"table schema{where}: field {name!r} is listed twice.")
        names.append(name)
    exclude = [exclude] if isinstance(exclude, str) else list(exclude)
    unknown = [e for e in exclude if e not in names]
    if unknown:
        raise ValueError(
            f"table schema{where}: exclude names {unknown!r}, which are not fields of the "
            f"schema (its fields: {names!r})."
        )
    codebook = {}
    for field in fields:
        if field["name"] in exclude:
            continue
        codebook[field["name"]] = _entry(field, top_missing, where)
    if not codebook:
        raise ValueError(f"table schema{where}: every field is excluded; nothing is left.")
    return codebook


def _load(schema):
    """``(schema dict, ' (path)' or '')``: a dict as it is, a path read as JSON."""
    if isinstance(schema, (str, os.PathLike)):
        path = os.fspath(schema)
        with open(path, encoding="utf-8") as f:
            try:
                loaded = json.load(f)
            except json.JSONDecodeError as exc:
                raise ValueError(f"table schema ({path}): not valid JSON: {exc}") from exc
        where = f" ({path})"
        schema = loaded
    else:
        where = ""
    if not isinstance(schema, Mapping):
        raise ValueError(
            f"table schema{where}: expected a JSON object (a dict) with 'fields', got "
            f"{type(schema).__name__}."
        )
    return schema, where


def _missing_strings(values, owner):
    """The strings of a ``missingValues`` list (bare strings or ``{"value": ...}``)."""
    if not isinstance(values, list):
        raise ValueError(f"table schema: the missingValues of {owner} must be a list.")
    out = []
    for v in values:
        if isinstance(v, Mapping) and "value" in v:
            v = v["value"]
        if not isinstance(v, str):
            raise ValueError(
                f"table schema: the missingValues of {owner} must be strings, got {v!r}."
            )
        out.append(v)
    return tuple(out)


def _as_number(value, name, what):
    """A constraint value of a number field as an int or a float: a JSON number, or text
    that reads as one."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        raise ValueError(f"table schema: field {name!r}: {what} must be a number, got {value!r}.")
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            try:
                value = float(value)
            except ValueError:
                raise ValueError(
                    f"table schema: field {name!r}: {what} must be a number, got {value!r}."
                ) from None
    if not math.isfinite(float(value)):
        raise ValueError(f"table schema: field {name!r}: {what} must be finite, got {value!r}.")
    return value


def _number_or_none(text):
    """A missing-value string that reads as a finite number, as a float; else None."""
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _listed_values(field, constraints):
    """The field's list of values (``constraints.enum``, else ``categories``) or None."""
    if "enum" in constraints:
        values = constraints["enum"]
        what = "constraints.enum"
    elif "categories" in field:
        values = field["categories"]
        what = "categories"
        if isinstance(values, list):
            values = [v["value"] if isinstance(v, Mapping) and "value" in v else v for v in values]
    else:
        return None, None
    if not isinstance(values, list) or not values:
        raise ValueError(
            f"table schema: field {field['name']!r}: {what} must be a non-empty list, got "
            f"{values!r}."
        )
    return values, what


def _entry(field, top_missing, where):
    """The codebook entry of one field."""
    name = field["name"]
    ftype = field.get("type", "string")
    constraints = field.get("constraints", {})
    if not isinstance(constraints, Mapping):
        raise ValueError(f"table schema{where}: field {name!r}: constraints must be an object.")
    missing = (
        _missing_strings(field["missingValues"], f"field {name!r}")
        if "missingValues" in field
        else top_missing
    )
    values, what = _listed_values(field, constraints)
    skip = f"or leave the field out with exclude=[{name!r}]"

    if ftype in _NUMBER_TYPES:
        codes = sorted({v for v in map(_number_or_none, missing) if v is not None})
        if values is not None:
            numbers_ = [_as_number(v, name, f"a value of {what}") for v in values]
            kept = [v for v in numbers_ if float(v) not in codes]
            return Categorical(tuple(_nonempty(kept, name, what, missing)))
        lo = _bound(constraints, name, "minimum", "exclusiveMinimum", max)
        hi = _bound(constraints, name, "maximum", "exclusiveMaximum", min)
        if lo is None or hi is None:
            lacking = " and ".join(k for k, b in (("minimum", lo), ("maximum", hi)) if b is None)
            raise ValueError(
                f"table schema{where}: field {name!r} ({ftype}) has no constraints.{lacking}"
                f"{' nor constraints.enum' if lo is None and hi is None else ''}. Add the "
                'public range from the data\'s documentation ("constraints": {"minimum": ..., '
                '"maximum": ...}), or its list of codes ("enum": [...]), '
                f"{skip}. A bound is never read from the rows: that would leak them."
            )
        if not float(lo) < float(hi):
            raise ValueError(
                f"table schema{where}: field {name!r} needs minimum < maximum, got {lo!r} and "
                f"{hi!r}."
            )
        return Numeric(float(lo), float(hi), tuple(codes))

    if ftype == "string":
        if values is None:
            raise ValueError(
                f"table schema{where}: field {name!r} (string) has no constraints.enum (nor "
                'categories). Add its documented levels ("constraints": {"enum": [...]}), '
                f"{skip} (identifiers, free text). Levels are never read from the rows: that "
                "would leak them."
            )
        if not all(isinstance(v, str) for v in values):
            raise ValueError(
                f"table schema{where}: field {name!r} is a string field but its {what} holds "
                f"values that are not strings: {values!r}."
            )
        kept = [v for v in values if v not in missing]
        return Categorical(tuple(_nonempty(kept, name, what, missing)))

    if ftype == "boolean":
        if values is None:
            return Categorical((False, True))
        true_values = field.get("trueValues", list(_DEFAULT_TRUE))
        false_values = field.get("falseValues", list(_DEFAULT_FALSE))
        levels = []
        for v in values:
            if isinstance(v, bool):
                levels.append(v)
            elif isinstance(v, str) and v in true_values:
                levels.append(True)
            elif isinstance(v, str) and v in false_values:
                levels.append(False)
            else:
                raise ValueError(
                    f"table schema{where}: field {name!r} is a boolean field but its {what} "
                    f"holds {v!r}, which is neither true nor false (trueValues {true_values!r}, "
                    f"falseValues {false_values!r})."
                )
        return Categorical(tuple(sorted(set(levels))))

    if ftype == "any":
        if values is None:
            raise ValueError(
                f"table schema{where}: field {name!r} (any) has no constraints.enum; give its "
                'type and public range or levels ("type": "number" with "minimum" and '
                f'"maximum", or "enum": [...]), {skip}.'
            )
        kept = [v for v in values if not (isinstance(v, str) and v in missing)]
        return Categorical(tuple(_nonempty(kept, name, what, missing)))

    if ftype in _NOT_TABULAR:
        raise ValueError(
            f"table schema{where}: field {name!r} has type {ftype!r}, which a linear model "
            f"cannot take as it is: {skip}, or map it to a number row by row (e.g. days since a "
            "public date) and declare numeric(lo, hi) for it in the codebook."
        )
    raise ValueError(
        f"table schema{where}: field {name!r} has type {ftype!r}, which is not a Table Schema "
        f"type this reader knows ({', '.join(_NUMBER_TYPES + _OTHER_TYPES + _NOT_TABULAR)})."
    )


def _bound(constraints, name, inclusive, exclusive, tighter):
    """One end of a number field's range from its inclusive and exclusive constraints (the
    tighter of the two when both are given), or None."""
    found = [
        _as_number(constraints[k], name, f"constraints.{k}")
        for k in (inclusive, exclusive)
        if k in constraints
    ]
    return tighter(found, key=float) if found else None


def _nonempty(levels, name, what, missing):
    if not levels:
        raise ValueError(
            f"table schema: field {name!r}: every value of its {what} is also a missing value "
            f"({list(missing)!r}); no level is left."
        )
    return levels

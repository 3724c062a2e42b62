"""The one module that touches scikit-learn's private API, each piece with a fallback.

scikit-learn's declarative parameter validation (``sklearn.utils._param_validation``) and
its ``fit`` decorator (``sklearn.base._fit_context``) are private. Estimators import
``Interval``, ``StrOptions``, ``HasMethods`` and ``fit_context`` from here: with a scikit-learn
that has them, they are scikit-learn's own (errors read like every scikit-learn error); if a
release moves or removes them, the small implementations below take over, so the package
keeps importing and validating. Setting ``SKDPGD_SKLEARN_PRIVATE=0`` forces the fallbacks
(the tests run them that way too).

Everything else skdpgd needs from scikit-learn is public (``validate_data``,
``check_is_fitted``, ``available_if``, the mixins, ``sklearn.utils.Tags`` and ``get_tags``);
the linear-classifier mixin is our own (:class:`skdpgd._core.estimators.LinearClassifierMixin`).
:func:`tags_as` copies a ``Tags`` into our subclass of it (:class:`skdpgd._core.capability.Tags`)
field by field, whatever fields the installed scikit-learn gives it.
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
import os

import numpy as np

__all__ = [
    "HasMethods",
    "Interval",
    "StrOptions",
    "fit_context",
    "tags_as",
    "USING_SKLEARN_PRIVATE",
]


# --- fallbacks -------------------------------------------------------------------------------


class _Interval:
    """``Interval(type, left, right, closed=...)``: a number of ``type`` in the interval."""

    def __init__(self, type, left, right, *, closed):
        self.type, self.left, self.right, self.closed = type, left, right, closed

    def is_satisfied_by(self, val):
        if isinstance(val, bool) or not isinstance(val, self.type) or val != val:  # NaN
            return False
        # a missing bound is an open infinite one (as in scikit-learn): inf is outside
        lo_ok = (
            val > -np.inf
            if self.left is None
            else val >= self.left
            if self.closed in ("left", "both")
            else val > self.left
        )
        hi_ok = (
            val < np.inf
            if self.right is None
            else val <= self.right
            if self.closed in ("right", "both")
            else val < self.right
        )
        return bool(lo_ok and hi_ok)

    def __str__(self):
        lb = "[" if self.closed in ("left", "both") else "("
        rb = "]" if self.closed in ("right", "both") else ")"
        lo = "-inf" if self.left is None else self.left
        hi = "inf" if self.right is None else self.right
        return f"a {self.type.__name__} in the range {lb}{lo}, {hi}{rb}"


class _StrOptions:
    """``StrOptions({...})``: one of the given strings."""

    def __init__(self, options):
        self.options = set(options)

    def is_satisfied_by(self, val):
        return isinstance(val, str) and val in self.options

    def __str__(self):
        return "a str among " + str(sorted(self.options))


class _HasMethods:
    """``HasMethods([...])``: an object with these callable attributes."""

    def __init__(self, methods):
        self.methods = [methods] if isinstance(methods, str) else list(methods)

    def is_satisfied_by(self, val):
        return all(callable(getattr(val, m, None)) for m in self.methods)

    def __str__(self):
        return f"an object implementing {self.methods}"


def _satisfied(constraint, val):
    if constraint is None:
        return val is None
    if isinstance(constraint, str):
        if constraint == "boolean":
            return isinstance(val, (bool, np.bool_))
        if constraint == "verbose":
            return isinstance(val, (numbers.Integral, bool, np.bool_))
        if constraint == "random_state":
            return val is None or isinstance(val, (numbers.Integral, np.random.RandomState))
        if constraint == "array-like":
            return hasattr(val, "__len__") or hasattr(val, "shape") or hasattr(val, "__array__")
        raise ValueError(f"unknown constraint {constraint!r}")
    if isinstance(constraint, type):
        return isinstance(val, constraint)
    return constraint.is_satisfied_by(val)


def _validate_params(estimator):
    params = estimator.get_params(deep=False)
    for name, constraints in type(estimator)._parameter_constraints.items():
        if name not in params:
            continue
        val = params[name]
        if not any(_satisfied(c, val) for c in constraints):
            allowed = ", ".join("None" if c is None else str(c) for c in constraints)
            raise ValueError(
                f"The {name!r} parameter of {type(estimator).__name__} must be {allowed}. "
                f"Got {val!r} instead."
            )


def _fallback_fit_context(*, prefer_skip_nested_validation):
    """Validate the parameters against ``_parameter_constraints``, then fit."""

    def decorator(fit_method):
        @functools.wraps(fit_method)
        def wrapper(estimator, *args, **kwargs):
            _validate_params(estimator)
            return fit_method(estimator, *args, **kwargs)

        return wrapper

    return decorator


# --- selection -------------------------------------------------------------------------------

USING_SKLEARN_PRIVATE = False
if os.environ.get("SKDPGD_SKLEARN_PRIVATE", "1") != "0":
    try:
        from sklearn.base import _fit_context as fit_context
        from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

        USING_SKLEARN_PRIVATE = True
    except ImportError:  # pragma: no cover - depends on the installed scikit-learn
        pass
if not USING_SKLEARN_PRIVATE:
    Interval, StrOptions, HasMethods = _Interval, _StrOptions, _HasMethods
    fit_context = _fallback_fit_context


# --- estimator tags --------------------------------------------------------------------------


def tags_as(tags, tags_class, **extra):
    """``tags`` (a ``sklearn.utils.Tags``) as an instance of ``tags_class``, a dataclass
    subclass of it, with the extra fields ``extra``: every field ``tags`` has is carried over
    (the same objects: the nested tags are not copied), so a field a newer scikit-learn adds
    keeps its value."""
    values = {f.name: getattr(tags, f.name) for f in dataclasses.fields(tags)}
    init = {f.name for f in dataclasses.fields(tags_class) if f.init}
    out = tags_class(**{k: v for k, v in {**values, **extra}.items() if k in init})
    for name, value in values.items():
        if name not in init:  # a field set after construction (none in 1.6 to 1.9)
            object.__setattr__(out, name, value)
    return out

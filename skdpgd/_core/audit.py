"""The leak audit of private fits: which steps may see the private rows, read from
parameters and the capabilities the steps' tags declare only (never a row).

:func:`skdpgd.pipeline.audit_estimator`, :meth:`skdpgd.pipeline.PrivatePipeline.audit`, the
private search and the warning for a DP estimator fitted inside a plain scikit-learn
``Pipeline`` (:mod:`skdpgd._core.selection_guard`) all use these rules. A step's capability is
read from its scikit-learn tags (``get_tags(step).privacy``, see :mod:`skdpgd._core.capability`);
steps whose tags carry none are unknown, except the few scikit-learn classes recognised by
exact type. The module imports nothing of the package but :mod:`skdpgd._core.capability` (and the
compat module it uses) and :mod:`skdpgd.exceptions`, so every room may read it.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.pipeline import Pipeline

from .capability import (
    ATTRIBUTE,
    DP_TRANSFORMER,
    PUBLIC_TRANSFORMER,
    declared_privacy,
    is_dp_estimator,
    privacy_capability,
    reads_if_none,
    undeclared_base,
)

# transformer class name -> why it leaks, and the private alternative
_LEAKS = {
    "StandardScaler": "DPStandardScaler(epsilon, bounds) (accounted) or BoundedScaler(bounds) "
    "(public ranges, free)",
    "MinMaxScaler": "BoundedScaler(bounds) with public ranges",
    "MaxAbsScaler": "BoundedScaler(bounds) with public ranges",
    "RobustScaler": "BoundedScaler(bounds) with public ranges, or DPStandardScaler",
    "QuantileTransformer": "BoundedScaler(bounds) with public ranges",
    "PowerTransformer": "a FunctionTransformer with a fixed (public) function, then BoundedScaler",
    "PCA": "no private PCA in skdpgd yet: a FunctionTransformer with a projection learnt on "
    "public data",
    "TruncatedSVD": "a FunctionTransformer with a projection learnt on public data",
    "KernelPCA": "a FunctionTransformer with a map learnt on public data",
    "SimpleImputer": "SimpleImputer(strategy='constant', fill_value=<public>) or "
    "schema_transformer (missing values to a public constant)",
    "KNNImputer": "SimpleImputer(strategy='constant') or schema_transformer",
    "IterativeImputer": "SimpleImputer(strategy='constant') or schema_transformer",
    "OneHotEncoder": "OneHotEncoder(categories=<public levels>, handle_unknown='ignore') or "
    "schema_transformer",
    "OrdinalEncoder": "OneHotEncoder(categories=<public levels>, handle_unknown='ignore')",
    "TargetEncoder": "OneHotEncoder(categories=<public levels>, handle_unknown='ignore') (a "
    "target encoding publishes per-level target means)",
    "KBinsDiscretizer": "a FunctionTransformer with public bin edges (np.digitize), then "
    "OneHotEncoder with public levels",
    "SplineTransformer": "SplineTransformer(knots=<public array>) is not checked yet; use "
    "BoundedScaler",
}


#: the condition under which a FunctionTransformer reads nothing private, which the audit
#: cannot check: said wherever one is suggested
_FUNCTION_CAVEAT = (
    "a FunctionTransformer is private only if its func acts on each row alone, "
    "with fixed public parameters, never a statistic of the private rows "
    "(skdpgd cannot check it)"
)


def _leak(path, est, why=None, fix=None):
    name = type(est).__name__
    alt = _LEAKS.get(name)
    what = why or (
        f"{name} learns from the private rows without accounting"
        if alt
        else f"{name} is not known to skdpgd, which cannot tell whether it learns from "
        "the private rows"
    )
    fix = (
        fix
        or alt
        or (
            "BoundedScaler, DPStandardScaler, schema_transformer, a stateless "
            "Normalizer or FunctionTransformer"
        )
    )
    if "FunctionTransformer" in fix:
        fix = f"{fix}; {_FUNCTION_CAVEAT}"
    return f"step {path!r} ({name}): {what}. Private alternative: {fix}."


_PUBLIC_COLUMNS = (
    "name the columns (or give their integer positions, or a slice of either), "
    "or use sklearn.compose.make_column_selector(pattern=..., dtype_include=..., "
    "dtype_exclude=...), which reads only the columns' names and dtypes (the "
    "public schema)"
)


def _is_column_label(value):
    """A column name or an integer position (a bool is neither: it is a mask entry)."""
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, (str, numbers.Integral))


def _column_spec_problem(columns):
    """Why a ``ColumnTransformer`` column specification may depend on the private values
    (None when it is made of public names, positions or dtypes only). Reads the
    specification, never the data.

    Accepted: a column name or integer position, a list, tuple, array or pandas Index of
    them, a slice of them, and ``make_column_selector`` itself (recognised by its exact type:
    it reads names and dtypes). Refused: any other callable (it is called on the private rows,
    and the columns it picks are published in ``transformers_``) and a boolean mask (the
    usual result of a test on the values, such as ``X.mean() > 0``).
    """
    from sklearn.compose import make_column_selector

    if type(columns) is make_column_selector:
        return None
    if callable(columns):
        name = getattr(columns, "__name__", type(columns).__name__)
        return (
            f"chooses its columns with a callable ({name}), which is called on the private "
            "rows and may read their values; the columns it picks are published in "
            "transformers_"
        )
    if isinstance(columns, slice):
        if all(v is None or _is_column_label(v) for v in (columns.start, columns.stop)) and (
            columns.step is None or _is_column_label(columns.step)
        ):
            return None
        return (
            f"chooses its columns with a slice of something other than names or positions "
            f"({columns!r})"
        )
    if _is_column_label(columns):
        return None
    if isinstance(columns, (bool, np.bool_)) or getattr(columns, "dtype", None) == np.bool_:
        values = [True]
    else:
        try:
            values = list(columns)  # a list, tuple, array, pandas Index or Series
        except TypeError:
            return f"chooses its columns with an object skdpgd does not know ({columns!r})"
    if any(isinstance(v, (bool, np.bool_)) for v in values):
        return (
            "chooses its columns with a boolean mask, the usual result of a test on the "
            "values (such as X.mean() > 0), which skdpgd cannot tell from a public choice"
        )
    if all(_is_column_label(v) for v in values):
        return None
    return "chooses its columns with values that are neither column names nor positions"


def _is_dp_estimator(est):
    """Whether ``est``'s tags declare it a DP estimator (see :mod:`skdpgd._core.capability`): a
    subclass of one, which may override ``fit``, is not one unless it declares so itself."""
    return is_dp_estimator(est)


def _trusted_sklearn_types():
    """The scikit-learn classes the audit accepts (under conditions on their parameters),
    recognised by exact type: a subclass may override ``fit`` or ``transform``."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import FeatureUnion
    from sklearn.preprocessing import Binarizer, FunctionTransformer, Normalizer, OneHotEncoder

    return (
        Normalizer,
        Binarizer,
        FunctionTransformer,
        OneHotEncoder,
        SimpleImputer,
        Pipeline,
        ColumnTransformer,
        FeatureUnion,
    )


def _subclass_note(est):
    """``(why, fix)`` when ``est`` subclasses a class the audit trusts (so it is refused for
    not being that class), else None."""
    if declared_privacy(est) is not None:  # declared in its body, but not in its tags
        name = type(est).__name__
        return (
            f"{name} declares {ATTRIBUTE} in its own body, but its __sklearn_tags__ returns "
            "tags without that capability (the audit reads the tags)",
            f"{name} with a __sklearn_tags__ that returns "
            "skdpgd._core.capability.with_privacy(self, tags) (as the package's bases do), or none "
            "of its own",
        )
    base = undeclared_base(est)
    if base is None:
        base = next((c for c in type(est).__mro__[1:] if c in _trusted_sklearn_types()), None)
        if base is None:
            return None
        fix = f"{base.__name__} itself (the audit trusts it by exact type)"
    else:
        fix = (
            f"{base.__name__} itself; or, if {type(est).__name__} keeps "
            f"{base.__name__}'s promise (see skdpgd._core.capability), declare it in its own "
            f"class body: {ATTRIBUTE} = {base.__name__}.{ATTRIBUTE}"
        )
    why = (
        f"{type(est).__name__} is a subclass of {base.__name__}, which the audit trusts "
        "as that very class, never by inheritance: a subclass may override fit, transform "
        "or what they call, and read the private rows"
    )
    return why, fix


def _audit_transformer(est, path, problems, spenders):
    """Append to ``problems`` why ``est`` (not fitted) would leak; ``spenders`` the paths of
    the DP transformers inside it. Reads only parameters."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion
    from sklearn.preprocessing import Binarizer, FunctionTransformer, Normalizer, OneHotEncoder
    from sklearn.impute import SimpleImputer

    if est is None or (isinstance(est, str) and est in ("passthrough", "drop")):
        return
    role = privacy_capability(est)  # its tags: the class's own declaration, never inherited
    if role == DP_TRANSFORMER:
        spenders.append(path)
        return
    if role == PUBLIC_TRANSFORMER or type(est) in (Normalizer, Binarizer):
        return
    if type(est) is FunctionTransformer:
        if est.inverse_func is not None and est.check_inverse:
            problems.append(
                _leak(
                    path,
                    est,
                    "with check_inverse=True its fit applies func and "
                    "inverse_func to private rows and warns on the result",
                )
            )
        return  # its function must act on each row alone (documented, not checkable)
    if type(est) is OneHotEncoder:
        if isinstance(est.categories, str):
            problems.append(
                _leak(path, est, "categories='auto' reads the level set from the private rows")
            )
        elif est.handle_unknown != "ignore":
            problems.append(
                _leak(
                    path,
                    est,
                    "with handle_unknown other than 'ignore', a fit "
                    "fails (naming the value) when a private row has a level "
                    "outside the public list",
                )
            )
        elif est.min_frequency is not None or est.max_categories is not None:
            problems.append(
                _leak(
                    path,
                    est,
                    "min_frequency/max_categories group levels by their private frequencies",
                )
            )
        return
    if type(est) is SimpleImputer:
        if est.strategy != "constant":
            problems.append(
                _leak(
                    path, est, f"strategy={est.strategy!r} computes a statistic of the private rows"
                )
            )
        elif est.add_indicator:
            problems.append(
                _leak(
                    path,
                    est,
                    "add_indicator=True keeps the columns that had "
                    "missing values in the private rows",
                )
            )
        return
    if type(est) is Pipeline:
        for name, step in est.steps:
            if _is_dp_estimator(step):
                problems.append(
                    f"step {path}__{name}: a DP estimator can only be the final "
                    "step of the private pipeline."
                )
            else:
                _audit_transformer(step, f"{path}__{name}", problems, spenders)
        return
    if type(est) is ColumnTransformer:
        # the column choices first: each part's (every part's, dropped ones too, since the
        # ColumnTransformer resolves them all on the rows it is fitted on)
        for name, _, columns in est.transformers:
            why = _column_spec_problem(columns)
            if why is not None:
                problems.append(_leak(path, est, f"part {name!r} {why}", _PUBLIC_COLUMNS))
        parts = list(est.transformers)
        if not (isinstance(est.remainder, str) and est.remainder == "drop"):
            parts.append(("remainder", est.remainder, None))
        for name, trans, _ in parts:
            _audit_transformer(trans, f"{path}__{name}", problems, spenders)
        if est.sparse_threshold not in (0, 0.0) and _may_be_sparse(est):
            problems.append(
                _leak(
                    path,
                    est,
                    "sparse_threshold > 0 chooses a sparse or dense "
                    "output from the density of the private rows; set "
                    "sparse_threshold=0",
                )
            )
        return
    if type(est) is FeatureUnion:
        for name, trans in est.transformer_list:
            _audit_transformer(trans, f"{path}__{name}", problems, spenders)
        return
    note = _subclass_note(est)
    problems.append(_leak(path, est, *note) if note else _leak(path, est))


def _declares_bound(est, input_declared=False):
    """Whether the (unfitted) step will declare a public row bound once fitted (the
    structural twin of :func:`skdpgd.preprocessing.output_bound`). Only steps whose tags
    carry a capability (declared in their class's own body), and scikit-learn's by exact type,
    declare one: a subclass must not promise a bound its own ``transform`` may not keep."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion
    from sklearn.preprocessing import Binarizer, FunctionTransformer, Normalizer, OneHotEncoder

    if est is None or (isinstance(est, str) and est == "passthrough"):
        return input_declared
    if isinstance(est, str) and est == "drop":
        return True
    if privacy_capability(est) in (PUBLIC_TRANSFORMER, DP_TRANSFORMER):
        return True
    if type(est) in (OneHotEncoder, Binarizer, Normalizer):
        return True
    if type(est) is Pipeline:
        for _, step in est.steps:
            input_declared = _declares_bound(step, input_declared)
        return input_declared
    if type(est) is ColumnTransformer:
        parts = [t for _, t, _ in est.transformers] + [est.remainder]
        return all(_declares_bound(t, False) for t in parts)
    if type(est) is FeatureUnion:
        return all(_declares_bound(t, input_declared) for _, t in est.transformer_list)
    if type(est) is FunctionTransformer and est.func is None:
        return input_declared
    return False


#: why a parameter left None reads the private rows, and its private alternative
_READS_IF_NONE = {
    "classes": (
        "classes=None reads the label set from the private rows",
        "classes=[every possible label]",
    ),
    "y_bound": (
        "y_bound=None reads the largest |y| from the private rows",
        "a public y_bound (and targets mapped into it)",
    ),
}


def _final_step_problems(est, where):
    """Why the final DP estimator ``est`` would read something from the private rows that its
    epsilon does not cover (messages naming it as ``where``): each parameter its tags declare
    it reads when left None (:func:`skdpgd._core.capability.reads_if_none`; ``classes`` and
    ``y_bound`` for a class that declares nothing) and that is None. Reads parameters only."""
    params = est.get_params()
    name = type(est).__name__
    problems = []
    for param in reads_if_none(est):
        if param not in params or params[param] is not None:
            continue
        why, fix = _READS_IF_NONE.get(
            param, (f"{param}=None reads it from the private rows", f"a public {param}")
        )
        problems.append(f"{where} ({name}): {why}. Private alternative: {fix}.")
    return problems


def _not_dp_estimator(where, est, ends="a private pipeline ends"):
    note = _subclass_note(est)
    return (
        f"{where} ({type(est).__name__}) is not a skdpgd DP estimator; {ends} with one "
        "(an estimator whose scikit-learn tags declare the 'DP estimator' or 'DP minibatch "
        "estimator' capability: every estimator of skdpgd.__all__, such as "
        "DPLogisticRegression or DPRidge; see skdpgd._core.capability)"
        + (f" ({note[0]}). Use {note[1]}." if note else ".")
    )


def _audit_steps(steps, final_must_be_dp=True):
    """``(problems, spenders)`` of a list of ``(name, step)`` meant to end in a DP estimator:
    every step but the last audited as a transformer (:func:`_audit_transformer`), the last
    checked for parameters that read the rows (those its tags declare, e.g. ``classes``,
    ``y_bound``). ``spenders``: the
    paths of the DP transformers, then the final step's name. A final step that is no DP
    estimator raises a ``ValueError`` (or, with ``final_must_be_dp=False``, is one more
    problem). Reads parameters only."""
    if not isinstance(steps, (list, tuple)) or not steps:
        raise ValueError("a private pipeline needs a non-empty list of (name, step).")
    problems, spenders = [], []
    *transformers, (last_name, last) = steps
    for name, est in transformers:
        if _is_dp_estimator(est):
            problems.append(f"step {name!r}: a DP estimator can only be the final step.")
        else:
            _audit_transformer(est, name, problems, spenders)
    if not _is_dp_estimator(last):
        message = _not_dp_estimator(f"the final step {last_name!r}", last)
        if final_must_be_dp:
            raise ValueError(message)
        problems.append(message)
        return problems, spenders
    spenders.append(last_name)
    problems.extend(_final_step_problems(last, f"step {last_name!r}"))
    return problems, spenders


def _bound_problem(steps):
    """Why the final step of a private pipeline would read its row bound from the private
    rows (it has ``data_norm=None`` and the steps before it declare no public bound to pass
    on), or None."""
    final_name, final = steps[-1]
    params = final.get_params()
    if "data_norm" not in params or params["data_norm"] is not None:
        return None  # set, or no row bound at all (DPMLPClassifier clips whole gradients)
    declared = False
    for _, est in steps[:-1]:
        declared = _declares_bound(est, declared)
    if declared:
        return None
    return (
        f"the final step {final_name!r} has data_norm=None and the steps before it "
        "declare no public row bound (end them with BoundedScaler, schema_transformer, "
        "a Normalizer or DPStandardScaler), so the bound would be read from the private "
        "rows; pass data_norm."
    )


def _may_be_sparse(ct):
    from sklearn.preprocessing import OneHotEncoder

    def sparse(t):
        if isinstance(t, Pipeline):
            return any(sparse(s) for _, s in t.steps)
        return isinstance(t, OneHotEncoder) and t.sparse_output or hasattr(t, "tocsr")

    return any(sparse(t) for _, t, _ in ct.transformers) or not isinstance(ct.remainder, str)

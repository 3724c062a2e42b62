"""A warning for DP estimators fitted repeatedly inside scikit-learn's model-selection helpers.

``GridSearchCV``, ``RandomizedSearchCV``, ``cross_val_score``, ``cross_validate``,
``validation_curve``, ``learning_curve``, ``permutation_test_score`` and ``cross_val_predict``
fit a clone of the estimator once per fold (and candidate) on overlapping rows of the same
data; ``sklearn.multiclass`` (``OneVsRestClassifier``, ...), ``sklearn.multioutput`` and
``CalibratedClassifierCV`` fit one per class, output or fold on the same rows. Each private fit
reports the epsilon of that fit alone; the fits compose, and a search then *chooses* among them
by scoring held-out private rows in the clear, which no epsilon covers.

Detection, without scikit-learn's private API: ``clone`` copies parameters only, so a fitted
clone cannot tell that it is one; a registry of data fingerprints would have to hold something
derived from the private rows. Instead :func:`warn_if_model_selection` walks the Python call
stack (``inspect.currentframe``, public Python) and looks for frames whose module belongs to
the public package ``sklearn.model_selection``: it reads module and function names only, and
costs a few microseconds per fit. It sees the helpers in worker processes
too (the helper's per-fold function runs there), but a warning raised in a worker process of
``n_jobs > 1`` stays in that process (joblib does not send warnings back).

When it warns (a finite ``epsilon``):

* inside a search (a frame of a ``...SearchCV`` class): always, because even a shared
  :class:`~skdpgd.PrivacyBudget`, which accounts the fits, does not account the selection;
* inside the other helpers and those meta-estimators: when the estimator has no ``budget``
  (with one, every fit is charged and the composition is accounted).

The same walk finds a plain scikit-learn ``Pipeline`` fitting a DP estimator as its final
step (:func:`warn_if_leaky_pipeline`): there it reads one local variable, the ``self`` of
``sklearn.pipeline``'s frame (the pipeline object), and audits its steps' parameters by the
rules of :mod:`skdpgd._core.audit`; no data. A private pipeline is checked once, at its own
``fit``: its steps, whose ``budget`` is the pipeline's internal ledger, are not.

It never warns in a plain ``fit`` or inside :class:`~skdpgd.model_selection.PrivateRandomSearchCV`,
whose trials run under :func:`private_search_trials`. The helpers always fit more than once,
except with a single split (e.g. ``ShuffleSplit(n_splits=1)``), where the warning is given
anyway: the stack shows which helper runs, not how many fits it will make.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import threading
import warnings

from .._config import resolve_budget
from ..exceptions import PrivacyLeakWarning

__all__ = ["private_search_trials", "warn_if_leaky_pipeline", "warn_if_model_selection"]

_STATE = threading.local()
_PACKAGE = "sklearn.model_selection"
# Meta-estimators that fit one clone per class, output or fold on the same rows.
_REPEATERS = ("sklearn.multiclass", "sklearn.multioutput", "sklearn.calibration")
_MAX_FRAMES = 200  # a fit is never that deep below a helper; bounds the walk


@contextlib.contextmanager
def private_search_trials():
    """Fits in this block (this thread) are trials of an accounted private search: no warning."""
    depth = getattr(_STATE, "depth", 0)
    _STATE.depth = depth + 1
    try:
        yield
    finally:
        _STATE.depth = depth


def _model_selection_caller():
    """``(helper, in_search)``: the outermost ``sklearn.model_selection`` function on the call
    stack (its qualified name) and whether a search (``...SearchCV``) is running; (None, False)
    when the fit is not called from there."""
    frame = inspect.currentframe()
    helper, in_search = None, False
    try:
        for _ in range(_MAX_FRAMES):
            if frame is None:
                break
            module = frame.f_globals.get("__name__", "")
            if any(module == p or module.startswith(p + ".") for p in (_PACKAGE,) + _REPEATERS):
                code = frame.f_code
                name = getattr(code, "co_qualname", code.co_name)  # co_qualname: Python 3.11+
                helper = name
                if "SearchCV" in name or "search" in module.rsplit(".", 1)[-1]:
                    in_search = True
            frame = frame.f_back
    finally:
        del frame  # frames reference each other: break the cycle at once
    return helper, in_search


def _calling_pipeline(est):
    """The scikit-learn ``Pipeline`` (exact type) whose ``fit`` is fitting ``est`` as its final
    step, or None: the ``self`` of a frame of ``sklearn.pipeline`` up the call stack (the
    pipeline object, whose parameters the audit reads; no data)."""
    from sklearn.pipeline import Pipeline

    frame = inspect.currentframe()
    try:
        for _ in range(_MAX_FRAMES):
            if frame is None:
                break
            if frame.f_globals.get("__name__", "") == "sklearn.pipeline":
                owner = frame.f_locals.get("self")
                if (
                    type(owner) is Pipeline
                    and isinstance(owner.steps, list)
                    and owner.steps
                    and owner.steps[-1][1] is est
                ):
                    return owner
            frame = frame.f_back
    finally:
        del frame
    return None


def warn_if_leaky_pipeline(est):
    """Emit a :class:`~skdpgd.PrivacyLeakWarning` when ``est`` (a DP estimator about to fit)
    is the final step of a plain scikit-learn ``Pipeline`` whose earlier steps learn from the
    rows without accounting (anything :func:`skdpgd.pipeline.make_private_pipeline` refuses,
    by the same rules: :mod:`skdpgd._core.audit`). Public-bound and DP steps give no warning."""
    pipe = _calling_pipeline(est)
    if pipe is None:
        return
    from .audit import _audit_transformer

    problems, spenders = [], []
    for name, step in pipe.steps[:-1]:
        _audit_transformer(step, name, problems, spenders)
    if problems:
        warnings.warn(
            f"{type(est).__name__} is the final step of a scikit-learn Pipeline whose earlier "
            "steps learn from the private rows without accounting, and publish what they "
            "learnt in the fitted pipeline: " + " ".join(problems) + " epsilon_ covers the "
            "model's fit only. Use skdpgd.pipeline.make_private_pipeline with the private "
            "alternatives (it refuses such steps before reading a row).",
            PrivacyLeakWarning,
            stacklevel=4,
        )


def warn_if_model_selection(est):
    """Emit a :class:`~skdpgd.PrivacyLeakWarning` when ``est`` (a DP estimator about to fit) is
    fitted inside scikit-learn's model-selection helpers (see the module docstring)."""
    if getattr(_STATE, "depth", 0):
        return
    if getattr(getattr(est, "budget", None), "inside_private_pipeline", False):
        return  # a step of a private pipeline: the pipeline's own fit was checked
    try:
        finite = math.isfinite(float(getattr(est, "epsilon", math.inf)))
    except (TypeError, ValueError):
        return
    if not finite:
        return
    helper, in_search = _model_selection_caller()
    if helper is None:
        return
    name = type(est).__name__
    private_pipeline = hasattr(est, "steps")  # a PrivatePipeline: the budget is its own
    if in_search:
        warnings.warn(
            f"{name} is being fitted inside a scikit-learn hyperparameter search (GridSearchCV, "
            "RandomizedSearchCV, ...): one private fit per "
            "candidate and fold on overlapping rows of the same data, and a choice made by "
            "scoring held-out private rows in the clear. No epsilon covers that choice (a "
            "shared PrivacyBudget accounts the fits, not the selection), and each fit's "
            "epsilon_ covers that fit alone. Use skdpgd.model_selection.PrivateRandomSearchCV, "
            "whose epsilon covers every trial and the selection.",
            PrivacyLeakWarning,
            stacklevel=3,
        )
    elif resolve_budget(getattr(est, "budget", None)) is None:  # a default budget counts
        warnings.warn(
            f"{name} is being fitted inside scikit-learn's {helper}, which fits it more than "
            "once (per fold, class or output) on the same or overlapping rows, without a "
            "shared PrivacyBudget: each fit's "
            "epsilon_ covers that fit alone, and the fits compose to a larger epsilon that is "
            "reported nowhere. Pass budget=PrivacyBudget(...) to "
            + ("the pipeline " if private_pipeline else "")
            + "to account for every fit; to "
            "choose hyperparameters, use skdpgd.model_selection.PrivateRandomSearchCV, whose "
            "epsilon covers every trial and the selection.",
            PrivacyLeakWarning,
            stacklevel=3,
        )

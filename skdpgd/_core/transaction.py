"""A fit that fails leaves nothing behind; every private fit enters here first."""

from __future__ import annotations

import contextlib
import threading
import warnings

from .selection_guard import warn_if_leaky_pipeline, warn_if_model_selection

__all__ = ["collected_warnings", "defer_warning", "fit_transaction"]

_STATE = threading.local()


def _stack():
    stack = getattr(_STATE, "pending", None)
    if stack is None:
        stack = _STATE.pending = []
    return stack


def defer_warning(message, category):
    """Warn about a released value once the enclosing private fit has succeeded.

    A warning computed from a release (post-processing) is still something the fit tells; a
    refused or failed fit tells nothing, so it is held until the outermost
    :func:`fit_transaction` ends without an error (or handed to :func:`collected_warnings`).
    Outside any fit it is emitted at once."""
    stack = _stack()
    if not stack:
        warnings.warn(message, category, stacklevel=2)
        return
    stack[-1].append((str(message), category))


@contextlib.contextmanager
def collected_warnings():
    """Hold the deferred warnings of the fits in the block instead of emitting them: yields
    the list they land in (``(message, category)``), for a caller that decides which fit's
    warnings are released (the private search emits its winner's only: a losing trial is
    secret, and so is their number)."""
    stack = _stack()
    notes = []
    stack.append(notes)
    try:
        yield notes
    finally:
        stack.pop()


@contextlib.contextmanager
def fit_transaction(est):
    """Restore the attributes of ``est`` if the block raises: a refused or failed fit sets nothing.

    Every private fit enters here first, so it is also where a fit inside scikit-learn's
    model-selection helpers is warned about (:mod:`skdpgd._core.selection_guard`). Warnings about
    released values (:func:`defer_warning`) are emitted when the outermost fit succeeds,
    dropped when it fails."""
    warn_if_model_selection(est)
    warn_if_leaky_pipeline(est)
    saved = dict(vars(est))
    stack = _stack()
    notes = []
    stack.append(notes)
    try:
        yield
    except BaseException:
        stack.pop()
        for name in set(vars(est)) - set(saved):
            delattr(est, name)
        for name, value in saved.items():
            setattr(est, name, value)
        raise
    stack.pop()
    if stack:  # an enclosing fit (or collector) decides
        stack[-1].extend(notes)
        return
    for message, category in notes:
        warnings.warn(message, category, stacklevel=5)  # the caller of fit

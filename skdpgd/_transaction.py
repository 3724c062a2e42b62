"""A fit that fails leaves nothing behind; every private fit enters here first."""

from __future__ import annotations

import contextlib

from ._selection_guard import warn_if_leaky_pipeline, warn_if_model_selection


@contextlib.contextmanager
def fit_transaction(est):
    """Restore ``est.__dict__`` if the block raises: a refused or failed fit sets nothing.

    Every private fit enters here first, so it is also where a fit inside scikit-learn's
    model-selection helpers is warned about (:mod:`skdpgd._selection_guard`)."""
    warn_if_model_selection(est)
    warn_if_leaky_pipeline(est)
    saved = dict(est.__dict__)
    try:
        yield
    except BaseException:
        est.__dict__.clear()
        est.__dict__.update(saved)
        raise

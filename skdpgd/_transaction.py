"""A fit that fails leaves nothing behind; every private fit enters here first."""

from __future__ import annotations

import contextlib

from ._selection_guard import warn_if_leaky_pipeline, warn_if_model_selection


@contextlib.contextmanager
def fit_transaction(est):
    """Restore the attributes of ``est`` if the block raises: a refused or failed fit sets nothing.

    Every private fit enters here first, so it is also where a fit inside scikit-learn's
    model-selection helpers is warned about (:mod:`skdpgd._selection_guard`)."""
    warn_if_model_selection(est)
    warn_if_leaky_pipeline(est)
    saved = dict(vars(est))
    try:
        yield
    except BaseException:
        for name in set(vars(est)) - set(saved):
            delattr(est, name)
        for name, value in saved.items():
            setattr(est, name, value)
        raise

"""The one place numba's compiler is configured for skdpgd's kernels.

Kernel modules write ``from ._jit import njit`` and decorate with ``@njit`` (optionally with
numba options such as ``nogil=True`` or ``fastmath=...``); caching of compiled code is decided
here, once, for every kernel.
"""

from __future__ import annotations

import numba


def njit(func=None, **options):
    """``numba.njit`` with skdpgd's caching policy (``cache=True``)."""
    options.setdefault("cache", True)
    if func is None:
        return numba.njit(**options)
    return numba.njit(**options)(func)

"""The one place numba's compiler is configured for skdpgd's kernels.

Kernel modules write ``from ._jit import njit`` and decorate with ``@njit`` (optionally with
numba options such as ``nogil=True`` or ``fastmath=...``). Compiled kernels are cached on disk
so that a fresh process does not compile again; where the cache goes is decided here:

1. numba's own choice (``NUMBA_CACHE_DIR`` if set, else the package's ``__pycache__``, else
   numba's per-user directory) when one of them is writable;
2. otherwise a per-user directory of skdpgd's: ``$XDG_CACHE_HOME/skdpgd/numba``,
   ``~/.cache/skdpgd/numba``, or ``<temp dir>/skdpgd-numba-<uid>``, the first that can be
   written (it becomes ``numba.config.CACHE_DIR`` for the process, unless the user set one);
3. otherwise no disk cache: the kernels compile in each process.

So a read-only install (a root-owned site-packages used by another user with no writable
home, as in Docker images and shared clusters) imports and fits; it never raises for lack of
a cache. Decorating does not compile: kernels compile on their first call.
"""

from __future__ import annotations

import os
import tempfile

import numba

#: The per-user directory chosen at the first fallback (None: not needed yet; "": none).
_FALLBACK_DIR = None


def _writable_dir(path):
    """True if ``path`` exists or can be made, and a file can be created in it."""
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path):
            pass
        return True
    except OSError:
        return False


def _user_cache_dir():
    """skdpgd's first writable per-user cache directory, or '' when there is none."""
    candidates = []
    if os.environ.get("XDG_CACHE_HOME"):
        candidates.append(os.path.join(os.environ["XDG_CACHE_HOME"], "skdpgd", "numba"))
    home = os.path.expanduser("~")
    if home and home != "~":
        candidates.append(os.path.join(home, ".cache", "skdpgd", "numba"))
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    try:
        candidates.append(os.path.join(tempfile.gettempdir(), f"skdpgd-numba-{uid}"))
    except OSError:  # FileNotFoundError: no usable temporary directory at all
        pass
    for path in candidates:
        if _writable_dir(path):
            return path
    return ""


def _cached(func, options):
    try:
        return numba.njit(cache=True, **options)(func)
    except RuntimeError as exc:  # "cannot cache function ...: no locator available ..."
        if "cache" not in str(exc):
            raise
        return None


def njit(func=None, **options):
    """``numba.njit`` with skdpgd's caching policy (see the module docstring)."""
    if func is None:
        return lambda f: njit(f, **options)
    if "cache" in options:  # an explicit choice wins
        return numba.njit(**options)(func)
    global _FALLBACK_DIR
    compiled = _cached(func, options) if _FALLBACK_DIR is None else None
    if compiled is not None:
        return compiled
    if _FALLBACK_DIR is None:
        _FALLBACK_DIR = "" if numba.config.CACHE_DIR else _user_cache_dir()
        if _FALLBACK_DIR:
            numba.config.CACHE_DIR = _FALLBACK_DIR
    if _FALLBACK_DIR:
        compiled = _cached(func, options)
        if compiled is not None:
            return compiled
    return numba.njit(cache=False, **options)(func)

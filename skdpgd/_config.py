"""Package-wide settings: :func:`set_config`, :func:`get_config` and :func:`config_context`.

Settings are thread-local, like scikit-learn's: each thread starts from the process-wide
values (changed by :func:`set_config` in the main thread before other threads start) and
:func:`config_context` changes them for the code inside a ``with`` block, restoring them on
exit, also when the block raises.

``secure_noise`` (default False) makes every fit that *starts* inside the setting draw its
randomness from the operating system's cryptographic source and release every Gaussian
statistic as an exact discrete Gaussian on a lattice (the user guide's "Security model"
page). A fit records the mode it ran in (``noise_`` and its releases), so what it reports
does not depend on the setting in force when it is read later.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

__all__ = ["get_config", "set_config", "config_context"]

_GLOBAL = {"secure_noise": False}
_LOCAL = threading.local()


def _settings():
    if not hasattr(_LOCAL, "settings"):
        _LOCAL.settings = dict(_GLOBAL)
    return _LOCAL.settings


def get_config():
    """The current settings of this thread, as a new dict.

    Returns
    -------
    dict
        ``{'secure_noise': bool}``.
    """
    return dict(_settings())


def secure_noise():
    """Whether secure mode is on in this thread (the fast read the accounting makes on every
    release it describes)."""
    return _settings()["secure_noise"]


def _check(name, value):
    if name == "secure_noise" and not isinstance(value, bool):
        raise TypeError(f"secure_noise must be True or False, got {value!r}.")


def set_config(secure_noise=None):
    """Change the settings of this thread (in the main thread before other threads start:
    also the default of threads started later).

    Parameters
    ----------
    secure_noise : bool, default=None
        True: fits draw their randomness from the operating system's cryptographic source and
        release exact discrete Gaussian noise on a lattice; an integer ``random_state`` is then
        refused (secure noise cannot be reproduced). None leaves the setting unchanged.

    Examples
    --------
    >>> import skdpgd
    >>> skdpgd.set_config(secure_noise=True)
    >>> skdpgd.get_config()["secure_noise"]
    True
    >>> skdpgd.set_config(secure_noise=False)
    """
    settings = _settings()
    if secure_noise is not None:
        _check("secure_noise", secure_noise)
        settings["secure_noise"] = secure_noise
        if threading.current_thread() is threading.main_thread():
            _GLOBAL["secure_noise"] = secure_noise


@contextmanager
def config_context(*, secure_noise=None):
    """Settings for the code inside a ``with`` block (this thread only), restored on exit.

    Parameters
    ----------
    secure_noise : bool, default=None
        See :func:`set_config`. None keeps the current setting.

    Examples
    --------
    >>> import numpy as np
    >>> import skdpgd
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)) / 4
    >>> y = (X[:, 0] > 0).astype(int)
    >>> with skdpgd.config_context(secure_noise=True):
    ...     clf = skdpgd.DPLogisticRegression(epsilon=1.0, data_norm=1.0).fit(X, y)
    >>> clf.noise_
    'discrete'
    """
    settings = _settings()
    old = dict(settings)
    if secure_noise is not None:
        _check("secure_noise", secure_noise)
        settings["secure_noise"] = secure_noise
    try:
        yield
    finally:
        settings.clear()
        settings.update(old)

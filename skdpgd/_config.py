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

``budget`` (default None) is a default :class:`~skdpgd.PrivacyBudget`: every private fit, search,
private pipeline and private metric that *starts* inside the setting with ``budget=None`` is
charged to it (an explicit ``budget=`` wins). It is thread-local too: fits run by worker
threads or processes (``n_jobs > 1``) do not see a :func:`config_context` budget of the thread
that started them. The default budget is never stored on an estimator (its ``budget`` parameter
stays None); :func:`resolve_budget` is the one place it is read.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

__all__ = ["get_config", "set_config", "config_context", "resolve_budget"]

_GLOBAL = {"secure_noise": False, "budget": None}
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
        ``{'secure_noise': bool, 'budget': PrivacyBudget or None}``.
    """
    return dict(_settings())


def secure_noise():
    """Whether secure mode is on in this thread (the fast read the accounting makes on every
    release it describes)."""
    return _settings()["secure_noise"]


def resolve_budget(budget):
    """The budget a private computation charges: ``budget`` when given, else this thread's
    default (:func:`config_context`, :func:`set_config`), else None. The only place the
    default is read."""
    if budget is not None:
        return budget
    return _settings()["budget"]


def _check(name, value):
    if name == "secure_noise" and not isinstance(value, bool):
        raise TypeError(f"secure_noise must be True or False, got {value!r}.")
    if name == "budget" and value is not False and not callable(getattr(value, "charge", None)):
        raise TypeError(
            "budget must be a PrivacyBudget (or False: no default budget), got "
            f"{type(value).__name__}."
        )


def _stored(name, value):
    """``budget=False`` clears the default budget (stored as None)."""
    return None if name == "budget" and value is False else value


def set_config(secure_noise=None, budget=None):
    """Change the settings of this thread (in the main thread before other threads start:
    also the default of threads started later).

    Parameters
    ----------
    secure_noise : bool, default=None
        True: fits draw their randomness from the operating system's cryptographic source and
        release exact discrete Gaussian noise on a lattice; an integer ``random_state`` is then
        refused (secure noise cannot be reproduced). None leaves the setting unchanged.
    budget : PrivacyBudget or False, default=None
        The default budget: every fit, search, private pipeline and private metric started
        afterwards with ``budget=None`` is charged to it (an explicit ``budget=`` wins).
        False removes it; None leaves the setting unchanged.

    Examples
    --------
    >>> import skdpgd
    >>> skdpgd.set_config(secure_noise=True)
    >>> skdpgd.get_config()["secure_noise"]
    True
    >>> skdpgd.set_config(secure_noise=False)
    """
    settings = _settings()
    for name, value in (("secure_noise", secure_noise), ("budget", budget)):
        if value is None:
            continue
        _check(name, value)
        settings[name] = _stored(name, value)
        if threading.current_thread() is threading.main_thread():
            _GLOBAL[name] = _stored(name, value)


@contextmanager
def config_context(*, secure_noise=None, budget=None):
    """Settings for the code inside a ``with`` block (this thread only), restored on exit.

    Parameters
    ----------
    secure_noise : bool, default=None
        See :func:`set_config`. None keeps the current setting.
    budget : PrivacyBudget or False, default=None
        A default budget for the block: every fit, search, private pipeline and private
        metric started inside it with ``budget=None`` is charged to it (a fit that would
        overspend is refused and releases nothing). False: no default budget inside the
        block. None keeps the current setting.

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
    >>> budget = skdpgd.PrivacyBudget(epsilon=2.0, delta=1e-6)
    >>> with skdpgd.config_context(budget=budget):
    ...     a = skdpgd.DPLogisticRegression(epsilon=0.5, data_norm=1.0).fit(X, y)
    ...     b = skdpgd.DPLogisticRegression(epsilon=0.5, data_norm=1.0).fit(X, y)
    >>> len(budget.entries) >= 2 and a.budget is None
    True
    """
    settings = _settings()
    old = dict(settings)
    for name, value in (("secure_noise", secure_noise), ("budget", budget)):
        if value is not None:
            _check(name, value)
    for name, value in (("secure_noise", secure_noise), ("budget", budget)):
        if value is not None:
            settings[name] = _stored(name, value)
    try:
        yield
    finally:
        settings.clear()
        settings.update(old)

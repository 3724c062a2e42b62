"""What a class promises to do with the private rows, declared in its own body.

The leak audit of :mod:`skdpgd.pipeline` (and of :class:`~skdpgd.model_selection.
PrivateRandomSearchCV`) trusts a step only for what its class *declares*, with a class
attribute written in the class's own body::

    class BoundedScaler(...):
        _skdpgd_privacy = PUBLIC_TRANSFORMER

:func:`declared_privacy` reads it from the class's own namespace (``vars(type(est))``), never
through inheritance: a subclass may override ``fit``, ``fit_transform``, ``transform`` or any
helper they call, and read what its parent promised not to read (a subclass of
``BoundedScaler`` whose ``fit`` takes the columns' minimum and maximum from the rows looks
exactly like a ``BoundedScaler`` to ``isinstance``). So a subclass is trusted only if it
declares a capability itself, which says that its author checked that it keeps the promise
below; otherwise it is audited like any unknown class, and refused. Class names and modules
are never used to recognise a step (a class can take any name).

Capabilities (the promise of a class that declares one):

``PUBLIC_TRANSFORMER``
    ``fit`` reads nothing of the rows but the number, names and dtypes of the columns; the
    fitted ``output_bound_`` is a public bound on the L2 norm of every row ``transform``
    outputs (a function of parameters and of that schema only).
``DP_TRANSFORMER``
    ``fit`` learns from the rows only through releases it accounts, calibrated to its
    ``epsilon``, ``delta``, ``budget``, ``neighbouring`` and ``random_state`` parameters (which a
    private pipeline sets), and charged to ``budget``; ``output_bound_`` as above.
``DP_ESTIMATOR``
    A final estimator accounted in the same way, by Gaussian releases that a private pipeline
    can compose exactly with its transformers' (full batch, replace-one or add/remove-one).
``DP_MINIBATCH_ESTIMATOR``
    A final estimator that calibrates its own ``(epsilon, delta)`` with a Renyi-DP or PLD
    accountant (Poisson-sampled minibatches, add/remove-one): a pipeline cannot split one
    epsilon exactly between it and DP transformers.

scikit-learn's own classes cannot declare anything here; the audit recognises the few it
trusts (``Normalizer``, ``OneHotEncoder`` with public levels, ``Pipeline``,
``ColumnTransformer``, ...) by their exact type, for the same reason.
"""

from __future__ import annotations

__all__ = [
    "DP_ESTIMATOR",
    "DP_MINIBATCH_ESTIMATOR",
    "DP_TRANSFORMER",
    "PUBLIC_TRANSFORMER",
    "declared_privacy",
    "is_dp_estimator",
    "undeclared_base",
]

#: the class attribute a class declares its capability with
ATTRIBUTE = "_skdpgd_privacy"

PUBLIC_TRANSFORMER = "public transformer"
DP_TRANSFORMER = "DP transformer"
DP_ESTIMATOR = "DP estimator"
DP_MINIBATCH_ESTIMATOR = "DP minibatch estimator"

_CAPABILITIES = frozenset(
    {PUBLIC_TRANSFORMER, DP_TRANSFORMER, DP_ESTIMATOR, DP_MINIBATCH_ESTIMATOR}
)


def declared_privacy(est):
    """The capability ``type(est)`` declares in its own body, or None (inherited ones do not
    count; an unknown value is None)."""
    value = vars(type(est)).get(ATTRIBUTE)
    return value if isinstance(value, str) and value in _CAPABILITIES else None


def is_dp_estimator(est):
    """Whether ``est``'s class declares itself a DP estimator (full batch or minibatch)."""
    return declared_privacy(est) in (DP_ESTIMATOR, DP_MINIBATCH_ESTIMATOR)


def undeclared_base(est):
    """The nearest base class of ``type(est)`` that declares a capability, or None: names the
    class a subclass would have inherited its trust from."""
    for cls in type(est).__mro__[1:]:
        value = vars(cls).get(ATTRIBUTE)
        if isinstance(value, str) and value in _CAPABILITIES:
            return cls
    return None

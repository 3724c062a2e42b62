"""What a class promises to do with the private rows: declared in its own body, published
in its scikit-learn tags.

The leak audit of :mod:`skdpgd.pipeline` (and of :class:`~skdpgd.model_selection.
PrivateRandomSearchCV`) trusts a step only for what its class *declares*, with a class
attribute written in the class's own body::

    class BoundedScaler(...):
        _skdpgd_privacy = PUBLIC_TRANSFORMER

and reads it through the step's scikit-learn tags: ``sklearn.utils.get_tags(step).privacy``
is a :class:`PrivacyTags` whose ``capability`` is that declaration (:func:`privacy_capability`
reads it). The package's estimator and transformer bases build these tags in their
``__sklearn_tags__`` with :func:`with_privacy`, which takes the capability from
:func:`declared_privacy`: the class's own namespace (``vars(type(est))``), never through
inheritance. A subclass may override ``fit``, ``fit_transform``, ``transform`` or any helper
they call, and read what its parent promised not to read (a subclass of ``BoundedScaler``
whose ``fit`` takes the columns' minimum and maximum from the rows looks exactly like a
``BoundedScaler`` to ``isinstance``); so the tags of a subclass carry ``capability=None``,
also when it calls ``super().__sklearn_tags__()``, unless it declares a capability itself,
which says that its author checked that it keeps the promise below. Otherwise it is audited
like any unknown class, and refused. Class names and modules are never used to recognise a
step (a class can take any name).

A class outside the package may declare a capability the same way (the attribute in its own
body and ``with_privacy`` in its ``__sklearn_tags__``), or by returning tags whose ``privacy``
says so; either way its author answers for the promise. Tags without a ``privacy`` entry
(scikit-learn's classes, other packages') carry no capability. (With scikit-learn 1.6, a
class whose MRO defines the old ``_more_tags`` gets tags rebuilt by scikit-learn, without
``privacy``: it is refused, the safe side.)

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

A DP estimator's tags also say which of its parameters, left None, its fit would fill from
the private rows (:attr:`PrivacyTags.reads_if_none`, from its ``_skdpgd_reads_if_none()``
method: ``('classes',)`` for a classifier, ``('y_bound',)`` for a regressor that clips its
targets to a range, ``()`` for :class:`~skdpgd.DPHuberRegressor`, whose gradient is bounded
without one). The audit refuses exactly those (:func:`reads_if_none`); a class that declares
nothing is judged on the safe side (``classes`` and ``y_bound`` both).

scikit-learn's own classes cannot declare anything here; the audit recognises the few it
trusts (``Normalizer``, ``OneHotEncoder`` with public levels, ``Pipeline``,
``ColumnTransformer``, ...) by their exact type, for the same reason.
"""

from __future__ import annotations

import dataclasses

import sklearn.utils
from sklearn.utils import get_tags

from .._compat import tags_as

__all__ = [
    "DP_ESTIMATOR",
    "DP_MINIBATCH_ESTIMATOR",
    "DP_TRANSFORMER",
    "PUBLIC_TRANSFORMER",
    "PrivacyTags",
    "Tags",
    "declared_privacy",
    "is_dp_estimator",
    "privacy_capability",
    "reads_if_none",
    "undeclared_base",
    "with_privacy",
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


def _known(value):
    return value if isinstance(value, str) and value in _CAPABILITIES else None


@dataclasses.dataclass(frozen=True)
class PrivacyTags:
    """The privacy entry of a skdpgd estimator's tags.

    Attributes
    ----------
    capability : str or None
        One of the capabilities above, declared by the estimator's own class; None when it
        declares none (a subclass of a declaring class that does not declare one itself).
    reads_if_none : tuple of str or None
        The parameters that, left None, make the estimator's fit read something from the
        private rows (the class list for ``classes``, the largest ``|y|`` for ``y_bound``),
        given its other parameters: what the leak audit refuses in a private pipeline and in
        the private search. An empty tuple: nothing (``DPHuberRegressor`` needs no target
        range). None: not declared, judged on the safe side (``classes`` and ``y_bound`` both,
        where the estimator has them). Declared by the method ``_skdpgd_reads_if_none()``
        (:func:`with_privacy` calls it), which the class that declares the capability answers
        for, as for the capability.
    """

    capability: str | None = None
    reads_if_none: tuple | None = None


@dataclasses.dataclass
class Tags(sklearn.utils.Tags):
    """scikit-learn's tags with a ``privacy`` entry (:class:`PrivacyTags`)."""

    privacy: PrivacyTags = dataclasses.field(default_factory=PrivacyTags)


def declared_privacy(est):
    """The capability ``type(est)`` declares in its own body, or None (inherited ones do not
    count; an unknown value is None)."""
    return _known(vars(type(est)).get(ATTRIBUTE))


def with_privacy(est, tags):
    """``tags`` (what ``super().__sklearn_tags__()`` gave ``est``) as :class:`Tags`, with
    ``privacy.capability`` the one ``type(est)`` declares in its own body (None for a subclass
    that declares none, whatever its parents declare). In secure mode
    (:func:`skdpgd.config_context`) a fit cannot be reproduced, whatever ``random_state``:
    ``non_deterministic`` is then True."""
    from .._config import secure_noise

    capability = declared_privacy(est)
    out = tags_as(
        tags,
        Tags,
        privacy=PrivacyTags(
            capability=capability, reads_if_none=_reads_if_none(est) if capability else None
        ),
    )
    if secure_noise():
        out.non_deterministic = True
    return out


def _reads_if_none(est):
    """What ``est._skdpgd_reads_if_none()`` declares (a tuple of parameter names), or None."""
    hook = getattr(est, "_skdpgd_reads_if_none", None)
    names = hook() if callable(hook) else None
    return None if names is None else tuple(str(name) for name in names)


#: what an estimator that declares nothing is assumed to read when these are None
_SAFE_SIDE = ("classes", "y_bound")


def reads_if_none(est):
    """The parameters of ``est`` (a DP estimator) that, left None, make its fit read something
    from the private rows: its tags' declaration (:attr:`PrivacyTags.reads_if_none`), or, when
    it declares none, ``classes`` and ``y_bound`` (the safe side)."""
    try:
        privacy = getattr(get_tags(est), "privacy", None)
    except Exception:  # tags that cannot be read declare nothing
        privacy = None
    declared = privacy.reads_if_none if isinstance(privacy, PrivacyTags) else None
    return _SAFE_SIDE if declared is None else tuple(declared)


def privacy_capability(est):
    """The capability ``est``'s tags carry (``get_tags(est).privacy.capability``), or None:
    for tags without a :class:`PrivacyTags` entry (scikit-learn's classes, other packages'),
    an unknown value, or an object with no tags at all (``'passthrough'``, None)."""
    if not callable(getattr(est, "__sklearn_tags__", None)) or isinstance(est, type):
        return None
    try:
        tags = get_tags(est)
    except Exception:  # tags that cannot be read declare nothing: audited as unknown
        return None
    privacy = getattr(tags, "privacy", None)
    return _known(privacy.capability) if isinstance(privacy, PrivacyTags) else None


def is_dp_estimator(est):
    """Whether ``est``'s tags declare it a DP estimator (full batch or minibatch)."""
    return privacy_capability(est) in (DP_ESTIMATOR, DP_MINIBATCH_ESTIMATOR)


def undeclared_base(est):
    """The nearest base class of ``type(est)`` that declares a capability, or None: names the
    class a subclass would have inherited its trust from."""
    for cls in type(est).__mro__[1:]:
        value = vars(cls).get(ATTRIBUTE)
        if isinstance(value, str) and value in _CAPABILITIES:
            return cls
    return None

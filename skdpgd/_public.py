"""What shapes a mechanism must be public: the class list, N under add/remove-one, and a fit
that fails must leave nothing behind."""

from __future__ import annotations

import contextlib
import math

import numpy as np

from . import policy
from ._data import encode_binary_or_index, resolve_classes  # noqa: F401 (moved to _data)
from ._selection_guard import warn_if_leaky_pipeline, warn_if_model_selection
from ._setup import release_class_counts, release_count
from .accounting import share_multiplier

#: The ``classes`` parameter of every classifier, for their docstrings.
CLASSES_DOC = """
    classes : array-like of shape (n_classes,) or None, default=None
        Every possible label (public). It decides binary vs multinomial, the number of
        outputs, the loss constants and so the noise; a class with no example in y still
        gets its coefficients. None reads the labels present in y and emits a
        :class:`~skdpgd.PrivacyLeakWarning` (a rare class present or absent would change the
        mechanism). Labels of y outside ``classes`` are an error.
"""


#: The ``class_weight`` parameter of the linear classifiers, for their docstrings.
CLASS_WEIGHT_DOC = """
    class_weight : dict, 'balanced' or None, default=None
        Weights of the classes, as in scikit-learn. The privacy proof needs every example's
        weight in [0, 1], so the weights are divided by the largest one, and alpha by the same
        factor (``alpha_`` reports it): the regularised objective keeps scikit-learn's
        minimiser, but the loss's share of the gradient, and so its signal against the noise,
        shrinks by that factor. 'balanced' (``n / (n_classes * n_k)``) needs the class counts,
        which are private: they are released with Gaussian noise (2% of the budget's mu^2,
        accounted in ``epsilon_``). A dict is public and costs nothing.
"""





def resolve_n_samples(n_samples, n_rows, neighbouring, mu_total, gen):
    """``(n_public, release)``: the public N a mechanism may use, and the noisy count released
    to get it (a :class:`~skdpgd.accounting.Release`, or None when none was).

    Under replace-one N is public. Under add/remove-one it is private: a public ``n_samples``
    is used as given (its value only changes the normaliser and the step count; privacy holds
    whatever it is), else ``N~ = N + z_c N(0, 1)`` is released
    (:func:`skdpgd._setup.release_count`, sensitivity 1), ``1/z_c``-GDP with
    ``z_c = 1 / (sqrt(COUNT_SHARE) mu_total)``.
    """
    if neighbouring == "replace":
        return float(n_rows), None
    if n_samples is not None:
        return float(n_samples), None
    if math.isinf(mu_total):
        return float(n_rows), None
    return release_count(n_rows, share_multiplier(policy.current().COUNT_SHARE, mu_total),
                         neighbouring, gen)


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




def resolve_class_weight(class_weight, classes, y_index, mu_total, gen, relation):
    """Per-class weights in [0, 1] and what they cost: ``(weights, scale, release)``.

    ``weights[k]`` multiplies the sample weight of every example of class k; ``scale`` is
    the factor the requested weights were divided by so that the largest is 1 (a weight above
    1 would multiply an example's contribution past the clip norm); the caller divides alpha
    by it so that the regularised objective keeps its minimiser. ``release`` is the
    :class:`~skdpgd.accounting.Release` of the class counts released for ``'balanced'`` (None
    otherwise), made by :func:`skdpgd._setup.release_class_counts` under ``relation`` (the
    fit's): noise standard deviation ``z * CLASS_COUNT_SENSITIVITY[relation]``.

    ``'balanced'`` weights ``n / (K n_k)`` need the class counts, which are private: they are
    released as a histogram plus Gaussian noise. Relabelling one example moves two counts by
    1 (L2 sensitivity sqrt(2), replace-one); adding or removing one moves one count by 1
    (sensitivity 1). The release spends ``CLASS_COUNT_SHARE`` of the budget's mu^2 under the
    fit's relation: ``z = 1 / (sqrt(CLASS_COUNT_SHARE) mu_total)``, and the noise is scaled by
    that relation's sensitivity, so the release is ``1/z``-GDP under it. A dict gives public
    weights (labels absent from it weigh 1).
    """
    n_classes = classes.shape[0]
    if class_weight is None:
        return np.ones(n_classes), 1.0, None
    if isinstance(class_weight, dict):
        unknown = [k for k in class_weight if k not in set(classes.tolist())]
        if unknown:
            raise ValueError(f"class_weight has labels that are not classes: {unknown!r}.")
        raw = np.array([float(class_weight.get(c, 1.0)) for c in classes.tolist()])
        release = None
    elif class_weight == "balanced":
        counts = np.bincount(y_index, minlength=n_classes).astype(float)
        release = None
        if not math.isinf(mu_total):
            counts, release = release_class_counts(
                counts, share_multiplier(policy.current().CLASS_COUNT_SHARE, mu_total),
                relation, gen)
        counts = np.maximum(counts, 1.0)
        raw = counts.sum() / (n_classes * counts)
    else:
        raise ValueError(f"class_weight must be None, 'balanced' or a dict, got {class_weight!r}.")
    if not np.all(np.isfinite(raw)) or np.any(raw < 0) or not np.any(raw > 0):
        raise ValueError("class weights must be finite, >= 0 and not all 0.")
    scale = float(raw.max())
    return raw / scale, scale, release

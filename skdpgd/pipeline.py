"""A scikit-learn ``Pipeline`` whose epsilon covers every step.

:func:`make_private_pipeline` checks every step before any row is read: steps that read nothing
private (stateless ones, public-bound ones such as :class:`~skdpgd.preprocessing.BoundedScaler`
or a ``OneHotEncoder`` with public levels) and steps that spend accounted budget
(:class:`~skdpgd.preprocessing.DPStandardScaler`, the final DP estimator) are accepted; a step
that learns from the private rows without accounting (``StandardScaler``, ``PCA``,
``SimpleImputer(strategy='mean')``, ``OneHotEncoder()`` learning its levels, an unknown
transformer, ...) is refused with a ``ValueError`` naming it and its private alternative. A
``ColumnTransformer``, at any depth, must choose its columns by public names, positions, slices
of those or ``make_column_selector`` (names and dtypes); a callable, which runs on the private
rows, or a boolean mask is refused. A step is trusted for the capability its scikit-learn
tags carry (``get_tags(step).privacy``, declared by its own class: :mod:`skdpgd._core.capability`),
and scikit-learn's classes by their exact type: a subclass, which may override ``fit`` or
``transform``, is refused unless it declares a capability itself.

**Budget split (public rule).** The pipeline's ``(epsilon, delta)`` is turned into one Gaussian-DP
parameter ``mu = gdp_mu(epsilon, delta)`` (:func:`skdpgd.accounting.split_budget`); every spending
step ``k`` gets ``mu_k^2 = w_k mu^2``
(``sum_k w_k = 1``) and is run at ``(gdp_epsilon(delta, mu_k), delta)``, which its own calibration
turns back into ``mu_k``. Gaussian DP composes exactly (``mu^2 = sum_k mu_k^2``), so the whole
pipeline spends at most ``(epsilon, delta)``. Default weights: each DP transformer
``DP_TRANSFORMER_SHARE`` (0.3) of ``mu^2`` (together at most ``DP_TRANSFORMERS_MAX_SHARE``, 0.5),
the final estimator the rest; ``shares={step path: weight}`` overrides them (normalised). A
public constant, chosen on the benchmark suite's tuning sets (``benchmarks/DECISIONS.md``).

**Accounting.** Every spending step is charged, release by release, to an internal
:class:`~skdpgd.PrivacyBudget` of ``(epsilon, delta)`` (and to the user's ``budget`` when given):
``epsilon_`` is that ledger's composed spend, the same arithmetic as ``PrivacyBudget``. The user's
budget is checked with a public upper bound on the whole pipeline before any row is read.
"""

from __future__ import annotations

import inspect
import math
import numbers
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.utils import check_random_state

from . import policy
from ._core.audit import (
    _audit_steps,
    _bound_problem,
    _final_step_problems,
    _is_dp_estimator,
    _not_dp_estimator,
)
from ._core.capability import DP_MINIBATCH_ESTIMATOR, DP_TRANSFORMER, privacy_capability
from ._config import resolve_budget
from ._core.selection_guard import warn_if_model_selection
from ._core.setup import resolve_delta
from .accounting import (
    RELATIONS,
    Relation,
    flatten,
    gdp_mu_of_releases,
    split_budget,
    upper_bound_release,
)
from .budget import PrivacyBudget
from .exceptions import BudgetExceededError, PrivacyLeakWarning
from .preprocessing import output_bound

__all__ = ["PrivatePipeline", "audit_estimator", "make_private_pipeline"]


#: Relative margin by which the steps' mu are kept inside the pipeline's: a step's calibration
#: of ``gdp_epsilon(delta, mu_k)`` may return a mu a few ulps above ``mu_k``.
_SPLIT_MARGIN = 1e-9


def audit_estimator(estimator):
    """Why fitting ``estimator`` privately would leak, found before any row is read.

    The audit of :func:`make_private_pipeline`, for any estimator a private fit may be given
    (:class:`~skdpgd.model_selection.PrivateRandomSearchCV` runs it on its ``estimator``):

    * a :class:`PrivatePipeline`: its own :meth:`PrivatePipeline.audit`, and the row bound
      its ``fit`` checks (the final step's ``data_norm``, or a bound its steps declare);
    * a scikit-learn ``Pipeline`` (by exact type): every step but the last by the same rules
      (a step that learns from the rows without accounting, a subclass of a trusted class, a
      ``ColumnTransformer`` choosing its columns by a callable or a mask, ...), and a last
      step that is a skdpgd DP estimator with public ``classes``/``y_bound``. A plain
      ``Pipeline`` does not pass on the row bound its steps declare, so the last step needs
      its own ``data_norm``;
    * a skdpgd DP estimator: its ``classes``, ``y_bound`` and ``data_norm``.

    Anything else (including a subclass of a DP estimator that does not declare its own
    capability, see :mod:`skdpgd._core.capability`) is one more problem.

    Parameters
    ----------
    estimator : estimator (not fitted)

    Returns
    -------
    problems : list of str
        One message per problem, naming the step and its private alternative; empty when
        nothing was found. Reads parameters only.

    Raises
    ------
    ValueError
        For a :class:`PrivatePipeline` that does not end with a DP estimator (as its ``fit``).

    Examples
    --------
    >>> from sklearn.pipeline import Pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skdpgd import DPLogisticRegression
    >>> from skdpgd.pipeline import audit_estimator
    >>> leaky = Pipeline([("s", StandardScaler()),
    ...                   ("m", DPLogisticRegression(classes=[0, 1], data_norm=3.0))])
    >>> print(audit_estimator(leaky)[0][:72])
    step 's' (StandardScaler): StandardScaler learns from the private rows w
    """
    if type(estimator) is PrivatePipeline:
        problems, _ = estimator.audit()
        unbounded = _bound_problem(estimator.steps)
        return problems + ([unbounded] if unbounded is not None else [])
    if type(estimator) is Pipeline:
        problems, _ = _audit_steps(estimator.steps, final_must_be_dp=False)
        where, final = f"step {estimator.steps[-1][0]!r}", estimator.steps[-1][1]
        if not _is_dp_estimator(final):
            return problems
        fix = (
            "a public data_norm on the final step (a scikit-learn Pipeline does not pass on "
            "the bound its steps declare), or make_private_pipeline, which does"
        )
    else:
        where, final = "the estimator", estimator
        if not _is_dp_estimator(final):
            return [
                _not_dp_estimator(where, final, "a private fit needs one, or a pipeline ending")
            ]
        problems = _final_step_problems(final, where)
        fix = "a public data_norm (and rows scaled into it)"
    if "data_norm" in final.get_params() and final.get_params()["data_norm"] is None:
        problems.append(
            f"{where} ({type(final).__name__}): data_norm=None reads the largest "
            f"row norm from the private rows. Private alternative: {fix}."
        )
    return problems


class _Ledger:
    """A budget-like object the steps of one pipeline fit charge: every release goes to the
    pipeline's own :class:`PrivacyBudget` and, when given, to the user's shared budget (checked
    there first, so that a refusal records nothing anywhere). It records the releases, each
    named after its step. Copies (scikit-learn's clone) share it."""

    def __init__(self, inner, outer, relation):
        self.inner, self.outer, self.neighbouring = inner, outer, relation
        self.releases = []

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def check(self, releases, label="fit"):
        if self.outer is not None:
            self.outer.check(releases, label=label)
        return self.inner.check(releases, label=label)

    def charge(self, events, label="fit"):
        if self.outer is not None:
            self.outer.check(events, label=label)
        spent = self.inner.charge(events, label=label)
        if self.outer is not None:
            self.outer.charge(events, label=label)
        releases, _ = flatten(events)
        self.releases.extend(r.renamed(f"{label}: {r.name}") for r in releases)
        return spent

    def for_step(self, path):
        return _StepLedger(self, path)


class _StepLedger:
    """What one step is given as its ``budget``: the pipeline's ledger, labelled with the
    step's path. Copies (clone) share it."""

    #: the step is fitted by a private pipeline, whose own fit the model-selection guard checks
    inside_private_pipeline = True

    def __init__(self, ledger, path):
        self.ledger, self.path, self.neighbouring = ledger, path, ledger.neighbouring

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def check(self, releases, label="fit"):
        return self.ledger.check(releases, label=self.path)

    def charge(self, events, label="fit"):
        return self.ledger.charge(events, label=self.path)


def _walk_fitted(est, path):
    """(path, fitted estimator) of every fitted sub-estimator of a fitted step."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion

    yield path, est
    if isinstance(est, Pipeline):
        for name, s in est.steps:
            yield from _walk_fitted(s, f"{path}__{name}")
    elif isinstance(est, ColumnTransformer):  # the templates, then their fitted clones
        for name, t, _ in list(est.transformers) + list(getattr(est, "transformers_", [])):
            yield from _walk_fitted(t, f"{path}__{name}")
    elif isinstance(est, FeatureUnion):
        for name, t in est.transformer_list:
            yield from _walk_fitted(t, f"{path}__{name}")


class PrivatePipeline(Pipeline):
    """A scikit-learn ``Pipeline`` whose ``epsilon_`` covers every step (see the module doc).

    Build it with :func:`make_private_pipeline`. ``fit`` checks every step before reading a
    row, splits ``(epsilon, delta)`` over the steps that spend, fits copies of the steps (your
    step objects are never modified; ``pipe[i]`` and ``named_steps`` are the fitted copies,
    with your parameters), and passes the public row bound the transformers declare on to the
    final estimator as ``data_norm`` when you left it None. The ``epsilon``, ``delta``,
    ``budget`` and ``random_state`` of each spending step are set by the pipeline for the fit
    (the values a step ran at are its fitted ``epsilon_``/``delta_``, and
    :attr:`step_epsilons_`); a step may not carry its own budget or another neighbouring
    relation.

    **The pipeline's epsilon governs.** A spending step whose own ``epsilon`` or ``delta`` is
    not its default (``DPLogisticRegression(epsilon=5)`` in a pipeline of ``epsilon=1``) is
    refused with a ``ValueError`` before any row is read. An error rather than a warning: the
    step would run at its share of the pipeline's budget, not at the value written on it, and
    that value would still read back from ``pipe[-1].epsilon`` after the fit; a budget is
    not a setting to be ignored with a message that scrolls by. Put the total on the pipeline
    and, to give one step more of it, ``shares``. A step left at its default stays silent.

    Parameters
    ----------
    steps : list of (name, estimator)
        Transformers, then a DP estimator (any estimator of ``skdpgd.__all__``: its tags
        declare which of its parameters it would read from the rows when left None, e.g.
        ``classes`` or ``y_bound``, and those must be given).
    epsilon : float, default=1.0
        Total epsilon of the pipeline (> 0; inf: no noise anywhere), split over its spending
        steps. :class:`~skdpgd.model_selection.PrivateRandomSearchCV` sets it for each trial.
    delta : float or None, default=None
        Total delta. None: ``min(1e-5, 1/N^2)`` under replace-one (N public); under
        add/remove-one ``1e-5``, or the budget's delta if smaller.
    budget : PrivacyBudget or None, default=None
        A shared budget every release is also charged to; checked with a public upper bound
        on the whole pipeline before any row is read.
    neighbouring : {'auto', 'replace', 'add_remove'}, default='auto'
        Relation of the guarantee; 'auto' is the budget's, else replace-one. Steps are run
        under it (a step with an explicit other relation is refused).
    shares : dict or None, default=None
        ``{step path: weight}`` (paths as in ``set_params``, e.g. ``'columntransformer__num'``)
        over every spending step; None: the public default rule.
    allow_leaks : bool, default=False
        Turn refusals of leaking steps into :class:`~skdpgd.PrivacyLeakWarning` (for
        experiments: ``epsilon_`` then does not cover those steps).
    random_state : int, RandomState instance or None, default=None
        Seeds the noise: a single spending step gets it as is (so a pipeline of free steps and
        one estimator draws the same noise as that estimator alone); several get one seed
        each, drawn from it.

    Attributes
    ----------
    epsilon_, delta_ : float
        What the whole fit spent: the internal ledger's composed epsilon at ``delta_``.
    mu_ : float
        Gaussian-DP parameter of all full-batch releases (None if a step is subsampled).
    releases_ : list of :class:`skdpgd.accounting.Release`
        Every release of every step, named ``'<step path>: <release>'``.
    step_epsilons_ : dict
        ``{step path: epsilon it was run at}``. They add up to more than ``epsilon_``: the
        steps compose exactly in Gaussian DP (their ``mu_k^2`` add up to ``mu^2``), which is
        tighter than adding their epsilons.
    data_norm_ : float or None
        The bound passed on to the final estimator (None if the estimator had its own).
    neighbouring_ : str
    """

    def __init__(
        self,
        steps,
        *,
        epsilon=1.0,
        delta=None,
        budget=None,
        neighbouring="auto",
        shares=None,
        allow_leaks=False,
        random_state=None,
    ):
        super().__init__(steps)
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget
        self.neighbouring = neighbouring
        self.shares = shares
        self.allow_leaks = allow_leaks
        self.random_state = random_state

    # -- checks on parameters only ------------------------------------------------------
    def _relation(self, minibatch=False):
        budget = resolve_budget(self.budget)  # the default budget of config_context, if none
        if minibatch:  # DP-SGD and the MLP are accounted under add/remove-one only
            if (
                self.neighbouring == "replace"
                or getattr(budget, "neighbouring", "add_remove") != "add_remove"
            ):
                raise ValueError(
                    "a minibatch (Poisson-sampled) final estimator is accounted "
                    "under add/remove-one neighbours; use neighbouring='auto' or "
                    "'add_remove' (and an add/remove-one budget)."
                )
            return "add_remove"
        if self.neighbouring not in ("auto", *RELATIONS):
            raise ValueError(
                "neighbouring must be 'auto', 'replace' or 'add_remove', got "
                f"{self.neighbouring!r}."
            )
        b = getattr(budget, "neighbouring", None) if budget is not None else None
        if self.neighbouring == "auto":
            return b if b in RELATIONS else "replace"
        if b is not None and b != self.neighbouring:
            raise ValueError(
                f"neighbouring={self.neighbouring!r} differs from the budget's relation {b!r}."
            )
        return self.neighbouring

    def audit(self):
        """``(problems, spenders)``: why steps would leak (messages) and the paths of the steps
        that spend budget (DP transformers, then the final estimator). Reads parameters only."""
        return _audit_steps(self.steps)

    def _weights(self, spenders):
        if self.shares is not None:
            if not isinstance(self.shares, dict) or set(self.shares) != set(spenders):
                raise ValueError(
                    f"shares must be a dict with one weight for each spending "
                    f"step: {spenders}; got {self.shares!r}."
                )
            w = np.array([float(self.shares[p]) for p in spenders])
            if not (np.all(np.isfinite(w)) and np.all(w > 0)):
                raise ValueError("shares must be positive finite numbers.")
            return w / w.sum()
        k = len(spenders) - 1
        each = policy.dp_transformer_share(k)
        return np.array([each] * k + [1.0 - each * k])

    # -- fit ------------------------------------------------------------------------------
    def fit(self, X, y=None, **params):
        """Check every step, split the budget, fit copies of the steps, account every release.

        Nothing is set on the pipeline (and your step objects are never touched) unless the
        whole fit succeeds.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **params : dict
            ``<step>__<param>`` fit parameters (e.g. ``dplogisticregression__sample_weight``).

        Returns
        -------
        self : object
        """
        warn_if_model_selection(self)  # k fits on overlapping rows, unaccounted?
        if not isinstance(self.allow_leaks, (bool, np.bool_)):
            raise ValueError("allow_leaks must be True or False.")
        if isinstance(self.epsilon, bool) or not (
            isinstance(self.epsilon, numbers.Real) and self.epsilon > 0
        ):
            raise ValueError(f"epsilon must be > 0, got {self.epsilon!r}.")
        problems, spenders = self.audit()
        for message in problems:
            if not self.allow_leaks:
                raise ValueError(
                    message + " Nothing was read or released (allow_leaks=True "
                    "turns this into a PrivacyLeakWarning for experiments)."
                )
            warnings.warn(
                message + " epsilon_ does not cover this step.", PrivacyLeakWarning, stacklevel=2
            )
        epsilon = float(self.epsilon)
        final_name, final = self.steps[-1]
        minibatch = privacy_capability(final) == DP_MINIBATCH_ESTIMATOR
        relation = self._relation(minibatch)
        if minibatch and len(spenders) > 1:
            raise ValueError(
                f"the final step {final_name!r} ({type(final).__name__}) is accounted in Renyi DP "
                "(Poisson-sampled minibatches), and splitting one epsilon exactly between it "
                "and DP transformers is not supported yet; use BoundedScaler or "
                "schema_transformer (free), or fit the DP transformer separately under a shared "
                "PrivacyBudget."
            )
        for path in spenders:
            step = self._get(path)
            rel = step.get_params().get("neighbouring", "auto")
            if rel not in ("auto", relation):
                raise ValueError(
                    f"step {path!r} has neighbouring={rel!r} but the pipeline runs "
                    f"under {relation!r}; leave it 'auto'."
                )
            if step.get_params().get("budget") is not None:
                raise ValueError(
                    f"step {path!r} has its own budget; give the budget to the "
                    "pipeline (budget=...), which charges every step to it."
                )
            for key in ("epsilon", "delta"):
                problem = _own_privacy_parameter(step, path, key, getattr(self, key))
                if problem is not None:
                    raise ValueError(problem)

        # --- a public row bound for the final estimator: declared by the steps, or given ---
        unbounded = _bound_problem(self.steps)
        if unbounded is not None and not self.allow_leaks:
            raise ValueError(unbounded + " Nothing was read or released.")

        if self.delta is not None:
            delta = float(self.delta)
            if not 0.0 < delta < 1.0:
                raise ValueError(f"delta must be in (0, 1), got {self.delta!r}.")
        else:  # N is public under replace-one; otherwise the cap, within the budget's delta
            delta = resolve_delta(None, relation, n_rows=_num_rows(X))
            if relation != "replace" and resolve_budget(self.budget) is not None:
                delta = min(delta, float(resolve_budget(self.budget).delta))

        # --- the split: mu_k^2 = w_k mu^2 (a public rule on public values) ---
        weights = self._weights(spenders)
        infinite = math.isinf(epsilon)
        mu, split = split_budget(epsilon, delta, weights, _SPLIT_MARGIN)
        step_eps = [epsilon] if minibatch or infinite else split

        # --- the user's budget admits the whole pipeline? (public upper bound, nothing read) ---
        outer = resolve_budget(self.budget)  # the default budget of config_context, if none
        if outer is not None:
            if infinite:
                raise BudgetExceededError(
                    "epsilon=inf spends an unbounded budget; nothing was released."
                )
            outer.check(
                [upper_bound_release("whole pipeline (upper bound)", mu, relation)],
                label="PrivatePipeline",
            )
        ledger = None
        if not infinite:
            inner = (
                PrivacyBudget(epsilon, delta, relation) if not minibatch else _Passthrough(relation)
            )
            ledger = _Ledger(inner, outer, relation)

        # --- copies of the steps, configured (the user's objects are never touched) ---
        steps = [
            (name, clone(est) if not isinstance(est, str) and est is not None else est)
            for name, est in self.steps
        ]
        work = Pipeline(steps)
        rs = check_random_state(self.random_state)
        if len(spenders) == 1:  # one spending step: it draws from random_state itself
            seeds = [self.random_state]
        elif self.random_state is None:
            seeds = [None] * len(spenders)
        else:
            seeds = [int(v) for v in rs.randint(0, 2**31 - 1, size=len(spenders))]
        originals = {}
        for path, eps_k, seed in zip(spenders, step_eps, seeds):
            keys = ("epsilon", "delta", "budget", "random_state")
            step = _get_from(work, path)
            originals[path] = {k: step.get_params()[k] for k in keys}
            work.set_params(
                **{
                    f"{path}__{k}": v
                    for k, v in zip(keys, (eps_k, delta, ledger and ledger.for_step(path), seed))
                }
            )

        # --- fit the transformers, then the estimator with the declared bound ---
        routed = {}
        for key, value in params.items():
            if "__" not in key:
                raise ValueError(f"fit parameter {key!r} must be '<step>__<param>'.")
            step, _, p = key.partition("__")
            routed.setdefault(step, {})[p] = value
        Xt = X
        running, bound_set = None, []  # the rows' declared bound so far
        for name, est in steps[:-1]:
            if est is None or (isinstance(est, str) and est == "passthrough"):
                continue
            if (
                privacy_capability(est) == DP_TRANSFORMER
                and running is not None
                and est.get_params().get("data_norm", False) is None
            ):
                # a DP transformer that clips to data_norm (DPPCA): the earlier steps' bound
                est.set_params(data_norm=_data_norm_of(running))
                bound_set.append(est)
            Xt = est.fit_transform(Xt, y, **routed.get(name, {}))
            running = output_bound(est, running)
        final_copy = steps[-1][1]
        data_norm = None
        final_params = final_copy.get_params()
        if "data_norm" in final_params and final_params["data_norm"] is None:
            bound = running  # the chain of the transformers' declared bounds
            if bound is None and not self.allow_leaks:  # the structural check said it would be
                raise RuntimeError("a step declared no row bound after fitting; please report.")
            if bound is not None:  # (None only with allow_leaks: the estimator then warns)
                data_norm = _data_norm_of(bound)
                final_copy.set_params(data_norm=data_norm)
        final_copy.fit(Xt, y, **routed.get(final_name, {}))

        # --- restore the copies' parameters to the user's (also on the clones a
        # ColumnTransformer fitted): the fitted attributes say what ran ---
        for name, est in steps:
            for path, sub in _walk_fitted(est, name):
                if path in originals and hasattr(sub, "set_params"):
                    sub.set_params(**originals[path])
        if data_norm is not None:
            final_copy.set_params(data_norm=None)
        for est in bound_set:  # their data_norm_ says what ran
            est.set_params(data_norm=None)

        # --- what was spent ---
        step_epsilons = dict(zip(spenders, step_eps))
        if ledger is None:
            releases, spent, mu_ = [], math.inf, math.inf
        elif minibatch:
            # what the estimator released (its budget may have been charged a bound that holds
            # whichever branch it took, rather than these: DP-SGD's prior switch)
            (path,) = spenders
            releases = [r.renamed(f"{path}: {r.name}") for r in final_copy.releases_]
            spent, mu_ = float(final_copy.epsilon_), None
        else:
            releases = list(ledger.releases)
            spent = ledger.inner.spent_epsilon()
            mu_ = gdp_mu_of_releases(releases)
        self.steps = steps
        self.epsilon_ = spent
        self.delta_ = float(final_copy.delta_) if minibatch else delta
        self.mu_ = mu_
        self.releases_ = releases
        self.step_epsilons_ = step_epsilons
        self.data_norm_ = data_norm
        self.neighbouring_ = Relation(relation).words
        return self

    def _get(self, path):
        return _get_from(Pipeline(list(self.steps)), path)

    def __getitem__(self, ind):
        """A step, or (for a slice) a plain scikit-learn ``Pipeline`` of those steps (shallow:
        the same fitted objects), e.g. ``pipe[:-1].transform(X)``."""
        if isinstance(ind, slice):
            if ind.step not in (1, None):
                raise ValueError("Pipeline slicing only supports a step of 1")
            return Pipeline(self.steps[ind])
        return super().__getitem__(ind)

    def fit_predict(self, X, y=None, **params):
        """``fit`` (privately), then ``predict`` on the same rows."""
        return self.fit(X, y, **params).predict(X)

    def fit_transform(self, X, y=None, **params):
        """Not available: a private pipeline ends with an estimator (fit, then predict)."""
        raise AttributeError("a private pipeline ends with an estimator: use fit, then predict.")


class _Passthrough:
    """Inner ledger for a pipeline whose only spending step is a minibatch estimator: that
    estimator calibrates (epsilon, delta) itself with its own (RDP or PLD) accountant."""

    def __init__(self, relation):
        self.neighbouring = relation

    def check(self, releases, label="fit"):
        return 0.0

    def charge(self, events, label="fit"):
        return 0.0


def _own_privacy_parameter(step, path, key, total):
    """Why the spending step at ``path`` may not keep its own ``key`` ('epsilon' or 'delta'):
    a value other than its class's default, which the pipeline would replace by its share of
    ``total`` (None when the step leaves it at its default). Reads parameters only."""
    params = step.get_params()
    if key not in params:
        return None
    try:
        default = inspect.signature(type(step)).parameters[key].default
    except (KeyError, TypeError, ValueError):
        return None
    value = params[key]
    if value is default:
        return None
    try:
        if bool(value == default):
            return None
    except (TypeError, ValueError):
        pass
    name = type(step).__name__
    weight = " (and shares={step path: weight} to weight the steps)" if key == "epsilon" else ""
    return (
        f"step {path!r} ({name}) has its own {key}={value!r}, but a private pipeline runs "
        f"every spending step at its share of the pipeline's {key} ({total!r}): the step's "
        f"value would be ignored. Give the total to the pipeline (make_private_pipeline(..., "
        f"{key}=...)){weight} and leave the step's {key} at its default ({default!r}). "
        "Nothing was read or released."
    )


def _data_norm_of(bound):
    """The ``data_norm`` a declared row bound gives the next step (a bound of 0: every row is
    0, and any positive norm bounds it)."""
    return float(bound) if bound > 0 else 1.0


def _get_from(pipe, path):
    """The (sub-)estimator at a ``set_params`` path (``step__part__...``)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion

    est = pipe
    for part in path.split("__"):
        if isinstance(est, Pipeline):
            est = dict(est.steps)[part]
        elif isinstance(est, ColumnTransformer):
            est = {n: t for n, t, _ in est.transformers}[part]
        elif isinstance(est, FeatureUnion):
            est = dict(est.transformer_list)[part]
        else:
            raise KeyError(path)
    return est


def _num_rows(X):
    shape = getattr(X, "shape", None)
    if shape is not None:
        return int(shape[0])
    return len(X)


def make_private_pipeline(
    *steps,
    epsilon=1.0,
    delta=None,
    budget=None,
    random_state=None,
    neighbouring="auto",
    shares=None,
    allow_leaks=False,
):
    """A :class:`PrivatePipeline` from steps, named as ``sklearn.pipeline.make_pipeline`` does.

    Parameters
    ----------
    *steps : estimators
        Transformers, then a skdpgd DP estimator.
    epsilon : float, default=1.0
        Total epsilon of the pipeline, as for every estimator of the package. Inside
        :class:`~skdpgd.model_selection.PrivateRandomSearchCV` leave it out: the search sets
        each trial's.
    delta, budget, random_state, neighbouring, shares, allow_leaks
        See :class:`PrivatePipeline`.

    Returns
    -------
    PrivatePipeline

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd import DPLogisticRegression
    >>> from skdpgd.pipeline import make_private_pipeline
    >>> from skdpgd.preprocessing import BoundedScaler
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 10, size=(2000, 3))
    >>> y = (X[:, 0] > 5).astype(int)
    >>> pipe = make_private_pipeline(BoundedScaler(bounds=(0, 10)),
    ...                              DPLogisticRegression(classes=[0, 1]),
    ...                              epsilon=1.0, random_state=0).fit(X, y)
    >>> bool(pipe.epsilon_ <= 1.0), bool(pipe.data_norm_ == np.sqrt(3))
    (True, True)
    """
    from sklearn.pipeline import make_pipeline

    named = make_pipeline(*steps).steps
    return PrivatePipeline(
        named,
        epsilon=epsilon,
        delta=delta,
        budget=budget,
        neighbouring=neighbouring,
        shares=shares,
        allow_leaks=allow_leaks,
        random_state=random_state,
    )

"""Private hyperparameter selection: a random search whose epsilon covers every trial and choice.

:class:`PrivateRandomSearchCV` runs a *random number* K of trials. Each trial draws one
candidate from a public grid or distribution, fits the estimator on a training split with
GDP parameter ``mu``, and scores it on a disjoint validation split with Gaussian noise; only
the best trial (its candidate, its model and its noisy score) is released. K itself is never
released. This is the private selection of Papernot and Steinke (2022, "Hyperparameter tuning
with Renyi differential privacy", ICLR; arXiv:2110.03620), whose Theorems 2 and 6 bound the
Renyi DP of the whole search from the RDP of one trial; the bound is converted to
(epsilon, delta) by the package's conversion (:func:`skdpgd.accounting.rdp_epsilon`) and ``mu``
is calibrated so that the whole search spends at most the user's epsilon.

Privacy model: replace-one neighbours (N public), as the full-batch estimators' default.

One trial (the base algorithm Q of the paper). The split is a public random partition of the
row *positions* (``train_test_split`` without stratification, seeded from ``random_state``),
the same for every trial. Replacing one row changes either a training row or a validation
row, never both, so Q = (fit on the training rows, score on the validation rows) is
``max(mu_fit, mu_score)``-GDP (parallel composition: the score given the model is
post-processing when the training row changes, and the model's distribution is unchanged when
the validation row changes). The search gives both the same ``mu``: one trial is exactly
``mu``-GDP, its RDP is ``alpha mu^2 / 2`` at every order alpha, and its (e, d)-DP curve is
``d = delta(e; mu)`` of :func:`skdpgd.accounting.gdp_delta` (exact).

The search's RDP (Theorems 2 and 6: K truncated negative binomial or Poisson), its conversion
and the calibration of ``mu`` are in :mod:`skdpgd.accounting.selection`
(:class:`~skdpgd.accounting.RepeatedSelection`, :func:`~skdpgd.accounting.calibrate_base_mu`):
the search describes what it releases as that event and charges a budget with it.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.model_selection import ParameterSampler, train_test_split
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ._config import config_context, resolve_budget
from ._core.capability import DP_MINIBATCH_ESTIMATOR, privacy_capability
from ._core.data import target_range
from ._core.noise import fit_generator, gaussian, is_secure
from ._core.setup import resolve_delta, warn_if_large_delta
from ._compat import HasMethods, Interval, StrOptions, fit_context
from ._core.transaction import collected_warnings, defer_warning, fit_transaction
from ._core.selection_guard import private_search_trials
from .accounting import (
    Relation,
    RepeatedSelection,
    calibrate_base_mu,
    gdp_mu_of_releases,
    sum_rounding_margin,
    trial_epsilon,
    truncated_negative_binomial_gamma,
)
from .exceptions import DivergenceError, PrivacyLeakWarning
from .pipeline import audit_estimator

__all__ = ["PrivateRandomSearchCV", "draw_n_trials"]


def draw_n_trials(gen, distribution, mean, shape=1.0, gamma=math.nan):
    """K from a numpy Generator: Poisson(mean), or the truncated negative binomial (shape
    ``eta``, parameter ``gamma``): ``P(K = k) ~ C(k + eta - 1, k) gamma^eta (1 - gamma)^k`` for
    k >= 1, the logarithmic distribution ``(1 - gamma)^k / (k log(1/gamma))`` at ``eta = 0``."""
    if is_secure(gen):
        # numpy's samplers of these laws, keyed from the secure stream (secret, not exact:
        # see the user guide's security model)
        gen = gen.numpy_stream()
    if distribution == "poisson":
        return int(gen.poisson(mean))
    if float(shape) == 0.0:
        return int(gen.logseries(1.0 - gamma))
    k = 0
    while k == 0:  # truncation at 0 by rejection: P(K = 0) = gamma^eta per draw
        k = int(gen.negative_binomial(float(shape), gamma))
    return k


# ---------------------------------------------------------------------------------------------
# The search
# ---------------------------------------------------------------------------------------------


def _same(a, b):
    """Whether two parameter values are equal (False where ``==`` is not a truth value)."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _lists_current_values(grid, params):
    """Whether ``grid`` (one dict of ``param_distributions``) lists, for every parameter it
    sets, the estimator's current value (``params``, its deep parameters): then the estimator
    as given is one of its points. A distribution (``rvs``) lists nothing."""
    for key, values in grid.items():
        if key not in params or hasattr(values, "rvs"):
            return False
        try:
            listed = list(values)
        except TypeError:
            return False
        if not any(_same(v, params[key]) for v in listed):
            return False
    return True


def _best_estimator_has(attr):
    def check(self):
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        return hasattr(self.estimator, attr)

    return check


class PrivateRandomSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Differentially private random search over hyperparameters (Papernot and Steinke, 2022).

    Runs a random number K of trials (K is drawn from a public distribution with mean
    ``n_iter`` and never released). Each trial draws a candidate from
    ``param_distributions`` (independently, with replacement), fits a clone of ``estimator``
    on a training split with a per-trial budget, and scores it with Gaussian noise on the
    disjoint validation split. Only the best trial is released: its candidate
    (``best_params_``), its model (``best_estimator_``, fitted on the training split: there is
    no refit on all rows, which would cost more budget) and its noisy score. ``epsilon_``
    covers every trial *and* the selection; the per-trial budget is calibrated so that it is
    at most ``epsilon``.

    Parameters
    ----------
    estimator : estimator
        A full-batch private estimator (:class:`~skdpgd.DPLogisticRegression`,
        :class:`~skdpgd.DPRidge`, :class:`~skdpgd.DPMLPClassifier` without ``batch_size``), or
        a pipeline whose private step exposes ``releases_`` after fit (a scikit-learn
        ``Pipeline`` ending in one, or a private pipeline, built without an ``epsilon``: the
        search sets the pipeline's ``epsilon``, which it splits over its steps). Every
        trial must be a Gaussian mechanism under replace-one neighbours (checked before any
        trial where possible, and on each trial's ``releases_``).

        Before any row is read, the estimator goes through the leak audit of
        :func:`skdpgd.pipeline.make_private_pipeline` (:func:`skdpgd.pipeline.audit_estimator`):
        a step of a ``Pipeline`` that learns from the private rows without accounting
        (``StandardScaler``, ``PCA``, an unknown transformer, a subclass of a trusted one, a
        ``ColumnTransformer`` choosing its columns by a callable, ...), a final estimator
        that would read its ``classes``, ``y_bound`` or ``data_norm`` from the rows (a plain
        ``Pipeline`` does not pass on the bound its steps declare), or an estimator that is
        not a skdpgd DP estimator is refused with a ``ValueError`` naming the step and its
        private alternative; the search then reads nothing, runs no trial and sets nothing.

    param_distributions : dict or list of dicts
        Public candidates, as for scikit-learn's ``RandomizedSearchCV``: lists (sampled
        uniformly) or distributions with an ``rvs`` method. Each trial draws one candidate
        with ``ParameterSampler(..., n_iter=1)``, independently of the other trials (the
        privacy theorem needs independent trials, so a grid is sampled with replacement).
        **The estimator as given is always a candidate**: unless one of the dicts lists the
        estimator's current value of every parameter it sets, the search adds the empty dict
        ``{}`` (the estimator unchanged) as one more point (``[grid, {}]``: for lists, one
        point of the grid; with distributions, one dict of the list, drawn as often as each of
        yours). The package's defaults come from theory and are hard to beat at small epsilon
        (measured in the user guide): a search should never be unable to return them.
        ``best_params_`` is ``{}`` when they win.

    epsilon : float, default=1.0
        Privacy budget of the whole search (> 0; ``np.inf``: no noise anywhere).

    delta : float or None, default=None
        Delta of the whole search; None uses ``min(1e-5, 1 / n_samples**2)``. Each trial is
        given this delta too (with the epsilon that makes it ``mu``-GDP).

    n_iter : float, default=10
        Mean number of trials, E[K] (> 1 for the negative binomial, >= 1 for Poisson).

    distribution : {'negative_binomial', 'poisson'}, default='negative_binomial'
        Law of K. 'negative_binomial': the truncated negative binomial of Papernot and Steinke
        with shape ``shape`` (Theorem 2); K >= 1 always. 'poisson': Poisson(n_iter) (Theorem
        6); K = 0 (probability ``exp(-n_iter)``) releases nothing and raises.

    shape : float, default=1.0
        ``eta`` >= 0 of the truncated negative binomial: 0 the logarithmic distribution, 1
        the geometric one. Smaller values cost less privacy (the factor ``1 + eta``) but put
        more mass on few trials.

    validation_fraction : float, default=0.2
        Share of the rows (rounded up) held out to score the trials, split by position with
        public randomness (never stratified by the private labels).

    scoring : {'accuracy', 'neg_mean_squared_error'} or None, default=None
        The released score. None: 'accuracy' for classifiers, 'neg_mean_squared_error' for
        regressors. Accuracy moves by at most ``1/n_val`` when one validation row is replaced;
        the mean squared error, with targets and predictions clipped to the range ``y_bound``
        = ``(lo, hi)``, by at most ``(hi - lo)^2 / n_val``.

    y_bound : float, (lo, hi) or None, default=None
        Public range of y for the regression score (a number ``Y`` is ``[-Y, Y]``); None takes
        the estimator's own ``y_bound`` parameter (e.g. :class:`~skdpgd.DPRidge`'s), and an
        error if there is none (it cannot be read from the private targets without leaking).

    epsilon_param : str or None, default=None
        Name of the parameter (``set_params`` style) that sets a trial's epsilon. None:
        ``'epsilon'`` if the estimator has it, else the only parameter named ``<step>__epsilon``.
        The trial's ``delta``, ``random_state`` and ``budget`` are set through the parameters of
        the same object (``<step>__delta``, ...). Anything with these parameters that passes
        the audit (see ``estimator``) works, e.g. a private pipeline, which splits its own
        ``epsilon`` over its steps.

    budget : PrivacyBudget or None, default=None
        A shared budget (stated for ``neighbouring='replace'``) charged with the whole search
        before any trial; a search that would overspend it raises
        :class:`~skdpgd.BudgetExceededError`, runs no trial and sets nothing. None uses the
        estimator's own ``budget`` parameter if it has one. The trials themselves are never
        charged one by one (a refusal after some trials would reveal K).

    allow_leaks : bool, default=False
        Turn the audit's refusals (see ``estimator``) into
        :class:`~skdpgd.PrivacyLeakWarning` (for experiments: ``epsilon_`` then does not cover
        what the flagged steps read). It does not change a private pipeline's own
        ``allow_leaks``.

    random_state : int, RandomState instance or None, default=None
        Seeds the split, K, the candidates, every trial's noise and the score noise: an int makes
        the search reproducible. None (the default) draws fresh operating-system entropy for each
        fit (unaffected by ``np.random.seed``): use it for a model you publish. An int or a
        RandomState makes the noise reproducible by anyone who knows it: for experiments (the user
        guide's "Publishing a model"). The winner's own ``random_state`` is the one you gave the
        estimator, never a seed drawn here.

    Attributes
    ----------
    best_estimator_ : estimator
        The winning trial's fitted estimator (trained on the training split). Its
        ``random_state`` and ``budget`` are yours (as on ``estimator``), never the seed the
        search drew for the trial: that seed would make the trial's noise reproducible.

    best_params_ : dict
        The winning candidate (``{}``: the estimator as given).

    best_score_ : float
        The winning trial's noisy validation score (released), clipped to the score's range
        (accuracy to [0, 1], the clipped squared error to ``[-(hi - lo)^2, 0]``; clipping is
        post-processing). It is noisy: its standard deviation is ``sensitivity / base_mu_``
        (``1 / (n_validation_ base_mu_)`` for accuracy), and as the maximum of several noisy
        scores it is biased upwards; do not read it as a held-out estimate.

    cv_results_ : dict
        Released values only, in the layout of scikit-learn's ``cv_results_`` with one row:
        ``params``, ``param_<name>``, ``mean_test_score`` (the noisy score) and
        ``rank_test_score``. The other trials, and their number, are not released.

    scoring_ : str
        The released score ('accuracy' or 'neg_mean_squared_error').

    base_mu_ : float
        GDP parameter of each trial (fit and score); ``trial_epsilon_`` is the epsilon each
        trial was given at ``delta_``.

    trial_epsilon_ : float
        Epsilon each trial's estimator was given (it spends at most ``base_mu_`` in GDP).

    epsilon_ : float
        Epsilon of the whole search at ``delta_`` (an upper bound, at most ``epsilon``).

    delta_ : float
        Delta the guarantee is stated for.

    releases_ : list of RepeatedSelection
        What the search released, as an accountant sees it (``releases_[0].rdp()``).

    neighbouring_ : str
        'replace-one'.

    n_samples_ : int
        Number of rows (public under replace-one).

    n_train_, n_validation_ : int
        Sizes of the two splits.

    Notes
    -----
    **What is hidden.** The theorem holds because K and the losing trials stay secret.
    Nothing else about them is stored or printed: the search shows no progress, since a count
    of trials done would reveal K (the trials run with ``verbose=0``). The running time of
    ``fit`` grows with K (a timing side channel, as with every sampler of noise here).

    **Cost.** The search's epsilon is larger than one trial's: at epsilon = 1, delta = 1e-5,
    ``n_iter = 10`` and the geometric distribution, each trial gets mu = 0.117, what a single
    fit gets at epsilon = 0.41 (and trains on 80% of the rows). Whether that beats the
    defaults is measured in the user guide ("When to tune privately").

    References
    ----------
    Papernot and Steinke (2022), Hyperparameter tuning with Renyi differential privacy, ICLR.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpgd import DPLogisticRegression
    >>> from skdpgd.model_selection import PrivateRandomSearchCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 4)) / 4
    >>> y = (X[:, 0] + 0.2 * rng.normal(size=3000) > 0).astype(int)
    >>> search = PrivateRandomSearchCV(
    ...     DPLogisticRegression(data_norm=2.0, classes=[0, 1]),
    ...     {"schedule": ["auto", "uniform"], "alpha": ["auto", 1e-3]},
    ...     epsilon=1.0, n_iter=4, random_state=0).fit(X, y)
    >>> search.epsilon_ <= 1.0
    True
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        "param_distributions": [dict, list],
        "epsilon": [Interval(numbers.Real, 0, np.inf, closed="right")],
        "delta": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "n_iter": [Interval(numbers.Real, 1, None, closed="left")],
        "distribution": [StrOptions({"negative_binomial", "poisson"})],
        "shape": [Interval(numbers.Real, 0, None, closed="left")],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither")],
        "scoring": [StrOptions({"accuracy", "neg_mean_squared_error"}), None],
        "y_bound": [Interval(numbers.Real, 0, None, closed="neither"), "array-like", None],
        "epsilon_param": [str, None],
        "budget": [HasMethods(["charge"]), None],
        "allow_leaks": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator,
        param_distributions,
        *,
        epsilon=1.0,
        delta=None,
        n_iter=10,
        distribution="negative_binomial",
        shape=1.0,
        validation_fraction=0.2,
        scoring=None,
        y_bound=None,
        epsilon_param=None,
        budget=None,
        allow_leaks=False,
        random_state=None,
    ):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.n_iter = n_iter
        self.distribution = distribution
        self.shape = shape
        self.validation_fraction = validation_fraction
        self.scoring = scoring
        self.y_bound = y_bound
        self.epsilon_param = epsilon_param
        self.budget = budget
        self.allow_leaks = allow_leaks
        self.random_state = random_state

    # ---------------------------------------------------------------------------------------
    def _param_names(self):
        """``(prefix, owner, params)``: the trial's privacy parameters are ``prefix +
        'epsilon'`` etc.; ``owner`` is the (unfitted) object that holds them, ``params`` the
        estimator's deep parameters."""
        params = self.estimator.get_params(deep=True)
        if self.epsilon_param is not None:
            name = self.epsilon_param
            if name not in params:
                raise ValueError(f"epsilon_param={name!r} is not a parameter of the estimator.")
        elif "epsilon" in params:
            name = "epsilon"
        else:
            found = sorted(k for k in params if k.endswith("__epsilon"))
            if len(found) != 1:
                raise ValueError(
                    "cannot tell which parameter sets a trial's epsilon: the estimator has "
                    + (
                        f"several ({found})"
                        if found
                        else "none named 'epsilon' or '<step>__epsilon'"
                    )
                    + ". Pass epsilon_param=..., or use a pipeline with its own epsilon "
                    "(one that splits it over its private steps)."
                )
            name = found[0]
        if not name.endswith("epsilon"):
            raise ValueError(f"epsilon_param must name an epsilon parameter, got {name!r}.")
        prefix = name[: -len("epsilon")]
        owner = self.estimator if prefix == "" else params[prefix[:-2]]
        if "delta" not in owner.get_params(deep=False):
            raise ValueError(
                f"the estimator has no parameter {prefix + 'delta'!r}: a trial's "
                "delta must be set for its epsilon to mean a known mu."
            )
        return prefix, owner, params

    def _check_owner(self, owner):
        """Refuse, before any trial, estimators whose fit is not a full-batch Gaussian mechanism
        under replace-one neighbours."""
        from .sgd import DPSGDClassifier, DPSGDRegressor

        own = owner.get_params(deep=False)
        if isinstance(owner, (DPSGDClassifier, DPSGDRegressor)) or own.get("batch_size"):
            raise TypeError(
                f"{type(owner).__name__} with Poisson-sampled minibatches is accounted in Renyi "
                "DP under add/remove-one neighbours; PrivateRandomSearchCV needs trials that "
                "are Gaussian-DP under replace-one (full-batch estimators: DPLogisticRegression, "
                "DPRidge, DPMLPClassifier with batch_size=None)."
            )
        steps = getattr(owner, "steps", None)
        if (
            isinstance(steps, list)
            and steps
            and privacy_capability(steps[-1][1]) == DP_MINIBATCH_ESTIMATOR
        ):
            # a private pipeline runs such a final step under add/remove-one (how it is
            # accounted, full batch or not): its trials would not be replace-one Gaussian
            raise TypeError(
                f"the pipeline's final step ({type(steps[-1][1]).__name__}) is accounted "
                "under add/remove-one neighbours inside a private pipeline; "
                "PrivateRandomSearchCV needs trials that are Gaussian-DP under replace-one. "
                "Search the estimator itself (with batch_size=None where it has one, and a "
                "public data_norm), or a pipeline ending in a full-batch DP estimator. No "
                "trial was run."
            )
        # 'auto' (DPMLPClassifier) is replace-one for full-batch fits, checked just above
        if own.get("neighbouring", "replace") not in ("replace", "auto"):
            raise ValueError(
                "PrivateRandomSearchCV states its guarantee for replace-one neighbours (N "
                "public, and a split by row position that puts a replaced row in one part "
                f"only); the estimator has neighbouring={own['neighbouring']!r}. Use "
                "neighbouring='replace'."
            )

    def _resolve_budget(self, prefix, params):
        """The search's budget, else the estimator's own, else the default budget of
        :func:`skdpgd.config_context` (charged once for the whole search)."""
        if self.budget is not None:
            return self.budget
        return resolve_budget(params.get(prefix + "budget"))

    # ---------------------------------------------------------------------------------------
    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Run the private search on (X, y).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : object
        """
        with fit_transaction(self):
            return self._fit(X, y)

    def _audit(self):
        """Refuse (or, with ``allow_leaks``, warn about) an estimator whose fit would read
        the private rows outside its epsilon: the pipeline's audit, on parameters only."""
        for message in audit_estimator(self.estimator):
            if not self.allow_leaks:
                raise ValueError(
                    message + " The search read nothing and ran no trial "
                    "(allow_leaks=True turns this into a PrivacyLeakWarning, for "
                    "experiments)."
                )
            warnings.warn(
                message + " epsilon_ does not cover it.", PrivacyLeakWarning, stacklevel=5
            )

    def _fit(self, X, y):
        self._audit()  # before anything reads X or y
        prefix, owner, params = self._param_names()
        self._check_owner(owner)
        own = owner.get_params(deep=False)
        names = {p: prefix + p for p in ("epsilon", "delta", "random_state", "budget", "verbose")}
        grids = self.param_distributions
        grids = [grids] if isinstance(grids, dict) else list(grids)
        for g in grids:
            clash = sorted(set(g) & set(names.values()))
            if clash:
                raise ValueError(
                    f"param_distributions may not set {clash}: the search sets "
                    "each trial's privacy parameters itself."
                )
        # the estimator as given is always a candidate: a grid that does not list its values
        # gets it as one more point (a public choice, before any row is read)
        candidates = (
            self.param_distributions
            if any(_lists_current_values(g, params) for g in grids)
            else grids + [{}]
        )
        classifier = is_classifier(self.estimator)
        scoring = self.scoring or ("accuracy" if classifier else "neg_mean_squared_error")
        y_bound = None
        if scoring == "neg_mean_squared_error":
            y_bound = self.y_bound if self.y_bound is not None else own.get("y_bound")
            if y_bound is None:
                raise ValueError(
                    "the regression score needs a public range of y (targets and predictions "
                    "are clipped to it, so one row moves the squared error by at most the "
                    "squared width of the range): pass y_bound, or set the estimator's "
                    "y_bound."
                )
            centre, half = target_range(y_bound)
            y_bound = (centre - half, centre + half)  # the range (lo, hi)

        # one target column (the estimators here fit one); a column vector is raveled with
        # scikit-learn's DataConversionWarning, and the score compares 1-D arrays
        y = column_or_1d(y, warn=True)
        n = int(X.shape[0]) if hasattr(X, "shape") else int(np.asarray(X).shape[0])
        if n < 4:
            raise ValueError(
                f"need at least 4 rows to split into training and validation, got n_samples={n}."
            )
        n_val = int(math.ceil(float(self.validation_fraction) * n))
        if not 1 <= n_val < n:
            raise ValueError("validation_fraction leaves an empty training or validation split.")
        delta = resolve_delta(self.delta, "replace", n_rows=n)  # the search is replace-one
        warn_if_large_delta(delta, n, type(self).__name__)
        epsilon = float(self.epsilon)
        mean = float(self.n_iter)
        if self.distribution == "negative_binomial":
            if not mean > 1.0:
                raise ValueError(
                    "n_iter must be > 1 for the truncated negative binomial "
                    "(its mean is 1 only when it is always 1: use the estimator "
                    "alone)."
                )
            gamma = truncated_negative_binomial_gamma(mean, self.shape)
        else:
            gamma = math.nan

        # --- calibration: the largest per-trial mu whose search spends at most epsilon ---
        mu = calibrate_base_mu(epsilon, delta, self.distribution, mean, self.shape, gamma)
        selection = RepeatedSelection(
            base_mu=float(mu),
            distribution=self.distribution,
            mean=float(mean),
            shape=float(self.shape),
            gamma=float(gamma),
        )
        spent = selection.epsilon(delta)
        if not spent <= epsilon:  # the calibration checked this very computation
            raise RuntimeError("the search's calibration overspends; nothing was released.")
        trial_eps = trial_epsilon(mu, delta)

        # the search's generator first: secure mode refuses a seeded random_state, before any
        # charge
        gen = fit_generator(self.random_state, type(self).__name__)
        secure = is_secure(gen)

        # --- the budget is charged before anything touches the data ---
        budget = self._resolve_budget(prefix, params)
        if budget is not None:
            if math.isinf(mu):
                raise ValueError(
                    "a search with epsilon=inf adds no noise and cannot draw from "
                    "a finite budget; nothing was released."
                )
            budget.charge(selection, label=type(self).__name__)

        # --- public randomness: split, K, candidates, seeds (all from random_state) ---
        split_seed = int(gen.integers(2**31 - 1))
        X_tr, X_val, y_tr, y_val = train_test_split(
            X, y, test_size=n_val, random_state=split_seed, shuffle=True
        )
        k = draw_n_trials(gen, self.distribution, mean, self.shape, gamma)
        if k == 0:
            raise RuntimeError(
                f"the Poisson number of trials was 0 (probability exp(-{mean:g})): the search "
                "releases nothing (its budget is spent). distribution='negative_binomial' "
                "always runs at least one trial."
            )

        y_val_arr = np.asarray(y_val)
        user = clone(self.estimator).get_params(deep=True)  # what a trial's settings replace
        best = None  # (score, params, estimator)
        # the trials are charged as the search, never again to a default budget
        with private_search_trials(), config_context(budget=False):
            for _ in range(k):
                cand = next(
                    iter(
                        ParameterSampler(
                            candidates,
                            n_iter=1,
                            random_state=int(gen.integers(2**31 - 1)),
                        )
                    )
                )
                settings = {names["epsilon"]: trial_eps, names["delta"]: delta}
                if names["random_state"] in params:
                    # secure mode: each trial draws its own secure noise (no seed)
                    settings[names["random_state"]] = (
                        None if secure else int(gen.integers(2**31 - 1))
                    )
                if names["budget"] in params:
                    settings[names["budget"]] = None  # the search was charged as a whole
                if names["verbose"] in params:
                    # a trial prints nothing: lines per trial would reveal K
                    settings[names["verbose"]] = 0
                est = clone(self.estimator).set_params(**cand, **settings)
                # plain: the score's normal drawn before the trial, as always; secure: the
                # score is released on a lattice from gen after the trial
                score_noise = gen if secure else gen.standard_normal()
                try:
                    # a trial's warnings about its released values are held: only the
                    # winner's are emitted (a losing trial, and their number, stay secret)
                    with collected_warnings() as notes:
                        est.fit(X_tr, y_tr)
                except DivergenceError:
                    # the estimators decide divergence from released values only (the noisy
                    # iterate): the trial's outcome is "diverged", which loses to every score
                    continue
                self._check_trial(est, prefix, mu)
                score = self._noisy_score(
                    est, X_val, y_val_arr, scoring, y_bound, n_val, mu, score_noise
                )
                if best is None or score > best[0]:
                    best = (score, cand, est, notes)
        if best is None:
            raise RuntimeError("every trial diverged: the search releases no model.")

        score, cand, est, notes = best
        for message, category in notes:  # deferred by the search's own transaction
            defer_warning(message, category)
        # the selection compares the raw noisy scores (no ties); what is reported is clipped to
        # the score's range (post-processing of the released value)
        score = float(
            np.clip(
                score,
                *(
                    (0.0, 1.0)
                    if scoring == "accuracy"
                    else (-((y_bound[1] - y_bound[0]) ** 2), 0.0)
                ),
            )
        )
        # the published model carries the user's privacy parameters, never the trial's: its
        # seed would let anyone holding the other rows refit a neighbouring data set with the
        # same noise, and its budget is the search's business (the epsilon and delta it was
        # fitted with are public and stay)
        est.set_params(
            **{
                names[k]: user[names[k]]
                for k in ("random_state", "budget", "verbose")
                if names[k] in params
            }
        )
        self.best_estimator_ = est
        self.best_params_ = dict(cand)
        self.best_score_ = float(score)
        self.cv_results_ = {
            "params": [dict(cand)],
            **{
                f"param_{p}": np.ma.MaskedArray(np.array([v], dtype=object))
                for p, v in cand.items()
            },
            "mean_test_score": np.array([float(score)]),
            "rank_test_score": np.array([1], dtype=np.int32),
        }
        self.scoring_ = scoring
        self.base_mu_ = mu
        self.trial_epsilon_ = trial_eps
        self.epsilon_ = spent
        self.delta_ = delta
        self.releases_ = [selection]
        self.neighbouring_ = Relation.REPLACE.words
        self.n_samples_ = n
        self.n_train_ = n - n_val
        self.n_validation_ = n_val
        if hasattr(est, "classes_"):
            self.classes_ = est.classes_
        if hasattr(est, "n_features_in_"):
            self.n_features_in_ = est.n_features_in_
        if hasattr(est, "feature_names_in_"):
            self.feature_names_in_ = est.feature_names_in_
        return self

    @staticmethod
    def _check_trial(est, prefix, mu):
        """A trial must have spent at most ``mu`` in GDP, under replace-one, full batch."""
        owner = est if prefix == "" else est.get_params(deep=True)[prefix[:-2]]
        releases = getattr(owner, "releases_", None)
        if releases is None and hasattr(est, "releases_"):
            releases = est.releases_
        if releases is None:
            raise TypeError(
                f"{type(owner).__name__} exposes no releases_ after fit: the search cannot check "
                "what a trial spent. Use a private estimator (or pipeline) that reports its "
                "releases."
            )
        if math.isinf(mu):
            return
        if any(r.sampling_rate != 1.0 for r in releases):
            raise TypeError(
                "a trial made Poisson-subsampled releases; the search accounts "
                "full-batch Gaussian trials only. Nothing was released."
            )
        if not gdp_mu_of_releases(releases, "replace") <= mu:
            raise RuntimeError(
                "a trial spent more than its share of the search's budget; nothing was released."
            )

    @staticmethod
    def _noisy_score(est, X_val, y_val, scoring, y_bound, n_val, mu, noise):
        """The trial's validation score plus Gaussian noise of standard deviation
        ``sensitivity / mu`` (so the release is mu-GDP under replace-one). ``noise``: a
        standard normal drawn before (plain), or a secure generator, which releases the score
        on a lattice (the count of right predictions exactly, an integer)."""
        pred = np.asarray(est.predict(X_val)).ravel()
        y_val = np.asarray(y_val).ravel()
        if pred.shape != y_val.shape:
            raise ValueError("the estimator's predictions do not match the targets' shape.")
        if scoring == "accuracy":
            # replacing one validation row changes the number of correct predictions by at
            # most 1: the accuracy's sensitivity is 1 / n_val (n_val public)
            right = float(np.sum(pred == y_val))
            if is_secure(noise) and not math.isinf(mu):
                # the integer count, sensitivity 1, noise 1 / mu: exact on the lattice
                return gaussian(right, 1.0 / mu, noise, 1.0, exact=True) / n_val
            value = right / n_val
            sensitivity = 1.0 / n_val
        else:
            # targets and predictions clipped to the range [lo, hi]: each squared error lies
            # in [0, (hi - lo)^2], so one replaced row moves the mean by at most
            # (hi - lo)^2 / n_val (4 B^2 / n_val for the range [-B, B])
            lo, hi = y_bound
            y_c = np.clip(np.asarray(y_val, dtype=float), lo, hi)
            p_c = np.clip(np.nan_to_num(pred.astype(float), nan=0.5 * lo + 0.5 * hi), lo, hi)
            value = -float(np.sum((y_c - p_c) ** 2, dtype=np.float64)) / n_val
            sensitivity = (hi - lo) ** 2 / n_val
        if math.isinf(mu):
            return value
        # rounding: the count of correct rows is an exact integer, but dividing it by n_val
        # rounds, and the squared errors' float64 sum rounds in any order: both within the
        # rounding margin of a sum of n_val terms (public), which raises the sensitivity
        sensitivity *= 1.0 + sum_rounding_margin(n_val, 1)
        if is_secure(noise):
            return gaussian(value, sensitivity / mu, noise, sensitivity)
        return value + (sensitivity / mu) * noise

    # ---------------------------------------------------------------------------------------
    @available_if(_best_estimator_has("predict"))
    def predict(self, X):
        """Predict with the best trial's estimator."""
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    @available_if(_best_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the best trial's estimator."""
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    @available_if(_best_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities of the best trial's estimator."""
        check_is_fitted(self)
        return self.best_estimator_.predict_log_proba(X)

    @available_if(_best_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the best trial's estimator."""
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    @available_if(_best_estimator_has("score"))
    def score(self, X, y):
        """The best trial's estimator's ``score`` (on data you may score in the clear)."""
        check_is_fitted(self)
        return self.best_estimator_.score(X, y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = self.estimator.__sklearn_tags__()
        tags.estimator_type = sub.estimator_type
        tags.input_tags.sparse = sub.input_tags.sparse
        if sub.classifier_tags is not None:
            tags.classifier_tags = sub.classifier_tags
        if sub.regressor_tags is not None:
            tags.regressor_tags = sub.regressor_tags
        return tags

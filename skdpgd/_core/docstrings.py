"""Docstring fragments shared by the estimators' parameter and attribute sections."""

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


_PRIVACY_PARAMS_DOC = """
    epsilon : float, default=1.0
        Privacy budget epsilon (> 0). ``np.inf`` disables the noise (a non-private fit with
        the same algorithm).

    delta : float or None, default=None
        Privacy budget delta in (0, 1). None uses ``min(1e-5, 1 / n_samples**2)``, far below
        ``1 / n_samples`` (a delta near 1/n would allow releasing one example in the clear).

    data_norm : float or None, default=None
        Public bound on the L2 norm of a row of X. Rows with a larger norm are scaled down to
        it (per-row clipping) before they touch the model. None infers it from the data as the
        largest row norm and emits a :class:`~skdpgd.PrivacyLeakWarning`, because a bound read
        from the private data is not covered by epsilon.
"""

_ROW_CLIP_DOC = """
    row_clip : {'auto', 'data_norm'}, default='auto'
        The norm rows are clipped to during training. 'data_norm' clips to ``data_norm``.
        'auto' spends a small share of the budget (at most 10% of the GDP mu^2, accounted in
        ``epsilon_``) on a Gaussian-mechanism estimate m of the mean row norm and clips rows
        to ``0.35 max(1, s / 20) ** 0.5 m`` (at most ``data_norm``), ``s = N mu / sqrt(D)`` the
        budget's signal-to-noise ratio: a noisy mechanism pays noise for the worst-case row,
        so with a small budget clipping at a typical norm gives far more signal per unit of
        noise; as the budget grows the factor grows until nothing is clipped, so the fit
        converges to the non-private one. Prediction always uses the rows as given.
"""

_SCHEDULE_PARAMS_DOC = """
    schedule : str or Schedule, default='auto'
        How the noise is spread over the steps, how many steps there are and their size.
        'auto' chooses the mechanism and its schedule from public constants only (DP damped
        Newton or sufficient statistics when the budget's signal-to-noise ratio is high and
        there are at most 256 coefficients, output perturbation above that, noisy gradient
        descent otherwise; see :class:`~skdpgd.schedules.Auto`);
        'uniform': constant noise, T from Hong et al. (2022), Theorem 4.2; 'hong': their
        dynamic schedule (Theorem 4.4, or 4.7 with momentum); 'pur': Fay et al. (2023)
        data-independent schedules; 'output': output perturbation; 'exponential':
        geometrically decaying noise; 'newton': DP damped Newton (logistic losses: a gradient
        and a Hessian release per iteration, the Hessian over a Poisson subsample of the rows
        at a public rate, 4 iterations unless ``max_iter`` says otherwise; 'auto' runs it with
        8 and releases Hessians at iterations 0 and 4 only unless they are cheap, see
        :class:`~skdpgd.schedules.Newton`);
        'ssp': sufficient statistics, one noisy release of ``X'X`` and one of ``X'y``
        (AdaSSP; DPRidge only). A :class:`~skdpgd.schedules.Schedule` instance is
        accepted too. ``schedule_`` tells which one ran.

    max_iter : int or 'auto', default='auto'
        Number of gradient steps. 'auto' lets the schedule choose it from theory and public
        constants (capped at ``skdpgd.policy.MAX_AUTO_ITER``). An integer with
        ``schedule='auto'`` keeps the choice to gradient descent. Choosing it by looking at
        results on the private data (e.g. with GridSearchCV) leaks privacy.

    momentum : float in [0, 1), default=0.0
        Momentum of the gradient steps (bias-corrected moving average of the noisy gradients,
        Hong et al., Eq. 3). 0 is plain gradient descent.

    neighbouring : {'auto', 'replace', 'add_remove'}, default='auto'
        Neighbouring relation the guarantee is stated for: datasets that differ by replacing
        one example (N is public; sensitivity of the gradient sum 2G) or by adding/removing one
        (N is private; sensitivity G; the normaliser is the public ``n_samples``, or a noisy
        count). 'auto' is the relation of ``budget`` when one is given, else replace-one. A
        replace-one fit charged to an add/remove-one budget is refused before anything is
        released: it reads and publishes the exact N, which that budget keeps private.

    n_samples : float or None, default=None
        Only with ``neighbouring='add_remove'``: a public stand-in for the number of training
        rows, used as the normaliser of the average loss, in the schedule's T and in the
        default delta (its value need not be exact: privacy holds whatever it is). None
        releases a noisy count of the rows first, spending 2% of the budget's mu^2
        (accounted). Under replace-one N is public and this is ignored.

    random_state : int, RandomState instance or None, default=None
        Seeds the one generator all noise is drawn from. None (the default) draws fresh
        operating-system entropy for each fit (unaffected by ``np.random.seed``): use it for a
        model you publish. An int or a RandomState makes the noise reproducible by anyone who knows
        it: for experiments (the user guide's "Publishing a model").

    budget : PrivacyBudget or None, default=None
        A shared budget this fit is charged to (see :class:`~skdpgd.PrivacyBudget`); a fit
        that would overspend it raises :class:`~skdpgd.BudgetExceededError` and releases
        nothing.

    verbose : int, default=0
        1 prints what the fit releases (mechanism, number of releases, the public N, the
        budget) and, once a run has lasted 2 seconds, its progress on stderr (a tqdm bar when
        tqdm is installed, else a line per tenth of the steps); 2 prints about ten progress
        lines instead (step, epsilon spent so far, elapsed time).
        Only public or already released values are printed: never the training loss, which
        is a function of the private data.
"""

_FITTED_PRIVACY_DOC = """
    epsilon_ : float
        Epsilon spent (an upper bound, computed from the noise actually used; never above
        ``epsilon``).

    delta_ : float
        Delta the guarantee is stated for.

    mu_ : float
        Gaussian-DP parameter of the fit (the whole run, including the row-norm query, is
        mu-GDP, exactly).

    rho_ : float
        zCDP parameter (``mu_**2 / 2``).

    noise_multipliers_ : ndarray of shape (`n_iter_`,)
        Noise standard deviation of each step divided by the sensitivity of the gradient sum.

    n_iter_ : int
        Number of noisy iterations of the returned model: gradient or Newton steps, 1 for
        output perturbation (one release of the minimiser), 0 for the intercept-only model
        and the sufficient statistics.

    n_iter_theory_ : float
        Number of steps the schedule's theory asked for, before the automatic cap.

    step_sizes_ : ndarray of shape (`n_iter_`,)
        Step size of each step.

    schedule_ : str
        The schedule that was used.

    mechanism_ : str
        'gradient' (noisy gradient descent) or 'output' (output perturbation).

    hessian_rates_ : ndarray or None
        DP damped Newton: the public Poisson rate of the rows each Hessian release summed over
        (1: all rows), also when it ran from the warm start of the class prior; None for the
        other mechanisms (and when the warm start switched to the intercept-only model).

    neighbouring_ : str
        'replace-one' or 'add/remove-one'.

    data_norm_ : float
        The public row-norm bound.

    row_clip_ : float
        The norm rows were clipped to during training.

    row_clip_noise_multiplier_ : float or None
        Noise multiplier of the private mean-norm query (``row_clip='auto'``), else None.

    clip_norm_ : float
        Bound on one example's gradient norm (the G of the sensitivity).

    alpha_ : float
        The L2 penalty used.

    n_samples_ : float
        The public N the mechanism used (the true N under replace-one).

    count_noise_multiplier_ : float or None
        Noise multiplier of the noisy row count (add/remove-one without ``n_samples``).

    noise_ : {'gaussian', 'discrete'}
        The noise the fit drew: ``'gaussian'`` (floating point, the default mode) or
        ``'discrete'`` (exact discrete Gaussian on a lattice, in secure mode: see
        :func:`skdpgd.config_context` and the Security model page).

    releases_ : list of Release
        Every Gaussian release of the fit (:class:`skdpgd.accounting.Release`: multipliers,
        relation, sensitivity per relation), which ``mu_`` composes and a budget charges.
"""

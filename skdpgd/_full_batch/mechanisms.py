"""Full-batch mechanisms: what a fit releases, and how it computes through the reductions.

A mechanism does two things and keeps them apart:

* ``releases(setup, plan)`` *describes* the Gaussian releases the fit will make, as release
  shapes (relative noise multipliers) and the L2 sensitivity of each released quantity under
  both neighbouring relations. The accountant scales the shapes to the budget, the budget
  charges each release by its own rule; nothing has touched the data yet.
* ``run(rows, setup, plan, releases, gen)`` computes: it asks the backend ``rows`` for sums
  over the training rows (:mod:`skdpgd._compute.backends`), adds the noise of each release from the
  one generator ``gen``, and post-processes.

Everything runs in the *kernel coordinates* of :mod:`skdpgd._compute.backends`: rows divided by the
intercept column c, so that the column is 1. A problem with column c is the same problem in
the coordinates ``w' = c w`` on rows ``x / c``: losses and clipping match, a gradient bound G
becomes ``G / c``, the penalty ``alpha / c^2``, a step ``1 / M`` becomes ``c^2 / M``, and
``w = w' / c`` maps back (the intercept is unchanged).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from .._core import prior as _prior
from .._compute import small_problems as _small_problems
from .._compute.kernels import _noisy_update as noisy_update
from .._core.noise import gaussian, is_secure, kernel_source, side_stream
from .._core.setup import CLASS_COUNT_SENSITIVITY, SELECTION_SENSITIVITY
from .._core.progress import Progress
from ..accounting import (
    Release,
    compose_gdp,
    gdp_mu_of_releases,
    relative_multiplier,
    rounding_gamma,
    sum_rounding_margin,
)
from ..exceptions import DivergenceError
from ..penalties import Penalty
from ..schedules import Problem


def rounding_dim(n_outputs, n_features):
    """The ``dim`` of :func:`~skdpgd.accounting.sum_rounding_margin` for every full-batch
    release: ``2 K (d + 1) + 9``.

    The margin assumes each term is computed within ``gamma_{dim + 8}`` of its bound. A
    gradient term (``w_i min(1, C / ||g_i||) l'(z_i) x~_i``) rounds a norm over at most
    ``K (d + 1)`` coordinates once (``gamma_{d/2 + 4}`` for the row's scale, the norm of
    ``l'`` over K outputs, the clip factor and a few products). A second-moment term (the
    Hessian sums ``w_i h_i x'_i x'_i^T``, ``X'X``) carries the row's scale twice (``s_i^2``:
    ``gamma_{d + 8}``) and three more products; the multinomial Hessian's class factor, the
    softmax's normalisation over K outputs (``||diag(p) - p p^T||_F <= (1 + gamma_{K+1}) / 2``
    for computed probabilities). ``2 K (d + 1) + 9`` covers both with room; it is the same
    rule as DPPCA's second moment (``2 d + 9``)."""
    return 2 * int(n_outputs) * (int(n_features) + 1) + 9


def rounding_margin(n_rows_bound, n_outputs, n_features):
    """The rounding margin of the full-batch road's releases: every Gaussian release of a sum
    (gradient sums, Hessian sums, sufficient statistics, class and target sums, a selection's
    counts, the row-norm statistic) has its sensitivity raised by this factor at calibration
    (:meth:`skdpgd._core.fit.Road.calibrate`). ``n_rows_bound`` is the public bound on the rows
    summed (:meth:`skdpgd._core.fit.Fit.rows_summed_bound`)."""
    return sum_rounding_margin(n_rows_bound, rounding_dim(n_outputs, n_features))


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a mechanism's ``run`` returns: the model in the estimator's coordinates, and what a
    branch taken after the first release changed.

    ``coef`` (n_outputs, d), ``intercept`` (n_outputs,); ``model``: the model returned when it
    is not the mechanism's own fit (``'prior'``: the intercept-only model); ``releases``: the
    releases actually made when a branch chose them after the first (the same GDP total under
    the fit's relation), None for the calibrated ones; ``hessian_rates``: the Poisson rates of
    DP damped Newton's Hessian releases (public), None when no Newton step ran;
    ``candidate``: the index of the candidate a choice among fits returned
    (:class:`skdpgd._full_batch.choice.Choice`), None otherwise.
    """

    coef: np.ndarray
    intercept: np.ndarray
    model: str | None = None
    releases: tuple | None = None
    hessian_rates: tuple | None = None
    candidate: int | None = None


def start_bound(setup):
    """A public bound on the intercept a fit may start from (the centre of output
    perturbation's intercept penalty): a regressor's warm start from its noisy target mean
    (:func:`skdpgd._core.prior.start_bound`), else 0 (classifiers' exact minimisers start at 0)."""
    y_bound = getattr(setup.loss, "y_bound", None)
    if not (setup.fit_intercept and setup.loss.regression and y_bound is not None):
        return 0.0
    log_link = getattr(setup.loss, "link", "identity") == "log"
    return math.sqrt(setup.n_outputs) * _prior.start_bound(y_bound, setup.n_public, log_link)


@dataclass(frozen=True)
class Setup:
    """Public constants of one full-batch fit (never read from the data).

    Attributes
    ----------
    loss : Loss
        The loss, with its kernel code and constants.
    n_outputs : int
        Rows of ``coef`` (1, or K for the multinomial loss).
    fit_intercept : bool
    column : float
        The intercept column c (1 without intercept).
    n_public : float
        The public N: the normaliser of the average loss (the true N under replace-one; a
        public parameter or a noisy count under add/remove-one).
    relation : {'replace', 'add_remove'}
        The neighbouring relation the noise is calibrated for.
    lipschitz : float
        G, the bound on one example's gradient norm (original coordinates).
    row_bound : float
        Bound on the augmented row norm ``sqrt(R^2 + c^2)`` (original coordinates).
    penalty : Penalty
        The penalty on the weights (:mod:`skdpgd.penalties`, original coordinates; the
        intercept is not penalised): its smooth part's coefficient :attr:`l2` and the proximal
        step of its non-smooth part.
    problem : Problem
        The constants the schedules read.
    """

    loss: object
    n_outputs: int
    fit_intercept: bool
    column: float
    n_public: float
    relation: str
    lipschitz: float
    row_bound: float
    penalty: Penalty
    problem: Problem
    progress: Progress = None
    #: the public bound on the rows' norms (rows beyond it are outside the declared domain):
    #: the rows a selection scores its candidates on are clipped to it
    data_norm: float = math.inf
    #: a public upper bound on the rows summed (:meth:`skdpgd._core.fit.Fit.rows_summed_bound`): the
    #: rounding margin's n, and output perturbation's bound on its computed gradient's error
    rows_bound: float | None = None

    @property
    def l2(self):
        """The coefficient of the penalty's smooth part ``l2 / 2 ||w||^2`` (original
        coordinates): the objective's strong convexity."""
        return self.penalty.l2

    @property
    def grad_sensitivity(self):
        """L2 sensitivity of a clipped gradient sum: 2G replace-one, G add/remove-one."""
        return {"replace": 2.0 * self.lipschitz, "add_remove": self.lipschitz}


class Mechanism:
    """Base class; see the module docstring. A mechanism carries out a schedule's plan."""

    name = "mechanism"
    #: ``n_iter_`` reports the plan's steps (noisy iterations, or output perturbation's one
    #: release of the minimiser); else 0
    counts_iterations = False
    #: ``run`` takes ``start=``, the point its iterations start from (a classifier's warm start)
    has_start = False
    #: a regressor's warm start passes the noisy target mean as ``start=`` (gradient: the
    #: steps start there; output: the intercept's penalty is centred there)
    starts_at_target_mean = False
    #: ``step_sizes_`` reports the plan's step sizes (else empty)
    reports_step_sizes = False
    #: may run inside a warm start from the prior (:class:`WarmStart`); or only with a
    #: selection
    warm_start = False
    warm_start_with_selection = False
    #: a classifier's warm start needs a selection (no starting point)
    classifier_start_needs_selection = False
    #: the intercept-only model (``schedule_`` 'prior')
    intercept_only = False
    #: runs a penalty with a non-smooth part (:attr:`skdpgd.penalties.Penalty.smooth` False),
    #: e.g. L1: a mechanism whose privacy or solver rests on a smooth objective says False
    accepts_nonsmooth = False

    #: the properties above, which :class:`WarmStart` takes from the mechanism it wraps
    PROPERTIES = (
        "counts_iterations",
        "has_start",
        "starts_at_target_mean",
        "reports_step_sizes",
        "warm_start",
        "warm_start_with_selection",
        "classifier_start_needs_selection",
        "intercept_only",
        "accepts_nonsmooth",
    )

    def __init__(self, schedule):
        self.schedule = schedule

    def releases(self, setup, plan):  # pragma: no cover - interface
        raise NotImplementedError

    def run(self, rows, setup, plan, releases, gen):  # pragma: no cover - interface
        raise NotImplementedError


def _check_finite(bad, step):
    if bad:
        raise DivergenceError(
            f"the fit diverged: the iterate is not finite after step {step + 1} (a released "
            "value; non-finite per-example gradients contribute 0 and decide nothing). Lower "
            "the step size (max_iter/schedule) or raise alpha."
        )


class GradientDescent(Mechanism):
    """Noisy full-batch gradient descent whose noise shape, T and steps come from a schedule.

    Step t releases ``S_t = sum_i w_i clip_G(grad_i(theta_t)) + N(0, (z_t Delta)^2 I)``:
    every term has norm ``<= G`` (closed-form clip in the kernels, weights in [0, 1]), so the
    sum's sensitivity is ``Delta = 2G`` (replace-one) or ``G`` (add/remove-one). Then, as
    post-processing, ``g_t = S_t / N_pub + l2 w`` (the penalty's smooth part; intercept not
    penalised) and, with momentum beta (Hong et al., Eq. 3, bias-corrected),
    ``v_t = beta v + (1 - beta) g_t``, ``theta -= step_t v_t / (1 - beta^t)``; then, for a
    penalty with a non-smooth part ``h`` (L1), the weights become ``prox_{step_t h}(w)``
    (proximal gradient descent). The prox is a function of the released iterate alone: more
    post-processing, so the fit's privacy is that of the gradient sums, unchanged.
    """

    name = "gradient"
    counts_iterations = has_start = starts_at_target_mean = reports_step_sizes = True
    warm_start = True
    accepts_nonsmooth = True

    def releases(self, setup, plan):
        # float64 sums of clipped terms: the road's rounding margin raises 2G / G at
        # calibration (rounding_margin, Road.calibrate)
        return [
            Release("gradient sums", plan.noise_multipliers, setup.grad_sensitivity, setup.relation)
        ]

    def run(self, rows, setup, plan, releases, gen, start=None):
        (grads,) = releases
        c = setup.column
        k_out, d = setup.n_outputs, rows.n_features
        coef = np.zeros((k_out, d))
        intercept = np.zeros(k_out) if start is None else np.array(start, dtype=float)
        vcoef = np.zeros_like(coef)
        vint = np.zeros_like(intercept)
        std = grads.noise_std / c  # noise on the sum in kernel coordinates
        steps = plan.step_sizes * c * c
        penalty = setup.penalty
        l2 = penalty.l2 / (c * c)  # the smooth part's coefficient in kernel coordinates
        clip = setup.lipschitz / c
        beta = float(setup.problem.momentum)
        beta_pow = 1.0
        loss = setup.loss
        n_norm = float(setup.n_public)
        # the same update in numpy where the rows are (nothing to compile on a first fit)
        update = _small_problems.noisy_update if getattr(rows, "small", False) else noisy_update
        # the noise source: the generator, or secure mode's lattice release of the k_out (d + 1)
        # coordinates of each step, sensitivity in kernel coordinates
        source = kernel_source(
            gen, grads.own_sensitivity / c, k_out * (d + int(setup.fit_intercept))
        )
        for t in range(plan.n_steps):
            # a non-finite per-example gradient contributes 0 and decides nothing (stopping on
            # its count would reveal whether one extreme row is present); the fit stops only
            # on the released iterate below
            gcoef, gint, _ = rows.grad_sum(coef, intercept, loss.code, loss.param, clip)
            if setup.progress is not None:
                setup.progress.released(grads.multipliers[t : t + 1], t, plan.n_steps)
            beta_pow *= beta
            # adds N(0, std_t^2) to each coordinate of the sum (weights, then intercepts, in
            # order, from gen), then post-processing: the (momentum) step, in place
            update(
                gcoef[None],
                gint[None],
                float(std[t]),
                n_norm,
                l2,
                float(steps[t]),
                beta,
                beta_pow,
                setup.fit_intercept,
                coef,
                intercept,
                vcoef,
                vint,
                source,
            )
            if not penalty.smooth:
                # post-processing of the released iterate (no privacy cost): the proximal
                # step of the non-smooth part, step_t in original coordinates. In kernel
                # coordinates w' = c w the part is h(w' / c), whose prox with step c^2 step_t
                # is c prox_{step_t h}(w' / c).
                coef[...] = c * penalty.prox(coef / c, float(plan.step_sizes[t]))
        if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(intercept))):
            _check_finite(-1, plan.n_steps - 1)
        return Outcome(coef / c, intercept)


class OutputPerturbationMechanism(Mechanism):
    """Solve the regularised problem exactly, release the solution plus Gaussian noise.

    ``F(theta) = (1/N_pub) sum_i w_i l_i(theta) + alpha/2 ||theta||^2`` (intercept penalised
    too, so F is alpha-strongly convex in every coordinate) with G-Lipschitz clipped losses;
    ``alpha`` is the penalty's ``l2``. The argument needs a smooth penalty (no
    ``accepts_nonsmooth``): the registry refuses an L1 part here.
    Its exact minimiser moves by at most ``Delta / (N_pub alpha)`` between neighbours
    (Delta = 2G replace-one, G add/remove-one). The computed point is certified within
    ``g / alpha`` of the exact minimiser (``g = tol * Delta_own / N_pub``), which adds
    ``2 g / alpha``: the release has sensitivity ``Delta_r / (N_pub alpha) + 2 g / alpha``
    under relation r.

    The certificate is unconditional, so the fit never fails after the budget was charged
    (a failure would be a data-dependent bit): L-BFGS is run first, and its point is used
    when ``||grad F|| <= g``; then Nesterov steps from it, stopping on the certificate;
    otherwise plain gradient descent from 0 with step ``1/M_w`` runs for the number of steps
    after which the contraction ``(1 - alpha/M_w)^T ||theta*||``, with
    ``||theta*|| <= ||grad F(0)|| / alpha <= r G / alpha``, is below ``g / (2 alpha)``. All
    branches land within ``g / alpha`` of the minimiser, so the sensitivity holds whichever
    ran.

    Here ``r = max(1, sum_i w_i / N_pub)`` and ``M_w = r L + alpha`` (L the loss's smoothness
    bound) are the smoothness and gradient scale of *this* dataset's F: the weights can sum to
    more than the public normaliser (add/remove-one with a public ``n_samples`` below N, or a
    noisy count that lands low), and a step 1/M from the public constants alone would then
    exceed 2 / (true smoothness) and converge to nothing. Reading the data here is safe: the
    sensitivity argument needs only that the point computed on *each* dataset lies within
    ``g / alpha`` of that dataset's minimiser, however it was computed; what the computation
    reads is not released (the step count shows only in the running time, which the package
    does not protect, as its peers do not).

    **Floating point.** The certificate reads a *computed* gradient, whose rounding is of the
    order of the float64 sum over N rows (``gamma_N r G`` in the worst case, which at
    ``N = 1e6`` is half of the default ``g``). So a point is certified when the computed norm
    plus a bound on that rounding (:meth:`gradient_error`) is at most g: the exact gradient is
    then at most g. The contracting descent's steps round too; ``g`` is raised (a public
    function of N, G, alpha and the loss, :meth:`tolerance`) to four times
    :meth:`descent_error`, the public bound on what rounding adds per step, wherever that is
    larger than ``tol * Delta / N`` (N beyond about 1e5, or a very small alpha), so the
    descent's rounding moves it by at most ``g / (4 alpha)`` and it still lands within
    ``g / alpha``. The exact minimiser's own sensitivity is that of clipped terms computed in
    floats: each term is within ``gamma_{dim + 8}`` of its bound, which the rounding margin of
    the release (the road's, applied at calibration to the whole sensitivity) covers.
    """

    name = "output"
    #: its sensitivity rests on the strong convexity of a smooth objective
    accepts_nonsmooth = False
    counts_iterations = starts_at_target_mean = warm_start = True
    classifier_start_needs_selection = True

    def tolerance(self, setup, plan):
        """The certified gradient norm g (original coordinates): ``tol * Delta_own / N_pub``,
        or four times :meth:`descent_error` where that is larger. Public: parameters, N, the
        loss's constants and the public bound on the rows summed."""
        own = setup.grad_sensitivity[setup.relation]
        g = plan.solver_tol_factor * own / setup.n_public
        return max(g, 4.0 * self.descent_error(setup, g))

    @staticmethod
    def _rows_bound(setup):
        if setup.rows_bound is None:
            raise ValueError(
                "output perturbation needs a public bound on the rows summed (Setup.rows_bound)."
            )
        return float(setup.rows_bound)

    @classmethod
    def gradient_error(cls, setup, theta_norm, r, computed_norm=0.0):
        """An upper bound on ``||grad F(theta) - computed grad F(theta)||`` in the
        certificate's coordinates ``(w, b~)``, at a point of norm ``theta_norm`` there, with
        the weights summing to ``r N_pub``; ``computed_norm`` is the computed gradient's norm
        (the rounding of the norm itself and of the change of coordinates).

        Per row, the computed margin ``z_i`` is within ``gamma_{d+2} ||x~_i|| ||theta||`` of
        the exact one (Higham 3.1, for the dot product in any order), and the clipped
        derivative is ``L_l``-Lipschitz in it with ``L_l ||x~_i||^2 <= L`` (the loss's
        smoothness bound): ``L gamma ||theta||``, with ``gamma_{2d+16}`` covering the row's
        rounded scale; the clip and the products round each term by at most
        ``gamma_{dim+8} w_i G`` (:func:`rounding_dim`); the float64 sum of at most n terms
        (n: the public bound on the rows) in any order adds ``gamma_n sum_i ||t_i|| <=
        gamma_n r N_pub G``. Dividing by ``N_pub``, adding the penalty's gradient
        ``alpha (theta - theta_0)`` (``||theta_0||``: the public start bound) and the vector's
        norm add a few roundings, ``gamma_{D+4}``."""
        p = setup.problem
        k_out = setup.n_outputs
        D = int(p.n_params)
        d = D // k_out - int(setup.fit_intercept)
        G, alpha = float(setup.lipschitz), float(setup.l2)
        L = float(p.smoothness) - alpha  # the loss's smoothness bound
        g_term = rounding_gamma(rounding_dim(k_out, d) + 8)
        n = cls._rows_bound(setup)
        per_row = (
            L * rounding_gamma(2 * d + 16) * theta_norm
            + (rounding_gamma(n + 1) + g_term) * (1.0 + g_term) * G
        )
        start = start_bound(setup) / setup.column
        penalty = rounding_gamma(4) * alpha * (theta_norm + start)
        outer = rounding_gamma(D + 4)
        return (1.0 + outer) * (r * per_row + penalty) + outer * computed_norm

    @classmethod
    def descent_error(cls, setup, g):
        """A public bound on what rounding adds to one step of the contracting descent (in
        units of the gradient): the computed gradient's error (:meth:`gradient_error`) at
        the largest norm an iterate can have, ``Theta = ||theta_0|| + (2 r G + g) / alpha``
        (the start is within ``r G / alpha`` of the minimiser, and so is every iterate, up to
        ``g / alpha``), and the rounding of the step itself, ``2 gamma_4 M Theta``. The
        descent's iterates then stay within ``(1 - alpha/M)^T r G / alpha + E / alpha`` of the
        minimiser, below ``g / alpha`` whenever ``E <= g / 4``. ``r`` is its public bound,
        ``max(1, n / N_pub)`` (weights at most 1)."""
        G, alpha = float(setup.lipschitz), float(setup.l2)
        r = max(1.0, cls._rows_bound(setup) / float(setup.n_public))
        theta = start_bound(setup) / setup.column + (2.0 * r * G + g) / alpha
        M = cls._smoothness(setup, r)
        return cls.gradient_error(setup, theta, r) + 2.0 * rounding_gamma(4) * M * theta

    @classmethod
    def _certifies(cls, setup, theta, grad, g, r):
        """Whether ``theta`` (kernel coordinates) is certified: the computed gradient's norm
        ``c ||grad||`` in the coordinates (w, b~) plus its rounding (:meth:`gradient_error`)
        is at most g, so the exact gradient's norm is."""
        c = setup.column
        computed = c * float(np.linalg.norm(grad))
        if not math.isfinite(computed):
            return False
        theta_norm = float(np.linalg.norm(theta)) / c
        return computed + cls.gradient_error(setup, theta_norm, r, computed) <= g

    @classmethod
    def _weight_scale(cls, rows, setup):
        """``r = max(1, sum_i w_i / N_pub)``, rounded up (the computed sum is within
        ``gamma_n`` of the exact one)."""
        up = max(1e-9, rounding_gamma(cls._rows_bound(setup) + 2))
        return max(1.0, rows.weight_sum() / setup.n_public * (1.0 + up))

    def releases(self, setup, plan):
        g = self.tolerance(setup, plan)
        a, n = setup.l2, setup.n_public
        # g certifies the exact gradient (a computed norm plus its rounding, class docstring);
        # the road's rounding margin raises the whole sensitivity at calibration (the clipped
        # terms of the exact objective, computed in floats)
        sens = {r: s / (n * a) + 2.0 * g / a for r, s in setup.grad_sensitivity.items()}
        return [Release("solution", plan.noise_multipliers, sens, setup.relation)]

    def run(self, rows, setup, plan, releases, gen, start=None):
        """``start`` (a released intercept, or None for 0) is the centre of the intercept's
        penalty ``alpha/2 (b~ - b~_0)^2``: a public point, so F stays alpha-strongly convex
        with the same sensitivity, and the contracting descent starts from it."""
        (release,) = releases
        c = setup.column
        k_out, d = setup.n_outputs, rows.n_features
        n = setup.n_public
        loss = setup.loss
        clip = setup.lipschitz / c
        # F is alpha-strongly convex in the coordinates (w, b~) of the augmented rows
        # (x, c), where b~ = b' / c is the weight of the intercept column; in kernel
        # coordinates (w', b') = c (w, b~) the penalty is alpha / c^2 on both.
        alpha = setup.l2 / (c * c)
        n_coef = k_out * d

        def unpack(theta):
            coef = np.ascontiguousarray(theta[:n_coef].reshape(k_out, d))
            b = theta[n_coef:] if setup.fit_intercept else np.zeros(k_out)
            return coef, np.ascontiguousarray(b)

        b0 = np.zeros(k_out) if start is None else np.asarray(start, dtype=float)

        def fun(theta):
            coef, b = unpack(theta)
            f, gcoef, gint = rows.objective(coef, b, loss.code, loss.param, clip)
            f = f / n + 0.5 * alpha * float(np.sum(coef * coef))
            gcoef = gcoef / n + alpha * coef
            if setup.fit_intercept:
                f += 0.5 * alpha * float(np.sum((b - b0) ** 2))
                return f, np.concatenate([gcoef.ravel(), gint / n + alpha * (b - b0)])
            return f, gcoef.ravel()

        # the certificate in the coordinates (w, b~): their gradient is c times the kernel one;
        # a computed gradient's rounding is added to its norm (class docstring)
        g = self.tolerance(setup, plan)
        # this dataset's smoothness and gradient scale (see the class docstring), rounded up
        r = self._weight_scale(rows, setup)

        theta = np.zeros(n_coef + (k_out if setup.fit_intercept else 0))
        if setup.fit_intercept:
            theta[n_coef:] = b0
        origin = theta.copy()
        certified = False
        for _ in range(2):
            res = minimize(
                fun,
                theta,
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": 5000, "gtol": g * 1e-3 / c, "ftol": 0.0, "maxcor": 30},
            )
            if not np.all(np.isfinite(res.x)):
                break
            theta = res.x
            if self._certifies(setup, theta, fun(theta)[1], g, r):
                certified = True
                break
        if not certified:
            # L-BFGS's line search stalls when the objective's changes fall below its rounding
            # (large N, a tight g): finish with accelerated gradient steps, which need no
            # objective values, and stop as soon as the certificate holds
            theta, certified = self._polish(fun, theta, setup, g, r)
        if not certified:
            theta = self._contracting_descent(fun, origin, setup, g, r)
        if setup.progress is not None:
            setup.progress.released(release.multipliers, 0, 1)
        coef, b = unpack(theta)
        # the release: (w, b~) + N(0, std^2 I); the intercept b' = c b~ gets c times the noise
        coef = coef / c
        std = float(release.noise_std[0])
        if std > 0 and is_secure(gen):
            # one lattice release of the vector (w, b~) the sensitivity is stated for
            theta = np.concatenate([coef.ravel(), b / c]) if setup.fit_intercept else coef.ravel()
            noisy = gaussian(theta, std, gen, release.own_sensitivity)
            coef = noisy[:n_coef].reshape(coef.shape)
            if setup.fit_intercept:
                b = c * noisy[n_coef:]
        elif std > 0:
            coef = coef + std * gen.standard_normal(coef.shape)
            if setup.fit_intercept:
                b = b + c * std * gen.standard_normal(b.shape)
        return Outcome(coef, b)

    @staticmethod
    def _smoothness(setup, r):
        """``M_w = r L + alpha``: the smoothness of F when the weights sum to ``r N_pub``."""
        return (setup.problem.smoothness - setup.l2) * r + setup.l2

    @classmethod
    def _fallback_steps(cls, setup, g, r=1.0):
        """The number of steps ``1/M_w`` from 0 that certifies ``g / alpha`` (see below)."""
        rate = -math.log1p(-setup.l2 / cls._smoothness(setup, r))
        return int(math.ceil(math.log(2.0 * r * setup.lipschitz / g) / rate)) + 1

    @classmethod
    def _polish(cls, fun, theta, setup, g, r=1.0):
        """Nesterov steps from ``theta`` until ``||grad F|| <= g`` (at most the public number
        of steps of :meth:`_contracting_descent`). Returns ``(theta, certified)``.

        Only the certificate matters for the sensitivity (a certified point is within
        ``g / alpha`` of the minimiser, however it was reached), so stopping on it is safe; an
        uncertified result is discarded by the caller.
        """
        M = cls._smoothness(setup, r)
        kappa = M / setup.l2
        beta = (math.sqrt(kappa) - 1.0) / (math.sqrt(kappa) + 1.0)
        step = setup.column**2 / M
        prev = theta.copy()
        y = theta.copy()
        for _ in range(cls._fallback_steps(setup, g, r)):
            grad = fun(y)[1]
            if not np.all(np.isfinite(grad)):
                return theta, False
            if cls._certifies(setup, y, grad, g, r):
                return y, True
            new = y - step * grad
            y = new + beta * (new - prev)
            prev = new
        return theta, False

    @classmethod
    def _contracting_descent(cls, fun, origin, setup, g, r=1.0):
        """Gradient descent from ``origin`` (0, or the centre of the intercept's penalty) for
        the number of steps that certifies ``g / alpha``.

        F is alpha-strongly convex and ``M_w``-smooth (``M_w = r L + alpha``, with the
        weights summing to ``r N_pub``, ``r >= 1``), so a step ``1/M_w`` contracts the
        distance to the minimiser by ``1 - alpha / M_w``; the start is within
        ``r G / alpha`` of it (``||grad F(origin)|| <= r G``: the penalty's gradient is 0
        there). T is chosen so that
        ``(1 - alpha/M_w)^T r G / alpha <= g / (2 alpha)``. A step 1/M in (w, b~) is a step
        c^2 / M in the kernel coordinates (w', b'). In floats each step adds at most
        :meth:`descent_error` ``<= g / 4`` (:meth:`tolerance`) in units of the gradient, so the
        iterate lands within ``g / (2 alpha) + g / (4 alpha)`` of the minimiser.
        """
        step = setup.column**2 / cls._smoothness(setup, r)
        theta = np.array(origin, dtype=float)
        for _ in range(cls._fallback_steps(setup, g, r)):
            theta = theta - step * fun(theta)[1]
        return theta


class InterceptOnly(Mechanism):
    """The intercept-only model, from one Gaussian release; coefficients 0.

    Classifiers release the weighted class counts ``c_k = sum_i w_i [y_i = k]``: relabelling
    one example moves two counts by at most ``w_i <= 1`` (L2 sensitivity sqrt(2),
    replace-one), adding or removing one moves one count (1, add/remove-one). The intercept is
    the log-odds (binary) or the centred log-frequencies (multinomial) of the noisy counts,
    each held at least 1/2. The squared loss releases ``sum_i w_i y_i`` with ``|y_i| <= Y``
    (the clipped target): ``2Y`` replace-one, ``Y`` add/remove-one; the intercept is the noisy
    mean ``m = S~ / N`` held in ``[-Y, Y]`` and shrunk towards 0 by ``m^2 / (m^2 + s^2)``, with
    ``s`` the known noise standard deviation of the mean (a noise-dominated mean predicts worse
    than 0). The Huber and Poisson losses make the same release (Huber: of the centred
    targets, ``|y_i| <= Y``; Poisson: of the counts, ``0 <= y_i <= Y``, for which ``2Y`` is an
    upper bound); Poisson's intercept is the log of the noisy mean (its log link).
    Everything after the release is post-processing.
    """

    name = "prior"
    intercept_only = True
    #: no objective is minimised (the weights are 0): any penalty
    accepts_nonsmooth = True

    def _n_classes(self, setup):
        loss = setup.loss
        if loss.regression:  # the squared loss: the release is the target sum
            return 0
        return 2 if setup.n_outputs == 1 else setup.n_outputs

    def releases(self, setup, plan):
        if not setup.fit_intercept:
            raise ValueError("the intercept-only model ('prior') needs fit_intercept=True.")
        if self._n_classes(setup) == 0:
            y_bound = getattr(setup.loss, "y_bound", None)
            if y_bound is None:
                raise ValueError(
                    f"the intercept-only model of the {setup.loss.name} loss needs "
                    "a public y_bound (its release is the sum of the clipped "
                    "targets)."
                )
            # real-valued terms w_i y_i: the road's rounding margin raises 2Y / Y at calibration
            sens = _prior.target_sensitivity(y_bound)
            return [Release("target sum", plan.noise_multipliers, sens, setup.relation)]
        # weighted counts: exact integers in float64 while every weight is 0 or 1 (below 2^53
        # rows); real-valued with sample or class weights, where the road's rounding margin,
        # applied to every release at calibration, covers their sum
        return [
            Release(
                "class counts",
                plan.noise_multipliers,
                dict(CLASS_COUNT_SENSITIVITY),
                setup.relation,
            )
        ]

    def run(self, rows, setup, plan, releases, gen):
        (release,) = releases
        if setup.progress is not None:
            setup.progress.released(release.multipliers, 0, 1)
        return Outcome(
            np.zeros((setup.n_outputs, rows.n_features)),
            self.intercept(rows, setup, float(release.noise_std[0]), gen, release.own_sensitivity),
        )

    def intercept(self, rows, setup, std, gen, sens):
        """The intercept of the noisy counts (or mean): the one Gaussian draw of the release
        (``sens``: its L2 sensitivity under the fit's relation)."""
        k = self._n_classes(setup)
        y, w = rows.y, rows.sample_weight  # numpy or dask: both reduce with .sum()
        if k == 0:  # the noisy, clipped mean (its log for a log link), shrunk
            return np.array(
                [
                    _prior.noisy_mean(
                        float((w * y).sum()),
                        std,
                        setup.n_public,
                        setup.loss.y_bound,
                        gen,
                        sens,
                        log_link=setup.loss.link == "log",
                    )
                ]
            )
        return _prior.log_odds(self.noisy_counts(rows, setup, std, gen, sens), std)

    def class_counts(self, rows, setup):
        """The weighted class counts ``sum_i w_i [y_i = k]`` (float64: exact integers when the
        weights are 0 or 1, else within the rounding margin of the release; released only
        through :func:`skdpgd._core.prior.noisy`)."""
        k = self._n_classes(setup)
        y, w = rows.y, rows.sample_weight  # numpy or dask: both reduce with .sum()
        labels = [-1.0, 1.0] if k == 2 else [float(j) for j in range(k)]
        return np.array([float((w * (y == lab)).sum()) for lab in labels])

    def noisy_counts(self, rows, setup, std, gen, sens):
        """The release: the weighted class counts plus ``N(0, std^2)`` each."""
        return _prior.noisy(self.class_counts(rows, setup), std, gen, sens)


class WarmStart(Mechanism):
    """Gradient descent or DP damped Newton started from the intercept-only model, and, with a
    selection, the better of the fit and that model.

    One more release, made first: the weighted class counts (:class:`InterceptOnly`; L2
    sensitivity sqrt(2) replace-one, 1 add/remove-one), with ``plan.prior_share`` of the
    budget (of ``mu^2``). Its noisy log-frequencies (shrunk by their known noise level) are
    the starting intercept; the weights start at 0. The start is post-processing of a
    release, so the inner mechanism's sensitivities hold unchanged. A regression loss releases
    the sum of its clipped targets instead (sensitivity ``2Y`` replace-one, ``Y``
    add/remove-one); Huber and Poisson start their steps from that intercept-only model (no
    switch), and with a selection every regression loss compares its fit with it.

    With ``plan.select_share = r > 0`` (the selection), once the fit is done one more
    Gaussian release with that share of the budget: the weighted number of training rows the
    fit predicts right minus the number the intercept-only model of the counts predicts right,
    ``sum_i w_i ([fit right on i] - [prior right on i])``, each model evaluated as released on
    the rows as given (what its ``predict`` computes: :meth:`Rows.correct_counts`). Both
    models are released values, so each term is a function of one row and lies in [-1, 1]:
    the sum moves by at most 2 when a row is replaced, 1 when one is added
    or removed. The fit is returned when the noisy difference is above
    :func:`skdpgd.policy.select_threshold` (a public function of the noise and N), the
    intercept-only model otherwise (post-processing). A regressor's selection releases instead
    ``sum_i w_i sign(|y_i - p0_i| - |y_i - p1_i|)`` (:meth:`Rows.closer_sum`: rows whose
    clipped target the fit predicts closer than the intercept-only model, minus those it
    predicts farther): each term lies in [-1, 1] too, whatever the target's range, so the same
    sensitivity holds (a clipped squared-error difference would have ``8 Y^2``). Every
    release is made whatever the data, so the accountant composes them exactly (no
    data-dependent branch of the privacy curve).

    Relative multipliers: with counts share ``s`` and selection share ``r``, ``z^-2 = s / (1 - s
    - r) * sum_i z_i^-2`` for the counts and ``r / (1 - s - r) * sum_i z_i^-2`` for the
    selection, over the inner mechanism's releases (one calibration scales them all). The
    counts come after the inner mechanism's releases (its first release stays first), the
    selection last.
    """

    def __init__(self, inner):
        self.inner = inner
        self.schedule = inner.schedule
        self.name = inner.name
        for prop in Mechanism.PROPERTIES:
            setattr(self, prop, getattr(inner, prop))

    def releases(self, setup, plan):
        inner = self.inner.releases(setup, plan)
        s, r = float(plan.prior_share), float(plan.select_share)
        inv2 = compose_gdp(np.concatenate([x.multipliers for x in inner])) ** 2
        z_p = relative_multiplier(1, s, 1.0 - s - r, inv2)
        # the counts (or target sum) and the selection's counts are float64 sums of terms in
        # [0, 1] or [-1, 1] (weighted: real-valued): the road's margin raises them at calibration
        (counts,) = InterceptOnly(self.schedule).releases(setup, plan)
        regression = InterceptOnly(self.schedule)._n_classes(setup) == 0
        if regression and plan.prior_switch is not None:
            raise ValueError("a regression loss's warm start has no switch.")
        if not regression and self.inner.classifier_start_needs_selection and not r > 0:
            raise ValueError(
                "a warm start from the prior needs a gradient or Newton plan (or "
                "an output perturbation with a selection)."
            )
        out = inner + [
            Release(
                ("target sum" if regression else "class counts") + " (start)",
                np.array([z_p]),
                counts.sensitivity,
                setup.relation,
            )
        ]
        if r > 0:
            z_sel = relative_multiplier(1, r, 1.0 - s - r, inv2)
            out.append(
                Release(
                    (
                        "selection: fit minus prior, rows predicted closer"
                        if regression
                        else "selection: fit minus prior, rows predicted right"
                    ),
                    np.array([z_sel]),
                    dict(SELECTION_SENSITIVITY),
                    setup.relation,
                )
            )
        return out

    def run(self, rows, setup, plan, releases, gen):
        select = float(plan.select_share) > 0
        if select:
            *inner, counts, choice = releases
        else:
            *inner, counts = releases
        prior = InterceptOnly(self.schedule)
        # the counts' noise comes from a jumped copy of the fit's stream (a non-overlapping
        # part of it), so the inner mechanism draws exactly the noise it would draw without the
        # warm start: the two fits differ by the start and the budget share only
        side = side_stream(gen, 1)
        std1 = float(counts.noise_std[0])
        if prior._n_classes(setup) == 0:  # regression: start from the noisy target mean
            start = prior.intercept(rows, setup, std1, side, counts.own_sensitivity)
            if setup.progress is not None:
                setup.progress.released(counts.multipliers, 0, plan.n_steps)
            if self.inner.starts_at_target_mean:
                # gradient: the steps start there; output: the intercept's penalty is centred
                # there
                fitted = self.inner.run(rows, setup, plan, inner, gen, start=start)
            else:  # sufficient statistics: an exact solve, no starting point
                fitted = self.inner.run(rows, setup, plan, inner, gen)
            if not select:
                return fitted
            prior_coef = np.zeros_like(fitted.coef)
            # --- the selection: rows predicted closer by the fit than by the intercept-only
            # model, minus rows predicted farther; both as released, on the rows as given ---
            closer = rows.closer_sum(
                (fitted.coef, fitted.intercept),
                (prior_coef, start),
                log_link=setup.loss.link == "log",
            )
            return self._select(fitted, (closer, 0.0), prior_coef, start, choice, setup, gen)
        # the prior switch (skdpgd._core.prior, the step DP-SGD shares): the first release of the
        # counts and, with a switch, the decision on them
        exact = prior.class_counts(rows, setup)
        switch = plan.prior_switch
        first = _prior.PriorSwitch.release(
            exact, counts, None if switch is None else switch[1], side
        )
        if setup.progress is not None:
            setup.progress.released(counts.multipliers, 0, plan.n_steps)
        if first.switched:
            # the decision read the shrunk counts: a balanced set's noise alone does not switch
            return self._prior_branch(rows, setup, inner, first, exact, gen)
        # the logistic losses start from the counts' log-odds; another classifier's loss (the
        # squared hinge) has another intercept-only optimum, and starts at 0 as without them
        start = first.start() if setup.loss.second_order == "newton" else None
        if self.inner.has_start:
            fitted = self.inner.run(rows, setup, plan, inner, gen, start=start)
        else:  # an exact minimiser ('output') has no starting point
            fitted = self.inner.run(rows, setup, plan, inner, gen)
        if not select:
            return fitted
        coef, intercept = fitted.coef, fitted.intercept
        # --- the selection: a noisy difference of training accuracies (its own stream) ---
        prior_coef, prior_intercept = np.zeros_like(coef), _prior.log_odds(first.noisy, first.std)
        # both models as released (Outcome coordinates, the estimator's coef_ / intercept_) on
        # the rows as given: exactly what each model's own predict gets right
        right = rows.correct_counts([(coef, intercept), (prior_coef, prior_intercept)])
        return self._select(
            fitted, (right[0], right[1]), prior_coef, prior_intercept, choice, setup, gen
        )

    @staticmethod
    def _select(fitted, scores, prior_coef, prior_intercept, choice, setup, gen):
        """The selection's release and the choice on it (:func:`skdpgd._core.prior.select`, one
        normal from its own stream: a second jump of the fit's generator): ``scores = (fit,
        prior)``, the classifiers' rows predicted right by each model, or a regressor's rows
        predicted closer minus farther by the fit and 0. The fit unless the noisy difference
        is at most :func:`skdpgd.policy.select_threshold`, else the intercept-only model
        (post-processing)."""
        pick = side_stream(gen, 2)
        keep, _ = _prior.select(scores, choice, setup.n_public, pick)
        if setup.progress is not None:
            setup.progress.released(choice.multipliers, 0, 1)
        if keep:
            return fitted
        # the inner Newton's Hessian rates (public) stay reported: it ran
        return dataclasses.replace(
            fitted, coef=prior_coef, intercept=np.asarray(prior_intercept), model="prior"
        )

    def _prior_branch(self, rows, setup, inner, first, exact, gen):
        """The rest of the budget on a second release of the class counts
        (:meth:`skdpgd._core.prior.PriorSwitch.intercept_only`, from the fit's own stream ``gen``).

        Adaptive composition: which branch runs is a function of the first (released) counts
        only, and both branches spend the same GDP budget under the fit's relation: the second
        release's multiplier is ``(sum_i z_i^-2)^(-1/2)`` over the fit's releases, so
        ``mu^2`` of the whole is the calibrated one either way. (Under the other relation the
        counts' sensitivity ratio, sqrt(2), is at most the fit's releases' (2 for gradient sums,
        sqrt(2) for Hessian sums): a budget charged for the fit's releases is an upper bound.)
        The two noisy count vectors are combined by their inverse variances."""
        counts = first.first
        z2 = 1.0 / gdp_mu_of_releases(inner)
        second = Release("class counts", np.array([z2]), counts.sensitivity, counts.relation)
        model = first.intercept_only(
            exact, second, gen, (setup.n_outputs, rows.n_features), setup.progress, (1, 2)
        )
        return Outcome(model.coef, model.intercept, model="prior", releases=model.releases)

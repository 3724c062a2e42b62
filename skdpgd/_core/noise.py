"""Where a fit's randomness comes from, and how a Gaussian release is drawn, in either mode.

Plain mode (the default): one numpy ``Generator`` per fit (:func:`generator`);
a release adds ``std * gen.standard_normal(...)`` in binary64.

Secure mode (:func:`skdpgd.config_context` with ``secure_noise=True``): a
:class:`SecureGenerator`, a ChaCha20 stream keyed from the operating system's cryptographic
source (:mod:`skdpgd._compute.secure_random`), that draws no floating-point normal at all.
Each release is rounded to a lattice ``gamma Z`` (a power of two well below the noise) and an
exact discrete Gaussian is added in integer arithmetic; the rounding moves the statistic by
at most ``gamma sqrt(dim) / 2``, so the integer noise is widened to cover the neighbours'
rounded statistics (:func:`skdpgd._compute.secure_random.release`): the release is then as
private, in zCDP, as the continuous one the calibration sized. Integer-valued statistics
(unweighted counts) lie on the lattice and are released without rounding.

Every noisy release of the package goes through :func:`gaussian` (or, inside the compiled
kernels, through the source :func:`kernel_source` returns); other randomness (subsamples,
streams for side computations) through :func:`side_stream` and :func:`seed_from`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.utils import check_random_state

from .._config import secure_noise
from ..exceptions import PrivacyUsageWarning

__all__ = [
    "SecureGenerator",
    "SecureModeError",
    "fit_generator",
    "generator",
    "gaussian",
    "is_secure",
    "kernel_source",
    "noise_name",
    "side_stream",
    "symmetric_release",
]


class SecureModeError(RuntimeError):
    """Something secure mode cannot do (a floating-point normal, a seeded stream)."""


def _sr():
    from .._compute import secure_random

    return secure_random


class SecureGenerator:
    """The randomness of one secure fit: a ChaCha20 stream keyed from ``os.urandom``.

    It cannot be seeded or reproduced. It releases statistics on a lattice with exact
    discrete Gaussian noise (:meth:`release`), draws exact dyadic uniforms (:meth:`random`)
    and integers (:meth:`integers`), and refuses floating-point normals, so a release that
    does not go through :func:`gaussian` fails loudly instead of drawing plain noise.
    """

    def __init__(self):
        self.state = _sr().new_state()

    def release(self, values, std, sens, exact=False):
        """``values`` released with noise of standard deviation ``std`` (or more, by the
        lattice's widening), as a float64 array of the same shape (a float for a scalar).
        ``sens`` is the L2 sensitivity of the whole of ``values`` under the fit's relation
        (raised by any rounding margin); ``exact``: the values are integers on every dataset
        (unweighted counts), so they are not rounded."""
        scalar = np.ndim(values) == 0
        arr = np.asarray(values, dtype=np.float64)
        std = float(std)
        if std == 0.0:
            out = arr.copy()
        else:
            if not (math.isfinite(sens) and sens > 0):
                raise ValueError(f"a secure release needs a positive sensitivity, got {sens!r}.")
            out = _sr().release(arr, std, float(sens), self.state, exact=exact)
        return float(out) if scalar else out

    def random(self, size=None):
        """Uniforms ``k / 2^53`` on [0, 1) (a float for ``size=None``)."""
        sr = _sr()
        if size is None:
            return float(sr.uniform_float(self.state))
        out = np.empty(int(np.prod(size)), dtype=np.float64)
        for i in range(out.size):
            out[i] = sr.uniform_float(self.state)
        return out.reshape(size)

    def integers(self, low, high=None, size=None):
        """Uniform integers on ``[low, high)`` (``[0, low)`` when ``high`` is None)."""
        if high is None:
            low, high = 0, low
        n = int(high) - int(low)
        if size is None:
            return int(low) + self._below(n)
        out = np.empty(int(np.prod(size)), dtype=np.int64)
        for i in range(out.size):
            out[i] = int(low) + self._below(n)
        return out.reshape(size)

    def _below(self, n):
        """Uniform on {0, ..., n - 1}, 1 <= n <= 2^63 (rejection above 2^62)."""
        sr = _sr()
        if n <= 2**62:
            return int(sr.uniform_int(self.state, n))
        while True:
            r = int(sr.uniform_int(self.state, 2**31)) * 2**32 + int(
                sr.uniform_int(self.state, 2**32)
            )
            if r < n:
                return r

    def uniform(self, low=0.0, high=1.0, size=None):
        """``low + (high - low) U`` with U from :meth:`random` (data-independent draws such
        as a network's initial weights)."""
        return low + (high - low) * self.random(size)

    def numpy_stream(self):
        """A numpy generator keyed with 128 bits of this stream: for the few draws that are
        not noise and have no exact sampler here (the number of a search's trials). Secret,
        but numpy's floating-point samplers (the security model says so)."""
        words = [int(self.integers(0, 2**62)) for _ in range(3)]
        return np.random.default_rng(words)

    def standard_normal(self, *args, **kwargs):
        raise SecureModeError(
            "secure mode draws no floating-point normal: this release must go through "
            "skdpgd._core.noise.gaussian (a bug in skdpgd: please report it)."
        )

    normal = standard_normal

    @property
    def bit_generator(self):
        raise SecureModeError(
            "secure mode has no numpy bit generator: use skdpgd._core.noise.side_stream (a bug in "
            "skdpgd: please report it)."
        )


def is_secure(gen):
    """Whether ``gen`` is a secure fit's generator."""
    return isinstance(gen, SecureGenerator)


def noise_name(gen):
    """'discrete' for a secure generator, else 'gaussian' (the fitted ``noise_``)."""
    return "discrete" if is_secure(gen) else "gaussian"


def generator(random_state):
    """One numpy Generator made from ``random_state``: all noise of a fit comes from it.

    ``None`` draws fresh entropy from the operating system (numpy's ``SeedSequence``), not
    from numpy's global ``RandomState`` as scikit-learn's ``None`` does: a notebook's
    ``np.random.seed(0)`` would otherwise make every "unseeded" fit's noise reproducible by
    anyone who reads the notebook. An int or a generator instance fixes the noise (for
    experiments; never publish a model with it, see the user guide)."""
    if random_state is None:
        return np.random.default_rng()
    rs = check_random_state(random_state)
    return np.random.default_rng(rs.randint(0, 2**32 - 1, size=4, dtype=np.uint64))


def fit_generator(random_state, label="this fit"):
    """The generator of one fit: a :class:`SecureGenerator` in secure mode, else the plain
    generator made from ``random_state``.

    Secure mode ignores a seed (an integer or a generator ``random_state``), with a
    :class:`~skdpgd.exceptions.PrivacyUsageWarning`: secure noise comes from the operating
    system's cryptographic source and cannot be reproduced, and a seed that reproduced it
    would let anyone who knows the seed predict it. (Ignored rather than refused, so that code
    written for plain mode, scikit-learn's checks and searches that pass seeds run
    unchanged.)"""
    if secure_noise():
        if random_state is not None:
            warnings.warn(
                f"{label}: random_state={random_state!r} is ignored in secure mode "
                "(skdpgd.config_context(secure_noise=True)): the noise comes from the "
                "operating system's cryptographic source and cannot be reproduced.",
                PrivacyUsageWarning,
                stacklevel=4,
            )
        return SecureGenerator()
    return generator(random_state)


def gaussian(values, std, gen, sens, exact=False):
    """``values`` plus Gaussian noise of standard deviation ``std``: the one way a release is
    drawn outside the compiled kernels.

    Plain: ``values + std * gen.standard_normal(shape)`` (``shape`` that of ``values``; a
    float for a scalar). Secure: :meth:`SecureGenerator.release` with the release's L2
    sensitivity ``sens`` (in the units of ``values``) and ``exact`` for integer statistics.
    """
    if is_secure(gen):
        return gen.release(values, std, sens, exact)
    if np.ndim(values) == 0:
        return float(values) + std * gen.standard_normal()
    values = np.asarray(values, dtype=float)
    size = values.shape[0] if values.ndim == 1 else values.shape  # the draws made before
    return values + std * gen.standard_normal(size)


def symmetric_release(M, std, gen, sens, off_diagonal_scale):
    """Secure release of a symmetric matrix ``M``: the vector ``v = (M_ii, s M_ij)_{i<j}``
    (``s = off_diagonal_scale``) released with ``std`` and L2 sensitivity ``sens``, mapped
    back (off-diagonal entries divided by ``s``) and symmetrised: post-processing."""
    M = np.asarray(M, dtype=np.float64)
    iu = np.triu_indices(M.shape[0])
    scale = np.where(iu[0] == iu[1], 1.0, float(off_diagonal_scale))
    v = gen.release(M[iu] * scale, std, sens)
    out = np.zeros_like(M)
    out[iu] = v / scale
    return out + np.triu(out, 1).T


def kernel_source(gen, sens, dim):
    """What a compiled kernel draws its noise from for releases of L2 sensitivity ``sens``
    over ``dim`` coordinates: the plain generator itself, or, in secure mode, the tuple
    ``(state, [ratio])`` of :mod:`skdpgd._compute.secure_random` (one lattice per released
    coordinate, widened for the rounding of ``dim`` coordinates)."""
    if not is_secure(gen):
        return gen
    sr = _sr()
    return (gen.state, np.array([sr.ratio_for(float(sens), int(dim), False)], dtype=np.float64))


def side_stream(gen, k):
    """An independent stream for a side computation (a candidate, a tie-break): plain, the
    ``k``-th jump of the fit's bit generator (as before); secure, a new secure generator."""
    if is_secure(gen):
        return SecureGenerator()
    return np.random.Generator(gen.bit_generator.jumped(k))

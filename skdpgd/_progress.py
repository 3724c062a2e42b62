"""``verbose`` output of a fit: only public or already released values."""

from __future__ import annotations

import sys
import time

import numpy as np

from .accounting import GaussianSteps, PoissonSampled, compose


class Progress:
    """``verbose`` output of a fit: only public or already released values.

    It prints the step, the epsilon spent by the releases made so far (computed from their
    noise multipliers, which are public, at the fit's delta) and the elapsed time, never a
    value computed from the private data (the training loss is not printed).
    """

    def __init__(self, verbose, delta, done=(), stream=None):
        self.verbose = int(verbose or 0)
        self.delta = delta
        self.done = list(done)  # the releases made before the run (full batch)
        self.steps = []  # the run's multipliers so far (full batch)
        self.start = time.perf_counter()
        self.stream = stream

    def say(self, text):
        if self.verbose:
            print(f"[skdpgd] {text}", file=self.stream or sys.stdout, flush=True)

    def released(self, z, step, n_steps):
        """Record releases with multipliers ``z``; at verbose >= 2 print about 10 lines a run."""
        if not self.verbose:
            return
        self.steps.append(np.asarray(z, dtype=float).ravel())
        every = max(1, n_steps // 10)
        if self.verbose >= 2 and ((step + 1) % every == 0 or step + 1 == n_steps):
            eps = compose(self.done + [GaussianSteps(np.concatenate(self.steps))], self.delta)
            self.say(
                f"step {step + 1}/{n_steps}  epsilon spent {eps:.4g}  "
                f"elapsed {time.perf_counter() - self.start:.2f}s"
            )

    def released_steps(self, accountant, z, q, delta, step, n_steps):
        """DP-SGD: after ``step`` Poisson-sampled releases with multipliers ``z`` (RDP)."""
        if self.verbose < 2:
            return
        eps = compose(
            [PoissonSampled(q, GaussianSteps(z)), *self.done], delta, accountant=accountant
        )
        self.say(
            f"step {step}/{n_steps}  epsilon spent {eps:.4g}  "
            f"elapsed {time.perf_counter() - self.start:.2f}s"
        )

"""``verbose`` output of a fit: only public or already released values."""

from __future__ import annotations

import importlib.util
import sys
import time

import numpy as np

from ..accounting import GaussianSteps, PoissonSampled, compose


#: a run that has lasted this long (seconds) shows its progress at ``verbose=1``: shorter
#: fits print nothing more than before
SHOW_AFTER_SECONDS = 2.0


class StepBar:
    """The progress of a run of public length: ``done`` of ``total`` steps (both public, as
    every step's noise is planned before the run). Nothing shows before the run has lasted
    :data:`SHOW_AFTER_SECONDS`; then a tqdm bar when tqdm is installed, otherwise a line at
    each tenth of the run."""

    def __init__(self, stream=None, label="skdpgd", start=None):
        self.stream = stream
        self.label = label
        self.start = time.perf_counter() if start is None else start
        self.total = None
        self.bar = None
        self.tenth = 0

    def update(self, done, total):
        if total != self.total:  # a new run (the set-up releases, then the steps)
            self.close()
            self.total, self.tenth = total, 0
        if total <= 1 or time.perf_counter() - self.start < SHOW_AFTER_SECONDS:
            return
        stream = self.stream or sys.stderr
        if importlib.util.find_spec("tqdm") is not None:
            if self.bar is None:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total, desc=self.label, file=stream, unit="step")
            self.bar.update(done - self.bar.n)
        else:
            tenth = 10 * done // total
            if tenth > self.tenth:
                self.tenth = tenth
                elapsed = time.perf_counter() - self.start
                print(
                    f"[{self.label}] step {done}/{total} ({10 * tenth}%)  elapsed {elapsed:.1f}s",
                    file=stream,
                    flush=True,
                )
        if done >= total:
            self.close()

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


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
        self.bar = StepBar(stream, "skdpgd", self.start)

    def say(self, text):
        if self.verbose:
            print(f"[skdpgd] {text}", file=self.stream or sys.stdout, flush=True)

    def released(self, z, step, n_steps):
        """Record releases with multipliers ``z``; at verbose >= 2 print about 10 lines a run."""
        if not self.verbose:
            return
        if self.verbose == 1:  # verbose >= 2 prints its own lines
            self.bar.update(step + 1, n_steps)
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
        if self.verbose == 1:  # verbose >= 2 prints its own lines
            self.bar.update(step, n_steps)
        if self.verbose < 2:
            return
        eps = compose(
            [PoissonSampled(q, GaussianSteps(z)), *self.done], delta, accountant=accountant
        )
        self.say(
            f"step {step}/{n_steps}  epsilon spent {eps:.4g}  "
            f"elapsed {time.perf_counter() - self.start:.2f}s"
        )

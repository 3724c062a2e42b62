"""Validation of the privacy parameters, shared by the accountants (no other imports)."""

from __future__ import annotations


def check_epsilon(epsilon):
    epsilon = float(epsilon)
    if not epsilon > 0:  # also rejects NaN
        raise ValueError(f"epsilon must be > 0 (np.inf means no privacy), got {epsilon!r}.")
    return epsilon


def check_delta(delta):
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in the open interval (0, 1), got {delta!r}.")
    return delta

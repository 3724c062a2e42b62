"""The full-batch road family: the road, its mechanisms (gradient descent with its
schedules, output perturbation, the warm start and selection) and the second-order code
(DP damped Newton, noisy sufficient statistics).

Internal: no public API (see docs/contributing.md for what goes where)."""

"""The minibatch road family: Poisson-sampled DP-SGD and the importance mask's road.

Internal: no public API (see docs/contributing.md for what goes where)."""

"""The torch road family: the network's DP-SGD backend (torch imported on first use).

Internal: no public API (see docs/contributing.md for what goes where)."""

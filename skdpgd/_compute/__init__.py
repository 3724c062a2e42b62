"""The compute layer: numba kernels (compiled on first use) and the backends (dense, CSR,
Dask) that implement the data reductions every road reads. Imports no road.

Internal: no public API (see docs/contributing.md for what goes where)."""

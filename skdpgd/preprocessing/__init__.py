"""Preprocessing that reads nothing private, or spends accounted budget.

A scaler fitted on the private rows (scikit-learn's ``StandardScaler``, ``MinMaxScaler``, ...)
publishes their statistics without any guarantee: one outlying row moves a mean or a maximum
without bound. The transformers here are the private replacements:

* :class:`BoundedScaler` clips every column to a **public** range ``(lo, hi)`` and maps it to
  ``[-1, 1]``. Its fit reads the number (and names) of the columns and nothing else, so it
  costs no budget.
* :class:`DPStandardScaler` standardises with means and variances released by the Gaussian
  mechanism from the clipped columns; its releases are accounted like an estimator's
  (``releases_``, ``epsilon_``, ``delta_``, a shared :class:`~skdpgd.PrivacyBudget`).
* :func:`schema_transformer` builds a scikit-learn ``ColumnTransformer`` from a public
  codebook ``{column: (lo, hi) or [levels]}``: numeric columns through :class:`BoundedScaler`,
  categorical ones one-hot over their public levels (``OneHotEncoder(categories=...,
  handle_unknown='ignore')``), every cell outside the declared domain (text in a numeric
  column, a level not listed) treated as missing, missing values to a public constant, every
  row of norm at most 1. Its fitted attributes are the same whatever the rows.
  :func:`codebook_from_table_schema` reads that codebook from a data dictionary in the
  Frictionless Table Schema format (JSON).

Each transformer declares the public bound of its output rows (``output_bound_``, an L2 norm);
:func:`output_bound` reads it from any fitted transformer skdpgd understands, including
scikit-learn's ``ColumnTransformer``, ``FeatureUnion``, ``Pipeline``, ``OneHotEncoder`` with
public levels and ``Normalizer``. :class:`skdpgd.pipeline.PrivatePipeline` passes it on to the
final estimator as ``data_norm``.
"""

from ._bounded import BoundedScaler
from ._domain_counts import DomainCounts, out_of_domain_counts
from ._output_bound import output_bound
from ._schema import Categorical, Numeric, categorical, numeric, schema_transformer
from ._standard import DPStandardScaler
from ._table_schema import codebook_from_table_schema
from ._target_counts import TargetRangeCounts, out_of_range_target_count

__all__ = [
    "BoundedScaler",
    "DPStandardScaler",
    "Categorical",
    "DomainCounts",
    "Numeric",
    "TargetRangeCounts",
    "categorical",
    "codebook_from_table_schema",
    "numeric",
    "out_of_domain_counts",
    "out_of_range_target_count",
    "schema_transformer",
    "output_bound",
]

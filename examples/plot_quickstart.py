"""
Quick start: a private logistic regression in a private pipeline
================================================================

Fit :class:`skdpgd.DPLogisticRegression` on the digits data at a few privacy budgets and
compare it with scikit-learn's non-private ``LogisticRegression``. Nothing is fitted on the
private rows without accounting: every pixel lies in 0..16 by construction, so
:class:`skdpgd.preprocessing.BoundedScaler` maps the rows with that public range (its fit reads
nothing) and declares the public row bound the model uses as ``data_norm``; the class list is
given (``classes``). :func:`skdpgd.pipeline.make_private_pipeline` checks the steps and reports
the epsilon of the whole pipeline.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from skdpgd import DPLogisticRegression
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import BoundedScaler

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)

epsilons = [0.3, 1.0, 3.0, 10.0, 30.0]
scores = []
for eps in epsilons:
    clf = make_private_pipeline(
        BoundedScaler(bounds=(0, 16)),
        DPLogisticRegression(classes=list(range(10))),
        epsilon=eps,
        random_state=0,
    )
    clf.fit(X_train, y_train)
    scores.append(clf.score(X_test, y_test))
    dp = clf[-1]
    print(
        f"epsilon={eps:5}: accuracy {scores[-1]:.3f}, pipeline spent epsilon_="
        f"{clf.epsilon_:.3f}, mechanism {dp.mechanism_} ({dp.schedule_}), "
        f"data_norm_ {dp.data_norm_:g}"
    )

baseline = make_pipeline(BoundedScaler(bounds=(0, 16)), LogisticRegression(max_iter=1000))
baseline.fit(X_train, y_train)

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.semilogx(epsilons, scores, "o-", label="DPLogisticRegression")
ax.axhline(baseline.score(X_test, y_test), color="k", ls="--", label="non-private")
ax.set_xlabel("epsilon")
ax.set_ylabel("test accuracy")
ax.legend()
fig.tight_layout()

"""
A private linear SVM: DPLinearSVC on digits 3 against 8
=======================================================

:class:`skdpgd.DPLinearSVC` minimises scikit-learn's ``LinearSVC`` loss, the squared hinge,
with each example's derivative capped at 2 (the loss continues linearly for misclassified
examples), so one example's gradient is bounded and the noise follows from ``data_norm``.
The pixels lie in 0..16 by construction, so :class:`skdpgd.preprocessing.BoundedScaler` maps
them with that public range and declares the row bound; the class list is given. Test
accuracy against epsilon, next to the non-private ``LinearSVC``.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from skdpgd import DPLinearSVC
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import BoundedScaler

X, y = load_digits(return_X_y=True)
keep = np.isin(y, [3, 8])
X_train, X_test, y_train, y_test = train_test_split(
    X[keep], y[keep], stratify=y[keep], random_state=0
)

epsilons = [0.3, 1.0, 3.0, 10.0, 30.0]
scores = []
for eps in epsilons:
    clf = make_private_pipeline(
        BoundedScaler(bounds=(0, 16)), DPLinearSVC(classes=[3, 8]), epsilon=eps, random_state=0
    )
    clf.fit(X_train, y_train)
    scores.append(clf.score(X_test, y_test))
    print(
        f"epsilon={eps:5}: accuracy {scores[-1]:.3f}, spent {clf.epsilon_:.3f}, "
        f"mechanism {clf[-1].mechanism_} ({clf[-1].schedule_})"
    )

baseline = make_pipeline(BoundedScaler(bounds=(0, 16)), LinearSVC()).fit(X_train, y_train)
majority = max(np.mean(y_test == 3), np.mean(y_test == 8))

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.semilogx(epsilons, scores, "o-", label="DPLinearSVC")
ax.axhline(baseline.score(X_test, y_test), color="k", ls="--", label="LinearSVC (non-private)")
ax.axhline(majority, color="grey", ls=":", label="majority class")
ax.set_xlabel("epsilon")
ax.set_ylabel("test accuracy")
ax.legend()
fig.tight_layout()

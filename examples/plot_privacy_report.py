"""
The privacy report: what a fit released, and its privacy profile
================================================================

:func:`skdpgd.privacy_report` lists what a fitted estimator (or a search, a pipeline, a
:class:`~skdpgd.PrivacyBudget`) released: each group of Gaussian releases, its noise
multipliers, the neighbouring relation, and epsilon at several deltas by the tightest
accountant available. It reads only the recorded noise multipliers: it touches no data and
costs no privacy.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

from skdpgd import DPLogisticRegression, DPSGDClassifier, privacy_report

X, y = load_breast_cancer(return_X_y=True)
X = StandardScaler().fit_transform(X)  # (a deployment would use public ranges)
X = X / np.linalg.norm(X, axis=1).max()  # rows of norm <= 1: data_norm=1

clf = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0)
clf.fit(X, y)
full = privacy_report(clf)
print(full)

# %%
# A DP-SGD fit composes thousands of Poisson-sampled releases. Its own accounting (RDP,
# the default ``accountant='rdp'``) states epsilon = 1; the PLD accountant of dp-accounting,
# when installed, bounds the same releases more tightly, and the report uses the smaller.
sgd = DPSGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1], n_samples=len(y),
                      random_state=0).fit(X, y)
minibatch = privacy_report(sgd)
print(minibatch)

# %%
# The privacy profile epsilon(delta) of both fits: one (epsilon, delta) pair is one point of
# it. The dots are what each fit states (``epsilon_`` at ``delta_``).
fig, ax = plt.subplots(figsize=(6, 4))
full.plot(ax=ax)
minibatch.plot(ax=ax)
ax.set_title("privacy profiles")
ax.legend(["DPLogisticRegression (" + full.accountant + ")", "its stated point",
           "DPSGDClassifier (" + minibatch.accountant + ")", "its stated point"], fontsize=8)
plt.tight_layout()

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
from sklearn.datasets import load_digits

from skdpgd import DPLogisticRegression, DPSGDClassifier, privacy_report
from skdpgd.preprocessing import BoundedScaler

X, y = load_digits(return_X_y=True)
y = (y >= 5).astype(int)  # a binary task: digits 0-4 against 5-9
# public scaling: every pixel is in 0..16 by construction, so [-1, 1] after BoundedScaler
# (its fit reads nothing from the rows) and rows of norm <= 8 / 8 = 1: data_norm=1
X = BoundedScaler(bounds=(0, 16)).fit_transform(X) / 8.0

clf = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0)
clf.fit(X, y)
full = privacy_report(clf)
print(full)

# %%
# A DP-SGD fit composes thousands of Poisson-sampled releases. Its own accounting (RDP,
# the default ``accountant='rdp'``) states epsilon = 1; the PLD accountant of dp-accounting,
# when installed, bounds the same releases more tightly, and the report uses the smaller.
sgd = DPSGDClassifier(
    epsilon=1.0, data_norm=1.0, classes=[0, 1], n_samples=len(y), random_state=0
).fit(X, y)
minibatch = privacy_report(sgd)
print(minibatch)

# %%
# The privacy profile epsilon(delta) of both fits: one (epsilon, delta) pair is one point of
# it. The dots are what each fit states (``epsilon_`` at ``delta_``).
fig, ax = plt.subplots(figsize=(6, 4))
full.plot(ax=ax)
minibatch.plot(ax=ax)
ax.set_title("privacy profiles")
ax.legend(
    [
        "DPLogisticRegression (" + full.accountant + ")",
        "its stated point",
        "DPSGDClassifier (" + minibatch.accountant + ")",
        "its stated point",
    ],
    fontsize=8,
)
plt.tight_layout()

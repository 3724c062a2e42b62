"""
Many classes: multinomial DPLogisticRegression and one-vs-rest DPLinearSVC on ten digits
=========================================================================================

With ten classes and 64 pixels, :class:`skdpgd.DPLogisticRegression` has 650 coefficients.
Its ``schedule='auto'`` runs noisy gradient descent while the budget is small and, once the
public ratio ``N mu / sqrt(D)`` reaches 300, the Kronecker-factored DP Newton: ``X'X`` released
once, a 10 x 10 class factor and the gradient at each of 8 iterations (``mechanism_`` says
which ran). :class:`skdpgd.DPLinearSVC` fits one squared-hinge problem per class, all ten from
one noisy release of the whole gradient per step (no split of epsilon between classes). The
pixels lie in 0..16 by construction (a public range) and the class list is given. Test
accuracy against epsilon, next to the non-private models.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from skdpgd import DPLinearSVC, DPLogisticRegression
from skdpgd.pipeline import make_private_pipeline
from skdpgd.preprocessing import BoundedScaler

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
classes = list(range(10))

epsilons = [1.0, 3.0, 10.0, 100.0, 1000.0]
scores = {"DPLogisticRegression": [], "DPLinearSVC": []}
for eps in epsilons:
    for name, est in (
        ("DPLogisticRegression", DPLogisticRegression(classes=classes)),
        ("DPLinearSVC", DPLinearSVC(classes=classes)),
    ):
        clf = make_private_pipeline(
            BoundedScaler(bounds=(0, 16)), est, epsilon=eps, random_state=0
        ).fit(X_train, y_train)
        scores[name].append(clf.score(X_test, y_test))
        print(
            f"epsilon={eps:6}: {name:21s} accuracy {scores[name][-1]:.3f}, "
            f"spent {clf.epsilon_:.3f}, mechanism {clf[-1].mechanism_}"
        )

references = {
    "LogisticRegression": make_pipeline(BoundedScaler(bounds=(0, 16)), LogisticRegression()),
    "LinearSVC": make_pipeline(BoundedScaler(bounds=(0, 16)), LinearSVC()),
}
fig, ax = plt.subplots(figsize=(5.5, 3.5))
for (name, values), style in zip(scores.items(), ("o-", "s-")):
    ax.semilogx(epsilons, values, style, label=name)
for (name, ref), style in zip(references.items(), ("--", ":")):
    ref.fit(X_train, y_train)
    ax.axhline(ref.score(X_test, y_test), color="k", ls=style, label=f"{name} (non-private)")
ax.axhline(0.1, color="grey", ls="-.", label="one class")
ax.set_xlabel("epsilon")
ax.set_ylabel("test accuracy")
ax.legend(fontsize=7)
fig.tight_layout()

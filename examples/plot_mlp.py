"""
A small private neural net: DPMLPClassifier
===========================================

:class:`skdpgd.DPMLPClassifier` trains a multilayer perceptron by DP gradient descent with per-
example clipping (the optional torch backend: ``pip install torch --index-url
https://download.pytorch.org/whl/cpu`` installs PyTorch's CPU build, which is enough). Here it
is compared with the private linear model on the handwritten digits (10 classes, 8x8 pixels,
pixel values in [0, 16] by the data set's definition: a public range). The network needs no row
bound (each example's whole gradient is clipped to ``clip_norm``); the linear model gets rows
scaled by 16 * 8, of norm at most 1. ``max_iter``, ``learning_rate`` and ``clip_norm`` are
those of the neural-net guide page; no theory picks them for a network, and choosing them on
the private data would leak.
"""

from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from skdpgd import DPLogisticRegression, DPMLPClassifier

X, y = load_digits(return_X_y=True)
X = X / 16.0  # pixels in [0, 1]
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
classes = list(range(10))

try:
    import torch  # noqa: F401
except ImportError:  # the docs build without the torch extra
    torch = None
    print(
        "torch is not installed: pip install torch --index-url https://download.pytorch.org/whl/cpu"
    )

for eps in [1.0, 4.0]:
    lin = DPLogisticRegression(epsilon=eps, data_norm=1.0, classes=classes, random_state=0)
    lin.fit(X_train / 8.0, y_train)  # 64 pixels in [0, 1]: ||x / 8|| <= 1
    print(f"epsilon={eps}: linear model {lin.score(X_test / 8.0, y_test):.3f}", end="")
    if torch is not None:
        mlp = DPMLPClassifier(
            epsilon=eps,
            classes=classes,
            hidden_layer_sizes=(64,),
            clip_norm=4.0,
            learning_rate=0.1,
            max_iter=100,
            random_state=0,
        )
        print(
            f", MLP {mlp.fit(X_train, y_train).score(X_test, y_test):.3f} "
            f"({mlp.n_iter_} noisy steps)",
            end="",
        )
    print()

"""What every linear estimator shares: parameter constraints, the score-to-probability
helpers and the classifier mixins (the full-batch estimators' base class, which hands the fit
to the full-batch road, is :class:`skdpgd.linear_model._base._DPLinearBase`)."""

from __future__ import annotations

import numbers

import numpy as np
from scipy.special import expit, log_expit, log_softmax, softmax
from sklearn.base import ClassifierMixin
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import HasMethods, Interval, StrOptions
from .data import decision_scores, is_dask, is_spark, spark_prediction
from ..accounting import RELATIONS
from ..schedules import schedule_names


#: Constraints shared by every full-batch estimator (checked by _compat.fit_context).
COMMON_CONSTRAINTS = {
    "epsilon": [Interval(numbers.Real, 0, np.inf, closed="right")],  # inf: no noise
    "delta": [Interval(numbers.Real, 0, 1, closed="neither"), None],
    "data_norm": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "alpha": [Interval(numbers.Real, 0, None, closed="left"), StrOptions({"auto"})],
    "row_clip": [StrOptions({"auto", "data_norm"})],
    "fit_intercept": ["boolean"],
    "intercept_scaling": [Interval(numbers.Real, 0, None, closed="neither")],
    "schedule": [StrOptions(schedule_names()), HasMethods(["plan"])],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
    "momentum": [Interval(numbers.Real, 0, 1, closed="left")],
    "neighbouring": [StrOptions(set(RELATIONS) | {"auto"})],
    "n_samples": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "random_state": ["random_state"],
    "budget": [HasMethods(["charge"]), None],
    "verbose": ["verbose"],
}


def proba_from_scores(scores):
    """Class probabilities from decision scores: sigmoid (1-D scores) or softmax."""
    if scores.ndim == 1:
        p = expit(scores)
        return np.column_stack([1.0 - p, p])
    return softmax(scores, axis=1)


def log_proba_from_scores(scores):
    """Logarithm of :func:`proba_from_scores`, computed stably."""
    if scores.ndim == 1:
        return np.column_stack([log_expit(-scores), log_expit(scores)])
    return log_softmax(scores, axis=1)


class LinearClassifierMixin(ClassifierMixin):
    """``decision_function``/``predict`` of a linear classifier with ``coef_``,
    ``intercept_`` and ``classes_`` (one score column for two classes)."""

    def decision_function(self, X):
        """Signed distance to the separating hyperplane (one column per class for more than
        two classes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        if is_spark(X):  # a Spark column, computed on the executors
            return spark_prediction(self, X, self.coef_, self.intercept_, "scores")
        if is_dask(X):  # a lazy dask array
            scores = decision_scores(self, X, self.coef_, self.intercept_)
            return scores[:, 0] if scores.shape[1] == 1 else scores
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        scores = safe_sparse_dot(X, self.coef_.T, dense_output=True) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        if is_spark(X):  # a Spark column, computed on the executors
            check_is_fitted(self)
            return spark_prediction(self, X, self.coef_, self.intercept_, "label", self.classes_)
        scores = self.decision_function(X)
        index = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)
        if is_dask(index):
            classes = self.classes_
            return index.map_blocks(lambda b: classes[b], dtype=classes.dtype)
        return self.classes_[index]


class ProbaFromScoresMixin:
    """``predict_proba``/``predict_log_proba`` from ``decision_function`` (sigmoid or softmax)."""

    def predict_proba(self, X):
        """Class probabilities (sigmoid for two classes, softmax otherwise).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        if is_spark(X):  # an array column, computed on the executors
            check_is_fitted(self)
            return spark_prediction(self, X, self.coef_, self.intercept_, "proba")
        scores = self.decision_function(X)
        if is_dask(scores):
            k = len(self.classes_)
            if scores.ndim == 1:
                scores = scores[:, None]
            return scores.map_blocks(
                lambda b: proba_from_scores(b[:, 0] if b.shape[1] == 1 else b),
                chunks=(scores.chunks[0], (k,)),
                dtype=np.float64,
            )
        return proba_from_scores(scores)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`, computed stably.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        return log_proba_from_scores(self.decision_function(X))

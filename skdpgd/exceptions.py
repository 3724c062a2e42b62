"""Warnings and errors raised by skdpgd."""


class PrivacyLeakWarning(UserWarning):
    """A constant that shapes the noise was read from the private data.

    Differential privacy requires every bound that calibrates the noise (the row-norm
    bound ``data_norm``, the target bound ``y_bound``, ...) to be public. When such a bound
    is not given, the estimator infers it from the training data so that it can still fit,
    and emits this warning: the reported epsilon then does not cover what the bound leaks.
    """


class PrivacyUsageWarning(UserWarning):
    """A setting looks wrong, judged from public or already released values only.

    Giving it costs no privacy: ``delta`` at or above ``1 / N`` with N public or released
    (such a delta allows a mechanism that publishes a random row in the clear).
    """


class BudgetExceededError(ValueError):
    """A fit would spend more privacy budget than is left."""


class DivergenceError(FloatingPointError):
    """A private fit diverged: its iterate (or, in the full-batch estimators, some per-example
    gradient) was not finite or left its public bound.

    A per-example gradient that is not finite contributes nothing to the released sum (so the
    sensitivity holds). The fit stops, releasing nothing more and setting no fitted attribute.
    DP-SGD and DPMLPClassifier decide to stop from released values only (the iterate after a
    noisy step), so the error itself reveals nothing the fit had not released.
    """

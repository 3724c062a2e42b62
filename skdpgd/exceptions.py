"""Warnings and errors raised by skdpgd."""


class PrivacyLeakWarning(UserWarning):
    """A constant that shapes the noise was read from the private data.

    Differential privacy requires every bound that calibrates the noise (the row-norm
    bound ``data_norm``, the target bound ``y_bound``, ...) to be public. When such a bound
    is not given, the estimator infers it from the training data so that it can still fit,
    and emits this warning: the reported epsilon then does not cover what the bound leaks.
    """


class BudgetExceededError(ValueError):
    """A fit would spend more privacy budget than is left."""


class DivergenceError(FloatingPointError):
    """A private fit diverged: some per-example gradient was not finite.

    Such an example contributes nothing to the released sum (so the sensitivity holds), and
    the fit stops at once, releasing nothing more and setting no fitted attribute.
    """

"""The generic road every fit goes down, and what the estimators share: input kinds,
validation, the set-up releases, the prior switch, the transaction, fitted attributes,
verbose output, the leak audit's rules."""

#!/usr/bin/env bash
# The oldest scikit-learn pyproject.toml allows: install the package (from pyproject) into a
# second venv with that scikit-learn pinned, and run the tests that touch scikit-learn's API
# (estimator checks, input handling, the linear models, DP-SGD, budgets, the compat layer, the
# privacy tags: a subclass of scikit-learn's Tags).
set -euo pipefail
cd "$(dirname "$0")/.."
OLDEST_SKLEARN="1.6.1"   # keep in step with the lower bound in pyproject.toml
python3 -m venv .venv-oldest
. .venv-oldest/bin/activate
pip install ".[test]" "scikit-learn==${OLDEST_SKLEARN}" "numpy<2.3"
python -c "import sklearn; assert sklearn.__version__ == '${OLDEST_SKLEARN}', sklearn.__version__"
python -m pytest -q -p no:cacheprovider tests/package/test_estimator_checks.py tests/core/test_input_validation.py \
    tests/linear_model/test_linear_model.py tests/minibatch/test_sgd.py tests/composition/test_budget.py tests/package/test_compat.py \
    tests/core/test_class_list_and_row_count.py tests/core/test_fit_side_effects.py tests/composition/test_model_selection.py \
    tests/preprocessing/test_decomposition.py tests/composition/test_privacy_tags.py

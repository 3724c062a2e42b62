"""Fixtures shared by the test files."""

import contextlib

import pytest


@pytest.fixture
def use_policy():
    """``use_policy(NAME=value, ...)`` activates a changed :class:`skdpgd.policy.Policy` until
    the test ends (``skdpgd.policy.using`` entered for the rest of the test)."""
    from skdpgd import policy

    with contextlib.ExitStack() as stack:
        yield lambda **changes: stack.enter_context(policy.using(**changes))

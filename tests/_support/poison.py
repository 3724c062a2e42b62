"""Data that fails a test if anything reads it (for refusals that must read no row)."""


class Poison:
    """X or y that fails the test if anything reads it."""

    def __getattr__(self, name):
        raise AssertionError(f"the private rows were read ({name}) before the check")

    def __len__(self):
        raise AssertionError("the private rows were read (len) before the check")

    def __array__(self, *args, **kwargs):
        raise AssertionError("the private rows were read (array) before the check")

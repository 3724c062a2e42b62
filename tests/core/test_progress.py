"""``verbose=1``: a run that lasts shows its progress, in public step counts only."""

import re
import sys
import types

import numpy as np
import pytest

from skdpgd import DPLogisticRegression, DPSGDClassifier
from skdpgd._core import progress as _progress


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3)) / 3
    return X, (X[:, 0] > 0).astype(int)


@pytest.fixture
def no_tqdm(monkeypatch):
    real = _progress.importlib.util.find_spec
    monkeypatch.setattr(
        _progress.importlib.util, "find_spec", lambda n: None if n == "tqdm" else real(n)
    )


def test_a_quick_fit_prints_nothing_at_verbose_1(data, capsys, no_tqdm):
    X, y = data
    DPLogisticRegression(
        epsilon=1.0, data_norm=1.0, classes=[0, 1], schedule="uniform", max_iter=30, verbose=1
    ).fit(X, y)
    err = capsys.readouterr().err
    assert "step" not in err  # under SHOW_AFTER_SECONDS: no progress lines


@pytest.mark.parametrize(
    "make",
    [
        lambda: DPLogisticRegression(
            epsilon=1.0, data_norm=1.0, classes=[0, 1], schedule="uniform", max_iter=30
        ),
        lambda: DPSGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1], epochs=5),
    ],
    ids=["full batch", "DP-SGD"],
)
def test_a_long_fit_prints_plain_lines_of_public_step_counts(
    make, data, capsys, monkeypatch, no_tqdm
):
    X, y = data
    monkeypatch.setattr(_progress, "SHOW_AFTER_SECONDS", 0.0)  # every run counts as long
    quiet = make().set_params(random_state=0).fit(X, y)
    est = make().set_params(random_state=0, verbose=1).fit(X, y)
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert lines, captured
    # "[skdpgd] step k/n (p%)  elapsed t": public counts and the time only
    parsed = [
        re.fullmatch(r"\[skdpgd\] step (\d+)/(\d+) \((\d+)%\)  elapsed [\d.]+s", ln) for ln in lines
    ]
    assert all(parsed), lines
    done, total, percent = parsed[-1].groups()
    assert done == total and percent == "100"  # the run ends at n/n
    assert len(lines) <= 10 * 2  # a line per tenth (of the set-up releases and of the run)
    np.testing.assert_array_equal(est.coef_, quiet.coef_)  # the bar changes nothing


def test_a_long_fit_uses_tqdm_when_installed(data, monkeypatch):
    X, y = data
    monkeypatch.setattr(_progress, "SHOW_AFTER_SECONDS", 0.0)
    bars = []

    class FakeTqdm:
        def __init__(self, total, desc, file, unit):
            self.total, self.n, self.closed = total, 0, False
            bars.append(self)

        def update(self, k):
            self.n += k

        def close(self):
            self.closed = True

    fake = types.ModuleType("tqdm")
    fake.__spec__ = types.SimpleNamespace(name="tqdm")
    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = FakeTqdm
    monkeypatch.setitem(sys.modules, "tqdm", fake)
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    real = _progress.importlib.util.find_spec
    monkeypatch.setattr(
        _progress.importlib.util, "find_spec", lambda n: fake.__spec__ if n == "tqdm" else real(n)
    )
    DPLogisticRegression(
        epsilon=1.0,
        data_norm=1.0,
        classes=[0, 1],
        schedule="uniform",
        max_iter=30,
        verbose=1,
        random_state=0,
    ).fit(X, y)
    run = [b for b in bars if b.total == 30]
    assert len(run) == 1 and run[0].n == 30 and run[0].closed

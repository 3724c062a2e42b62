"""Write docs/api.md from the numpydoc docstrings of the public API.

Usage: ``python docs/build_api.py`` (from the repository root). The page is plain Markdown:
each public class and function with its signature and docstring, in module order.
"""

from __future__ import annotations

import inspect
import pathlib
import textwrap

import skdpgd
import skdpgd.accounting
import skdpgd.budget
import skdpgd.schedules

SECTIONS = [
    ("Estimators", skdpgd, ["DPLogisticRegression", "DPRidge", "DPSGDClassifier",
                            "DPSGDRegressor", "DPMLPClassifier"]),
    ("Shared budget", skdpgd.budget, ["PrivacyBudget"]),
    ("Schedules", skdpgd.schedules, None),
    ("Accounting", skdpgd.accounting, None),
    ("Exceptions and warnings", skdpgd, ["PrivacyLeakWarning", "BudgetExceededError"]),
]


def np_safe(obj):
    """Constants small enough to print in one line."""
    return isinstance(obj, (int, float, str)) or len(repr(obj)) < 200


def _signature(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def _entry(name, obj):
    if not (inspect.isclass(obj) or inspect.isfunction(obj)):
        return [f"- `{name} = {obj!r}`", ""] if np_safe(obj) else []
    doc = inspect.getdoc(obj) or "(no docstring)"
    kind = "class" if inspect.isclass(obj) else "function"
    out = [f"### `{name}{_signature(obj)}`", "", f"*{kind}*", "", "```text",
           doc, "```", ""]
    if inspect.isclass(obj):
        for meth_name, meth in inspect.getmembers(obj):
            if meth_name.startswith("_") or not callable(meth):
                continue
            if meth_name not in obj.__dict__ or inspect.isclass(meth):
                continue
            mdoc = inspect.getdoc(meth)
            if not mdoc:
                continue
            first = mdoc.splitlines()[0]
            out.append(f"- `{meth_name}{_signature(meth)}`: {first}")
        out.append("")
    return out


def build():
    lines = ["# API reference", "",
             "Generated from the docstrings by `python docs/build_api.py`; do not edit by hand.",
             ""]
    for title, module, names in SECTIONS:
        if names is None:
            names = list(getattr(module, "__all__", []))
        present = [n for n in names if hasattr(module, n)]
        if not present:
            continue
        lines += [f"## {title}", ""]
        if module.__doc__ and names is not None and module is not skdpgd:
            lines += [textwrap.dedent(module.__doc__).strip(), ""]
        for name in present:
            lines += _entry(name, getattr(module, name))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    path = pathlib.Path(__file__).with_name("api.md")
    path.write_text(build())
    print(f"wrote {path}")

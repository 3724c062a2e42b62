"""Imports inside skdpgd point one way.

The arrows between the rooms (no cycle at any level, what the lower rooms may import, the
generic road and the road families) are import-linter contracts in ``pyproject.toml``
(``[tool.importlinter]``); the tests below run them, check that their 'forbidden' lists name
every top-level module, and that they can fail. What a contract cannot say is checked here
on the package's own import graph.

The graph has an edge ``a -> b`` when module ``a`` imports module ``b`` of the package
(``from . import b``, ``from .b import name``, ``import skdpgd.b``), read from the source
with :mod:`ast`, so nothing is imported to build it. Two graphs are checked:

* the module-level imports (what ``import skdpgd.a`` runs): acyclic;
* every import, including those inside functions: also acyclic. A lazy import is there only
  to keep an optional dependency out of ``import skdpgd`` (the modules in ``OPTIONAL``,
  which import torch or dask, are imported lazily and by nothing at module level); it
  must not hide a cycle either (as ``_backends`` -> lazily ``_dask_backend`` -> ``_backends``
  once did).
"""

import ast
import contextlib
import io
import os
from pathlib import Path

import pytest

PACKAGE = "skdpgd"
ROOT = Path(__file__).resolve().parents[2] / PACKAGE

#: Modules that import an optional dependency; others import them only inside functions.
OPTIONAL = {"skdpgd._network.torch_backend", "skdpgd._compute.dask_backend"}

KNOWN_CYCLES = set()  # none: an entry here needs a reason in its comment


def _modules():
    """``{dotted name: path}`` of every module of the package, subpackages included."""
    names = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _package_of(name, path):
    """The package a relative import in module ``name`` starts from (level 1)."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _edges(name, path, modules):
    """``[(target, lazy)]``: the package modules ``name`` imports, lazy when inside a
    function or class body."""
    tree = ast.parse(path.read_text(), filename=str(path))
    top = set(map(id, tree.body))
    out = []

    def add(target, node):
        if target in modules and target != name:
            out.append((target, id(node) not in top))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    add(alias.name, node)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
                if not (base == PACKAGE or base.startswith(PACKAGE + ".")):
                    continue
            else:
                pkg = _package_of(name, path)
                for _ in range(node.level - 1):
                    pkg = pkg.rpartition(".")[0]
                base = pkg + ("." + node.module if node.module else "")
            if not node.module or base in modules and modules[base].name == "__init__.py":
                # from <package> import x: a module, or a name of the package
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    add(sub if sub in modules else base, node)
            else:
                add(base, node)
    return out


def _graph(lazy):
    modules = _modules()
    graph = {m: set() for m in modules}
    for name, path in modules.items():
        for target, is_lazy in _edges(name, path, modules):
            if not is_lazy:
                graph[name].add(target)
            elif lazy and (name, target) not in KNOWN_CYCLES:
                graph[name].add(target)
    return graph


def test_optional_dependency_modules_are_imported_lazily():
    """Nothing imports _torch_backend or _dask_backend at module level, so ``import skdpgd``
    imports neither torch nor dask."""
    graph = _graph(lazy=False)
    assert not {m for m, targets in graph.items() if targets & OPTIONAL} - OPTIONAL


def test_subpackage_imports_are_resolved():
    """Relative imports inside the subpackage resolve to its own modules (``from .gdp import``)
    and to the package above (``from .._checks import``)."""
    graph = _graph(lazy=True)
    assert "skdpgd.accounting.gdp" in graph["skdpgd.accounting.composition"]
    assert "skdpgd._checks" in graph["skdpgd.accounting.gdp"]
    assert "skdpgd.accounting" in graph["skdpgd.budget"]


def test_the_kind_of_input_is_tested_in_one_place():
    """Whether X is a dask collection is decided by skdpgd._core.data.is_dask only: no other module
    defines an ``is_dask`` or reads a type's module name to recognise dask."""
    found = []
    for name, path in _modules().items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.FunctionDef)
                and "dask" in node.name.lower()
                and node.name.lstrip("_").startswith("is_")
            ):
                found.append((name, node.name))
            if isinstance(node, ast.Attribute) and node.attr == "__module__":
                line = path.read_text().splitlines()[node.lineno - 1]
                if "dask" in line:
                    found.append((name, line.strip()))
    assert ("skdpgd._core.data", "is_dask") in found
    assert [f for f in found if f[0] != "skdpgd._core.data"] == []


def test_subpackages_are_one_level_deep():
    """skdpgd/<wing>/<module>.py at most: a wing holds modules, not further folders."""
    for path in ROOT.rglob("*.py"):
        assert len(path.relative_to(ROOT).parts) <= 2, path


def test_the_linear_models_are_one_module_each_on_one_base():
    """skdpgd.linear_model is a package: one module per estimator, each built on the shared
    GLM base (``_base``, which owns ``fit``) and importing no other estimator's module; the
    estimators' former root modules (``skdpgd._huber``, ``skdpgd._poisson``) are gone."""
    graph = _graph(lazy=True)
    base = "skdpgd.linear_model._base"
    estimators = {
        "skdpgd.linear_model._elastic_net",
        "skdpgd.linear_model._huber",
        "skdpgd.linear_model._logistic",
        "skdpgd.linear_model._poisson",
        "skdpgd.linear_model._ridge",
        "skdpgd.linear_model._tweedie",
    }
    assert {m for m in graph if m.startswith("skdpgd.linear_model.")} == estimators | {base}
    for module in estimators:
        assert base in graph[module], module
        assert not graph[module] & estimators, module
    assert not graph[base] & estimators
    assert "skdpgd._huber" not in graph and "skdpgd._poisson" not in graph
    assert base in graph["skdpgd.svm"]  # DPLinearSVC is on the classifier side of the base


# --- the import-linter contracts --------------------------------------------------------------
importlinter = pytest.importorskip("importlinter.application.use_cases")
tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
PYPROJECT = ROOT.parent / "pyproject.toml"


def _lint(config):
    """Run import-linter on ``config`` from the repository root; (kept, printed report)."""
    from importlinter.configuration import configure

    configure()  # what the lint-imports command sets up before it reads a config
    out = io.StringIO()
    cwd = os.getcwd()
    try:
        os.chdir(ROOT.parent)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            kept = importlinter.lint_imports(config_filename=str(config), no_logo=True)
    finally:
        os.chdir(cwd)
    return kept, out.getvalue()


def _contracts():
    return tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]


def test_the_import_contracts_hold():
    kept, report = _lint(PYPROJECT)
    assert kept, report


def test_the_forbidden_lists_name_every_top_level_module():
    """A module added at the top level must be placed: a lower room's 'forbidden' list names
    everything but itself and what it may import."""
    top = {
        f"{PACKAGE}.{p.stem if p.is_file() else p.name}"
        for p in ROOT.iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__"))
        or (p.is_dir() and (p / "__init__.py").exists())
    }
    may_import = {
        "skdpgd.accounting": {"skdpgd._checks", "skdpgd._config"},
        "skdpgd.policy": set(),
    }
    for contract in _contracts():
        if contract["type"] != "forbidden" or not set(may_import) & set(contract["source_modules"]):
            continue
        for source in contract["source_modules"]:
            allowed = may_import.get(source, set())
            named = set(contract["forbidden_modules"]) | set(contract["source_modules"])
            assert top - named - allowed == set(), (contract["name"], source)


def test_the_contracts_can_fail(tmp_path):
    """import-linter sees the real imports: a contract the code breaks is reported broken."""
    config = tmp_path / "contracts.toml"
    config.write_text(
        "[tool.importlinter]\n"
        'root_package = "skdpgd"\n'
        "[[tool.importlinter.contracts]]\n"
        'name = "the fit path may not use the accountant (it does)"\n'
        'type = "forbidden"\n'
        'source_modules = ["skdpgd._core.fit"]\n'
        'forbidden_modules = ["skdpgd.accounting"]\n'
    )
    kept, report = _lint(config)
    assert not kept and "BROKEN" in report

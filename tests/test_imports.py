"""Imports inside skdpgd point one way: no cycle among its modules.

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
from pathlib import Path

import pytest

PACKAGE = "skdpgd"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

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


def _cycle(graph):
    """One cycle of ``graph`` as a list of modules, or None."""
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                return stack[stack.index(t) :] + [t]
            if t not in state:
                found = visit(t)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


@pytest.mark.parametrize("lazy", [False, True], ids=["module-level", "with-lazy-imports"])
def test_no_import_cycle(lazy):
    cycle = _cycle(_graph(lazy))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_optional_dependency_modules_are_imported_lazily():
    """Nothing imports _torch_backend or _dask_backend at module level, so ``import skdpgd``
    imports neither torch nor dask."""
    graph = _graph(lazy=False)
    assert not {m for m, targets in graph.items() if targets & OPTIONAL} - OPTIONAL


def test_the_cycle_check_finds_a_cycle():
    """The walker sees the real imports and the check reports a cycle (so the tests above can
    fail): one edge back from accounting to the fit path, which imports it, closes one."""
    graph = _graph(lazy=True)
    assert "skdpgd.accounting" in graph["skdpgd._fit"]
    graph["skdpgd.accounting"].add("skdpgd._fit")
    assert _cycle(graph) is not None
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


#: The 'never' arrows: what each layer may import from the rest of skdpgd (every import,
#: lazy ones included). Everything else may import them; they never import anything above.
#: accounting: the parameter checks only (not the estimators, the fit path, the budget, the
#: policy, the mechanisms or the rows); policy: nothing; the compute layer (kernels and
#: backends): nothing of the package outside it; the numba kernels: numba's caching policy and
#: each other; their numpy twins for small problems: the kernels.
NEVER_ABOVE = {
    "skdpgd.accounting": {"skdpgd._checks", "skdpgd._config"},
    # the kernels and the backends that call them: numpy, numba, dask, nothing of the roads
    "skdpgd._compute": set(),
    "skdpgd.policy": set(),
    # secure_random: the secure stream and its samplers (numpy, numba), one dispatch point
    "skdpgd._compute.secure_random": {"skdpgd._compute.jit"},
    "skdpgd._compute.kernels": {"skdpgd._compute.jit", "skdpgd._compute.secure_random"},
    "skdpgd._compute.kernels_second": {"skdpgd._compute.jit", "skdpgd._compute.kernels"},
    "skdpgd._compute.kernels_sgd": {
        "skdpgd._compute.jit",
        "skdpgd._compute.kernels",
        "skdpgd._compute.secure_random",
    },
    # the numpy twins of the kernels for small problems: the kernels' constants and helpers
    "skdpgd._compute.small_problems": {
        "skdpgd._compute.kernels",
        "skdpgd._compute.kernels_second",
        "skdpgd._compute.secure_random",
    },
}


@pytest.mark.parametrize("layer", sorted(NEVER_ABOVE))
def test_lower_layers_import_nothing_above_them(layer):
    graph = _graph(lazy=True)
    inside = {m for m in graph if m == layer or m.startswith(layer + ".")}
    assert inside, f"{layer} not found"
    outside = {(m, t) for m in inside for t in graph[m] - inside - NEVER_ABOVE[layer]}
    assert outside == set()


def test_the_arrow_check_finds_an_import_above():
    """The walker sees the subpackage's modules and a made-up edge upward would be caught."""
    graph = _graph(lazy=True)
    inside = {m for m in graph if m.startswith("skdpgd.accounting.")}
    assert {
        "skdpgd.accounting.events",
        "skdpgd.accounting.gdp",
        "skdpgd.accounting.rdp",
        "skdpgd.accounting.pld",
        "skdpgd.accounting.selection",
    } <= inside
    graph["skdpgd.accounting.gdp"].add("skdpgd.budget")
    assert {t for m in inside for t in graph[m]} - inside - NEVER_ABOVE["skdpgd.accounting"]


def test_subpackage_imports_are_resolved():
    """Relative imports inside the subpackage resolve to its own modules (``from .gdp import``)
    and to the package above (``from .._checks import``)."""
    graph = _graph(lazy=True)
    assert "skdpgd.accounting.gdp" in graph["skdpgd.accounting.composition"]
    assert "skdpgd._checks" in graph["skdpgd.accounting.gdp"]
    assert "skdpgd.accounting" in graph["skdpgd.budget"]


def test_the_kind_of_input_is_tested_in_one_place():
    """Whether X is a dask collection is decided by skdpgd._data.is_dask only: no other module
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
    assert ("skdpgd._data", "is_dask") in found
    assert [f for f in found if f[0] != "skdpgd._data"] == []


#: The road families (one folder each); the generic road (skdpgd._fit) imports none of them.
ROAD_FAMILIES = ("skdpgd._full_batch", "skdpgd._minibatch", "skdpgd._network")


def test_the_generic_road_imports_no_road_family():
    graph = _graph(lazy=True)
    for layer in (
        "skdpgd._fit",
        "skdpgd._setup",
        "skdpgd._prior",
        "skdpgd._importance_mask",
        "skdpgd._progress",
        "skdpgd._compute",
    ):
        inside = {m for m in graph if m == layer or m.startswith(layer + ".")}
        reached = {t for m in inside for t in graph[m]}
        assert not {t for t in reached if t.startswith(ROAD_FAMILIES)}, layer


def test_no_road_family_imports_another():
    """What the roads share (the prior switch, the importance mask's rule, the set-up releases,
    the rows) lives below them (skdpgd._prior, skdpgd._importance_mask, skdpgd._setup,
    skdpgd._compute): no road family imports another."""
    graph = _graph(lazy=True)
    for family in ROAD_FAMILIES:
        inside = {m for m in graph if m == family or m.startswith(family + ".")}
        reached = {t for m in inside for t in graph[m]}
        others = tuple(f for f in ROAD_FAMILIES if f != family)
        assert not {t for t in reached if t.startswith(others)}, family


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

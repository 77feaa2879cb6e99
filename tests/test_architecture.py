"""The package's layering, checked on its source: imports, cycles and templates.

Each check is its own function, so that checks added for other parts of the package stay
independent of these.
"""

import ast
import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import skldp
from skldp._base import BaseDistributionEstimator, BasePrivatizer

PACKAGE = Path(skldp.__file__).resolve().parent
ROOT = PACKAGE.parent


def _modules():
    """``{dotted name: path}`` of every module of skldp (packages by their ``__init__``)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _package_of(name, modules=MODULES):
    """The package a module belongs to (``skldp`` for the top-level modules)."""
    if modules[name].name == "__init__.py":
        return name
    return name.rsplit(".", 1)[0]


def _imports(path, *, module_level_only):
    """``(line, module, imported name)`` of every ``from skldp... import`` in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = ast.walk(tree) if not module_level_only else _module_level(tree)
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "skldp" or node.module.startswith("skldp."):
                for alias in node.names:
                    yield node.lineno, node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("skldp."):
                    yield node.lineno, alias.name, None


def _module_level(tree):
    """Statements run at import: the module body, including its ``if`` and ``try`` blocks."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            todo.extend(ast.iter_child_nodes(node))
        elif isinstance(node, ast.ExceptHandler):
            todo.extend(node.body)


def _cross_package_private_imports(modules=MODULES):
    found = []
    for name, path in modules.items():
        own = _package_of(name, modules)
        for line, module, imported in _imports(path, module_level_only=False):
            if imported is None or not imported.startswith("_"):
                continue
            if f"{module}.{imported}" in modules:
                continue  # a module (``from skldp import _domain``): shared internals
            target = module if module in modules else module.rsplit(".", 1)[0]
            if _package_of(target, modules) != own:
                found.append(f"{name}:{line}: from {module} import {imported}")
    return found


def test_no_private_name_is_imported_across_packages():
    # A private name belongs to its package. What two packages share lives in a top-level
    # underscore module under a name without underscore (a documented internal API).
    assert _cross_package_private_imports() == []


def test_the_private_import_check_catches_one(tmp_path):
    planted = tmp_path / "_planted.py"
    planted.write_text(
        "from skldp.channels._hashed import _digest_array\n"  # another package's private name
        "from skldp.estimators._em import _accelerated\n"  # its own package: allowed
        "from skldp import _domain\n",  # a shared internal module: allowed
        encoding="utf-8",
    )
    modules = {
        "skldp.estimators._planted": planted,
        "skldp.channels._hashed": MODULES["skldp.channels._hashed"],
        "skldp.estimators": MODULES["skldp.estimators"],
        "skldp.channels": MODULES["skldp.channels"],
        "skldp._domain": MODULES["skldp._domain"],
        "skldp": MODULES["skldp"],
    }
    found = [f for f in _cross_package_private_imports(modules) if "_planted" in f]
    assert found == [
        "skldp.estimators._planted:1: from skldp.channels._hashed import _digest_array"
    ]


def test_no_import_placed_mid_file_to_dodge_a_cycle():
    offenders = [
        f"{path.relative_to(ROOT)}:{i}"
        for path in MODULES.values()
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "noqa: E402" in line.replace("noqa:E402", "noqa: E402")
    ]
    assert offenders == []


def _import_graph():
    """Module-level imports between skldp modules, each to the module it names.

    ``from skldp.x import y`` points at ``skldp.x.y`` when that is a module, else at
    ``skldp.x``; the parent packages Python initializes first are not edges (every module
    would then sit in a cycle with ``skldp/__init__``).
    """
    graph = {}
    for name, path in MODULES.items():
        deps = set()
        for _, module, imported in _imports(path, module_level_only=True):
            sub = f"{module}.{imported}" if imported else None
            target = sub if sub in MODULES else module
            if target in MODULES and target != name:
                deps.add(target)
        graph[name] = deps
    return graph


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_module_level_imports_form_no_cycle():
    assert _cycles(_import_graph()) == []
    # The check sees a cycle when there is one.
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_each_module_imports_first_in_a_fresh_interpreter():
    # One fresh interpreter; before each module, every skldp module is dropped from
    # sys.modules, so each is imported as if first (third-party libraries stay loaded: they
    # cannot hide a cycle inside skldp). ``import skldp`` must not load the edge extras.
    code = textwrap.dedent(
        f"""
        import importlib, sys
        import skldp
        print(sorted(m for m in ("matplotlib", "tqdm") if m in sys.modules))
        failed = []
        for name in {sorted(MODULES)!r}:
            for m in [m for m in sys.modules if m == "skldp" or m.startswith("skldp.")]:
                del sys.modules[m]
            try:
                importlib.import_module(name)
            except Exception as exc:
                failed.append(f"{{name}}: {{exc!r}}")
        print(failed)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    edge, failed = proc.stdout.strip().splitlines()[-2:]
    assert edge == "[]"
    assert failed == "[]"


def _public_classes(base):
    out = []
    for module in (skldp.privatizers, skldp.estimators):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, base):
                out.append(obj)
    return out


@pytest.mark.parametrize(
    "base, templates",
    [
        (BasePrivatizer, ("fit", "transform", "fit_transform")),
        (BaseDistributionEstimator, ("fit", "partial_fit")),
    ],
    ids=["privatizers", "estimators"],
)
def test_no_subclass_overrides_a_template_method(base, templates):
    classes = _public_classes(base)
    assert len(classes) >= 6
    overriding = [
        f"{cls.__name__}.{name}"
        for cls in classes
        for klass in cls.__mro__
        if klass is not base and issubclass(klass, base)
        for name in templates
        if name in vars(klass)
    ]
    assert overriding == []


def test_dask_glue_calls_no_private_method_of_the_base_classes():
    tree = ast.parse((PACKAGE / "_dask.py").read_text(encoding="utf-8"))
    private = sorted(
        {
            f"{node.value.id}.{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        }
    )
    # Only Dask's own frame metadata, ``X._meta``, is private here.
    assert private == ["X._meta"]
    imported = {m for _, m, _ in _imports(PACKAGE / "_dask.py", module_level_only=False)}
    assert "skldp._base" not in imported

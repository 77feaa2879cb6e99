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
from skldp.base import BaseDistributionEstimator, BasePrivatizer

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


def _unit(name, modules=MODULES):
    """What owns a module's private names: its subpackage, or a top-level module alone.

    The modules of a subpackage (``skldp.channels._base``, ``skldp.channels._bits``) share
    their private names; each top-level module (``skldp._params``, ``skldp._reports``) is a
    unit of its own, since what top-level modules share is an internal API under names
    without an underscore.
    """
    package = _package_of(name, modules)
    if package == "skldp" and modules[name].name != "__init__.py":
        return "skldp.cli" if name.startswith(_CLI_PARTS) else name
    return package


#: The command line is one unit: ``skldp.cli`` and its parts ``skldp._cli_*``.
_CLI_PARTS = "skldp._cli_"


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


_TYPE_CHECKING = ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _module_level(tree):
    """Statements run at import: the module body, including its ``if`` and ``try`` blocks.

    The body of ``if TYPE_CHECKING:`` never runs (imports there are for annotations only,
    which ``from __future__ import annotations`` leaves unevaluated); its ``else`` does.
    """
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and ast.unparse(node.test) in _TYPE_CHECKING:
            todo.extend(node.orelse)
        elif isinstance(node, (ast.If, ast.Try)):
            todo.extend(ast.iter_child_nodes(node))
        elif isinstance(node, ast.ExceptHandler):
            todo.extend(node.body)


def _cross_package_private_imports(modules=MODULES):
    found = []
    for name, path in modules.items():
        own = _unit(name, modules)
        for line, module, imported in _imports(path, module_level_only=False):
            if imported is None or not _is_private(imported):
                continue  # a public name, or a dunder (``__version__``)
            if f"{module}.{imported}" in modules:
                continue  # a module (``from skldp import _domain``): shared internals
            target = module if module in modules else module.rsplit(".", 1)[0]
            if _unit(target, modules) != own:
                found.append(f"{name}:{line}: from {module} import {imported}")
    return found


def test_no_private_name_is_imported_across_packages():
    # A private name belongs to its subpackage, or to its top-level module. What two of them
    # share lives in a top-level underscore module under a name without underscore (a
    # documented internal API).
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


def test_imports_for_type_checking_only_are_not_module_level():
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from skldp.a import A\nelse:\n    from skldp.b import B\n"
        "if x:\n    from skldp.c import C\n"
    )
    found = {n.module for n in _module_level(tree) if isinstance(n, ast.ImportFrom)}
    assert found == {"typing", "skldp.b", "skldp.c"}


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
        (BaseDistributionEstimator, ("fit", "partial_fit", "fit_chunks")),
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
    assert not {m for m in imported if m.endswith("._base")}


def test_spark_glue_calls_no_private_method_and_imports_no_class_of_skldp():
    # skldp/_spark.py, like skldp/_dask.py, is handed what it needs by the base classes
    tree = ast.parse((PACKAGE / "_spark.py").read_text(encoding="utf-8"))
    private = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr.startswith("_")
    }
    assert private == set()
    imported = {m for _, m, _ in _imports(PACKAGE / "_spark.py", module_level_only=False)}
    assert imported <= {"skldp.exceptions"}


# -- every import, inside functions too (issue 28, item 4) --------------------------------------
#
# The graph below counts every import that can run: module level, inside functions and
# methods, and the lazy exports of a package (module ``__getattr__``); only the bodies of
# ``if TYPE_CHECKING:`` are left out (they never run). Relative imports are resolved. A name
# imported from a package (``from skldp.privacy import LDP``) points at the module the package
# takes it from (``skldp.privacy._models``): that is the code the importer depends on; a
# package imported as a module (``from skldp import privacy``) points at its ``__init__``,
# which points at everything it exports, lazy exports included.

#: Optional dependencies (the ``dask``, ``plot``, ``cli`` and ``spark`` extras of
#: pyproject.toml): imported inside the function that needs them, so that ``import skldp`` works
#: without them. Any module may import these lazily.
OPTIONAL_DEPENDENCIES = {"dask", "distributed", "matplotlib", "tqdm", "pyarrow", "pyspark"}

#: Edge modules: entry points that a user or the command line calls and that no other module
#: imports (checked below), so their imports cannot close a cycle under the package. They may
#: import anything lazily: ``skldp.cli`` loads what a subcommand needs (pyarrow, the registry,
#: the advisor, plotting) when the subcommand runs; ``skldp.plotting`` needs matplotlib, which
#: is optional; ``skldp.experiments`` (simulation studies, above the privatizers, estimators
#: and registry) runs with optional progress bars (tqdm) and parallel workers.
EDGE_MODULES = {"skldp.cli", "skldp.plotting", "skldp.experiments"}


def _is_edge(name):
    """An edge module, or a part of the command line (``skldp._cli_*``)."""
    return name is not None and (name in EDGE_MODULES or name.startswith(_CLI_PARTS))


#: The privacy package in two layers. The leaf states and checks guarantees; channels,
#: privatizers and estimators import it. The top layer reads fitted privatizers and
#: scikit-learn composites, so it sits above the privatizers (and is loaded lazily by
#: ``skldp.privacy``).
PRIVACY_LEAF = (
    "skldp.privacy._abilities",
    "skldp.privacy._accounting",
    "skldp.privacy._matrix",
    "skldp.privacy._models",
    "skldp.privacy._verify",
)
PRIVACY_TOP = (
    "skldp.privacy._audit",
    "skldp.privacy._audit_result",
    "skldp.privacy._blackbox",
    "skldp.privacy._guarantee",
    "skldp.privacy._shuffle",
)


def _runtime_nodes(tree):
    """``(node, inside a function)`` for every node that can run: all but ``if TYPE_CHECKING:``."""
    todo = [(tree, False)]
    while todo:
        node, in_function = todo.pop()
        yield node, in_function
        if isinstance(node, ast.If) and ast.unparse(node.test) in _TYPE_CHECKING:
            children = node.orelse
        else:
            children = list(ast.iter_child_nodes(node))
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        todo.extend((child, inner) for child in children)


def _absolute(name, node, modules=MODULES):
    """The absolute module of ``from ... import`` in module ``name`` (relative ones resolved)."""
    if not node.level:
        return node.module
    package = name if modules[name].name == "__init__.py" else name.rsplit(".", 1)[0]
    if node.level > 1:
        package = package.rsplit(".", node.level - 1)[0]
    return f"{package}.{node.module}" if node.module else package


def _where(in_function):
    return "function" if in_function else "module"


def _is_package(name, modules=MODULES):
    return modules[name].name == "__init__.py"


def _exports(modules=MODULES):
    """``{package: {name: module it comes from}}``, lazy exports (``TYPE_CHECKING``) included."""
    out = {}
    for name, path in modules.items():
        if not _is_package(name, modules):
            continue
        table = out[name] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    table[alias.asname or alias.name] = _absolute(name, node, modules)
    return out


def _target(module, imported, modules=MODULES, exports=None, seen=()):
    """The skldp module that ``from module import imported`` depends on (None: not skldp)."""
    sub = f"{module}.{imported}"
    if sub in modules:
        return sub
    exports = _exports(modules) if exports is None else exports
    source = exports.get(module, {}).get(imported)
    if source is not None and source in modules and module not in seen:
        return _target(source, imported, modules, exports, (*seen, module))
    return module if module in modules else None


def _all_imports(modules=MODULES):
    """``(module, line, imported, target, where)`` of every import that can run.

    ``imported`` is the dotted name as written (absolute), ``target`` the skldp module it
    points at (None outside skldp), ``where`` is ``"module"`` (runs on import),
    ``"function"`` (inside a function) or ``"export"``: a package's lazy exports (names of
    skldp modules written as strings in its ``__init__``, loaded by its ``__getattr__``) count
    as its imports. A call of ``importlib.import_module`` outside a package ``__init__`` is an
    import of unknown target.
    """
    exports = _exports(modules)
    out = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node, in_function in _runtime_nodes(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = alias.name if alias.name in modules else None
                    out.append((name, node.lineno, alias.name, target, _where(in_function)))
            elif isinstance(node, ast.ImportFrom):
                module = _absolute(name, node, modules)
                for alias in node.names:
                    target = _target(module, alias.name, modules, exports)
                    out.append((name, node.lineno, module, target, _where(in_function)))
            elif (
                isinstance(node, ast.Call)
                and ast.unparse(node.func) in ("import_module", "importlib.import_module")
                and not _is_package(name, modules)
            ):
                out.append((name, node.lineno, "importlib.import_module", None, "function"))
        if _is_package(name, modules):
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and node.value in modules and node.value != name:
                    out.append((name, node.lineno, node.value, node.value, "export"))
    return out


def _full_graph(modules=MODULES, imports=None):
    """``{module: {module it imports}}``, imports inside functions included."""
    graph = {name: set() for name in modules}
    for name, _, _, target, _ in _all_imports(modules) if imports is None else imports:
        if target is None or target == name:
            continue
        graph[name].add(target)
    return graph


def _reach(graph, start):
    seen, todo = set(), [start]
    while todo:
        for w in graph[todo.pop()] - seen:
            seen.add(w)
            todo.append(w)
    return seen


def test_no_import_cycle_counting_imports_inside_functions():
    # Every module of the package, the edge modules included: their imports point down.
    graph = _full_graph()
    assert _cycles(graph) == []


def test_imports_inside_functions_are_optional_dependencies_or_edges():
    lazy = [imp for imp in _all_imports() if imp[4] == "function"]
    offenders = []
    for name, line, imported, target, _ in lazy:
        if imported.split(".")[0] in OPTIONAL_DEPENDENCIES or _is_edge(name) or _is_edge(target):
            continue
        offenders.append(f"{name}:{line}: {imported}")
    assert offenders == []


def test_edge_modules_are_imported_by_edge_modules_only():
    importers = sorted(
        f"{name}:{line}: {target}"
        for name, line, _, target, _ in _all_imports()
        if _is_edge(target) and not _is_edge(name)
    )
    assert importers == []


def test_optional_dependencies_are_not_core_dependencies():
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {d.split(">")[0].split("[")[0].strip().lower() for d in meta["dependencies"]}
    assert not (core & OPTIONAL_DEPENDENCIES)
    extras = " ".join(d for group in meta["optional-dependencies"].values() for d in group)
    assert all(dep in extras for dep in OPTIONAL_DEPENDENCIES)


def test_the_privacy_leaf_reaches_no_channel_privatizer_or_estimator():
    graph = _full_graph()
    above = ("skldp.channels", "skldp.privatizers", "skldp.estimators")
    for leaf in PRIVACY_LEAF:
        reached = _reach(graph, leaf)
        assert sorted(m for m in reached if m.startswith(above) or m in PRIVACY_TOP) == [], leaf
    # and the channels, privatizers and estimators never reach the top layer
    for name in MODULES:
        if name.startswith(above):
            assert not (_reach(graph, name) & set(PRIVACY_TOP)), name
    # the top layer sits above the privatizers: it imports their base class at module level
    guarantee = {
        target
        for name, _, _, target, where in _all_imports()
        if name == "skldp.privacy._guarantee" and where == "module"
    }
    assert "skldp.privatizers._base" in guarantee


def test_the_privacy_top_layer_loads_on_first_use():
    code = textwrap.dedent(
        """
        import sys
        import skldp.privacy as privacy
        top = ("skldp.privacy._audit", "skldp.privacy._guarantee", "skldp.privacy._shuffle")
        print([m for m in top if m in sys.modules])
        from skldp.privacy import guarantee_of
        print(guarantee_of.__module__, privacy.audit.__module__, "AuditResult" in dir(privacy))
        try:
            privacy.no_such_name
        except AttributeError as exc:
            print(exc)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == [
        "[]",
        "skldp.privacy._guarantee skldp.privacy._audit True",
        "module 'skldp.privacy' has no attribute 'no_such_name'",
    ]
    assert set(skldp.privacy.__all__) <= set(dir(skldp.privacy))


def _planted_modules(tmp_path, files):
    """A fake package ``skldp`` in ``tmp_path`` from ``{relative path: source}``."""
    modules = {}
    for rel, source in files.items():
        path = tmp_path / "skldp" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        parts = path.relative_to(tmp_path).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def test_the_full_graph_sees_lazy_relative_and_facade_imports(tmp_path):
    modules = _planted_modules(
        tmp_path,
        {
            "__init__.py": "",
            "_low.py": "def f():\n    from .top import _helper\n",  # lazy and relative: seen
            "_typed.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from skldp.top import T\n"  # never runs: not seen
            ),
            "pkg/__init__.py": (
                "from skldp.pkg._leaf import L\n"
                "_LAZY = {'T': 'skldp.pkg._top'}\n"  # a lazy export: the package imports it
            ),
            "pkg/_leaf.py": "",
            "pkg/_top.py": "",
            "pkg/_user.py": "from skldp.pkg import L\n",  # through the facade, to its source
            "top.py": "from skldp import _low\n",
        },
    )
    graph = _full_graph(modules, _all_imports(modules))
    assert graph["skldp._low"] == {"skldp.top"}
    assert graph["skldp._typed"] == set()
    assert graph["skldp.pkg"] == {"skldp.pkg._leaf", "skldp.pkg._top"}
    assert graph["skldp.pkg._user"] == {"skldp.pkg._leaf"}
    assert _cycles(graph) == [["skldp._low", "skldp.top"]]


# -- private attributes across packages (issue 28, item 4) ---------------------------------------
#
# A private member (``obj._name``) belongs to the unit that defines it (``_unit``: a
# subpackage, or a top-level module). The check is an approximation without types: it
# collects, per unit, the private names the unit defines (``def``/``class`` names, names and
# attributes assigned, ``setattr`` with a literal name) and flags ``x._name`` (or
# ``getattr(x, "_name")``, ``hasattr``, ``setattr``, ``delattr``) in a unit that does not
# define ``_name`` when another unit does. Dunder names, and access through ``self``, ``cls``,
# ``super()`` and ``type(self)``, are always allowed. Names that no skldp module defines
# (``X._meta`` of Dask) are other libraries' business.

_ATTRIBUTE_FUNCTIONS = ("getattr", "hasattr", "setattr", "delattr")


def _is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_definitions(modules=MODULES):
    """``{private name: {units defining it}}``."""
    out = {}
    for name, path in modules.items():
        unit = _unit(name, modules)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined = node.name
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                defined = node.attr
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined = node.id
            elif _literal_attribute_call(node, ("setattr",)):
                defined = node.args[1].value
            else:
                continue
            if _is_private(defined):
                out.setdefault(defined, set()).add(unit)
    return out


def _literal_attribute_call(node, functions=_ATTRIBUTE_FUNCTIONS):
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in functions
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    )


def _own_object(node):
    """``self``, ``cls``, ``super()`` or ``type(self)``: access to the object's own members."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("super", "type")
        and all(_own_object(arg) for arg in node.args)
    )


def _private_accesses(modules=MODULES):
    """``(module, line, expression, private name)`` of every access to another object's member."""
    out = []
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                attr, obj = node.attr, node.value
            elif _literal_attribute_call(node):
                attr, obj = node.args[1].value, node.args[0]
            else:
                continue
            if _is_private(attr) and not _own_object(obj):
                out.append((name, node.lineno, ast.unparse(node), attr))
    return out


def _cross_unit_private_accesses(modules=MODULES):
    """``{(module, name): [findings]}`` of private names used outside every unit defining them."""
    defined = _private_definitions(modules)
    found = {}
    for name, line, expression, attr in _private_accesses(modules):
        owners = defined.get(attr, set())
        if owners and _unit(name, modules) not in owners:
            where = ", ".join(sorted(owners))
            found.setdefault((name, attr), []).append(f"{name}:{line}: {expression} ({where})")
    return found


def test_no_private_attribute_is_used_across_packages():
    found = _cross_unit_private_accesses()
    assert [f for _, lines in sorted(found.items()) for f in lines] == []


def test_the_private_attribute_check_catches_one(tmp_path):
    modules = _planted_modules(
        tmp_path,
        {
            "__init__.py": "",
            "channels/__init__.py": "",
            "channels/_base.py": (
                "class Channel:\n"
                "    def __init__(self):\n        self._cache = {}\n"
                "    def _sample(self, x):\n        return self._cache\n"  # own member: fine
                "    def __eq__(self, other):\n        return self._key() == other._key()\n"
                "    def _key(self):\n        return 1\n"
            ),
            "channels/_rr.py": "def draw(ch):\n    return ch._sample(0)\n",  # same unit: fine
            "_base.py": (
                "def transform(ch, x):\n"
                "    ch._cache.clear()\n"  # another unit's field
                "    getattr(ch, '_sample')(x)\n"  # by name
                "    return x._meta, x.__class__\n"  # not skldp's, dunder: fine
            ),
        },
    )
    assert _cross_unit_private_accesses(modules) == {
        ("skldp._base", "_cache"): ["skldp._base:2: ch._cache (skldp.channels)"],
        ("skldp._base", "_sample"): [
            "skldp._base:3: getattr(ch, '_sample') (skldp.channels)",
        ],
    }


#: Accesses to a private name that the accessing unit defines *and* another unit defines too
#: (``_sample`` is a hook of channels and of privatizers): without types the check above
#: cannot tell whose member it is, so each one is reviewed here, by module and expression.
#: ``ch._sample`` in ``skldp._base`` (a privatizer calling a channel's hook) was one; the
#: channel's public ``sample(..., check_input=False)`` replaced it.
SHARED_PRIVATE_NAMES_REVIEWED = {
    ("skldp._reports", "self._integers()._reduce"): (
        "pandas' ExtensionArray protocol, called on pandas' own integer array"
    ),
    ("skldp.channels._base", "other._key"): "a channel's __eq__ reads the other channel's key",
    ("skldp.privacy._models", "other._key"): "a model's __eq__ reads the other model's key",
    ("skldp.channels._longitudinal", "self.prr._key"): "a channel reads the channel it wraps",
    ("skldp.channels._longitudinal", "self.prr._sample"): "a channel draws with the one it wraps",
    ("skldp.channels._personalized", "self.common._sample"): (
        "a channel draws with the one it wraps"
    ),
}


def _unit_classes(modules=MODULES):
    """``{unit: {names of the classes its modules define}}``."""
    out = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        out.setdefault(_unit(name, modules), set()).update(classes)
    return out


def _ambiguous_private_accesses(modules=MODULES):
    """``{(module, expression): line}`` of private names also defined by another unit."""
    defined = _private_definitions(modules)
    classes = _unit_classes(modules)
    found = {}
    for name, line, expression, attr in _private_accesses(modules):
        unit = _unit(name, modules)
        owners = defined.get(attr, set())
        if unit not in owners or owners == {unit}:
            continue  # the check above, or the unit's own name
        obj = expression.rsplit(".", 1)[0]
        if obj.isidentifier() and obj in classes[unit]:
            continue  # a class of this unit (``Parent._parameter_constraints``)
        found.setdefault((name, expression), line)
    return found


def test_private_names_shared_by_several_packages_are_accessed_where_reviewed():
    found = _ambiguous_private_accesses()
    assert sorted(set(found) - set(SHARED_PRIVATE_NAMES_REVIEWED)) == []
    assert sorted(set(SHARED_PRIVATE_NAMES_REVIEWED) - set(found)) == [], "stale entries"


def test_the_shared_private_name_check_catches_one(tmp_path):
    modules = _planted_modules(
        tmp_path,
        {
            "__init__.py": "",
            "channels/__init__.py": "",
            "channels/_base.py": "class Channel:\n    def _sample(self, x):\n        return x\n",
            "_base.py": (
                "class BasePrivatizer:\n"
                "    def _sample(self, X):\n"
                "        return [ch._sample(X) for ch in self.channels_]\n"  # a channel's hook
                "    def _other(self):\n"
                "        return self._sample(0), BasePrivatizer._sample\n"  # its own: fine
            ),
        },
    )
    assert _ambiguous_private_accesses(modules) == {("skldp._base", "ch._sample"): 3}

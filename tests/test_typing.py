"""The public API carries type hints, and mypy passes on the package (issue 19, item 4)."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import skldp

ROOT = Path(skldp.__file__).resolve().parent.parent

PUBLIC_MODULES = [
    "skldp",
    "skldp.privatizers",
    "skldp.estimators",
    "skldp.channels",
    "skldp.privacy",
    "skldp.metrics",
    "skldp.projection",
    "skldp.theory",
    "skldp.datasets",
    "skldp.experiments",
    "skldp.plotting",
    "skldp.io",
    "skldp.spark",
    "skldp.registry",
    "skldp.exceptions",
]


def _defined_in_skldp(obj):
    return getattr(obj, "__module__", "").split(".")[0] == "skldp"


def _missing_annotations(func, *, skip_first):
    """Names of parameters (and ``"return"``) of ``func`` that carry no annotation."""
    func = inspect.unwrap(func)
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    if skip_first and params:
        params = params[1:]
    missing = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    if sig.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def _class_members(cls):
    """Public methods (and ``__init__``) defined in skldp, including those inherited from skldp
    base classes; sklearn's own methods are not ours to annotate."""
    for name in sorted(set(dir(cls))):
        if name.startswith("_") and name != "__init__":
            continue
        owner = next((c for c in cls.__mro__ if name in vars(c)), None)
        if owner is None or not _defined_in_skldp(owner):
            continue
        raw = vars(owner)[name]
        if isinstance(raw, property):
            if raw.fget is not None:
                yield f"{owner.__qualname__}.{name}", raw.fget, True
            continue
        if isinstance(raw, staticmethod):
            yield f"{owner.__qualname__}.{name}", raw.__func__, False
        elif isinstance(raw, classmethod):
            yield f"{owner.__qualname__}.{name}", raw.__func__, True
        elif inspect.isfunction(raw):
            yield f"{owner.__qualname__}.{name}", raw, True


def _public_callables():
    seen = set()
    for modname in PUBLIC_MODULES:
        module = importlib.import_module(modname)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not _defined_in_skldp(obj):
                continue
            if inspect.isclass(obj):
                for qualname, func, skip_first in _class_members(obj):
                    if qualname not in seen:
                        seen.add(qualname)
                        yield qualname, func, skip_first
            elif callable(obj):
                qualname = f"{obj.__module__}.{obj.__qualname__}"
                if qualname not in seen:
                    seen.add(qualname)
                    yield qualname, obj, False


def test_walker_finds_the_public_api():
    names = {qualname for qualname, _, _ in _public_callables()}
    # spot checks: a function, a class constructor, an inherited base-class method
    assert "skldp.metrics.total_variation" in names
    assert "RandomizedResponse.__init__" in names
    assert any(n.endswith(".fit") for n in names)
    assert len(names) > 100


def test_walker_detects_a_missing_annotation():
    def f(x: int, y) -> int:
        return x

    def g(x: int):
        return x

    assert _missing_annotations(f, skip_first=False) == ["y"]
    assert _missing_annotations(g, skip_first=False) == ["return"]


def test_every_public_function_and_method_is_annotated():
    missing = {}
    for qualname, func, skip_first in _public_callables():
        gaps = _missing_annotations(func, skip_first=skip_first)
        if gaps:
            missing[qualname] = gaps
    lines = [f"{name}: {', '.join(gaps)}" for name, gaps in sorted(missing.items())]
    assert not missing, f"{len(missing)} public callables lack annotations:\n" + "\n".join(lines)


def test_mypy_passes_on_the_package(tmp_path):
    """``mypy`` with the ``[tool.mypy]`` configuration of pyproject.toml finds no error."""
    pytest.importorskip("mypy")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy_cache")],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr

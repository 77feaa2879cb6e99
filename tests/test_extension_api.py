"""The public extension API: skldp.base and skldp.channels give what a new mechanism needs.

The names are re-exports (the very objects the package uses), documented, listed on the API
page, and enough for the guide's example mechanism, which imports nothing private.
"""

import ast
import inspect
from pathlib import Path

import pytest

import skldp._params
import skldp._registry
import skldp._validation
import skldp.base
import skldp.channels
import skldp.channels._base
import skldp.estimators._base
import skldp.privatizers._base
import skldp.registry

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "user_guide" / "example_mechanism.py"

#: public name -> (private module, name there) of every re-export the extension API promises
PROMISED = {
    skldp.base: {
        "BasePrivatizer": skldp.privatizers._base,
        "BaseDistributionEstimator": skldp.estimators._base,
        "hyperparameters": skldp._params,
        "validate_params": skldp._validation,
        "Constraint": skldp._validation,
        "Interval": skldp._validation,
        "Options": skldp._validation,
        "Boolean": skldp._validation,
        "NoneValue": skldp._validation,
        "Epsilon": skldp._validation,
        "Satisfies": skldp._validation,
        "InstanceOf": skldp._validation,
        "ListLike": skldp._validation,
        "IsCallable": skldp._validation,
        "Deferred": skldp._validation,
        "POSITIVE_EPSILON": skldp._validation,
        "CATEGORIES": skldp._validation,
        "RANDOM_STATE": skldp._validation,
        "CHANNEL": skldp._validation,
        "TOL": skldp._validation,
        "PRIVATIZER_CONSTRAINTS": skldp._validation,
    },
    skldp.registry: {"Mechanism": skldp._registry},
    skldp.channels: {
        "floor_to_uniform_grid": skldp.channels._base,
        "within_ratio": skldp.channels._base,
        "exactly_within": skldp.channels._base,
        "exp_budget": skldp.channels._base,
        "exp_lower_bound": skldp.channels._base,
        "check_epsilon_usable": skldp._validation,
        "AffineCounts": skldp.channels._base,
        "EpsilonLDP": skldp.channels._base,
        "DENSE_FALLBACK_ENTRIES": skldp.channels._base,
        "Channel": skldp.channels._base,
        "SymbolChannel": skldp.channels._base,
    },
}


@pytest.mark.parametrize(
    ("module", "name"),
    [(m, n) for m, names in PROMISED.items() for n in names],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_public_names_are_the_package_objects(module, name):
    assert name in module.__all__
    assert getattr(module, name) is getattr(PROMISED[module][name], name)


@pytest.mark.parametrize(
    "name",
    [n for n in skldp.base.__all__ if callable(getattr(skldp.base, n))]
    + [
        n
        for n in ("floor_to_uniform_grid", "within_ratio", "exactly_within", "exp_budget")
        + ("exp_lower_bound", "check_epsilon_usable", "AffineCounts", "EpsilonLDP")
    ],
)
def test_extension_api_is_documented(name):
    obj = getattr(skldp.base, name, None) or getattr(skldp.channels, name)
    doc = inspect.getdoc(obj)
    assert doc and len(doc.splitlines()) >= 3, name
    init = inspect.signature(obj).parameters if callable(obj) else {}
    needs_parameters = [p for p in init if p not in ("self", "cls")]
    if inspect.isfunction(obj) and needs_parameters and name != "hyperparameters":
        assert "Parameters\n----------" in doc, name
    if name in skldp.channels.__all__:  # the exact-sampling helpers return their answer
        assert "Returns\n-------" in doc or inspect.isclass(obj), name


def test_the_module_docstring_names_every_shared_constraint():
    doc = skldp.base.__doc__
    for name in ("POSITIVE_EPSILON", "CATEGORIES", "RANDOM_STATE", "CHANNEL", "TOL"):
        assert f"``{name}``" in doc


def test_the_api_page_lists_the_extension_modules():
    conf = (ROOT / "docs" / "conf.py").read_text(encoding="utf-8")
    assert '("skldp.base", ' in conf and '("skldp.channels", ' in conf
    assert '("skldp.registry", ' in conf


def _skldp_imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("skldp"):
            yield node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("skldp"):
                    yield alias.name, []


def test_the_guide_example_imports_nothing_private():
    imports = list(_skldp_imports(EXAMPLE))
    assert imports, "the example imports skldp"
    for module, names in imports:
        assert not any(part.startswith("_") for part in module.split(".")), module
        assert not any(n.startswith("_") for n in names), (module, names)

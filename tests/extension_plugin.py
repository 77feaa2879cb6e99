"""A pytest plugin that registers the guide's example mechanism before the tests are collected.

``python -m pytest -p tests.extension_plugin tests/test_input_matrix.py -k ExampleRR`` runs
the package's shared suites on ``docs/user_guide/example_mechanism.py`` as one more mechanism:
its registry entry is added with :func:`skldp.registry.register`, so the test registry
(``tests/registry.py``) gives it a case with its default parameters and every suite that runs
over the registry runs over it. ``tests/test_extension.py`` runs the suites this way.
"""

import importlib.util
import sys
from pathlib import Path

from skldp.registry import register

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "example_mechanism.py"


def load_example():
    """The example module, imported from the docs (pickle finds its classes by module name)."""
    if "example_mechanism" in sys.modules:
        return sys.modules["example_mechanism"]
    spec = importlib.util.spec_from_file_location("example_mechanism", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["example_mechanism"] = module
    spec.loader.exec_module(module)
    return module


def pytest_configure(config):
    """Register the example before any test module (and so the test registry) is imported."""
    register(load_example().REGISTRY_LINE)

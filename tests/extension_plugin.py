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


#: The name the example is imported under (its own, so that another test loading the same
#: file does not replace the classes that pickle looks up by module name).
MODULE = "skldp_extension_example"


def load_example():
    """The example module, imported from the docs once (pickle finds its classes by name)."""
    if MODULE in sys.modules:
        return sys.modules[MODULE]
    spec = importlib.util.spec_from_file_location(MODULE, EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE] = module
    spec.loader.exec_module(module)
    return module


def pytest_configure(config):
    """Register the example before any test module (and so the test registry) is imported."""
    register(load_example().REGISTRY_LINE)

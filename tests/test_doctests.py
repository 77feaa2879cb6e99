"""Every module's docstring examples run as doctests (not only the datasets' and the quickstart's).

The examples print what cannot drift (shapes, counts, exact channel probabilities, rounded
estimates), so they are checked here exactly, with ``NORMALIZE_WHITESPACE`` and ``ELLIPSIS``.
"""

import doctest
import importlib
import pkgutil

import pytest

import skldp

MODULES = sorted(m.name for m in pkgutil.walk_packages(skldp.__path__, "skldp."))


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests_pass(name):
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, report=False
    )
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_the_public_classes_have_examples():
    # Every privatizer and estimator documents its use with a run example.
    from skldp import estimators, privatizers

    missing = [
        name
        for package in (privatizers, estimators)
        for name in package.__all__
        if isinstance(getattr(package, name), type)
        and ">>>" not in (getattr(package, name).__doc__ or "")
    ]
    assert not missing, f"public classes without a doctest example: {missing}"

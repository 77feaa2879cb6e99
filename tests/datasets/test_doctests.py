"""The examples in the docstrings of the data, experiment and plotting modules run as shown."""

import doctest
import importlib

import pytest

MODULES = ["skldp.datasets._samples_generator", "skldp.datasets._base", "skldp.experiments"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(
        importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted > 0 and result.failed == 0

"""Shared parameter text (``skldp._docstring``): written once, in every public docstring."""

import inspect
import re
import textwrap

import pytest

import skldp.estimators
import skldp.privatizers
from skldp.base import BaseDistributionEstimator, BasePrivatizer
from skldp._docstring import PARAMETERS, substitute


def _classes(module, base):
    return [
        getattr(module, n)
        for n in module.__all__
        if inspect.isclass(getattr(module, n)) and issubclass(getattr(module, n), base)
    ]


PRIVATIZERS = _classes(skldp.privatizers, BasePrivatizer)
ESTIMATORS = _classes(skldp.estimators, BaseDistributionEstimator)


def _parameters_section(doc):
    text = inspect.cleandoc(doc)
    body = text.split("Parameters\n----------\n", 1)[1]
    body = re.split(r"\n\n[A-Z][A-Za-z ]+\n-{3,}\n", body, maxsplit=1)[0]
    entries = {}
    for block in re.split(r"\n(?=\S)", body.strip("\n")):
        name = block.split(" : ")[0].split("\n")[0].strip()
        entries[name] = block
    return entries


def test_substitute_fills_placeholders_with_their_indentation_and_leaves_braces():
    @substitute(extra="extra : int\n    Two lines\n    of text.")
    def f():
        r"""Summary with :math:`\frac{a}{b}` and {not_a_placeholder} inline.

        Parameters
        ----------
        {random_state}
        {extra}
        """

    doc = f.__doc__
    assert r"\frac{a}{b}" in doc and "{not_a_placeholder} inline" in doc
    assert "        extra : int\n            Two lines\n            of text.\n" in doc
    assert textwrap.indent(PARAMETERS["random_state"], "        ") in doc


def test_an_unknown_placeholder_fails_at_decoration():
    with pytest.raises(KeyError, match=r"placeholder \{typo\} names no shared parameter text"):

        @substitute()
        class _C:
            """Doc.

            {typo}
            """


@pytest.mark.parametrize("cls", PRIVATIZERS, ids=lambda c: c.__name__)
def test_every_privatizer_describes_random_state_in_the_shared_words(cls):
    entries = _parameters_section(cls.__doc__)
    assert entries["random_state"] == PARAMETERS["random_state"]


@pytest.mark.parametrize("cls", PRIVATIZERS + ESTIMATORS, ids=lambda c: c.__name__)
def test_every_parameter_is_described_and_no_placeholder_is_left(cls):
    entries = _parameters_section(cls.__doc__)
    params = list(inspect.signature(cls.__init__).parameters)[1:]
    assert set(params) <= set(entries), f"undocumented: {set(params) - set(entries)}"
    for name in params:
        # A description below the "name : type" line, not just the type.
        assert "\n    " in entries[name], f"{name} has no description"
    assert not re.search(r"(?m)^\s*\{[A-Za-z_]\w*\}\s*$", cls.__doc__)


def test_compressive_privatizers_describe_categories_and_random_state():
    for name in ("RecursiveCompressive", "OneBitHadamardResponse"):
        entries = _parameters_section(getattr(skldp.privatizers, name).__doc__)
        assert entries["categories"] == PARAMETERS["categories"]
        assert entries["random_state"] == PARAMETERS["random_state"]

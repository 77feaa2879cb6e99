"""Whole shared sections and one-word fields of ``skldp._docstring.substitute`` (issue 22).

The privatizers take their common parameters, their fitted attributes and, where they have
nothing of their own to add, whole Parameters and Attributes sections from one place; the
class of ``channel_`` is the one word each names (``channel_type``).
"""

import inspect
import re

import pytest

import skldp.privatizers
from skldp.base import BasePrivatizer
from skldp._docstring import PARAMETERS, substitute
from tests.registry import MECHANISMS, fitted


def test_a_one_line_entry_fills_its_name_inside_a_shared_text():
    @substitute(channel_type="MyChannel")
    def f():
        """Doc.

        Attributes
        ----------
        {fitted_attributes}
        """

    assert "        channel_ : MyChannel or list of them\n" in f.__doc__
    assert "{channel_type}" not in f.__doc__


def test_a_shared_text_without_its_word_fails_at_decoration():
    with pytest.raises(KeyError, match=r"needs channel_type= in substitute\(\)"):

        @substitute()
        def f():
            """{fitted_attributes}"""


def test_sections_carry_their_headers_and_the_entries_in_signature_order():
    params = PARAMETERS["privatizer_parameters_section"].splitlines()
    assert params[:2] == ["Parameters", "----------"]
    names = [line.split(" : ")[0] for line in params[2:] if not line.startswith(" ")]
    assert names == ["epsilon", "categories", "accountant", "random_state"]
    attrs = PARAMETERS["privatizer_attributes_section"].splitlines()
    assert attrs[:2] == ["Attributes", "----------"]
    names = [line.split(" : ")[0] for line in attrs[2:] if not line.startswith(" ")]
    assert names == ["categories_", "channel_", "privacy_", "n_features_in_", "feature_names_in_"]


PRIVATIZERS = [
    getattr(skldp.privatizers, n)
    for n in skldp.privatizers.__all__
    if inspect.isclass(getattr(skldp.privatizers, n))
    and issubclass(getattr(skldp.privatizers, n), BasePrivatizer)
]


@pytest.mark.parametrize("cls", PRIVATIZERS, ids=lambda c: c.__name__)
def test_parameters_are_documented_in_the_order_of_the_signature(cls):
    doc = inspect.cleandoc(cls.__doc__)
    section = doc.split("Parameters\n----------\n", 1)[1].split("\n\n", 1)[0]
    documented = [m.group(1) for m in re.finditer(r"(?m)^(\w+) : ", section)]
    signature = list(inspect.signature(cls).parameters)
    assert [n for n in documented if n in signature] == [n for n in signature if n in documented]


def _fitted_channel_names():
    """``{class: channel class name}`` of each registered mechanism, fitted on its domain."""
    out = {}
    for privatizer in MECHANISMS:
        try:
            out[type(privatizer)] = type(fitted(privatizer).channels_[0]).__name__
        except ValueError:  # a domain the registry gives in another layout (two columns)
            continue
    return out


def test_the_documented_channel_class_is_the_fitted_one():
    fitted = _fitted_channel_names()
    checked = 0
    for cls in PRIVATIZERS:
        match = re.search(r"(?m)^\s*channel_ : (\w+) or list of them$", cls.__doc__)
        if match is None or cls not in fitted:
            continue
        assert match.group(1) == fitted[cls], cls.__name__
        checked += 1
    assert checked >= 8

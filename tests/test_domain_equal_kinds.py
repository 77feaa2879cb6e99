"""Issue 27, item 14: categories of different kinds that compare equal, such as ``[0, False]``.

``0 == False`` in Python, but a boolean and a number are two categories in skldp (a value
matches a category only within its kind). Such a domain works: each value finds its own
category, a value outside it is refused with the project's ValueError naming the value (it
was pandas' ``InvalidIndexError``), and parameters naming categories (sensitive sets,
blocks) keep the kinds as given (numpy had turned ``[0, False]`` into ``[0, 0]``).
"""

import numpy as np
import pytest

from skldp import BlockHadamardResponse, RandomizedResponse, UtilityOptimizedRR


def _column(*values):
    col = np.empty((len(values), 1), dtype=object)
    col[:, 0] = values
    return col


def test_zero_and_false_are_two_categories():
    p = RandomizedResponse(epsilon=50.0, categories=[0, False], random_state=0).fit(_column(0))
    assert [type(c) for c in p.categories_[0]] == [int, bool]
    reports = p.transform(_column(0, False, 0, False))
    assert np.asarray(reports).ravel().tolist() == [0, 1, 0, 1]


@pytest.mark.parametrize(
    "value, named",
    [(2, "2"), (True, "True"), (1.0, "1.0"), ("a", "'a'"), (None, "missing")],
)
def test_a_value_outside_zero_and_false_is_named(value, named):
    p = RandomizedResponse(epsilon=1.0, categories=[0, False], random_state=0).fit(_column(0))
    with pytest.raises(ValueError, match=named) as info:
        p.transform(_column(0, value))
    assert type(info.value) is ValueError  # not pandas' InvalidIndexError


def test_the_hint_names_an_equal_category_of_another_kind_in_a_non_unique_index():
    # 1 == True and 0 == False: the categories are not unique for pandas.
    p = RandomizedResponse(epsilon=1.0, categories=[0, 1, False], random_state=0)
    p.fit(_column(0))
    with pytest.raises(ValueError, match=r"True \(bool\) equals the category 1 \(int\)"):
        p.transform(_column(True))


def test_parameters_naming_zero_and_false_keep_their_kinds():
    cats = [0, False, "a", 3]
    p = UtilityOptimizedRR(epsilon=1.0, categories=cats, sensitive=[0, False]).fit(_column(0))
    assert p.channel_.sensitive.tolist() == [0, 1]
    p = BlockHadamardResponse(epsilon=1.0, categories=cats, blocks=[[0, False], ["a", 3]])
    assert p.fit(_column(0)).channel_.labels.tolist() == [0, 0, 1, 1]
    with pytest.raises(ValueError, match="not categories of column 0: True"):
        UtilityOptimizedRR(epsilon=1.0, categories=cats, sensitive=[0, True]).fit(_column(0))

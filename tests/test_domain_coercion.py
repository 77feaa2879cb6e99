"""Which values match which categories: the coercion matrix (issue 21 item 5).

A value matches a category only if it is the same value of a compatible kind (documented in
docs/user_guide/randomized_response.rst, "The domain"): booleans never match numbers, text never
matches dates or bytes, complex never matches real numbers; equal integers and reals match;
categories keep their types. Before the fix, ``True`` was encoded as the category 1,
``"2020-01-01"`` matched a Timestamp category, ``1+0j`` matched 1, and
``categories=[True, -1, 0.0]`` became floats.
"""

import datetime

import numpy as np
import pandas as pd
import pytest

from skldp import RandomizedResponse
from skldp._domain import check_category_list, encode, encode_parameter
from tests.registry import MECHANISMS, domain, fitted, instance_id

TS = [pd.Timestamp("2020-01-01"), pd.Timestamp("2020-01-02")]


def _obj(*values):
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


#: category kinds: name -> the categories (as a user passes them)
CATEGORY_KINDS = {
    "int_list": [0, 1, 2],
    "int_range": range(3),
    "int_array": np.array([0, 1, 2], dtype=np.int64),
    "sparse_ints": [0, 1, 5],
    "float_list": [0.0, 1.0, 2.5],
    "bool_list": [False, True],
    "str_list": ["a", "b"],
    "bytes_list": [b"a", b"b"],
    "timestamps": TS,
    "complex_list": [1 + 0j, 2j],
    "mixed": [True, -1, 0.0],
}

#: value columns: name -> (the column, {category kind: expected indices; absent: refused})
VALUE_KINDS = {
    "python_int": (
        _obj(1, 0),
        {
            "int_list": [1, 0],
            "int_range": [1, 0],
            "int_array": [1, 0],
            "sparse_ints": [1, 0],
            "float_list": [1, 0],
        },
    ),
    "int64": (
        np.array([1, 0]),
        {
            "int_list": [1, 0],
            "int_range": [1, 0],
            "int_array": [1, 0],
            "sparse_ints": [1, 0],
            "float_list": [1, 0],
        },
    ),
    "integral_float": (
        np.array([1.0, 0.0]),
        {
            "int_list": [1, 0],
            "int_range": [1, 0],
            "int_array": [1, 0],
            "sparse_ints": [1, 0],
            "float_list": [1, 0],
        },
    ),
    "int_with_bool": (_obj(0, True), {"mixed": [2, 0]}),  # the issue's [0, True]: True is not 1
    "only_true": (np.array([True]), {"bool_list": [1], "mixed": [0]}),
    "numpy_bool_obj": (_obj(np.True_, False), {"bool_list": [1, 0]}),
    "nullable_int": (
        pd.array([1, 0], dtype="Int64").to_numpy(dtype=object),
        {
            "int_list": [1, 0],
            "int_range": [1, 0],
            "int_array": [1, 0],
            "sparse_ints": [1, 0],
            "float_list": [1, 0],
        },
    ),
    "nullable_bool": (
        pd.array([True, False], dtype="boolean").to_numpy(dtype=object),
        {"bool_list": [1, 0]},
    ),
    "complex_one": (_obj(1 + 0j), {"complex_list": [0]}),
    "text_of_int": (_obj("1"), {}),
    "text": (_obj("b", "a"), {"str_list": [1, 0]}),
    "numpy_text": (np.array(["b", "a"]), {"str_list": [1, 0]}),
    "bytes": (_obj(b"a"), {"bytes_list": [0]}),
    "text_of_date": (_obj("2020-01-01"), {}),
    "timestamp": (_obj(TS[1]), {"timestamps": [1]}),
    "datetime": (_obj(datetime.datetime(2020, 1, 2)), {"timestamps": [1]}),
    "datetime64": (np.array(["2020-01-02"], dtype="datetime64[ns]"), {"timestamps": [1]}),
    "mixed_kinds": (_obj(-1, True, 0.0, 0), {"mixed": [1, 0, 2, 2]}),
    "negative_one_float": (np.array([-1.0]), {"mixed": [1], "float_list": None}),
}


def _expected(value_kind, category_kind):
    return VALUE_KINDS[value_kind][1].get(category_kind)


@pytest.mark.parametrize("category_kind", list(CATEGORY_KINDS))
@pytest.mark.parametrize("value_kind", list(VALUE_KINDS))
def test_coercion_matrix(value_kind, category_kind):
    cats = check_category_list(CATEGORY_KINDS[category_kind])
    values = VALUE_KINDS[value_kind][0]
    expected = _expected(value_kind, category_kind)
    if expected is None:
        with pytest.raises(ValueError, match="outside the domain"):
            encode(values, cats)
    else:
        idx = encode(values, cats)
        assert idx.dtype == np.int64
        np.testing.assert_array_equal(idx, expected)


@pytest.mark.parametrize(
    "values, match",
    [
        (_obj(0, True), r"True \(bool\) equals the category 1 \(int"),
        (np.array([True]), r"True \(bool\) equals the category 1 \(int"),
        (_obj(1 + 0j), r"\(1\+0j\) \(complex\) equals the category 1"),
    ],
)
def test_refusal_names_the_kind(values, match):
    with pytest.raises(ValueError, match=match):
        encode(values, check_category_list([0, 1, 2]))


def test_refusal_names_the_date_text():
    with pytest.raises(ValueError, match=r"'2020-01-01' \(str\) equals the category Timestamp"):
        encode(_obj("2020-01-01"), check_category_list(TS))


@pytest.mark.parametrize(
    "categories, types",
    [
        ([True, -1, 0.0], [bool, int, float]),
        ([1, 2.5], [int, float]),
        ([True, 1], [bool, int]),
        ([1, "a"], [int, str]),
    ],
)
def test_categories_keep_their_types(categories, types):
    cats = check_category_list(categories)
    assert [type(c) for c in cats] == types
    assert [c for c in cats] == list(categories)


def test_array_categories_keep_their_dtype():
    assert check_category_list(np.array([0.0, 1.0])).dtype == np.float64
    assert check_category_list(np.array([0, 1], dtype=np.uint8)).dtype == np.uint8


def test_equal_numbers_are_duplicates_but_bool_and_int_are_not():
    with pytest.raises(ValueError, match="duplicates: 1"):
        check_category_list([1, 1.0])
    with pytest.raises(ValueError, match="duplicates"):
        check_category_list([True, np.True_])
    assert check_category_list([True, 1]).shape == (2,)


def test_bool_and_int_categories_are_distinct():
    cats = check_category_list([True, 1, 0, False])
    np.testing.assert_array_equal(encode(_obj(1, True, False, 0, 1.0), cats), [1, 0, 3, 2, 1])


def test_sensitive_set_follows_the_same_rule():
    cats = check_category_list([0, 1, 2])
    with pytest.raises(ValueError, match=r"sensitive lists values that are not categories.*True"):
        encode_parameter([True], cats, 0, "sensitive")
    np.testing.assert_array_equal(encode_parameter([2, 1.0], cats, 0, "sensitive"), [2, 1])


def test_privatizer_keeps_mixed_categories():
    rr = RandomizedResponse(1.0, categories=[True, -1, 0.0], random_state=0).fit(_obj(True))
    assert [type(c) for c in rr.categories_[0]] == [bool, int, float]
    assert rr.transform(_obj(True, -1, 0.0)).shape == (3, 1)


@pytest.mark.parametrize(
    "column, accepted",
    [
        (pd.Series(pd.Categorical([0, 2, 1])), True),
        (pd.Series([0, 2, 1], dtype="Int64"), True),
        (pd.Series([0.0, 2.0, 1.0], dtype="Float64"), True),
        (pd.Series([0, 2, 1], dtype="int8"), True),
        # before: scikit-learn's validation made these floats, so True was the category 1
        (pd.Series(pd.Categorical([True, False])), False),
        (pd.Series([True, False], dtype="boolean"), False),
        (pd.Series([True, False]), False),
        (pd.Series(["0", "1"], dtype="string"), False),
    ],
    ids=["categorical", "Int64", "Float64", "int8", "bool_categorical", "boolean", "bool", "str"],
)
def test_pandas_columns_follow_their_own_kind(column, accepted):
    rr = RandomizedResponse(1.0, categories=[0, 1, 2], random_state=0).fit([[0]])
    frame = column.rename("x").to_frame()
    rr_frame = RandomizedResponse(1.0, categories=[0, 1, 2], random_state=0)
    rr_frame.fit(pd.DataFrame({"x": [0]}))
    if accepted:
        assert rr.transform(column).shape == (column.shape[0], 1)
        assert rr_frame.transform(frame).shape == (column.shape[0], 1)
    else:
        with pytest.raises(ValueError, match="outside the domain"):
            rr.transform(column)
        with pytest.raises(ValueError, match="outside the domain"):
            rr_frame.transform(frame)


def test_missing_in_nullable_column_is_named():
    rr = RandomizedResponse(1.0, categories=[0, 1, 2], random_state=0).fit([[0]])
    with pytest.raises(ValueError, match="missing values"):
        rr.transform(pd.Series([0, None], dtype="Int64"))
    with pytest.raises(ValueError, match="missing values"):
        rr.transform(pd.Series(pd.Categorical([0, None])))


@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
def test_every_privatizer_refuses_a_bool_for_an_integer_category(privatizer):
    # the "[0, True] accepted with True encoded as 1 in 20 of 20 configurations"
    d = list(domain(privatizer))
    ints = [v for v in d if isinstance(v, (int, np.integer)) and not isinstance(v, bool)]
    if 1 not in ints or True in [v for v in d if isinstance(v, (bool, np.bool_))]:
        pytest.skip("the domain has no integer category 1")
    p = fitted(privatizer)
    with pytest.raises(ValueError, match="outside the domain: True"):
        p.transform(_obj(d[0], True).reshape(-1, 1))


@pytest.mark.filterwarnings("ignore::skldp.PrivacyLeakWarning")
def test_inferred_domain_keeps_bool_and_int_apart():
    # before: pandas' unique merged True into 1, so the inferred domain had one category
    rr = RandomizedResponse(1.0, random_state=0).fit(_obj(1, True, 1, 2, True).reshape(-1, 1))
    cats = rr.categories_[0]
    assert sorted(map(repr, cats)) == ["1", "2", "True"]
    assert {type(c) for c in cats} == {bool, int}

"""pandas' own test suite for extension arrays, run on the reports dtype (k-RR, k = 3).

pandas ships ``pandas.tests.extension.base`` for third-party extension arrays to check that
they satisfy the interface; these classes inherit it. Skipped where pandas is installed
without its tests. What is left out and why:

* arithmetic, comparison and unary operator suites: they expect ``op(array)`` to give an
  array of the same extension dtype; reports deliberately give plain numpy (or pandas'
  nullable) numbers, as a sum of reports is not a report (tested in test_reports_pandas.py);
* accumulations, for the same reason (``cumsum`` of reports is int64);
* the parsing suite, and the dtype tests that build the dtype from its name: a reports dtype
  cannot be built from a string (it needs the channel);
* plotting.

Where reports deliberately differ from pandas' nullable integers, the test is overridden with
the behaviour chosen (see the user guide, "Reports in pandas"): a function of reports
(``map``, ``combine``) gives plain numbers; appending a plain integer (``loc`` expansion) gives
int64, as any mix of reports and integers does; ``value_counts(normalize=True)`` is float64 as
for an int64 column.
"""

import numpy as np
import pandas as pd
import pandas._testing as tm
import pytest

from skldp._reports import ReportsArray, ReportsDtype, ReportSpec
from skldp.channels import RandomizedResponseChannel

base = pytest.importorskip("pandas.tests.extension.base")
pytest.importorskip("pandas.tests.extension.conftest")

# pandas' fixtures for its extension suites, by name (the suites request dozens of them), and
# only once pandas is known to ship its tests: the rules are wrong for this line.
from pandas.tests.extension.conftest import *  # noqa: E402, F403

_DTYPE = ReportsDtype(ReportSpec(RandomizedResponseChannel(1.0, 3)))


def _array(values):
    values = np.asarray(values, dtype=object)
    mask = np.array([v is None for v in values])
    data = np.where(mask, 0, values).astype(np.int64)
    return ReportsArray(data, _DTYPE, mask, validate=True)


@pytest.fixture
def dtype():
    return _DTYPE


@pytest.fixture
def data():
    values = np.random.default_rng(0).integers(0, 3, 10)
    values[:2] = [0, 1]
    return _array(values)


@pytest.fixture
def data_missing():
    return _array([None, 1])


@pytest.fixture
def data_for_sorting():
    return _array([1, 2, 0])


@pytest.fixture
def data_missing_for_sorting():
    return _array([1, None, 0])


@pytest.fixture
def data_for_grouping():
    return _array([1, 1, None, None, 0, 0, 1, 2])


@pytest.fixture
def na_cmp():
    return lambda a, b: a is pd.NA and b is pd.NA


@pytest.fixture
def data_for_twos():
    pytest.skip("arithmetic on reports gives plain numbers")


_NEEDS_CHANNEL = "a reports dtype cannot be built from its name: it needs the channel"


class TestReportsDtype(base.BaseDtypeTests):
    @pytest.mark.skip(reason=_NEEDS_CHANNEL)
    def test_is_dtype_from_name(self, dtype):
        pass

    @pytest.mark.skip(reason=_NEEDS_CHANNEL)
    def test_eq_with_str(self, dtype):
        pass

    @pytest.mark.skip(reason=_NEEDS_CHANNEL)
    def test_check_dtype(self, data):
        pass

    @pytest.mark.skip(reason=_NEEDS_CHANNEL)
    def test_construct_from_string_own_name(self, dtype):
        pass

    def test_eq(self, dtype):
        assert dtype != dtype.name  # equal names, but the string has no channel
        assert dtype != "another_type"
        assert dtype == ReportsDtype(dtype.spec, 0)
        other = ReportSpec(RandomizedResponseChannel(2.0, 3))
        assert dtype != ReportsDtype(other, 0)


class TestReportsInterface(base.BaseInterfaceTests):
    pass


class TestReportsConstructors(base.BaseConstructorsTests):
    @pytest.mark.skip(reason=_NEEDS_CHANNEL)
    def test_from_dtype(self, data):
        pass


class TestReportsGetitem(base.BaseGetitemTests):
    pass


class TestReportsSetitem(base.BaseSetitemTests):
    def test_loc_setitem_with_expansion_retains_ea_dtype(self, data):
        # a plain integer appended to reports is not known to be a report: int64
        data = data.dropna().unique()
        ser = pd.Series(data[:-1])
        ser.loc[len(ser)] = data[-1]
        tm.assert_series_equal(ser, pd.Series(np.asarray(data, dtype=np.int64)))

    def test_loc_setitem_with_expansion_preserves_ea_index_dtype(self, data):
        data = data.unique()
        df = pd.DataFrame({"A": range(len(data))}, index=data).iloc[:-1]
        df.loc[data[-1]] = len(data) - 1
        assert df.index.dtype == np.int64
        assert_array = np.asarray(data, dtype=np.int64)
        tm.assert_index_equal(df.index, pd.Index(assert_array))


class TestReportsMissing(base.BaseMissingTests):
    pass


class TestReportsMethods(base.BaseMethodsTests):
    def test_value_counts_with_normalize(self, data):
        data = data.unique()
        result = pd.Series(data).value_counts(normalize=True)
        assert result.dtype == np.float64
        tm.assert_numpy_array_equal(result.to_numpy(), np.full(len(data), 1 / len(data)))

    @pytest.mark.parametrize("na_action", [None, "ignore"])
    def test_map(self, data_missing, na_action):
        # a function of reports gives numbers, not reports
        result = data_missing.map(lambda x: x, na_action=na_action)
        tm.assert_extension_array_equal(result, pd.array([pd.NA, 1], dtype="Int64"))

    def test_combine_add(self, data_repeated):
        orig1, orig2 = data_repeated(2)
        result = pd.Series(orig1).combine(pd.Series(orig2), lambda a, b: a + b)
        expected = np.asarray(orig1, dtype=np.int64) + np.asarray(orig2, dtype=np.int64)
        tm.assert_series_equal(result, pd.Series(expected))


class TestReportsCasting(base.BaseCastingTests):
    pass


class TestReportsGroupby(base.BaseGroupbyTests):
    pass


class TestReportsReshaping(base.BaseReshapingTests):
    pass


class TestReportsIndex(base.BaseIndexTests):
    pass


class TestReportsPrinting(base.BasePrintingTests):
    pass


class TestReportsReduce(base.BaseReduceTests):
    # the reductions of pandas' nullable Int64: numpy scalars for a Series, nullable
    # Int64/Float64/boolean for a DataFrame (keepdims)
    def _supports_reduction(self, ser, op_name):
        return True

    def _get_expected_reduction_dtype(self, arr, op_name, skipna):
        if op_name in ("mean", "median", "var", "std", "skew", "kurt", "sem"):
            return "Float64"
        if op_name in ("any", "all"):
            return "boolean"
        return "Int64"

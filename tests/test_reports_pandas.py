"""Reports in pandas: every common pandas operation works, and the channel travels or is asked for.

Issue 14 item 3. One symbol mechanism (k-RR) and one bit-vector mechanism (RAPPOR); every
number is compared with the same computation on the plain int64 reports.
"""

import io
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import sklearn
from numpy.testing import assert_array_equal
from pandas.testing import assert_frame_equal, assert_series_equal
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline

from skldp import RAPPOR, EMEstimator, EmpiricalEstimator, RandomizedResponse
from skldp._reports import ReportsArray, ReportsDtype, _ArrowReports

pytest.importorskip("pyarrow")

CATS = ["a", "b", "c", "d"]
N = 400


def _reports(kind):
    rng = np.random.default_rng(20261126)
    raw = pd.DataFrame({"city": rng.choice(CATS, N, p=[0.4, 0.3, 0.2, 0.1])})
    cls = RandomizedResponse if kind == "krr" else RAPPOR
    privatizer = cls(categories=CATS, epsilon=1.0, random_state=np.random.SeedSequence(77))
    reports = privatizer.fit_transform(raw)
    return privatizer, raw.rename(columns={"city": "raw"}), reports


@pytest.fixture(params=["krr", "rappor"])
def case(request):
    return _reports(request.param)


def _plain(reports):
    return pd.DataFrame(
        {c: np.asarray(reports[c].array._data) for c in reports.columns}, index=reports.index
    )


def _int_index(series):
    # a count of reports is indexed by the reports (their dtype); compare with the integers
    assert isinstance(series.index.dtype, ReportsDtype)
    return series.set_axis(series.index.astype("int64"))


def test_columns_are_reports(case):
    privatizer, _raw, reports = case
    width = privatizer.channel_.report_width
    assert reports.shape == (N, width)
    assert all(isinstance(d, ReportsDtype) for d in reports.dtypes)
    assert [d.part for d in reports.dtypes] == list(range(width))


def test_counting_and_summaries_equal_the_plain_integers(case):
    _, _raw, reports = case
    plain = _plain(reports)
    col = reports.columns[0]
    assert_series_equal(_int_index(reports[col].value_counts()), plain[col].value_counts())
    counts = np.bincount(plain[col].to_numpy(), minlength=2)
    assert reports[col].value_counts().sort_index().tolist() == counts[counts > 0].tolist()
    # pandas describes any extension dtype in its nullable Float64; the numbers are the same
    assert (reports.describe().dtypes == "Float64").all()
    assert_frame_equal(reports.describe().astype(float), plain.describe())
    qs = [0.1, 0.25, 0.5, 0.9]
    assert_frame_equal(reports.quantile(qs), plain.quantile(qs))
    for how in ("lower", "higher", "midpoint", "nearest"):
        assert_series_equal(
            reports[col].quantile(qs, interpolation=how), plain[col].quantile(qs, interpolation=how)
        )
    assert reports[col].sum() == plain[col].sum()
    assert reports[col].mean() == plain[col].mean()
    assert reports[col].std() == plain[col].std()
    assert reports[col].min() == plain[col].min() and reports[col].max() == plain[col].max()
    assert reports[col].nunique() == plain[col].nunique()
    assert_array_equal(reports[col].cumsum(), plain[col].cumsum())
    assert_array_equal(reports[col] > 0, plain[col] > 0)
    assert_array_equal(reports[col] + 1, plain[col] + 1)
    assert (reports[col] + 1).dtype == np.int64  # a sum of reports is not a report


def test_groupby_and_crosstab(case):
    _, raw, reports = case
    plain = _plain(reports)
    both = reports.assign(raw=raw["raw"])
    plain_both = plain.assign(raw=raw["raw"])
    assert_frame_equal(both.groupby("raw").mean(), plain_both.groupby("raw").mean())
    assert_frame_equal(both.groupby("raw").sum(), plain_both.groupby("raw").sum())
    col = reports.columns[0]
    assert_series_equal(_int_index(reports.groupby(col).size()), plain.groupby(col).size())
    table = pd.crosstab(raw["raw"], reports[col])
    table.columns = table.columns.astype("int64")
    assert_frame_equal(table, pd.crosstab(raw["raw"], plain[col]))


def test_concat_merge_join_sort_keep_the_channel(case):
    _privatizer, raw, reports = case
    dtypes = list(reports.dtypes)
    ref = EMEstimator().fit(reports).distribution_

    halves = pd.concat([reports.iloc[: N // 2], reports.iloc[N // 2 :]])
    assert list(halves.dtypes) == dtypes
    assert_array_equal(EMEstimator().fit(halves).distribution_, ref)

    keyed = reports.assign(id=np.arange(N))
    merged = raw.assign(id=np.arange(N)).merge(keyed, on="id")
    assert list(merged[reports.columns].dtypes) == dtypes
    assert_array_equal(EMEstimator().fit(merged[reports.columns]).distribution_, ref)

    joined = raw.join(reports)
    assert list(joined[reports.columns].dtypes) == dtypes

    shuffled = reports.sort_values(list(reports.columns))
    assert list(shuffled.dtypes) == dtypes
    assert np.all(np.diff(shuffled.iloc[:, 0].to_numpy()) >= 0)
    est = EmpiricalEstimator().fit(shuffled)
    assert_array_equal(est.distribution_, EmpiricalEstimator().fit(reports).distribution_)


def test_missing_reports_after_alignment_are_refused_clearly(case):
    _, raw, reports = case
    # a left join against fewer reports leaves missing reports: pandas NA, not an error
    joined = raw.join(reports.iloc[: N - 10])
    part = joined[reports.columns]
    assert list(part.dtypes) == list(reports.dtypes)
    assert int(part.isna().sum().iloc[0]) == 10
    assert part.iloc[-1, 0] is pd.NA
    assert part.iloc[:, 0].to_numpy().dtype == np.float64  # NaN where missing
    with pytest.raises(ValueError, match=r"missing \(NA\).*dropna"):
        EMEstimator().fit(part)
    kept = EMEstimator().fit(part.dropna())
    assert_array_equal(kept.distribution_, EMEstimator().fit(reports.iloc[: N - 10]).distribution_)
    assert part.iloc[:, 0].astype("Int64").isna().sum() == 10
    with pytest.raises(ValueError, match="NA"):
        part.iloc[:, 0].astype("int64")


def test_conversions(case):
    _, _raw, reports = case
    plain = _plain(reports)
    col = reports.columns[0]
    assert reports.to_numpy().dtype == np.int64
    assert_array_equal(reports.to_numpy(), plain.to_numpy())
    assert_frame_equal(reports.astype("int64"), plain)
    assert_frame_equal(reports.astype(float), plain.astype(float))
    assert_series_equal(reports[col].astype(str), plain[col].astype(str))
    assert reports[col].astype("category").cat.categories.tolist() == sorted(plain[col].unique())
    # plain integers get the channel back by the column's dtype, checked against the channel
    again = plain[col].astype(reports.dtypes[col])
    assert again.dtype == reports.dtypes[col]
    with pytest.raises(ValueError, match="got values outside"):
        (plain[col] + 7).astype(reports.dtypes[col])
    s = reports[col].copy()
    with pytest.raises(ValueError, match="got values outside"):
        s.iloc[0] = 9
    s.iloc[0] = 1
    assert s.iloc[0] == 1


def test_csv_round_trip_asks_for_the_channel(case):
    privatizer, _raw, reports = case
    back = pd.read_csv(io.StringIO(reports.to_csv()), index_col=0)
    assert_frame_equal(back, _plain(reports))
    with pytest.raises(ValueError, match="pass channel="):
        EMEstimator().fit(back)
    assert_array_equal(
        EMEstimator(channel=privatizer).fit(back).distribution_,
        EMEstimator().fit(reports).distribution_,
    )
    # read_csv with the report columns' dtypes gives the channel back, values checked
    text = reports.to_csv()
    typed = pd.read_csv(io.StringIO(text), index_col=0, dtype=reports.dtypes.to_dict())
    assert_frame_equal(typed, reports)
    assert_array_equal(
        EMEstimator().fit(typed).distribution_, EMEstimator().fit(reports).distribution_
    )
    bad = _plain(reports)
    bad.iloc[3, 0] = 7
    with pytest.raises(ValueError, match="got values outside"):
        pd.read_csv(io.StringIO(bad.to_csv()), index_col=0, dtype=reports.dtypes.to_dict())


def test_parquet_round_trip_finds_the_channel(case, tmp_path):
    _privatizer, raw, reports = case
    path = tmp_path / "reports.parquet"
    reports.to_parquet(path)
    back = pd.read_parquet(path)
    assert_frame_equal(back, reports)
    assert list(back.dtypes) == list(reports.dtypes)
    for est in (EMEstimator(), EmpiricalEstimator()):
        ref = est.fit(reports).distribution_.copy()
        assert_array_equal(est.fit(back).distribution_, ref)  # bit for bit
    # with missing reports too
    part = raw.join(reports.iloc[:-3])[reports.columns]
    part.to_parquet(path)
    assert_frame_equal(pd.read_parquet(path), part)


def test_parquet_is_readable_without_skldp(case, tmp_path):
    privatizer, _raw, reports = case
    path = tmp_path / "reports.parquet"
    reports.to_parquet(path)
    code = (
        "import sys, pandas as pd\n"
        f"d = pd.read_parquet({str(path)!r}, dtype_backend='numpy_nullable')\n"
        "assert 'skldp' not in sys.modules\n"
        "d.to_csv(sys.stdout)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    plain = pd.read_csv(io.StringIO(out.stdout), index_col=0)
    assert_frame_equal(plain, _plain(reports))
    assert_array_equal(
        EMEstimator(channel=privatizer).fit(plain).distribution_,
        EMEstimator().fit(reports).distribution_,
    )


class _Payload:
    def __reduce__(self):
        return (print, ("code ran while reading a Parquet file",))


def test_parquet_channel_runs_no_foreign_code(capsys):
    # a file may come from anyone: its channel metadata rebuilds only skldp channels
    evil = _ArrowReports(pickle.dumps(_Payload()), 0)
    with pytest.warns(UserWarning, match="could not be read.*channel="):
        dtype = evil.to_pandas_dtype()
    assert dtype == pd.Int64Dtype()
    assert "code ran" not in capsys.readouterr().out


def test_pickle_keeps_the_channel(case):
    _, _, reports = case
    back = pickle.loads(pickle.dumps(reports))
    assert_frame_equal(back, reports)
    assert_array_equal(
        EMEstimator().fit(back).distribution_, EMEstimator().fit(reports).distribution_
    )


def test_dtype_without_channel_is_refused_clearly():
    with pytest.raises(TypeError, match="needs the channel"):
        ReportsDtype.construct_from_string("skldp_reports[RandomizedResponseChannel:0]")
    with pytest.raises(TypeError, match="need their channel"):
        ReportsArray._from_sequence([0, 1])
    with pytest.raises(TypeError, match="ReportSpec"):
        ReportsDtype("not a spec")


def test_pandas_output_pipelines_still_work():
    rng = np.random.default_rng(5)
    raw = pd.DataFrame({"city": rng.choice(CATS, N), "size": rng.choice(["s", "l"], N)})
    with sklearn.config_context(transform_output="pandas"):
        pipe = Pipeline(
            [
                (
                    "privatize",
                    RAPPOR(categories=CATS, epsilon=2.0, random_state=np.random.SeedSequence(3)),
                ),
                ("estimate", EMEstimator()),
            ]
        ).fit(raw[["city"]])
        assert pipe["estimate"].distribution_.shape == (4,)
        ct = ColumnTransformer(
            [
                (
                    "c",
                    RAPPOR(categories=CATS, epsilon=2.0, random_state=np.random.SeedSequence(3)),
                    ["city"],
                ),
                (
                    "s",
                    RandomizedResponse(
                        categories=["s", "l"], epsilon=2.0, random_state=np.random.SeedSequence(4)
                    ),
                    ["size"],
                ),
            ]
        )
        out = ct.fit_transform(raw)
    assert all(isinstance(d, ReportsDtype) for d in out.dtypes)
    est = EMEstimator().fit(out)
    assert [d.shape for d in est.distribution_] == [(4,), (2,)]
    assert_array_equal(est.distribution_[0], pipe["estimate"].distribution_)


def _mechanism_cases():
    from tests.registry import MECHANISMS, instance_id

    return [pytest.param(p, id=instance_id(p)) for p in MECHANISMS]


@pytest.mark.parametrize("privatizer", _mechanism_cases())
def test_every_mechanism_round_trips_through_parquet(privatizer):
    # every registered mechanism, symbol or bit-vector (RAPPOR, OUE, uRAP, hashed RAPPOR ...):
    # the channel comes back from Parquet and the estimate is the same, bit for bit
    from tests.registry import domain, fitted

    p = fitted(privatizer, random_state=np.random.SeedSequence(11))
    cats = domain(privatizer)
    values = [cats[i] for i in np.random.default_rng(1).integers(0, len(cats), 300)]
    with sklearn.config_context(transform_output="pandas"):
        reports = p.transform(np.array(values, dtype=object)[:, None])
    assert all(isinstance(d, ReportsDtype) for d in reports.dtypes)
    assert reports.shape[1] == sum(ch.report_width for ch in p.channels_)
    buf = io.BytesIO()
    reports.to_parquet(buf)
    back = pd.read_parquet(io.BytesIO(buf.getvalue()))
    assert_frame_equal(back, reports)
    est = EmpiricalEstimator()
    try:
        ref = est.fit(reports).distribution_.copy()
    except (TypeError, NotImplementedError):  # a mechanism this estimator does not read
        est = EMEstimator(max_iter=20)
        ref = est.fit(reports).distribution_.copy()
    assert_array_equal(est.fit(back).distribution_, ref)
    plain = back.astype("int64")
    with pytest.raises(ValueError, match="pass channel="):
        clone(est).fit(plain)
    assert_array_equal(clone(est).set_params(channel=p).fit(plain).distribution_, ref)


# dask's Parquet I/O calls set_index and reset_index(inplace=True), deprecated in pandas 3.1
@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame")
def test_dask_parquet_round_trip_finds_the_channel(case, tmp_path):
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    privatizer, raw, reports = case
    with dask.config.set(scheduler="synchronous"):
        lazy = privatizer.transform(dd.from_pandas(raw.rename(columns={"raw": "city"}), 3))
        lazy.to_parquet(tmp_path / "reports")
        got = dd.read_parquet(tmp_path / "reports")
        assert list(got.dtypes) == list(reports.dtypes)
        assert list(got._meta.dtypes) == list(reports.dtypes)
        assert_array_equal(
            EMEstimator().fit(got).distribution_, EMEstimator().fit(lazy.compute()).distribution_
        )

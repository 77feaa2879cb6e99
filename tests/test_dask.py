"""Dask: privatize partition by partition, estimate by adding up per-partition statistics."""

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from numpy.testing import assert_array_equal

from skldp import (
    CandidateEstimator,
    EMEstimator,
    EmpiricalEstimator,
    HashedRAPPOR,
    HashedRR,
    OneBitCompressive,
    PersonalizedEstimator,
    PersonalizedULDP,
    ProjectedEstimator,
    RandomizedResponse,
    SparseEstimator,
)
from skldp._dask import partition_generators
from skldp._reports import Reports, ReportsDtype
from skldp.exceptions import ChannelMismatchError
from tests.conftest import assert_same_statistics, plain_statistics, simplex_point

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")

_CORE_USE = """
import numpy as np, pandas as pd
import skldp
from skldp import RandomizedResponse, EMEstimator, EmpiricalEstimator, ProjectedEstimator
rr = RandomizedResponse(1.0, categories=list("abc"), random_state=0)
r = rr.fit_transform(np.array(list("abcabca")))
EMEstimator().fit(r); EmpiricalEstimator().partial_fit(r); ProjectedEstimator().fit(r)
f = rr.fit_transform(pd.DataFrame({"x": list("abcabca")}))
EMEstimator().fit(f)
"""


def _run(code):
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=".")
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_core_neither_imports_nor_needs_dask():
    """With Dask unimportable, the core works, and nothing even tries to import Dask."""
    blocker = textwrap.dedent(
        """
        import sys
        attempts = []
        class _NoDask:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("dask", "distributed"):
                    attempts.append(name)
                    raise ImportError(f"No module named {name!r} (blocked by the test)")
                return None
        sys.meta_path.insert(0, _NoDask())
        """
    )
    out = _run(blocker + _CORE_USE + "print(attempts, 'dask' in sys.modules)")
    assert out.strip() == "[] False"


def _privatizer(k, seed=0, eps=1.0, n_columns=1):
    if n_columns == 1:
        return RandomizedResponse(eps, categories=np.arange(k), random_state=seed).fit(np.arange(k))
    X = np.tile(np.arange(k)[:, None], (1, n_columns))
    return RandomizedResponse(eps, categories=[np.arange(k)] * n_columns, random_state=seed).fit(X)


def _data(k, n, seed, n_columns=1):
    rng = np.random.default_rng(seed + 1)  # data and noise from different seeds
    X = rng.choice(k, size=(n, n_columns), p=simplex_point(k))
    return X[:, 0] if n_columns == 1 else X


@pytest.mark.parametrize("n_columns", [1, 2])
def test_dask_array_partitions_use_child_generators(n_columns, seed):
    k, n = 7, 10_000
    X = _data(k, n, seed, n_columns)
    chunks = (3000, 3000, 1, 3999)
    dX = da.from_array(X, chunks=(chunks,) if n_columns == 1 else (chunks, 1))
    rr = _privatizer(k, seed, n_columns=n_columns)
    lazy = rr.transform(dX)
    assert isinstance(lazy, da.Array) and lazy.chunks == (chunks, (n_columns,))
    got = lazy.compute()
    assert isinstance(got, Reports) and got.specs == rr.report_specs()
    # the single-machine equivalent: the same chunks, child i for chunk i
    pieces, start = [], 0
    for size, child in zip(chunks, partition_generators(seed, len(chunks)), strict=True):
        pieces.append(rr._transform(X[start : start + size], child, pandas=False))
        start += size
    assert_array_equal(got, np.concatenate(pieces))
    # recomputing the graph, with any scheduler, gives the same reports
    assert_array_equal(lazy.compute(scheduler="sync"), got)
    assert_array_equal(lazy.compute(scheduler="threads"), got)
    # a second transform is a new release: fresh children, fresh noise (issue 21)
    again = rr.transform(dX).compute(scheduler="threads")
    assert np.mean(np.all(np.asarray(again) == np.asarray(got), axis=1)) < 0.5
    # and the same seed set again gives the same sequence of releases
    rr2 = clone(rr).fit(X[:1])
    assert_array_equal(rr2.transform(dX).compute(), got)
    assert_array_equal(rr2.transform(dX).compute(), again)


def test_dask_partitions_have_independent_noise():
    k, size = 50, 20_000
    X = np.tile(np.arange(k), 2 * size // k)
    got = _privatizer(k, seed=3, eps=0.5).transform(da.from_array(X, chunks=size)).compute()
    a, b = got[:size, 0], got[size:, 0]
    flipped_a, flipped_b = a != X[:size], b != X[size:]
    # same inputs in both partitions, but the noise differs: agreement is what independent
    # k-RR draws give, not 100 %
    agree = np.mean(a == b)
    keep = _privatizer(k, eps=0.5).channel_.keep
    expected = keep**2 + (1 - keep) ** 2 / (k - 1)
    assert abs(agree - expected) < 5 * np.sqrt(expected * (1 - expected) / size)
    assert flipped_a.any() and flipped_b.any()


def test_unseeded_dask_transform_is_fresh_each_call():
    rr = RandomizedResponse(0.1, categories=np.arange(100)).fit(np.arange(100))
    dX = da.from_array(np.zeros(5000, dtype=int), chunks=1000)
    assert not np.array_equal(rr.transform(dX).compute(), rr.transform(dX).compute())


@pytest.mark.parametrize("Estimator", [EmpiricalEstimator, ProjectedEstimator, EMEstimator])
@pytest.mark.parametrize("n_columns", [1, 2])
def test_estimate_from_dask_array_equals_in_memory_fit(Estimator, n_columns, seed):
    k, n = 11, 20_000
    dX = da.from_array(_data(k, n, seed, n_columns), chunks=3001 if n_columns == 1 else (3001, 1))
    lazy = _privatizer(k, seed, n_columns=n_columns).transform(dX)
    est = Estimator().fit(lazy)
    ref = Estimator().fit(lazy.compute())
    assert est.n_reports_ == ref.n_reports_ == n
    for a, b in zip(est._stats, ref._stats, strict=True):
        assert_array_equal(plain_statistics(a), plain_statistics(b))
    assert_array_equal(np.asarray(est.distribution_), np.asarray(ref.distribution_))
    # partial_fit adds a Dask collection to what was seen
    est.partial_fit(lazy)
    assert est.n_reports_ == 2 * n
    assert_array_equal(plain_statistics(est._stats[0]), 2 * plain_statistics(ref._stats[0]))


def test_dask_dataframe_round_trip(seed):
    k, n = 6, 12_000
    cats = list("abcdef")
    df = pd.DataFrame(
        {"city": np.asarray(cats, dtype=object)[_data(k, n, seed)]}, index=np.arange(n) * 3
    )
    ddf = dd.from_pandas(df, npartitions=4)
    rr = RandomizedResponse(1.0, categories=cats, random_state=seed).fit(df)
    lazy = rr.transform(ddf)
    assert isinstance(lazy, dd.DataFrame)
    assert isinstance(lazy._meta.dtypes.iloc[0], ReportsDtype)
    got = lazy.compute()
    assert_array_equal(got.index, df.index)
    assert isinstance(got.dtypes.iloc[0], ReportsDtype)
    assert got.dtypes.iloc[0].spec == rr.report_specs()[0]
    # the same as the in-memory loop over partitions with child i
    partitions = [ddf.partitions[i].compute() for i in range(ddf.npartitions)]
    children = partition_generators(seed, ddf.npartitions)
    parts = [
        rr._transform(part, child, pandas=True)
        for part, child in zip(partitions, children, strict=True)
    ]
    assert_array_equal(got["city"].to_numpy(), pd.concat(parts)["city"].to_numpy())
    est = EMEstimator().fit(lazy)
    ref = EMEstimator().fit(got)
    assert_same_statistics(est._stats, ref._stats)
    assert_array_equal(est.distribution_, ref.distribution_)
    assert_array_equal(est.categories_, cats)
    # a series works too, and an empty partition is fine
    assert EmpiricalEstimator().fit(rr.transform(ddf["city"])).n_reports_ == n
    filtered = ddf.map_partitions(lambda part: part[part.index < 3 * 3000])  # 3 partitions empty
    assert EmpiricalEstimator().fit(rr.transform(filtered)).n_reports_ == 3000


def test_plain_dask_reports_need_the_channel(seed):
    rr = _privatizer(5, seed)
    plain = da.from_array(np.asarray(rr.transform(np.arange(5).repeat(100))), chunks=130)
    with pytest.raises(ValueError, match="pass channel="):
        EmpiricalEstimator().fit(plain)
    est = EmpiricalEstimator(channel=rr).fit(plain)
    assert_array_equal(
        est.distribution_, EmpiricalEstimator(channel=rr).fit(plain.compute()).distribution_
    )


def test_partitions_from_different_mechanisms_are_rejected():
    dX = da.from_array(np.arange(5).repeat(20), chunks=50)
    mixed = da.concatenate(
        [_privatizer(5, eps=1.0).transform(dX), _privatizer(5, eps=2.0).transform(dX)]
    )
    with pytest.raises(ChannelMismatchError, match="different mechanisms"):
        EmpiricalEstimator().fit(mixed)


def test_bad_dask_inputs():
    rr = _privatizer(5)
    with pytest.raises(ValueError, match="columns"):
        rr.transform(da.zeros((10, 2), dtype=int, chunks=5))
    with pytest.raises(TypeError, match="Dask arrays, data frames"):
        rr.transform(dask.delayed(np.arange)(5))
    with (
        sklearn.config_context(transform_output="pandas"),
        pytest.raises(ValueError, match="gather"),
    ):
        rr.transform(da.zeros(10, dtype=int, chunks=5))


def test_fit_on_dask_reads_one_row_and_needs_the_domain(seed):
    cats = list("abcd")
    raw = np.asarray(cats, dtype=object)[np.random.default_rng(seed).integers(0, 4, 1000)]
    dX = da.from_array(raw, chunks=300)
    rr = RandomizedResponse(1.0, categories=cats, random_state=seed)
    reports = rr.fit_transform(dX)
    assert isinstance(reports, da.Array) and rr.n_features_in_ == 1
    assert EmpiricalEstimator().fit(reports).n_reports_ == 1000
    ddf = dd.from_pandas(pd.DataFrame({"c": raw}), npartitions=3)
    assert list(rr.fit(ddf).feature_names_in_) == ["c"]
    with pytest.raises(ValueError, match="needs categories="):
        RandomizedResponse(1.0).fit(dX)
    bad = da.from_array(np.asarray(["a", "z"] * 10, dtype=object), chunks=5)
    with pytest.raises(ValueError, match="outside the domain: 'z'"):
        rr.fit(bad).transform(bad).compute()


# -- the privatizers that read their input their own way, and the other estimators ----------------
# Each case: a privatizer with a public domain (or an open alphabet), raw rows for it, and the
# estimators that read its reports. PersonalizedULDP reads two columns (value, tag); the
# open-alphabet privatizers hash strings; CandidateEstimator restricts the open channel to
# its candidates on every partition; SparseEstimator reads a compressive channel.
_WORDS = np.asarray(["cat", "dog", "emu", "yak", "owl"], dtype=object)


def _pum_rows(n, rng):
    value = rng.integers(0, 6, n)
    tag = np.where(rng.random(n) < 0.3, np.where(rng.random(n) < 0.5, "home", "work"), None)
    return np.column_stack([value.astype(object), tag])


_CASES = {
    "pum-urr": (
        lambda seed: PersonalizedULDP(
            2.0, sensitive=[0], tags=["home", "work"], categories=range(6), random_state=seed
        ),
        _pum_rows,
        [PersonalizedEstimator(), PersonalizedEstimator(method="threshold")],
    ),
    "pum-urap": (
        lambda seed: PersonalizedULDP(
            2.0,
            sensitive=[0, 1],
            tags=["home", "work"],
            base="urap",
            categories=range(6),
            random_state=seed,
        ),
        _pum_rows,
        [PersonalizedEstimator()],
    ),
    "hashed-rr": (
        lambda seed: HashedRR(4.0, n_buckets=8, n_cohorts=4, random_state=seed),
        lambda n, rng: rng.choice(_WORDS, size=n, p=[0.4, 0.3, 0.2, 0.1, 0.0]),
        [
            CandidateEstimator(candidates=list(_WORDS)),
            CandidateEstimator(candidates=list(_WORDS), method="em"),
        ],
    ),
    "hashed-rappor": (
        lambda seed: HashedRAPPOR(4.0, n_bits=16, n_cohorts=4, random_state=seed),
        lambda n, rng: rng.choice(_WORDS, size=n, p=[0.4, 0.3, 0.2, 0.1, 0.0]),
        [
            CandidateEstimator(candidates=list(_WORDS)),
            CandidateEstimator(candidates=list(_WORDS), method="em"),
        ],
    ),
    "closed-hashed-rr": (
        lambda seed: HashedRR(
            4.0, n_buckets=4, n_cohorts=3, categories=list(_WORDS), random_state=seed
        ),
        lambda n, rng: rng.choice(_WORDS, size=n, p=[0.4, 0.3, 0.2, 0.1, 0.0]),
        [EMEstimator()],
    ),
    "compressive": (
        lambda seed: OneBitCompressive(
            2.0, n_measurements=16, categories=list(range(40)), random_state=seed
        ),
        lambda n, rng: rng.choice([3, 30], size=n, p=[0.7, 0.3]),
        [SparseEstimator(sparsity=2)],
    ),
}


def _case(name, seed, n):
    make, rows, estimators = _CASES[name]
    X = rows(n, np.random.default_rng(seed + 1))  # data and noise from different seeds
    return make(seed).fit(X[:1]), X, estimators


def _loop(privatizer, X, chunks, seed, *, pandas=False):
    """The single-machine equivalent of a Dask transform: chunk i with child generator i."""
    pieces, start = [], 0
    for size, child in zip(chunks, partition_generators(seed, len(chunks)), strict=True):
        if size:  # an empty partition gives no reports (in memory, zero rows are an error)
            pieces.append(privatizer._transform(X[start : start + size], child, pandas=pandas))
        start += size
    return pieces


def _assert_same_fit(est, ref):
    assert est.n_reports_ == ref.n_reports_
    assert_same_statistics(est._stats, ref._stats)
    assert_array_equal(np.asarray(est.distribution_), np.asarray(ref.distribution_))


@pytest.mark.parametrize("name", list(_CASES))
def test_dask_array_of_other_privatizers_matches_the_loop(name, seed):
    chunks = (700, 1, 1299, 0, 1000)
    privatizer, X, estimators = _case(name, seed, sum(chunks))
    dX = da.from_array(X, chunks=(chunks,) if X.ndim == 1 else (chunks, X.shape[1]))
    lazy = privatizer.transform(dX)
    assert isinstance(lazy, da.Array)
    got = lazy.compute()
    assert isinstance(got, Reports) and got.specs == privatizer.report_specs()
    assert_array_equal(got, np.concatenate(_loop(privatizer, X, chunks, seed)))
    assert_array_equal(lazy.compute(scheduler="sync"), got)
    assert not np.array_equal(privatizer.transform(dX).compute(scheduler="sync"), got)
    for estimator in estimators:
        # the statistics of the partitions, added up on the workers, are those of the whole
        _assert_same_fit(clone(estimator).fit(lazy), clone(estimator).fit(got))


@pytest.mark.parametrize("name", ["pum-urr", "hashed-rappor"])
def test_dask_dataframe_of_other_privatizers_matches_the_loop(name, seed):
    n = 3000
    privatizer, X, estimators = _case(name, seed, n)
    columns = ["value", "tag"] if X.ndim == 2 else ["word"]
    df = pd.DataFrame(X.reshape(n, -1), columns=columns, index=np.arange(n) * 2 + 1)
    if "value" in df:
        # integer values as integers: Dask turns object columns into strings
        df["value"] = df["value"].astype(np.int64)
    privatizer = clone(privatizer).fit(df.iloc[:1])
    ddf = dd.from_pandas(df, npartitions=3)
    lazy = privatizer.transform(ddf)
    assert isinstance(lazy, dd.DataFrame)
    got = lazy.compute()
    assert_array_equal(got.index, df.index)
    parts = [ddf.partitions[i].compute() for i in range(ddf.npartitions)]
    loop = _loop(privatizer, pd.concat(parts), [len(p) for p in parts], seed, pandas=True)
    assert_array_equal(got.to_numpy(), pd.concat(loop).to_numpy())
    _assert_same_fit(clone(estimators[0]).fit(lazy), clone(estimators[0]).fit(got))


def test_fit_personalized_and_open_alphabet_on_dask(seed):
    # only the first row is read; the open alphabet has no domain, so needs no categories=
    rows = da.from_array(_pum_rows(100, np.random.default_rng(seed)), chunks=(30, 2))
    pum = PersonalizedULDP(tags=["home", "work"], categories=range(6)).fit(rows)
    assert pum.n_features_in_ == 2 and pum.transform(rows).shape == (100, 1)
    with pytest.raises(ValueError, match="needs categories="):
        PersonalizedULDP(tags=["home", "work"]).fit(rows)
    words = da.from_array(np.asarray(["cat", "dog"] * 50, dtype=object), chunks=30)
    assert HashedRR().fit(words).categories_ == [None]
    with pytest.raises(ValueError, match="needs categories="):
        HashedRR(categories="auto").fit(words)
    # a bad tag is named, by the partition that holds it
    bad = np.asarray([[1, None]] * 40 + [[2, "gym"]], dtype=object)
    with pytest.raises(ValueError, match="unknown tags: 'gym'"):
        pum.transform(da.from_array(bad, chunks=(20, 2))).compute()


# -- a local two-worker cluster -------------------------------------------------------------------
@pytest.fixture(scope="module")
def two_workers():
    """A local dask.distributed cluster of two single-threaded worker processes, and its client.

    Separate processes, as on a real cluster: channels, generators and statistics cross a
    process boundary by pickling.
    """
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def _persist_on_both(client, lazy):
    """Compute the reports on the cluster and check that both workers hold partitions."""
    import distributed

    reports = client.persist(lazy)
    distributed.wait(reports)
    workers = {w for keys in client.who_has(reports).values() for w in keys}
    assert len(workers) == 2
    return reports


def test_two_worker_cluster_matches_single_machine(two_workers, seed):
    """On a local two-worker cluster: the estimate of one machine, for the same seed."""
    k, n, n_parts = 32, 400_000, 8
    p = simplex_point(k)
    chunk = n // n_parts
    X = np.random.default_rng(seed + 1).choice(k, size=n, p=p)
    rr = _privatizer(k, seed, eps=1.0)

    # single machine: stream the same chunks through partial_fit, child i for chunk i
    local = EMEstimator()
    for i, child in enumerate(partition_generators(seed, n_parts)):
        local.partial_fit(rr._transform(X[i * chunk : (i + 1) * chunk], child, pandas=False))

    reports = _persist_on_both(two_workers, rr.transform(da.from_array(X, chunks=chunk)))
    est = EMEstimator().fit(reports)

    assert est.n_reports_ == local.n_reports_ == n
    assert_same_statistics(est._stats, local._stats)
    assert_array_equal(est.distribution_, local.distribution_)
    assert est.converged_


@pytest.mark.parametrize("name", list(_CASES))
def test_two_worker_cluster_matches_single_machine_for_other_privatizers(two_workers, name, seed):
    """The same for PersonalizedULDP, hashed RR and RAPPOR, and a compressive mechanism."""
    n, n_parts = 40_000, 4
    chunk = n // n_parts
    privatizer, X, estimators = _case(name, seed, n)
    pieces = _loop(privatizer, X, [chunk] * n_parts, seed)
    dX = da.from_array(X, chunks=chunk if X.ndim == 1 else (chunk, X.shape[1]))
    reports = _persist_on_both(two_workers, privatizer.transform(dX))
    for estimator in estimators:
        local = clone(estimator)
        for piece in pieces:
            local.partial_fit(piece)
        _assert_same_fit(clone(estimator).fit(reports), local)


def test_object_columns_turned_into_strings_by_dask_are_explained():
    # Dask makes object columns strings by default: the integers 1, 2, 3 arrive as "1", "2",
    # "3", outside a domain of integers. The error says so, and the setting it names works.
    import dask

    frame = pd.DataFrame({"x": pd.Series([1, 2, 3, 1] * 25, dtype=object)})
    rr = RandomizedResponse(epsilon=1.0, categories=[1, 2, 3], random_state=0)
    with pytest.raises(ValueError, match=r"'1'.*text of non-string categories.*convert-string"):
        rr.fit(dd.from_pandas(frame, npartitions=2))
    with dask.config.set({"dataframe.convert-string": False}):
        lazy = dd.from_pandas(frame, npartitions=2)
        reports = rr.fit(lazy).transform(lazy).compute()
    assert reports.shape == (100, 1) and set(np.asarray(reports).ravel()) <= {0, 1, 2}
    # The same hint for text read from a file, without Dask.
    with pytest.raises(ValueError, match="text of non-string categories"):
        rr.fit(["1", "2"])


def test_reports_cross_processes_with_their_channels(seed):
    # distributed's own serializer would send a Reports block as a plain ndarray (its channels
    # gone, so a block that moved to another worker could not be read); skldp declines it for
    # Reports, and distributed falls back to pickle, channels included.
    from distributed.protocol import deserialize, serialize

    X = np.random.default_rng(seed).integers(0, 5, 4000)
    rr = RandomizedResponse(epsilon=1.0, categories=range(5), random_state=seed).fit(X)
    block = rr.transform(da.from_array(X, chunks=1000)).blocks[0].compute()
    header, frames = serialize(block)
    moved = deserialize(header, frames)
    assert header["serializer"] == "pickle"
    assert type(moved) is type(block) and moved.specs == block.specs
    assert_array_equal(moved, block)

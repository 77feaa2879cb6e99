"""Streaming: partial_fit over chunks equals one fit on the concatenation, bit for bit.

The statistics of chunks add up exactly (integer counts), so every estimator that works from
statistics gives the identical estimate whether it sees the reports at once or in chunks; and
streaming needs memory bounded by the chunk and k, never by the number of reports.
"""

import pickle
import warnings
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal, assert_equal

from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from skldp import (
    RAPPOR,
    CandidateEstimator,
    EMEstimator,
    EmpiricalEstimator,
    PersonalizedEstimator,
    PersonalizedULDP,
    ProjectedEstimator,
    RandomizedResponse,
    SparseEstimator,
    UtilityOptimizedRAPPOR,
)
from skldp.base import BaseDistributionEstimator
from skldp.channels import LikelihoodModel
from tests import registry
from tests.conftest import assert_same_statistics, simplex_point, statistics_leaves

ESTIMATORS = [EmpiricalEstimator, ProjectedEstimator, EMEstimator]


def _privatizer(k, eps=1.0, random_state=0, n_columns=1):
    cats = [np.arange(k)] * n_columns if n_columns > 1 else np.arange(k)
    X = np.tile(np.arange(k)[:, None], (1, n_columns)) if n_columns > 1 else np.arange(k)
    return RandomizedResponse(eps, categories=cats, random_state=random_state).fit(X)


def _fitted_state(est):
    plain = [s.statistics if isinstance(s, LikelihoodModel) else s for s in est._stats]
    return [np.asarray(s) for s in plain], est.n_reports_


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize("n_columns", [1, 2])
def test_chunked_statistics_and_estimate_equal_one_fit(Estimator, n_columns, seed):
    k, n = 9, 5003
    rng = np.random.default_rng(seed + 1)
    X = rng.choice(k, size=(n, n_columns), p=simplex_point(k))
    reports = _privatizer(k, eps=0.7, random_state=seed, n_columns=n_columns).transform(X)
    one = Estimator().fit(reports)
    streamed = Estimator()
    # uneven chunks, including a single report and the empty tail
    cuts = [0, 1, 17, 2000, 2001, 4999, n]
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        streamed.partial_fit(reports[a:b])
    stats_one, n_one = _fitted_state(one)
    stats_streamed, n_streamed = _fitted_state(streamed)
    assert n_one == n_streamed == n
    for a, b in zip(stats_one, stats_streamed, strict=True):
        assert a.dtype == b.dtype
        assert_array_equal(a, b)
    for p, q in zip(
        np.atleast_2d(one.distribution_), np.atleast_2d(streamed.distribution_), strict=True
    ):
        assert_array_equal(p, q)  # same statistics, same deterministic solve: identical


def test_chunked_dataframe_reports_equal_one_fit(seed):
    k, n = 5, 3000
    rng = np.random.default_rng(seed + 1)
    X = pd.DataFrame({"a": rng.integers(0, k, n)}, index=np.arange(n)[::-1])
    reports = RandomizedResponse(categories=np.arange(k), random_state=seed).fit_transform(X)
    assert isinstance(reports, pd.DataFrame)
    one = EMEstimator().fit(reports)
    streamed = EMEstimator()
    for start in range(0, n, 700):
        streamed.partial_fit(reports.iloc[start : start + 700])
    assert_same_statistics(one._stats, streamed._stats)
    assert_array_equal(one.distribution_, streamed.distribution_)


def test_fit_resets_the_stream():
    k = 4
    reports = _privatizer(k).transform(np.arange(k).repeat(50))
    est = EmpiricalEstimator().partial_fit(reports).partial_fit(reports)
    assert est.n_reports_ == 400
    est.fit(reports)
    assert est.n_reports_ == 200
    assert_array_equal(est.distribution_, EmpiricalEstimator().fit(reports).distribution_)


def _stream(k, p, n_chunks, chunk, seed, estimator):
    """Generate and privatize chunk by chunk, one child generator per chunk index."""
    privatizer = _privatizer(k, eps=1.0)
    for child in np.random.default_rng(seed).spawn(n_chunks):
        x = child.choice(k, size=chunk, p=p)
        privatizer.set_params(random_state=child)
        estimator.partial_fit(privatizer.transform(x))
    return estimator


def test_stream_ten_million_reports_matches_one_fit(seed):
    """10^7 k-RR reports in 20 chunks: same statistics and estimate as one fit, low memory."""
    k, n_chunks, chunk = 64, 20, 500_000
    p = simplex_point(k)
    tracemalloc.start()
    try:
        streamed = _stream(k, p, n_chunks, chunk, seed, EMEstimator())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert streamed.n_reports_ == n_chunks * chunk
    # memory bounded by the chunk: a handful of chunk-sized int64/float64 arrays (drawing,
    # encoding, sampling), far below the 80 MB that the 10^7 reports alone would take
    assert peak < 8 * 8 * chunk, peak

    # the same reports, regenerated and fitted at once
    privatizer = _privatizer(k, eps=1.0)
    parts = []
    for child in np.random.default_rng(seed).spawn(n_chunks):
        x = child.choice(k, size=chunk, p=p)
        parts.append(privatizer.set_params(random_state=child).transform(x))
    reports = np.concatenate(parts)
    assert reports.specs == parts[0].specs
    one = EMEstimator().fit(reports)
    assert one.n_reports_ == streamed.n_reports_
    assert_same_statistics(one._stats, streamed._stats)
    assert_array_equal(one.distribution_, streamed.distribution_)

    # and the estimate is right: within 5 standard errors of the unbiased estimator
    channel = privatizer.channel_
    unbiased = EmpiricalEstimator().fit(reports).distribution_
    sd = np.sqrt(channel.variance(p, n_chunks * chunk))
    assert np.all(np.abs(unbiased - p) < 5 * sd)


# -- every estimator class, on the channels it reads -----------------------------------------------
def _domain_rows(privatizer, n, rng):
    cats = registry.domain(privatizer)
    return [[cats[i]] for i in rng.integers(0, len(cats), n)]


def _open_rows(privatizer, n, rng):
    return [[w] for w in rng.choice(["a", "b", "c", "d"], size=n, p=[0.5, 0.3, 0.2, 0.0])]


def _tagged_rows(privatizer, n, rng):
    tags = np.where(rng.random(n) < 0.3, np.where(rng.random(n) < 0.5, "home", "work"), None)
    return np.column_stack([rng.integers(0, 4, n).astype(object), tags])


#: Bit-vector mechanisms whose EM statistics hold the reports bit-packed.
_WIDE = [
    RAPPOR(1.0, categories=list(range(20))),
    UtilityOptimizedRAPPOR(1.0, sensitive=list(range(18)), categories=list(range(24))),
]


def _streaming_cases():
    """(estimator, privatizer, rows) for every estimator class and the mechanisms it reads.

    The registry's estimators (empirical, projected, EM) and the compressive family's
    SparseEstimator meet one privatizer per mechanism of the registry (a pair whose estimator
    refuses the reports is skipped at fit, as the registry says); the open-alphabet
    CandidateEstimators meet the open hashed privatizers, and PersonalizedEstimator (each
    method) meets PersonalizedULDP over uRR and uRAP. Two more bit-vector cases make EM keep
    its reports bit-packed: RAPPOR over 20 categories and uRAP with 18 sensitive values (more
    than 16 non-decisive bits, so no pattern histogram).
    """
    for est in registry.ESTIMATORS:
        for priv in [*registry.MECHANISMS, *_WIDE]:
            yield est, priv, _domain_rows
    for est in registry.SPARSE_ESTIMATORS:
        for priv in registry.MECHANISMS:
            yield est, priv, _domain_rows
    for est in registry.CANDIDATE_ESTIMATORS:
        for priv in registry.OPEN_ALPHABET:
            yield est, priv, _open_rows
    (pum,) = [p for p in registry.TAG_COLUMN if isinstance(p, PersonalizedULDP)]
    for method in ("em", "threshold", "empirical"):
        for base in ("urr", "urap"):
            privatizer = clone(pum).set_params(base=base)
            yield PersonalizedEstimator(method=method), privatizer, _tagged_rows


_STREAMING = list(_streaming_cases())


def _case_id(estimator, privatizer):
    cats = getattr(privatizer, "categories", None)
    k = "" if cats is None else f"-k{len(registry.domain(privatizer))}"
    return f"{registry.instance_id(estimator)}-{registry.instance_id(privatizer)}{k}"


def test_streaming_cases_cover_every_estimator_class():
    import skldp

    public = {
        getattr(skldp, name)
        for name in skldp.__all__
        if isinstance(getattr(skldp, name), type)
        and issubclass(getattr(skldp, name), BaseDistributionEstimator)
    }
    assert {type(est) for est, _, _ in _STREAMING} == public
    assert {SparseEstimator, CandidateEstimator, PersonalizedEstimator} <= public
    # the wide cases do exercise the bit-packed EM statistics
    for privatizer in _WIDE:
        X = _domain_rows(privatizer, 50, np.random.default_rng(0))
        reports = clone(privatizer).set_params(random_state=0).fit(X).transform(X)
        leaves = statistics_leaves(EMEstimator().fit(reports)._stats)
        assert any(isinstance(x, str) and x == "PackedBitReports" for x in leaves)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore:.*underdetermined:UserWarning")
@pytest.mark.parametrize(
    "estimator,privatizer,rows",
    _STREAMING,
    ids=[_case_id(e, p) for e, p, _ in _STREAMING],
)
def test_every_estimator_streams_to_the_statistics_of_one_fit(
    estimator, privatizer, rows, seed, monkeypatch
):
    """partial_fit over uneven chunks (one of them empty) accumulates exactly fit's statistics."""
    n = 601
    X = rows(privatizer, n, np.random.default_rng(seed + 1))
    privatizer = clone(privatizer).set_params(random_state=seed).fit(X)
    reports = privatizer.transform(X)
    try:
        one = clone(estimator).fit(reports)
    except (TypeError, NotImplementedError):
        pytest.skip("this estimator does not read these reports")
    streamed = clone(estimator)
    solves = _count_solves(monkeypatch, streamed)
    cuts = [0, 1, 18, 300, 300, 301, 598, n]
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        streamed.partial_fit(reports[a:b])
    assert solves == []  # partial_fit only adds statistics
    check_is_fitted(streamed)
    assert streamed.n_reports_ == one.n_reports_ == n
    assert_same_statistics(streamed._stats, one._stats)
    # same statistics, same deterministic solve: the same estimate, bit for bit
    for p, q in zip(one._distributions(), streamed._distributions(), strict=True):
        assert_array_equal(p, q)
    assert len(solves) == len(streamed._specs)  # the first read solved, once per column
    assert_array_equal(np.asarray(one.distribution_), np.asarray(streamed.distribution_))
    # every learned attribute, read lazily, equals fit's (standard errors included)
    assert sorted(streamed._state.solved_names()) == sorted(one._state.solved_names())
    for name in one._state.solved_names():
        assert_equal(getattr(streamed, name), getattr(one, name), err_msg=name)
    assert len(solves) == len(streamed._specs)  # reused, not solved again


def _count_solves(monkeypatch, estimator):
    """Record each call of the estimator's ``_estimate`` (one per column and solve)."""
    calls = []
    cls = type(estimator)
    original = cls._estimate

    def counted(self, *args):
        calls.append(args[-1])
        return original(self, *args)

    monkeypatch.setattr(cls, "_estimate", counted)
    return calls


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_partial_fit_solves_when_read_and_again_after_new_reports(Estimator, monkeypatch):
    k, n = 6, 4000
    X = np.random.default_rng(3).choice(k, size=n, p=simplex_point(k))
    reports = _privatizer(k, eps=1.0, random_state=3).transform(X)
    est = Estimator()
    solves = _count_solves(monkeypatch, est)
    assert not hasattr(est, "distribution_")  # unfitted: a plain AttributeError
    est.partial_fit(reports[:1000])
    est.partial_fit(reports[1000:2000])
    assert solves == []
    first = est.distribution_.copy()
    assert solves == [2000]
    est.distribution_, est.n_reports_  # noqa: B018 - read again: no solve
    est.partial_fit(reports[2000:2000])  # no reports added: the solution stands
    assert est.distribution_ is not None and solves == [2000]
    est.partial_fit(reports[2000:])
    assert est._state.solution is None  # forgotten, not stale
    assert solves == [2000]
    assert_array_equal(est.distribution_, Estimator().fit(reports).distribution_)
    assert solves[1] == n
    assert not np.array_equal(first, est.distribution_)
    if Estimator is EMEstimator:
        # k-RR's closed-form maximizer is the start: certified at once (0 or more iterations)
        assert est.converged_ and est.gap_ <= est.tol
    # a pickled or deep-copied estimator keeps the statistics and solves the same
    again = pickle.loads(pickle.dumps(est))
    assert_array_equal(again.distribution_, est.distribution_)
    # a clone is a fresh, unfitted estimator
    assert not hasattr(clone(est), "n_reports_")


@pytest.mark.parametrize("Estimator", [EmpiricalEstimator, ProjectedEstimator])
def test_standard_errors_are_computed_when_read(Estimator, monkeypatch):
    import skldp.estimators._empirical as empirical
    import skldp.estimators._projected as projected

    k = 5
    X = np.random.default_rng(4).choice(k, size=3000, p=simplex_point(k))
    reports = _privatizer(k, eps=1.0, random_state=4, n_columns=2).transform(
        np.column_stack([X, X[::-1]])
    )
    # an estimator whose standard errors were not read pickles, and computes them on load
    unread = Estimator().fit(reports)
    pickled = pickle.loads(pickle.dumps(unread))
    assert "distribution_std_" not in vars(pickled)
    calls = []
    original = empirical._plug_in_std

    def counted(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(empirical, "_plug_in_std", counted)
    monkeypatch.setattr(projected, "_plug_in_std", counted)
    est = Estimator().fit(reports)
    est.distribution_  # noqa: B018  reading the attribute is the test
    assert calls == []  # fit solved, but nobody asked for the standard errors
    std = est.distribution_std_
    assert len(calls) == 2 and isinstance(std, list) and len(std) == 2
    assert est.distribution_std_ is std and len(calls) == 2
    channel = est._specs[0].channel
    assert_array_equal(std[0], original(channel, est._distributions()[0], 3000))
    assert_array_equal(pickled.distribution_std_[1], std[1])


def test_convergence_warning_of_a_lazy_solve_points_at_the_read():
    k = 6
    X = np.random.default_rng(5).choice(k, size=2000, p=simplex_point(k))
    reports = _privatizer(k, eps=0.5, random_state=5).transform(X)
    est = EMEstimator(max_iter=1, init="uniform", tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.partial_fit(reports)  # nothing solved, nothing to warn about
    with pytest.warns(ConvergenceWarning, match="max_iter=1") as record:
        est.distribution_  # noqa: B018  reading the attribute is the test
    assert len(record) == 1 and record[0].filename == __file__
    assert est.n_iter_ == 1 and not est.converged_


def test_a_failed_lazy_solve_raises_again_on_the_next_read():
    reports = _privatizer(6, random_state=6).transform(np.arange(6).repeat(50))
    est = EMEstimator(init=[0.5, 0.5]).partial_fit(reports)  # the init fits no k = 6
    for _ in range(2):
        with pytest.raises(ValueError, match="init must be 6 positive numbers"):
            est.distribution_  # noqa: B018  reading the attribute is the test
    assert est._state.solution is None
    est.set_params(init="uniform")
    assert est.distribution_.shape == (6,)

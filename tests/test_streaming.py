"""Streaming: partial_fit over chunks equals one fit on the concatenation, bit for bit.

The statistics of chunks add up exactly (integer counts), so every estimator that works from
statistics gives the identical estimate whether it sees the reports at once or in chunks; and
streaming needs memory bounded by the chunk and k, never by the number of reports.
"""

import tracemalloc

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from skldp import EMEstimator, EmpiricalEstimator, ProjectedEstimator, RandomizedResponse
from tests.conftest import simplex_point

ESTIMATORS = [EmpiricalEstimator, ProjectedEstimator, EMEstimator]


def _privatizer(k, eps=1.0, random_state=0, n_columns=1):
    cats = [np.arange(k)] * n_columns if n_columns > 1 else np.arange(k)
    X = np.tile(np.arange(k)[:, None], (1, n_columns)) if n_columns > 1 else np.arange(k)
    return RandomizedResponse(eps, categories=cats, random_state=random_state).fit(X)


def _fitted_state(est):
    return [np.asarray(s) for s in est._stats], est.n_reports_


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
    for a, b in zip(cuts[:-1], cuts[1:]):
        streamed.partial_fit(reports[a:b])
    stats_one, n_one = _fitted_state(one)
    stats_streamed, n_streamed = _fitted_state(streamed)
    assert n_one == n_streamed == n
    for a, b in zip(stats_one, stats_streamed):
        assert a.dtype == b.dtype
        assert_array_equal(a, b)
    for p, q in zip(np.atleast_2d(one.distribution_), np.atleast_2d(streamed.distribution_)):
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
    assert_array_equal(one._stats[0], streamed._stats[0])
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
    assert_array_equal(one._stats[0], streamed._stats[0])
    assert_array_equal(one.distribution_, streamed.distribution_)

    # and the estimate is right: within 5 standard errors of the unbiased estimator
    channel = privatizer.channel_
    unbiased = EmpiricalEstimator().fit(reports).distribution_
    sd = np.sqrt(channel.variance(p, n_chunks * chunk))
    assert np.all(np.abs(unbiased - p) < 5 * sd)

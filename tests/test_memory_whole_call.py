"""Issue 27, item 13: the memory guard counts a whole call's arrays, at the call's entry.

A privatizer's fit, an estimator's solve and ``confidence_interval`` state their bytes per
category (all arrays alive at once); the guard refuses a call over that total before any
array is built. Every test here allocates little: refused calls are refused at once, and the
peaks measured with tracemalloc on small domains stay below the stated totals.
"""

import time
import tracemalloc
import warnings

import numpy as np
import pytest

from skldp import (
    EmpiricalEstimator,
    EMEstimator,
    HadamardResponse,
    OptimizedUnaryEncoding,
    RandomizedResponse,
    memory_limit,
)
from skldp._memory import FIT_BYTES_PER_CATEGORY
from skldp.estimators._intervals import interval_bytes_per_category
from skldp.exceptions import MemoryLimitError

PRIVATIZERS = [RandomizedResponse, OptimizedUnaryEncoding, HadamardResponse]


def _peak(call):
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out = call()
            except ValueError as exc:  # a configuration that does not fit the domain
                out = exc
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_domain_of_a_trillion_categories_is_refused_at_once():
    start = time.perf_counter()
    with pytest.raises(MemoryLimitError, match=r"1000000000000 values.*TiB, more than"):
        RandomizedResponse(epsilon=1.0, categories=range(10**12)).fit([[0]])
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("cls", PRIVATIZERS)
@pytest.mark.parametrize("categories", [range(10**8), [range(10**8)]])
def test_a_domain_of_1e8_is_refused_before_it_is_built(cls, categories):
    start = time.perf_counter()
    with memory_limit(2**30), pytest.raises(MemoryLimitError, match="100000000 values"):
        cls(epsilon=1.0, categories=categories).fit([[0]])
    assert time.perf_counter() - start < 2.0


def test_the_fit_guard_counts_every_array_not_the_largest():
    # 2**21 categories: each array is 16 MiB at most, the fit builds several (old: passed).
    with memory_limit(64 * 2**20), pytest.raises(MemoryLimitError, match="fits"):
        OptimizedUnaryEncoding(epsilon=1.0, categories=range(2**21)).fit([[0]])


@pytest.fixture(scope="module")
def fitted():
    """Reports of 50 people over k = 2**13 (Hadamard: 2**14 outputs), for each privatizer."""
    k = 2**13
    X = np.random.default_rng(0).integers(0, k, (50, 1))
    out = {}
    for cls in PRIVATIZERS:
        p, peak = _peak(lambda cls=cls: cls(epsilon=1.0, categories=range(k)).fit([[0]]))
        out[cls.__name__] = (p, p.transform(X), peak)
    return k, out


@pytest.mark.parametrize("name", [c.__name__ for c in PRIVATIZERS])
def test_measured_peaks_stay_below_the_stated_totals(fitted, name):
    k, out = fitted
    p, reports, fit_peak = out[name]
    assert fit_peak <= FIT_BYTES_PER_CATEGORY * k
    for est in (EmpiricalEstimator(), EMEstimator(max_iter=5)):
        est.partial_fit(reports)
        _, peak = _peak(lambda est=est: est.distribution_)
        assert peak <= est._solve_bytes_per_category * k, type(est).__name__
        for method, kw in (("wilson", {}), ("normal", {}), ("bootstrap", {"n_resamples": 3})):
            call = lambda est=est, m=method, kw=kw: est.confidence_interval(method=m, **kw)  # noqa: E731
            _, peak = _peak(call)
            (spec,), (stats,) = est._specs, est._stats
            fitted_est = est._fitted_estimate()  # what confidence_interval states its memory by
            stated = interval_bytes_per_category(fitted_est, method, spec.channel, stats, 3) * k
            assert peak <= stated, (type(est).__name__, method, peak, stated)


def test_an_estimate_is_refused_when_its_solve_would_not_fit(fitted):
    k, out = fitted
    _, reports, _ = out["OptimizedUnaryEncoding"]
    est = EMEstimator(max_iter=5).partial_fit(reports)
    # One array of k floats is 64 KiB; the EM solve holds hundreds of bytes per category.
    with memory_limit(2**20), pytest.raises(MemoryLimitError, match="EMEstimator's estimate"):
        _ = est.distribution_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # five EM steps do not converge
        assert est.distribution_.shape == (k,)  # with the default limit, it solves


def test_confidence_interval_is_refused_up_front(fitted):
    k, out = fitted
    _, reports, _ = out["RandomizedResponse"]
    est = EmpiricalEstimator().fit(reports)
    # The score interval keeps a row of k contributions per observed report symbol (50 here):
    # about 1 KiB per category, while no single array of k floats reaches 64 KiB.
    with memory_limit(2**19), pytest.raises(MemoryLimitError, match="wilson confidence"):
        est.confidence_interval()
    with memory_limit(2**19), pytest.raises(MemoryLimitError, match="bootstrap confidence"):
        est.confidence_interval(method="bootstrap", n_resamples=1000)
    lower, upper = est.confidence_interval()
    assert lower.shape == upper.shape == (k,) and np.all(lower <= upper)


def _registry_cases():
    from tests.registry import MECHANISMS, instance_id

    return [
        pytest.param(p, id=instance_id(p))
        for p in MECHANISMS
        if "categories" in p.get_params(deep=False)
    ]


@pytest.mark.parametrize("privatizer", _registry_cases())
def test_any_limit_below_the_measured_peak_refuses_the_call(privatizer):
    # The stated totals are at least the peaks: a limit one byte below what a fit or a solve
    # actually used (tracemalloc) refuses it up front, for every mechanism of the registry.
    from sklearn.base import clone

    k = 2**13
    p = clone(privatizer).set_params(categories=np.arange(k))
    fitted, peak = _peak(lambda: clone(p).fit([[0]]))
    if isinstance(fitted, Exception):  # pragma: no cover - a mechanism that takes no such k
        pytest.skip(f"does not fit k = {k}")
    with memory_limit(peak - 1), pytest.raises(MemoryLimitError):
        clone(p).fit([[0]])
    reports = fitted.transform(np.random.default_rng(0).integers(0, k, (50, 1)))
    for est in (EmpiricalEstimator(), EMEstimator(max_iter=5)):
        _, peak = _peak(lambda est=est: est.partial_fit(reports).distribution_)
        est.partial_fit(reports)
        with memory_limit(peak - 1), pytest.raises(MemoryLimitError):
            _ = est.distribution_


@pytest.mark.parametrize("method, k", [("information", 512), ("profile", 64)])
def test_dense_interval_methods_stay_below_their_stated_totals(method, k):
    # The observed information and the profile form dense k x k matrices (small k only).
    p = RandomizedResponse(epsilon=1.0, categories=range(k), random_state=0).fit([[0]])
    est = EMEstimator(max_iter=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(p.transform(np.random.default_rng(0).integers(0, k, (300, 1))))
    _, peak = _peak(lambda: est.confidence_interval(method=method))
    (spec,), (stats,) = est._specs, est._stats
    stated = interval_bytes_per_category(est._fitted_estimate(), method, spec.channel, stats, 0)
    assert peak <= stated * k

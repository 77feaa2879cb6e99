"""Work that would exceed the memory limit is refused up front, by name (issue 21 item 6).

Every test here sets a limit (or asks for far more than any machine has) so that nothing large
is allocated: the refusal comes before the arrays.
"""

import os

import numpy as np
import pytest

import skldp
from skldp import MemoryLimitError, memory_limit
from skldp._memory import check_allocation
from skldp.datasets import make_zipf
from skldp.privacy import audit


def test_error_is_memory_and_value_error():
    assert issubclass(MemoryLimitError, MemoryError)
    assert issubclass(MemoryLimitError, ValueError)
    assert skldp.exceptions.MemoryLimitError is MemoryLimitError


def test_default_limit_is_physical_memory():
    expected = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert skldp.get_memory_limit() == expected


def test_limit_set_and_restored():
    before = skldp.get_memory_limit()
    with memory_limit(12345):
        assert skldp.get_memory_limit() == 12345
    assert skldp.get_memory_limit() == before
    skldp.set_memory_limit(999)
    try:
        assert skldp.get_memory_limit() == 999
    finally:
        skldp.set_memory_limit(None)
    assert skldp.get_memory_limit() == before


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "1GB"])
def test_bad_limit(bad):
    with pytest.raises(ValueError, match="memory limit must be a positive number of bytes"):
        skldp.set_memory_limit(bad)


def test_check_allocation_boundary():
    with memory_limit(1000):
        check_allocation(100, 10, "work", "advice")  # exactly the limit: allowed
        with pytest.raises(
            MemoryLimitError, match=r"work need 1010 bytes.*1000 bytes.*at most 100 rows"
        ):
            check_allocation(101, 10, "work", "use at most {rows} rows")


@pytest.mark.parametrize("n_samples", [10**12, 2**63])
def test_audit_refuses_huge_samples(n_samples):
    # before: 10**12 tried to allocate 21.8 TiB, 2**63 raised OverflowError
    rr = skldp.RandomizedResponse(epsilon=1.0, categories=[0, 1, 2]).fit([0, 1, 2])
    with pytest.raises(MemoryLimitError, match=r"n_samples=\d+ reports.*pass fewer samples"):
        audit(rr, n_samples=n_samples)


def test_audit_advice_fits():
    rr = skldp.RandomizedResponse(epsilon=1.0, categories=[0, 1, 2]).fit([0, 1, 2])
    with memory_limit(2**20), pytest.raises(MemoryLimitError) as info:
        audit(rr, n_samples=10**6, random_state=0)
    fits = int(str(info.value).split("n_samples=")[2].split(" ")[0])
    with memory_limit(2**20):
        assert audit(rr, n_samples=fits, random_state=0).n_samples == fits


def test_rappor_dense_reports_refused():
    # k = n = 10**5: 9.31 GiB of bits; before, numpy's "Unable to allocate" (or swapping)
    k = 10**5
    rappor = skldp.RAPPOR(epsilon=1.0, categories=np.arange(k), random_state=0).fit(np.arange(k))
    with (
        memory_limit(2**30),
        pytest.raises(
            MemoryLimitError,
            match=r"RAPPORChannel reports of 100000 rows x 100000 bits need 9.31 GiB",
        ) as info,
    ):
        rappor.transform(np.arange(k))
    assert "chunks of at most 10735 rows" in str(info.value)
    assert "sparse_output" not in str(info.value)  # RAPPOR draws every bit densely anyway
    with memory_limit(2**30):  # the advised chunk fits
        assert rappor.transform(np.arange(10735)).shape == (10735, k)


def test_urap_refusal_advises_sparse_output():
    k = 10**5
    urap = skldp.UtilityOptimizedRAPPOR(
        epsilon=1.0, categories=np.arange(k), sensitive=np.arange(10), random_state=0
    ).fit(np.arange(k))
    with memory_limit(2**30), pytest.raises(MemoryLimitError, match="sparse_output=True"):
        urap.transform(np.arange(k))
    urap.set_params(sparse_output=True)
    with memory_limit(2**30):
        out = urap.transform(np.arange(k))
    assert out.shape == (k, k)


def test_bernoulli_bits_refused():
    with memory_limit(10**6), pytest.raises(MemoryLimitError, match="1000 x 1001 random bits"):
        skldp.channels.bernoulli_bits(np.random.default_rng(0), 1000, np.full(1001, 0.5))


def test_posterior_refused():
    k, n = 1000, 1000
    rr = skldp.RandomizedResponse(epsilon=1.0, categories=np.arange(k), random_state=0)
    reports = rr.fit(np.arange(k)).transform(np.arange(n))
    est = skldp.EmpiricalEstimator().fit(reports)
    # 24 bytes per report and input: 24 MB > 10 MB
    with (
        memory_limit(10**7),
        pytest.raises(
            MemoryLimitError,
            match=r"posterior probabilities of 1000 reports over 1000 inputs.*at most 416 ",
        ),
    ):
        est.predict_proba(reports)
    with memory_limit(10**7):
        assert est.predict_proba(reports[:416]).shape == (416, k)


def test_likelihood_refused():
    ch = (
        skldp.RandomizedResponse(epsilon=1.0, categories=np.arange(100))
        .fit(np.arange(100))
        .channel_
    )
    with memory_limit(8000), pytest.raises(MemoryLimitError, match="call likelihood on chunks"):
        ch.likelihood(np.zeros(11, dtype=np.int64))


def test_dataset_samples_refused():
    with pytest.raises(MemoryLimitError, match=r"1000000000000 samples need 21.8 TiB"):
        make_zipf(10, n_samples=10**12, random_state=0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_em_lookup_codes_refused():
    # From 2**16 reports EM looks packed reports up by pairs of bytes: a copy of them as
    # 16-bit codes, sized before it is built.
    k = 64
    rappor = skldp.RAPPOR(epsilon=1.0, categories=np.arange(k), random_state=0).fit(np.arange(k))
    reports = rappor.transform(np.arange(k).repeat(1024))  # 65536 reports of 8 bytes
    # 8 bytes per report: 524288 > 2 * 10**5
    with (
        memory_limit(2 * 10**5),
        pytest.raises(
            MemoryLimitError,
            match=r"EM look-up codes of 65536 bit-packed reports of 8 bytes.*ProjectedEstimator",
        ),
    ):
        skldp.EMEstimator().fit(reports)
    assert skldp.EMEstimator(max_iter=5).fit(reports).distribution_.shape == (k,)

"""Sparse 0/1 reports: uRAP's ``sparse_output=True`` and CSR input to every bit-vector channel."""

import tracemalloc

import numpy as np
import pytest
import sklearn
from numpy.testing import assert_array_equal
from scipy import sparse
from sklearn.base import clone

import skldp.channels._bits as bits_module
from skldp import (
    EMEstimator,
    EmpiricalEstimator,
    ProjectedEstimator,
    UtilityOptimizedRAPPOR,
)
from skldp.channels import (
    OptimizedUnaryEncodingChannel,
    RAPPORChannel,
    UtilityOptimizedRAPPORChannel,
)
from skldp.channels._hashed_rappor import CohortRAPPORChannel
from tests.conftest import simplex_point


def _cohort_channel():
    buckets = np.random.default_rng(7).integers(0, 16, size=(10, 3, 2))
    return CohortRAPPORChannel(1.0, 16, buckets)


#: Every kind of bit-vector channel: plain RAPPOR (> 16 free bits: bit-packed EM statistics),
#: OUE, uRAP (decisive bits and a pattern histogram) and hashed RAPPOR with cohorts (its own
#: statistics, the generic packed EM statistics of the base class).
CHANNELS = [
    RAPPORChannel(1.0, 40),
    OptimizedUnaryEncodingChannel(2.0, 12),
    UtilityOptimizedRAPPORChannel(1.0, 40, [0, 3, 7, 21]),
    _cohort_channel(),
]


def _em_arrays(stats):
    """The arrays inside a channel's likelihood model, for exact comparison."""
    if isinstance(stats, bits_module.BitVectorModel):
        return [stats.packed.packed, stats.packed.sums]
    packed = [] if stats.packed is None else [stats.packed.packed, stats.packed.sums]
    hist = [] if stats.hist is None else [stats.hist]
    return [np.asarray(stats.n), stats.sums, stats.pinned, *hist, *packed]


@pytest.mark.parametrize("channel", CHANNELS, ids=lambda c: type(c).__name__)
def test_csr_reports_give_identical_statistics(channel, monkeypatch):
    # Seven rows per chunk, so the sparse path densifies many blocks (the last one short) and
    # merges their EM statistics: the result must be the dense one exactly.
    monkeypatch.setattr(bits_module, "_CHUNK_ENTRIES", 7 * max(channel.width, channel.n_inputs))
    rng = np.random.default_rng(0)
    p = simplex_point(channel.n_inputs)
    dense = channel.sample(rng.choice(channel.n_inputs, 600, p=p), rng)
    csr = sparse.csr_matrix(dense)
    assert_array_equal(channel.statistics(csr), channel.statistics(dense))
    for got, want in zip(
        _em_arrays(channel.em_model(csr)), _em_arrays(channel.em_model(dense)), strict=True
    ):
        assert_array_equal(got, want)
    q = simplex_point(channel.n_inputs, seed=3)
    if not isinstance(channel, CohortRAPPORChannel):
        assert_array_equal(channel.log_likelihood(csr, q), channel.log_likelihood(dense, q))
        assert_array_equal(channel.posterior(csr, q), channel.posterior(dense, q))
    # Other sparse formats and sparse arrays are read the same way.
    assert_array_equal(channel.statistics(sparse.coo_array(dense)), channel.statistics(dense))


@pytest.mark.parametrize("estimator", [EmpiricalEstimator(), ProjectedEstimator(), EMEstimator()])
def test_estimators_identical_on_dense_reports_and_their_csr_form(estimator):
    cats = list(range(30))
    urap = UtilityOptimizedRAPPOR(1.0, sensitive=[2, 5, 11], categories=cats, random_state=0)
    x = np.random.default_rng(1).choice(30, 3000, p=simplex_point(30))
    reports = urap.fit_transform(x)
    want = clone(estimator).fit(reports).distribution_
    got = clone(estimator).set_params(channel=urap).fit(sparse.csr_matrix(np.asarray(reports)))
    assert_array_equal(got.distribution_, want)


def test_sparse_output_has_the_channel_conditional_bit_marginals():
    # Group the reports by true input x and count each bit: for group x of size m_x, bit j's
    # count is Binomial(m_x, q_xj) with q_xj = forward(e_x)[j], the exact marginal. Every
    # count must lie within 6 standard deviations sqrt(m q (1 - q)) of m q; a bit with
    # q in {0, 1} (a non-sensitive bit of another input) must match exactly. 32 x 32 cells
    # at 6 sd: a false alarm has probability below 1e-5 under the normal approximation.
    k, sens = 32, [1, 4, 9, 20, 31]
    urap = UtilityOptimizedRAPPOR(
        1.0, sensitive=sens, categories=list(range(k)), sparse_output=True, random_state=3
    )
    x = np.repeat(np.arange(k), 400)
    reports = urap.fit_transform(x)
    assert sparse.isspmatrix_csr(reports) and reports.dtype == np.uint8
    assert reports.has_sorted_indices and np.all(reports.data == 1)
    ch = urap.channel_
    q = np.array([ch.forward(np.eye(k)[i]) for i in range(k)])  # (k inputs, k bits)
    group = sparse.csr_matrix((np.ones(x.size), (x, np.arange(x.size))), shape=(k, x.size))
    counts = (group @ reports).toarray()
    m = 400
    sd = np.sqrt(m * q * (1 - q))
    exact = sd == 0
    assert_array_equal(counts[exact], m * q[exact])
    assert np.all(np.abs(counts - m * q)[~exact] <= 6 * sd[~exact])
    # and the dense output of the same privatizer passes the same check
    dense_counts = group @ np.asarray(urap.set_params(sparse_output=False).transform(x), float)
    assert np.all(np.abs(dense_counts - m * q)[~exact] <= 6 * sd[~exact])
    assert_array_equal(dense_counts[exact], m * q[exact])


def test_sparse_output_memory_is_a_small_fraction_of_dense():
    # n = 1e5 reports of k = 4096 bits with 15 sensitive values: dense uint8 reports take
    # n k = 409.6 MB. The sparse draw holds the (n, 15) sensitive block (1.5 MB) and index
    # arrays of the ~6 ones per row at epsilon = 1 (15 d1 + 1 - d2 ~ 6; about 15 MB of
    # int64 temporaries); measured peak 18 MB. Bound: 1/10 of n k.
    k, n = 4096, 100_000
    sens = list(range(0, 15 * 273, 273))
    assert len(sens) == 15
    x = np.random.default_rng(0).integers(0, k, n)
    urap = UtilityOptimizedRAPPOR(
        1.0, sensitive=sens, categories=list(range(k)), sparse_output=True, random_state=0
    ).fit(x[:10])
    tracemalloc.start()
    try:
        reports = urap.transform(x)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        stats = urap.channel_.statistics(reports)
        _, stats_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reports.shape == (n, k)
    assert peak < n * k / 10
    # bit sums read the CSR indices (measured 6 MB, mostly one int64 per stored one)
    assert stats_peak < n * k / 40
    assert stats.sum() == reports.nnz


@pytest.mark.parametrize(
    "matrix, match",
    [
        (sparse.csr_matrix(np.array([[0, 2, 0], [1, 0, 0]])), r"bits in \{0, 1\}"),
        # a 1 stored twice at the same place is a 2
        (sparse.coo_matrix(([1, 1], ([0, 0], [1, 1])), shape=(2, 3)), r"bits in \{0, 1\}"),
        (sparse.csr_matrix(np.array([[0, -1, 0]])), r"bits in \{0, 1\}"),
        (sparse.csr_matrix(np.array([[0.5, 0, 0]])), "non-integer"),
        (sparse.csr_matrix(np.ones((2, 4))), "width 3"),
    ],
)
def test_sparse_reports_out_of_range_are_rejected(matrix, match):
    ch = UtilityOptimizedRAPPORChannel(1.0, 3, [0])
    with pytest.raises(ValueError, match=match):
        ch.statistics(matrix)


def test_sparse_check_keeps_the_callers_matrix_and_drops_stored_zeros():
    ch = RAPPORChannel(1.0, 3)
    m = sparse.csr_matrix((np.array([1, 0, 1]), np.array([2, 0, 1]), np.array([0, 2, 3])), (2, 3))
    before = (m.data.copy(), m.indices.copy(), m.indptr.copy())
    assert_array_equal(ch.statistics(m), [0, 1, 1])
    checked = ch.check_reports(m)
    assert checked.nnz == 2 and checked.dtype == np.uint8
    for a, b in zip((m.data, m.indices, m.indptr), before, strict=True):
        assert_array_equal(a, b)


def test_sparse_reports_without_channel_say_to_pass_it():
    urap = UtilityOptimizedRAPPOR(1.0, sensitive=[0], categories=[0, 1, 2], sparse_output=True)
    reports = urap.fit_transform([0, 1, 2, 2])
    with pytest.raises(ValueError, match="cannot carry the channel.*pass channel="):
        EmpiricalEstimator().fit(reports)
    est = EmpiricalEstimator(channel=urap).fit(reports)
    assert est.n_reports_ == 4


def test_sparse_output_params_clone_and_pandas():
    urap = UtilityOptimizedRAPPOR(1.0, sensitive=[0], categories=[0, 1, 2], sparse_output=True)
    assert urap.get_params()["sparse_output"] is True
    assert clone(urap).sparse_output is True
    with pytest.raises(ValueError, match="pandas output cannot hold"):
        clone(urap).set_output(transform="pandas").fit_transform([0, 1, 2])
    with (
        sklearn.config_context(transform_output="pandas"),
        pytest.raises(ValueError, match="set_output\\(transform='default'\\)"),
    ):
        clone(urap).fit_transform([0, 1, 2])
    with pytest.raises(TypeError, match="sparse_output must be True or False"):
        clone(urap).set_params(sparse_output="yes").fit([0, 1, 2])


def test_sparse_output_pandas_input_and_two_columns():
    import pandas as pd

    X = pd.DataFrame({"a": [0, 1, 2, 0], "b": [2, 2, 1, 0]}, index=[10, 11, 12, 13])
    urap = UtilityOptimizedRAPPOR(
        1.0, sensitive=[[0], [1]], categories=[[0, 1, 2]] * 2, sparse_output=True, random_state=0
    )
    reports = urap.fit_transform(X)
    assert sparse.isspmatrix_csr(reports) and reports.shape == (4, 6)
    # the estimator splits the columns of a two-column sparse report by the specs
    est = EmpiricalEstimator(channel=urap).fit(reports)
    assert len(est.distribution_) == 2

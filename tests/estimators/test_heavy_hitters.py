"""PrefixExtension, TreeHistogram and HeavyHitterEstimator (issue 30): fast checks.

Paper-scale claims (recall over 20 runs at n = 10^5, 32-bit ids at n = 10^6, server time)
are in benchmarks/bench_heavy_hitters.py with the figures in benchmarks/results/.
"""

import numpy as np
import pytest
from scipy.stats import binom, norm
from numpy.testing import assert_allclose, assert_array_equal

from skldp import (
    HeavyHitterEstimator,
    LocalHashing,
    PrefixExtension,
    TreeHistogram,
)
from skldp.channels._prefix import decode_values, encode_values
from skldp.privacy import PrivacyAccountant, verify


def _data(n, rng, heavy=((40_000, 0.3), (123, 0.2)), n_bits=16):
    x = rng.integers(0, 2**n_bits, n)
    start = 0
    for value, share in heavy:
        stop = start + int(share * n)
        x[start:stop] = value
        start = stop
    return rng.permutation(x)


@pytest.mark.parametrize("P", [PrefixExtension, TreeHistogram])
def test_finds_planted_values_and_nothing_else(P):
    rng = np.random.default_rng(0)
    x = _data(20_000, rng)
    reports = P(4.0, n_bits=16, random_state=1).fit_transform(x)
    est = HeavyHitterEstimator(threshold=5.0).fit(reports)
    assert est.heavy_hitters_ == [40_000, 123]
    # the estimates are within 4 standard errors of the truth
    assert np.all(np.abs(est.frequencies_ - [0.3, 0.2]) < 4 * est.standard_errors_)
    lo, hi = est.confidence_intervals_.T
    assert np.all(lo < est.frequencies_) and np.all(est.frequencies_ < hi)
    assert est.significant_.all() and est.threshold_ > 0
    assert "5 standard deviations" in est.threshold_rule_
    assert "Bonferroni" in HeavyHitterEstimator().fit(reports).threshold_rule_
    assert est.group_sizes_.sum() == est.n_reports_ == 20_000


def test_threshold_is_z_sigma_of_the_last_group():
    rng = np.random.default_rng(1)
    reports = PrefixExtension(4.0, n_bits=16, random_state=2).fit_transform(_data(8000, rng))
    ch = reports.specs[0].channel
    est = HeavyHitterEstimator(threshold=4.0).fit(reports)
    p, q = ch.keep, 1 / ch.n_buckets
    sigma = np.sqrt(q * (1 - q) / est.group_sizes_[-1]) / (p - q)
    assert_allclose(est.threshold_, 4.0 * sigma, rtol=1e-12)
    assert est.threshold_z_ == 4.0
    est = HeavyHitterEstimator(alpha=0.01).fit(reports)
    # Bonferroni with the exact null law of a count: Binomial(n_last, 1/g)
    n_last, n_cand = est.group_sizes_[-1], est.candidates_per_level_[-1]
    c = binom.isf(0.01 / n_cand, n_last, q) + 1
    assert binom.sf(c - 1, n_last, q) <= 0.01 / n_cand < binom.sf(c - 2, n_last, q)
    assert_allclose(est.threshold_, (c / n_last - q) / (p - q), rtol=1e-12)
    assert_allclose(est.threshold_z_, est.threshold_ / sigma, rtol=1e-12)
    # the binomial's upper tail is heavier than the normal's: the exact cut is higher
    assert 0 < est.threshold_z_ - norm.isf(0.01 / n_cand) < 1


def test_one_group_when_the_domain_fits_the_budget_equals_the_plain_oracle():
    # Sec. 7.5 check 4: 2^m <= C_max gives one group: the top-k of plain local hashing
    rng = np.random.default_rng(2)
    x = np.minimum(rng.geometric(0.2, 5000), 255)
    pem = PrefixExtension(2.0, n_bits=8, random_state=3)
    reports = pem.fit_transform(x)
    assert pem.channel_.lengths == (8,)
    est = HeavyHitterEstimator(top_k=5).fit(reports)
    numbers = pem.channel_.decode(np.asarray(reports))
    ch = pem.channel_
    counts = ch.support_counts(numbers, [0], 0, 8)[0]
    lh = LocalHashing(2.0, categories=[list(range(256))]).fit([[0]]).channel_
    assert lh.n_buckets == ch.n_buckets
    f = lh.unbiased(counts.astype(float), 5000)
    assert_array_equal(est.heavy_hitter_ids_, np.argsort(-f, kind="stable")[:5])
    assert_allclose(est.frequencies_, np.sort(f)[::-1][:5], rtol=1e-12)


def test_partial_fit_equals_fit_and_mismatch_is_refused():
    rng = np.random.default_rng(3)
    reports = TreeHistogram(4.0, n_bits=12, random_state=4).fit_transform(
        _data(6000, rng, heavy=((7, 0.3),), n_bits=12)
    )
    whole = HeavyHitterEstimator(threshold=5.0).fit(reports)
    part = HeavyHitterEstimator(threshold=5.0).partial_fit(reports[:2500])
    part.partial_fit(reports[2500:])
    assert part.heavy_hitters_ == whole.heavy_hitters_ == [7]
    assert_array_equal(part.frequencies_, whole.frequencies_)
    other = PrefixExtension(4.0, n_bits=12, random_state=0).fit_transform([1, 2])
    with pytest.raises(Exception, match="different mechanism"):
        part.partial_fit(other)


def test_plain_arrays_need_the_channel():
    pem = PrefixExtension(4.0, n_bits=12, random_state=0)
    reports = np.asarray(pem.fit_transform(np.full(3000, 77)))
    with pytest.raises(ValueError, match="channel"):
        HeavyHitterEstimator().fit(reports)
    assert HeavyHitterEstimator(channel=pem).fit(reports).heavy_hitters_ == [77]
    with pytest.raises(TypeError, match="PrefixHashingChannel"):
        HeavyHitterEstimator().fit(LocalHashing(1.0, categories=[[1, 2]]).fit_transform([[1], [2]]))


@pytest.mark.parametrize(
    ("value_type", "values", "n_bits"),
    [("str", ["cat", "dog", "x"], 32), ("bytes", [b"ab", b"\x01\x02\x03"], 24)],
)
def test_str_and_bytes_come_back_in_their_type(value_type, values, n_bits):
    ints = encode_values(np.array(values, dtype=object), n_bits, value_type)
    assert decode_values(ints, n_bits, value_type) == values
    rng = np.random.default_rng(5)
    x = np.array(values, dtype=object)[
        rng.choice(
            len(values),
            6000,
            p=[0.5, 0.3, 0.2][: len(values)] / np.sum([0.5, 0.3, 0.2][: len(values)]),
        )
    ]
    reports = PrefixExtension(
        4.0, n_bits=n_bits, value_type=value_type, random_state=6
    ).fit_transform(x)
    est = HeavyHitterEstimator(top_k=len(values)).fit(reports)
    assert sorted(est.heavy_hitters_) == sorted(values)


def test_encoding_rule_and_refusals():
    # strings are UTF-8, padded on the right, read big-endian: a prefix is a prefix of bytes
    assert encode_values(np.array(["a"], dtype=object), 16, "str")[0] == ord("a") << 8
    with pytest.raises(ValueError, match="does not fit in n_bits = 8"):
        encode_values(np.array([256]), 8, "int")
    with pytest.raises(ValueError, match="does not fit"):
        encode_values(np.array([-1]), 8, "int")
    with pytest.raises(ValueError, match="has 3 bytes; at most 2"):
        encode_values(np.array(["abc"], dtype=object), 16, "str")
    with pytest.raises(ValueError, match="zero byte"):
        encode_values(np.array([b"a\x00"], dtype=object), 16, "bytes")
    with pytest.raises(ValueError, match="reads integer ids"):
        encode_values(np.array([1.5], dtype=object), 8, "int")
    with pytest.raises(ValueError, match="multiple of 8"):
        PrefixExtension(1.0, n_bits=10, value_type="str").fit(["a"])
    with pytest.raises(ValueError, match="needs n_bits="):
        TreeHistogram(1.0).fit([1])
    with pytest.raises(ValueError, match="does not fit"):
        PrefixExtension(1.0, n_bits=4).fit([1]).transform([16])


def test_levels_of_pem_and_treehist():
    assert PrefixExtension(1.0, n_bits=10).fit([1]).channel_.lengths == (10,)
    ch = PrefixExtension(1.0, n_bits=32).fit([1]).channel_
    assert ch.lengths == (4, 9, 14, 19, 24, 29, 32) and set(ch.shares) == {1}
    ch = PrefixExtension(1.0, n_bits=20, step=2, start_bits=3, max_candidates=64).fit([1]).channel_
    assert ch.lengths == tuple(range(3, 20, 2)) + (20,)
    ch = TreeHistogram(1.0, n_bits=6, step=1, final_share=0.5).fit([1]).channel_
    assert ch.lengths == (1, 2, 3, 4, 5, 6) and ch.shares == (1, 1, 1, 1, 1, 5)
    assert_allclose(ch.group_probabilities[-1], 0.5)


@pytest.mark.parametrize("P", [PrefixExtension, TreeHistogram])
def test_privatizer_channel_verified_and_charged_once_per_person(P):
    priv = P(1.0, n_bits=3, step=1, n_buckets=3, max_candidates=4, random_state=0).fit([1])
    assert priv.channel_.width <= 16
    result = verify(priv.channel_, priv.privacy_)
    assert result.passed
    acc = PrivacyAccountant(budget=10.0)
    priv.set_params(accountant=acc)
    priv.transform(np.arange(8))
    assert acc.spent == pytest.approx(1.0)


def test_dask_collections_give_the_in_memory_answer():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(7)
    reports = PrefixExtension(4.0, n_bits=12, random_state=8).fit_transform(
        _data(6000, rng, heavy=((9, 0.3), (4000, 0.2)), n_bits=12)
    )
    lazy = da.from_array(reports, chunks=(1500, -1))
    est = HeavyHitterEstimator().fit(lazy)
    ref = HeavyHitterEstimator().fit(reports)
    assert est.heavy_hitters_ == ref.heavy_hitters_ == [9, 4000]
    assert_array_equal(est.frequencies_, ref.frequencies_)

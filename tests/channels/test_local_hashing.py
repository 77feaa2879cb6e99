"""Local hashing (OLH, BLH): the exact channel, the hash family, and Wang et al.'s variance."""

import math
from itertools import product

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp import EMEstimator, EmpiricalEstimator, LocalHashing, ProjectedEstimator
from skldp._hashing import (
    ONE_HOT_MAX_BUCKETS,
    input_digits,
    linear_hash,
    linear_hash_matches,
    linear_hash_support_counts,
    n_hash_digits,
)
from skldp.channels import Channel, LocalHashingChannel
from skldp.channels._local_hashing import default_buckets
from skldp.privacy import verify
from tests.channel_contract import ChannelContract, contract_fixture
from tests.conftest import simplex_point

# (epsilon, k, g) with at most 16 report bits, so that to_dense enumerates every report.
SMALL = [
    LocalHashingChannel(eps, k, g)
    for eps, k, g in [
        (1e-3, 2, 2),
        (1.0, 2, 2),
        (50.0, 2, 2),
        (1e-3, 3, 2),
        (1.0, 3, 4),
        (50.0, 3, 3),
        (1.0, 5, 3),
        (1.0, 17, 2),
        (1.0, 17, 4),
        (1e-3, 17, 2),
        (50.0, 4, 4),
    ]
]


channel = contract_fixture(SMALL)


class TestLocalHashingContract(ChannelContract):
    def test_likelihood_matches_dense_columns(self, channel):
        rng = np.random.default_rng(7)
        reports = channel.sample(rng.integers(0, channel.n_inputs, 40), rng)
        codes = reports.astype(np.int64) @ (1 << np.arange(channel.width))
        assert_allclose(channel.likelihood(reports), channel.to_dense()[:, codes].T, rtol=1e-12)

    def test_dense_channel_is_the_papers(self, channel):
        # Q(a, b, y | x) = g^-(m+1) (p if H_ab(x) = y else (1 - p)/(g - 1)), enumerated by hand.
        g, k, m = channel.n_buckets, channel.n_inputs, channel.n_digits
        e = math.exp(channel.epsilon)
        p_keep, p_other = channel.keep, channel.other
        if channel.epsilon <= 1:  # at eps = 50 the sampled k-RR rounds toward privacy (1e-17)
            assert_allclose([p_keep, p_other], [e / (e + g - 1), 1 / (e + g - 1)], rtol=1e-12)
        Q = channel.to_dense()
        weights = 1 << (np.arange(m + 2) * channel.digit_bits)
        expected = np.zeros_like(Q)
        for numbers in product(range(g), repeat=m + 2):
            col = int(np.dot(numbers, weights))
            a, b, y = np.array(numbers[:m]), numbers[m], numbers[m + 1]
            for x in range(k):
                h = (int(a @ input_digits(k)[x]) + b) % g
                expected[x, col] = (p_keep if h == y else p_other) / g ** (m + 1)
        assert_allclose(Q, expected, rtol=1e-9, atol=0)


def test_family_is_exactly_pairwise_independent():
    # Over all seeds (a, b) in Z_g^(m+1), (H(x), H(x')) is uniform on Z_g^2 for x != x',
    # also for composite g (4, 6), where a linear family on base-g digits would not be.
    for k, g in [(5, 4), (6, 6), (4, 3)]:
        m = n_hash_digits(k)
        seeds = np.array(list(product(range(g), repeat=m + 1)))
        table = (seeds[:, :m] @ input_digits(k).T + seeds[:, m : m + 1]) % g  # (seeds, k)
        for x in range(k):
            for x2 in range(x + 1, k):
                pairs = np.bincount(table[:, x] * g + table[:, x2], minlength=g * g)
                assert_array_equal(pairs, len(seeds) // (g * g))


def test_hash_values_are_pinned():
    # The hash family is part of the report format: these literal values must never change.
    coefs = np.array([[1, 2, 3], [0, 3, 1], [2, 2, 2]])
    offsets = np.array([4, 0, 1])
    x = np.array([5, 6, 7])
    assert_array_equal(linear_hash(coefs, offsets, x, 7), [1, 4, 0])
    assert_array_equal(linear_hash(coefs, offsets, x, 4), [0, 0, 3])
    ch = LocalHashingChannel(1.0, 10, 4)
    report = ch.encode(np.array([[1, 2, 3, 0, 2, 1]]))
    assert_array_equal(report[0], [1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0])
    assert_array_equal(ch.hash_table(report)[0], [2, 3, 0, 1, 1, 2, 3, 0, 2, 3])
    assert_array_equal(ch.support(report)[0], [0, 0, 0, 1, 1, 0, 0, 0, 0, 0])


def test_support_matches_naive_hash():
    rng = np.random.default_rng(0)
    for k, g in [(37, 5), (1000, 4), (2, 2), (300, 257)]:
        m = n_hash_digits(k)
        a, b, y = rng.integers(0, g, (60, m)), rng.integers(0, g, 60), rng.integers(0, g, 60)
        naive = np.array(
            [[linear_hash(a[[i]], b[[i]], [x], g)[0] == y[i] for x in range(k)] for i in range(60)]
        )
        assert_array_equal(linear_hash_matches(a, b, y, k, g), naive)


@pytest.mark.parametrize("g", [2, 3, ONE_HOT_MAX_BUCKETS, ONE_HOT_MAX_BUCKETS + 1, 64, 65])
def test_support_counts_of_both_paths_are_the_summed_matches(g):
    # up to ONE_HOT_MAX_BUCKETS a product of one-hot tables, above it summed comparisons
    rng = np.random.default_rng(g)
    k, n = 1000, 500
    m = n_hash_digits(k)
    a, b, y = rng.integers(0, g, (n, m)), rng.integers(0, g, n), rng.integers(0, g, n)
    expected = linear_hash_matches(a, b, y, k, g).sum(axis=0)
    counts = linear_hash_support_counts(a, b, y, k, g)
    assert counts.dtype == np.int64
    assert_array_equal(counts, expected)
    assert counts.sum() > 0


def test_default_buckets():
    assert default_buckets(1.0, 1000) == 4  # round(2.718) + 1
    assert default_buckets(math.log(3.5), 1000) == 5  # half up
    assert default_buckets(0.01, 1000) == 2
    assert default_buckets(1.0, 3) == 3  # capped at k
    assert default_buckets(50.0, 1000) == 1000
    assert LocalHashing(1.0, categories=list(range(10))).fit([[0]]).channel_.n_buckets == 4


def test_first_variance_term_at_the_optimum():
    # At g = e^eps + 1 (eps = ln 3: g = 4) the variance at f = 0 is 4 e^eps / (n (e^eps - 1)^2).
    eps, n, k = math.log(3.0), 1000, 50
    ch = LocalHashingChannel(eps, k, 4)
    p = np.zeros(k)
    p[0] = 1.0
    e = math.exp(eps)
    assert_allclose(ch.variance(p, n)[1:], 4 * e / (n * (e - 1) ** 2), rtol=1e-12)


def _wang_variance(eps, g, f, n):
    e = math.exp(eps)
    p, q = e / (e + g - 1), 1.0 / g
    return q * (1 - q) / (n * (p - q) ** 2) + f * (1 - p - q) / (n * (p - q))


def test_variance_is_wang_plus_sampling_term():
    ch = LocalHashingChannel(1.0, 20, 4)
    f = simplex_point(20)
    assert_allclose(
        ch.variance(f, 500), _wang_variance(1.0, 4, f, 500) + f * (1 - f) / 500, rtol=1e-12
    )


def test_olh_error_at_k1000_matches_wang():
    # Fixed inputs (n f(x) holders of each x), fresh privatization per repetition: the summed
    # squared error around f has mean sum_x Var_Wang(x), and its standard deviation is at most
    # sqrt(2 sum Var^2) per repetition (a sum of squares of near-Gaussian errors); 5 of them.
    k, n, eps, reps = 1000, 20_000, 1.0, 4
    rng = np.random.default_rng(11)
    x = np.sort(rng.zipf(1.3, n) % k)
    f = np.bincount(x, minlength=k) / n
    ch = LocalHashingChannel(eps, k, default_buckets(eps, k))
    var = _wang_variance(eps, ch.n_buckets, f, n)
    sq = [np.sum((ch.unbiased(ch.statistics(ch.sample(x, rng)), n) - f) ** 2) for _ in range(reps)]
    tol = 5 * math.sqrt(2 * np.sum(var**2) / reps)
    assert abs(np.mean(sq) - var.sum()) <= tol
    # a planted wrong formula (BLH's variance) is outside the tolerance
    assert abs(np.mean(sq) - _wang_variance(eps, 2, f, n).sum()) > tol


def test_empirical_l2_risk_matches_exact_variance():
    # Inputs drawn from p each time: E ||p_hat - p||^2 = sum variance(p, n).
    k, n, reps = 64, 5000, 30
    p = simplex_point(k)
    ch = LocalHashingChannel(1.0, k, 4)
    rng = np.random.default_rng(3)
    sq = []
    for _ in range(reps):
        x = rng.choice(k, size=n, p=p)
        sq.append(np.sum((ch.unbiased(ch.statistics(ch.sample(x, rng)), n) - p) ** 2))
    var = ch.variance(p, n)
    tol = 5 * math.sqrt(2 * np.sum(var**2) / reps)
    assert abs(np.mean(sq) - var.sum()) <= tol


@pytest.mark.parametrize(
    "estimator",
    [
        EmpiricalEstimator(),
        ProjectedEstimator(),
        ProjectedEstimator(method="threshold"),
        EMEstimator(),
    ],
    ids=repr,
)
def test_every_estimator_recovers_the_distribution(estimator):
    k, n = 12, 20_000
    p = simplex_point(k)
    rng = np.random.default_rng(5)
    x = rng.choice(k, size=n, p=p)
    lh = LocalHashing(epsilon=2.0, categories=list(range(k)), random_state=1)
    reports = lh.fit_transform(x.reshape(-1, 1))
    est = estimator.fit(reports).distribution_
    sd = np.sqrt(lh.channel_.variance(p, n))
    f = np.bincount(x, minlength=k) / n
    assert np.all(np.abs(est - f) <= 6 * sd + 1e-12)


def test_em_log_likelihood_is_monotone():
    ch = LocalHashingChannel(1.0, 9, 3)
    rng = np.random.default_rng(2)
    reports = ch.sample(rng.choice(9, 3000, p=simplex_point(9)), rng)
    model = ch.em_model(reports)
    assert_array_equal(model.statistics, ch.statistics(reports))
    p, last = np.full(9, 1 / 9), -np.inf
    for _ in range(30):
        g, ll = model.multipliers(p)
        p = p * g / np.dot(p, g)
        assert ll >= last - 1e-12
        last = ll


def test_chunked_statistics_equal_one_pass():
    ch = LocalHashingChannel(1.0, 3000, 4)  # _rows_per_chunk is 699: several chunks
    rng = np.random.default_rng(0)
    reports = ch.sample(rng.integers(0, 3000, 2000), rng)
    assert_array_equal(ch.statistics(reports), ch.support(reports).sum(axis=0))


def test_bad_reports_and_parameters():
    ch = LocalHashingChannel(1.0, 10, 3)  # 2 bits per number, 3 = 0b11 is not a number of Z_3
    bad = np.zeros((1, ch.width), dtype=np.uint8)
    bad[0, :2] = 1
    with pytest.raises(ValueError, match=r"outside \[0, 3\)"):
        ch.statistics(bad)
    with pytest.raises(ValueError, match="n_buckets must be an integer >= 2; got 1"):
        LocalHashingChannel(1.0, 10, 1)
    with pytest.raises(
        ValueError, match=r"n_buckets must be None or an integer in \[2, 2147483648\]"
    ):
        LocalHashing(n_buckets=2**32, categories=[0, 1]).fit([[0]])
    with pytest.raises(TypeError, match="n_buckets must be None or an integer.*; got 2.5"):
        LocalHashing(n_buckets=2.5, categories=[0, 1]).fit([[0]])


def test_privacy_at_olh_sizes_without_dense_matrix():
    # Every likelihood ratio of a report is r = keep / other <= e^eps, whatever the seed.
    for eps in (0.1, 1.0, 5.0):
        ch = LocalHashingChannel(eps, 1000, default_buckets(eps, 1000))
        assert ch.keep <= math.exp(eps) * ch.other
    assert verify(SMALL[4], SMALL[4].guarantee()).passed


def test_em_multipliers_match_the_exact_likelihood():
    # p'_x = p_x mean_i L_ix / (L_i . p), with L the exact likelihood of each report.
    ch = LocalHashingChannel(1.0, 11, 3)
    rng = np.random.default_rng(2)
    reports = ch.sample(rng.choice(11, 700, p=simplex_point(11)), rng)
    p = simplex_point(11)
    L = ch.likelihood(reports)
    t = L @ p
    expected = p * (L / t[:, None]).sum(axis=0)
    g, ll = ch.em_model(reports).multipliers(p)
    assert_allclose(p * g, expected / expected.sum(), rtol=1e-10)
    assert_allclose(ll, np.mean(np.log(t)), rtol=1e-12)


@pytest.mark.parametrize("ch", [LocalHashingChannel(1.0, 6, 3), LocalHashingChannel(2.0, 9, 2)])
def test_zero_frequency_variance_closed_form_matches_generic(ch):
    p = simplex_point(ch.n_inputs)
    for prior in (None, p):
        assert_allclose(
            ch.zero_frequency_variance(100, prior),
            Channel._zero_frequency_variance(ch, 100, prior),
            rtol=1e-10,
        )

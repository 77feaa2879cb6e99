"""Subset selection: the exact channel, its closed forms, the optimal d, and its sampler."""

import math
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp import EMEstimator, EmpiricalEstimator, ProjectedEstimator, SubsetSelection
from skldp.channels import Channel, RandomizedResponseChannel, SubsetSelectionChannel
from skldp.channels._subset_selection import optimal_subset_size
from tests.channel_contract import ChannelContract, contract_fixture
from tests.conftest import simplex_point

SMALL = [
    SubsetSelectionChannel(eps, k, d)
    for eps in (1e-3, 1.0, 50.0)
    for k, d in [(2, 1), (3, 1), (3, 2), (6, 2), (6, 4), (9, 3)]
]


channel = contract_fixture(SMALL)


class TestSubsetSelectionContract(ChannelContract):
    def test_dense_channel_is_the_papers(self, channel):
        # Q(S | x) = e^eps / Z if x in S, 1 / Z otherwise, Z = C(k-1, d-1) e^eps + C(k-1, d),
        # for the d-subsets; zero for every other bit vector.
        k, d, eps = channel.n_inputs, channel.subset_size, channel.epsilon
        Q = channel.to_dense()
        # the ratio as sampled (p_s rounded to the grid, toward privacy)
        r = channel.p_in * (k - d) / ((1 - channel.p_in) * d)
        if eps <= 1:
            assert_allclose(r, math.exp(eps), rtol=1e-12)
        Z = math.comb(k - 1, d - 1) * r + math.comb(k - 1, d)
        expected = np.zeros_like(Q)
        for S in combinations(range(k), d):
            col = sum(1 << j for j in S)
            for x in range(k):
                expected[x, col] = (r if x in S else 1.0) / Z
        assert_allclose(Q, expected, rtol=1e-12, atol=0)


def test_probabilities_match_the_spec_exactly():
    # p_s = d e / (d e + k - d); q_s = (d e (d - 1)/(k - 1) + (k - d) d/(k - 1)) / (d e + k - d)
    for k, d in [(10, 3), (1000, 269), (7, 6)]:
        ch = SubsetSelectionChannel(1.0, k, d)
        e = math.exp(1.0)
        p = d * e / (d * e + k - d)
        q = (d * e * (d - 1) / (k - 1) + (k - d) * d / (k - 1)) / (d * e + k - d)
        assert_allclose([ch.p_in, ch.q_in], [p, q], rtol=1e-14)
        # the sampled ratio never exceeds e^eps, in exact arithmetic
        assert Fraction(ch.p_in) * (k - d) <= Fraction(math.exp(1.0)) * (1 - Fraction(ch.p_in)) * d


def test_d1_is_randomized_response():
    for eps, k in [(0.5, 4), (1.0, 7), (3.0, 3)]:
        ss = SubsetSelectionChannel(eps, k, 1)
        rr = RandomizedResponseChannel(eps, k)
        Q = ss.to_dense()
        singletons = [1 << j for j in range(k)]
        assert_allclose(Q[:, singletons], rr.to_dense(), rtol=1e-12)
        p = simplex_point(k)
        assert_allclose(ss.variance(p, 100), rr.variance(p, 100), rtol=1e-12)


def test_optimal_d_beats_krr_at_k1000_eps1():
    k, eps, n = 1000, 1.0, 10_000
    d = optimal_subset_size(eps, k)
    assert abs(d - k / (math.exp(eps) + 1)) <= 2  # about k / (e^eps + 1) = 269
    p = np.full(k, 1 / k)
    ss = SubsetSelectionChannel(eps, k, d).variance(p, n).sum()
    rr = RandomizedResponseChannel(eps, k).variance(p, n).sum()
    assert ss < rr / 50
    # and it is the minimizer over d
    var = [
        SubsetSelectionChannel(eps, k, dd).variance(np.zeros(k) + 1 / k, n)[0]
        for dd in (d - 1, d, d + 1)
    ]
    assert var[1] <= min(var[0], var[2]) * (1 + 1e-3)


def test_optimal_d_small_k():
    assert optimal_subset_size(5.0, 10) == 1  # large epsilon: k-RR
    assert optimal_subset_size(1e-3, 10) == 5  # tiny epsilon: about k / 2
    # k = 10, eps = 1: k / (e + 1) = 2.69, but the exact variance is smallest at d = 2
    var = [SubsetSelectionChannel(1.0, 10, d).variance(np.eye(10)[0], 1)[1] for d in range(1, 10)]
    assert int(np.argmin(var)) + 1 == 2
    assert SubsetSelection(categories=list(range(10))).fit([[0]]).channel_.subset_size == 2


@pytest.mark.parametrize("k,d", [(5, 1), (5, 2), (5, 3), (5, 4), (6, 3), (2, 1)])
def test_sampler_matches_dense_channel(k, d):
    # Each subset's frequency among n draws from input 1 within 5 standard errors of Q.
    ch = SubsetSelectionChannel(1.0, k, d)
    n = 100_000
    reports = ch.sample(np.full(n, 1), np.random.default_rng(k * 10 + d))
    assert_array_equal(reports.sum(axis=1), d)
    codes = reports.astype(np.int64) @ (1 << np.arange(k))
    freq = np.bincount(codes, minlength=2**k) / n
    Q = ch.to_dense()[1]
    assert np.all(np.abs(freq - Q) <= 5 * np.sqrt(Q * (1 - Q) / n) + 1e-12)


def test_sparse_reports_equal_dense_reports():
    ch = SubsetSelectionChannel(1.0, 50, 13)
    x = np.random.default_rng(0).integers(0, 50, 3000)
    dense = ch.sample(x, np.random.default_rng(4))
    sp = ch.sample_sparse(x, np.random.default_rng(4))
    assert_array_equal(sp.toarray(), dense)
    assert_array_equal(ch.statistics(sp), ch.statistics(dense))


def test_empirical_l2_risk_matches_exact_variance():
    k, n, reps = 40, 4000, 40
    p = simplex_point(k)
    ch = SubsetSelectionChannel(1.0, k, optimal_subset_size(1.0, k))
    rng = np.random.default_rng(8)
    sq = []
    for _ in range(reps):
        x = rng.choice(k, size=n, p=p)
        sq.append(np.sum((ch.unbiased(ch.statistics(ch.sample(x, rng)), n) - p) ** 2))
    var = ch.variance(p, n)
    tol = 5 * math.sqrt(2 * np.sum(var**2) / reps)
    assert abs(np.mean(sq) - var.sum()) <= tol
    # a planted wrong channel (d = 1, k-RR's variance) is outside the tolerance
    wrong = SubsetSelectionChannel(1.0, k, 1).variance(p, n).sum()
    assert abs(np.mean(sq) - wrong) > tol


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
@pytest.mark.parametrize("sparse_output", [False, True])
def test_every_estimator_recovers_the_distribution(estimator, sparse_output):
    k, n = 12, 20_000
    p = simplex_point(k)
    x = np.random.default_rng(5).choice(k, size=n, p=p)
    ss = SubsetSelection(
        epsilon=2.0, categories=list(range(k)), random_state=1, sparse_output=sparse_output
    )
    reports = ss.fit_transform(x.reshape(-1, 1))
    if sparse_output:
        estimator.set_params(channel=ss)
    est = estimator.fit(reports).distribution_
    sd = np.sqrt(ss.channel_.variance(p, n))
    f = np.bincount(x, minlength=k) / n
    assert np.all(np.abs(est - f) <= 6 * sd + 1e-12)


def test_em_multipliers_match_generic_bit_vector_step():
    ch = SubsetSelectionChannel(1.0, 9, 3)
    rng = np.random.default_rng(2)
    reports = ch.sample(rng.choice(9, 500, p=simplex_point(9)), rng)
    model = ch.em_model(reports)
    p = simplex_point(9)
    L = ch.likelihood(reports)
    t = L @ p
    expected = p * ((L / t[:, None]).sum(axis=0)) / 500
    g, ll = model.multipliers(p)
    assert_allclose(p * g, expected / expected.sum(), rtol=1e-10)
    assert_allclose(ll, np.mean(np.log(t)), rtol=1e-12)


def test_bad_inputs():
    ch = SubsetSelectionChannel(1.0, 6, 2)
    with pytest.raises(ValueError, match="exactly 2 categories; got 1 rows of another size"):
        ch.statistics(np.array([[1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0]]))
    with pytest.raises(ValueError, match=r"subset_size must lie in \[1, k - 1\] = \[1, 5\]; got 6"):
        SubsetSelectionChannel(1.0, 6, 6)
    with pytest.raises(ValueError, match="subset_size must lie in"):
        SubsetSelection(subset_size=3, categories=[0, 1, 2]).fit([[0]])
    with pytest.raises(TypeError, match="sparse_output must be True or False"):
        SubsetSelection(sparse_output="yes", categories=[0, 1, 2]).fit([[0]])


@pytest.mark.parametrize(
    "ch", [SubsetSelectionChannel(1.0, 6, 2), SubsetSelectionChannel(0.5, 9, 5)]
)
def test_zero_frequency_variance_closed_form_matches_generic(ch):
    p = simplex_point(ch.n_inputs)
    for prior in (None, p):
        assert_allclose(
            ch.zero_frequency_variance(100, prior),
            Channel._zero_frequency_variance(ch, 100, prior),
            rtol=1e-10,
        )

"""Hadamard response (the LDP baseline): contract, sampler, estimator."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.linalg import hadamard

from skldp.channels import HadamardResponseChannel
from skldp.privacy import LDP, verify
from tests.channel_contract import ChannelContract, contract_fixture
from tests.conftest import simplex_point

SMALL = [HadamardResponseChannel(eps, k) for k in (2, 3, 17) for eps in (1e-3, 1.0, 50.0)]


channel = contract_fixture(SMALL)


class TestHadamardResponseContract(ChannelContract):
    pass


@pytest.mark.parametrize("k", [2, 3, 7, 8, 17])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_dense_matches_definition(k, eps):
    ch = HadamardResponseChannel(eps, k)
    K = 2 ** math.ceil(math.log2(k + 1))
    assert ch.n_outputs == K
    H = hadamard(K)[1 : k + 1]  # input x uses row x + 1
    e = math.exp(eps)
    expected = np.where(H == 1, 2 * e / (K * (1 + e)), 2 / (K * (1 + e)))
    assert_allclose(ch.to_dense(), expected, rtol=1e-14)


@pytest.mark.parametrize("eps", [1e-3, 1.0, 7.0])
def test_privacy_tight(eps):
    ch = HadamardResponseChannel(eps, 12)
    assert verify(ch, LDP(eps)).passed
    assert not verify(ch, LDP(0.99 * eps)).passed


def test_unbiased_is_scaled_fwht_of_frequencies():
    ch = HadamardResponseChannel(1.0, 11)
    counts = np.random.default_rng(0).integers(0, 50, ch.n_outputs).astype(float)
    n = counts.sum()
    cp = (math.e + 1) / (math.e - 1)
    expected = cp * (hadamard(16) @ (counts / n))[1:12]
    assert_allclose(ch.unbiased(counts, n), expected, rtol=1e-12)


def test_sampler_hits_each_output_with_its_probability(seed):
    # One input, many reports: every output frequency within 5 standard errors.
    ch = HadamardResponseChannel(1.0, 6)
    n = 80_000
    for x in range(6):
        y = ch.sample(np.full(n, x), np.random.default_rng(seed + x))
        q = ch.to_dense()[x]
        freq = np.bincount(y, minlength=ch.n_outputs)
        assert np.all(np.abs(freq - n * q) <= 5 * np.sqrt(n * q * (1 - q)))
    # A planted wrong channel (the neighbouring row) fails the same check.
    y = ch.sample(np.full(n, 0), np.random.default_rng(seed))
    wrong = ch.to_dense()[1]
    freq = np.bincount(y, minlength=ch.n_outputs)
    assert not np.all(np.abs(freq - n * wrong) <= 5 * np.sqrt(n * wrong * (1 - wrong)))


def test_large_domain_works_without_dense_matrices(seed):
    k = 43_750
    ch = HadamardResponseChannel(1.0, k)
    assert ch.n_outputs == 65_536 and ch.bits_per_report == 16
    p = simplex_point(k)
    rng = np.random.default_rng(seed)
    x = rng.choice(k, size=200_000, p=p)
    est = ch.unbiased(ch.statistics(ch.sample(x, rng)), x.shape[0])
    # Sum of squared errors within 20% of its exact expectation (n * sum Var, concentrated).
    empirical = np.bincount(x, minlength=k) / x.shape[0]
    err = np.sum((est - empirical) ** 2)
    expected = np.sum(ch.variance(empirical, x.shape[0]))
    assert abs(err / expected - 1) < 0.2


def test_reports_from_another_channel_are_rejected():
    ch = HadamardResponseChannel(1.0, 5)
    with pytest.raises(ValueError, match="different mechanism"):
        ch.statistics(np.array([0, 8]))


@pytest.mark.parametrize("k", [1, 0])
def test_too_small_domain(k):
    with pytest.raises(ValueError, match="n_inputs"):
        HadamardResponseChannel(1.0, k)


def test_equality_and_repr():
    assert HadamardResponseChannel(1.0, 5) == HadamardResponseChannel(1.0, 5)
    assert HadamardResponseChannel(1.0, 5) != HadamardResponseChannel(1.0, 6)
    assert repr(HadamardResponseChannel(1.0, 5)) == "HadamardResponseChannel(epsilon=1, n_inputs=5)"
    assert_array_equal(
        HadamardResponseChannel(1.0, 5).guarantee().epsilon_matrix(2), [[0, 1], [1, 0]]
    )

"""High-low Hadamard response: contract over random sensitive sets, layout, estimator."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.linalg import hadamard

from skldp.channels import HadamardResponseChannel, HighLowHadamardResponseChannel
from skldp.privacy import HighLowLDP, tight_epsilon_matrix, verify
from tests.channel_contract import ChannelContract, contract_fixture
from tests.conftest import simplex_point


def random_sensitive(k, s, seed):
    return np.sort(np.random.default_rng(seed).choice(k, size=s, replace=False))


SETS = [
    (4, [2]),
    (17, random_sensitive(17, 5, 1)),
    (9, random_sensitive(9, 3, 2)),
    (5, [0, 1, 2, 3, 4]),
    (6, []),
]
SMALL = [HighLowHadamardResponseChannel(eps, k, A) for k, A in SETS for eps in (1e-3, 1.0, 50.0)]


channel = contract_fixture(SMALL)


class TestHighLowHadamardResponseContract(ChannelContract):
    pass


def test_layout_and_dense_form():
    k, A = 9, [1, 4, 7]
    ch = HighLowHadamardResponseChannel(1.0, k, A)
    assert ch.hadamard_size == 4 and ch.n_outputs == 4 + 6
    Q = ch.to_dense()
    e = math.e
    # The i-th sensitive input uses row i + 1 of H_4 (ambiguity 1 of the spec).
    sens = np.where(hadamard(4)[1:4] == 1, 2 * e / (4 * (e + 1)), 2 / (4 * (e + 1)))
    assert_allclose(Q[A, :4], sens, rtol=1e-14)
    assert np.all(Q[A, 4:] == 0)
    public = [0, 2, 3, 5, 6, 8]
    assert_allclose(Q[public, :4], 2 / (4 * (e + 1)), rtol=1e-14)
    assert_allclose(Q[public, 4:], np.eye(6) * (e - 1) / (e + 1), rtol=1e-14, atol=0)


def test_tight_matrix_is_epsilon_on_sensitive_rows_and_inf_elsewhere():
    k = 12
    A = random_sensitive(k, 4, 3)
    ch = HighLowHadamardResponseChannel(1.0, k, A)
    E = tight_epsilon_matrix(ch)
    off = ~np.eye(k, dtype=bool)
    sens = np.isin(np.arange(k), A)
    assert_allclose(E[sens][off[sens]], 1.0, rtol=1e-12)
    assert np.all(np.isinf(E[~sens][off[~sens]]))
    assert verify(ch, HighLowLDP(A, 1.0)).passed
    assert not verify(ch, HighLowLDP(A, 0.99)).passed


def test_all_sensitive_is_hadamard_response():
    k = 7
    ch = HighLowHadamardResponseChannel(1.0, k, np.arange(k))
    assert_array_equal(ch.to_dense(), HadamardResponseChannel(1.0, k).to_dense())


def test_public_estimates_are_never_negative(seed):
    ch = HighLowHadamardResponseChannel(1.0, 30, [0, 1])
    rng = np.random.default_rng(seed)
    y = ch.sample(rng.integers(0, 30, 300), rng)
    est = ch.unbiased(ch.statistics(y), 300)
    assert np.all(est[2:] >= 0)


def test_monte_carlo_estimates_match_exact_mean_and_variance(seed):
    k = 12
    ch = HighLowHadamardResponseChannel(1.0, k, [0, 3, 5, 8, 9])
    p = simplex_point(k)
    n, reps = 2000, 3000
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, ch.forward(p), size=reps)
    est = np.array([ch.unbiased(c, n) for c in counts])
    v = ch.variance(p, n)
    assert np.all(np.abs(est.mean(0) - p) <= 5 * np.sqrt(v / reps))
    assert np.all(np.abs(est.var(0, ddof=1) / v - 1) <= 5 * math.sqrt(2 / reps))


@pytest.mark.parametrize(
    "A,match", [([0, 0], "distinct"), ([5], r"\[0, 5\)"), ([-1], "lie in"), ([0.5], "integer")]
)
def test_bad_sensitive_sets(A, match):
    with pytest.raises(ValueError, match=match):
        HighLowHadamardResponseChannel(1.0, 5, A)


def test_boolean_mask_and_guarantee():
    mask = np.array([True, False, True, False])
    ch = HighLowHadamardResponseChannel(1.0, 4, mask)
    assert_array_equal(ch.sensitive, [0, 2])
    assert ch.guarantee() == HighLowLDP([0, 2], 1.0)
    assert ch == HighLowHadamardResponseChannel(1.0, 4, [2, 0])

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skldp.channels import RandomizedResponseChannel
from skldp.privacy import LDP, tight_epsilon_matrix, verify
from tests.channel_contract import ChannelContract, contract_fixture

SMALL = [RandomizedResponseChannel(eps, k) for k in (2, 3, 17) for eps in (1e-3, 1.0, 50.0)]


channel = contract_fixture(SMALL)


class TestRandomizedResponseContract(ChannelContract):
    pass


@pytest.mark.parametrize("k", [2, 3, 17])
@pytest.mark.parametrize("eps", [1e-3, 0.5, 1.0, 4.0])
def test_dense_matches_paper_formula(k, eps):
    Q = RandomizedResponseChannel(eps, k).to_dense()
    e = math.exp(eps)
    expected = np.full((k, k), 1 / (e + k - 1))
    np.fill_diagonal(expected, e / (e + k - 1))
    assert_allclose(Q, expected, rtol=1e-14, atol=2**-53)


@pytest.mark.parametrize("k", [2, 3, 17])
@pytest.mark.parametrize("eps", [1e-3, 1.0, 7.0])
def test_privacy_tight_at_epsilon_and_fails_below(k, eps):
    ch = RandomizedResponseChannel(eps, k)
    assert verify(ch, LDP(eps)).passed
    E = tight_epsilon_matrix(ch)
    off = E[~np.eye(k, dtype=bool)]
    assert_allclose(off, eps, rtol=1e-9)
    assert not verify(ch, LDP(0.99 * eps)).passed


@pytest.mark.parametrize("eps", [1e-6, 1.0, 50.0, 700.0])
@pytest.mark.parametrize("k", [2, 1000, 10**6])
def test_floating_point_ratio_never_exceeds_bound(k, eps):
    ch = RandomizedResponseChannel(eps, k)
    assert ch.other > 0
    assert ch.keep <= math.exp(eps) * ch.other
    assert ch.other <= ch.keep
    # The sampling threshold (report the truth outright) lies on the grid of uniform draws.
    assert ch.truth / 2.0**-53 == math.floor(ch.truth / 2.0**-53)


def test_binary_is_warner():
    eps = 0.8
    e = math.exp(eps)
    Q = RandomizedResponseChannel(eps, 2).to_dense()
    assert_allclose(Q, np.array([[e, 1], [1, e]]) / (1 + e), rtol=1e-14)


def test_closed_form_inverse_equals_matrix_inverse():
    k, eps = 6, 1.3
    ch = RandomizedResponseChannel(eps, k)
    e = math.exp(eps)
    closed = ((k - 1 + e) * np.eye(k) - np.ones((k, k))) / (e - 1)
    assert_allclose(closed, np.linalg.inv(ch.to_dense()), rtol=1e-10)


def test_out_of_range_reports_are_rejected():
    ch = RandomizedResponseChannel(1.0, 4)
    with pytest.raises(ValueError, match="different mechanism"):
        ch.statistics(np.array([0, 1, 4]))
    with pytest.raises(ValueError, match="integers"):
        ch.statistics(np.array([0.5, 1.0]))


def test_sample_rejects_bad_indices():
    ch = RandomizedResponseChannel(1.0, 4)
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        ch.sample(np.array([0, 5]), np.random.default_rng(0))

import math
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp.channels import BinaryRandomizedResponseChannel
from skldp.privacy import BinaryContextAwareLDP, tight_epsilon_matrix, verify
from tests.channel_contract import ChannelContract, contract_fixture

INF = math.inf
BUDGETS = [1e-3, 1.0, 50.0, INF]
SMALL = [BinaryRandomizedResponseChannel(a, b) for a in BUDGETS for b in BUDGETS]


channel = contract_fixture(SMALL)


class TestBinaryRandomizedResponseContract(ChannelContract):
    pass


def _paper_form(e01, e10):
    # Eq. (9) of Acharya et al. (ICML 2020), rows = inputs, columns = outputs.
    a, b = math.exp(e01), math.exp(e10)
    return np.array([[b - 1, 1 - 1 / a], [(b - 1) / a, b * (1 - 1 / a)]]) / (b - 1 / a)


@pytest.mark.parametrize("e01,e10", [(0.5, 2.0), (1.0, 1.0), (0.1, 3.0), (2.5, 0.7), (1e-3, 1e-3)])
def test_equals_equation_9(e01, e10):
    assert_allclose(
        BinaryRandomizedResponseChannel(e01, e10).to_dense(),
        _paper_form(e01, e10),
        rtol=1e-9,
        atol=2**-52,
    )


@pytest.mark.parametrize("e01,e10", [(0.5, 2.0), (1.0, 1.0), (0.1, 3.0), (4.0, 0.2)])
def test_both_ratios_are_tight(e01, e10):
    ch = BinaryRandomizedResponseChannel(e01, e10)
    E = tight_epsilon_matrix(ch)
    assert_allclose([E[0, 1], E[1, 0]], [e01, e10], rtol=1e-12)
    assert verify(ch, BinaryContextAwareLDP(e01, e10)).passed
    assert not verify(ch, BinaryContextAwareLDP(0.99 * e01, e10)).passed
    assert not verify(ch, BinaryContextAwareLDP(e01, 0.99 * e10)).passed


def test_limits():
    # Mangat in each direction, the identity, the constant channels at zero budgets.
    assert_allclose(
        BinaryRandomizedResponseChannel(INF, 2.0).to_dense(),
        [[1 - math.exp(-2), math.exp(-2)], [0, 1]],
        atol=2**-52,
    )
    assert_allclose(
        BinaryRandomizedResponseChannel(2.0, INF).to_dense(),
        [[1, 0], [math.exp(-2), 1 - math.exp(-2)]],
        atol=2**-52,
    )
    assert_array_equal(BinaryRandomizedResponseChannel(INF, INF).to_dense(), np.eye(2))
    assert_array_equal(BinaryRandomizedResponseChannel(0, 0).to_dense(), np.full((2, 2), 0.5))
    assert_array_equal(BinaryRandomizedResponseChannel(0, 1.5).to_dense(), [[1, 0], [1, 0]])
    assert_array_equal(BinaryRandomizedResponseChannel(1.5, 0).to_dense(), [[0, 1], [0, 1]])
    assert_array_equal(BinaryRandomizedResponseChannel(INF, 0).to_dense(), [[0, 1], [0, 1]])


@pytest.mark.parametrize("e10", [0.3, 2.0])
def test_large_budget_approaches_mangat(e10):
    mangat = BinaryRandomizedResponseChannel(INF, e10).to_dense()
    near = BinaryRandomizedResponseChannel(40.0, e10).to_dense()
    assert_allclose(near, mangat, atol=1e-15)


@pytest.mark.parametrize("e01,e10", [(0, 0), (0, 1.0), (INF, 0)])
def test_zero_budget_channels_are_private_but_not_identifiable(e01, e10):
    ch = BinaryRandomizedResponseChannel(e01, e10)
    assert verify(ch, ch.guarantee()).passed
    with pytest.raises(ValueError, match="nothing about the distribution"):
        ch.unbiased(np.array([3.0, 4.0]), 7)
    with pytest.raises(ValueError, match="nothing about the distribution"):
        ch.variance(np.array([0.5, 0.5]), 7)


@pytest.mark.parametrize("e01,e10", [(1e-6, 1e-6), (700.0, 700.0), (1e-9, 30.0), (30.0, 1e-9)])
def test_extreme_budgets_keep_privacy_in_floating_point(e01, e10):
    ch = BinaryRandomizedResponseChannel(e01, e10)
    for prob in (ch.flip_0, ch.flip_1):
        assert prob / 2.0**-53 == math.floor(prob / 2.0**-53)
    assert verify(ch, ch.guarantee()).passed


@pytest.mark.parametrize(
    "bad,match", [(-1.0, "epsilon_01"), (float("nan"), "epsilon_01"), ("1", "epsilon_01")]
)
def test_bad_budgets(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        BinaryRandomizedResponseChannel(bad, 1.0)


def test_estimate_matches_closed_forms():
    # Warner: c' (f_1 - 1/(e+1)); Mangat (epsilon_01 = inf): share of output 0 / (1 - e^-e10).
    eps = 1.0
    warner = BinaryRandomizedResponseChannel(eps, eps)
    f = np.array([620.0, 380.0])
    cp = (math.e + 1) / (math.e - 1)
    assert_allclose(warner.unbiased(f, 1000)[0], cp * (0.62 - 1 / (math.e + 1)), rtol=1e-12)
    mangat = BinaryRandomizedResponseChannel(INF, 2.0)
    assert_allclose(mangat.unbiased(f, 1000)[0], 0.62 / (1 - math.exp(-2.0)), rtol=1e-12)


def test_monte_carlo_variance_matches_exact(seed):
    ch = BinaryRandomizedResponseChannel(0.5, 2.0)
    p = np.array([0.3, 0.7])
    n, reps = 400, 4000
    rng = np.random.default_rng(seed)
    x = rng.choice(2, size=(reps * n), p=p)
    y = ch.sample(x, rng).reshape(reps, n)
    counts = np.stack([(y == 0).sum(1), (y == 1).sum(1)], axis=1)
    est = np.array([ch.unbiased(c, n) for c in counts])
    # x is drawn per report, so the estimate's variance is the channel's exact variance.
    v = ch.variance(p, n)
    assert np.all(np.abs(est.mean(0) - p) <= 5 * np.sqrt(v / reps))
    assert np.all(np.abs(est.var(0, ddof=1) / v - 1) <= 5 * math.sqrt(2 / reps))


def test_guarantee_and_pickle():
    ch = BinaryRandomizedResponseChannel(INF, 1.0)
    assert ch.guarantee() == BinaryContextAwareLDP(INF, 1.0)
    assert pickle.loads(pickle.dumps(ch)) == ch
    assert ch.bits_per_report == 1

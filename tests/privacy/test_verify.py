import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp.channels import RandomizedResponseChannel
from skldp.privacy import LDP, ContextAwareLDP, SequentialComposition, tight_epsilon_matrix, verify


def test_ldp_matrix():
    assert_array_equal(LDP(2.0).epsilon_matrix(3), [[0, 2, 2], [2, 0, 2], [2, 2, 0]])
    with pytest.raises(ValueError, match="positive finite"):
        LDP(-1)


def test_tight_matrix_handles_zeros():
    # 0/0 is skipped; a positive entry over a zero one gives +inf.
    Q = np.array([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5], [0.0, 0.5, 0.5]])
    E = tight_epsilon_matrix(Q)
    assert E[0, 1] == pytest.approx(math.log(2))  # y in {0, 1}: 0.5 / 0.25; y = 2 is 0 / 0.5
    assert E[1, 0] == math.inf  # y = 2: 0.5 / 0
    assert E[0, 2] == math.inf and E[2, 0] == math.inf
    assert E[2, 1] == pytest.approx(math.log(2)) and E[1, 2] == math.inf
    assert np.all(np.diag(E) == 0)


def test_verify_with_infinite_budgets():
    Q = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert not verify(Q, LDP(5.0)).passed
    E = np.array([[0, np.inf], [np.inf, 0]])
    res = verify(Q, ContextAwareLDP(E))
    assert res.passed and not res.violations
    assert_array_equal(res.epsilon_matrix, E)


def test_verify_reports_violating_pairs():
    ch = RandomizedResponseChannel(1.0, 3)
    res = verify(ch, 0.5)
    assert not res.passed
    assert set(res.violations) == {(a, b) for a in range(3) for b in range(3) if a != b}
    assert verify(ch, 1.0)


@pytest.mark.parametrize(
    "E, match",
    [
        (np.ones((2, 3)), "square"),
        (np.array([[0, -1], [-1, 0]]), "non-negative"),
        (np.array([[1, 1], [1, 0]]), "zero diagonal"),
    ],
)
def test_context_aware_model_validation(E, match):
    with pytest.raises(ValueError, match=match):
        ContextAwareLDP(E)


def test_asymmetric_budget_matrix():
    # Mangat's mechanism (epsilon_01 = inf, epsilon_10 = 1): a "yes" (1) report may raise the
    # odds of "no" (0) against "yes" without bound; the reverse is bounded by e^1, tightly.
    from skldp.channels import BinaryRandomizedResponseChannel

    ch = BinaryRandomizedResponseChannel(np.inf, 1.0)
    assert verify(ch, ContextAwareLDP([[0, np.inf], [1.0, 0]]))
    assert not verify(ch, ContextAwareLDP([[0, 1.0], [np.inf, 0]]))
    assert not verify(ch, ContextAwareLDP([[0, np.inf], [0.99, 0]]))


def test_sequential_composition_adds_budgets():
    comp = SequentialComposition([LDP(1.0), LDP(0.5)])
    assert comp.epsilon == 1.5
    with pytest.raises(ValueError, match="verify each part"):
        comp.epsilon_matrix(2)


def test_warner_is_optimal_factorization():
    # Kairouz et al. (2016), Theorem 2 [spec claim 4]: every binary eps-LDP channel Q is
    # Q_WRR W for a stochastic W; for a channel that is not eps-LDP some entry of W is negative.
    eps = 1.0
    Qw = RandomizedResponseChannel(eps, 2).to_dense()
    rng = np.random.default_rng(0)
    found_non_ldp = False
    for _ in range(500):
        Q = rng.dirichlet(np.ones(4), size=2)
        W = np.linalg.solve(Qw, Q)
        assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
        if verify(Q, eps).passed:
            assert W.min() >= -1e-12
        else:
            found_non_ldp = True
            assert W.min() < 0
    assert found_non_ldp

"""Shuffle amplification: the clone reduction, binary RR's exact curve and the closed form.

Reference values are the spec's (specs/numeric-shuffle-audit-poisoning.md, section 4), each
computed there independently of this code; small cases are recomputed here by brute force.
"""

import math

import numpy as np
import pytest
from scipy import stats

from skldp.channels import RandomizedResponseChannel
from skldp.exceptions import InvalidParameterError
from skldp.privacy import ShuffleGuarantee, shuffle_delta, shuffle_guarantee
from skldp.privacy._shuffle import _clone_delta
from skldp.privatizers import RandomizedResponse, UtilityOptimizedRR

DELTA = 1e-6


def hockey_stick(P, Q, epsilon):
    return np.clip(P - math.exp(epsilon) * Q, 0.0, None).sum()


def clone_pair(c, alpha):
    """P_c and Q_c of the clone reduction, from Bin(c, 1/2) directly."""
    B = stats.binom.pmf(np.arange(c + 1), c, 0.5)
    up = np.concatenate([[0.0], B])
    same = np.concatenate([B, [0.0]])
    return alpha * up + (1 - alpha) * same, (1 - alpha) * up + alpha * same


@pytest.mark.parametrize("eps0", [0.5, 2.0, 4.0])
@pytest.mark.parametrize("epsilon", [0.0, 0.3, 1.7])
def test_clone_sum_equals_the_divergences_summed_by_brute_force(eps0, epsilon):
    n = 40
    q = math.exp(-eps0)
    alpha = math.exp(eps0) / (1 + math.exp(eps0))
    brute = 0.0
    for c in range(n):
        P, Q = clone_pair(c, alpha)
        d = hockey_stick(P, Q, epsilon)
        # The mirror x -> c + 1 - x swaps P_c and Q_c: both orders give the same divergence.
        assert d == pytest.approx(hockey_stick(Q, P, epsilon), abs=1e-14)
        brute += stats.binom.pmf(c, n - 1, q) * d
    expected = 0.0 if epsilon >= eps0 else brute
    assert _clone_delta(n, eps0, epsilon, q) == pytest.approx(expected, abs=1e-13)


@pytest.mark.parametrize(
    ("n", "eps0", "reference"),
    [(10**4, 0.5, 0.02040), (10**4, 2.0, 0.15505), (10**5, 4.0, 0.16977), (10**6, 8.0, 0.44447)],
)
def test_clone_bound_matches_the_exact_clone_sum(n, eps0, reference):
    g = shuffle_guarantee(eps0, n, DELTA)
    assert g.method == "clone"
    assert abs(g.epsilon - reference) <= 1e-5
    # Reported at 1e-6 resolution, rounded up: delta holds at it, and not 2e-6 below it.
    assert shuffle_delta(eps0, n, g.epsilon) <= DELTA < shuffle_delta(eps0, n, g.epsilon - 2e-6)


def test_closed_form_of_the_reference_implementation():
    assert shuffle_guarantee(4.0, 10**5, DELTA, method="closed-form").epsilon == pytest.approx(
        0.537804, abs=2e-6
    )
    assert shuffle_guarantee(2.0, 10**4, DELTA, method="closed-form").epsilon == pytest.approx(
        0.523551, abs=2e-6
    )
    # Outside its range (epsilon_0 >= log(n / (16 log(4 / delta))) = 3.72 here) it is epsilon_0.
    assert shuffle_guarantee(4.0, 10**4, DELTA, method="closed-form").epsilon == 4.0


def exact_rr_delta_brute(n, p, epsilon):
    """max over m and both orders, with exact (direct) convolutions of binomial pmfs."""
    worst = 0.0
    for m in range(n):
        R = np.convolve(
            stats.binom.pmf(np.arange(m + 1), m, p),
            stats.binom.pmf(np.arange(n - m), n - 1 - m, 1 - p),
        )
        up, same = np.concatenate([[0.0], R]), np.concatenate([R, [0.0]])
        P0, P1 = (1 - p) * up + p * same, p * up + (1 - p) * same
        worst = max(worst, hockey_stick(P0, P1, epsilon), hockey_stick(P1, P0, epsilon))
    return worst


@pytest.mark.parametrize("eps0", [1.0, 3.0])
def test_exact_rr_curve_against_brute_force(eps0):
    n = 25
    channel = RandomizedResponseChannel(eps0, 2)
    p = channel.to_dense()[0, 0]
    for epsilon in [0.2, 0.8, 1.5]:
        brute = exact_rr_delta_brute(n, p, epsilon)
        got = shuffle_delta(channel, n, epsilon, method="exact")
        assert brute <= got <= brute + 1e-10  # the margins for rounding and tails
    # The guarantee sits on the curve: delta holds at it and fails 2e-6 below it.
    g = shuffle_guarantee(channel, n, 1e-3)
    assert g.method == "exact"
    assert (
        exact_rr_delta_brute(n, p, g.epsilon) <= 1e-3 < exact_rr_delta_brute(n, p, g.epsilon - 2e-6)
    )


@pytest.mark.parametrize(("n", "eps0", "reference"), [(10**3, 1.0, 0.12661), (10**4, 2.0, 0.08702)])
def test_exact_rr_matches_the_spec(n, eps0, reference):
    g = shuffle_guarantee(RandomizedResponseChannel(eps0, 2), n, DELTA)
    assert g.method == "exact"
    assert reference - 5e-6 <= g.epsilon <= reference + 5e-5


def test_exact_rr_at_a_hundred_thousand_people():
    g = shuffle_guarantee(RandomizedResponseChannel(4.0, 2), 10**5, DELTA)
    assert 0.08472 - 5e-6 <= g.epsilon <= 0.08472 + 5e-5


@pytest.mark.parametrize("n", [10**3, 10**4])
@pytest.mark.parametrize("eps0", [1.0, 2.0, 4.0])
def test_binary_rr_bounds_are_ordered_and_the_default_is_within_ten_percent(n, eps0):
    channel = RandomizedResponseChannel(eps0, 2)
    exact = shuffle_guarantee(channel, n, DELTA, method="exact").epsilon
    stronger = shuffle_guarantee(channel, n, DELTA, method="stronger-clone").epsilon
    clone = shuffle_guarantee(channel, n, DELTA, method="clone").epsilon
    assert exact <= stronger <= clone <= eps0
    default = shuffle_guarantee(channel, n, DELTA)
    assert exact <= default.epsilon <= 1.1 * exact


def test_k_rr_uses_the_generic_bound_below_the_reference_value():
    rr = RandomizedResponse(epsilon=4.0, categories=[list(range(10))]).fit([[0]])
    g = shuffle_guarantee(rr, 10**5, DELTA)
    assert isinstance(g, ShuffleGuarantee)
    assert (g.method, g.n, g.epsilon0) == ("clone", 10**5, 4.0)
    assert g.epsilon <= 0.1754


def test_a_fitted_binary_privatizer_gets_the_exact_curve():
    rr = RandomizedResponse(epsilon=2.0, categories=[[0, 1]]).fit([[0]])
    assert shuffle_guarantee(rr, 1000, DELTA).method == "exact"


def test_refusals_name_the_problem():
    with pytest.raises(InvalidParameterError, match="epsilon-LDP"):
        shuffle_guarantee(
            UtilityOptimizedRR(epsilon=1.0, categories=[[0, 1, 2]], sensitive=[[0]]).fit([[0]]),
            1000,
            DELTA,
        )
    with pytest.raises(InvalidParameterError, match="binary randomized response only"):
        shuffle_guarantee(2.0, 1000, DELTA, method="exact")
    with pytest.raises(InvalidParameterError, match="at least 2"):
        shuffle_guarantee(2.0, 1, DELTA)
    with pytest.raises(InvalidParameterError, match="delta"):
        shuffle_guarantee(2.0, 1000, 0.0)
    with pytest.raises(InvalidParameterError, match="positive finite"):
        shuffle_guarantee(float("inf"), 1000, DELTA)
    with pytest.raises(InvalidParameterError, match="method"):
        shuffle_guarantee(2.0, 1000, DELTA, method="blanket")
    with pytest.raises(InvalidParameterError, match="Fit the privatizer"):
        shuffle_guarantee(RandomizedResponse(epsilon=1.0), 1000, DELTA)

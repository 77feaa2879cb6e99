"""Issue 27, item 6: ``verify`` decides ``Q[x, y] <= e^eps * Q[x', y]`` exactly.

The entries of a channel matrix are floats, so exact rationals; e^eps is irrational. The
ground truth here is computed in rational arithmetic against a bracket of e^eps from its
Taylor series with a bounded remainder, independent of the package's ``decimal`` bracket.
The matrices are built with a ratio within a few units in the last place of e^eps, on both
sides: the old float comparison passed some whose exact ratio is above.
"""

import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from skldp.privacy import LDP, UtilityOptimizedLDP, verify
from skldp.privacy._matrix import exp_bounds, within_budget


@functools.lru_cache
def exp_bracket(eps):
    """Rationals ``lo <= e^eps <= hi`` (eps >= 0) from a Taylor series, within about 1e-40.

    ``e^eps = (e^y)^m`` with ``y = eps/m <= 1/2``; for ``0 <= y <= 1/2`` the remainder after
    the term ``t_n = y^n/n!`` is at most ``t_n * y/(n+1) / (1 - y/(n+2)) <= t_n``.
    """
    m = max(1, 2 * math.ceil(eps))
    y = Fraction(eps) / m
    term = total = Fraction(1)
    n = 0
    while term >= Fraction(1, 10**45):
        n += 1
        term = term * y / n
        total += term
    return total**m, (total + term) ** m


def exactly_private(Q, eps):
    """Ground truth: every ratio of the stored floats is at most e^eps, in exact arithmetic."""
    lo, hi = exp_bracket(eps)
    F = [[Fraction(float(v)) for v in row] for row in Q]
    ok = True
    for a in F:
        for b in F:
            for p, q in zip(a, b, strict=True):
                if p <= lo * q:
                    continue
                assert p > hi * q, "the bracket must decide these matrices"
                ok = False
    return ok


def near_boundary(rng, eps, n_outputs):
    """A matrix whose ratio Q[0, 0] / Q[1, 0] is within two ulps of e^eps, either side.

    Every other ratio is far inside the budget: Q[1, 0] < 1/(1 + e^eps) keeps the ratio of
    the complements below e^eps, and with three outputs (Q[1, 0] < 1/(2 + e^eps)) the
    middle column is ``(t + Q[0,0] - Q[1,0]) / t`` with ``t > 2 Q[1, 0]``.
    """
    b = float(rng.uniform(0.02, 0.98) / (1.0 + n_outputs - 2 + math.exp(eps)))
    a = math.exp(eps) * b
    a = a + float(rng.integers(-2, 3)) * float(np.spacing(a))
    if n_outputs == 2:
        return np.array([[a, 1.0 - a], [b, 1.0 - b]])
    t = 2.0 * b + float(rng.uniform(0.0, 1.0 - a - 2.0 * b)) / 2.0
    rest = 1.0 - a - t
    return np.array([[a, t, rest], [b, t + (a - b), rest]])


@pytest.mark.parametrize("n_outputs", [2, 3])
def test_verify_is_exact_within_ulps_of_the_boundary(n_outputs):
    rng = np.random.default_rng(27 + n_outputs)
    budgets = rng.uniform(0.05, 5.0, size=40)
    above = within = 0
    for _ in range(600):
        eps = float(rng.choice(budgets))
        Q = near_boundary(rng, eps, n_outputs)
        truth = exactly_private(Q, eps)
        assert verify(Q, eps).passed is truth, (Q.tolist(), eps)
        # The utility-optimized model with every input sensitive and every output protected
        # states the same inequalities.
        uldp = UtilityOptimizedLDP(range(2), range(n_outputs), eps)
        assert uldp.verify(Q).passed is truth
        above += not truth
        within += truth
    # Both sides of the boundary are well represented.
    assert above > 150 and within > 150


def test_verify_names_the_pair_just_above_the_boundary():
    # 2**-1 over e^-1 * 2**-1 rounded up: the float product passes, the exact ratio does not.
    eps = 1.0
    lo, _ = exp_bracket(eps)
    rng = np.random.default_rng(0)
    for _ in range(10_000):
        b = float(rng.uniform(0.01, 0.25))
        a = math.exp(eps) * b
        if Fraction(a) > exp_bracket(eps)[1] * Fraction(b) and a <= math.exp(eps) * b:
            break
    else:  # pragma: no cover
        pytest.fail("no float product rounded in the ratio's favour")
    Q = np.array([[a, 1.0 - a], [b, 1.0 - b]])
    res = verify(Q, LDP(eps))
    assert not res.passed
    assert res.violations == [(0, 1)]


def test_exp_bounds_bracket_the_taylor_series():
    for eps in [1e-300, 1e-12, 0.1, 0.5, 1.0, math.log(3), 7.25, 50.0, 709.0]:
        lower, upper = exp_bounds(eps)
        t_lo, t_hi = exp_bracket(eps)
        assert lower <= t_hi and t_lo <= upper  # both brackets contain e^eps
        assert lower < upper
        assert (upper - lower) / lower < Fraction(1, 10**57)
        lower200, upper200 = exp_bounds(eps, 200)
        assert lower <= lower200 < upper200 <= upper
    assert exp_bounds(0.0) == (1, 1)


def test_within_budget_decides_subnormal_and_overflowing_entries_exactly():
    tiny = 5e-324
    # Subnormal probabilities: the float product would round; 3/2 against e^log(1.5).
    E = math.log(1.5)
    truth = Fraction(3, 2) <= exp_bracket(E)[0]
    assert truth is (Fraction(3, 2) <= exp_bounds(E)[0])
    assert bool(within_budget(3 * tiny, 2 * tiny, E)) is truth
    assert bool(within_budget(3 * tiny, 2 * tiny, math.nextafter(E, 1.0)))
    assert not within_budget(3 * tiny, 2 * tiny, math.nextafter(E, 0.0))
    # A budget whose e^E overflows: the ratio 1 / 5e-324 = 2**1074 against e^E, at the
    # float E nearest to 1074 log 2 (ground truth from log 2 to 60 digits) and its neighbours.
    with localcontext() as ctx:
        ctx.prec = 60
        log2 = Fraction(Decimal(2).ln())
    E = 1074 * math.log(2)
    assert abs(Fraction(E) - 1074 * log2) > Fraction(1, 10**40)
    assert bool(within_budget(1.0, tiny, E)) is (Fraction(E) > 1074 * log2)
    assert within_budget(1.0, tiny, math.nextafter(E, math.inf))
    assert not within_budget(1.0, tiny, math.nextafter(E, 0.0))
    # Zeros and infinite budgets, broadcast.
    got = within_budget(np.array([0.0, 1.0, 1.0]), np.array([0.0, 0.0, 0.5]), np.inf)
    assert got.tolist() == [True, True, True]
    got = within_budget(np.array([0.0, 1.0, 0.5]), np.array([0.0, 0.0, 0.5]), 0.0)
    assert got.tolist() == [True, False, True]
    assert not within_budget(0.5 + 2**-53, 0.5, 0.0)


def test_exact_verification_stays_fast_on_a_dense_channel():
    # Every entry of a k-RR channel is decided by the float fast path or a few exact checks.
    from skldp.channels import RandomizedResponseChannel

    ch = RandomizedResponseChannel(1.0, 300)
    assert verify(ch, 1.0).passed
    assert not verify(ch, 0.999).passed


@pytest.mark.parametrize(
    "name, k, eps",
    [
        # Budgets at which the stated matrix of the old channels rounded a ratio above e^eps.
        ("LocalHashing", 2, 0.00032846634978074584),
        ("LocalHashing", 17, 0.000364976809663328),
        ("SubsetSelection", 8, 1.0),
        ("SubsetSelection", 5, 0.23507588511371677),
        ("RandomizedResponse", 7, 0.7937341345430581),
        ("RandomizedResponse", 5, 1.8386817653805143),
        ("RandomizedResponse", 2, 0.002458124351591243),
    ],
)
def test_shipped_channels_state_ratios_exactly_within_the_budget(name, k, eps):
    import skldp

    privatizer = getattr(skldp, name)(epsilon=eps, categories=np.arange(k), random_state=0)
    channel = privatizer.fit([[0]]).channel_
    Q = channel.to_dense()
    assert exactly_private(Q, eps)
    assert verify(channel, privatizer.privacy_).passed

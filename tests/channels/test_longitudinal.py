"""Memoized (longitudinal) channels: the composite of one report, the PRR, and r reports.

Exact checks on dense matrices for small k: the composite channel is the product of its two
rounds, verifies at epsilon_1 (tightly) and its PRR at epsilon_infinity, and the exact
distribution of r reports of one person (the sufficient statistic: counts per category for
k-RR, per-bit counts for the unary forms) has every likelihood ratio below
e^{epsilon_infinity} for r = 1, 10 and 100. Then the variance of estimates pooled over days.
"""

import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.special import gammaln, logsumexp
from scipy.stats import binom

from skldp.channels import (
    LongitudinalOUEChannel,
    LongitudinalRAPPORChannel,
    LongitudinalRRChannel,
    RandomizedResponseChannel,
)
from skldp.privacy import LDP, LongitudinalLDP, tight_epsilon_matrix, verify
from tests.channel_contract import ChannelContract, contract_fixture

SMALL = [
    LongitudinalRRChannel(2.0, 0.5, 2),
    LongitudinalRRChannel(2.0, 1.0, 3),
    LongitudinalRRChannel(50.0, 1.0, 3),
    LongitudinalRRChannel(1.0, 1e-3, 17),
    LongitudinalRAPPORChannel(3),
    LongitudinalRAPPORChannel(4, f=0.2, p=0.25, q=0.75),
    LongitudinalOUEChannel(2.0, 1.0, 3),
    LongitudinalOUEChannel(4.0, 1.0, 5),
]

channel = contract_fixture(SMALL)


class TestLongitudinalContract(ChannelContract):
    pass


# -- the two rounds -------------------------------------------------------------------------------


def _irr_dense(ch):
    """The dense IRR: rows are PRR outputs, columns reports."""
    if isinstance(ch, LongitudinalRRChannel):
        k, t = ch.n_inputs, ch.irr_truth
        return np.full((k, k), (1 - t) / k) + t * np.eye(k)
    k = ch.n_inputs
    bits = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(bool)  # (2^k, k)
    one = np.where(bits, ch.irr_q, 1 - ch.irr_q)  # P(s_j | b'_j = 1), per report s
    zero = np.where(bits, ch.irr_p, 1 - ch.irr_p)
    # R[b, s] = prod_j (one if b_j else zero)[s, j]
    return np.prod(np.where(bits[:, None, :], one[None, :, :], zero[None, :, :]), axis=2)


@pytest.mark.parametrize("ch", SMALL[:2] + SMALL[4:7], ids=repr)
def test_composite_is_the_product_of_the_rounds(ch):
    P = ch.prr.to_dense()
    assert_allclose(P @ _irr_dense(ch), ch.to_dense(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("ch", SMALL, ids=repr)
def test_one_report_verifies_at_epsilon_1_and_the_prr_at_epsilon_infinity(ch):
    g = ch.guarantee()
    assert isinstance(g, LongitudinalLDP)
    assert (g.epsilon_1, g.epsilon_infinity) == (ch.epsilon, ch.epsilon_infinity)
    assert verify(ch, LDP(ch.epsilon))
    assert verify(ch.prr, LDP(ch.epsilon_infinity))
    # tight: the composite's largest ratio is epsilon_1 (to rounding), not less
    assert tight_epsilon_matrix(ch).max() == pytest.approx(ch.epsilon, rel=1e-8)
    if ch.epsilon_infinity < 30:  # k-RR saturates the float grid beyond (truth 1 - 2**-53)
        tight = tight_epsilon_matrix(ch.prr).max()
        assert tight == pytest.approx(ch.epsilon_infinity, rel=1e-8)
    # a planted smaller budget is refused
    assert not verify(ch, LDP(ch.epsilon * 0.99))


@pytest.mark.parametrize("f, p, q", [(0.5, 0.5, 0.75), (0.2, 0.25, 0.75), (0.8, 0.1, 0.9)])
def test_rappor_budgets_are_the_papers(f, p, q):
    ch = LongitudinalRAPPORChannel(3, f, p, q)
    q_star = (1 - f / 2) * q + (f / 2) * p
    p_star = (f / 2) * q + (1 - f / 2) * p
    assert ch.epsilon_infinity == pytest.approx(2 * math.log((1 - f / 2) / (f / 2)), rel=1e-12)
    eps_1 = math.log(q_star * (1 - p_star) / (p_star * (1 - q_star)))
    assert ch.epsilon == pytest.approx(eps_1, rel=1e-9)
    assert ch.epsilon >= eps_1  # rounded toward a larger (true) statement
    assert_allclose([ch.on[0], ch.off[0]], [q_star, p_star], rtol=1e-12)


@pytest.mark.parametrize("eps_inf, eps_1, k", [(2.0, 0.5, 3), (4.0, 1.0, 10), (1.0, 0.9, 2)])
def test_lgrr_second_round_is_arcolezis(eps_inf, eps_1, k):
    ch = LongitudinalRRChannel(eps_inf, eps_1, k)
    a, b = math.exp(eps_inf), math.exp(eps_1)
    p2 = (a * b + (k - 2) * b - (k - 1)) / ((a - 1) * (b + k - 1))
    keep2 = ch.irr_truth + (1 - ch.irr_truth) / k
    assert keep2 == pytest.approx(p2, rel=1e-12)
    # the composite is k-RR at epsilon_1
    assert_allclose(ch.to_dense(), RandomizedResponseChannel(eps_1, k).to_dense(), rtol=1e-12)


def test_loue_second_round_makes_one_report_exactly_epsilon_1():
    ch = LongitudinalOUEChannel(2.0, 1.0, 3)
    on, off = ch.on[0], ch.off[0]
    assert ch.irr_q == 0.5 and 0 < ch.irr_p < 0.5
    assert math.log(on * (1 - off) / (off * (1 - on))) == pytest.approx(1.0, rel=1e-12)
    # multi-freq-ldpy's closed form of q2 (L_OUE_Client), for the same budgets
    e1, ep = math.exp(1.0), math.exp(2.0)
    root = math.sqrt(
        0.1 * e1
        + 0.05 * e1**2
        + 0.3 * ep
        + 0.45 * ep**2
        - e1 * ep
        - 0.7 * e1 * ep**2
        + 0.3 * e1**2 * ep
        + 0.45 * e1**2 * ep**2
        + 0.05
    )
    q2 = ((-1.11803398874989 * root - 0.25 * e1 - 0.25 * ep + 0.75 * e1 * ep - 0.25) / ep) / (
        e1 - 1.0
    )
    assert ch.irr_p == pytest.approx(q2, rel=1e-9)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: LongitudinalRRChannel(1.0, 1.0, 3), "epsilon_1 < epsilon_infinity"),
        (lambda: LongitudinalRRChannel(1.0, -1.0, 3), "epsilon_1 must be a positive"),
        (
            lambda: LongitudinalRRChannel(1.0, 1e-17, 3),
            "too small to be represented for randomized response over k = 3",
        ),
        (lambda: LongitudinalOUEChannel(1.0, 1.0, 3), "at most epsilon_1 <"),
        (lambda: LongitudinalRAPPORChannel(3, f=1.0), "f must lie in"),
        (lambda: LongitudinalRAPPORChannel(3, p=0.8, q=0.5), "0 <= p < q <= 1"),
    ],
)
def test_bad_parameters_are_named(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("make", [LongitudinalRRChannel, LongitudinalOUEChannel])
@pytest.mark.parametrize("eps_1", [1e-4, 1e-9])
def test_a_tiny_epsilon_1_is_fitted_at_once_and_exactly(make, eps_1):
    # The second round was searched one 2**-53 step at a time: L-OUE at epsilon_1 = 1e-9 did
    # not finish in minutes (its quadratic root is off by about 1/epsilon_1 grid steps). A
    # bisection on the grid takes at most 54 checks; the result is verified exactly.
    import time

    start = time.perf_counter()
    ch = make(2.0, eps_1, 3)
    assert time.perf_counter() - start < 5.0  # generous: it takes milliseconds
    assert ch.epsilon == eps_1
    assert verify(ch, LDP(eps_1))  # one report is epsilon_1-LDP, exactly as sampled
    assert verify(ch.prr, LDP(2.0))
    # and it is tight: most of the budget is used, not thrown away by the rounding
    assert tight_epsilon_matrix(ch).max() > 0.5 * eps_1


@pytest.mark.parametrize(
    "make, smallest",
    [
        (lambda: LongitudinalOUEChannel(2.0, 1e-15, 3), "smallest usable epsilon_1 is 9.09"),
        (lambda: LongitudinalOUEChannel(2.0, 1e-300, 3), "L-OUE with epsilon_infinity = 2"),
        (lambda: LongitudinalRRChannel(2.0, 1e-17, 3), "smallest usable epsilon is 4.4"),
    ],
)
def test_an_unusable_epsilon_1_is_refused_at_once_by_name(make, smallest):
    with pytest.raises(ValueError, match="too small to be represented") as info:
        make()
    assert info.match(smallest)


@pytest.mark.parametrize("ch", SMALL[:4], ids=repr)
def test_lgrr_is_the_k_rr_of_its_composite_truth(ch):
    # One report is k-RR whose truth is the product of the rounds' truths: every k-RR field
    # (keep, other, the affine forward map) is RandomizedResponseChannel's for that truth.
    assert ch.truth == ch.prr.truth * ch.irr_truth and ch.n_outputs == ch.n_inputs
    assert ch.other == (1.0 - ch.truth) / ch.n_inputs and ch.keep == ch.truth + ch.other
    assert (ch._offset, ch._slope) == (ch.other, ch.truth)
    # its dense matrix is k-RR's form with those two values
    Q = ch.to_dense()
    assert np.all(np.diag(Q) == ch.keep) and np.all(Q[~np.eye(ch.n_inputs, dtype=bool)] == ch.other)


# -- r reports of one person: the exact likelihood ratio -------------------------------------------


def _compositions(r, k):
    """Every count vector of r reports over k symbols: shape (m, k)."""
    out = [
        np.diff(np.concatenate([[-1], bars, [r + k - 1]])) - 1
        for bars in itertools.combinations(range(r + k - 1), k - 1)
    ]
    return np.array(out)


def _log_r_report_matrix(ch, r):
    """log P(statistic | x) of r reports of one person with one memoized PRR, rows x.

    k-RR: the statistic is the count vector c of the reports (sufficient: the likelihood of
    the sequence given the PRR b is multinomial up to a factor free of x), so
    P(c | x) = sum_b P(b | x) Mult(c; r, R[b]). Unary: bits are independent given x in both
    rounds, so the statistic is the per-bit counts s and P(s | x) = prod_j sum_{b_j}
    P(b_j | x) Binom(s_j; r, irr(b_j)).
    """
    k = ch.n_inputs
    if isinstance(ch, LongitudinalRRChannel):
        C = _compositions(r, k)
        logR = np.log(_irr_dense(ch))  # (k, k)
        coef = gammaln(r + 1) - gammaln(C + 1).sum(axis=1)
        log_mult = coef[None, :] + logR @ C.T  # (b, c)
        logP = np.log(ch.prr.to_dense())  # (x, b)
        return logsumexp(logP[:, :, None] + log_mult[None, :, :], axis=1)
    s = np.arange(r + 1)
    log_given = {
        1: np.log(binom.pmf(s, r, ch.irr_q)),
        0: np.log(binom.pmf(s, r, ch.irr_p)),
    }
    theta, psi = ch.prr.theta, ch.prr.psi
    # per-bit log P(s_j | the bit is the input's own) and (| another's)
    own = np.logaddexp(math.log(theta) + log_given[1], math.log1p(-theta) + log_given[0])
    other = np.logaddexp(math.log(psi) + log_given[1], math.log1p(-psi) + log_given[0])
    grids = np.stack(np.meshgrid(*([s] * k), indexing="ij"), axis=-1).reshape(-1, k)
    out = np.empty((k, grids.shape[0]))
    for x in range(k):
        per_bit = np.where(np.arange(k)[None, :] == x, own[grids], other[grids])
        out[x] = per_bit.sum(axis=1)
    return out


@pytest.mark.parametrize(
    "ch",
    [
        LongitudinalRRChannel(2.0, 0.5, 3),
        LongitudinalRAPPORChannel(3),
        LongitudinalOUEChannel(2.0, 1.0, 3),
    ],
    ids=repr,
)
def test_r_reports_never_exceed_epsilon_infinity_exactly(ch):
    worst = {}
    for r in (1, 10, 100):
        L = _log_r_report_matrix(ch, r)
        assert_allclose(np.exp(logsumexp(L, axis=1)), 1.0, rtol=1e-9)  # rows are distributions
        worst[r] = float((L[:, None, :] - L[None, :, :]).max())
        assert worst[r] <= ch.epsilon_infinity + 1e-9
    # one report is the composite at epsilon_1; more reports reveal more, up to the PRR's
    assert worst[1] == pytest.approx(ch.epsilon, rel=1e-6)
    assert worst[1] < worst[10] < worst[100]
    assert worst[100] > 0.8 * ch.epsilon_infinity


def test_without_the_memo_r_reports_compose():
    # Planted: a fresh PRR per report is the composite channel r times, whose budget grows
    # as r epsilon_1 and passes epsilon_infinity: the bound above is the memo's doing.
    ch = LongitudinalRRChannel(2.0, 0.5, 3)
    r = 10
    Q = ch.to_dense()
    C = _compositions(r, 3)
    L = np.log(Q) @ C.T
    assert float((L[:, None, :] - L[None, :, :]).max()) == pytest.approx(r * ch.epsilon)
    assert r * ch.epsilon > ch.epsilon_infinity


# -- variance over days ----------------------------------------------------------------------------


@pytest.mark.parametrize("ch", SMALL, ids=repr)
def test_longitudinal_variance_limits(ch):
    k = ch.n_inputs
    p = np.linspace(1, 2, k)
    p /= p.sum()
    n = 1000
    assert_allclose(ch.longitudinal_variance(p, n, 1), ch.variance(p, n), rtol=1e-12)
    big = ch.longitudinal_variance(p, n, 10**15)
    assert_allclose(big, ch.prr.variance(p, n), rtol=1e-6)
    v = [ch.longitudinal_variance(p, n, r) for r in (1, 2, 10, 100)]
    assert all(np.all(a > b) for a, b in itertools.pairwise(v))
    # averaging days never goes below the PRR's variance, and never reaches the naive 1/r
    assert np.all(v[-1] > ch.prr.variance(p, n))
    assert np.all(v[-1] > ch.variance(p, n) / 100)


@pytest.mark.parametrize(
    "ch",
    [LongitudinalRAPPORChannel(8, f=0.5, p=0.25, q=0.75), LongitudinalOUEChannel(3.0, 1.0, 8)],
    ids=repr,
)
def test_the_second_round_reports_a_one_with_q_on_a_prr_one_and_p_on_a_zero(ch):
    # The memoized PRR is known from the keys, so the IRR's conditional frequencies are seen:
    # P(s_j = 1 | b'_j = 1) = q and P(s_j = 1 | b'_j = 0) = p, within 5 sd of the binomial
    # count, and two bits of a row are independent given their PRR bits.
    n = 50_000
    rng = np.random.default_rng(4)
    x = rng.integers(0, ch.n_inputs, n)
    k0, k1 = rng.integers(0, 2**63, (2, n), dtype=np.uint64)
    prr = ch.memoized_prr(x, k0, k1, 7).astype(bool)
    reports = ch.sample_memoized(x, k0, k1, 7, np.random.default_rng(5))
    assert reports.dtype == np.uint8 and reports.shape == prr.shape
    for given, q in ((True, ch.irr_q), (False, ch.irr_p)):
        hit = reports[prr == given]
        assert abs(hit.mean() - q) <= 5 * math.sqrt(q * (1 - q) / hit.size), (given, q)
    one_zero = prr[:, 0] & ~prr[:, 1]
    both = (reports[one_zero, 0] & reports[one_zero, 1]).mean()
    q = ch.irr_q * ch.irr_p
    assert abs(both - q) <= 5 * math.sqrt(q * (1 - q) / one_zero.sum())
    # the planted wrong round (p and q swapped) is far outside the same tolerance
    hit = reports[prr]
    assert abs(hit.mean() - ch.irr_p) > 5 * math.sqrt(ch.irr_p * (1 - ch.irr_p) / hit.size)


def test_one_key_per_row_is_required():
    ch = LongitudinalRRChannel(2.0, 0.5, 3)
    k = np.zeros(2, dtype=np.uint64)
    with pytest.raises(ValueError, match="one key per input row is needed; got 2 keys for 3 rows"):
        ch.memoized_prr(np.array([0, 1, 2]), k, k, 0)

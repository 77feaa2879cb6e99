import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp.channels import (
    RandomizedResponseChannel,
    RAPPORChannel,
    UtilityOptimizedRAPPORChannel,
    UtilityOptimizedRRChannel,
)
from skldp.channels._utility_optimized import urap_probabilities, urr_probabilities
from skldp.privacy import LDP, UtilityOptimizedLDP, ZeroBits, verify
from tests.channel_contract import ChannelContract, contract_fixture
from tests.conftest import em_step, simplex_point

EPS = (1e-3, 1.0, 50.0)
SMALL = (
    [
        UtilityOptimizedRRChannel(eps, k, s)
        for (k, s) in ((2, [1]), (3, [0, 2]), (9, [1, 4, 7]), (5, []))
        for eps in EPS
    ]
    + [
        UtilityOptimizedRAPPORChannel(eps, k, s)
        for (k, s) in ((2, [0]), (6, [0, 1, 2]), (7, [5]))
        for eps in EPS
    ]
    + [UtilityOptimizedRAPPORChannel(eps, 5, [1, 3], theta=0.3) for eps in EPS]
)


channel = contract_fixture(SMALL)


class TestUtilityOptimizedContract(ChannelContract):
    def test_likelihood_matches_dense_columns(self, channel):
        rng = np.random.default_rng(7)
        reports = channel.sample(rng.integers(0, channel.n_inputs, 60), rng)
        Q = channel.to_dense()
        codes = (
            reports
            if channel.report_kind == "symbol"
            else reports @ (1 << np.arange(channel.width))
        )
        assert_allclose(channel.likelihood(reports), Q[:, codes].T, rtol=1e-11, atol=1e-300)

    def test_em_step_matches_dense_em(self, channel):
        rng = np.random.default_rng(8)
        p = simplex_point(channel.n_inputs)
        reports = channel.sample(rng.choice(channel.n_inputs, 400, p=p), rng)
        Q = channel.to_dense()
        codes = (
            reports
            if channel.report_kind == "symbol"
            else reports @ (1 << np.arange(channel.width))
        )
        counts = np.bincount(codes, minlength=Q.shape[1]).astype(float)
        q = simplex_point(channel.n_inputs, seed=3)
        m = Q.T @ q
        seen = counts > 0
        dense_next = q * (Q[:, seen] @ (counts[seen] / m[seen])) / counts.sum()
        dense_ll = counts[seen] @ np.log(m[seen]) / counts.sum()
        nxt, ll = em_step(channel.em_model(reports), q)
        assert_allclose(nxt, dense_next / dense_next.sum(), rtol=1e-9)
        assert_allclose(ll, dense_ll, rtol=1e-9)


# -- uRR -------------------------------------------------------------------------------------------


def test_urr_worked_example():
    # Spec 3.4: d = 6, X_S = {0,1,2}, eps = ln 3 -> c1 = 0.6, c2 = 0.2, c3 = 0.4.
    Q = UtilityOptimizedRRChannel(math.log(3), 6, [0, 1, 2]).to_dense()
    expected = np.zeros((6, 6))
    expected[:, :3] = 0.2
    expected[[0, 1, 2], [0, 1, 2]] = 0.6
    expected[[3, 4, 5], [3, 4, 5]] = 0.4
    assert_allclose(Q, expected, rtol=1e-14, atol=1e-16)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, math.log(10), 5.0])
def test_urr_matches_eq6_for_a_permuted_mask(eps):
    rng = np.random.default_rng(int(eps * 100))
    k = 10
    S = np.sort(rng.choice(k, 4, replace=False))
    Q = UtilityOptimizedRRChannel(eps, k, S).to_dense()
    e, dS = math.exp(eps), 4
    u = dS + e - 1
    sens = np.isin(np.arange(k), S)
    for x in range(k):
        for y in range(k):
            if sens[x] and y == x:
                want = e / u
            elif sens[y]:
                want = 1 / u
            elif y == x:
                want = (e - 1) / u
            else:
                want = 0.0
            assert Q[x, y] == pytest.approx(want, rel=1e-13, abs=1e-16)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_urr_is_uldp_tight_and_not_ldp(eps):
    ch = UtilityOptimizedRRChannel(eps, 8, [2, 5, 6])
    res = verify(ch, ch.guarantee())
    assert res.passed
    assert_allclose(res.epsilon_matrix.max(), eps, rtol=1e-9)
    Q = ch.to_dense()
    # sensitive inputs never produce a non-sensitive output; each X_N output has one positive row
    assert np.all(Q[np.ix_([2, 5, 6], [0, 1, 3, 4, 7])] == 0)
    assert_array_equal((Q[:, [0, 1, 3, 4, 7]] > 0).sum(axis=0), 1)
    assert not verify(ch, LDP(100.0)).passed  # zeros in the columns of Y_I
    assert not verify(ch, UtilityOptimizedLDP([2, 5, 6], [2, 5, 6], 0.99 * eps)).passed


def test_uldp_detects_broken_invertibility():
    ch = UtilityOptimizedRRChannel(1.0, 4, [0])
    # Claim input 1 is sensitive too: its output 1 is then an invertible output of a sensitive
    # input.
    res = verify(ch, UtilityOptimizedLDP([0, 1], [0], 1.0))
    assert not res.passed and res.invertibility_violations == [1]
    # Mixing two inputs into one unprotected output breaks invertibility.
    Q = ch.to_dense()
    Q2 = Q.copy()
    Q2[2, 3], Q2[2, 2] = Q2[2, 2] / 2, Q2[2, 2] / 2
    assert verify(Q2, UtilityOptimizedLDP([0], [0], 1.0)).invertibility_violations == [3]


def test_urr_sampler_keep_else_uniform_equivalence():
    # "keep w.p. (e-1)/u, else uniform over X_S" gives c1 on a sensitive x and c3 on a
    # non-sensitive one; frequencies over 2e5 draws lie within 5 sd of the dense rows.
    ch = UtilityOptimizedRRChannel(1.0, 6, [0, 3])
    Q = ch.to_dense()
    n = 200_000
    rng = np.random.default_rng(0)
    for x in (0, 4):
        freq = np.bincount(ch.sample(np.full(n, x), rng), minlength=6) / n
        sd = np.sqrt(Q[x] * (1 - Q[x]) / n)
        assert np.all(np.abs(freq - Q[x]) <= 5 * sd + 1e-12)


@pytest.mark.parametrize("eps", [1e-6, 0.3, 50.0, 700.0, 1e4])
@pytest.mark.parametrize("dS", [1, 2, 100])
def test_urr_probabilities_within_bound(eps, dS):
    keep, other = urr_probabilities(eps, dS)
    assert 0 < keep < 1 and other > 0
    assert keep / 2.0**-53 == math.floor(keep / 2.0**-53)
    assert keep + other <= (math.exp(eps) if eps < 700 else math.inf) * other


def test_urr_closed_form_inverse():
    ch = UtilityOptimizedRRChannel(1.3, 7, [1, 2, 6])
    m = simplex_point(7, seed=4)
    n = 1000
    est = ch.unbiased(n * m, n)
    assert_allclose(est, np.linalg.solve(ch.to_dense().T, m), rtol=1e-10)
    assert abs(est.sum() - 1) < 1e-12


def test_bad_sensitive_indices():
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        UtilityOptimizedRRChannel(1.0, 4, [1, 4])
    with pytest.raises(ValueError, match="duplicates"):
        UtilityOptimizedRAPPORChannel(1.0, 4, [1, 1])
    with pytest.raises(TypeError, match="integers"):
        UtilityOptimizedRRChannel(1.0, 4, [0.5])


# -- uRAP ------------------------------------------------------------------------------------------


def test_urap_worked_example():
    # Spec 3.5: d = 6, d_S = 3, eps = 2 ln 3 (a = 3): theta = 0.75, d1 = 0.25, d2 = 1/3.
    ch = UtilityOptimizedRAPPORChannel(2 * math.log(3), 6, [0, 1, 2])
    assert_allclose([ch.theta, ch.d1, ch.d2], [0.75, 0.25, 1 / 3], rtol=1e-11)


@pytest.mark.parametrize("theta", [0.3, 0.5, 0.8, None])
def test_urap_uldp_tight_on_support(theta):
    eps = 1.1
    ch = UtilityOptimizedRAPPORChannel(eps, 6, [0, 2, 3], theta=theta)
    res = verify(ch, ch.guarantee())
    assert res.passed
    assert_allclose(res.epsilon_matrix.max(), eps, rtol=1e-9)
    Q = ch.to_dense()
    outs = ch.output_bits()
    nonsens = outs[:, [1, 4, 5]].sum(axis=1)
    assert np.all(Q[:, nonsens >= 2] == 0)  # never two non-sensitive bits
    assert np.all(
        Q[np.ix_([0, 2, 3], np.flatnonzero(nonsens > 0))] == 0
    )  # sensitive: all zero there
    # P(y in Y_I | x in X_N) = 1 - d2
    assert_allclose(
        Q[np.ix_([1, 4, 5], np.flatnonzero(nonsens == 1))].sum(axis=1), 1 - ch.d2, rtol=1e-12
    )
    assert not verify(ch, UtilityOptimizedLDP([0, 2, 3], ZeroBits([1, 4, 5]), 0.99 * eps)).passed


def test_urap_default_theta_constants():
    for eps in (0.5, 2.0, 4.0):
        ch = UtilityOptimizedRAPPORChannel(eps, 5, [0, 1])
        a = math.exp(eps / 2)
        assert_allclose([ch.d1, ch.d2], [1 / (a + 1), 1 / a], rtol=1e-10)
        half = UtilityOptimizedRAPPORChannel(eps, 5, [0, 1], theta=0.5)
        e = math.exp(eps)
        assert_allclose(1 - half.d2, (e - 1) / (2 * e), rtol=1e-10)
        assert 1 - half.d2 < min(1 - ch.d2, 0.5)


@pytest.mark.parametrize("eps", [1e-6, 0.3, 50.0, 700.0])
@pytest.mark.parametrize("theta", [None, 0.3, 0.9])
def test_urap_probabilities_within_bound(eps, theta):
    th, d1, d2 = urap_probabilities(eps, theta)
    bound = math.exp(eps) if eps < 700 else math.inf
    assert th <= bound * d1 * d2 and d1 * d2 <= bound * th
    assert 0 < d2 <= 1 and (1 - d2) / 2.0**-53 == math.floor((1 - d2) / 2.0**-53)


def test_urap_all_sensitive_is_rappor():
    for theta in (None, 0.3):
        a = UtilityOptimizedRAPPORChannel(1.5, 5, range(5), theta=theta).to_dense()
        b = RAPPORChannel(1.5, 5, theta=theta).to_dense()
        assert_array_equal(a, b)


def test_urap_rejects_impossible_reports():
    ch = UtilityOptimizedRAPPORChannel(1.0, 5, [0])
    bad = np.array([[0, 1, 1, 0, 0]])
    with pytest.raises(ValueError, match="cannot come from this mechanism"):
        ch.statistics(bad)


def test_urap_em_statistics_are_additive_histograms():
    ch = UtilityOptimizedRAPPORChannel(1.0, 40, [3, 9, 20])
    rng = np.random.default_rng(1)
    reports = ch.sample(rng.integers(0, 40, 5000), rng)
    whole = ch.em_model(reports)
    parts = ch.em_model(reports[:1234]).merge(ch.em_model(reports[1234:]))
    assert whole.hist.shape == (8,)
    assert_array_equal(whole.hist, parts.hist)
    assert_array_equal(whole.pinned, parts.pinned)
    assert whole.pinned.sum() + whole.hist.sum() == 5000
    assert_array_equal(whole.pinned[[3, 9, 20]], 0)


def test_urr_all_sensitive_equals_krr():
    for eps in (0.1, 1.0, 4.0):
        a = UtilityOptimizedRRChannel(eps, 6, range(6)).to_dense()
        b = RandomizedResponseChannel(eps, 6).to_dense()
        assert_allclose(a, b, rtol=1e-13, atol=2**-52)

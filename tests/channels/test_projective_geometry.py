"""Projective geometry response (PGR) and its hybrid (HPGR): design, channel, sampler, estimator."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp import ProjectiveGeometryResponse, recommend_mechanism
from skldp.channels import ProjectiveGeometryChannel
from skldp.channels._projective_geometry import (
    design_sizes,
    design_variance,
    hpgr_parameters,
    incidence_matrix,
    pgr_parameters,
    projective_points,
)
from skldp.privacy import LDP, verify
from tests.channel_contract import ChannelContract, contract_fixture
from tests.conftest import simplex_point

# (k, q, t, h): PGR on a full and a padded space, t = 2 (k-RR-like), q = 2; HPGR with h = 2, 5
DESIGNS = [(13, 3, 3, 1), (10, 3, 3, 1), (8, 7, 2, 1), (7, 2, 3, 1), (12, 2, 3, 2), (20, 3, 2, 5)]
SMALL = [ProjectiveGeometryChannel(eps, *d) for d in DESIGNS for eps in (1e-3, 1.0, 50.0)]

channel = contract_fixture(SMALL)


class TestProjectiveGeometryContract(ChannelContract):
    def test_adjoint_squared_matches_dense(self, channel):
        v = np.random.default_rng(5).random(channel.n_outputs)
        assert_allclose(channel.adjoint_squared(v), channel.to_dense() ** 2 @ v, rtol=1e-9)

    def test_dense_channel_is_the_papers(self, channel):
        # Q((B, u) | x) = e rho if B = B(x) and <u, v(x)> = 0 (mod q), rho otherwise,
        # rho = 1 / ((e - 1) s + h b); e is the ratio as sampled (rounded toward privacy).
        q, t, h = channel.field_size, channel.dimension, channel.n_blocks
        b, s, _ = design_sizes(q, t)
        k = channel.n_inputs
        e = channel.keep * (h * b - s) / ((1 - channel.keep) * s)
        if channel.epsilon <= 1:
            assert_allclose(e, math.exp(channel.epsilon), rtol=1e-12)
        P = projective_points(q, t)
        rho = 1.0 / ((e - 1) * s + h * b)
        expected = np.full((k, h * b), rho)
        for x in range(k):
            B, v = divmod(x, b)
            expected[x, B * b : (B + 1) * b] = np.where((P @ P[v]) % q == 0, e * rho, rho)
        assert_allclose(channel.to_dense(), expected, rtol=1e-13)


@pytest.mark.parametrize(("q", "t"), [(3, 3), (5, 3), (3, 4), (7, 2)])
def test_design_is_a_symmetric_two_design(q, t):
    K, s, lam = design_sizes(q, t)
    P = projective_points(q, t)
    assert P.shape == (K, t) and len({tuple(r) for r in P.tolist()}) == K
    lead = P[np.arange(K), np.argmax(P != 0, axis=1)]
    assert np.all(lead == 1)  # canonical
    assert_array_equal(P[0], [0] * (t - 1) + [1])
    M = incidence_matrix(q, t).astype(int)
    assert np.all(M.sum(axis=1) == s)
    meet = M @ M.T
    assert np.all(meet[~np.eye(K, dtype=bool)] == lam)
    assert lam == s * (s - 1) // (K - 1)


@pytest.mark.parametrize(("q", "t", "h"), [(3, 3, 1), (5, 3, 1), (3, 4, 1), (7, 2, 1), (3, 3, 3)])
def test_fourier_decoder_equals_direct_incidence_counts(q, t, h):
    K = design_sizes(q, t)[0]
    ch = ProjectiveGeometryChannel(1.0, K * h, q, t, h)
    y = np.random.default_rng(q + t).integers(0, 1000, size=(h, K))
    direct = y @ incidence_matrix(q, t).astype(int)
    T = ch._incidence_lines(y.astype(float))
    assert_array_equal(np.rint(T).astype(int), direct)
    assert np.max(np.abs(T - np.rint(T))) < 1e-6
    assert_array_equal(ch._incidence_table(y.astype(float)), direct)  # exact sums
    assert_array_equal(ch.incidence(y.astype(float)), direct)


def test_large_designs_use_the_transform_and_agree():
    # (3, 9): s K = 32 million entries, above the table's limit, so the line-wise transform
    # decodes
    ch = ProjectiveGeometryChannel(1.0, 9841, 3, 9)
    assert ch._table is None
    ch2 = ProjectiveGeometryChannel(1.0, 1000, 3, 7)
    y = np.random.default_rng(0).integers(0, 9, size=ch2.n_outputs).astype(float)
    assert ch2._table is not None
    assert_allclose(ch2._incidence_lines(y[None]), ch2._incidence_table(y[None]), atol=1e-8)


@pytest.mark.parametrize(("q", "t"), [(3, 3), (5, 3), (3, 4), (11, 3)])
def test_probabilities_are_subset_selections_with_d_equal_s(q, t):
    # P1 and P0 are p_s and q_s of subset selection with d = s on K items (unrounded forms).
    K, s, lam = design_sizes(q, t)
    eps = 1.3
    ch = ProjectiveGeometryChannel(eps, K, q, t)
    e = math.exp(eps)
    p_s = s * e / (s * e + K - s)
    q_s = (p_s * (s - 1) + (1 - p_s) * s) / (K - 1)
    P1, P0 = ch._probs[0], ch._probs[1]
    assert_allclose([P1, P0], [p_s, q_s], rtol=1e-14)


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("eps", [1e-3, 0.5, 3.0])
def test_privacy_is_tight(design, eps):
    ch = ProjectiveGeometryChannel(eps, *design)
    assert verify(ch, LDP(eps)).passed
    assert not verify(ch, LDP(eps * (1 - 1e-9))).passed


def _authors_sampler_matrix(q, t, keep):
    """Dense Q of the authors' off-hyperplane draw (all t coordinates, zero vector rejected,
    pivot overwritten so that <u, v> = 1), enumerated exactly: a known-bad positive control."""
    K, s, _ = design_sizes(q, t)
    P = projective_points(q, t)
    index = {tuple(r): j for j, r in enumerate(P.tolist())}
    vectors = np.array(np.meshgrid(*[np.arange(q)] * t, indexing="ij")).reshape(t, -1).T[1:]
    Q = np.zeros((K, K))
    for x in range(K):
        v = P[x]
        i = int(np.argmax(v != 0))
        Q[x, (P @ v) % q == 0] = keep / s
        for u in vectors:
            u = u.copy()
            u[i] = 0
            u[i] = (1 - (u @ v)) % q
            lead = u[np.argmax(u != 0)]
            c = tuple((u * pow(int(lead), q - 2, q)) % q)
            Q[x, index[c]] += (1 - keep) / (q**t - 1)
    return Q


def test_authors_sampler_is_rejected_and_ours_passes():
    # Spec 2.6 / 8: at (q, t) = (3, 3) the authors' sampler has true loss 1.368 at eps = 1.
    ch = ProjectiveGeometryChannel(1.0, 13, 3, 3)
    bad = _authors_sampler_matrix(3, 3, ch.keep)
    assert_allclose(bad.sum(axis=1), 1.0)
    assert not verify(bad, LDP(1.0)).passed
    true_loss = 1.0 + math.log((3**3 - 1) / (2 * 3**2))
    assert_allclose(true_loss, 1.368, atol=1e-3)
    assert verify(bad, LDP(true_loss + 1e-9)).passed
    assert verify(ch, LDP(1.0)).passed


@pytest.mark.parametrize("design", [(13, 3, 3, 1), (12, 2, 3, 2)])
def test_sampler_hits_every_output_with_its_probability(design, seed):
    ch = ProjectiveGeometryChannel(1.0, *design)
    Q = ch.to_dense()
    n = 60_000
    for x in range(ch.n_inputs):
        y = ch.sample(np.full(n, x), np.random.default_rng(seed + x))
        freq = np.bincount(y, minlength=ch.n_outputs)
        assert np.all(np.abs(freq - n * Q[x]) <= 5 * np.sqrt(n * Q[x] * (1 - Q[x])))
    # the neighbouring input's row fails the same check
    y = ch.sample(np.full(n, 0), np.random.default_rng(seed))
    freq = np.bincount(y, minlength=ch.n_outputs)
    assert not np.all(np.abs(freq - n * Q[1]) <= 5 * np.sqrt(n * Q[1] * (1 - Q[1])))


class _Enumerate:
    """A stand-in generator: ``random`` gives one fixed value, ``integers(lo, hi, size)`` the
    integers lo, lo + 1, ... (all of [lo, hi) when size = hi - lo): the sampler's output for
    every equally likely draw, to count exactly."""

    def __init__(self, u):
        self.u = u

    def random(self, n):
        return np.full(n, self.u)

    def integers(self, lo, hi, size):
        assert size in (0, hi - lo)
        return lo + np.arange(size, dtype=np.int64)


@pytest.mark.parametrize("design", [(13, 3, 3, 1), (6, 5, 2, 1), (12, 2, 3, 2), (20, 3, 2, 5)])
def test_sampler_is_exact_by_enumeration(design):
    # Each of the q**(t-1) - 1 nonzero draws of the "in" branch gives a point of S_x, each
    # point q - 1 times; each draw of the "out" branch gives a distinct output off
    # (B(x), S_x), every such output once. So the realized probabilities are exactly
    # keep / s and (1 - keep) / (hb - s): the dense matrix.
    ch = ProjectiveGeometryChannel(1.0, *design)
    q, t = ch.field_size, ch.dimension
    free, others = q ** (t - 1), (ch.n_blocks - 1) * ch.block_size
    Q = ch.to_dense()
    for x in range(ch.n_inputs):
        inside = ch._sample(np.full(free - 1, x), _Enumerate(0.0))
        hits = np.bincount(inside, minlength=ch.n_outputs)
        on = Q[x] > Q[x].min()
        assert np.all(hits[on] == q - 1) and np.all(hits[~on] == 0)
        outside = ch._sample(np.full(others + free, x), _Enumerate(1.0 - 2.0**-53))
        hits = np.bincount(outside, minlength=ch.n_outputs)
        assert np.all(hits[~on] == 1) and np.all(hits[on] == 0)


def _fixed_count_variance(ch, counts):
    """Spec 2.4 / 2.9: the variance of each count estimate for fixed input counts."""
    alpha, beta, _ = ch._coef
    P1, Pa, Pc, P2, Pd = ch._probs
    nB = np.bincount(ch._block_of, weights=counts)[ch._block_of]
    n = counts.sum()

    def V(m1, m2):
        return alpha**2 * m1 * (1 - m1) + beta**2 * m2 * (1 - m2) + 2 * alpha * beta * m1 * (1 - m2)

    if ch.n_blocks == 1:
        return counts * V(P1, 1.0) + (n - counts) * V(Pa, 1.0)
    return counts * V(P1, P2) + (nB - counts) * V(Pa, P2) + (n - nB) * V(Pc, Pd)


@pytest.mark.parametrize(("design", "eps"), [((31, 5, 3, 1), 2.0), ((30, 3, 2, 8), 1.0)])
def test_unbiased_and_variance_by_simulation(design, eps, seed):
    # 2,000 runs of n = 600 fixed inputs: each count's mean within 4 standard errors of the
    # truth, and the mean over items of the simulated variance within 10% of the formula.
    ch = ProjectiveGeometryChannel(eps, *design)
    k, runs, n = ch.n_inputs, 2000, 600
    rng = np.random.default_rng(seed)
    x = rng.choice(k, size=n, p=simplex_point(k))
    counts = np.bincount(x, minlength=k).astype(float)
    y = ch.sample(np.tile(x, runs), rng).reshape(runs, n)
    N = np.zeros((runs, ch.n_outputs))
    np.add.at(N, (np.repeat(np.arange(runs), n), y.ravel()), 1.0)
    est = n * np.array([ch.unbiased(row, n) for row in N])
    var = _fixed_count_variance(ch, counts)
    se = np.sqrt(var / runs)
    assert np.all(np.abs(est.mean(axis=0) - counts) <= 4 * se)
    assert abs(est.var(axis=0, ddof=1).mean() / var.mean() - 1) < 0.10
    # the channel's variance (reports drawn from p) is the fixed-count one plus p_x(1 - p_x)
    # per report for h = 1
    if ch.n_blocks == 1:
        p = counts / n
        assert_allclose(n * n * ch.variance(p, n), var + n * p * (1 - p), rtol=1e-10)


def test_parameters_follow_the_spec():
    # Spec 2.5 and 2.9 (variances at the uniform input; count MSE at n = 1,000).
    assert pgr_parameters(5.0, 22_000) == (149, 3)
    assert pgr_parameters(2.0, 100) == (11, 3)
    assert pgr_parameters(1.386, 22_000) == (5, 8)
    assert pgr_parameters(1.0, 1000) == (3, 7)
    assert hpgr_parameters(5.0, 22_000, 5) == (5, 29)
    assert hpgr_parameters(5.0, 22_000, 13) == (4, 10)
    # per-item count MSE: fixed counts (spec 27.272, 27.275, 34.19) plus n p(1 - p) = 0.045
    assert_allclose(1000 * design_variance(5.0, 22_000, 149, 3), 27.272 + 0.045, atol=2e-3)
    assert_allclose(1000 * design_variance(5.0, 22_000, 151, 3), 27.275 + 0.045, atol=2e-3)
    assert_allclose(1000 * design_variance(5.0, 22_000, 5, 5, 29), 34.19 + 0.045, atol=6e-3)


def test_large_domain_matches_its_variance(seed):
    # k = 22,000, epsilon = 5: q = 149, t = 3 (K = 22,351 points, 15-bit reports)
    pgr = ProjectiveGeometryResponse(5.0, categories=[list(range(22_000))], random_state=seed)
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 22_000, size=30_000)
    reports = pgr.fit_transform(x[:, None])
    ch = pgr.channel_
    assert (ch.field_size, ch.dimension, ch.n_outputs, ch.bits_per_report) == (149, 3, 22_351, 15)
    est = ch.unbiased(ch.statistics(reports), x.shape[0])
    truth = np.bincount(x, minlength=22_000) / x.shape[0]
    err = np.sum((est - truth) ** 2)
    assert abs(err / np.sum(ch.variance(truth, x.shape[0])) - 1) < 0.05


def test_advisor_ranks_it_level_with_subset_selection():
    table = recommend_mechanism(22_000, 1000, 5.0)
    l2 = dict(zip(table["mechanism"], table["l2"], strict=True))
    assert abs(l2["projective-geometry"] / l2["subset-selection"] - 1) < 0.01
    bits = dict(zip(table["mechanism"], table["bits_per_report"], strict=True))
    assert bits["projective-geometry"] == 15


def test_hybrid_privatizer_builds_the_chosen_design():
    pgr = ProjectiveGeometryResponse(5.0, hybrid=True, categories=[list(range(22_000))])
    pgr.fit([[0]])
    ch = pgr.channel_
    assert (ch.field_size, ch.dimension, ch.n_blocks, ch.n_outputs) == (5, 5, 29, 29 * 781)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((1.0, 13, 4, 3, 1), "prime"),
        ((1.0, 13, 3, 1, 1), "dimension"),
        ((1.0, 14, 3, 3, 1), "n_blocks"),
        ((1.0, 20, 3, 2, 4), "n_blocks"),
        ((1.0, 100, 8191, 4, 1), "limit"),
    ],
)
def test_bad_parameters_are_named(args, match):
    with pytest.raises(ValueError, match=match):
        ProjectiveGeometryChannel(*args)

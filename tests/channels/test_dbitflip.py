"""dBitFlip: contract, the paper's channel and variance, privacy, sampling, bad inputs."""

import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skldp import DBitFlip
from skldp.channels import BitVectorModel, DBitFlipChannel, PackedBitReports, RAPPORChannel
from skldp.privacy import LDP, verify
from tests.channel_contract import ChannelContract, contract_fixture
from tests.conftest import simplex_point

SMALL = [
    DBitFlipChannel(eps, k, d)
    for k, d in [(2, 1), (2, 2), (3, 2), (5, 2), (6, 3)]
    for eps in (1e-3, 1.0, 50.0)
]

channel = contract_fixture(SMALL)


class TestDBitFlipContract(ChannelContract):
    pass


def _paper_matrix(k, d, eps):
    """Q(J, z | x) from the definition, as a dict output-bits -> row (spec 5.1-5.2)."""
    E = math.exp(eps / 2)
    t = E / (E + 1)
    Q = {}
    for J in itertools.combinations(range(k), d):
        for z in itertools.product((0, 1), repeat=d):
            out = np.zeros(2 * k, dtype=np.uint8)
            out[list(J)] = 1
            out[[k + j for j in J]] = z
            row = np.array(
                [
                    math.prod(t if zj == (x == j) else 1 - t for j, zj in zip(J, z, strict=True))
                    for x in range(k)
                ]
            )
            Q[int(out @ (1 << np.arange(2 * k)))] = row / math.comb(k, d)
    return Q


@pytest.mark.parametrize(("k", "d", "eps"), [(5, 2, 1.5), (4, 1, 1.0), (4, 4, 2.0), (6, 3, 0.3)])
def test_dense_matches_paper(k, d, eps):
    ch = DBitFlipChannel(eps, k, d)
    Q = ch.to_dense()
    paper = _paper_matrix(k, d, eps)
    assert np.count_nonzero(Q.sum(axis=0)) == len(paper) == math.comb(k, d) * 2**d
    for o, row in paper.items():
        assert_allclose(Q[:, o], row, rtol=1e-11)  # t on the grid, likelihoods via logs


def test_privacy_tight_for_two_or_more_buckets():
    # spec 5.5: exact enumeration at b = 5, d = 2, eps = 1.5 gives a worst ratio of e^eps
    for k, d, eps in [(5, 2, 1.5), (4, 4, 0.7), (6, 3, 3.0)]:
        ch = DBitFlipChannel(eps, k, d)
        assert verify(ch, LDP(eps)).passed
        assert not verify(ch, LDP(0.999 * eps)).passed
    one = DBitFlipChannel(2.0, 5, 1)  # d = 1: only one bucket's bit moves, eps/2
    assert verify(one, LDP(1.0)).passed
    assert not verify(one, LDP(0.999)).passed


def test_all_buckets_is_symmetric_unary_encoding():
    # d = b: every bucket sampled, bits as basic one-time RAPPOR (symmetric, e^(eps/2) per bit)
    k, eps = 5, 1.3
    ch = DBitFlipChannel(eps, k, k)
    Q = ch.to_dense()
    full = (1 << k) - 1  # the sampled mask is all ones
    cols = full + (np.arange(2**k) << k)
    # equal up to the two channels' own roundings of the bit probabilities onto the grid
    assert_allclose(Q[:, cols], RAPPORChannel(eps, k).to_dense(), rtol=1e-10)


def test_variance_is_the_papers_formula():
    # spec 5.8: b = 32, d = 4, eps = 2, n = 10^4: Var(h_v) = 7.3654e-4 + 7.0e-4 h_v given the
    # data; variance(p, n) is for people drawn from p, which adds (h_v - h_v^2) / n.
    b, d, eps, n = 32, 4, 2.0, 10_000
    ch = DBitFlipChannel(eps, b, d)
    h = simplex_point(b, seed=2)
    given_data = ch.variance(h, n) - (h - h**2) / n
    E = math.exp(eps / 2)
    formula = b / (n * d) * E / (E - 1) ** 2 + h * (b / d - 1) / n
    assert_allclose(given_data, formula, rtol=1e-9)  # t sits 2^-40 (relative) inside the bound
    assert round(b / (n * d) * E / (E - 1) ** 2, 8) == 7.3654e-4


def test_unbiased_and_variance_by_simulation(seed):
    # 2,000 repetitions at b = 12, d = 3, eps = 1.5, n = 300 (fixed data): the mean estimate
    # within 4 standard errors of the truth and the mean simulated variance within 10%.
    b, d, eps, n, reps = 12, 3, 1.5, 300, 2000
    ch = DBitFlipChannel(eps, b, d)
    x = np.repeat(np.arange(b), [60, 40, 40, 30, 30, 20, 20, 20, 10, 10, 10, 10])
    h = np.bincount(x, minlength=b) / n
    rng = np.random.default_rng(seed)
    est = np.empty((reps, b))
    for r in range(reps):
        est[r] = ch.unbiased(ch.statistics(ch.sample(x, rng)), n)
    var = ch.variance(h, n) - (h - h**2) / n
    assert np.abs((est.mean(axis=0) - h) / np.sqrt(var / reps)).max() < 4
    assert abs(est.var(axis=0, ddof=1).mean() / var.mean() - 1) < 0.10
    # a planted wrong channel (the budget of another epsilon) is far off
    wrong = DBitFlipChannel(1.0, b, d)
    est_wrong = wrong.unbiased(ch.statistics(ch.sample(np.repeat(x, 20), rng)), 20 * n)
    assert np.abs((est_wrong - h) / np.sqrt(var / 20)).max() > 5


def test_sampled_buckets_are_uniform_and_independent_of_the_value(seed):
    ch = DBitFlipChannel(1.0, 6, 3)
    n = 30_000
    for x in (0, 5):
        y = ch.sample(np.full(n, x), np.random.default_rng(seed + x))
        pairs = np.bincount((y[:, :6] @ (1 << np.arange(6))), minlength=64)
        subsets = [sum(1 << j for j in J) for J in itertools.combinations(range(6), 3)]
        expected = n / 20
        assert np.all(np.abs(pairs[subsets] - expected) < 5 * math.sqrt(expected))
        assert pairs.sum() == pairs[subsets].sum()


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (np.array([[1, 1, 0, 0, 0, 0]]), "exactly n_sampled"),
        (np.array([[1, 0, 0, 0, 1, 0]]), "did not sample"),
        (np.array([[0, 1, 0, 1, 0, 0]]), "did not sample"),
    ],
)
def test_malformed_reports_are_refused(bad, match):
    ch = DBitFlipChannel(1.0, 3, 1)
    with pytest.raises(ValueError, match=match):
        ch.statistics(bad)


@pytest.mark.parametrize(
    ("args", "match"),
    [((1.0, 3, 4), "n_sampled"), ((1.0, 3, 0), "n_sampled"), ((1.0, 1, 1), "n_inputs")],
)
def test_bad_channel_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        DBitFlipChannel(*args)


def test_privatizer():
    db = DBitFlip(epsilon=2.0, categories=[list("abcdef")], n_sampled=3, random_state=0)
    reports = db.fit_transform([[v] for v in "abcabf"])
    assert reports.shape == (6, 12)
    assert db.channel_ == DBitFlipChannel(2.0, 6, 3)
    assert db.bits_per_report == 3 * (3 + 1)
    capped = DBitFlip(epsilon=2.0, categories=[list("ab")], n_sampled=5).fit([["a"]])
    assert capped.channel_.n_sampled == 2
    with pytest.raises(ValueError, match="n_sampled"):
        DBitFlip(epsilon=1.0, categories=[list("ab")], n_sampled=0).fit([["a"]])


def test_em_model_is_the_generic_bit_vector_likelihood():
    # the (bucket, bit) model equals the generic model over the packed reports, O(n d) memory
    ch = DBitFlipChannel(1.5, 7, 3)
    rng = np.random.default_rng(0)
    reports = ch.sample(rng.integers(0, 7, 300), rng)
    model = ch.em_model(reports)
    generic = BitVectorModel(ch, PackedBitReports.from_bits(reports))
    p, v = simplex_point(7, seed=1), rng.random(300)
    assert_allclose(model.forward(p), generic.forward(p), rtol=1e-12)
    assert_allclose(model.adjoint(v), generic.adjoint(v), rtol=1e-12)
    assert_allclose(model.curvature_diagonal(v), generic.curvature_diagonal(v), rtol=1e-12)
    assert model.constant == pytest.approx(generic.constant, rel=1e-12)
    assert_allclose(model.statistics, ch.statistics(reports))
    half = ch.em_model(reports[:100]).merge(ch.em_model(reports[100:]))
    assert_allclose(half.forward(p), model.forward(p))

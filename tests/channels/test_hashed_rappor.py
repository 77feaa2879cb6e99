"""O-RAPPOR channels: the contract (with per-cohort bit-sum statistics), privacy, reductions."""

import math
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp._hashing import candidate_buckets, cohort_permutations
from skldp.channels import CohortRAPPORChannel, HashedRAPPORChannel, RAPPORChannel
from skldp.channels._unary import rappor_probabilities
from skldp.privacy import LDP, tight_epsilon_matrix, verify
from tests.channel_contract import (
    ChannelContract,
    OpenAlphabetContract,
    contract_fixture,
    open_alphabet_fixture,
)
from tests.conftest import em_step, simplex_point


def _hashed(S, k, C, h, seed=0):
    return candidate_buckets([f"v{i}" for i in range(S)], k, C, seed, n_hashes=h)


SHAPES = {
    "identity-S3-k3-C1-h1": (3, np.arange(3)[:, None, None]),
    "hash-S5-k4-C3-h2": (4, _hashed(5, 4, 3, 2)),
    "hash-S4-k3-C2-h1": (3, _hashed(4, 3, 2, 1, seed=3)),
}
SMALL = [(name, eps) for name in SHAPES for eps in (1e-3, 1.0, 50.0)]


channel = contract_fixture(
    [CohortRAPPORChannel(eps, *SHAPES[name]) for name, eps in SMALL],
    ids=[f"{name}-eps{eps:g}" for name, eps in SMALL],
)
open_channel = open_alphabet_fixture([HashedRAPPORChannel(1.5, 8, 2, 3, hash_seed=5)])


def test_contract_channels_have_full_rank_incidence():
    for name in SHAPES:
        ch = CohortRAPPORChannel(1.0, *SHAPES[name])
        assert np.linalg.matrix_rank(ch.incidence.toarray()) == ch.n_inputs


class TestHashedRAPPOROpenContract(OpenAlphabetContract):
    pass


def _stat_map(channel):
    return channel.to_dense() @ channel.output_statistics()


class TestCohortRAPPORContract(ChannelContract):
    # The statistics are bit sums per cohort (length C k), not the raw bit sums the generic
    # contract assumes for bit-vector channels; these three checks use the channel's own map
    # from each enumerated output to its statistics.
    def test_forward_matches_dense(self, channel):
        p = simplex_point(channel.n_inputs)
        assert_allclose(channel.forward(p), _stat_map(channel).T @ p, rtol=1e-12, atol=1e-15)

    def test_adjoint_matches_dense(self, channel):
        v = np.random.default_rng(1).standard_normal(channel.n_statistics)
        assert_allclose(channel.adjoint(v), _stat_map(channel) @ v, rtol=1e-10, atol=1e-12)

    def test_variance_matches_dense(self, channel):
        p = simplex_point(channel.n_inputs)
        n = 700
        base = channel.unbiased(np.zeros(channel.n_statistics), n)
        G = np.column_stack(
            [
                channel.unbiased(np.eye(channel.n_statistics)[j], n) - base
                for j in range(channel.n_statistics)
            ]
        )
        Q, S = channel.to_dense(), channel.output_statistics()
        py = Q.T @ p
        mean = S.T @ py
        cov = n * (S.T @ (S * py[:, None]) - np.outer(mean, mean))
        expected = np.einsum("ij,jk,ik->i", G, cov, G)
        assert_allclose(channel.variance(p, n), expected, rtol=1e-8, atol=1e-15)

    def test_statistics_are_per_cohort_bit_sums(self, channel):
        rng = np.random.default_rng(0)
        r = channel.sample(rng.integers(0, channel.n_inputs, 300), rng)
        c = channel.decode_cohorts(r)
        k = channel.n_bits
        expected = np.concatenate([r[c == j, :k].sum(axis=0) for j in range(channel.n_cohorts)])
        assert_array_equal(channel.statistics(r), expected)


def test_single_cohort_single_hash_identity_is_rappor():
    # Claim 18: C = 1, h = 1, k = S and the identity gives exactly basic one-time RAPPOR,
    # and the least-squares decoder is RAPPOR's empirical estimator (3.2).
    for eps in (0.3, 1.0, 4.0):
        ch = CohortRAPPORChannel(eps, 5, np.arange(5)[:, None, None])
        rr = RAPPORChannel(eps, 5)
        assert_allclose(ch.to_dense(), rr.to_dense(), rtol=1e-12)
        t = np.array([30, 12, 50, 7, 21])
        c = math.exp(eps / 2)
        closed = (t / 100) * (c + 1) / (c - 1) - 1 / (c - 1)
        assert_allclose(ch.unbiased(t, 100), rr.unbiased(t, 100), rtol=1e-12)
        assert_allclose(ch.unbiased(t, 100), closed, rtol=1e-9)


def test_single_cohort_permutation_is_permuted_rappor():
    perm = cohort_permutations(4, 1, 5)[0]
    ch = CohortRAPPORChannel(1.0, 4, perm[:, None, None])
    t = np.array([30, 12, 50, 7])
    assert_allclose(ch.unbiased(t, 100), RAPPORChannel(1.0, 4).unbiased(t[perm], 100), rtol=1e-12)


@pytest.mark.parametrize("h", [1, 2, 3])
@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_privacy_with_per_bit_budget_eps_over_h(h, eps):
    # Claim 2: keep probability e^(eps/2h) / (1 + e^(eps/2h)) makes O-RAPPOR eps-LDP.
    B = _hashed(5, 4, 2, h, seed=h)
    ch = CohortRAPPORChannel(eps, 4, B)
    assert_allclose(ch.theta, math.exp(eps / (2 * h)) / (1 + math.exp(eps / (2 * h))), rtol=1e-9)
    assert verify(ch, LDP(eps)).passed
    E = tight_epsilon_matrix(ch)
    assert E.max() <= eps
    # Per cohort as well: the cohort's own channel over its k bits.
    Q = ch.to_dense()
    c = ch.decode_cohorts(ch.output_bits())
    for j in range(ch.n_cohorts):
        assert verify(ch.n_cohorts * Q[:, c == j], LDP(eps)).passed


def test_per_bit_eps_over_two_with_several_hashes_is_not_private():
    # Negative test (claim 2): per-bit budget eps/2 with h = 2 disjoint bits reaches e^(2 eps).
    eps, h = 1.0, 2
    B = np.array([[[0, 1]], [[2, 3]]])  # two inputs whose filters share no bit
    theta, psi = rappor_probabilities(eps)  # the h = 1 calibration
    ratio = (theta * (1 - psi) / (psi * (1 - theta))) ** h
    assert_allclose(math.log(ratio), h * eps, rtol=1e-9)
    ch = CohortRAPPORChannel(eps, 4, B)  # the calibrated channel keeps eps
    assert_allclose(tight_epsilon_matrix(ch)[0, 1], eps, rtol=1e-9)


def test_duplicate_hash_positions_set_one_bit():
    B = np.array([[[1, 1]], [[0, 2]]])
    ch = CohortRAPPORChannel(1.0, 3, B)
    assert_array_equal(ch.incidence.toarray()[:, 0], [0, 1, 0])
    assert verify(ch, LDP(1.0)).passed


def test_indistinguishable_groups_ignore_hash_order():
    B = np.array([[[0, 1]], [[1, 0]], [[0, 2]], [[2, 2]], [[2, 2]]])
    groups = CohortRAPPORChannel(1.0, 3, B).indistinguishable_groups()
    assert [g.tolist() for g in groups] == [[0, 1], [3, 4]]


def test_reports_with_an_impossible_cohort_are_rejected():
    ch = CohortRAPPORChannel(1.0, 3, _hashed(4, 3, 3, 1))
    bad = np.zeros((1, ch.width), dtype=np.uint8)
    bad[0, 3:] = 1  # cohort 3 of 3
    with pytest.raises(ValueError, match="cohort"):
        ch.statistics(bad)


class TestOpenChannel:
    def test_restrict_matches_sampling(self):
        cands = np.array(["red", "green", "blue", "cyan"], dtype=object)
        ch = HashedRAPPORChannel(1.5, 6, 2, 3, hash_seed=2)
        fin = ch.restrict(cands)
        assert fin.width == ch.width == 8 and fin.n_statistics == 18
        p = simplex_point(4)
        rng = np.random.default_rng(0)
        n = 30000
        x = rng.choice(4, n, p=p)
        reports = ch.sample_values(cands[x], np.random.default_rng(1))
        assert_array_equal(reports, fin.sample(x, np.random.default_rng(1)))
        stats = ch.statistics(reports)
        m = fin.forward(p)
        assert np.all(np.abs(stats - n * m) <= 5 * np.sqrt(n * m * (1 - m)))

    def test_identity_and_errors(self):
        ch = HashedRAPPORChannel(1.0, 8, 1, 4)
        assert pickle.loads(pickle.dumps(ch)) == ch
        assert ch.bits_per_report == 10 and ch.guarantee() == LDP(1.0)
        with pytest.raises(AttributeError, match="restrict"):
            ch.to_dense()


def test_em_keeps_the_relative_likelihoods_between_steps(monkeypatch):
    # The relative likelihoods do not depend on p: kept between EM steps when small, rebuilt
    # chunk by chunk otherwise, with the same steps to the last bit either way; the kept copy
    # lives in the likelihood model (so it goes with it), never in the channel.
    import gc
    import weakref

    from skldp.channels import _bits

    rng = np.random.default_rng(4)
    ch = CohortRAPPORChannel(1.0, 16, rng.integers(0, 16, size=(40, 4, 2)))
    reports = ch.sample(rng.integers(0, 40, 3000), rng)
    p = rng.dirichlet(np.ones(40))
    before = dict(vars(ch))
    model = ch.em_model(reports)
    kept = [em_step(model, p), em_step(model, p / 2 + 1 / 80)]
    assert model._chunks is not None
    assert vars(ch) == before
    monkeypatch.setattr(_bits, "_EM_CACHE_BYTES", 0)
    fresh = ch.em_model(reports)
    rebuilt = [em_step(fresh, p), em_step(fresh, p / 2 + 1 / 80)]
    assert fresh._chunks is None
    for (a, la), (b, lb) in zip(kept, rebuilt, strict=True):
        assert_array_equal(a, b)
        assert la == lb
    assert pickle.loads(pickle.dumps(model))._chunks is None  # pickles without the cache
    gone = weakref.ref(model)
    del model
    gc.collect()
    assert gone() is None

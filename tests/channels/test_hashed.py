"""O-RR channels: the contract, the paper's formulas, privacy per cohort, least squares."""

import math
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp import _least_squares
from skldp._hashing import candidate_buckets, cohort_permutations
from skldp.channels import CohortRRChannel, HashedRRChannel, RandomizedResponseChannel, _hashed
from skldp.privacy import LDP, tight_epsilon_matrix, verify
from tests.channel_contract import (
    ChannelContract,
    OpenAlphabetContract,
    contract_fixture,
    open_alphabet_fixture,
)
from tests.conftest import simplex_point


def _permuted(S, k, C, seed=0):
    return (cohort_permutations(S, C, seed) % k).T


def _hashed_full_rank(S, k, C, seed=0):
    B = candidate_buckets([f"v{i}" for i in range(S)], k, C, seed)[:, :, 0]
    ch = CohortRRChannel(1.0, k, B)
    assert np.linalg.matrix_rank(ch.incidence.toarray()) == S
    return B


SHAPES = {
    "perm-S3-k3-C2": (3, _permuted(3, 3, 2)),
    "hash-S5-k3-C4": (3, _hashed_full_rank(5, 3, 4)),
    "identity-S2-k2-C1": (2, np.arange(2)[:, None]),
    "hash-S17-k4-C8": (4, _hashed_full_rank(17, 4, 8, seed=1)),
}
SMALL = [(name, eps) for name in SHAPES for eps in (1e-3, 1.0, 50.0)]


channel = contract_fixture(
    [CohortRRChannel(eps, *SHAPES[name]) for name, eps in SMALL],
    ids=[f"{name}-eps{eps:g}" for name, eps in SMALL],
)
open_channel = open_alphabet_fixture([HashedRRChannel(1.5, 4, 3, hash_seed=11)])


class TestHashedRROpenContract(OpenAlphabetContract):
    pass


class TestCohortRRContract(ChannelContract):
    pass


@pytest.mark.parametrize("eps", [1e-3, 0.7, 3.0])
def test_dense_matches_paper_formula(eps):
    # Q_ORR = ((e - 1) H^T + 1 1^T) / (C (e + k - 1))  (spec 3.6).
    S, k, C = 9, 4, 3
    B = candidate_buckets([f"w{i}" for i in range(S)], k, C, 2)[:, :, 0]
    ch = CohortRRChannel(eps, k, B)
    H = np.zeros((C * k, S))
    H[np.arange(C)[None, :] * k + B, np.arange(S)[:, None]] = 1
    e = math.exp(eps)
    assert_allclose(ch.to_dense(), ((e - 1) * H.T + 1) / (C * (e + k - 1)), rtol=1e-13, atol=2**-53)
    assert_array_equal(ch.incidence.toarray(), H)
    assert_array_equal(H.sum(axis=0), C)  # claim 19: C ones per column


@pytest.mark.parametrize("eps", [1e-3, 1.0, 5.0, 50.0])
@pytest.mark.parametrize("C", [1, 3, 7])
def test_privacy_of_each_cohort_and_of_the_whole(eps, C):
    S, k = 12, 5
    B = candidate_buckets([f"w{i}" for i in range(S)], k, C, 4)[:, :, 0]
    ch = CohortRRChannel(eps, k, B)
    assert verify(ch, LDP(eps)).passed
    for c in range(C):
        Qc = ch.cohort_dense(c)
        assert_allclose(Qc.sum(axis=1), 1.0, atol=1e-12)
        assert verify(Qc, LDP(eps)).passed
        assert_allclose(Qc, C * ch.to_dense()[:, c * k : (c + 1) * k], rtol=1e-14)
    # Tight exactly where some cohort separates the two inputs, 0 where none does (at eps = 50
    # the sampled keep probability is 1 - 2**-53 and the ratio stays below e^eps).
    E = tight_epsilon_matrix(ch)
    if eps > 30:
        assert np.all(eps >= E)
        return
    separated = (B[:, None, :] != B[None, :, :]).any(axis=2)
    assert_allclose(E[separated], eps, rtol=1e-9)
    assert np.all(E[~separated] == 0)
    assert not verify(ch, LDP(0.99 * eps)).passed or not separated.any()


def test_cohort_scaled_entries_keep_the_ratio_in_floating_point():
    for eps in (1e-9, 0.3, 1.0, 20.0, 700.0):
        for k in (2, 3, 1000):
            for C in (1, 3, 7, 100, 1000):
                truth, keep, other = _hashed.cohort_rr_probabilities(eps, k, C)
                assert keep / C <= math.exp(eps) * (other / C)
                assert keep <= math.exp(eps) * other
                # the sampler's threshold is on the grid of uniform draws: sampled as stated
                assert truth / 2.0**-53 == math.floor(truth / 2.0**-53)
                assert other == (1.0 - truth) / k and keep == truth + other


def test_single_cohort_identity_is_krr():
    # Claim 18: C = 1, k = S, identity hash gives exactly k-RR and its estimator.
    k, eps = 6, 1.3
    ch = CohortRRChannel(eps, k, np.arange(k)[:, None])
    rr = RandomizedResponseChannel(eps, k)
    assert_allclose(ch.to_dense(), rr.to_dense(), rtol=0, atol=0)
    N = np.array([40, 3, 0, 20, 7, 30])
    assert_allclose(ch.unbiased(N, N.sum()), rr.unbiased(N, N.sum()), rtol=1e-12)


def test_single_cohort_permutation_is_permuted_krr():
    S, eps = 7, 0.9
    perm = cohort_permutations(S, 1, 3)[0]
    ch = CohortRRChannel(eps, S, perm[:, None])
    rr = RandomizedResponseChannel(eps, S)
    Q = ch.to_dense()
    assert_allclose(Q[:, perm], rr.to_dense(), rtol=0, atol=0)
    N = np.array([5, 9, 1, 0, 12, 3, 8])
    assert_allclose(ch.unbiased(N, N.sum()), rr.unbiased(N[perm], N.sum()), rtol=1e-12)


def test_permutations_with_k_equal_S_average_the_cohort_estimates():
    # Claim 19: with k = S and permutations, H^T H = C I and the least-squares estimate is
    # the mean of the per-cohort k-RR estimates with global normalization (C N_c / n).
    S, C, eps = 6, 4, 1.1
    perms = cohort_permutations(S, C, 8)
    ch = CohortRRChannel(eps, S, perms.T)
    H = ch.incidence.toarray()
    assert_array_equal(H.T @ H, C * np.eye(S))
    rng = np.random.default_rng(0)
    N = rng.integers(0, 50, C * S)
    n = N.sum()
    rr = RandomizedResponseChannel(eps, S)
    per_cohort = [rr.unbiased(C * N[c * S : (c + 1) * S][perms[c]], n) for c in range(C)]
    assert_allclose(ch.unbiased(N, n), np.mean(per_cohort, axis=0), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("S, k, C", [(6, 3, 4), (30, 3, 2), (8, 8, 1), (12, 4, 3)])
def test_least_squares_is_the_minimum_norm_solution(S, k, C, monkeypatch):
    B = candidate_buckets([f"z{i}" for i in range(S)], k, C, 1)[:, :, 0]
    ch = CohortRRChannel(2.0, k, B)
    rng = np.random.default_rng(S)
    N = rng.integers(0, 100, C * k)
    b = ch.least_squares_target(N, N.sum())
    ref = np.linalg.lstsq(ch.incidence.toarray(), b, rcond=None)[0]
    assert_allclose(ch.unbiased(N, N.sum()), ref, rtol=1e-9, atol=1e-9)
    # The iterative path (large candidate sets) reaches the same point.
    monkeypatch.setattr(_least_squares, "DIRECT_SOLVE_LIMIT", 0)
    fresh = CohortRRChannel(2.0, k, B)
    assert_allclose(fresh.unbiased(N, N.sum()), ref, rtol=1e-6, atol=1e-6)


def test_indistinguishable_groups():
    B = np.array([[0, 1], [2, 1], [0, 1], [1, 0], [2, 1], [0, 0]])
    groups = CohortRRChannel(1.0, 3, B).indistinguishable_groups()
    assert [g.tolist() for g in groups] == [[0, 2], [1, 4]]
    assert CohortRRChannel(1.0, 3, B[[0, 1, 3]]).indistinguishable_groups() == []


def test_least_squares_splits_indistinguishable_mass_evenly():
    B = np.array([[0, 1], [2, 1], [0, 1], [1, 0]])
    ch = CohortRRChannel(1.0, 3, B)
    p = np.array([0.5, 0.2, 0.0, 0.3])
    est = ch.unbiased(1000 * ch.forward(p), 1000)
    assert_allclose(est, [0.25, 0.2, 0.25, 0.3], atol=1e-10)


def test_bad_parameters():
    with pytest.raises(ValueError, match="n_buckets"):
        CohortRRChannel(1.0, 1, np.zeros((3, 1), int))
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        CohortRRChannel(1.0, 3, np.array([[0], [3]]))
    with pytest.raises(ValueError, match="2-D"):
        CohortRRChannel(1.0, 3, np.array([0, 1]))
    with pytest.raises(ValueError, match="cohort"):
        CohortRRChannel(1.0, 3, np.array([[0], [1]])).cohort_dense(1)


class TestOpenChannel:
    def test_restrict_matches_sampling(self):
        # Reports of raw strings follow the restricted channel's forward map (5 SE).
        cands = np.array(["red", "green", "blue", "cyan", "teal"], dtype=object)
        ch = HashedRRChannel(1.5, 4, 3, hash_seed=11)
        fin = ch.restrict(cands)
        assert fin.n_inputs == 5 and fin.n_outputs == ch.n_outputs == 12
        p = simplex_point(5)
        rng = np.random.default_rng(0)
        n = 40000
        values = cands[rng.choice(5, n, p=p)]
        stats = ch.statistics(ch.sample_values(values, np.random.default_rng(1)))
        m = fin.forward(p)
        assert np.all(np.abs(stats - n * m) <= 5 * np.sqrt(n * m * (1 - m)))
        # ... and sampling indices through the restricted channel gives the same law.
        x = np.array([list(cands).index(v) for v in values])
        assert_array_equal(
            fin.sample(x, np.random.default_rng(1)),
            ch.sample_values(values, np.random.default_rng(1)),
        )

    @pytest.mark.parametrize("method", ["forward", "to_dense", "unbiased", "posterior", "sample"])
    def test_open_alphabet_has_no_input_set(self, method):
        ch = HashedRRChannel(1.0, 4, 2)
        args = {
            "forward": (np.ones(2),),
            "to_dense": (),
            "unbiased": (np.ones(8), 8),
            "posterior": (np.zeros(2, int), np.ones(2) / 2),
            "sample": (np.zeros(2, int), None),
        }[method]
        with pytest.raises(AttributeError, match="restrict"):
            getattr(ch, method)(*args)

    def test_identity_pickle_and_guarantee(self):
        ch = HashedRRChannel(1.0, 4, 2, hash_seed=3)
        assert pickle.loads(pickle.dumps(ch)) == ch
        assert ch != HashedRRChannel(1.0, 4, 2, hash_seed=4)
        assert ch.guarantee() == LDP(1.0)
        assert ch.bits_per_report == 3
        fin = ch.restrict(["a", "b"])
        assert pickle.loads(pickle.dumps(fin)) == fin
        assert fin == ch.restrict(["a", "b"]) and fin != ch.restrict(["b", "a"])


def test_variance_on_the_iterative_path_and_beyond_the_limit(monkeypatch):
    S, k, C = 12, 4, 3
    B = candidate_buckets([f"z{i}" for i in range(S)], k, C, 1)[:, :, 0]
    p = simplex_point(S)
    exact = CohortRRChannel(1.0, k, B).variance(p, 100)
    monkeypatch.setattr(_least_squares, "DIRECT_SOLVE_LIMIT", 0)
    assert_allclose(CohortRRChannel(1.0, k, B).variance(p, 100), exact, rtol=1e-10)
    monkeypatch.setattr(_least_squares, "VARIANCE_LIMIT", 5)
    with pytest.warns(RuntimeWarning, match="pseudo-inverse"):
        assert np.all(np.isnan(CohortRRChannel(1.0, k, B).variance(p, 100)))


@pytest.mark.parametrize("S, k, C", [(40, 4, 8), (33, 8, 4), (25, 5, 5), (60, 3, 6)])
def test_cholesky_path_with_known_null_space_is_the_minimum_norm_solution(S, k, C):
    # Wide H (C k < S or near-square): H H^T is singular along the cohort differences; the
    # factorization with those directions added gives the same point as an SVD.
    B = candidate_buckets([f"q{i}" for i in range(S)], k, C, 3)[:, :, 0]
    ch = CohortRRChannel(1.5, k, B)
    solver = ch._solver()
    assert solver.direct
    N = np.random.default_rng(S).integers(0, 60, C * k)
    b = ch.least_squares_target(N, N.sum())
    ref = np.linalg.lstsq(ch.incidence.toarray(), b, rcond=None)[0]
    assert_allclose(ch.unbiased(N, N.sum()), ref, rtol=1e-9, atol=1e-10)
    assert_allclose(solver.pseudo_inverse(), np.linalg.pinv(ch.incidence.toarray()), atol=1e-10)

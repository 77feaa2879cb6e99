"""Checkable claims of Xiong et al. (WWW 2022), compressive privatization (spec section 7).

Claim numbers refer to section 7 of ``specs/compressive-sensing-ldp.md``. Monte Carlo checks
use fixed seeds and tolerances from the exact variance (4 standard errors) or the paper's
bound; behavioural claims use the margins the spec derives from its own runs.
"""

import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.linalg import hadamard
from scipy.optimize import linprog

from skldp.channels import (
    HadamardResponseChannel,
    OneBitCompressiveChannel,
    OneBitHadamardChannel,
    RecursiveCompressiveChannel,
    SymmetricCompressiveChannel,
)
from skldp.estimators import SparseEstimator
from skldp.estimators._sparse import l1_simplex_projection, sparse_simplex_projection
from skldp.privacy import LDP, tight_epsilon_matrix, verify
from skldp.projection import project_simplex


def c_of(eps):
    return (math.exp(eps) + 1) / (math.exp(eps) - 1)


def dirichlet_sparse(k, s, seed):
    rng = np.random.default_rng(seed)
    p = np.zeros(k)
    support = rng.choice(k, size=s, replace=False)
    p[support] = rng.dirichlet(np.ones(s)) * 0.9 + 0.1 / s
    return p, np.sort(support)


def uniform_sparse(k, s):
    p = np.zeros(k)
    p[:s] = 1.0 / s
    return p


# -- mechanism identities and privacy (claims 1-10) ------------------------------------------------
@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_claim1_one_bit_moments(eps):
    k, m = 40, 15
    ch = OneBitCompressiveChannel(eps, k, m, seed=2)
    A = ch.operator.to_dense().astype(float)
    p = np.random.default_rng(0).dirichlet(np.ones(k))
    Q = ch.to_dense()
    t = m * (p @ Q[:, 1::2])  # P(Y = 1 | group j)
    assert_allclose(ch.debias, c_of(eps), rtol=1e-12)
    assert_allclose(ch.debias * (2 * t - 1), A @ p, atol=1e-12)
    assert_allclose(t, 0.5 + A @ p / (2 * c_of(eps)), atol=1e-13)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_claim2_one_bit_privacy_is_tight(eps):
    ch = OneBitCompressiveChannel(eps, 12, 9, seed=1)
    assert verify(ch, LDP(eps)).passed
    E = tight_epsilon_matrix(ch)
    A = ch.operator.to_dense()
    differ = np.any(A[:, :, None] != A[:, None, :], axis=0)  # pairs with a row of both signs
    assert_allclose(E[differ], eps, rtol=1e-9)
    assert not verify(ch, LDP(0.999 * eps)).passed


def _general_symmetric_law(A, eps):
    """Q(y|x) of eq. (17) for any +-1 matrix A (m x k): rows y, columns x."""
    m = A.shape[0]
    e = math.exp(eps)
    n_x = (A > 0).sum(axis=0)
    Z = n_x * e + m - n_x
    return np.where(A > 0, e, 1.0) / Z, n_x, Z


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_claim3_symmetric_output_law_eq18_eq19(eps):
    rng = np.random.default_rng(3)
    m, k = 40, 30
    A = rng.choice([-1.0, 1.0], size=(m, k))
    Q, _n_x, Z = _general_symmetric_law(A, eps)
    assert_allclose(Q.sum(axis=0), 1.0, atol=1e-14)
    e, c = math.exp(eps), c_of(eps)
    p = rng.dirichlet(np.ones(k))
    q = Q @ p
    D = np.diag(1.0 / Z)
    J = np.ones((m, k))
    assert_allclose(q, ((e - 1) / 2 * A + (e + 1) / 2 * J) @ D @ p, atol=1e-14)
    Dp = np.diag(m * (e + 1) / 2 / Z)
    lhs = c * (math.sqrt(m) * q - 1 / math.sqrt(m))
    rhs = A @ Dp @ p / math.sqrt(m) + c / math.sqrt(m) * J @ (Dp - np.eye(k)) @ p
    assert_allclose(lhs, rhs, atol=1e-12)
    # Algorithm 2's printed step 6 ("- 1") does not give the identity: every entry is off by
    # c (1 - 1/sqrt(m)), a residual of norm about c sqrt(m).
    literal = c * (math.sqrt(m) * q - 1)
    assert_allclose(literal - rhs, -c * (1 - 1 / math.sqrt(m)), rtol=1e-12)
    assert np.linalg.norm(literal - rhs) > 0.5 * c * math.sqrt(m)


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_claim3_4_balanced_channel_matches_eq17_and_is_exactly_eps(eps):
    m, k = 24, 10
    ch = SymmetricCompressiveChannel(eps, k, m, seed=4)
    A = ch.full_matrix().astype(float)
    assert_array_equal((A > 0).sum(axis=0), m // 2)
    Q, _, _ = _general_symmetric_law(A, eps)
    assert_allclose(ch.to_dense(), Q.T, rtol=1e-12, atol=1e-15)
    e = math.exp(eps)
    assert_allclose(
        np.unique(np.round(ch.to_dense(), 15)),
        [2 / (m * (e + 1)), 2 * e / (m * (e + 1))],
        rtol=1e-12,
    )
    p = np.random.default_rng(1).dirichlet(np.ones(k))
    q = ch.forward(p)
    # eq. (19) with D' = I and e1 = 0; the channel's folded measurement is
    # z = c m (q_j - q_{j+m/2}) / 2.
    assert_allclose(
        c_of(eps) * (math.sqrt(m) * q - 1 / math.sqrt(m)), A @ p / math.sqrt(m), atol=1e-12
    )
    assert_allclose(ch.measurements(1000 * q, 1000), ch.operator.to_dense() @ p, atol=1e-12)
    E = tight_epsilon_matrix(ch)
    assert_allclose(E[~np.eye(k, dtype=bool)].max(), eps, rtol=1e-9)
    assert verify(ch, LDP(eps)).passed


def test_claim5_6_lemmas_3_1_and_3_2_for_unbalanced_matrices():
    rng = np.random.default_rng(5)
    m, k, eps = 40, 25, 0.7
    for _ in range(5):
        A = rng.choice([-1.0, 1.0], size=(m, k))
        Q, n_x, Z = _general_symmetric_law(A, eps)
        beta = np.max(np.abs(n_x - m / 2)) / (m / 2)
        realized = np.max(tight_epsilon_matrix(Q.T))
        assert realized <= eps + 2 * beta + 1e-12
        assert_allclose(realized, eps + math.log(Z.max() / Z.min()), rtol=1e-9)
        e = math.exp(eps)
        d_prime = m * (e + 1) / 2 / Z
        p = rng.dirichlet(np.ones(k))
        e1 = c_of(eps) / math.sqrt(m) * np.ones((m, k)) @ ((d_prime - 1) * p)
        assert_allclose(np.linalg.norm(e1), c_of(eps) * abs(np.sum((d_prime - 1) * p)), rtol=1e-12)
        if beta < 0.5:
            assert np.linalg.norm(e1) <= beta / (1 - beta) + 1e-12
        assert np.max(1 / d_prime) <= 1 + beta * math.tanh(eps / 2) + 1e-12


def _hadamard_kron_expectation(ch, p):
    """E[q_hat] of eq. (23) computed from the dense channel, no sampling."""
    L, m = ch.n_blocks, ch.n_measurements
    Q = ch.to_dense().reshape(ch.n_inputs, m, L, 2)
    # E[Q_hat_j] in R^L: sum over messages of (+1 or -1) e_l times its probability (group j given).
    EQ = m * np.einsum("x,xjl->jl", p, Q[..., 1] - Q[..., 0])
    H = hadamard(L) if L > 1 else np.ones((1, 1))
    return ch.debias * (EQ @ H.T).T.reshape(-1)  # row t m + j


@pytest.mark.parametrize("L", [1, 2, 4])
def test_claim7_recursive_identities(L):
    eps, k, m = 2.0, 23, 6
    ch = RecursiveCompressiveChannel(eps, k, m, n_blocks=L, seed=7)
    e = math.exp(eps)
    Q = ch.to_dense()
    assert_allclose(Q.sum(axis=1), 1.0, atol=1e-14)
    assert_allclose(np.max(tight_epsilon_matrix(ch)), eps, rtol=1e-9)
    assert_allclose(ch.debias, (e + 2 * L - 1) / (e - 1), rtol=1e-12)
    K = ch.padded_size
    A2 = ch.operator.inner.to_dense().astype(float)
    H = hadamard(L) if L > 1 else np.ones((1, 1))
    P = np.zeros((K, k))
    P[ch.permutation, np.arange(k)] = 1.0
    p = np.random.default_rng(0).dirichlet(np.ones(k))
    assert_allclose(_hadamard_kron_expectation(ch, p), np.kron(H, A2) @ P @ p, atol=1e-12)
    # The decoupled form used for recovery: (I_L kron A2) P p.
    assert_allclose(
        ch.measurements(1000 * ch.forward(p), 1000), np.kron(np.eye(L), A2) @ P @ p, atol=1e-12
    )


def test_claim8_recursive_with_one_block_is_one_bit():
    eps, k, m = 0.8, 20, 9
    rcp = RecursiveCompressiveChannel(eps, k, m, n_blocks=1, seed=5)
    A = rcp.operator.to_dense()  # A2 P
    Q = rcp.to_dense()
    keep = math.exp(eps) / (math.exp(eps) + 1)
    expected = np.empty((k, 2 * m))
    expected[:, 1::2] = np.where(A.T > 0, keep, 1 - keep) / m
    expected[:, 0::2] = np.where(A.T > 0, 1 - keep, keep) / m
    assert_allclose(Q, expected, rtol=1e-14)
    one_bit = OneBitCompressiveChannel(eps, k, m, seed=5)
    assert (rcp.keep, rcp.other, rcp.debias) == (one_bit.keep, one_bit.other, one_bit.debias)
    # Same statistics give the estimator q_j = c (2 t_j - 1) of one-bit CP.
    stats = rcp.sample_statistics(np.full(k, 1 / k), 900, np.random.default_rng(0))
    t = stats[1::2] / (stats[0::2] + stats[1::2])
    system = rcp.sparse_measurements(stats, 900)
    assert_allclose(system.values, rcp.debias * (2 * t - 1), rtol=1e-12)


def test_claim9_communication():
    assert OneBitCompressiveChannel(1.0, 10**4, 500).bits_per_report == 1
    assert SymmetricCompressiveChannel(1.0, 10**4, 500).bits_per_report == 9
    assert [
        RecursiveCompressiveChannel(3.0, 10**4, 50, n_blocks=L).bits_per_report
        for L in (1, 2, 4, 8)
    ] == [1, 2, 3, 4]
    assert OneBitHadamardChannel(1.0, 10**4).bits_per_report == 1
    assert OneBitHadamardChannel(1.0, 10**4).n_groups == 16384
    assert OneBitHadamardChannel(1.0, 16).n_groups == 32  # smallest power of two larger than k


def test_claim10_one_bit_hadamard_identity_and_estimator():
    eps, k = 1.0, 11
    ch = OneBitHadamardChannel(eps, k)
    K = ch.n_groups
    H = hadamard(K)
    p = np.random.default_rng(2).dirichlet(np.ones(k))
    t = K * (p @ ch.to_dense()[:, 1::2])
    p_pad = np.r_[p, np.zeros(K - k)]
    assert_allclose(ch.debias * (2 * t - 1), H @ p_pad, atol=1e-12)
    stats = ch.sample_statistics(p, 50 * K, np.random.default_rng(3))
    t_hat = stats[1::2] / (stats[0::2] + stats[1::2])
    closed = ch.debias / K * H.T @ (2 * t_hat - 1)
    est = SparseEstimator(method="inverse", projection="simplex")._estimate(ch, stats, 50 * K)
    assert_allclose(est["recovered_"], closed[:k], atol=1e-12)


# -- Monte Carlo bounds (claims 11-15) and unbiasedness of the measurements ----------------------
def test_measurement_vector_is_unbiased():
    eps, k, m, n, reps = 1.0, 30, 12, 600, 3000
    ch = OneBitCompressiveChannel(eps, k, m, seed=9)
    p = np.random.default_rng(0).dirichlet(np.ones(k))
    rng = np.random.default_rng(1)
    A = ch.operator.to_dense().astype(float)
    values = np.array(
        [ch.sparse_measurements(ch.sample_statistics(p, n, rng), n).values for _ in range(reps)]
    )
    t = 0.5 + A @ p / (2 * ch.debias)
    sd = 2 * ch.debias * np.sqrt(t * (1 - t) / (n / m)) / math.sqrt(reps)
    assert np.all(np.abs(values.mean(axis=0) - A @ p) <= 4 * sd)
    # Per-person sampling gives the same law: the mean of the affine vector is A p.
    x = rng.choice(k, size=(200, n), p=p)
    z = np.array([ch.measurements(ch.statistics(ch.sample(row, rng)), n) for row in x])
    assert np.all(
        np.abs(z.mean(axis=0) - A @ p) <= 4 * 2 * ch.debias * math.sqrt(m / n) / math.sqrt(200)
    )


def test_claims11_12_one_bit_error_of_group_means():
    eps, k, m, n, reps = 1.0, 50, 20, 2000, 2000
    ch = OneBitCompressiveChannel(eps, k, m, seed=1)
    p = np.random.default_rng(4).dirichlet(np.ones(k))
    A = ch.operator.to_dense().astype(float)
    t = 0.5 + A @ p / (2 * ch.debias)
    rng = np.random.default_rng(5)
    sq, dist = [], []
    for _ in range(reps):
        stats = ch.sample_statistics(p, n, rng)
        t_hat = stats[1::2] / (n / m)
        sq.append(np.sum((t_hat - t) ** 2))
        y = ch.debias / math.sqrt(m) * (2 * t_hat - 1)
        dist.append(np.linalg.norm(y - A @ p / math.sqrt(m)))
    exact = np.sum(t * (1 - t) / (n / m))
    assert abs(np.mean(sq) - exact) <= 4 * np.std(sq) / math.sqrt(reps)
    assert exact <= m**2 / (4 * n)
    assert np.mean(dist) <= ch.debias * math.sqrt(m / n)


def test_claim13_symmetric_noise_bound():
    eps, k, m, n, reps = 1.0, 40, 30, 3000, 1000
    ch = SymmetricCompressiveChannel(eps, k, m, seed=2)
    p = np.random.default_rng(6).dirichlet(np.ones(k))
    q = ch.forward(p)
    rng = np.random.default_rng(7)
    norms = [
        np.linalg.norm(math.sqrt(m) * ch.debias * (ch.sample_statistics(p, n, rng) / n - q))
        for _ in range(reps)
    ]
    assert np.mean(norms) <= ch.debias * math.sqrt(m / n)


def test_claim14_recursive_variance_bound():
    eps, k, m, n, L, reps = 3.0, 64, 10, 4000, 4, 800
    ch = RecursiveCompressiveChannel(eps, k, m, n_blocks=L, seed=3)
    p = np.random.default_rng(8).dirichlet(np.ones(k))
    H = hadamard(L)
    q = _hadamard_kron_expectation(ch, p)
    rng = np.random.default_rng(9)
    sq = []
    for _ in range(reps):
        z = ch.sparse_measurements(ch.sample_statistics(p, n, rng), n).values.reshape(L, m)
        sq.append((H @ z).reshape(-1) - q)
    sq = np.array(sq)
    e = math.exp(eps)
    bound = (m / n) * ((e + 2 * L - 1) / (e - 1)) ** 2
    assert np.all(np.mean(sq**2, axis=0) <= bound * 1.2)  # ~4 standard errors at 800 runs
    assert np.mean(np.linalg.norm(sq, axis=1)) / math.sqrt(m * L) <= math.sqrt(m / n) * (
        e + 2 * L - 1
    ) / (e - 1)


def test_claim15_lemma_4_1_permutation_spreads_support():
    K, s, L, beta, trials = 1024, 64, 4, 1.0, 400
    hits = 0
    for seed in range(trials):
        perm = RecursiveCompressiveChannel._public_permutation(seed, K)
        counts = np.bincount(perm[:s] // (K // L), minlength=L)
        hits += counts.max() >= (1 + beta) * s / L
    bound = L * math.exp(-min(beta**2, beta) * s / (4 * L))
    assert hits / trials <= bound
    b = np.linspace(1e-4, 20, 2000)
    assert np.all(b - (1 + b) * np.log1p(b) <= -0.25 * np.minimum(b**2, b) + 1e-12)


# -- projections (claims 16-19) --------------------------------------------------------------------
def test_claim16_simplex_projection():
    rng = np.random.default_rng(0)
    for _ in range(20):
        v = rng.standard_normal(12)
        q = project_simplex(v)
        assert q.min() >= 0 and abs(q.sum() - 1) < 1e-12
        assert_allclose(project_simplex(q), q, atol=1e-14)
        p = rng.dirichlet(np.ones(12))
        assert np.linalg.norm(q - p) <= np.linalg.norm(v - p) + 1e-12


def test_claim17_l1_projection_is_optimal():
    rng = np.random.default_rng(1)
    k = 8
    for _ in range(10):
        v = rng.standard_normal(k) * 0.5 + 0.1
        q = l1_simplex_projection(v)
        value = np.sum(np.maximum(-v, 0)) + abs(np.sum(np.maximum(v, 0)) - 1)
        assert_allclose(np.abs(q - v).sum(), value, atol=1e-12)
        # LP: min sum u s.t. -u <= q - v <= u, q in simplex.
        c = np.r_[np.zeros(k), np.ones(k)]
        eye = np.eye(k)
        res = linprog(
            c,
            A_ub=np.block([[eye, -eye], [-eye, -eye]]),
            b_ub=np.r_[v, -v],
            A_eq=np.r_[np.ones(k), np.zeros(k)][None],
            b_eq=[1],
            bounds=[(0, None)] * (2 * k),
        )
        assert_allclose(res.fun, value, atol=1e-8)
        p = rng.dirichlet(np.ones(k))
        assert np.abs(p - q).sum() <= 2 * np.abs(p - v).sum() + 1e-12


def test_claim18_sparse_projection_brute_force():
    rng = np.random.default_rng(2)
    k, s = 7, 3
    for _ in range(10):
        v = rng.standard_normal(k)
        q = sparse_simplex_projection(v, s)
        assert np.count_nonzero(q) <= s and q.min() >= 0 and abs(q.sum() - 1) < 1e-12
        best = np.inf
        for support in itertools.combinations(range(k), s):
            idx = list(support)
            cand = np.zeros(k)
            cand[idx] = project_simplex(v[idx])
            best = min(best, np.linalg.norm(cand - v))
        assert_allclose(np.linalg.norm(q - v), best, atol=1e-12)


def test_claim19_inequality_14():
    rng = np.random.default_rng(3)
    k, s = 50, 5
    for _ in range(50):
        p, _ = dirichlet_sparse(k, s, rng.integers(1 << 30))
        p_tilde = np.zeros(k)
        p_tilde[rng.choice(k, s, replace=False)] = rng.standard_normal(s) * 0.3
        p_tilde += p * rng.uniform(0.5, 1.5)
        top = np.argsort(-np.abs(p_tilde))[:s]
        sparse_tilde = np.zeros(k)
        sparse_tilde[top] = p_tilde[top]
        p_hat = l1_simplex_projection(sparse_tilde)
        assert (
            np.abs(p - p_hat).sum()
            <= 2 * math.sqrt(2 * s) * np.linalg.norm(p - sparse_tilde) + 1e-12
        )


# -- recovery behaviour (claims 20-25) -------------------------------------------------------------
@pytest.mark.parametrize("s", [10, 25, 50])
def test_claim20_exact_recovery_noiseless(s):
    k, m, n = 10**4, 500, 10**6
    ch = OneBitCompressiveChannel(1.0, k, m, seed=0)
    for trial in range(3):
        p, support = dirichlet_sparse(k, s, 100 * s + trial)
        est = SparseEstimator(sparsity=s)._estimate(ch, n * ch.forward(p), n)
        assert_array_equal(est["support_"], support)
        assert np.max(np.abs(est["recovered_"] - p)) < 1e-9


@pytest.mark.parametrize("s", [10, 25])
def test_claim20_exact_recovery_noiseless_symmetric(s):
    k, m, n = 10**4, 500, 10**6
    ch = SymmetricCompressiveChannel(1.0, k, m, seed=1)
    p, support = dirichlet_sparse(k, s, s)
    est = SparseEstimator(sparsity=s)._estimate(ch, n * ch.forward(p), n)
    assert_array_equal(est["support_"], support)
    assert np.max(np.abs(est["recovered_"] - p)) < 1e-9


def _mean_errors(ch, p, n, trials, seed, sparsity, order=2):
    rng = np.random.default_rng(seed)
    est = SparseEstimator(sparsity=sparsity)
    errs = []
    for _ in range(trials):
        out = est._estimate(ch, ch.sample_statistics(p, n, rng), n)
        errs.append(np.linalg.norm(out["distribution_"] - p, ord=order))
    return float(np.mean(errs))


def test_claim21_error_slope_and_level_once_support_is_found():
    k, m, s, eps = 10**4, 500, 10, 1.0
    ch = OneBitCompressiveChannel(eps, k, m, seed=0)
    p = uniform_sparse(k, s)
    ns = np.array([2 * 10**5, 5 * 10**5, 10**6])
    errs = np.array([_mean_errors(ch, p, n, 20, 11 + i, s) for i, n in enumerate(ns)])
    slope = np.polyfit(np.log(ns), np.log(errs), 1)[0]
    assert -0.65 <= slope <= -0.35
    ratio = errs / (c_of(eps) * np.sqrt(s / ns))  # claim 21b: error level c sqrt(s/n)
    assert np.all((ratio >= 0.7) & (ratio <= 1.3)), ratio


def test_claim22_no_k_dependence_at_fixed_m():
    m, s, n = 500, 10, 2 * 10**5
    errs = []
    for k in (10**4, 10**5):
        ch = OneBitCompressiveChannel(1.0, k, m, seed=0)
        errs.append(_mean_errors(ch, uniform_sparse(k, s), n, 5, 3, s, order=1))
    assert errs[1] <= 2 * errs[0] and errs[0] <= 2 * errs[1]


def test_claim22_dense_hadamard_with_simplex_projection_degrades_with_k():
    # The second half of claim 22: at fixed n and s, HR (K = 2^ceil(log2(k+1)) outputs) with the
    # Euclidean simplex projection gets worse from k = 10^4 to k = 10^6 (ours, 3 runs per point
    # in examples/figures/compressive_experiments.txt: 0.237 -> 0.375 at n = 2e5), while one-bit
    # CP does not (test_claim22_no_k_dependence_at_fixed_m). Counts are drawn from their exact
    # multinomial law; the gap must exceed 3 standard errors of the difference of the means.
    s, n, runs = 10, 2 * 10**5, 4
    est = SparseEstimator(sparsity=s, method="inverse", projection="simplex")
    rng = np.random.default_rng(22)
    errs = {}
    for k in (10**4, 10**6):
        ch = HadamardResponseChannel(1.0, k)
        p = uniform_sparse(k, s)
        errs[k] = np.array(
            [
                np.abs(
                    est._estimate(ch, rng.multinomial(n, ch.forward(p)), n)["distribution_"] - p
                ).sum()
                for _ in range(runs)
            ]
        )
    small, large = errs[10**4], errs[10**6]
    se = math.sqrt(small.var(ddof=1) / runs + large.var(ddof=1) / runs)
    assert large.mean() - small.mean() > 3 * se, (small, large)
    assert large.mean() > 1.2 * small.mean()
    # Before projection the exact l2 risk grows like k: (k c'^2 - ||p||^2) / n, with
    # c' = (e^eps + 1) / (e^eps - 1) and ||p||^2 = 1/s.
    risk = {
        k: HadamardResponseChannel(1.0, k).variance(uniform_sparse(k, s), n).sum() for k in errs
    }
    c2 = c_of(1.0) ** 2
    expected = (10**6 * c2 - 1 / s) / (10**4 * c2 - 1 / s)
    assert_allclose(risk[10**6] / risk[10**4], expected, rtol=1e-9)


def test_claim23_error_scales_like_c():
    k, m, s, n = 10**4, 500, 10, 10**6
    p = uniform_sparse(k, s)
    e1 = _mean_errors(OneBitCompressiveChannel(1.0, k, m, seed=0), p, n, 15, 4, s)
    e05 = _mean_errors(OneBitCompressiveChannel(0.5, k, m, seed=0), p, n, 15, 5, s)
    assert 0.75 * c_of(0.5) / c_of(1.0) <= e05 / e1 <= 1.25 * c_of(0.5) / c_of(1.0)


def test_claim24_one_bit_hadamard_sparse_projection_close_to_one_bit_cp():
    k, m, s, n = 10**4, 500, 10, 2 * 10**5
    p = uniform_sparse(k, s)
    cp = _mean_errors(OneBitCompressiveChannel(1.0, k, m, seed=0), p, n, 5, 6, s, order=1)
    hr = OneBitHadamardChannel(1.0, k)
    rng = np.random.default_rng(7)
    est = SparseEstimator(sparsity=s, method="inverse", projection="sparse")
    hr_err = np.mean(
        [
            np.abs(est._estimate(hr, hr.sample_statistics(p, n, rng), n)["distribution_"] - p).sum()
            for _ in range(5)
        ]
    )
    assert hr_err <= 1.5 * cp and cp <= 1.5 * hr_err


def test_claim24_one_bit_hadamard_fails_below_K_at_k_1e6():
    # k = 10^6, so one-bit HR has K = 2^20 > n groups and many are empty. With either fill of
    # the empty groups (t_j = 1/2 or t_j = 0) its mean l1 error on Unif(10) is more than 3
    # times that of one-bit CP (m = 500) at n = 5e4 and 2e5. Statistics are drawn from their
    # exact law. CP's error is small and steady (<= 0.12), so one run per n. One-bit HR with
    # half-filled groups finds part of the support at n = 2e5: a run costs 0.2 per missed value,
    # from 0.01 to 1.4 (mean about 0.6 over 12 runs; 2 of the 12 found all of it), so the mean
    # is taken over 4 runs there. At n = 5e4 every run seen failed (1.4 to 1.8), and zero-filled
    # groups gave 2.0 (a disjoint support) in every run seen, so one run each.
    k, m, s = 10**6, 500, 10
    p = uniform_sparse(k, s)
    cp = OneBitCompressiveChannel(1.0, k, m, seed=0)
    hr = OneBitHadamardChannel(1.0, k)
    assert hr.n_groups == 2**20
    rng = np.random.default_rng(24)
    for n, runs in ((5 * 10**4, 1), (2 * 10**5, 4)):
        cp_err = _mean_errors(cp, p, n, 1, n + 1, s, order=1)
        assert cp_err <= 0.12
        hr_err = {"half": [], "zero": []}
        for run in range(runs):
            stats = hr.sample_statistics(p, n, rng)
            for fill in ("half", "zero") if run == 0 else ("half",):
                est = SparseEstimator(
                    sparsity=s, method="inverse", projection="sparse", empty_groups=fill
                )
                hr_err[fill].append(np.abs(est._estimate(hr, stats, n)["distribution_"] - p).sum())
        for fill, errs in hr_err.items():
            assert np.mean(errs) > 3 * cp_err, (n, fill, errs, cp_err)


def test_claim25_approximately_sparse_error_floor():
    k, m, s, lam = 10**4, 500, 2, 0.8
    p = (1 - lam) ** np.arange(k) * lam
    p /= p.sum()
    tail = np.sort(p)[::-1][s:].sum()
    ch = OneBitCompressiveChannel(1.0, k, m, seed=0)
    for n in (5 * 10**4, 10**6):
        err = _mean_errors(ch, p, n, 5, n, s, order=1)
        assert tail <= err <= tail + 4 * math.sqrt(s * m / n) * c_of(1.0) / math.sqrt(m) + 0.1


def test_exact_support_recovery_at_large_n_with_sparsity_found_from_data():
    k, m, n = 10**4, 500, 10**6
    ch = OneBitCompressiveChannel(1.0, k, m, seed=0)
    p, support = dirichlet_sparse(k, 10, 77)
    stats = ch.sample_statistics(p, n, np.random.default_rng(8))
    for method in ("omp", "iht", "l1"):
        est = SparseEstimator(method=method, projection="sparse")._estimate(ch, stats, n)
        assert est["sparsity_"] == 10, method
        assert_array_equal(est["support_"], support)
        assert_array_equal(np.flatnonzero(est["distribution_"]), support)


# -- hierarchical recovery of the recursive scheme (Alg. 3 step 5, spec 4.2 item 4) ---------------
@pytest.mark.parametrize("L", [1, 2, 4])
def test_recursive_block_measurements_decouple_the_hadamard_system(L):
    eps, k, m, n = 2.0, 23, 6, 600  # k = 23 pads to K = 32: padding columns exist
    ch = RecursiveCompressiveChannel(eps, k, m, n_blocks=L, seed=7)
    K, W = ch.padded_size, ch.block_width
    A2 = ch.operator.inner.to_dense().astype(float)
    P = np.zeros((K, k))
    P[ch.permutation, np.arange(k)] = 1.0
    p = np.random.default_rng(0).dirichlet(np.ones(k))
    p_perm = (P @ p).reshape(L, W)  # p'^(l), padding included
    # Expected counts from the dense channel (n / m reports per group): z is linear in the counts
    # given the group sizes, so this is E[z_l] exactly.
    expected = ch.block_measurements(n * p @ ch.to_dense(), n)
    assert len(expected) == L
    for ell, system in enumerate(expected):
        assert_allclose(system.values, A2 @ p_perm[ell], atol=1e-12)
        assert_allclose(system.operator.to_dense() @ p[system.inputs], A2 @ p_perm[ell], atol=1e-12)
        assert_array_equal(system.inputs, np.flatnonzero(ch.permutation // W == ell))
    # On sampled counts, (1/L)(H_L^T kron I_m) applied to eq. (23) gives the same block vectors.
    stats = ch.sample_statistics(p, n, np.random.default_rng(1)).astype(float)
    N = stats.reshape(m, L, 2)
    sizes = N.sum(axis=(1, 2))
    H = hadamard(L) if L > 1 else np.ones((1, 1))
    q_hat = ch.debias * (((N[..., 1] - N[..., 0]) / sizes[:, None]) @ H.T).T.reshape(-1)
    z = np.kron(H.T, np.eye(m)) @ q_hat / L
    blocks = ch.block_measurements(stats, n)
    assert_allclose(np.concatenate([b.values for b in blocks]), z, atol=1e-12)
    assert_allclose(
        np.kron(H.T, np.eye(m)) @ _hadamard_kron_expectation(ch, p) / L,
        np.concatenate([b.values for b in expected]),
        atol=1e-12,
    )

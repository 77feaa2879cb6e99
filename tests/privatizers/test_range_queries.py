"""Range queries: hierarchical histograms with consistency and the Haar method (issue 31, 4)."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skldp import (
    HaarWavelet,
    HadamardResponse,
    HierarchicalHistogram,
    RangeQueryEstimator,
)
from skldp.channels import (
    HaarWaveletChannel,
    hierarchy_consistency,
    hierarchy_range,
    node_ancestors,
)
from skldp.privacy import verify


def _levels(f, B, h):
    return [f.reshape(B**lev, -1).sum(axis=1) for lev in range(1, h + 1)]


# -- spec 3.7 claim 1: Hay's passes = constrained least squares ---------------------------------
@pytest.mark.parametrize(("B", "h"), [(2, 4), (3, 3), (4, 3)])
def test_consistency_is_constrained_least_squares(B, h):
    rng = np.random.default_rng(B * h)
    D = B**h
    f = rng.dirichlet(np.ones(D))
    assert_allclose(hierarchy_consistency(_levels(f, B, h), B), f, atol=1e-14)
    noisy = [lv + rng.normal(0, 0.1, lv.size) for lv in _levels(f, B, h)]
    A = np.vstack([np.kron(np.eye(B**lev), np.ones(B ** (h - lev))) for lev in range(1, h + 1)])
    K = np.block([[2 * A.T @ A, np.ones((D, 1))], [np.ones((1, D)), np.zeros((1, 1))]])
    sol = np.linalg.solve(K, np.concatenate([2 * A.T @ np.concatenate(noisy), [1.0]]))
    assert_allclose(hierarchy_consistency(noisy, B), sol[:D], atol=1e-12)
    # raw canonical decomposition is exact on exact levels
    levels = _levels(f, B, h)
    for a, b in [(0, D - 1), (1, D - 2), (3, 3), (2, D // 2)]:
        assert abs(hierarchy_range(levels, B, a, b) - f[a : b + 1].sum()) < 1e-14


def _consistent_map(B, h):
    """The linear map from the non-root node observations to the consistent leaves."""
    sizes = [B**lev for lev in range(1, h + 1)]
    zero = hierarchy_consistency([np.zeros(s) for s in sizes], B)
    cols = []
    for lev, s in enumerate(sizes):
        for j in range(s):
            obs = [np.zeros(t) for t in sizes]
            obs[lev][j] = 1.0
            cols.append(hierarchy_consistency(obs, B) - zero)
    return np.array(cols).T  # (leaves, nodes)


def _all_ranges_norms(M, D):
    """||sum of rows a..b of M||^2 for every 0 <= a <= b < D."""
    P = np.vstack([np.zeros(M.shape[1]), np.cumsum(M[:D], axis=0)])
    sq = np.einsum("ij,ij->i", P, P)
    G = P @ P.T
    a, b = np.triu_indices(D)
    return sq[b + 1] + sq[a] - 2 * G[a, b + 1]


def _haar_map(D):
    h = int(np.log2(D))
    x = np.arange(D)
    cols = []
    for j in range(1, h + 1):
        length = D >> (j - 1)
        for k in range(2 ** (j - 1)):
            inside = x // length == k
            sign = np.where(x % length < length // 2, 1.0, -1.0)
            cols.append(np.where(inside, sign / length, 0.0))
    return np.array(cols).T


# -- spec 3.3 / 3.4 tables (exact, D = 1024) ---------------------------------------------------
def test_variance_factors_at_1024_match_the_spec_tables():
    for B, h, mean in [(2, 10, 1.886), (4, 5, 3.703)]:
        norms = _all_ranges_norms(_consistent_map(B, h), 1024)
        assert norms.size == 524_800
        assert abs(norms.mean() - mean) < 1e-3
    haar = _all_ranges_norms(_haar_map(1024), 1024)
    assert abs(haar.mean() - 1.5283) < 1e-4 and abs(haar.max() - 2.2501) < 1e-4


# -- privacy, exactly --------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [1e-3, 1.0, 8.0])
def test_haar_channel_verifies_exactly(eps):
    ch = HaarWaveletChannel(eps, 16)
    Q = ch.to_dense()
    assert_allclose(Q.sum(axis=1), 1.0, atol=1e-12)
    assert verify(Q, eps).passed
    assert not verify(Q, eps * 0.99).passed  # tight: a smaller budget fails
    assert pickle.loads(pickle.dumps(ch)) == ch


@pytest.mark.parametrize("eps", [0.5, 2.0])
@pytest.mark.parametrize("oracle", [None, HadamardResponse()])
def test_hierarchy_verifies_exactly(eps, oracle):
    hh = HierarchicalHistogram(epsilon=eps, categories=list(range(8)), branching=2, oracle=oracle)
    hh.fit(np.arange(8)[:, None])
    mech = hh.channel_
    anc = node_ancestors(np.arange(8), 2, hh.n_levels_)
    Q = np.hstack(
        [ch.to_dense()[anc[:, lev]] / hh.n_levels_ for lev, ch in enumerate(mech.channels)]
    )
    assert_allclose(Q.sum(axis=1), 1.0, atol=1e-12)
    assert verify(Q, eps).passed
    assert not verify(Q, eps * 0.9).passed


# -- simulation: MSE of ranges within 10% of the variance expressions -----------------------------
def _sim_mse(priv, x, ranges, reps, consistency=True):
    rng_seed = np.random.SeedSequence(11).spawn(reps)
    truth = np.array([np.mean((x >= a) & (x <= b)) for a, b in ranges])
    err = np.zeros(len(ranges))
    for s in rng_seed:
        priv.set_params(random_state=np.random.default_rng(s))
        est = RangeQueryEstimator(privatizer=priv, consistency=consistency).fit(
            priv.transform(x[:, None])
        )
        err += (np.array([est.range_mass(a, b) for a, b in ranges]) - truth) ** 2
    return err.mean() / reps


def test_hierarchy_and_haar_range_mse_match_variance_expressions():
    D, n, eps, reps = 64, 4000, 1.0, 150
    x = np.arange(n) % D  # uniform, fixed
    rng = np.random.default_rng(5)
    ranges = [tuple(sorted(rng.integers(0, D, 2))) for _ in range(40)]
    # HH_4 with OUE: node variance (V_F + f)/n_l, uncorrelated; n_l about n/h
    hh = HierarchicalHistogram(epsilon=eps, categories=list(range(D)), branching=4).fit(x[:, None])
    h = hh.n_levels_
    E = np.exp(eps)
    p_oue, q_oue = 0.5, 1 / (E + 1)
    M = _consistent_map(4, h)
    node_f = np.concatenate(_levels(np.full(D, 1 / D), 4, h))
    node_var = (q_oue * (1 - q_oue) / (p_oue - q_oue) ** 2 + node_f) / (n / h)
    expect_hh = np.mean([np.sum(M[a : b + 1].sum(axis=0) ** 2 * node_var) for a, b in ranges])
    got_hh = _sim_mse(hh, x, ranges, reps)
    assert abs(got_hh / expect_hh - 1) < 0.10, (got_hh, expect_hh)
    # DHT: coefficient variance (C^2 - g)/n_j, g = 1/L_j for uniform data
    haar = HaarWavelet(epsilon=eps, categories=list(range(D))).fit(x[:, None])
    W = _haar_map(D)
    c2 = haar.channel_.scale**2
    hl = haar.channel_.height
    g = np.concatenate([np.full(2 ** (j - 1), 2.0 ** -(j - 1)) for j in range(1, hl + 1)])
    coef_var = (c2 - g) / (n / hl)
    expect_haar = np.mean([np.sum(W[a : b + 1].sum(axis=0) ** 2 * coef_var) for a, b in ranges])
    got_haar = _sim_mse(haar, x, ranges, reps)
    assert abs(got_haar / expect_haar - 1) < 0.10, (got_haar, expect_haar)


def test_long_ranges_beat_summing_single_values_at_1024():
    # leading terms (n Var / V_F): flat OUE is r; consistent HH_4 is h ||L_R||^2
    D = 1024
    M = _consistent_map(4, 5)
    norms = _all_ranges_norms(M, D)
    a, b = np.triu_indices(D)
    length = b - a + 1
    long = length >= 0.05 * D
    assert np.all(5 * norms[long] < length[long])


# -- estimator behaviour -----------------------------------------------------------------------
def test_streaming_quantile_raw_and_errors():
    x = np.repeat(np.arange(16), 400)[:, None]
    hh = HierarchicalHistogram(epsilon=4.0, categories=list(range(16)), random_state=0).fit(x)
    reports = hh.transform(x)
    whole = RangeQueryEstimator(privatizer=hh).fit(reports)
    parts = (
        RangeQueryEstimator(privatizer=hh).partial_fit(reports[:1000]).partial_fit(reports[1000:])
    )
    assert_allclose(parts.distribution_, whole.distribution_, atol=1e-12)
    assert abs(whole.range_mass(0, 15) - 1) < 1e-12  # consistent: the root is known
    assert whole.quantile(0.5) in (6, 7, 8, 9)
    assert list(whole.quantile([0.0, 1.0])) == [0, 15]
    raw = RangeQueryEstimator(privatizer=hh, consistency=False).fit(reports)
    assert abs(raw.range_mass(2, 13) - 0.75) < 0.1
    with pytest.raises(ValueError, match="categories=\\[...\\]"):
        HierarchicalHistogram(epsilon=1.0).fit(x)
    with pytest.raises(ValueError, match="values outside categories: 99"):
        hh.transform([[99]])
    with pytest.raises(ValueError, match="comes after"):
        whole.range_mass(5, 2)
    with pytest.raises(ValueError, match="needs privatizer"):
        RangeQueryEstimator().fit(reports)


def test_range_variance_reproduces_spec_table_and_advice_ranks():
    from skldp import recommend_numeric_method
    from skldp.channels import range_variance

    # spec 3.6 at epsilon = 1, D = 1024: flat 1259.5, HH2 69.4, HH4 68.2, DHT 71.6
    got = [
        range_variance("flat", 1024, 1.0),
        range_variance("hierarchy", 1024, 1.0, branching=2),
        range_variance("hierarchy", 1024, 1.0),
        range_variance("haar", 1024, 1.0),
    ]
    assert_allclose(got, [1259.5, 69.4, 68.2, 71.6], atol=0.06)
    short = recommend_numeric_method("ranges", epsilon=1.0, n_categories=64, range_length=2)
    assert short["method"].iloc[0].startswith("flat")
    low = recommend_numeric_method("ranges", epsilon=0.5, n_categories=1024)
    assert low["method"].iloc[0] == "HaarWavelet"
    mean = recommend_numeric_method("mean", epsilon=4.0)
    assert mean["method"].tolist()[0] == "HybridMechanism"
    assert abs(mean["variance"].iloc[0] - 0.2190) < 1e-3
    with pytest.raises(ValueError, match="needs n_categories"):
        recommend_numeric_method("ranges", epsilon=1.0)
    with pytest.raises(ValueError, match="question must be one of"):
        recommend_numeric_method("median", epsilon=1.0)

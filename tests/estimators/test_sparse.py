import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp.channels import (
    OneBitCompressiveChannel,
    OneBitHadamardChannel,
    RecursiveCompressiveChannel,
    SymmetricCompressiveChannel,
)
from skldp.estimators import SparseEstimator
from skldp.estimators._sparse import noise_threshold


def _sparse_p(k, support, weights):
    p = np.zeros(k)
    p[support] = weights
    return p


def test_fit_on_plain_reports_with_channel_and_partial_fit_additivity():
    ch = OneBitCompressiveChannel(1.0, 2000, 200, seed=0)
    p = _sparse_p(2000, [5, 900, 1999], [0.6, 0.3, 0.1])
    rng = np.random.default_rng(0)
    x = rng.choice(2000, size=100_000, p=p)
    reports = ch.sample(x, rng)
    whole = SparseEstimator(sparsity=3, channel=ch).fit(reports)
    parts = (
        SparseEstimator(sparsity=3, channel=ch)
        .partial_fit(reports[:30_000])
        .partial_fit(reports[30_000:])
    )
    assert_allclose(whole.distribution_, parts.distribution_, atol=1e-12)
    assert_array_equal(whole.support_, [5, 900, 1999])
    assert whole.n_reports_ == 100_000 and whole.sparsity_ == 3
    assert whole.noise_level_ > 0 and whole.threshold_ == pytest.approx(
        noise_threshold(whole.noise_level_, 2000)
    )


def test_plain_reports_without_channel_raise():
    with pytest.raises(ValueError, match="channel"):
        SparseEstimator().fit(np.array([0, 1, 2]))


@pytest.mark.parametrize("method", ["omp", "l1", "iht"])
@pytest.mark.parametrize("positive", [False, True])
def test_methods_recover_noiseless_measurements_exactly(method, positive):
    k, m, n = 3000, 120, 10**6
    p = _sparse_p(k, [10, 20, 2000, 2999], [0.4, 0.3, 0.2, 0.1])
    for ch in (
        OneBitCompressiveChannel(1.0, k, m, seed=1),
        SymmetricCompressiveChannel(1.0, k, 2 * m, seed=1),
        RecursiveCompressiveChannel(3.0, k, m, n_blocks=2, seed=1),
    ):
        out = SparseEstimator(sparsity=4, method=method, positive=positive)._estimate(
            ch, n * ch.forward(p), n
        )
        assert_array_equal(out["support_"], [10, 20, 2000, 2999])
        assert_allclose(out["distribution_"], p, atol=1e-7)


@pytest.mark.parametrize("projection", ["simplex", "l1", "sparse"])
def test_projections_give_distributions(projection):
    ch = OneBitCompressiveChannel(0.5, 1000, 100, seed=2)
    p = _sparse_p(1000, [1, 2, 3], [0.5, 0.25, 0.25])
    stats = ch.sample_statistics(p, 20_000, np.random.default_rng(1))
    out = SparseEstimator(sparsity=3, projection=projection)._estimate(ch, stats, 20_000)
    q = out["distribution_"]
    assert q.min() >= 0 and q.sum() == pytest.approx(1.0, abs=1e-12)
    if projection != "simplex":
        assert np.count_nonzero(q) <= 3


def test_sparsity_none_finds_it_and_pure_noise_gives_little():
    ch = OneBitCompressiveChannel(1.0, 5000, 300, seed=3)
    p = _sparse_p(5000, [7, 77, 777, 4000], [0.4, 0.3, 0.2, 0.1])
    n = 400_000
    stats = ch.sample_statistics(p, n, np.random.default_rng(2))
    est = SparseEstimator()._estimate(ch, stats, n)
    assert est["sparsity_"] == 4
    # Uniform p is not sparse but it is not seen as 300 atoms either: few correlations pass tau.
    flat = ch.sample_statistics(np.full(5000, 1 / 5000), n, np.random.default_rng(3))
    assert SparseEstimator()._estimate(ch, flat, n)["sparsity_"] <= 3


@pytest.mark.parametrize("mechanism", ["krr", "rappor", "hadamard"])
def test_reports_of_a_non_compressive_channel_are_refused(mechanism):
    # Issue 27.8: on k-RR reports (k = 1000, epsilon = 1) sparse recovery put 0.999 on one
    # category, total variation 0.99 from the truth, without a word: the output frequencies'
    # common offset went to the first column OMP picked. Such channels are refused, by fit,
    # partial_fit and a channel given up front.
    from skldp import RAPPOR, HadamardResponse, RandomizedResponse

    cls = {"krr": RandomizedResponse, "rappor": RAPPOR, "hadamard": HadamardResponse}[mechanism]
    rng = np.random.default_rng(0)
    k = 1000
    p = rng.dirichlet(np.full(k, 0.05))
    x = rng.choice(k, 20_000, p=p).reshape(-1, 1)
    privatizer = cls(epsilon=1.0, categories=[list(range(k))], random_state=0).fit(x)
    reports = privatizer.transform(x)
    name = type(privatizer.channel_).__name__
    for fit in (SparseEstimator().fit, SparseEstimator().partial_fit):
        with pytest.raises(TypeError, match=f"compressive mechanisms.*got reports of {name}"):
            fit(reports)
    with pytest.raises(TypeError, match="ProjectedEstimator or EMEstimator"):
        SparseEstimator(channel=privatizer.channel_).fit(np.asarray(reports))
    channel = privatizer.channel_
    stats = channel.statistics(np.asarray(reports))
    with pytest.raises(TypeError, match=name):
        SparseEstimator()._estimate(channel, stats, x.shape[0])


def test_empty_groups_options_for_one_bit_hadamard():
    k = 100
    ch = OneBitHadamardChannel(1.0, k)  # K = 128 groups
    p = _sparse_p(k, [0, 50], [0.5, 0.5])
    n = 60  # fewer reports than groups
    stats = ch.sample_statistics(p, n, np.random.default_rng(5))
    empty = np.flatnonzero(stats[0::2] + stats[1::2] == 0)
    assert empty.size == 128 - 60
    drop = ch.sparse_measurements(stats, n, empty_groups="drop")
    half = ch.sparse_measurements(stats, n, empty_groups="half")
    zero = ch.sparse_measurements(stats, n, empty_groups="zero")
    assert drop.values.shape == (60,) and half.values.shape == (128,)
    assert_allclose(half.values[empty], 0.0)
    assert_allclose(zero.values[empty], -ch.debias)
    inv = {
        e: SparseEstimator(method="inverse", empty_groups=e)._estimate(ch, stats, n)["recovered_"]
        for e in ("drop", "half", "zero")
    }
    assert_allclose(inv["drop"], inv["half"], atol=1e-12)
    assert not np.allclose(inv["zero"], inv["half"])


def test_zero_fill_is_for_one_bit_channels_only():
    ch = RecursiveCompressiveChannel(2.0, 50, 10, n_blocks=2)
    with pytest.raises(ValueError, match="one-bit"):
        ch.sparse_measurements(np.ones(ch.n_outputs), 40, empty_groups="zero")


@pytest.mark.parametrize(
    "params,match",
    [
        ({"sparsity": 0}, "sparsity"),
        ({"sparsity": 2.5}, "sparsity"),
        ({"method": "lasso"}, "method"),
        ({"projection": "euclid"}, "projection"),
        ({"empty_groups": "skip"}, "empty_groups"),
        ({"max_iter": 0}, "max_iter"),
        ({"hierarchical": "yes"}, "hierarchical"),
        ({"hierarchical": 1}, "hierarchical"),
        ({"beta": -0.5}, "beta"),
        ({"beta": float("inf")}, "beta"),
        ({"hierarchical": True}, "blocks"),
    ],
)
def test_bad_parameters(params, match):
    ch = OneBitCompressiveChannel(1.0, 50, 10)
    reports = ch.sample(np.zeros(100, dtype=int), np.random.default_rng(0))
    with pytest.raises(ValueError, match=match):
        SparseEstimator(channel=ch, **params).fit(reports)


def test_inverse_with_a_sparsity_reads_any_channel_hadamard_response():
    # the baseline of Acharya et al.: the unbiased estimate, projected onto s-sparse
    # distributions, decodes any channel (it needs no measurement system)
    from skldp.channels import HadamardResponseChannel

    k = 300
    ch = HadamardResponseChannel(1.0, k)
    p = _sparse_p(k, [10, 200, 299], [0.5, 0.3, 0.2])
    n = 300_000
    stats = np.random.default_rng(6).multinomial(n, ch.forward(p))
    out = SparseEstimator(sparsity=3, method="inverse", projection="sparse")._estimate(ch, stats, n)
    assert_array_equal(np.flatnonzero(out["distribution_"]), [10, 200, 299])
    assert np.abs(out["distribution_"] - p).sum() < 0.1
    with pytest.raises(TypeError, match="method='inverse' with sparsity=s"):
        SparseEstimator(method="inverse")._estimate(ch, stats, n)


# -- hierarchical recovery of recursive compressive reports ------------------------------------
def _block_sparse_p(ch, per_block, seed):
    """A distribution with ``per_block[l]`` nonzeros in block l of the permuted domain."""
    rng = np.random.default_rng(seed)
    block = ch.permutation // ch.block_width
    support = np.concatenate(
        [
            rng.choice(np.flatnonzero(block == ell), count, replace=False)
            for ell, count in enumerate(per_block)
        ]
    )
    p = np.zeros(ch.n_inputs)
    p[support] = rng.dirichlet(np.ones(support.size)) * 0.8 + 0.2 / support.size
    return p, np.sort(support)


@pytest.mark.parametrize("method", ["omp", "iht"])
def test_hierarchical_recovers_noiseless_block_sparse_p_exactly(method):
    # s = 8 over L = 4 blocks, unevenly: sigma = min(8, ceil(2 * 8 / 4)) = 4 per block.
    ch = RecursiveCompressiveChannel(3.0, 3000, 60, n_blocks=4, seed=2)
    p, support = _block_sparse_p(ch, [4, 3, 1, 0], seed=0)
    n = 10**6
    est = SparseEstimator(sparsity=8, method=method, hierarchical=True)
    out = est._estimate(ch, n * ch.forward(p), n)
    assert_array_equal(out["support_"], support)
    assert_array_equal(out["block_sparsity_"], [4, 4, 4, 4])
    assert_allclose(out["recovered_"], p, atol=1e-10)
    assert_allclose(out["distribution_"], p, atol=1e-10)
    # beta = 0 allows only ceil(8 / 4) = 2 per block: block 0 (4 nonzeros) cannot be recovered.
    tight = SparseEstimator(sparsity=8, method=method, beta=0.0)._estimate(ch, n * ch.forward(p), n)
    assert_array_equal(tight["block_sparsity_"], [2, 2, 2, 2])
    assert not np.isin(support, tight["support_"]).all()


@pytest.mark.parametrize("eps,n", [(2.0, 300_000), (5.0, 60)])
def test_hierarchical_with_sparsity_none_matches_global_omp(eps, n):
    # On the block-diagonal system the per-block OMP with the common threshold tau picks the
    # same atoms as one global OMP, and least squares decouples by block; n = 60 < m = 80
    # leaves 20 groups empty, dropped from every block.
    ch = RecursiveCompressiveChannel(eps, 5000, 80, n_blocks=4, seed=4)
    p, _ = _block_sparse_p(ch, [3, 2, 2, 1], seed=1)
    stats = ch.sample_statistics(p, n, np.random.default_rng(3))
    blocks = ch.block_measurements(stats, n)
    assert [b.values.shape[0] for b in blocks] == [min(n, 80)] * 4
    hier = SparseEstimator(hierarchical=True)._estimate(ch, stats, n)
    flat = SparseEstimator(hierarchical=False)._estimate(ch, stats, n)
    assert flat["block_sparsity_"] is None and hier["support_"].size >= 4
    assert_array_equal(hier["support_"], flat["support_"])
    assert hier["block_sparsity_"].sum() == hier["sparsity_"] == flat["sparsity_"]
    assert_allclose(hier["recovered_"], flat["recovered_"], atol=1e-12)


def test_hierarchical_at_least_as_accurate_as_global_omp_on_uniform_sparse():
    # Paired comparison on the same reports, seeds 0-9 (k = 4096, m = 64, L = 4, s = 16, p
    # uniform on s values, n = 2e5). Measured l1 errors (simplex projection): hierarchical
    # 0.036, global 0.054 on average. On these seeds the hierarchical error is never larger
    # (equal up to rounding where both find the support: least squares on it is the same;
    # smaller where global OMP picks a wrong column among tied weights). Without the pruning
    # to s the hierarchical mean was 0.090, so this test fails for that variant.
    k, m, L, s, n = 4096, 64, 4, 16, 200_000
    hier, flat = [], []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        ch = RecursiveCompressiveChannel(2.0, k, m, n_blocks=L, seed=seed)
        p = _sparse_p(k, rng.choice(k, s, replace=False), 1.0 / s)
        stats = ch.sample_statistics(p, n, rng)
        for out, h in ((hier, True), (flat, False)):
            est = SparseEstimator(sparsity=s, hierarchical=h)._estimate(ch, stats, n)
            out.append(np.abs(est["distribution_"] - p).sum())
    hier, flat = np.array(hier), np.array(flat)
    assert np.all(hier <= flat + 1e-9)
    assert hier.mean() < 0.8 * flat.mean()

"""The significance threshold ("emp+thr") on block-structured and high-low channels (issue 14.4).

The scale of the threshold is the exact variance of an unbiased coordinate whose category has
frequency zero (:meth:`skldp.channels.Channel.zero_frequency_variance`). It used to be evaluated
at a point mass on category 0, which gave every category outside block 0 of a block-structured
Hadamard response a zero scale (never thresholded) and made the high-low threshold depend on
whether index 0 is sensitive.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import norm

from skldp import ProjectedEstimator
from skldp.channels import (
    BinaryRandomizedResponseChannel,
    BlockHadamardResponseChannel,
    Channel,
    CohortRRChannel,
    HadamardResponseChannel,
    HighLowHadamardResponseChannel,
    OneBitCompressiveChannel,
    OneBitHadamardChannel,
    OptimizedUnaryEncodingChannel,
    RandomizedResponseChannel,
    RAPPORChannel,
    RecursiveCompressiveChannel,
    SymmetricCompressiveChannel,
    UtilityOptimizedRAPPORChannel,
    UtilityOptimizedRRChannel,
)
from skldp.estimators._projected import threshold_from_channel
from skldp.projection import project_simplex

SMALL_CHANNELS = [
    RandomizedResponseChannel(1.0, 5),
    BinaryRandomizedResponseChannel(0.5, 1.5),
    UtilityOptimizedRRChannel(1.0, 6, [0, 4]),
    RAPPORChannel(1.0, 5),
    OptimizedUnaryEncodingChannel(2.0, 4),
    UtilityOptimizedRAPPORChannel(1.0, 5, [1, 2]),
    HadamardResponseChannel(0.5, 5),
    BlockHadamardResponseChannel(1.0, [0, 0, 0, 1, 1, 2]),
    BlockHadamardResponseChannel(2.0, [1, 0, 1, 0, 0, 1, 1]),
    HighLowHadamardResponseChannel(1.0, 6, [1, 3]),
    HighLowHadamardResponseChannel(1.0, 5, [4]),
    HighLowHadamardResponseChannel(1.0, 4, []),
    OneBitHadamardChannel(1.0, 6),
    OneBitCompressiveChannel(1.0, 6, 8),
    RecursiveCompressiveChannel(2.0, 6, 8),
    SymmetricCompressiveChannel(1.0, 6, 16),
    CohortRRChannel(1.0, 8, np.random.default_rng(3).integers(0, 8, size=(6, 6))),
]


def _with_zero(p, x):
    q = np.array(p, dtype=float)
    q[x] = 0.0
    return q / q.sum()


@pytest.mark.parametrize("channel", SMALL_CHANNELS, ids=repr)
def test_zero_frequency_variance_is_the_variance_at_zero_frequency(channel):
    # Definition: Var*_x(p) = Var_x(p with x's mass removed and the rest renormalized);
    # the worst case is the largest Var_x over the point masses e_z, z != x.
    k, n = channel.n_inputs, 700
    p = np.random.default_rng(4).dirichlet(np.ones(k))
    plug_in = channel.zero_frequency_variance(n, p)
    worst = channel.zero_frequency_variance(n)
    for x in range(k):
        assert plug_in[x] == pytest.approx(channel.variance(_with_zero(p, x), n)[x], rel=1e-9)
        others = [channel.variance(np.eye(k)[z], n)[x] for z in range(k) if z != x]
        assert worst[x] == pytest.approx(max(others), rel=1e-9, abs=1e-300)
    # The closed forms agree with the generic base computation.
    # (atol: the generic form subtracts moments of order 1 / n, rounding at 1e-16 / n)
    generic = Channel._zero_frequency_variance(channel, float(n), p)
    assert_allclose(plug_in, generic, rtol=1e-9, atol=1e-15)
    generic = Channel._zero_frequency_variance(channel, float(n), None)
    assert_allclose(worst, generic, rtol=1e-9, atol=1e-15)
    # The closed-form second moments agree with the generic one (point masses, one per input).
    for closed, generic in zip(
        channel._second_moments(), Channel._second_moments(channel), strict=True
    ):
        assert_allclose(closed, generic, rtol=1e-9, atol=1e-12)


def test_zero_frequency_variance_of_block_hadamard_is_the_block_mass():
    ch = BlockHadamardResponseChannel(1.0, [0, 0, 0, 0, 1, 1, 1, 1])
    c2 = 1.0 / ch._slope**2
    p = np.array([0.3, 0.2, 0.0, 0.0, 0.1, 0.4, 0.0, 0.0])
    v = ch.zero_frequency_variance(1000, p)
    # Category 2 (block 0, mass 0.5) and 6 (block 1, mass 0.5): c'^2 * 0.5 / n each.
    assert_allclose(v[[2, 3, 6, 7]], c2 * 0.5 / 1000, rtol=1e-12)
    # Category 0: the rest of block 0 is 0.2 of the 0.7 left without it.
    assert_allclose(v[0], c2 * 0.2 / 0.7 / 1000, rtol=1e-12)
    # Worst case: the whole mass in x's block, the same for every category.
    assert_allclose(ch.zero_frequency_variance(1000), c2 / 1000, rtol=1e-12)


def test_threshold_treats_symmetric_blocks_alike():
    # Two identical blocks; 300 runs of 2000 reports. A zero cell is declared significant with
    # probability about alpha / k (Bonferroni) in either block. The old code gave block 1 a
    # zero scale, so its zero cells were kept whenever their estimate was positive (about
    # half the time), against about 1% in block 0.
    ch = BlockHadamardResponseChannel(1.0, [0, 0, 0, 0, 1, 1, 1, 1])
    p = np.array([0.3, 0.2, 0.0, 0.0, 0.3, 0.2, 0.0, 0.0])
    k, n, runs, alpha = 8, 2000, 300, 0.05
    rng = np.random.default_rng(14)
    zero = {0: [2, 3], 1: [6, 7]}
    kept = {0: 0, 1: 0}
    for _ in range(runs):
        reports = ch.sample(rng.choice(k, n, p=p), rng)
        est = ProjectedEstimator(method="threshold", alpha=alpha, channel=ch).fit(reports[:, None])
        q, p_hat = est.distribution_, est.unbiased_distribution_
        assert_allclose(q, threshold_from_channel(ch, p_hat, n, alpha), rtol=1e-12)
        sigma0 = np.sqrt(ch.zero_frequency_variance(n, project_simplex(p_hat)))
        significant = p_hat > norm.ppf(1 - alpha / k) * sigma0
        for block, cells in zero.items():
            kept[block] += int(significant[cells].sum())
        # A cell declared significant keeps its estimate (up to the rescaling of the kept).
        assert np.all(q[~significant] == q[~significant][0])
    trials = runs * 2
    rate = {b: kept[b] / trials for b in kept}
    level = alpha / k
    # Binomial standard errors at the nominal per-cell level (the plug-in scale is close to
    # exact here: the block masses are estimated from 2000 reports).
    se = np.sqrt(level * (1 - level) / trials)
    assert abs(rate[0] - rate[1]) <= 5 * np.sqrt(2) * se + 1e-12, rate
    assert rate[0] <= level + 5 * se and rate[1] <= level + 5 * se, rate


def test_high_low_threshold_does_not_depend_on_which_index_is_sensitive():
    # The same mechanism with its categories relabelled: sensitive {0, 1, 2} or {3, 4, 5}.
    # The reports are the same for relabelled inputs, so the estimates must be the same up
    # to the relabelling. The old scale came from a point mass on category 0, sensitive in
    # one labelling and not in the other.
    a = HighLowHadamardResponseChannel(1.0, 6, [0, 1, 2])
    b = HighLowHadamardResponseChannel(1.0, 6, [3, 4, 5])
    perm = np.array([3, 4, 5, 0, 1, 2])  # category x of a is category perm[x] of b
    p = np.array([0.4, 0.0, 0.02, 0.3, 0.28, 0.0])
    n = 3000
    va = a.zero_frequency_variance(n, p)
    pb = np.empty(6)
    pb[perm] = p
    assert_allclose(b.zero_frequency_variance(n, pb)[perm], va, rtol=1e-12)
    assert_allclose(b.zero_frequency_variance(n)[perm], a.zero_frequency_variance(n), rtol=1e-12)
    differs = 0
    for seed in range(20):
        x = np.random.default_rng(seed).choice(6, n, p=p)
        ra = a.sample(x, np.random.default_rng(100 + seed))
        rb = b.sample(perm[x], np.random.default_rng(100 + seed))
        assert_array_equal(ra, rb)
        qa = ProjectedEstimator(method="threshold", channel=a).fit(ra[:, None]).distribution_
        qb = ProjectedEstimator(method="threshold", channel=b).fit(rb[:, None]).distribution_
        assert_allclose(qb[perm], qa, rtol=1e-12, atol=1e-15)
        differs += int(
            not np.allclose(
                qa, ProjectedEstimator(method="clip", channel=a).fit(ra[:, None]).distribution_
            )
        )
    assert differs > 0  # the threshold acted in some runs


def test_high_low_public_zero_cell_has_zero_scale():
    # A non-sensitive category is released through its own symbol, which no other input
    # emits: with frequency zero its estimate is exactly 0, so its scale is 0.
    ch = HighLowHadamardResponseChannel(1.0, 5, [0, 1])
    assert_array_equal(ch.zero_frequency_variance(100, np.full(5, 0.2))[2:], 0.0)
    assert_array_equal(ch.zero_frequency_variance(100)[2:], 0.0)

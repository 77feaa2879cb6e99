"""Block-structured Hadamard response: contract on unequal random partitions, layout, estimator."""

import math
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.linalg import hadamard

from skldp.channels import BlockHadamardResponseChannel, HadamardResponseChannel
from skldp.privacy import BlockStructuredLDP, verify
from tests.channel_contract import ChannelContract, contract_fixture
from tests.conftest import simplex_point


def random_partition(k, m, seed):
    """Labels of a random partition of k inputs into m non-empty blocks of unequal sizes."""
    rng = np.random.default_rng(seed)
    labels = np.concatenate([np.arange(m), rng.integers(0, m, k - m)])
    return rng.permutation(labels)


PARTITIONS = [
    [[0, 1, 2], [3, 4, 5, 6, 7], [8], [9, 10, 11, 12, 13, 14, 15, 16]],  # sizes [3, 5, 1, 8]
    random_partition(17, 4, 1),
    random_partition(9, 3, 2),
    [[0], [1]],
    [[0, 1, 2]],
]
SMALL = [
    BlockHadamardResponseChannel(eps, blocks) for blocks in PARTITIONS for eps in (1e-3, 1.0, 50.0)
]


channel = contract_fixture(SMALL)


class TestBlockHadamardResponseContract(ChannelContract):
    pass


def test_layout_of_unequal_blocks():
    ch = BlockHadamardResponseChannel(1.0, PARTITIONS[0])
    assert_array_equal(ch.block_sizes, [3, 5, 1, 8])
    assert_array_equal(ch.block_outputs, [4, 8, 2, 16])
    assert_array_equal(ch.block_offsets, [0, 4, 12, 14])
    assert ch.n_outputs == 30 and ch.bits_per_report == 5
    Q = ch.to_dense()
    # Block 1 = inputs 3..7 uses rows 1..5 of H_8 on outputs 4..11, and nothing else.
    e = math.e
    sub = np.where(hadamard(8)[1:6] == 1, 2 * e / (8 * (1 + e)), 2 / (8 * (1 + e)))
    assert_allclose(Q[3:8, 4:12], sub, rtol=1e-14)
    assert np.all(Q[3:8, :4] == 0) and np.all(Q[3:8, 12:] == 0)


def test_reports_fold_block_and_column():
    ch = BlockHadamardResponseChannel(1.0, PARTITIONS[0])
    rng = np.random.default_rng(0)
    x = rng.integers(0, 17, 1000)
    y = ch.sample(x, rng)
    block, col = ch.split_reports(y)
    assert_array_equal(block, ch.labels[x])  # the block is sent in the clear
    assert np.all(col < ch.block_outputs[block])
    assert_array_equal(ch.join_reports(block, col), y)
    with pytest.raises(ValueError, match="column"):
        ch.join_reports([0], [4])


def test_partition_forms_agree():
    a = BlockHadamardResponseChannel(1.0, [[0, 3], [1, 2, 4]])
    b = BlockHadamardResponseChannel(1.0, np.array([7, 2, 2, 7, 2]))
    assert a == b and hash(a) == hash(b)
    assert a.guarantee() == BlockStructuredLDP([[0, 3], [1, 2, 4]], 1.0)


def test_one_block_is_hadamard_response():
    k = 11
    block = BlockHadamardResponseChannel(1.0, np.zeros(k, dtype=int))
    assert_array_equal(block.to_dense(), HadamardResponseChannel(1.0, k).to_dense())


def test_privacy_tight_within_blocks_and_open_across():
    labels = random_partition(20, 5, 3)
    ch = BlockHadamardResponseChannel(1.0, labels)
    assert verify(ch, BlockStructuredLDP(labels, 1.0)).passed
    assert not verify(ch, BlockStructuredLDP(labels, 0.99)).passed
    # Coarser promises across blocks fail: plain LDP does not hold at any budget.
    assert not verify(ch, 30.0).passed


@pytest.mark.parametrize(
    "blocks,match",
    [
        ([[0, 1], [1, 2]], "overlap"),
        ([[0, 1], [3]], "cover|lie in"),
        ([[0, 1], []], "empty"),
        ([], "at least one block"),
        ([[0.5, 1]], "integer"),
    ],
)
def test_bad_partitions(blocks, match):
    with pytest.raises(ValueError, match=match):
        BlockHadamardResponseChannel(1.0, blocks)


def test_empty_block_gives_zero_estimates():
    ch = BlockHadamardResponseChannel(1.0, [[0, 1, 2], [3, 4]])
    rng = np.random.default_rng(0)
    y = ch.sample(rng.integers(0, 3, 500), rng)
    est = ch.unbiased(ch.statistics(y), 500)
    assert_array_equal(est[3:], 0.0)


def test_monte_carlo_estimates_match_exact_mean_and_variance(seed):
    ch = BlockHadamardResponseChannel(1.0, PARTITIONS[0])
    p = simplex_point(17)
    n, reps = 2000, 3000
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, ch.forward(p), size=reps)
    est = np.array([ch.unbiased(c, n) for c in counts])
    v = ch.variance(p, n)
    assert np.all(np.abs(est.mean(0) - p) <= 5 * np.sqrt(v / reps))
    assert np.all(np.abs(est.var(0, ddof=1) / v - 1) <= 5 * math.sqrt(2 / reps))
    # The HR variance (one block) is planted as a wrong answer and is rejected.
    wrong = HadamardResponseChannel(1.0, 17).variance(p, n)
    assert not np.all(np.abs(est.var(0, ddof=1) / wrong - 1) <= 5 * math.sqrt(2 / reps))


def test_pickle_keeps_partition():
    ch = BlockHadamardResponseChannel(0.5, random_partition(30, 6, 4))
    again = pickle.loads(pickle.dumps(ch))
    assert again == ch
    assert_array_equal(again.labels, ch.labels)

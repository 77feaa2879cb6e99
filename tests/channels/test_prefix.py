"""The grouped prefix channel of PEM and TreeHist: contract, exact privacy, sampling, counts."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp._hashing import extension_support_counts, linear_hash
from skldp.channels import PrefixHashingChannel
from skldp.privacy import verify
from tests.channel_contract import ChannelContract, contract_fixture

# (epsilon, n_bits, lengths, shares, g) with at most 16 report bits (to_dense enumerates them).
SMALL = [
    PrefixHashingChannel(eps, m, lengths, shares, g)
    for eps, m, lengths, shares, g in [
        (1.0, 3, (1, 3), (1, 2), 3),
        (1e-3, 2, (1, 2), (1, 1), 2),
        (50.0, 2, (2,), (1,), 3),
        (2.0, 3, (1, 2, 3), (1, 1, 2), 2),
    ]
]

channel = contract_fixture(SMALL)


class TestPrefixContract(ChannelContract):
    def test_unbiased_on_expected_statistics_returns_p(self, channel):
        pytest.skip("the bit sums do not identify p (test_bit_sums_identify_nothing_and_say_so)")

    def test_likelihood_matches_dense_columns(self, channel):
        rng = np.random.default_rng(7)
        reports = channel.sample(rng.integers(0, channel.n_inputs, 40), rng)
        codes = reports.astype(np.int64) @ (1 << np.arange(channel.width))
        assert_allclose(channel.likelihood(reports), channel.to_dense()[:, codes].T, rtol=1e-12)


@pytest.mark.parametrize("channel", SMALL, ids=repr)
def test_verify_worst_ratio_is_epsilon(channel):
    # Sec. 7.5 check 5: one report (a group drawn independently of x, then OLH of a prefix)
    result = verify(channel, channel.guarantee())
    assert result.passed
    Q = channel.to_dense()
    pos = Q.min(axis=0) > 0
    worst = np.log(Q[:, pos].max(axis=0) / Q[:, pos].min(axis=0)).max()
    # the budget is spent exactly (up to the grid rounding of the keep probability, which
    # caps the ratio near e^37 for huge budgets)
    assert worst <= channel.epsilon
    if channel.epsilon <= 10:
        assert worst == pytest.approx(channel.epsilon, rel=1e-9, abs=1e-12)


def test_dense_matrix_is_the_formula():
    eps, g = 1.0, 3
    ch = PrefixHashingChannel(eps, 3, (1, 3), (1, 2), g)
    Q = ch.to_dense()
    outs = ch.output_bits()
    numbers = ch.decode(outs)
    ok = ch.valid(numbers)
    p, q_other = np.e / (np.e + g - 1), 1 / (np.e + g - 1)
    w = np.array([1 / 3, 2 / 3])
    for x in range(8):
        group = numbers[ok, 0]
        length = np.array(ch.lengths)[group]
        u = x >> (3 - length)
        a = np.where(np.arange(3)[None, :] < length[:, None], numbers[ok, 1:4], 0)
        h = linear_hash(a, numbers[ok, 4], u, g)
        expect = w[group] * g**-4 * np.where(h == numbers[ok, 5], p, q_other)
        assert_allclose(Q[x, ok], expect, rtol=1e-12)
        assert_array_equal(Q[x, ~ok], 0.0)


def test_sampling_matches_the_dense_rows():
    ch = SMALL[3]
    rng = np.random.default_rng(3)
    n = 60_000
    for x in (0, 5):
        reports = ch.sample(np.full(n, x), rng)
        codes = reports.astype(np.int64) @ (1 << np.arange(ch.width))
        freq = np.bincount(codes, minlength=2**ch.width) / n
        Q = ch.to_dense()[x]
        # chi-square over the outputs: mean 2^w - 1 (about 255), sd about 23
        keep = Q > 0
        chi2 = n * ((freq[keep] - Q[keep]) ** 2 / Q[keep]).sum()
        assert chi2 < keep.sum() + 5 * np.sqrt(2 * keep.sum())
        assert freq[~keep].sum() == 0


def test_extension_counts_match_the_hash_of_every_candidate():
    rng = np.random.default_rng(0)
    n, m, g = 300, 9, 7
    coefs = rng.integers(0, g, (n, m))
    b = rng.integers(0, g, n)
    y = rng.integers(0, g, n)
    parents = np.array([0, 3, 5, 6])
    counts = extension_support_counts(coefs, b, y, parents, 3, 4, g)
    for j, P in enumerate(parents):
        for t in range(16):
            u = (P << 4) | t
            direct = (linear_hash(coefs[:, :7], b, np.full(n, u), g) == y).sum()
            assert counts[j, t] == direct
    first = extension_support_counts(coefs, b, y, [0], 0, 3, g)[0]
    for t in range(8):
        assert first[t] == (linear_hash(coefs[:, :3], b, np.full(n, t), g) == y).sum()


def test_bad_levels_are_refused():
    with pytest.raises(ValueError, match="end at n_bits"):
        PrefixHashingChannel(1.0, 4, (1, 3), (1, 1), 3)
    with pytest.raises(ValueError, match="must increase"):
        PrefixHashingChannel(1.0, 4, (2, 2, 4), (1, 1, 1), 3)
    with pytest.raises(ValueError, match="positive integers"):
        PrefixHashingChannel(1.0, 4, (2, 4), (0, 1), 3)
    with pytest.raises(ValueError, match="at most 62"):
        PrefixHashingChannel(1.0, 63, (63,), (1,), 3)


def test_bit_sums_identify_nothing_and_say_so():
    from skldp.exceptions import MissingHookError

    ch = SMALL[0]
    p = np.full(8, 1 / 8)
    with pytest.raises(MissingHookError, match="HeavyHitterEstimator"):
        ch.unbiased(100 * ch.forward(p), 100)

"""Square Wave's channel: the spec's checkable claims 1.7.1-1.7.4 and the channel contract."""

import math
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp.channels import SquareWaveChannel
from skldp.channels._square_wave import square_wave_densities, square_wave_half_width
from skldp.privacy import LDP, verify
from tests.channel_contract import ChannelContract, contract_fixture

SMALL = [
    SquareWaveChannel(1e-3, 5, 7),
    SquareWaveChannel(1.0, 8),
    SquareWaveChannel(1.0, 6, 11),
    SquareWaveChannel(4.0, 5, 8),
    SquareWaveChannel(50.0, 6, 9),
]

channel = contract_fixture(SMALL)


class TestSquareWaveContract(ChannelContract):
    pass


# -- 1.7.1: b, p, q -------------------------------------------------------------------------------
TABLE = {
    0.5: (0.358155, 0.755948, 0.458506),
    1.0: (0.256083, 1.136305, 0.418023),
    2.0: (0.129337, 2.538010, 0.343482),
    4.0: (0.030428, 12.630880, 0.231343),
}


@pytest.mark.parametrize("eps", sorted(TABLE))
def test_half_width_and_densities_match_the_table(eps):
    b = square_wave_half_width(eps)
    p, q = square_wave_densities(eps, b)
    assert_allclose((b, p, q), TABLE[eps], rtol=0, atol=1e-6)
    assert p / q == pytest.approx(math.exp(eps), rel=1e-12)
    assert 2 * b * p + q == pytest.approx(1.0, abs=1e-12)


def test_half_width_limits():
    assert square_wave_half_width(0.01) == pytest.approx(0.496678, abs=1e-6)
    assert square_wave_half_width(1e-6) == pytest.approx(0.5, abs=1e-6)
    eps = 30.0
    assert square_wave_half_width(eps) == pytest.approx(eps / (2 * math.exp(eps)), rel=0.05)


# -- 1.7.2: the matrix is the closed form ----------------------------------------------------------
def _closed_form(eps, d, dp):
    """The spec's formula M[j, i] = q dy + (p - q) (H(b) - H(-b)) / dx, as rows = inputs.

    Its squared ramps cancel in float64 (about 5e-12 at epsilon = 4), hence atol 1e-10.
    """
    b = square_wave_half_width(eps)
    E = math.exp(eps)
    p, q = E / (2 * b * E + 1), 1 / (2 * b * E + 1)
    dx, dy = 1 / d, (1 + 2 * b) / dp
    x0 = np.arange(d)[:, None] * dx
    x1 = x0 + dx
    y0 = -b + np.arange(dp)[None, :] * dy
    y1 = y0 + dy

    def R(t):
        return np.maximum(t, 0.0) ** 2 / 2

    def H(a):
        return R(x1 + a - y0) - R(x0 + a - y0) - R(x1 + a - y1) + R(x0 + a - y1)

    return q * dy + (p - q) * (H(b) - H(-b)) / dx


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("d,dp", [(64, 64), (256, 1024), (37, 100), (100, 37)])
def test_matrix_is_the_closed_form(eps, d, dp):
    Q = SquareWaveChannel(eps, d, dp).to_dense()
    assert_allclose(Q, _closed_form(eps, d, dp), rtol=0, atol=1e-10)
    assert_array_equal(Q.sum(axis=1), 1.0)  # exactly: integers over 2**53


def test_matrix_at_the_authors_size_and_rows_sum_to_one():
    for eps in (0.5, 1.0, 2.0, 4.0):
        ch = SquareWaveChannel(eps)  # d = d' = 1024, the authors' default
        Q = ch.to_dense()
        assert_allclose(Q, _closed_form(eps, 1024, 1024), rtol=0, atol=1e-10)
        assert np.abs(Q.sum(axis=1) - 1).max() <= 1e-12
        # entries are on the 2**-53 grid and each row sums to 2**53 of them exactly
        units = Q * 2.0**53
        assert_array_equal(units, np.round(units))
        assert int(units[:5].astype(np.int64).sum(axis=1).max()) == 2**53


def test_exact_entry_rule():
    # wholly inside the band: p dy exactly (on the grid); wholly outside: q dy; the rest between
    eps, d = 1.0, 64
    ch = SquareWaveChannel(eps, d)
    Q = ch.to_dense()
    b, dy = ch.half_width, ch.output_width
    x0 = np.arange(d)[:, None] / d
    x1 = x0 + 1 / d
    y0 = -b + np.arange(d)[None, :] * dy
    y1 = y0 + dy
    inside = (y1 - x0 <= b) & (x1 - y0 <= b)
    outside = (y0 - x1 >= b) | (x0 - y1 >= b)
    lo, hi = Q.min(), Q.max()
    assert np.all(Q[inside] == hi) and np.all(Q[outside] == lo)
    assert inside.sum() > d and outside.sum() > d
    assert hi == pytest.approx(ch.p * dy, rel=1e-14) and lo == pytest.approx(ch.q * dy, rel=1e-14)


# -- 1.7.3: privacy --------------------------------------------------------------------------------
def test_largest_ratio_is_e_epsilon_and_verify_passes():
    eps = 1.0
    ch = SquareWaveChannel(eps, 64, 64)
    Q = ch.to_dense()
    assert np.log((Q.max(axis=0) / Q.min(axis=0)).max()) == pytest.approx(eps, abs=1e-9)
    assert verify(ch, LDP(eps)).passed
    # exactly, in rational arithmetic, for the largest and smallest entries
    assert Fraction(float(Q.max())) <= Fraction(math.exp(eps)) * Fraction(float(Q.min()))


@pytest.mark.parametrize("eps", [0.5, 2.0, 4.0, 10.0])
@pytest.mark.parametrize("d,dp", [(16, 256), (37, 100), (64, 64)])
def test_verify_passes(eps, d, dp):
    assert verify(SquareWaveChannel(eps, d, dp), LDP(eps)).passed


def test_the_float_closed_form_alone_would_not_verify_at_the_authors_size():
    # the motivation of the exact-entry rule: the raw closed form's largest ratio overshoots
    Q = _closed_form(4.0, 1024, 1024)
    raw = (Q.max(axis=0) / Q.min(axis=0)).max()
    ours = SquareWaveChannel(4.0).to_dense()
    assert (ours.max(axis=0) / ours.min(axis=0)).max() <= math.exp(4.0)
    assert raw >= (ours.max(axis=0) / ours.min(axis=0)).max()


# -- 1.7.4: sampling ---------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [1.0, 4.0])
@pytest.mark.parametrize("v", [0.0, 0.3, 1.0])
def test_fraction_within_the_band(eps, v):
    # with many fine output bins, the share of reports whose bin middle is within b of v is
    # 2bp up to the discretization (one output bin at each edge) and MC error
    d = 1024
    ch = SquareWaveChannel(eps, d, 4096)
    n = 200_000
    x = np.full(n, min(int(v * d), d - 1))
    y = ch.output_value(ch.sample(x, np.random.default_rng(7)))
    centre = (min(int(v * d), d - 1) + 0.5) / d
    frac = np.mean(np.abs(y - centre) <= ch.half_width)
    target = 2 * ch.half_width * ch.p
    se = math.sqrt(target * (1 - target) / n)
    slack = 2 * ch.p * ch.output_width + ch.p / d  # an edge bin on each side, the bin's width
    assert abs(frac - target) <= 4 * se + slack
    assert y.min() >= -ch.half_width and y.max() <= 1 + ch.half_width


def test_sampling_follows_the_stated_row_exactly():
    # a chi-square style check on one row: every count within 5 standard errors
    ch = SquareWaveChannel(2.0, 8, 16)
    rng = np.random.default_rng(3)
    n = 400_000
    reports = ch.sample(np.full(n, 3), rng)
    counts = np.bincount(reports, minlength=16)
    row = ch.to_dense()[3]
    assert np.all(np.abs(counts - n * row) <= 5 * np.sqrt(n * row * (1 - row)))


def test_refuses_bad_arguments():
    with pytest.raises(ValueError, match="half_width"):
        SquareWaveChannel(1.0, 8, half_width=-1.0)
    with pytest.raises((TypeError, ValueError), match="n_inputs"):
        SquareWaveChannel(1.0, 1)
    assert SquareWaveChannel(1.0, 8, half_width=0.1).half_width == 0.1

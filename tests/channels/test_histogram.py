"""Histogram encoding: SHE with geometric noise (a bit-vector channel) and THE (unary bits)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skldp.channels import HistogramEncodingChannel, ThresholdHistogramChannel
from skldp.channels._histogram import optimal_threshold, the_zero_variance
from skldp.privacy import tight_epsilon_matrix, verify
from tests.channel_contract import ChannelContract, contract_fixture
from tests.conftest import simplex_point

SMALL = [
    HistogramEncodingChannel(1.0, 2),
    HistogramEncodingChannel(4.0, 3),
    HistogramEncodingChannel(50.0, 4),
    ThresholdHistogramChannel(1e-3, 2),
    ThresholdHistogramChannel(1.0, 5),
    ThresholdHistogramChannel(50.0, 3),
    ThresholdHistogramChannel(1.0, 3, threshold=0.9),
]

channel = contract_fixture(SMALL)


class TestHistogramContract(ChannelContract):
    def test_bits_are_uint8(self, channel):
        out = channel.sample(np.array([0, 1, 1]), np.random.default_rng(0))
        assert out.dtype == np.uint8 and out.shape == (3, channel.width)


# -- THE: the table of the spec (Wang et al. Sec. 4, minimised numerically) --------------------
@pytest.mark.parametrize(
    "eps, theta, var, p, q, tight",
    [
        (0.5, 0.5616, 17.828, 0.5519, 0.4345, 0.472),
        (1.0, 0.6186, 4.8072, 0.5868, 0.3670, 0.896),
        (2.0, 0.7096, 1.2836, 0.6260, 0.2459, 1.636),
        (4.0, 0.8157, 0.2852, 0.6542, 0.0978, 2.859),
        (8.0, 0.8998, 0.0318, 0.6651, 0.0137, 4.965),
    ],
)
def test_the_optimal_threshold_table(eps, theta, var, p, q, tight):
    ch = ThresholdHistogramChannel(eps, 4)
    assert ch.threshold == pytest.approx(theta, abs=1e-4)
    assert ch.zero_frequency_variance(1)[0] == pytest.approx(var, rel=1e-3)
    assert ch.zero_frequency_variance(10_000)[0] * 10_000 == pytest.approx(var, rel=1e-3)
    assert (ch.p, ch.q) == pytest.approx((p, q), abs=1e-4)
    # the declaration is the paper's bound; the bits' tight loss is below it
    E = tight_epsilon_matrix(ch)
    assert E.max() == pytest.approx(tight, abs=1e-3)
    assert E.max() < eps


def test_the_dense_is_unary_encoding_with_laplace_tails():
    eps, theta, k = 1.3, 0.7, 3
    ch = ThresholdHistogramChannel(eps, k, threshold=theta)
    p = 1 - 0.5 * math.exp(-eps * (1 - theta) / 2)
    q = 0.5 * math.exp(-eps * theta / 2)
    outs = ch.output_bits().astype(bool)
    P1 = np.full((k, k), q)
    np.fill_diagonal(P1, p)
    expected = np.prod(np.where(outs[None], P1[:, None], 1 - P1[:, None]), axis=2)
    assert_allclose(ch.to_dense(), expected, rtol=1e-14)
    assert ch.p <= p and ch.q >= q and (ch.p * 2**53).is_integer() and (ch.q * 2**53).is_integer()


def test_the_threshold_minimises_var_star():
    for eps in (0.1, 1.0, 20.0):
        t = optimal_threshold(eps)
        assert 0.5 < t < 1.0
        for other in (t - 1e-3, t + 1e-3):
            assert the_zero_variance(eps, t) <= the_zero_variance(eps, other)


# -- SHE: the geometric mechanism -------------------------------------------------------------
@pytest.mark.parametrize("eps, var", [(0.5, 31.834), (1.0, 7.835), (4.0, 0.362)])
def test_she_variance_below_laplace(eps, var):
    ch = HistogramEncodingChannel(eps, 8)
    u = eps / 2
    unclamped = 2 * math.exp(u) / math.expm1(u) ** 2
    # the clamp and the 2**-20 margin on the noise base move the variance by a relative 1e-5
    assert ch.zero_frequency_variance(1)[0] == pytest.approx(unclamped, rel=1e-5)
    assert ch.zero_frequency_variance(1)[0] == pytest.approx(var, abs=1e-3)
    assert ch.zero_frequency_variance(1)[0] < 8 / eps**2
    assert ch.gap == pytest.approx(1.0, abs=1e-8)


def test_she_tables_are_the_clamped_geometric():
    eps = 1.0
    ch = HistogramEncodingChannel(eps, 2)
    a, L = ch.noise_base, ch.clamp
    assert a >= math.exp(-eps / 2) and a == pytest.approx(math.exp(-eps / 2), rel=1e-5)
    v = np.arange(-L, L + 2)
    for b, table in ((0, ch.table0), (1, ch.table1)):
        z = v - b
        row = (1 - a) / (1 + a) * a ** np.abs(z)
        row[0] = a ** abs(z[0]) / (1 + a)
        row[-1] = a ** abs(z[-1]) / (1 + a)
        assert_allclose(table, row, rtol=1e-6)
        assert table.sum() == 1.0 and np.all(table * 2.0**53 == np.round(table * 2.0**53))
    # every ratio of the realized rows within e^(eps/2), in exact rational arithmetic
    bound = Fraction(math.exp(eps / 2))
    for t0, t1 in zip(ch.table0, ch.table1, strict=True):
        hi, lo = max(Fraction(t0), Fraction(t1)), min(Fraction(t0), Fraction(t1))
        assert hi <= bound * lo


def test_she_dense_matches_product_form_and_is_tight():
    ch = HistogramEncodingChannel(1.0, 2)
    Q = ch.to_dense()
    b = ch.bits_per_value
    codes = (np.arange(2**ch.width)[:, None] >> (b * np.arange(2))) & (2**b - 1)
    t0 = np.zeros(2**b)
    t1 = np.zeros(2**b)
    t0[: ch.n_symbols], t1[: ch.n_symbols] = ch.table0, ch.table1
    expected = np.stack([t1[codes[:, 0]] * t0[codes[:, 1]], t0[codes[:, 0]] * t1[codes[:, 1]]])
    assert_allclose(Q, expected, rtol=1e-14)
    E = tight_epsilon_matrix(ch)
    assert E.max() <= 1.0 and E.max() == pytest.approx(1.0, abs=1e-5)
    assert verify(ch, ch.guarantee()).passed


def test_she_rejects_codes_outside_the_table():
    ch = HistogramEncodingChannel(1.0, 2)  # 78 symbols in 7 bits
    assert (ch.clamp, ch.n_symbols, ch.bits_per_value) == (38, 78, 7)
    bad = np.zeros((1, ch.width), dtype=np.uint8)
    bad[0, : ch.bits_per_value] = 1  # symbol 127
    with pytest.raises(ValueError, match=r"outside \[0, 78\)"):
        ch.check_reports(bad)


def test_refuses_budgets_too_small():
    with pytest.raises(ValueError, match="too small"):
        HistogramEncodingChannel(1e-14, 3)
    # a tiny budget that is still usable clamps to one coin per coordinate (basic RAPPOR)
    assert HistogramEncodingChannel(1e-9, 3).clamp == 0
    with pytest.raises(ValueError, match="threshold must lie"):
        ThresholdHistogramChannel(1.0, 3, threshold=1.0)


# -- simulation: unbiased within 4 SE, variance within 10% of the formula ----------------------
@pytest.mark.parametrize(
    "ch", [HistogramEncodingChannel(1.0, 8), ThresholdHistogramChannel(1.0, 8)], ids=["SHE", "THE"]
)
def test_unbiased_and_variance_by_simulation(ch):
    rng = np.random.default_rng(11)
    k, n, reps = ch.n_inputs, 400, 1000
    p = simplex_point(k)
    x = rng.choice(k, size=n * reps, p=p)
    reports = ch.sample(x, rng).reshape(reps, n, ch.width)
    stats = reports.sum(axis=1, dtype=np.int64)
    est = np.stack([ch.unbiased(s, n) for s in stats])
    var = ch.variance(p, n)
    se = np.sqrt(var / reps)
    assert np.all(np.abs(est.mean(axis=0) - p) <= 4 * se)
    # pooled over the k coordinates: relative SE about sqrt(2 / (reps k)) = 1.6%
    ratio = np.mean(est.var(axis=0, ddof=1) / var)
    assert ratio == pytest.approx(1.0, abs=0.10)

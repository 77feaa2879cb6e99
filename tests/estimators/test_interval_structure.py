"""Closed-form moments of RR-type channels (issue 33, item 3): equal to the dense sums.

The score interval of a symbol channel takes the reports' moments of their contributions
:math:`g(y)` = ``unbiased(e_y, 1)``. For k-RR (and every channel whose contributions are
:math:`a + u_y e_y`) they have closed forms in O(k); these tests hold them to the dense
computation (one ``unbiased`` call per output, a seen x k matrix) at small k, and check that
the closed form is taken at k = 10^4, where the dense one was refused.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skldp.estimators import _intervals
from skldp.channels import (
    BlockHadamardResponseChannel,
    HadamardResponseChannel,
    RandomizedResponseChannel,
    RAPPORChannel,
    UtilityOptimizedRRChannel,
)
from skldp.estimators import EmpiricalEstimator

RR_TYPE = [
    RandomizedResponseChannel(1.3, 2),
    RandomizedResponseChannel(0.7, 9),
    RandomizedResponseChannel(4.0, 40),
    UtilityOptimizedRRChannel(1.0, 12, [0, 3, 5]),
]


def _counts(k, seed):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 30, k).astype(float)
    counts[0] = 0.0  # an unseen output
    return counts


@pytest.mark.parametrize("channel", RR_TYPE, ids=repr)
def test_closed_form_moments_equal_the_dense_sums(channel):
    counts = _counts(channel.n_outputs, 0)
    n = int(counts.sum())
    assert _intervals.diagonal_contributions(channel) is not None
    closed = _intervals.report_moments(channel, counts, n)
    dense = _intervals._dense_report_moments(channel, counts, n)
    for c, d in zip(closed, dense, strict=True):
        assert_allclose(c, d, rtol=1e-12, atol=1e-12 * np.abs(d).max())


@pytest.mark.parametrize("channel", RR_TYPE, ids=repr)
def test_closed_form_self_moment_and_linear_contributions_equal_the_dense_ones(
    channel, monkeypatch
):
    k = channel.n_inputs
    closed_self = _intervals._self_second_moment(channel, 1000)
    c = np.random.default_rng(1).normal(size=k)
    outputs = np.flatnonzero(_counts(k, 2))
    closed_dot = _intervals._contributions_dot(channel, outputs, c)
    monkeypatch.setattr(_intervals, "diagonal_contributions", lambda channel: None)
    assert_allclose(closed_self, _intervals._self_second_moment(channel, 1000), rtol=1e-12)
    dense_dot = _intervals._contributions(channel, outputs) @ c
    assert_allclose(closed_dot, dense_dot, rtol=1e-12, atol=1e-12 * np.abs(dense_dot).max())


def test_the_diagonal_form_is_read_exactly_from_krr():
    ch = RandomizedResponseChannel(1.0, 5)
    a, u = _intervals.diagonal_contributions(ch)
    Q = ch.to_dense()
    keep, other = Q[0, 0], Q[0, 1]
    assert_allclose(u, 1.0 / (keep - other), rtol=1e-13)
    assert_allclose(a, -other / (keep - other), rtol=1e-13)


@pytest.mark.parametrize(
    "channel",
    [
        HadamardResponseChannel(1.0, 7),
        BlockHadamardResponseChannel(1.0, [0, 0, 0, 0, 1, 1, 1, 1]),
        RAPPORChannel(1.0, 6),
    ],
    ids=repr,
)
def test_other_channels_have_no_diagonal_form(channel):
    assert _intervals.diagonal_contributions(channel) is None


def test_krr_at_ten_thousand_categories_takes_the_reports_moments():
    # Above MAX_EXACT_WILSON_CATEGORIES observed outputs the dense sums were refused (None)
    # and the interval fell back on the channel's variance line; the closed form has no limit.
    k = 10_000
    ch = RandomizedResponseChannel(1.0, k)
    counts = np.random.default_rng(3).multinomial(10**6, np.full(k, 1.0 / k)).astype(float)
    assert np.count_nonzero(counts) > _intervals.MAX_EXACT_WILSON_CATEGORIES
    square, cube, fourth = _intervals.report_moments(ch, counts, 10**6)
    a, u = _intervals.diagonal_contributions(ch)
    i = int(np.argmax(counts))
    share = counts[i] / 10**6
    assert square[i] == pytest.approx((1 - share) * a[i] ** 2 + share * (a[i] + u[i]) ** 2)
    assert fourth[i] == pytest.approx((1 - share) * a[i] ** 4 + share * (a[i] + u[i]) ** 4)


def test_krr_intervals_are_unchanged_by_the_closed_form(monkeypatch):
    k = 30
    ch = RandomizedResponseChannel(1.0, k)
    rng = np.random.default_rng(4)
    reports = ch.sample(rng.integers(0, k, 3000), rng)
    est = EmpiricalEstimator(channel=ch).fit(reports[:, None])
    fast = [est.confidence_interval(simultaneous=s) for s in (False, True)]
    monkeypatch.setattr(_intervals, "diagonal_contributions", lambda channel: None)
    dense = [est.confidence_interval(simultaneous=s) for s in (False, True)]
    for (lo, hi), (lo0, hi0) in zip(fast, dense, strict=True):
        assert_allclose(lo, lo0, rtol=0, atol=1e-13)
        assert_allclose(hi, hi0, rtol=0, atol=1e-13)

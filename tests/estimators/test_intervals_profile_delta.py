"""Issue 18, remaining items: the score interval's variance from the reports' own moments,
the profile-likelihood interval of maximum likelihood and the delta method for linear
quantities: exact identities, coverage, errors.

Coverage tests fix the seed and use R repetitions; the number of covering repetitions is
Binomial(R, c) for a true coverage c. With R = 800 and threshold T = 0.925: at c = 0.95 the sd
of the rate is 0.0077, P(rate < T) = P(Z < -3.24) = 0.0006; at c = 0.90 it is 0.0106,
P(rate >= T) = P(Z >= 2.36) = 0.009, so an interval that under-covers by five points fails.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import minimize
from scipy.stats import norm

from skldp import EMEstimator, EmpiricalEstimator, ProjectedEstimator
from skldp.estimators import _intervals, _likelihood_intervals
from skldp.estimators._state import ChunkStatistics
from skldp._reports import Reports, ReportSpec
from skldp.channels import (
    BlockHadamardResponseChannel,
    HighLowHadamardResponseChannel,
    RandomizedResponseChannel,
    RAPPORChannel,
)
from skldp.channels._likelihood import MultinomialModel
from skldp.estimators import category_difference, category_mass, top_k_membership
from skldp.projection import project_simplex

Z95 = norm.ppf(0.975)
REPS, THRESHOLD = 800, 0.925
P10 = np.array([0.25, 0.2, 0.15, 0.12, 0.1, 0.07, 0.05, 0.03, 0.02, 0.01])
BLOCK = BlockHadamardResponseChannel(1.0, [0] * 5 + [1] * 5)


def _counts(channel, p, n, rng, size=None):
    m = channel.forward(p)
    return rng.multinomial(n, m / m.sum(), size=size)


def _fit(cls, channel, counts):
    n = int(counts.sum())
    stats = MultinomialModel(channel, counts) if cls is EMEstimator else counts
    return cls().fit(ChunkStatistics([ReportSpec(channel)], [stats], n, 1))


# -- the score interval from the reports' moments ------------------------------------------------
def test_block_hadamard_score_bounds_use_the_observed_block_count():
    # Block Hadamard: g_x(y) = +-c' on the outputs of x's block and 0 elsewhere, so the mean
    # square of the reports' contributions is c'^2 N_b / n and the mean cube c'^2 p_hat_x.
    # At each interior bound t: (p_hat - t)^2 = z^2 (L + s (t - p_hat) - t^2) / n with
    # s = (T - p_hat L) / (L - p_hat^2), from the block count alone.
    n = 1000
    counts = _counts(BLOCK, P10, n, np.random.default_rng(30))
    est = _fit(EmpiricalEstimator, BLOCK, counts)
    lo, hi = est.confidence_interval(0.05, method="wilson")
    p = est.distribution_
    c2 = 1.0 / BLOCK._slope**2
    block_count = np.array([counts[:8].sum(), counts[8:].sum()])[BLOCK.labels]
    L = c2 * block_count / n
    s = (c2 * p - p * L) / (L - p**2)
    checked = 0
    for t in np.concatenate([lo, hi]).reshape(2, -1):
        inner = (t > 0) & (t < 1)
        lhs = (p - t) ** 2
        rhs = Z95**2 * (L + s * (t - p) - t**2) / n
        assert_allclose(lhs[inner], rhs[inner], rtol=1e-9)
        checked += inner.sum()
    assert checked >= 15


def test_simultaneous_score_intervals_cover_block_hadamard():
    # Measured at n = 1000: 0.902 with the variance path from the projected estimate (the
    # old code: the block mass was re-estimated from noisy category estimates), 0.948 with
    # the reports' own moments (2000 repetitions each). This test fails on the old code.
    rng = np.random.default_rng(31)
    hits = 0
    for counts in _counts(BLOCK, P10, 1000, rng, size=REPS):
        est = _fit(EmpiricalEstimator, BLOCK, counts)
        lo, hi = est.confidence_interval(0.05, simultaneous=True)
        hits += bool(np.all((lo <= P10) & (hi >= P10)))
    assert hits / REPS >= THRESHOLD


def test_skewness_correction_widens_the_lower_side_of_a_right_skewed_rare_cell():
    # High-low: a rare non-sensitive cell's estimate is a scaled binomial count, skewed to
    # the right (positive third central moment); the Cornish-Fisher correction moves its
    # lower bound down and its upper bound down too (z - delta at the upper bound).
    ch = HighLowHadamardResponseChannel(1.0, 10, [0, 1, 2, 3, 4])
    counts = _counts(ch, P10, 10_000, np.random.default_rng(32))
    p_hat = ch.unbiased(counts, 10_000)
    lo0, hi0 = _intervals.wilson_interval(ch, p_hat, 10_000, 0.005, counts)
    lo1, hi1 = _intervals.wilson_interval(ch, p_hat, 10_000, 0.005, counts, skewness=True)
    assert 0 < lo1[9] < lo0[9]
    assert hi1[9] < hi0[9]


# -- profile likelihood -------------------------------------------------------------------------
def _constrained_max(model, k, i, t):
    """max L(p) over the simplex with p_i = t, by SLSQP (an independent solver)."""
    free = [j for j in range(k) if j != i]

    def neg(q):
        p = np.empty(k)
        p[i] = t
        p[free] = q
        return -model.log_likelihood(p)

    best = np.inf
    for seed in range(3):
        q0 = np.random.default_rng(seed).dirichlet(np.ones(k - 1)) * (1 - t)
        res = minimize(
            neg,
            q0,
            method="SLSQP",
            bounds=[(1e-12, 1)] * (k - 1),
            constraints=[{"type": "eq", "fun": lambda q: q.sum() - (1 - t)}],
            options={"ftol": 1e-14, "maxiter": 500},
        )
        best = min(best, res.fun)
    return -best


def test_profile_bounds_solve_the_likelihood_ratio_equation():
    # At each interior bound t of category i: 2 n (L(p_hat) - max_{p_i = t} L) = z^2,
    # with the constrained maximum from scipy's SLSQP.
    ch = RandomizedResponseChannel(1.0, 4)
    n = 2000
    counts = _counts(ch, np.array([0.5, 0.3, 0.15, 0.05]), n, np.random.default_rng(33))
    est = _fit(EMEstimator, ch, counts)
    model = est._stats[0]
    lo, hi = est.confidence_interval(0.05, method="profile")
    top = model.log_likelihood(est.distribution_)
    checked = 0
    for i in range(4):
        for t in (lo[i], hi[i]):
            if not 0 < t < 1:
                continue  # the whole side is inside the interval
            checked += 1
            dev = 2 * n * (top - _constrained_max(model, 4, i, t))
            assert dev == pytest.approx(Z95**2, abs=0.02)
    assert checked >= 6


def test_profile_bounds_of_block_hadamard_with_an_estimate_at_zero():
    # The estimate has a category at zero whose gradient brings it back into the face: the
    # face's Newton step made it negative, the step was cut to length zero and the face was
    # never maximized (certified gap 0.3 where 2e-6 was asked), so the deviance stayed under
    # z^2 far out and the bound was found near 1. Now every bound solves the equation.
    n = 1000
    counts = _counts(BLOCK, P10, n, np.random.default_rng(1))
    est = _fit(EMEstimator, BLOCK, counts)
    p_hat = est.distribution_
    assert np.any(p_hat == 0)
    model = est._stats[0]
    _, _, gap = _likelihood_intervals._face_maximum(model, p_hat, 0, 0.7, 2e-6)
    assert gap <= 2e-6
    lo, hi = est.confidence_interval(0.05, method="profile")
    top = model.log_likelihood(p_hat)
    checked = 0
    for i in range(10):
        for t in (lo[i], hi[i]):
            if not 0 < t < 1:
                continue
            checked += 1
            dev = 2 * n * (top - _constrained_max(model, 10, i, t))
            assert dev == pytest.approx(Z95**2, abs=0.05)
    assert checked >= 12


def test_profile_lower_bound_is_zero_at_a_boundary_estimate():
    ch = RandomizedResponseChannel(2.0, 5)
    counts = _counts(ch, np.array([0.5, 0.3, 0.2, 0.0, 0.0]), 2000, np.random.default_rng(5))
    est = _fit(EMEstimator, ch, counts)
    zero = np.flatnonzero(est.distribution_ <= 1e-9)
    assert zero.size
    lo, hi = est.confidence_interval(0.05, method="profile")
    assert np.all(lo[zero] == 0) and np.all(hi[zero] > 0)
    assert np.all((lo >= 0) & (lo <= est.distribution_) & (est.distribution_ <= hi) & (hi <= 1))


def test_profile_interval_covers_a_rare_cell():
    # k-RR, k = 4, a 3% cell at n = 2000; measured 0.95 (profile). Fails at 0.90 (see top).
    ch = RandomizedResponseChannel(1.0, 4)
    p = np.array([0.5, 0.3, 0.17, 0.03])
    rng = np.random.default_rng(34)
    hits = 0
    for counts in _counts(ch, p, 2000, rng, size=REPS):
        lo, hi = _fit(EMEstimator, ch, counts).confidence_interval(0.05, method="profile")
        hits += bool(lo[3] <= p[3] <= hi[3])
    assert hits / REPS >= THRESHOLD


def test_profile_is_for_small_domains_and_for_maximum_likelihood():
    ch = RandomizedResponseChannel(1.0, _likelihood_intervals.MAX_PROFILE_CATEGORIES + 1)
    k = ch.n_inputs
    counts = _counts(ch, np.full(k, 1 / k), 5000, np.random.default_rng(35))
    with pytest.raises(ValueError, match="method='profile' .* at most 128. Use method='wilson'"):
        _fit(EMEstimator, ch, counts).confidence_interval(method="profile")
    small = RandomizedResponseChannel(1.0, 3)
    est = _fit(
        EmpiricalEstimator, small, _counts(small, np.full(3, 1 / 3), 100, np.random.default_rng(0))
    )
    with pytest.raises(ValueError, match="got 'profile'"):
        est.confidence_interval(method="profile")


# -- delta method -------------------------------------------------------------------------------
def test_delta_mass_on_krr_is_the_wilson_interval_of_the_pooled_count():
    # k-RR: p_0 + p_1 is estimated from N_0 + N_1 ~ Bin(n, M), M = 2 b + (a - b)(p_0 + p_1):
    # the score interval of the mass is Wilson's interval of M mapped by (M - 2 b) / (a - b).
    ch = RandomizedResponseChannel(1.0, 4)
    n = 3000
    counts = _counts(ch, np.array([0.4, 0.3, 0.2, 0.1]), n, np.random.default_rng(36))
    est = _fit(EmpiricalEstimator, ch, counts)
    value, lo, hi = est.quantity_interval(category_mass([0, 1]), method="delta")
    Q = ch.to_dense()
    a, b = Q[0, 0], Q[0, 1]
    m_hat = counts[:2].sum() / n
    w = Z95**2 / n
    centre = (m_hat + w / 2) / (1 + w)
    half = Z95 * np.sqrt(m_hat * (1 - m_hat) / n + w / (4 * n)) / (1 + w)
    assert value == pytest.approx(est.distribution_[:2].sum())
    assert lo == pytest.approx((centre - half - 2 * b) / (a - b), rel=1e-9)
    assert hi == pytest.approx((centre + half - 2 * b) / (a - b), rel=1e-9)


def test_delta_on_unary_encoding_is_normal_with_the_exact_variance():
    ch = RAPPORChannel(1.0, 4)
    n = 2000
    rng = np.random.default_rng(41)
    x = np.repeat(np.arange(4), rng.multinomial(n, [0.4, 0.3, 0.2, 0.1]))
    est = EmpiricalEstimator().fit(Reports(ch.sample(x, rng), [ReportSpec(ch)]))
    value, lo, hi = est.quantity_interval(category_difference(0, 1), method="delta")
    c = np.array([1.0, -1.0, 0.0, 0.0])
    sd = np.sqrt(_intervals.linear_variance(ch, c, project_simplex(est.distribution_), n))
    assert lo == pytest.approx(value - Z95 * sd, rel=1e-12)
    assert hi == pytest.approx(value + Z95 * sd, rel=1e-12)


def test_delta_variance_on_rappor_matches_the_dense_channel():
    # E[(c . g(Y))^2] over the 2^k outputs of the dense channel, g(y) = (y - b) / (a - b).
    ch = RAPPORChannel(1.0, 4)
    p = np.array([0.4, 0.3, 0.2, 0.1])
    n = 1000
    Q = ch.to_dense()  # (k, 2^k), outputs in the order of output_bits()
    Y = ch.output_bits().astype(float)
    a, b = Q[0][Y[:, 0] == 1].sum(), Q[1][Y[:, 0] == 1].sum()  # P(bit 0 = 1 | x = 0), x = 1
    G = (Y - b) / (a - b)
    m = p @ Q
    for c in (np.array([1.0, 1.0, 0.0, 0.0]), np.array([1.0, -1.0, 0.0, 0.0])):
        exact = (m @ (G @ c) ** 2 - (c @ p) ** 2) / n
        assert _intervals.linear_variance(ch, c, p, n) == pytest.approx(exact, rel=1e-10)


def test_delta_interval_covers_a_rare_mass_and_the_bootstrap_agrees():
    # High-low, the mass of the two rarest non-sensitive cells (3%) at n = 1000.
    ch = HighLowHadamardResponseChannel(1.0, 10, [0, 1, 2, 3, 4])
    rng = np.random.default_rng(37)
    quantity = category_mass([8, 9])
    hits = 0
    for counts in _counts(ch, P10, 1000, rng, size=REPS):
        _, lo, hi = _fit(EmpiricalEstimator, ch, counts).quantity_interval(quantity)
        hits += bool(lo <= 0.03 <= hi)
    assert hits / REPS >= THRESHOLD
    est = _fit(ProjectedEstimator, ch, _counts(ch, P10, 1000, rng))
    _, lo_d, hi_d = est.quantity_interval(category_difference(0, 1), method="delta")
    _, lo_b, hi_b = est.quantity_interval(
        category_difference(0, 1), method="bootstrap", n_resamples=2000, random_state=0
    )
    # same width within 10% (the bootstrap's percentile width has a few percent error)
    assert hi_d - lo_d == pytest.approx(hi_b - lo_b, rel=0.10)


def test_auto_uses_delta_for_linear_quantities_and_bootstrap_otherwise():
    ch = RandomizedResponseChannel(1.0, 4)
    est = _fit(
        EMEstimator,
        ch,
        _counts(ch, np.array([0.4, 0.3, 0.2, 0.1]), 2000, np.random.default_rng(38)),
    )
    assert est.quantity_interval(category_mass([0])) == est.quantity_interval(
        category_mass([0]), method="delta"
    )
    member = top_k_membership(0, 2)
    assert est.quantity_interval(member, n_resamples=50, random_state=0) == est.quantity_interval(
        member, method="bootstrap", n_resamples=50, random_state=0
    )


@pytest.mark.parametrize(
    "quantity, kwargs, match",
    [
        (top_k_membership(0, 1), {"method": "delta"}, "method='delta' is for the linear"),
        (category_mass([0]), {"method": "exact"}, "method must be one of .*got 'exact'"),
        (category_mass([9]), {"method": "delta"}, "category_mass: 9 is not a category"),
    ],
)
def test_bad_quantity_arguments_are_named(quantity, kwargs, match):
    ch = RandomizedResponseChannel(1.0, 3)
    est = _fit(
        EmpiricalEstimator, ch, _counts(ch, np.full(3, 1 / 3), 300, np.random.default_rng(39))
    )
    with pytest.raises(ValueError, match=match):
        est.quantity_interval(quantity, **kwargs)


def test_reports_and_statistics_give_the_same_intervals():
    # The study fits from statistics (ChunkStatistics); users fit reports: same numbers.
    ch = BLOCK
    counts = _counts(ch, P10, 1500, np.random.default_rng(40))
    reports = Reports(np.repeat(np.arange(ch.n_outputs), counts)[:, None], [ReportSpec(ch)])
    for cls in (EmpiricalEstimator, EMEstimator):
        a = cls().fit(reports).confidence_interval(simultaneous=True)
        b = _fit(cls, ch, counts).confidence_interval(simultaneous=True)
        assert_allclose(a, b, rtol=1e-12)

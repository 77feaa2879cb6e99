"""Checkable claims of Kairouz, Bonawitz and Ramage, "Discrete Distribution Estimation under
Local Privacy", ICML 2016 (spec: kairouz2016-distribution-estimation.md, section 6).

Numbers refer to the claims of the spec's section 6. Statistical checks use fixed seeds and
tolerances of a few standard errors computed from the exact variance or the sample spread.
"""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import minimize

from skldp import EmpiricalEstimator, EMEstimator
from skldp._hashing import candidate_buckets, cohort_permutations
from skldp.channels import (
    CohortRAPPORChannel,
    CohortRRChannel,
    RandomizedResponseChannel,
    RAPPORChannel,
)
from skldp.datasets import make_geometric
from skldp.privacy import LDP, tight_epsilon_matrix, verify
from skldp.projection import clip_normalize, project_simplex
from skldp.theory import (
    krr_excess_risk,
    krr_l1_risk,
    krr_l2_risk,
    krr_rappor_break_even,
    rappor_excess_risk,
    rappor_l1_risk,
    rappor_l2_risk,
)


def geometric(k, ratio=0.7):
    p = ratio ** np.arange(k)
    return p / p.sum()


def _o_rr(eps, S=9, k=4, C=3, seed=0):
    return CohortRRChannel(
        eps, k, candidate_buckets([f"s{i}" for i in range(S)], k, C, seed)[:, :, 0]
    )


def _o_rappor(eps, S=5, k=4, C=2, h=2, seed=0):
    return CohortRAPPORChannel(
        eps, k, candidate_buckets([f"s{i}" for i in range(S)], k, C, seed, n_hashes=h)
    )


CHANNELS = {
    "W-RR": lambda eps: RandomizedResponseChannel(eps, 2),
    "k-RR": lambda eps: RandomizedResponseChannel(eps, 7),
    "k-RAPPOR": lambda eps: RAPPORChannel(eps, 5),
    "O-RR": _o_rr,
    "O-RAPPOR": _o_rappor,
}


# -- 1. row-stochastic channels ---------------------------------------------------------------
@pytest.mark.parametrize("name", list(CHANNELS))
@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_claim1_channels_are_row_stochastic(name, eps):
    Q = CHANNELS[name](eps).to_dense()
    assert np.all(Q >= 0)
    assert_allclose(Q.sum(axis=1), 1.0, rtol=0, atol=1e-12)


# -- 2. privacy ratios ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["W-RR", "k-RR", "k-RAPPOR"])
@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_claim2_ratio_is_exactly_e_eps(name, eps):
    ch = CHANNELS[name](eps)
    E = tight_epsilon_matrix(ch)
    off = E[~np.eye(ch.n_inputs, dtype=bool)]
    assert verify(ch, LDP(eps)).passed
    assert_allclose(off.max(), eps, rtol=1e-9)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_claim2_o_rr_at_most_e_eps_with_equality_when_separated(eps):
    ch = _o_rr(eps)
    E = tight_epsilon_matrix(ch)
    B = ch.buckets
    separated = (B[:, None, :] != B[None, :, :]).any(axis=2)
    assert verify(ch, LDP(eps)).passed
    assert_allclose(E[separated], eps, rtol=1e-9)
    assert np.all(E[~separated] == 0)
    for c in range(ch.n_cohorts):  # each cohort's own channel
        assert verify(ch.cohort_dense(c), LDP(eps)).passed


@pytest.mark.parametrize("h", [1, 2, 3])
def test_claim2_o_rappor_calibrated_per_bit_and_negative_case(h):
    eps = 1.0
    ch = _o_rappor(eps, h=h)
    assert verify(ch, LDP(eps)).passed
    assert tight_epsilon_matrix(ch).max() <= eps
    # Per-bit budget eps/2 (the h = 1 calibration) with h disjoint-filter hashes: ratio e^(h eps).
    disjoint = np.arange(2 * h).reshape(2, 1, h)
    uncalibrated = CohortRAPPORChannel(h * eps, 2 * h, disjoint)  # per bit: (h eps) / (2h) = eps/2
    assert_allclose(tight_epsilon_matrix(uncalibrated)[0, 1], h * eps, rtol=1e-9)
    if h > 1:
        assert not verify(uncalibrated, LDP(eps)).passed


# -- 3. k-RR with k = 2 is Warner's randomized response --------------------------------------------
@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_claim3_binary_krr_is_warner(eps):
    e = math.exp(eps)
    assert_allclose(
        RandomizedResponseChannel(eps, 2).to_dense(),
        np.array([[e, 1], [1, e]]) / (1 + e),
        rtol=1e-14,
    )


# -- 6. closed-form inverse ------------------------------------------------------------------------
@pytest.mark.parametrize("k, eps", [(3, 0.5), (6, 1.3), (20, 4.0)])
def test_claim6_closed_form_inverse(k, eps):
    e = math.exp(eps)
    closed = ((k - 1 + e) * np.eye(k) - np.ones((k, k))) / (e - 1)
    assert_allclose(
        closed, np.linalg.inv(RandomizedResponseChannel(eps, k).to_dense()), rtol=1e-10, atol=1e-12
    )


# -- 7. sums of the empirical estimates ------------------------------------------------------------
def test_claim7_krr_sums_to_one_rappor_only_in_expectation():
    k, eps, n, T = 6, 1.0, 500, 400
    rng = np.random.default_rng(7)
    p = np.array([0.5, 0.2, 0.1, 0.1, 0.05, 0.05])
    rr, ra = RandomizedResponseChannel(eps, k), RAPPORChannel(eps, k)
    sums_rr, sums_ra = [], []
    for _ in range(T):
        x = rng.choice(k, n, p=p)
        sums_rr.append(rr.unbiased(rr.statistics(rr.sample(x, rng)), n).sum())
        sums_ra.append(ra.unbiased(ra.statistics(ra.sample(x, rng)), n).sum())
    assert_allclose(sums_rr, 1.0, rtol=0, atol=1e-12)
    sums_ra = np.array(sums_ra)
    assert np.mean(np.abs(sums_ra - 1) > 1e-6) > 0.99
    # Var of the sum: sum_j Var(p_hat_j) (bits are independent given the inputs, and the
    # inputs' contribution cancels only in expectation); check the mean within 5 SE.
    assert abs(sums_ra.mean() - 1) < 5 * sums_ra.std(ddof=1) / math.sqrt(T)


# -- 8. unbiasedness -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["k-RR", "k-RAPPOR", "O-RR", "O-RAPPOR"])
def test_claim8_unbiased_within_standard_errors(name):
    ch = CHANNELS[name](1.0)
    S = ch.n_inputs
    if hasattr(ch, "incidence"):
        assert np.linalg.matrix_rank(ch.incidence.toarray()) == S  # full column rank
    p = np.random.default_rng(8).dirichlet(np.ones(S))
    n, T = 2000, 300
    rng = np.random.default_rng(80)
    wrong = CHANNELS[name](2.0)  # a planted wrong channel: decoding with the wrong epsilon
    ests, biased = [], []
    for _ in range(T):
        stats = ch.statistics(ch.sample(rng.choice(S, n, p=p), rng))
        ests.append(ch.unbiased(stats, n))
        biased.append(wrong.unbiased(stats, n))
    se = np.sqrt(ch.variance(p, n) / T)
    assert np.all(np.abs(np.mean(ests, axis=0) - p) <= 4.5 * se)
    assert np.any(np.abs(np.mean(biased, axis=0) - p) > 4.5 * se)


# -- 9. exact l2 risk (Props. 3 and 4) -------------------------------------------------------------
CASES_9 = [
    (6, 1.0, 2000, np.array([0.5, 0.2, 0.1, 0.1, 0.05, 0.05]), 0.0083328, 0.0120956),
    (8, 2.0, 1000, np.full(8, 1 / 8), 0.0044381, 0.0082404),
]


@pytest.mark.parametrize("k, eps, n, p, ref_rr, ref_ra", CASES_9)
def test_claim9_exact_risk_formulas_and_reference_values(k, eps, n, p, ref_rr, ref_ra):
    assert_allclose(krr_l2_risk(k, eps, n, p), ref_rr, rtol=1e-4)
    assert_allclose(rappor_l2_risk(k, eps, n, p), ref_ra, rtol=1e-4)
    # The channels' exact variances add up to the same risks (the estimators are unbiased).
    assert_allclose(
        RandomizedResponseChannel(eps, k).variance(p, n).sum(), krr_l2_risk(k, eps, n, p), rtol=1e-9
    )
    assert_allclose(
        RAPPORChannel(eps, k).variance(p, n).sum(), rappor_l2_risk(k, eps, n, p), rtol=1e-9
    )


@pytest.mark.parametrize("k, eps, n, p, ref_rr, ref_ra", CASES_9)
def test_claim9_monte_carlo_matches_exact_risk(k, eps, n, p, ref_rr, ref_ra):
    T = 1500
    rng = np.random.default_rng(9)
    x = rng.choice(k, (T, n), p=p)
    rr, ra = RandomizedResponseChannel(eps, k), RAPPORChannel(eps, k)
    y = rr.sample(x.ravel(), rng).reshape(T, n)
    counts = np.stack([np.bincount(row, minlength=k) for row in y])
    loss_rr = ((np.stack([rr.unbiased(c, n) for c in counts]) - p) ** 2).sum(axis=1)
    bits = ra.sample(x.ravel(), rng).reshape(T, n, k).sum(axis=1, dtype=np.int64)
    loss_ra = ((np.stack([ra.unbiased(t, n) for t in bits]) - p) ** 2).sum(axis=1)
    for loss, ref in [(loss_rr, ref_rr), (loss_ra, ref_ra)]:
        assert abs(loss.mean() - ref) < 4 * loss.std(ddof=1) / math.sqrt(T)


# -- 10. the l1 risk: exact binomial form and its large-n approximation -------------------------
# (k, eps, n, p, large-n k-RR, large-n RAPPOR, exact k-RR, exact RAPPOR): the spec's values.
CASES_10 = [
    (6, 1.0, 2000, CASES_9[0][3], 0.17790, 0.21494, 0.177927, 0.214934),
    (8, 2.0, 1000, CASES_9[1][3], 0.15034, 0.20486, 0.150242, 0.204897),
]


@pytest.mark.parametrize("k, eps, n, p, app_rr, app_ra, ex_rr, ex_ra", CASES_10)
def test_claim10_l1_reference_values(k, eps, n, p, app_rr, app_ra, ex_rr, ex_ra):
    assert_allclose(krr_l1_risk(k, eps, n, p, method="large_n"), app_rr, atol=5e-6)
    assert_allclose(rappor_l1_risk(k, eps, n, p, method="large_n"), app_ra, atol=5e-6)
    assert_allclose(krr_l1_risk(k, eps, n, p), ex_rr, atol=5e-7)
    assert_allclose(rappor_l1_risk(k, eps, n, p), ex_ra, atol=5e-7)
    # The large-n form is sqrt(2 / pi) sum_i sd(p_hat_i), with the channels' exact variances.
    for ch, risk in [
        (RandomizedResponseChannel(eps, k), krr_l1_risk),
        (RAPPORChannel(eps, k), rappor_l1_risk),
    ]:
        assert_allclose(
            risk(k, eps, n, p, method="large_n"),
            math.sqrt(2 / math.pi) * np.sqrt(ch.variance(p, n)).sum(),
            rtol=1e-9,
        )


def test_claim10_large_n_approximation_has_ratio_one_in_the_limit():
    # "a ~ b" means a / b -> 1: the exact l1 risk over the approximation is within 1 / n of 1
    # (a lattice correction of order 1/n; its largest n * |ratio - 1| here is about 0.33).
    # sqrt(n) times the approximation does not depend on n at all.
    p = CASES_9[0][3]
    for risk in (krr_l1_risk, rappor_l1_risk):
        for n in 10 ** np.arange(2, 8):
            n = int(n)
            large = risk(6, 1.0, n, p, method="large_n")
            assert abs(risk(6, 1.0, n, p) / large - 1) < 1 / n
            assert_allclose(math.sqrt(n) * large, 10 * risk(6, 1.0, 100, p, method="large_n"))
        # At n = 10 the approximation is still visibly off, so the check above can fail.
        assert abs(risk(6, 1.0, 10, p) / risk(6, 1.0, 10, p, method="large_n") - 1) > 1 / 100


@pytest.mark.parametrize("k, eps, n, p, app_rr, app_ra, ex_rr, ex_ra", CASES_10)
def test_claim10_monte_carlo_l1_matches_exact_risk(k, eps, n, p, app_rr, app_ra, ex_rr, ex_ra):
    # Mean l1 loss of the EmpiricalEstimator over T runs against the exact risk. Tolerance: 4
    # standard errors from an exact bound on the loss's variance, Cauchy-Schwarz
    # Var||d||_1 <= E||d||_1^2 - (E||d||_1)^2 <= k E||d||_2^2 - (E||d||_1)^2, both expectations
    # from skldp.theory (the bound is about 2.3 times the sample spread here).
    T = 1500
    rng = np.random.default_rng(10)
    x = rng.choice(k, (T, n), p=p)
    for ch, l1, l2 in [
        (RandomizedResponseChannel(eps, k), krr_l1_risk, krr_l2_risk),
        (RAPPORChannel(eps, k), rappor_l1_risk, rappor_l2_risk),
    ]:
        reports = ch.sample(x.ravel(), rng).reshape(T * n, -1)
        est = EmpiricalEstimator(channel=ch)
        loss = [
            np.abs(est.fit(reports[t * n : (t + 1) * n]).distribution_ - p).sum() for t in range(T)
        ]
        exact = l1(k, eps, n, p)
        sd_bound = math.sqrt(k * l2(k, eps, n, p) - exact**2)
        assert abs(np.mean(loss) - exact) < 4 * sd_bound / math.sqrt(T)


# -- 11. uniform p is the worst case (l1, asymptotically) ----------------------------------------
@pytest.mark.parametrize("k, eps", [(3, 0.5), (7, 1.5), (40, 4.0)])
def test_claim11_uniform_is_the_worst_case_for_large_n_l1(k, eps):
    # The large-n l1 risk is sum_i sqrt(f(p_i)) with f concave, so it is Schur-concave and
    # largest at the uniform distribution, where it has the closed forms of Props. 3 and 4.
    n = 500
    e, c = math.exp(eps), math.exp(eps / 2)
    worst_rr = krr_l1_risk(k, eps, n, method="large_n")
    worst_ra = rappor_l1_risk(k, eps, n, method="large_n")
    assert_allclose(worst_rr, math.sqrt(2 * (k - 1) / (math.pi * n)) * (k - 1 + e) / (e - 1))
    assert_allclose(
        worst_ra, math.sqrt(2 / (math.pi * n)) * math.sqrt(k - 1 + k**2 * c / (c - 1) ** 2)
    )
    rng = np.random.default_rng(11)
    for alpha in (0.1, 1.0, 50.0):
        for _ in range(10):
            p = rng.dirichlet(np.full(k, alpha))
            assert krr_l1_risk(k, eps, n, p, method="large_n") <= worst_rr * (1 + 1e-12)
            assert rappor_l1_risk(k, eps, n, p, method="large_n") <= worst_ra * (1 + 1e-12)
    # ... and strictly below it away from uniform (a point mass is the far end).
    point = np.eye(k)[0]
    assert krr_l1_risk(k, eps, n, point, method="large_n") < worst_rr * (1 - 1e-6)
    assert rappor_l1_risk(k, eps, n, point, method="large_n") < worst_ra * (1 - 1e-6)


# -- 12. conditional risk given the inputs is data-independent -------------------------------------
@pytest.mark.parametrize("k, eps", [(4, 0.5), (10, 2.0)])
def test_claim12_fixed_input_risk_is_data_independent(k, eps):
    n = 1000
    e = math.exp(eps)
    rr, ra = RandomizedResponseChannel(eps, k), RAPPORChannel(eps, k)
    # Exact: given the inputs, the estimator's error is a sum of independent per-person
    # terms; the variance of each depends on the person's input only through symmetry.
    Q = rr.to_dense()
    scale = 1.0 / rr._a
    per_person_rr = scale**2 * (1 - (Q**2).sum(axis=1))  # the same for every input
    assert_allclose(per_person_rr, per_person_rr[0], rtol=1e-12)
    assert_allclose(
        per_person_rr[0] / n, (k - 1) * (k + 2 * (e - 1)) / (n * (e - 1) ** 2), rtol=1e-9
    )
    assert_allclose(per_person_rr[0], krr_excess_risk(k, eps), rtol=1e-9)
    per_bit = ra.on * (1 - ra.on) + (k - 1) * ra.off * (1 - ra.off)
    per_person_ra = per_bit / (ra.on - ra.off) ** 2
    c = math.exp(eps / 2)
    assert_allclose(per_person_ra, k * c / (c - 1) ** 2, rtol=1e-9)
    assert_allclose(per_person_ra[0], rappor_excess_risk(k, eps), rtol=1e-9)
    # Monte Carlo: two very different fixed input multisets give the same risk.
    rng = np.random.default_rng(12)
    T = 400
    for inputs in (np.zeros(n, dtype=int), np.arange(n) % k):
        hist = np.bincount(inputs, minlength=k) / n
        losses = []
        for _ in range(T):
            est = rr.unbiased(rr.statistics(rr.sample(inputs, rng)), n)
            losses.append(((est - hist) ** 2).sum())
        losses = np.array(losses)
        assert abs(losses.mean() - per_person_rr[0] / n) < 4 * losses.std(ddof=1) / math.sqrt(T)


# -- 13. consistency: n E||p_hat - p||^2 does not depend on n ------------------------------------
def _report_covariance(ch, p):
    """Covariance of one report's 0/1 statistic vector (one-hot for k-RR, the bits for RAPPOR)."""
    m = ch.forward(p)
    if isinstance(ch, RAPPORChannel):
        # Given x the bits are independent; the input moves bit x from off to on.
        d = ch.on - ch.off
        within = p * ch.on * (1 - ch.on) + (1 - p) * ch.off * (1 - ch.off)
        return np.diag(within) + np.outer(d, d) * (np.diag(p) - np.outer(p, p))
    return np.diag(m) - np.outer(m, m)


@pytest.mark.parametrize("name", ["k-RR", "k-RAPPOR"])
def test_claim13_n_times_the_l2_risk_is_constant_in_n(name):
    k, eps, p = 6, 1.0, CASES_9[0][3]
    ch = RandomizedResponseChannel(eps, k) if name == "k-RR" else RAPPORChannel(eps, k)
    risk = krr_l2_risk if name == "k-RR" else rappor_l2_risk
    # Exact: the same constant for every n, and it is the sum of the channel's variances.
    const = risk(k, eps, 1, p)
    for n in (2, 10, 1000, 10**6, 10**9):
        assert_allclose(n * risk(k, eps, n, p), const, rtol=1e-12)
        assert_allclose(n * ch.variance(p, n).sum(), const, rtol=1e-9)
    # Monte Carlo with the EmpiricalEstimator at n = 50, 500, 5000. The estimate is
    # p + w (S / n - m), S the sum of n i.i.d. report vectors Y (covariance Sigma), w the
    # decoding scale per coordinate. With Z = w (Y - m), n ||p_hat - p||^2 = ||sum Z||^2 / n,
    # whose mean is tr(Sigma_w), Sigma_w = w Sigma w, and whose exact variance is
    # (Var||Z||^2 + 2 (n - 1) tr(Sigma_w^2)) / n (the cross terms Z_r . Z_s have mean zero and
    # are uncorrelated with each other and with the ||Z_r||^2); Var||Z||^2 = b' Sigma b with
    # b = w^2 (1 - 2 m), since ||Z||^2 = sum_j w_j^2 (Y_j (1 - 2 m_j) + m_j^2) for 0/1 entries.
    # Tolerance: 4 of these exact standard errors.
    sigma = _report_covariance(ch, p)
    m = ch.forward(p)
    e = math.exp(eps)
    w = 1.0 / (ch.on - ch.off) if name == "k-RAPPOR" else np.full(k, (k - 1 + e) / (e - 1))
    sigma_w = sigma * np.outer(w, w)
    assert_allclose(np.trace(sigma_w), const, rtol=1e-9)
    b = w**2 * (1 - 2 * m)
    T = 300
    rng = np.random.default_rng(13)
    means = []
    for n in (50, 500, 5000):
        reports = ch.sample(rng.choice(k, T * n, p=p), rng).reshape(T * n, -1)
        est = EmpiricalEstimator(channel=ch)
        loss = np.array(
            [
                n * np.sum((est.fit(reports[t * n : (t + 1) * n]).distribution_ - p) ** 2)
                for t in range(T)
            ]
        )
        var = (b @ sigma @ b + 2 * (n - 1) * np.trace(sigma_w @ sigma_w)) / n
        assert abs(loss.mean() - const) < 4 * math.sqrt(var / T), (n, loss.mean(), const)
        means.append(loss.mean())
    # Consistency: the mean squared error itself falls a hundredfold from n = 50 to n = 5000.
    assert means[2] / 5000 < means[0] / 50 / 50


# -- 14-16. decoders -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "v, expected",
    [
        ([0.5, 0.5], [0.5, 0.5]),
        ([1, 1], [0.5, 0.5]),
        ([2, 0], [1, 0]),
        ([-1, 0.5, 0.8], [0, 0.35, 0.65]),
    ],
)
def test_claim14_projection_hand_examples(v, expected):
    assert_allclose(project_simplex(v), expected, atol=1e-15)


def test_claim14_projection_in_simplex_idempotent_and_equal_to_qp():
    rng = np.random.default_rng(14)
    for _ in range(20):
        k = int(rng.integers(2, 12))
        v = rng.normal(0.1, 0.5, k)
        q = project_simplex(v)
        assert q.min() >= 0 and abs(q.sum() - 1) < 1e-12
        assert_allclose(project_simplex(q), q, atol=1e-15)
        res = minimize(
            lambda z, v=v: np.sum((z - v) ** 2),
            np.full(k, 1 / k),
            jac=lambda z, v=v: 2 * (z - v),
            method="SLSQP",
            bounds=[(0, None)] * k,
            constraints=[{"type": "eq", "fun": lambda z: z.sum() - 1}],
            options={"ftol": 1e-14, "maxiter": 500},
        )
        assert_allclose(q, res.x, atol=1e-6)


def test_claim15_projection_never_increases_l2_error_pathwise():
    rng = np.random.default_rng(15)
    k, eps, n = 12, 1.0, 300
    rr = RandomizedResponseChannel(eps, k)
    p = geometric(k)
    for _ in range(200):
        x = rng.choice(k, n, p=p)
        est = rr.unbiased(rr.statistics(rr.sample(x, rng)), n)
        proj = project_simplex(est)
        hist = np.bincount(x, minlength=k) / n
        for q in (p, hist, rng.dirichlet(np.ones(k))):
            assert np.linalg.norm(proj - q) <= np.linalg.norm(est - q) + 1e-12


def test_claim15_projected_decoder_has_smaller_l1_on_a_skewed_distribution():
    # Fig. 1: on the geometric distribution the projected decoder beats the normalized and
    # ML decoders for k-RR, and the normalized and standard decoders for RAPPOR (paired
    # differences over replications, 3 standard errors). Here p_i ~ 0.7^i, k = 32, eps = 2.
    k, eps, n, T = 32, 2.0, 1000, 120
    p = geometric(k)
    rng = np.random.default_rng(150)
    rr, ra = RandomizedResponseChannel(eps, k), RAPPORChannel(eps, k)
    d = {"rr_norm": [], "rr_ml": [], "ra_norm": [], "ra_std": []}

    def l1(q):
        return np.abs(q - p).sum()

    for _ in range(T):
        x = rng.choice(k, n, p=p)
        N = rr.statistics(rr.sample(x, rng))
        e = rr.unbiased(N, n)
        base = l1(project_simplex(e))
        d["rr_norm"].append(base - l1(clip_normalize(e)))
        d["rr_ml"].append(base - l1(rr.maximum_likelihood(N)))
        e = ra.unbiased(ra.statistics(ra.sample(x, rng)), n)
        base = l1(project_simplex(e))
        d["ra_norm"].append(base - l1(clip_normalize(e)))
        d["ra_std"].append(base - l1(e))
    for name, diff in d.items():
        diff = np.array(diff)
        assert diff.mean() + 3 * diff.std(ddof=1) / math.sqrt(T) < 0, name


def test_claim16_normalized_decoder():
    rng = np.random.default_rng(16)
    for _ in range(20):
        v = rng.normal(0.1, 0.3, 7)
        q = clip_normalize(v)
        assert q.min() >= 0 and abs(q.sum() - 1) < 1e-12
        inside = rng.dirichlet(np.ones(7))
        assert_allclose(clip_normalize(inside), inside, rtol=1e-12)


# -- 17. the k-RR maximum-likelihood decoder -------------------------------------------------------
def _loglik(ch, N, q):
    return float(np.dot(N, np.log(ch.forward(q))))


@pytest.mark.parametrize("k, eps, n", [(5, 1.0, 60), (10, 0.5, 200), (20, 2.0, 150), (3, 3.0, 20)])
def test_claim17_ml_decoder_maximizes_likelihood_and_em_reaches_it(k, eps, n):
    rng = np.random.default_rng(k)
    ch = RandomizedResponseChannel(eps, k)
    p = rng.dirichlet(np.full(k, 0.4))
    reports = ch.sample(rng.choice(k, n, p=p), rng)
    N = ch.statistics(reports)
    ml = ch.maximum_likelihood(N)
    assert ml.min() >= 0 and abs(ml.sum() - 1) < 1e-12
    # EM converges to the same point.
    em = EMEstimator(channel=ch, tol=1e-14, max_iter=200000).fit(reports)
    assert np.abs(em.distribution_ - ml).sum() < 1e-6
    # A generic constrained optimizer finds no better point.
    res = minimize(
        lambda q: -_loglik(ch, N, q),
        np.full(k, 1 / k),
        method="SLSQP",
        bounds=[(0, 1)] * k,
        constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1}],
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    assert _loglik(ch, N, ml) >= -res.fun - 1e-6
    # ... and the projected and normalized estimates are no more likely.
    e = ch.unbiased(N, n)
    assert _loglik(ch, N, ml) >= _loglik(ch, N, project_simplex(e)) - 1e-12
    assert _loglik(ch, N, ml) >= _loglik(ch, N, clip_normalize(e)) - 1e-12


def test_claim17_ml_equals_empirical_inside_the_simplex():
    k, eps, n = 4, 2.0, 100000
    rng = np.random.default_rng(17)
    ch = RandomizedResponseChannel(eps, k)
    N = ch.statistics(ch.sample(rng.choice(k, n, p=[0.4, 0.3, 0.2, 0.1]), rng))
    e = ch.unbiased(N, n)
    assert e.min() > 0
    assert_allclose(ch.maximum_likelihood(N), e, rtol=1e-12, atol=1e-15)


# -- 18. O-RR / O-RAPPOR reduce to k-RR / k-RAPPOR -------------------------------------------------
def test_claim18_reductions():
    S, eps = 6, 1.2
    N = np.array([40, 3, 0, 20, 7, 30])
    ident = CohortRRChannel(eps, S, np.arange(S)[:, None])
    assert_allclose(
        ident.unbiased(N, N.sum()),
        RandomizedResponseChannel(eps, S).unbiased(N, N.sum()),
        rtol=1e-12,
    )
    perm = cohort_permutations(S, 1, 2)[0]
    permuted = CohortRRChannel(eps, S, perm[:, None])
    assert_allclose(
        permuted.unbiased(N, N.sum()),
        RandomizedResponseChannel(eps, S).unbiased(N[perm], N.sum()),
        rtol=1e-12,
    )
    rap = CohortRAPPORChannel(eps, S, perm[:, None, None])
    assert_allclose(rap.unbiased(N, 100), RAPPORChannel(eps, S).unbiased(N[perm], 100), rtol=1e-12)
    assert_allclose(
        CohortRAPPORChannel(eps, S, np.arange(S)[:, None, None]).to_dense(),
        RAPPORChannel(eps, S).to_dense(),
        rtol=1e-12,
    )


# -- 19. the O-RR incidence matrix -----------------------------------------------------------------
def test_claim19_incidence_columns_and_permutation_average():
    ch = _o_rr(1.0, S=40, k=5, C=6)
    assert_array_equal(np.asarray(ch.incidence.sum(axis=0)).ravel(), 6)
    S, C, eps = 7, 3, 0.8
    perms = cohort_permutations(S, C, 4)
    ch = CohortRRChannel(eps, S, perms.T)
    H = ch.incidence.toarray()
    assert_array_equal(H.T @ H, C * np.eye(S))
    N = np.random.default_rng(19).integers(0, 30, C * S)
    n = N.sum()
    rr = RandomizedResponseChannel(eps, S)
    mean = np.mean([rr.unbiased(C * N[c * S : (c + 1) * S][perms[c]], n) for c in range(C)], axis=0)
    assert_allclose(ch.unbiased(N, n), mean, rtol=1e-10, atol=1e-12)


# -- 20. Prop. 5: k-RR versus RAPPOR ---------------------------------------------------------------
TABLE_20 = {
    6: 0.344,
    7: 0.591,
    8: 0.781,
    10: 1.062,
    16: 1.558,
    32: 2.161,
    64: 2.692,
    100: 3.015,
    128: 3.190,
    256: 3.671,
    512: 4.144,
    1024: 4.612,
}


def test_claim20_krr_better_for_every_eps_above_ln_k():
    # Prop. 5 through the library: the risks of skldp.theory on a grid of eps in [ln k, 40],
    # and the break-even never above ln k. The two risks share the term (1 - sum p^2) / n,
    # so comparing the excess risks compares the full risks for every p and n.
    ks = [*range(2, 2000), *(2**j for j in range(11, 21))]
    for k in ks:
        ln_k = math.log(k)
        assert krr_rappor_break_even(k) <= ln_k
        for eps in ln_k + np.linspace(0, 1, 60) * (40 - ln_k):
            assert krr_excess_risk(k, eps) <= rappor_excess_risk(k, eps) * (1 + 1e-12), (k, eps)
    # The full risks at sample points (uniform and skewed p) agree with the excess comparison.
    p = geometric(64)
    for eps in (math.log(64), 6.0, 20.0):
        assert krr_l2_risk(64, eps, 100, p) <= rappor_l2_risk(64, eps, 100, p)
        assert krr_l2_risk(64, eps, 100) <= rappor_l2_risk(64, eps, 100)
    # Below the break-even the inequality fails, so the check can fail.
    assert krr_excess_risk(64, 2.0) > rappor_excess_risk(64, 2.0)


def test_claim20_break_even_table_and_small_k():
    for k, star in TABLE_20.items():
        assert abs(krr_rappor_break_even(k) - star) < 1e-3 + 1e-12
        eps_star = krr_rappor_break_even(k)
        assert krr_excess_risk(k, eps_star * 0.98) > rappor_excess_risk(k, eps_star * 0.98)
        assert krr_excess_risk(k, eps_star * 1.02) < rappor_excess_risk(k, eps_star * 1.02)
    for k in range(2, 6):
        assert krr_rappor_break_even(k) == 0.0
        for eps in np.linspace(0.01, 20, 200):
            assert krr_excess_risk(k, eps) <= rappor_excess_risk(k, eps) * (1 + 1e-12)
    assert_allclose(krr_excess_risk(256, 0.5), 1.559e5, rtol=1e-3)
    assert_allclose(rappor_excess_risk(256, 0.5), 4075, rtol=1e-3)
    # eps*(k) / ln k -> 2/3.
    assert abs(krr_rappor_break_even(2**40) / math.log(2**40) - 2 / 3) < 0.05


# -- 21. effective-sample-size factors -------------------------------------------------------------
def _factors(k, eps):
    """Worst-case private l2 risk over the non-private one, (k - 1) / (k n), for k-RR and RAPPOR."""
    n = 1000
    base = (k - 1) / (k * n)
    return krr_l2_risk(k, eps, n) / base, rappor_l2_risk(k, eps, n) / base


def test_claim21_effective_sample_size_factors():
    # Closed forms of the spec's table (section 4.5) ...
    for k, eps in [(4, 0.3), (50, 2.0), (1000, 7.0)]:
        e = math.exp(eps)
        rr, rap = _factors(k, eps)
        assert_allclose(rr, (k - 1 + e) ** 2 / (e - 1) ** 2, rtol=1e-12)
        assert_allclose(rap, 1 + k**2 * e**0.5 / ((k - 1) * (e**0.5 - 1) ** 2), rtol=1e-12)
    # ... at eps = ln k: k-RR loses a factor tending to 4, RAPPOR one of order sqrt(k).
    ks = [4, 16, 64, 256, 1024]
    rr_ln = [_factors(k, math.log(k))[0] for k in ks]
    rap_ln = [_factors(k, math.log(k))[1] for k in ks]
    assert_allclose(rr_ln, [5.444, 4.271, 4.064, 4.016, 4.004], atol=1e-3)
    assert_allclose(rap_ln, [11.67, 8.59, 11.61, 19.28, 35.13], atol=6e-3)
    assert_allclose(_factors(2**16, math.log(2**16))[1], 259.0, atol=0.05)
    assert np.all(np.diff(rr_ln) < 0) and rr_ln[-1] - 4 < 5e-3
    ratio = [_factors(k, math.log(k))[1] / math.sqrt(k) - 1 for k in (2**10, 2**16, 2**24)]
    assert np.all(np.diff(ratio) < 0) and ratio[-1] < 1e-3
    # Small eps: k-RR ~ k^2 / eps^2 (n -> n eps^2 / k^2), RAPPOR ~ 4 k^2 / ((k - 1) eps^2).
    for k in (8, 256):
        err_rr, err_rap = [], []
        for eps in (1e-2, 1e-3, 1e-4):
            rr, rap = _factors(k, eps)
            err_rr.append(abs(rr * eps**2 / k**2 - 1))
            err_rap.append(abs(rap * (k - 1) * eps**2 / (4 * k**2) - 1))
        assert np.all(np.diff(err_rr) < 0) and np.all(np.diff(err_rap) < 0)
        assert err_rr[-1] < 1e-3 * k and err_rap[-1] < 1e-3


# -- 22. empirical regimes with the best decoder ---------------------------------------------------
@pytest.mark.parametrize("k, eps, winner", [(16, 3.0, "k-RR"), (256, 1.0, "RAPPOR")])
def test_claim22_best_decoder_regimes_on_a_geometric_law(k, eps, winner):
    # Geometric with mean about k/5, n = 30000, l1 against p, 10 runs; each mechanism keeps its
    # best decoder by mean l1 (k-RR: projected, normalized, ML; RAPPOR: projected, normalized,
    # standard). k-RR wins above eps = ln k, RAPPOR for large k and small eps (l2 theory:
    # excess 2.23 vs 5.92 at (16, 3); 2.24e4 vs 1003 at (256, 1)). The winner's paired
    # advantage must exceed 3 standard errors.
    n, T = 30_000, 10
    p = make_geometric(k, lam=(k / 5) / (k / 5 + 1)).probabilities
    rr, ra = RandomizedResponseChannel(eps, k), RAPPORChannel(eps, k)
    rng = np.random.default_rng(22)

    def l1(q):
        return np.abs(q - p).sum()

    loss = {name: [] for name in ("rr_proj", "rr_norm", "rr_ml", "ra_proj", "ra_norm", "ra_std")}
    for _ in range(T):
        x = rng.choice(k, n, p=p)
        N = rr.statistics(rr.sample(x, rng))
        e = rr.unbiased(N, n)
        loss["rr_proj"].append(l1(project_simplex(e)))
        loss["rr_norm"].append(l1(clip_normalize(e)))
        loss["rr_ml"].append(l1(rr.maximum_likelihood(N)))
        e = ra.unbiased(ra.statistics(ra.sample(x, rng)), n)
        loss["ra_proj"].append(l1(project_simplex(e)))
        loss["ra_norm"].append(l1(clip_normalize(e)))
        loss["ra_std"].append(l1(e))
    loss = {name: np.array(v) for name, v in loss.items()}
    best_rr = min((v for name, v in loss.items() if name.startswith("rr")), key=np.mean)
    best_ra = min((v for name, v in loss.items() if name.startswith("ra")), key=np.mean)
    diff = best_ra - best_rr if winner == "k-RR" else best_rr - best_ra
    se = diff.std(ddof=1) / math.sqrt(T)
    assert diff.mean() > 3 * se, (winner, best_rr.mean(), best_ra.mean())


# -- 23. closed-alphabet O-RR meets or beats every other mechanism ---------------------------------
def _median_and_se(runs):
    return float(np.median(runs)), 1.2533 * float(np.std(runs, ddof=1)) / math.sqrt(len(runs))


def _l1_runs(ch, p, n, reps, rng, per_person):
    """l1 of the projected least-squares estimate over reps runs (fresh inputs each time)."""
    out = []
    for _ in range(reps):
        if per_person:  # bit vectors: privatize each person
            stats = ch.statistics(ch.sample(rng.choice(p.shape[0], n, p=p), rng))
        else:  # symbol channels: the counts of i.i.d. reports are multinomial
            stats = rng.multinomial(n, ch.forward(p))
        out.append(np.abs(project_simplex(ch.unbiased(stats, n)) - p).sum())
    return np.array(out)


def _tuned(make_channels, p, n, rng, per_person, tune_reps=9, reps=15):
    """The paper's grid search on the median l1, then fresh runs of the chosen configuration
    (so the selection does not flatter the winner)."""
    scored = [
        (np.median(_l1_runs(ch, p, n, tune_reps, rng, per_person)), cfg, ch)
        for cfg, ch in make_channels()
    ]
    _, cfg, ch = min(scored, key=lambda t: t[0])
    return cfg, _l1_runs(ch, p, n, reps, rng, per_person)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_claim23_closed_alphabet_o_rr_meets_every_mechanism_and_h1_is_best(eps):
    # Sec. 5.4 / Fig. 3b on a geometric law (mean S/5) over S = 64 values, n = 10^4. O-RR with
    # permutations (k in 2..64 buckets, C in {1, 16, 256} cohorts) tuned on median l1 meets or
    # beats k-RR, RAPPOR and open-alphabet O-RAPPOR (k in {16, 64} bits, C in {1, 16},
    # h in {1, 2} hashes), up to 2 standard errors of the difference of the medians. Large C
    # matters: with C <= 16, O-RR's median at eps = 1 is about 0.81 against RAPPOR's 0.61.
    # And for O-RAPPOR the best configuration with h = 1 is at least as good as with h = 2.
    S, n = 64, 10_000
    p = make_geometric(S, lam=(S / 5) / (S / 5 + 1)).probabilities
    values = [f"s{i}" for i in range(S)]
    rng = np.random.default_rng(int(100 * eps))

    def o_rr():
        for k in (2, 4, 8, 16, 32, 64):
            for C in (1, 16, 256):
                yield (k, C), CohortRRChannel(eps, k, (cohort_permutations(S, C, 0) % k).T)

    def o_rappor(h):
        for k in (16, 64):
            for C in (1, 16):
                yield (k, C, h), CohortRAPPORChannel(eps, k, candidate_buckets(values, k, C, 0, h))

    _, orr = _tuned(o_rr, p, n, rng, per_person=False)
    orap = {h: _tuned(lambda h=h: o_rappor(h), p, n, rng, per_person=True)[1] for h in (1, 2)}
    others = {
        "k-RR": _l1_runs(RandomizedResponseChannel(eps, S), p, n, 15, rng, per_person=False),
        "RAPPOR": _l1_runs(RAPPORChannel(eps, S), p, n, 15, rng, per_person=True),
        "O-RAPPOR": min(orap.values(), key=np.median),
    }
    med, se = _median_and_se(orr)
    for name, runs in others.items():
        m2, se2 = _median_and_se(runs)
        assert med <= m2 + 2 * math.hypot(se, se2), (eps, name, med, m2)
    (m1, s1), (m2, s2) = _median_and_se(orap[1]), _median_and_se(orap[2])
    assert m1 <= m2 + 2 * math.hypot(s1, s2), (eps, m1, m2)

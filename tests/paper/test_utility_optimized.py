"""Checkable claims of Murakami and Kawamoto, "Utility-Optimized Local Differential Privacy
Mechanisms for Distribution Estimation" (USENIX Security 2019); numbering follows Sec. 8 of
the spec ``utility-optimized-ldp.md``."""

import importlib.util
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import brentq
from scipy.stats import norm

from skldp import EMEstimator, PersonalizedEstimator, PersonalizedULDP
from skldp.channels import (
    MultinomialModel,
    PersonalizedChannel,
    RandomizedResponseChannel,
    RAPPORChannel,
    UtilityOptimizedRAPPORChannel,
    UtilityOptimizedRRChannel,
)
from skldp.estimators import personalized_reconstruction, significance_threshold
from skldp.estimators._em import em
from skldp.privacy import (
    LDP,
    HighLowLDP,
    UtilityOptimizedLDP,
    ZeroBits,
    one_sided_decomposition,
    tight_epsilon_matrix,
    verify,
)

P6 = np.array([0.1, 0.1, 0.1, 0.2, 0.2, 0.3])
S3 = [0, 1, 2]
LN3 = math.log(3)


# -- 4. special cases ------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, math.log(8), 5.0])
def test_urr_with_every_value_sensitive_is_krr(eps):
    assert_allclose(
        UtilityOptimizedRRChannel(eps, 8, range(8)).to_dense(),
        RandomizedResponseChannel(eps, 8).to_dense(),
        rtol=1e-13,
        atol=2**-52,
    )


@pytest.mark.parametrize("theta", [None, 0.3, 0.5, 0.8])
def test_urap_with_every_value_sensitive_is_rappor(theta):
    a = UtilityOptimizedRAPPORChannel(1.7, 6, range(6), theta=theta)
    b = RAPPORChannel(1.7, 6, theta=theta)
    assert_array_equal(a.to_dense(), b.to_dense())
    if theta is None:
        assert_allclose(a.d1, 1 - a.theta, rtol=1e-11)  # psi = 1 - theta: basic one-time


@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_binary_urr_is_mangat(eps):
    # X = {0, 1}, X_S = {1}: input 1 always reports 1; input 0 reports 1 w.p. p = e^-eps.
    Q = UtilityOptimizedRRChannel(eps, 2, [1]).to_dense()
    p = math.exp(-eps)
    assert_allclose(Q, [[1 - p, p], [0.0, 1.0]], rtol=1e-12, atol=1e-16)
    assert verify(Q, UtilityOptimizedLDP([1], [1], math.log(1 / p))).passed


def test_urr_without_sensitive_values_is_identity():
    assert_array_equal(UtilityOptimizedRRChannel(1.0, 4, []).to_dense(), np.eye(4))


def test_urap_without_sensitive_values():
    # x_i gives e_i w.p. 1 - d2 and the all-zero vector (the only protected output) w.p. d2.
    ch = UtilityOptimizedRAPPORChannel(2.0, 3, [])
    Q = ch.to_dense()
    assert_allclose(Q[:, 0], ch.d2)
    assert_allclose(Q[[0, 1, 2], [1, 2, 4]], 1 - ch.d2)
    assert verify(ch, ch.guarantee()).passed


# -- 6. default constants ----------------------------------------------------------------------


def test_urap_default_constants_at_2ln3():
    ch = UtilityOptimizedRAPPORChannel(2 * LN3, 6, S3)
    assert_allclose([ch.theta, ch.d1, ch.d2], [0.75, 0.25, 1 / 3], rtol=1e-11)


# -- 13. closed-form inverses ------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [lambda: UtilityOptimizedRRChannel(0.7, 6, S3), lambda: RandomizedResponseChannel(0.7, 6)],
)
def test_emp_closed_form_is_matrix_inverse(make):
    ch = make()
    m = np.array([0.3, 0.1, 0.05, 0.25, 0.2, 0.1])
    est = ch.unbiased(1000 * m, 1000)
    assert_allclose(est, np.linalg.solve(ch.to_dense().T, m), rtol=1e-10)
    assert est.sum() == pytest.approx(1.0, abs=1e-14)


# -- 15. exact expected l2 ------------------------------------------------------------------------


def _eq45(p, n, eps, S):
    e = math.exp(eps)
    dS = len(S)
    return (2 * (e - 1) * (dS - p[S].sum()) + dS * (dS - 1)) / (n * (e - 1) ** 2) + (
        1 - np.sum(p**2)
    ) / n


def _eq47(p, n, eps, S):
    a = math.exp(eps / 2)
    dS = len(S)
    return (1 + ((dS + 1) * a - 1) / (a - 1) ** 2 - p[S].sum() / (a - 1) - np.sum(p**2)) / n


@pytest.mark.parametrize(
    "channel, expected",
    [
        (UtilityOptimizedRRChannel(LN3, 6, S3), 0.0050),
        (UtilityOptimizedRRChannel(2 * LN3, 6, S3), 0.00156875),
        (UtilityOptimizedRAPPORChannel(2 * LN3, 6, S3), 0.0034),
        (RandomizedResponseChannel(LN3, 6), 0.0133),
        (RAPPORChannel(2 * LN3, 6), 0.0053),
    ],
    ids=["uRR-ln3", "uRR-2ln3", "uRAP-2ln3", "RR-ln3", "RAPPOR-2ln3"],
)
def test_exact_l2_test_vectors(channel, expected):
    # Spec item 15: n = 1000, p = (.1, .1, .1, .2, .2, .3), X_S = first three.
    assert channel.variance(P6, 1000).sum() == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("eps", [0.5, 1.5, 4.0])
def test_variance_sums_match_eq45_and_eq47(eps):
    rng = np.random.default_rng(int(10 * eps))
    p = rng.dirichlet(np.ones(20))
    S = np.sort(rng.choice(20, 4, replace=False))
    assert UtilityOptimizedRRChannel(eps, 20, S).variance(p, 2000).sum() == pytest.approx(
        _eq45(p, 2000, eps, S), rel=1e-10
    )
    assert UtilityOptimizedRAPPORChannel(eps, 20, S).variance(p, 2000).sum() == pytest.approx(
        _eq47(p, 2000, eps, S), rel=1e-9
    )


@pytest.mark.parametrize(
    "channel",
    [
        UtilityOptimizedRRChannel(1.5, 20, [2, 7, 11, 19]),
        UtilityOptimizedRAPPORChannel(1.5, 20, [2, 7, 11, 19]),
    ],
    ids=["uRR", "uRAP"],
)
def test_exact_l2_matched_by_simulation(channel):
    # Monte Carlo with the channel's own sampler: the mean squared l2 error of the unbiased
    # estimate over R runs lies within 5 standard errors of the exact formula.
    n, R = 2000, 600
    p = np.linspace(1, 3, 20)
    p /= p.sum()
    rng = np.random.default_rng(15)
    x = rng.choice(20, size=n * R, p=p)
    reports = channel.sample(x, rng)
    errs = np.empty(R)
    for r in range(R):
        block = reports[r * n : (r + 1) * n]
        est = channel.unbiased(channel.statistics(block), n)
        errs[r] = np.sum((est - p) ** 2)
    exact = channel.variance(p, n).sum()
    se = errs.std(ddof=1) / math.sqrt(R)
    assert abs(errs.mean() - exact) < 5 * se
    # a planted wrong formula (the other mechanism's) is rejected
    other = (
        UtilityOptimizedRAPPORChannel
        if channel.report_kind == "symbol"
        else UtilityOptimizedRRChannel
    )(1.5, 20, [2, 7, 11, 19])
    assert abs(errs.mean() - other.variance(p, n).sum()) > 5 * se


# -- 16. asymptotic l1 -----------------------------------------------------------------------------


def test_asymptotic_l1_values():
    # sqrt(2/pi) * sum of the exact standard deviations (eqs. (11), (16)).
    n = 1000

    def l1(ch):
        return math.sqrt(2 / math.pi) * np.sqrt(ch.variance(P6, n)).sum()

    assert l1(UtilityOptimizedRRChannel(LN3, 6, S3)) == pytest.approx(0.135543, rel=1e-5)
    assert l1(UtilityOptimizedRAPPORChannel(2 * LN3, 6, S3)) == pytest.approx(0.110244, rel=1e-5)


def _asymptotic_l1(ch, p, n):
    """sqrt(2/pi) times the sum of the exact standard deviations: eqs. (11), (16), (36)/(37)."""
    return math.sqrt(2 / math.pi) * np.sqrt(ch.variance(p, n)).sum()


def _eq11(p, n, eps, S):
    e = math.exp(eps)
    u1 = e - 1
    v = (len(S) + e - 1) / u1
    sens = np.isin(np.arange(p.size), S)
    ps, pn = p[sens], p[~sens]
    total = np.sqrt((ps + 1 / u1) * (v - ps - 1 / u1)).sum() + np.sqrt(pn * (v - pn)).sum()
    return math.sqrt(2 / (n * math.pi)) * total


def _eq16(p, n, eps, S):
    a = math.exp(eps / 2)
    u1, vN = a - 1, a / (a - 1)
    sens = np.isin(np.arange(p.size), S)
    ps, pn = p[sens], p[~sens]
    total = np.sqrt((ps + 1 / u1) * (vN - ps)).sum() + np.sqrt(pn * (vN - pn)).sum()
    return math.sqrt(2 / (n * math.pi)) * total


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_claim16_library_variances_give_eqs_11_and_16(eps):
    # The asymptotic l1 of Props. 4 and 7 is sqrt(2/pi) times the sum of the standard deviations
    # of the unbiased estimate; the channels' exact variances reproduce the paper's forms.
    rng = np.random.default_rng(int(100 * eps))
    d, n = 30, 777
    p = rng.dirichlet(np.full(d, 0.5))
    S = np.sort(rng.choice(d, 7, replace=False))
    assert _asymptotic_l1(UtilityOptimizedRRChannel(eps, d, S), p, n) == pytest.approx(
        _eq11(p, n, eps, S), rel=1e-12
    )
    assert _asymptotic_l1(UtilityOptimizedRAPPORChannel(eps, d, S), p, n) == pytest.approx(
        _eq16(p, n, eps, S), rel=1e-10
    )


@pytest.mark.parametrize("kind", ["uRR", "uRAP"])
def test_claim16_monte_carlo_l1_matches_the_asymptotic_formula(kind):
    # d = 20, d_S = 4, eps = 1, n = 5000 (spec: MC 0.12548 vs eq. (11) 0.12515 for uRR). The
    # Monte Carlo mean l1 of the unbiased estimate must be within 3% of eq. (11) / (16) (about
    # 3.5 standard errors for uRAP, 10 for uRR); the other mechanism's formula, 16% away, is not.
    d, n, eps = 20, 5000, 1.0
    S = [2, 7, 11, 19]
    p = np.linspace(1, 3, d)
    p /= p.sum()
    rng = np.random.default_rng(16)
    if kind == "uRR":
        ch, R = UtilityOptimizedRRChannel(eps, d, S), 3000
        counts = rng.multinomial(n, ch.forward(p), size=R)  # the exact law of the counts
        l1 = np.array([np.abs(ch.unbiased(c, n) - p).sum() for c in counts])
        formula, other = _eq11(p, n, eps, S), _eq16(p, n, eps, S)
    else:
        ch, R = UtilityOptimizedRAPPORChannel(eps, d, S), 800
        reports = ch.sample(rng.choice(d, size=n * R, p=p), rng)
        l1 = np.array(
            [
                np.abs(ch.unbiased(ch.statistics(reports[r * n : (r + 1) * n]), n) - p).sum()
                for r in range(R)
            ]
        )
        formula, other = _eq16(p, n, eps, S), _eq11(p, n, eps, S)
    assert l1.std(ddof=1) / math.sqrt(R) < 0.009 * formula
    assert abs(l1.mean() / formula - 1) < 0.03
    assert abs(l1.mean() / other - 1) > 0.1


# -- 17-20. worst cases, p*, limits and regimes (closed forms of Sec. 5) ---------------------------


def _p_un(d, S):
    p = np.full(d, 1 / (d - len(S)))
    p[list(S)] = 0.0
    return p


def _p_star(d, S, eps):
    # Prop. 6: the worst case of uRR once e^eps - 1 >= d_N.
    dS, dN, u1 = len(S), d - len(S), math.expm1(eps)
    p = np.full(d, (1 + dS / u1) / d)
    p[list(S)] = (1 - dN / u1) / d
    assert p.min() > -1e-15, "p* is a distribution only when e^eps - 1 >= d_N"
    return np.maximum(p, 0.0)  # rounding at e^eps - 1 = d_N


def _bound12(d, dS, n, eps):
    e, dN = math.exp(eps), d - dS
    return math.sqrt(2 / (n * math.pi)) * (
        dS * math.sqrt(dS + e - 2) / (e - 1) + math.sqrt(dS * dN / (e - 1) + dN - 1)
    )


def _bound14(d, dS, n, eps):
    e = math.exp(eps)
    return math.sqrt(2 * (d - 1) / (n * math.pi)) * (dS + e - 1) / (e - 1)


def _bound17(d, dS, n, eps):
    a, dN = math.exp(eps / 2), d - dS
    return math.sqrt(2 / (n * math.pi)) * (
        math.exp(eps / 4) * dS / (a - 1) + math.sqrt(a * dN / (a - 1) - 1)
    )


def _prop16(d, dS, n, eps):
    e, dN = math.exp(eps), d - dS
    return dS * (dS + 2 * e - 3) / (n * (e - 1) ** 2) + (1 - 1 / dN) / n


def _prop17(d, dS, n, eps):
    e = math.exp(eps)
    return (dS + e - 1) ** 2 / (n * (e - 1) ** 2) * (1 - 1 / d)


def _prop19(d, dS, n, eps):
    a, dN = math.exp(eps / 2), d - dS
    return (1 + ((dS + 1) * a - 1) / (a - 1) ** 2 - 1 / dN) / n


SHAPES_17 = [(12, 3), (40, 5), (625, 15), (400, 76), (30, 20)]


@pytest.mark.parametrize("d, dS", SHAPES_17)
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0, "ln d", "ln(dN+1)"])
def test_claim17_worst_cases_hold_and_are_attained(d, dS, eps):
    dN, n = d - dS, 1000
    eps = {"ln d": math.log(d), "ln(dN+1)": math.log(dN + 1)}.get(eps, eps)
    S = list(range(dS))
    urr, urap = UtilityOptimizedRRChannel(eps, d, S), UtilityOptimizedRAPPORChannel(eps, d, S)
    rng = np.random.default_rng(d + dS)
    ps = [rng.dirichlet(np.full(d, a)) for a in (0.05, 0.3, 1.0, 10.0) for _ in range(5)]
    ps += [_p_un(d, S), np.full(d, 1 / d)]
    p_un = _p_un(d, S)
    checks = []  # (value function, bound, maximizer)
    if eps < math.log(dN + 1):
        if dS <= dN:
            checks.append((lambda p: _asymptotic_l1(urr, p, n), _bound12(d, dS, n, eps), p_un))
        checks.append((lambda p: urr.variance(p, n).sum(), _prop16(d, dS, n, eps), p_un))
    else:
        p_star = _p_star(d, S, eps)
        ps.append(p_star)
        checks.append((lambda p: _asymptotic_l1(urr, p, n), _bound14(d, dS, n, eps), p_star))
        checks.append((lambda p: urr.variance(p, n).sum(), _prop17(d, dS, n, eps), p_star))
        if eps > math.log(dN + 1) + 1e-9:  # Prop. 5's p_UN bound no longer holds: p* exceeds it
            assert _asymptotic_l1(urr, p_star, n) > _bound12(d, dS, n, eps) * (1 + 1e-9)
        else:  # at e^eps - 1 = d_N, p* = p_UN and the two worst cases meet
            assert_allclose(p_star, p_un, atol=1e-15)
            assert _bound14(d, dS, n, eps) == pytest.approx(_bound12(d, dS, n, eps), rel=1e-12)
    if eps < 2 * math.log(dN / 2 + 1):
        if dS <= dN:
            checks.append((lambda p: _asymptotic_l1(urap, p, n), _bound17(d, dS, n, eps), p_un))
        checks.append((lambda p: urap.variance(p, n).sum(), _prop19(d, dS, n, eps), p_un))
    assert checks
    for value, bound, maximizer in checks:
        assert value(maximizer) == pytest.approx(bound, rel=1e-9)
        assert max(value(p) for p in ps) <= bound * (1 + 1e-9)


@pytest.mark.parametrize(
    "d, dS, eps", [(6, 2, 2.0), (10, 3, math.log(10)), (625, 15, math.log(625)), (400, 76, 6.5)]
)
def test_claim18_p_star_makes_the_output_uniform(d, dS, eps):
    S = np.sort(np.random.default_rng(d).choice(d, dS, replace=False))
    ch = UtilityOptimizedRRChannel(eps, d, S)
    p_star = np.full(d, (1 + dS / math.expm1(eps)) / d)
    p_star[S] = (1 - (d - dS) / math.expm1(eps)) / d
    assert p_star.min() >= 0 and p_star.sum() == pytest.approx(1, abs=1e-14)
    assert_allclose(ch.forward(p_star), 1 / d, rtol=1e-12)
    if d <= 10:
        assert_allclose(p_star @ ch.to_dense(), 1 / d, rtol=1e-12)
    # any other p gives a non-uniform m
    assert np.ptp(ch.forward(_p_un(d, S))) > 1e-3 / d


@pytest.mark.parametrize("d, dS", [(625, 15), (400, 76), (50, 2)])
def test_claim19_high_privacy_limits(d, dS):
    # n eps^2 times the worst-case l2 -> d_S (d_S - 1) for uRR, 4 d_S for uRAP, d (d - 1) for RR
    # and 4 d for RAPPOR (Table 4 prints 4d(1 - 1/d): lower order); sqrt(n) eps times the
    # worst-case l1 -> sqrt(2/pi) d_S sqrt(d_S - 1) (eq. 15) and sqrt(2/pi) 2 d_S (eq. 18).
    n, S = 1000, list(range(dS))
    p_un, u = _p_un(d, S), np.full(d, 1 / d)
    eps = 1e-3

    def l2(ch, p):
        return n * eps**2 * ch.variance(p, n).sum()

    assert l2(UtilityOptimizedRRChannel(eps, d, S), p_un) == pytest.approx(dS * (dS - 1), rel=1e-2)
    assert l2(UtilityOptimizedRAPPORChannel(eps, d, S), p_un) == pytest.approx(4 * dS, rel=1e-2)
    assert l2(RandomizedResponseChannel(eps, d), u) == pytest.approx(d * (d - 1), rel=1e-2)
    assert l2(RAPPORChannel(eps, d), u) == pytest.approx(4 * d, rel=1e-2)
    eps = 1e-6  # the l1 bounds converge like sqrt(eps)

    def l1(ch):
        return math.sqrt(n) * eps * _asymptotic_l1(ch, p_un, n)

    c = math.sqrt(2 / math.pi)
    expected = c * dS * math.sqrt(dS - 1)
    assert l1(UtilityOptimizedRRChannel(eps, d, S)) == pytest.approx(expected, rel=1e-2)
    assert l1(UtilityOptimizedRAPPORChannel(eps, d, S)) == pytest.approx(c * 2 * dS, rel=1e-2)


@pytest.mark.parametrize(
    "d, dS, urr_l1, urr_l2", [(625, 15, 1.024, 1.049), (400, 76, 1.190, 1.417)]
)
def test_claim19_low_privacy_ratios_at_eps_ln_d(d, dS, urr_l1, urr_l2):
    # At eps = ln d, worst cases over the non-private ones, sqrt(2(d-1)/(n pi)) and (1-1/d)/n:
    # RR loses (2d-1)/(d-1) ~ 2 in l1 and its square ~ 4 in l2; uRR only 1 + d_S/(d-1) and its
    # square (maximizer p*).
    n, eps, S = 10_000, math.log(d), list(range(dS))
    l1_np, l2_np = math.sqrt(2 * (d - 1) / (n * math.pi)), (1 - 1 / d) / n
    rr, u = RandomizedResponseChannel(eps, d), np.full(d, 1 / d)
    assert _asymptotic_l1(rr, u, n) / l1_np == pytest.approx((2 * d - 1) / (d - 1), rel=1e-9)
    assert rr.variance(u, n).sum() / l2_np == pytest.approx(((2 * d - 1) / (d - 1)) ** 2, rel=1e-9)
    assert abs((2 * d - 1) / (d - 1) - 2) < 3e-3
    urr, p_star = UtilityOptimizedRRChannel(eps, d, S), _p_star(d, S, eps)
    assert _asymptotic_l1(urr, p_star, n) / l1_np == pytest.approx(1 + dS / (d - 1), rel=1e-9)
    assert urr.variance(p_star, n).sum() / l2_np == pytest.approx((1 + dS / (d - 1)) ** 2, rel=1e-9)
    assert [round(1 + dS / (d - 1), 3), round((1 + dS / (d - 1)) ** 2, 3)] == [urr_l1, urr_l2]


def _worst(kind, d, dS, n, eps):
    """Worst-case (asymptotic l1, exact l2) of the empirical estimate, from the library's exact
    variances at the paper's maximizers (uniform for RR and RAPPOR, p_UN or p* for uRR, p_UN
    for uRAP inside Prop. 8's range)."""
    S = list(range(dS))
    if kind == "RR":
        ch, p = RandomizedResponseChannel(eps, d), np.full(d, 1 / d)
    elif kind == "RAP":
        ch, p = RAPPORChannel(eps, d), np.full(d, 1 / d)
    elif kind == "uRR":
        ch = UtilityOptimizedRRChannel(eps, d, S)
        p = _p_un(d, S) if eps < math.log(d - dS + 1) else _p_star(d, S, eps)
    else:
        assert eps < 2 * math.log((d - dS) / 2 + 1)
        ch, p = UtilityOptimizedRAPPORChannel(eps, d, S), _p_un(d, S)
    return _asymptotic_l1(ch, p, n), ch.variance(p, n).sum()


# Spec Sec. 6.4: worst-case TV (= l1 / 2) and l2 at the paper's shapes (d, d_S, n).
TABLE_64 = {
    ("foursquare", 0.1): ((139.8, 11.77, 0.783, 0.388), (196.5, 1.392, 0.1073, 0.03353)),
    ("foursquare", 1.0): ((8.58, 1.165, 0.1051, 0.0650), (0.740, 0.01364, 4.99e-4, 3.41e-4)),
    ("foursquare", "ln d"): (
        (0.0471, 0.1248, 0.02409, 0.02666),
        (2.23e-5, 1.57e-4, 5.83e-6, 9.42e-6),
    ),
    ("census", 0.1): ((27.34, 2.878, 2.428, 0.576), (11.75, 0.1301, 0.4204, 0.02474)),
    ("census", 1.0): ((1.680, 0.2850, 0.1830, 0.0645), (0.04436, 1.276e-3, 1.643e-3, 2.443e-4)),
    ("census", "ln d"): (
        (0.01439, 0.03463, 0.00856, 0.01307),
        (3.25e-6, 1.88e-5, 1.15e-6, 4.28e-6),
    ),
}
SHAPES = {"foursquare": (625, 15, 179527), "census": (400, 76, 1229143)}


@pytest.mark.parametrize("data, eps", list(TABLE_64), ids=[f"{a}-{b}" for a, b in TABLE_64])
def test_claim20_worst_case_table_and_regimes(data, eps):
    d, dS, n = SHAPES[data]
    eps = math.log(d) if eps == "ln d" else eps
    tv_ref, l2_ref = TABLE_64[data, eps if eps in (0.1, 1.0) else "ln d"]
    worst = {kind: _worst(kind, d, dS, n, eps) for kind in ("RR", "RAP", "uRR", "uRAP")}
    for kind, ref_tv, ref_l2 in zip(worst, tv_ref, l2_ref, strict=True):
        assert worst[kind][0] / 2 == pytest.approx(ref_tv, rel=3e-3), kind
        assert worst[kind][1] == pytest.approx(ref_l2, rel=6e-3), kind
    urr, urap = worst["uRR"], worst["uRAP"]
    if eps == 0.1:  # high privacy: uRAP is better, in l1 and in l2
        assert urap[0] < urr[0] and urap[1] < urr[1]
    if eps == math.log(d):  # low privacy: uRR is better, in l1 and in l2
        assert urr[0] < urap[0] and urr[1] < urap[1]
    if eps < 2:
        # uRR << RR and uRAP << RAPPOR: by 10x and more at Foursquare's d_S/d = 0.024 (claim 24),
        # by 4.4x to 28x at the census shape (d_S/d = 0.19).
        factor = 10 if dS / d < 0.05 else 4
        for i in (0, 1):
            assert factor * urr[i] < worst["RR"][i] and factor * urap[i] < worst["RAP"][i]


@pytest.mark.parametrize(
    "data, l2_cross, l1_cross", [("foursquare", 1.48, 3.07), ("census", 2.81, 3.47)]
)
def test_claim20_crossover_between_urap_and_urr(data, l2_cross, l1_cross):
    # The worst-case uRR and uRAP errors cross once: uRAP is better below, uRR above.
    d, dS, n = SHAPES[data]
    for i, expected in ((1, l2_cross), (0, l1_cross)):

        def gap(eps, i=i):
            return _worst("uRR", d, dS, n, eps)[i] - _worst("uRAP", d, dS, n, eps)[i]

        grid = np.linspace(0.1, math.log(d), 60)
        signs = np.sign([gap(e) for e in grid])
        assert signs[0] > 0 and signs[-1] < 0 and np.count_nonzero(np.diff(signs)) == 1
        assert brentq(gap, 0.1, math.log(d)) == pytest.approx(expected, abs=0.006)


# -- Sec. 6.4 worst-case l2 table ------------------------------------------------------------------


@pytest.mark.parametrize(
    "eps, rr, rap, urr, urap",
    [(0.1, 196.5, 1.392, 0.1073, 0.03353), (1.0, 0.740, 0.01364, 4.99e-4, 3.41e-4)],
)
def test_worst_case_l2_table_foursquare_shape(eps, rr, rap, urr, urap):
    # d = 625, d_S = 15, n = 179527; maximizers: uniform (RR, RAPPOR) and p_UN (uRR, uRAP).
    d, dS, n = 625, 15, 179527
    uniform = np.full(d, 1 / d)
    p_un = np.r_[np.zeros(dS), np.full(d - dS, 1 / (d - dS))]
    assert RandomizedResponseChannel(eps, d).variance(uniform, n).sum() == pytest.approx(
        rr, rel=2e-3
    )
    assert RAPPORChannel(eps, d).variance(uniform, n).sum() == pytest.approx(rap, rel=2e-3)
    assert UtilityOptimizedRRChannel(eps, d, range(dS)).variance(p_un, n).sum() == pytest.approx(
        urr, rel=2e-3
    )
    assert UtilityOptimizedRAPPORChannel(eps, d, range(dS)).variance(
        p_un, n
    ).sum() == pytest.approx(urap, rel=2e-3)


# -- 21. EM ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "channel",
    [
        UtilityOptimizedRRChannel(0.5, 12, [0, 5, 6]),
        UtilityOptimizedRAPPORChannel(0.5, 12, [0, 5, 6]),
        RAPPORChannel(0.5, 12),
    ],
    ids=["uRR", "uRAP", "RAPPOR"],
)
def test_em_monotone_and_in_simplex(channel):
    rng = np.random.default_rng(21)
    p = rng.dirichlet(np.full(12, 0.3))
    stats = channel.em_model(channel.sample(rng.choice(12, 3000, p=p), rng))
    q = np.full(12, 1 / 12)
    prev = -np.inf
    for _ in range(200):
        g, ll = stats.multipliers(q)
        q = q * g / np.dot(q, g)  # one EM step
        assert ll >= prev - 1e-13
        assert np.all(q >= 0) and q.sum() == pytest.approx(1, abs=1e-12)
        prev = ll


def test_em_equals_emp_for_urr_when_emp_is_in_simplex():
    ch = UtilityOptimizedRRChannel(3.0, 6, S3)
    stats = np.round(50_000 * ch.forward(P6)).astype(float)
    emp = ch.unbiased(stats, stats.sum())
    assert np.all(emp > 0)
    est, *_ = em(
        MultinomialModel(ch, stats), np.full(6, 1 / 6), tol=1e-13, max_iter=100_000, accelerate=True
    )
    assert_allclose(est, emp, atol=1e-6)


def test_em_is_nonnegative_when_emp_is_not():
    ch = UtilityOptimizedRAPPORChannel(0.3, 10, [0, 1, 2, 3])
    rng = np.random.default_rng(5)
    p = np.r_[0.0, 0.0, 0.0, 0.01, np.full(6, 0.99 / 6)]
    reports = ch.sample(rng.choice(10, 400, p=p), rng)
    emp = ch.unbiased(ch.statistics(reports), 400)
    assert np.any(emp < 0)
    q, *_ = em(ch.em_model(reports), np.full(10, 0.1), tol=1e-10, max_iter=20_000, accelerate=True)
    assert np.all(q >= 0) and q.sum() == pytest.approx(1.0)
    est = EMEstimator(init="threshold", channel=ch).fit(reports).distribution_
    assert np.all(est >= 0) and est.sum() == pytest.approx(1.0)


@pytest.mark.parametrize(
    "make", [lambda: UtilityOptimizedRAPPORChannel(1.0, 7, [1, 4]), lambda: RAPPORChannel(1.0, 7)]
)
def test_closed_form_em_equals_full_matrix_em(make):
    ch = make()
    rng = np.random.default_rng(9)
    reports = ch.sample(rng.integers(0, 7, 1500), rng)
    Q = ch.to_dense()
    codes = reports @ (1 << np.arange(7))
    counts = np.bincount(codes, minlength=Q.shape[1]).astype(float)
    p_fast = p_dense = np.full(7, 1 / 7)
    stats = ch.em_model(reports)
    for _ in range(50):
        g, _ = stats.multipliers(p_fast)
        p_fast = p_fast * g / np.dot(p_fast, g)
        m = Q.T @ p_dense
        seen = counts > 0
        p_dense = p_dense * (Q[:, seen] @ (counts[seen] / m[seen])) / counts.sum()
    assert_allclose(p_fast, p_dense, rtol=1e-8)


# -- 22. emp+thr -----------------------------------------------------------------------------------


def test_threshold_nonnegative_and_sums_to_one():
    rng = np.random.default_rng(22)
    for _ in range(200):
        p_hat = rng.normal(0.05, 0.1, size=20)
        sigma0 = rng.uniform(0, 0.05, size=20)
        q = significance_threshold(p_hat, sigma0)
        assert np.all(q >= 0) and q.sum() == pytest.approx(1.0, abs=1e-12)
        kept = p_hat > norm.ppf(1 - 0.05 / 20) * sigma0
        if 1 - p_hat[kept].sum() >= 0 and kept.any() and not kept.all():
            assert_allclose(q[kept], p_hat[kept])


def test_threshold_bonferroni_level():
    # z = 3.775 for |X| = 625 and 3.662 for |X| = 400 (spec 4.2).
    assert norm.ppf(1 - 0.05 / 625) == pytest.approx(3.775, abs=1e-3)
    assert norm.ppf(1 - 0.05 / 400) == pytest.approx(3.662, abs=1e-3)


def test_threshold_estimator_uses_zero_frequency_variance():
    # For uRR the zero-frequency variance is (d_S + e - 2)/((e-1)^2 n) on X_S and 0 on X_N.
    ch = UtilityOptimizedRRChannel(1.0, 8, [1, 2, 6])
    v = ch.zero_frequency_variance(1000)
    e = math.e
    assert_allclose(v[[1, 2, 6]], (3 + e - 2) / ((e - 1) ** 2 * 1000), rtol=1e-12)
    assert_array_equal(v[[0, 3, 4, 5, 7]], 0)
    r = RAPPORChannel(1.0, 5)
    a = math.exp(0.5)
    assert_allclose(r.zero_frequency_variance(1000), a / ((a - 1) ** 2 * 1000), rtol=1e-10)


# -- 8. PUM privacy (Props. 9 and 10) --------------------------------------------------------------


@pytest.mark.parametrize("base", ["urr", "urap"])
def test_pum_prop9_and_prop10(base):
    eps = 1.0
    ch = PersonalizedChannel.from_base(
        eps, 8 if base == "urr" else 6, [0, 1], ["home", "work"], base=base
    )
    users = [{}, {3: 0}, {3: 0, 5: 1}, {4: 1}, {2: 0, 3: 1}]
    protected = ch.guarantee().protected_mask(ch.n_outputs)
    mats = []
    for personal in users:
        Qi = ch.effective_matrix(personal)
        S_i = sorted({0, 1} | set(personal))
        assert verify(
            Qi, UtilityOptimizedLDP(S_i, np.flatnonzero(protected), eps)
        ).passed  # Prop. 9
        mats.append(Qi[:, protected])
    worst = 0.0
    for A in mats:
        for B in mats:
            assert np.all(math.exp(eps) * B >= A)  # Prop. 10
            with np.errstate(divide="ignore", invalid="ignore"):
                worst = max(worst, np.nanmax(np.where(B > 0, A / B, 0)))
    assert worst == pytest.approx(math.exp(eps), rel=1e-9)  # attained


# -- 23. PUM estimation ----------------------------------------------------------------------------


def _population(rng, n=20_000, k=10):
    values = rng.choice(k, size=n, p=rng.dirichlet(np.ones(k)))
    tags = np.full(n, None, dtype=object)
    home = rng.random(n) < 0.15
    work = (~home) & (rng.random(n) < 0.2)
    tags[home] = "home"
    tags[work] = "work"
    return values, tags


def test_pum_identity_eq55():
    rng = np.random.default_rng(55)
    values, tags = _population(rng)
    ch = PersonalizedChannel.from_base(1.0, 10, [0, 1], ["home", "work"])
    tag_idx = np.select([tags == "home", tags == "work"], [0, 1], -1)
    z = ch.preprocess(values, tag_idx)
    r = np.bincount(z, minlength=12) / z.size
    pis = [np.bincount(values[z == 10 + t], minlength=10) / np.sum(z == 10 + t) for t in range(2)]
    p = np.bincount(values, minlength=10) / values.size
    p_hat, _ = personalized_reconstruction(r, ch, pis)
    assert_allclose(p_hat, p, rtol=0, atol=1e-15)


@pytest.mark.parametrize("base", ["urr", "urap"])
def test_pum_theorem1_in_simulation(base):
    rng = np.random.default_rng(1)
    values, tags = _population(rng)
    X = np.column_stack([values, tags]).astype(object)
    pum = PersonalizedULDP(
        np.log(10),
        sensitive=[0, 1],
        tags=["home", "work"],
        base=base,
        categories=list(range(10)),
        random_state=0,
    )
    reports = pum.fit_transform(X)
    ch = pum.channel_
    tag_idx = np.select([tags == "home", tags == "work"], [0, 1], -1)
    z = ch.preprocess(values, tag_idx)
    r = np.bincount(z, minlength=12) / z.size
    p = np.bincount(values, minlength=10) / values.size
    pis = [np.bincount(values[z == 10 + t], minlength=10) / np.sum(z == 10 + t) for t in range(2)]
    for background in (None, {"home": pis[0], "work": pis[1]}, {"home": np.full(10, 0.1)}):
        est = PersonalizedEstimator(background=background).fit(reports)
        r_hat, p_hat = est.intermediate_distribution_, est.distribution_
        assert np.all(r_hat >= 0) and np.all(p_hat >= 0) and p_hat.sum() == pytest.approx(1.0)
        second = sum(est.bot_mass_[t] * np.abs(est.background_[t] - pis[t]).sum() for t in range(2))
        assert np.abs(p_hat - p).sum() <= np.abs(r_hat - r).sum() + second + 1e-12
        assert second <= 2 * est.bot_mass_.sum() + 1e-12
    # with the true pi, the reconstruction error is at most the error of r
    est = PersonalizedEstimator(background=pis).fit(reports)
    assert (
        np.abs(est.distribution_ - p).sum()
        <= np.abs(est.intermediate_distribution_ - r).sum() + 1e-12
    )


# -- 24. qualitative claims at a paper shape (synthetic, small n) ----------------------------------


def test_uldp_beats_ldp_by_an_order_of_magnitude_when_few_values_are_sensitive():
    d, dS, n = 625, 15, 179527
    rng = np.random.default_rng(24)
    p = rng.dirichlet(np.full(d, 0.5))
    for eps in (0.1, 1.0):
        rr = RandomizedResponseChannel(eps, d).variance(p, n).sum()
        rap = RAPPORChannel(eps, d).variance(p, n).sum()
        urr = UtilityOptimizedRRChannel(eps, d, range(dS)).variance(p, n).sum()
        urap = UtilityOptimizedRAPPORChannel(eps, d, range(dS)).variance(p, n).sum()
        assert min(urr, urap) * 10 < min(rr, rap)
    # at eps = ln d, uRR is close to no privacy: l2 within (1 + d_S/(d-1))^2 of (1 - sum p^2)/n
    eps = math.log(d)
    urr = UtilityOptimizedRRChannel(eps, d, range(dS)).variance(p, n).sum()
    assert urr <= (1 + dS / (d - 1)) ** 2 * (1 - 1 / d) / n
    assert urr < 1.1 * (1 - np.sum(p**2)) / n + dS * 2 / (n * (d - 1))


def test_pum_background_knowledge_matters_little_below_eps_1():
    # Fig. 8: for eps < 1 the three background settings (I) none, (II) a public map, (III) the
    # true distributions of the hidden values give nearly the same TV, because only the second
    # term of Theorem 1 depends on them and it does not grow as eps falls. On the Manhattan
    # stand-in of examples/uldp_pum_table1.py (uRR, mean over 3 realizations of n = 37,235),
    # the settings differ by under 10% at eps = 0.5 but by more than 10% at eps = ln|X|.
    root = Path(__file__).resolve().parents[2]
    script = root / "examples" / "uldp_pum_table1.py"
    spec = importlib.util.spec_from_file_location("uldp_pum_table1", script)
    table1 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table1)
    table, sensitive = table1.load_foursquare()  # the bundled table (skldp.datasets)
    counts = table.counts.to_numpy()
    k = counts.shape[0]
    values, tags = table1.tagged_population(
        counts, sensitive, table.frame["num_venues"].to_numpy(), np.random.default_rng(1)
    )
    p, _, pis = table1.truth(values, tags, k, sensitive)
    backgrounds = [None, table1.public_map(pis, 1000, np.random.default_rng(2)), pis]
    X = np.empty((values.size, 2), dtype=object)
    X[:, 0], X[:, 1] = values, tags
    rng = np.random.default_rng(8)
    spread = {}
    for eps in (0.5, math.log(k)):
        tv = np.zeros(3)
        for _ in range(3):
            users = X[rng.permutation(values.size)[: values.size // 2]]
            pum = PersonalizedULDP(
                eps,
                sensitive=list(sensitive),
                tags=["home", "work"],
                categories=list(range(k)),
                random_state=rng,
            )
            reports = pum.fit_transform(users)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # EM may stop at max_iter at eps = ln|X|
                for i, bg in enumerate(backgrounds):
                    est = PersonalizedEstimator(background=bg, tol=1e-7, max_iter=3000).fit(reports)
                    tv[i] += 0.5 * np.abs(est.distribution_ - p).sum() / 3
        assert tv[2] <= tv[1] <= tv[0], (eps, tv)  # better knowledge, smaller error
        spread[eps] = (tv.max() - tv.min()) / tv.min()
    assert spread[0.5] < 0.1 < spread[math.log(k)], spread


def test_pum_estimator_input_errors():
    pum = PersonalizedULDP(1.0, sensitive=[0], tags=["home"], categories=[0, 1, 2], random_state=0)
    reports = pum.fit_transform(np.array([[0, None], [1, "home"], [2, None]] * 10, dtype=object))
    with pytest.raises(ValueError, match="unknown tags"):
        PersonalizedEstimator(background={"work": [1, 0, 0]}).fit(reports)
    with pytest.raises(ValueError, match="sum to 1"):
        PersonalizedEstimator(background=[[0.5, 0.0, 0.0]]).fit(reports)
    with pytest.raises(ValueError, match="1 tags"):
        PersonalizedEstimator(background=[None, None]).fit(reports)
    from skldp import RandomizedResponse

    rr = RandomizedResponse(1.0, categories=[0, 1], random_state=0).fit_transform([0, 1])
    with pytest.raises(TypeError, match="PersonalizedULDP"):
        PersonalizedEstimator().fit(rr)
    with pytest.raises(ValueError, match="method"):
        PersonalizedEstimator(method="bogus").fit(reports)
    assert ZeroBits([1]) == ZeroBits([1])


# -- 9-11. composition, post-processing, compatibility ---------------------------------------------


def test_sequential_composition_of_two_urrs():
    # (X_S, X_S x X_S, eps1 + eps2)-ULDP; pairs with an invertible part reveal x.
    S, k = [0, 2], 5
    A = UtilityOptimizedRRChannel(0.4, k, S).to_dense()
    B = UtilityOptimizedRRChannel(0.9, k, S).to_dense()
    Q = np.einsum("xi,xj->xij", A, B).reshape(k, k * k)  # output (i, j) -> i * k + j
    protected = [i * k + j for i in S for j in S]
    res = verify(Q, UtilityOptimizedLDP(S, protected, 1.3))
    assert res.passed
    assert res.epsilon_matrix.max() == pytest.approx(1.3, rel=1e-9)
    assert not verify(Q, UtilityOptimizedLDP(S, protected, 1.29)).passed


def test_type_preserving_post_processing_keeps_uldp_and_mixing_breaks_it():
    S, k = [1, 3], 6
    Q = UtilityOptimizedRRChannel(1.0, k, S).to_dense()
    perm = np.arange(k)
    perm[[1, 3]] = [3, 1]  # permute within Y_P, keep Y_I
    assert verify(Q[:, perm], UtilityOptimizedLDP(S, S, 1.0)).passed
    mixed = Q.copy()
    mixed[:, 0] += mixed[:, 2]  # merge two invertible outputs: not type-preserving
    mixed[:, 2] = 0
    res = verify(mixed, UtilityOptimizedLDP(S, S, 1.0))
    assert not res.passed and res.invertibility_violations == [0]


def test_compatibility_with_ldp_in_parallel():
    S, k = [0, 1], 4
    A = UtilityOptimizedRRChannel(0.7, k, S).to_dense()
    B = RandomizedResponseChannel(0.5, k).to_dense()
    Q = np.einsum("xi,xj->xij", A, B).reshape(k, k * k)
    protected = [i * k + j for i in S for j in range(k)]  # Y_P x Y
    P = Q[:, protected]
    assert np.all(P[:, None, :] <= math.exp(1.2) * P[None, :, :])


# -- 3. ULDP is one-sided LDP (Prop. 13), and not LDP at any finite budget -------------------------


def _random_uldp_channel(kind, eps, rng, theta=None):
    d = 8 if kind == "uRR" else 6  # uRAP: 2^6 = 64 outputs
    S = np.sort(rng.choice(d, int(rng.integers(1, d)), replace=False))  # 1 .. d-1 sensitive
    if kind == "uRR":
        return UtilityOptimizedRRChannel(eps, d, S), S
    return UtilityOptimizedRAPPORChannel(eps, d, S, theta=theta), S


@pytest.mark.parametrize(
    "kind, theta", [("uRR", None), ("uRAP", None), ("uRAP", 0.3), ("uRAP", 0.8)]
)
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, math.log(8), 5.0])
def test_claim3_uldp_channels_are_one_sided_ldp_and_not_ldp(kind, eps, theta):
    rng = np.random.default_rng(int(100 * eps) + (0 if theta is None else int(10 * theta)))
    ch, S = _random_uldp_channel(kind, eps, rng, theta)
    Q = ch.to_dense()
    d = Q.shape[0]
    N = np.setdiff1d(np.arange(d), S)
    assert verify(ch, ch.guarantee()).passed  # (X_S, Y_P, eps)-ULDP ...
    # ... implies (X_S, eps)-OSLDP, which is the HighLowLDP model, and tightly so.
    assert verify(ch, HighLowLDP(S, eps)).passed
    assert not verify(ch, HighLowLDP(S, eps * (1 - 1e-6))).passed
    E = tight_epsilon_matrix(Q)
    assert_allclose(E[S].max(), eps, rtol=1e-9)
    # Not eps'-LDP for any finite eps': each non-sensitive x has an output only it produces
    # (uRR: x itself; uRAP: the report with only bit x set), so E[x, x'] = inf for x' != x.
    off = ~np.eye(d, dtype=bool)
    assert np.all(np.isinf(E[N][off[N]]))
    assert np.all(np.isfinite(E[S]))
    assert not verify(ch, LDP(700.0)).passed  # e^700 is still a finite float


def test_claim3_one_sided_ldp_does_not_imply_uldp():
    # The converse of Prop. 13 fails: an output shared by two non-sensitive inputs is allowed by
    # OSLDP but is neither protected (a sensitive input never produces it) nor invertible.
    Q = np.array(
        [
            [0.5, 0.5, 0.0],  # x0, sensitive
            [0.3, 0.3, 0.4],
            [0.25, 0.35, 0.4],
        ]
    )
    eps = math.log(0.5 / 0.25) * (1 + 1e-12)
    assert verify(Q, HighLowLDP([0], eps)).passed
    res = verify(Q, UtilityOptimizedLDP([0], [0, 1], eps))
    assert not res.passed and res.invertibility_violations == [2]


# -- 12. OSLDP decomposition (Prop. 14): Q_O = Q_U Q_R with Q_U utility-optimized -----------------


def _random_one_sided(rng, k=7, n_out=9, sensitive=(0, 2)):
    """A random OSLDP matrix with every corner case of the construction.

    Outputs 6..8 are never produced by a sensitive input (one of them by nobody); row 5 copies
    a sensitive row (alpha = 0: no output of its own); row 4 puts no mass outside Y_P but
    exceeds the sensitive maximum on some protected output (alpha > 0 with only Y_P remainders).
    """
    Q = rng.random((k, n_out)) + 0.05
    S = list(sensitive)
    Q[S, 6:] = 0.0
    Q[:, 8] = 0.0
    Q[4, 6:] = 0.0
    Q[1, 7] = 0.0
    Q /= Q.sum(axis=1, keepdims=True)
    Q[4, :6] = Q[S, :6].max(axis=0)  # at the sensitive maximum ...
    Q[4, 0] += 0.2  # ... and above it on output 0
    Q[4] /= Q[4].sum()
    Q[5] = Q[S[0]]
    with np.errstate(divide="ignore"):
        ratios = np.log(Q[S][:, None, :6]) - np.log(Q[None, :, :6])
    eps = float(ratios.max()) * (1 + 1e-9)  # the tight one-sided budget, rounded up
    return Q, S, eps


@pytest.mark.parametrize("seed", range(5))
def test_claim12_one_sided_decomposition_of_random_channels(seed):
    Q, S, eps = _random_one_sided(np.random.default_rng(seed))
    model = HighLowLDP(S, eps)
    assert verify(Q, model).passed
    # Q_O itself is not ULDP: outputs 6 and 7 come from several non-sensitive inputs.
    assert not verify(Q, UtilityOptimizedLDP(S, range(6), eps)).passed
    dec = one_sided_decomposition(Q, model)
    U, R = dec.uldp, dec.post_processing
    assert_array_equal(dec.protected_outputs, np.arange(6))
    assert_array_equal(dec.revealed_inputs, [1, 3, 4, 6])  # not the sensitive rows, not row 5
    assert U.shape == (7, 10) and R.shape == (10, 9)
    for M in (U, R):
        assert M.min() >= 0
        assert_allclose(M.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert_allclose(U @ R, Q, rtol=0, atol=1e-12)  # Q_O = Q_R o Q_U
    assert verify(U, dec.guarantee).passed  # Q_U is (X_S, Z_P, eps)-ULDP, exactly
    assert verify(U, model).passed  # and so one-sided LDP (Prop. 13)
    # Row 4 reaches Y_P only: its own output maps back into Y_P, to output 0.
    assert_allclose(R[6 + 2], np.eye(9)[0], atol=1e-12)
    # The protected part of Q_U never exceeds the largest probability of a sensitive input.
    assert np.all(U[:, :6] <= Q[S][:, :6].max(axis=0))


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_claim12_uldp_channels_decompose_trivially(eps):
    # uRR is already ULDP: Q_U is Q_O with its outputs relabelled (Y_P first, then the
    # non-sensitive inputs) and Q_R is the permutation back.
    S = [1, 4, 5]
    Q = UtilityOptimizedRRChannel(eps, 7, S).to_dense()
    dec = one_sided_decomposition(Q, HighLowLDP(S, eps))
    order = np.concatenate([S, [0, 2, 3, 6]])
    assert_array_equal(np.concatenate([dec.protected_outputs, dec.revealed_inputs]), order)
    assert_allclose(dec.uldp, Q[:, order], rtol=1e-15, atol=0)
    assert_array_equal(dec.post_processing, np.eye(7)[order])
    # With every input sensitive (X_N empty), k-RR decomposes into itself and the identity.
    K = RandomizedResponseChannel(eps, 5).to_dense()
    dec = one_sided_decomposition(K, HighLowLDP(range(5), eps))
    assert_array_equal(dec.uldp, K)
    assert_array_equal(dec.post_processing, np.eye(5))
    # uRAP: the protected block is kept; each non-sensitive x gets one output for its whole
    # invertible mass 1 - d2, and Q_R spreads it over the reports with bit x set (noisy
    # sensitive bits carry no information once x is revealed).
    ch = UtilityOptimizedRAPPORChannel(eps, 4, [0, 1])
    Q = ch.to_dense()
    dec = one_sided_decomposition(ch, HighLowLDP([0, 1], eps))
    protected = np.flatnonzero(ch.guarantee().protected_mask(16))
    assert_array_equal(dec.protected_outputs, protected)
    assert_array_equal(dec.revealed_inputs, [2, 3])
    # (A non-sensitive input's all-zero report equals the sensitive maximum only up to rounding,
    # so the cap may move ~1e-13 of mass: hence the tolerances.)
    assert_allclose(dec.uldp[:, : protected.size], Q[:, protected], rtol=1e-11, atol=0)
    assert_allclose(dec.uldp[[2, 3], [4, 5]], 1 - ch.d2, rtol=1e-11)
    assert_allclose(dec.uldp @ dec.post_processing, Q, rtol=0, atol=1e-15)
    assert_allclose(dec.post_processing[4:, protected], 0, atol=1e-11)


def test_claim12_decomposition_refuses_channels_that_are_not_one_sided():
    Q, S, eps = _random_one_sided(np.random.default_rng(0))
    with pytest.raises(ValueError, match="not one-sided LDP"):
        one_sided_decomposition(Q, HighLowLDP(S, eps * 0.9))
    with pytest.raises(TypeError, match="HighLowLDP"):
        one_sided_decomposition(Q, UtilityOptimizedLDP(S, range(6), eps))
    # No sensitive input: nothing is protected, Q_U reveals every input, Q_R is Q_O.
    dec = one_sided_decomposition(Q, HighLowLDP([], 1.0))
    assert_array_equal(dec.uldp, np.eye(7))
    assert_allclose(dec.post_processing, Q, rtol=1e-15, atol=0)

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import binom

from skldp import OptimizedUnaryEncoding, ProjectedEstimator, RandomizedResponse
from skldp.channels import RandomizedResponseChannel
from skldp.theory import (
    krr_l1_risk,
    krr_l2_risk,
    krr_rappor_break_even,
    normal_l1_risk,
    normal_projected_l1_risk,
    rappor_l1_risk,
    rappor_l2_risk,
)


def test_uniform_is_the_worst_case():
    k, eps, n = 7, 1.5, 100
    e = math.exp(eps)
    assert_allclose(
        krr_l2_risk(k, eps, n), (k - 1) * (k - 1 + e) ** 2 / (n * k * (e - 1) ** 2), rtol=1e-12
    )
    c = math.exp(eps / 2)
    assert_allclose(
        rappor_l2_risk(k, eps, n), (k - 1) / (n * k) + k * c / (n * (c - 1) ** 2), rtol=1e-12
    )
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = rng.dirichlet(np.ones(k))
        assert krr_l2_risk(k, eps, n, p) <= krr_l2_risk(k, eps, n)
        assert rappor_l2_risk(k, eps, n, p) <= rappor_l2_risk(k, eps, n)


@pytest.mark.parametrize(
    "call, err",
    [
        (lambda: krr_l2_risk(1, 1.0, 10), ValueError),
        (lambda: krr_l2_risk(3, -1.0, 10), ValueError),
        (lambda: rappor_l2_risk(3, 1.0, 0), ValueError),
        (lambda: krr_l2_risk(3, 1.0, 10, [0.5, 0.5]), ValueError),
        (lambda: krr_rappor_break_even(2.5), TypeError),
        (lambda: krr_l1_risk(3, 1.0, 10, [0.5, 0.6, -0.1]), ValueError),
        (lambda: rappor_l1_risk(3, 1.0, 10, [0.5, 0.2, 0.2]), ValueError),
        (lambda: krr_l1_risk(3, 1.0, 10, method="normal"), ValueError),
        (lambda: rappor_l1_risk(3, 0.0, 10), ValueError),
    ],
)
def test_bad_inputs(call, err):
    with pytest.raises(err):
        call()


def test_l1_risk_equals_a_direct_sum_over_the_binomial():
    # de Moivre's closed form against the definition sum_x |x - n m| P(N = x), small n.
    k, eps, n = 4, 1.0, 37
    p = np.array([0.4, 0.3, 0.2, 0.1])
    e = math.exp(eps)
    m = ((e - 1) * p + 1) / (k - 1 + e)
    x = np.arange(n + 1)[:, None]
    mad = (np.abs(x - n * m) * binom.pmf(x, n, m)).sum(axis=0)
    assert_allclose(krr_l1_risk(k, eps, n, p), (k - 1 + e) / (e - 1) * mad.sum() / n, rtol=1e-12)


def test_maximum_likelihood_bad_input():
    ch = RandomizedResponseChannel(1.0, 3)
    with pytest.raises(ValueError, match="shape"):
        ch.maximum_likelihood([1, 2])
    with pytest.raises(ValueError, match="non-negative"):
        ch.maximum_likelihood([0, 0, 0])
    with pytest.raises(ValueError, match="non-negative"):
        ch.maximum_likelihood([1, -1, 3])


@pytest.mark.parametrize(
    ("privatizer", "k", "n", "shape"),
    [
        (RandomizedResponse, 50, 2000, "uniform"),
        (RandomizedResponse, 50, 2000, "zipf"),
        (OptimizedUnaryEncoding, 100, 3000, "zipf"),
    ],
)
def test_normal_projected_l1_risk_matches_simulated_projected_estimates(privatizer, k, n, shape):
    # the advisor's projected_tv column (issue 34): the expected error of the distribution a
    # user gets, checked against ProjectedEstimator on 60 simulated collections
    p = np.full(k, 1.0 / k) if shape == "uniform" else 1.0 / np.arange(1, k + 1) ** 1.1
    p = p / p.sum()
    priv = privatizer(epsilon=1.0, categories=list(range(k))).fit(list(range(k)))
    risk = normal_projected_l1_risk(p, priv.channels_[0].variance(p, n))
    rng = np.random.default_rng(7)
    tv = []
    for seed in range(60):
        x = rng.choice(k, size=n, p=p)
        reports = privatizer(epsilon=1.0, categories=list(range(k)), random_state=seed)
        estimate = ProjectedEstimator().fit(reports.fit_transform(x)).distribution_
        tv.append(0.5 * np.abs(estimate - p).sum())
    se = np.std(tv, ddof=1) / np.sqrt(len(tv))
    assert abs(risk / 2 - np.mean(tv)) < 4 * se + 0.003
    assert 0 < risk <= 2


def test_normal_projected_l1_risk_limits():
    p = np.array([0.5, 0.3, 0.2])
    # no noise: the projection returns p
    assert normal_projected_l1_risk(p, np.zeros(3)) == pytest.approx(0.0, abs=1e-12)
    # small noise: the projection changes little, the error is the unbiased estimate's
    small = np.full(3, 1e-8)
    assert normal_projected_l1_risk(p, small) == pytest.approx(normal_l1_risk(small), rel=0.35)
    # huge noise: the estimate tells nothing, and the error stays below 2
    assert 1.0 < normal_projected_l1_risk(p, np.full(3, 1e4)) <= 2.0
    with pytest.raises(ValueError, match="shape of p"):
        normal_projected_l1_risk(p, np.ones(2))

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skldp import RAPPOR, EMEstimator, ProjectedEstimator, UtilityOptimizedRR
from skldp.channels import RandomizedResponseChannel
from skldp.estimators import significance_threshold


def test_threshold_keeps_significant_and_spreads_the_rest():
    p_hat = np.array([0.5, 0.3, 0.01, -0.02, 0.21])
    sigma0 = np.full(5, 0.01)
    q = significance_threshold(p_hat, sigma0, alpha=0.05)
    # z = Phi^-1(1 - 0.01) = 2.326: kept 0.5, 0.3, 0.21 (sum 1.01 > 1): rescaled, others 0
    assert_allclose(q, [0.5 / 1.01, 0.3 / 1.01, 0, 0, 0.21 / 1.01])
    q = significance_threshold(np.array([0.5, 0.3, 0.01, -0.02, 0.1]), sigma0)
    assert_allclose(q, [0.5, 0.3, 0.05, 0.05, 0.1])
    assert_allclose(significance_threshold(np.full(4, -0.1), np.full(4, 0.01)), 0.25)


def test_zero_frequency_variance_rr():
    ch = RandomizedResponseChannel(1.0, 6)
    e = math.e
    assert_allclose(ch.zero_frequency_variance(500), (6 + e - 2) / ((e - 1) ** 2 * 500), rtol=1e-12)


def test_projected_threshold_and_em_init():
    rng = np.random.default_rng(3)
    cats = list(range(30))
    p = np.r_[np.full(5, 0.18), np.full(25, 0.1 / 25)]
    x = rng.choice(30, 20000, p=p)
    for priv in (
        UtilityOptimizedRR(1.0, sensitive=[0, 7, 9], categories=cats, random_state=1),
        RAPPOR(1.0, categories=cats, random_state=1),
    ):
        reports = priv.fit_transform(x)
        thr = ProjectedEstimator(method="threshold").fit(reports)
        assert np.all(thr.distribution_ >= 0) and thr.distribution_.sum() == pytest.approx(1.0)
        assert np.abs(thr.distribution_ - p).sum() < np.abs(thr.unbiased_distribution_ - p).sum()
        em = EMEstimator(init="threshold").fit(reports)
        assert em.converged_
        assert np.all(np.diff(em.log_likelihoods_) >= -1e-12)
        strict = ProjectedEstimator(method="threshold", alpha=1e-6).fit(reports)
        assert np.sum(strict.distribution_ > strict.distribution_.min()) <= np.sum(
            thr.distribution_ > thr.distribution_.min()
        )


@pytest.mark.parametrize("alpha", [0, 1, -0.5, "x", True])
def test_bad_alpha(alpha):
    reports = RAPPOR(1.0, categories=[0, 1, 2], random_state=0).fit_transform([0, 1, 2])
    with pytest.raises(ValueError, match="alpha"):
        ProjectedEstimator(method="threshold", alpha=alpha).fit(reports)


def test_bad_init():
    reports = RAPPOR(1.0, categories=[0, 1, 2], random_state=0).fit_transform([0, 1, 2])
    with pytest.raises(ValueError, match="threshold"):
        EMEstimator(init="thresh").fit(reports)

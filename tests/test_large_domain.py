"""Domains of a million values: k-RR with projection and EM in memory linear in k."""

import tracemalloc

import numpy as np
import pytest

from skldp import EMEstimator, EmpiricalEstimator, ProjectedEstimator, RandomizedResponse

K = 10**6


@pytest.fixture(scope="module")
def million():
    """k = 10^6, epsilon = ln k, 20 000 reports from 10 categories spread over the domain.

    (The data and the noise use different seeds: with the same seed, numpy draws the same
    uniforms for both, and the noise would depend on the data.)
    """
    eps = float(np.log(K))
    rr = RandomizedResponse(eps, categories=np.arange(K), random_state=7).fit(np.arange(10))
    support = np.arange(10) * 99_991
    p_support = np.arange(1, 11) / 55.0
    x = support[np.random.default_rng(8).choice(10, size=20_000, p=p_support)]
    return rr, rr.transform(x), support, p_support


def _peak(fn):
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_privatizer_with_a_million_categories_is_fast_to_fit():
    # the domain check of a 1-D array is vectorized (no per-category Python loop)
    rr, peak = _peak(lambda: RandomizedResponse(categories=np.arange(K)).fit(np.arange(3)))
    assert rr.channel_.n_inputs == K
    assert peak < 12 * 8 * K, peak


def test_projection_at_a_million_categories(million):
    rr, reports, support, p_support = million
    est, peak = _peak(lambda: ProjectedEstimator().fit(reports))
    p = est.distribution_
    assert p.shape == (K,) and p.min() >= 0 and abs(p.sum() - 1) < 1e-9
    # linear in k: a few dozen length-k float arrays, nothing like a k x k matrix (8 TB)
    assert peak < 40 * 8 * K, peak
    # the unbiased estimate is within 5 exact standard errors on the support
    truth = np.zeros(K)
    truth[support] = p_support
    sd = np.sqrt(rr.channel_.variance(truth, reports.shape[0]))
    unbiased = est.unbiased_distribution_
    assert np.all(np.abs(unbiased[support] - p_support) < 5 * sd[support])
    assert np.allclose(unbiased, EmpiricalEstimator().fit(reports).distribution_, rtol=0, atol=0)


def test_em_at_a_million_categories(million):
    rr, reports, support, _ = million
    est, peak = _peak(lambda: EMEstimator().fit(reports))
    assert est.converged_
    p = est.distribution_
    assert p.shape == (K,) and p.min() >= 0 and abs(p.sum() - 1) < 1e-12
    assert peak < 40 * 8 * K, peak
    assert np.all(np.diff(est.log_likelihoods_) >= -1e-12)
    # the maximum-likelihood estimate beats the projected estimate in likelihood
    channel = rr.channel_
    stats = channel.statistics(reports)
    projected = ProjectedEstimator().fit(reports).distribution_
    assert est.log_likelihood_ >= channel.em_step(stats, projected)[1]
    # and its ten largest entries are the true support
    assert set(np.argsort(p)[-10:]) == set(support)

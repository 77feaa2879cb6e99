"""The contract every channel keeps, checked against its dense matrix.

A family's test module defines a ``channel`` fixture (small k, epsilon in {1e-3, 1, 50})
and subclasses :class:`ChannelContract`; pytest then runs every check on every channel.
"""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp.privacy import verify
from tests.conftest import simplex_point


def _eps_scale(channel):
    eps = getattr(channel, "epsilon", 1.0)
    return max(1.0, 1.0 / eps) if np.isfinite(eps) else 1.0


def _output_statistics(channel, Q):
    """The statistics vector of each output of the dense channel (rows): bits, or the
    channel's own ``output_statistics()`` when its statistics are not the bit sums (local
    hashing counts the categories each report supports)."""
    if hasattr(channel, "output_statistics"):
        return channel.output_statistics()
    width = channel.report_width
    return ((np.arange(Q.shape[1])[:, None] >> np.arange(width)) & 1).astype(float)


def _dense_statistics_map(channel):
    """The matrix M with forward(p) = M^T p, from the dense channel (symbol or bits)."""
    Q = channel.to_dense()
    if channel.report_kind == "symbol":
        return Q
    return Q @ _output_statistics(channel, Q)


class ChannelContract:
    def test_rows_are_distributions(self, channel):
        Q = channel.to_dense()
        assert np.all(Q >= 0)
        assert_allclose(Q.sum(axis=1), 1.0, rtol=0, atol=1e-12)

    def test_forward_matches_dense(self, channel):
        M = _dense_statistics_map(channel)
        p = simplex_point(channel.n_inputs)
        assert_allclose(channel.forward(p), M.T @ p, rtol=1e-12, atol=1e-15)

    def test_adjoint_matches_dense(self, channel):
        M = _dense_statistics_map(channel)
        v = np.random.default_rng(1).standard_normal(channel.n_statistics)
        assert_allclose(channel.adjoint(v), M @ v, rtol=1e-10, atol=1e-12)

    def test_unbiased_on_expected_statistics_returns_p(self, channel):
        p = simplex_point(channel.n_inputs)
        n = 1000
        est = channel.unbiased(n * channel.forward(p), n)
        assert_allclose(est, p, rtol=0, atol=1e-12 * _eps_scale(channel))

    def test_statistics_add_over_chunks(self, channel):
        rng = np.random.default_rng(2)
        x = rng.integers(0, channel.n_inputs, 500)
        reports = channel.sample(x, rng)
        whole = channel.statistics(reports)
        parts = channel.statistics(reports[:123]) + channel.statistics(reports[123:])
        assert_array_equal(whole, parts)

    def test_likelihood_and_posterior_match_dense(self, channel):
        rng = np.random.default_rng(3)
        p = simplex_point(channel.n_inputs)
        reports = channel.sample(rng.integers(0, channel.n_inputs, 50), rng)
        L = channel.likelihood(reports)
        Q = channel.to_dense()
        if channel.report_kind == "symbol":
            assert_allclose(L, Q[:, reports].T, rtol=1e-12)
        post = channel.posterior(reports, p)
        assert_allclose(post.sum(axis=1), 1.0, atol=1e-12)
        assert_allclose(post, (L * p) / (L @ p)[:, None], rtol=1e-10)
        assert_allclose(np.exp(channel.log_likelihood(reports, p)), L @ p, rtol=1e-10)

    def test_variance_matches_dense(self, channel):
        M = _dense_statistics_map(channel)
        if np.linalg.matrix_rank(M) < channel.n_inputs:
            pytest.skip("not identifiable: no unbiased estimator")
        p = simplex_point(channel.n_inputs)
        n = 700
        # Simulate the exact covariance of the unbiased estimate by linearity: it is affine in
        # the statistics, so Var = G Cov(s) G^T / n^2 with G its linear part.
        k = channel.n_inputs
        base = channel.unbiased(np.zeros(channel.n_statistics), n)
        G = np.column_stack(
            [channel.unbiased(np.eye(channel.n_statistics)[j], n) - base for j in range(channel.n_statistics)]
        )
        if channel.report_kind == "symbol":
            m = M.T @ p
            cov = n * (np.diag(m) - np.outer(m, m))
        else:
            Q = channel.to_dense()
            outputs = _output_statistics(channel, Q)
            py = Q.T @ p
            mean = outputs.T @ py
            cov = n * (outputs.T @ (outputs * py[:, None]) - np.outer(mean, mean))
        expected = np.einsum("ij,jk,ik->i", G, cov, G)
        assert_allclose(channel.variance(p, n), expected, rtol=1e-8, atol=1e-15 * k)

    def test_privacy_verified(self, channel):
        assert verify(channel, channel.guarantee()).passed

    def test_pickle_round_trip(self, channel):
        again = pickle.loads(pickle.dumps(channel))
        assert again == channel
        assert hash(again) == hash(channel)
        assert_array_equal(again.to_dense(), channel.to_dense())

    def test_em_fixed_point_at_expected_counts(self, channel):
        p = simplex_point(channel.n_inputs)
        n = 1000
        stats = n * channel.forward(p)
        if channel.report_kind != "symbol":
            pytest.skip("bit-vector EM works on reports, not on expected bit sums")
        nxt, _ = channel.em_step(stats, p)
        assert_allclose(nxt, p, rtol=1e-10)

    def test_sample_matches_forward(self, channel):
        # Statistics of n samples from p lie within 5 standard errors of n * forward(p).
        rng = np.random.default_rng(4)
        p = simplex_point(channel.n_inputs)
        n = 20000
        x = rng.choice(channel.n_inputs, size=n, p=p)
        stats = channel.statistics(channel.sample(x, np.random.default_rng(5)))
        mean = channel.forward(p)
        se = np.sqrt(n * mean * (1 - mean))
        assert np.all(np.abs(stats - n * mean) <= 5 * se + 1e-9)

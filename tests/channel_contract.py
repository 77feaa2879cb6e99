"""The contract every channel keeps, checked against its dense matrix.

A family's test module defines its ``channel`` fixture with :func:`contract_fixture` (small k,
epsilon in {1e-3, 1, 50}) and subclasses :class:`ChannelContract`; pytest then runs every
check on every channel. Open-alphabet channels use :func:`open_alphabet_fixture` and
:class:`OpenAlphabetContract`. Both record the classes they cover, so that
``tests/test_architecture.py`` can check every public channel class runs the contract.
"""

import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import ConvergenceWarning

from skldp import EMEstimator
from skldp._reports import Reports, ReportSpec
from skldp.channels import Channel, LikelihoodModel, MultinomialModel, SymbolChannel
from skldp.privacy import verify
from tests.conftest import simplex_point

#: Classes of the channels given to :func:`contract_fixture` / :func:`open_alphabet_fixture`.
COVERED = set()
COVERED_OPEN = set()


def _ids(channel):
    return repr(channel)


def contract_fixture(channels, ids=_ids):
    """The ``channel`` fixture of a family's contract test, over ``channels``."""
    COVERED.update(type(ch) for ch in channels)
    return pytest.fixture(params=channels, ids=ids, name="channel")(lambda request: request.param)


def open_alphabet_fixture(channels, ids=_ids):
    """The ``open_channel`` fixture of :class:`OpenAlphabetContract`, over ``channels``."""
    COVERED_OPEN.update(type(ch) for ch in channels)
    return pytest.fixture(params=channels, ids=ids, name="open_channel")(
        lambda request: request.param
    )


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
    if isinstance(channel, SymbolChannel):
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
        if isinstance(channel, SymbolChannel):
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
            [
                channel.unbiased(np.eye(channel.n_statistics)[j], n) - base
                for j in range(channel.n_statistics)
            ]
        )
        if isinstance(channel, SymbolChannel):
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
        if not isinstance(channel, SymbolChannel):
            pytest.skip("bit-vector EM works on reports, not on expected bit sums")
        g, _ = MultinomialModel(channel, n * channel.forward(p)).multipliers(p)
        assert_allclose(p * g, p, rtol=1e-10)  # the EM step p * g stays at p

    # -- the likelihood model ---------------------------------------------------------------------
    def _reports(self, channel, n=200, seed=8):
        rng = np.random.default_rng(seed)
        return channel.sample(rng.integers(0, channel.n_inputs, n), rng)

    def test_model_matches_dense_likelihood(self, channel):
        # L(p) = mean log(L_i . p), grad L(p) = mean L_i / (L_i . p) and the Hessian
        # -mean L_i L_i^T / (L_i . p)^2, with L the dense likelihood of each report; the EM
        # multipliers the solver asks for (model.multipliers) are grad L(p), and the EM step
        # p * grad L(p) sums to one; adjoint is the transpose of forward.
        reports = self._reports(channel)
        model = channel.em_model(reports)
        assert isinstance(model, LikelihoodModel)
        assert model.n_reports == reports.shape[0]
        assert_array_equal(model.statistics, channel.statistics(reports))
        p = simplex_point(channel.n_inputs)
        L = channel.likelihood(reports)
        t = L @ p
        assert_allclose(model.log_likelihood(p), np.mean(np.log(t)), rtol=1e-10)
        grad = model.gradient(p)
        assert_allclose(grad, (L / t[:, None]).mean(axis=0), rtol=1e-9)
        assert_allclose(np.dot(p, grad), 1.0, rtol=1e-10)
        g, ll = model.multipliers(p)
        assert_allclose(g, (L / t[:, None]).mean(axis=0), rtol=1e-9)
        assert_allclose(ll, np.mean(np.log(t)), rtol=1e-10)
        assert_array_equal(model.multipliers(p, row_values=model.forward(p))[0], g)
        # at a point some report cannot come from, L = -inf and the multipliers are NaN
        x = int(np.argmin(L[0]))
        if L[0, x] == 0.0:
            g0, ll0 = model.multipliers(np.eye(channel.n_inputs)[x])
            assert ll0 == -np.inf and np.all(np.isnan(g0))
        rng = np.random.default_rng(14)
        v = rng.standard_normal(channel.n_inputs)
        hv = -((L * ((L @ v) / t**2)[:, None]).mean(axis=0))
        assert_allclose(model.hessian_product(p, v), hv, rtol=1e-8, atol=1e-12 * np.abs(hv).max())
        rows = model.forward(p)
        u = rng.standard_normal(rows.shape[0])
        assert rows.shape == model.weights.shape
        assert_allclose(np.dot(rows, u), np.dot(p, model.adjoint(u)), rtol=1e-9, atol=1e-12)

    def test_model_holds_the_state_and_the_channel_does_not_change(self, channel):
        # Chunks' models merge to the model of all the reports; a model pickles; and the
        # channel is an immutable value: an EM fit leaves its __dict__, hash and pickle as
        # they were (whatever EM keeps lives in the model).
        reports = self._reports(channel)
        before = dict(vars(channel))
        blob, key = pickle.dumps(channel), hash(channel)
        model = channel.em_model(reports)
        merged = channel.em_model(reports[:71]).merge(channel.em_model(reports[71:]))
        assert merged.n_reports == model.n_reports
        assert_array_equal(merged.statistics, model.statistics)
        p = simplex_point(channel.n_inputs)
        assert_allclose(merged.multipliers(p)[0], model.multipliers(p)[0], rtol=1e-12)
        assert merged.log_likelihood(p) == pytest.approx(model.log_likelihood(p), rel=1e-12)
        again = pickle.loads(pickle.dumps(model))
        assert_array_equal(again.multipliers(p)[0], model.multipliers(p)[0])
        wrapped = Reports(reports.reshape(reports.shape[0], -1), (ReportSpec(channel),))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            EMEstimator(init="uniform", max_iter=5).fit(wrapped)
        assert vars(channel).keys() == before.keys()
        assert all(vars(channel)[name] is value for name, value in before.items())
        assert pickle.dumps(channel) == blob and hash(channel) == key

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


class OpenAlphabetContract:
    """What an open-alphabet channel keeps: it is no Channel, and restricts to one."""

    CANDIDATES = np.array(["red", "green", "blue", "cyan", "teal"], dtype=object)

    def test_is_not_a_channel_and_restricts_to_one(self, open_channel):
        assert not isinstance(open_channel, Channel)
        fin = open_channel.restrict(self.CANDIDATES)
        assert isinstance(fin, Channel)
        assert fin.n_inputs == self.CANDIDATES.shape[0]
        assert fin.n_statistics == open_channel.n_statistics
        assert fin.report_width == open_channel.report_width
        with pytest.raises(AttributeError, match="restrict"):
            open_channel.forward  # noqa: B018  reading the attribute is the test

    def test_reports_read_alike_open_and_restricted(self, open_channel):
        rng = np.random.default_rng(11)
        values = self.CANDIDATES[rng.integers(0, 5, 400)]
        reports = open_channel.sample_values(values, rng)
        fin = open_channel.restrict(self.CANDIDATES)
        assert_array_equal(open_channel.statistics(reports), fin.statistics(reports))
        whole = open_channel.statistics(reports)
        parts = open_channel.statistics(reports[:97]) + open_channel.statistics(reports[97:])
        assert_array_equal(whole, parts)

    def test_pickle_round_trip(self, open_channel):
        again = pickle.loads(pickle.dumps(open_channel))
        assert again == open_channel and hash(again) == hash(open_channel)

import math
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp.channels import (
    BitVectorChannel,
    OptimizedUnaryEncodingChannel,
    RAPPORChannel,
    UtilityOptimizedRAPPORChannel,
    bernoulli_bits,
)
from skldp.channels._bits import bernoulli_bits_by_label
from skldp.channels._unary import rappor_probabilities
from skldp.estimators._em import em
from skldp.privacy import LDP, tight_epsilon_matrix, verify
from tests.channel_contract import ChannelContract, contract_fixture
from tests.conftest import em_step, simplex_point

EPS = (1e-3, 1.0, 50.0)
SMALL = (
    [RAPPORChannel(eps, k) for k in (2, 3, 7) for eps in EPS]
    + [RAPPORChannel(eps, 5, theta=0.3) for eps in EPS]
    + [OptimizedUnaryEncodingChannel(eps, k) for k in (2, 6) for eps in EPS]
)


channel = contract_fixture(SMALL)


class TestUnaryContract(ChannelContract):
    def test_likelihood_matches_dense_columns(self, channel):
        rng = np.random.default_rng(7)
        reports = channel.sample(rng.integers(0, channel.n_inputs, 40), rng)
        codes = reports @ (1 << np.arange(channel.width))
        assert_allclose(
            channel.likelihood(reports), channel.to_dense()[:, codes].T, rtol=1e-11, atol=1e-300
        )

    def test_em_step_matches_dense_em(self, channel):
        # One EM step from the fast statistics equals the step on the full 2^k matrix.
        rng = np.random.default_rng(8)
        p = simplex_point(channel.n_inputs)
        reports = channel.sample(rng.choice(channel.n_inputs, 300, p=p), rng)
        Q = channel.to_dense()
        codes = reports @ (1 << np.arange(channel.width))
        counts = np.bincount(codes, minlength=Q.shape[1]).astype(float)
        q = np.full(channel.n_inputs, 1.0 / channel.n_inputs)
        m = Q.T @ q
        seen = counts > 0
        dense_next = q * (Q[:, seen] @ (counts[seen] / m[seen])) / counts.sum()
        dense_ll = counts[seen] @ np.log(m[seen]) / counts.sum()
        nxt, ll = em_step(channel.em_model(reports), q)
        assert_allclose(nxt, dense_next / dense_next.sum(), rtol=1e-9)
        assert_allclose(ll, dense_ll, rtol=1e-9)

    def test_bits_are_uint8(self, channel):
        out = channel.sample(np.array([0, 1, 1]), np.random.default_rng(0))
        assert out.dtype == np.uint8 and out.shape == (3, channel.width)


def test_basic_rappor_is_symmetric_flip():
    for eps in (0.1, 1.0, 2 * math.log(3)):
        ch = RAPPORChannel(eps, 4)
        a = math.exp(eps / 2)
        assert_allclose(ch.theta, a / (a + 1), rtol=1e-14)
        assert_allclose(ch.psi, 1 / (a + 1), rtol=1e-11)


def test_rappor_dense_matches_kairouz_formula():
    # Q(y|x) = (a/(1+a))^(k - d(y, e_x)) (1/(1+a))^d(y, e_x), Kairouz et al. 2016 Sec. 2.3.
    k, eps = 5, 1.3
    ch = RAPPORChannel(eps, k)
    a = math.exp(eps / 2)
    outs = ch.output_bits()
    dist = np.abs(outs[None, :, :] - np.eye(k, dtype=int)[:, None, :]).sum(axis=2)
    expected = (a / (1 + a)) ** (k - dist) * (1 / (1 + a)) ** dist
    assert_allclose(ch.to_dense(), expected, rtol=1e-10)


def test_oue_is_generalized_rappor_at_half():
    for eps in (0.5, 3.0):
        oue = OptimizedUnaryEncodingChannel(eps, 4)
        gen = RAPPORChannel(eps, 4, theta=0.5)
        assert_array_equal(oue.to_dense(), gen.to_dense())
        assert_allclose(oue.psi, 1 / (math.exp(eps) + 1), rtol=1e-11)
        assert oue != gen


@pytest.mark.parametrize("eps", [1e-6, 0.1, 1.0, 50.0, 700.0, 1e4])
@pytest.mark.parametrize("theta", [None, 0.3, 0.5, 0.9])
def test_probabilities_on_grid_and_within_bound(eps, theta):
    th, psi = rappor_probabilities(eps, theta)
    assert th / 2.0**-53 == math.floor(th / 2.0**-53)
    assert psi / 2.0**-53 == math.floor(psi / 2.0**-53)
    assert 0 < psi < th < 1
    bound = math.exp(eps) if eps < 700 else math.inf
    assert th * (1 - psi) <= bound * psi * (1 - th)


@pytest.mark.parametrize("theta", [None, 0.3, 0.8])
def test_privacy_tight(theta):
    eps, k = 1.2, 4
    ch = RAPPORChannel(eps, k, theta=theta)
    E = tight_epsilon_matrix(ch)
    assert_allclose(E[~np.eye(k, dtype=bool)], eps, rtol=1e-9)
    assert not verify(ch, LDP(0.99 * eps)).passed


def test_bernoulli_bits_exact_frequencies():
    # Column probabilities, including ones needing the tie-break draw, are hit within 5 sd.
    probs = np.array([0.0, 2.0**-53, 0.3, 0.5, 1 / 3, 0.999, 1.0])
    probs = np.floor(probs / 2.0**-53) * 2.0**-53
    n = 200_000
    bits = bernoulli_bits(np.random.default_rng(0), n, probs)
    assert bits.dtype == np.uint8
    freq = bits.mean(axis=0)
    sd = np.sqrt(probs * (1 - probs) / n)
    assert np.all(np.abs(freq - probs) <= 5 * sd + 1e-12)
    assert bits[:, 0].sum() == 0 and bits[:, -1].sum() == n


def test_bernoulli_bits_tie_branch_is_exact():
    # q = 1/256 + tiny: only the tie branch (B == 1, then U < frac) adds the tiny part; with
    # q = 1/256 exactly the frequency is 1/256.
    q = 1 / 256 + 1 / 512
    n = 400_000
    bits = bernoulli_bits(np.random.default_rng(1), n, np.array([q, 1 / 256]))
    sd = np.sqrt(q * (1 - q) / n)
    assert abs(bits[:, 0].mean() - q) < 5 * sd
    assert abs(bits[:, 1].mean() - 1 / 256) < 5 * sd


def test_bernoulli_bits_by_label_hits_each_labels_probability():
    # Labels pick the probability of each bit: 0 and 1, a tie-branch value, and a value off
    # the byte grid, each hit within 5 sd; bits of one row are independent (the pair
    # frequency of two labels is the product). Written over the labels, the same bits.
    probs = np.floor(np.array([0.0, 1 / 256 + 1 / 512, 1 / 3, 0.75, 1.0]) / 2.0**-53) * 2.0**-53
    n, w = 40_000, 10
    labels = np.random.default_rng(2).integers(0, probs.size, (n, w)).astype(np.uint8)
    bits = bernoulli_bits_by_label(np.random.default_rng(3), labels, probs)
    assert bits.dtype == np.uint8 and bits.shape == (n, w)
    for label, q in enumerate(probs):
        hit = bits[labels == label]
        sd = np.sqrt(q * (1 - q) / hit.size)
        assert abs(hit.mean() - q) <= 5 * sd + 1e-12, (label, hit.mean(), q)
    pair = (labels[:, 0] == 2) & (labels[:, 1] == 3)
    both = (bits[pair, 0] & bits[pair, 1]).mean()
    q = probs[2] * probs[3]
    assert abs(both - q) <= 5 * np.sqrt(q * (1 - q) / pair.sum())
    # a planted wrong draw (labels 2 and 3 swapped) is caught by the same tolerance
    wrong = bernoulli_bits_by_label(np.random.default_rng(3), labels, probs[[0, 1, 3, 2, 4]])
    hit = wrong[labels == 2]
    assert abs(hit.mean() - probs[2]) > 5 * np.sqrt(probs[2] * (1 - probs[2]) / hit.size)
    in_place = labels.copy()
    out = bernoulli_bits_by_label(np.random.default_rng(3), in_place, probs, out=in_place)
    assert out is in_place
    assert_array_equal(in_place, bits)


def test_reports_stay_uint8_and_bad_reports_rejected():
    ch = RAPPORChannel(1.0, 4)
    assert ch.check_reports(np.ones((2, 4), dtype=bool)).dtype == np.uint8
    with pytest.raises(ValueError, match="width 4"):
        ch.statistics(np.ones((2, 3), dtype=np.uint8))
    with pytest.raises(ValueError, match="different mechanism"):
        ch.statistics(np.full((2, 4), 2))
    with pytest.raises(ValueError, match="integers"):
        ch.statistics(np.full((2, 4), 0.5))


@pytest.mark.parametrize("theta", [0.0, 1.0, -0.1, 2])
def test_bad_theta(theta):
    with pytest.raises(ValueError, match="theta"):
        RAPPORChannel(1.0, 4, theta=theta)


def test_wide_reports_do_not_underflow():
    # k = 3000 bits at eps = 1: each Q(y|x) underflows to 0 in double; log-likelihoods and
    # posteriors do not, and match a direct sum of per-bit logs.
    ch = RAPPORChannel(1.0, 3000)
    rng = np.random.default_rng(2)
    x = rng.integers(0, 3000, 20)
    reports = ch.sample(x, rng)
    p = np.full(3000, 1 / 3000)
    ll = ch.log_likelihood(reports, p)
    assert np.all(np.isfinite(ll)) and np.all(ll < -745)
    y = reports[0].astype(bool)
    P1 = np.full((3000, 3000), ch.psi)
    np.fill_diagonal(P1, ch.theta)
    logq = np.where(y, np.log(P1), np.log1p(-P1)).sum(axis=1)
    direct = logq.max() + np.log(np.sum(np.exp(logq - logq.max())) / 3000)
    assert_allclose(ll[0], direct, rtol=1e-12)
    post = ch.posterior(reports, p)
    assert_allclose(post.sum(axis=1), 1.0)
    assert_allclose(post[0], np.exp(logq - logq.max()) / np.exp(logq - logq.max()).sum(), rtol=1e-9)


def test_packed_em_path_matches_generic_em():
    # More than 16 free bits: bit-packed reports; compare with the generic chunked EM step.
    k = 40
    ch = RAPPORChannel(2.0, k)
    rng = np.random.default_rng(3)
    p = simplex_point(k)
    reports = ch.sample(rng.choice(k, 2000, p=p), rng)
    fast = ch.em_model(reports[:700])
    fast = fast.merge(ch.em_model(reports[700:]))
    generic = BitVectorChannel._em_model(ch, ch.check_reports(reports))
    q = simplex_point(k, seed=5)
    a, la = em_step(fast, q)
    b, lb = em_step(generic, q)
    assert_allclose(a, b, rtol=1e-10)
    assert_allclose(la, lb, rtol=1e-12)
    assert_allclose(la, ch.log_likelihood(reports, q).mean(), rtol=1e-12)
    assert_array_equal(fast.statistics, ch.statistics(reports))


def test_em_monotone_and_in_simplex():
    k = 30
    ch = RAPPORChannel(1.0, k)
    rng = np.random.default_rng(4)
    p = simplex_point(k, interior=False)
    stats = ch.em_model(ch.sample(rng.choice(k, 20000, p=p), rng))
    q = np.full(k, 1 / k)
    prev = -np.inf
    for _ in range(30):
        q, ll = em_step(stats, q)
        assert ll >= prev - 1e-12
        assert np.all(q >= 0) and abs(q.sum() - 1) < 1e-12
        prev = ll
    est, *_ = em(stats, np.full(k, 1 / k), tol=1e-9, max_iter=5000, accelerate=True)
    assert np.abs(est - p).sum() < 0.4


def test_pickle_keeps_theta():
    ch = RAPPORChannel(1.0, 5, theta=0.3)
    again = pickle.loads(pickle.dumps(ch))
    assert again == ch and again.theta == ch.theta
    assert ch != RAPPORChannel(1.0, 5)


@pytest.mark.parametrize(
    "ch",
    [RAPPORChannel(1.0, 20), UtilityOptimizedRAPPORChannel(1.0, 40, list(range(20)))],
    ids=["rappor-k20", "urap-k40-20-sensitive"],
)
def test_packed_model_gradient_and_adjoint(ch):
    # More than 16 free bits: the model keeps the reports bit-packed (with pinned counts for
    # uRAP). Its gradient is the mean of L_i / (L_i . p) over the dense likelihood rows, the EM
    # step is p * gradient, and adjoint is the transpose of forward.
    rng = np.random.default_rng(12)
    reports = ch.sample(rng.integers(0, ch.n_inputs, 400), rng)
    model = ch.em_model(reports)
    assert model.packed is not None and model.hist is None
    p = simplex_point(ch.n_inputs)
    L = ch.likelihood(reports)
    t = L @ p
    assert_allclose(model.gradient(p), (L / t[:, None]).mean(axis=0), rtol=1e-9)
    assert_allclose(model.log_likelihood(p), np.mean(np.log(t)), rtol=1e-10)
    assert_allclose(em_step(model, p)[0], p * model.gradient(p), rtol=1e-9)
    v = rng.standard_normal(model.weights.shape[0])
    assert_allclose(np.dot(model.forward(p), v), np.dot(p, model.adjoint(v)), rtol=1e-9)


def test_models_of_different_channels_do_not_merge():
    rng = np.random.default_rng(13)
    a = RAPPORChannel(1.0, 5)
    reports = a.sample(rng.integers(0, 5, 50), rng)
    with pytest.raises(ValueError, match=r"cannot merge .*RAPPORChannel.*different mechanisms"):
        a.em_model(reports).merge(RAPPORChannel(2.0, 5).em_model(reports))

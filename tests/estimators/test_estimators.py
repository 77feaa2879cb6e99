"""Empirical, projected and EM estimators through the channel interface (k-RR channels)."""

import math
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import ConvergenceWarning

from skldp import EMEstimator, EmpiricalEstimator, ProjectedEstimator, RandomizedResponse
from skldp._reports import Reports, ReportSpec
from skldp.channels import LikelihoodModel, RandomizedResponseChannel
from skldp.projection import project_simplex
from tests.conftest import simplex_point

ESTIMATORS = [EmpiricalEstimator, ProjectedEstimator, EMEstimator]


def _reports(channel, p, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.choice(channel.n_inputs, size=n, p=p)
    return Reports(
        channel.sample(x, np.random.default_rng(seed + 1))[:, None], [ReportSpec(channel)]
    )


def test_empirical_equals_channel_inversion_of_counts():
    ch = RandomizedResponseChannel(1.0, 6)
    R = _reports(ch, simplex_point(6), 5000, 0)
    est = EmpiricalEstimator().fit(R)
    counts = np.bincount(np.asarray(R)[:, 0], minlength=6)
    e = math.exp(1.0)
    assert_allclose(est.distribution_, ((6 - 1 + e) * counts / 5000 - 1) / (e - 1), rtol=1e-12)
    assert est.distribution_.sum() == pytest.approx(1.0, abs=1e-12)
    assert est.n_reports_ == 5000
    assert_array_equal(est.categories_, np.arange(6))


def test_empirical_std_is_exact_variance_at_plug_in():
    ch = RandomizedResponseChannel(0.5, 5)
    R = _reports(ch, simplex_point(5), 3000, 1)
    est = EmpiricalEstimator().fit(R)
    plug = project_simplex(est.distribution_)
    assert_allclose(est.distribution_std_, np.sqrt(ch.variance(plug, 3000)), rtol=1e-12)
    # the normal plug-in interval (the default before issue 18 made it 'wilson'), now clipped
    # to [0, 1]
    lo, hi = est.confidence_interval(0.05, method="normal")
    half = 1.959963984540054 * est.distribution_std_
    assert_allclose(lo, np.clip(est.distribution_ - half, 0, 1), rtol=1e-9)
    assert_allclose(hi, np.clip(est.distribution_ + half, 0, 1), rtol=1e-9)


@pytest.mark.parametrize("k, eps", [(6, 1.0), (20, 2.0)])
def test_l2_risk_of_krr_matches_closed_form(k, eps, seed):
    # Prop. 3 of Kairouz et al. (2016):
    # E||p_hat - p||^2 = (1 - sum p^2 + (k-1)(k + 2(e-1))/(e-1)^2) / n.
    # The tolerance is 4 standard errors of the Monte Carlo mean, from the exact covariance of
    # p_hat (Sigma) with the Gaussian approximation Var(||p_hat - p||^2) = 2 tr(Sigma^2).
    p = simplex_point(k, seed=3)
    n, trials = 2000, 300
    rr = RandomizedResponse(epsilon=eps, categories=list(range(k)), random_state=seed).fit([0, 1])
    ch = rr.channel_
    rng = np.random.default_rng(seed + 1)  # data and noise from unrelated streams
    x = rng.choice(k, size=(trials, n), p=p)
    reports = rr.transform(x.reshape(-1))
    losses = np.array(
        [
            np.sum((EmpiricalEstimator().fit(reports[t * n : (t + 1) * n]).distribution_ - p) ** 2)
            for t in range(trials)
        ]
    )
    e = math.exp(eps)
    risk = (1 - np.sum(p**2) + (k - 1) * (k + 2 * (e - 1)) / (e - 1) ** 2) / n
    m = ch.forward(p)
    sigma = (np.diag(m) - np.outer(m, m)) / (n * ch._a**2)
    tol = 4 * np.sqrt(2 * np.trace(sigma @ sigma) / trials)
    assert abs(losses.mean() - risk) < tol
    # A planted wrong channel (epsilon off by 30%) is caught by the same tolerance.
    e_wrong = math.exp(1.3 * eps)
    wrong = (1 - np.sum(p**2) + (k - 1) * (k + 2 * (e_wrong - 1)) / (e_wrong - 1) ** 2) / n
    assert abs(losses.mean() - wrong) > tol


def test_reference_risk_values_of_the_spec():
    # kairouz2016 spec claim 9: k=6, eps=1, n=2000, p=(.5,.2,.1,.1,.05,.05) -> 0.0083328;
    # k=8, eps=2, n=1000, uniform -> 0.0044381.
    for k, eps, n, p, ref in [
        (6, 1.0, 2000, np.array([0.5, 0.2, 0.1, 0.1, 0.05, 0.05]), 0.0083328),
        (8, 2.0, 1000, np.full(8, 1 / 8), 0.0044381),
    ]:
        ch = RandomizedResponseChannel(eps, k)
        assert ch.variance(p, n).sum() == pytest.approx(ref, abs=5e-8)


def test_em_fixed_point_is_empirical_inside_simplex():
    ch = RandomizedResponseChannel(2.0, 5)
    R = _reports(ch, np.array([0.3, 0.25, 0.2, 0.15, 0.1]), 50000, 2)
    emp = EmpiricalEstimator().fit(R).distribution_
    assert np.all(emp > 0)
    em = EMEstimator(tol=1e-13).fit(R)
    assert em.converged_
    assert_allclose(em.distribution_, emp, atol=1e-9)


@pytest.mark.parametrize("accelerate", [False, True])
def test_em_log_likelihood_never_decreases_and_stays_in_simplex(accelerate):
    ch = RandomizedResponseChannel(0.5, 30)
    p = np.r_[np.full(5, 0.18), np.full(25, 0.1 / 25)]
    R = _reports(ch, p, 3000, 3)
    em = EMEstimator(accelerate=accelerate, tol=1e-9, max_iter=5000).fit(R)
    ll = np.asarray(em.log_likelihoods_)
    assert np.all(np.diff(ll) >= -1e-13)
    assert np.all(em.distribution_ >= 0)
    assert em.distribution_.sum() == pytest.approx(1.0, abs=1e-12)
    # Converged, its likelihood is at least that of the projected and clipped estimates.
    mle = EMEstimator(tol=1e-13).fit(R)
    for method in ("simplex", "clip", "norm-sub"):
        proj = ProjectedEstimator(method=method).fit(R)
        assert mle.score(R) >= proj.score(R) - 1e-12


def test_em_acceleration_reaches_the_same_maximum():
    ch = RandomizedResponseChannel(1.0, 50)
    R = _reports(ch, simplex_point(50, interior=False), 5000, 4)
    # Both from uniform: the default start is k-RR's closed-form maximizer, which would hide
    # what acceleration does.
    slow = EMEstimator(init="uniform", accelerate=False, tol=1e-12, max_iter=200000).fit(R)
    fast = EMEstimator(init="uniform", accelerate=True, tol=1e-12).fit(R)
    assert fast.n_iter_ < slow.n_iter_
    assert abs(fast.log_likelihood_ - slow.log_likelihood_) < 1e-9


def test_em_warns_when_not_converged():
    ch = RandomizedResponseChannel(1.0, 10)
    R = _reports(ch, simplex_point(10), 1000, 5)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        em = EMEstimator(init="uniform", max_iter=1).fit(R)
    assert not em.converged_ and em.n_iter_ == 1


def test_em_default_start_falls_back_to_uniform_without_an_empirical_estimate():
    from skldp.channels import BinaryRandomizedResponseChannel

    # epsilon_01 = 0: both inputs give the same output distribution, so the empirical
    # estimate does not exist; the likelihood is flat and EM stays at its uniform start.
    ch = BinaryRandomizedResponseChannel(0.0, 1.0)
    with pytest.raises(ValueError, match="nothing about the distribution"):
        EmpiricalEstimator().fit(_reports(ch, [0.3, 0.7], 500, 2))
    est = EMEstimator().fit(_reports(ch, [0.3, 0.7], 500, 2))
    assert_allclose(est.distribution_, [0.5, 0.5], atol=1e-15)
    assert est.converged_


def test_em_starts_at_the_closed_form_maximizer_where_the_channel_has_one():
    # k-RR at k = n, Zipf input: the maximizer lies on a far face of the simplex (most entries
    # zero). From the projected empirical start EM needed 310 iterations here at k = n = 10**5;
    # from the closed form (Kairouz et al. 2016, Supp. F.1) it stops after one step, and the
    # uniform start reaches the same likelihood.
    k = 5000
    ch = RandomizedResponseChannel(4.0, k)
    p = 1.0 / np.arange(1, k + 1) ** 1.1
    R = _reports(ch, p / p.sum(), k, 11)
    closed = ch.maximum_likelihood(ch.statistics(R))
    assert (closed == 0).sum() > k // 2
    em = EMEstimator().fit(R)
    assert em.n_iter_ <= 2 and em.converged_
    assert_allclose(em.distribution_, closed, rtol=0, atol=1e-12)  # one EM step: rounding only
    slow = EMEstimator(init="uniform", tol=1e-12).fit(R)
    assert slow.n_iter_ > em.n_iter_
    assert abs(slow.log_likelihood_ - em.log_likelihood_) < 1e-9
    assert np.abs(slow.distribution_ - closed).sum() < 1e-6
    # Channels without a closed form do not declare one, and EM starts from the empirical
    # estimate.
    from skldp.channels import ClosedFormMaximumLikelihood, HadamardResponseChannel

    assert isinstance(ch, ClosedFormMaximumLikelihood)
    assert not isinstance(HadamardResponseChannel(1.0, 8), ClosedFormMaximumLikelihood)


def test_em_init_options():
    ch = RandomizedResponseChannel(1.0, 4)
    R = _reports(ch, simplex_point(4), 2000, 6)
    a = EMEstimator(init="uniform", tol=1e-12).fit(R).distribution_
    b = EMEstimator(init=[0.1, 0.2, 0.3, 0.4], tol=1e-12).fit(R).distribution_
    c = EMEstimator(tol=1e-12).fit(R).distribution_
    assert_allclose(a, c, atol=1e-8)
    assert_allclose(b, c, atol=1e-8)
    with pytest.raises(ValueError, match="init"):
        EMEstimator(init=[1, 0, 0, 0]).fit(R)
    with pytest.raises(ValueError, match="init"):
        EMEstimator(init="bogus").fit(R)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_partial_fit_adds_up_to_fit(Estimator):
    ch = RandomizedResponseChannel(1.0, 8)
    R = _reports(ch, simplex_point(8), 3001, 7)
    whole = Estimator().fit(R)
    parts = Estimator()
    for chunk in np.array_split(np.arange(3001), 5):
        parts.partial_fit(R[chunk])
    assert parts.n_reports_ == 3001
    stats = [s._stats[0] for s in (parts, whole)]
    stats = [s.statistics if isinstance(s, LikelihoodModel) else s for s in stats]
    assert_array_equal(*stats)
    assert_allclose(parts.distribution_, whole.distribution_, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_predict_proba_score_and_predict(Estimator):
    ch = RandomizedResponseChannel(1.5, 4)
    R = _reports(ch, simplex_point(4), 4000, 8)
    est = Estimator().fit(R)
    p = est._model_distribution(est.distribution_)
    Q = ch.to_dense()
    y = np.asarray(R)[:20, 0]
    proba = est.predict_proba(R[:20])
    assert_allclose(proba, (Q[:, y].T * p) / (Q[:, y].T @ p)[:, None], rtol=1e-12)
    assert_array_equal(est.predict(R[:20]), np.argmax(proba, axis=1))
    assert_allclose(est.score_samples(R[:20]), np.log(Q[:, y].T @ p), rtol=1e-12)
    assert est.score(R) == pytest.approx(np.mean(np.log((Q.T @ p)[np.asarray(R)[:, 0]])))


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_zero_reports_are_an_error(Estimator):
    ch = RandomizedResponseChannel(1.0, 3)
    with pytest.raises(ValueError, match="zero reports"):
        Estimator(channel=ch).fit(np.zeros((0, 1), dtype=int))


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_wrong_shape_and_range_are_errors(Estimator):
    ch = RandomizedResponseChannel(1.0, 3)
    with pytest.raises(ValueError, match="columns"):
        Estimator(channel=ch).fit(np.zeros((5, 2), dtype=int))
    with pytest.raises(ValueError, match="different mechanism"):
        Estimator(channel=ch).fit(np.array([[0], [3]]))
    with pytest.raises(TypeError, match="channel must be"):
        Estimator(channel="krr").fit(np.array([[0], [1]]))


def test_projected_methods():
    ch = RandomizedResponseChannel(0.3, 10)
    R = _reports(ch, simplex_point(10, interior=False), 300, 9)
    raw = EmpiricalEstimator().fit(R).distribution_
    assert raw.min() < 0
    for method in ("simplex", "clip", "norm-sub"):
        est = ProjectedEstimator(method=method).fit(R)
        assert np.all(est.distribution_ >= 0)
        assert est.distribution_.sum() == pytest.approx(1.0, abs=1e-12)
        assert_allclose(est.unbiased_distribution_, raw)
    with pytest.raises(ValueError, match="method must be one of"):
        ProjectedEstimator(method="nope").fit(R)


def test_estimators_do_not_warn_on_clean_input():
    ch = RandomizedResponseChannel(1.0, 3)
    R = _reports(ch, simplex_point(3), 100, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for Estimator in ESTIMATORS:
            Estimator().fit(R)


@pytest.mark.parametrize("shape", ["uniform", "zipf", "sparse"])
def test_em_meets_the_optimality_conditions(shape):
    # At the maximum over the simplex, g = Q (N / Q^T p) / n equals 1 on the support and is at
    # most 1 off it (KKT). With k = 300, eps = 1, n = 20000 most entries of the MLE are zero.
    k, n = 300, 20000
    p = {
        "uniform": np.full(k, 1 / k),
        "zipf": np.arange(1, k + 1) ** -1.1 / np.sum(np.arange(1, k + 1) ** -1.1),
        "sparse": np.r_[np.full(10, 0.1), np.zeros(k - 10)],
    }[shape]
    ch = RandomizedResponseChannel(1.0, k)
    R = _reports(ch, p, n, 11)
    em = EMEstimator(tol=1e-12).fit(R)
    assert em.converged_
    stats = np.bincount(np.asarray(R)[:, 0], minlength=k).astype(float)
    q = em.distribution_
    g = ch.adjoint(stats / ch.forward(q)) / n
    assert np.all(np.abs(g[q > 1e-9] - 1) < 1e-6)
    assert np.all(g[q == 0] <= 1 + 1e-6)

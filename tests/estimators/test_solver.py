"""The maximum-likelihood solver: certified gap, agreement with long-run EM, monotone, zeros."""

import math
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.exceptions import ConvergenceWarning

from skldp import EMEstimator, RandomizedResponse
from skldp.channels import (
    MultinomialModel,
    PackedBitReports,
    RandomizedResponseChannel,
    RAPPORChannel,
)
from skldp.estimators._em import certified_gap, em, maximize_likelihood
from tests.conftest import hessian_diagonal, simplex_point
from tests.registry import MECHANISMS, domain, fitted, instance_id


def _gradient(model, p):
    """The EM multipliers and the mean log-likelihood at p."""
    return model.gradient(p), model.log_likelihood(p)


def _gradient_of(channel, counts, p):
    return _gradient(MultinomialModel(channel, counts), p)


def _monotone(history):
    """Non-decreasing up to the rounding of the log-likelihood (the solver allows 8 ulp)."""
    h = np.asarray(history)
    return bool(np.all(np.diff(h) >= -10 * np.finfo(float).eps * np.abs(h[1:]) - 1e-300))


def _family_problem(privatizer, n=1500, seed=0):
    """(channel, EM statistics) of n reports of a registry mechanism; open alphabets restricted."""
    priv = fitted(privatizer, random_state=seed)
    cats = domain(privatizer)
    rng = np.random.default_rng(seed)
    x = rng.choice(len(cats), size=n, p=simplex_point(len(cats), seed=seed))
    reports = priv.transform([[cats[i]] for i in x])
    channel = priv.channel_
    if hasattr(channel, "restrict"):  # open alphabet: the candidates are the domain
        channel = channel.restrict(np.asarray(cats, dtype=object))
    return channel, channel.em_model(np.asarray(reports))


@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
def test_solver_agrees_with_long_run_em_on_every_family(privatizer):
    channel, model = _family_problem(privatizer)
    k = channel.n_inputs
    p0 = np.full(k, 1.0 / k)
    p, _, converged, history, gap = em(model, p0, tol=1e-12, max_iter=2000, accelerate=True)
    assert converged and gap <= 1e-12
    assert _monotone(history)  # up to the rounding of the sums
    assert np.all(p >= 0) and p.sum() == pytest.approx(1.0, abs=1e-12)
    *_, em_history, em_gap = em(model, p0, tol=1e-12, max_iter=30000, accelerate=False)
    assert _monotone(em_history)
    # EM's own certificate says how far below the optimum it is.
    # The certificate: EM cannot beat the solver by more than the solver's gap.
    assert history[-1] >= em_history[-1] - gap - 1e-14
    assert history[-1] - em_history[-1] <= em_gap + 1e-14
    if em_gap <= 1e-9:
        assert abs(history[-1] - em_history[-1]) <= 1e-9


@pytest.mark.parametrize("privatizer", MECHANISMS[:9] + MECHANISMS[11:], ids=instance_id)
def test_certified_gap_bounds_the_true_gap(privatizer):
    channel, model = _family_problem(privatizer, n=800, seed=3)
    k = channel.n_inputs
    *_, history, gap = em(model, np.full(k, 1.0 / k), tol=1e-14, max_iter=5000, accelerate=True)
    best = history[-1]
    # Along a plain EM path, each iterate's certificate bounds its distance to the optimum.
    p = np.full(k, 1.0 / k)
    for _ in range(40):
        g, ll = _gradient(model, p)
        assert best - ll <= certified_gap(g) + gap + 1e-13
        p = p * g / np.dot(p, g)


def test_certified_gap_is_exact_bound_for_krr_closed_form():
    # k-RR has its maximum-likelihood estimate in closed form: the true gap is known exactly.
    ch = RandomizedResponseChannel(1.0, 6)
    rng = np.random.default_rng(1)
    counts = np.bincount(
        ch.sample(rng.choice(6, 500, p=[0.5, 0.3, 0.2, 0, 0, 0]), rng), minlength=6
    )
    best = ch.maximum_likelihood(counts)
    g_best, ll_best = _gradient(MultinomialModel(ch, counts), best)
    assert certified_gap(g_best) <= 1e-14
    for seed in range(5):
        p = simplex_point(6, seed=seed)
        g, ll = _gradient(MultinomialModel(ch, counts), p)
        assert 0 <= ll_best - ll <= certified_gap(g)
    # The bound is first-order tight near the optimum: within a factor that tends to 1 / 2.
    p = 0.999 * best + 0.001 / 6
    g, ll = _gradient(MultinomialModel(ch, counts), p)
    assert 0 < ll_best - ll <= certified_gap(g) < 1e-2


def test_krr_from_uniform_converges_in_tens_of_iterations_to_the_closed_form():
    k = 10
    ch = RandomizedResponseChannel(1.0, k)
    its = []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        x = np.minimum(rng.geometric(0.3, size=2000) - 1, k - 1)
        counts = np.bincount(ch.sample(x, rng), minlength=k)
        p, n_iter, converged, _, gap = em(
            MultinomialModel(ch, counts),
            np.full(k, 1 / k),
            tol=1e-10,
            max_iter=100,
            accelerate=True,
        )
        assert converged and gap <= 1e-10
        assert np.abs(p - ch.maximum_likelihood(counts)).sum() < 1e-6
        its.append(n_iter)
    assert max(its) <= 100


def test_exact_zeros_stay_zero():
    ch = RAPPORChannel(1.0, 8)
    rng = np.random.default_rng(2)
    model = ch.em_model(ch.sample(rng.choice(8, 3000, p=simplex_point(8, seed=1)), rng))
    p0 = np.array([0.2, 0.2, 0.0, 0.2, 0.2, 0.0, 0.1, 0.1])
    # Plain EM never moves an exact zero.
    p, *_ = em(model, p0, tol=0.0, max_iter=50, accelerate=False)
    assert np.all(p[p0 == 0] == 0)
    # SQUAREM moves one only by revival, when its multiplier says the likelihood wants it.
    p, *_, gap = em(model, p0, tol=1e-12, max_iter=500, accelerate=True)
    g, _ = _gradient(model, p)
    assert gap <= 1e-12
    assert np.all((p[p0 == 0] > 0) | (g[p0 == 0] <= 1.0 + 1e-12))


def test_zero_that_should_be_positive_is_revived():
    ch = RandomizedResponseChannel(2.0, 4)
    rng = np.random.default_rng(0)
    counts = np.bincount(ch.sample(rng.choice(4, 5000, p=[0.4, 0.3, 0.2, 0.1]), rng), minlength=4)
    p0 = np.array([0.5, 0.3, 0.2, 0.0])
    g0, _ = _gradient(MultinomialModel(ch, counts), p0)
    assert g0[3] > 1.0  # the likelihood wants mass on input 3
    p, _, converged, history, gap = em(
        MultinomialModel(ch, counts), p0, tol=1e-12, max_iter=500, accelerate=True
    )
    assert converged and gap <= 1e-12 and p[3] > 0
    assert _monotone(history)
    assert_allclose(p, ch.maximum_likelihood(counts), atol=1e-6)


def test_closed_form_zeros_kept_by_estimator():
    rr = RandomizedResponse(epsilon=1.0, categories=list(range(6)), random_state=0)
    R = rr.fit_transform([0] * 300 + [1] * 100 + [2] * 20)
    closed = rr.channel_.maximum_likelihood(np.bincount(np.asarray(R)[:, 0], minlength=6))
    assert np.any(closed == 0)
    est = EMEstimator().fit(R)
    assert est.converged_ and est.n_iter_ == 0 and est.gap_ <= 1e-10
    assert np.all(est.distribution_[closed == 0] == 0)


def test_gap_attribute_verbose_and_warning(capsys):
    rr = RandomizedResponse(epsilon=0.5, categories=list(range(5)), random_state=0)
    R = rr.fit_transform(np.arange(1000) % 5)
    est = EMEstimator(init="uniform", verbose=2).fit(R)
    out = capsys.readouterr().out
    assert "Iteration 1: log-likelihood per report" in out and "gap" in out
    assert est.gap_ <= est.tol
    g, ll = _gradient_of(
        rr.channel_, np.bincount(np.asarray(R)[:, 0], minlength=5), est.distribution_
    )
    assert est.gap_ == pytest.approx(certified_gap(g), abs=1e-15)
    assert est.log_likelihood_ == pytest.approx(ll, abs=1e-14)
    with pytest.warns(ConvergenceWarning, match="certified log-likelihood gap per report"):
        EMEstimator(init="uniform", max_iter=1, tol=1e-14, accelerate=False).fit(R)
    with pytest.raises(ValueError, match="verbose"):
        EMEstimator(verbose=-1).fit(R)


def test_maximize_likelihood_counts_iterations_and_stops_at_start():
    ch = RandomizedResponseChannel(1.0, 3)
    counts = np.array([50, 30, 20])
    best = ch.maximum_likelihood(counts)
    _, n_iter, converged, history, gap = maximize_likelihood(
        lambda q: _gradient(MultinomialModel(ch, counts), q), best, tol=1e-12, max_iter=10
    )
    assert n_iter == 0 and converged and len(history) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, n_iter, converged, history, gap = maximize_likelihood(
            lambda q: _gradient(MultinomialModel(ch, counts), q),
            np.full(3, 1 / 3),
            tol=0.0,
            max_iter=3,
        )
    assert n_iter == 3 and not converged and len(history) == 4
    assert math.isfinite(gap) and gap >= 0


@pytest.mark.parametrize("k", [8, 40])
def test_hessian_diagonal_of_unary_and_generic_models(k):
    from skldp.channels import BitVectorModel

    ch = RAPPORChannel(1.0, k)
    rng = np.random.default_rng(k)
    reports = ch.sample(rng.integers(0, k, 2000), rng)
    model = ch.em_model(reports)
    generic = BitVectorModel(ch, PackedBitReports.from_bits(ch.check_reports(reports)))
    p = simplex_point(k, seed=2)
    dense = np.array([model.hessian_product(p, e) @ e for e in np.eye(k)])
    assert_allclose(hessian_diagonal(model, p), dense, rtol=1e-12)
    assert_allclose(hessian_diagonal(generic, p), dense, rtol=1e-12)

"""``channel=`` with a fitted privatizer survives ``clone`` (issue 14 item 2).

``clone`` clones every parameter with ``get_params``, so before the fix a fitted privatizer
given as ``channel=`` came back unfitted and every fit inside ``GridSearchCV`` or
``cross_val_score`` raised ``TypeError ... got RandomizedResponse``.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

import skldp

K, N, EPS = 3, 6000, 1.0
P_TRUE = np.array([0.5, 0.3, 0.2])


@pytest.fixture(scope="module")
def fitted_rr():
    return skldp.RandomizedResponse(epsilon=EPS, categories=[0, 1, 2], random_state=7).fit(
        np.arange(K)
    )


@pytest.fixture(scope="module")
def plain_reports(fitted_rr):
    x = np.random.default_rng(12345).choice(K, size=N, p=P_TRUE)
    reports = np.asarray(fitted_rr.transform(x)).copy()
    assert type(reports) is np.ndarray  # plain: carries no channel
    return reports


def _sources(rr):
    return {"privatizer": rr, "channel": rr.channel_, "list": [rr]}


def _tolerance(rr, n):
    # five standard deviations of the unbiased estimate from n reports (exact variance)
    return 5 * np.sqrt(rr.channel_.variance(P_TRUE, n))


@pytest.mark.parametrize("source", ["privatizer", "channel", "list"])
@pytest.mark.parametrize("Estimator", [skldp.ProjectedEstimator, skldp.EMEstimator])
def test_clone_keeps_a_usable_channel(fitted_rr, plain_reports, source, Estimator):
    given = _sources(fitted_rr)[source]
    est = clone(Estimator(channel=given)).fit(plain_reports)
    direct = Estimator(channel=given).fit(plain_reports)
    np.testing.assert_allclose(est.distribution_, direct.distribution_, rtol=0, atol=1e-12)
    assert np.all(np.abs(est.distribution_ - P_TRUE) < _tolerance(fitted_rr, N))


def test_clone_copies_the_fitted_privatizer(fitted_rr):
    est = skldp.EMEstimator(channel=fitted_rr)
    new = clone(est)
    assert new.channel is not fitted_rr
    assert new.channel.channel_ == fitted_rr.channel_
    np.testing.assert_array_equal(new.channel.categories_[0], fitted_rr.categories_[0])
    # the privatizer itself still clones unfitted, as scikit-learn requires
    assert not hasattr(clone(fitted_rr), "channel_")


@pytest.mark.parametrize("source", ["privatizer", "channel"])
def test_cross_val_score_on_plain_reports(fitted_rr, plain_reports, source):
    est = skldp.EMEstimator(channel=_sources(fitted_rr)[source])
    scores = cross_val_score(est, plain_reports, cv=KFold(3), error_score="raise")
    # the mean log-likelihood of k-RR reports under an estimate near the truth: the entropy
    # of the report distribution Q p, within a loose statistical band
    q = fitted_rr.channel_.forward(P_TRUE)
    expected = float(np.sum(q * np.log(q)))
    assert scores.shape == (3,)
    np.testing.assert_allclose(scores, expected, atol=0.03)


@pytest.mark.parametrize("source", ["privatizer", "channel"])
def test_grid_search_on_plain_reports(fitted_rr, plain_reports, source):
    est = skldp.ProjectedEstimator(channel=_sources(fitted_rr)[source])
    grid = GridSearchCV(est, {"method": ["simplex", "clip"]}, cv=KFold(3), error_score="raise")
    grid.fit(plain_reports)
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))
    p = grid.best_estimator_.distribution_
    assert np.all(np.abs(p - P_TRUE) < _tolerance(fitted_rr, N))


def test_unfitted_privatizer_is_refused_by_name(plain_reports):
    est = skldp.EMEstimator(channel=skldp.RandomizedResponse(epsilon=EPS, categories=[0, 1, 2]))
    with pytest.raises(TypeError, match="unfitted RandomizedResponse; fit the privatizer"):
        est.fit(plain_reports)

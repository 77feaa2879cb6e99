"""CandidateEstimator: least squares over a candidate dictionary, projection, collisions."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp import CandidateEstimator, HashedRAPPOR, HashedRR, RandomizedResponse
from skldp.channels import HashedRRChannel
from skldp.exceptions import ChannelMismatchError
from skldp.projection import project_simplex

VOCAB = np.array([f"item{i}" for i in range(30)], dtype=object)
P = 0.8 ** np.arange(30)
P /= P.sum()


def _values(n, seed=0):
    return VOCAB[np.random.default_rng(seed).choice(30, n, p=P)]


@pytest.fixture(params=["rr", "rappor"])
def privatizer(request):
    if request.param == "rr":
        return HashedRR(epsilon=3.0, n_buckets=16, n_cohorts=8, random_state=0)
    return HashedRAPPOR(epsilon=3.0, n_bits=32, n_cohorts=8, random_state=0)


def test_estimates_are_accurate_and_in_the_simplex(privatizer):
    reports = privatizer.fit_transform(_values(20000))
    est = CandidateEstimator(candidates=VOCAB).fit(reports)
    assert est.distribution_.min() >= 0 and abs(est.distribution_.sum() - 1) < 1e-12
    assert np.abs(est.distribution_ - P).sum() < 0.2
    assert_array_equal(est.categories_, VOCAB)
    assert est.n_reports_ == 20000 and est.channel_.n_inputs == 30
    assert_allclose(est.distribution_, project_simplex(est.unbiased_distribution_))


def test_least_squares_is_unbiased_with_full_rank(privatizer):
    # Mean of the least-squares estimate over replications is p, within 5 standard errors of
    # the exact variance; and the projected estimate is never farther from p in l2.
    cands = VOCAB[:6]
    p = np.array([0.4, 0.25, 0.15, 0.1, 0.06, 0.04])
    n, reps = 3000, 60
    rng = np.random.default_rng(1)
    ests, proj = [], []
    for r in range(reps):
        x = cands[rng.choice(6, n, p=p)]
        reports = privatizer.set_params(random_state=r).fit_transform(x)
        e = CandidateEstimator(candidates=cands, method="least_squares").fit(reports)
        ests.append(e.distribution_)
        proj.append(project_simplex(e.distribution_))
    ch = e.channel_
    assert np.linalg.matrix_rank(ch.incidence.toarray()) == 6
    se = np.sqrt(ch.variance(p, n) / reps)
    assert np.all(np.abs(np.mean(ests, axis=0) - p) <= 5 * se)
    ests, proj = np.array(ests), np.array(proj)
    assert np.all(np.linalg.norm(proj - p, axis=1) <= np.linalg.norm(ests - p, axis=1) + 1e-12)


@pytest.mark.parametrize("method", ["projected", "least_squares", "em"])
def test_unreported_candidates_get_exact_zeros(method):
    # Few reports over many buckets: candidates whose buckets all stayed empty are exact zeros.
    x = np.array(["a", "b", "c"] * 20, dtype=object)
    reports = HashedRR(epsilon=8.0, n_buckets=256, n_cohorts=2, random_state=2).fit_transform(x)
    cands = np.array(["a", "b", "c"] + [f"absent{i}" for i in range(200)], dtype=object)
    est = CandidateEstimator(candidates=cands, method=method).fit(reports)
    counts = np.bincount(np.asarray(reports)[:, 0], minlength=512)
    ch = est.channel_
    empty = (ch.incidence.T @ counts) == 0
    assert empty.sum() > 100
    assert_array_equal(est.unreported_, cands[empty])
    assert np.all(est.distribution_[empty] == 0.0)
    assert np.all(est.unbiased_distribution_[empty] == 0.0)
    assert np.abs(est.distribution_[:3] - 1 / 3).max() < 0.15


def test_projection_cuts_absent_candidates_at_high_epsilon():
    x = np.array(["a"] * 6000 + ["b"] * 3000 + ["c"] * 1000, dtype=object)
    cands = np.array(["a", "b", "c", "never", "seen", "at", "all"], dtype=object)
    zeros = []
    for seed in range(10):
        reports = HashedRR(epsilon=6.0, n_buckets=64, n_cohorts=8, random_state=seed).fit_transform(
            x
        )
        est = CandidateEstimator(candidates=cands).fit(reports)
        assert est.distribution_[3:].sum() < 0.01
        zeros.append(np.sum(est.distribution_[3:] == 0))
    # An absent candidate's least-squares estimate is centred at zero, so the projection
    # cuts about half of them or more; over 10 runs of 4 absent candidates, at least 12.
    assert sum(zeros) >= 12, zeros


def test_colliding_candidates_are_reported_and_split_evenly():
    # One cohort and two buckets: among several candidates, collisions are certain.
    priv = HashedRR(epsilon=2.0, n_buckets=2, n_cohorts=1, random_state=0)
    reports = priv.fit_transform(_values(2000))
    cands = VOCAB[:5]
    est = CandidateEstimator(candidates=cands, method="least_squares").fit(reports)
    B = priv.channel_.candidate_buckets(cands)[:, 0]
    groups = est.indistinguishable_
    assert sum(len(g) for g in groups) == 5  # all five fall into at most two buckets
    for g in groups:
        idx = [list(cands).index(v) for v in g]
        assert len(set(B[idx])) == 1
        assert_allclose(est.distribution_[idx], est.distribution_[idx[0]])


def test_partial_fit_equals_fit(privatizer):
    reports = privatizer.fit_transform(_values(5000))
    full = CandidateEstimator(candidates=VOCAB).fit(reports)
    part = CandidateEstimator(candidates=VOCAB)
    for chunk in (reports[:1234], reports[1234:4000], reports[4000:]):
        part.partial_fit(chunk)
    assert_allclose(part.distribution_, full.distribution_, rtol=1e-12, atol=1e-15)
    assert part.n_reports_ == 5000


def test_em_maximizes_the_likelihood(privatizer):
    reports = privatizer.fit_transform(_values(3000))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        em = CandidateEstimator(candidates=VOCAB[:12], method="em", tol=1e-9).fit(reports)
    proj = CandidateEstimator(candidates=VOCAB[:12]).fit(reports)
    assert em.distribution_.min() >= 0 and abs(em.distribution_.sum() - 1) < 1e-9

    def ll(e, p):
        return e.channel_.log_likelihood(np.asarray(reports), p).sum()

    p_proj = np.maximum(proj.distribution_, 1e-300)
    assert ll(em, em.distribution_) >= ll(em, p_proj / p_proj.sum()) - 1e-6
    assert em.score(reports) == pytest.approx(ll(em, em.distribution_) / 3000, rel=1e-9)


def test_plain_arrays_with_the_privatizer_as_channel(privatizer):
    reports = privatizer.fit_transform(_values(2000))
    a = CandidateEstimator(candidates=VOCAB).fit(reports)
    b = CandidateEstimator(candidates=VOCAB, channel=privatizer).fit(np.asarray(reports))
    c = CandidateEstimator(candidates=VOCAB, channel=privatizer.channel_).fit(np.asarray(reports))
    assert_allclose(a.distribution_, b.distribution_)
    assert_allclose(a.distribution_, c.distribution_)


def test_predict_proba_over_candidates():
    priv = HashedRR(epsilon=5.0, n_buckets=32, n_cohorts=4, random_state=0)
    reports = priv.fit_transform(_values(4000))
    est = CandidateEstimator(candidates=VOCAB).fit(reports)
    proba = est.predict_proba(reports[:10])
    assert proba.shape == (10, 30)
    assert_allclose(proba.sum(axis=1), 1.0)
    assert set(est.predict(reports[:10])) <= set(VOCAB)


def test_candidates_required_for_open_reports():
    reports = HashedRR(epsilon=1.0, random_state=0).fit_transform(["a", "b"])
    with pytest.raises(ValueError, match="candidates="):
        CandidateEstimator().fit(reports)


def test_candidates_refused_for_closed_reports():
    reports = RandomizedResponse(epsilon=1.0, categories=["a", "b"], random_state=0).fit_transform(
        ["a", "b"]
    )
    with pytest.raises(ValueError, match="leave candidates=None"):
        CandidateEstimator(candidates=["a", "b"]).fit(reports)
    assert CandidateEstimator().fit(reports).distribution_.shape == (2,)


@pytest.mark.parametrize(
    "cands, match",
    [
        (["a", "a"], "candidates contain duplicates"),
        (np.array([1.0, "1.0"], dtype=object), "distinct as text"),
        (["a", None], "missing"),
        ("abc", "list"),
    ],
)
def test_bad_candidates(cands, match):
    reports = HashedRR(epsilon=1.0, random_state=0).fit_transform(["a", "b"])
    with pytest.raises((ValueError, TypeError), match=match):
        CandidateEstimator(candidates=cands).fit(reports)


@pytest.mark.parametrize(
    "params, match",
    [({"method": "lasso"}, "method"), ({"tol": -1}, "tol"), ({"max_iter": 0}, "max_iter")],
)
def test_bad_parameters(params, match):
    reports = HashedRR(epsilon=1.0, random_state=0).fit_transform(["a", "b"])
    with pytest.raises((ValueError, TypeError), match=match):
        CandidateEstimator(candidates=["a"], **params).fit(reports)


def test_mixing_mechanisms_in_partial_fit_is_refused():
    a = HashedRR(epsilon=1.0, n_buckets=4, random_state=0).fit_transform(["a", "b"])
    b = HashedRR(epsilon=2.0, n_buckets=4, random_state=0).fit_transform(["a", "b"])
    est = CandidateEstimator(candidates=["a", "b"]).partial_fit(a)
    with pytest.raises(ChannelMismatchError):
        est.partial_fit(b)


def test_restricted_channel_cached_and_refreshed():
    reports = HashedRR(epsilon=1.0, random_state=0).fit_transform(["a", "b", "c"])
    est = CandidateEstimator(candidates=["a", "b"]).fit(reports)
    first = est.channel_
    est.partial_fit(reports)
    assert est.channel_ is first
    est.set_params(candidates=["a", "b", "c"]).fit(reports)
    assert est.channel_.n_inputs == 3
    assert est.channel_ == HashedRRChannel(1.0, 16, 8).restrict(["a", "b", "c"])


def test_grid_search_over_the_number_of_buckets():
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline

    from skldp.metrics import make_distribution_scorer

    X = _values(4000, seed=5).reshape(-1, 1)
    pipe = Pipeline(
        [
            ("privatize", HashedRR(epsilon=3.0, n_cohorts=8, random_state=0)),
            ("estimate", CandidateEstimator(candidates=VOCAB)),
        ]
    )
    grid = {"privatize__n_buckets": [2, 32]}
    gs = GridSearchCV(pipe, grid, cv=2, scoring=make_distribution_scorer("l1")).fit(X)
    assert gs.best_params_ == {"privatize__n_buckets": 32}


def test_more_candidates_than_independent_statistics_warns():
    # k-RR with C = 2 cohorts of k = 4 buckets gives at most C (k - 1) + 1 = 7 independent
    # bucket counts; 8 reported candidates cannot all be identified.
    x = np.array([f"v{i}" for i in range(8)] * 200, dtype=object)
    reports = HashedRR(epsilon=4.0, n_buckets=4, n_cohorts=2, random_state=0).fit_transform(x)
    with pytest.warns(UserWarning, match="at most 7 independent statistics"):
        CandidateEstimator(candidates=[f"v{i}" for i in range(8)]).fit(reports)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        CandidateEstimator(candidates=[f"v{i}" for i in range(7)]).fit(reports)


@pytest.mark.parametrize("method", ["projected", "em"])
def test_unreported_candidates_stay_zero_when_mass_lies_outside_the_dictionary(method):
    # Regression: 70% of the values lie outside the dictionary, so the reported candidates'
    # least-squares values sum to well below one. Projecting over all candidates shifted every
    # entry up by the same offset and gave the unreported candidates positive mass; the
    # projection must run over the reported candidates only.
    inside = np.array(["a", "b", "c"] * 6, dtype=object)  # 18 of 60 values, 30%
    outside = np.array([f"elsewhere{i}" for i in range(42)], dtype=object)
    x = np.random.default_rng(0).permutation(np.concatenate([inside, outside]))
    reports = HashedRR(epsilon=8.0, n_buckets=256, n_cohorts=2, random_state=0).fit_transform(x)
    cands = np.array(["a", "b", "c"] + [f"absent{i}" for i in range(200)], dtype=object)
    est = CandidateEstimator(candidates=cands, method=method).fit(reports)
    unreported = np.isin(cands, est.unreported_)
    assert unreported.sum() > 100
    # The trigger: the reported least-squares values sum below one.
    assert est.unbiased_distribution_[~unreported].sum() < 0.9
    assert np.all(est.distribution_[unreported] == 0.0)
    assert abs(est.distribution_.sum() - 1.0) < 1e-12 and est.distribution_.min() >= 0.0
    if method == "projected":
        assert_allclose(
            est.distribution_[~unreported],
            project_simplex(est.unbiased_distribution_[~unreported]),
            rtol=1e-12,
        )


@pytest.mark.parametrize("method", ["projected", "em"])
def test_no_reported_candidate_gives_uniform_with_a_warning(method):
    # One cohort of 256 buckets and two reports of a value outside the dictionary: neither
    # candidate's bucket is hit, so nothing is known about them.
    reports = HashedRR(epsilon=8.0, n_buckets=256, n_cohorts=1, random_state=0).fit_transform(
        np.array(["zz", "zz"], dtype=object)
    )
    with pytest.warns(UserWarning, match="no candidate's bucket received a report"):
        est = CandidateEstimator(candidates=["a", "b"], method=method).fit(reports)
    assert_array_equal(est.unreported_, ["a", "b"])
    assert_array_equal(est.distribution_, [0.5, 0.5])

"""Every warning skldp issues through a public call points at the caller's line, not into skldp.

``pytest.warns`` records the file and line a warning is attributed to; each test checks that
they are this file and the line of the public call (see ``skldp._warnings``).
"""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from skldp import CandidateEstimator, EMEstimator, HashedRR, PersonalizedULDP, RandomizedResponse
from skldp._warnings import external_stacklevel, warn
from skldp.exceptions import PrivacyLeakWarning


def _here():
    """The line number of the caller."""
    return inspect.currentframe().f_back.f_lineno


def _assert_points_here(record, category, line):
    hits = [w for w in record if issubclass(w.category, category)]
    assert hits, f"no {category.__name__} was issued"
    for w in hits:
        assert w.filename == __file__, f"{category.__name__} attributed to {w.filename}"
        assert w.lineno == line


def test_inferred_domain_fit():
    rr = RandomizedResponse()
    line = _here() + 2
    with pytest.warns(PrivacyLeakWarning) as record:
        rr.fit(["a", "b", "a"])
    _assert_points_here(record, PrivacyLeakWarning, line)


def test_inferred_domain_fit_transform():
    line = _here() + 2
    with pytest.warns(PrivacyLeakWarning) as record:
        RandomizedResponse(random_state=0).fit_transform(["a", "b", "a"])
    _assert_points_here(record, PrivacyLeakWarning, line)


def test_inferred_domain_of_a_privatizer_with_its_own_fit():
    pum = PersonalizedULDP(tags=["home"])
    line = _here() + 2
    with pytest.warns(PrivacyLeakWarning) as record:
        pum.fit([["a", None], ["b", "home"]])
    _assert_points_here(record, PrivacyLeakWarning, line)


def _rr_reports():
    rr = RandomizedResponse(epsilon=0.5, categories=list("abcd"), random_state=0)
    return rr.fit_transform(list("aabbbcd") * 30)


def test_em_not_converged_fit_and_partial_fit():
    reports = _rr_reports()
    est = EMEstimator(max_iter=1, init="uniform")
    line = _here() + 2
    with pytest.warns(ConvergenceWarning) as record:
        est.fit(reports)
    _assert_points_here(record, ConvergenceWarning, line)
    # partial_fit only adds statistics: the solve, and its warning, come with the next read
    est.partial_fit(reports)
    line = _here() + 2
    with pytest.warns(ConvergenceWarning) as record:
        est.distribution_  # noqa: B018  reading the attribute is the test
    _assert_points_here(record, ConvergenceWarning, line)


def test_em_not_converged_on_dask_reports():
    da = pytest.importorskip("dask.array")
    reports = da.from_array(_rr_reports(), chunks=50)
    rr = RandomizedResponse(0.5, categories=list("abcd")).fit(["a"])
    est = EMEstimator(max_iter=1, init="uniform", channel=rr)
    line = _here() + 2
    with pytest.warns(ConvergenceWarning) as record:
        est.fit(reports)
    _assert_points_here(record, ConvergenceWarning, line)


def _open_reports(n_buckets=8, n_cohorts=2):
    orr = HashedRR(epsilon=2.0, n_buckets=n_buckets, n_cohorts=n_cohorts, random_state=0)
    return orr, orr.fit_transform(["cat"] * 60 + ["dog"] * 40)


def test_candidate_em_not_converged_and_underdetermined():
    _, reports = _open_reports()
    cands = [f"v{i}" for i in range(40)]
    est = CandidateEstimator(candidates=cands, method="em", max_iter=1)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        line = _here() + 1
        est.fit(reports)
    _assert_points_here(record, ConvergenceWarning, line)
    _assert_points_here([w for w in record if w.category is UserWarning], UserWarning, line)


def test_candidate_no_bucket_reported():
    orr, _ = _open_reports(n_buckets=64, n_cohorts=1)
    cands = ["cat", "dog"]
    H = orr.channel_.restrict(cands).incidence
    empty = int(np.flatnonzero(np.asarray(H.sum(axis=1)).ravel() == 0)[0])
    reports = np.full((5, 1), empty, dtype=np.int64)
    est = CandidateEstimator(candidates=cands, channel=orr)
    line = _here() + 2
    with pytest.warns(UserWarning, match="no candidate's bucket") as record:
        est.fit(reports)
    _assert_points_here(record, UserWarning, line)


def test_channel_variance_too_large_to_form():
    orr, _ = _open_reports(n_buckets=1001, n_cohorts=3)
    channel = orr.channel_.restrict([f"v{i}" for i in range(3001)])
    p = np.full(channel.n_inputs, 1.0 / channel.n_inputs)
    line = _here() + 2
    with pytest.warns(RuntimeWarning, match="not formed above") as record:
        var = channel.variance(p, 100)
    _assert_points_here(record, RuntimeWarning, line)
    assert np.all(np.isnan(var))


def test_the_helper_counts_only_frames_inside_skldp():
    # Called from outside skldp, the caller itself is the first frame outside: level 1.
    assert external_stacklevel() == 1
    line = _here() + 2
    with pytest.warns(UserWarning) as record:
        warn("direct", UserWarning)
    _assert_points_here(record, UserWarning, line)


def test_inferred_domain_in_a_pipeline_points_at_the_users_call():
    from sklearn.pipeline import make_pipeline

    pipe = make_pipeline(RandomizedResponse(random_state=0), EMEstimator())
    line = _here() + 2
    with pytest.warns(PrivacyLeakWarning) as record:
        pipe.fit([["a"], ["b"], ["a"]])
    _assert_points_here(record, PrivacyLeakWarning, line)


def test_seeded_privatizer_restored_from_a_pickle():
    import pickle

    rr = RandomizedResponse(categories=["a", "b"], random_state=0).fit(["a"])
    restored = pickle.loads(pickle.dumps(rr))
    line = _here() + 2
    with pytest.warns(UserWarning, match="restored from a pickle") as record:
        restored.transform(["a", "b"])
    _assert_points_here(record, UserWarning, line)

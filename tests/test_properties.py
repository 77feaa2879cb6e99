"""Property-based tests (hypothesis) over the registry of privatizers and estimators.

* every estimate is a distribution where the estimator promises one;
* the unbiased estimate is exactly unbiased: applied to the exact expected statistics of any
  distribution it returns that distribution, and it is affine in the statistics (so its
  expectation over reports is the estimate at the expected statistics);
* ``partial_fit`` over any chunking of the reports equals ``fit`` on all of them;
* privatizer output aligns with the input rows: same length, pandas index kept, and with a
  huge epsilon each report is most likely under its own row's input.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, reject, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone

from skldp import (
    CandidateEstimator,
    EMEstimator,
    EmpiricalEstimator,
    PersonalizedEstimator,
    PersonalizedULDP,
    ProjectedEstimator,
    SparseEstimator,
)
from skldp.channels import SparseMeasurements, SymbolChannel
from skldp.privacy import LDP, tight_epsilon_matrix
from tests.registry import ESTIMATORS, MECHANISMS, SIMPLEX_ESTIMATORS, instance_id

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,  # the same examples on every run and machine: CI is reproducible
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)

mechanisms = st.sampled_from(MECHANISMS)
budgets = st.floats(min_value=0.05, max_value=8.0)
domain_sizes = st.integers(min_value=2, max_value=12)
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def _build(privatizer, epsilon, k, random_state=0):
    """The privatizer refitted on categories 0..k-1 with every epsilon parameter set."""
    p = clone(privatizer)
    params = p.get_params(deep=False)
    new = {name: epsilon for name in params if name.startswith("epsilon")}
    new["categories"] = list(range(k))
    if "random_state" in params:
        new["random_state"] = random_state
    try:
        p.set_params(**new).fit([[0]])
    except ValueError:
        assume(False)  # the instance's other parameters do not fit a domain of k
    return p


def _simplex_point(rng, k, sparse):
    p = rng.dirichlet(np.full(k, 0.3 if sparse else 1.0))
    if sparse:
        p[rng.random(k) < 0.3] = 0.0
        if p.sum() == 0:
            p[0] = 1.0
        p /= p.sum()
    return p


def _reports(privatizer, p, n, rng):
    x = rng.choice(len(p), size=n, p=p)
    return privatizer.transform(x.reshape(-1, 1))


def _fit_or_skip(estimator, reports):
    try:
        return estimator.fit(reports)
    except (TypeError, NotImplementedError) as exc:
        pytest.skip(f"{instance_id(estimator)} does not estimate these reports: {exc}")


# -- estimates are distributions where promised ----------------------------------------------------
#: The registry's simplex estimators, and the other entry points that promise a distribution:
#: the significance threshold (kept entries, the rest spread; uniform if none is kept), EM
#: started from it, sparse recovery's simplex projection and the candidate estimator's
#: projected least squares (its candidates are the categories of a closed alphabet).
PROMISING = [e for e in ESTIMATORS if isinstance(e, SIMPLEX_ESTIMATORS)] + [
    ProjectedEstimator(method="threshold"),
    EMEstimator(init="threshold"),
    SparseEstimator(sparsity=2),
    CandidateEstimator(),
]


@pytest.mark.parametrize("estimator", PROMISING, ids=instance_id)
@SETTINGS
@given(
    mechanism=mechanisms,
    epsilon=st.floats(min_value=0.01, max_value=30.0),
    k=domain_sizes,
    n=st.integers(min_value=1, max_value=400),
    sparse=st.booleans(),
    seed=seeds,
)
def test_estimate_is_a_distribution(estimator, mechanism, epsilon, k, n, sparse, seed):
    rng = np.random.default_rng(seed)
    privatizer = _build(mechanism, epsilon, k, seed)
    reports = _reports(privatizer, _simplex_point(rng, k, sparse), n, rng)
    est = _fit_or_skip(clone(estimator), reports)
    dist = est.distribution_
    assert dist.shape == (k,)
    assert np.all(np.isfinite(dist))
    assert np.all(dist >= 0)
    assert abs(dist.sum() - 1.0) <= 1e-9


@pytest.mark.parametrize("method", ["em", "threshold"])
@SETTINGS
@given(
    epsilon=st.floats(min_value=0.01, max_value=30.0),
    k=domain_sizes,
    n_tags=st.integers(1, 3),
    base=st.sampled_from(["urr", "urap"]),
    n=st.integers(min_value=1, max_value=300),
    seed=seeds,
)
def test_personalized_estimate_is_a_distribution(method, epsilon, k, n_tags, base, n, seed):
    rng = np.random.default_rng(seed)
    tags = [f"t{j}" for j in range(n_tags)]
    sensitive = list(np.flatnonzero(rng.random(k) < 0.3))
    pum = PersonalizedULDP(
        epsilon=epsilon,
        sensitive=sensitive,
        tags=tags,
        base=base,
        categories=list(range(k)),
        random_state=seed,
    ).fit([[0, None]])
    values = rng.choice(k, size=n, p=_simplex_point(rng, k, False))
    row_tags = np.where(rng.random(n) < 0.3, rng.choice(tags, size=n), None)
    reports = pum.transform(np.column_stack([values, row_tags]).astype(object))
    est = PersonalizedEstimator(method=method).fit(reports)
    for dist, size in ((est.distribution_, k), (est.intermediate_distribution_, k + n_tags)):
        assert dist.shape == (size,)
        assert np.all(np.isfinite(dist)) and np.all(dist >= 0)
        assert abs(dist.sum() - 1.0) <= 1e-9


# -- exact unbiasedness ----------------------------------------------------------------------------
class _DenseChannel(SymbolChannel):
    """Any k x m row-stochastic matrix as a channel, using the library's generic fallbacks.

    Only the linear map and sampling are written here; ``unbiased`` (least squares on the
    structured operator), ``variance``, ``likelihood`` and ``to_dense`` are the base class's.
    """

    def __init__(self, Q):
        self.Q = np.asarray(Q, dtype=float)
        self.n_inputs, self.n_outputs = self.Q.shape

    def _key(self):
        return (self.Q.tobytes(),)

    def guarantee(self):
        return LDP(float(np.max(tight_epsilon_matrix(self.Q))))

    def _sample(self, x, rng):
        cdf = np.cumsum(self.Q[x], axis=1)
        return np.minimum((rng.random(x.shape[0])[:, None] >= cdf).sum(axis=1), self.n_outputs - 1)

    def _statistics(self, reports):
        return np.bincount(reports, minlength=self.n_outputs).astype(float)

    def _forward(self, p):
        return self.Q.T @ p

    def _adjoint(self, v):
        return self.Q @ v


@SETTINGS
@given(
    k=st.integers(2, 8),
    extra=st.integers(0, 6),
    concentration=st.floats(0.2, 5.0),
    sparse=st.booleans(),
    seed=seeds,
)
def test_unbiased_on_random_full_rank_channels(k, extra, concentration, sparse, seed):
    # E[unbiased(S)] = unbiased(E[S]) = p on any channel of rank k, here the generic
    # least-squares inverse; its accuracy is bounded by the channel's condition number.
    rng = np.random.default_rng(seed)
    Q = rng.dirichlet(np.full(k + extra, concentration), size=k)
    cond = np.linalg.cond(Q)
    assume(cond < 1e6)
    channel = _DenseChannel(Q)
    assert_allclose(channel.to_dense(), Q, rtol=0, atol=1e-15)
    p = _simplex_point(rng, k, sparse)
    n = int(rng.integers(1, 10**6))
    est = channel.unbiased(n * channel.forward(p), n)
    assert_allclose(est, p, rtol=0, atol=1e-12 * cond)
    # The empirical estimator on reports of this channel is the same inverse of their counts.
    x = rng.choice(k, size=200, p=p)
    reports = channel.sample(x, rng).reshape(-1, 1)
    fitted = EmpiricalEstimator(channel=channel).fit(reports)
    assert_allclose(
        fitted.distribution_,
        channel.unbiased(channel.statistics(reports[:, 0]), 200),
        rtol=1e-12,
        atol=1e-12 * cond,
    )


@SETTINGS
@given(mechanism=mechanisms, epsilon=budgets, k=domain_sizes, sparse=st.booleans(), seed=seeds)
def test_unbiased_on_exact_expected_statistics(mechanism, epsilon, k, sparse, seed):
    rng = np.random.default_rng(seed)
    channel = _build(mechanism, epsilon, k).channels_[0]
    # An unbiased estimator of p exists only when the channel matrix has rank k; compressive
    # channels with fewer measurements (groups) than categories estimate M p, not p, even where
    # their matrix over (measurement, bit) outputs has rank k (one-bit compressive, 8 of 9).
    assume(not (isinstance(channel, SparseMeasurements) and channel.n_groups < k))
    try:
        dense = channel.to_dense()
    except ValueError:  # too many outputs to enumerate (DBitFlip's 2k-bit reports at k = 9)
        reject()
    assume(np.linalg.matrix_rank(dense) == k)
    p = _simplex_point(rng, k, sparse)
    n = int(rng.integers(1, 10**6))
    est = channel.unbiased(n * channel.forward(p), n)
    assert_allclose(est, p, rtol=0, atol=1e-10 * max(1.0, 1.0 / epsilon) * k)


@SETTINGS
@given(mechanism=mechanisms, epsilon=budgets, k=domain_sizes, seed=seeds)
def test_unbiased_estimate_is_affine_in_the_statistics(mechanism, epsilon, k, seed):
    # E[unbiased(S)] = unbiased(E[S]) needs exactly this: a mixture of statistics maps to
    # the same mixture of estimates.
    rng = np.random.default_rng(seed)
    channel = _build(mechanism, epsilon, k).channels_[0]
    n = 1000
    s1 = n * channel.forward(_simplex_point(rng, k, False))
    s2 = n * channel.forward(_simplex_point(rng, k, True))
    a = float(rng.random())
    mixed = channel.unbiased(a * s1 + (1 - a) * s2, n)
    parts = a * channel.unbiased(s1, n) + (1 - a) * channel.unbiased(s2, n)
    assert_allclose(mixed, parts, rtol=0, atol=1e-10 * max(1.0, 1.0 / epsilon) * k)


@SETTINGS
@given(mechanism=mechanisms, epsilon=budgets, k=domain_sizes, n=st.integers(1, 300), seed=seeds)
def test_empirical_estimator_is_the_channel_inverse_of_its_statistics(
    mechanism, epsilon, k, n, seed
):
    rng = np.random.default_rng(seed)
    privatizer = _build(mechanism, epsilon, k, seed)
    reports = _reports(privatizer, _simplex_point(rng, k, False), n, rng)
    channel = privatizer.channels_[0]
    est = EmpiricalEstimator().fit(reports)
    column = np.asarray(reports)
    column = column[:, 0] if channel.report_kind == "symbol" else column
    assert_allclose(est.distribution_, channel.unbiased(channel.statistics(column), n), rtol=1e-12)


# -- partial_fit over chunks equals fit ------------------------------------------------------------
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=instance_id)
@SETTINGS
@given(
    mechanism=mechanisms,
    epsilon=budgets,
    k=domain_sizes,
    n=st.integers(min_value=2, max_value=300),
    cuts=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=5),
    seed=seeds,
)
def test_partial_fit_over_chunks_equals_fit(estimator, mechanism, epsilon, k, n, cuts, seed):
    rng = np.random.default_rng(seed)
    privatizer = _build(mechanism, epsilon, k, seed)
    reports = _reports(privatizer, _simplex_point(rng, k, False), n, rng)
    whole = _fit_or_skip(clone(estimator), reports)
    bounds = sorted({int(c * n) for c in cuts} | {0, n})
    chunked = clone(estimator)
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        if hi > lo:
            chunked.partial_fit(reports[lo:hi])
    assert chunked.n_reports_ == whole.n_reports_ == n
    assert_allclose(chunked.distribution_, whole.distribution_, rtol=1e-12, atol=1e-15)


# -- privatizer output aligns with the input rows --------------------------------------------------
indexes = st.sampled_from(["range", "shuffled", "duplicated", "strings"])


def _index(kind, n, rng):
    if kind == "range":
        return pd.RangeIndex(n)
    if kind == "shuffled":
        return pd.Index(rng.permutation(10 * n)[:n] + 7)
    if kind == "duplicated":
        return pd.Index(rng.integers(0, max(1, n // 2), n))
    return pd.Index([f"row{i}" for i in rng.permutation(n)])


@SETTINGS
@given(mechanism=mechanisms, k=domain_sizes, n=st.integers(1, 200), kind=indexes, seed=seeds)
def test_output_rows_align_with_input_rows(mechanism, k, n, kind, seed):
    rng = np.random.default_rng(seed)
    privatizer = _build(mechanism, 60.0, k, seed)
    x = rng.integers(0, k, n)
    index = _index(kind, n, rng)
    privatizer.fit(pd.DataFrame({"v": [0]}))  # with a feature name, as the inputs below
    for X in (pd.Series(x, index=index, name="v"), pd.DataFrame({"v": x}, index=index)):
        out = privatizer.transform(X)
        assert isinstance(out, pd.DataFrame)
        assert len(out) == n
        assert out.index.equals(index)
    out = privatizer.transform(pd.DataFrame({"v": x}))
    assert out.shape[0] == n
    # With a huge budget, each report is (one of) the most likely under its own row's input.
    channel = privatizer.channels_[0]
    values = out.to_numpy(dtype=np.int64)
    values = values[:, 0] if channel.report_kind == "symbol" else values
    L = channel.likelihood(values)
    own = L[np.arange(n), x]
    assert_array_equal(own, L.max(axis=1))


@SETTINGS
@given(mechanism=mechanisms, k=domain_sizes, n=st.integers(1, 100), seed=seeds)
def test_seeded_transform_is_reproducible(mechanism, k, n, seed):
    privatizer = _build(mechanism, 1.0, k, seed)
    x = np.random.default_rng(seed).integers(0, k, n).reshape(-1, 1)
    # the same seed gives the same sequence of calls (a clone starts it again)
    twin = clone(privatizer).fit([[0]])
    a, b = privatizer.transform(x), twin.transform(x)
    assert_array_equal(np.asarray(a), np.asarray(b))
    assert privatizer.transform(x[: max(1, n // 2)]).shape[0] == max(1, n // 2)

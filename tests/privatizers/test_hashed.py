"""The HashedRR privatizer: open alphabet (nothing learned in fit) and closed alphabet."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from skldp import (
    RAPPOR,
    CandidateEstimator,
    EMEstimator,
    HashedRAPPOR,
    HashedRR,
    ProjectedEstimator,
)
from skldp.channels import (
    CohortRAPPORChannel,
    CohortRRChannel,
    HashedRAPPORChannel,
    HashedRRChannel,
)
from skldp.privacy import LDP, SequentialComposition

VOCAB = np.array([f"word{i}" for i in range(40)], dtype=object)


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    p = 0.85 ** np.arange(40)
    p /= p.sum()
    return VOCAB[rng.choice(40, n, p=p)], p


def test_fit_learns_nothing_about_the_data():
    X, _ = _data(500)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = HashedRR(epsilon=2.0, n_buckets=8, n_cohorts=4).fit(X)
    b = HashedRR(epsilon=2.0, n_buckets=8, n_cohorts=4).fit(np.array(["other"], dtype=object))
    assert a.channel_ == b.channel_ == HashedRRChannel(2.0, 8, 4, 0)
    assert a.categories_ == [None]
    assert a.privacy_ == LDP(2.0)
    assert a.bits_per_report == 5


def test_transform_reports_and_reproducibility():
    X, _ = _data(1000)
    priv = HashedRR(epsilon=1.0, n_buckets=8, n_cohorts=4, random_state=3)
    r1 = priv.fit_transform(X)
    assert r1.shape == (1000, 1) and r1.min() >= 0 and r1.max() < 32
    assert r1.specs[0].channel == priv.channel_
    assert not np.array_equal(r1, priv.transform(X))  # every call draws fresh noise
    assert_array_equal(r1, clone(priv).fit_transform(X))  # a clone starts the sequence again
    unseeded = HashedRR(epsilon=1.0, n_buckets=8, n_cohorts=4).fit(X)
    assert not np.array_equal(unseeded.transform(X), unseeded.transform(X))
    assert_array_equal(pickle.loads(pickle.dumps(r1)).specs[0].channel.n_outputs, 32)


def test_cohorts_are_uniform_and_independent_of_the_value():
    X = np.array(["a"] * 20000 + ["b"] * 20000, dtype=object)
    r = np.asarray(
        HashedRR(epsilon=1.0, n_buckets=4, n_cohorts=5, random_state=0).fit_transform(X)
    )[:, 0]
    for half in (r[:20000], r[20000:]):
        counts = np.bincount(half // 4, minlength=5)
        assert np.all(np.abs(counts - 4000) < 5 * np.sqrt(20000 * 0.2 * 0.8))


def test_pandas_index_kept_and_pipeline():
    X, p = _data(20000, seed=1)
    s = pd.Series(X, index=np.arange(20000)[::-1] * 3, name="city")
    priv = HashedRR(epsilon=4.0, n_buckets=16, n_cohorts=8, random_state=0)
    out = priv.fit_transform(s)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["city"]
    assert_array_equal(out.index, s.index)
    pipe = Pipeline(
        [("privatize", clone(priv)), ("estimate", CandidateEstimator(candidates=VOCAB))]
    )
    pipe.fit(s)
    assert np.abs(pipe[-1].distribution_ - p).sum() < 0.15


def test_several_columns_each_open():
    X, _ = _data(300)
    frame = pd.DataFrame({"a": X, "b": X[::-1]})
    priv = HashedRR(epsilon=1.0, n_buckets=4, n_cohorts=2, random_state=0).fit(frame)
    assert isinstance(priv.privacy_, SequentialComposition) and priv.privacy_.epsilon == 2.0
    out = priv.transform(frame)
    assert out.shape == (300, 2)
    est = CandidateEstimator(candidates=VOCAB).fit(out)
    assert len(est.distribution_) == 2


def test_missing_value_is_an_error_naming_the_column():
    priv = HashedRR(epsilon=1.0, random_state=0).fit(np.array(["a", "b"], dtype=object))
    with pytest.raises(ValueError, match="column 0.*missing"):
        priv.transform(np.array(["a", None], dtype=object))
    with pytest.raises(ValueError, match="column 1.*infinite"):
        priv.fit(np.array([[1.0, 2.0], [3.0, np.inf]]))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"epsilon": -1.0}, "epsilon"),
        ({"n_buckets": 1}, "n_buckets"),
        ({"n_cohorts": 0}, "n_cohorts"),
        ({"hash_seed": -3}, "hash_seed"),
        ({"n_buckets": 2.5}, "n_buckets"),
    ],
)
def test_bad_parameters(params, match):
    with pytest.raises((ValueError, TypeError), match=match):
        HashedRR(**params).fit(["a", "b"])


class TestClosedAlphabet:
    def test_channel_is_permutation_o_rr(self):
        priv = HashedRR(epsilon=1.0, n_buckets=3, n_cohorts=2, categories=list(VOCAB[:6])).fit(
            VOCAB[:6]
        )
        ch = priv.channel_
        assert isinstance(ch, CohortRRChannel) and ch.n_inputs == 6 and ch.n_outputs == 6
        assert_array_equal(priv.categories_[0], VOCAB[:6])

    def test_out_of_domain_value_raises(self):
        priv = HashedRR(epsilon=1.0, categories=["a", "b"]).fit(["a"])
        with pytest.raises(ValueError, match="outside the domain.*'zz'"):
            priv.transform(["a", "zz"])

    def test_every_estimator_works(self):
        X, p = _data(30000, seed=2)
        reports = HashedRR(
            epsilon=3.0, n_buckets=16, n_cohorts=8, categories=list(VOCAB), random_state=0
        ).fit_transform(X)
        for est in (ProjectedEstimator(), EMEstimator(), CandidateEstimator()):
            assert np.abs(est.fit(reports).distribution_ - p).sum() < 0.2

    def test_single_cohort_full_width_is_permuted_krr_in_law(self):
        # C = 1, k = S: each category keeps its own symbol pi(x) with probability e/(e+S-1).
        cats = list(VOCAB[:5])
        priv = HashedRR(epsilon=2.0, n_buckets=5, n_cohorts=1, categories=cats, random_state=0).fit(
            cats
        )
        Q = priv.channel_.to_dense()
        assert np.all(np.sort(Q, axis=1)[:, -1] == priv.channel_.keep)
        assert_array_equal(np.sort(Q.argmax(axis=1)), np.arange(5))


class TestHashedRAPPOR:
    def test_open_reports_pandas_and_estimation(self):
        X, p = _data(20000, seed=3)
        priv = HashedRAPPOR(epsilon=4.0, n_bits=32, n_hashes=1, n_cohorts=4, random_state=0)
        out = priv.fit_transform(pd.Series(X, name="w"))
        assert isinstance(priv.channel_, HashedRAPPORChannel) and priv.channel_.width == 34
        assert list(out.columns) == [f"w_{j}" for j in range(34)]
        assert priv.bits_per_report == 34 and priv.privacy_ == LDP(4.0)
        est = CandidateEstimator(candidates=VOCAB).fit(out)
        assert np.abs(est.distribution_ - p).sum() < 0.25
        arr = HashedRAPPOR(epsilon=4.0, n_bits=32, n_cohorts=4, random_state=0).fit_transform(X)
        assert arr.dtype == np.uint8 and arr.shape == (20000, 34)

    def test_closed_alphabet_and_reduction_to_rappor(self):
        cats = list(VOCAB[:6])
        priv = HashedRAPPOR(
            epsilon=2.0, n_bits=6, n_hashes=1, n_cohorts=1, categories=cats, random_state=0
        ).fit(cats)
        ch = priv.channel_
        assert isinstance(ch, CohortRAPPORChannel)
        perm = ch.buckets[:, 0, 0]
        assert_array_equal(np.sort(perm), np.arange(6))
        Q = ch.to_dense()
        R = RAPPOR(epsilon=2.0, categories=cats).fit(cats).channel_.to_dense()
        # Output o of the permuted channel carries bit perm[x] for category x.
        outs = ((np.arange(64)[:, None] >> np.arange(6)) & 1)[:, perm]
        codes = outs @ (1 << np.arange(6))
        np.testing.assert_allclose(Q, R[:, codes], rtol=1e-12)
        X, p = _data(20000, seed=4)
        big = HashedRAPPOR(
            epsilon=3.0, n_bits=16, n_hashes=2, n_cohorts=4, categories=list(VOCAB), random_state=0
        )
        reports = big.fit_transform(X)
        for est in (ProjectedEstimator(), CandidateEstimator()):
            assert np.abs(est.fit(reports).distribution_ - p).sum() < 0.35

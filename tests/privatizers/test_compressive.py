import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from skldp import (
    EmpiricalEstimator,
    OneBitCompressive,
    OneBitHadamardResponse,
    RecursiveCompressive,
    SparseEstimator,
    SymmetricCompressive,
)
from skldp.privacy import LDP
from skldp.privatizers._compressive import resolve_n_blocks

CATS = list(range(300))


def _data(n=20_000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.choice([3, 17, 150], size=n, p=[0.5, 0.3, 0.2])


@pytest.mark.parametrize(
    "privatizer",
    [
        OneBitCompressive(n_measurements=60, categories=CATS, random_state=0),
        SymmetricCompressive(n_measurements=120, categories=CATS, random_state=0),
        RecursiveCompressive(epsilon=2.0, n_measurements=40, categories=CATS, random_state=0),
        OneBitHadamardResponse(categories=CATS, random_state=0),
    ],
    ids=lambda p: type(p).__name__,
)
def test_pipeline_recovers_a_sparse_distribution(privatizer):
    x = _data(60_000)
    pipe = Pipeline(
        [("privatize", privatizer), ("estimate", SparseEstimator(sparsity=3, projection="sparse"))]
    )
    pipe.fit(x)
    est = pipe.named_steps["estimate"]
    assert_array_equal(est.support_, [3, 17, 150])
    assert np.abs(est.distribution_[[3, 17, 150]] - [0.5, 0.3, 0.2]).max() < 0.08
    assert pipe.named_steps["privatize"].privacy_ == LDP(privatizer.epsilon)


def test_cyclic_assignment_balances_groups_and_random_does_not():
    m = 25
    cp = OneBitCompressive(n_measurements=m, categories=CATS, random_state=1).fit(CATS)
    reports = np.asarray(cp.transform(np.tile([3], 4 * m)))[:, 0]
    assert_array_equal(np.bincount(reports // 2, minlength=m), 4)
    rnd = OneBitCompressive(
        n_measurements=m, assignment="random", categories=CATS, random_state=1
    ).fit(CATS)
    groups = np.asarray(rnd.transform(np.tile([3], 4 * m)))[:, 0] // 2
    assert np.bincount(groups, minlength=m).std() > 0
    # One row per call still lands in a uniformly random group.
    single = [
        int(np.asarray(cp.set_params(random_state=s).transform([3]))[0, 0]) // 2 for s in range(200)
    ]
    assert len(set(single)) > m // 2


def test_reports_are_reproducible_and_matrix_is_public():
    a = OneBitCompressive(n_measurements=30, categories=CATS, random_state=5).fit(CATS)
    b = clone(a).fit(CATS)
    assert_array_equal(a.transform(_data(500)), b.transform(_data(500)))
    assert a.channel_ == b.channel_
    c = OneBitCompressive(n_measurements=30, matrix_seed=1, categories=CATS).fit(CATS)
    assert a.channel_ != c.channel_


def test_pandas_index_is_kept():
    x = pd.Series(_data(50), index=np.arange(50) * 3, name="item")
    out = (
        SymmetricCompressive(n_measurements=10, categories=CATS, random_state=0).fit(x).transform(x)
    )
    assert list(out.index) == list(x.index)


def test_one_bit_hadamard_with_empirical_estimator_is_unbiased_inversion():
    cats = list(range(6))
    x = np.random.default_rng(2).choice(6, size=40_000, p=[0.4, 0.2, 0.1, 0.1, 0.1, 0.1])
    hr = OneBitHadamardResponse(epsilon=2.0, categories=cats, random_state=3)
    est = EmpiricalEstimator().fit(hr.fit_transform(x))
    assert np.all(
        np.abs(est.distribution_ - [0.4, 0.2, 0.1, 0.1, 0.1, 0.1]) < 5 * est.distribution_std_
    )


@pytest.mark.parametrize(
    "eps,n_blocks,max_bits,expected",
    [
        (0.5, None, None, 1),
        (1.0, None, None, 2),
        (2.0, None, None, 4),
        (2.0, None, 2, 2),
        (5.0, 8, None, 8),
    ],
)
def test_resolve_n_blocks(eps, n_blocks, max_bits, expected):
    assert resolve_n_blocks(eps, n_blocks, max_bits) == expected


def test_recursive_privatizer_uses_resolved_blocks():
    rc = RecursiveCompressive(epsilon=2.0, max_bits=2, n_measurements=10, categories=CATS).fit(CATS)
    assert rc.channel_.n_blocks == 2 and rc.bits_per_report == 2


@pytest.mark.parametrize(
    "privatizer,match",
    [
        (OneBitCompressive(epsilon=-1, categories=CATS), "epsilon"),
        (OneBitCompressive(n_measurements=0, categories=CATS), "n_measurements"),
        (OneBitCompressive(assignment="round-robin", categories=CATS), "assignment"),
        (OneBitCompressive(matrix_seed=-3, categories=CATS), "matrix_seed"),
        (SymmetricCompressive(n_measurements=11, categories=CATS), "even"),
        (RecursiveCompressive(n_blocks=3, categories=CATS), "power of two"),
        (RecursiveCompressive(n_blocks=8, max_bits=2, categories=CATS), "bits"),
        (OneBitHadamardResponse(assignment=None, categories=CATS), "assignment"),
    ],
)
def test_bad_parameters_raise(privatizer, match):
    with pytest.raises((ValueError, TypeError), match=match):
        privatizer.fit(CATS)


def test_out_of_domain_value_is_named():
    cp = OneBitCompressive(n_measurements=10, categories=CATS).fit(CATS)
    with pytest.raises(ValueError, match="outside the domain"):
        cp.transform([1, 2, 999])

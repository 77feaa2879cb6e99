import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.linalg import hadamard

from skldp._fwht import fwht, hadamard_entry, next_power_of_two


@pytest.mark.parametrize("m", [0, 1, 2, 5, 8])
def test_fwht_matches_dense_hadamard(m):
    n = 2**m
    a = np.random.default_rng(m).standard_normal((3, n))
    assert_allclose(fwht(a), a @ hadamard(n).T, atol=1e-10)


def test_fwht_inverse_and_entries():
    n = 64
    a = np.random.default_rng(0).standard_normal(n)
    assert_allclose(fwht(fwht(a)) / n, a, atol=1e-12)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    assert_array_equal(hadamard_entry(i, j), hadamard(n))


def test_fwht_rejects_other_lengths():
    with pytest.raises(ValueError, match="power-of-two"):
        fwht(np.ones(6))


@pytest.mark.parametrize("n,expected", [(1, 1), (2, 2), (3, 4), (1000, 1024), (1024, 1024)])
def test_next_power_of_two(n, expected):
    assert next_power_of_two(n) == expected


def _butterflies(a):
    """The radix-2 butterflies skldp used before (the reference for large sizes)."""
    a = np.array(a, dtype=float, copy=True)
    n = a.shape[-1]
    lead = a.shape[:-1]
    h = 1
    while h < n:
        a = a.reshape(lead + (n // (2 * h), 2, h))
        top = a[..., 0, :].copy()
        bottom = a[..., 1, :]
        a[..., 0, :] += bottom
        a[..., 1, :] = top - bottom
        h *= 2
    return a.reshape(lead + (n,))


@pytest.mark.parametrize("m", [0, 1, 2, 3, 4, 6, 7, 10])
@pytest.mark.parametrize("lead", [(), (1,), (5,), (2, 3)])
def test_fwht_integers_exact_against_dense(m, lead):
    # every pass splits the bits differently (m = 7: 3 + 2 + 2); integer sums are exact
    n = 2**m
    a = np.random.default_rng(m).integers(-(2**40), 2**40, size=lead + (n,))
    expected = a @ hadamard(n).T  # int64 matrix product: exact
    got = fwht(a)
    assert got.dtype == np.float64 and got.shape == a.shape
    assert_array_equal(got, expected.astype(float))


@pytest.mark.parametrize("m", [12, 16, 17, 20])
def test_fwht_matches_butterflies_at_large_sizes(m):
    n = 2**m
    rng = np.random.default_rng(m)
    a = rng.standard_normal(n)
    ref = _butterflies(a)
    # each output is a signed sum of n inputs: rounding differs from the butterflies' by a few
    # ulps of the partial sums, at most about m * eps * sum|a|
    assert_allclose(fwht(a), ref, rtol=0, atol=4 * m * np.finfo(float).eps * np.abs(a).sum())
    ints = rng.integers(-(2**20), 2**20, size=(2, n))
    assert_array_equal(fwht(ints), _butterflies(ints))


def test_fwht_leaves_input_alone_and_reads_views():
    a = np.random.default_rng(1).standard_normal((4, 64))
    before = a.copy()
    strided = a[::2, :]  # not contiguous
    assert_allclose(fwht(strided), strided @ hadamard(64).T, atol=1e-12)
    assert_allclose(fwht(a.T.T), a @ hadamard(64).T, atol=1e-12)
    assert_array_equal(a, before)
    assert not np.shares_memory(fwht(a[0]), a)
    one = np.ones(1)
    assert not np.shares_memory(fwht(one), one)


@pytest.mark.parametrize("bad", [np.ones(0), np.ones((3, 12)), np.float64(1.0)])
def test_fwht_rejects_bad_shapes(bad):
    with pytest.raises(ValueError, match="power-of-two|at least one axis"):
        fwht(bad)

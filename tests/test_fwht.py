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

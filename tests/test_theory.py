import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import binom

from skldp.channels import RandomizedResponseChannel
from skldp.theory import (
    krr_l1_risk,
    krr_l2_risk,
    krr_rappor_break_even,
    rappor_l1_risk,
    rappor_l2_risk,
)


def test_uniform_is_the_worst_case():
    k, eps, n = 7, 1.5, 100
    e = math.exp(eps)
    assert_allclose(
        krr_l2_risk(k, eps, n), (k - 1) * (k - 1 + e) ** 2 / (n * k * (e - 1) ** 2), rtol=1e-12
    )
    c = math.exp(eps / 2)
    assert_allclose(
        rappor_l2_risk(k, eps, n), (k - 1) / (n * k) + k * c / (n * (c - 1) ** 2), rtol=1e-12
    )
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = rng.dirichlet(np.ones(k))
        assert krr_l2_risk(k, eps, n, p) <= krr_l2_risk(k, eps, n)
        assert rappor_l2_risk(k, eps, n, p) <= rappor_l2_risk(k, eps, n)


@pytest.mark.parametrize(
    "call, err",
    [
        (lambda: krr_l2_risk(1, 1.0, 10), ValueError),
        (lambda: krr_l2_risk(3, -1.0, 10), ValueError),
        (lambda: rappor_l2_risk(3, 1.0, 0), ValueError),
        (lambda: krr_l2_risk(3, 1.0, 10, [0.5, 0.5]), ValueError),
        (lambda: krr_rappor_break_even(2.5), TypeError),
        (lambda: krr_l1_risk(3, 1.0, 10, [0.5, 0.6, -0.1]), ValueError),
        (lambda: rappor_l1_risk(3, 1.0, 10, [0.5, 0.2, 0.2]), ValueError),
        (lambda: krr_l1_risk(3, 1.0, 10, method="normal"), ValueError),
        (lambda: rappor_l1_risk(3, 0.0, 10), ValueError),
    ],
)
def test_bad_inputs(call, err):
    with pytest.raises(err):
        call()


def test_l1_risk_equals_a_direct_sum_over_the_binomial():
    # de Moivre's closed form against the definition sum_x |x - n m| P(N = x), small n.
    k, eps, n = 4, 1.0, 37
    p = np.array([0.4, 0.3, 0.2, 0.1])
    e = math.exp(eps)
    m = ((e - 1) * p + 1) / (k - 1 + e)
    x = np.arange(n + 1)[:, None]
    mad = (np.abs(x - n * m) * binom.pmf(x, n, m)).sum(axis=0)
    assert_allclose(krr_l1_risk(k, eps, n, p), (k - 1 + e) / (e - 1) * mad.sum() / n, rtol=1e-12)


def test_maximum_likelihood_bad_input():
    ch = RandomizedResponseChannel(1.0, 3)
    with pytest.raises(ValueError, match="shape"):
        ch.maximum_likelihood([1, 2])
    with pytest.raises(ValueError, match="non-negative"):
        ch.maximum_likelihood([0, 0, 0])
    with pytest.raises(ValueError, match="non-negative"):
        ch.maximum_likelihood([1, -1, 3])

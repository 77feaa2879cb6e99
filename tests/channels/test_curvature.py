"""Curvature diagonals of the likelihood models against the exact dense Hessian (small k).

For reports with likelihood rows :math:`\\ell_i = Q(y_i \\mid \\cdot)`, the mean
log-likelihood :math:`L(p) = \\frac1n \\sum_i \\log \\ell_i \\cdot p` has the Hessian
:math:`-\\frac1n \\sum_i \\ell_i \\ell_i^\\top / (\\ell_i \\cdot p)^2`, built here from the
channel's dense matrix (symbol channels) or its dense likelihood of each report (bit-vector
channels): none of the structured products under test.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skldp.channels import (
    BlockHadamardResponseChannel,
    HadamardResponseChannel,
    HighLowHadamardResponseChannel,
    LocalHashingChannel,
    OptimizedUnaryEncodingChannel,
    RandomizedResponseChannel,
    RAPPORChannel,
    SubsetSelectionChannel,
    UtilityOptimizedRAPPORChannel,
)
from tests.conftest import hessian_diagonal, simplex_point

SYMBOL = {
    "HR": lambda: HadamardResponseChannel(1.0, 13),
    "block HR": lambda: BlockHadamardResponseChannel(0.7, [0, 0, 1, 1, 1, 2, 0, 2, 3, 1]),
    "high-low HR": lambda: HighLowHadamardResponseChannel(1.2, 11, [1, 4, 5, 9]),
    "high-low HR, none sensitive": lambda: HighLowHadamardResponseChannel(1.2, 6, []),
}
BITS = {
    "RAPPOR (packed)": lambda: RAPPORChannel(1.0, 20),
    "OUE": lambda: OptimizedUnaryEncodingChannel(2.0, 9),
    "uRAP (pattern histogram)": lambda: UtilityOptimizedRAPPORChannel(1.0, 12, [0, 3, 7]),
    "uRAP (packed)": lambda: UtilityOptimizedRAPPORChannel(1.0, 24, list(range(18))),
    "local hashing": lambda: LocalHashingChannel(1.5, 11, 4),
    "subset selection": lambda: SubsetSelectionChannel(1.0, 10, 3),
}


def _dense_hessian(rows, weights, p):
    """-(1/n) sum_i w_i l_i l_i^T / (l_i . p)^2 from dense likelihood rows l_i."""
    t = rows @ p
    return -(rows * (weights / t**2)[:, None]).T @ rows / weights.sum()


def _check(model, hessian, p):
    # curvature_diagonal, with q = w / (A p)^2 in the model's own rows
    assert_allclose(hessian_diagonal(model, p), np.diag(hessian), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", list(SYMBOL))
def test_symbol_channel_curvature_diagonal_is_the_dense_hessian_diagonal(name):
    ch = SYMBOL[name]()
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 50, ch.n_outputs).astype(float)
    counts[0] = 0.0  # an unobserved output has no weight
    model = ch.em_model(np.repeat(np.arange(ch.n_outputs), counts.astype(int)))
    p = simplex_point(ch.n_inputs, seed=1)
    Q = ch.to_dense()  # (k, n_outputs)
    seen = counts > 0
    _check(model, _dense_hessian(Q.T[seen], counts[seen], p), p)
    # and against a finite difference of the gradient, coordinate by coordinate
    h = 1e-6
    fd = [
        (model.gradient(p + h * e)[j] - model.gradient(p - h * e)[j]) / (2 * h)
        for j, e in enumerate(np.eye(ch.n_inputs))
    ]
    assert_allclose(hessian_diagonal(model, p), fd, rtol=1e-6)


@pytest.mark.parametrize("name", list(BITS))
def test_bit_vector_curvature_diagonal_is_the_dense_hessian_diagonal(name):
    ch = BITS[name]()
    rng = np.random.default_rng(5)
    x = rng.integers(0, ch.n_inputs, 400)
    reports = ch.sample(x, rng)
    model = ch.em_model(reports)
    p = simplex_point(ch.n_inputs, seed=4)
    rows = ch._likelihood(reports)  # dense (n, k): each report's likelihood of every input
    _check(model, _dense_hessian(rows, np.ones(rows.shape[0]), p), p)


def test_channels_without_a_cheap_diagonal_say_so():
    ch = RandomizedResponseChannel(1.0, 5)
    model = ch.em_model(np.arange(5).repeat(3))
    assert model.curvature_diagonal(np.ones(5)) is None
    assert hessian_diagonal(model, simplex_point(5, seed=0)) is None

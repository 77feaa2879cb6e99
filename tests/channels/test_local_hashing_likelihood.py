"""The likelihood model of local hashing and subset selection reports (IncidenceModel).

The Hessian diagonal that preconditions the Newton steps is checked against the dense exact
Hessian on small k, and the maximum-likelihood estimate against long-run plain EM.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp import EMEstimator
from skldp.channels import LocalHashingChannel, SubsetSelectionChannel
from skldp.channels._bits import IncidenceModel, PackedBitReports
from tests.conftest import hessian_diagonal

CHANNELS = [
    LocalHashingChannel(1.0, 7, 4),
    LocalHashingChannel(3.0, 12, 2),
    SubsetSelectionChannel(1.0, 9, 3),
]


def _model_and_point(channel, n=300, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, channel.n_inputs, size=n)
    reports = channel.sample(x, rng)
    model = channel.em_model(reports)
    p = rng.dirichlet(np.ones(channel.n_inputs))
    return model, reports, p


def _dense_hessian(channel, reports, p):
    # The exact Hessian of L(p) = (c + sum_i log R_i . p) / n from the dense relative
    # likelihoods: -R^T diag(1 / (R p)^2) R / n.
    R = channel._relative_likelihood(np.asarray(reports))
    t = R @ p
    return -(R.T * (1.0 / t**2)) @ R / R.shape[0]


@pytest.mark.parametrize("channel", CHANNELS, ids=repr)
def test_hessian_diagonal_is_the_dense_hessians(channel):
    model, reports, p = _model_and_point(channel)
    assert isinstance(model, IncidenceModel)
    dense = _dense_hessian(channel, reports, p)
    assert_allclose(hessian_diagonal(model, p), np.diag(dense), rtol=1e-12)
    # and the Hessian products the solver's conjugate gradients use, column by column
    eye = np.eye(channel.n_inputs)
    columns = np.column_stack([model.hessian_product(p, e) for e in eye])
    assert_allclose(columns, dense, rtol=1e-12, atol=1e-14)


def test_hessian_diagonal_at_a_point_with_zeros():
    # Exact zeros of p (the solver keeps them) leave every report's likelihood positive.
    channel = LocalHashingChannel(1.0, 7, 4)
    model, reports, p = _model_and_point(channel, seed=1)
    p[[0, 3]] = 0.0
    p /= p.sum()
    assert_allclose(
        hessian_diagonal(model, p), np.diag(_dense_hessian(channel, reports, p)), rtol=1e-12
    )


@pytest.mark.parametrize("channel", CHANNELS[:2], ids=repr)
def test_estimate_equals_long_run_em(channel):
    rng = np.random.default_rng(5)
    weights = 1.0 / np.arange(1, channel.n_inputs + 1) ** 1.1
    x = rng.choice(channel.n_inputs, size=4000, p=weights / weights.sum())
    reports = channel.sample(x, rng)
    fast = EMEstimator(channel=channel).fit(reports)
    slow = EMEstimator(channel=channel, accelerate=False, tol=1e-12, max_iter=200_000)
    slow.fit(reports)
    assert fast.converged_ and fast.gap_ <= 1e-8
    # The certified gap bounds how far below the maximum each fit can be, per report.
    assert abs(fast.log_likelihood_ - slow.log_likelihood_) <= 1e-8 + 1e-12
    assert fast.log_likelihood_ >= slow.log_likelihood_ - 1e-12 - fast.gap_


@pytest.mark.parametrize("width", [1, 7, 8, 9, 16, 997])
def test_packing_column_major_bits_gives_the_same_bytes(width):
    rng = np.random.default_rng(width)
    bits = (rng.random((37, width)) < 0.3).astype(np.uint8)
    rows = PackedBitReports.from_bits(bits)
    cols = PackedBitReports.from_bits(np.asfortranarray(bits))
    assert_array_equal(cols.packed, rows.packed)
    assert_array_equal(cols.sums, bits.sum(axis=0))
    assert cols.packed.flags.c_contiguous and cols.width == width
    assert_array_equal(cols.unpack(), bits)


def test_local_hashing_model_packs_the_support_as_computed():
    # The support incidence comes column-major (the layout the fast packing reads without a
    # transposed copy); the model's bytes and counts are those of the dense support.
    channel = LocalHashingChannel(1.0, 300, 4)
    rng = np.random.default_rng(3)
    reports = channel.sample(rng.integers(0, 300, size=500), rng)
    support = channel.support(reports)
    assert support.T.flags.c_contiguous
    model = channel.em_model(reports)
    assert_array_equal(model.packed.unpack(), support)
    assert_array_equal(model.statistics, channel.statistics(reports))


def test_column_major_bit_sums_beyond_the_uint16_range():
    # 70,000 reports with every bit set in the first column: a 16-bit count would wrap.
    bits = np.zeros((70_000, 3), dtype=np.uint8, order="F")
    bits[:, 0] = 1
    bits[::2, 2] = 1
    packed = PackedBitReports.from_bits(bits)
    assert_array_equal(packed.sums, [70_000, 0, 35_000])
    assert packed.sums.dtype == np.int64


def test_preconditioned_estimate_equals_the_unpreconditioned_one(monkeypatch):
    # Without a curvature diagonal the solver preconditions by EM's metric g / p (the code before
    # the diagonal); both fits reach a certified gap of 1e-11 per report, so their
    # log-likelihoods agree within 2e-11 per report.
    channel = LocalHashingChannel(1.0, 40, 4)
    rng = np.random.default_rng(11)
    weights = 1.0 / np.arange(1, 41) ** 1.1
    reports = channel.sample(rng.choice(40, size=5000, p=weights / weights.sum()), rng)
    new = EMEstimator(channel=channel, tol=1e-11).fit(reports)
    monkeypatch.setattr(IncidenceModel, "curvature_diagonal", lambda self, q: None)
    old = EMEstimator(channel=channel, tol=1e-11).fit(reports)
    assert new.converged_ and old.converged_
    assert abs(new.log_likelihood_ - old.log_likelihood_) <= 2e-11
    # the same exact zeros and entries within 1e-6 (3.4e-8 when written)
    assert_array_equal(new.distribution_ == 0, old.distribution_ == 0)
    assert_allclose(new.distribution_, old.distribution_, atol=1e-6)

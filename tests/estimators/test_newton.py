"""The projected Newton step of the maximum-likelihood solver (issue 15).

Each test fails on the solver before its fix: the projected conjugate gradients diverged
near the maximum (their residual kept its large component along the constraint normal),
an input that only its own reports can give was sent to zero (likelihood -inf at the full
step), and block Hadamard response crawled (the blocks' masses are fixed by the data, which
a single simplex constraint does not see).
"""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.exceptions import ConvergenceWarning

from skldp import BlockHadamardResponse, EMEstimator
from skldp.channels import (
    BlockHadamardResponseChannel,
    RAPPORChannel,
    UtilityOptimizedRAPPORChannel,
)
from skldp.estimators._em import _newton_step, certified_gap, em
from tests.conftest import hessian_diagonal, simplex_point


def _operations(model):
    """(gradient, hessian, diagonal) of the solver for a likelihood model, with call counts."""
    calls = {"gradient": 0, "hessian": 0}

    def gradient(p):
        calls["gradient"] += 1
        return model.gradient(p), model.log_likelihood(p)

    def hessian(p, v):
        calls["hessian"] += 1
        return -model.hessian_product(p, v)

    def diagonal(p):
        d = hessian_diagonal(model, p)
        return None if d is None else -d

    return gradient, hessian, diagonal, calls


def test_newton_step_near_the_maximum_needs_few_products():
    # RAPPOR, k = 60: solve to a gap of 1e-11, then perturb the positive entries by 1e-7
    # relative. The Newton step must bring the gap down from there with a handful of
    # Hessian products (the diverging iteration took all 30 and failed).
    ch = RAPPORChannel(1.0, 60)
    rng = np.random.default_rng(0)
    x = rng.choice(60, size=20000, p=simplex_point(60, seed=3, interior=False))
    model = ch.em_model(ch.sample(x, rng))
    p0 = np.full(60, 1 / 60)
    best, _, converged, _, gap = em(model, p0, tol=1e-11, max_iter=200, accelerate=True)
    assert converged
    p = best * (1.0 + 1e-7 * rng.standard_normal(60))
    p /= p.sum()
    gradient, hessian, diagonal, calls = _operations(model)
    g, ll = gradient(p)
    gap0 = certified_gap(g)
    assert 1e-9 < gap0 < 1e-5
    out = _newton_step(gradient, hessian, diagonal, p, g, ll, gap0)
    assert out is not None
    assert calls["hessian"] <= 5
    assert certified_gap(out[1]) < gap0 / 10


def test_input_held_up_by_its_own_reports_is_not_sent_to_zero():
    # uRAP: input 15 is not sensitive, so a report with its bit set pins it. From the
    # maximum, raise p_15 by half (still below 0.1 / k): its multiplier falls below one, yet
    # zeroing it makes its reports impossible. The full Newton step is taken at once.
    ch = UtilityOptimizedRAPPORChannel(1.0, 20, [0, 1, 2, 3, 4])
    rng = np.random.default_rng(1)
    truth = np.full(20, 1.0)
    truth[15] = 0.04
    truth /= truth.sum()
    model = ch.em_model(ch.sample(rng.choice(20, size=4000, p=truth), rng))
    assert model.pinned[15] >= 1
    best, _, converged, _, _ = em(
        model, np.full(20, 0.05), tol=1e-10, max_iter=200, accelerate=True
    )
    assert converged and 0 < best[15] < 0.1 / 20 / 1.5
    p = best.copy()
    p[15] *= 1.5
    p /= p.sum()
    gradient, hessian, diagonal, calls = _operations(model)
    g, ll = gradient(p)
    assert g[15] < 1.0 and p[15] < 0.1 / 20
    out = _newton_step(gradient, hessian, diagonal, p, g, ll, certified_gap(g))
    assert out is not None
    q, _, llq = out
    assert q[15] > 0 and llq > ll
    assert calls["gradient"] == 2  # the start and the full step, no halving


def test_block_hadamard_converges_in_tens_of_iterations_with_the_blocks_masses():
    k, n_blocks, n = 512, 8, 50000
    rng = np.random.default_rng(2)
    x = rng.choice(k, size=n, p=simplex_point(k, seed=5, interior=False))
    priv = BlockHadamardResponse(
        epsilon=1.0, categories=np.arange(k), n_blocks=n_blocks, random_state=0
    )
    reports = priv.fit_transform(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = EMEstimator(max_iter=40).fit(reports)
    assert est.converged_ and est.gap_ <= 1e-8 and est.n_iter_ <= 40
    ch = priv.channel_
    assert isinstance(ch, BlockHadamardResponseChannel)
    block, _ = ch.split_reports(np.asarray(reports)[:, 0])
    share = np.bincount(block, minlength=ch.n_blocks) / n
    mass = np.bincount(ch.labels, weights=est.distribution_, minlength=ch.n_blocks)
    # the maximum-likelihood mass of a block is its share of the reports
    assert_allclose(mass, share, rtol=0, atol=1e-9)


def test_mass_groups_only_where_inputs_of_groups_share_no_output():
    assert BlockHadamardResponseChannel(1.0, [0, 1, 0, 1]).em_model([0]).mass_groups.tolist() == [
        0,
        1,
        0,
        1,
    ]
    assert BlockHadamardResponseChannel(1.0, [0, 0, 0]).em_model([0]).mass_groups is None
    assert RAPPORChannel(1.0, 4).em_model(np.eye(4, dtype=np.uint8)).mass_groups is None


@pytest.mark.parametrize("seed", [0, 1])
def test_block_hadamard_solver_reaches_long_run_em(seed):
    # The mass constraints change the path, not the maximum: long-run plain EM agrees.
    ch = BlockHadamardResponseChannel(1.0, np.arange(24) % 3)
    rng = np.random.default_rng(seed)
    model = ch.em_model(ch.sample(rng.choice(24, size=3000, p=simplex_point(24, seed)), rng))
    p0 = np.full(24, 1 / 24)
    _, _, converged, history, _ = em(model, p0, tol=1e-12, max_iter=500, accelerate=True)
    assert converged
    *_, em_history, _ = em(model, p0, tol=1e-12, max_iter=50000, accelerate=False)
    assert history[-1] >= em_history[-1] - 1e-9

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import minimize

from skldp.projection import clip_normalize, norm_sub, project_simplex


@pytest.mark.parametrize(
    "v, expected",
    [
        ([0.5, 0.5], [0.5, 0.5]),
        ([1, 1], [0.5, 0.5]),
        ([2, 0], [1, 0]),
        ([-1, 0.5, 0.8], [0, 0.35, 0.65]),
    ],
)
def test_hand_examples(v, expected):
    # kairouz2016 spec, claim 14.
    assert_allclose(project_simplex(v), expected, atol=1e-15)


def test_matches_generic_qp_and_is_idempotent():
    rng = np.random.default_rng(0)
    for _ in range(5):
        v = rng.normal(0.1, 0.3, 8)
        q = project_simplex(v)
        res = minimize(
            lambda x, v=v: np.sum((x - v) ** 2),
            np.full(8, 1 / 8),
            constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1}],
            bounds=[(0, None)] * 8,
            method="SLSQP",
            options={"ftol": 1e-14},
        )
        assert_allclose(q, res.x, atol=1e-6)
        assert_allclose(project_simplex(q), q, atol=1e-15)


def test_never_increases_l2_distance_to_the_simplex():
    # Claim 15: ||proj(v) - q|| <= ||v - q|| for every q in the simplex, pathwise.
    rng = np.random.default_rng(1)
    for _ in range(200):
        v = rng.normal(0.05, 0.4, 12)
        q = rng.dirichlet(np.ones(12))
        assert np.linalg.norm(project_simplex(v) - q) <= np.linalg.norm(v - q) + 1e-12


def _naive_norm_sub(v):
    # Norm-Sub as stated by Wang et al. (2020): zero negatives, shift positives, repeat.
    x = np.asarray(v, dtype=float).copy()
    for _ in range(1000):
        x = np.maximum(x, 0)
        pos = x > 0
        x[pos] -= (x.sum() - 1) / pos.sum()
        if np.all(x >= 0):
            return x
    raise AssertionError("no convergence")


def test_norm_sub_equals_its_iterative_definition():
    rng = np.random.default_rng(2)
    for _ in range(50):
        v = rng.normal(0.1, 0.3, 10)
        assert_allclose(norm_sub(v), _naive_norm_sub(v), atol=1e-12)


def test_clip_normalize():
    assert_allclose(clip_normalize([-1, 1, 3]), [0, 0.25, 0.75])
    assert_allclose(clip_normalize([-1, -2]), [0.5, 0.5])
    assert_allclose(clip_normalize([0.2, 0.8]), [0.2, 0.8])

import math

import numpy as np
import pytest

from skldp import EMEstimator, RandomizedResponse
from skldp.metrics import (
    empirical_distribution,
    kl_divergence,
    l1_distance,
    l2_distance,
    linf_distance,
    make_distribution_scorer,
    total_variation,
)

P = [0.5, 0.3, 0.2]
Q = [0.4, 0.4, 0.2]


def test_distances():
    assert l1_distance(P, Q) == pytest.approx(0.2)
    assert total_variation(P, Q) == pytest.approx(0.1)
    assert l2_distance(P, Q) == pytest.approx(math.sqrt(0.02))
    assert linf_distance(P, Q) == pytest.approx(0.1)
    assert kl_divergence(P, Q) == pytest.approx(
        0.5 * math.log(0.5 / 0.4) + 0.3 * math.log(0.3 / 0.4)
    )
    assert kl_divergence([1, 0], [0.5, 0.5]) == pytest.approx(math.log(2))
    assert kl_divergence([0.5, 0.5], [1, 0]) == math.inf


def test_distance_errors():
    with pytest.raises(ValueError, match="shape"):
        l1_distance([1, 0], [1, 0, 0])
    with pytest.raises(ValueError, match="non-negative"):
        kl_divergence([1, 0], [1.2, -0.2])
    with pytest.raises(ValueError, match="metric must be one of"):
        make_distribution_scorer("nope")


def test_empirical_distribution():
    assert np.allclose(
        empirical_distribution(["a", "b", "a", "a"], ["a", "b", "c"]), [0.75, 0.25, 0]
    )
    with pytest.raises(ValueError, match="outside the domain"):
        empirical_distribution(["z"], ["a", "b"])


def test_scorer_compares_estimate_with_held_out_raw_data():
    from sklearn.pipeline import Pipeline

    X = np.array(["a"] * 70 + ["b"] * 30, dtype=object)
    pipe = Pipeline(
        [
            ("p", RandomizedResponse(epsilon=30.0, categories=["a", "b"], random_state=0)),
            ("e", EMEstimator()),
        ]
    ).fit(X)
    scorer = make_distribution_scorer("tv")
    assert scorer(pipe, X) == pytest.approx(0.0, abs=1e-6)
    assert scorer(pipe, np.array(["a"] * 50 + ["b"] * 50, dtype=object)) == pytest.approx(
        -0.2, abs=1e-6
    )

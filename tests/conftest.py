import numpy as np
import pytest


@pytest.fixture
def seed():
    """The fixed seed of statistical tests."""
    return 20161117


def simplex_point(k, seed=0, *, interior=True):
    """A fixed random distribution over k values (all entries positive when interior)."""
    rng = np.random.default_rng(seed + k)
    p = rng.dirichlet(np.ones(k))
    if interior:
        p = 0.5 * p + 0.5 / k
    return p

import numpy as np
import pytest

from skldp.channels import Channel, LikelihoodModel


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


def hessian_diagonal(model, p):
    r"""The diagonal of the Hessian of ``model``'s mean log-likelihood at p, or None.

    :math:`-\frac1n \sum_j (w_j / (A p)_j^2) A_{jx}^2` through the model's one form of it,
    ``curvature_diagonal`` with :math:`q = w / (A p)^2` (0 where the weight is 0).
    """
    t = model.forward(np.asarray(p, dtype=float))
    w = np.asarray(model.weights, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(w > 0, w / t**2, 0.0)
    diag = model.curvature_diagonal(q)
    return None if diag is None else -diag / model.n_reports


def statistics_leaves(stats):
    """The arrays and numbers inside an estimator's accumulated statistics, in a fixed order.

    Statistics are arrays (counts, bit sums) or, for EM, likelihood models that pickle through
    ``__reduce__`` (their channel, then counts, packed reports or pattern histograms): those
    are opened recursively, so two statistics can be compared leaf by leaf with
    ``array_equal`` (channels by equality).
    """
    if stats is None or isinstance(stats, (np.ndarray, int, float, np.number, Channel)):
        return [stats]
    if isinstance(stats, (list, tuple)):
        return [leaf for s in stats for leaf in statistics_leaves(s)]
    if type(stats).__reduce__ is object.__reduce__:
        raise TypeError(f"cannot open statistics of type {type(stats).__name__}")
    _, args = stats.__reduce__()[:2]
    return [type(stats).__name__] + statistics_leaves(list(args))


def plain_statistics(stats):
    """The channel's plain statistics in an estimator's accumulated statistics of a column
    (EM keeps a likelihood model, the other estimators the counts themselves)."""
    return stats.statistics if isinstance(stats, LikelihoodModel) else stats


def assert_same_statistics(a, b):
    """Statistics equal exactly: same structure, same dtypes, same values."""
    leaves_a, leaves_b = statistics_leaves(a), statistics_leaves(b)
    assert len(leaves_a) == len(leaves_b)
    for x, y in zip(leaves_a, leaves_b, strict=True):
        if isinstance(x, np.ndarray):
            assert isinstance(y, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_array_equal(x, y)
        else:
            assert x == y


def em_step(model, p):
    """One EM step on a likelihood model: ``(p * g / sum(p * g), L(p))`` from its multipliers."""
    g, ll = model.multipliers(p)
    nxt = p * g
    return nxt / nxt.sum(), ll

"""Feldman, Nelson, Nguyen and Talwar, "Private Frequency Estimation via Projective Geometry",
ICML 2022: the checkable figures of the spec (section 2.10), from the exact variance and by
simulation.

Per-item count MSE is (1/k) sum_x E(c_x_hat - n_x)^2 over the k = 22,000 items, for fixed
input counts (the paper's metric).
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skldp.channels import ProjectiveGeometryChannel, SubsetSelectionChannel

K_ITEMS = 22_000


def _count_mse(ch, counts):
    """(1/k) sum_x Var(c_x_hat) for PGR (h = 1) with fixed input counts."""
    alpha = ch._coef[0]
    P1, P0 = ch._probs[:2]
    n = counts.sum()
    return float(np.mean(alpha**2 * (counts * P1 * (1 - P1) + (n - counts) * P0 * (1 - P0))))


@pytest.mark.parametrize(("n", "expected"), [(10_000, 272.75), (50_000, 1363.8)])
def test_single_item_mse_at_the_authors_design(n, expected):
    # the authors' q rule at eps = 5 gives q = 151, t = 3 (K = 22,953, s = 152, lambda = 1)
    ch = ProjectiveGeometryChannel(5.0, K_ITEMS, 151, 3)
    assert (ch.n_outputs, ch.hyperplane_size, ch.meet_size) == (22_953, 152, 1)
    counts = np.zeros(K_ITEMS)
    counts[0] = n
    assert_allclose(_count_mse(ch, counts), expected, atol=0.05)


def test_uniform_mse_matches_subset_selection():
    # n = 1,000 spread evenly: PGR (q = 151) 27.275, (q = 149) 27.272, SS (d = 147) 27.271
    counts = np.zeros(K_ITEMS)
    counts[:1000] = 1.0
    pgr151 = _count_mse(ProjectiveGeometryChannel(5.0, K_ITEMS, 151, 3), counts)
    pgr149 = _count_mse(ProjectiveGeometryChannel(5.0, K_ITEMS, 149, 3), counts)
    ss = SubsetSelectionChannel(5.0, K_ITEMS, 147)
    p = counts / 1000
    ss_mse = float(np.mean(1000**2 * ss.variance(p, 1000) - 1000 * p * (1 - p)))
    assert_allclose([pgr151, pgr149, ss_mse], [27.275, 27.272, 27.271], atol=2e-3)
    assert pgr149 / ss_mse - 1 < 1e-3  # "error equal to subset selection's to within 1%"


def test_single_item_mse_by_simulation(seed):
    # spec 2.6: n = 50,000 reports of one item at (151, 3): theory 1,363.8; 8 runs, each
    # an average over 22,000 items (relative spread about 1%)
    ch = ProjectiveGeometryChannel(5.0, K_ITEMS, 151, 3)
    rng = np.random.default_rng(seed)
    n = 50_000
    x = np.zeros(n, dtype=np.int64)
    truth = np.zeros(K_ITEMS)
    truth[0] = n
    mse = [
        np.mean((n * ch.unbiased(ch.statistics(ch.sample(x, rng)), n) - truth) ** 2)
        for _ in range(8)
    ]
    assert_allclose(np.mean(mse), 1363.8, rtol=0.03)

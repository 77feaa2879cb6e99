"""The attribute sampling mechanism's reports, grouped by attribute once per read.

A report is ``(J, Y)``: every read (checking, splitting, counting, scoring) needs the rows of
each attribute, and they come from one stable sort of the index column
(``skldp._domain.group_positions``), not from one boolean mask per attribute per step.
"""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import skldp.channels._multidimensional as multidimensional
from skldp import AttributeSampling, EmpiricalEstimator, MultidimensionalEstimator, RAPPOR
from skldp._domain import group_positions

CATS = [["a", "b", "c"], [0, 1], ["x", "y", "z", "w"]]


@pytest.mark.parametrize("n_groups", [1, 3, 70_000])
def test_group_positions_are_the_positions_of_each_label(n_groups):
    rng = np.random.default_rng(0)
    labels = rng.integers(0, min(n_groups, 5), 1000)  # some groups stay empty
    labels[:3] = n_groups - 1
    groups = group_positions(labels, n_groups)
    assert len(groups) == n_groups
    for g in {0, 1, 2, 3, 4, n_groups - 1} & set(range(n_groups)):
        assert_array_equal(groups[g], np.flatnonzero(labels == g))
    assert sum(group.size for group in groups) == labels.size
    assert group_positions(np.array([], dtype=np.int64), 2)[1].size == 0


@pytest.fixture
def sampled():
    X = [["a", 0, "x"], ["b", 1, "y"], ["c", 0, "w"], ["a", 1, "z"]] * 300
    privatizer = AttributeSampling(
        privatizer=RAPPOR(), epsilon=2.0, categories=CATS, random_state=0
    ).fit(X)
    return privatizer.mechanism_, privatizer.transform(X)


def test_split_returns_each_attributes_rows_and_report_columns(sampled):
    mechanism, reports = sampled
    values = np.asarray(reports)
    blocks, rows = mechanism.split(values, return_rows=True)
    for j, (ch, block, r) in enumerate(zip(mechanism.channels, blocks, rows, strict=True)):
        assert_array_equal(r, np.flatnonzero(values[:, 0] == j))
        assert_array_equal(block, values[r, 1 : 1 + ch.report_width])
    for block, again in zip(blocks, mechanism.split(values), strict=True):
        assert_array_equal(block, again)
    stats = mechanism.statistics(values)
    assert_array_equal(stats[:3], [r.size for r in rows])


def test_each_read_groups_the_reports_once(sampled, monkeypatch):
    # The old code masked the index once per attribute in check_reports and again in the
    # split (and in score_samples): three reads of the index per attribute for one fit.
    mechanism, reports = sampled
    calls = []

    def counted(labels, n_groups):
        calls.append(n_groups)
        return group_positions(labels, n_groups)

    monkeypatch.setattr(multidimensional, "group_positions", counted)
    mechanism.split(np.asarray(reports))
    assert calls == [3]
    calls.clear()
    est = MultidimensionalEstimator(estimator=EmpiricalEstimator()).fit(reports)
    assert calls == [3]
    calls.clear()
    scores = est.score_samples(reports)
    assert calls == [3] and scores.shape == (len(reports),) and np.all(np.isfinite(scores))
    calls.clear()
    mechanism.sample(np.zeros((10, 3), dtype=np.int64), np.random.default_rng(0))
    assert calls == [3]

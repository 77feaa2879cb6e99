"""Estimators reject report arrays that no channel could have made, with errors naming why.

These are the inputs of scikit-learn's checks (empty data, NaN, complex, negative, sparse of
the wrong width); before, each got "these reports do not carry the channel" or a message
about the width, which does not say what is wrong.
"""

import numpy as np
import pytest
from scipy import sparse

from skldp import EMEstimator, EmpiricalEstimator, ProjectedEstimator
from skldp.channels import RandomizedResponseChannel

CHANNEL = RandomizedResponseChannel(1.0, 4)
ESTIMATORS = [EmpiricalEstimator, ProjectedEstimator, EMEstimator]


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.parametrize("channel", [CHANNEL, None], ids=["channel", "no-channel"])
@pytest.mark.parametrize(
    "X, match",
    [
        (np.empty((5, 0)), r"0 feature\(s\) \(shape=\(5, 0\)\)"),
        (np.array([[0.0], [np.nan]]), "NaN or infinity"),
        (np.array([[0.0], [np.inf]]), "NaN or infinity"),
        (np.array([[0], [1j]]), "Complex data not supported"),
        (sparse.csr_matrix(np.array([[0.0], [np.nan]])), "sparse reports contain NaN"),
    ],
    ids=["no-columns", "nan", "inf", "complex", "sparse-nan"],
)
def test_bad_reports_are_named(Estimator, channel, X, match):
    with pytest.raises(ValueError, match=match):
        Estimator(channel=channel).fit(X)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_bad_reports_are_named_after_fit(Estimator):
    est = Estimator(channel=CHANNEL).fit(np.array([[0], [1], [2], [3], [0]]))
    with pytest.raises(ValueError, match="NaN or infinity"):
        est.score_samples(np.array([[0.0], [np.nan]]))
    with pytest.raises(ValueError, match="Complex data not supported"):
        est.predict_proba(np.array([[0], [1j]]))
    with pytest.raises(ValueError, match="zero reports"):
        Estimator(channel=CHANNEL).fit(np.empty((0, 1), dtype=int))


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_negative_reports_name_the_channel_range(Estimator):
    with pytest.raises(ValueError, match=r"Negative values in data.*\[0, 4\); got -2 in column 0"):
        Estimator(channel=CHANNEL).fit(np.array([[0], [-2]]))
    # Reports of the wrong width: no channel to name, the general range.
    with pytest.raises(ValueError, match=r"Negative values in data.*got -1 in column 1"):
        Estimator(channel=CHANNEL).fit(np.array([[0, 1], [2, -1]]))


def test_sparse_reports_of_the_wrong_width_say_sparse():
    X = sparse.csr_matrix(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"sparse reports must have 1 columns.*\(3, 2\)"):
        EmpiricalEstimator(channel=CHANNEL).fit(X)


def test_one_report_is_enough():
    est = ProjectedEstimator(channel=CHANNEL).fit(np.array([[2]]))
    assert est.n_reports_ == 1
    assert est.distribution_.shape == (4,)

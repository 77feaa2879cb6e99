"""Clone and pickle of fitted estimators (scikit-learn's checks run in tests/test_common.py)."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone

from skldp import (
    EMEstimator,
    EmpiricalEstimator,
    OneBitHadamardResponse,
    ProjectedEstimator,
    RandomizedResponse,
    SparseEstimator,
)

ESTIMATORS = [
    EmpiricalEstimator(),
    ProjectedEstimator(method="norm-sub"),
    ProjectedEstimator(method="threshold"),
    EMEstimator(tol=1e-8, init="uniform"),
    SparseEstimator(sparsity=2),
]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_clone_and_pickle_of_a_fitted_estimator(estimator):
    cls = RandomizedResponse
    if isinstance(estimator, SparseEstimator):  # it reads compressive reports only
        cls = OneBitHadamardResponse
    rr = cls(epsilon=2.0, categories=[0, 1, 2, 3], random_state=0)
    x = np.random.default_rng(1).choice(4, size=3000, p=[0.5, 0.3, 0.2, 0.0])
    reports = rr.fit_transform(x)
    fitted = clone(estimator).fit(reports)
    again = pickle.loads(pickle.dumps(fitted))
    assert_array_equal(again.distribution_, fitted.distribution_)
    assert_array_equal(again.categories_, fitted.categories_)
    # a clone is unfitted, with the same parameters, and refits to the same numbers
    fresh = clone(fitted)
    assert not hasattr(fresh, "distribution_")
    assert fresh.get_params() == estimator.get_params()
    assert_array_equal(fresh.fit(reports).distribution_, fitted.distribution_)

"""scikit-learn's data-free checks on every distribution estimator, and clone/pickle of fitted ones.

Estimators read privatized reports, not a numeric X, so the data-driven checks of
``check_estimator`` do not apply to them; these do.
"""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.utils.estimator_checks import (
    check_do_not_raise_errors_in_init_or_set_params,
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
)

import skldp
from skldp import (
    EMEstimator,
    EmpiricalEstimator,
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
    skldp.PersonalizedEstimator(),
    skldp.CandidateEstimator(candidates=["a", "b"]),
]

DATA_FREE_CHECKS = [
    check_no_attributes_set_in_init,
    check_get_params_invariance,
    check_parameters_default_constructible,
    check_set_params,
    check_do_not_raise_errors_in_init_or_set_params,
]


def test_every_public_estimator_is_checked():
    public = {name for name in skldp.__all__ if name.endswith("Estimator")}
    assert public <= {type(e).__name__ for e in ESTIMATORS}


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
@pytest.mark.parametrize("check", DATA_FREE_CHECKS, ids=lambda c: c.__name__)
def test_data_free_checks(estimator, check):
    check(type(estimator).__name__, clone(estimator))


@pytest.mark.parametrize("estimator", ESTIMATORS[:5], ids=repr)
def test_clone_and_pickle_of_a_fitted_estimator(estimator):
    rr = RandomizedResponse(epsilon=2.0, categories=[0, 1, 2, 3], random_state=0)
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

import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import (
    check_do_not_raise_errors_in_init_or_set_params,
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
    parametrize_with_checks,
)

from tests.instances_open_alphabet import EXPECTED_FAILED_CHECKS, INSTANCES, SPECIAL_INSTANCES


@parametrize_with_checks(INSTANCES, expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", SPECIAL_INSTANCES, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize(
    "check",
    [
        check_no_attributes_set_in_init,
        check_get_params_invariance,
        check_parameters_default_constructible,
        check_set_params,
        check_do_not_raise_errors_in_init_or_set_params,
    ],
    ids=lambda c: c.__name__,
)
def test_special_instances_data_free_checks(estimator, check):
    check(type(estimator).__name__, clone(estimator))

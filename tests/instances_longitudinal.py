"""Configured instances of the memoized (longitudinal) privatizers, for the common
scikit-learn checks (``tests/test_common.py``).

They read two columns, the value and the person's 16-byte secret key, so every check that
fits on the checks' own numeric data fails with an error naming the missing key column; those
checks are strict expected failures here, with that reason. The API checks (clone,
parameters, no attribute set in ``__init__``, ...) run as for every privatizer. The trust
tests of ``tests/registry.py`` feed one column of categories, which these privatizers refuse,
so ``REGISTRY`` is empty: their own tests are ``tests/privatizers/test_longitudinal.py`` and
``tests/channels/test_longitudinal.py``.
"""

from skldp.privatizers import LongitudinalOUE, LongitudinalRAPPOR, LongitudinalRR

INSTANCES = [
    LongitudinalRR(epsilon_infinity=2.0, epsilon_1=0.5, random_state=0),
    LongitudinalOUE(epsilon_infinity=2.0, epsilon_1=1.0, random_state=0),
    LongitudinalRAPPOR(f=0.5, p=0.5, q=0.75, random_state=0),
]

_KEYS = "reads two columns (value, 16-byte person key); the check's numeric data have no keys"
_ON_CHECK_DATA = (
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_dtype_object",
    "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_1sample",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_fit_score_takes_y",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input",
    "check_transformer_data_not_an_array",
    "check_transformer_general",
)

#: Per class: the checks on the checks' data fail (no key column); check_fit1d passes (1-D
#: data are one column, refused with an error, as the check expects).
EXPECTED_FAILED_CHECKS = {
    type(inst).__name__: {**dict.fromkeys(_ON_CHECK_DATA, _KEYS), "check_fit1d": None}
    for inst in INSTANCES
}

#: The trust tests feed one column of categories: nothing here fits them.
REGISTRY = []

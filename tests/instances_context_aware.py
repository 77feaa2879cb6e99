"""Configured privatizers of the context-aware issue for the common scikit-learn checks.

The checks feed random numeric data and no domain, so these instances infer their domain (as
the common RandomizedResponse instance does); the sensitive set is a picklable rule on the
category, and the partition is contiguous (``n_blocks``), so both fit any inferred domain.
"""

from skldp import (
    BinaryRandomizedResponse,
    BlockHadamardResponse,
    HadamardResponse,
    HighLowHadamardResponse,
)


class SensitiveRule:
    """A fixed, picklable rule marking about two thirds of numeric categories sensitive.

    A class rather than a function so that its repr, and so the test ids, are stable.
    """

    def __call__(self, category):
        return int(abs(float(category)) * 7919) % 3 != 0

    def __repr__(self):
        return "SensitiveRule()"


INSTANCES = [
    HadamardResponse(epsilon=1.0, random_state=0),
    BlockHadamardResponse(epsilon=1.0, n_blocks=2, random_state=0),
    HighLowHadamardResponse(epsilon=1.0, sensitive=SensitiveRule(), random_state=0),
    BinaryRandomizedResponse(epsilon_01=0.5, epsilon_10=2.0, random_state=0),
]

_TWO = "the checks' random data have more than two categories; this mechanism is binary"

#: Checks each instance is expected to fail, by class name, with the reason (None: a check the
#: privatizers commonly fail that this one passes).
EXPECTED_FAILED_CHECKS = {
    "BinaryRandomizedResponse": {
        name: _TWO
        for name in (
            "check_estimators_overwrite_params",
            "check_dont_overwrite_parameters",
            "check_estimators_fit_returns_self",
            "check_readonly_memmap_input",
            "check_n_features_in_after_fitting",
            "check_positive_only_tag_during_fit",
            "check_estimators_dtypes",
            "check_f_contiguous_array_estimator",
            "check_transformer_data_not_an_array",
            "check_transformer_general",
            "check_fit2d_1feature",
            "check_dict_unchanged",
            "check_fit_idempotent",
            "check_fit_check_is_fitted",
            "check_n_features_in",
            "check_positive_only_tag_during_fit",
        )
    }
    # The 1-D check expects an error, and gets one: its data have more than two categories.
    | {"check_fit1d": None},
}

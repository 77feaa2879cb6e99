"""Configured open-alphabet instances for the common scikit-learn checks.

``INSTANCES`` are privatizers run through every check of
:func:`sklearn.utils.estimator_checks.parametrize_with_checks`; ``EXPECTED_FAILED_CHECKS``
are the failures they share with the other privatizers. ``SPECIAL_INSTANCES`` take privatized
reports, not a numeric X; ``tests/test_common.py`` checks CandidateEstimator with a channel.
"""

from skldp import CandidateEstimator, HashedRAPPOR, HashedRR

INSTANCES = [
    HashedRR(epsilon=1.0, n_buckets=4, n_cohorts=2, random_state=0),
    HashedRAPPOR(epsilon=1.0, n_bits=8, n_hashes=2, n_cohorts=3, random_state=0),
]

EXPECTED_FAILED_CHECKS = {
    "check_methods_subset_invariance": "noise is drawn per call, in row order",
    "check_methods_sample_order_invariance": "noise is drawn per call, in row order",
    "check_fit1d": "a 1-D input is one column of values",
    "check_fit2d_predict1d": "a 1-D input is one column of values",
}

SPECIAL_INSTANCES = [
    CandidateEstimator(candidates=["a", "b", "c"]),
    CandidateEstimator(candidates=["a", "b"], method="em", tol=1e-8),
]

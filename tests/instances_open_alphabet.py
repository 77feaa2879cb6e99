"""Configured open-alphabet privatizers for the common scikit-learn checks (tests/test_common.py).

They pass :func:`sklearn.utils.estimator_checks.check_estimator` with the same expected
failures as the other privatizers: the two invariance checks (noise is drawn per call, in row
order) and, as for every privatizer here, ``check_fit1d``/``check_fit2d_predict1d`` (a 1-D input
is read as one column).
"""

from skldp import HashedRAPPOR, HashedRR

INSTANCES = [
    HashedRR(epsilon=1.0, n_buckets=4, n_cohorts=2, random_state=0),
    HashedRAPPOR(epsilon=1.0, n_bits=8, n_hashes=2, n_cohorts=3, random_state=0),
]

"""Configured instances of the compressive family for the common scikit-learn checks.

The checks feed random numeric data and no domain, so these privatizers infer their domain
(with a PrivacyLeakWarning, as the common RandomizedResponse instance does). Apart from the
checks every privatizer fails (noise is drawn per call in row order; 1-D input is accepted as
one column), they pass scikit-learn's checks.
"""

from skldp import (
    OneBitCompressive,
    OneBitHadamardResponse,
    RecursiveCompressive,
    SparseEstimator,
    SymmetricCompressive,
)

#: Privatizers (transformers) of the compressive family.
INSTANCES = [
    OneBitCompressive(epsilon=1.0, n_measurements=8, random_state=0),
    SymmetricCompressive(epsilon=1.0, n_measurements=8, random_state=0),
    RecursiveCompressive(epsilon=2.0, n_measurements=8, random_state=0),
    OneBitHadamardResponse(epsilon=1.0, random_state=0),
]

#: The family's estimator (it reads reports through their channel, like the other estimators).
ESTIMATORS = [SparseEstimator(sparsity=2)]

#: Checks each instance is expected to fail, by class name, with the reason (the same as for
#: RandomizedResponse).
EXPECTED_FAILED_CHECKS = {
    type(inst).__name__: {
        "check_methods_sample_order_invariance": "noise is drawn per call, in row order",
        "check_methods_subset_invariance": "noise is drawn per call, in row order",
        "check_fit1d": "1-D input is read as one column of values",
        "check_fit2d_predict1d": "1-D input is read as one column of values",
    }
    for inst in INSTANCES
}

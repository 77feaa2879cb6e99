"""Configured instances of the compressive family, for the project-wide common tests."""

from skldp import (
    OneBitCompressive,
    OneBitHadamardResponse,
    RecursiveCompressive,
    SparseEstimator,
    SymmetricCompressive,
)

#: Privatizers (transformers) of the compressive family, small enough for scikit-learn's checks.
INSTANCES = [
    OneBitCompressive(epsilon=1.0, n_measurements=8, random_state=0),
    SymmetricCompressive(epsilon=1.0, n_measurements=8, random_state=0),
    RecursiveCompressive(epsilon=2.0, n_measurements=8, random_state=0),
    OneBitHadamardResponse(epsilon=1.0, random_state=0),
]

#: The estimator of the family (reads reports through their channel).
ESTIMATORS = [SparseEstimator(sparsity=2)]

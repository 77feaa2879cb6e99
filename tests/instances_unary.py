"""Configured instances of the unary-encoding and utility-optimized classes, for the common
scikit-learn estimator checks (``parametrize_with_checks``).

``INSTANCES`` pass every generic check (with the same expected failures as
RandomizedResponse: the two invariance checks, because noise is drawn per call in row order,
and ``check_fit1d``/``check_fit2d_predict1d``, because a 1-D input is one column). They
infer the domain from the checks' data, so they warn with PrivacyLeakWarning.

``SPECIAL_INSTANCES`` fix their domain: their ``sensitive=`` values must lie in it (a value
outside it is an error, not a silent drop), and PersonalizedULDP reads exactly two columns
(value, tag), while the checks feed random numeric matrices of other shapes.
``tests/test_common.py`` runs the full checks on the privatizers among them, with the checks
on the checks' own data as strict expected failures (``SPECIAL_XFAIL`` there); the estimator
among them is checked there with a channel.
"""

from skldp import (
    RAPPOR,
    OptimizedUnaryEncoding,
    PersonalizedEstimator,
    PersonalizedULDP,
    UtilityOptimizedRAPPOR,
    UtilityOptimizedRR,
)

INSTANCES = [
    RAPPOR(epsilon=1.0, random_state=0),
    RAPPOR(epsilon=1.0, theta=0.3, random_state=0),
    OptimizedUnaryEncoding(epsilon=1.0, random_state=0),
]

SPECIAL_INSTANCES = [
    UtilityOptimizedRR(epsilon=1.0, sensitive=[0, 1], categories=[0, 1, 2, 3], random_state=0),
    UtilityOptimizedRAPPOR(epsilon=1.0, sensitive=[0, 1], categories=[0, 1, 2, 3], random_state=0),
    PersonalizedULDP(
        epsilon=1.0, sensitive=[0], tags=["home", "work"], categories=[0, 1, 2, 3], random_state=0
    ),
    PersonalizedEstimator(),
]

EXPECTED_FAILED_CHECKS = {
    "check_methods_subset_invariance": "noise is drawn per call, in row order",
    "check_methods_sample_order_invariance": "noise is drawn per call, in row order",
    "check_fit1d": "a 1-D input is one column of categorical values",
    "check_fit2d_predict1d": "a 1-D input is one column of categorical values",
}

#: What the trust tests (tests/registry.py) run over: the generic instances plus uRR and uRAP
#: with their sensitive sets inside a public domain (PersonalizedULDP reads two columns and
#: has its own tests).
REGISTRY = [*INSTANCES, *SPECIAL_INSTANCES[:2]]

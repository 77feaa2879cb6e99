"""Configured instances of the multidimensional privatizers (budget splitting, attribute
sampling), for the common scikit-learn checks (``tests/test_common.py``) and the trust tests
(``tests/registry.py``, which gives each a one-column public domain)."""

from skldp import AttributeSampling, BudgetSplitting, OptimizedUnaryEncoding

INSTANCES = [
    BudgetSplitting(epsilon=1.0, random_state=0),
    AttributeSampling(epsilon=1.0, random_state=0),
    AttributeSampling(OptimizedUnaryEncoding(), epsilon=2.0, random_state=0),
]

EXPECTED_FAILED_CHECKS = {
    "check_estimators_pickle": "an unpickled privatizer draws fresh noise, never its source's",
    "check_methods_subset_invariance": "noise is drawn per call, in row order",
    "check_methods_sample_order_invariance": "noise is drawn per call, in row order",
    "check_fit1d": "a 1-D input is one column of categorical values",
    "check_fit2d_predict1d": "a 1-D input is one column of categorical values",
}

#: The trust tests (``tests/registry.py``) read a privatizer's reports as the blocks of its
#: ``channels_``, one per column. Attribute sampling's reports are not: an attribute index,
#: then the report of one attribute's channel. So only budget splitting is registered there;
#: attribute sampling's seeds, Parquet round trip, exact channel and estimates are checked in
#: tests/privatizers/test_multidimensional.py.
REGISTRY = [BudgetSplitting(epsilon=1.0, random_state=0)]

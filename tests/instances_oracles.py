"""Configured instances of local hashing and subset selection, for the common scikit-learn
checks (``tests/test_common.py``) and the trust tests (``tests/registry.py``)."""

from skldp import LocalHashing, SubsetSelection

INSTANCES = [
    LocalHashing(epsilon=1.0, random_state=0),
    LocalHashing(epsilon=1.0, n_buckets=2, random_state=0),
    SubsetSelection(epsilon=1.0, random_state=0),
]

EXPECTED_FAILED_CHECKS = {
    "check_estimators_pickle": "an unpickled privatizer draws fresh noise, never its source's",
    "check_methods_subset_invariance": "noise is drawn per call, in row order",
    "check_methods_sample_order_invariance": "noise is drawn per call, in row order",
    "check_fit1d": "a 1-D input is one column of categorical values",
    "check_fit2d_predict1d": "a 1-D input is one column of categorical values",
}

#: What the trust tests run over: the instances above with a public domain set by the registry,
#: plus subset selection with an explicit d.
REGISTRY = [*INSTANCES, SubsetSelection(epsilon=2.0, subset_size=2, categories=list(range(6)))]

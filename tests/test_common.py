"""scikit-learn's estimator checks on every public privatizer and estimator, run once, here.

Every configured instance of the test registry (``tests/registry.py``: its cases with a
``checks`` role, some with a fixed domain, and its estimators with a channel) goes through every
check of :func:`sklearn.utils.estimator_checks.parametrize_with_checks`. A check an instance is
expected to fail is a strict expected failure with its reason (``xfail_strict=True``): if it
starts to pass, the test fails and the entry must go. The reasons are listed in the user
guide (``docs/user_guide/estimators.rst``, section ``sklearn_checks``).
"""

import subprocess
import sys
import warnings

from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

import skldp
from skldp.base import BaseDistributionEstimator, BasePrivatizer
from skldp._registry import MECHANISMS
from skldp.exceptions import PrivacyLeakWarning
from tests import registry


# -- reasons -------------------------------------------------------------------------------------
NOISE = "noise is drawn per call in row order, so a subset or a reordering gets other draws"
ONE_D = "a 1-D input is one column of categories, as users expect, not an error"
WIDTH = (
    "the check fits reports of several columns (or of another width); channel= fixes the "
    "report columns, and reports of another width are refused with an error naming the shape"
)
FIXED_DOMAIN = (
    "the public domain is fixed (the sensitive values must lie in it), so the check's random "
    "values fall outside it or come in several columns: refused with an error naming them"
)
KEYS = "reads two columns (value, 16-byte person key); the check's numeric data have no keys"
TWO_COLUMNS = "reads exactly two columns (value, tag); the check's data have other widths"

PICKLE = (
    "an unpickled privatizer never resumes its source's noise stream (two loads of one pickle "
    "would release the same noise): it draws fresh noise, see docs/user_guide/seeds.rst"
)

#: Checks every privatizer is expected to fail, with the reason.
PRIVATIZER_XFAIL = {
    "check_estimators_pickle": PICKLE,
    "check_methods_subset_invariance": NOISE,
    "check_methods_sample_order_invariance": NOISE,
    "check_fit1d": ONE_D,
    "check_fit2d_predict1d": ONE_D,
}

# Checks that fit or predict on the check's own random data, of 1 to 10 columns: an estimator
# given a one-column channel, and a privatizer with a fixed domain, refuse most of them.
_CHECK_DATA = (
    "check_fit_score_takes_y",
    "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self",
    "check_readonly_memmap_input",
    "check_n_features_in_after_fitting",
    "check_estimators_dtypes",
    "check_dtype_object",
    "check_pipeline_consistency",
    "check_estimators_nan_inf",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_fit2d_1sample",
    "check_dict_unchanged",
    "check_fit_idempotent",
    "check_fit_check_is_fitted",
    "check_n_features_in",
    "check_fit2d_predict1d",
)

#: Every estimator: the checks on several columns, and the sparse-tag check (which fits a
#: sparse matrix of several columns).
ESTIMATOR_XFAIL = dict.fromkeys((*_CHECK_DATA, "check_estimator_sparse_tag"), WIDTH)

_FIXED_DOMAIN_CHECKS = (
    *_CHECK_DATA,
    "check_positive_only_tag_during_fit",
    "check_transformer_data_not_an_array",
    "check_transformer_general",
)

#: The checks on the checks' own data, which a memoized privatizer refuses: it reads the value
#: and the person's secret key.
_KEYED_CHECKS = (
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

#: The checks' data that cases refuse by design (``checks=`` in tests/registry.py), with the
#: reason. check_fit1d passes for them: the 1-D data fall outside the domain, an error as the
#: check expects.
KIND_XFAIL = {
    "inferred": {},
    "fixed-domain": {**dict.fromkeys(_FIXED_DOMAIN_CHECKS, FIXED_DOMAIN), "check_fit1d": None},
    "person-keys": {**dict.fromkeys(_KEYED_CHECKS, KEYS), "check_fit1d": None},
    "two-columns": {
        **dict.fromkeys((*_FIXED_DOMAIN_CHECKS, "check_fit2d_1feature"), TWO_COLUMNS),
        "check_fit1d": None,
    },
}

CHECKED = [inst for inst, _, _ in registry.CHECKED] + registry.CHECKED_ESTIMATORS
_EXTRA = {id(inst): {**KIND_XFAIL[kind], **extra} for inst, kind, extra in registry.CHECKED}


def _xfail(estimator):
    """The checks ``estimator`` is expected to fail, with the reason."""
    if isinstance(estimator, BaseDistributionEstimator):
        return ESTIMATOR_XFAIL
    expected = {**PRIVATIZER_XFAIL, **_EXTRA[id(estimator)]}
    return {name: reason for name, reason in expected.items() if reason is not None}


@parametrize_with_checks(CHECKED, expected_failed_checks=_xfail, xfail_strict=True)
def test_sklearn_compatible(estimator, check):
    # The checks fit privatizers on random numeric data without a domain: the inferred
    # domain warns. EM on the checks' tiny samples may stop at max_iter.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_every_public_class_is_checked():
    public = {
        name
        for name in skldp.__all__
        if isinstance(getattr(skldp, name), type)
        and issubclass(getattr(skldp, name), (BasePrivatizer, BaseDistributionEstimator))
    }
    # and every registered mechanism, also one registered from outside the package
    public |= {m.class_name for m in MECHANISMS.values() if m.available}
    checked = {type(est).__name__ for est in CHECKED}
    assert public <= checked, f"public classes missing from the checks: {sorted(public - checked)}"


def test_import_does_not_load_edge_dependencies():
    code = (
        "import sys, skldp; "
        "bad = [m for m in ('matplotlib', 'tqdm', 'dask', 'distributed') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""

"""scikit-learn's estimator checks on every public privatizer and estimator, run once, here.

Every configured instance (the privatizers of ``tests/instances_*.py``, their
``SPECIAL_INSTANCES`` with a fixed domain, and the estimators below) goes through every check
of :func:`sklearn.utils.estimator_checks.parametrize_with_checks`. A check an instance is
expected to fail is a strict expected failure with its reason (``xfail_strict=True``): if it
starts to pass, the test fails and the entry must go. The reasons are listed in the user
guide (``docs/user_guide/estimators.rst``, section ``sklearn_checks``).
"""

import glob
import importlib
import os
import subprocess
import sys
import warnings

from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

import skldp
from skldp import (
    CandidateEstimator,
    EMEstimator,
    EmpiricalEstimator,
    PersonalizedEstimator,
    ProjectedEstimator,
    RandomizedResponse,
    SparseEstimator,
)
from skldp._base import BaseDistributionEstimator, BasePrivatizer
from skldp.channels import (
    HashedRRChannel,
    OneBitHadamardChannel,
    PersonalizedChannel,
    RandomizedResponseChannel,
)
from skldp.exceptions import PrivacyLeakWarning

_HERE = os.path.dirname(__file__)


def _modules():
    for path in sorted(glob.glob(os.path.join(_HERE, "instances_*.py"))):
        yield importlib.import_module(f"tests.{os.path.basename(path)[:-3]}")


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

#: Privatizers with a fixed public domain (SPECIAL_INSTANCES), by class name. check_fit1d
#: passes for them: the 1-D data fall outside the domain, an error as the check expects.
SPECIAL_XFAIL = {
    "UtilityOptimizedRR": {
        **dict.fromkeys(_FIXED_DOMAIN_CHECKS, FIXED_DOMAIN),
        "check_fit1d": None,
    },
    "UtilityOptimizedRAPPOR": {
        **dict.fromkeys(_FIXED_DOMAIN_CHECKS, FIXED_DOMAIN),
        "check_fit1d": None,
    },
    "PersonalizedULDP": {
        **dict.fromkeys((*_FIXED_DOMAIN_CHECKS, "check_fit2d_1feature"), TWO_COLUMNS),
        "check_fit1d": None,
    },
}

# -- instances ---------------------------------------------------------------------------------
_RR = RandomizedResponseChannel(1.0, 64)

#: Estimators, each with a one-column channel whose symbols cover the checks' integer data.
ESTIMATORS = [
    EmpiricalEstimator(channel=_RR),
    ProjectedEstimator(method="norm-sub", channel=_RR),
    ProjectedEstimator(method="threshold", channel=_RR),
    EMEstimator(tol=1e-8, init="uniform", channel=_RR),
    SparseEstimator(sparsity=2, channel=OneBitHadamardChannel(1.0, 32)),
    PersonalizedEstimator(channel=PersonalizedChannel.from_base(1.0, 40, [0, 1], 4)),
    CandidateEstimator(candidates=["a", "b"], channel=HashedRRChannel(1.0, 16, 4)),
]


def _privatizers():
    found = [(RandomizedResponse(epsilon=1.0, random_state=0), {})]
    for module in _modules():
        per_class = {}
        for name, value in getattr(module, "EXPECTED_FAILED_CHECKS", {}).items():
            # Either {class name: {check: reason}} or {check: reason} for every instance.
            if isinstance(value, dict):
                per_class.setdefault(name, {}).update(value)
            else:
                per_class.setdefault(None, {})[name] = value
        for inst in getattr(module, "INSTANCES", []):
            if isinstance(inst, BasePrivatizer):
                extra = {**per_class.get(None, {}), **per_class.get(type(inst).__name__, {})}
                found.append((inst, extra))
        for inst in getattr(module, "SPECIAL_INSTANCES", []):
            if isinstance(inst, BasePrivatizer):
                found.append((inst, SPECIAL_XFAIL[type(inst).__name__]))
    return found


_PRIVATIZERS = _privatizers()
CHECKED = [inst for inst, _ in _PRIVATIZERS] + ESTIMATORS
_EXTRA = {id(inst): extra for inst, extra in _PRIVATIZERS}


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

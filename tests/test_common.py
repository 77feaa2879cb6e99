"""scikit-learn's estimator checks on every privatizer, and import hygiene."""

import glob
import importlib
import os
import subprocess
import sys
import warnings

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import skldp
from skldp import RandomizedResponse
from skldp.exceptions import PrivacyLeakWarning

_HERE = os.path.dirname(__file__)


def _instances():
    found = [RandomizedResponse(epsilon=1.0, random_state=0)]
    expected = {}
    for path in sorted(glob.glob(os.path.join(_HERE, "instances_*.py"))):
        module = importlib.import_module(f"tests.{os.path.basename(path)[:-3]}")
        found.extend(getattr(module, "INSTANCES", []))
        # Either {class name: {check: reason}} or {check: reason} for the module's instances.
        for name, value in getattr(module, "EXPECTED_FAILED_CHECKS", {}).items():
            if isinstance(value, dict):
                expected.setdefault(name, {}).update(value)
            else:
                for inst in getattr(module, "INSTANCES", []):
                    expected.setdefault(type(inst).__name__, {})[name] = value
    return found, expected


INSTANCES, _EXPECTED = _instances()

_NOISE = "noise is drawn per call in row order, so a subset or a reordering gets other draws"
_PICKLE = (
    "an unpickled privatizer never resumes its source's noise stream (two loads of one pickle "
    "would release the same noise): it draws fresh noise, see docs/user_guide/seeds.rst"
)
_ONE_D = "privatizers take a 1-D array or Series as one column of categories, as users expect"


def _xfail(estimator):
    return {
        "check_methods_subset_invariance": _NOISE,
        "check_methods_sample_order_invariance": _NOISE,
        "check_estimators_pickle": _PICKLE,
        "check_fit1d": _ONE_D,
        "check_fit2d_predict1d": _ONE_D,
        **_EXPECTED.get(type(estimator).__name__, {}),
    }


@parametrize_with_checks(INSTANCES, expected_failed_checks=_xfail)
def test_sklearn_compatible(estimator, check):
    # The checks fit on random numeric data without a domain: the inferred domain warns.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)


def test_every_public_privatizer_is_checked():
    from skldp._base import BasePrivatizer

    public = {
        name
        for name in skldp.__all__
        if isinstance(getattr(skldp, name), type) and issubclass(getattr(skldp, name), BasePrivatizer)
    }
    # SPECIAL_INSTANCES (sensitive sets inside a fixed domain, two-column input) run the
    # data-free checks in their own modules (tests/test_common_*.py).
    special = []
    for path in glob.glob(os.path.join(_HERE, "instances_*.py")):
        module = importlib.import_module(f"tests.{os.path.basename(path)[:-3]}")
        special.extend(getattr(module, "SPECIAL_INSTANCES", []))
    checked = {type(est).__name__ for est in [*INSTANCES, *special]}
    assert public <= checked, f"privatizers missing from the common checks: {sorted(public - checked)}"


def test_import_does_not_load_edge_dependencies():
    code = (
        "import sys, skldp; "
        "bad = [m for m in ('matplotlib', 'tqdm', 'dask', 'distributed') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""

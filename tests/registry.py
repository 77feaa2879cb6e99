"""The registry of public privatizers and estimators that the trust tests run over.

The foundation's mechanisms are listed here; the other mechanisms come from the helper-provided
modules ``tests/instances_*.py``, each with a module-level list ``INSTANCES`` of configured,
unfitted instances (privatizers with a small public domain in ``categories``, and
estimators), and optionally a tuple ``SIMPLEX_ESTIMATORS`` of estimator classes whose estimate
is promised to be a distribution. A module that fails to import fails the suite.
"""

import glob
import importlib
import inspect
import os

from sklearn.base import clone

from skldp import EMEstimator, EmpiricalEstimator, ProjectedEstimator, RandomizedResponse
from skldp._base import BaseDistributionEstimator, BasePrivatizer

_HERE = os.path.dirname(os.path.abspath(__file__))

#: Configured privatizers (unfitted, one column, a small public domain in ``categories``).
PRIVATIZERS = [
    RandomizedResponse(epsilon=1.0, categories=["a", "b", "c"]),
    RandomizedResponse(epsilon=0.5, categories=[0, 1]),
    RandomizedResponse(epsilon=4.0, categories=list(range(10))),
]

#: Estimators (unfitted). A test skips a pair whose estimator refuses the mechanism's reports
#: with a TypeError or NotImplementedError at fit.
ESTIMATORS = [
    EmpiricalEstimator(),
    ProjectedEstimator(),
    ProjectedEstimator(method="clip"),
    EMEstimator(),
]

#: Estimators whose ``distribution_`` is promised to lie on the simplex.
SIMPLEX_ESTIMATORS = (ProjectedEstimator, EMEstimator)


def _helper_modules():
    for path in sorted(glob.glob(os.path.join(_HERE, "instances_*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        # No ImportError is swallowed: a broken instances module must fail the suite, not
        # silently drop its mechanisms from the trust tests.
        yield importlib.import_module(f"tests.{name}")


def _with_domain(privatizer):
    """A registry copy with a public domain: the instance itself, or one with categories set.

    ``INSTANCES`` made for scikit-learn's checks infer their domain; here the first small
    integer domain that the mechanism accepts (8 values, else 2) is set explicitly.
    """
    if getattr(privatizer, "categories", None) is not None:
        return privatizer
    for k in (8, 2):
        candidate = clone(privatizer).set_params(categories=list(range(k)))
        try:
            clone(candidate).fit([[i] for i in range(k)])
        except ValueError:
            continue
        return candidate
    return None


for _module in _helper_modules():
    SIMPLEX_ESTIMATORS += tuple(getattr(_module, "SIMPLEX_ESTIMATORS", ()))
    for _inst in getattr(_module, "REGISTRY", getattr(_module, "INSTANCES", [])):
        if isinstance(_inst, BasePrivatizer):
            _inst = _with_domain(_inst)
            if _inst is not None:
                PRIVATIZERS.append(_inst)
        elif isinstance(_inst, BaseDistributionEstimator):
            ESTIMATORS.append(_inst)


def instance_id(inst):
    """A short test id: the class name and its parameters that differ from the defaults."""
    defaults = {
        name: par.default for name, par in inspect.signature(type(inst).__init__).parameters.items()
    }
    shown = []
    for name, value in inst.get_params(deep=False).items():
        if name in ("categories", "random_state", "channel") or hasattr(value, "shape"):
            continue
        default = defaults.get(name, inspect.Parameter.empty)
        try:
            same = bool(value == default)
        except (TypeError, ValueError):
            same = False
        if not same:
            shown.append(f"{name}={value!r}")
    return f"{type(inst).__name__}({','.join(shown)})"


#: One privatizer per mechanism class: the matrices that multiply cases use these.
MECHANISMS = list({type(p): p for p in reversed(PRIVATIZERS)}.values())[::-1]


def domain(privatizer):
    """The public domain of a registry privatizer's single column, as a list."""
    cats = privatizer.categories
    if cats is None:
        raise ValueError(f"{instance_id(privatizer)} in the registry must set categories")
    cats = list(cats)
    if len(cats) == 1 and isinstance(cats[0], (list, tuple)):
        cats = list(cats[0])
    return cats


def fitted(privatizer, random_state=0):
    """A clone of ``privatizer`` fitted on its own domain, with a fixed ``random_state``."""
    p = clone(privatizer)
    if "random_state" in p.get_params(deep=False):
        p.set_params(random_state=random_state)
    return p.fit([[c] for c in domain(privatizer)])

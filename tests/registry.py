"""The one registry of configured instances that the shared tests run over.

Which mechanisms exist is written once, in the package: ``skldp._registry`` has one
``Mechanism(...)`` line per privatizer (the command line and the docs read it too). This module
holds only the test-only parameter sets beside it: one :func:`case` line per configured
privatizer in ``CASES``, naming its mechanism by the short name of that registry, and the
estimators that the shared tests pair with them.

Roles of a case:

* ``trust`` (default True): the trust tests run it (audit, seeds, input matrix, properties,
  streaming, floating point, domain coercion, pandas reports, solver). A case without
  ``categories`` gets the first small integer domain its mechanism accepts (8 values, else 2).
  ``trust=False`` leaves this one case out; a string leaves the whole mechanism out and says
  why (every available mechanism has a trust case or such a reason).
* ``checks`` (default ``"inferred"``): scikit-learn's estimator checks run it
  (``tests/test_common.py``) with the domain inferred from the checks' data; ``"fixed-domain"``
  ``"two-columns"`` and ``"person-keys"`` name the checks' data it refuses by design; None: not
  checked.
* ``xfail``: checks it is expected to fail beyond those every privatizer fails, with the
  reason (None: a check every privatizer fails that this one passes).

The registry is built and checked when it is imported, so a broken entry (an unknown
mechanism, a parameter the class does not take, an instance that fits no domain, a mechanism
left out without a reason) fails test collection with a :class:`RegistryError` naming it;
nothing is swallowed. A mechanism registered from outside the package
(:func:`skldp.registry.register`, before this module is imported) gets a case with its default
parameters (:func:`registered_cases`).
"""

import inspect
from dataclasses import dataclass, field

from sklearn.base import clone

from skldp import (
    OptimizedUnaryEncoding,
    CandidateEstimator,
    EMEstimator,
    EmpiricalEstimator,
    PersonalizedEstimator,
    ProjectedEstimator,
    SparseEstimator,
)
import skldp
from skldp._registry import (
    NOT_ON_THE_COMMAND_LINE,
    _check_param_names,
    available_mechanisms,
    builtin_mechanisms,
    get_mechanism,
    make_privatizer,
)
from skldp.channels import (
    HashedRRChannel,
    OneBitHadamardChannel,
    PersonalizedChannel,
    RandomizedResponseChannel,
)

#: How scikit-learn's checks see a case (see the module docstring).
CHECK_KINDS = ("inferred", "fixed-domain", "two-columns", "person-keys", None)


class RegistryError(Exception):
    """A registry entry that cannot be built; the message names every broken entry."""


class SensitiveRule:
    """A fixed, picklable rule marking about two thirds of numeric categories sensitive.

    A class rather than a function so that its repr, and so the test ids, are stable; it fits
    any inferred domain, as the checks need.
    """

    def __call__(self, category):
        return int(abs(float(category)) * 7919) % 3 != 0

    def __repr__(self):
        return "SensitiveRule()"


@dataclass(frozen=True)
class Case:
    """One configured privatizer of the registry (build it with :func:`case`)."""

    mechanism: str
    params: dict
    trust: "bool | str" = True
    checks: "str | None" = "inferred"
    xfail: dict = field(default_factory=dict)

    def __str__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"case({self.mechanism!r}, {params})"


def case(mechanism, *, trust=True, checks="inferred", xfail=None, **params):
    """One registry line: the mechanism's short name in ``skldp._registry`` and its parameters."""
    return Case(mechanism, params, trust, checks, dict(xfail or {}))


_TWO = "the checks' random data have more than two categories; this mechanism is binary"

#: Checks BinaryRandomizedResponse fails on the checks' data (see _TWO); it passes check_fit1d,
#: whose data it refuses as the check expects.
_BINARY_XFAIL = {
    **dict.fromkeys(
        (
            "check_estimators_overwrite_params",
            "check_dont_overwrite_parameters",
            "check_estimators_fit_returns_self",
            "check_readonly_memmap_input",
            "check_n_features_in_after_fitting",
            "check_positive_only_tag_during_fit",
            "check_estimators_dtypes",
            "check_f_contiguous_array_estimator",
            "check_transformer_data_not_an_array",
            "check_transformer_general",
            "check_fit2d_1feature",
            "check_dict_unchanged",
            "check_fit_idempotent",
            "check_fit_check_is_fitted",
            "check_n_features_in",
        ),
        _TWO,
    ),
    "check_fit1d": None,
}

_OUE = OptimizedUnaryEncoding()
_SAMPLING_REASON = (
    "reports are an attribute index and one attribute's report, not one block per column; "
    "tests/privatizers/test_multidimensional.py"
)
_KEYS = "person-keys"
_KEYS_REASON = (
    "reads two columns (value, the person's secret key); tests/privatizers/test_longitudinal.py "
    "and tests/channels/test_longitudinal.py"
)
_PUM_REASON = "reads two columns (value, tag); tests/estimators/test_streaming.py and the PUM tests"
_PUM = "two-columns"
_TAGGED = {"sensitive": [0], "tags": ["home", "work"], "categories": [0, 1, 2, 3]}

_NUMERIC_REASON = (
    "privatizes numbers in a public range (bounds=), not categories; "
    "tests/privatizers/test_square_wave.py and tests/channels/test_square_wave.py"
)

_FIXED = "fixed-domain"
#: The heavy-hitter privatizers read m-bit values: fit reads only the number of columns (1-D
#: data fit, as users expect), and the checks' random floats are refused by transform.
_HH_XFAIL = {"check_fit1d": "a 1-D input is one column of values, as users expect"}
_HH_REASON = (
    "heavy-hitter protocols over m-bit values, estimated by HeavyHitterEstimator (no "
    "distribution over k categories); tests/estimators/test_heavy_hitters.py and "
    "tests/channels/test_prefix.py"
)

#: A fixed public domain with two sensitive values (uRR and uRAP refuse a sensitive value
#: outside the domain, so these cases do not infer it).
_SENSITIVE_0_1 = {"sensitive": [0, 1], "categories": [0, 1, 2, 3]}

# -- the registry: one line per configured privatizer -------------------------------------------
CASES = [
    case("krr", epsilon=1.0, categories=["a", "b", "c"], checks=None),
    case("krr", epsilon=0.5, categories=[0, 1], checks=None),
    case("krr", epsilon=4.0, categories=list(range(10)), checks=None),
    case("krr", epsilon=1.0, random_state=0, trust=False),
    case("one-bit-compressive", epsilon=1.0, n_measurements=8, random_state=0),
    case("symmetric-compressive", epsilon=1.0, n_measurements=8, random_state=0),
    case("recursive-compressive", epsilon=2.0, n_measurements=8, random_state=0),
    case("one-bit-hadamard", epsilon=1.0, random_state=0),
    case("hadamard", epsilon=1.0, random_state=0),
    case("dbitflip", epsilon=1.0, random_state=0),
    case("block-hadamard", epsilon=1.0, n_blocks=2, random_state=0),
    case("high-low-hadamard", epsilon=1.0, sensitive=SensitiveRule(), random_state=0),
    case("binary-rr", epsilon_01=0.5, epsilon_10=2.0, random_state=0, xfail=_BINARY_XFAIL),
    case("hashed-rr", epsilon=1.0, n_buckets=4, n_cohorts=2, random_state=0),
    case("hashed-rappor", epsilon=1.0, n_bits=8, n_hashes=2, n_cohorts=3, random_state=0),
    case("count-mean-sketch", epsilon=1.0, n_hashes=3, width=4, random_state=0),
    case("count-mean-sketch", epsilon=1.0, n_hashes=2, width=4, variant="hcms", random_state=0),
    case("olh", epsilon=1.0, random_state=0),
    case("olh", epsilon=1.0, n_buckets=2, random_state=0),
    case("subset-selection", epsilon=1.0, random_state=0),
    case("subset-selection", epsilon=2.0, subset_size=2, categories=list(range(6)), checks=None),
    case("projective-geometry", epsilon=1.0, random_state=0),
    case("projective-geometry", epsilon=2, hybrid=True, field_size=3, random_state=0, trust=False),
    case("rappor", epsilon=1.0, random_state=0),
    case("rappor", epsilon=1.0, theta=0.3, random_state=0),
    case("oue", epsilon=1.0, random_state=0),
    case("histogram-encoding", epsilon=1.0, random_state=0),
    case("histogram-encoding", epsilon=2.0, variant="SHE", random_state=0),
    case("urr", epsilon=1.0, **_SENSITIVE_0_1, random_state=0, checks="fixed-domain"),
    case("urap", epsilon=1.0, **_SENSITIVE_0_1, random_state=0, checks="fixed-domain"),
    case("personalized", epsilon=1.0, **_TAGGED, random_state=0, checks=_PUM, trust=_PUM_REASON),
    case("longitudinal-rr", epsilon_infinity=2.0, epsilon_1=0.5, checks=_KEYS, trust=_KEYS_REASON),
    case("longitudinal-oue", epsilon_infinity=2.0, epsilon_1=1.0, checks=_KEYS, trust=_KEYS_REASON),
    case("longitudinal-rappor", f=0.5, p=0.5, q=0.75, checks=_KEYS, trust=_KEYS_REASON),
    case(
        "square-wave",
        epsilon=1.0,
        bounds=(-10.0, 10.0),
        bins=16,
        clip=True,
        random_state=0,
        trust=_NUMERIC_REASON,
    ),
    # Exported privatizers the command line does not offer go by their class name.
    case("BudgetSplitting", epsilon=1.0, random_state=0),
    case("AttributeSampling", epsilon=1.0, random_state=0, trust=_SAMPLING_REASON),
    case("AttributeSampling", privatizer=_OUE, epsilon=2.0, random_state=0, trust=False),
    case(
        "PrefixExtension",
        epsilon=4.0,
        n_bits=8,
        random_state=0,
        checks=_FIXED,
        trust=_HH_REASON,
        xfail=_HH_XFAIL,
    ),
    case(
        "TreeHistogram",
        epsilon=4.0,
        n_bits=8,
        random_state=0,
        checks=_FIXED,
        trust=_HH_REASON,
        xfail=_HH_XFAIL,
    ),
]

# -- estimators ---------------------------------------------------------------------------------
#: Estimators (unfitted) the trust tests pair with every privatizer. A test skips a pair whose
#: estimator refuses the mechanism's reports with a TypeError or NotImplementedError at fit.
ESTIMATORS = [
    EmpiricalEstimator(),
    ProjectedEstimator(),
    ProjectedEstimator(method="clip"),
    EMEstimator(),
]

#: Estimators whose ``distribution_`` is promised to lie on the simplex.
SIMPLEX_ESTIMATORS = (ProjectedEstimator, EMEstimator)

#: The compressive family's estimator: it reads any mechanism's reports through their channel.
SPARSE_ESTIMATORS = [SparseEstimator(sparsity=2)]

#: Estimators of reports over an open alphabet (paired with the open-alphabet cases).
CANDIDATE_ESTIMATORS = [
    CandidateEstimator(candidates=["a", "b", "c"]),
    CandidateEstimator(candidates=["a", "b"], method="em", tol=1e-8),
]

_RR = RandomizedResponseChannel(1.0, 64)

#: Estimators for scikit-learn's checks, each with a one-column channel whose symbols cover the
#: checks' integer data.
CHECKED_ESTIMATORS = [
    EmpiricalEstimator(channel=_RR),
    ProjectedEstimator(method="norm-sub", channel=_RR),
    ProjectedEstimator(method="threshold", channel=_RR),
    EMEstimator(tol=1e-8, init="uniform", channel=_RR),
    SparseEstimator(sparsity=2, channel=OneBitHadamardChannel(1.0, 32)),
    PersonalizedEstimator(channel=PersonalizedChannel.from_base(1.0, 40, [0, 1], 4)),
    CandidateEstimator(candidates=["a", "b"], channel=HashedRRChannel(1.0, 16, 4)),
]


# -- building and checking ----------------------------------------------------------------------
def _with_domain(privatizer):
    """A registry copy with a public domain: the instance itself, or one with categories set.

    Cases made for scikit-learn's checks infer their domain; here the first small integer
    domain that the mechanism accepts (8 values, else 2) is set explicitly.
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


def _make(entry):
    """The case's privatizer: by its short name, or by class name if not on the command line."""
    if entry.mechanism in NOT_ON_THE_COMMAND_LINE:
        cls = getattr(skldp, entry.mechanism)
        _check_param_names(cls, entry.params)
        return cls(**entry.params)
    return make_privatizer(entry.mechanism, **entry.params)


def _flag(entry, name):
    """A registry flag of the case's mechanism (False for those not on the command line)."""
    if entry.mechanism in NOT_ON_THE_COMMAND_LINE:
        return False
    return getattr(get_mechanism(entry.mechanism), name)


def _build_one(entry):
    """(the configured instance, its trust-test copy or None); raises naming the problem."""
    if not isinstance(entry, Case):
        raise TypeError(f"expected a case(...) line, got {type(entry).__name__}: {entry!r}")
    if entry.checks not in CHECK_KINDS:
        raise ValueError(f"checks must be one of {CHECK_KINDS}, got {entry.checks!r}")
    if not isinstance(entry.trust, (bool, str)):
        raise TypeError(f"trust must be a bool or a reason, got {entry.trust!r}")
    instance = _make(entry)  # names an unknown name or parameter
    if entry.trust is not True:
        return instance, None
    trusted = _with_domain(instance)
    if trusted is None:
        fitted(clone(instance).set_params(categories=[0, 1]))  # raises the mechanism's error
        raise ValueError("fits no integer domain of 8 or 2 values; set categories=")
    fitted(trusted)  # the trust tests fit every case on its own domain
    return instance, trusted


def build(cases):
    """Build every case and check the registry as a whole.

    Returns
    -------
    built : list of (Case, privatizer, privatizer or None)
        Each case, its configured instance, and its copy with a public domain for the trust
        tests (None when the case is not in them).

    Raises
    ------
    RegistryError
        Naming every case that cannot be built (with the error it raised) and every available
        mechanism that has no trust case and no stated reason.
    """
    built, problems = [], []
    for entry in cases:
        try:
            built.append((entry, *_build_one(entry)))
        except Exception as exc:  # every problem is reported, with its case, below
            problems.append(f"{entry}: {type(exc).__name__}: {exc}")
    trusted = {entry.mechanism for entry in cases if isinstance(entry, Case) and entry.trust}
    for name in [*available_mechanisms(), *NOT_ON_THE_COMMAND_LINE]:
        if name not in trusted:
            class_name = name if name in NOT_ON_THE_COMMAND_LINE else get_mechanism(name).class_name
            problems.append(
                f"mechanism {name!r} ({class_name}) has no case in the trust "
                "tests: add a case(...) line, or give trust='<the reason>' on one of its cases"
            )
    if problems:
        raise RegistryError(
            f"{len(problems)} broken entr{'y' if len(problems) == 1 else 'ies'} in the test "
            "registry (tests/registry.py):\n  " + "\n  ".join(problems)
        )
    return built


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


def registered_cases(cases):
    """One case with default parameters (and ``random_state=0``) for each mechanism added
    with :func:`skldp.registry.register` that has no line in ``cases``.

    A mechanism registered from outside the package is tested like the package's own: its
    privatizer's defaults must fit the first small integer domain it accepts. Give it a
    ``case(...)`` line to test other parameters instead.
    """
    named = {entry.mechanism for entry in cases if isinstance(entry, Case)}
    own = set(builtin_mechanisms())
    return [
        case(name, random_state=0)
        for name in available_mechanisms()
        if name not in own and name not in named
    ]


_BUILT = build([*CASES, *registered_cases(CASES)])

#: Privatizers of the trust tests (unfitted, one column, a public domain in ``categories``).
PRIVATIZERS = [trusted for _, _, trusted in _BUILT if trusted is not None]

#: One privatizer per mechanism class: the matrices that multiply cases use these.
MECHANISMS = list({type(p): p for p in reversed(PRIVATIZERS)}.values())[::-1]

#: Privatizers of scikit-learn's checks: (instance, how the checks see it, extra xfail).
CHECKED = [(inst, entry.checks, entry.xfail) for entry, inst, _ in _BUILT if entry.checks]

#: The configured privatizers over an open alphabet (no domain), and those reading a tag column.
OPEN_ALPHABET = [
    inst for entry, inst, _ in _BUILT if entry.checks and _flag(entry, "open_alphabet")
]
TAG_COLUMN = [inst for entry, inst, _ in _BUILT if _flag(entry, "tag_column")]

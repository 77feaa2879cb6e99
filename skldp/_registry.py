"""The registry of mechanisms: short names (for the command line and experiments) to classes.

Each entry names a privatizer class by its attribute name in :mod:`skldp` (or
:mod:`skldp.privatizers`); a mechanism is *available* when that attribute exists, so a new
privatizer shows up in ``skldp mechanisms``, ``skldp privatize`` and the demo as soon as it is
exported, with no change here beyond its line in ``_MECHANISMS`` if it is not listed yet.
"""

import importlib
import inspect
from dataclasses import dataclass, field

__all__ = [
    "Mechanism",
    "MECHANISMS",
    "NOT_ON_THE_COMMAND_LINE",
    "ESTIMATORS",
    "get_mechanism",
    "available_mechanisms",
    "make_privatizer",
    "make_estimator",
    "reads_tag_column",
    "reads_key_column",
]


@dataclass(frozen=True)
class Mechanism:
    """One mechanism of the registry.

    Attributes
    ----------
    name : str
        Short name used on the command line (``krr``, ``hadamard``, ...).
    class_name : str
        The privatizer's attribute name in :mod:`skldp`.
    family : str
        The user-guide family.
    guarantee : str
        The privacy guarantee in words.
    paper : str
        The paper it comes from.
    open_alphabet : bool
        Values need no list of categories when privatized (hashed mechanisms); the server
        asks about candidate values afterwards.
    tag_column : bool
        The input has a second column: the tag of the value when it is one of the person's
        own sensitive values (missing otherwise), as :class:`~skldp.PersonalizedULDP` reads.
    key_column : bool
        The input has a second column: each person's secret key (32 hexadecimal digits), the
        memo of a longitudinal mechanism (:class:`~skldp.privatizers.LongitudinalRR`, ...).
    estimator : str
        Short name of the estimator the command line uses when none is asked for (reports
        over an open alphabet use ``candidate`` whatever this says).
    required : tuple of str or of tuples of str
        Parameters without a usable default (the command line asks for them); a tuple inside
        lists alternatives, one of which is needed.
    """

    name: str
    class_name: str
    family: str
    guarantee: str
    paper: str
    required: tuple = field(default_factory=tuple)
    open_alphabet: bool = False
    tag_column: bool = False
    key_column: bool = False
    estimator: str = "projected"

    @property
    def cls(self):
        """The privatizer class, or None when this build of skldp does not have it."""
        for module in ("skldp", "skldp.privatizers"):
            mod = importlib.import_module(module)
            if hasattr(mod, self.class_name):
                return getattr(mod, self.class_name)
        return None

    @property
    def available(self):
        return self.cls is not None

    def describe_required(self):
        """The required parameters in words, e.g. ``"sensitive"`` or ``"blocks or n_blocks"``.

        A mechanism that reads a tag column also says so (``"tags, a tag column"``).
        """
        parts = [r if isinstance(r, str) else " or ".join(r) for r in self.required]
        if self.tag_column:
            parts.append("a tag column")
        if self.key_column:
            parts.append("a key column")
        return ", ".join(parts)

    def missing(self, params):
        """The requirements that ``params`` (a dict) does not meet, in words."""
        out = []
        for r in self.required:
            options = (r,) if isinstance(r, str) else r
            if not any(o in params for o in options):
                out.append(" or ".join(f"{o}=..." for o in options))
        return out


_MECHANISMS = [
    Mechanism(
        "krr",
        "RandomizedResponse",
        "randomized response",
        "epsilon-LDP: every output ratio at most e^epsilon (tight)",
        "Warner 1965; Kairouz, Bonawitz and Ramage, ICML 2016",
    ),
    Mechanism(
        "binary-rr",
        "BinaryRandomizedResponse",
        "context-aware",
        "context-aware LDP on two values with budgets epsilon_01 and epsilon_10",
        "Acharya, Bonawitz, Kairouz, Ramage and Sun, ICML 2020",
        ("epsilon_01", "epsilon_10"),
    ),
    Mechanism(
        "rappor",
        "RAPPOR",
        "unary encoding",
        "epsilon-LDP (one-time basic RAPPOR)",
        "Erlingsson, Pihur and Korolova, CCS 2014",
    ),
    Mechanism(
        "oue",
        "OptimizedUnaryEncoding",
        "unary encoding",
        "epsilon-LDP",
        "Wang, Blocki, Li and Jha, USENIX Security 2017",
    ),
    Mechanism(
        "hadamard",
        "HadamardResponse",
        "Hadamard",
        "epsilon-LDP",
        "Acharya, Sun and Zhang, AISTATS 2019",
    ),
    Mechanism(
        "block-hadamard",
        "BlockHadamardResponse",
        "context-aware",
        "block-structured LDP: epsilon inside each block, no promise across blocks",
        "Acharya, Bonawitz, Kairouz, Ramage and Sun, ICML 2020",
        (("blocks", "n_blocks", "block_size"),),
    ),
    Mechanism(
        "high-low-hadamard",
        "HighLowHadamardResponse",
        "context-aware",
        "high-low LDP: epsilon for pairs involving a sensitive value, none between others",
        "Acharya, Bonawitz, Kairouz, Ramage and Sun, ICML 2020",
        ("sensitive",),
    ),
    Mechanism(
        "urr",
        "UtilityOptimizedRR",
        "utility-optimized",
        "(S, Y_P, epsilon)-ULDP: epsilon for sensitive values; non-sensitive ones may be revealed",
        "Murakami and Kawamoto, USENIX Security 2019",
        ("sensitive",),
    ),
    Mechanism(
        "urap",
        "UtilityOptimizedRAPPOR",
        "utility-optimized",
        "(S, Y_P, epsilon)-ULDP: epsilon for sensitive values; non-sensitive ones may be revealed",
        "Murakami and Kawamoto, USENIX Security 2019",
        ("sensitive",),
    ),
    Mechanism(
        "personalized",
        "PersonalizedULDP",
        "utility-optimized",
        "(X_S + own tagged values, Y_P, epsilon)-ULDP per person; other values may be revealed",
        "Murakami and Kawamoto, USENIX Security 2019 (PUM, Sec. 5)",
        ("tags",),
        tag_column=True,
        estimator="personalized",
    ),
    Mechanism(
        "hashed-rr",
        "HashedRR",
        "open alphabet",
        "epsilon-LDP over an open alphabet (O-RR, hashed with cohorts)",
        "Kairouz, Bonawitz and Ramage, ICML 2016",
        open_alphabet=True,
    ),
    Mechanism(
        "hashed-rappor",
        "HashedRAPPOR",
        "open alphabet",
        "epsilon-LDP over an open alphabet (O-RAPPOR, hashed with cohorts)",
        "Kairouz, Bonawitz and Ramage, ICML 2016",
        open_alphabet=True,
    ),
    Mechanism(
        "one-bit-compressive",
        "OneBitCompressive",
        "compressive",
        "epsilon-LDP, one bit per report",
        "Xiong, Sun, Mao et al., compressive privatization",
    ),
    Mechanism(
        "symmetric-compressive",
        "SymmetricCompressive",
        "compressive",
        "epsilon-LDP",
        "Xiong, Sun, Mao et al., compressive privatization",
    ),
    Mechanism(
        "recursive-compressive",
        "RecursiveCompressive",
        "compressive",
        "epsilon-LDP",
        "Xiong, Sun, Mao et al., compressive privatization",
    ),
    Mechanism(
        "one-bit-hadamard",
        "OneBitHadamardResponse",
        "compressive",
        "epsilon-LDP, one bit per report",
        "Acharya and Sun, ICML 2019 (the one-bit baseline of compressive privatization)",
    ),
    Mechanism(
        "olh",
        "LocalHashing",
        "frequency oracles",
        "epsilon-LDP (optimized local hashing; n_buckets=2 is binary local hashing)",
        "Wang, Blocki, Li and Jha, USENIX Security 2017",
    ),
    Mechanism(
        "subset-selection",
        "SubsetSelection",
        "frequency oracles",
        "epsilon-LDP",
        "Ye and Barg, IEEE Trans. IT 2018; Wang et al. 2016",
    ),
    Mechanism(
        "longitudinal-rr",
        "LongitudinalRR",
        "memoized (longitudinal)",
        "epsilon_1-LDP per report, epsilon_infinity-LDP over all reports of a value (L-GRR)",
        "Arcolezi, Couchot, Al Bouna and Xiao, 2022; Erlingsson, Pihur and Korolova, CCS 2014",
        key_column=True,
    ),
    Mechanism(
        "longitudinal-oue",
        "LongitudinalOUE",
        "memoized (longitudinal)",
        "epsilon_1-LDP per report, epsilon_infinity-LDP over all reports of a value (L-OUE)",
        "Arcolezi, Couchot, Al Bouna and Xiao, 2022",
        key_column=True,
    ),
    Mechanism(
        "longitudinal-rappor",
        "LongitudinalRAPPOR",
        "memoized (longitudinal)",
        "epsilon_1-LDP per report, epsilon_infinity-LDP over all reports of a value (RAPPOR)",
        "Erlingsson, Pihur and Korolova, CCS 2014",
        key_column=True,
    ),
]

MECHANISMS = {m.name: m for m in _MECHANISMS}

#: Exported privatizers that the command line does not offer, with the reason.
NOT_ON_THE_COMMAND_LINE = {
    "BudgetSplitting": "reads several columns (attributes); the command line privatizes one",
    "AttributeSampling": "reads several columns (attributes); the command line privatizes one",
}

#: Estimators by short name: (class name in skldp, default parameters).
ESTIMATORS = {
    "empirical": ("EmpiricalEstimator", {}),
    "projected": ("ProjectedEstimator", {}),
    "em": ("EMEstimator", {}),
    "sparse": ("SparseEstimator", {}),
    "candidate": ("CandidateEstimator", {}),
    "personalized": ("PersonalizedEstimator", {}),
}


def _param_names(cls):
    sig = inspect.signature(cls.__init__)
    return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD]


def get_mechanism(name):
    """Return the registry entry for ``name`` (a short name or a class name).

    Raises
    ------
    ValueError
        If the name is unknown, or known but not available in this build; the message lists
        the available names.
    """
    entry = MECHANISMS.get(name)
    if entry is None:
        entry = next((m for m in _MECHANISMS if m.class_name == name), None)
    names = ", ".join(available_mechanisms())
    if entry is None:
        raise ValueError(f"unknown mechanism {name!r}; available: {names}")
    if not entry.available:
        raise ValueError(
            f"mechanism {name!r} ({entry.class_name}) is not available in this build of skldp; "
            f"available: {names}"
        )
    return entry


def available_mechanisms():
    """Short names of the mechanisms this build of skldp has, in registry order."""
    return [m.name for m in _MECHANISMS if m.available]


def reads_tag_column(privatizer):
    """Whether ``privatizer`` is registered as reading a tag column beside the values."""
    return any(m.tag_column and m.available and isinstance(privatizer, m.cls) for m in _MECHANISMS)


def reads_key_column(privatizer):
    """Whether ``privatizer`` is registered as reading a person-key column beside the values."""
    return any(m.key_column and m.available and isinstance(privatizer, m.cls) for m in _MECHANISMS)


def reads_open_alphabet(privatizer):
    """Whether ``privatizer`` is registered as privatizing values of an open alphabet."""
    return any(
        m.open_alphabet and m.available and isinstance(privatizer, m.cls) for m in _MECHANISMS
    )


def _check_param_names(cls, params):
    """Raise a ValueError naming the keys of ``params`` that ``cls.__init__`` does not take."""
    valid = _param_names(cls)
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(
            f"{cls.__name__} has no parameter {', '.join(map(repr, unknown))}; its parameters are "
            f"{', '.join(sorted(valid))}"
        )


def make_privatizer(name, **params):
    """Build the privatizer registered as ``name`` with ``params`` (checked at fit time)."""
    cls = get_mechanism(name).cls
    _check_param_names(cls, params)
    return cls(**params)


def make_estimator(name, **params):
    """Build the estimator registered as ``name`` (``empirical``, ``projected``, ``em``, ...)."""
    import skldp

    if name not in ESTIMATORS:
        raise ValueError(
            f"unknown estimator {name!r}; available: {', '.join(available_estimators())}"
        )
    class_name, defaults = ESTIMATORS[name]
    cls = getattr(skldp, class_name, None)
    if cls is None:
        raise ValueError(
            f"estimator {name!r} is not available in this build; available: "
            f"{', '.join(available_estimators())}"
        )
    _check_param_names(cls, params)
    return cls(**{**defaults, **params})


def available_estimators():
    import skldp

    return [name for name, (cls, _) in ESTIMATORS.items() if hasattr(skldp, cls)]

"""The registry of mechanisms: one entry per mechanism, and everything that is read from it.

A mechanism is its channel, its privatizer and one :class:`Mechanism` entry here. The command
line (``skldp mechanisms``, ``skldp privatize``, the demo), the advisor
(:func:`skldp.recommend_mechanism`, ``skldp advise``), the docs' mechanism table and the
test lists (``tests/registry.py`` and the suites that run over it) are derived from the
entries. A built-in entry names its privatizer class by its attribute name in
``skldp.privatizers`` (which this module imports: the registry sits above the privatizers
and estimators); an entry of a mechanism defined outside the package gives the
class itself and is added with :func:`register` (public in :mod:`skldp.registry`).
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skldp import estimators, privatizers
from skldp.privatizers._base import BasePrivatizer
from skldp._reports import trust_channels_of
from skldp._validation import check_int

__all__ = [
    "Mechanism",
    "MECHANISMS",
    "NOT_ON_THE_COMMAND_LINE",
    "ESTIMATORS",
    "ERROR_MODELS",
    "get_mechanism",
    "available_mechanisms",
    "builtin_mechanisms",
    "make_privatizer",
    "make_estimator",
    "channel_of",
    "register",
    "unregister",
    "registered",
    "reads_tag_column",
    "reads_key_column",
]

#: How the advisor scores a mechanism (:attr:`Mechanism.error_model`).
ERROR_MODELS = ("variance", "sparse", None)


@dataclass(frozen=True)
class Mechanism:
    """One mechanism of the registry.

    Attributes
    ----------
    name : str
        Short name used on the command line (``krr``, ``hadamard``, ...).
    privatizer : type or str
        The privatizer class (a subclass of the base privatizer), or, for the package's own
        mechanisms, its attribute name in ``skldp.privatizers``.
    family : str
        The user-guide family.
    guarantee : str
        The privacy guarantee in words; the advisor's ``guarantee`` column is its text up to
        the first colon, comma or parenthesis (``"epsilon-LDP"``).
    paper : str
        The paper it comes from.
    required : tuple of str or of tuples of str
        Parameters without a usable default (the command line asks for them); a tuple inside
        lists alternatives, one of which is needed. The advisor supplies ``sensitive`` and
        ``blocks`` from its context and cannot rank a mechanism that needs anything else.
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
    error_model : {"variance", "sparse"} or None
        How the advisor scores it, from the channel its privatizer builds for k categories:
        ``"variance"``, the exact variance of the unbiased estimate
        (``channel.variance(p, n)``); ``"sparse"``, the error after sparse recovery of an
        s-sparse distribution (compressive mechanisms: the channel has ``debias`` and
        ``n_groups``); None, not ranked, for the reason in ``not_ranked``.
    assumption : str
        The advisor's ``assumption`` column: what its row needs to hold.
    not_ranked : str
        Why the advisor does not rank it (with ``error_model=None``).
    shown : tuple of str
        Attributes of the channel that the advisor's ``parameters`` column shows
        (``("n_buckets",)`` gives ``n_buckets=4``): the defaults chosen for k and epsilon.
    """

    name: str
    privatizer: type | str
    family: str
    guarantee: str
    paper: str
    required: tuple = field(default_factory=tuple)
    open_alphabet: bool = False
    tag_column: bool = False
    key_column: bool = False
    estimator: str = "projected"
    error_model: str | None = "variance"
    assumption: str = "none: exact variance"
    not_ranked: str = ""
    shown: tuple = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"name must be a non-empty string; got {self.name!r}")
        if not isinstance(self.privatizer, (str, type)):
            raise TypeError(
                f"privatizer of {self.name!r} must be a privatizer class or its name in "
                f"skldp.privatizers; got {self.privatizer!r}"
            )
        if self.error_model not in ERROR_MODELS:
            raise ValueError(
                f"error_model of {self.name!r} must be one of {ERROR_MODELS}; "
                f"got {self.error_model!r}"
            )
        if self.error_model is None and not self.not_ranked:
            raise ValueError(
                f"{self.name!r} has error_model=None: say why the advisor does not rank it "
                "(not_ranked='...')"
            )

    @property
    def class_name(self) -> str:
        """The privatizer's class name."""
        if isinstance(self.privatizer, type):
            return self.privatizer.__name__
        return self.privatizer

    @property
    def cls(self) -> type | None:
        """The privatizer class, or None when this build of skldp does not have it."""
        if isinstance(self.privatizer, type):
            return self.privatizer
        return getattr(privatizers, self.privatizer, None)

    @property
    def available(self) -> bool:
        return self.cls is not None

    def describe_required(self) -> str:
        """The required parameters in words, e.g. ``"sensitive"`` or ``"blocks or n_blocks"``.

        A mechanism that reads a tag column also says so (``"tags, a tag column"``).
        """
        parts = [r if isinstance(r, str) else " or ".join(r) for r in self.required]
        if self.tag_column:
            parts.append("a tag column")
        if self.key_column:
            parts.append("a key column")
        return ", ".join(parts)

    def missing(self, params: dict) -> list[str]:
        """The requirements that ``params`` (a dict) does not meet, in words."""
        out = []
        for r in self.required:
            options = (r,) if isinstance(r, str) else r
            if not any(o in params for o in options):
                out.append(" or ".join(f"{o}=..." for o in options))
        return out


_LDP = "none: exact variance"
_MEMOIZED = (
    "memoized, for the same people reporting again: one collection costs epsilon_1 and "
    "adds the permanent round's noise, which pooling days never averages away (see "
    "channel_.longitudinal_variance); for one collection its base mechanism is better"
)
_OPEN = (
    "open alphabet: for values not listed in advance; with a known domain of k values, "
    "hashing only adds collisions to {}"
)

#: The package's own mechanisms, in the order of ``skldp mechanisms`` and the docs' table.
_BUILTIN = (
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
        error_model=None,
        not_ranked="takes two budgets (epsilon_01, epsilon_10); with one budget it is k-RR at "
        "k = 2",
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
        "histogram-encoding",
        "HistogramEncoding",
        "unary encoding",
        "epsilon-LDP (THE: thresholded bits; SHE: geometric noise, exact in floating point)",
        "Wang, Blocki, Li and Jha, USENIX Security 2017",
        shown=("threshold",),
    ),
    Mechanism(
        "hadamard",
        "HadamardResponse",
        "Hadamard",
        "epsilon-LDP",
        "Acharya, Sun and Zhang, AISTATS 2019",
        shown=("block_size", "n_blocks"),
    ),
    Mechanism(
        "block-hadamard",
        "BlockHadamardResponse",
        "context-aware",
        "block-structured LDP: epsilon inside each block, no promise across blocks",
        "Acharya, Bonawitz, Kairouz, Ramage and Sun, ICML 2020",
        (("blocks", "n_blocks", "block_size"),),
        assumption="needs the partition; blocks are not hidden from each other",
    ),
    Mechanism(
        "high-low-hadamard",
        "HighLowHadamardResponse",
        "context-aware",
        "high-low LDP: epsilon for pairs involving a sensitive value, none between others",
        "Acharya, Bonawitz, Kairouz, Ramage and Sun, ICML 2020",
        ("sensitive",),
        assumption="needs the sensitive set; other values may be learned",
    ),
    Mechanism(
        "urr",
        "UtilityOptimizedRR",
        "utility-optimized",
        "(S, Y_P, epsilon)-ULDP: epsilon for sensitive values; non-sensitive ones may be revealed",
        "Murakami and Kawamoto, USENIX Security 2019",
        ("sensitive",),
        assumption="needs the sensitive set; non-sensitive values may be revealed",
    ),
    Mechanism(
        "urap",
        "UtilityOptimizedRAPPOR",
        "utility-optimized",
        "(S, Y_P, epsilon)-ULDP: epsilon for sensitive values; non-sensitive ones may be revealed",
        "Murakami and Kawamoto, USENIX Security 2019",
        ("sensitive",),
        assumption="needs the sensitive set; non-sensitive values may be revealed",
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
        error_model=None,
        not_ranked="needs each person's own tagged sensitive values",
    ),
    Mechanism(
        "hashed-rr",
        "HashedRR",
        "open alphabet",
        "epsilon-LDP over an open alphabet (O-RR, hashed with cohorts)",
        "Kairouz, Bonawitz and Ramage, ICML 2016",
        open_alphabet=True,
        error_model=None,
        not_ranked=_OPEN.format("k-RR"),
    ),
    Mechanism(
        "hashed-rappor",
        "HashedRAPPOR",
        "open alphabet",
        "epsilon-LDP over an open alphabet (O-RAPPOR, hashed with cohorts)",
        "Kairouz, Bonawitz and Ramage, ICML 2016",
        open_alphabet=True,
        error_model=None,
        not_ranked=_OPEN.format("RAPPOR"),
    ),
    Mechanism(
        "count-mean-sketch",
        "CountMeanSketch",
        "open alphabet",
        "epsilon-LDP over an open alphabet (Apple's CMS and HCMS sketches)",
        "Apple Differential Privacy Team, Learning with Privacy at Scale, 2017",
        open_alphabet=True,
        error_model=None,
        not_ranked=_OPEN.format("unary encoding or Hadamard response")
        + "; its sketch error is count_mean_sketch_mse",
    ),
    Mechanism(
        "one-bit-compressive",
        "OneBitCompressive",
        "compressive",
        "epsilon-LDP, one bit per report",
        "Xiong, Sun, Mao et al., compressive privatization",
        error_model="sparse",
        shown=("n_measurements",),
    ),
    Mechanism(
        "symmetric-compressive",
        "SymmetricCompressive",
        "compressive",
        "epsilon-LDP",
        "Xiong, Sun, Mao et al., compressive privatization",
        error_model="sparse",
        shown=("n_measurements",),
    ),
    Mechanism(
        "recursive-compressive",
        "RecursiveCompressive",
        "compressive",
        "epsilon-LDP",
        "Xiong, Sun, Mao et al., compressive privatization",
        error_model="sparse",
        shown=("n_measurements", "n_blocks"),
    ),
    Mechanism(
        "one-bit-hadamard",
        "OneBitHadamardResponse",
        "compressive",
        "epsilon-LDP, one bit per report",
        "Acharya and Sun, ICML 2019 (the one-bit baseline of compressive privatization)",
        error_model="sparse",
    ),
    Mechanism(
        "olh",
        "LocalHashing",
        "frequency oracles",
        "epsilon-LDP (optimized local hashing; n_buckets=2 is binary local hashing)",
        "Wang, Blocki, Li and Jha, USENIX Security 2017",
        assumption="none: exact variance (pairwise-independent hash)",
        shown=("n_buckets",),
    ),
    Mechanism(
        "subset-selection",
        "SubsetSelection",
        "frequency oracles",
        "epsilon-LDP",
        "Ye and Barg, IEEE Trans. IT 2018; Wang et al. 2016",
        shown=("subset_size",),
    ),
    Mechanism(
        "dbitflip",
        "DBitFlip",
        "frequency oracles",
        "epsilon-LDP (d sampled buckets, one bit each; d = 1 is epsilon/2-LDP)",
        "Ding, Kulkarni and Yekhanin, NeurIPS 2017",
        shown=("n_sampled",),
    ),
    Mechanism(
        "projective-geometry",
        "ProjectiveGeometryResponse",
        "frequency oracles",
        "epsilon-LDP (hybrid=True is HPGR)",
        "Feldman, Nelson, Nguyen and Talwar, ICML 2022",
        shown=("field_size", "dimension", "n_blocks"),
    ),
    Mechanism(
        "longitudinal-rr",
        "LongitudinalRR",
        "memoized (longitudinal)",
        "epsilon_1-LDP per report, epsilon_infinity-LDP over all reports of a value (L-GRR)",
        "Arcolezi, Couchot, Al Bouna and Xiao, 2022; Erlingsson, Pihur and Korolova, CCS 2014",
        key_column=True,
        error_model=None,
        not_ranked=_MEMOIZED,
    ),
    Mechanism(
        "longitudinal-oue",
        "LongitudinalOUE",
        "memoized (longitudinal)",
        "epsilon_1-LDP per report, epsilon_infinity-LDP over all reports of a value (L-OUE)",
        "Arcolezi, Couchot, Al Bouna and Xiao, 2022",
        key_column=True,
        error_model=None,
        not_ranked=_MEMOIZED,
    ),
    Mechanism(
        "longitudinal-rappor",
        "LongitudinalRAPPOR",
        "memoized (longitudinal)",
        "epsilon_1-LDP per report, epsilon_infinity-LDP over all reports of a value (RAPPOR)",
        "Erlingsson, Pihur and Korolova, CCS 2014",
        key_column=True,
        error_model=None,
        not_ranked=_MEMOIZED,
    ),
    Mechanism(
        "square-wave",
        "SquareWave",
        "numeric",
        "epsilon-LDP: every output density ratio at most e^epsilon (tight)",
        "Li, Wang, Lopuhaa-Zwakenberg, Li and Skoric, SIGMOD 2020",
        ("bounds",),
        estimator="em",
        error_model=None,
        not_ranked="numbers in a public range (bounds=), not categories: for a distribution "
        "over ordered values; estimate with EMEstimator(smoothing=True)",
        shown=("half_width",),
    ),
)

#: Every registered mechanism by short name: the built-in ones, then those added with
#: :func:`register`, in order. Modules that read it see later registrations (it is one dict).
MECHANISMS = {m.name: m for m in _BUILTIN}
#: Exported privatizers that the command line does not offer, with the reason.
NOT_ON_THE_COMMAND_LINE = {
    "BudgetSplitting": "reads several columns (attributes); the command line privatizes one",
    "AttributeSampling": "reads several columns (attributes); the command line privatizes one",
    "PrefixExtension": "a heavy-hitter protocol over m-bit values (no k-category domain), read "
    "by HeavyHitterEstimator, not by the distribution estimators",
    "TreeHistogram": "a heavy-hitter protocol over m-bit values (no k-category domain), read "
    "by HeavyHitterEstimator, not by the distribution estimators",
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


def get_mechanism(name: str) -> Mechanism:
    """Return the registry entry for ``name`` (a short name or a class name).

    Raises
    ------
    ValueError
        If the name is unknown, or known but not available in this build; the message lists
        the available names.
    """
    entry = MECHANISMS.get(name)
    if entry is None:
        entry = next((m for m in MECHANISMS.values() if m.class_name == name), None)
    names = ", ".join(available_mechanisms())
    if entry is None:
        raise ValueError(f"unknown mechanism {name!r}{_did_you_mean(name)}; available: {names}")
    if not entry.available:
        raise ValueError(
            f"mechanism {name!r} ({entry.class_name}) is not available in this build of skldp; "
            f"available: {names}"
        )
    return entry


def _did_you_mean(name: object) -> str:
    """``"; did you mean 'krr'?"`` for a misspelt mechanism name (or class name), else ``""``."""
    if not isinstance(name, str):
        return ""
    known = {}
    for m in MECHANISMS.values():
        if m.available:
            known[m.name.lower()] = m.name
            known[m.class_name.lower()] = m.class_name
    if name.lower() in known:  # only the case differs
        return f" (did you mean {known[name.lower()]!r}?)"
    close = difflib.get_close_matches(name.lower(), list(known), n=3, cutoff=0.6)
    close = list(dict.fromkeys(known[c] for c in close))
    if not close:
        return ""
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)"


def available_mechanisms() -> list[str]:
    """Short names of the mechanisms this build of skldp has, in registry order."""
    return [m.name for m in MECHANISMS.values() if m.available]


def reads_tag_column(privatizer):
    """Whether ``privatizer`` is registered as reading a tag column beside the values."""
    return any(
        m.tag_column and m.available and isinstance(privatizer, m.cls) for m in MECHANISMS.values()
    )


def reads_key_column(privatizer):
    """Whether ``privatizer`` is registered as reading a person-key column beside the values."""
    return any(
        m.key_column and m.available and isinstance(privatizer, m.cls) for m in MECHANISMS.values()
    )


def reads_open_alphabet(privatizer):
    """Whether ``privatizer`` is registered as privatizing values of an open alphabet."""
    return any(
        m.open_alphabet and m.available and isinstance(privatizer, m.cls)
        for m in MECHANISMS.values()
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


def make_privatizer(name: str, **params: Any) -> Any:
    """Build the privatizer registered as ``name`` with ``params`` (checked at fit time)."""
    cls: Any = get_mechanism(name).cls  # available: get_mechanism says so otherwise
    _check_param_names(cls, params)
    return cls(**params)


def make_estimator(name, **params):
    """Build the estimator registered as ``name`` (``empirical``, ``projected``, ``em``, ...)."""
    if name not in ESTIMATORS:
        raise ValueError(
            f"unknown estimator {name!r}; available: {', '.join(available_estimators())}"
        )
    class_name, defaults = ESTIMATORS[name]
    cls = getattr(estimators, class_name, None)
    if cls is None:
        raise ValueError(
            f"estimator {name!r} is not available in this build; available: "
            f"{', '.join(available_estimators())}"
        )
    _check_param_names(cls, params)
    return cls(**{**defaults, **params})


def available_estimators():
    return [name for name, (cls, _) in ESTIMATORS.items() if hasattr(estimators, cls)]


def builtin_mechanisms() -> list[str]:
    """Short names of the package's own mechanisms, in registry order (not those registered)."""
    return [m.name for m in _BUILTIN]


def channel_of(name: str, n_categories: int, **params: Any) -> Any:
    """The channel that the privatizer registered as ``name`` builds for k categories.

    The privatizer is built with ``params`` and the public domain ``0, ..., k - 1`` and fitted
    (on one value of that domain), so the channel is the one its ``transform`` would sample
    from, with every default the privatizer chooses for k (optimized local hashing's buckets,
    subset selection's subset size, ...). The advisor scores this channel.

    Parameters
    ----------
    name : str
        A registered mechanism (short name or class name).
    n_categories : int
        k, the size of the domain.
    **params
        Parameters of the privatizer; a domain-valued one (``sensitive``, ``blocks``) is
        given over the categories ``0, ..., k - 1``.

    Returns
    -------
    channel : Channel
        The fitted privatizer's ``channel_``.
    """
    k = check_int(n_categories, "n_categories", min_value=2)
    privatizer = make_privatizer(name, categories=np.arange(k), **params)
    return privatizer.fit(np.zeros((1, 1), dtype=np.int64)).channel_


def _check_entry(entry):
    if not isinstance(entry, Mechanism):
        raise TypeError(f"expected a Mechanism(...) entry; got {type(entry).__name__}: {entry!r}")
    if not isinstance(entry.privatizer, type) or not issubclass(entry.privatizer, BasePrivatizer):
        raise TypeError(
            f"the entry {entry.name!r} must give its privatizer class (a subclass of "
            f"BasePrivatizer), not {entry.privatizer!r}: only the package's own entries name "
            "theirs by a name in skldp"
        )
    taken = MECHANISMS.get(entry.name)
    if taken is not None:
        raise ValueError(
            f"a mechanism named {entry.name!r} is already registered ({taken.class_name}); "
            "choose another name, or unregister it first"
        )
    clash = next((m for m in MECHANISMS.values() if m.cls is entry.privatizer), None)
    if clash is not None:
        raise ValueError(
            f"{entry.class_name} is already registered, as {clash.name!r}: one entry per "
            "privatizer class"
        )
    if not entry.guarantee or not entry.paper or not entry.family:
        raise ValueError(f"the entry {entry.name!r} must state its family, guarantee and paper")


def register(entry: Mechanism) -> Mechanism:
    """Add a mechanism defined outside the package to the registry.

    From then on it is listed by ``skldp mechanisms``, built by name with
    :func:`make_privatizer` and ``skldp privatize --mechanism``, ranked (or listed as not
    ranked, with the reason) by :func:`skldp.recommend_mechanism`, and run by the package's
    test lists. :func:`registered` adds an entry for the length of a ``with`` block.

    Parameters
    ----------
    entry : Mechanism
        Its short name, privatizer class, family, guarantee, paper and, optionally, what the
        advisor needs (``error_model``, ``assumption``, ``not_ranked``, ``shown``).

    Returns
    -------
    entry : Mechanism
        The entry, as registered.

    Raises
    ------
    TypeError
        If ``entry`` is not a :class:`Mechanism`, or its privatizer is not a class deriving
        from the base privatizer.
    ValueError
        If its name or its class is registered already, or it states no guarantee.
    """
    _check_entry(entry)
    MECHANISMS[entry.name] = entry
    trust_channels_of(entry.privatizer.__module__)  # its reports keep their channel in files
    return entry


def unregister(name: str) -> Mechanism:
    """Remove a mechanism added with :func:`register` (by short name); return its entry.

    Raises
    ------
    ValueError
        If no such mechanism was registered, or it is one of the package's own.
    """
    if name in builtin_mechanisms():
        raise ValueError(f"{name!r} is one of skldp's own mechanisms and cannot be unregistered")
    if name not in MECHANISMS:
        raise ValueError(f"no mechanism named {name!r} was registered")
    entry = MECHANISMS.pop(name)
    trust_channels_of(entry.privatizer.__module__, trusted=False)
    return entry


@contextlib.contextmanager
def registered(*entries: Mechanism) -> Iterator[Any]:
    """Register ``entries`` for the length of a ``with`` block (a scratch registry).

    Examples
    --------
    >>> from skldp import RandomizedResponse
    >>> from skldp.registry import Mechanism, registered, available_mechanisms
    >>> class MyRR(RandomizedResponse):
    ...     pass
    >>> line = Mechanism("my-rr", MyRR, "randomized response", "epsilon-LDP", "Warner 1965")
    >>> with registered(line):
    ...     "my-rr" in available_mechanisms()
    True
    >>> "my-rr" in available_mechanisms()
    False
    """
    done = []
    try:
        for entry in entries:
            done.append(register(entry).name)
        yield entries[0] if len(entries) == 1 else entries
    finally:
        for name in reversed(done):
            if name in MECHANISMS:
                unregister(name)

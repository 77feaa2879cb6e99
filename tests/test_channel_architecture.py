"""The architecture, checked: patterns that must not come back, and the contract's coverage.

Each pattern is a regular expression over the source of ``skldp/`` (or of some of its
packages), with the reason it is banned; a test names every line that matches. Add patterns
here as parts of the package are cleaned up.
"""

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import skldp
import skldp.channels as channels
import tests.channels
from tests.channel_contract import COVERED, COVERED_OPEN

ROOT = Path(skldp.__file__).parent

#: Top-level packages of skldp whose private modules belong to that package alone.
_PACKAGES = ("channels", "estimators", "privatizers", "datasets")

#: (where, pattern, reason). ``where`` is a tuple of paths under skldp/ ("" for all of it).
BANNED = [
    (
        ("",),
        r"report_kind\s*[!=]=",
        "dispatch on the report format with isinstance(channel, SymbolReports / "
        "BitVectorReports), not on the descriptive report_kind string",
    ),
    (
        ("channels", "estimators"),
        r"\b(?:hasattr|getattr)\(\s*(?:self\.|spec\.)?(?:channel|ch|item|i)\b",
        "probe no channel for an ability: declare it as a type in skldp.channels "
        "(SparseMeasurements, CohortIncidence, ...) and test it with isinstance",
    ),
    (
        ("",),
        r"\bhasattr\(\s*channel\b",
        "a channel is a skldp.channels.Channel: test it with isinstance, not by its members",
    ),
    (
        ("channels", "estimators"),
        r"\b_ls_blocks\b|\bem_statistics\b|\bstatistics_from_em\b|\bmerge_em_statistics\b",
        "EM state lives in the likelihood model (channel.em_model); least-squares blocks are "
        "the declared least_squares_blocks",
    ),
    (
        ("channels",),
        r"raise NotImplementedError",
        "an abstract method (abc.abstractmethod) says what a subclass must write",
    ),
    (
        ("channels",),
        r"weakref",
        "a channel is an immutable value: nothing it keeps is tied to statistics",
    ),
]


def _sources(where):
    for part in where:
        base = ROOT / part if part else ROOT
        yield from sorted(base.rglob("*.py"))


def _matches(where, pattern):
    rx = re.compile(pattern)
    hits = []
    for path in _sources(where):
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if rx.search(line):
                hits.append(f"{path.relative_to(ROOT.parent)}:{lineno}: {line.strip()}")
    return hits


@pytest.mark.parametrize(
    "where,pattern,reason", BANNED, ids=[f"{'+'.join(w) or 'skldp'}:{p}" for w, p, _ in BANNED]
)
def test_banned_pattern_is_absent(where, pattern, reason):
    hits = _matches(where, pattern)
    assert not hits, f"{reason}:\n" + "\n".join(hits)


def test_banned_patterns_would_be_found():
    # Each pattern matches the code it bans (so a test above cannot pass by a typo).
    samples = [
        'if channel.report_kind == "symbol":',
        'hook = getattr(channel, "sparse_measurements", None)',
        'if hasattr(channel, "to_dense"):',
        "blocks=getattr(channel, '_ls_blocks', None)",
        "raise NotImplementedError",
        "import weakref",
    ]
    for (_, pattern, _), sample in zip(BANNED, samples, strict=True):
        assert re.search(pattern, sample), pattern


def _public_classes():
    return {
        name: obj for name in channels.__all__ if inspect.isclass(obj := getattr(channels, name))
    }


def _concrete(cls, base):
    return issubclass(cls, base) and not inspect.isabstract(cls)


def test_contract_runs_on_every_public_channel():
    # Importing the family test modules registers the channels their contract fixtures hold.
    for info in pkgutil.iter_modules(tests.channels.__path__):
        importlib.import_module(f"tests.channels.{info.name}")
    importlib.import_module("tests.privatizers.test_unary_and_utility_optimized")
    public = _public_classes()
    concrete = {n for n, c in public.items() if _concrete(c, channels.Channel)}
    open_ones = {n for n, c in public.items() if _concrete(c, channels.OpenAlphabetChannel)}
    assert {"RandomizedResponseChannel", "CohortRAPPORChannel"} <= concrete
    assert open_ones == {
        "HashedRRChannel",
        "HashedRAPPORChannel",
        "OpenCountMeanSketchChannel",
        "OpenHadamardCountMeanSketchChannel",
    }
    missing = sorted(concrete - {c.__name__ for c in COVERED})
    assert not missing, f"public channels with no contract test: {missing}"
    missing_open = sorted(open_ones - {c.__name__ for c in COVERED_OPEN})
    assert not missing_open, f"open-alphabet channels with no contract test: {missing_open}"


def test_every_public_channel_is_one_report_family():
    # Exactly one report format per concrete channel; open alphabets are no Channel.
    formats = (channels.SymbolReports, channels.BitVectorReports)
    for name, cls in _public_classes().items():
        if _concrete(cls, channels.Channel):
            assert sum(issubclass(cls, f) for f in formats) == 1, name
            assert issubclass(cls, (channels.SymbolChannel, channels.BitVectorChannel)), name
        if issubclass(cls, channels.OpenAlphabetChannel):
            assert not issubclass(cls, channels.Channel), name
            if not inspect.isabstract(cls):
                assert sum(issubclass(cls, f) for f in formats) == 1, name


def test_channel_members_are_abstract():
    # A channel that leaves out a hook cannot be built: abc says which one.
    class Incomplete(channels.SymbolChannel):
        n_inputs = n_outputs = 2

        def _key(self):
            return ()

    with pytest.raises(TypeError, match="abstract method"):
        Incomplete()
    assert {"_sample", "_forward", "_adjoint", "guarantee"} <= Incomplete.__abstractmethods__

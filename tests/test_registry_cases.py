"""The test registry (``tests/registry.py``) fails loudly: a broken line stops collection.

Before it was one module, ``tests/registry.py`` gathered ``tests/instances_*.py`` and kept a
privatizer only if it fitted some small domain: a case that fitted none was dropped from every
trust test without a word. Now every case is built and fitted when the registry is imported,
and every problem is raised at once, naming its line.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skldp._registry import (
    MECHANISMS,
    NOT_ON_THE_COMMAND_LINE,
    available_mechanisms,
    builtin_mechanisms,
    get_mechanism,
)
from tests import registry
from tests.registry import CASES, RegistryError, build, case

ROOT = Path(__file__).resolve().parents[1]


def test_every_available_mechanism_is_in_the_trust_tests_or_says_why():
    trusted = {type(p).__name__ for p in registry.PRIVATIZERS}
    reasons = {c.mechanism: c.trust for c in CASES if isinstance(c.trust, str)}
    expected = {get_mechanism(n).class_name for n in available_mechanisms() if n not in reasons}
    expected |= {name for name in NOT_ON_THE_COMMAND_LINE if name not in reasons}
    assert trusted == expected
    # Only mechanisms whose rows carry a second column (a tag, a person's key) and attribute
    # sampling (an attribute index beside the report) are left out of the trust tests, and
    # Square Wave (numbers in a public range, not categories: its own tests), and the
    # heavy-hitter protocols (m-bit values read by HeavyHitterEstimator: their own tests).
    second_column = {m.name for m in MECHANISMS.values() if m.tag_column or m.key_column}
    heavy_hitters = {"PrefixExtension", "TreeHistogram"}
    assert set(reasons) == second_column | {"AttributeSampling", "square-wave"} | heavy_hitters
    # one privatizer per class in MECHANISMS; every trust case and every checked case is built
    # (counted from the registry's lines, not written here: a new line needs no edit here)
    assert sorted(type(p).__name__ for p in registry.MECHANISMS) == sorted(expected)
    assert len(registry.PRIVATIZERS) == sum(c.trust is True for c in CASES)
    assert len(registry.CHECKED) == sum(c.checks is not None for c in CASES)
    assert {get_mechanism(n).class_name for n in builtin_mechanisms()} <= {
        type(inst).__name__ for inst, _, _ in registry.CHECKED
    }


@pytest.mark.parametrize(
    "broken, message",
    [
        (case("nope", epsilon=1.0), r"case\('nope', epsilon=1.0\): ValueError: unknown mechanism"),
        (case("krr", epsilonn=1.0), r"RandomizedResponse has no parameter 'epsilonn'"),
        # no domain fits: it used to be dropped from the trust tests in silence
        (case("krr", epsilon=-1.0), r"case\('krr', epsilon=-1.0\): InvalidParameterError: eps"),
        (case("krr", epsilon=1.0, categories=[]), r"case\('krr', epsilon=1.0, categories=\[\]\)"),
        (case("krr", epsilon=1.0, checks="all"), r"checks must be one of"),
        (("krr", {"epsilon": 1.0}), r"expected a case\(\.\.\.\) line, got tuple"),
    ],
)
def test_a_broken_case_raises_naming_it(broken, message):
    with pytest.raises(RegistryError, match=r"1 broken entry in the test registry") as info:
        build([*CASES, broken])
    assert len(str(info.value).splitlines()) == 2
    assert info.match(message)


def test_a_mechanism_without_a_case_is_named_and_every_problem_is_listed():
    without_olh = [c for c in CASES if c.mechanism != "olh"]
    with pytest.raises(RegistryError, match=r"2 broken entries") as info:
        build([*without_olh, case("nope")])
    assert info.match(r"mechanism 'olh' \(LocalHashing\) has no case in the trust tests")
    assert info.match(r"case\('nope', \): ValueError: unknown mechanism 'nope'")
    # a case left out of the trust tests does not count; a reason on one of its cases does
    demoted = [case("olh", epsilon=1.0, trust=False), *without_olh]
    with pytest.raises(RegistryError, match="'olh'"):
        build(demoted)
    excused = [case("olh", epsilon=1.0, trust="measured elsewhere"), *without_olh]
    assert [c for c, _, trusted in build(excused) if c.mechanism == "olh" and trusted] == []


def test_a_broken_line_fails_test_collection(tmp_path):
    """The registry's own source with one broken line: pytest stops at collection, naming it."""
    source = (ROOT / "tests" / "registry.py").read_text()
    assert source.count("\nCASES = [\n") == 1
    broken = source.replace("\nCASES = [\n", '\nCASES = [\n    case("krr", epsilonn=1.0),\n')
    (tmp_path / "broken_registry.py").write_text(broken)
    (tmp_path / "test_uses_registry.py").write_text(
        "from broken_registry import PRIVATIZERS\n\n\ndef test_one():\n    assert PRIVATIZERS\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            str(tmp_path / "test_uses_registry.py"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert out.returncode == 2, out.stdout + out.stderr  # 2: interrupted by collection errors
    assert "RegistryError: 1 broken entry in the test registry" in out.stdout
    assert (
        "case('krr', epsilonn=1.0): ValueError: RandomizedResponse has no parameter" in out.stdout
    )

"""The console script's launcher (skldp_cli): --version answers without importing skldp."""

import json
import os
import subprocess
import sys

import pytest

import skldp

_PROBE = (
    "import sys; from skldp_cli import main; code = main(['--version']); "
    "print('imported' if 'skldp' in sys.modules else 'not imported'); sys.exit(code)"
)


def test_version_is_answered_without_importing_skldp():
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.splitlines() == [f"skldp {skldp.__version__}", "not imported"]


_HELP_PROBE = (
    "import sys; from skldp_cli import main; code = main(sys.argv[1:]); "
    "heavy = ('skldp', 'sklearn', 'scipy', 'pandas', 'numpy'); "
    "print(sorted(m for m in heavy if m in sys.modules)); sys.exit(code)"
)


def _launch(*argv, cache=None):
    env = {**os.environ, "SKLDP_CACHE_DIR": str(cache or os.devnull)}  # never the user's
    return subprocess.run(
        [sys.executable, "-c", _HELP_PROBE, *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["-h"],
        ["demo", "--help"],
        ["mechanisms", "--help"],
        ["advise", "--help"],
        ["advise", "-k", "0", "-n", "10"],  # an error in the arguments
        ["frobnicate"],
    ],
    ids=" ".join,
)
def test_help_and_argument_errors_import_no_skldp_nor_its_dependencies(argv):
    # Structural, not timed: a help that loads none of these starts in tens of milliseconds.
    out = _launch(*argv)
    assert out.stdout.splitlines()[-1] == "[]", out.stdout[-500:]
    if "--help" in argv or "-h" in argv:
        assert out.returncode == 0 and "usage: skldp" in out.stdout
    else:
        assert out.returncode == 2 and "(see skldp" in out.stderr


@pytest.mark.parametrize("command", ["privatize", "estimate"])
def test_the_registry_lists_in_the_help_are_read_once_then_kept(command, tmp_path):
    from skldp.cli import build_parser

    first = _launch(command, "--help", cache=tmp_path)
    assert first.returncode == 0
    assert "'sklearn'" in first.stdout.splitlines()[-1]  # read from the registry
    kept = _launch(command, "--help", cache=tmp_path)
    assert kept.returncode == 0 and kept.stdout.splitlines()[-1] == "[]"  # from the file
    assert kept.stdout.splitlines()[:-1] == first.stdout.splitlines()[:-1]
    live = build_parser()._subparsers._group_actions[0].choices[command].format_help()
    assert kept.stdout.rstrip().rsplit("\n", 1)[0] == live.rstrip()
    assert ("RandomizedResponse: epsilon=1.0" in live) == (command == "privatize")


def test_a_kept_help_of_another_source_is_not_used(tmp_path):
    from skldp_cli import _help_cache

    (tmp_path / _help_cache.FILE_NAME).write_text(
        json.dumps({"key": "0" * 64, "texts": dict.fromkeys(_help_cache.TEXTS, "STALE")})
    )
    out = _launch("privatize", "--help", cache=tmp_path)
    assert "STALE" not in out.stdout and "RandomizedResponse: epsilon=1.0" in out.stdout
    kept = json.loads((tmp_path / _help_cache.FILE_NAME).read_text())
    assert kept["key"] == _help_cache.source_key()


def test_a_cache_folder_that_cannot_be_written_only_costs_time():
    out = _launch("estimate", "--help", cache=os.devnull)  # a file, not a folder
    assert out.returncode == 0 and "EMEstimator: tol=1e-08" in out.stdout


def test_the_parser_prints_the_package_version():
    from skldp_cli import _source_version
    from skldp_cli._parser import build_parser

    assert _source_version() == skldp.__version__
    assert build_parser("9.9").prog == "skldp"

"""The console script's launcher (skldp_cli): --version answers without importing skldp."""

import subprocess
import sys

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

"""What the command-line test files share: running ``skldp`` in-process."""

from skldp.cli import main


def run(argv, capsys):
    """Run ``skldp argv`` (items turned to str); return (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err

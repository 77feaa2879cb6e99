"""The documentation site builds without a single warning, every cross-reference resolved
(``sphinx-build -W -n``: nitpicky; other projects' objects are plain text, see docs/conf.py)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("numpydoc")

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_docs_build_without_warnings(tmp_path):
    out = tmp_path / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        capture_output=True, text=True, check=False, env={"MPLBACKEND": "Agg", **os.environ},
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    # the user guide targets that docstrings use resolve to pages
    guide = out / "user_guide"
    assert (guide / "randomized_response.html").is_file() and (guide / "estimators.html").is_file()
    # the API reference covers the public names, the gallery shows the examples with figures
    api = (out / "api.html").read_text(encoding="utf-8")
    for name in ["RandomizedResponse", "EMEstimator", "run_experiment", "load_gowalla", "plot_error"]:
        assert name in api
    assert (out / "generated" / "skldp.RandomizedResponse.html").is_file()
    # class pages document their methods (link targets for :meth:), modules are targets too
    page = (out / "generated" / "skldp.channels.PersonalizedChannel.html").read_text(encoding="utf-8")
    assert 'id="skldp.channels.PersonalizedChannel.effective_matrix"' in page
    assert 'id="module-skldp.theory"' in api and 'id="module-skldp.plotting"' in api
    gallery = (out / "gallery.html").read_text(encoding="utf-8")
    examples = sorted((DOCS.parent / "examples").glob("*.py"))
    # a script that another script imports is a helper: named, but not shown as an example
    imports = "\n".join(path.read_text(encoding="utf-8") for path in examples)
    helpers = [p for p in examples if re.search(rf"^(from|import) {p.stem}\b", imports, flags=re.M)]
    assert "uldp_common.py" in [p.name for p in helpers]
    shown = [p for p in examples if p not in helpers]
    assert all(f"examples/{path.name}" in gallery for path in shown)
    assert "examples/uldp_common.py" not in gallery and "uldp_common.py" in gallery
    assert "plot_estimators_vs_n.png" in gallery


def test_audit_table_lists_every_privatizer():
    # docs/user_guide/privacy_audit.rst includes this table; regenerate it with
    # benchmarks/audit_table.py when a privatizer is added.
    import numpy as np

    import skldp
    from skldp._base import BasePrivatizer

    text = (DOCS / "user_guide" / "audit_table.rst.inc").read_text(encoding="utf-8")
    n = re.search(r"n = ([\d,]+) reports per tested input", text)
    assert n and int(n.group(1).replace(",", "")) >= 10_000  # the sample size is stated
    rows = re.findall(r"^   \* - (.+)\n((?:     - .*\n)+)", text, flags=re.M)
    table = [(name, [c[len("     - ") :] for c in body.splitlines()]) for name, body in rows]
    classes = [
        name
        for name in skldp.__all__
        if isinstance(getattr(skldp, name), type)
        and issubclass(getattr(skldp, name), BasePrivatizer)
    ]
    assert len(classes) >= 16
    for name in classes:
        mine = [cell for row, cell in table if row == name or row.startswith(name + " (")]
        assert len(mine) >= 2, f"{name} is missing from the audit table (one row per budget)"
        for guarantee, _, bound, *_ in mine:
            assert guarantee and float(bound) > 0  # its guarantee and the audited lower bound
    # The planted bugs fail, with an infinite loss for the invertibility leak.
    leak = [c for row, c in table if row.startswith("planted bug: uRR")]
    assert leak and all(c[2] == "∞" and "failed" in c[5] for c in leak)
    unary = [c for row, c in table if row.startswith("planted bug: unary")]
    assert unary and all(np.isfinite(float(c[2])) and "failed" in c[5] for c in unary)
    # The prose of privacy_audit.rst quotes the planted unary bug's bound from this table.
    prose = (DOCS / "user_guide" / "privacy_audit.rst").read_text(encoding="utf-8")
    quoted = re.findall(r"lower bound ([\d.]+) for a claim of 1", prose)
    assert quoted == [unary[0][2]]

"""The documentation site builds without a single warning, every cross-reference resolved
(``sphinx-build -W -n``: nitpicky; other projects' objects are plain text, see docs/conf.py),
runs the gallery (sphinx-gallery, fast mode) and works offline; estimators link to it."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("numpydoc")

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _estimator_classes():
    from sklearn.base import BaseEstimator

    import skldp

    return [
        getattr(skldp, name)
        for name in skldp.__all__
        if isinstance(getattr(skldp, name), type)
        and issubclass(getattr(skldp, name), BaseEstimator)
    ]


def test_html_repr_links_every_estimator_to_its_api_page():
    # scikit-learn's documented hook for third-party estimators (_doc_link_module, _template,
    # _url_param_generator): the diagram's "?" links to the page the docs build generates.
    from sklearn.pipeline import make_pipeline

    from skldp import EMEstimator, RandomizedResponse

    classes = _estimator_classes()
    assert len(classes) >= 20
    for cls in classes:
        link = object.__new__(cls)._get_doc_link()  # some need parameters
        assert link.endswith(f"/generated/skldp.{cls.__name__}.html"), (cls, link)
        assert link.startswith("https://skldp.readthedocs.io/en/latest/")
    html = make_pipeline(RandomizedResponse(), EMEstimator())._repr_html_()
    base = "https://skldp.readthedocs.io/en/latest/generated"
    assert f'href="{base}/skldp.RandomizedResponse.html"' in html
    assert f'href="{base}/skldp.EMEstimator.html"' in html


def test_docs_build_without_warnings(tmp_path):
    out = tmp_path / "html"
    env = {**os.environ, "MPLBACKEND": "Agg", "SKLDP_GALLERY_FAST": "1"}
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "-n",
            "--keep-going",
            "-q",
            "-b",
            "html",
            "-d",
            str(tmp_path / "doctrees"),
            str(DOCS),
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr[-4000:]
    print(f"docs build (gallery in fast mode): {elapsed:.0f} s")
    # the user guide targets that docstrings use resolve to pages
    guide = out / "user_guide"
    assert (guide / "randomized_response.html").is_file() and (guide / "estimators.html").is_file()
    # the API reference covers the public names, the gallery shows the examples with figures
    api = (out / "api.html").read_text(encoding="utf-8")
    for name in [
        "RandomizedResponse",
        "EMEstimator",
        "run_experiment",
        "load_gowalla",
        "plot_error",
    ]:
        assert name in api
    # every page the estimators' HTML diagrams link to exists
    for cls in _estimator_classes():
        page = object.__new__(cls)._get_doc_link().rsplit("/generated/", 1)[1]
        assert (out / "generated" / page).is_file(), page
    # class pages document their methods (link targets for :meth:), modules are targets too
    page = (out / "generated" / "skldp.channels.PersonalizedChannel.html").read_text(
        encoding="utf-8"
    )
    assert 'id="skldp.channels.PersonalizedChannel.effective_matrix"' in page
    assert 'id="module-skldp.theory"' in api and 'id="module-skldp.plotting"' in api

    # The gallery: every example ran at build time; a helper module is not a page.
    gallery = (out / "auto_examples" / "index.html").read_text(encoding="utf-8")
    examples = sorted((DOCS.parent / "examples").glob("*.py"))
    imports = "\n".join(path.read_text(encoding="utf-8") for path in examples)
    helpers = [
        p for p in examples if re.search(rf"^(from|import) {p.stem}\b", imports, flags=re.MULTILINE)
    ]
    assert [p.name for p in helpers] == ["uldp_common.py"]
    assert not (out / "auto_examples" / "uldp_common.html").exists()
    shown = [p for p in examples if p not in helpers]
    assert len(shown) >= 13
    for path in shown:
        assert f'href="{path.stem}.html' in gallery, path.name
        html = (out / "auto_examples" / f"{path.stem}.html").read_text(encoding="utf-8")
        # downloads: the script and a notebook, both written
        for ext in (".py", ".ipynb"):
            link = re.search(rf'href="\.\./(_downloads/\w+/{path.stem}{re.escape(ext)})"', html)
            assert link and (out / link.group(1)).is_file(), (path.name, ext)
        # what the run printed, and its figures (every plotting script leaves one)
        assert "sphx-glr-script-out" in html, path.name
        source = path.read_text(encoding="utf-8")
        if "plt." in source or "plot(" in source:
            figures = re.findall(rf'src="\.\./(_images/sphx_glr_{path.stem}_\d+\.png)"', html)
            assert figures and all((out / f).is_file() for f in figures), path.name
    # The tutorial goes from the raw column to intervals and a map.
    tutorial = (out / "auto_examples" / "plot_tutorial_gowalla.html").read_text(encoding="utf-8")
    assert "95% intervals that cover the true probability" in tutorial
    assert len(re.findall(r"sphx_glr_plot_tutorial_gowalla_\d+\.png", tutorial)) >= 2

    # Offline: math is rendered by the MathJax bundled into the site, and no page loads a
    # script or a style sheet from the network.
    assert (out / "_static" / "mathjax" / "tex-chtml.js").is_file()
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'src="_static/mathjax/tex-chtml.js"' in index
    remote = re.compile(r"<(?:script|link)\b[^>]*\b(?:src|href)=[\"'](?:https?:)?//", re.IGNORECASE)
    for html in out.rglob("*.html"):
        assert not remote.search(html.read_text(encoding="utf-8")), html.relative_to(out)
    # The landing page has the feature table and the way into the decision guide.
    assert "which_mechanism.html" in index and "HashedRAPPOR" in index
    assert (out / "which_mechanism.html").is_file()


def test_audit_table_lists_every_privatizer():
    # docs/user_guide/privacy_audit.rst includes this table; regenerate it with
    # benchmarks/audit_table.py when a privatizer is added.
    import numpy as np

    import skldp
    from skldp.base import BasePrivatizer
    from skldp._registry import NOT_ON_THE_COMMAND_LINE, builtin_mechanisms, get_mechanism

    text = (DOCS / "user_guide" / "audit_table.rst.inc").read_text(encoding="utf-8")
    n = re.search(r"n = ([\d,]+) reports per tested input", text)
    assert n and int(n.group(1).replace(",", "")) >= 10_000  # the sample size is stated
    rows = re.findall(r"^   \* - (.+)\n((?:     - .*\n)+)", text, flags=re.MULTILINE)
    table = [(name, [c[len("     - ") :] for c in body.splitlines()]) for name, body in rows]
    # every built-in mechanism of the registry, and the exported privatizers it leaves out
    classes = [get_mechanism(name).class_name for name in builtin_mechanisms()]
    classes += list(NOT_ON_THE_COMMAND_LINE)
    exported = {
        name
        for name in skldp.__all__
        if isinstance(getattr(skldp, name), type)
        and issubclass(getattr(skldp, name), BasePrivatizer)
    }
    assert set(classes) == exported
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

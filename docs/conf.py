"""Sphinx configuration of the skldp documentation.

Two pages are generated here, at configuration time, so that new public names and new
examples appear without editing any page: ``api.rst`` (from the ``__all__`` of skldp and its
public modules) and ``mechanisms_table.rst.inc`` (from the registry). The gallery
(``auto_examples/``) is written by sphinx-gallery, which runs every example at build time.
"""

import importlib
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))  # gallery_argv

# Sphinx runs this file from any folder: the checkout and docs/ go on sys.path first.
import gallery_argv  # noqa: E402
import skldp  # noqa: E402

project = "skldp"
author = "the skldp developers"
copyright = "2026, the skldp developers"
release = skldp.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    # MathJax bundled into the site (_static/mathjax): formulas render without network access
    "sphinx-mathjax-offline",
]
templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
html_theme = "pydata_sphinx_theme"
html_static_path = []
html_title = f"skldp {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
    # no icon fonts or analytics fetched from elsewhere: the site works offline
    "icon_links": [],
}
html_sidebars = {"index": [], "which_mechanism": []}

autosummary_generate = True
autodoc_default_options = {}
# The public API carries type hints (checked by mypy in tests/test_typing.py); as in
# scikit-learn, the pages show types from the numpydoc "Parameters" sections, which say more
# (shapes, allowed strings, defaults) than the annotations, so signatures stay unannotated.
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
suppress_warnings = ["autosummary.import_cycle"]
# Nitpicky builds (sphinx-build -n) check every cross-reference. Other projects' objects have
# no targets here (intersphinx would fetch their inventories over the network at build time),
# so references to them are left as plain text.
nitpick_ignore_regex = [
    (
        r"py:.*",
        r"(sklearn|numpy|scipy|pandas|joblib|dask|distributed|matplotlib|importlib|dataclasses|"
        r"pyspark)(\..*)?",
    ),
    # private helpers that the base classes' docstrings name (skldp.base re-exports the
    # classes, so their pages are built; the helpers have none)
    (r"py:class", r"(LazyAttribute|skldp\._reports\.ReportSpec)"),
]

# ------------------------------------------------------------------------------------------------
# API reference: every public name, module by module

API_MODULES = [
    ("skldp", "Top level: privatizers, estimators and warnings"),
    ("skldp.privatizers", "Privatizers (client side)"),
    ("skldp.estimators", "Distribution estimators (server side)"),
    ("skldp.channels", "Channels (the mathematics of each mechanism)"),
    ("skldp.base", "Extension API: base classes and parameter constraints"),
    ("skldp.privacy", "Privacy models and verification"),
    ("skldp.attacks", "Poisoning attacks"),
    ("skldp.metrics", "Metrics and scorers"),
    ("skldp.projection", "Projections onto the simplex"),
    ("skldp.datasets", "Data sets and synthetic distributions"),
    ("skldp.io", "Report files: packed bit vectors, chunks"),
    ("skldp.spark", "Spark data frames (the spark extra)"),
    ("skldp.theory", "Closed-form risks (theory)"),
    ("skldp.experiments", "Experiments"),
    ("skldp.plotting", "Plotting"),
    ("skldp.registry", "The registry of mechanisms (adding one)"),
    ("skldp.exceptions", "Exceptions and warnings"),
]


#: (module, qualname) of every object the API page documents -> the name it is documented under
_DOCUMENTED = {}


def _write_if_changed(path, text):
    path = Path(path)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _api_page():
    lines = [
        ".. _api:",
        "",
        "API reference",
        "=============",
        "",
        "",
        "Every public name of skldp, by module. A name available at the top level of skldp is",
        "listed there, once. In Jupyter, the diagram of a fitted pipeline links each skldp",
        "estimator to its page here (``https://skldp.readthedocs.io/en/<version>/generated/<name>.html``,",
        "``latest`` for a development version; the hook is scikit-learn's ``_doc_link_template``",
        "on skldp's base classes).",
        "",
    ]
    seen = set()
    for modname, title in API_MODULES:
        try:
            module = importlib.import_module(modname)
        except ImportError:  # a module another part of the project has not added yet
            continue
        names = []
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            if obj is None or name.startswith("_") or isinstance(obj, type(sys)):
                continue
            if not (callable(obj) or isinstance(obj, type)):
                continue
            key = (getattr(obj, "__module__", modname), getattr(obj, "__qualname__", name))
            if key in seen:
                continue
            seen.add(key)
            _DOCUMENTED[key] = f"{modname}.{name}"
            names.append(name)
        if not names:
            continue
        lines += [title, "-" * len(title), "", f".. automodule:: {modname}", "   :no-members:", ""]
        lines += [
            f".. currentmodule:: {modname}",
            "",
            ".. autosummary::",
            "   :toctree: generated/",
            "",
        ]
        lines += [f"   {name}" for name in sorted(names, key=lambda n: (not n[0].isupper(), n))]
        lines.append("")
    _write_if_changed(HERE / "api.rst", "\n".join(lines))


# ------------------------------------------------------------------------------------------------
# gallery: the examples, executed at build time by sphinx-gallery (gallery_argv.py: fast mode)

os.environ.setdefault("SKLDP_GALLERY_FAST", "1" if gallery_argv.fast() else "0")
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # every script is an example (not only plot_*), except the helpers they import
    "filename_pattern": r".*\.py$",
    "ignore_pattern": r"(__init__|uldp_common)\.py$",
    "reset_argv": "gallery_argv.reset_argv",
    "within_subsection_order": "FileNameSortKey",
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "abort_on_example_error": True,
    "download_all_examples": True,
    "show_memory": False,
    # the computation-times page loads jQuery and DataTables from CDNs: not written (offline)
    "write_computation_times": False,
    "remove_config_comments": True,
    "plot_gallery": "True",
    "min_reported_time": 1,
    "capture_repr": ("_repr_html_", "__repr__"),
    "default_thumb_file": None,
}


def _mechanisms_table():
    """The registry of ``skldp mechanisms`` as a table: what this build offers."""
    from skldp._registry import MECHANISMS

    rows = [
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 16 22 40 22",
        "",
        "   * - name",
        "     - class",
        "     - guarantee",
        "     - paper",
    ]
    for m in MECHANISMS.values():
        if not m.available:
            continue
        rows += [
            f"   * - ``{m.name}``",
            f"     - :class:`~skldp.{m.class_name}`",
            f"     - {m.guarantee}"
            + (f" (needs ``{m.describe_required()}``)" if m.required else ""),
            f"     - {m.paper}",
        ]
    _write_if_changed(HERE / "mechanisms_table.rst.inc", "\n".join(rows) + "\n")


_api_page()
_mechanisms_table()
os.environ.setdefault("MPLBACKEND", "Agg")

# ------------------------------------------------------------------------------------------------
# docstring clean-up: a name ending in "_" inside a shape, "(n_features_in_,)", would be read
# by reStructuredText as a link target; quote it as code.

_SHAPE_NAME = re.compile(r"(?<![`\w])([A-Za-z]\w*_)(?=[,)\s])")


def _quote_shape_names(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if "shape (" in line or "shape=(" in line:
            head, sep, tail = line.partition("shape")
            lines[i] = head + sep + _SHAPE_NAME.sub(r"``\1``", tail)


# ------------------------------------------------------------------------------------------------
# cross-references: an object is documented once, under its shortest public name (skldp.X), but
# docstrings may name it where it is defined (skldp.estimators.X): resolve those names too.


def _lookup(dotted):
    """The object named ``dotted`` (a module, then attributes), or None."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return obj
    return None


def _documented_name(target):
    """The documented name of ``target`` (or of the documented object it is a member of)."""
    parts = target.split(".")
    for j in range(len(parts), 1, -1):
        obj = _lookup(".".join(parts[:j]))
        key = (getattr(obj, "__module__", None), getattr(obj, "__qualname__", None))
        if key in _DOCUMENTED:
            return ".".join([_DOCUMENTED[key], *parts[j:]])
    return None


def _resolve_other_names(app, env, node, contnode):
    if node.get("refdomain") != "py" or not node.get("reftarget", "").startswith("skldp."):
        return None
    name = _documented_name(node["reftarget"])
    if name is None or name == node["reftarget"]:
        return None
    py = env.get_domain("py")
    return py.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], name, node, contnode)


def setup(app):
    app.connect("autodoc-process-docstring", _quote_shape_names, priority=400)
    app.connect("missing-reference", _resolve_other_names)

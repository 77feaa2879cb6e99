"""Sphinx configuration of the skldp documentation.

Two pages are generated here, at configuration time, so that new public names and new
examples appear without editing any page: ``api.rst`` (from the ``__all__`` of skldp and its
public modules) and ``gallery.rst`` (from ``examples/*.py`` and the figures they write).
"""

import importlib
import os
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

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
]
templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
html_theme = "alabaster"
html_static_path = []
html_theme_options = {"description": "Distribution estimation under local differential privacy", "fixed_sidebar": True}

autosummary_generate = True
autodoc_default_options = {}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
suppress_warnings = ["autosummary.import_cycle"]
# Nitpicky builds (sphinx-build -n) check every cross-reference. Other projects' objects have
# no targets here (intersphinx would fetch their inventories over the network at build time),
# so references to them are left as plain text.
nitpick_ignore_regex = [
    (r"py:.*", r"(sklearn|numpy|scipy|pandas|joblib|dask|matplotlib|importlib)(\..*)?"),
]

# ------------------------------------------------------------------------------------------------
# API reference: every public name, module by module

API_MODULES = [
    ("skldp", "Top level: privatizers, estimators and warnings"),
    ("skldp.privatizers", "Privatizers (client side)"),
    ("skldp.estimators", "Distribution estimators (server side)"),
    ("skldp.channels", "Channels (the mathematics of each mechanism)"),
    ("skldp.privacy", "Privacy models and verification"),
    ("skldp.metrics", "Metrics and scorers"),
    ("skldp.projection", "Projections onto the simplex"),
    ("skldp.datasets", "Data sets and synthetic distributions"),
    ("skldp.io", "Report files: packed bit vectors, chunks"),
    ("skldp.theory", "Closed-form risks (theory)"),
    ("skldp.experiments", "Experiments"),
    ("skldp.plotting", "Plotting"),
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
        "Every public name of skldp, by module. A name available at the top level of skldp is listed",
        "there, once.",
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
        lines += [f".. currentmodule:: {modname}", "", ".. autosummary::", "   :toctree: generated/", ""]
        lines += [f"   {name}" for name in sorted(names, key=lambda n: (not n[0].isupper(), n))]
        lines.append("")
    _write_if_changed(HERE / "api.rst", "\n".join(lines))


# ------------------------------------------------------------------------------------------------
# gallery: the examples and the figures they write


def _docstring(path):
    text = path.read_text(encoding="utf-8")
    match = re.match(r'\s*(?:[rRuU]?)("""|\'\'\')(.*?)\1', text, re.DOTALL)
    return match.group(2).strip() if match else ""


def _as_rst(text):
    """The example's description as reStructuredText; escaped when it is not clean rst.

    Example docstrings are written as plain prose, where ``|X_S|`` or ``a_i*b`` would be rst
    markup; such a description is shown verbatim, as a literal block, instead.
    """
    from docutils import nodes
    from docutils.core import publish_doctree

    try:
        tree = publish_doctree(
            text, settings_overrides={"report_level": 5, "halt_level": 5, "warning_stream": False}
        )
        messages = list(tree.findall(nodes.system_message)) + tree.parse_messages + tree.transform_messages
        clean = not any(m["level"] >= 2 for m in messages) and not any(tree.findall(nodes.problematic))
    except Exception:  # noqa: BLE001 - anything docutils cannot take is shown escaped
        clean = False
    if clean:
        return text
    # not clean rst: shown verbatim, as a literal block (escaping markup characters breaks
    # the indentation of lists and continuation lines)
    return "::\n\n" + "\n".join("    " + line if line.strip() else "" for line in text.split("\n"))


def _helper_modules(scripts):
    """The scripts that other scripts import (``import x`` or ``from x import``): helpers
    shared by the examples, not examples themselves."""
    stems = {path.stem for path in scripts}
    imported = set()
    for path in scripts:
        text = path.read_text(encoding="utf-8")
        imported |= set(re.findall(r"^\s*(?:from|import)\s+(\w+)", text, flags=re.M)) - {path.stem}
    return sorted(path for path in scripts if path.stem in imported & stems)


def _gallery_page():
    scripts = sorted((ROOT / "examples").glob("*.py"))
    helpers = _helper_modules(scripts)
    examples = [path for path in scripts if path not in helpers]
    out_dir = HERE / "gallery"
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir()
    lines = [
        ".. _gallery:",
        "",
        "Gallery of examples",
        "===================",
        "",
        "Runnable scripts in the ``examples/`` folder of the repository, most of them reproducing a",
        "table or a figure of the papers. Each one prints its numbers and writes its figure;",
        "the figures and printed outputs below are the ones committed with the scripts (rerun a",
        "script to refresh them).",
        "A figure is shown when a PNG named after the script (``examples/<script>*.png``), or",
        "named in the script, is in ``examples/``, ``examples/figures/`` or ``examples/images/``.",
        "",
    ]
    if helpers:
        names = ", ".join(f"``{path.name}``" for path in helpers)
        lines += [f"Helper modules that the scripts import, not shown here: {names}.", ""]
    if not examples:
        lines.append("No examples yet.")
    for path in examples:
        doc = _docstring(path)
        title, _, body = doc.partition("\n")
        title = title.strip().rstrip(".") or path.stem
        title = re.sub(r"([\\`*_|\[\]])", r"\\\1", title)  # one line: escape markup
        lines += [title, "-" * len(title), ""]
        if body.strip():
            lines += [_as_rst(body.strip()), ""]
        # an example's figures: PNGs named after the script, or named in it as a literal
        # (``--output figure2.png``), found in examples/, examples/figures/ or examples/images/
        named = set(re.findall(r"([\w.-]+\.png)\b", path.read_text(encoding="utf-8")))
        folders = (path.parent, path.parent / "figures", path.parent / "images")
        figures = sorted(
            {p for folder in folders for p in folder.glob(f"{path.stem}*.png")}
            | {folder / name for folder in folders for name in named if (folder / name).is_file()}
        )
        for fig in figures:
            shutil.copy(fig, out_dir / fig.name)
            lines += [f".. image:: gallery/{fig.name}", f"   :alt: figure written by {path.name}", ""]
        # its recorded printed output (tables, claims checked), saved as examples/figures/<stem>.txt
        printed = path.parent / "figures" / f"{path.stem}.txt"
        if printed.is_file():
            lines += [
                f".. literalinclude:: ../examples/figures/{printed.name}",
                "   :language: text",
                f"   :caption: recorded output: examples/figures/{printed.name}",
                "",
            ]
        lines += [
            f".. literalinclude:: ../examples/{path.name}",
            "   :language: python",
            f"   :caption: examples/{path.name}",
            "",
        ]
    _write_if_changed(HERE / "gallery.rst", "\n".join(lines))


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
            f"     - {m.guarantee}" + (f" (needs ``{m.describe_required()}``)" if m.required else ""),
            f"     - {m.paper}",
        ]
    _write_if_changed(HERE / "mechanisms_table.rst.inc", "\n".join(rows) + "\n")


_api_page()
_gallery_page()
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

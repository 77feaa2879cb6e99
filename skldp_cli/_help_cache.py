"""The registry's lists at the end of ``privatize --help`` and ``estimate --help``, kept.

Those lists (every mechanism and estimator with its parameters' defaults) are read from the
registry and the classes' signatures, which takes importing skldp and scikit-learn: seconds.
The text depends on skldp's source only, so it is kept in a file under the user's cache folder
(``$SKLDP_CACHE_DIR``, else ``$XDG_CACHE_HOME/skldp``, else ``~/.cache/skldp``) with a key: the
SHA-256 of the Python version and of every ``.py`` file of the skldp package found on the path
(about 100 files, read in milliseconds, without importing them). A help whose key matches is
read from the file; any other (the first after an install or an edit of skldp) imports skldp,
computes the lists and writes the file (written whole, then renamed; a folder that cannot be
written is skipped silently). So the lists shown are always those of the skldp that would run.
"""

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

__all__ = ["epilog"]

#: The help texts kept: names of functions of :mod:`skldp.cli`.
TEXTS = ("mechanisms_epilog", "estimators_epilog")

FILE_NAME = "help.json"


def cache_dir():
    """The folder of the kept help texts."""
    if os.environ.get("SKLDP_CACHE_DIR"):
        return Path(os.environ["SKLDP_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "skldp"


def source_key():
    """SHA-256 of the Python version and of the skldp package's source (None: not found)."""
    spec = importlib.util.find_spec("skldp")
    if spec is None or not spec.origin:
        return None
    root = Path(spec.origin).parent
    digest = hashlib.sha256(repr(sys.version_info[:2]).encode())
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _read(path, key):
    try:
        with open(path, encoding="utf-8") as f:
            kept = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("key") != key:
        return None
    texts = kept.get("texts")
    return texts if isinstance(texts, dict) and set(TEXTS) <= set(texts) else None


def _write(path, key, texts):
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".help-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"key": key, "texts": texts}, f)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs the next help its import


def epilog(name):
    """The text of ``skldp.cli.<name>()``: kept, or computed (importing skldp) and kept."""
    key = source_key()
    path = cache_dir() / FILE_NAME
    texts = _read(path, key) if key is not None else None
    if texts is None:
        from skldp import cli

        texts = {text: getattr(cli, text)() for text in TEXTS}
        if key is not None:
            _write(path, key, texts)
    return texts[name]

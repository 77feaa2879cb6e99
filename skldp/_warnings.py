"""Warnings that point at the user's line.

A warning issued deep inside skldp should be reported at the line of the user's code that
called into skldp, whatever the depth of the call (``fit`` -> ``partial_fit`` -> ``_estimate``,
or the Dask path, which adds frames). A hard-coded ``stacklevel`` breaks whenever a call
path changes, so :func:`warn` computes it: the level of the first frame whose code lies
outside the ``skldp`` package, scikit-learn and joblib. scikit-learn's frames (and those of
joblib, through which ``Pipeline`` and ``GridSearchCV`` call their steps) are skipped too
because they call skldp's methods on the user's behalf: ``fit_transform`` (from
``TransformerMixin``), ``Pipeline.fit`` and ``GridSearchCV.fit`` are the user's calls, so the
warning names the user's line rather than a line of ``sklearn/base.py``. Frames of other
libraries (Dask's schedulers) are not skipped.
"""

import importlib.util
import os
import sys
import warnings


def _package_dirs(*names):
    """The directories of installed packages, found without importing them."""
    out = []
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            out.extend(os.path.abspath(d) + os.sep for d in spec.submodule_search_locations)
    return tuple(out)


#: Directories whose frames are not the user's: skldp itself, scikit-learn and joblib.
_SKIPPED_DIRS = (
    os.path.dirname(os.path.abspath(__file__)) + os.sep,
    *_package_dirs("sklearn", "joblib"),
)


def external_stacklevel():
    """The ``stacklevel`` of the first frame outside skldp, scikit-learn and joblib, for a
    ``warnings.warn`` call made by the caller of this function."""
    # Level 1 of a warnings.warn call is the function that calls it, i.e. our caller.
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_SKIPPED_DIRS):
        frame, level = frame.f_back, level + 1
    return level


def warn(message, category=UserWarning):
    """``warnings.warn(message, category)`` attributed to the user's line (see above)."""
    warnings.warn(message, category, stacklevel=external_stacklevel())

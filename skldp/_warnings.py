"""Warnings that point at the user's line.

A warning issued deep inside skldp should be reported at the line of the user's code that
called into skldp, whatever the depth of the call (``fit`` -> ``partial_fit`` -> ``_estimate``,
or the Dask path, which adds frames). A hard-coded ``stacklevel`` breaks whenever a call
path changes, so :func:`warn` computes it: the level of the first frame whose code lies
outside the ``skldp`` package directory. Frames of other libraries between the user and skldp
(a scikit-learn ``Pipeline``) are outside skldp too, so the warning then points at the
library's line that called skldp, as scikit-learn's own warnings do.
"""

import os
import sys
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def external_stacklevel():
    """The ``stacklevel`` of the first frame outside skldp, for a ``warnings.warn`` call made
    by the caller of this function."""
    # Level 1 of a warnings.warn call is the function that calls it, i.e. our caller.
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        _PACKAGE_DIR
    ):
        frame, level = frame.f_back, level + 1
    return level


def warn(message, category=UserWarning):
    """``warnings.warn(message, category)`` attributed to the first frame outside skldp."""
    warnings.warn(message, category, stacklevel=external_stacklevel())

"""The stacklevel of a warning that points at the user's line (one place for every warning)."""

import os
import sys

import sklearn


def user_stacklevel():
    """The ``stacklevel`` of the caller's caller's first frame outside skldp and scikit-learn.

    For a warning raised in the function that calls this: the user's line, however many
    skldp and scikit-learn frames (``fit_transform``, output wrappers, Dask glue) lie between.
    """
    skip = (os.path.dirname(os.path.abspath(__file__)), os.path.dirname(sklearn.__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(skip):
        frame, level = frame.f_back, level + 1
    return level

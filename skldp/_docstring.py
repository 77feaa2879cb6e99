"""Shared parameter text, written once and substituted into docstrings.

A docstring names a shared entry on a line of its own, ``{random_state}``, indented as the
entry should be; :func:`substitute` replaces that line with the entry (its
``name : type, default=...`` line and its description, re-indented). Only lines that consist
of one placeholder are touched, so LaTeX braces in the rest of a docstring are left alone.
(The idea is imbalanced-learn's ``Substitution`` decorator; this is our own small version.)
"""

import re
import textwrap

#: The text of parameters that many classes share, without indentation.
PARAMETERS = {
    "epsilon": """\
epsilon : float, default=1.0
    Privacy budget of one report; a positive finite number.""",
    "categories": """\
categories : list of values, list of lists, or None, default=None
    The public domain: one list per column (a flat list for one column). None infers it
    from X and warns with a PrivacyLeakWarning, because that reveals which values occur.""",
    "random_state": """\
random_state : int, numpy.random.SeedSequence, numpy.random.Generator or None, default=None
    None (the default, for real data) draws fresh noise from the operating system on every
    call. An int or a SeedSequence makes the whole sequence of calls reproducible, from a
    stream of its own (never ``numpy.random.default_rng(seed)``, the data's); every call
    still draws fresh noise. A Generator is used as given. See :ref:`seeds`.""",
    "channel": """\
channel : Channel, fitted privatizer, list of them, or None, default=None
    The channel of reports that do not carry it (plain arrays, reports read from a file):
    a channel, the fitted privatizer that made the reports, or one per column. None reads
    it from the reports.""",
}

_PLACEHOLDER = re.compile(
    r"^(?P<indent>[ \t]*)\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}[ \t]*$", re.MULTILINE
)


def substitute(**entries):
    """Decorator filling the shared placeholders of a class's or function's docstring.

    Parameters
    ----------
    **entries : str
        Entries for this docstring only, added to (or replacing) :data:`PARAMETERS`.

    Raises
    ------
    KeyError
        At import time, when a placeholder names no entry.
    """
    table = {**PARAMETERS, **{k: textwrap.dedent(v).strip("\n") for k, v in entries.items()}}

    def fill(match):
        name = match.group("name")
        if name not in table:
            raise KeyError(f"docstring placeholder {{{name}}} names no shared parameter text")
        return textwrap.indent(table[name], match.group("indent"))

    def decorate(obj):
        if obj.__doc__:
            obj.__doc__ = _PLACEHOLDER.sub(fill, obj.__doc__)
        return obj

    return decorate

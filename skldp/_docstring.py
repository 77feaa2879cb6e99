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
    "accountant": """\
accountant : PrivacyAccountant or None, default=None
    Charged on every ``transform`` of real data, before any report is drawn, the epsilon of
    ``privacy_`` for the people (rows) of the call; shared, not copied, by ``clone``. See
    :ref:`budgets_accountant`.""",
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
    # the constructor of a channel
    "channel_parameters": """\
epsilon : float
    Privacy budget, positive and finite.
n_inputs : int
    k, the number of categories: at least 2.""",
    # references cited first by several classes (the footnote label is part of the text)
    "ref_rappor": """\
.. [1] U. Erlingsson, V. Pihur and A. Korolova, "RAPPOR: Randomized aggregatable
   privacy-preserving ordinal response", CCS 2014.""",
    "ref_longitudinal": """\
.. [1] H. H. Arcolezi, J.-F. Couchot, B. Al Bouna and X. Xiao, "Improving the utility of
   locally differentially private protocols for longitudinal and multidimensional
   frequency estimates", Digital Communications and Networks, 2022 (arXiv:2111.04636).""",
    # fitted attributes of the privatizers
    "categories_": """\
categories_ : list of ndarray
    The domain of each column.""",
    "privacy_": """\
privacy_ : LDP or SequentialComposition
    The guarantee per person: ``LDP(epsilon)`` for one column, the sum over columns
    (sequential composition) otherwise.""",
    "n_features_in_": """\
n_features_in_ : int
    Number of columns seen in fit.
feature_names_in_ : ndarray of shape (n_features_in_,)
    Column names, when X has string column names.""",
}

# fitted attributes of the estimators
PARAMETERS["report_counts"] = """\
n_reports_ : int
    Reports seen by ``fit`` and ``partial_fit``.
n_features_in_ : int
    Number of report columns."""
PARAMETERS["estimator_attributes"] = "\n".join(
    [
        "categories_ : ndarray of shape (n_categories,)\n"
        "    The categories, from the privatizer (``arange(k)`` for a bare channel).",
        PARAMETERS["report_counts"],
    ]
)

#: Entries made of others, in the order of the privatizers' signatures (see
#: ``skldp._params.hyperparameters``): what every privatizer takes after ``epsilon``; the fitted
#: attributes of a privatizer with one plain channel per column (its channel's class given to
#: :func:`substitute` as ``channel_type``); and, with their headers, the whole Parameters and
#: Attributes sections of a privatizer that has nothing of its own to add to them.
PARAMETERS["common_parameters"] = "\n".join(
    PARAMETERS[name] for name in ("categories", "accountant", "random_state")
)
PARAMETERS["fitted_attributes"] = "\n".join(
    [
        "channel_ : {channel_type} or list of them\n"
        "    The channel of each column (a list for several columns).",
        PARAMETERS["privacy_"],
        PARAMETERS["n_features_in_"],
    ]
)
PARAMETERS["privatizer_parameters_section"] = "\n".join(
    ["Parameters\n----------", PARAMETERS["epsilon"], PARAMETERS["common_parameters"]]
)
PARAMETERS["privatizer_attributes_section"] = "\n".join(
    ["Attributes\n----------", PARAMETERS["categories_"], PARAMETERS["fitted_attributes"]]
)

_PLACEHOLDER = re.compile(
    r"^(?P<indent>[ \t]*)\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}[ \t]*$", re.MULTILINE
)
_FIELD = re.compile(r"\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}")


def substitute(**entries):
    """Decorator filling the shared placeholders of a class's or function's docstring.

    Parameters
    ----------
    **entries : str
        Entries for this docstring only, added to (or replacing) :data:`PARAMETERS`. A
        one-line entry also fills its name in braces inside a shared text
        (``channel_type="RAPPORChannel"`` for the ``{channel_type}`` of ``fitted_attributes``).

    Raises
    ------
    KeyError
        At import time, when a placeholder names no entry, or a shared text names a word
        that the call does not give.
    """
    table = {**PARAMETERS, **{k: textwrap.dedent(v).strip("\n") for k, v in entries.items()}}
    words = {k: v for k, v in entries.items() if "\n" not in v}

    def word(match):
        if match.group("name") not in words:
            raise KeyError(f"shared docstring text needs {match.group('name')}= in substitute()")
        return words[match.group("name")]

    def fill(match):
        name = match.group("name")
        if name not in table:
            raise KeyError(f"docstring placeholder {{{name}}} names no shared parameter text")
        return textwrap.indent(_FIELD.sub(word, table[name]), match.group("indent"))

    def decorate(obj):
        if obj.__doc__:
            obj.__doc__ = _PLACEHOLDER.sub(fill, obj.__doc__)
        return obj

    return decorate

"""Domains: the public categories of each column, and encoding values to indices.

The domain is public knowledge in local differential privacy, so it comes from the
``categories=`` parameter. Inferring it from the data reads which values occur before any
randomization, so it is done only with a :class:`~skldp.exceptions.PrivacyLeakWarning`.
Values outside the domain raise an error that names them; nothing is dropped or re-bucketed.

A value matches a category only if it is the same value of a compatible type (see
:func:`kind_groups`): booleans never match numbers, strings never match dates or bytes, and
categories keep the types they were given.
"""

import datetime
import numbers
import warnings

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

from skldp.exceptions import PrivacyLeakWarning

_MAX_NAMED = 5


_LIST_TYPES = (list, tuple, np.ndarray, pd.Index, pd.Series, range)


def _is_list_like(obj):
    return isinstance(obj, _LIST_TYPES)


# Kinds of values that can match each other. A value matches a category only when both are in
# the same group and are equal (documented in docs/user_guide/randomized_response.rst).
_BOOL, _REAL, _COMPLEX, _STR, _BYTES, _DATETIME, _TIMEDELTA, _OTHER = range(8)
_GROUP_NAMES = ("bool", "number", "complex", "str", "bytes", "datetime", "timedelta", "other")
_DTYPE_KIND_GROUP = {
    "b": _BOOL,
    "i": _REAL,
    "u": _REAL,
    "f": _REAL,
    "c": _COMPLEX,
    "U": _STR,
    "S": _BYTES,
    "M": _DATETIME,
    "m": _TIMEDELTA,
}
# pandas.api.types.infer_dtype of an object array whose elements all fall in one group
_INFERRED_GROUP = {
    "boolean": _BOOL,
    "integer": _REAL,
    "floating": _REAL,
    "mixed-integer-float": _REAL,
    "string": _STR,
    "bytes": _BYTES,
    "datetime": _DATETIME,
    "datetime64": _DATETIME,
    "timedelta": _TIMEDELTA,
    "timedelta64": _TIMEDELTA,
    "decimal": _OTHER,
    "date": _OTHER,
}


def _type_group(t):
    """The group of one Python type (for object arrays of mixed kinds)."""
    if issubclass(t, (bool, np.bool_)):
        return _BOOL
    if issubclass(t, (numbers.Real, np.integer, np.floating)):
        return _REAL
    if issubclass(t, (numbers.Complex, np.complexfloating)):
        return _COMPLEX
    if issubclass(t, str):
        return _STR
    if issubclass(t, bytes):
        return _BYTES
    if issubclass(t, (datetime.datetime, np.datetime64)):
        return _DATETIME
    if issubclass(t, (datetime.timedelta, np.timedelta64)):
        return _TIMEDELTA
    return _OTHER


def kind_groups(values):
    """The kind group of every value: an int when all share one, else an int8 array.

    Groups are bool; number (integers and reals of any width, Python or NumPy); complex;
    str; bytes; datetime (``datetime.datetime``, ``pandas.Timestamp``, ``numpy.datetime64``);
    timedelta; other (anything else, such as tuples, ``Decimal`` or ``datetime.date``). A
    NumPy dtype decides at once; an object array is read by
    :func:`pandas.api.types.infer_dtype` (one pass in C) and, only when that finds a mixture,
    element by element.
    """
    values = np.asarray(values)
    if values.dtype.kind != "O":
        return _DTYPE_KIND_GROUP.get(values.dtype.kind, _OTHER)
    if values.size == 0:
        return _OTHER
    group = _INFERRED_GROUP.get(infer_dtype(values.ravel(), skipna=False))
    if group is not None:
        return group
    codes, types = pd.factorize(np.fromiter(map(type, values.ravel()), dtype=object))
    table = np.array([_type_group(t) for t in types], dtype=np.int8)
    groups = table[codes].reshape(values.shape)
    return int(groups[0]) if np.all(groups == groups[0]) else groups


def _lookup(values, categories):
    """Indices of ``values`` in ``categories`` (-1 where none matches), kind by kind.

    Equal values match only within a kind group (see :func:`kind_groups`): ``True`` never
    finds the category 1, nor ``"2020-01-01"`` a Timestamp, nor ``1+0j`` the number 1. When
    values and categories each share one group (the usual case), this is one
    ``pandas.Index.get_indexer``. May raise TypeError for unhashable values.
    """
    vg = kind_groups(values)
    cg = kind_groups(categories)
    if np.ndim(vg) == 0 and np.ndim(cg) == 0:
        if vg != cg:
            if vg == _OTHER:
                _check_hashable(values)
            return np.full(len(values), -1, dtype=np.int64)
        return pd.Index(categories).get_indexer(values)
    out = np.full(len(values), -1, dtype=np.int64)
    vg = np.broadcast_to(np.asarray(vg), (len(values),))
    cg = np.broadcast_to(np.asarray(cg), (len(categories),))
    for g in np.unique(vg):
        pos = np.flatnonzero(cg == g)
        rows = np.flatnonzero(vg == g)
        if pos.size == 0:
            if g == _OTHER:
                _check_hashable(values[rows])
            continue
        found = pd.Index(categories[pos]).get_indexer(values[rows])
        out[rows] = np.where(found >= 0, pos[found], -1)
    return out


def _unique_by_kind(values):
    """The distinct values, kind by kind (``True`` and ``1`` are two values here)."""
    groups = kind_groups(values)
    if np.ndim(groups) == 0:
        return pd.unique(pd.Series(values, copy=False))
    parts = [pd.unique(pd.Series(values[groups == g], copy=False)) for g in np.unique(groups)]
    out = np.empty(sum(len(p) for p in parts), dtype=object)
    out[:] = [v for p in parts for v in p]
    return out


def _check_hashable(values):
    """Raise TypeError for an unhashable value (a list where a category belongs)."""
    pd.unique(pd.Series(values, dtype=object, copy=False))


def _describe(values):
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:_MAX_NAMED])
    more = f" and {len(values) - _MAX_NAMED} more" if len(values) > _MAX_NAMED else ""
    return shown + more


def check_category_list(cats, column=0, *, min_size=2, source="", name=None):
    """Return one column's categories as a 1-D array after checking them.

    Categories must be unique, free of missing values, and at least ``min_size`` of them.
    Their order is kept: category ``categories[i]`` is encoded as index ``i``. ``name`` replaces
    "categories for column <column>" in the messages (for a list that is not a privatizer's
    domain, such as ``candidates``).
    """
    label = f"categories for column {column}" if name is None else name
    if not _is_list_like(cats):
        raise TypeError(f"{label} must be a list of values; got {type(cats).__name__}")
    seq = list(cats) if isinstance(cats, (range, tuple)) else cats
    arr = np.asarray(seq)
    if isinstance(seq, list) and arr.ndim == 1 and _coerced(seq, arr):
        # numpy turned a mix of kinds into one ([True, -1, 0.0] into floats, [1, "a"] into
        # strings, [1, 2.5] into floats): keep the values as given, with their types, so that
        # True stays a bool, 1 stays an integer and NaN is seen as missing.
        arr = np.empty(len(seq), dtype=object)
        arr[:] = seq
    elif arr.dtype.kind in "US":
        arr = arr.astype(object)
    if arr.ndim != 1:
        raise ValueError(f"{label} must be one list of values; got shape {arr.shape}")
    if arr.shape[0] < min_size:
        raise ValueError(
            f"{label} must hold at least {min_size} value{'s' if min_size != 1 else ''}; "
            f"got {arr.shape[0]}{source}"
        )
    if np.any(pd.isna(arr)):
        raise ValueError(f"{label} contain a missing value (None or NaN)")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{label} contain an infinite value (inf)")
    groups = kind_groups(arr)
    parts = [arr] if np.ndim(groups) == 0 else [arr[groups == g] for g in np.unique(groups)]
    for part in parts:  # True and 1 are different categories; 1 and 1.0 are the same
        index = pd.Index(part)
        if not index.is_unique:
            dup = index[index.duplicated()].unique()
            raise ValueError(f"{label} contain duplicates: {_describe(np.asarray(dup))}")
    return arr


def _coerced(seq, arr):
    """Whether ``np.asarray(seq)`` changed the type of some element of the list ``seq``."""
    if arr.dtype.kind == "O":
        return False
    types = set(map(type, seq))
    if len(types) <= 1:
        return False
    groups = {_type_group(t) for t in types}
    if groups != {_DTYPE_KIND_GROUP.get(arr.dtype.kind, _OTHER)}:
        return True  # e.g. bools or strings made numbers, numbers made strings
    # one group: keep numpy's array only when no integer became a float
    return arr.dtype.kind in "fc" and any(
        issubclass(t, (numbers.Integral, np.integer)) for t in types
    )


def resolve_categories(categories, columns, *, min_size=2, stacklevel=3):
    """Return the list of per-column category arrays for the data ``columns``.

    Parameters
    ----------
    categories : None, list of values, or list of lists
        None infers each column's domain from the data (with a PrivacyLeakWarning); a flat
        list is accepted when there is one column; otherwise one list per column, as in
        :class:`sklearn.preprocessing.OrdinalEncoder`.
    columns : list of 1-D arrays
        The raw data, one array per column.
    """
    n_columns = len(columns)
    if categories is None or (isinstance(categories, str) and categories == "auto"):
        warnings.warn(
            "categories were inferred from the raw data, which reveals the values that occur "
            "before any randomization; pass categories= with the public domain instead",
            PrivacyLeakWarning,
            stacklevel=stacklevel,
        )
        out = []
        for j, col in enumerate(columns):
            if np.any(pd.isna(col)):
                raise ValueError(f"column {j} contains missing values (None or NaN)")
            uniq = _unique_by_kind(col)
            try:
                uniq = np.sort(uniq)
            except TypeError:
                pass
            out.append(
                check_category_list(
                    uniq, j, min_size=min_size, source=f" (inferred from n_samples={len(col)})"
                )
            )
        return out
    if not _is_list_like(categories):
        raise TypeError(f"categories must be None or a list; got {type(categories).__name__}")
    if (
        n_columns == 1
        and isinstance(categories, (np.ndarray, pd.Index, pd.Series, range))
        and np.ndim(categories) == 1
        and getattr(categories, "dtype", np.dtype(int)).kind != "O"
    ):
        categories = [categories]  # a flat numeric or string domain: no per-element checks
    cats = list(categories)
    # One pass in C over the element types (a domain may hold 10**6 categories).
    flat = len(cats) > 0 and not any(issubclass(t, _LIST_TYPES) for t in set(map(type, cats)))
    if flat:
        if n_columns != 1:
            raise ValueError(
                f"a flat list of categories fits one column, but X has {n_columns} columns; "
                "pass one list of categories per column"
            )
        cats = [cats]
    if not cats:
        raise ValueError(
            f"categories is empty: the domain of each column must list at least {min_size} "
            "values (pass one list of categories per column)"
        )
    if len(cats) != n_columns:
        raise ValueError(f"categories has {len(cats)} lists but X has {n_columns} columns")
    return [check_category_list(c, j, min_size=min_size) for j, c in enumerate(cats)]


def _integer_range_start(cats):
    """Return ``cats[0]`` if the categories are the consecutive integers from it, else None."""
    if cats.dtype.kind not in "iu":
        return None
    start = int(cats[0])
    if np.array_equal(cats, np.arange(start, start + cats.shape[0])):
        return start
    return None


def encode(values, categories, column=0):
    """Return the int64 indices of ``values`` in ``categories``.

    Raises
    ------
    ValueError
        If a value is missing or outside the domain; the message names the values.
    """
    values = np.asarray(values)
    start = _integer_range_start(categories)
    if start is not None and values.dtype.kind in "iu":
        idx = values.astype(np.int64, copy=False)
        if start:
            idx = idx - start
        # one pass: seen as unsigned, a negative index is above every domain size
        if idx.size and idx.view(np.uint64).max() >= categories.shape[0]:
            bad = (idx < 0) | (idx >= categories.shape[0])
            _raise_unknown(values[bad], column, categories)
        return idx
    if values.dtype.kind == "O" or values.dtype.kind == "f":
        missing = pd.isna(values)
        if np.any(missing):
            raise ValueError(
                f"column {column} contains {int(missing.sum())} missing values (None or NaN); "
                "missing values are not in the domain"
            )
    try:
        idx = _lookup(values, categories)
    except TypeError as exc:
        raise ValueError(
            f"column {column} has values that cannot be compared with its categories"
        ) from exc
    if np.any(idx < 0):
        _raise_unknown(values[idx < 0], column, categories)
    return idx.astype(np.int64, copy=False)


def encode_parameter(values, categories, column, name, *, distinct=False):
    """Return the indices in ``categories`` of the values that parameter ``name`` lists.

    For parameters that name categories, such as a sensitive set or a block of a partition. A
    value outside the domain is then a mistake in the parameter rather than in the data, so
    the ValueError names the parameter and the values (a missing value is outside too).

    Parameters
    ----------
    values : list-like
        The categories the parameter lists.
    categories : ndarray
        The column's checked domain.
    column : int
        The column, for messages.
    name : str
        How the parameter is named in messages, e.g. ``"sensitive"`` or ``"blocks (block 1)"``.
    distinct : bool, default=False
        Also reject a category listed twice.
    """
    seq = list(values)
    arr = np.asarray(seq) if seq else np.zeros(0, dtype=np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iuf":
        arr = np.empty(len(seq), dtype=object)
        arr[:] = seq
    try:
        idx = _lookup(arr, categories) if arr.size else np.zeros(0, dtype=np.int64)
    except TypeError as exc:  # a list or other unhashable value where a category belongs
        raise TypeError(
            f"{name} must list single categories of column {column}; got a value that is not "
            f"one ({exc})"
        ) from None
    if np.any(idx < 0):
        uniq = pd.unique(pd.Series(arr[idx < 0], dtype=object))
        raise ValueError(
            f"{name} lists values that are not categories of column {column}: "
            f"{_describe(np.asarray(uniq, dtype=object))}{_type_hint(uniq, categories)}"
        )
    if distinct and np.unique(idx).shape[0] != idx.shape[0]:
        dup = pd.Index(idx).duplicated()
        raise ValueError(
            f"{name} contains duplicates: {_describe(categories[np.unique(idx[dup])])} "
            f"(column {column})"
        )
    return idx.astype(np.int64, copy=False)


def _raise_unknown(bad, column, categories=None):
    uniq = pd.unique(pd.Series(bad, copy=False))
    hint = ""
    if categories is not None and all(isinstance(v, str) for v in uniq):
        texts = {str(c) for c in np.asarray(categories, dtype=object) if not isinstance(c, str)}
        if texts and all(v in texts for v in uniq):
            hint = (
                "; they are the text of non-string categories (a Dask data frame turns object "
                "columns into strings unless dask.config.set({'dataframe.convert-string': "
                "False}) is set before it is built, and a CSV reader may read numbers as text): "
                "give the column the categories' type"
            )
    if not hint and categories is not None:
        hint = _type_hint(uniq, categories)
    raise ValueError(
        f"column {column} contains {len(uniq)} values outside the domain: "
        f"{_describe(np.asarray(uniq))}{hint}"
    )


def _plain(v):
    return v.item() if isinstance(v, np.generic) and v.dtype.kind in "biufc" else v


def _type_hint(uniq, categories):
    """Say which of the first unknown values equal a category of another kind, if any."""
    shown = np.empty(min(len(uniq), _MAX_NAMED), dtype=object)
    shown[:] = list(uniq[: shown.size])
    try:
        found = pd.Index(np.asarray(categories, dtype=object)).get_indexer(shown)
    except (TypeError, ValueError):
        return ""
    pairs = [
        f"{_plain(v)!r} ({type(v).__name__}) equals the category {_plain(categories[i])!r} "
        f"({type(categories[i]).__name__})"
        for v, i in zip(shown, found)
        if i >= 0
    ]
    if not pairs:
        return ""
    return (
        "; " + ", ".join(pairs) + ", but a value matches a category only when both are of a "
        "compatible kind (booleans never match numbers; strings never match dates, bytes or "
        "numbers): give the column the categories' type"
    )

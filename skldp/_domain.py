"""Domains: the public categories of each column, and encoding values to indices.

The domain is public knowledge in local differential privacy, so it comes from the
``categories=`` parameter. Inferring it from the data reads which values occur before any
randomization, so it is done only with a :class:`~skldp.exceptions.PrivacyLeakWarning`.
Values outside the domain raise an error that names them; nothing is dropped or re-bucketed.

A value matches a category only if it is the same value of a compatible type (see
:func:`kind_groups`): booleans never match numbers, strings never match dates or bytes, and
categories keep the types they were given.

Everything that parses a parameter naming categories or inputs lives here too, once: the
privatizers' partitions and sensitive sets given as categories (:func:`column_partition`,
:func:`column_sensitive`), and their index-level forms used by channels and privacy models
(:func:`partition_labels`, :func:`sensitive_indices`, public in :mod:`skldp.privacy`).
"""

from __future__ import annotations

import contextlib
import datetime
import numbers
from collections.abc import Mapping, Sized
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

from skldp._memory import FIT_BYTES_PER_CATEGORY, check_allocation
from skldp._validation import check_int
from skldp._warnings import warn
from skldp.exceptions import PrivacyLeakWarning

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray
_MAX_NAMED = 5


_LIST_TYPES = (list, tuple, np.ndarray, pd.Index, pd.Series, range)


def is_list_like(obj):
    """Whether ``obj`` is a list, tuple, array, Index, Series or range (not a string)."""
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


def describe(values):
    """The first few of ``values`` as text for an error message, with how many more."""
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:_MAX_NAMED])
    more = f" and {len(values) - _MAX_NAMED} more" if len(values) > _MAX_NAMED else ""
    return shown + more


def check_category_list(
    cats: ArrayLike,
    column: int = 0,
    *,
    min_size: int = 2,
    source: str = "",
    name: str | None = None,
) -> NDArray[Any]:
    """Return one column's categories as a 1-D array after checking them.

    Categories must be unique, free of missing values, and at least ``min_size`` of them.
    Their order is kept: category ``categories[i]`` is encoded as index ``i``. ``name`` replaces
    "categories for column <column>" in the messages (for a list that is not a privatizer's
    domain, such as ``candidates``).
    """
    label = f"categories for column {column}" if name is None else name
    if not is_list_like(cats):
        raise TypeError(f"{label} must be a list of values; got {type(cats).__name__}")
    if isinstance(cats, Sized):  # before anything is built from it (range(10**12))
        check_allocation(
            len(cats),
            FIT_BYTES_PER_CATEGORY,
            f"the {label} ({len(cats)} values) and the arrays a fit builds from them",
            "a domain of at most {rows} categories fits",
        )
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
            raise ValueError(f"{label} contain duplicates: {describe(np.asarray(dup))}")
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


def resolve_categories(categories, columns, *, min_size=2):
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
        warn(
            "categories were inferred from the raw data, which reveals the values that occur "
            "before any randomization; pass categories= with the public domain instead",
            PrivacyLeakWarning,
        )
        out = []
        for j, col in enumerate(columns):
            if np.any(pd.isna(col)):
                raise ValueError(f"column {j} contains missing values (None or NaN)")
            uniq = _unique_by_kind(col)
            with contextlib.suppress(TypeError):  # values of unorderable kinds stay unsorted
                uniq = np.sort(uniq)
            out.append(
                check_category_list(
                    uniq, j, min_size=min_size, source=f" (inferred from n_samples={len(col)})"
                )
            )
        return out
    if not is_list_like(categories):
        raise TypeError(f"categories must be None or a list; got {type(categories).__name__}")
    if n_columns == 1 and (
        isinstance(categories, range)  # np.ndim would build the whole range
        or (
            isinstance(categories, (np.ndarray, pd.Index, pd.Series))
            and np.ndim(categories) == 1
            and categories.dtype.kind != "O"
        )
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
    if arr.ndim != 1 or arr.dtype.kind not in "iuf" or _coerced(seq, arr):
        # kept as given when numpy would change a value's kind ([0, False] into [0, 0])
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
            f"{describe(np.asarray(uniq, dtype=object))}{_type_hint(uniq, categories)}"
        )
    if distinct and np.unique(idx).shape[0] != idx.shape[0]:
        dup = pd.Index(idx).duplicated()
        raise ValueError(
            f"{name} contains duplicates: {describe(categories[np.unique(idx[dup])])} "
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
        f"{describe(np.asarray(uniq))}{hint}"
    )


def _plain(v):
    return v.item() if isinstance(v, np.generic) and v.dtype.kind in "biufc" else v


def _type_hint(uniq, categories):
    """Say which of the first unknown values equal a category of another kind, if any."""
    shown = list(uniq[:_MAX_NAMED])
    index = pd.Index(np.asarray(categories, dtype=object))
    pairs = []
    for v in shown:
        # Categories of different kinds may be equal to each other ([0, False]), so the
        # index need not be unique: look each value up among all equal categories.
        try:
            found = index.get_indexer_non_unique([v])[0]
        except (TypeError, ValueError):
            return ""
        i = next((int(i) for i in found if i >= 0), -1)
        if i >= 0:
            pairs.append(
                f"{_plain(v)!r} ({type(v).__name__}) equals the category "
                f"{_plain(categories[i])!r} ({type(categories[i]).__name__})"
            )
    if not pairs:
        return ""
    return (
        "; " + ", ".join(pairs) + ", but a value matches a category only when both are of a "
        "compatible kind (booleans never match numbers; strings never match dates, bytes or "
        "numbers): give the column the categories' type"
    )


# -- parameters that name categories: partitions and sensitive sets ---------------------------
def _factorize(raw):
    # Labels 0 .. m-1 in order of first appearance; None and NaN are labels like any other.
    codes, _ = pd.factorize(pd.Series(raw, dtype=object), use_na_sentinel=False)
    return codes.astype(np.int64)


def column_partition(blocks, n_blocks, block_size, categories, column):
    """The block label (0 .. m-1, any numbering) of each category of one column.

    The partition is given by exactly one of (the caller checks which):

    - ``n_blocks``: the categories, in order, cut into that many contiguous blocks whose sizes
      differ by at most one;
    - ``block_size``: contiguous blocks of that size (the last may be smaller);
    - ``blocks``, as a callable called on each category and returning its label, a mapping
      category -> label (a dict or a pandas Series), a list of blocks (lists of categories)
      covering each category once, or an array of labels aligned with ``categories``.

    Every value is checked against ``categories``; errors name the column and the values. The
    index-level twin, for channels and privacy models, is :func:`partition_labels`.
    """
    k = len(categories)
    if n_blocks is not None:
        m = check_int(n_blocks, "n_blocks")
        if m > k:
            raise ValueError(f"n_blocks={m} exceeds the {k} categories of column {column}")
        return np.arange(k, dtype=np.int64) * m // k
    if block_size is not None:
        size = check_int(block_size, "block_size")
        return np.arange(k, dtype=np.int64) // size
    if callable(blocks):
        return _factorize([blocks(c) for c in categories])
    if isinstance(blocks, (Mapping, pd.Series)):
        mapping = blocks if isinstance(blocks, Mapping) else blocks.to_dict()
        missing = [c for c in categories if c not in mapping]
        if missing:
            raise ValueError(
                f"blocks gives no block to {len(missing)} categories of column {column}: "
                f"{describe(np.asarray(missing, dtype=object))}"
            )
        return _factorize([mapping[c] for c in categories])
    if isinstance(blocks, str) or not is_list_like(blocks):
        raise TypeError(
            "blocks must be a list of blocks (lists of categories), a mapping category -> label, "
            "a callable, or an array of labels aligned with the categories; got "
            f"{type(blocks).__name__}"
        )
    items = list(blocks)
    if items and all(is_list_like(b) for b in items):
        labels = np.full(k, -1, dtype=np.int64)
        for j, block in enumerate(items):
            idx = encode_parameter(block, categories, column, f"blocks (block {j})")
            if idx.size == 0:
                raise ValueError(f"block {j} of blocks is empty; every block needs a category")
            again = idx[labels[idx] >= 0]
            if again.size or np.unique(idx).shape[0] != idx.shape[0]:
                dup = categories[again] if again.size else categories[idx]
                raise ValueError(
                    f"the blocks of column {column} overlap: "
                    f"{describe(np.asarray(dup))} in two blocks"
                )
            labels[idx] = j
        if np.any(labels < 0):
            raise ValueError(
                f"the blocks do not cover the categories of column {column}: "
                f"{describe(np.asarray(categories[labels < 0]))} are in no block"
            )
        return labels
    if len(items) != k:
        raise ValueError(
            f"an array of block labels needs one label per category; column {column} has {k} "
            f"categories and blocks has {len(items)} entries"
        )
    missing = pd.isna(np.asarray(items, dtype=object))
    if np.any(missing):
        raise ValueError(
            f"blocks gives a missing label (None or NaN) to {int(missing.sum())} categories of "
            f"column {column}: {describe(np.asarray(categories)[missing])}"
        )
    return _factorize(items)


def column_sensitive(sensitive, categories, column, n_columns, *, allow_callable=False):
    """The sorted indices of the sensitive categories of one column.

    Parameters
    ----------
    sensitive : list of values, list of lists, or callable
        A flat list of categories (one column only), one list per column, or, with
        ``allow_callable``, a callable called on each category that returns True for the
        sensitive ones (the same callable for every column).
    categories : ndarray
        The column's checked domain.
    column, n_columns : int
        The column, and the number of columns of X.
    allow_callable : bool, default=False
        Accept a callable.

    Returns
    -------
    indices : ndarray of int64
        Sorted, distinct; possibly empty (the caller decides whether that is allowed).

    Raises
    ------
    TypeError
        If ``sensitive`` is not a list (or callable, where allowed).
    ValueError
        If a value is not a category of the column or is listed twice, or the lists do not
        match the columns. A value silently dropped would leave it unprotected.
    """
    if allow_callable and callable(sensitive):
        mask = np.array([bool(sensitive(c)) for c in categories], dtype=bool)
        return np.flatnonzero(mask).astype(np.int64)
    if sensitive is None:
        raise TypeError("sensitive is required: the list of sensitive values to protect")
    if not is_list_like(sensitive):
        raise TypeError(
            "sensitive must be a list of values (one list per column)"
            + (" or a callable" if allow_callable else "")
            + f"; got {type(sensitive).__name__}"
        )
    items = list(sensitive)
    if items and any(is_list_like(s) for s in items):
        if len(items) != n_columns:
            raise ValueError(f"sensitive has {len(items)} lists but X has {n_columns} columns")
        values = items[column]
    else:
        if n_columns != 1:
            raise ValueError(
                f"a flat list of sensitive values fits one column, but X has {n_columns} "
                "columns; pass one list per column"
            )
        values = items
    idx = encode_parameter(values, categories, column, "sensitive", distinct=True)
    return np.sort(idx.astype(np.int64))


# -- the index-level parsers: partitions and sensitive sets of input indices --------------------
def format_sizes(sizes, limit=8):
    """Block sizes as text for a repr: ``[3, 2]``, the first ``limit`` and ``...`` beyond."""
    shown = ", ".join(str(int(s)) for s in sizes[:limit])
    return f"[{shown}{', ...' if len(sizes) > limit else ''}]"


def group_positions(labels: ArrayLike, n_groups: int) -> list[NDArray[np.intp]]:
    """The positions of each label ``0 .. n_groups - 1``, each in increasing order.

    One stable sort of the labels serves every group (a boolean mask per group would read
    the labels once per group); labels that fit 16 bits are sorted by radix, in linear
    time. ``labels`` must lie in ``[0, n_groups)``.

    Returns
    -------
    groups : list of n_groups ndarrays of int
        ``groups[g]`` is ``np.flatnonzero(labels == g)``.
    """
    labels = np.asarray(labels)
    key = labels.astype(np.uint16) if n_groups <= 1 << 16 else labels
    order = np.argsort(key, kind="stable")
    return np.split(order, np.cumsum(np.bincount(labels, minlength=n_groups))[:-1])


def partition_labels(blocks: ArrayLike, n_inputs: int | None = None) -> NDArray[np.int64]:
    """Return the canonical block label of each input index.

    Parameters
    ----------
    blocks : array-like of int of shape (k,), or sequence of sequences of int
        Either a block label per input index (any integers), or the blocks themselves as
        lists of input indices that together hold each of ``0 .. k - 1`` exactly once.
    n_inputs : int or None
        The domain size k, when known; checked against ``blocks``.

    Returns
    -------
    labels : ndarray of int64 of shape (k,)
        Labels ``0 .. m - 1`` numbered in order of each block's smallest index, so that two
        descriptions of one partition give equal arrays.

    Raises
    ------
    ValueError
        If the blocks are empty, overlap, miss an index, or do not match ``n_inputs``.
    """
    if isinstance(blocks, np.ndarray) and blocks.ndim == 1 and blocks.dtype.kind in "iu":
        labels = blocks.astype(np.int64)
    else:
        if isinstance(blocks, (str, bytes)) or not np.iterable(blocks):
            raise TypeError(
                "blocks must be a block label per input or a list of blocks of input indices; "
                f"got {blocks!r}"
            )
        items = list(blocks)
        if not items:
            raise ValueError("blocks must hold at least one block; got an empty partition")
        nested = [np.ndim(b) > 0 for b in items]
        if all(nested):
            parts = [np.asarray(b) for b in items]
            for j, part in enumerate(parts):
                if part.size == 0:
                    raise ValueError(f"block {j} is empty; every block needs at least one element")
                if part.dtype.kind not in "iu":
                    raise ValueError(
                        f"block {j} must hold integer input indices; got dtype {part.dtype}"
                    )
            flat = np.concatenate(parts).astype(np.int64)
            k = flat.shape[0] if n_inputs is None else n_inputs
            if flat.size and (flat.min() < 0 or flat.max() >= k):
                raise ValueError(f"block indices must lie in [0, {k}); got values outside")
            counts = np.bincount(flat, minlength=k)
            if np.any(counts > 1):
                raise ValueError(
                    "blocks overlap: indices "
                    f"{np.flatnonzero(counts > 1)[:5].tolist()} appear twice"
                )
            if np.any(counts == 0):
                raise ValueError(
                    f"blocks do not cover indices {np.flatnonzero(counts == 0)[:5].tolist()}"
                )
            labels = np.empty(k, dtype=np.int64)
            labels[flat] = np.repeat(np.arange(len(parts)), [p.size for p in parts])
        elif not any(nested):
            labels = np.asarray(items)
            if labels.dtype.kind not in "iu":
                raise ValueError(f"block labels must be integers; got dtype {labels.dtype}")
            labels = labels.astype(np.int64)
        else:
            raise ValueError(
                "blocks must be either one label per input or a list of blocks, not a mix"
            )
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError(f"blocks must describe a non-empty 1-D domain; got shape {labels.shape}")
    if n_inputs is not None and labels.shape[0] != n_inputs:
        raise ValueError(f"blocks cover {labels.shape[0]} inputs but the domain has {n_inputs}")
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    out = rank[inverse.ravel()]
    out.setflags(write=False)
    return out


def sensitive_indices(
    sensitive: ArrayLike,
    n_inputs: int | None = None,
    *,
    name: str = "sensitive",
    distinct: bool = True,
) -> NDArray[np.int64]:
    """Return sorted unique input indices of a sensitive set, after checking them.

    Parameters
    ----------
    sensitive : array-like of int, or boolean mask of shape (k,)
    n_inputs : int or None
    name : str, default="sensitive"
        The set's name in error messages (e.g. ``"protected_outputs"``).
    distinct : bool, default=True
        Reject a repeated index; False merges repeats.

    Raises
    ------
    ValueError
        If an index is not an integer, is negative, repeated or outside ``[0, n_inputs)``.
    TypeError
        If ``sensitive`` is None or a string.
    """
    if sensitive is None or isinstance(sensitive, (str, bytes)):
        raise TypeError(f"{name} must be a list of integer indices; got {sensitive!r}")
    arr = np.asarray(sensitive)
    if arr.dtype.kind == "b":
        if arr.ndim != 1 or (n_inputs is not None and arr.shape[0] != n_inputs):
            raise ValueError(f"a {name} mask must have one entry per input; got shape {arr.shape}")
        return np.flatnonzero(arr).astype(np.int64)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a 1-D list of indices; got shape {arr.shape}")
    arr = arr.ravel()
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer indices; got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and n_inputs is not None and (arr.min() < 0 or arr.max() >= n_inputs):
        bad = int(arr.min()) if arr.min() < 0 else int(arr.max())
        raise ValueError(f"{name} indices must lie in [0, {n_inputs}); got {bad}")
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} indices must be non-negative; got {int(arr.min())}")
    uniq = np.unique(arr)
    if distinct and uniq.shape[0] != arr.shape[0]:
        raise ValueError(f"{name} indices must be distinct; got repeats")
    return uniq

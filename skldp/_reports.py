"""Reports that carry the channel that made them.

A privatizer's ``transform`` returns reports that remember their mechanism, so that an
estimator later in a :class:`~sklearn.pipeline.Pipeline` needs no extra wiring:

* numpy output is a :class:`Reports` array, an ``ndarray`` subclass whose ``specs`` attribute
  holds one :class:`ReportSpec` (channel and categories) per privatized column; row selection,
  pickling and ``np.hstack``/``np.concatenate`` keep it.
* pandas output stores the spec in each column's dtype (:class:`ReportsDtype`), which survives
  the copies of scikit-learn's ``set_output`` wrapper, ``pd.concat`` in a ColumnTransformer and
  row indexing in cross-validation (``DataFrame.attrs`` does not).

A symbol channel writes one integer column per privatized column; a bit-vector channel writes
``channel.report_width`` 0/1 columns. Sparse reports (``UtilityOptimizedRAPPOR(sparse_output=True)``
returns a scipy.sparse CSR matrix) carry no spec: the estimator then needs ``channel=``.
"""

import numpy as np
import pandas as pd
from scipy import sparse
from pandas.api.extensions import ExtensionArray, ExtensionDtype


class ReportSpec:
    """What an estimator needs to read one privatized column: its channel and categories."""

    __slots__ = ("channel", "categories")

    def __init__(self, channel, categories=None):
        self.channel = channel
        if categories is None:
            categories = np.arange(channel.n_inputs)
        self.categories = np.asarray(categories)

    @property
    def width(self):
        return self.channel.report_width

    def __eq__(self, other):
        return (
            isinstance(other, ReportSpec)
            and self.channel == other.channel
            and self.categories.shape == other.categories.shape
            and bool(np.all(self.categories == other.categories))
        )

    def __hash__(self):
        return hash(self.channel)

    def __repr__(self):
        return f"ReportSpec({self.channel!r})"

    def __reduce__(self):
        return (ReportSpec, (self.channel, self.categories))


def _specs_width(specs):
    return sum(s.width for s in specs)


class Reports(np.ndarray):
    """An integer array of reports, shape (n_reports, width), that carries its specs."""

    def __new__(cls, data, specs):
        obj = np.asarray(data).view(cls)
        obj.specs = tuple(specs)
        return obj

    def __array_finalize__(self, obj):
        self.specs = getattr(obj, "specs", None)

    def __getitem__(self, key):
        out = super().__getitem__(key)
        if not isinstance(out, Reports):
            return out
        if self.specs is None or self.ndim != 2:
            return out
        if isinstance(key, tuple) and len(key) > 1:
            cols = np.atleast_1d(np.arange(self.shape[1])[key[1]])
            specs = _subset_specs(self.specs, cols)
            row_scalar = isinstance(key[0], (int, np.integer))
            if specs is None or out.ndim == 0 or (out.ndim == 1 and row_scalar):
                return out.view(np.ndarray)
            out.specs = specs
            return out
        if out.ndim != 2:
            return out.view(np.ndarray)
        return out

    def __reduce__(self):
        base = super().__reduce__()
        return (base[0], base[1], (base[2], self.specs))

    def __setstate__(self, state):
        nd_state, specs = state
        super().__setstate__(nd_state)
        self.specs = specs

    def __array_function__(self, func, types, args, kwargs):
        if func in (np.concatenate, np.hstack, np.column_stack):
            arrays = args[0]
            axis = kwargs.get("axis", 0 if func is np.concatenate else 1)
            result = super().__array_function__(
                func, (np.ndarray,), (tuple(np.asarray(a) for a in arrays),) + args[1:], kwargs
            )
            specs = _merged_specs(arrays, axis, result.ndim)
            return Reports(result, specs) if specs is not None else result
        return super().__array_function__(func, types, args, kwargs)


def _subset_specs(specs, cols):
    starts = np.cumsum([0] + [s.width for s in specs])
    out, pos = [], 0
    cols = list(cols)
    for s, a, b in zip(specs, starts[:-1], starts[1:]):
        if cols[pos : pos + (b - a)] == list(range(a, b)):
            out.append(s)
            pos += b - a
    if pos != len(cols):
        return None
    return tuple(out)


def _merged_specs(arrays, axis, ndim):
    specs = [getattr(a, "specs", None) for a in arrays]
    if any(s is None for s in specs) or ndim != 2:
        return None
    if axis in (1, -1):
        return tuple(s for group in specs for s in group)
    if axis == 0 and all(s == specs[0] for s in specs):
        return specs[0]
    return None


class ReportsDtype(ExtensionDtype):
    """The pandas dtype of one report column: it holds the column's :class:`ReportSpec`.

    ``part`` is the position of the column inside a bit-vector report (0 for symbol reports).
    """

    _metadata = ("spec", "part")
    type = np.int64
    kind = "i"
    na_value = -1

    def __init__(self, spec, part=0):
        self.spec = spec
        self.part = int(part)

    @property
    def name(self):
        return f"skldp_reports[{type(self.spec.channel).__name__}:{self.part}]"

    @classmethod
    def construct_array_type(cls):
        return ReportsArray

    def __reduce__(self):
        return (ReportsDtype, (self.spec, self.part))


class ReportsArray(ExtensionArray):
    """A pandas extension array of int64 reports whose dtype carries the channel."""

    def __init__(self, values, dtype):
        self._data = np.asarray(values, dtype=np.int64)
        self._dtype = dtype

    @property
    def dtype(self):
        return self._dtype

    @classmethod
    def _from_sequence(cls, scalars, *, dtype=None, copy=False):
        if dtype is None or not isinstance(dtype, ReportsDtype):
            raise TypeError("ReportsArray needs a ReportsDtype")
        return cls(np.array(scalars, dtype=np.int64, copy=copy), dtype)

    @classmethod
    def _from_factorized(cls, values, original):
        return cls(values, original.dtype)

    def __getitem__(self, item):
        if isinstance(item, tuple) and len(item) == 1:
            item = item[0]
        result = self._data[item]
        if np.ndim(result) == 0:
            return result
        return type(self)(result, self._dtype)

    def __len__(self):
        return self._data.shape[0]

    def __array__(self, dtype=None, copy=None):
        if copy:
            return np.array(self._data, dtype=dtype, copy=True)
        return np.asarray(self._data, dtype=dtype)

    def __eq__(self, other):
        return self._data == np.asarray(other)

    @property
    def nbytes(self):
        return self._data.nbytes

    def isna(self):
        return np.zeros(len(self), dtype=bool)

    def take(self, indices, *, allow_fill=False, fill_value=None):
        indices = np.asarray(indices, dtype=np.intp)
        if allow_fill and np.any(indices < 0):
            raise ValueError("reports cannot hold missing values; rows were lost in an alignment")
        return type(self)(self._data.take(indices), self._dtype)

    def copy(self):
        return type(self)(self._data.copy(), self._dtype)

    @classmethod
    def _concat_same_type(cls, to_concat):
        return cls(np.concatenate([a._data for a in to_concat]), to_concat[0].dtype)

    def _values_for_factorize(self):
        return self._data, -1


def to_frame(parts, specs, index, names):
    """Build a DataFrame of reports from per-spec 1-D or 2-D integer arrays."""
    data = {}
    for arr, spec, name in zip(parts, specs, names):
        arr = np.asarray(arr)
        if arr.ndim == 1:
            data[name[0]] = ReportsArray(arr, ReportsDtype(spec, 0))
        else:
            for j in range(arr.shape[1]):
                data[name[j]] = ReportsArray(arr[:, j], ReportsDtype(spec, j))
    return pd.DataFrame(data, index=index, copy=False)


def extract(X):
    """Return ``(values, specs)`` for reports X, with ``specs`` None when X carries none.

    ``values`` is a 2-D array (n_reports, width) for symbol or bit reports, or a CSR matrix
    for scipy.sparse reports (which never carry specs).
    """
    if sparse.issparse(X):
        return X.tocsr(), None
    if isinstance(X, Reports):
        arr = np.asarray(X)
        if arr.ndim == 1:
            arr = arr[:, None]
        return arr, X.specs
    if isinstance(X, pd.Series):
        X = X.to_frame()
    if isinstance(X, pd.DataFrame):
        dtypes = list(X.dtypes)
        if dtypes and all(isinstance(d, ReportsDtype) for d in dtypes):
            specs, pos = [], 0
            while pos < len(dtypes):
                spec = dtypes[pos].spec
                width = spec.width
                block = dtypes[pos : pos + width]
                if (
                    len(block) != width
                    or [d.part for d in block] != list(range(width))
                    or any(d.spec is not spec and d.spec != spec for d in block)
                ):
                    raise ValueError(
                        "the report columns of a bit-vector mechanism are incomplete or out of order"
                    )
                specs.append(spec)
                pos += width
            values = np.column_stack([np.asarray(X.iloc[:, j].array) for j in range(X.shape[1])])
            return values, tuple(specs)
        return X.to_numpy(), None
    arr = np.asarray(X)
    if arr.ndim == 1:
        arr = arr[:, None]
    return arr, None

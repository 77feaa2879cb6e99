"""Reports that carry the channel that made them.

A privatizer's ``transform`` returns reports that remember their mechanism, so that an
estimator later in a :class:`~sklearn.pipeline.Pipeline` needs no extra wiring:

* numpy output is a :class:`Reports` array, an ``ndarray`` subclass whose ``specs`` attribute
  holds one :class:`ReportSpec` (channel and categories) per privatized column; row selection,
  pickling and ``np.hstack``/``np.concatenate`` keep it.
* pandas output stores the spec in each column's dtype (:class:`ReportsDtype`), which survives
  the copies of scikit-learn's ``set_output`` wrapper, ``pd.concat`` in a ColumnTransformer,
  row indexing in cross-validation, merges and joins (``DataFrame.attrs`` does not: it is
  per frame, and ``pd.concat`` of frames with different ``attrs`` or a merge drops it).
  :class:`ReportsArray` is a complete pandas extension array: counting, ``groupby``,
  ``describe``, ``quantile`` and the reductions give the numbers of the plain int64 reports;
  arithmetic gives plain numpy results; missing reports (after a reindex or an outer join)
  are ``pd.NA`` in a mask, and estimators refuse them; values written into a column are
  checked against the channel.
* Parquet/Arrow: each column is written as the Arrow extension type ``skldp.reports`` (int64
  storage; the part and the pickled spec in the type's metadata), so ``pd.read_parquet``
  finds the channel again. The spec is read back by an unpickler that rebuilds only skldp
  channels and numpy arrays, so reading a file runs no foreign code; an unreadable spec gives
  a warning and an ``Int64`` column. CSV keeps integers only: estimators then ask for
  ``channel=``. See the user guide, :ref:`pandas_reports`.

A symbol channel writes one integer column per privatized column; a bit-vector channel writes
``channel.report_width`` 0/1 columns. Sparse reports (``UtilityOptimizedRAPPOR(sparse_output=True)``
returns a scipy.sparse CSR matrix) carry no spec: the estimator then needs ``channel=``.
"""

import contextlib
import functools
import io
import json
import operator
import pickle
import sys

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray, ExtensionDtype, take
from pandas.api.indexers import check_array_indexer
from scipy import sparse

from skldp._warnings import warn
from skldp.channels import (
    AttributeSamplingMechanism,
    BitVectorReports,
    Channel,
    SymbolReports,
)

lib_no_default = pd.api.extensions.no_default


class ReportSpec:
    """What an estimator needs to read one privatized column: its channel and categories."""

    __slots__ = ("categories", "channel")

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
    for s, a, b in zip(specs, starts[:-1], starts[1:], strict=True):
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
    The dtype is numeric (``describe`` gives the statistics of the integers, as for the
    ``int64`` column the same reports become after a CSV round trip); a missing report is
    ``pd.NA``.
    """

    _metadata = ("spec", "part")
    type = np.int64
    kind = "i"
    na_value = pd.NA
    _is_numeric = True
    itemsize = 8

    def __init__(self, spec, part=0):
        if not isinstance(spec, ReportSpec):
            raise TypeError(f"ReportsDtype needs a ReportSpec; got {type(spec).__name__}")
        part = int(part)
        if not 0 <= part < spec.width:
            raise ValueError(f"part must lie in [0, {spec.width}) for {spec.channel!r}; got {part}")
        self.spec = spec
        self.part = part

    @property
    def name(self):
        # pandas writes this name into a Parquet file's metadata, where a reader without
        # skldp looks it up: "Int64" (nullable integers, as the column's missing reports are)
        # opens anywhere; with skldp the column's Arrow type brings the channel back.
        return "Int64"

    def __repr__(self):
        return f"ReportsDtype({type(self.spec.channel).__name__}, part={self.part})"

    @classmethod
    def construct_array_type(cls):
        return ReportsArray

    @classmethod
    def construct_from_string(cls, string):
        if not isinstance(string, str):
            raise TypeError(f"'construct_from_string' expects a string, got {type(string)}")
        raise TypeError(
            f"Cannot construct a 'ReportsDtype' from '{string}': a reports dtype needs the "
            "channel; take the dtype of a report column (reports.dtypes[name])"
        )

    def _get_common_dtype(self, dtypes):
        if all(d == self for d in dtypes):
            return self
        kinds = [d.kind if isinstance(d, (np.dtype, ReportsDtype)) else None for d in dtypes]
        if all(k in ("i", "u", "b") for k in kinds):
            # the bits of one report, reports of several channels, or reports and integers:
            # plain integers (DataFrame.to_numpy of a bit-vector report is an int64 matrix)
            return np.dtype(np.int64)
        if all(k in ("i", "u", "b", "f") for k in kinds):
            return np.dtype(np.float64)
        return None

    def __from_arrow__(self, array):
        chunks = array.chunks if hasattr(array, "chunks") else [array]
        data, mask = [], []
        for chunk in chunks:
            if hasattr(chunk, "storage"):
                chunk = chunk.storage
            data.append(chunk.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64))
            mask.append(chunk.is_null().to_numpy(zero_copy_only=False))
        if not data:
            return ReportsArray(np.zeros(0, dtype=np.int64), self)
        # a file is outside data: its values are checked against the channel like any other
        return ReportsArray(np.concatenate(data), self, np.concatenate(mask), validate=True)

    def __reduce__(self):
        return (ReportsDtype, (self.spec, self.part))


def _check_values(values, dtype):
    """Check that the present ``values`` (1-D int64) are reports of ``dtype``'s channel."""
    channel = dtype.spec.channel
    if isinstance(channel, SymbolReports):
        channel.check_reports(values)
    elif (
        isinstance(channel, BitVectorReports)
        and values.size
        and (values.min() < 0 or values.max() > 1)
    ):
        raise ValueError(
            f"bit {dtype.part} of the reports of {channel!r} must be 0 or 1; got values outside"
        )


def _as_values(scalars):
    """``(int64 values, missing mask)`` of a sequence that may hold pd.NA, None or NaN."""
    if isinstance(scalars, ReportsArray):
        return scalars._data.copy(), scalars._mask.copy()
    if isinstance(scalars, (ExtensionArray, pd.Series, pd.Index)):
        mask = np.asarray(pd.isna(scalars), dtype=bool)
        arr = pd.array(scalars).to_numpy(dtype=object, na_value=0)
    else:
        arr = np.asarray(scalars)
        if arr.dtype.kind in "iub":
            return arr.astype(np.int64).reshape(-1), np.zeros(arr.size, dtype=bool)
        mask = np.asarray(pd.isna(arr), dtype=bool).reshape(-1)
        arr = np.where(mask, 0, arr.reshape(-1)) if mask.any() else arr.reshape(-1)
    try:
        num = np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"reports are integers; got values of type {np.asarray(arr).dtype}"
        ) from None
    if not np.all(np.isfinite(num)) or np.any(num != np.round(num)):
        raise ValueError("reports must be integers; got non-integer values")
    return num.astype(np.int64), mask


def _plain(result):
    """A pandas masked result as a numpy array when nothing is missing (as for an int64 column)."""
    numpy_dtype = getattr(getattr(result, "dtype", None), "numpy_dtype", None)
    if isinstance(result, ExtensionArray) and numpy_dtype is not None and not result.isna().any():
        return result.to_numpy(dtype=result.dtype.numpy_dtype)
    return result


def _op(op):
    def method(self, other):
        if isinstance(other, (pd.Series, pd.Index, pd.DataFrame)):
            return NotImplemented
        if isinstance(other, ReportsArray):
            other = other._integers()
        return _plain(op(self._integers(), other))

    method.__name__ = f"__{op.__name__.strip('_')}__"
    return method


class ReportsArray(ExtensionArray):
    """A pandas extension array of int64 reports whose dtype carries the channel.

    Missing reports (from a reindex or an outer join) are held in a mask and read as
    ``pd.NA``; estimators refuse them. Arithmetic and comparisons give plain numpy results
    (pandas' nullable ones when a report is missing): a sum of reports is not a report.
    """

    def __init__(self, values, dtype, mask=None, *, validate=False):
        if not isinstance(dtype, ReportsDtype):
            raise TypeError(f"ReportsArray needs a ReportsDtype; got {dtype!r}")
        self._data = np.asarray(values, dtype=np.int64)
        self._mask = (
            np.zeros(self._data.shape, dtype=bool) if mask is None else np.asarray(mask, bool)
        )
        self._dtype = dtype
        if validate:
            _check_values(self._data[~self._mask], dtype)

    @property
    def dtype(self):
        return self._dtype

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def _from_sequence(cls, scalars, *, dtype=None, copy=False):
        if not isinstance(dtype, ReportsDtype):
            raise TypeError(
                "reports need their channel: give the dtype of a report column "
                f"(reports.dtypes[name]); got dtype={dtype!r}"
            )
        if isinstance(scalars, ReportsArray) and scalars.dtype == dtype:
            return scalars.copy() if copy else scalars
        values, mask = _as_values(scalars)
        return cls(values, dtype, mask, validate=True)

    @classmethod
    def _from_sequence_of_strings(cls, strings, *, dtype=None, copy=False):
        return cls._from_sequence(pd.to_numeric(pd.Series(strings)).array, dtype=dtype)

    @classmethod
    def _from_factorized(cls, values, original):
        values = np.asarray(values, dtype=np.int64)
        return cls(values, original.dtype, values == -1)

    def _values_for_factorize(self):
        return np.where(self._mask, -1, self._data), -1

    def _cast_pointwise_result(self, values):
        # what a function of reports returns (Series.combine) is not a report: numbers as numpy
        # when nothing is missing, as pandas infers them otherwise
        try:
            return _plain(pd.array(values))
        except (TypeError, ValueError):
            return np.asarray(values, dtype=object)

    def _values_for_argsort(self):
        return self._data

    def _integers(self):
        """The reports as pandas' nullable ``Int64`` array (for numerics)."""
        return pd.arrays.IntegerArray(self._data, self._mask)

    # -- element access --------------------------------------------------------------------
    def __getitem__(self, item):
        if isinstance(item, tuple) and len(item) == 1:
            item = item[0]
        if not (isinstance(item, (int, np.integer, slice)) or item is Ellipsis):
            item = check_array_indexer(self, item)
        result = self._data[item]
        if np.ndim(result) == 0:
            return self.dtype.na_value if self._mask[item] else result
        out = type(self)(result, self._dtype, self._mask[item])
        if self._readonly and np.shares_memory(result, self._data):
            out._readonly = True
        return out

    def __setitem__(self, key, value):
        if self._readonly:
            raise ValueError("Cannot modify read-only array")
        if not (isinstance(key, (int, np.integer, slice)) or key is Ellipsis):
            key = check_array_indexer(self, key)
        if pd.api.types.is_scalar(value):
            value = [value]
        values, mask = _as_values(value)
        _check_values(values[~mask], self._dtype)
        if values.size == 1:
            values, mask = values[0], mask[0]
        self._data[key] = values
        self._mask[key] = mask

    def __len__(self):
        return self._data.shape[0]

    def __iter__(self):
        for value, missing in zip(self._data, self._mask, strict=True):
            yield self.dtype.na_value if missing else value

    def __array__(self, dtype=None, copy=None):
        if self._mask.any():
            if copy is False:
                raise ValueError("reports with missing values convert to numpy only by a copy")
            dtype = np.dtype(dtype or np.float64)
            na = pd.NA if dtype.kind == "O" else np.nan
            return np.asarray(self._integers().to_numpy(dtype=dtype, na_value=na))
        if copy is False and dtype is not None and np.dtype(dtype) != self._data.dtype:
            raise ValueError("converting reports to another dtype needs a copy")
        if copy:
            return np.array(self._data, dtype=dtype, copy=True)
        return self._view(np.asarray(self._data, dtype=dtype))

    def _view(self, arr):
        """``arr`` as given, or read-only when it is this read-only array's memory."""
        if self._readonly and np.shares_memory(arr, self._data):
            arr = arr.view()
            arr.flags.writeable = False
        return arr

    def to_numpy(self, dtype=None, copy=False, na_value=lib_no_default):
        """The reports as numpy: int64, or float64 with NaN where a report is missing."""
        if na_value is lib_no_default:
            if self._mask.any():
                if dtype is not None and np.dtype(dtype).kind in "iub":
                    raise ValueError(
                        f"cannot convert reports to {np.dtype(dtype)}: {int(self._mask.sum())} "
                        "are missing (NA); drop them (dropna()) or give na_value="
                    )
                na_value = np.nan
                dtype = np.float64 if dtype is None else dtype
            else:
                out = self._data.astype(dtype or np.int64, copy=False)
                return out.copy() if copy and out is self._data else self._view(out)
        return self._integers().to_numpy(dtype=dtype, na_value=na_value)

    def _formatter(self, boxed=False):
        return lambda x: "<NA>" if x is pd.NA else str(int(x))

    @property
    def nbytes(self):
        return self._data.nbytes + self._mask.nbytes

    def isna(self):
        return self._mask.copy()

    def take(self, indices, *, allow_fill=False, fill_value=None):
        indices = np.asarray(indices, dtype=np.intp)
        data = take(self._data, indices, allow_fill=allow_fill, fill_value=0)
        mask = take(self._mask, indices, allow_fill=allow_fill, fill_value=True)
        if allow_fill and fill_value is not None and not pd.isna(fill_value):
            filled = indices == -1
            values, _ = _as_values([fill_value])
            _check_values(values, self._dtype)
            data[filled], mask[filled] = values[0], False
        return type(self)(data, self._dtype, mask)

    def copy(self):
        return type(self)(self._data.copy(), self._dtype, self._mask.copy())

    @classmethod
    def _concat_same_type(cls, to_concat):
        return cls(
            np.concatenate([a._data for a in to_concat]),
            to_concat[0].dtype,
            np.concatenate([a._mask for a in to_concat]),
        )

    # -- conversions -----------------------------------------------------------------------
    def astype(self, dtype, copy=True):
        """Another dtype: the same reports under another ReportsDtype (checked), else numbers.

        Casting to a numpy or pandas dtype drops the channel, as saving to CSV does.
        """
        dtype = pd.api.types.pandas_dtype(dtype)
        if dtype == self._dtype:
            return self.copy() if copy else self
        if isinstance(dtype, ReportsDtype):
            return ReportsArray._from_sequence(self, dtype=dtype)
        if isinstance(dtype, np.dtype) and not self._mask.any():
            return self._data.astype(dtype, copy=copy)
        return self._integers().astype(dtype, copy=copy)

    def __arrow_array__(self, type=None):
        import pyarrow as pa

        storage = pa.array(self._data, mask=self._mask, type=pa.int64())
        if type is not None and not isinstance(type, _ArrowReports):
            return storage.cast(type)
        return pa.ExtensionArray.from_storage(_arrow_type(self._dtype), storage)

    # -- numerics: through pandas' nullable Int64 -------------------------------------------
    def _reduce(self, name, *, skipna=True, keepdims=False, **kwargs):
        return self._integers()._reduce(name, skipna=skipna, keepdims=keepdims, **kwargs)

    def _accumulate(self, name, *, skipna=True, **kwargs):
        return _plain(self._integers()._accumulate(name, skipna=skipna, **kwargs))

    def _quantile(self, qs, interpolation):
        values = self._data[~self._mask]
        qs = np.asarray(qs, dtype=np.float64)
        if values.size == 0:
            return np.full(qs.shape, np.nan)
        return np.quantile(values, qs, method=interpolation)

    def _hash_pandas_object(self, *, encoding, hash_key, categorize):
        return self._integers()._hash_pandas_object(
            encoding=encoding, hash_key=hash_key, categorize=categorize
        )

    __eq__ = _op(operator.eq)
    __ne__ = _op(operator.ne)
    __lt__ = _op(operator.lt)
    __le__ = _op(operator.le)
    __gt__ = _op(operator.gt)
    __ge__ = _op(operator.ge)
    __add__ = _op(operator.add)
    __radd__ = _op(lambda a, b: b + a)
    __sub__ = _op(operator.sub)
    __rsub__ = _op(lambda a, b: b - a)
    __mul__ = _op(operator.mul)
    __rmul__ = _op(lambda a, b: b * a)
    __truediv__ = _op(operator.truediv)
    __rtruediv__ = _op(lambda a, b: b / a)
    __floordiv__ = _op(operator.floordiv)
    __mod__ = _op(operator.mod)
    __pow__ = _op(operator.pow)

    def __neg__(self):
        return _plain(-self._integers())


# -- Parquet / Arrow: the channel travels in the extension type -----------------------------
_ALLOWED_NUMPY = {
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
}


#: Root packages (besides skldp) whose channel classes a report file may name, with how many
#: registered mechanisms put them here: those of privatizers added with
#: :func:`skldp.registry.register`, which trusts their code. Only modules already imported are
#: read; reading a file never imports one.
_TRUSTED_ROOTS: dict[str, int] = {}


def trust_channels_of(module: str, trusted: bool = True) -> None:
    """Let report files name channel classes of ``module``'s root package (or stop to).

    Called by the registry when a mechanism defined outside skldp is registered (and
    unregistered), so its reports keep their channel through Parquet.
    """
    root = module.split(".")[0]
    count = _TRUSTED_ROOTS.get(root, 0) + (1 if trusted else -1)
    if count > 0:
        _TRUSTED_ROOTS[root] = count
    else:
        _TRUSTED_ROOTS.pop(root, None)
    _spec_from_bytes.cache_clear()  # a channel read under the old trust is not reused


def _trusted_module(module):
    return (
        module.split(".")[0] in _TRUSTED_ROOTS
        and module in sys.modules
        and not module.startswith("skldp.")
    )


class _SpecUnpickler(pickle.Unpickler):
    """Unpickles a ReportSpec and rebuilds nothing else than skldp channels and numpy arrays.

    A Parquet file may come from anyone: reading it must not run arbitrary code.
    """

    def find_class(self, module, name):
        if (module, name) in _ALLOWED_NUMPY:
            return super().find_class(module, name)
        if (module, name) == ("skldp._reports", "ReportSpec"):
            return ReportSpec
        if module.startswith("skldp.channels.") or _trusted_module(module):
            obj = super().find_class(module, name)
            if isinstance(obj, type) and issubclass(obj, (Channel, AttributeSamplingMechanism)):
                return obj
        raise pickle.UnpicklingError(f"a report channel cannot refer to {module}.{name}")


# what unpickling a damaged, foreign or outdated channel raises
_UNREADABLE = (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError)


def _spec_to_bytes(spec):
    return pickle.dumps(spec, protocol=4)


@functools.lru_cache(maxsize=64)
def _spec_from_bytes(data):
    spec = _SpecUnpickler(io.BytesIO(data)).load()
    if not isinstance(spec, ReportSpec):
        raise pickle.UnpicklingError(f"expected a ReportSpec; got {type(spec).__name__}")
    return spec


def _readable_head(spec_bytes, part):
    """What the Arrow metadata of a report column says in JSON: its part, and (when the spec
    can be read) the channel's class, its number of inputs and report width, the categories."""
    head = {"part": int(part)}
    try:
        spec = _spec_from_bytes(spec_bytes)
    except _UNREADABLE:
        return head
    head["channel"] = type(spec.channel).__name__
    try:  # a composite mechanism (attribute sampling) has no single input domain
        head["n_inputs"] = int(spec.channel.n_inputs)
        head["report_width"] = int(spec.channel.report_width)
    except AttributeError:
        pass
    head["categories"] = [str(c) for c in np.asarray(spec.categories).tolist()]
    return head


def _arrow_type(dtype):
    return _ArrowReports(_spec_to_bytes(dtype.spec), dtype.part)


try:
    import pyarrow as _pa
except ImportError:  # pragma: no cover - pyarrow is an optional dependency
    _ArrowReports = ()
else:

    class _ArrowReports(_pa.ExtensionType):
        """Arrow type ``skldp.reports``: int64 storage; the spec and part in its metadata."""

        def __init__(self, spec_bytes, part):
            self.spec_bytes = bytes(spec_bytes)
            self.part = int(part)
            super().__init__(_pa.int64(), "skldp.reports")

        def __arrow_ext_serialize__(self):
            # a JSON line any reader can read (the channel and its domain), then the spec
            # that skldp rebuilds the channel from
            return json.dumps(_readable_head(self.spec_bytes, self.part)).encode() + (
                b"\n" + self.spec_bytes
            )

        @classmethod
        def __arrow_ext_deserialize__(cls, storage_type, serialized):
            head, _, spec_bytes = bytes(serialized).partition(b"\n")
            return cls(spec_bytes, json.loads(head)["part"])

        def __reduce__(self):
            return (_ArrowReports, (self.spec_bytes, self.part))

        def __hash__(self):  # Dask's read_parquet keys its metadata by type
            return hash((self.extension_name, self.spec_bytes, self.part))

        def to_pandas_dtype(self):
            try:
                return ReportsDtype(_spec_from_bytes(self.spec_bytes), self.part)
            except _UNREADABLE as exc:  # an unreadable channel: the integers are still there
                warn(
                    f"the channel stored with a report column could not be read ({exc}); "
                    "the column is read as integers and estimators will need channel=",
                    UserWarning,
                )
                return pd.Int64Dtype()

    with contextlib.suppress(_pa.ArrowKeyError):  # already registered (module reloaded)
        _pa.register_extension_type(_ArrowReports(b"", 0))


def to_frame(parts, specs, index, names):
    """Build a DataFrame of reports from per-spec 1-D or 2-D integer arrays."""
    data = {}
    for arr, spec, name in zip(parts, specs, names, strict=True):
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
                        "the report columns of a bit-vector mechanism are incomplete or out of "
                        "order"
                    )
                specs.append(spec)
                pos += width
            arrays = [X.iloc[:, j].array for j in range(X.shape[1])]
            missing = [name for name, a in zip(X.columns, arrays, strict=True) if a._mask.any()]
            if missing:
                raise ValueError(
                    f"reports are missing (NA) in column(s) {missing[:5]}, as after a reindex or "
                    "an outer join; an estimator needs every report: drop those rows first "
                    "(reports.dropna())"
                )
            return np.column_stack([a._data for a in arrays]), tuple(specs)
        return X.to_numpy(), None
    arr = np.asarray(X)
    if arr.ndim == 1:
        arr = arr[:, None]
    return arr, None


def check_non_negative_reports(values, specs):
    """Reject negative report values, naming the range of the column's channel where known.

    ``specs`` are the report specs of the columns (:class:`ReportSpec`); the
    message starts as scikit-learn's does for estimators tagged ``positive_only``.
    """
    data = values.data if sparse.issparse(values) else values
    if data.dtype.kind not in "iuf" or data.size == 0 or data.min() >= 0:
        return
    low = data.min().item()
    if sparse.issparse(values):
        column = int(values.tocoo().col[np.argmin(values.tocoo().data)])
    else:
        column = int(np.argmin(values.min(axis=0)))
    owners = [spec for spec in specs for _ in range(spec.width)]
    if len(owners) != values.shape[1]:
        allowed = "report symbols lie in [0, n_outputs) and bit-vector reports are bits in {0, 1}"
    elif isinstance(owners[column].channel, SymbolReports):
        allowed = f"report symbols must lie in [0, {owners[column].channel.n_outputs})"
    else:
        allowed = "bit-vector reports must be bits in {0, 1}"
    raise ValueError(f"Negative values in data: {allowed}; got {low!r} in column {column}")

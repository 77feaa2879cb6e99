"""Dask glue: privatize Dask collections partition by partition, estimate from their statistics.

Dask is an optional extra. This module imports nothing from Dask at import time, and
:func:`is_dask_collection` answers False without importing it when Dask is not loaded (a Dask
collection cannot exist before ``dask`` is imported), so ``import skldp`` never pulls Dask in.

Privatizing
    :meth:`BasePrivatizer.transform <skldp.base.BasePrivatizer.transform>` given a Dask array
    or a Dask data frame (or series) returns a lazy collection of the same kind. On the client,
    the privatizer's noise generator ``rng`` (the one in-memory ``transform`` advances) spawns
    one child per partition, and partition ``i`` is randomized with ``rng.spawn(n)[i]``: the
    noise of a partition depends on its index only, never on which worker runs it or in which
    order, so an int ``random_state`` reproduces the same reports on any cluster. Spawning
    advances ``rng``, so a second ``transform`` gets new children (never the same noise twice).
    The single-machine equivalent of the first Dask ``transform`` after the seed is set is a
    loop over the same chunks with :func:`partition_generators`. ``None`` keys ``rng`` from
    the operating system's entropy source, as for in-memory data.

Keeping the channel
    Every partition computes to reports that carry their channel: a
    :class:`~skldp._reports.Reports` block for a Dask array, a pandas frame whose column dtypes
    hold the :class:`~skldp._reports.ReportSpec` for a Dask data frame (its ``_meta`` carries
    them too). Dask rebuilds array metadata from empty slices, which drop the specs, so an
    estimator does not trust the array's ``_meta``: it reads the specs of each partition on the
    worker, together with the partition's statistics, and checks that all partitions agree.
    Reports that carry no channel (a Dask array read from storage) need ``channel=`` on the
    estimator, exactly as in-memory arrays do.

Estimating
    An estimator's ``fit`` or ``partial_fit`` given a Dask collection computes, per partition,
    the estimator's additive statistics (``channel.statistics``, or for EM the likelihood model
    ``channel.em_model``),
    merges them in a tree on the cluster, and brings back only the totals: counts of length
    ``n_statistics`` per column, and the reports are never gathered. The exception is EM on a
    bit-vector channel, whose statistics are the reports themselves, bit-packed
    (:class:`~skldp.channels.PackedBitReports`, ``ceil(width / 8)`` bytes per report, or a
    histogram of bit patterns when there are at most 16 free bits): those are merged by
    concatenation and all reach the client. The sum of integer counts is exact, so the
    estimate equals the one of ``fit`` on the concatenated reports, bit for bit.

The interface
    This module knows nothing of the base classes: :class:`~skldp.base.BasePrivatizer` and
    :class:`~skldp.base.BaseDistributionEstimator` call :func:`transform`, :func:`first_rows`
    and :func:`statistics` and hand them what they need, a :class:`Randomizer` (the in-memory
    sampling path of one partition, the report specifications and column names) or the two
    functions that compute and merge the statistics of a chunk. The base modules of the
    privatizers and estimators (and the few classes that read a Dask collection themselves)
    import this module, and this module imports no class of skldp.
"""

import copy
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from skldp._random import noise_generator
from skldp._reports import Reports, ReportsArray, ReportsDtype, to_frame
from skldp.exceptions import ChannelMismatchError

__all__ = [
    "Randomizer",
    "first_rows",
    "is_dask_collection",
    "partition_generators",
    "statistics",
    "transform",
]


class Randomizer(NamedTuple):
    """What the Dask path needs of a fitted privatizer (built by ``BasePrivatizer``).

    Attributes
    ----------
    sample : callable ``(block, rng, *, pandas) -> reports``
        Randomizes the rows of one in-memory partition with the generator ``rng``: an
        ndarray-like block gives :class:`~skldp._reports.Reports` (``pandas=False``), a pandas
        frame gives a frame of reports with its index (``pandas=True``).
    specs : tuple of ReportSpec
        The report specification of each column.
    names : list of list of str
        The output column names of each specification (for data frames).
    n_columns : int
        The number of raw columns seen in ``fit``.
    rng : numpy.random.Generator
        The privatizer's noise generator for this ``transform`` (the one an in-memory
        ``transform`` would use, and advance); the partitions' generators are spawned from it.
    owner : str
        The privatizer's class name, for messages.
    """

    sample: Callable
    specs: tuple
    names: list
    n_columns: int
    rng: Any
    owner: str


_registered = False


def is_dask_collection(X):
    """True if X is a Dask array, data frame or series (without importing Dask)."""
    if "dask" not in sys.modules:
        return False
    import dask

    if not dask.is_dask_collection(X):
        return False
    kind = _kind(X)
    if kind is None:
        raise TypeError(f"skldp takes Dask arrays, data frames and series; got {type(X).__name__}")
    return True


def _kind(X):
    import dask.array as da

    if isinstance(X, da.Array):
        return "array"
    try:
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - dask without its dataframe extra
        return None
    if isinstance(X, (dd.DataFrame, dd.Series)):
        return "frame"
    return None


def _register_dtype():
    """Teach Dask to build non-empty metadata for report columns (needed by some frame ops)."""
    global _registered
    if _registered:
        return
    from dask.dataframe.extensions import make_array_nonempty

    @make_array_nonempty.register(ReportsDtype)
    def _nonempty(dtype):
        return ReportsArray(np.zeros(2, dtype=np.int64), dtype)

    _registered = True


def _register_serialization():
    """Send Reports arrays between dask.distributed processes by pickle, channels included.

    distributed's own serializer sends an ndarray subclass as a plain ndarray, so a block of
    reports that moved to another worker would arrive without its channels. Declining that
    serializer for Reports makes distributed fall back to pickle, which the receiving process
    needs nothing special to read; the process that sends must have run this (the worker that
    made the block: it is called where blocks are made, and on the client).
    """
    global _serialization_registered
    if _serialization_registered:
        return
    try:
        from distributed.protocol import dask_serialize
    except ImportError:  # dask without distributed: nothing crosses a process
        _serialization_registered = True
        return

    @dask_serialize.register(Reports)
    def _decline(reports):
        raise NotImplementedError("Reports travel by pickle, with their channels")

    _serialization_registered = True


_serialization_registered = False


def partition_generators(random_state, n_partitions):
    """The generators of the partitions: ``noise_generator(random_state).spawn(n)``.

    Partition ``i`` of the first Dask ``transform`` of a privatizer whose ``random_state`` was
    just set is privatized with the ``i``-th child. Looping over the same chunks in memory
    with these generators (``set_params(random_state=child)``) reproduces the reports of such
    a Dask run with an int ``random_state``.
    """
    return noise_generator(random_state).spawn(n_partitions)


# -- privatizing ----------------------------------------------------------------------------------
def _empty_reports(randomizer, index=None):
    specs = randomizer.specs
    parts = [np.empty((0,) if s.width == 1 else (0, s.width), dtype=np.int64) for s in specs]
    if index is None:
        width = sum(s.width for s in specs)
        return Reports(np.empty((0, width), dtype=np.int64), specs)
    return to_frame(parts, specs, index[:0], randomizer.names)


def _child(generators, i):
    # A copy: the graph may be computed more than once, in one process (threads) or many;
    # every computation of partition i must start from the same state.
    return copy.deepcopy(generators[i])


def _transform_block(block, randomizer, generators, block_id=None):
    _register_serialization()  # this worker may send the block to another
    rng = _child(generators, block_id[0])
    if block.shape[0] == 0:
        return _empty_reports(randomizer)
    return randomizer.sample(block, rng, pandas=False)


def _transform_partition(part, randomizer, generators, partition_info=None):
    if part.shape[0] == 0:
        return _empty_reports(randomizer, part.index)
    rng = _child(generators, partition_info["number"])
    return randomizer.sample(part, rng, pandas=True)


def transform(randomizer, X):
    """Privatize a Dask collection lazily; partition ``i`` uses the ``i``-th child generator.

    Parameters
    ----------
    randomizer : Randomizer
        What to draw with, from the fitted privatizer.
    X : Dask array or data frame
        Raw values.
    """
    _register_serialization()
    kind = _kind(X)
    specs = randomizer.specs
    width = sum(s.width for s in specs)
    n_columns = randomizer.n_columns
    if kind == "array":
        if X.ndim not in (1, 2):
            raise ValueError(f"a Dask array of raw values must be 1-D or 2-D; got {X.ndim}-D")
        n_in = 1 if X.ndim == 1 else X.shape[1]
        if n_in != n_columns:
            raise ValueError(
                f"X has {n_in} columns, but {randomizer.owner} was fitted on {n_columns}"
            )
        if X.ndim == 2 and len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        generators = randomizer.rng.spawn(X.numblocks[0])
        return X.map_blocks(
            _transform_block,
            randomizer,
            generators,
            chunks=(X.chunks[0], (width,)),
            new_axis=[1] if X.ndim == 1 else None,
            dtype=np.int64,
            meta=Reports(np.empty((0, width), dtype=np.int64), specs),
        )
    _register_dtype()
    generators = randomizer.rng.spawn(X.npartitions)
    meta = _empty_reports(randomizer, X._meta.index)
    return X.map_partitions(_transform_partition, randomizer, generators, meta=meta)


def first_rows(X):
    """The rows a privatizer's ``fit`` reads from a Dask collection: only the first one.

    ``fit`` needs the column layout and the public domain, not the data. Reading every value to
    check it, or to infer the domain, would compute the whole collection (and inferring leaks
    which values occur), so the privatizer requires ``categories=`` before it calls this;
    values outside the domain are still reported by name, by ``transform``, in the partition
    that holds them.
    """
    if _kind(X) == "array":
        return X[:1].compute()
    return X.head(1, npartitions=-1)


# -- estimating -----------------------------------------------------------------------------------
def _partition_statistics(part, chunk_statistics):
    return chunk_statistics(part)


def _combine(merge_statistics, a, b):
    specs_a, stats_a, n_a, width_a = a
    specs_b, stats_b, n_b, width_b = b
    if tuple(specs_a) != tuple(specs_b):
        raise ChannelMismatchError(
            "the partitions of these Dask reports come from different mechanisms or domains"
        )
    stats = [
        merge_statistics(s.channel, x, y) for s, x, y in zip(specs_a, stats_a, stats_b, strict=True)
    ]
    return specs_a, stats, n_a + n_b, width_a


def statistics(X, chunk_statistics, merge_statistics):
    """``(specs, statistics, n_reports, width)`` of a Dask collection of reports.

    The statistics of each partition are computed where it lives and added up in a binary
    tree of tasks; only the totals come back.

    Parameters
    ----------
    X : Dask array or data frame
        Reports.
    chunk_statistics : callable ``(chunk) -> (specs, statistics, n_reports, width)``
        Reads one in-memory partition (the estimator's in-memory path).
    merge_statistics : callable ``(channel, a, b) -> statistics``
        Merges the statistics of two chunks of one column.
    """
    import dask

    _register_serialization()  # reports made here and sent to the workers keep their channels
    kind = _kind(X)
    if kind == "array":
        if X.ndim == 2 and len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        parts = list(X.to_delayed().ravel())
    else:
        _register_dtype()
        parts = list(X.to_delayed())
    if not parts:
        raise ValueError("cannot estimate a distribution from a Dask collection with no partitions")
    level = [dask.delayed(_partition_statistics)(part, chunk_statistics) for part in parts]
    while len(level) > 1:
        nxt = [
            dask.delayed(_combine)(merge_statistics, a, b)
            for a, b in zip(level[::2], level[1::2], strict=False)
        ]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    (total,) = dask.compute(level[0])
    return total

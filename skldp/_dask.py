"""Dask glue: privatize Dask collections partition by partition, estimate from their statistics.

Dask is an optional extra. This module imports nothing from Dask at import time, and
:func:`is_dask_collection` answers False without importing it when Dask is not loaded (a Dask
collection cannot exist before ``dask`` is imported), so ``import skldp`` never pulls Dask in.

Privatizing
    :meth:`BasePrivatizer.transform <skldp._base.BasePrivatizer.transform>` given a Dask array
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
"""

import copy
import sys

import numpy as np

from skldp._reports import Reports, ReportsArray, ReportsDtype, to_frame

__all__ = ["is_dask_collection", "partition_generators"]

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
    from skldp._random import noise_generator

    return noise_generator(random_state).spawn(n_partitions)


# -- privatizing ----------------------------------------------------------------------------------
def _empty_reports(privatizer, index=None):
    specs = privatizer.report_specs()
    parts = [np.empty((0,) if s.width == 1 else (0, s.width), dtype=np.int64) for s in specs]
    if index is None:
        width = sum(s.width for s in specs)
        return Reports(np.empty((0, width), dtype=np.int64), specs)
    return to_frame(parts, specs, index[:0], privatizer._output_names(specs))


def _child(generators, i):
    # A copy: the graph may be computed more than once, in one process (threads) or many;
    # every computation of partition i must start from the same state.
    return copy.deepcopy(generators[i])


def _transform_block(block, privatizer, generators, block_id=None):
    _register_serialization()  # this worker may send the block to another
    rng = _child(generators, block_id[0])
    if block.shape[0] == 0:
        return _empty_reports(privatizer)
    return privatizer._transform(block, rng, pandas=False)


def _transform_partition(part, privatizer, generators, partition_info=None):
    if part.shape[0] == 0:
        return _empty_reports(privatizer, part.index)
    rng = _child(generators, partition_info["number"])
    return privatizer._transform(part, rng, pandas=True)


def transform(privatizer, X):
    """Privatize a Dask collection lazily; partition ``i`` uses the ``i``-th child generator."""
    if privatizer._pandas_output():
        raise ValueError(
            "transform_output='pandas' would make scikit-learn gather the Dask collection into "
            "one in-memory DataFrame; use the default output with Dask input (a Dask data frame "
            "of raw values already gives a Dask data frame of reports, with its index and channel)"
        )
    _register_serialization()
    kind = _kind(X)
    specs = privatizer.report_specs()
    width = sum(s.width for s in specs)
    n_columns = privatizer.n_features_in_
    if kind == "array":
        if X.ndim not in (1, 2):
            raise ValueError(f"a Dask array of raw values must be 1-D or 2-D; got {X.ndim}-D")
        n_in = 1 if X.ndim == 1 else X.shape[1]
        if n_in != n_columns:
            raise ValueError(
                f"X has {n_in} columns, but {type(privatizer).__name__} was fitted on {n_columns}"
            )
        if X.ndim == 2 and len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        generators = privatizer._noise_generator().spawn(X.numblocks[0])
        return X.map_blocks(
            _transform_block,
            privatizer,
            generators,
            chunks=(X.chunks[0], (width,)),
            new_axis=[1] if X.ndim == 1 else None,
            dtype=np.int64,
            meta=Reports(np.empty((0, width), dtype=np.int64), specs),
        )
    _register_dtype()
    generators = privatizer._noise_generator().spawn(X.npartitions)
    meta = _empty_reports(privatizer, X._meta.index)
    return X.map_partitions(_transform_partition, privatizer, generators, meta=meta)


def fit_sample(privatizer, X):
    """The rows a privatizer's ``fit`` reads from a Dask collection: only the first one.

    ``fit`` needs the column layout and the public domain, not the data. Reading every value to
    check it, or to infer the domain, would compute the whole collection (and inferring leaks
    which values occur), so Dask input requires ``categories=`` (an open-alphabet privatizer,
    which has no domain to infer, needs none); values outside the domain are still reported by
    name, by ``transform``, in the partition that holds them.
    """
    if privatizer._infers_domain():
        raise ValueError(
            "fitting on a Dask collection needs categories= (the public domain): inferring it "
            "would read every value, and reveals which values occur"
        )
    if _kind(X) == "array":
        return X[:1].compute()
    return X.head(1, npartitions=-1)


# -- estimating -----------------------------------------------------------------------------------
def _partition_statistics(part, estimator):
    return estimator._statistics_of(part)


def _combine(estimator, a, b):
    specs_a, stats_a, n_a, width_a = a
    specs_b, stats_b, n_b, width_b = b
    if tuple(specs_a) != tuple(specs_b):
        from skldp.exceptions import ChannelMismatchError

        raise ChannelMismatchError(
            "the partitions of these Dask reports come from different mechanisms or domains"
        )
    stats = [
        estimator._merge_statistics(s.channel, x, y) for s, x, y in zip(specs_a, stats_a, stats_b)
    ]
    return specs_a, stats, n_a + n_b, width_a


def statistics(estimator, X):
    """``(specs, statistics, n_reports, width)`` of a Dask collection of reports.

    The statistics of each partition are computed where it lives and added up in a binary
    tree of tasks; only the totals come back.
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
    level = [dask.delayed(_partition_statistics)(part, estimator) for part in parts]
    while len(level) > 1:
        nxt = [dask.delayed(_combine)(estimator, a, b) for a, b in zip(level[::2], level[1::2])]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    (total,) = dask.compute(level[0])
    return total

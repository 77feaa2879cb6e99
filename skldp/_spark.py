"""Spark glue: privatize Spark data frames partition by partition, estimate from their statistics.

Spark (``pyspark``) is an optional extra. This module imports nothing from Spark or Arrow at
import time, and :func:`is_spark_frame` answers False without importing Spark when it is not
loaded, so ``import skldp`` never pulls Spark in. It mirrors :mod:`skldp._dask`: the base
classes of the privatizers and estimators call :func:`transform`, :func:`first_rows` and
:func:`statistics`, and hand them what they need; this module imports no class of skldp.

Privatizing
    :meth:`BasePrivatizer.transform <skldp.base.BasePrivatizer.transform>` given a Spark
    ``DataFrame`` of raw values (one column per attribute, as in memory) returns a lazy Spark
    ``DataFrame`` of reports, one column per privatized column: a ``bigint`` for a symbol
    channel, an ``array<tinyint>`` of ``channel.report_width`` bits for a bit-vector channel.
    It runs through ``mapInArrow``: the Arrow batches of a partition are gathered into one
    table and randomized at once (so the memory of a task is that of one partition). The
    noise follows the rule of the Dask path: the privatizer's generator spawns one child per
    partition, and partition ``i`` (Spark's partition index) is randomized with
    ``rng.spawn(n_partitions)[i]``. A Spark data frame and a Dask collection (or a loop over
    in-memory chunks with :func:`skldp._dask.partition_generators`) cut at the same rows give
    the same reports, bit for bit; a task that Spark runs again (after a lost executor) draws
    the same noise again, never new noise.

Estimating
    An estimator's ``fit`` or ``partial_fit`` given a Spark data frame of reports (every
    column a report column: integer columns for symbols or single bits, integer arrays for
    bit vectors) computes the statistics of each partition on the executors, from its Arrow
    batches a million rows at a time, adds them up within the partition, sends one pickled
    row per partition back, and merges the partitions in a tree (``RDD.treeAggregate``); the
    reports never reach the driver. Spark columns carry no channel, so the estimator needs
    ``channel=`` (a fitted privatizer will do). The sums are integer sums, so the estimate
    equals that of ``fit`` on the concatenated reports.
"""

import copy
import pickle
import sys

import numpy as np
import pandas as pd

from skldp.exceptions import ChannelMismatchError

__all__ = ["first_rows", "is_spark_frame", "statistics", "transform"]

#: Rows per Arrow batch sent back to Spark.
BATCH_ROWS = 1 << 16

#: Rows of reports read at once by an estimator (batches are gathered up to this many).
STATISTICS_ROWS = 1 << 20


def is_spark_frame(X):
    """True if X is a Spark ``DataFrame`` (without importing Spark).

    A Spark Connect data frame counts too; its module is only looked up when already loaded
    (importing it without its gRPC dependencies can end the process: pyspark then believes
    it runs its own doctests).
    """
    if "pyspark.sql" not in sys.modules:
        return False
    from pyspark.sql import DataFrame

    if isinstance(X, DataFrame):
        return True
    connect = sys.modules.get("pyspark.sql.connect.dataframe")
    return connect is not None and isinstance(X, connect.DataFrame)


def first_rows(X):
    """The rows a privatizer's ``fit`` reads from a Spark data frame: only the first one.

    As for Dask (see :func:`skldp._dask.first_rows`), the privatizer needs ``categories=``.
    """
    # collect, not toPandas: one row needs no Arrow conversion (nor pyspark's pandas checks)
    return pd.DataFrame.from_records(
        [tuple(row) for row in X.limit(1).collect()], columns=list(X.columns)
    )


# -- privatizing ----------------------------------------------------------------------------------
def _output_schema(randomizer, columns):
    from pyspark.sql.types import ArrayType, ByteType, LongType, StructField, StructType

    fields = []
    for spec, name in zip(randomizer.specs, columns, strict=False):
        kind = LongType() if spec.width == 1 else ArrayType(ByteType(), containsNull=False)
        fields.append(StructField(name, kind, nullable=False))
    return StructType(fields)


def _to_arrow(reports, specs, names):
    """Arrow arrays of one table of reports: int64 symbols, list<int8> bit vectors."""
    import pyarrow as pa

    arrays, pos = [], 0
    n = reports.shape[0]
    data = np.asarray(reports)
    for spec in specs:
        block = data[:, pos : pos + spec.width]
        pos += spec.width
        if spec.width == 1:
            arrays.append(pa.array(np.ascontiguousarray(block[:, 0], dtype=np.int64)))
        else:
            offsets = pa.array(np.arange(n + 1, dtype=np.int32) * spec.width)
            values = pa.array(block.astype(np.int8).ravel())
            arrays.append(pa.ListArray.from_arrays(offsets, values))
    return pa.Table.from_arrays(arrays, names=names)


def _partition_randomizer(randomizer, generators, names):
    """The function ``mapInArrow`` runs on each partition (picklable, with its closure)."""

    def randomize(batches):
        import pyarrow as pa
        from pyspark import TaskContext

        batches = list(batches)
        table = pa.Table.from_batches(batches) if batches else None
        if table is None or table.num_rows == 0:
            return
        # a copy: a task run twice must start partition i from the same state
        rng = copy.deepcopy(generators[TaskContext.get().partitionId()])
        reports = randomizer.sample(table.to_pandas(), rng, pandas=False)
        out = _to_arrow(reports, randomizer.specs, names)
        yield from out.to_batches(max_chunksize=BATCH_ROWS)

    return randomize


def transform(randomizer, X):
    """Privatize a Spark data frame lazily; partition ``i`` uses the ``i``-th child generator.

    Parameters
    ----------
    randomizer : skldp._dask.Randomizer
        What to draw with, from the fitted privatizer.
    X : pyspark.sql.DataFrame
        Raw values, one column per column seen in ``fit``.

    Returns
    -------
    reports : pyspark.sql.DataFrame
        One column per channel, named after its (first) input column.
    """
    columns = list(X.columns)
    if len(columns) != randomizer.n_columns:
        raise ValueError(
            f"X has {len(columns)} columns, but {randomizer.owner} was fitted on "
            f"{randomizer.n_columns}"
        )
    names = columns[: len(randomizer.specs)]
    if len(set(names)) != len(names):
        raise ValueError(f"the columns of a Spark data frame must have distinct names: {names}")
    schema = _output_schema(randomizer, names)
    generators = randomizer.rng.spawn(X.rdd.getNumPartitions())
    return X.mapInArrow(_partition_randomizer(randomizer, generators, names), schema)


# -- estimating -----------------------------------------------------------------------------------
def _column_block(column, name):
    """One Arrow column of reports as a 2-D int64 array (n, width)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if column.null_count:
        raise ValueError(f"the report column {name!r} has missing values (null)")
    kind = column.type
    if pa.types.is_integer(kind) or pa.types.is_boolean(kind):
        return column.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)[:, None]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        value = kind.value_type
        if not (pa.types.is_integer(value) or pa.types.is_boolean(value)):
            raise TypeError(f"the report column {name!r} holds arrays of {value}, not integers")
        n = len(column)
        if n == 0:
            return np.empty((0, 0), dtype=np.int64)
        lengths = pc.list_value_length(column)
        width = pc.min(lengths).as_py()
        if width != pc.max(lengths).as_py():
            raise ValueError(f"the bit vectors of the report column {name!r} differ in length")
        flat = pc.list_flatten(column)
        if flat.null_count:
            raise ValueError(f"the report column {name!r} has missing bits (null)")
        values = flat.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        return values.reshape(n, width)
    raise TypeError(
        f"the report column {name!r} has Spark type {kind}; reports are integers (symbols, "
        "bits) or arrays of integers (bit vectors)"
    )


def _batch_reports(table):
    names = table.schema.names
    blocks = [_column_block(table.column(j).combine_chunks(), name) for j, name in enumerate(names)]
    return blocks[0] if len(blocks) == 1 else np.hstack(blocks)


def _combine(merge_statistics, a, b):
    specs_a, stats_a, n_a, width_a = a
    specs_b, stats_b, n_b, width_b = b
    if tuple(specs_a) != tuple(specs_b):
        raise ChannelMismatchError(
            "the partitions of these Spark reports come from different mechanisms or domains"
        )
    stats = [
        merge_statistics(s.channel, x, y) for s, x, y in zip(specs_a, stats_a, stats_b, strict=True)
    ]
    return specs_a, stats, n_a + n_b, width_a


def _partition_statistics(chunk_statistics, merge_statistics):
    def statistics_of(batches):
        import pyarrow as pa

        total, pending, rows = None, [], 0

        def add(total, pending):
            table = pa.Table.from_batches(pending).combine_chunks()
            part = chunk_statistics(_batch_reports(table))
            return part if total is None else _combine(merge_statistics, total, part)

        # Spark's batches are small (10,000 rows by default): read them STATISTICS_ROWS at a
        # time, so that the cost of one chunk's read is paid per million rows, not per batch
        for batch in batches:
            if batch.num_rows == 0:
                continue
            pending.append(batch)
            rows += batch.num_rows
            if rows >= STATISTICS_ROWS:
                total, pending, rows = add(total, pending), [], 0
        if pending:
            total = add(total, pending)
        if total is not None:
            yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(total)])], names=["s"])

    return statistics_of


def statistics(X, chunk_statistics, merge_statistics):
    """``(specs, statistics, n_reports, width)`` of a Spark data frame of reports.

    The Arrow batches of a partition are read by ``chunk_statistics`` on an executor, a
    million rows at a time, and merged there; the partitions are merged in a tree
    (``RDD.treeAggregate``).

    Parameters
    ----------
    X : pyspark.sql.DataFrame
        Reports, one column per privatized column.
    chunk_statistics : callable ``(chunk) -> (specs, statistics, n_reports, width)``
        Reads one in-memory chunk (the estimator's in-memory path).
    merge_statistics : callable ``(channel, a, b) -> statistics``
        Merges the statistics of two chunks of one column.
    """
    per_partition = X.mapInArrow(
        _partition_statistics(chunk_statistics, merge_statistics), "s binary"
    )
    parts = per_partition.rdd.map(lambda row: pickle.loads(row[0]))

    def merge(a, b):  # None: no reports yet (the zero of the aggregation)
        if a is None or b is None:
            return b if a is None else a
        return _combine(merge_statistics, a, b)

    total = parts.treeAggregate(None, merge, merge)
    if total is None:
        raise ValueError("cannot estimate a distribution from zero reports")
    return total

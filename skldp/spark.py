"""Spark data frames: privatize a column, estimate from reports (local mode or a cluster).

Requires the ``spark`` extra (``pip install "skldp[spark]"``: ``pyspark`` and a Java runtime).
``import skldp`` does not import this module, and this module imports Spark only when called.

Privatizers and estimators take a Spark ``DataFrame`` wherever they take a Dask collection:
``privatizer.fit(df)`` (with ``categories=``), ``privatizer.transform(df)`` and
``estimator.fit(reports)``. The two functions here do that for one column of a wider table.

* :func:`privatize_column` returns a lazy Spark data frame of the column's reports. Each
  partition is randomized through ``mapInArrow`` with its own child of the privatizer's noise
  stream: partition ``i`` uses ``rng.spawn(n_partitions)[i]``, as Dask partition ``i`` does,
  so the same seed and the same cut into partitions give the same reports in memory
  (``skldp._dask.partition_generators`` over the chunks), on Dask and on Spark. The
  privatizer's accountant is charged once, when the data frame is built.
* :func:`fit_estimator` computes the estimator's statistics (counts) of each partition on the
  executors and merges them in a tree on the cluster; only the totals reach the driver.
"""

from typing import Any

from sklearn.utils.validation import check_is_fitted

__all__ = ["fit_estimator", "privatize_column"]


def _check_frame(df, column):
    if not _is_frame(df):
        raise TypeError(f"df must be a pyspark.sql.DataFrame; got {type(df).__name__}")
    if not isinstance(column, str):
        raise TypeError(f"column must be the name of one column (a str); got {column!r}")
    if column not in df.columns:
        raise ValueError(f"df has no column {column!r}; its columns are {list(df.columns)}")


def _is_frame(df):
    try:
        from pyspark.sql import DataFrame
    except ImportError as exc:  # pragma: no cover - exercised without the extra only
        raise ImportError(
            'skldp.spark needs pyspark: pip install "skldp[spark]" (and a Java runtime)'
        ) from exc
    return isinstance(df, DataFrame)


def privatize_column(
    df: Any, column: str, privatizer: Any, *, output_column: str | None = None
) -> Any:
    """Privatize one column of a Spark data frame, partition by partition.

    Each partition's Arrow batches are gathered and randomized on an executor with the
    partition's child noise generator ``rng.spawn(n_partitions)[i]`` (``rng`` is the
    privatizer's noise stream, which the spawn advances: a second call draws new noise).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The table of raw values.
    column : str
        The column to privatize (values of the privatizer's domain).
    privatizer : skldp privatizer
        Fitted, or unfitted with ``categories=`` set (it is then fitted on the column's first
        row only: the domain is public, the data are not read).
    output_column : str, optional
        The name of the reports' column; by default ``column``.

    Returns
    -------
    reports : pyspark.sql.DataFrame
        One column of reports, lazy: a ``bigint`` per report for a symbol channel (k-RR,
        OLH, ...), an ``array<tinyint>`` of ``report_width`` bits for a bit-vector channel
        (OUE, RAPPOR, ...). Its partitions are those of ``df``.

    Raises
    ------
    ValueError
        If ``df`` has no such column, or an unfitted privatizer has no ``categories``.
    """
    _check_frame(df, column)
    raw = df.select(column)
    try:
        check_is_fitted(privatizer)
    except Exception:  # NotFittedError: fit on the first row (needs categories=)
        privatizer.fit(raw)
    fitted = getattr(privatizer, "feature_names_in_", None)
    name = column
    if fitted is not None and len(fitted) == 1 and str(fitted[0]) != column:
        name = str(fitted[0])  # fitted on a column of another name: read this one under it
        raw = raw.withColumnRenamed(column, name)
    reports = privatizer.transform(raw)
    output_column = column if output_column is None else output_column
    if output_column != name:
        reports = reports.withColumnRenamed(name, output_column)
    return reports


def fit_estimator(estimator: Any, df: Any, column: str | None = None) -> Any:
    """Fit a distribution estimator on a Spark data frame of reports.

    The statistics (additive counts) of each partition are computed on the executors from
    its Arrow batches and merged by a tree aggregation; the reports stay on the cluster. The
    estimate equals ``estimator.fit`` on the same reports in memory, bit for bit.

    Parameters
    ----------
    estimator : skldp distribution estimator
        With ``channel=`` set (a channel, or the fitted privatizer): Spark columns do not
        carry the channel that made them. It is fitted in place.
    df : pyspark.sql.DataFrame
        Reports, as :func:`privatize_column` returns them.
    column : str, optional
        The reports' column; by default every column of ``df`` (one per privatized column).

    Returns
    -------
    estimator
        The fitted estimator.
    """
    if column is not None:
        _check_frame(df, column)
        df = df.select(column)
    elif not _is_frame(df):
        raise TypeError(f"df must be a pyspark.sql.DataFrame; got {type(df).__name__}")
    if estimator.get_params(deep=False).get("channel") is None:
        raise ValueError(
            f"{type(estimator).__name__} needs channel= (the channel or the fitted privatizer) "
            "to read a Spark data frame: Spark columns do not carry their channel"
        )
    return estimator.fit(df)

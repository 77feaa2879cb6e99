"""Spark data frames (issue 33, item 2): privatize a column per partition, estimate by merged
statistics; the same seed gives the same reports in memory, on Dask and on Spark local mode.

Skipped without the ``spark`` extra (pyspark and a Java runtime). One local[2] session for the
module: the JVM takes seconds to start.
"""

import os
import shutil
import sys

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone

from skldp import EmpiricalEstimator, OptimizedUnaryEncoding, RandomizedResponse
from skldp._dask import partition_generators
from skldp.privacy import PrivacyAccountant

pyspark = pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime", allow_module_level=True)

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from skldp.spark import fit_estimator, privatize_column  # noqa: E402

K, N, PARTS = 7, 12_000, 3

# pyspark 4 warns that it does not fully support pandas 3 (skldp reads its batches through Arrow)
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas")


@pytest.fixture(scope="module")
def spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("skldp-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    yield session
    session.stop()


def _values(ids):
    """The raw value of row ``id``: a skewed, deterministic function of the id."""
    return (ids * ids + 3 * ids) % 11 % K


def _table(spark, n=N, parts=PARTS):
    """``spark.range`` cuts rows ``[i n / p, (i + 1) n / p)`` into partition i."""
    df = spark.range(0, n, 1, parts).withColumn("x", (F.col("id") * F.col("id") + 3 * F.col("id")))
    df = df.withColumn("x", F.col("x") % 11 % K)
    bounds = [i * n // parts for i in range(parts + 1)]
    return df, _values(np.arange(n, dtype=np.int64)), bounds


def _in_memory(privatizer, X, bounds, seed):
    """The single-machine loop: chunk i privatized with child i of the seed."""
    pieces = []
    children = partition_generators(seed, len(bounds) - 1)
    for i, child in enumerate(children):
        p = clone(privatizer).set_params(random_state=child).fit(X[:1])
        pieces.append(np.asarray(p.transform(X[bounds[i] : bounds[i + 1]])))
    return np.concatenate(pieces)


def _collect(reports, column):
    """The reports of a Spark data frame as an (n, width) int64 array, in partition order."""
    col = reports.toArrow().column(column).combine_chunks()
    if pa.types.is_list(col.type):
        return col.flatten().to_numpy().astype(np.int64).reshape(len(col), -1)
    return col.to_numpy().astype(np.int64)[:, None]


@pytest.mark.parametrize(
    "make",
    [
        lambda seed: RandomizedResponse(1.0, categories=list(range(K)), random_state=seed),
        lambda seed: OptimizedUnaryEncoding(1.0, categories=list(range(K)), random_state=seed),
    ],
    ids=["krr", "oue"],
)
def test_same_seed_same_reports_in_memory_on_dask_and_on_spark(spark, make):
    da = pytest.importorskip("dask.array")
    seed = 2024
    df, X, bounds = _table(spark)
    spark_reports = privatize_column(df, "x", make(seed), output_column="r")
    assert spark_reports.columns == ["r"]
    assert spark_reports.rdd.getNumPartitions() == PARTS
    got = _collect(spark_reports, "r")
    memory = _in_memory(make(seed), X, bounds, seed)
    sizes = tuple(np.diff(bounds))
    dask_reports = np.asarray(
        make(seed).fit(X[:1]).transform(da.from_array(X, chunks=sizes)).compute()
    )
    assert got.shape == memory.shape == (N, make(0).fit(X[:1]).channel_.report_width)
    assert_array_equal(got, memory)
    assert_array_equal(got, dask_reports)
    # the counts of the estimator, from Spark, equal those in memory, exactly
    channel = make(seed).fit(X[:1])
    est = fit_estimator(EmpiricalEstimator(channel=channel), spark_reports, "r")
    ref = EmpiricalEstimator(channel=channel).fit(memory)
    assert est.n_reports_ == N
    assert_array_equal(est.distribution_, ref.distribution_)
    # a task computed again draws the same noise (the partition's child, copied)
    assert_array_equal(_collect(spark_reports, "r"), got)


def test_second_privatization_draws_new_noise_and_the_accountant_is_charged_once(spark):
    df, X, _ = _table(spark)
    acc = PrivacyAccountant(budget=10.0)
    rr = RandomizedResponse(1.0, categories=list(range(K)), accountant=acc, random_state=5)
    first = privatize_column(df, "x", rr)
    assert acc.spent == 1.0 and len(acc.ledger) == 1  # charged when the frame is built
    a, b = _collect(first, "x"), _collect(first, "x")
    assert acc.spent == 1.0  # computing the lazy frame charges nothing more
    assert_array_equal(a, b)
    second = _collect(privatize_column(df, "x", rr), "x")
    assert acc.spent == 2.0
    keep = rr.channel_.keep  # both keep the true value with probability `keep`: agreement is
    agree = np.mean(a[:, 0] == second[:, 0])  # far below 1 for independent draws
    expected = keep**2 + (1 - keep) ** 2 / (K - 1)
    assert abs(agree - expected) < 5 * np.sqrt(expected * (1 - expected) / N)


def test_estimate_from_spark_matches_the_truth_statistically(spark):
    df, X, _ = _table(spark, n=30_000, parts=4)
    rr = RandomizedResponse(2.0, categories=list(range(K)), random_state=1)
    est = fit_estimator(EmpiricalEstimator(channel=rr.fit(X[:1])), privatize_column(df, "x", rr))
    truth = np.bincount(X, minlength=K) / X.size
    ch = rr.channel_
    sd = np.sqrt(ch.keep * (1 - ch.keep)) / (ch.keep - (1 - ch.keep) / (K - 1)) / np.sqrt(X.size)
    assert np.max(np.abs(est.distribution_ - truth)) < 5 * sd


def test_empty_partitions_and_errors(spark):
    df, X, _ = _table(spark)
    rr = RandomizedResponse(1.0, categories=list(range(K)), random_state=0)
    some = df.where(F.col("id") < 4000)  # partitions 1 and 2 empty
    reports = privatize_column(some, "x", rr)
    est = fit_estimator(EmpiricalEstimator(channel=rr), reports)
    assert est.n_reports_ == 4000
    # a privatizer fitted on a column of another name reads this one under that name
    other = RandomizedResponse(1.0, categories=list(range(K)), random_state=0)
    other.fit(pd.DataFrame({"city": [0]}))
    renamed = privatize_column(some, "x", other, output_column="r")
    assert renamed.columns == ["r"]
    assert_array_equal(_collect(renamed, "r"), _collect(reports, "x"))  # same seed, same cut
    with pytest.raises(ValueError, match="zero reports"):
        fit_estimator(EmpiricalEstimator(channel=rr), reports.where(F.col("x") < 0))
    with pytest.raises(ValueError, match="needs categories="):
        privatize_column(df, "x", RandomizedResponse(1.0))
    with pytest.raises(ValueError, match="no column 'y'"):
        privatize_column(df, "y", rr)
    with pytest.raises(TypeError, match="pyspark.sql.DataFrame"):
        privatize_column(X, "x", rr)
    with pytest.raises(ValueError, match="needs channel="):
        fit_estimator(EmpiricalEstimator(), reports)
    text = spark.createDataFrame([("a",), ("b",)], "r string")
    with pytest.raises(Exception, match="Spark type string"):
        fit_estimator(EmpiricalEstimator(channel=rr), text)

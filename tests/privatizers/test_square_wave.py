"""SquareWave, the privatizer: public bounds, binning, clipping, pandas and ColumnTransformer."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.compose import ColumnTransformer

from skldp import EMEstimator, SquareWave
from skldp.channels import SquareWaveChannel
from skldp.privacy import LDP


def test_builds_the_channel_and_states_the_guarantee():
    sw = SquareWave(2.0, bounds=(10, 20), bins=32, output_bins=48, random_state=0)
    sw.fit([[10.0], [20.0]])
    assert sw.channel_ == SquareWaveChannel(2.0, 32, 48)
    assert sw.privacy_ == LDP(2.0)
    # the categories are the middles of the input bins, in the units of bounds
    assert_allclose(sw.categories_[0][[0, -1]], [10 + 10 / 64, 20 - 10 / 64])


def test_bounds_are_required_and_checked():
    with pytest.raises(ValueError, match="needs bounds"):
        SquareWave(1.0).fit([[0.5]])
    with pytest.raises(ValueError, match="lo < hi"):
        SquareWave(1.0, bounds=(1, 0)).fit([[0.5]])
    with pytest.raises(ValueError, match="categories must be None"):
        SquareWave(1.0, bounds=(0, 1), categories=[0, 1]).fit([[0.5]])


def test_values_outside_bounds_are_refused_naming_them_unless_clipped():
    X = pd.DataFrame({"age": [20.0, 130.0, 40.0, -3.0]})
    message = r"'age' has 2 value\(s\) outside bounds=\(0, 100\).*-3, 130"
    with pytest.raises(ValueError, match=message):
        SquareWave(1.0, bounds=(0, 100)).fit(X)
    sw = SquareWave(1.0, bounds=(0, 100), bins=10, clip=True, random_state=0).fit(X)
    assert sw.transform(X).shape == (4, 1)
    # fitted on values inside, a later value outside is refused by transform too
    sw = SquareWave(1.0, bounds=(0, 100), bins=10).fit(X.iloc[[0, 2]])
    with pytest.raises(ValueError, match="outside bounds"):
        sw.transform(X)
    with pytest.raises(ValueError, match="missing"):
        sw.transform(pd.DataFrame({"age": [np.nan]}))


def test_binning_is_the_stated_preprocessing():
    # with epsilon large the report is almost surely in the output bins over the input bin:
    # the value x goes to bin floor(d (x - lo) / (hi - lo)), the top bin holding hi
    sw = SquareWave(60.0, bounds=(0, 8), bins=8, random_state=0)
    x = np.array([0.0, 0.99, 1.0, 5.5, 8.0])
    reports = np.asarray(sw.fit_transform(x.reshape(-1, 1)))[:, 0]
    ch = sw.channel_
    centre = 8 * ch.output_value(reports)
    assert_array_equal(np.floor(np.clip(centre, 0, 7.999)), [0, 0, 1, 5, 7])


def test_pandas_columns_and_column_transformer():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"income": rng.uniform(0, 1e5, 500), "city": rng.integers(0, 3, 500)})
    out = SquareWave(1.0, bounds=(0, 1e5), bins=16, random_state=0).fit_transform(df[["income"]])
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["income"]
    assert out.index.equals(df.index)
    ct = ColumnTransformer(
        [("sw", SquareWave(1.0, bounds=(0, 1e5), bins=16, random_state=0), ["income"])]
    )
    reports = ct.fit_transform(df)
    assert reports.shape == (500, 1) and reports.min() >= 0 and reports.max() < 16


def test_two_columns_compose():
    X = np.random.default_rng(1).uniform(0, 1, (50, 2))
    sw = SquareWave(1.0, bounds=(0, 1), bins=8, random_state=0).fit(X)
    assert sw.privacy_.epsilon == pytest.approx(2.0)
    assert len(sw.channels_) == 2


def test_estimate_recovers_a_distribution():
    # a two-bump distribution over 16 bins is recovered by plain EM: its CDF within 0.01 on
    # average (Wasserstein-1 on [0, 1]) and within 0.03 everywhere (Kolmogorov-Smirnov).
    # smoothing=False: EMS, the default over ordered inputs, is made for fine bins (d = 1024)
    # and smooths two bumps a bin wide away at d = 16 (W1 about 0.054 here)
    rng = np.random.default_rng(2)
    n = 50_000
    x = np.where(rng.random(n) < 0.5, rng.normal(0.25, 0.05, n), rng.normal(0.75, 0.05, n))
    x = np.clip(x, 0, 1)
    sw = SquareWave(2.0, bounds=(0, 1), bins=16, random_state=0)
    est = EMEstimator(smoothing=False).fit(sw.fit_transform(x.reshape(-1, 1)))
    truth = np.bincount(np.minimum((x * 16).astype(int), 15), minlength=16) / n
    gap = np.abs(np.cumsum(est.distribution_) - np.cumsum(truth))
    assert gap.mean() < 0.01 and gap.max() < 0.03

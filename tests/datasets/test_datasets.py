import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp.datasets import (
    CountTable,
    Distribution,
    load_adult,
    load_adult_joint,
    load_descr,
    load_foursquare_manhattan,
    load_gowalla,
    make_dirichlet,
    make_geometric,
    make_sparse,
    make_two_step,
    make_uniform,
    make_zipf,
)

# ------------------------------------------------------------------------------------------------
# synthetic distributions


def test_geometric_two_readings():
    k, lam = 50, 0.95
    ratio = make_geometric(k, lam=lam).probabilities
    text = make_geometric(k, lam=lam, reading="text").probabilities
    i = np.arange(k)
    assert_allclose(ratio, lam**i * (1 - lam) / np.sum(lam**i * (1 - lam)), rtol=1e-12)
    assert_allclose(text, (1 - lam) ** i * lam / np.sum((1 - lam) ** i * lam), rtol=1e-12)
    # the text reading at 0.95 puts 95% of the mass on symbol 0; the ratio reading decays slowly
    assert text[0] == pytest.approx(0.95, abs=1e-12)
    assert ratio[0] < 0.06
    # compressive-sensing paper: Geo(0.8) is (2, 0.1)-sparse and Geo(0.6) is (3, 0.1)-sparse
    g8 = make_geometric(10_000, lam=0.8, reading="text").probabilities
    g6 = make_geometric(10_000, lam=0.6, reading="text").probabilities
    assert 1 - g8[:2].sum() == pytest.approx(0.04) and 1 - g8[:1].sum() > 0.1
    assert 1 - g6[:3].sum() == pytest.approx(0.064) and 1 - g6[:2].sum() > 0.1


def test_geometric_large_k_does_not_underflow_to_nan():
    p = make_geometric(1_000_000, lam=0.6, reading="text").probabilities
    assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0)


def test_permuted_geometric_is_a_permutation_fixed_by_seed():
    base = make_geometric(100).probabilities
    a = make_geometric(100, permute=True, random_state=3)
    b = make_geometric(100, permute=True, random_state=3)
    assert a.name == "Geo(0.95)*"
    assert_array_equal(a.probabilities, b.probabilities)
    assert_allclose(np.sort(a.probabilities), np.sort(base))
    assert not np.array_equal(a.probabilities, base)


def test_zipf_uniform_two_step_sparse_formulas():
    assert_allclose(
        make_zipf(5, exponent=1.0).probabilities,
        (1 / np.arange(1, 6)) / np.sum(1 / np.arange(1, 6)),
    )
    assert_allclose(make_zipf(5, exponent=0.0).probabilities, np.full(5, 0.2))
    assert_allclose(make_uniform(8).probabilities, np.full(8, 1 / 8))
    p = make_two_step(10, heavy_fraction=0.3, heavy_mass=0.6).probabilities
    assert_allclose(p, [0.2] * 3 + [0.4 / 7] * 7)
    s = make_sparse(20, sparsity=4, support="random", random_state=0).probabilities
    assert np.count_nonzero(s) == 4 and set(s[s > 0]) == {0.25}
    d = make_sparse(20, sparsity=5, weights="dirichlet", random_state=0).probabilities
    assert np.count_nonzero(d[:5]) == 5 and np.all(d[5:] == 0) and d.sum() == pytest.approx(1)


def test_dirichlet_is_reproducible_and_concentration_matters():
    a = make_dirichlet(1000, alpha=1.0, random_state=1).probabilities
    assert_array_equal(a, make_dirichlet(1000, alpha=1.0, random_state=1).probabilities)
    flat = make_dirichlet(1000, alpha=100.0, random_state=1).probabilities
    spiky = make_dirichlet(1000, alpha=0.01, random_state=1).probabilities
    assert np.sum(flat**2) < np.sum(a**2) < np.sum(spiky**2)


@pytest.mark.parametrize(
    "maker",
    [make_uniform, make_geometric, make_zipf, make_two_step, make_sparse, make_dirichlet],
    ids=lambda f: f.__name__,
)
def test_samples_follow_the_distribution(maker, seed):
    n, k = 200_000, 30
    X, dist = maker(k, n, random_state=seed)
    assert isinstance(dist, Distribution) and X.shape == (n,) and X.dtype.kind == "i"
    counts = np.bincount(X, minlength=k)
    p = dist.probabilities
    # each count is binomial: within 5 standard deviations, and never on a zero-probability symbol
    assert np.all(np.abs(counts - n * p) <= 5 * np.sqrt(n * p * (1 - p)) + 1e-9)
    assert np.all(counts[p == 0] == 0)
    X2, _ = maker(k, n, random_state=seed)
    assert_array_equal(X, X2)


def test_distribution_object():
    d = Distribution([0.5, 0.5, 0.0], ["a", "b", "c"], name="half")
    assert repr(d) == "Distribution('half', n_categories=3)"
    assert len(d) == 3 and np.asarray(d).tolist() == [0.5, 0.5, 0.0]
    assert set(d.sample(100, random_state=0)) <= {"a", "b"}
    assert d.to_series().index.tolist() == ["a", "b", "c"]
    with pytest.raises(ValueError, match="one entry per probability"):
        Distribution([0.5, 0.5], ["a"])
    with pytest.raises(ValueError, match="sum to 1"):
        Distribution([0.5, 0.6])


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: make_zipf(1), ValueError, "n_categories must be an integer >= 2"),
        (lambda: make_zipf(2.5), TypeError, "n_categories must be an integer"),
        (lambda: make_zipf(5, exponent=-1), ValueError, "exponent must lie in"),
        (lambda: make_geometric(5, lam=1.0), ValueError, r"lam must lie in \(0.0, 1.0\)"),
        (
            lambda: make_geometric(5, reading="paper"),
            ValueError,
            "reading must be 'ratio' or 'text'",
        ),
        (lambda: make_sparse(5, sparsity=6), ValueError, "sparsity must be at most"),
        (lambda: make_sparse(5, sparsity=2, support="last"), ValueError, "support must be"),
        (lambda: make_two_step(5, heavy_mass=1.5), ValueError, "heavy_mass must lie in"),
        (lambda: make_dirichlet(5, alpha=0), ValueError, "alpha must lie in"),
        (lambda: make_uniform(5, -1), ValueError, "n_samples must be an integer >= 0"),
        (lambda: make_uniform(5, random_state="x"), None, None),
    ],
)
def test_bad_parameters(call, error, match):
    if error is None:  # random_state is only used when sampling
        call()
        return
    with pytest.raises(error, match=match):
        call()


# ------------------------------------------------------------------------------------------------
# bundled tables


def test_gowalla_matches_its_readme():
    data = load_gowalla()
    assert isinstance(data, CountTable)
    assert data.grid_shape == (125, 350) and len(data.categories) == 43_750
    assert data.n_records == 143_296 and int((data.counts > 0).sum()) == 658
    top = data.frame.loc[data.counts.to_numpy().argmax()]
    assert (top["lat_index"], top["lon_index"], top["count"]) == (26, 161, 37_830)
    assert data.frame["cell"].tolist() == list(range(43_750))
    # cell centres as the README defines them
    assert_allclose(data.frame["lat"], 25 + (data.frame["lat_index"] + 0.5) * 0.2)
    assert_allclose(data.frame["lon"], -130 + (data.frame["lon_index"] + 0.5) * 0.2)
    assert data.distribution.sum() == pytest.approx(1.0)
    assert "Cho" in data.DESCR and "3,671,812" in data.DESCR


def test_foursquare_and_adult_match_their_readme():
    fsq = load_foursquare_manhattan()
    assert fsq.n_records == 74_471 and int((fsq.counts > 0).sum()) == 332
    assert int(fsq.counts.idxmax()) == 305 and int(fsq.counts.max()) == 2_089
    assert fsq.frame.columns.tolist() == [
        "cell",
        "lat_index",
        "lon_index",
        "lat",
        "lon",
        "count",
        "num_venues",
    ]
    adult = load_adult()
    assert adult.n_records == 48_842 and len(adult.categories) == 224
    assert int((adult.counts > 0).sum()) == 184
    assert set(adult.frame.loc[adult.suggested_sensitive, "marital_status"]) == {
        "Divorced",
        "Separated",
    }
    assert len(adult.marginals) == 10
    assert all(s.sum() == 48_842 for s in adult.marginals.values())
    assert adult.frame["count"].equals(
        adult.frame["count_adult_data"] + adult.frame["count_adult_test"]
    )


def test_adult_joint_cells_decode_to_their_attributes():
    joint = load_adult_joint()
    assert (
        len(joint.categories) == 241_920 and len(joint.frame) == 8_732 and joint.n_records == 48_842
    )
    four = load_adult()
    # the six-way table agrees with the four-way one on the shared attributes
    by_marital = joint.frame.groupby("marital_status", observed=True)["count"].sum()
    assert (
        by_marital.to_dict()
        == four.frame.groupby("marital_status", observed=True)["count"].sum().to_dict()
    )
    shape = tuple(len(v) for v in joint.attribute_values.values())
    codes = np.unravel_index(joint.frame["cell"].to_numpy(), shape)
    for (name, values), c in zip(joint.attribute_values.items(), codes, strict=True):
        assert_array_equal(
            np.asarray(values, dtype=object)[c], joint.frame[name].astype(object).to_numpy()
        )


def test_sampling_all_records_reproduces_the_counts():
    data = load_foursquare_manhattan()
    rows = data.sample(random_state=0)
    assert len(rows) == data.n_records and rows.index.equals(pd.RangeIndex(data.n_records))
    assert_array_equal(np.bincount(rows["cell"], minlength=625), data.counts.to_numpy())
    # rows are shuffled and the shuffle is fixed by the seed
    assert not rows["cell"].is_monotonic_increasing
    assert rows.equals(data.sample(random_state=0))


def test_sampling_without_and_with_replacement():
    data = load_adult()
    sub = data.sample(1000, random_state=1)
    counts = np.bincount(sub["cell"], minlength=224)
    assert counts.sum() == 1000 and np.all(counts <= data.counts.to_numpy())
    assert list(sub.columns) == ["cell", "age", "income", "marital_status", "sex"]
    with pytest.raises(ValueError, match="exceeds the 48842 records"):
        data.sample(50_000)
    big = data.sample(50_000, replace=True, random_state=1)
    assert len(big) == 50_000
    arr = load_adult(as_frame=False)
    assert arr.frame is None and isinstance(arr.counts, np.ndarray)
    x = arr.sample(10, random_state=0)
    assert isinstance(x, np.ndarray) and x.shape == (10,)


def test_to_distribution_and_descr():
    d = load_gowalla().to_distribution()
    assert d.n_categories == 43_750 and math.isclose(d.probabilities.sum(), 1.0)
    assert "CC BY 4.0" in load_descr("adult")
    with pytest.raises(ValueError, match="no description named"):
        load_descr("nope")

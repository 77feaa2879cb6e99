"""skldp.io: packed bit-vector report files and estimating from chunks."""

import numpy as np
import pandas as pd
import pytest

from skldp import (
    RAPPOR,
    EMEstimator,
    EmpiricalEstimator,
    PersonalizedEstimator,
    PersonalizedULDP,
    ProjectedEstimator,
    RandomizedResponse,
)
from skldp.io import fit_chunks, pack_bits, read_reports, unpack_bits, write_reports

CATS = [f"v{i}" for i in range(20)]


def test_pack_bits_layout_is_the_documented_one():
    bits = np.zeros((1, 12), dtype=np.uint8)
    bits[0, [0, 9]] = 1
    packed = pack_bits(bits)
    # bit j is bit j % 8 (least significant first) of byte j // 8: bytes 0x01, 0x02
    assert packed.tolist() == [[1, 2]] and packed.tobytes().hex() == "0102"
    assert np.array_equal(unpack_bits(packed, 12), bits)
    with pytest.raises(ValueError, match="bits set beyond the width 12"):
        unpack_bits(np.array([[1, 0x12]], dtype=np.uint8), 12)  # bit 12 set
    with pytest.raises(ValueError, match="have 2 bytes each"):
        unpack_bits(np.zeros((1, 3), dtype=np.uint8), 12)
    with pytest.raises(ValueError, match="only 0 and 1"):
        pack_bits(np.array([[0, 2]]))


@pytest.mark.parametrize("name", ["r.parquet", "r.csv", "r.csv.gz"])
@pytest.mark.parametrize("width", [13, 16])
def test_packed_reports_round_trip(tmp_path, name, width):
    rng = np.random.default_rng(width)
    bits = (rng.random((2500, width)) < 0.3).astype(np.uint8)
    path = tmp_path / name
    write_reports(path, bits)
    assert np.array_equal(read_reports(path, width=width), bits)
    if name == "r.csv":
        text = path.read_text().splitlines()
        assert text[0] == "report_bits" and len(text) == 2501
        assert text[1] == pack_bits(bits[:1]).tobytes().hex()
    symbols = rng.integers(0, 7, 2500)
    write_reports(path, symbols)
    assert np.array_equal(read_reports(path)[:, 0], symbols)


def test_privatizer_output_is_written_packed_and_the_wide_form_still_reads(tmp_path):
    rappor = RAPPOR(epsilon=1.0, categories=[CATS], random_state=0)
    reports = rappor.fit_transform(np.array(CATS * 50, dtype=object).reshape(-1, 1))
    path = tmp_path / "r.parquet"
    write_reports(path, reports)  # the channel says: bits of width 20
    assert pd.read_parquet(path).columns.tolist() == ["report_bits"]
    assert np.array_equal(read_reports(path, width=20), np.asarray(reports))
    wide = tmp_path / "wide.csv"
    pd.DataFrame(np.asarray(reports), columns=[f"report_{j}" for j in range(20)]).to_csv(
        wide, index=False
    )
    assert np.array_equal(read_reports(wide), np.asarray(reports))
    with pytest.raises(ValueError, match="the file has 20 bit columns; reports of width 21"):
        read_reports(wide, width=21)


def test_bad_packed_cells_are_named_by_row(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("report_bits\n0102\n01\n")
    with pytest.raises(ValueError, match=r"data row 2: .* is 4 hexadecimal characters; got '01'"):
        read_reports(path, width=12)
    path.write_text("report_bits\n0102\n01zz\n")
    with pytest.raises(ValueError, match="data row 2"):
        read_reports(path, width=12)


def _chunks(reports, size):
    arr = np.asarray(reports)
    return (arr[i : i + size] for i in range(0, arr.shape[0], size))


@pytest.mark.parametrize(
    "make, estimator",
    [
        (lambda: RandomizedResponse(epsilon=1.0, categories=[CATS], random_state=0), EMEstimator),
        (
            lambda: RandomizedResponse(epsilon=1.0, categories=[CATS], random_state=0),
            ProjectedEstimator,
        ),
        (lambda: RAPPOR(epsilon=1.0, categories=[CATS], random_state=0), EMEstimator),
        (lambda: RAPPOR(epsilon=1.0, categories=[CATS], random_state=0), EmpiricalEstimator),
    ],
)
def test_fit_chunks_equals_fit_bit_for_bit(make, estimator):
    rng = np.random.default_rng(5)
    X = rng.choice(CATS, 7000, p=np.arange(1, 21) / 210).reshape(-1, 1)
    priv = make()
    reports = priv.fit_transform(X)
    whole = estimator().fit(reports)
    chunked = fit_chunks(estimator(channel=priv), _chunks(reports, 999))
    assert np.array_equal(whole.distribution_, chunked.distribution_)
    assert chunked.n_reports_ == 7000
    if hasattr(whole, "distribution_std_"):
        assert np.array_equal(whole.distribution_std_, chunked.distribution_std_)


def test_fit_chunks_goes_through_partial_fit_overrides():
    # PersonalizedEstimator post-processes in partial_fit (categories over values, not bots)
    pum = PersonalizedULDP(epsilon=2.0, sensitive=["d"], tags=["home"], categories=list("abcd"))
    rng = np.random.default_rng(0)
    values = rng.choice(list("abcd"), 3000)
    X = np.column_stack([values, np.where(values == "b", "home", None)]).astype(object)
    reports = pum.fit_transform(X)
    whole = PersonalizedEstimator(channel=pum).fit(np.asarray(reports))
    chunked = fit_chunks(PersonalizedEstimator(channel=pum), _chunks(reports, 700))
    assert chunked.categories_.tolist() == ["a", "b", "c", "d"]
    assert np.array_equal(whole.distribution_, chunked.distribution_)


def test_fit_chunks_is_the_estimators_public_method():
    rr = RandomizedResponse(epsilon=1.0, categories=[CATS], random_state=0)
    X = np.array(CATS * 50, dtype=object).reshape(-1, 1)
    reports = rr.fit_transform(X)
    direct = EMEstimator(channel=rr).fit_chunks(_chunks(reports, 300))
    through_io = fit_chunks(EMEstimator(channel=rr), _chunks(reports, 300))
    assert np.array_equal(direct.distribution_, through_io.distribution_)
    assert direct.n_reports_ == 1000


def test_fit_chunks_refuses_an_estimator_without_it():
    from skldp import MultidimensionalEstimator

    with pytest.raises(TypeError, match="distribution estimator of skldp.*partial_fit"):
        fit_chunks(MultidimensionalEstimator(), iter([]))


def test_fit_chunks_of_nothing_is_an_error():
    with pytest.raises(ValueError, match="zero reports"):
        fit_chunks(ProjectedEstimator(), iter([]))


def test_fit_chunks_refuses_chunks_of_another_mechanism():
    from skldp import ChannelMismatchError

    X = np.array(CATS * 10, dtype=object).reshape(-1, 1)
    a = RandomizedResponse(epsilon=1.0, categories=[CATS], random_state=0).fit_transform(X)
    b = RandomizedResponse(epsilon=2.0, categories=[CATS], random_state=0).fit_transform(X)
    with pytest.raises(ChannelMismatchError, match="different mechanism or domain"):
        fit_chunks(ProjectedEstimator(), iter([a, b]))

"""Products with bit-packed reports: byte tables, 16-bit pair tables, lazy merging."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp.channels import PackedBitReports
from skldp.channels._bits import _PAIR_TABLE_MIN_REPORTS


@pytest.mark.parametrize(
    ("n", "width"),
    [
        (50, 3),  # one byte, 8-bit tables
        (300, 17),  # three bytes
        (_PAIR_TABLE_MIN_REPORTS, 8),  # one byte: no pair to look up
        (_PAIR_TABLE_MIN_REPORTS, 16),  # one pair
        (_PAIR_TABLE_MIN_REPORTS + 5, 41),  # odd bytes: the last pair has a zero high byte
    ],
)
def test_row_dot_and_weighted_bit_sums_equal_the_dense_products(n, width):
    rng = np.random.default_rng(width)
    bits = (rng.random((n, width)) < 0.4).astype(np.uint8)
    packed = PackedBitReports.from_bits(bits)
    pairs = n >= _PAIR_TABLE_MIN_REPORTS and packed.packed.shape[0] > 1
    assert packed._use_pairs() == pairs
    w = rng.standard_normal(width)
    v = rng.standard_normal(n)
    assert_allclose(packed.row_dot(w), bits @ w, rtol=0, atol=1e-12)
    assert_allclose(packed.weighted_bit_sums(v), v @ bits, rtol=1e-13, atol=1e-9)
    if pairs:
        codes = packed._pair_codes()
        assert codes.dtype == np.uint16 and codes.shape == ((packed.packed.shape[0] + 1) // 2, n)
        # 2 bytes per pair of packed bytes: no larger than the packed reports (+1 byte padding)
        assert codes.nbytes <= packed.packed.nbytes + n


def test_merge_joins_chunks_once_and_keeps_order():
    rng = np.random.default_rng(0)
    chunks = [(rng.random((m, 13)) < 0.5).astype(np.uint8) for m in (7, 1, 20, 4)]
    merged = PackedBitReports.from_bits(chunks[0])
    for chunk in chunks[1:]:
        merged = merged.merge(PackedBitReports.from_bits(chunk))
    whole = PackedBitReports.from_bits(np.vstack(chunks))
    assert merged.n == whole.n == 32
    assert len(merged._parts) == 4  # nothing copied yet
    assert_array_equal(merged.packed, whole.packed)
    assert len(merged._parts) == 1
    assert_array_equal(merged.sums, whole.sums)
    assert_array_equal(merged.unpack(5, 9), np.vstack(chunks)[5:9])
    with pytest.raises(ValueError, match="width 13 and 12"):
        merged.merge(PackedBitReports.from_bits(np.zeros((2, 12), dtype=np.uint8)))

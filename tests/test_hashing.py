"""The cohort hashes: the documented construction, stable across processes, well spread."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skldp._hashing import (
    candidate_buckets,
    check_hash_seed,
    cohort_permutations,
    master_key,
    row_buckets,
    value_digests,
)

WORDS = ["apple", "banana", "cherry", "", "über", "日本", "a" * 300, "7"]
MASK = (1 << 64) - 1


def _fmix(z):
    z ^= z >> 33
    z = (z * 0xFF51AFD7ED558CCD) & MASK
    z ^= z >> 33
    z = (z * 0xC4CEB93E53FCA34D) & MASK
    return z ^ (z >> 33)


def _reference_bucket(text, cohort, i, k, seed):
    """The construction of skldp._hashing's docstring, written out in pure Python."""
    key = hashlib.blake2b(
        b"skldp.cohort-hash.v1" + seed.to_bytes(16, "little"), digest_size=32
    ).digest()
    d = hashlib.blake2b(text.encode("utf-8"), key=key, digest_size=16).digest()
    lo, hi = int.from_bytes(d[:8], "little"), int.from_bytes(d[8:], "little")
    kd = hashlib.blake2b(
        b"cohort" + cohort.to_bytes(8, "little") + i.to_bytes(8, "little"), key=key, digest_size=16
    ).digest()
    a, b = int.from_bytes(kd[:8], "little"), int.from_bytes(kd[8:], "little")
    return _fmix(_fmix(lo ^ a) ^ hi ^ b) % k


@pytest.mark.parametrize("seed", [0, 12345, 2**100 + 7])
def test_buckets_follow_the_documented_construction(seed):
    k, C, h = 13, 4, 2
    B = candidate_buckets(WORDS, k, C, seed, n_hashes=h)
    assert B.shape == (len(WORDS), C, h)
    for s, w in enumerate(WORDS):
        for c in range(C):
            for i in range(h):
                assert B[s, c, i] == _reference_bucket(w, c, i, k, seed)


def test_row_buckets_agree_with_candidate_buckets():
    rng = np.random.default_rng(0)
    values = np.array(WORDS, dtype=object)[rng.integers(0, len(WORDS), 300)]
    cohorts = rng.integers(0, 5, 300)
    table = candidate_buckets(WORDS, 11, 5, 3, n_hashes=2)
    rows = row_buckets(values, cohorts, 11, 5, 3, n_hashes=2)
    idx = np.array([WORDS.index(v) for v in values])
    assert_array_equal(rows, table[idx, cohorts])


_CHILD = (
    "import sys, json; from skldp._hashing import candidate_buckets, cohort_permutations;"
    "w = json.loads(sys.argv[1]);"
    "print(json.dumps([candidate_buckets(w, 1000003, 6, 99, n_hashes=2).tolist(),"
    " cohort_permutations(20, 3, 99).tolist()]))"
)


def test_hashes_identical_in_a_fresh_process(pythonhashseed="4242"):
    import json

    env = dict(os.environ, PYTHONHASHSEED=pythonhashseed)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(WORDS)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=root,
    )
    child_buckets, child_perms = json.loads(out.stdout)
    assert_array_equal(
        np.array(child_buckets), candidate_buckets(WORDS, 1000003, 6, 99, n_hashes=2)
    )
    assert_array_equal(np.array(child_perms), cohort_permutations(20, 3, 99))


def test_pinned_values_do_not_drift():
    # A change of construction must be deliberate (and bump the version tag).
    assert (
        master_key(0).hex()[:16]
        == hashlib.blake2b(b"skldp.cohort-hash.v1" + bytes(16), digest_size=32).hexdigest()[:16]
    )
    assert candidate_buckets(["apple"], 2**31, 1, 0)[0, 0, 0] == _reference_bucket(
        "apple", 0, 0, 2**31, 0
    )
    # Literal values, recorded with construction v1 on 2026-11-24: reports collected today must
    # decode against the same buckets in any later version, process and machine.
    assert master_key(0).hex() == (
        "360b9a547563382986c1ff5a7ed9e5c0a80c6e79553203d3636cd6189b7aa872"
    )
    assert candidate_buckets(["apple", "banana", "東京", 42], 2**31, 3, 2).ravel().tolist() == [
        1873260938, 90790202, 375117181, 1737889012, 1329150020, 463327478,
        2050778321, 1417093802, 1898827579, 621506780, 1627746308, 1314826681,
    ]  # fmt: skip
    assert candidate_buckets(["apple", "banana"], 1024, 2, 3, n_hashes=2).tolist() == [
        [[655, 132], [998, 364]],
        [[280, 693], [686, 59]],
    ]
    assert cohort_permutations(8, 2, 5).tolist() == [
        [3, 1, 2, 6, 0, 4, 7, 5],
        [4, 3, 6, 0, 7, 5, 1, 2],
    ]


def test_values_are_identified_by_their_text():
    B = candidate_buckets(np.array([7, "7", b"7", 7.0, True, 1], dtype=object), 997, 3, 0)
    assert_array_equal(B[0], B[1])
    assert_array_equal(B[0], B[2])
    # 7.0, True and 1 are equal under == but are other texts.
    for s, text in [(3, "7.0"), (4, "True"), (5, "1")]:
        assert B[s, 0, 0] == _reference_bucket(text, 0, 0, 997, 0)
    assert_array_equal(
        candidate_buckets(np.arange(3), 997, 3, 0), candidate_buckets(["0", "1", "2"], 997, 3, 0)
    )


def test_each_distinct_value_hashed_once():
    values = np.array(["x", "y", "x", "x", "z"], dtype=object)
    codes, digests = value_digests(values, 0)
    assert digests.shape == (3, 2)
    assert_array_equal(codes, [0, 1, 0, 0, 2])


def test_missing_values_raise():
    with pytest.raises(ValueError, match="missing"):
        value_digests(np.array(["a", None], dtype=object), 0)


@pytest.mark.parametrize(
    "bad, err", [(-1, ValueError), (2**128, ValueError), (1.5, TypeError), (True, TypeError)]
)
def test_bad_hash_seed(bad, err):
    with pytest.raises(err, match="hash_seed"):
        check_hash_seed(bad)


def test_buckets_uniform_and_cohorts_independent():
    # S strings, k buckets, C cohorts: bucket counts per cohort are multinomial(S, 1/k);
    # for random pairs, collisions in one cohort have rate 1/k and in two cohorts 1/k^2.
    S, k, C = 20000, 8, 6
    B = candidate_buckets([f"s{i}" for i in range(S)], k, C, 5)[:, :, 0]
    counts = np.stack([np.bincount(B[:, c], minlength=k) for c in range(C)])
    chi2 = ((counts - S / k) ** 2 / (S / k)).sum(axis=1)
    assert np.all(chi2 < 30)  # chi2(7): P(> 30) ~ 1e-4 for each cohort
    rng = np.random.default_rng(0)
    i, j = rng.integers(0, S, 200000), rng.integers(0, S, 200000)
    keep = i != j
    coll = B[i[keep]] == B[j[keep]]
    n = coll.shape[0]
    for rate, expected in [
        (coll.mean(axis=0), 1 / k),
        ((coll[:, 0] & coll[:, 1]).mean(), 1 / k**2),
    ]:
        assert np.all(np.abs(rate - expected) < 5 * np.sqrt(expected / n) * 3)
    # Different seeds give unrelated hash families.
    B2 = candidate_buckets([f"s{i}" for i in range(S)], k, C, 6)[:, :, 0]
    assert abs((B == B2).mean() - 1 / k) < 0.01


def test_cohort_permutations_are_permutations_and_differ():
    P = cohort_permutations(50, 4, 1)
    for row in P:
        assert_array_equal(np.sort(row), np.arange(50))
    assert len({tuple(r) for r in P}) == 4
    assert_array_equal(P, cohort_permutations(50, 4, 1))


def test_numpy_unicode_arrays_hash_like_object_arrays():
    a = np.array(["x", "yy", "x", "zzz"])
    assert_array_equal(candidate_buckets(a, 97, 3, 0), candidate_buckets(list(a), 97, 3, 0))
    cohorts = np.array([0, 1, 2, 0])
    assert_array_equal(
        row_buckets(a, cohorts, 97, 3, 0), row_buckets(a.astype(object), cohorts, 97, 3, 0)
    )

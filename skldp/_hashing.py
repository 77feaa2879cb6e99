r"""Stable keyed hashing of arbitrary values into cohort buckets (open alphabets).

The open-alphabet mechanisms (hashed k-RR and hashed RAPPOR, Kairouz, Bonawitz and Ramage,
ICML 2016, Sec. 5) give each cohort ``c`` its own hash functions ``H_{c,i}`` and report a bucket
``H_{c,i}(s) mod k``. The server recomputes the same buckets for its candidate strings, so the
hashes must be identical on every machine, in every process and in every Python version:
Python's built-in ``hash`` is salted per process and is never used.

The construction, fixed and documented here (version 1):

1. A value is identified by its text: ``bytes`` as given, anything else as the UTF-8 encoding of
   ``str(value)`` (so ``7`` and ``"7"`` are the same value, ``7.0`` is another).
2. A 32-byte master key is derived from ``hash_seed`` (a non-negative integer)::

       K = blake2b(b"skldp.cohort-hash.v1" + hash_seed.to_bytes(16, "little"), digest_size=32)

3. Each distinct value gets a 128-bit digest ``(lo, hi) = blake2b(text, key=K, digest_size=16)``
   read as two little-endian 64-bit words; each distinct value is hashed once per call.
4. Hash ``i`` of cohort ``c`` has two 64-bit keys ``(a, b)`` read from
   ``blake2b(b"cohort" + c.to_bytes(8, "little") + i.to_bytes(8, "little"), key=K,
   digest_size=16)`` (two little-endian words), and
   ``H_{c,i}(s) = f(f(lo XOR a) XOR hi XOR b)`` where ``f`` is the 64-bit finalizer of
   MurmurHash3 (``z ^= z >> 33; z *= 0xff51afd7ed558ccd; z ^= z >> 33;
   z *= 0xc4ceb93e53fca34d; z ^= z >> 33``), a bijection with full avalanche.
5. The bucket is ``H_{c,i}(s) mod k`` (bias below ``k / 2^64``).

Step 4 is vectorized in numpy over rows, so hashing costs one keyed BLAKE2b call per distinct
value plus a few integer operations per row. The hash functions are public: the privacy of the
mechanisms never depends on them being secret.
"""

import hashlib
import numbers

import numpy as np
import pandas as pd

from ._threads import single_blas_thread

_DOMAIN_TAG = b"skldp.cohort-hash.v1"
_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB93E53FCA34D)
_S33 = np.uint64(33)


def check_hash_seed(hash_seed):
    """Return ``hash_seed`` as an int after checking it is a non-negative integer < 2**128."""
    if isinstance(hash_seed, bool) or not isinstance(hash_seed, numbers.Integral):
        raise TypeError(f"hash_seed must be a non-negative integer; got {hash_seed!r}")
    if not 0 <= hash_seed < 2**128:
        raise ValueError(f"hash_seed must be a non-negative integer below 2**128; got {hash_seed}")
    return int(hash_seed)


def master_key(hash_seed):
    """The 32-byte BLAKE2b key derived from ``hash_seed`` (step 2 of the module docstring)."""
    seed = check_hash_seed(hash_seed)
    return hashlib.blake2b(_DOMAIN_TAG + seed.to_bytes(16, "little"), digest_size=32).digest()


def cohort_keys(hash_seed, n_cohorts, n_hashes=1):
    """The 64-bit key pairs of every (cohort, hash): array of shape (n_cohorts, n_hashes, 2)."""
    key = master_key(hash_seed)
    out = bytearray()
    for c in range(n_cohorts):
        for i in range(n_hashes):
            msg = b"cohort" + c.to_bytes(8, "little") + i.to_bytes(8, "little")
            out += hashlib.blake2b(msg, key=key, digest_size=16).digest()
    return np.frombuffer(bytes(out), dtype="<u8").astype(np.uint64).reshape(n_cohorts, n_hashes, 2)


def _fmix64(z):
    z = z ^ (z >> _S33)
    z = z * _M1
    z = z ^ (z >> _S33)
    z = z * _M2
    return z ^ (z >> _S33)


def value_bytes(value):
    """The bytes a value is hashed from: itself for bytes, else its ``str`` in UTF-8."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return str(value).encode("utf-8")


def value_digests(values, hash_seed):
    """Return ``(codes, digests)``: each value's index into ``digests``, shape (n_unique, 2).

    Distinct values are found with :func:`pandas.factorize` and each is hashed once.

    Raises
    ------
    ValueError
        If a value is missing (None or NaN): a missing value has no text to hash.
    """
    values = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if values.ndim != 1:
        raise ValueError(f"values must be one-dimensional; got shape {values.shape}")
    kind = pd.api.types.infer_dtype(values, skipna=False) if values.dtype.kind == "O" else None
    if kind is not None and kind not in ("string", "bytes"):
        # Mixed objects: factorize their texts, since 1, 1.0 and True are equal under ==.
        missing = pd.isna(values)
        if missing.any():
            raise ValueError(
                f"values contain {int(missing.sum())} missing values (None or NaN); an open "
                "alphabet has no entry for a missing value"
            )
        values = np.array([value_bytes(v) for v in values] or [b""][:0], dtype=object)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    if codes.size and codes.min() < 0:
        raise ValueError(
            f"values contain {int((codes < 0).sum())} missing values (None or NaN); an open "
            "alphabet has no entry for a missing value"
        )
    key = master_key(hash_seed)
    copy = hashlib.blake2b(
        key=key, digest_size=16
    ).copy  # a keyed prototype: cheaper than re-keying

    if kind == "string":

        def one(value):
            h = copy()
            h.update(value.encode("utf-8"))
            return h.digest()
    else:

        def one(value):
            h = copy()
            h.update(value_bytes(value))
            return h.digest()

    raw = b"".join(map(one, np.asarray(uniques, dtype=object).tolist()))
    digests = np.frombuffer(raw, dtype="<u8").astype(np.uint64).reshape(-1, 2)
    return codes.astype(np.intp, copy=False), digests


def _buckets_from_digests(lo, hi, keys, n_buckets):
    # keys: (..., 2) broadcast against lo, hi.
    with np.errstate(over="ignore"):
        z = _fmix64(lo ^ keys[..., 0])
        z = _fmix64(z ^ hi ^ keys[..., 1])
    return (z % np.uint64(n_buckets)).astype(np.int64)


def row_buckets(values, cohorts, n_buckets, n_cohorts, hash_seed, n_hashes=1):
    """Buckets of each row's value under the hashes of that row's cohort.

    Parameters
    ----------
    values : 1-D array-like of length n
    cohorts : int array of length n, entries in ``[0, n_cohorts)``
    n_buckets, n_cohorts, n_hashes : int
    hash_seed : int

    Returns
    -------
    buckets : int64 array of shape (n, n_hashes)
    """
    codes, digests = value_digests(values, hash_seed)
    keys = cohort_keys(hash_seed, n_cohorts, n_hashes)[np.asarray(cohorts)]  # (n, h, 2)
    d = digests[codes]
    return _buckets_from_digests(d[:, 0, None], d[:, 1, None], keys, n_buckets)


def candidate_buckets(candidates, n_buckets, n_cohorts, hash_seed, n_hashes=1):
    """Buckets of every candidate in every cohort.

    Returns an int64 array of shape (n_candidates, n_cohorts, n_hashes).
    """
    codes, digests = value_digests(candidates, hash_seed)
    keys = cohort_keys(hash_seed, n_cohorts, n_hashes)  # (C, h, 2)
    d = digests[codes]
    return _buckets_from_digests(d[:, 0, None, None], d[:, 1, None, None], keys[None], n_buckets)


def cohort_permutations(n_categories, n_cohorts, hash_seed):
    """One keyed pseudo-random permutation of ``range(n_categories)`` per cohort.

    For a known (closed) alphabet the paper replaces each cohort's hash by a perfect hash onto
    the alphabet followed by a random permutation (Sec. 5.4). Here ``pi_c`` orders the indices
    ``0 .. S-1`` by their 64-bit cohort hash ``H_{c,0}(str(i))`` (ties, of probability about
    ``S^2 / 2^65``, by index), so ``pi_c[i]`` is the rank of index ``i``. The permutations
    therefore share the stability of the hashes: the same on every machine and numpy version.

    Returns
    -------
    perms : int64 array of shape (n_cohorts, n_categories); row c is a permutation.
    """
    codes, digests = value_digests(np.arange(n_categories).astype(str).astype(object), hash_seed)
    keys = cohort_keys(hash_seed, n_cohorts, 1)[:, 0]  # (C, 2)
    d = digests[codes]
    with np.errstate(over="ignore"):
        z = _fmix64(d[None, :, 0] ^ keys[:, None, 0])
        z = _fmix64(z ^ d[None, :, 1] ^ keys[:, None, 1])
    order = np.argsort(z, axis=1, kind="stable")
    perms = np.empty((n_cohorts, n_categories), dtype=np.int64)
    np.put_along_axis(perms, order, np.arange(n_categories)[None, :].repeat(n_cohorts, 0), axis=1)
    return perms


# -- local hashing: an exactly pairwise-independent family indexed by a per-report seed ---------
#
# Local hashing (Wang, Blocki, Li and Jha, USENIX Security 2017) gives every report its own hash
# function H: [k] -> [g], named by a seed sent with the report. Its analysis needs a universal
# family: P(H(x) = H(x')) = 1/g for x != x'. A keyed pseudorandom hash (as above) is universal
# only approximately, so the channel would be approximate, and its dense matrix could not be
# enumerated. Version 1 uses instead the family
#
#     H_{a,b}(x) = (a_0 beta_0(x) + ... + a_{m-1} beta_{m-1}(x) + b) mod g,
#
# with beta_j(x) the binary digits of x (m = max(1, ceil(log2 k))) and the seed (a, b) uniform
# on Z_g^(m+1). It is *exactly* pairwise independent for every g >= 2 (prime or not): for
# x != x' some digit difference beta_j(x) - beta_j(x') is +-1, a unit of Z_g, so a . (beta(x) -
# beta(x')) is uniform on Z_g whatever the other coefficients are, and b makes the pair
# (H(x), H(x')) uniform on Z_g^2. The seed is public and needs no key; the functions are plain
# integer arithmetic, identical in every process and on every platform.


def n_hash_digits(n_inputs):
    """m, the number of binary digits of an input index in ``[0, n_inputs)`` (at least 1)."""
    return max(1, int(n_inputs - 1).bit_length())


def input_digits(n_inputs):
    """The binary digits of every input: int64 array of shape (n_inputs, m), digit j in column j."""
    m = n_hash_digits(n_inputs)
    return (np.arange(n_inputs, dtype=np.int64)[:, None] >> np.arange(m)) & 1


def linear_hash(coefs, offsets, x, n_buckets):
    """``H_{a,b}(x)`` for each row: ``(coefs[i] . beta(x[i]) + offsets[i]) mod n_buckets``.

    Parameters
    ----------
    coefs : int array of shape (n, m)
        The coefficients a of each row's hash, in ``[0, n_buckets)``.
    offsets : int array of shape (n,)
        The offsets b.
    x : int array of shape (n,)
        Input indices.
    n_buckets : int

    Returns
    -------
    buckets : int64 array of shape (n,)
    """
    coefs = np.asarray(coefs)
    x = np.asarray(x, dtype=np.int64)
    bits = ((x[:, None] >> np.arange(coefs.shape[1])) & 1).astype(coefs.dtype)
    total = np.einsum("ij,ij->i", coefs, bits, dtype=np.int64)
    total += np.asarray(offsets, dtype=np.int64)
    return total % n_buckets


def _subset_sums(coefs, n_buckets):
    """``(coefs[i] . beta(l)) mod g`` for every l in ``[0, 2^j)`` (j = coefs.shape[1]), as an
    array of shape (2^j, n) (one contiguous row per l).

    Built by doubling (row l + 2^t is row l plus ``coefs[:, t]``): j additions of contiguous
    rows of small integers instead of an integer matrix product.
    """
    n, j = coefs.shape
    dtype = np.int16 if n_buckets * (j + 2) < 2**15 else np.int64
    out = np.empty((1 << j, n), dtype=dtype)
    out[0] = 0
    c = np.ascontiguousarray(coefs.T, dtype=dtype)
    for t in range(j):
        np.add(out[: 1 << t], c[t], out=out[1 << t : 2 << t])
    return _reduce(out, n_buckets, (j + 1) * n_buckets)


def _reduce(arr, n_buckets, bound):
    """``arr mod g`` in place for entries in ``[0, bound)``: a mask for powers of two, a table
    look-up for small bounds, the remainder otherwise."""
    if n_buckets & (n_buckets - 1) == 0:
        arr &= n_buckets - 1
    elif arr.dtype == np.int16:
        np.take((np.arange(bound) % n_buckets).astype(np.int16), arr, out=arr)
    else:
        arr %= n_buckets
    return arr


def _split_tables(coefs, offsets, values, n_buckets):
    """The tables ``lo`` (2^(m//2), n) and ``t`` (2^(m - m//2), n) of the split hash.

    For x with low digits l and high digits h (``x = h 2^(m//2) + l``), row i supports x when
    ``lo[l, i] == t[h, i]``, with ``lo = a_low . beta(l)`` and ``t = y - b - a_high . beta(h)``,
    both mod g.
    """
    coefs = np.asarray(coefs, dtype=np.int64)
    lo_m = coefs.shape[1] // 2
    lo = _subset_sums(coefs[:, :lo_m], n_buckets)
    target = (np.asarray(values, dtype=np.int64) - np.asarray(offsets, dtype=np.int64)) % n_buckets
    hi = _subset_sums(coefs[:, lo_m:], n_buckets)
    np.subtract(target.astype(hi.dtype) + n_buckets, hi, out=hi)  # in [1, 2g)
    return lo, _reduce(hi, n_buckets, 2 * n_buckets)


def linear_hash_matches(coefs, offsets, values, n_inputs, n_buckets):
    """Whether ``H_{a_i,b_i}(x) == values[i]``, for every row i and input x: bool (n, n_inputs).

    The hash is split over the low and the high half of the binary digits (tables of about
    sqrt(k) entries per row, :func:`_split_tables`): one comparison of small integers per
    entry, no (n, k) reduction modulo g.
    """
    lo, hi = _split_tables(coefs, offsets, values, n_buckets)
    n = lo.shape[1]
    full = (hi.T[:, :, None] == lo.T[:, None, :]).reshape(n, hi.shape[0] * lo.shape[0])
    return full[:, :n_inputs]


#: Most buckets for which support counts come from one product of one-hot tables (g n k
#: multiply-adds); with more, summing the n k comparisons is faster (measured at k = 10^3 and
#: 10^5: the crossover lies between g = 6 and g = 16).
ONE_HOT_MAX_BUCKETS = 8


def linear_hash_support_counts(coefs, offsets, values, n_inputs, n_buckets):
    """``#{i : H_{a_i,b_i}(x) == values[i]}`` for every input x: int64 array (n_inputs,).

    With the split tables of :func:`_split_tables`, x = (h, l) is supported by row i when
    ``lo_i(l) == t_i(h)``; summed over rows, ``C[h, l] = sum_i sum_v [t_i(h) = v] [lo_i(l) = v]``:
    one matrix product of the rows' one-hot tables, of sizes (2^(m - m//2), g n) and
    (2^(m//2), g n), in float32 (exact: at most ``2**24`` rows are counted at once). The product
    costs about g n k multiply-adds against the comparisons' n k, so it is used only up to
    ``ONE_HOT_MAX_BUCKETS`` buckets; above that the comparisons are summed
    (``benchmarks/bench_lh_support.py``: at g = 64 the product was 10 to 20 times slower, the
    cliff at g = 65 that issue 33 measured).
    """
    coefs = np.asarray(coefs, dtype=np.int64)
    n = coefs.shape[0]
    if n_buckets > ONE_HOT_MAX_BUCKETS or n == 0:
        return linear_hash_matches(coefs, offsets, values, n_inputs, n_buckets).sum(
            axis=0, dtype=np.int64
        )
    if n > 2**24:
        raise ValueError(f"count at most 2**24 rows at once; got {n}")
    lo, hi = _split_tables(coefs, offsets, values, n_buckets)
    v = np.arange(n_buckets, dtype=lo.dtype)[None, :, None]
    # one-hot tables laid out (2^j, g n), contiguous: [t(h) = v] and [lo(l) = v] per row and v
    A = np.empty((hi.shape[0], n_buckets, n), dtype=np.float32)
    B = np.empty((lo.shape[0], n_buckets, n), dtype=np.float32)
    np.equal(hi[:, None, :], v, out=A, casting="unsafe")
    np.equal(lo[:, None, :], v, out=B, casting="unsafe")
    with single_blas_thread():  # a thin product: a second thread only waits (skldp._threads)
        C = A.reshape(hi.shape[0], -1) @ B.reshape(lo.shape[0], -1).T  # (H, L): x = h * L + l
    return np.rint(C).astype(np.int64).ravel()[:n_inputs]


#: Extensions of at most this many bits are counted from one table of all 2^s of them; longer
#: ones from tables of their low and high halves (``extension_support_counts``).
DIRECT_EXTENSION_BITS = 6


def _mod_subset_sums(coefs, n_buckets, dtype):
    """``(coefs[i] . beta(l)) mod g`` for every l in ``[0, 2^j)``: array (2^j, n) of ``dtype``.

    Built by doubling with the reduction done at each step (row l + 2^t is row l plus
    ``coefs[:, t]``, minus g where that reaches g): no table look-up.
    """
    n, j = coefs.shape
    out = np.empty((1 << j, n), dtype=dtype)
    out[0] = 0
    c = np.ascontiguousarray(coefs.T % n_buckets, dtype=dtype)
    g = dtype(n_buckets)
    for t in range(j):
        block = out[1 << t : 2 << t]
        np.add(out[: 1 << t], c[t], out=block)
        np.subtract(block, g, out=block, where=block >= g)
    return out


def extension_support_counts(coefs, offsets, values, parents, n_parent_bits, n_ext_bits, n_buckets):
    r"""Support counts of every extension of a set of parent prefixes under local hashing.

    The candidates are the prefixes ``u = (P << s) | t`` of length ``l = n_parent_bits + s``
    for every parent P in ``parents`` and every extension t in ``[0, 2^s)`` (s =
    ``n_ext_bits``). Row i hashes u with its first l coefficients: digit d of u is digit d of
    t for d < s and digit d - s of P above. Splitting t into its low half ``t_lo`` (s_lo =
    s // 2 digits) and high half ``t_hi``,

    .. math:: H_i(u) = A^{lo}_i(t_{lo}) + A^{hi}_i(t_{hi}) + B_i(P) + b_i \pmod g,

    so row i supports u when ``A^lo_i(t_lo) == T_i(P, t_hi)`` with
    ``T_i(P, t_hi) = y_i - b_i - B_i(P) - A^hi_i(t_hi)``: tables of ``2^s_lo`` and
    ``len(parents) 2^(s - s_lo)`` small integers per row, then one comparison per row and
    candidate (``len(parents) 2^s n`` in all), vectorized over blocks of rows. Short
    extensions (s <= ``DIRECT_EXTENSION_BITS``) use one table of all 2^s sums instead.

    Parameters
    ----------
    coefs : int array of shape (n, >= l)
        The hash coefficients of each row (only the first l are read).
    offsets, values : int arrays of shape (n,)
        b and the reported bucket y.
    parents : int array of shape (n_parents,)
        The parent prefixes (each < 2^n_parent_bits); ``[0]`` with ``n_parent_bits = 0`` for
        the first level.
    n_parent_bits, n_ext_bits, n_buckets : int

    Returns
    -------
    counts : int64 array of shape (n_parents, 2^s)
        ``counts[j, t]`` supports of the candidate ``(parents[j] << s) | t``.
    """
    coefs = np.asarray(coefs)  # any integer dtype: small coefficients stay small
    parents = np.asarray(parents, dtype=np.int64)
    s, g = int(n_ext_bits), int(n_buckets)
    n, n_par = coefs.shape[0], parents.shape[0]
    counts = np.zeros((n_par, 1 << s), dtype=np.int64)
    if n == 0 or n_par == 0:
        return counts
    offsets = np.asarray(offsets, dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    s_lo = s // 2
    # rows per block: the tables of a block (about 2 bytes per entry) stay within ~1 MB
    if s <= DIRECT_EXTENSION_BITS:
        rows = max(256, (1 << 19) >> s)
    else:
        rows = max(256, (1 << 19) // (n_par * (1 << (s - s_lo)) + (1 << s_lo)))
    for start in range(0, n, rows):
        stop = start + rows
        counts += _extension_block(
            coefs[start:stop],
            offsets[start:stop],
            values[start:stop],
            parents,
            n_parent_bits,
            s,
            g,
        )
    return counts


def _extension_block(coefs, offsets, values, parents, n_parent_bits, s, g):
    """:func:`extension_support_counts` of one block of rows."""
    n, n_par = coefs.shape[0], parents.shape[0]
    dtype = np.int16 if 2 * g < 2**15 else np.int64
    target = (values - offsets) % g
    if n_parent_bits:
        high = coefs[:, s : s + n_parent_bits].astype(np.float64)  # exact: sums < 2^53
        pbits = ((parents[:, None] >> np.arange(n_parent_bits)) & 1).astype(np.float64)
        with single_blas_thread():
            T = (target[None, :] - (pbits @ high.T).astype(np.int64)) % g  # (n_parents, n)
    else:
        T = np.broadcast_to(target, (n_par, n))
    T = T.astype(dtype)
    if s <= DIRECT_EXTENSION_BITS:  # one table of all 2^s extensions, one pass per parent
        S = _mod_subset_sums(coefs[:, :s], g, dtype)  # (2^s, n)
        out = np.empty((n_par, 1 << s), dtype=np.int64)
        for j in range(n_par):
            out[j] = np.count_nonzero(T[j] == S, axis=1)
        return out
    # T(P, t_hi) = T(P) - A_hi(t_hi) mod g, laid out (n_parents * 2^s_hi, n)
    s_lo = s // 2
    lo = _mod_subset_sums(coefs[:, :s_lo], g, dtype)  # (2^s_lo, n)
    hi = _mod_subset_sums(coefs[:, s_lo:s], g, dtype)  # (2^s_hi, n)
    full = np.subtract(T[:, None, :], hi[None, :, :])
    np.add(full, dtype(g), out=full, where=full < 0)
    full = full.reshape(-1, n)
    out = np.empty((full.shape[0], 1 << s_lo), dtype=np.int64)
    for t_lo in range(1 << s_lo):  # one vectorized pass over the block's rows and (P, t_hi)
        out[:, t_lo] = np.count_nonzero(full == lo[t_lo], axis=1)
    return out.reshape(n_par, 1 << s)  # [P, t_hi, t_lo] is [P, t]

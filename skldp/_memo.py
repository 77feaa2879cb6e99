r"""The memo of longitudinal mechanisms: a keyed pseudorandom function of (person, value).

Memoized (longitudinal) randomized response draws its permanent randomized response (PRR)
once per person and value, and must give the same draw every time that person reports that
value again, in any process, on any machine, without the library storing who is who. So the
draw is not taken from a random generator: it is computed from uniforms that are a keyed
pseudorandom function (PRF) of the person's secret key and the value,

.. math::

    w_j = \mathrm{SipHash\text{-}2\text{-}4}_K(t \,\|\, x \,\|\, j), \qquad j = 0, 1, \dots,

with K the person's 128-bit key (held by the caller, never stored here), t a 64-bit tag of
the mechanism (:func:`memo_tag`: its family, its PRR parameters, the digest of its
categories and the question, when named), x the value's index in the categories and j the
index of the uniform. Each message is three little-endian 64-bit words (24 bytes).
SipHash-2-4 (Aumasson and Bernstein, INDOCRYPT 2012) is a PRF designed for short messages; it
is computed here on numpy ``uint64`` arrays, one lane per (row, j), so a batch costs a few
hundred vectorized integer operations and no Python loop over rows.
``tests/privatizers/test_longitudinal.py`` checks the implementation against the authors'
reference vectors (``vectors.h``).

Consequences, documented for users in :ref:`budgets_longitudinal`:

* same key, value and mechanism: the same PRR, in every call and every process;
* another value, another mechanism (other parameters or categories), another named
  question, or another key: PRR draws independent of it (as far as anyone without the keys
  can tell);
* a key is a secret: anyone holding it and the mechanism can recompute the uniforms, and with
  a report, narrow down the value.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING

import numpy as np

from skldp._hashing import value_bytes

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["KEY_BYTES", "make_person_keys", "memo_tag", "memo_words", "person_keys", "siphash24"]

#: Bytes of one person's key (SipHash keys are 128 bits).
KEY_BYTES = 16

_TAG_DOMAIN = b"skldp.memo.v1"
_C0 = np.uint64(0x736F6D6570736575)
_C1 = np.uint64(0x646F72616E646F6D)
_C2 = np.uint64(0x6C7967656E657261)
_C3 = np.uint64(0x7465646279746573)
_FF = np.uint64(0xFF)
_SHIFTS = {r: (np.uint64(r), np.uint64(64 - r)) for r in (13, 16, 17, 21, 32)}


def _rotl(x, r, tmp):
    """Rotate ``x`` left by r bits, in place (``tmp`` is scratch of the same shape)."""
    left, right = _SHIFTS[r]
    np.left_shift(x, left, out=tmp)
    np.right_shift(x, right, out=x)
    np.bitwise_or(x, tmp, out=x)


def _sipround(v0, v1, v2, v3, tmp):
    """One SipRound on the four state arrays, in place."""
    np.add(v0, v1, out=v0)
    _rotl(v1, 13, tmp)
    np.bitwise_xor(v1, v0, out=v1)
    _rotl(v0, 32, tmp)
    np.add(v2, v3, out=v2)
    _rotl(v3, 16, tmp)
    np.bitwise_xor(v3, v2, out=v3)
    np.add(v0, v3, out=v0)
    _rotl(v3, 21, tmp)
    np.bitwise_xor(v3, v0, out=v3)
    np.add(v2, v1, out=v2)
    _rotl(v1, 17, tmp)
    np.bitwise_xor(v1, v2, out=v1)
    _rotl(v2, 32, tmp)


def siphash24(k0, k1, words):
    """SipHash-2-4 of messages of whole 64-bit words, vectorized over numpy arrays.

    Parameters
    ----------
    k0, k1 : array-like of uint64
        The two little-endian halves of each 128-bit key (broadcast together with the words).
    words : sequence of array-like of uint64
        The message, word by word (little-endian); its length in bytes is ``8 * len(words)``.

    Returns
    -------
    ndarray of uint64
        The 64-bit tags, of the broadcast shape.
    """
    k0 = np.asarray(k0, dtype=np.uint64)
    k1 = np.asarray(k1, dtype=np.uint64)
    words = [np.asarray(m, dtype=np.uint64) for m in words]
    shape = np.broadcast_shapes(k0.shape, k1.shape, *(m.shape for m in words))
    v0 = np.broadcast_to(k0 ^ _C0, shape).copy()
    v1 = np.broadcast_to(k1 ^ _C1, shape).copy()
    v2 = np.broadcast_to(k0 ^ _C2, shape).copy()
    v3 = np.broadcast_to(k1 ^ _C3, shape).copy()
    tmp = np.empty(shape, dtype=np.uint64)
    last = np.uint64((8 * len(words) & 0xFF) << 56)
    # additions are modulo 2**64, as SipHash defines them (numpy wraps uint64 arrays silently)
    for m in [*words, last]:
        np.bitwise_xor(v3, m, out=v3)
        _sipround(v0, v1, v2, v3, tmp)
        _sipround(v0, v1, v2, v3, tmp)
        np.bitwise_xor(v0, m, out=v0)
    np.bitwise_xor(v2, _FF, out=v2)
    for _ in range(4):
        _sipround(v0, v1, v2, v3, tmp)
    np.bitwise_xor(v0, v1, out=v0)
    np.bitwise_xor(v2, v3, out=v2)
    return np.bitwise_xor(v0, v2, out=v0)


#: Words hashed at once by memo_words: the state arrays stay in the processor's cache.
_CHUNK_WORDS = 1 << 14


def memo_tag(family, parameters, categories, question=None):
    """The 64-bit tag of a mechanism's memo: what, besides the key and value, the PRR hangs on.

    ``blake2b`` (8 bytes) of a version string, the family name, the PRR parameters (their
    ``repr``), the categories (each by its text, as the open-alphabet hashes read values:
    ``bytes`` as given, anything else as UTF-8 of ``str``) and, when named, the question
    (its UTF-8, after a marker byte), so two questions draw independent PRRs. An unnamed
    question (None) adds nothing: the tag, and so every memo, is the one of earlier versions.
    Computed once per ``fit``; it depends on nothing else (no object, no process).
    """
    h = hashlib.blake2b(digest_size=8)
    h.update(_TAG_DOMAIN)
    h.update(repr((str(family), tuple(parameters))).encode())
    h.update(len(categories).to_bytes(8, "little"))
    for value in categories:
        text = value_bytes(value)
        h.update(len(text).to_bytes(8, "little") + text)
    if question is not None:
        text = str(question).encode("utf-8")
        h.update(b"\x01question" + len(text).to_bytes(8, "little") + text)
    return int.from_bytes(h.digest(), "little")


def person_keys(column, *, name="key"):
    """Read a column of person keys into two uint64 arrays ``(k0, k1)``.

    A key is a ``bytes`` object of exactly 16 bytes (see
    :func:`~skldp.privatizers.make_person_keys`), or the same 16 bytes written as 32
    hexadecimal digits (``key.hex()``, the form to store in a text or Parquet column), or the
    column is a NumPy ``S16``/``V16`` array (each item read as its 16 bytes). A column may not
    mix bytes and text.

    Raises
    ------
    TypeError
        If an entry is neither ``bytes`` nor ``str`` (a missing key included), naming the
        types found.
    ValueError
        If a key does not have 16 bytes (32 hexadecimal digits), naming how many do not and
        one of them.
    """
    col = column if isinstance(column, np.ndarray) else np.asarray(column, dtype=object)
    col = col.reshape(-1)
    if col.dtype.kind in "SV" and col.dtype.itemsize == KEY_BYTES:
        raw = np.ascontiguousarray(col).tobytes()
    else:
        col = col.astype(object, copy=False)
        kinds = set(map(type, col))
        if not kinds <= {bytes} and not kinds <= {str}:
            names = sorted(t.__name__ for t in kinds)
            raise TypeError(
                f"the {name} column must hold each person's secret key as 16 bytes (bytes, "
                f"e.g. from make_person_keys, or 32 hexadecimal digits); got values of type "
                f"{', '.join(names)}"
            )
        text = kinds == {str}
        width, unit = (
            (2 * KEY_BYTES, "hexadecimal digits (16 bytes)") if text else (KEY_BYTES, "bytes")
        )
        lengths = np.fromiter(map(len, col), dtype=np.int64, count=col.shape[0])
        bad = np.flatnonzero(lengths != width)
        if bad.size:
            raise ValueError(
                f"every key in the {name} column must have exactly {width} {unit}; {bad.size} "
                f"do not (row {bad[0]} has {lengths[bad[0]]})"
            )
        if text:
            try:
                raw = bytes.fromhex("".join(col))
            except ValueError as exc:
                raise ValueError(
                    f"the {name} column holds text keys that are not hexadecimal: {exc}"
                ) from None
        else:
            raw = b"".join(col)
    words = np.frombuffer(raw, dtype="<u8").astype(np.uint64).reshape(-1, 2)
    return words[:, 0], words[:, 1]


def make_person_keys(n: int) -> NDArray[np.object_]:
    """Draw ``n`` fresh secret person keys (16 bytes each) from the operating system.

    Draw one key per person, once, and keep it with the person (on their device, or in a key
    store the analyst does not read): every later report of that person passes the same key.

    Parameters
    ----------
    n : int
        Number of keys.

    Returns
    -------
    keys : ndarray of object of shape (n,)
        ``bytes`` objects of length 16, from ``os.urandom`` (a cryptographic source).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer; got {n!r}")
    raw = os.urandom(KEY_BYTES * int(n))
    out = np.empty(int(n), dtype=object)
    out[:] = [raw[i : i + KEY_BYTES] for i in range(0, len(raw), KEY_BYTES)]
    return out


def memo_words(k0, k1, tag, values, n_words):
    """The memo's uniforms: an (n, n_words) uint64 array, row i from key i and value i.

    ``w[i, j] = siphash24(K_i; tag, values[i], j)`` (see the module docstring), computed in
    blocks of rows of about 16384 words.
    """
    values = np.asarray(values, dtype=np.uint64)
    n = values.shape[0]
    out = np.empty((n, n_words), dtype=np.uint64)
    j = np.arange(n_words, dtype=np.uint64)[None, :]
    tag = np.uint64(tag)
    step = max(1, _CHUNK_WORDS // max(n_words, 1))
    for start in range(0, n, step):
        rows = slice(start, start + step)
        out[rows] = siphash24(k0[rows, None], k1[rows, None], [tag, values[rows, None], j])
    return out

"""The memory limit: work whose arrays would not fit is refused before anything is allocated.

A request such as ``RAPPOR.transform`` of 10^5 rows over 10^5 categories (a dense 9.3 GiB bit
matrix) or ``audit(n_samples=10**12)`` (21.8 TiB) would otherwise fail deep inside numpy with
"Unable to allocate", or raise ``OverflowError``, after minutes of work and without saying what
to change. The places that size an array from the data (n rows times a width) ask
:func:`check_allocation` first; it computes the size with Python integers (no overflow) and
raises :class:`~skldp.exceptions.MemoryLimitError` with the advice of the caller.

A check counts a whole call, not one array: ``row_bytes`` adds up every array alive at the same
time. The calls whose arrays grow with the domain (a privatizer's fit with its domain checks
and channel, an estimator's solve, ``confidence_interval``) state their bytes per category,
measured with :mod:`tracemalloc` at the worst case and rounded up, to :func:`check_categories`
at their entry; tests hold each stated figure above the measured peak.

The limit is the machine's physical memory by default (``os.sysconf``: ``SC_PHYS_PAGES`` times
``SC_PAGE_SIZE``), since one array larger than that cannot be worked with without swapping;
:func:`set_memory_limit` and the :func:`memory_limit` context manager change it.
"""

from __future__ import annotations

import contextlib
import numbers
import os
from typing import TYPE_CHECKING

from skldp.exceptions import MemoryLimitError

if TYPE_CHECKING:
    from collections.abc import Iterator
__all__ = [
    "check_allocation",
    "check_categories",
    "get_memory_limit",
    "memory_limit",
    "set_memory_limit",
]

_FALLBACK_LIMIT = 8 * 2**30  # where os.sysconf cannot tell the physical memory
_limit = None  # None: the physical memory


def _physical_memory():
    try:
        pages = os.sysconf("SC_PHYS_PAGES")
        size = os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return _FALLBACK_LIMIT
    if pages <= 0 or size <= 0:
        return _FALLBACK_LIMIT
    return int(pages) * int(size)


def get_memory_limit() -> int:
    """The largest array, in bytes, that skldp will allocate for one piece of work.

    Returns
    -------
    int
        The limit set with :func:`set_memory_limit`, or by default the machine's physical
        memory (``os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")``; 8 GiB where
        the system does not report it).
    """
    return _physical_memory() if _limit is None else _limit


def _check_limit(nbytes):
    if nbytes is None:
        return None
    if isinstance(nbytes, bool) or not isinstance(nbytes, numbers.Integral) or nbytes <= 0:
        raise ValueError(
            f"the memory limit must be a positive number of bytes or None; got {nbytes!r}"
        )
    return int(nbytes)


def set_memory_limit(nbytes: int) -> None:
    """Set the limit of :func:`get_memory_limit`; None restores the default.

    Parameters
    ----------
    nbytes : int or None
        Bytes; None means the machine's physical memory.
    """
    global _limit
    _limit = _check_limit(nbytes)


@contextlib.contextmanager
def memory_limit(nbytes: int) -> Iterator[None]:
    """Context manager: the memory limit is ``nbytes`` inside the block.

    Examples
    --------
    >>> import skldp
    >>> with skldp.memory_limit(2**20):
    ...     skldp.get_memory_limit()
    1048576
    """
    global _limit
    new = _check_limit(nbytes)
    old = _limit
    _limit = new
    try:
        yield
    finally:
        _limit = old


def _format_bytes(nbytes):
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes} bytes"


def check_allocation(n_rows, row_bytes, what, advice):
    """Refuse work of ``n_rows`` rows of ``row_bytes`` bytes each if it exceeds the limit.

    Parameters
    ----------
    n_rows : int
        Rows (reports, samples) of the arrays to build.
    row_bytes : int
        Bytes each row needs in them, added over the arrays alive at the same time.
    what : str
        The work, for the message ("RAPPOR reports of 100000 rows x 100000 bits").
    advice : str
        What to change, for the message. ``{rows}`` is replaced by the largest number of rows
        that fit.

    Raises
    ------
    MemoryLimitError
        If ``n_rows * row_bytes`` exceeds :func:`get_memory_limit`.
    """
    n_rows, row_bytes = int(n_rows), int(row_bytes)
    need = n_rows * row_bytes  # Python integers: no overflow
    limit = get_memory_limit()
    if need > limit:
        rows = max(limit // max(row_bytes, 1), 0)
        raise MemoryLimitError(
            f"{what} need {_format_bytes(need)}, more than the memory limit of "
            f"{_format_bytes(limit)} ({limit} bytes); {advice.format(rows=rows)} (or raise the "
            "limit with skldp.set_memory_limit)"
        )


#: Bytes per category of a privatizer's ``fit``: the domain as an array and its checks (a
#: hash table for uniqueness, the kind groups), and the channel's arrays (a Hadamard channel's
#: are over up to 2k outputs). Measured 77-102 at k = 2**14 to 10**5.
FIT_BYTES_PER_CATEGORY = 160


def check_categories(n_categories, bytes_per_category, what, advice):
    """Refuse a call over ``n_categories`` categories whose arrays would exceed the limit.

    Parameters
    ----------
    n_categories : int
        The size of the domain (or of the output alphabet) the call's arrays grow with.
    bytes_per_category : int
        Bytes per category over all the arrays the call holds at once.
    what : str
        The work, for the message; "over {n} categories" is appended.
    advice : str
        What to change; ``{rows}`` is replaced by the largest number of categories that fit.

    Raises
    ------
    MemoryLimitError
        If ``n_categories * bytes_per_category`` exceeds :func:`get_memory_limit`.
    """
    check_allocation(
        n_categories, bytes_per_category, f"{what} over {int(n_categories)} categories", advice
    )

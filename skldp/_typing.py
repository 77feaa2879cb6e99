"""Type aliases shared by the annotations of the public API."""

from __future__ import annotations

from typing import Any, Union

import numpy as np
from numpy.typing import NDArray

#: What ``random_state`` accepts (see :func:`skldp._random.check_random_state`): None, a seed,
#: a :class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator`.
RandomStateLike = Union[  # noqa: UP007 (a runtime alias: ``X | None`` fails on Python 3.10)
    None, int, np.integer, np.random.SeedSequence, np.random.Generator
]

#: Input indices of a channel: a 1-D integer array with values in ``[0, n_inputs)``.
IndexArray = NDArray[np.integer[Any]]

#: One 64-bit half of each row's person key (``skldp._memo.person_keys`` splits a key in two).
KeyHalf = NDArray[np.uint64]

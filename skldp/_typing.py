"""Type aliases shared by the annotations of the public API."""

from __future__ import annotations

from typing import Union

import numpy as np

#: What ``random_state`` accepts (see :func:`skldp._random.check_random_state`): None, a seed,
#: a :class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator`.
RandomStateLike = Union[  # noqa: UP007 (a runtime alias: ``X | None`` fails on Python 3.10)
    None, int, np.integer, np.random.SeedSequence, np.random.Generator
]

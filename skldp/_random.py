"""Random state handling: one place that turns ``random_state`` into a Generator.

``None`` is the secure default: a fresh generator keyed with 256 bits from the operating
system's entropy source (:func:`secrets.randbits`) on every call, so reports cannot be
predicted from anything the library or the user stored. An int, a
:class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator` make runs
reproducible; a Generator is used as given (and advances).
"""

import numbers
import secrets

import numpy as np


def check_random_state(random_state):
    """Return a :class:`numpy.random.Generator` for ``random_state``.

    Parameters
    ----------
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator
        None draws a fresh key from the operating system's entropy source; an int or a
        SeedSequence seeds a new generator; a Generator is returned unchanged.

    Returns
    -------
    rng : numpy.random.Generator
    """
    if random_state is None:
        return np.random.Generator(
            np.random.PCG64DXSM(np.random.SeedSequence(secrets.randbits(256)))
        )
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer; got {random_state}")
        return np.random.default_rng(int(random_state))
    raise TypeError(
        "random_state must be None, a non-negative int, a numpy SeedSequence or a numpy "
        f"Generator; got {type(random_state).__name__}"
    )


def spawn(rng, n):
    """Return ``n`` independent child generators of ``rng`` (one per chunk or partition)."""
    return rng.spawn(n)

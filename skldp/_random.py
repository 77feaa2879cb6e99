"""Random state handling: one place that turns ``random_state`` into a Generator.

``None`` is the secure default: a fresh generator keyed with 256 bits from the operating
system's entropy source (:func:`secrets.randbits`) on every call, so reports cannot be
predicted from anything the library or the user stored. An int, a
:class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator` make runs
reproducible; a Generator is used as given (and advances).

Why this design, and its trade-off
----------------------------------
Two designs were measured for k-RR privatization at n = 10^7, k = 1000, on one core
(``benchmarks/bench_random.py``; shared, loaded machine, best of 3):

============================================  ==============  =================
randomness                                    cost vs seeded  rows/s (millions)
============================================  ==============  =================
seeded Generator (PCG64, ``random_state=0``)  1.00x           12.9
``None``: fresh OS-keyed PCG64DXSM per call   1.06x           12.2
``os.urandom`` stream (kernel ChaCha20)       3.26x           4.0
============================================  ==============  =================

The key of the ``None`` generator is fresh kernel entropy, never stored, so nothing the
library, the user or an earlier call kept predicts the noise, and its cost is that of a seeded
generator (within the 2x budget of the design). What it does not give is a cryptographic
stream: PCG64DXSM is a statistical generator, and someone who saw enough of its raw output
could in principle recover its state (Bouillaguet, Martinez and Sauvage, "Practical
seed-recovery for the PCG pseudo-random number generator", ToSC 2020, did so for PCG64 from a
few hundred raw outputs). Reports are not raw outputs (each mixes the draws with the unknown
true value), so we judge that risk small for simulations and batch privatization.

A cryptographic stream built from ``os.urandom`` bytes, turned into 53-bit uniforms in bulk,
costs about 3x a seeded generator for k-RR (8 bytes of kernel randomness per uniform), over
the 2x budget; and numpy offers no cryptographic bit generator (no AES-CTR or ChaCha), so such
a stream cannot drive :class:`numpy.random.Generator` methods, and every channel would need a
second sampling path. A deployment on people's devices, where the stream itself is the
secret, should privatize one value at a time with an operating-system or hardware CSPRNG
(as RAPPOR's client does with HMAC-DRBG), not with this batch library.

Privacy noise has its own stream: domain separation
---------------------------------------------------
Users pick the seeds 0 and 42 everywhere, for their data and for the privatizer alike. If an
int seed ``s`` of a privatizer meant ``np.random.default_rng(s)``, data drawn with
``default_rng(s)`` (or a ``skldp.datasets`` generator with ``random_state=s``, which is the
same stream) would be privatized with the very uniforms that drew it: k-RR keeps a value
exactly when its uniform is below the keep probability, so on such data it reported
``[1, 0, 0]`` for a distribution near ``[0.5, 0.3, 0.2]``. So a privatizer never uses
``default_rng(s)``: :func:`noise_seed_sequence` derives its stream as

    ``SeedSequence(s, spawn_key=(NOISE_KEY,))``, with
    ``NOISE_KEY = int.from_bytes(b"skldp-privatizer-noise", "big")``,

and a SeedSequence ``ss`` as ``SeedSequence(ss.entropy, spawn_key=ss.spawn_key +
(NOISE_KEY,))``. SeedSequence hashes the spawn key into the state, so this stream is not the
one ``default_rng(s)``, ``RandomState(s)`` (MT19937, another generator), or any child of
``default_rng(s).spawn(n)`` (spawn keys ``(0,)`` to ``(n - 1,)``) gives. The key is fixed and
public: it separates streams, it is no secret. Data generators (:func:`check_random_state`,
used by ``skldp.datasets``) keep ``default_rng(s)``, so data and noise with the same seed are
independent, and ``skldp.experiments`` draws data and noise from separate spawn keys of its
root. A :class:`numpy.random.Generator` passed as ``random_state`` is used as given: the
caller owns its stream (and a generator shared by data and noise advances between them, so
they never reuse uniforms).

A seed reproduces a sequence, never the same noise twice
--------------------------------------------------------
An int seed once made every ``transform`` call replay the same uniforms, so two releases of
slowly changing data lined up row by row: where a person's value had not changed both
reports were equal, and where it had, both reports were the true values. A privatizer now
keeps one noise generator (``BasePrivatizer._noise_generator``), created from the seed when
it is first needed (at ``fit``) and advancing through every later ``transform``, ``fit``
included: a refit continues the sequence instead of restarting it. Only setting
``random_state`` (the constructor or ``set_params``) restarts it.

A clone (``sklearn.clone``) is a construction with the same parameters, as scikit-learn
defines it, so with an int seed it starts the seed's sequence again and replays its source's
reports; this is what makes ``GridSearchCV`` and ``cross_val_score`` reproducible, and it is
no more than constructing the privatizer again with the same seed, which no library can
prevent. The user guide (:ref:`seeds`) states all of this for users.

No two parts, copies or forked children share a stream
------------------------------------------------------
Noise repeated across columns or people leaks as noise repeated across releases does: two
k-RR reports drawn with one uniform that differ are both the true values. So:

* *Copies.* A Generator ``random_state`` is never copied: a clone, ``copy.copy``,
  ``copy.deepcopy`` and ``pickle`` (so joblib's tasks) give the copy
  :func:`independent_copy`, a ``Generator.spawn`` child (reproducible for a seeded source,
  new for every copy; fresh operating-system noise if the generator has no SeedSequence).
  A pickle (or deep copy) of a *fitted* privatizer keeps no position in its stream: resuming
  it, or restarting it, would make two loads of one file (a daily job loading a saved
  privatizer) release the same noise; so the restored copy draws fresh operating-system noise
  and warns once, until ``random_state`` is set again. An unfitted privatizer with an int or
  SeedSequence seed pickles as a construction (joblib sends such clones to its workers, which
  stay reproducible), and so replays the seed's sequence like a clone.
* *Forks.* ``os.register_at_fork`` counts forks (:func:`fork_generation`); a privatizer
  records the generation its stream was started in (at ``fit``) and, used in a forked child,
  replaces it with a fresh operating-system generator, as the ``random`` module reseeds at
  fork. A process id would do as well until a pid is reused; the count cannot be fooled so.
* *Parts of a composite.* A privatizer cannot see the ``ColumnTransformer`` or
  ``FeatureUnion`` it is a part of, so two parts built with one seed cannot be told apart at
  ``transform`` (nor from the clones of a cross-validation, which replay on purpose).
  :func:`skldp.privacy.guarantee_of`, which sees the composite, refuses two parts whose
  :func:`stream_identity` is equal (unless they hold one Generator object, which advances
  between them), naming both. The composites skldp builds itself (``BudgetSplitting``,
  ``AttributeSampling``) draw every attribute from their one generator in turn.
"""

import numbers
import os
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


#: Domain-separation key of privatizer noise (see the module docstring): public, fixed.
NOISE_KEY = int.from_bytes(b"skldp-privatizer-noise", "big")


def check_seed(random_state):
    """Return ``random_state`` checked: None, a non-negative int, a SeedSequence or a Generator."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer; got {random_state}")
        return int(random_state)
    if isinstance(random_state, (np.random.SeedSequence, np.random.Generator)):
        return random_state
    if random_state is None:
        return None
    raise TypeError(
        "random_state must be None, a non-negative int, a numpy SeedSequence or a numpy "
        f"Generator; got {type(random_state).__name__}"
    )


def noise_seed_sequence(random_state):
    """The root SeedSequence of a privatizer's noise for an int or SeedSequence seed.

    Parameters
    ----------
    random_state : int or numpy.random.SeedSequence
        The privatizer's seed.

    Returns
    -------
    root : numpy.random.SeedSequence
        ``SeedSequence(s, spawn_key=(NOISE_KEY,))`` for an int ``s``;
        ``SeedSequence(ss.entropy, spawn_key=ss.spawn_key + (NOISE_KEY,))`` for a
        SeedSequence ``ss``. Never the stream of ``default_rng(s)`` (see the module docstring).
    """
    seed = check_seed(random_state)
    if isinstance(seed, np.random.SeedSequence):
        return np.random.SeedSequence(
            seed.entropy, spawn_key=tuple(seed.spawn_key) + (NOISE_KEY,), pool_size=seed.pool_size
        )
    if isinstance(seed, int):
        return np.random.SeedSequence(seed, spawn_key=(NOISE_KEY,))
    raise TypeError(
        f"noise_seed_sequence needs an int or a SeedSequence; got {type(random_state).__name__}"
    )


def noise_generator(random_state):
    """The generator of privatizer noise for ``random_state``.

    ``None`` gives a fresh generator keyed from the operating system (as
    :func:`check_random_state`); a Generator is returned unchanged; an int or a SeedSequence
    gives ``Generator(PCG64(noise_seed_sequence(random_state)))``, the domain-separated
    stream, never the one ``np.random.default_rng(random_state)`` gives.
    """
    seed = check_seed(random_state)
    if seed is None or isinstance(seed, np.random.Generator):
        return check_random_state(seed)
    return np.random.Generator(np.random.PCG64(noise_seed_sequence(seed)))


def independent_copy(generator):
    """A generator independent of ``generator`` (and of every other copy), for a copied privatizer.

    ``Generator.spawn``'s child: reproducible when ``generator`` was seeded, and each call
    gives a new child (the parent counts its children). A generator whose bit generator has
    no SeedSequence to spawn from gives a fresh generator keyed from the operating system.
    """
    try:
        return generator.spawn(1)[0]
    except TypeError:  # no SeedSequence behind it: nothing to derive an independent child from
        return check_random_state(None)


_FORKS = [0]  # how many forks lie between the first process and this one


def _count_fork():
    _FORKS[0] += 1


if hasattr(os, "register_at_fork"):  # POSIX; elsewhere there is no fork to duplicate a stream
    os.register_at_fork(after_in_child=_count_fork)


def fork_generation():
    """How many ``os.fork`` calls lie between the first process and this one.

    A noise stream records the generation it was started in; a privatizer that finds another
    generation at use is in a forked child holding a copy of its parent's stream, and replaces
    it with fresh operating-system noise (as the standard library's ``random`` module reseeds at
    fork).
    """
    return _FORKS[0]


def stream_identity(random_state):
    """What makes two privatizers' seeded noise the same stream, or None for ``None``.

    An int or a SeedSequence: its root (:func:`noise_seed_sequence`), so ``0`` and
    ``SeedSequence(0)`` are one stream. A Generator: itself (the object), and the
    SeedSequence and bit generator it was made from, so ``default_rng(0)`` given twice is one
    stream even as two objects. Two privatizers with equal identities draw the same noise.
    """
    seed = check_seed(random_state)
    if seed is None:
        return None
    if isinstance(seed, np.random.Generator):
        bits = seed.bit_generator
        ss = getattr(bits, "seed_seq", None)
        if not isinstance(ss, np.random.SeedSequence):
            return ("generator", id(seed))
        return ("generator", type(bits).__name__, ss.entropy, tuple(ss.spawn_key), ss.pool_size)
    root = noise_seed_sequence(seed)
    return ("seed", root.entropy, tuple(root.spawn_key), root.pool_size)


def spawn(rng, n):
    """Return ``n`` independent child generators of ``rng`` (one per chunk or partition)."""
    return rng.spawn(n)

r"""Data poisoning of frequency oracles: fake users' reports and their expected gain.

Cao, Jia and Gong, "Data Poisoning Attacks to Local Differential Privacy Protocols" (USENIX
Security 2021). n genuine users are joined by m fake ones, :math:`\beta = m/(n+m)`, who want
to promote r target values T. The server applies the unbiased estimator
:math:`\tilde f(v) = (C(v)/(n+m) - q)/(p - q)` to all reports, C(v) counting the reports
that support v (:math:`p` and :math:`q` the probabilities that a report supports its own and
another value). The attacks:

``"RIA"`` (input poisoning, random item)
    a fake user runs the honest client on a target drawn uniformly;
``"RPA"`` (output poisoning, random perturbed value)
    a fake user sends a uniform report of the output space (k-RR: a uniform value; unary
    encoding: a uniform bit vector; local hashing: a uniform hash and bucket);
``"MGA"`` (maximal gain)
    reports crafted to support every target: k-RR sends a uniform target; unary encoding sets
    the r target bits and :math:`l - r` other random bits, :math:`l = \lfloor p + (k-1)q
    \rfloor` the expected number of ones of a genuine report (so the report looks typical by
    its weight); local hashing picks a hash under which all targets share one bucket (random
    hashes are tried, up to 1,000; the one with the most targets in one bucket is kept) and
    sends that bucket.

With :math:`S = \sum_{t \in T} P(\text{a fake report supports } t)` the overall gain
:math:`G = \sum_{t \in T} E[\tilde f_{\text{after}}(t) - \tilde f_{\text{before}}(t)]`
("before": the genuine reports alone) is exactly

.. math:: G = \beta\Big(\frac{S - r q}{p - q} - f_T\Big),

:math:`f_T` the targets' total genuine frequency, with S equal to :math:`p + (r-1)q` (RIA);
:math:`r/k`, :math:`r/2`, :math:`r/g` (RPA on k-RR, unary encoding, local hashing); and 1
(k-RR), r (unary encoding and local hashing, when the hash search succeeds) for MGA.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np

from skldp._random import check_random_state
from skldp.channels import (
    Channel,
    LocalHashingChannel,
    RandomizedResponseChannel,
    UnaryEncodingChannel,
)
from skldp.privacy import simulation

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike

__all__ = ["ATTACKS", "expected_gain", "fake_reports", "support_probabilities"]

ATTACKS = ("RIA", "RPA", "MGA")
#: Random hashes tried per fake local-hashing report to make all targets collide.
MAX_HASH_TRIES = 1000


def _channel(mechanism):
    channel = mechanism if isinstance(mechanism, Channel) else getattr(mechanism, "channel_", None)
    if isinstance(channel, list):
        channel = channel[0] if len(channel) == 1 else None
    if not isinstance(
        channel, (RandomizedResponseChannel, UnaryEncodingChannel, LocalHashingChannel)
    ):
        raise TypeError(
            "the poisoning attacks apply to k-RR, unary encoding (RAPPOR, OUE) and local "
            f"hashing (a fitted privatizer or its channel); got {type(mechanism).__name__}"
        )
    return channel


def support_probabilities(mechanism: Any) -> tuple[float, float]:
    """``(p, q)``: the probabilities that a report supports its own value and another one.

    Read from the channel's forward map (``forward(e_0)[0]`` and ``[1]``), so they are the
    probabilities the mechanism samples with.
    """
    channel = _channel(mechanism)
    e0 = np.zeros(channel.n_inputs)
    e0[0] = 1.0
    f = channel.forward(e0)
    return float(f[0]), float(f[1])


def _check_attack(attack):
    if attack not in ATTACKS:
        raise ValueError(f"attack must be one of {ATTACKS}; got {attack!r}")
    return attack


def _check_beta(beta):
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not 0 <= beta < 1:
        raise ValueError(f"beta (the fraction of fake users) must be in [0, 1); got {beta!r}")
    return float(beta)


def _check_targets(targets, k):
    t = np.unique(np.asarray(targets, dtype=np.int64).reshape(-1))
    if t.size == 0 or t.min() < 0 or t.max() >= k:
        raise ValueError(f"targets must be category indices in [0, {k}); got {targets!r}")
    return t


def expected_gain(
    mechanism: Any, attack: str, beta: float, targets: ArrayLike, f_T: float = 0.0
) -> float:
    r"""The overall gain of an attack in expectation: :math:`\beta((S - rq)/(p - q) - f_T)`.

    Parameters
    ----------
    mechanism : fitted privatizer or channel
        k-RR, unary encoding (RAPPOR, OUE) or local hashing.
    attack : {"RIA", "RPA", "MGA"}
    beta : float
        Fraction of fake users among all users, :math:`m / (n + m)`.
    targets : array-like of int
        Category indices of the targets (r of them).
    f_T : float, default=0.0
        The targets' total frequency among genuine users.

    Returns
    -------
    float

    Examples
    --------
    >>> from skldp.channels import RandomizedResponseChannel
    >>> from skldp.attacks import expected_gain
    >>> round(expected_gain(RandomizedResponseChannel(1.0, 1024), "MGA", 0.05, [0], 0.01), 3)
    29.818
    """
    channel = _channel(mechanism)
    attack, beta = _check_attack(attack), _check_beta(beta)
    r = _check_targets(targets, channel.n_inputs).size
    p, q = support_probabilities(channel)
    if attack == "RIA":
        S = p + (r - 1) * q
    elif attack == "RPA":
        if isinstance(channel, RandomizedResponseChannel):
            S = r / channel.n_inputs
        elif isinstance(channel, UnaryEncodingChannel):
            S = r / 2
        else:
            S = r / channel.n_buckets
    else:
        S = 1.0 if isinstance(channel, RandomizedResponseChannel) else float(r)
    return beta * ((S - r * q) / (p - q) - float(f_T))


def fake_reports(
    mechanism: Any,
    attack: str,
    n_fake: int,
    targets: ArrayLike,
    *,
    random_state: Any = None,
) -> Any:
    """Reports of ``n_fake`` fake users mounting ``attack``, in the privatizer's format.

    Parameters
    ----------
    mechanism : fitted privatizer
        k-RR (``RandomizedResponse``), unary encoding (``RAPPOR``,
        ``OptimizedUnaryEncoding``) or local hashing (``LocalHashing``), one column; RIA runs
        its ``transform`` (inside :func:`skldp.privacy.simulation`: no accountant is charged).
    attack : {"RIA", "RPA", "MGA"}
        See :mod:`skldp.attacks`.
    n_fake : int
    targets : array-like of int
        Category *indices* of the targets.
    random_state : int, numpy.random.Generator or None, default=None

    Returns
    -------
    reports
        ``n_fake`` rows that the privatizer's estimators read like its own reports (a
        column of category indices for k-RR, 0/1 rows for unary encoding and local hashing).

    Examples
    --------
    >>> from skldp.privatizers import OptimizedUnaryEncoding
    >>> from skldp.attacks import fake_reports
    >>> oue = OptimizedUnaryEncoding(1.0, categories=list(range(8))).fit(list(range(8)))
    >>> fake_reports(oue, "MGA", 2, [3], random_state=0)[:, 3].tolist()
    [1, 1]
    """
    channel = _channel(mechanism)
    attack = _check_attack(attack)
    if isinstance(n_fake, bool) or not isinstance(n_fake, numbers.Integral) or n_fake < 0:
        raise ValueError(f"n_fake must be a non-negative integer; got {n_fake!r}")
    k = channel.n_inputs
    t = _check_targets(targets, k)
    rng = check_random_state(random_state)
    m = int(n_fake)
    if attack == "RIA":
        if not hasattr(mechanism, "transform"):
            raise TypeError("RIA runs the honest client: pass the fitted privatizer")
        cats = (
            mechanism.categories_[0]
            if isinstance(mechanism.categories_, list)
            else mechanism.categories_
        )
        values = np.asarray(cats)[rng.choice(t, size=m)].reshape(-1, 1)
        with simulation():
            return mechanism.transform(values)
    if isinstance(channel, RandomizedResponseChannel):  # reports are category indices
        idx = rng.integers(0, k, size=m) if attack == "RPA" else rng.choice(t, size=m)
        return idx.reshape(-1, 1)
    if isinstance(channel, UnaryEncodingChannel):
        return _unary(channel, attack, m, t, rng)
    return _local_hashing(channel, attack, m, t, rng)


def _unary(channel, attack, m, t, rng):
    k = channel.n_inputs
    if attack == "RPA":
        return (rng.random((m, k)) < 0.5).astype(np.uint8)
    p, q = support_probabilities(channel)
    weight = max(int(math.floor(p + (k - 1) * q)), t.size)
    # l - r random non-target bits: the smallest random scores among the non-targets
    scores = rng.random((m, k))
    scores[:, t] = -1.0  # the targets first
    chosen = np.argpartition(scores, weight - 1, axis=1)[:, :weight] if weight < k else None
    out = np.zeros((m, k), dtype=np.uint8)
    if chosen is None:
        out[:] = 1
    else:
        out[np.arange(m)[:, None], chosen] = 1
    return out


def _local_hashing(channel, attack, m, t, rng):
    g, d = channel.n_buckets, channel.n_digits
    numbers = rng.integers(0, g, size=(m, d + 2))
    if attack == "RPA":
        return channel.encode(numbers)
    # MGA: a hash under which the targets share a bucket; with one target any hash does
    best = np.zeros(m, dtype=np.int64)
    todo = np.arange(m)
    for _ in range(MAX_HASH_TRIES if t.size > 1 else 1):
        trial = rng.integers(0, g, size=(todo.size, d + 2))
        trial[:, d + 1] = 0
        hashed = _hash_of(channel, trial, t)  # (rows, r) buckets
        counts = np.stack([(hashed == hashed[:, [j]]).sum(axis=1) for j in range(t.size)], axis=1)
        top = counts.max(axis=1)
        better = top > best[todo]
        rows = todo[better]
        numbers[rows, : d + 1] = trial[better, : d + 1]
        numbers[rows, d + 1] = hashed[better, counts[better].argmax(axis=1)]
        best[rows] = top[better]
        todo = todo[best[todo] < t.size]
        if todo.size == 0:
            break
    return channel.encode(numbers)


def _hash_of(channel, numbers, t):
    """Bucket of each target under each row's hash: (rows, r), read through ``support``."""
    g = channel.n_buckets
    rows = numbers.shape[0]
    out = np.empty((rows, t.size), dtype=np.int64)
    trial = numbers.copy()
    for y in range(g):  # g is small for OLH (round(e^eps) + 1)
        trial[:, -1] = y
        s = channel.support(channel.encode(trial))[:, t]
        out[s] = y
    return out

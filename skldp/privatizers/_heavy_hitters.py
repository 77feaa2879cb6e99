"""Heavy-hitter discovery over open alphabets: prefix extending (PEM) and tree histograms."""

from __future__ import annotations

import math
from dataclasses import field

import numpy as np

from skldp._docstring import substitute
from skldp._reports import ReportSpec
from skldp._validation import PRIVATIZER_CONSTRAINTS, Interval, Options
from skldp.channels import PrefixHashingChannel
from skldp.channels._local_hashing import MAX_BUCKETS, default_buckets
from skldp.channels._prefix import MAX_VALUE_BITS, VALUE_TYPES, encode_values
from skldp.privatizers._base import BasePrivatizer, hyperparameters

_OPEN = np.empty(0, dtype=object)


def auto_step(max_candidates, survivors=32):
    """The default extension step: the largest s with ``survivors * 2^s <= max_candidates``.

    So that the surviving prefixes, each extended by all ``2^s`` suffixes, stay within the
    candidate budget (spec decision: the largest step the budget allows, since fewer groups
    give each level more reports). PEM keeps 32 survivors (step 5 for 1024); TreeHist, whose
    level groups share only half the people, keeps 64 (step 4): with 32, a value of 0.5 %
    was crowded out of the survivors at some deep level in 2 of 20 runs at 32 bits, n = 10^6.
    """
    return max(1, int(math.log2(max_candidates)) - int(math.log2(survivors)))


@hyperparameters
class _PrefixPrivatizer(BasePrivatizer):
    """Shared fit and sampling: one column of m-bit values, one grouped prefix channel."""

    n_bits: int | None = None
    step: int | None = None
    n_buckets: int | None = None
    value_type: str = "int"
    max_candidates: int = 1024

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "n_bits": [None, Interval("int", 1, MAX_VALUE_BITS)],
        "step": [None, Interval("int", 1, MAX_VALUE_BITS)],
        "n_buckets": [None, Interval("int", 2, MAX_BUCKETS)],
        "value_type": [Options(*VALUE_TYPES)],
        "max_candidates": [Interval("int", 2, None)],
    }

    def _levels(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _make_channel(self, categories, column):
        if self.n_bits is None:
            raise ValueError(
                f"{type(self).__name__} needs n_bits=, the public bit length of the values "
                "(a value that does not fit is refused)"
            )
        if self.value_type != "int" and self.n_bits % 8:
            raise ValueError(
                f"value_type={self.value_type!r} needs n_bits a multiple of 8; got {self.n_bits}"
            )
        lengths, shares = self._levels()
        g = self.n_buckets
        if g is None:
            g = default_buckets(self.epsilon, 1 << min(self.n_bits, 30))
        return PrefixHashingChannel(
            self.epsilon, self.n_bits, lengths, shares, g, value_type=self.value_type
        )

    def _fit(self, X):
        if self.categories is not None:
            raise ValueError(
                f"categories must be None for {type(self).__name__}: the domain is the public "
                f"set of n_bits-bit values; got {self.categories!r}"
            )
        columns, _ = self._read_columns(X, reset=True)
        if len(columns) != 1:
            raise ValueError(
                f"{type(self).__name__} privatizes one column of values; got {len(columns)}"
            )
        self.channel_ = self._make_channel(None, 0)
        # the public domain, enumerated where it is small and integer (audits read it)
        small = self.value_type == "int" and self.n_bits <= 16
        self.categories_ = [np.arange(2**self.n_bits) if small else None]
        self.privacy_ = self.channel_.guarantee()

    def _infers_domain(self):
        return False  # the domain is the public 2^n_bits values: nothing is inferred

    def report_specs(self) -> tuple[ReportSpec, ...]:
        return (ReportSpec(self.channel_, _OPEN),)

    def _sample(self, X, rng):
        columns, index = self._read_columns(X, reset=False)
        ch = self.channel_
        x = encode_values(columns[0], ch.n_bits, ch.value_type)
        return [ch.encode(ch.draw_numbers(x, rng))], index

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


@substitute()
@hyperparameters
class PrefixExtension(_PrefixPrivatizer):
    r"""Prefix extending method (PEM): groups report growing prefixes through local hashing.

    People are split into G groups by a public draw that does not depend on their value; group
    j reports the prefix of length :math:`l_j` of its m-bit value through optimized local
    hashing at the full budget (:class:`~skldp.channels.PrefixHashingChannel`). The server
    (:class:`skldp.HeavyHitterEstimator`) estimates the first level's :math:`2^{l_0}`
    prefixes, keeps the frequent ones and extends each by all :math:`2^{l_{j+1} - l_j}`
    suffixes at the next level, down to whole values. One report per person: epsilon-LDP.

    Read more in the :ref:`User Guide <heavy_hitters>`.

    Parameters
    ----------
    epsilon : float, default=1.0
        The budget of each person's one report.
    categories : None, default=None
        Must be None: the domain is the public set of m-bit values.
    accountant : PrivacyAccountant or None, default=None
        Charged once per person (one report each) for every ``transform``.
    {random_state}
    n_bits : int or None, default=None
        m, the public bit length of the values (1 to 62); required (``fit`` refuses None). A
        value that does not fit is refused.
    step : int or None, default=None
        The prefix growth per level, gamma. None: the largest step with ``32 * 2^step <=
        max_candidates`` (5 for 1024).
    n_buckets : int or None, default=None
        g of local hashing; None is OLH's :math:`\mathrm{round}(e^\varepsilon) + 1`.
    value_type : {"int", "bytes", "str"}, default="int"
        How values become m-bit integers (``skldp.channels._prefix.encode_values``):
        integers as themselves, bytes padded on the right with zero bytes and read big-endian,
        strings through UTF-8.
    max_candidates : int, default=1024
        C_max: with :math:`2^m \le` C_max a single group reports whole values (a plain
        frequency oracle); it also sets the default step.
    start_bits : int or None, default=None
        The first prefix length (PEM's eta0). None: 4 (enough for the top 15), or m if m < 4.
    oracle : {"local_hashing"}, default="local_hashing"
        The frequency oracle of each group. Local hashing is the one offered: the server
        tests each report against arbitrary candidate prefixes, which needs its per-report
        hash.

    Attributes
    ----------
    channel_ : PrefixHashingChannel
        The channel of one report: its ``lengths`` are the groups' prefix lengths.
    categories_ : list of one ndarray or None
        The public domain ``0 .. 2^m - 1`` for integer values of at most 16 bits (what
        :func:`skldp.privacy.audit` tests), else None.
    privacy_ : LDP
        epsilon-LDP per person.

    Notes
    -----
    Levels :math:`l_0 = \eta_0, \eta_0 + \gamma, \dots, m`, one group each, equally likely.
    A group of :math:`n_j \approx n / G` people estimates a prefix with standard deviation
    :math:`\sigma_j = \sqrt{q(1-q)/n_j}/(p-q)` (about
    :math:`\sqrt{4 e^\varepsilon G / n}/(e^\varepsilon - 1)`): values of frequency a few
    :math:`\sigma_j` are found.

    References
    ----------
    .. [1] T. Wang, N. Li and S. Jha, "Locally Differentially Private Heavy Hitter
       Identification", IEEE TDSC 2019 (arXiv:1708.06674).

    Examples
    --------
    >>> from skldp import PrefixExtension
    >>> pem = PrefixExtension(4.0, n_bits=16, random_state=0)
    >>> reports = pem.fit_transform([3, 3, 7, 1])
    >>> pem.channel_.lengths
    (4, 9, 14, 16)
    """

    epsilon: float = field(default=1.0, kw_only=False)
    start_bits: int | None = None
    oracle: str = "local_hashing"

    _parameter_constraints = {
        **_PrefixPrivatizer._parameter_constraints,
        "start_bits": [None, Interval("int", 1, MAX_VALUE_BITS)],
        "oracle": [Options("local_hashing")],
    }

    def _levels(self):
        m = self.n_bits
        if self.start_bits is not None and self.start_bits > m:
            raise ValueError(
                f"start_bits must be at most n_bits = {m} (a prefix of the values); "
                f"got {self.start_bits}"
            )
        if 2**m <= self.max_candidates:
            return (m,), (1,)
        start = min(m, 4 if self.start_bits is None else self.start_bits)
        step = auto_step(self.max_candidates) if self.step is None else self.step
        lengths = list(range(start, m, step)) + [m]
        return tuple(lengths), (1,) * len(lengths)


@substitute()
@hyperparameters
class TreeHistogram(_PrefixPrivatizer):
    r"""Tree histogram (TreeHist): a prefix tree pruned level by level, then a final oracle.

    People are split at random into a final group (a share ``final_share``) that reports its
    whole m-bit value, and level groups (the rest, equally likely) that report the prefix of
    their level, each through local hashing at the full budget (no budget split: one report
    per person, epsilon-LDP). The server walks the tree from the root, pruning the nodes below
    the detection threshold at each level and expanding the survivors, and ranks the surviving
    leaves with the final group's estimates (:class:`skldp.HeavyHitterEstimator`). The
    server's work is linear in n for a fixed candidate budget.

    Read more in the :ref:`User Guide <heavy_hitters>`.

    Parameters
    ----------
    epsilon : float, default=1.0
        The budget of each person's one report.
    categories : None, default=None
        Must be None: the domain is the public set of m-bit values.
    accountant : PrivacyAccountant or None, default=None
        Charged once per person (one report each) for every ``transform``.
    {random_state}
    n_bits : int or None, default=None
        m, the public bit length of the values (1 to 62); required (``fit`` refuses None).
    step : int or None, default=None
        Bits per tree level (1 is the paper's binary tree). None: the largest step with
        ``64 * 2^step <= max_candidates`` (4 for 1024): fewer, larger level groups, and 64
        surviving prefixes per level.
    n_buckets : int or None, default=None
        g of local hashing; None is OLH's :math:`\mathrm{round}(e^\varepsilon) + 1`.
    value_type : {"int", "bytes", "str"}, default="int"
        How values become m-bit integers (see :class:`PrefixExtension`).
    max_candidates : int, default=1024
        Sets the default step.
    final_share : float, default=0.5
        The share of people in the final group (rounded to a ratio of whole group shares).

    Attributes
    ----------
    channel_ : PrefixHashingChannel
        Its last group (length m) is the final group.
    categories_ : list of one ndarray or None
        As for :class:`PrefixExtension`.
    privacy_ : LDP
        epsilon-LDP per person.

    Notes
    -----
    Splitting people rather than the budget: halving epsilon multiplies OLH's variance by
    about :math:`e^{-\varepsilon/2}(e^{\varepsilon/2} + 1)^2` (9.5 at epsilon = 4), halving the
    people by 2.

    References
    ----------
    .. [1] R. Bassily, K. Nissim, U. Stemmer and A. Thakurta, "Practical Locally Private Heavy
       Hitters", NeurIPS 2017 (JMLR 21, 2020).

    Examples
    --------
    >>> from skldp import TreeHistogram
    >>> tree = TreeHistogram(4.0, n_bits=16, random_state=0)
    >>> reports = tree.fit_transform([3, 3, 7, 1])
    >>> tree.channel_.lengths, tree.channel_.shares
    ((4, 8, 12, 16), (1, 1, 1, 3))
    """

    epsilon: float = field(default=1.0, kw_only=False)
    final_share: float = 0.5

    _parameter_constraints = {
        **_PrefixPrivatizer._parameter_constraints,
        "final_share": [Interval("real", 0, 1, closed="neither")],
    }

    def _levels(self):
        m = self.n_bits
        step = auto_step(self.max_candidates, 64) if self.step is None else self.step
        lengths = list(range(step, m, step)) + [m]
        n_levels = len(lengths) - 1
        if n_levels == 0:
            return (m,), (1,)
        final = max(1, round(self.final_share / (1 - self.final_share) * n_levels))
        return tuple(lengths), (1,) * n_levels + (final,)

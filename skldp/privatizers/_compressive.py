"""Compressive privatization (Xiong et al., WWW 2022) and one-bit Hadamard response."""

from __future__ import annotations

import math
from dataclasses import field

from skldp.privatizers._base import BasePrivatizer, hyperparameters
from skldp._docstring import substitute
from skldp._memory import FIT_BYTES_PER_CATEGORY, check_categories
from skldp._validation import (
    PRIVATIZER_CONSTRAINTS,
    Interval,
    Options,
    Satisfies,
    check_epsilon,
    check_int,
)
from skldp.channels import (
    OneBitCompressiveChannel,
    OneBitHadamardChannel,
    RecursiveCompressiveChannel,
    SymmetricCompressiveChannel,
)
from skldp.exceptions import InvalidParameterError

_MATRIX_SEED = Interval("int", 0)
_ASSIGNMENT = Options("cyclic", "random")
_POWER_OF_TWO = Satisfies(
    Interval("int", 1), lambda v: v & (v - 1) == 0, "a power of two (1, 2, 4, ...)"
)


@substitute(channel_type="OneBitCompressiveChannel")
@hyperparameters
class OneBitCompressive(BasePrivatizer):
    r"""One-bit compressive privatization: one private bit about one random measurement of x.

    People are split into ``n_measurements`` = m groups; a public m x k matrix A of random
    signs, built from ``matrix_seed``, gives group j the set :math:`B_j = \{x : A_{jx} = +1\}`.
    A person of group j sends the bit "my value is in :math:`B_j`" through binary randomized
    response. Every person sends one bit, and the group means :math:`\hat t` give noisy
    linear measurements :math:`c(2\hat t - 1) \approx A p` of the distribution, from which
    :class:`~skldp.estimators.SparseEstimator` recovers a sparse p with m of order
    :math:`s \log(k/s)` (Algorithm 1 of [1]_). The group index is part of the report, so
    reports from different batches can be pooled.

    Read more in the :ref:`User Guide <compressive>`.

    {privatizer_parameters_section}
    n_measurements : int, default=500
        m, the number of groups and of measurements (the paper's experiments use 500).
        Exact recovery of an s-sparse p needs m of order :math:`s \log(k/s)`.
    matrix_seed : int, default=0
        Public seed of A; people and server must use the same one. It is not a secret.
    assignment : {'cyclic', 'random'}, default='cyclic'
        How people are put into groups. ``'cyclic'``: row i of each ``transform`` call goes to
        group ``(u + i) mod m`` for a uniform random start u, the paper's
        :math:`S_j = \{i : i \equiv j \pmod m\}` (balanced groups); ``'random'``: each row
        gets an independent uniform group.

    {privatizer_attributes_section}

    See Also
    --------
    SymmetricCompressive, RecursiveCompressive, OneBitHadamardResponse
    skldp.estimators.SparseEstimator

    Notes
    -----
    .. math::

        P(b = 1 \mid x, j) = \begin{cases} e^\varepsilon / (e^\varepsilon + 1) & A_{jx} = +1 \\
        1 / (e^\varepsilon + 1) & A_{jx} = -1 \end{cases}, \qquad
        c\,(2 t - 1_m) = A p, \quad c = \frac{e^\varepsilon + 1}{e^\varepsilon - 1}.

    It is epsilon-LDP (the group does not depend on the value) and costs one bit.

    References
    ----------
    .. [1] Xiong, Sun, Mao, Wang, Shan and Huang, WWW 2022, Algorithm 1.

    Examples
    --------
    >>> from skldp import OneBitCompressive
    >>> cp = OneBitCompressive(epsilon=1.0, n_measurements=8, categories=list(range(20)),
    ...                        random_state=0)
    >>> reports = cp.fit_transform(list(range(20)) * 4)
    >>> reports.shape, cp.bits_per_report, cp.privacy_
    ((80, 1), 1, LDP(epsilon=1))
    """

    epsilon: float = field(default=1.0, kw_only=False)
    n_measurements: int = 500
    matrix_seed: int = 0
    assignment: str = "cyclic"

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "n_measurements": [Interval("int", 1)],
        "matrix_seed": [_MATRIX_SEED],
        "assignment": [_ASSIGNMENT],
    }

    def _make_channel(self, categories, column):
        return OneBitCompressiveChannel(
            self.epsilon, len(categories), self.n_measurements, self.matrix_seed, self.assignment
        )


@substitute(channel_type="SymmetricCompressiveChannel")
@hyperparameters
class SymmetricCompressive(BasePrivatizer):
    r"""Symmetric compressive privatization: everyone reports one of m symbols.

    A public balanced sign matrix :math:`A = [A_h; -A_h]` (m x k, ``n_measurements`` = m even)
    gives each value x the set :math:`C_x = \{y : A_{yx} = +1\}` of m/2 symbols. Everyone
    reports a symbol of :math:`C_x` with total probability :math:`e^\varepsilon /
    (e^\varepsilon + 1)`, uniformly inside and outside it (Algorithm 2 of [1]_, with the
    balanced matrix of its Sec. 3.3). No groups: the scheme is symmetric, and costs
    :math:`\lceil \log_2 m \rceil` bits. The output frequencies give
    :math:`c(m\hat q - 1) \approx A p` (eq. 19 with the corrected step 6), recovered by
    :class:`~skldp.estimators.SparseEstimator`.

    Read more in the :ref:`User Guide <compressive>`.

    {privatizer_parameters_section}
    n_measurements : int, default=500
        m, the output alphabet size; even.
    matrix_seed : int, default=0
        Public seed of :math:`A_h`.

    {privatizer_attributes_section}

    See Also
    --------
    OneBitCompressive, RecursiveCompressive, skldp.estimators.SparseEstimator

    Notes
    -----
    .. math::

        Q(y \mid x) = \frac{2 e^\varepsilon}{m (e^\varepsilon + 1)} \ (y \in C_x), \qquad
        \frac{2}{m (e^\varepsilon + 1)} \ (y \notin C_x).

    Every column has exactly m/2 plus signs, so the privacy ratio is exactly
    :math:`e^\varepsilon` (the unbalanced matrices of the paper's Lemma 3.1 give only
    :math:`\varepsilon + 2\beta`).

    References
    ----------
    .. [1] Xiong, Sun, Mao, Wang, Shan and Huang, WWW 2022, Algorithm 2 and Sec. 3.3.

    Examples
    --------
    >>> from skldp import SymmetricCompressive
    >>> sp = SymmetricCompressive(epsilon=1.0, n_measurements=16, categories=list(range(50)),
    ...                           random_state=0)
    >>> reports = sp.fit_transform([3] * 100)
    >>> sp.bits_per_report, int(reports.max()) < 16
    (4, True)
    """

    epsilon: float = field(default=1.0, kw_only=False)
    n_measurements: int = 500
    matrix_seed: int = 0

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "n_measurements": [
            Satisfies(Interval("int", 2), lambda m: m % 2 == 0, "an even integer >= 2")
        ],
        "matrix_seed": [_MATRIX_SEED],
    }

    def _make_channel(self, categories, column):
        return SymmetricCompressiveChannel(
            self.epsilon, len(categories), self.n_measurements, self.matrix_seed
        )


def resolve_n_blocks(epsilon, n_blocks=None, max_bits=None, n_categories=None):
    r"""The number of blocks L of recursive compressive privatization.

    ``n_blocks`` given: it is used (a power of two). Otherwise L is the largest power of two
    not above :math:`e^\varepsilon` (so :math:`L \le e^\varepsilon`, as Theorem 4.3 assumes,
    and L = 1, one-bit compressive privatization, for :math:`\varepsilon < \ln 2`), capped at
    :math:`2^{b-1}` for a budget of b = ``max_bits`` bits, since a report takes
    :math:`\log_2 L + 1` bits. (The paper's box writes :math:`\min\{2^b, 2^{\lceil \log_2
    e^\varepsilon \rceil}\}`, which can exceed both the budget and :math:`e^\varepsilon`.)
    It is also capped at the padded domain size K (blocks of one cell; more blocks than
    cells would be empty), so a huge epsilon gives L = K rather than an astronomical L.
    """
    if n_blocks is not None:
        L = check_int(n_blocks, "n_blocks", min_value=1)
        if L & (L - 1):
            raise ValueError(f"n_blocks must be a power of two; got {L}")
        if max_bits is not None and int(math.log2(L)) + 1 > max_bits:
            raise ValueError(
                f"n_blocks={L} needs {int(math.log2(L)) + 1} bits but max_bits={max_bits}"
            )
        return L
    eps = check_epsilon(epsilon)
    exponent = max(0, math.floor(min(eps, 4096.0) / math.log(2) + 1e-12))
    if n_categories is not None:
        exponent = min(exponent, max(0, math.ceil(math.log2(n_categories))))
    L = 1 << exponent
    if max_bits is not None:
        b = check_int(max_bits, "max_bits", min_value=1)
        L = min(L, 1 << (b - 1))
    return L


@substitute(channel_type="RecursiveCompressiveChannel")
@hyperparameters
class RecursiveCompressive(BasePrivatizer):
    r"""Recursive compressive privatization: medium privacy with log2(L) + 1 bits per report.

    The padded domain [0, K) (K = 2**ceil(log2 k)) is permuted by a public random permutation
    and cut into L blocks; person in group j (of ``n_measurements`` = m) whose value falls in
    block l at offset o sends :math:`\pm e_l` with sign :math:`(A_2)_{jo}` through 2L-ary
    randomized response (Algorithm 3 of [1]_). For :math:`e^\varepsilon` large the error
    factor :math:`(e^\varepsilon + 2L - 1)/(e^\varepsilon - 1)` stays O(1) while each block
    needs only about s / L measurements. L = 1 is :class:`OneBitCompressive`.

    Read more in the :ref:`User Guide <compressive>`.

    {privatizer_parameters_section}
    n_measurements : int, default=500
        m, the number of groups (rows of :math:`A_2`).
    n_blocks : int or None, default=None
        L, a power of two. None takes the largest power of two not above :math:`e^\varepsilon`,
        capped at :math:`2^{b-1}` by ``max_bits`` = b and at the padded domain size K.
    max_bits : int or None, default=None
        Communication budget b; requires :math:`\log_2 L + 1 \le b`.
    matrix_seed : int, default=0
        Public seed of :math:`A_2` and of the permutation.
    assignment : {'cyclic', 'random'}, default='cyclic'
        Group assignment, as in :class:`OneBitCompressive`.

    {privatizer_attributes_section}

    See Also
    --------
    OneBitCompressive, SymmetricCompressive, skldp.estimators.SparseEstimator

    Notes
    -----
    .. math::

        P(\hat Q_j = Q_j) = \frac{e^\varepsilon}{e^\varepsilon + 2L - 1}, \qquad
        E[\hat Q_j] = \frac{e^\varepsilon - 1}{e^\varepsilon + 2L - 1} Q_j .

    It is epsilon-LDP (2L-ary randomized response). The Hadamard factor :math:`H_L` is
    orthogonal, so the system decouples into L block problems :math:`z_l \approx A_2 p'^{(l)}`;
    :class:`~skldp.estimators.SparseEstimator` recovers each block with at most
    :math:`\lceil (1+\beta)s/L \rceil` nonzeros (the paper's hierarchical recovery, step 5).

    References
    ----------
    .. [1] Xiong, Sun, Mao, Wang, Shan and Huang, WWW 2022, Algorithm 3.

    Examples
    --------
    >>> from skldp import RecursiveCompressive
    >>> rc = RecursiveCompressive(epsilon=2.0, n_measurements=20, categories=list(range(100)),
    ...                           random_state=0)
    >>> _ = rc.fit_transform(list(range(100)))
    >>> rc.channel_.n_blocks, rc.bits_per_report
    (4, 3)
    """

    epsilon: float = field(default=1.0, kw_only=False)
    n_measurements: int = 500
    n_blocks: int | None = None
    max_bits: int | None = None
    matrix_seed: int = 0
    assignment: str = "cyclic"

    _parameter_constraints = {
        **OneBitCompressive._parameter_constraints,  # L = 1 is OneBitCompressive
        "n_blocks": [_POWER_OF_TWO, None],
        "max_bits": [None, Interval("int", 1)],
    }

    def _check_params(self):
        try:
            resolve_n_blocks(self.epsilon, self.n_blocks, self.max_bits)
        except ValueError as exc:
            raise InvalidParameterError(str(exc)) from None

    def _make_channel(self, categories, column):
        L = resolve_n_blocks(self.epsilon, self.n_blocks, self.max_bits, len(categories))
        return RecursiveCompressiveChannel(
            self.epsilon, len(categories), self.n_measurements, L, self.matrix_seed, self.assignment
        )


@substitute(channel_type="OneBitHadamardChannel")
@hyperparameters
class OneBitHadamardResponse(BasePrivatizer):
    r"""One-bit Hadamard response: the one-bit baseline of compressive privatization.

    People are split into K groups, K the smallest power of two larger than k; a person of
    group j sends through binary randomized response the bit "row j of the Hadamard matrix
    is +1 at my value" (Acharya and Sun, 2019 [1]_; Sec. 2 of [2]_). The group means give
    :math:`c(2\hat t - 1_K) \approx H_K p`, inverted exactly by a fast Walsh-Hadamard
    transform (:class:`~skldp.estimators.EmpiricalEstimator`) when every group has reports,
    which needs n >= K; Acharya et al. (2021) follow it with a sparse projection
    (``SparseEstimator(method='inverse', projection='sparse')``).

    Read more in the :ref:`User Guide <compressive>`.

    {privatizer_parameters_section}
    assignment : {'cyclic', 'random'}, default='cyclic'
        Group assignment, as in :class:`OneBitCompressive`.

    {privatizer_attributes_section}

    See Also
    --------
    HadamardResponse : The Hadamard mechanism with reports of about log2 k bits.
    OneBitCompressive, skldp.estimators.SparseEstimator

    Notes
    -----
    .. math::

        P(b = 1 \mid x, j) = \frac{e^\varepsilon}{e^\varepsilon + 1} \text{ if } H_{jx} = +1,
        \quad \hat p = \frac{c}{K} H_K^T (2 \hat t - 1_K).

    References
    ----------
    .. [1] J. Acharya and Z. Sun, "Communication complexity in locally private distribution
       estimation and heavy hitters", ICML 2019.
    .. [2] Xiong, Sun, Mao, Wang, Shan and Huang, WWW 2022, Sec. 2 (eqs. 4-5).

    Examples
    --------
    >>> from skldp import OneBitHadamardResponse
    >>> hr = OneBitHadamardResponse(epsilon=1.0, categories=list(range(5)), random_state=0)
    >>> _ = hr.fit_transform([0, 1, 2, 3, 4] * 10)
    >>> hr.channel_.n_groups, hr.bits_per_report
    (8, 1)
    """

    epsilon: float = field(default=1.0, kw_only=False)
    assignment: str = "cyclic"

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "assignment": [_ASSIGNMENT],
    }

    def _make_channel(self, categories, column):
        # arrays over the K <= 2k groups (measured 153 bytes per category at k = 2**13)
        check_categories(
            len(categories),
            FIT_BYTES_PER_CATEGORY + 192,
            "the one-bit Hadamard channel",
            "at most {rows} categories fit",
        )
        return OneBitHadamardChannel(self.epsilon, len(categories), self.assignment)

"""Hadamard response and its block-structured and high-low forms as scikit-learn transformers."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

import numpy as np

from skldp.privatizers._base import BasePrivatizer, hyperparameters, single_or_list
from skldp._docstring import substitute
from skldp._domain import column_partition, column_sensitive, is_list_like
from skldp._validation import (
    PRIVATIZER_CONSTRAINTS,
    Deferred,
    Interval,
    IsCallable,
    ListLike,
    Options,
    check_int,
)
from skldp.channels import (
    BlockHadamardResponseChannel,
    GeneralHadamardResponseChannel,
    HadamardResponseChannel,
    HighLowHadamardResponseChannel,
)
from skldp.channels._general_hadamard import BLOCKING_RULES, hadamard_blocking
from skldp.exceptions import InvalidParameterError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = ["BlockHadamardResponse", "HadamardResponse", "HighLowHadamardResponse", "grid_blocks"]


def grid_blocks(shape: tuple[int, int], n_blocks: tuple[int, int]) -> NDArray[np.int64]:
    """Block labels of a 2-D grid of cells cut into ``n_blocks[0] x n_blocks[1]`` rectangles.

    Cell ``(i, j)`` of a grid with ``shape = (n_rows, n_cols)`` has the flat index
    ``i * n_cols + j`` (row-major, e.g. ``lat_index * 350 + lon_index``) and lies in block
    ``(i * m1 // n_rows) * m2 + (j * m2 // n_cols)``: rows and columns are each split into
    equal contiguous parts (sizes differ by at most one when they do not divide). This is the
    partition of the Gowalla experiment of Acharya et al. (ICML 2020, Section 7.2), where a
    125 x 350 grid of 0.2-degree cells is cut into (5, 7), (25, 35) or (25, 70) rectangles.

    Parameters
    ----------
    shape : tuple of int (n_rows, n_cols)
        The grid.
    n_blocks : tuple of int (m1, m2)
        Parts along rows and along columns, 1 <= m1 <= n_rows and 1 <= m2 <= n_cols.

    Returns
    -------
    labels : ndarray of int64 of shape (n_rows * n_cols,)
        The block of each flat cell index; pass it as ``blocks=`` with
        ``categories=range(n_rows * n_cols)``.

    Examples
    --------
    >>> from skldp import grid_blocks
    >>> grid_blocks((4, 6), (2, 3)).reshape(4, 6)
    array([[0, 0, 1, 1, 2, 2],
           [0, 0, 1, 1, 2, 2],
           [3, 3, 4, 4, 5, 5],
           [3, 3, 4, 4, 5, 5]])
    """
    if not is_list_like(shape) or len(shape) != 2:
        raise ValueError(f"shape must be a pair (n_rows, n_cols); got {shape!r}")
    if not is_list_like(n_blocks) or len(n_blocks) != 2:
        raise ValueError(f"n_blocks must be a pair (m1, m2); got {n_blocks!r}")
    n_rows = check_int(shape[0], "shape[0]")
    n_cols = check_int(shape[1], "shape[1]")
    m1 = check_int(n_blocks[0], "n_blocks[0]")
    m2 = check_int(n_blocks[1], "n_blocks[1]")
    if m1 > n_rows or m2 > n_cols:
        raise ValueError(f"cannot cut a {n_rows} x {n_cols} grid into {m1} x {m2} non-empty blocks")
    row_block = np.arange(n_rows, dtype=np.int64) * m1 // n_rows
    col_block = np.arange(n_cols, dtype=np.int64) * m2 // n_cols
    return (row_block[:, None] * m2 + col_block[None, :]).ravel()


@substitute(channel_type="HadamardResponseChannel or GeneralHadamardResponseChannel")
@hyperparameters
class HadamardResponse(BasePrivatizer):
    r"""Hadamard response: report a random column of the Hadamard row of the true value.

    Value x owns a row of a Sylvester Hadamard matrix; its report is a uniform column where
    that row is +1 with boosted probability, otherwise any other column. In the single-block
    form (``blocking=1``) all k values share one matrix of size
    :math:`K = 2^{\lceil \log_2(k + 1) \rceil}` and the keep probability is
    :math:`e^\varepsilon/(1 + e^\varepsilon)`: the sample-optimal mechanism of the
    high-privacy regime, whose per-count variance stays near n however large epsilon is. The
    general form of the same paper cuts the domain into B blocks of a matrix of size b and
    also randomizes the block, which brings the variance down to about
    :math:`8/(n(e^\varepsilon - 1))` per item for large epsilon. Both are epsilon-LDP, send
    about :math:`\log_2 k` bits, and are estimated by fast Walsh-Hadamard transforms of the
    report counts (one per block). The default picks the form and the block size with the
    smaller exact variance for k and epsilon.

    Read more in the :ref:`User Guide <hadamard_response>`.

    {privatizer_parameters_section}
    blocking : {{"auto", "paper"}} or int, default="auto"
        How the domain is cut into Hadamard blocks. ``"auto"``: the block size b (a power of
        two, up to the single block) with the smallest exact mean variance at the uniform
        distribution, and :math:`B = \lceil k/(b - 1) \rceil` blocks; it is the single block
        for small epsilon (about 1 or less) and a blocked form above. ``"paper"``: the rule of
        Acharya, Sun and Zhang's code, :math:`B = 2^{\lfloor \log_2 \min(e^\varepsilon, 2k)
        \rfloor}` (to reproduce their numbers). An int B: that many blocks; ``blocking=1`` is
        the single-block form (:class:`~skldp.channels.HadamardResponseChannel`, unchanged).

    {privatizer_attributes_section}

    See Also
    --------
    BlockHadamardResponse : The same inside each block of a partition (block-structured LDP).
    HighLowHadamardResponse : Hadamard response for sensitive values only (high-low LDP).

    Notes
    -----
    Single block:

    .. math::

        Q(y \mid x) = \frac{2 e^\varepsilon}{K (1 + e^\varepsilon)} \text{ if }
        H_K[x + 1, y] = 1, \qquad \frac{2}{K (1 + e^\varepsilon)} \text{ otherwise;}

    :math:`\hat p_x = c' (H_K f)[x + 1]` with :math:`c' = (e^\varepsilon + 1)/(e^\varepsilon
    - 1)` and f the report frequencies, of variance :math:`(c'^2 - p_x^2)/n`.

    General form: x has block :math:`\beta(x) = \lfloor x/(b - 1) \rfloor` and row
    :math:`r(x) = (x \bmod (b - 1)) + 1`; with :math:`D = 2B - 1 + e^\varepsilon`,
    :math:`Q(y \mid x) = 2e^\varepsilon/(bD)` on the b/2 columns of x's block where row r(x)
    is +1 and :math:`2/(bD)` on every other of the Bb outputs. The estimate
    :math:`\hat p_x = D/(e^\varepsilon - 1) (H_b f_{\beta(x)})[r(x)]` has variance
    :math:`[D(2 + (e^\varepsilon - 1) F_{\beta(x)})/(e^\varepsilon - 1)^2 - p_x]/n`, F the mass
    of x's block.

    References
    ----------
    .. [1] J. Acharya, Z. Sun and H. Zhang, "Hadamard Response: Estimating Distributions
       Privately, Efficiently, and with Little Communication", AISTATS 2019.

    Examples
    --------
    >>> from skldp import HadamardResponse
    >>> hr = HadamardResponse(epsilon=1.0, categories=list("abcde"), random_state=0)
    >>> hr.fit_transform(list("aabce")).shape
    (5, 1)
    >>> hr.channel_.n_outputs, hr.bits_per_report
    (8, 3)
    >>> big = HadamardResponse(epsilon=5.0, categories=list(range(22_000))).fit([[0]])
    >>> big.channel_.block_size, big.channel_.n_blocks, big.bits_per_report
    (256, 87, 15)
    """

    epsilon: float = field(default=1.0, kw_only=False)
    blocking: str | int = "auto"

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "blocking": [Options(*BLOCKING_RULES), Interval("int", 1, None)],
    }

    def _make_channel(self, categories, column):
        k = len(categories)
        block_size, n_blocks = hadamard_blocking(k, self.epsilon, self.blocking)
        if n_blocks == 1:
            return HadamardResponseChannel(self.epsilon, k)
        return GeneralHadamardResponseChannel(self.epsilon, k, block_size, n_blocks)


@substitute()
@hyperparameters
class BlockHadamardResponse(BasePrivatizer):
    r"""Hadamard response inside the block of the true value: block-structured LDP.

    The domain is cut into blocks (cities, regions, grid rectangles); a report reveals the
    block of the true value and hides the value within its block by Hadamard response on a
    Hadamard matrix of the block's own size. Values in one block are epsilon-indistinguishable;
    values in different blocks are not protected from each other. The price of privacy drops
    from :math:`k^2` to :math:`\sum_j k_j^2` samples: with m equal blocks, m times fewer
    reports reach the same accuracy as LDP.

    Give the partition by exactly one of ``blocks``, ``n_blocks`` or ``block_size``.

    Read more in the :ref:`User Guide <context_aware>`.

    Parameters
    ----------
    epsilon : float, default=1.0
        Budget within a block; a positive finite number.
    {common_parameters}
    blocks : list of lists, mapping, callable, array-like or None, default=None
        The partition of the categories, as

        - a list of blocks, each a list of categories, covering each category once;
        - a mapping category -> block label (a dict or a pandas Series);
        - a callable called on each category and returning its block label;
        - an array of block labels aligned with ``categories`` (see :func:`grid_blocks`).
    n_blocks : int or None, default=None
        Cut the categories, in their order, into this many contiguous blocks of sizes that
        differ by at most one.
    block_size : int or None, default=None
        Cut the categories, in their order, into contiguous blocks of this size (the last one
        may be smaller).

    Attributes
    ----------
    {categories_}
    blocks_ : list of ndarray, or list of such lists for several columns
        The categories of each block, blocks numbered by their first category; the report of
        a value of block j carries j.
    channel_ : BlockHadamardResponseChannel or list of them
    privacy_ : BlockStructuredLDP or SequentialComposition
        The partition (as category indices) and epsilon.
    {n_features_in_}

    See Also
    --------
    HadamardResponse : One block: plain LDP.
    grid_blocks : Rectangular blocks of a 2-D grid of cells.

    Notes
    -----
    For value x in block j of size :math:`k_j`, with :math:`K_j = 2^{\lceil \log_2(k_j + 1)
    \rceil}` and x in position u of its block, the report is the pair (j, c), sent as the one
    integer :math:`\sum_{i < j} K_i + c`, with

    .. math::

        Q((j, c) \mid x) = \frac{2 e^\varepsilon}{K_j (1 + e^\varepsilon)} \text{ if }
        H_{K_j}[u + 1, c] = 1, \qquad \frac{2}{K_j (1 + e^\varepsilon)} \text{ otherwise.}

    The output alphabet has :math:`\sum_j K_j \le 2k` symbols
    (:math:`\le \lceil \log_2 k \rceil + 1` bits). The unbiased estimate has variance
    :math:`(c'^2 p(X_j) - p_x^2)/n` and :math:`E[d_{TV}] \le 2 c' \sqrt{3 \sum_j k_j^2 / n}`.

    References
    ----------
    .. [1] J. Acharya, K. Bonawitz, P. Kairouz, D. Ramage and Z. Sun, "Context-Aware Local
       Differential Privacy", ICML 2020, Section 6.

    Examples
    --------
    >>> from skldp import BlockHadamardResponse
    >>> bhr = BlockHadamardResponse(1.0, blocks=[["a", "b", "c"], ["d", "e"]],
    ...                             categories=list("abcde"), random_state=0)
    >>> bhr.fit_transform(list("aabde")).shape
    (5, 1)
    >>> bhr.channel_.block_outputs, bhr.bits_per_report
    (array([4, 4]), 3)
    >>> bhr.privacy_
    BlockStructuredLDP(epsilon=1, n_blocks=2, block_sizes=[3, 2])
    """

    epsilon: float = field(default=1.0, kw_only=False)
    blocks: ArrayLike | None = None
    n_blocks: int | None = None
    block_size: int | None = None

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "blocks": [None, Deferred("a partition of the categories, checked against them in fit")],
        "n_blocks": [None, Interval("int", 1)],
        "block_size": [None, Interval("int", 1)],
    }

    def _check_params(self):
        given = [n for n in ("blocks", "n_blocks", "block_size") if getattr(self, n) is not None]
        if len(given) != 1:
            raise InvalidParameterError(
                "give the partition by exactly one of blocks, n_blocks or block_size; got "
                + (", ".join(given) if given else "none of them")
            )

    def _make_channel(self, categories, column):
        labels = column_partition(self.blocks, self.n_blocks, self.block_size, categories, column)
        return BlockHadamardResponseChannel(self.epsilon, labels)

    def _derived_attributes(self):
        # The partition as categories: blocks numbered by their first category.
        blocks = [
            [cats[idx] for idx in ch.guarantee().blocks]
            for ch, cats in zip(self.channels_, self.categories_, strict=True)
        ]
        return {"blocks_": single_or_list(blocks)}


@substitute()
@hyperparameters
class HighLowHadamardResponse(BasePrivatizer):
    r"""High-low LDP: Hadamard response among the sensitive values, release of the others.

    Only the values in ``sensitive`` (a diagnosis, a home location) need protection: no report
    may make a sensitive value more than :math:`e^\varepsilon` times likelier than any other
    value, while a non-sensitive value may be revealed. A sensitive value is reported by
    Hadamard response over the s sensitive values; a non-sensitive value is reported exactly
    with probability :math:`(e^\varepsilon - 1)/(e^\varepsilon + 1)` and otherwise hides
    among the sensitive reports. The sample cost drops from :math:`k^2/\varepsilon^2` to
    :math:`s^2/\varepsilon^2 + k/\varepsilon`.

    Read more in the :ref:`User Guide <context_aware>`.

    Parameters
    ----------
    epsilon : float, default=1.0
        Budget of a sensitive value; a positive finite number.
    {common_parameters}
    sensitive : list of values, callable, list of lists, or None, default=None
        The sensitive categories (required): a list of categories, a callable called on each
        category that returns True for the sensitive ones, or (for several columns) one list
        per column. At least one category must be sensitive.

    Attributes
    ----------
    {categories_}
    sensitive_ : ndarray, or list of them for several columns
        The sensitive categories, in domain order.
    channel_ : HighLowHadamardResponseChannel or list of them
    privacy_ : HighLowLDP or SequentialComposition
        The sensitive set (as category indices) and epsilon.
    {n_features_in_}

    See Also
    --------
    HadamardResponse : Every value sensitive: plain LDP.
    BinaryRandomizedResponse : The binary case with one budget per direction.

    Notes
    -----
    With :math:`S = 2^{\lceil \log_2(s + 1) \rceil}`, the i-th sensitive value (i = 0, 1, ...)
    uses row i + 1 of :math:`H_S` (the paper's (13) prints row i, which is the all-ones row for
    the first value and not a channel; its Appendix C.1 uses row i + 1). Reports are the S
    columns followed by one symbol per non-sensitive value (:math:`S + k - s \le 2k` symbols).
    Estimates: :math:`\hat p_x = c' (H_S f_{[S]})[i + 1]` for sensitive x, of variance
    :math:`(c'^2 p([S]) - p_x^2)/n`, and :math:`\hat p_x = c' f_x` (the share of x's own
    symbol, never negative) otherwise, of variance :math:`(c' p_x - p_x^2)/n`.

    References
    ----------
    .. [1] J. Acharya, K. Bonawitz, P. Kairouz, D. Ramage and Z. Sun, "Context-Aware Local
       Differential Privacy", ICML 2020, Section 5.

    Examples
    --------
    >>> from skldp import HighLowHadamardResponse
    >>> hl = HighLowHadamardResponse(1.0, sensitive=["hiv", "cancer"],
    ...                              categories=["flu", "cold", "hiv", "cancer"], random_state=0)
    >>> hl.fit_transform(["flu", "hiv", "cold"]).shape
    (3, 1)
    >>> hl.sensitive_, hl.channel_.n_outputs
    (array(['hiv', 'cancer'], dtype=object), 6)
    >>> hl.privacy_
    HighLowLDP(epsilon=1, n_sensitive=2)
    """

    epsilon: float = field(default=1.0, kw_only=False)
    sensitive: ArrayLike | None = None

    _parameter_constraints = {
        **PRIVATIZER_CONSTRAINTS,
        "sensitive": [ListLike("a list of categories"), IsCallable()],
    }

    def _make_channel(self, categories, column):
        idx = column_sensitive(
            self.sensitive, categories, column, self.n_features_in_, allow_callable=True
        )
        if idx.size == 0:
            raise ValueError(
                f"no category of column {column} is sensitive; high-low LDP needs at least one "
                "(with none, nothing is protected)"
            )
        return HighLowHadamardResponseChannel(self.epsilon, len(categories), idx)

    def _derived_attributes(self):
        sensitive = [
            cats[ch.sensitive] for ch, cats in zip(self.channels_, self.categories_, strict=True)
        ]
        return {"sensitive_": single_or_list(sensitive)}

"""Frequency oracles of the benchmark literature: local hashing (OLH, BLH), subset selection."""

from __future__ import annotations

from dataclasses import field

from skldp.privatizers._base import BasePrivatizer, hyperparameters
from skldp._docstring import substitute
from skldp._validation import CATEGORIES, POSITIVE_EPSILON, RANDOM_STATE, Boolean, Interval
from skldp.channels import LocalHashingChannel, SubsetSelectionChannel
from skldp.channels._local_hashing import MAX_BUCKETS, default_buckets
from skldp.channels._subset_selection import optimal_subset_size


@substitute(channel_type="LocalHashingChannel")
@hyperparameters
class LocalHashing(BasePrivatizer):
    r"""Local hashing: hash the value with a fresh public hash function, then k-RR on g buckets.

    Each report carries its own hash function :math:`H : [k] \to [g]`, drawn from an exactly
    pairwise-independent family, and the bucket :math:`H(x)` randomized by k-ary randomized
    response over the g buckets. With :math:`g = \mathrm{round}(e^\varepsilon) + 1` (the
    default) this is optimized local hashing (OLH); ``n_buckets=2`` is binary local hashing
    (BLH). OLH has the variance of optimized unary encoding with reports of
    :math:`O(\log k)` bits instead of k. It is epsilon-LDP.

    Read more in the :ref:`User Guide <local_hashing>`.

    {privatizer_parameters_section}
    n_buckets : int or None, default=None
        g >= 2, the range of the hash functions. None is OLH's
        :math:`\mathrm{round}(e^\varepsilon) + 1`, capped at k (see
        ``skldp.channels._local_hashing.default_buckets``); 2 is BLH.

    {privatizer_attributes_section}

    See Also
    --------
    SubsetSelection, OptimizedUnaryEncoding, skldp.EMEstimator

    Notes
    -----
    A report is the hash function's seed (a, b) and the noisy bucket y, the m + 2 numbers of
    :math:`\mathbb{Z}_g` (m binary digits of the category index) written in
    :math:`\lceil\log_2 g\rceil` bits each, with :math:`H_{a,b}(x) = (a \cdot \beta(x) + b)
    \bmod g`. The server's statistic is the support count :math:`C(x) = \#\{i : H_i(x) =
    y_i\}`; with :math:`p = e^\varepsilon / (e^\varepsilon + g - 1)` and :math:`q = 1/g`,

    .. math::

        \hat f(x) = \frac{C(x)/n - q}{p - q}, \qquad
        \mathrm{Var}\,\hat f(x) = \frac{q(1-q)}{n(p-q)^2} + \frac{f(x)(1-p-q)}{n(p-q)}
        \quad\text{(fixed inputs, Wang et al.)},

    and at :math:`g = e^\varepsilon + 1` the first term is
    :math:`4e^\varepsilon / (n(e^\varepsilon - 1)^2)`. Counting the support costs O(n k)
    integer work, done in vectorized blocks.

    References
    ----------
    .. [1] T. Wang, J. Blocki, N. Li and S. Jha, "Locally Differentially Private Protocols for
       Frequency Estimation", USENIX Security 2017.

    Examples
    --------
    >>> from skldp import LocalHashing
    >>> lh = LocalHashing(epsilon=1.0, categories=[list(range(10))], random_state=0)
    >>> lh.fit_transform([[3], [1], [4], [1]]).shape
    (4, 12)
    >>> lh.channel_.n_buckets, lh.channel_.bits_per_report
    (4, 12)
    """

    epsilon: float = field(default=1.0, kw_only=False)
    n_buckets: int | None = None

    _parameter_constraints = {
        "epsilon": [POSITIVE_EPSILON],
        "n_buckets": [None, Interval("int", 2, MAX_BUCKETS)],
        "categories": [CATEGORIES],
        "random_state": [RANDOM_STATE],
    }

    def _make_channel(self, categories, column):
        k = len(categories)
        g = default_buckets(self.epsilon, k) if self.n_buckets is None else self.n_buckets
        return LocalHashingChannel(self.epsilon, k, g)


@substitute(channel_type="SubsetSelectionChannel")
@hyperparameters
class SubsetSelection(BasePrivatizer):
    r"""Subset selection: report d categories, the true one among them with boosted probability.

    The report is a subset S of d categories: the true value is in it with probability
    :math:`d e^\varepsilon / (d e^\varepsilon + k - d)`, and the other members are drawn
    uniformly without replacement, so that every subset containing x is :math:`e^\varepsilon`
    times as likely as every subset without it. d = 1 is k-ary randomized response; the
    default d (about :math:`k / (e^\varepsilon + 1)`) minimizes the variance, which is then
    order-optimal in every privacy regime. It is epsilon-LDP.

    Read more in the :ref:`User Guide <subset_selection>`.

    {privatizer_parameters_section}
    subset_size : int or None, default=None
        d in [1, k - 1]. None takes the d that minimizes the variance
        (``skldp.channels._subset_selection.optimal_subset_size``).
    sparse_output : bool, default=False
        Return the reports as a scipy.sparse CSR matrix holding the d indices of each subset
        (index reports) instead of k indicator bits per row; estimators then need ``channel=``.

    {privatizer_attributes_section}

    See Also
    --------
    LocalHashing, RandomizedResponse, skldp.EMEstimator

    Notes
    -----
    .. math::

        Q(S \mid x) = \frac{e^\varepsilon [x \in S] + [x \notin S]}
        {\binom{k-1}{d-1} e^\varepsilon + \binom{k-1}{d}}, \qquad
        \hat f(x) = \frac{t_x / n - q_s}{p_s - q_s},

    with :math:`t_x` the number of reports containing x,
    :math:`p_s = d e^\varepsilon / (d e^\varepsilon + k - d)` and
    :math:`q_s = (p_s (d - 1) + (1 - p_s) d) / (k - 1)`; the variance of each coordinate is
    :math:`m_x (1 - m_x) / (n (p_s - q_s)^2)` with :math:`m_x = q_s + (p_s - q_s) f(x)`.

    References
    ----------
    .. [1] M. Ye and A. Barg, "Optimal Schemes for Discrete Distribution Estimation under
       Locally Differential Privacy", IEEE Trans. Inf. Theory 64(8), 2018.
    .. [2] S. Wang, L. Huang, P. Wang, Y. Nie, H. Xu, W. Yang, X.-Y. Li and C. Qiao, "Mutual
       Information Optimally Local Private Discrete Distribution Estimation", 2016.

    Examples
    --------
    >>> from skldp import SubsetSelection
    >>> ss = SubsetSelection(epsilon=1.0, categories=[list(range(10))], random_state=0)
    >>> reports = ss.fit_transform([[3], [1], [4], [1]])
    >>> reports.shape, ss.channel_.subset_size
    ((4, 10), 2)
    >>> reports.sum(axis=1).tolist()
    [2, 2, 2, 2]
    """

    epsilon: float = field(default=1.0, kw_only=False)
    subset_size: int | None = None
    sparse_output: bool = False

    _parameter_constraints = {
        "epsilon": [POSITIVE_EPSILON],
        "subset_size": [None, Interval("int", 1, None)],
        "categories": [CATEGORIES],
        "random_state": [RANDOM_STATE],
        "sparse_output": [Boolean()],
    }

    def _sparse_output(self):
        return bool(self.sparse_output)

    def _make_channel(self, categories, column):
        k = len(categories)
        d = optimal_subset_size(self.epsilon, k) if self.subset_size is None else self.subset_size
        if d > k - 1:
            raise ValueError(
                f"subset_size must lie in [1, k - 1] = [1, {k - 1}] for column {column}; got {d}"
            )
        return SubsetSelectionChannel(self.epsilon, k, d)

r"""Likelihood models: the log-likelihood of a chunk of reports as a function of p.

A channel's :meth:`~skldp.channels.Channel.em_model` reads reports into a model; maximum
likelihood (EM in :class:`skldp.EMEstimator`, or any solver on the simplex) then works on the
model alone. Every model has one form,

.. math::

    L(p) = \frac{1}{n}\Big(c + \sum_j w_j \log (A p)_j\Big), \qquad
    \nabla L(p) = \frac{1}{n} A^\top \frac{w}{A p},

with non-negative weights :math:`w`, a constant :math:`c` and a structured linear map
:math:`A` (``forward``; ``adjoint`` is :math:`A^\top`): for a symbol channel the rows of A
are the outputs (:math:`A = Q^\top`) and w the output counts; for a bit-vector channel they
are the reports themselves (relative likelihoods) with weight one. Since
:math:`\sum_x p_x \nabla L(p)_x = \sum_j w_j / n = 1` on the simplex, the EM step is
:math:`p \odot \nabla L(p)`: :meth:`LikelihoodModel.multipliers` gives
:math:`\nabla L(p)` (the EM multipliers) with :math:`L(p)`, and is what the solver of
:class:`skldp.EMEstimator` calls.

The model owns the statistics (``merge`` joins two chunks' models) and whatever it keeps
between evaluations, so the channel stays an immutable value. A model pickles (through
``__reduce__``: its channel and its statistics) without its caches.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

import numpy as np

from skldp.channels._abilities import RevealedGroups, SquaredAdjoint

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import NDArray

    from skldp.channels._base import Channel


class LikelihoodModel(ABC):
    r"""The mean log-likelihood of some reports under a channel, as a function of p.

    Subclasses write :meth:`forward`, :meth:`adjoint`, :attr:`weights`, :attr:`constant`,
    :attr:`statistics` and :meth:`merge`; :meth:`multipliers` (the solver's one call: the EM
    multipliers and the mean log-likelihood), :meth:`log_likelihood`, :meth:`gradient` and
    :meth:`hessian_product` follow from them, and :meth:`curvature_diagonal` gives the
    Hessian's diagonal where the model has a cheap form of it.

    Attributes
    ----------
    channel : Channel
        The channel whose likelihood this is.
    n_reports : float
        Number of reports n.
    """

    channel: Any = None  # a Channel, set by each subclass's __init__

    @property
    @abstractmethod
    def n_reports(self) -> float:
        """Number of reports n."""

    @property
    @abstractmethod
    def statistics(self) -> Any:
        """The channel's plain statistics of the reports (for :meth:`Channel.unbiased`)."""

    @abstractmethod
    def merge(self, other: LikelihoodModel) -> LikelihoodModel:
        """The model of the reports of ``self`` and ``other`` together."""

    @property
    @abstractmethod
    def weights(self) -> NDArray[np.float64]:
        """The weights w of the rows of A (output counts, or ones for reports)."""

    @property
    def constant(self) -> float:
        """The constant c of the log-likelihood (log-scales of bit-vector reports)."""
        return 0.0

    @abstractmethod
    def forward(self, p: NDArray[np.float64]) -> NDArray[np.float64]:
        """``A p``: the (relative) probability of each row (output, pattern or report)."""

    @abstractmethod
    def adjoint(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``A^T v``, of length ``n_inputs``."""

    def _check_merge(self, other):
        if not isinstance(other, type(self)) or other.channel != self.channel:
            theirs = other.channel if isinstance(other, LikelihoodModel) else other
            raise ValueError(
                f"cannot merge the likelihood of {self.channel!r} with that of {theirs!r}: "
                "they are different mechanisms"
            )

    def _ratio(self, p):
        """``(w / A p, L(p))`` with rows of zero weight left out (ratio 0 there)."""
        return self._ratio_from(self.forward(p))

    def _ratio_from(self, t):
        """``(w / t, (c + w . log t) / n)`` for the row values ``t = A p`` (0 where w is 0)."""
        w = self.weights
        seen = w > 0
        ratio = np.zeros_like(t)
        # A trial point of a solver may give an observed row probability zero: its
        # log-likelihood is -inf and the solver rejects it, so the infinities and NaNs below
        # are expected there, not errors worth a warning.
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio[seen] = w[seen] / t[seen]
            ll = (self.constant + float(np.dot(w[seen], np.log(t[seen])))) / self.n_reports
        return ratio, ll

    @property
    def mass_groups(self) -> NDArray[np.intp] | None:
        r"""A group label per input where inputs of different groups share no output, or None.

        Then the likelihood separates, :math:`\sum_G N_G \log p(G) + \ldots` with
        :math:`N_G` the reports of group G, so the maximum-likelihood mass of a group is its
        share of the reports and a solver may hold the groups' masses fixed (blocks of
        :class:`~skldp.channels.BlockHadamardResponseChannel`). None (the default): one group.
        """
        return None

    def curvature_diagonal(self, q: NDArray[np.float64]) -> NDArray[np.float64] | None:
        r"""The diagonal of :math:`A^\top \mathrm{diag}(q) A`: :math:`\sum_j q_j A_{jx}^2`.

        With :math:`q = w / (A p)^2` (0 where :math:`w_j = 0`) it is n times minus the
        diagonal of the Hessian of L at p,

        .. math:: \frac{\partial^2 L}{\partial p_x^2} = -\frac1n \sum_j
                  \frac{w_j}{(A p)_j^2} A_{jx}^2,

        the preconditioner of the Newton steps of :class:`~skldp.EMEstimator` (whose solver
        keeps :math:`A p` from the gradient, so this takes q rather than p). This is the one
        place of that diagonal. A model returns None when it has no form cheaper than the
        dense matrix (the default); the models of the unary, bit-vector and Hadamard
        channels have one product's cost.
        """
        return None

    def multipliers(
        self, p: NDArray[np.float64], *, row_values: NDArray[np.float64] | None = None
    ) -> tuple[NDArray[np.float64], float]:
        r"""The EM multipliers at p and the mean log-likelihood :math:`L(p)`.

        The multipliers are :math:`g = \nabla L(p) = A^\top (w / A p) / n`, at every input
        (also where :math:`p_x = 0`); on the simplex :math:`\sum_x p_x g_x = 1`, the EM step
        is :math:`p \odot g`, and :math:`\log \max_x g_x` bounds the distance of
        :math:`L(p)` to the maximum. This is the one evaluation the maximum-likelihood solver
        of :class:`skldp.EMEstimator` makes: one forward map and one adjoint.

        Parameters
        ----------
        p : ndarray of shape (n_inputs,)
            A point of the simplex (non-negative entries summing to one).
        row_values : ndarray or None, default=None
            :math:`A p` (``forward(p)``) when the caller has it already (the solver keeps it
            for the Hessian products at the same point); None computes it.

        Returns
        -------
        g : ndarray of shape (n_inputs,)
            The multipliers; all NaN when some report has probability zero at p.
        log_likelihood : float
            :math:`L(p)`; ``-inf`` when some report has probability zero at p (a point a
            solver must reject).
        """
        p = np.asarray(p, dtype=float)
        t = self.forward(p) if row_values is None else row_values
        ratio, ll = self._ratio_from(t)
        if not ll > -np.inf:
            return np.full(p.shape, np.nan), ll
        return self.adjoint(ratio) / self.n_reports, ll

    def log_likelihood(self, p: NDArray[np.float64]) -> float:
        """The mean log-likelihood :math:`L(p)` of the reports."""
        return self._ratio(np.asarray(p, dtype=float))[1]

    def gradient(self, p: NDArray[np.float64]) -> NDArray[np.float64]:
        r"""The gradient :math:`\nabla L(p) = A^\top (w / A p) / n` (length ``n_inputs``)."""
        ratio, _ = self._ratio(np.asarray(p, dtype=float))
        return self.adjoint(ratio) / self.n_reports

    def hessian_product(
        self, p: NDArray[np.float64], v: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        r"""The Hessian of L at p applied to v: :math:`-A^\top (w \odot (A v) / (A p)^2) / n`.

        With :meth:`gradient`, what a Newton or trust-region solver on the simplex needs;
        it costs two forward maps and one adjoint, never a dense k x k matrix.
        """
        p = np.asarray(p, dtype=float)
        t = self.forward(p)
        s = self.forward(np.asarray(v, dtype=float))
        w = self.weights
        seen = w > 0
        q = np.zeros_like(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            q[seen] = w[seen] * s[seen] / t[seen] ** 2
        return -self.adjoint(q) / self.n_reports


class MultinomialModel(LikelihoodModel):
    r"""The multinomial likelihood of the output counts of a symbol channel.

    With counts N of n reports and :math:`m = Q^\top p` (the channel's ``forward``),
    :math:`L(p) = \sum_y N_y \log m_y / n` and the EM multipliers are
    :math:`Q (N / m) / n`: two structured products, never a dense matrix.

    Parameters
    ----------
    channel : SymbolChannel
    counts : array-like of shape (n_outputs,)
        Output counts; any non-negative numbers (expected counts too).
    """

    def __init__(self, channel: Channel, counts: NDArray[np.float64]) -> None:
        self.channel = channel
        counts = np.asarray(counts)
        if counts.shape != (channel.n_outputs,) or counts.dtype.kind not in "iuf":
            raise ValueError(
                f"counts must be {channel.n_outputs} numbers; got shape {counts.shape}, "
                f"dtype {counts.dtype}"
            )
        if not np.all(np.isfinite(counts)) or np.any(counts < 0):
            raise ValueError("counts must be finite and non-negative")
        self.counts = counts

    def __reduce__(self):
        return (MultinomialModel, (self.channel, self.counts))

    @property
    def n_reports(self) -> float:
        return float(self.counts.sum())

    @property
    def statistics(self) -> Any:
        return self.counts

    @property
    def weights(self) -> NDArray[np.float64]:
        return self.counts

    def merge(self, other: LikelihoodModel) -> LikelihoodModel:
        self._check_merge(other)
        return MultinomialModel(self.channel, self.counts + other.counts)

    def forward(self, p: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.channel._forward(p)

    def adjoint(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.channel._adjoint(v)

    @property
    def mass_groups(self) -> NDArray[np.intp] | None:
        channel = self.channel
        return channel.revealed_groups if isinstance(channel, RevealedGroups) else None

    def curvature_diagonal(self, q: NDArray[np.float64]) -> NDArray[np.float64] | None:
        r""":math:`\sum_y q_y Q_{xy}^2` from a :class:`~skldp.channels.SquaredAdjoint`
        channel (the Hadamard family), else None."""
        channel = self.channel
        if not isinstance(channel, SquaredAdjoint):
            return None
        return channel.adjoint_squared(np.asarray(q, dtype=float))

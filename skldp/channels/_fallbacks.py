r"""Structured defaults of the channel interface for large channels that write only the hooks.

A channel that writes only ``_forward`` and ``_adjoint`` (with ``_key``, ``guarantee`` and
``_sample``) still has a variance, second moments and an unbiased estimate; for a small
channel the base class takes them from the dense matrix. For a large one it looks for the
form most channels written from scratch have, a diagonal plus a rank-one matrix,

.. math::

    Q^\top p = d \odot p + q\, (c^\top p), \qquad Q(y \mid x) = d_x [y = x] + q_y c_x,

(k-ary randomized response: :math:`d = \text{keep} - \text{other}`, :math:`q = \text{other}`,
:math:`c = 1`; any "keep the truth with probability :math:`t_x`, else draw from a fixed
distribution"), which it finds from seven products with the forward and adjoint maps
(:meth:`DiagonalPlusRankOne.probe`). The inverse is then a rank-one update of a diagonal
(Sherman-Morrison), and every moment of the unbiased estimate has a closed form in
:math:`O(k)`. A large channel of another form has to write the hook (the base class raises
:class:`~skldp.exceptions.MissingHookError` naming it) rather than build a dense matrix.
"""

from __future__ import annotations

import numpy as np

#: Relative agreement with the random probes that a found form must reach.
_PROBE_RTOL = 1e-9

#: Most distinct (c_z, c_z^2 / d_z) pairs for the closed-form worst-case second moment.
_MAX_DISTINCT_COLUMNS = 16


class DiagonalPlusRankOne:
    r"""A square channel whose forward map is :math:`p \mapsto d \odot p + q\,(c^\top p)`.

    With :math:`\gamma = \sum_x c_x q_x / d_x`, :math:`h = c / d` and
    :math:`\beta = q / (d (1 + \gamma))`, the unbiased estimate from the mean statistic t is
    :math:`\hat p = t / d - \beta\, (h^\top t)` (Sherman-Morrison), so one report of output
    y contributes :math:`g_x(y) = [x = y] / d_x - \beta_x h_y` to :math:`\hat p_x`, and with
    :math:`m = Q^\top p`,

    .. math::

        n \operatorname{Var} \hat p_x = \frac{m_x}{d_x^2} - \frac{2 \beta_x h_x m_x}{d_x}
        + \beta_x^2 \sum_y m_y h_y^2 - \Big(\frac{m_x}{d_x} - \beta_x\, h^\top m\Big)^2 .

    The second moment of one report's contribution to :math:`\hat p_x` when its input is z,
    :math:`M_{xz} = \sum_y Q(y \mid z)\, g_x(y)^2`, is
    :math:`c_z (q_x A_x + \beta_x^2 S) + \beta_x^2 c_z^2 / d_z` for :math:`z \ne x`, with
    :math:`A_x = 1 / d_x^2 - 2 \beta_x h_x / d_x` and :math:`S = \sum_y q_y h_y^2`.

    Parameters
    ----------
    d, q, c : ndarray of shape (k,)
        The diagonal and the two factors of the rank-one part (``d`` without zeros).
    """

    def __init__(self, d, q, c):
        self.d, self.q, self.c = d, q, c
        gamma = float(np.sum(c * q / d))
        self.h = c / d
        self.beta = q / (d * (1.0 + gamma))

    @classmethod
    def probe(cls, channel):
        """The form of ``channel`` if it has one, else None.

        Reads the channel through its ``_forward`` and ``_adjoint`` hooks only: the images
        of two unit vectors and of the all-ones vector give d, q and c (with :math:`c_0 = 1`,
        the scale of a rank-one product being free), one more unit vector on each side fills
        the entries those leave out, and the form is kept only if it reproduces both maps on
        a random vector to a relative ``1e-9`` (a channel of another form matches a random
        vector with probability zero). Needs ``n_statistics == n_inputs >= 3``.
        """
        k = channel.n_inputs
        if channel.n_statistics != k or k < 3:
            return None
        forward, adjoint = channel._forward, channel._adjoint

        def unit(i):
            e = np.zeros(k)
            e[i] = 1.0
            return e

        f0 = np.asarray(forward(unit(0)), dtype=float)
        q = f0.copy()  # q_y c_0 for y != 0; scale c_0 = 1
        rest = np.abs(f0[2:])
        if not np.all(np.isfinite(f0)):
            return None
        if rest.max() == 0.0 and f0[1] == 0.0:
            q[:] = 0.0  # no rank-one part seen from input 0: try a plain diagonal
            c = np.zeros(k)
        else:
            if rest.max() == 0.0:
                return None
            j = 2 + int(np.argmax(rest))  # an output y >= 2 with q_y != 0
            f1 = np.asarray(forward(unit(1)), dtype=float)
            ratio = f1[j] / f0[j]  # c_1 / c_0
            if not (np.isfinite(ratio) and ratio != 0.0):
                return None
            q[0] = f1[0] / ratio
            aj = np.asarray(adjoint(unit(j)), dtype=float)  # c_x q_j for x != j
            c = aj / q[j]
            other = 0 if q[0] != 0.0 else 1
            if q[other] == 0.0:
                return None
            fj = np.asarray(forward(unit(j)), dtype=float)  # q_y c_j for y != j
            c[j] = fj[other] / q[other]
        d = np.asarray(forward(np.ones(k)), dtype=float) - q * c.sum()
        if not (np.all(np.isfinite(d)) and np.all(d != 0.0)):
            return None
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(c))):
            return None
        u = np.random.default_rng(20_240_601).uniform(0.5, 1.5, size=k)
        for got, diag, outer, inner in (
            (forward(u), d * u, q, float(c @ u)),
            (adjoint(u), d * u, c, float(q @ u)),
        ):
            want = diag + outer * inner
            scale = np.abs(diag) + np.abs(outer) * abs(inner)
            if not np.all(np.abs(np.asarray(got, dtype=float) - want) <= _PROBE_RTOL * scale):
                return None
        gamma = float(np.sum(c * q / d))
        if not (np.isfinite(gamma) and abs(1.0 + gamma) > 1e-12):
            return None
        return cls(d, q, c)

    def solve(self, t):
        r"""The p with :math:`Q^\top p = t`: the unbiased estimate from a mean statistic t."""
        return t / self.d - self.beta * float(self.h @ t)

    def variance(self, m, n):
        """Variance of each entry of the unbiased estimate; ``m = Q^T p``, n reports."""
        d, h, beta = self.d, self.h, self.beta
        second = m / d**2 - 2.0 * beta * h * m / d + beta**2 * float(m @ h**2)
        mean = m / d - beta * float(h @ m)
        return (second - mean**2) / n

    def second_moments(self):
        r"""``(own, worst)``: :math:`M_{xx}` and :math:`\max(0, \max_{z \ne x} M_{xz})`.

        None when the pairs :math:`(c_z, c_z^2 / d_z)` take more than 16 distinct values
        (the maximum over z would need a convex hull).
        """
        d, q, c, h, beta = self.d, self.q, self.c, self.h, self.beta
        total = float(q @ h**2)
        a = 1.0 / d**2 - 2.0 * beta * h / d
        own = (d + q * c) * a + beta**2 * (d * h**2 + c * total)
        alpha, b = q * a + beta**2 * total, beta**2
        points, first, counts = np.unique(
            np.stack([c, c * h]), axis=1, return_index=True, return_counts=True
        )
        if points.shape[1] > _MAX_DISTINCT_COLUMNS:
            return None
        worst = np.zeros_like(own)
        pairs = zip(points.T.tolist(), first.tolist(), counts.tolist(), strict=True)
        for (u, v), x, count in pairs:
            value = alpha * u + b * v
            if count == 1:  # z = x is the only input with this pair: not a z != x for x
                value[x] = -np.inf
            np.maximum(worst, value, out=worst)
        return own, worst

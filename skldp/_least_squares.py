"""Minimum-norm least squares for sparse 0/1 incidence matrices (cohort-hashed channels).

A documented internal module: the open-alphabet channels (``skldp.channels``) solve their
unbiased estimate with :class:`CohortLeastSquares`, and :class:`skldp.CandidateEstimator`
(``skldp.estimators``) solves the same system restricted to the reported candidates. The
linear algebra lives here, between the two packages, so that neither imports a private name
of the other. The limits below are module attributes, read at each use (tests lower them).
"""

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, pinvh
from scipy.sparse.linalg import LinearOperator, lsqr

__all__ = ["CohortLeastSquares", "GramInverse"]

#: Largest ``min(n_inputs, C k)`` for which the least-squares solve is direct (a pseudo-inverse
#: of the smaller Gram matrix); above it LSQR iterates on the sparse H.
DIRECT_SOLVE_LIMIT = 300

#: Stopping tolerance of LSQR (relative residual of the normal equations): far below the
#: statistical error of any estimate.
LSQR_TOL = 1e-10

#: Largest ``min(n_inputs, C k)`` for which exact variances form the pseudo-inverse of H.
VARIANCE_LIMIT = 3000


class GramInverse:
    """Applies the pseudo-inverse of the symmetric Gram matrix G (``apply(B) = G^+ B``).

    ``G + N N^T`` is factored by Cholesky, where the columns of N span a known part of the null
    space of G (the cohort structure, below); when that matrix is still singular, an
    eigendecomposition (:func:`scipy.linalg.pinvh`) is used instead. Since ``N N^T`` acts on
    the orthogonal complement of the range of G, the inverse equals ``G^+`` on that range.
    """

    def __init__(self, G, null=None):
        self.null = null
        M = G if null is None else G + null @ null.T
        try:
            self.chol = cho_factor(M, lower=False, check_finite=False)
            # Cholesky of a singular matrix can succeed in floating point: accept it only if
            # the factor is well conditioned.
            d = np.abs(np.diag(self.chol[0]))
            if d.min() <= 1e-4 * d.max():
                raise LinAlgError("nearly singular")
            self.P = None
        except LinAlgError:
            self.chol = None
            self.P = pinvh(G)

    def apply(self, B):
        if self.chol is not None:
            return cho_solve(self.chol, B, check_finite=False)
        return self.P @ B


class CohortLeastSquares:
    """Minimum-norm least squares ``argmin ||H p - b||_2`` for a sparse 0/1 matrix H.

    Direct when the smaller Gram matrix is small, or H is nearly square (where iterations
    converge slowly): ``p = (H^T H)^+ H^T b`` (S <= R) or ``p = H^T (H H^T)^+ b``, both the
    minimum-norm solution ``H^+ b``. Otherwise LSQR from zero, which converges to the same
    solution.

    ``blocks=(C, k)`` declares that the R = C k rows form C cohorts of k buckets with exactly
    one 1 per cohort in every column (O-RR; O-RAPPOR with one hash). Then the differences of
    the cohorts' row indicators and the empty rows lie in the null space of ``H H^T``, which
    lets a Cholesky factorization replace the eigendecomposition.
    """

    def __init__(self, H, blocks=None):
        self.H = H
        R, S = H.shape
        small, large = min(R, S), max(R, S)
        self.direct = small <= DIRECT_SOLVE_LIMIT or (
            small <= VARIANCE_LIMIT and 2 * small >= large
        )
        self.tall = S <= R
        self.blocks = blocks
        self._gram = None
        self._op = None
        if self.direct:
            self._gram = self._gram_inverse()

    def _gram_inverse(self):
        H = self.H
        if self.tall:
            return GramInverse((H.T @ H).toarray())
        G = (H @ H.T).toarray()
        null = []
        if self.blocks is not None:
            C, k = self.blocks
            for c in range(1, C):
                v = np.zeros(C * k)
                v[:k] = 1.0
                v[c * k : (c + 1) * k] = -1.0
                null.append(v)
        empty = np.flatnonzero(np.diag(G) == 0)
        null.extend(np.eye(G.shape[0])[empty])
        return GramInverse(G, np.array(null).T if null else None)

    def solve(self, b):
        H = self.H
        if self.direct:
            if self.tall:
                return self._gram.apply(H.T @ b)
            return H.T @ self._gram.apply(b)
        if self.__dict__.get("_op") is None:
            HT = H.T.tocsr()  # both products on CSR matrices
            self._op = LinearOperator(
                H.shape, matvec=lambda x: H @ x, rmatvec=lambda y: HT @ y, dtype=float
            )
        return lsqr(
            self._op, b, atol=LSQR_TOL, btol=LSQR_TOL, conlim=1e12, iter_lim=20 * max(H.shape)
        )[0]

    def pseudo_inverse(self):
        """H^+ as a dense (S, R) array, or None when ``min(S, R) > VARIANCE_LIMIT``."""
        H = self.H
        if min(H.shape) > VARIANCE_LIMIT:
            return None
        if self._gram is None:
            self._gram = self._gram_inverse()
        if self.tall:
            return self._gram.apply(H.T.toarray())
        return H.T.toarray() @ self._gram.apply(np.eye(H.shape[0]))

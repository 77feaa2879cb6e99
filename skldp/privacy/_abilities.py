"""What a privatizer tells the privacy checks about itself: abilities it declares.

Part of the leaf of the privacy package: privatizers derive from these types, so this module
imports nothing from the privatizers, the estimators or the audit that reads them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import ArrayLike, NDArray

from skldp._domain import encode_parameter

__all__ = ["AuditInputs", "encode_audit_inputs"]


def encode_audit_inputs(inputs, categories):
    """The sorted distinct indices in ``categories`` of the audit's ``inputs`` (at least two).

    Shared by :func:`~skldp.privacy.audit` and the privatizers that choose their own audit
    rows, so that both refuse the same bad ``inputs`` with the same words.
    """
    if isinstance(inputs, (str, bytes)) or not np.iterable(inputs):
        raise TypeError(f"inputs must be a list of categories; got {inputs!r}")
    values = np.asarray(inputs, dtype=object).reshape(-1)
    idx = np.unique(encode_parameter(values, categories, 0, "inputs"))
    if idx.size < 2:
        raise ValueError("inputs must name at least two distinct categories of the domain")
    return idx


class AuditInputs(ABC):
    """The ability of a privatizer whose input rows are not single categories to be audited.

    :func:`~skldp.privacy.audit` feeds whole rows to ``transform``; a privatizer with this
    ability says which rows to try and which input symbol of its guarantee's domain each
    one is (for PUM, the pre-processed symbol of a (value, tag) row).
    """

    @abstractmethod
    def audit_inputs(
        self, inputs: ArrayLike | None = None, max_inputs: int = 8
    ) -> tuple[NDArray[Any], NDArray[np.int64]]:
        """Rows to audit, and the input symbol of the guarantee's domain of each.

        Returns
        -------
        rows : ndarray of shape (m, n_columns)
        symbols : ndarray of int of shape (m,)
        """

    def audit_rows(
        self, rows: NDArray[Any], n_samples: int, rng: np.random.Generator | None
    ) -> NDArray[Any]:
        """The rows ``transform`` is fed for ``n_samples`` trials of each row of ``rows``.

        By default each row repeated ``n_samples`` times, in order. A privatizer whose rows
        need more than the tested input per trial (the fresh person key of each report of a
        memoized privatizer) builds them here; ``rng`` (None: the operating system) draws
        whatever is random in them.
        """
        return np.repeat(rows, n_samples, axis=0)

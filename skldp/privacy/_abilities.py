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

__all__ = ["AuditInputs"]


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

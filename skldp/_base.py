"""Moved: the names that lived here, re-exported while other branches merge.

The privatizer base is :mod:`skldp.privatizers._base`, the estimator base
:mod:`skldp.estimators._base` (its fitted state in :mod:`skldp.estimators._state`), and the
hyperparameter machinery they share :mod:`skldp._params`. Import from those.
"""

from skldp._params import DocumentationLinkMixin, hyperparameters, single_or_list
from skldp.estimators._base import BaseDistributionEstimator
from skldp.estimators._reading import given_specs, keep_fitted_channel, read_reports
from skldp.estimators._state import ChunkStatistics, FitState, LazyAttribute
from skldp.privatizers._base import ACCOUNTANT, BasePrivatizer, check_accountant, n_rows

__all__ = [
    "ACCOUNTANT",
    "BaseDistributionEstimator",
    "BasePrivatizer",
    "ChunkStatistics",
    "DocumentationLinkMixin",
    "FitState",
    "LazyAttribute",
    "check_accountant",
    "given_specs",
    "hyperparameters",
    "keep_fitted_channel",
    "n_rows",
    "read_reports",
    "single_or_list",
]

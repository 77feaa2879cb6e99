"""Distribution estimators: recover p from reports through the channel interface."""

from skldp.estimators._em import EMEstimator
from skldp.estimators._empirical import EmpiricalEstimator
from skldp.estimators._projected import ProjectedEstimator
from skldp.estimators._sparse import SparseEstimator

__all__ = ["EmpiricalEstimator", "ProjectedEstimator", "EMEstimator", "SparseEstimator"]

"""Distribution estimators: recover p from reports through the channel interface."""

from skldp.estimators._candidates import CandidateEstimator
from skldp.estimators._em import EMEstimator
from skldp.estimators._means import MeanEstimator
from skldp.estimators._range_queries import RangeQueryEstimator
from skldp.estimators._heavy_hitters import HeavyHitterEstimator
from skldp.estimators._empirical import EmpiricalEstimator
from skldp.estimators._quantities import category_difference, category_mass, top_k_membership
from skldp.estimators._multidimensional import MultidimensionalEstimator
from skldp.estimators._personalized import PersonalizedEstimator, personalized_reconstruction
from skldp.estimators._projected import ProjectedEstimator, significance_threshold
from skldp.estimators._sparse import SparseEstimator

__all__ = [
    "EmpiricalEstimator",
    "ProjectedEstimator",
    "EMEstimator",
    "PersonalizedEstimator",
    "personalized_reconstruction",
    "significance_threshold",
    "CandidateEstimator",
    "SparseEstimator",
    "MultidimensionalEstimator",
    "MeanEstimator",
    "RangeQueryEstimator",
    "category_mass",
    "category_difference",
    "top_k_membership",
    "HeavyHitterEstimator",
]

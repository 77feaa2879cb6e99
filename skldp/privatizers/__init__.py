"""Privatizers: scikit-learn transformers that randomize each row on the client."""

from skldp.privatizers._personalized import PersonalizedULDP
from skldp.privatizers._randomized_response import RandomizedResponse
from skldp.privatizers._unary import RAPPOR, OptimizedUnaryEncoding
from skldp.privatizers._utility_optimized import UtilityOptimizedRAPPOR, UtilityOptimizedRR
from skldp.privatizers._hashed import HashedRAPPOR, HashedRR

__all__ = [
    "RandomizedResponse",
    "RAPPOR",
    "OptimizedUnaryEncoding",
    "UtilityOptimizedRR",
    "UtilityOptimizedRAPPOR",
    "PersonalizedULDP",
    "HashedRR",
    "HashedRAPPOR",
]

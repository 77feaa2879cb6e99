"""Privatizers: scikit-learn transformers that randomize each row on the client."""

from skldp.privatizers._binary import BinaryRandomizedResponse
from skldp.privatizers._compressive import (
    OneBitCompressive,
    OneBitHadamardResponse,
    RecursiveCompressive,
    SymmetricCompressive,
)
from skldp.privatizers._dbitflip import DBitFlip
from skldp.privatizers._hadamard import (
    BlockHadamardResponse,
    HadamardResponse,
    HighLowHadamardResponse,
    grid_blocks,
)
from skldp.privatizers._count_mean_sketch import CountMeanSketch
from skldp.privatizers._hashed import HashedRAPPOR, HashedRR
from skldp.privatizers._heavy_hitters import PrefixExtension, TreeHistogram
from skldp.privatizers._histogram import HistogramEncoding
from skldp.privatizers._local_hashing import LocalHashing, SubsetSelection
from skldp.privatizers._multidimensional import AttributeSampling, BudgetSplitting
from skldp.privatizers._longitudinal import (
    LongitudinalOUE,
    LongitudinalRAPPOR,
    LongitudinalRR,
    make_person_keys,
)
from skldp.privatizers._personalized import PersonalizedULDP
from skldp.privatizers._projective_geometry import ProjectiveGeometryResponse
from skldp.privatizers._randomized_response import RandomizedResponse
from skldp.privatizers._square_wave import SquareWave
from skldp.privatizers._means import DuchiMechanism, HybridMechanism, PiecewiseMechanism
from skldp.privatizers._range_queries import HaarWavelet, HierarchicalHistogram
from skldp.privatizers._unary import RAPPOR, OptimizedUnaryEncoding
from skldp.privatizers._utility_optimized import UtilityOptimizedRAPPOR, UtilityOptimizedRR

__all__ = [
    "RandomizedResponse",
    "BinaryRandomizedResponse",
    "HadamardResponse",
    "BlockHadamardResponse",
    "HighLowHadamardResponse",
    "grid_blocks",
    "RAPPOR",
    "OptimizedUnaryEncoding",
    "HistogramEncoding",
    "UtilityOptimizedRR",
    "UtilityOptimizedRAPPOR",
    "PersonalizedULDP",
    "HashedRR",
    "HashedRAPPOR",
    "CountMeanSketch",
    "OneBitCompressive",
    "SymmetricCompressive",
    "RecursiveCompressive",
    "OneBitHadamardResponse",
    "LocalHashing",
    "SubsetSelection",
    "ProjectiveGeometryResponse",
    "BudgetSplitting",
    "AttributeSampling",
    "LongitudinalRR",
    "LongitudinalOUE",
    "LongitudinalRAPPOR",
    "make_person_keys",
    "SquareWave",
    "DBitFlip",
    "DuchiMechanism",
    "PiecewiseMechanism",
    "HybridMechanism",
    "HierarchicalHistogram",
    "HaarWavelet",
    "PrefixExtension",
    "TreeHistogram",
]

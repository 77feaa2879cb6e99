"""Data for experiments: synthetic distributions and real count tables bundled with skldp.

Generators (``make_*``) return a :class:`Distribution` and, given ``n_samples``, raw values
drawn from it. Loaders (``load_*``) read small derived count tables shipped inside the package
(nothing is downloaded) and return a :class:`CountTable` whose ``sample`` draws raw rows.
"""

from skldp.datasets._base import (
    CountTable,
    load_adult,
    load_adult_joint,
    load_descr,
    load_foursquare_manhattan,
    load_gowalla,
)
from skldp.datasets._samples_generator import (
    Distribution,
    make_dirichlet,
    make_geometric,
    make_sparse,
    make_two_step,
    make_uniform,
    make_zipf,
)

__all__ = [
    "Distribution",
    "CountTable",
    "make_uniform",
    "make_geometric",
    "make_zipf",
    "make_two_step",
    "make_sparse",
    "make_dirichlet",
    "load_gowalla",
    "load_foursquare_manhattan",
    "load_adult",
    "load_adult_joint",
    "load_descr",
]

"""Data for experiments: synthetic distributions and real count tables bundled with skldp.

Generators (``make_*``) return a :class:`Distribution` and, given ``n_samples``, raw values
drawn from it. Loaders (``load_*``) read small derived count tables shipped inside the package
(nothing is downloaded) and return a :class:`CountTable` whose ``sample`` draws raw rows.
"""

# the public names, as listed once in each module's __all__
from skldp.datasets import _base, _samples_generator
from skldp.datasets._base import *
from skldp.datasets._samples_generator import *

__all__ = _samples_generator.__all__ + _base.__all__

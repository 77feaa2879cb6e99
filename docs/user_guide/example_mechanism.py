r"""A mechanism added in three pieces: one channel class, one privatizer, one registry line.

The example is k-ary randomized response written from scratch (the package's own is
:class:`skldp.RandomizedResponse`), so that every number it gives can be checked against
the built-in one: ``tests/test_docs_example_mechanism.py`` runs the shared channel contract
on it, compares its dense matrix with the built-in channel's, registers it and runs the
command line's registry on it. In the package, the channel goes in
``skldp/channels/_<family>.py``, the privatizer in ``skldp/privatizers/_<family>.py`` and the
registry entry in ``_BUILTIN`` of ``skldp/_registry.py``; outside the package,
``skldp.registry.register(REGISTRY_LINE)`` adds it.
"""

import numpy as np

from skldp._base import BasePrivatizer
from skldp.registry import Mechanism
from skldp._validation import PRIVATIZER_CONSTRAINTS
from skldp.channels import SymbolChannel
from skldp.channels._randomized_response import rr_truth
from skldp.privacy import LDP


# -- 1. the channel: the mathematics, Q(y | x) -------------------------------------------------
class ExampleRRChannel(SymbolChannel):
    r"""k-ary randomized response: the truth with probability ``truth``, else a uniform draw.

    .. math:: Q(y \mid x) = \text{keep if } y = x, \text{ other otherwise}, \qquad
              \text{keep} / \text{other} \le e^\varepsilon.

    ``truth``, ``keep`` and ``other`` come from :func:`rr_truth`, which puts ``truth`` on the
    grid of the uniform draws, so the channel that is sampled is the channel that is stated.
    """

    def __init__(self, epsilon, n_inputs):
        self.epsilon, self.n_inputs, self.n_outputs = float(epsilon), int(n_inputs), int(n_inputs)
        self.truth, self.keep, self.other = rr_truth(self.epsilon, self.n_inputs)

    def _key(self):  # identity: equality, hash and repr
        return (self.epsilon, self.n_inputs)

    def guarantee(self):
        return LDP(self.epsilon)

    def _sample(self, x, rng):  # vectorized: one report per input index
        told = rng.random(x.shape[0]) < self.truth
        return np.where(told, x, rng.integers(self.n_inputs, size=x.shape[0]))

    def _forward(self, p):  # Q^T p, without the dense matrix
        return self.other * p.sum() + (self.keep - self.other) * p

    def _adjoint(self, v):  # Q v
        return self.other * v.sum() + (self.keep - self.other) * v

    def _unbiased(self, stats, n):  # a closed form instead of the generic least squares
        return (stats / n - self.other) / (self.keep - self.other)


# -- 2. the privatizer: a thin scikit-learn transformer that builds the channel ----------------
class ExampleRR(BasePrivatizer):
    """k-ary randomized response (the example of the architecture page).

    Parameters
    ----------
    epsilon : float, default=1.0
        The privacy budget.
    categories : list or None, default=None
        The public domain of the column (inferred from the data with a warning if None).
    accountant : PrivacyAccountant or None, default=None
        Charged epsilon at every transform.
    random_state : None, int or numpy.random.Generator, default=None
        The noise source (None: the operating system's entropy).
    """

    _parameter_constraints = {**PRIVATIZER_CONSTRAINTS}

    def __init__(self, epsilon=1.0, *, categories=None, accountant=None, random_state=None):
        self.epsilon = epsilon
        self.categories = categories
        self.accountant = accountant
        self.random_state = random_state

    def _make_channel(self, categories, column):
        return ExampleRRChannel(self.epsilon, len(categories))


# -- 3. the registry entry: skldp.registry.register(REGISTRY_LINE) adds it (in the package, -----
# it is one more entry of _BUILTIN in skldp/_registry.py, naming the class as "ExampleRR")
REGISTRY_LINE = Mechanism(
    "example-rr", ExampleRR, "randomized response", "epsilon-LDP (tight)", "Warner 1965"
)

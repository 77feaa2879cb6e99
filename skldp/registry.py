"""The registry of mechanisms, and the public way to add one defined outside skldp.

A mechanism is its channel (:mod:`skldp.channels`), its privatizer and one :class:`Mechanism`
entry. Everything else is read from the registry: the command line's mechanism names
(``skldp mechanisms``, ``skldp privatize --mechanism``), :func:`make_privatizer`, the advisor
(:func:`skldp.recommend_mechanism` ranks a registered mechanism or says why it does not), and
the package's test lists. A mechanism written outside the package is added with
:func:`register`, or for the length of a ``with`` block with :func:`registered`.

Read more in the :ref:`User Guide <architecture>`.

Examples
--------
>>> from skldp import RandomizedResponse, recommend_mechanism
>>> from skldp.registry import Mechanism, registered
>>> class MyRR(RandomizedResponse):
...     pass
>>> line = Mechanism("my-rr", MyRR, "randomized response", "epsilon-LDP", "Warner 1965")
>>> with registered(line):
...     table = recommend_mechanism(16, 1000, 1.0)
>>> "my-rr" in set(table["mechanism"])
True
"""

from skldp._registry import (
    ERROR_MODELS,
    Mechanism,
    available_mechanisms,
    channel_of,
    get_mechanism,
    make_privatizer,
    register,
    registered,
    unregister,
)

__all__ = [
    "Mechanism",
    "ERROR_MODELS",
    "register",
    "unregister",
    "registered",
    "get_mechanism",
    "available_mechanisms",
    "make_privatizer",
    "channel_of",
]

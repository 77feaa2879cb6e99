"""The extension API: what a new mechanism or estimator derives from and declares.

A mechanism is three pieces (see the architecture page of the user guide): a channel (the
mathematics, in :mod:`skldp.channels`: :class:`~skldp.channels.SymbolChannel` or
:class:`~skldp.channels.BitVectorChannel`, the optional abilities, and the exact-sampling
helpers such as :func:`~skldp.channels.floor_to_uniform_grid`), a privatizer derived from
:class:`BasePrivatizer` that builds it, and one registry entry, a
:class:`skldp.registry.Mechanism` (added with :func:`skldp.registry.register`). This module
gathers the pieces a privatizer or an estimator written outside skldp needs:

* the base classes :class:`BasePrivatizer` and :class:`BaseDistributionEstimator`, and the
  :func:`hyperparameters` decorator that writes a scikit-learn ``__init__`` from annotated
  class attributes;
* the constraint vocabulary of ``_parameter_constraints``, checked at fit time by
  :func:`validate_params` with one wording for every error: the constraint types
  (:class:`Interval`, :class:`Options`, :class:`Boolean`, :class:`Epsilon`,
  :class:`Satisfies`, :class:`InstanceOf`, :class:`ListLike`, :class:`IsCallable`,
  :class:`Deferred`, :class:`NoneValue`, all :class:`Constraint`) and the shared constraints
  below.

The shared constraints (module constants):

``POSITIVE_EPSILON``
    A positive finite privacy budget (an :class:`Epsilon`).
``CATEGORIES``
    The public domain, checked against the data in ``fit`` (a :class:`Deferred`).
``RANDOM_STATE``
    None, an int or a :class:`numpy.random.Generator`, resolved in ``transform``.
``CHANNEL``
    An estimator's ``channel=``: a channel or a fitted privatizer, read with the reports.
``TOL``
    A non-negative number (a solver's tolerance).
``PRIVATIZER_CONSTRAINTS``
    The dict of ``epsilon``, ``categories`` and ``random_state`` every categorical privatizer
    shares: spread it first into a privatizer's ``_parameter_constraints``
    (``{**PRIVATIZER_CONSTRAINTS, "theta": [Interval("real", 0, 1)]}``); ``accountant`` is
    added by :class:`BasePrivatizer` itself.

Everything here is the object skldp itself uses (re-exported, not copied), so a class
written against this module behaves as the package's own.

Examples
--------
>>> from skldp.base import PRIVATIZER_CONSTRAINTS, Interval
>>> theta = Interval("real", 0, 1, closed="neither")
>>> theta.description, theta.ok(0.5), theta.ok(1.0)
('a number in (0, 1)', True, False)
>>> sorted(PRIVATIZER_CONSTRAINTS)
['categories', 'epsilon', 'random_state']
"""

from skldp._params import hyperparameters
from skldp.estimators._base import BaseDistributionEstimator
from skldp.privatizers._base import BasePrivatizer
from skldp._validation import (
    CATEGORIES,
    CHANNEL,
    POSITIVE_EPSILON,
    PRIVATIZER_CONSTRAINTS,
    RANDOM_STATE,
    TOL,
    Boolean,
    Constraint,
    Deferred,
    Epsilon,
    InstanceOf,
    Interval,
    IsCallable,
    ListLike,
    NoneValue,
    Options,
    Satisfies,
    validate_params,
)

__all__ = [
    "BasePrivatizer",
    "BaseDistributionEstimator",
    "hyperparameters",
    "validate_params",
    "Constraint",
    "Interval",
    "Options",
    "Boolean",
    "NoneValue",
    "Epsilon",
    "Satisfies",
    "InstanceOf",
    "ListLike",
    "IsCallable",
    "Deferred",
    "POSITIVE_EPSILON",
    "CATEGORIES",
    "RANDOM_STATE",
    "CHANNEL",
    "TOL",
    "PRIVATIZER_CONSTRAINTS",
]

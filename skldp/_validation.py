"""Parameter checks shared by every public class: one place for each message."""

from __future__ import annotations

import inspect
import math
import numbers
import struct
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import sparse

from skldp.exceptions import InvalidParameterError

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike, NDArray


def check_epsilon(epsilon, name="epsilon", *, allow_inf=False, allow_zero=False):
    """Return ``epsilon`` as a float after checking that it is a valid privacy budget.

    Parameters
    ----------
    epsilon : object
        The value to check.
    name : str
        Its name in error messages.
    allow_inf : bool
        Accept ``+inf`` (no privacy for that pair, as context-aware models allow).
    allow_zero : bool
        Accept 0 (perfect privacy for that pair).
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a positive finite number; got {epsilon!r}")
    value = float(epsilon)
    if math.isnan(value):
        raise ValueError(f"{name} must be a positive finite number; got nan")
    if math.isinf(value):
        if allow_inf and value > 0:
            return value
        raise ValueError(f"{name} must be a positive finite number; got {value}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be a positive finite number; got {epsilon!r}")
    return value


def _float_bits(x):
    """The IEEE bit pattern of a non-negative float as an int (monotone in the value)."""
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _bits_float(b):
    return struct.unpack("<d", struct.pack("<q", b))[0]


def smallest_usable_epsilon(usable, above=0.0):
    """The smallest float ``t > above`` with ``usable(t)``, for a predicate monotone in ``t``.

    Bisection over the bit patterns of positive floats (about 64 calls of ``usable``), so the
    result is exact: ``usable(t)`` holds and fails at the float just below ``t`` (when that is
    above ``above``). Returns None if ``usable`` fails up to ``2**64``.
    """
    hi = 1.0
    while not usable(hi):
        hi *= 2.0
        if hi > 2.0**64:
            return None
    lo_bits, hi_bits = _float_bits(max(above, 0.0)), _float_bits(hi)
    while hi_bits - lo_bits > 1:
        mid = (lo_bits + hi_bits) // 2
        if usable(_bits_float(mid)):
            hi_bits = mid
        else:
            lo_bits = mid
    return _bits_float(hi_bits)


def check_epsilon_usable(
    epsilon: float, usable: Callable[[float], bool], *, name: str = "epsilon", context: str = ""
) -> float:
    """Refuse a budget too small for the mechanism's float64 probabilities to show any signal.

    Sampling probabilities lie on the grid of uniform draws (multiples of 2**-53) and are
    rounded toward privacy, so below some budget every input gets the same report
    distribution: nothing could be estimated (a channel gain of 0, estimates of nan or inf).
    Such a budget is refused with a ValueError naming it and the smallest usable value,
    found by ``smallest_usable_epsilon`` on the mechanism's own rounding.

    Parameters
    ----------
    epsilon : float
        The checked budget (already valid for ``check_epsilon``).
    usable : callable
        ``usable(t)`` is True when budget t gives a channel whose inputs can be told apart;
        monotone in t.
    name : str
        Name of the budget in the message.
    context : str
        The mechanism and its domain size, for the message (``"k-RR with k = 5"``).

    Returns
    -------
    epsilon : float
    """
    if usable(epsilon):
        return epsilon
    smallest = smallest_usable_epsilon(usable, epsilon)
    where = f" for {context}" if context else ""
    raise ValueError(
        f"{name}={epsilon!r} is too small to be represented{where}: its sampling "
        "probabilities (multiples of 2**-53) round to a channel whose reports do not depend on "
        f"the input; the smallest usable {name} is {smallest!r}"
    )


def check_int(value, name, *, min_value=1):
    """Return ``value`` as an int after checking it is an integer ``>= min_value``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {min_value}; got {value!r}")
    if value < min_value:
        raise ValueError(f"{name} must be an integer >= {min_value}; got {value}")
    return int(value)


def as_float_array(v: ArrayLike, name: str) -> NDArray[np.float64]:
    """``v`` as a float array; strings and other non-numbers raise a TypeError naming ``name``."""
    if isinstance(v, (str, bytes)):
        raise TypeError(f"{name} must be a 1-D array of numbers; got {type(v).__name__}")
    try:
        return np.asarray(v, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a 1-D array of numbers; got {type(v).__name__}") from exc


def check_bool(value, name):
    """Return ``value`` as a bool after checking it is True or False (numpy bools too).

    Truthiness is not enough: ``"no"`` or ``0.5`` given by mistake must not read as True.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def check_probability_vector(
    p: ArrayLike, k: int | None = None, name: str = "p"
) -> NDArray[np.float64]:
    """Return ``p`` as a float array after checking that it is a distribution over k values."""
    p = as_float_array(p, name)
    if p.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {p.shape}")
    if p.shape[0] == 0:
        raise ValueError(f"{name} must have at least one entry; got an empty array")
    if k is not None and p.shape[0] != k:
        raise ValueError(f"{name} must have {k} entries; got {p.shape[0]}")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"{name} must have finite non-negative entries")
    if not math.isclose(p.sum(), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ValueError(f"{name} must sum to 1; got {float(p.sum())!r}")
    return p


def check_finite_vector(v: ArrayLike, name: str = "v") -> NDArray[np.float64]:
    """Return ``v`` as a float array after checking it is 1-D, non-empty and finite."""
    v = as_float_array(v, name)
    if v.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {v.shape}")
    if v.shape[0] == 0:
        raise ValueError(f"{name} must have at least one entry; got an empty array")
    if not np.all(np.isfinite(v)):
        bad = np.flatnonzero(~np.isfinite(v))
        raise ValueError(
            f"{name} must have finite entries; got {v[bad[0]]} at index {int(bad[0])}"
            + (f" and {bad.size - 1} more" if bad.size > 1 else "")
        )
    return v


def check_report_values(values):
    """Reject report arrays no channel could have produced, before looking for the channel.

    ``values`` is what :func:`skldp._reports.extract` returns: a 2-D array or a CSR matrix.
    Raises a ``ValueError`` that names the problem for complex numbers, NaN or infinity, and no
    columns (zero reports are refused by ``fit`` alone: an empty chunk scores to an empty
    array) (the wording follows scikit-learn's ``check_array``, so that
    scikit-learn's estimator checks and users see the same messages).
    """
    data = values.data if sparse.issparse(values) else values
    kind = "sparse reports" if sparse.issparse(values) else "reports"
    if np.iscomplexobj(data):
        raise ValueError(
            f"Complex data not supported: {kind} are integer symbols or 0/1 bits; "
            f"got dtype {data.dtype}"
        )
    if values.ndim == 2 and values.shape[1] == 0:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={values.shape}) while a minimum of 1 is "
            f"required: no report columns"
        )
    if data.dtype.kind == "f" and not np.all(np.isfinite(data)):
        raise ValueError(
            f"{kind} contain NaN or infinity; they must be finite integers (symbols or 0/1 bits)"
        )


# -- declarative parameter constraints ----------------------------------------------------------
# Each public class lists, in ``_parameter_constraints``, the values every ``__init__``
# parameter may take; its base class checks them at fit time (never in ``__init__`` or
# ``set_params``) with :func:`validate_params`, so every bad hyperparameter gets the one
# wording "<name> must be <what is allowed>; got <value>". The error is an
# :class:`~skldp.exceptions.InvalidParameterError`, a ValueError and a TypeError at once.


class Constraint:
    """One kind of value a parameter may take (the base of every constraint).

    ``type_ok`` says whether the value is of the right kind, ``ok`` whether it is also in
    range; ``description`` completes "<name> must be ...". A new kind of constraint derives
    from this class and overrides ``type_ok`` (and ``ok`` when it has a range).
    """

    description = "a valid value"

    def type_ok(self, value):
        return True

    def ok(self, value):
        return self.type_ok(value)


class Interval(Constraint):
    """An integer (``kind="int"``, bools excluded) or a real number (``kind="real"``) in range.

    ``low``/``high`` of None leave that side open; ``closed`` is "both", "left", "right" or
    "neither". A real interval contains ``inf`` only when ``high`` is None and never contains
    ``nan``.

    Parameters
    ----------
    kind : {"int", "real"}
    low, high : float or None, default=None
        The bounds (None: unbounded on that side).
    closed : {"both", "left", "right", "neither"}, default="both"
        Which bounds belong to the interval.
    description : str or None, default=None
        The words of the error message; None writes them from the bounds.
    """

    def __init__(self, kind, low=None, high=None, *, closed="both", description=None):
        if kind not in ("int", "real"):
            raise ValueError(f"kind must be 'int' or 'real'; got {kind!r}")
        self.kind, self.low, self.high, self.closed = kind, low, high, closed
        self.description = description or self._describe()

    def _describe(self):
        noun = "an integer" if self.kind == "int" else "a number"
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and self.high is not None:
            return f"{noun} in {'[' if left else '('}{self.low}, {self.high}{']' if right else ')'}"
        if self.low is not None:
            return f"{noun} {'>=' if left else '>'} {self.low}"
        if self.high is not None:
            return f"{noun} {'<=' if right else '<'} {self.high}"
        return noun

    def type_ok(self, value):
        if isinstance(value, (bool, np.bool_)):
            return False
        return isinstance(value, numbers.Integral if self.kind == "int" else numbers.Real)

    def ok(self, value):
        if not self.type_ok(value):
            return False
        x = int(value) if self.kind == "int" else float(value)
        if self.kind == "real" and math.isnan(x):
            return False
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and not (x >= self.low if left else x > self.low):
            return False
        return self.high is None or (x <= self.high if right else x < self.high)


class Options(Constraint):
    """One of a fixed set of strings.

    Parameters
    ----------
    *options : str
        The allowed strings.
    """

    def __init__(self, *options):
        self.options = tuple(options)
        if len(self.options) == 1:
            self.description = repr(self.options[0])
        else:
            self.description = f"one of {list(self.options)}"

    def type_ok(self, value):
        return isinstance(value, str)

    def ok(self, value):
        return isinstance(value, str) and value in self.options


class Boolean(Constraint):
    """True or False (numpy bools too); truthiness is not enough.

    0, 1 and strings are refused, so that ``sparse_output="no"`` is an error rather than
    a true value.
    """

    description = "True or False"

    def type_ok(self, value):
        return isinstance(value, (bool, np.bool_))


class NoneValue(Constraint):
    """None, as a declared value ("<name> must be an integer or None").

    A ``None`` in a list of constraints is read as this.
    """

    description = "None"

    def type_ok(self, value):
        return value is None


class Epsilon(Constraint):
    """A privacy budget: a real number, positive and finite unless allowed otherwise.

    Parameters
    ----------
    allow_inf : bool, default=False
        Whether ``inf`` (no privacy) is allowed.
    allow_zero : bool, default=False
        Whether 0 (no information) is allowed.
    """

    def __init__(self, *, allow_inf=False, allow_zero=False):
        self.allow_inf, self.allow_zero = allow_inf, allow_zero
        if allow_inf:
            self.description = "a number >= 0 or inf" if allow_zero else "a number > 0 or inf"
        else:
            self.description = "a finite number >= 0" if allow_zero else "a positive finite number"

    def type_ok(self, value):
        return not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Real)

    def ok(self, value):
        try:
            check_epsilon(value, allow_inf=self.allow_inf, allow_zero=self.allow_zero)
        except (TypeError, ValueError):
            return False
        return True


class Satisfies(Constraint):
    """A value of ``kind`` (another constraint) for which ``predicate`` holds.

    Parameters
    ----------
    kind : Constraint
    predicate : callable
        ``predicate(value)`` is true for the allowed values.
    description : str
        The words of the error message.
    """

    def __init__(self, kind, predicate, description):
        self.kind, self.predicate, self.description = kind, predicate, description

    def type_ok(self, value):
        return self.kind.type_ok(value)

    def ok(self, value):
        return self.kind.ok(value) and bool(self.predicate(value))


class InstanceOf(Constraint):
    """An instance of one of ``types``; ``description`` names them for the error.

    Parameters
    ----------
    types : type or tuple of type
    description : str
    """

    def __init__(self, types, description):
        self.types, self.description = types, description

    def type_ok(self, value):
        return isinstance(value, self.types)


class ListLike(Constraint):
    """A list, tuple, range, array, Index or Series: its entries are checked later.

    Parameters
    ----------
    description : str, default="a list of values"
    """

    def __init__(self, description="a list of values"):
        self.description = description

    def type_ok(self, value):
        return isinstance(value, (list, tuple, range, np.ndarray, pd.Index, pd.Series))


class IsCallable(Constraint):
    """A callable (a function, a class, an object with ``__call__``).

    What it is called with is checked where it is called.
    """

    description = "a callable"

    def type_ok(self, value):
        return callable(value)


class Deferred(Constraint):
    """A parameter checked where it is used (against the data's domain, say), not here.

    ``where`` names that place, so the declaration still documents the parameter.

    Parameters
    ----------
    where : str
        Where the parameter is checked.
    """

    def __init__(self, where):
        self.where = where
        self.description = f"valid ({where})"


#: The hyperparameters of many classes, declared once.
POSITIVE_EPSILON = Epsilon()
RANDOM_STATE = Deferred("resolved by skldp._random.check_random_state in transform")
CATEGORIES = Deferred("resolved against X by skldp._domain.resolve_categories in fit")
CHANNEL = Deferred("read with the reports by BaseDistributionEstimator")
TOL = Interval("real", 0, None, description="a non-negative number")
#: The constraints every categorical privatizer shares: spread them first into its
#: ``_parameter_constraints`` (``{**PRIVATIZER_CONSTRAINTS, "theta": [...]}``).
PRIVATIZER_CONSTRAINTS = {
    "epsilon": [POSITIVE_EPSILON],
    "categories": [CATEGORIES],
    "random_state": [RANDOM_STATE],
    # accountant= (a skldp.privacy.PrivacyAccountant or None) is added by BasePrivatizer's
    # subclass hook: the privacy package is above this module
}


def _short_repr(value):
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({type(value).__name__})"


def _or(words):
    if len(words) == 1 or " or " in words[-1]:  # "'auto', True or False"
        return ", ".join(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


def _default(obj, name):
    """The default of ``__init__`` parameter ``name`` (``inspect.Parameter.empty`` if none)."""
    param = inspect.signature(type(obj).__init__).parameters.get(name)
    return inspect.Parameter.empty if param is None else param.default


def validate_params(obj, constraints):
    """Check every parameter of ``obj`` against its declared constraints.

    Parameters
    ----------
    obj : BaseEstimator
        A privatizer or estimator; its parameters are read with ``get_params(deep=False)``.
    constraints : dict of str -> list
        For each parameter, the values it may take: :class:`Constraint` objects, or None for
        the value None. A value is valid if one of them accepts it. A parameter without a
        declaration is not checked, so that subclasses written outside skldp keep working
        (every class of skldp declares all of its parameters; a test checks it).

    Raises
    ------
    InvalidParameterError
        "<name> must be <a> or <b>; got <value>" for the first invalid parameter ("<name> is
        required: it must be ...; got None" when None is not allowed).
    """
    params = obj.get_params(deep=False)
    for name, value in params.items():
        if name not in constraints:
            continue  # a subclass written outside skldp may declare nothing
        allowed = [NoneValue() if c is None else c for c in constraints[name]]
        if any(isinstance(c, Deferred) for c in allowed) or any(c.ok(value) for c in allowed):
            continue
        what = _or([c.description for c in allowed])
        if value is None and _default(obj, name) is None:  # None stands for 'not given'
            raise InvalidParameterError(f"{name} is required: it must be {what}; got None")
        raise InvalidParameterError(f"{name} must be {what}; got {_short_repr(value)}")

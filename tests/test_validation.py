"""The declarative parameter checker (``skldp._validation``) and its use by every class."""

import inspect
import math

import numpy as np
import pytest
from sklearn.base import clone

import skldp.estimators
import skldp.privatizers
from skldp.base import BaseDistributionEstimator, BasePrivatizer
from skldp._registry import MECHANISMS, NOT_ON_THE_COMMAND_LINE
from skldp._validation import (
    Boolean,
    Deferred,
    Epsilon,
    Interval,
    Options,
    Satisfies,
    validate_params,
)
from skldp.exceptions import InvalidParameterError

#: A value for each parameter that some class requires (``required`` in the registry): keyed
#: by the parameter, not the class, so a new mechanism needing one of them needs no line here.
_REQUIRED_VALUES = {
    "epsilon_01": 1.0,
    "epsilon_10": 1.0,
    "sensitive": ["a"],
    "blocks": [["a"], ["b"]],
    "n_blocks": 1,
    "block_size": 1,
    "tags": ["home"],
    "bounds": (0, 1),
}


def _required(cls):
    """The registry's required parameters of ``cls`` (the first of alternatives), with values."""
    entry = next((m for m in MECHANISMS.values() if m.cls is cls), None)
    if entry is None:
        return {}
    names = [r if isinstance(r, str) else r[0] for r in entry.required]
    return {name: _REQUIRED_VALUES[name] for name in names}


def _public_classes():
    out = []
    for module in (skldp.privatizers, skldp.estimators):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(
                obj, (BasePrivatizer, BaseDistributionEstimator)
            ):
                out.append(obj)
    return out


CLASSES = _public_classes()


def _instance(cls):
    return cls(**_required(cls))


def _fit(est):
    if isinstance(est, BasePrivatizer):
        return est.fit([["a"], ["b"]])
    return est.fit(np.zeros((2, 1), dtype=np.int64))


def test_the_list_of_classes_is_complete():
    # every registered privatizer, the two multidimensional ones, and the estimators
    privatizers = {m.class_name for m in MECHANISMS.values()} | set(NOT_ON_THE_COMMAND_LINE)
    estimators = {
        name
        for name in skldp.estimators.__all__
        if isinstance(getattr(skldp.estimators, name), type)
        and issubclass(getattr(skldp.estimators, name), BaseDistributionEstimator)
    }
    assert {cls.__name__ for cls in CLASSES} == privatizers | estimators
    assert len(estimators) >= 6


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_parameter_is_declared(cls):
    params = set(_instance(cls).get_params(deep=False))
    assert set(cls._parameter_constraints) == params


def _checked(cls):
    """(class, parameter) pairs whose constraints are checked (not deferred to their use)."""
    for name, allowed in cls._parameter_constraints.items():
        if not any(isinstance(c, Deferred) for c in allowed):
            yield cls, name


@pytest.mark.parametrize(
    "cls, name",
    [pair for cls in CLASSES for pair in _checked(cls)],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_a_value_of_no_allowed_kind_is_refused_at_fit_with_one_wording(cls, name):
    est = _instance(cls)
    est.set_params(**{name: object()})  # set_params and clone never check
    est = clone(est)
    with pytest.raises(InvalidParameterError, match=rf"^{name} must be .+; got <object object"):
        _fit(est)
    # Both a TypeError and a ValueError, so callers catching either keep working.
    with pytest.raises(TypeError):
        _fit(est)
    with pytest.raises(ValueError):
        _fit(est)


@pytest.mark.parametrize(
    "est, message",
    [
        # Sparse recovery: the old hand-written checks raised ValueError for a wrong type.
        (
            skldp.estimators.SparseEstimator(sparsity=1.5),
            "sparsity must be an integer >= 1 or None; got 1.5",
        ),
        (
            skldp.estimators.SparseEstimator(sparsity=0),
            "sparsity must be an integer >= 1 or None; got 0",
        ),
        (
            skldp.estimators.SparseEstimator(beta=math.inf),
            "beta must be a finite number >= 0; got inf",
        ),
        (
            skldp.estimators.SparseEstimator(hierarchical="yes"),
            "hierarchical must be 'auto', True or False; got 'yes'",
        ),
        (skldp.estimators.EMEstimator(max_iter=True), "max_iter must be an integer >= 1; got True"),
        (
            skldp.estimators.EMEstimator(tol=float("nan")),
            "tol must be a non-negative number; got nan",
        ),
        (
            skldp.estimators.EMEstimator(init="ones"),
            (
                "init must be one of ['uniform', 'empirical', 'threshold'] or an array of "
                "positive numbers, one per category; got 'ones'"
            ),
        ),
        (
            skldp.estimators.ProjectedEstimator(alpha=1.0),
            "alpha must be a number in (0, 1); got 1.0",
        ),
        (
            skldp.privatizers.SymmetricCompressive(n_measurements=7),
            "n_measurements must be an even integer >= 2; got 7",
        ),
        (
            skldp.privatizers.RecursiveCompressive(n_blocks=3),
            "n_blocks must be a power of two (1, 2, 4, ...) or None; got 3",
        ),
        (
            skldp.privatizers.HashedRR(hash_seed=-1),
            "hash_seed must be a non-negative integer below 2**128; got -1",
        ),
        (
            skldp.privatizers.RAPPOR(theta=1.0),
            "theta must be None or a number in (0, 1); got 1.0",
        ),
        (
            skldp.privatizers.BinaryRandomizedResponse(epsilon_01=-1, epsilon_10=1),
            "epsilon_01 must be a number >= 0 or inf; got -1",
        ),
    ],
    ids=lambda v: v.split(" ")[0] if isinstance(v, str) else type(v).__name__,
)
def test_out_of_range_values_name_what_is_allowed(est, message):
    with pytest.raises(InvalidParameterError) as info:
        _fit(est)
    assert str(info.value) == message


def test_a_missing_required_parameter_says_it_is_required():
    with pytest.raises(InvalidParameterError, match="^sensitive is required: it must be a list"):
        _fit(skldp.privatizers.UtilityOptimizedRR())
    # A None where the default is not None is a plain wrong value.
    with pytest.raises(InvalidParameterError, match="^epsilon must be a positive finite number"):
        _fit(skldp.privatizers.RandomizedResponse(epsilon=None))


def test_joint_rules_run_after_each_parameter_is_checked():
    with pytest.raises(InvalidParameterError, match="exactly one of blocks, n_blocks"):
        _fit(skldp.privatizers.BlockHadamardResponse(n_blocks=2, block_size=2))
    with pytest.raises(InvalidParameterError, match="needs 3 bits but max_bits=2"):
        _fit(skldp.privatizers.RecursiveCompressive(n_blocks=4, max_bits=2))


class _Toy:
    def __init__(self, k=3, mode="a", flag=False, rate=0.5):
        self.k, self.mode, self.flag, self.rate = k, mode, flag, rate

    def get_params(self, deep=False):
        return {"k": self.k, "mode": self.mode, "flag": self.flag, "rate": self.rate}


_TOY = {
    "k": [Interval("int", 2, 10), None],
    "mode": [Options("a", "b")],
    "flag": [Boolean()],
    "rate": [Interval("real", 0, 1, closed="right")],
}


@pytest.mark.parametrize(
    "params, message",
    [
        ({"k": 1}, "k must be an integer in [2, 10] or None; got 1"),
        ({"k": 11}, "k must be an integer in [2, 10] or None; got 11"),
        ({"k": np.float64(3.0)}, "k must be an integer in [2, 10] or None; got np.float64(3.0)"),
        ({"mode": "c"}, "mode must be one of ['a', 'b']; got 'c'"),
        ({"flag": 1}, "flag must be True or False; got 1"),
        ({"rate": 0}, "rate must be a number in (0, 1]; got 0"),
        ({"rate": float("nan")}, "rate must be a number in (0, 1]; got nan"),
        ({"rate": "x" * 200}, "rate must be a number in (0, 1]; got '" + "x" * 59 + "... (str)"),
    ],
)
def test_messages_are_exact(params, message):
    toy = _Toy(**params)
    with pytest.raises(InvalidParameterError) as info:
        validate_params(toy, _TOY)
    assert str(info.value) == message


def test_valid_values_pass_and_numpy_scalars_count():
    validate_params(_Toy(k=np.int64(10), mode="b", flag=np.True_, rate=1.0), _TOY)
    validate_params(_Toy(k=None, rate=np.float32(0.25)), _TOY)


def test_an_undeclared_parameter_is_not_checked():
    # A subclass written outside skldp may declare nothing; skldp's own classes declare all
    # (test_every_parameter_is_declared).
    validate_params(_Toy(rate="anything"), {k: v for k, v in _TOY.items() if k != "rate"})
    with pytest.raises(InvalidParameterError, match="^mode must be"):
        validate_params(_Toy(mode="z", rate="anything"), {"mode": _TOY["mode"]})


def test_epsilon_and_satisfies():
    assert Epsilon().ok(1e-300) and not Epsilon().ok(0) and not Epsilon().ok(math.inf)
    assert Epsilon(allow_inf=True, allow_zero=True).ok(0) and Epsilon(allow_inf=True).ok(math.inf)
    assert not Epsilon().ok(True) and not Epsilon().type_ok("1")
    even = Satisfies(Interval("int", 2), lambda m: m % 2 == 0, "an even integer >= 2")
    assert even.ok(4) and not even.ok(5) and not even.ok(0) and even.type_ok(5)
    # Integers compare exactly, past float precision.
    assert Interval("int", 0, 2**128, closed="left").ok(2**128 - 1)

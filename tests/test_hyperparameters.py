"""``skldp.base.hyperparameters``: the one ``__init__`` of every privatizer and estimator.

scikit-learn's rule (keyword arguments stored verbatim under their own names, nothing else) is
written once by the decorator; these tests hold every public class to it.
"""

import importlib
import inspect
import pickle
import pkgutil
from typing import ClassVar

import pytest
from sklearn.base import BaseEstimator, clone

import skldp.estimators
import skldp.privatizers
from skldp.base import BaseDistributionEstimator, BasePrivatizer, hyperparameters
from skldp.channels import RandomizedResponseChannel


def _public(module, base):
    return [
        getattr(module, n)
        for n in module.__all__
        if inspect.isclass(getattr(module, n)) and issubclass(getattr(module, n), base)
    ]


DECLARED = [
    cls
    for cls in _public(skldp.privatizers, BasePrivatizer)
    + _public(skldp.estimators, BaseDistributionEstimator)
    if "__dataclass_fields__" in vars(cls)  # declared, not inherited (EMEstimator writes its own)
]


def test_every_privatizer_declares_its_hyperparameters():
    privatizers = _public(skldp.privatizers, BasePrivatizer)
    assert len(privatizers) >= 18
    assert set(privatizers) <= set(DECLARED)


@pytest.mark.parametrize("cls", DECLARED, ids=lambda c: c.__name__)
def test_init_stores_every_argument_verbatim_and_nothing_else(cls):
    params = list(inspect.signature(cls).parameters.values())
    assert "channel" in [p.name for p in params] or issubclass(cls, BasePrivatizer)
    # One distinct object per argument (a required one too): each is stored as given.
    given = {p.name: object() for p in params}
    obj = cls(**given)
    assert vars(obj).keys() == given.keys()
    assert all(getattr(obj, name) is value for name, value in given.items())
    assert obj.get_params(deep=False).keys() == given.keys()


def _every_public_scikit_learn_class():
    """Each scikit-learn class exported by a public module of skldp, once."""
    found = {}
    for info in pkgutil.walk_packages(skldp.__path__, "skldp."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                found.setdefault(obj, None)
    return list(found)


PUBLIC = _every_public_scikit_learn_class()


def test_the_public_classes_are_all_found():
    names = {cls.__name__ for cls in PUBLIC}
    assert len(PUBLIC) >= 30
    assert {"ProjectedEstimator", "MultidimensionalEstimator", "AttributeSampling"} <= names


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: c.__name__)
def test_only_a_privatizers_epsilon_may_be_passed_by_position(cls):
    # The project's rule: every hyperparameter is keyword-only, except ``epsilon`` of a
    # privatizer, which may be its one positional argument; an estimator takes none.
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    positional = [p.name for p in params if p.kind is not p.KEYWORD_ONLY]
    assert positional in ([["epsilon"], []] if issubclass(cls, BasePrivatizer) else [[]])


def _concrete(cls):
    """``cls`` itself, or for an abstract base (the extension API's ``BasePrivatizer``) a
    subclass writing only its abstract hooks, no hyperparameter: the base's ``__init__``,
    ``get_params`` and ``clone`` are then what the instance uses."""
    if not inspect.isabstract(cls):
        return cls
    hooks = {name: lambda self, *args, **kwargs: None for name in cls.__abstractmethods__}
    return type(f"Concrete{cls.__name__}", (cls,), hooks)


def test_an_abstract_base_is_checked_through_a_subclass_of_hooks_only():
    concrete = {cls: _concrete(cls) for cls in PUBLIC if inspect.isabstract(cls)}
    assert {BasePrivatizer, BaseDistributionEstimator} <= set(concrete)
    for cls, sub in concrete.items():
        assert not inspect.isabstract(sub)
        assert inspect.signature(sub) == inspect.signature(cls)


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: c.__name__)
def test_get_params_and_clone_return_every_keyword_as_given(cls):
    params = inspect.signature(cls.__init__).parameters
    names = [name for name in params if name != "self"]
    required = {name: 0.5 for name, p in params.items() if name != "self" and p.default is p.empty}
    obj = _concrete(cls)(**required)
    twin = clone(obj)
    assert sorted(obj.get_params(deep=False)) == sorted(names)
    assert twin.get_params(deep=False) == obj.get_params(deep=False)


@pytest.mark.parametrize("cls", DECLARED, ids=lambda c: c.__name__)
def test_scikit_learn_repr_identity_and_hash_are_kept(cls):
    required = {
        p.name: 1.0
        for p in inspect.signature(cls).parameters.values()
        if p.default is inspect.Parameter.empty
    }
    a, b = cls(**required), cls(**required)
    assert a != b and len({a, b}) == 2  # compared and hashed by identity
    assert repr(a).startswith(f"{cls.__name__}(")  # scikit-learn's repr, not dataclasses'
    assert vars(pickle.loads(pickle.dumps(a))) == vars(a)


def test_positional_epsilon_then_keyword_only_parameters():
    rr = skldp.privatizers.RAPPOR(2.0, theta=0.25, categories=["a", "b"])
    assert (rr.epsilon, rr.theta, rr.categories) == (2.0, 0.25, ["a", "b"])
    with pytest.raises(TypeError):
        skldp.privatizers.RAPPOR(2.0, 0.25)  # theta is keyword-only
    with pytest.raises(TypeError):
        skldp.estimators.ProjectedEstimator("threshold")  # an estimator takes no positional
    for meta in (skldp.privatizers.AttributeSampling, skldp.privatizers.BudgetSplitting):
        with pytest.raises(TypeError):
            meta(rr)  # the base privatizer is keyword-only, and so is the budget
        assert meta(privatizer=rr, epsilon=2.0).get_params()["privatizer"] is rr
    with pytest.raises(TypeError):
        skldp.privatizers.BinaryRandomizedResponse(epsilon_01=1.0)  # epsilon_10 is required


def test_a_private_annotation_is_refused_a_class_variable_is_not():
    with pytest.raises(TypeError, match=r"private names \['_cache'\].*typing.ClassVar"):

        @hyperparameters
        class _Leaky(BasePrivatizer):
            _cache: dict = None

    @hyperparameters
    class _Fine(BasePrivatizer):
        _table: ClassVar[dict] = {}
        level: int = 3

        def _make_channel(self, categories, column):
            return RandomizedResponseChannel(1.0, len(categories))

    assert list(inspect.signature(_Fine).parameters)[-1] == "level"
    assert _Fine().get_params()["level"] == 3


def test_a_class_that_writes_its_own_init_keeps_it():
    @hyperparameters
    class _Own(BasePrivatizer):
        def __init__(self, *, width=2):
            self.width = width

        def _make_channel(self, categories, column):
            return RandomizedResponseChannel(1.0, len(categories))

    assert list(inspect.signature(_Own).parameters) == ["width"]
    assert _Own(width=5).get_params() == {"width": 5}

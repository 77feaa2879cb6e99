"""The mechanism registry picks up privatizers by name as soon as skldp exports them."""

import pytest

import skldp
from skldp import RandomizedResponse
from skldp.base import BasePrivatizer
from skldp._registry import (
    MECHANISMS,
    NOT_ON_THE_COMMAND_LINE,
    available_estimators,
    available_mechanisms,
    get_mechanism,
    make_estimator,
    make_privatizer,
    reads_tag_column,
)


class _FakeHadamard(RandomizedResponse):
    """Stands in for a privatizer that another part of the project exports."""


def test_builtin_entries():
    assert "krr" in available_mechanisms()
    assert get_mechanism("krr").cls is RandomizedResponse
    assert get_mechanism("RandomizedResponse").name == "krr"  # class names work too
    rr = make_privatizer("krr", epsilon=2.0)
    assert isinstance(rr, RandomizedResponse) and rr.epsilon == 2.0
    assert {"empirical", "projected", "em"} <= set(available_estimators())
    assert make_estimator("projected", method="clip").method == "clip"


def test_a_newly_exported_privatizer_becomes_available(monkeypatch):
    if MECHANISMS["hadamard"].available:
        pytest.skip("HadamardResponse is part of this build")
    with pytest.raises(ValueError, match="not available in this build"):
        get_mechanism("hadamard")
    monkeypatch.setattr(skldp, "HadamardResponse", _FakeHadamard, raising=False)
    assert "hadamard" in available_mechanisms()
    assert isinstance(make_privatizer("hadamard", epsilon=1.5), _FakeHadamard)


def test_personalized_and_one_bit_hadamard_are_registered():
    pum = get_mechanism("personalized")
    assert pum.cls is skldp.PersonalizedULDP and pum.tag_column and pum.estimator == "personalized"
    assert pum.describe_required() == "tags, a tag column" and pum.missing({}) == ["tags=..."]
    assert get_mechanism("OneBitHadamardResponse").name == "one-bit-hadamard"
    assert make_privatizer("one-bit-hadamard", epsilon=0.5).epsilon == 0.5
    assert isinstance(
        make_estimator("personalized", method="threshold"), skldp.PersonalizedEstimator
    )
    assert reads_tag_column(skldp.PersonalizedULDP(tags=["home"]))
    assert not reads_tag_column(RandomizedResponse())
    # every privatizer over categories (a BasePrivatizer) that skldp exports has a registry
    # name; the mean mechanisms report real numbers and are outside the registry
    registered = {m.class_name for m in MECHANISMS.values()}
    privatizers = [
        n
        for n in skldp.__all__
        if isinstance(getattr(skldp, n), type) and issubclass(getattr(skldp, n), BasePrivatizer)
    ]
    offered = set(privatizers) - set(NOT_ON_THE_COMMAND_LINE)
    assert offered <= registered, offered - registered


def test_requirements_and_bad_names():
    block = MECHANISMS["block-hadamard"]
    assert block.describe_required() == "blocks or n_blocks or block_size"
    assert block.missing({"epsilon": 1}) == ["blocks=... or n_blocks=... or block_size=..."]
    assert block.missing({"n_blocks": 3}) == []
    with pytest.raises(ValueError, match="unknown mechanism 'x'; available: krr"):
        get_mechanism("x")
    with pytest.raises(ValueError, match="has no parameter 'theta'"):
        make_privatizer("krr", theta=1)
    with pytest.raises(ValueError, match="unknown estimator"):
        make_estimator("bayes")
    with pytest.raises(ValueError, match="EMEstimator has no parameter 'method'"):
        make_estimator("em", method="simplex")


def test_every_builtin_mechanism_is_exported_at_both_levels():
    # The privatizers' list (skldp.privatizers.__all__) is the one written list; the top level
    # star-imports it, so a mechanism exported there is a top-level name with no line in
    # skldp/__init__.py.
    from skldp import privatizers
    from skldp._registry import builtin_mechanisms

    for name in builtin_mechanisms():
        cls = get_mechanism(name).cls
        assert cls.__name__ in privatizers.__all__, name
        assert getattr(skldp, cls.__name__) is cls and cls.__name__ in skldp.__all__, name
    assert set(privatizers.__all__) <= set(skldp.__all__)
    assert all(hasattr(skldp, n) for n in skldp.__all__)

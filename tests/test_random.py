"""random_state handling and the secure default."""

import secrets

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skldp import RandomizedResponse
from skldp._random import check_random_state, spawn


def test_none_is_fresh_on_every_call():
    a = check_random_state(None).integers(0, 2**62, 4)
    b = check_random_state(None).integers(0, 2**62, 4)
    assert not np.array_equal(a, b)


def test_none_is_keyed_from_the_os_entropy_source(monkeypatch):
    calls = []

    def fake_randbits(k):
        calls.append(k)
        return 12345

    monkeypatch.setattr(secrets, "randbits", fake_randbits)
    a = check_random_state(None).random(3)
    b = check_random_state(None).random(3)
    assert calls == [256, 256]  # 256 fresh bits per call
    assert_array_equal(a, b)  # and nothing else goes into the key
    assert isinstance(check_random_state(None).bit_generator, np.random.PCG64DXSM)


def test_seeded_and_given_generators():
    assert_array_equal(check_random_state(3).random(4), check_random_state(3).random(4))
    g = np.random.default_rng(1)
    assert check_random_state(g) is g
    ss = np.random.SeedSequence(9)
    assert_array_equal(check_random_state(ss).random(2), np.random.default_rng(ss).random(2))


@pytest.mark.parametrize(
    "bad, error, match",
    [(-1, ValueError, "non-negative"), (1.5, TypeError, "random_state"), (True, TypeError, "bool")],
)
def test_bad_random_state(bad, error, match):
    with pytest.raises(error, match=match):
        check_random_state(bad)


def test_children_are_independent_and_reproducible():
    kids = spawn(check_random_state(5), 3)
    again = spawn(check_random_state(5), 3)
    draws = [k.random(1000) for k in kids]
    for k, d in zip(again, draws, strict=True):
        assert_array_equal(k.random(1000), d)
    assert abs(np.corrcoef(draws[0], draws[1])[0, 1]) < 0.15


def test_unseeded_privatizer_is_not_reproducible():
    rr = RandomizedResponse(0.1, categories=np.arange(50)).fit(np.arange(50))
    x = np.zeros(2000, dtype=int)
    assert not np.array_equal(rr.transform(x), rr.transform(x))

"""The mean and range-query privatizers draw noise through the privatizers' one noise stream.

They are not BasePrivatizer subclasses (they read numbers, or levels of a tree), and drew their
noise from ``noise_generator(random_state)`` at every ``transform``: a seeded privatizer
released the same noise on every call, and a deep copy, a pickle or a clone of one with a
Generator released exactly the noise of its source. Now they share BasePrivatizer's stream.
"""

import copy
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skldp import (
    DuchiMechanism,
    HaarWavelet,
    HierarchicalHistogram,
    HybridMechanism,
    PiecewiseMechanism,
)

X_NUM = np.random.default_rng(0).uniform(0.0, 1.0, size=(2000, 1))
X_CAT = np.arange(8).repeat(250).reshape(-1, 1)
CASES = [
    (DuchiMechanism, {"bounds": (0.0, 1.0)}, X_NUM),
    (PiecewiseMechanism, {"bounds": (0.0, 1.0)}, X_NUM),
    (HybridMechanism, {"bounds": (0.0, 1.0)}, X_NUM),
    (HaarWavelet, {"categories": list(range(8))}, X_CAT),
    (HierarchicalHistogram, {"categories": list(range(8))}, X_CAT),
]
IDS = [c[0].__name__ for c in CASES]


def _reports(privatizer, X):
    return np.asarray(privatizer.transform(X), dtype=float)


@pytest.mark.parametrize(("cls", "params", "X"), CASES, ids=IDS)
def test_a_seeded_privatizer_advances_and_replays_only_from_its_seed(cls, params, X):
    priv = cls(epsilon=1.0, random_state=0, **params).fit(X)
    first, second = _reports(priv, X), _reports(priv, X)
    assert not np.array_equal(first, second)  # a second call draws new noise
    again = cls(epsilon=1.0, random_state=0, **params).fit(X)
    assert np.array_equal(_reports(again, X), first)  # the seed still reproduces


@pytest.mark.parametrize(("cls", "params", "X"), CASES, ids=IDS)
def test_copies_pickles_and_clones_never_replay_their_source(cls, params, X):
    priv = cls(epsilon=1.0, random_state=np.random.default_rng(5), **params).fit(X)
    copied, loaded = copy.deepcopy(priv), pickle.loads(pickle.dumps(priv))
    cloned = clone(priv).fit(X)
    source = _reports(priv, X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # restored copies say they draw OS noise
        for other in (copied, loaded, cloned):
            assert not np.array_equal(_reports(other, X), source)

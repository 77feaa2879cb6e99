"""The mean and range privatizers charge an accountant like every other privatizer."""

import numpy as np
import pytest

from skldp import HaarWavelet, HierarchicalHistogram
from skldp.exceptions import BudgetExceededError
from skldp.privacy import PrivacyAccountant, simulation
from skldp.privatizers import DuchiMechanism, HybridMechanism, PiecewiseMechanism

X_MEAN = np.array([[0.0, 1.0], [0.5, 0.2], [1.0, 0.0]])
X_RANGE = np.array([[0], [3], [7]])


def _mean(cls, acc):
    return cls(epsilon=1.5, bounds=(0.0, 1.0), accountant=acc, random_state=0)


def _range(cls, acc):
    return cls(epsilon=1.5, categories=list(range(8)), accountant=acc, random_state=0)


CASES = [
    (lambda acc: _mean(DuchiMechanism, acc), X_MEAN, 3.0),  # two columns: 1.5 each
    (lambda acc: _mean(PiecewiseMechanism, acc), X_MEAN, 3.0),
    (lambda acc: _mean(HybridMechanism, acc), X_MEAN, 3.0),
    (lambda acc: _range(HaarWavelet, acc), X_RANGE, 1.5),
    (lambda acc: _range(HierarchicalHistogram, acc), X_RANGE, 1.5),
]


@pytest.mark.parametrize(("make", "X", "per_call"), CASES)
def test_transform_charges_the_stated_guarantee(make, X, per_call):
    acc = PrivacyAccountant(budget=4.0)
    priv = make(acc).fit(X)
    priv.transform(X)
    assert acc.spent == pytest.approx(per_call)
    ledger = acc.ledger
    assert len(ledger) == 1
    with simulation():
        priv.transform(X)  # simulated inputs are not people: nothing is charged
    assert acc.spent == pytest.approx(per_call)
    with pytest.raises(BudgetExceededError):
        priv.transform(X)
        priv.transform(X)  # the second call at the latest exceeds 4.0
    assert acc.spent <= 4.0


@pytest.mark.parametrize(("make", "X", "per_call"), CASES)
def test_refused_values_are_not_charged(make, X, per_call):
    acc = PrivacyAccountant(budget=4.0)
    priv = make(acc).fit(X)
    with pytest.raises(ValueError, match="outside"):
        priv.transform(X + 100)
    assert acc.spent == 0.0


def test_accountant_must_be_an_accountant():
    with pytest.raises(ValueError, match="accountant"):
        DuchiMechanism(epsilon=1.0, bounds=(0, 1), accountant="ledger").fit(X_MEAN)

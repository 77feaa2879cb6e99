"""ShuffleDP: the central guarantee of a shuffled collection, composed and accounted."""

import math

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer

from skldp.exceptions import BudgetExceededError
from skldp.privacy import (
    LDP,
    BlockStructuredLDP,
    PrivacyAccountant,
    SequentialComposition,
    ShuffleDP,
    charged_delta,
    charged_epsilon,
    compose,
    guarantee_of,
    shuffle_guarantee,
    verify,
)
from skldp.privatizers import RandomizedResponse


def test_shuffle_dp_model_states_a_central_guarantee():
    m = ShuffleDP(0.16977, 1e-6, n=100_000, method="clone")
    assert m == ShuffleDP(0.16977, 1e-6, n=100_000, method="clone")
    assert m != ShuffleDP(0.16977, 2e-6, n=100_000, method="clone")
    assert repr(m) == "ShuffleDP(epsilon=0.16977, delta=1e-06, n=100000, method='clone')"
    assert charged_epsilon(m) == 0.16977 and charged_delta(m) == 1e-6
    assert charged_delta(LDP(1.0)) == 0.0
    with pytest.raises(ValueError, match="central guarantee"):
        m.epsilon_matrix(3)
    with pytest.raises(ValueError, match="central guarantee"):
        verify(np.eye(2), m)
    for bad, match in [(1.0, r"\[0, 1\)"), (-1e-6, r"\[0, 1\)")]:
        with pytest.raises(ValueError, match=match):
            ShuffleDP(0.1, bad)
    with pytest.raises(TypeError, match="delta must be a number"):
        ShuffleDP(0.1, "1e-6")
    with pytest.raises(ValueError, match="n must be a positive integer"):
        ShuffleDP(0.1, 1e-6, n=0)


def test_shuffle_guarantee_model_is_its_shuffle_dp():
    g = shuffle_guarantee(4.0, 100_000, 1e-6)
    assert g.model == ShuffleDP(g.epsilon, 1e-6, n=100_000, method="clone")
    assert g.model.epsilon == pytest.approx(0.16977, abs=1e-5)


def test_compose_adds_epsilons_and_deltas():
    a, b = ShuffleDP(0.2, 1e-6, n=1000), ShuffleDP(0.3, 2e-6, n=1000)
    got = compose([a, LDP(1.0), b], [None, 3, None])
    assert got == ShuffleDP(1.5, 3e-6, n=1000, method="composition")
    assert math.isclose(got.delta, 3e-6, rel_tol=1e-15)
    # collections of different sizes: n unknown
    assert compose([a, ShuffleDP(0.1, 0.0, n=10)], [None, None]).n is None
    # a local model that leaves pairs unprotected states no central (epsilon, delta)
    mixed = compose([a, BlockStructuredLDP([0, 0, 1], 1.0)], [None, 3])
    assert isinstance(mixed, SequentialComposition)
    assert charged_epsilon(mixed) == pytest.approx(1.2) and charged_delta(mixed) == 1e-6


def _ct():
    a_seed, b_seed = np.random.SeedSequence(0).spawn(2)
    return ColumnTransformer(
        [
            ("a", RandomizedResponse(1.0, categories=[[0, 1]], random_state=a_seed), [0]),
            ("b", RandomizedResponse(2.0, categories=[[0, 1, 2]], random_state=b_seed), [1]),
        ]
    ).fit([[0, 1], [1, 2]])


def test_guarantee_of_shuffled_reports():
    ct = _ct()
    got = guarantee_of(ct, n_shuffled=100_000, delta=1e-6)
    # the composed 3-LDP row of reports, shuffled: the generic clone bound at eps0 = 3
    assert got == shuffle_guarantee(3.0, 100_000, 1e-6).model
    assert got.epsilon == pytest.approx(0.092758, abs=1e-6)
    # one binary randomized response: its exact curve (spec 4.8 claim 5: 0.12661)
    rr = RandomizedResponse(1.0, categories=[0, 1], random_state=0).fit([0, 1])
    exact = guarantee_of(rr, n_shuffled=1000, delta=1e-6)
    assert exact.method == "exact" and exact.epsilon == pytest.approx(0.12661, abs=1e-5)
    # composed with a second release: basic composition
    both = compose([exact, guarantee_of(ct)], [None, None])
    assert both.epsilon == pytest.approx(exact.epsilon + 3.0)
    with pytest.raises(ValueError, match="needs the target delta"):
        guarantee_of(ct, n_shuffled=1000)
    with pytest.raises(ValueError, match="give n_shuffled"):
        guarantee_of(ct, delta=1e-6)


def test_accountant_charges_a_shuffled_collection():
    acc = PrivacyAccountant(budget=2.0, delta_budget=2.5e-6)
    g = shuffle_guarantee(4.0, 100_000, 1e-6)
    acc.charge_shuffled(g.model)
    acc.charge(0.5, privatizer="local")  # an LDP report: (0.5, 0)
    c = acc.charge_shuffled(shuffle_guarantee(4.0, 100_000, 1e-6, method="clone").model)
    assert acc.spent == pytest.approx(2 * g.epsilon + 0.5)
    assert acc.spent_delta == pytest.approx(2e-6, rel=1e-12)
    ledger = acc.ledger
    assert ledger["delta"].tolist() == [1e-6, 0.0, 1e-6]
    np.testing.assert_array_equal(ledger["n_people"], [100_000, np.nan, 100_000])
    assert ledger["guarantee"].iloc[0].startswith("ShuffleDP(epsilon=0.16977")
    # a third collection would take delta to 3e-6 > 2.5e-6: refused, nothing recorded
    with pytest.raises(BudgetExceededError, match="delta_budget 2.5e-06"):
        acc.charge_shuffled(g.model)
    assert len(acc.ledger) == 3
    c.cancel()
    assert acc.spent_delta == pytest.approx(1e-6, rel=1e-12)
    assert "spent_delta=1e-06" in repr(acc)


def test_accountant_without_delta_budget_refuses_shuffled_charges():
    acc = PrivacyAccountant(budget=10.0)
    g = shuffle_guarantee(4.0, 10_000, 1e-6).model
    with pytest.raises(BudgetExceededError, match="promises pure epsilon-DP"):
        acc.charge_shuffled(g)
    assert acc.spent == 0 and len(acc.ledger) == 0
    # a shuffled collection at delta 0 (epsilon_0 itself) is fine
    acc.charge_shuffled(ShuffleDP(4.0, 0.0, n=10))
    assert acc.spent == 4.0 and acc.spent_delta == 0.0
    with pytest.raises(TypeError, match="ShuffleDP"):
        acc.charge_shuffled(shuffle_guarantee(4.0, 10_000, 1e-6))
    with pytest.raises(ValueError, match="delta_budget must be in"):
        PrivacyAccountant(1.0, delta_budget=1.0)

"""The accountant's cap of memoized (longitudinal) privatizers: per question and per person key.

Issue 27, items 4 and 5: two yes/no questions answered by the same people shared one
epsilon_infinity cap (certified 2.0, measured 4.02), and a new key on every call kept the
certificate at 2.0 after 100 calls while a majority vote of the reports recovered the value
far more often than any 2-LDP view allows.
"""

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from skldp.privacy import LDP, PrivacyAccountant, tight_epsilon_matrix
from skldp.privatizers import LongitudinalOUE, LongitudinalRAPPOR, LongitudinalRR

EPS_INF, EPS_1 = 2.0, 0.5


def _keys(n, rng):
    """Reproducible 16-byte keys for tests (real keys come from make_person_keys)."""
    raw = rng.bytes(16 * n)
    out = np.empty(n, dtype=object)
    out[:] = [raw[i : i + 16] for i in range(0, 16 * n, 16)]
    return out


def _frame(values, keys):
    return pd.DataFrame({"value": values, "key": keys})


def _lrr(acc, **kwargs):
    return LongitudinalRR(
        epsilon_infinity=EPS_INF, epsilon_1=EPS_1, categories=[0, 1], accountant=acc, **kwargs
    )


def _best_guess_bound(epsilon):
    """The largest success of any guess of a uniform yes/no value from an epsilon-LDP view."""
    return 1.0 / (1.0 + math.exp(-epsilon))


# -- item 4: the cap is per (person, question) --------------------------------------------------


def test_two_questions_are_certified_at_least_their_exact_loss():
    rng = np.random.default_rng(0)
    n = 4000
    keys = _keys(n, rng)
    acc = PrivacyAccountant(budget=np.inf)
    x1, x2 = rng.integers(0, 2, n), rng.integers(0, 2, n)
    q1 = _lrr(acc, question="smokes", random_state=1).fit(_frame(x1, keys))
    q2 = _lrr(acc, question="drinks", random_state=2).fit(_frame(x2, keys))
    for _ in range(10):  # ten days of both questions, every person with their one key
        q1.transform(_frame(x1, keys))
        q2.transform(_frame(x2, keys))
    # each question is capped at its own epsilon_infinity: 2 x cap in all
    assert acc.spent == pytest.approx(2 * EPS_INF, abs=1e-12)
    # The two questions' PRRs are independent (the question is in the memo): for the same
    # value, they agree as often as two independent k-RR draws, sum_b P(b | v)^2 (0.79),
    # not always, as they did when both questions hung on one memo.
    v = np.ones(n, dtype=np.int64)
    k0, k1 = _key_halves(keys)
    prr1 = q1.channel_.memoized_prr(v, k0, k1, q1._memo_tag)
    prr2 = q2.channel_.memoized_prr(v, k0, k1, q2._memo_tag)
    keep = q1.channel_.prr.keep
    agree = keep**2 + (1 - keep) ** 2
    sd = math.sqrt(agree * (1 - agree) / n)
    assert abs(np.mean(prr1 == prr2) - agree) < 5 * sd
    # So all the reports of both questions are a post-processing of the pair of independent
    # PRRs, whose channel (the Kronecker product) has the exact loss 2 epsilon_infinity over
    # the pairs of answers: the certificate covers it.
    joint = np.kron(q1.channel_.prr.to_dense(), q2.channel_.prr.to_dense())
    exact = tight_epsilon_matrix(joint).max()
    assert exact == pytest.approx(2 * EPS_INF, rel=1e-9)
    assert acc.spent >= exact - 1e-12


def _key_halves(keys):
    from skldp._memo import person_keys

    return person_keys(keys)


def test_the_question_changes_the_memo_and_the_unnamed_memo_is_unchanged():
    X = _frame([0, 1], _keys(2, np.random.default_rng(0)))
    unnamed = _lrr(None).fit(X)
    a, b = _lrr(None, question="a").fit(X), _lrr(None, question="b").fit(X)
    assert len({unnamed._memo_tag, a._memo_tag, b._memo_tag}) == 3
    # the unnamed tag is the one of earlier versions: memos drawn before stay valid
    from skldp._memo import memo_tag

    ch = unnamed.channel_
    assert unnamed._memo_tag == memo_tag(type(ch).__name__, ch.memo_parameters(), [0, 1])
    # a named question's tag depends on nothing but the question and the mechanism (stable
    # across objects and processes)
    assert _lrr(None, question="a").fit(X)._memo_tag == a._memo_tag
    assert a.privacy_.question == "a" and unnamed.privacy_.question is None
    assert "question='a'" in repr(a.privacy_)


@pytest.mark.parametrize("bad", ["", 3, b"q"])
def test_a_bad_question_is_named(bad):
    X = _frame([0, 1], _keys(2, np.random.default_rng(0)))
    with pytest.raises(ValueError, match="question"):
        _lrr(None, question=bad).fit(X)


def test_two_unnamed_objects_on_one_memo_are_refused():
    # Two unnamed privatizers with the same parameters draw the same PRR from the same key
    # and value: if they ask two questions, equal answers share one PRR, which no per-object
    # cap bounds. The accountant cannot tell, so the second object is refused by name.
    rng = np.random.default_rng(1)
    keys = _keys(50, rng)
    acc = PrivacyAccountant(budget=np.inf)
    first = _lrr(acc).fit(_frame(rng.integers(0, 2, 50), keys))
    first.transform(_frame(rng.integers(0, 2, 50), keys))
    second = _lrr(acc).fit(_frame(rng.integers(0, 2, 50), keys))
    with pytest.raises(ValueError, match=r"another privatizer object \(LongitudinalRR at 0x"):
        second.transform(_frame(rng.integers(0, 2, 50), keys))
    assert acc.ledger.shape[0] == 1  # nothing recorded for the refused call
    # the same object keeps its own cap; an object of another memo is independent
    for _ in range(5):
        first.transform(_frame(rng.integers(0, 2, 50), keys))
    assert acc.spent == EPS_INF
    other = LongitudinalRR(epsilon_infinity=3.0, epsilon_1=EPS_1, categories=[0, 1])
    other.set_params(accountant=acc).fit(_frame([0] * 50, keys)).transform(_frame([0] * 50, keys))
    assert acc.spent == EPS_INF + EPS_1


# -- item 5: the cap holds only for keys seen before ----------------------------------------------


@pytest.mark.parametrize("question", [None, "q"])
def test_a_new_key_every_call_is_charged_every_call(question):
    rng = np.random.default_rng(2)
    n, days = 2000, 100
    acc = PrivacyAccountant(budget=np.inf)
    x = rng.integers(0, 2, n)
    lrr = _lrr(acc, question=question, random_state=3).fit(_frame(x, _keys(n, rng)))
    yes = np.zeros(n, dtype=np.int64)
    for _ in range(days):  # the same people, each with a new key on every call
        reports = np.asarray(lrr.transform(_frame(x, _keys(n, rng))))[:, 0]
        yes += reports
    certified = acc.spent
    assert certified == pytest.approx(days * EPS_1, rel=1e-12)  # nothing capped
    # A majority vote over the 100 reports recovers the value far more often than a 2-LDP
    # view allows (88.1%), but within what the certified epsilon allows.
    guess = (yes > days / 2).astype(np.int64)
    success = np.mean(guess == x)
    assert success > _best_guess_bound(EPS_INF) + 0.05
    assert success <= _best_guess_bound(certified)


def test_a_person_who_switches_keys_and_back_is_charged_per_key():
    # Keys are capped one by one: a key seen in one call and then again after three calls
    # with other keys has spent 0.5 on its own, so the person has spent 0.5 + 3 x 0.5 + 0.5.
    rng = np.random.default_rng(3)
    acc = PrivacyAccountant(budget=np.inf)
    first = _keys(10, rng)
    lrr = _lrr(acc).fit(_frame([1] * 10, first))
    lrr.transform(_frame([1] * 10, first))
    for _ in range(3):
        lrr.transform(_frame([1] * 10, _keys(10, rng)))
    lrr.transform(_frame([1] * 10, first))
    assert acc.ledger["epsilon"].tolist() == [EPS_1] * 5
    # once every key of a call has spent epsilon_infinity (four calls), the call is free
    for _ in range(3):
        lrr.transform(_frame([1] * 10, first))
    assert acc.ledger["epsilon"].tolist()[5:] == [EPS_1, EPS_1, 0.0]
    # a call mixing capped keys with one new key is charged in full
    mixed = first.copy()
    mixed[0] = _keys(1, rng)[0]
    lrr.transform(_frame([1] * 10, mixed))
    assert acc.ledger["epsilon"].tolist()[-1] == EPS_1


def test_a_key_twice_in_one_call_is_never_capped():
    rng = np.random.default_rng(4)
    acc = PrivacyAccountant(budget=np.inf)
    keys = _keys(5, rng)
    keys[1] = keys[0]  # two rows (two people, or one person twice) with one key
    lrr = _lrr(acc).fit(_frame([0] * 5, keys))
    for _ in range(6):
        lrr.transform(_frame([0] * 5, keys))
    assert acc.spent == 6 * EPS_1
    # without the shared key the others would have been capped at epsilon_infinity
    for _ in range(6):
        lrr.transform(_frame([0] * 4, keys[1:]))
    assert acc.ledger["epsilon"].tolist()[6:] == [EPS_1] * 6  # keys[0] stays untracked


def test_a_call_that_raises_does_not_count_its_keys():
    rng = np.random.default_rng(5)
    acc = PrivacyAccountant(budget=np.inf)
    keys = _keys(3, rng)
    lrr = _lrr(acc).fit(_frame([0, 1, 0], keys))
    for _ in range(2):
        lrr.transform(_frame([0, 1, 0], keys))
    with pytest.raises(ValueError):
        lrr.transform(_frame([0, 1, 7], keys))  # 7 is outside the domain: nothing released
    for _ in range(3):
        lrr.transform(_frame([0, 1, 0], keys))
    assert acc.ledger["epsilon"].tolist() == [EPS_1] * 4 + [0.0]


@pytest.mark.parametrize(
    "make",
    [
        lambda acc: LongitudinalOUE(
            epsilon_infinity=2.0, epsilon_1=1.0, categories=[0, 1, 2], accountant=acc
        ),
        lambda acc: LongitudinalRAPPOR(categories=[0, 1, 2], accountant=acc),
    ],
)
def test_every_memoized_privatizer_is_capped_per_key(make):
    rng = np.random.default_rng(6)
    acc = PrivacyAccountant(budget=np.inf)
    keys = _keys(20, rng)
    priv = make(acc).fit(_frame([0, 1] * 10, keys))
    for _ in range(8):
        priv.transform(_frame([0, 1] * 10, keys))
    assert acc.spent == pytest.approx(priv.privacy_.epsilon_infinity, rel=1e-12)
    before = acc.spent
    priv.transform(_frame([0, 1] * 10, _keys(20, rng)))
    assert acc.spent == pytest.approx(before + priv.privacy_.epsilon_1, rel=1e-12)


def test_manual_charges_without_keys_are_not_capped():
    from skldp.privacy import LongitudinalLDP

    acc = PrivacyAccountant(budget=np.inf)
    model = LongitudinalLDP(EPS_1, EPS_INF, memo="abc", question="q")
    for _ in range(6):
        acc.charge(EPS_1, privatizer="survey app", guarantee=model, n_people=3)
    assert acc.spent == 6 * EPS_1
    keys = _keys(3, np.random.default_rng(7))
    for _ in range(6):
        acc.charge(EPS_1, privatizer="survey app", guarantee=model, person_keys=keys)
    assert acc.ledger["epsilon"].tolist()[6:] == [EPS_1] * 4 + [0.0] * 2
    with pytest.raises(ValueError, match="one key per person; got 3 keys for n_people=4"):
        acc.charge(EPS_1, privatizer="x", guarantee=model, n_people=4, person_keys=keys)
    with pytest.raises(TypeError, match="person_keys column must hold"):
        acc.charge(EPS_1, privatizer="x", guarantee=model, person_keys=[1, 2, 3])
    # a plain guarantee ignores keys
    acc.charge(1.0, privatizer="x", guarantee=LDP(1.0), person_keys=keys)
    assert acc.ledger["epsilon"].tolist()[-1] == 1.0


def test_fingerprints_cost_20_bytes_per_person_and_are_never_written_out():
    rng = np.random.default_rng(8)
    n = 1000
    keys = _keys(n, rng)
    acc = PrivacyAccountant(budget=np.inf)
    lrr = _lrr(acc, question="q").fit(_frame([0] * n, keys))
    lrr.transform(_frame([0] * n, keys))
    (ledger,) = acc._memos.values()
    assert ledger.seen.nbytes + ledger.counts.nbytes == 20 * n
    # the fingerprints are keyed by the accountant's secret: not the keys themselves
    assert not set(ledger.seen.tobytes()[i : i + 16] for i in range(0, 16 * n, 16)) & set(keys)
    blob = pickle.dumps(acc)
    assert all(k not in blob for k in keys[:50])
    copy = pickle.loads(blob)
    assert copy._memos == {} and copy._secret is None
    assert copy.spent == acc.spent


def test_clones_of_a_named_question_share_its_cap_per_key():
    rng = np.random.default_rng(9)
    keys = _keys(30, rng)
    acc = PrivacyAccountant(budget=np.inf)
    lrr = _lrr(acc, question="mood").fit(_frame([1] * 30, keys))
    for _ in range(3):
        clone(lrr).fit(_frame([1] * 30, keys)).transform(_frame([1] * 30, keys))
    lrr.transform(_frame([1] * 30, keys))
    lrr.transform(_frame([1] * 30, keys))
    assert acc.ledger["epsilon"].tolist() == [EPS_1] * 4 + [0.0]

"""Memoized privatizers (LongitudinalRR, LongitudinalOUE, LongitudinalRAPPOR): the memo, the
keys, the accountant's cap, the audit of r reports per person, and estimation over days."""

import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone

from skldp import EMEstimator, EmpiricalEstimator, ProjectedEstimator
from skldp._memo import memo_words, person_keys, siphash24
from skldp.exceptions import BudgetExceededError, InvalidParameterError
from skldp.privacy import LongitudinalLDP, PrivacyAccountant, audit, simulation
from skldp.privatizers import (
    LongitudinalOUE,
    LongitudinalRAPPOR,
    LongitudinalRR,
    RandomizedResponse,
    make_person_keys,
)

CATS = ["a", "b", "c"]
MECHANISMS = [
    LongitudinalRR(epsilon_infinity=2.0, epsilon_1=0.5, categories=CATS),
    LongitudinalOUE(epsilon_infinity=2.0, epsilon_1=1.0, categories=CATS),
    LongitudinalRAPPOR(f=0.5, p=0.5, q=0.75, categories=CATS),
]


def _keys(n, seed):
    """Reproducible 16-byte keys for tests (real keys come from make_person_keys)."""
    raw = np.random.default_rng(seed).bytes(16 * n)
    out = np.empty(n, dtype=object)
    out[:] = [raw[i : i + 16] for i in range(0, 16 * n, 16)]
    return out


def _frame(values, keys):
    return pd.DataFrame({"value": values, "key": keys})


# -- the keyed PRF ------------------------------------------------------------------------------


def test_siphash_matches_the_reference_vectors():
    # vectors.h of the SipHash authors: key 00..0f, message 00 01 .. (n - 1), tag little-endian
    key = np.frombuffer(bytes(range(16)), dtype="<u8")
    expected = {
        0: "310e0edd47db6f72",
        8: "6224939a79f5f593",
        16: "db9bc2577fcc2a3f",
        24: "94af49f6c650adb8",
    }
    for n, tag in expected.items():
        words = list(np.frombuffer(bytes(range(n)), dtype="<u8"))
        out = int(siphash24(key[0], key[1], words)).to_bytes(8, "little").hex()
        assert out == tag


def test_memo_words_are_the_same_in_another_process():
    keys = _keys(3, 0)
    k0, k1 = person_keys(keys)
    here = memo_words(k0, k1, 12345, np.array([0, 1, 2]), 4)
    code = (
        "import numpy as np; from skldp._memo import memo_words, person_keys; "
        f"k0, k1 = person_keys(np.array({list(keys)!r}, dtype=object)); "
        "print(memo_words(k0, k1, 12345, np.array([0, 1, 2]), 4).tolist())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert eval(out) == here.tolist()


def test_make_person_keys():
    keys = make_person_keys(1000)
    assert keys.shape == (1000,) and keys.dtype == object
    assert {type(k) for k in keys} == {bytes} and {len(k) for k in keys} == {16}
    assert len(set(keys)) == 1000
    with pytest.raises(ValueError, match="non-negative integer"):
        make_person_keys(-1)


@pytest.mark.parametrize(
    "keys, error, match",
    [
        ([b"short", b"x" * 16], ValueError, "exactly 16 bytes; 1 do not"),
        (["0123456789abcdef", b"x" * 16], TypeError, "type bytes, str"),
        (
            ["0123456789abcdef", "00" * 16],
            ValueError,
            r"32 hexadecimal digits \(16 bytes\); 1 do not",
        ),
        (["zz" * 16, "00" * 16], ValueError, "not hexadecimal"),
        ([None, b"x" * 16], TypeError, "type NoneType"),
        ([1, 2], TypeError, "type int"),
    ],
)
def test_bad_keys_are_refused_by_name(keys, error, match):
    lrr = LongitudinalRR(categories=CATS)
    with pytest.raises(error, match=match):
        lrr.fit(_frame(["a", "b"], np.array(keys, dtype=object)))


def test_hex_text_keys_are_the_same_keys():
    keys = _keys(50, 4)
    text = np.array([k.hex() for k in keys], dtype=object)
    for a, b in zip(person_keys(keys), person_keys(text), strict=True):
        assert_array_equal(a, b)
    values = np.array(CATS)[np.arange(50) % 3]
    lrr = LongitudinalRR(categories=CATS).fit(_frame(values, keys))
    x, tag = np.arange(50) % 3, lrr._memo_tag
    assert_array_equal(
        lrr.channel_.memoized_prr(x, *person_keys(keys), tag),
        lrr.channel_.memoized_prr(x, *person_keys(text), tag),
    )


def test_one_column_is_refused():
    with pytest.raises(ValueError, match="takes two columns: the value, and the person's secret"):
        LongitudinalRR(categories=CATS).fit([["a"], ["b"]])


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: LongitudinalRR(epsilon_infinity=1.0, epsilon_1=1.0), "below epsilon_infinity"),
        (lambda: LongitudinalRAPPOR(p=0.75, q=0.5), "p must be below q"),
        (lambda: LongitudinalRAPPOR(f=1.0), "f must be"),
        (lambda: LongitudinalOUE(epsilon_infinity=1.0, epsilon_1=0.9), "at most epsilon_1 <"),
    ],
)
def test_bad_parameters_are_named(make, match):
    with pytest.raises(InvalidParameterError, match=match):
        make().set_params(categories=CATS).fit(_frame(["a", "b"], _keys(2, 0)))


# -- the memo -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mech", MECHANISMS, ids=lambda m: type(m).__name__)
def test_same_person_and_value_give_the_same_prr_every_day(mech):
    n = 2000
    keys = _keys(n, 1)
    values = np.array(CATS)[np.arange(n) % 3]
    X = _frame(values, keys)
    p1 = clone(mech).set_params(random_state=0).fit(X)
    p2 = pickle.loads(pickle.dumps(clone(mech).set_params(random_state=1).fit(X)))
    ch = p1.channel_
    x = np.arange(n) % 3
    k0, k1 = person_keys(keys)
    prr = ch.memoized_prr(x, k0, k1, p1._memo_tag)
    assert p2._memo_tag == p1._memo_tag  # another instance, another seed, a pickle: one memo
    assert_array_equal(p2.channel_.memoized_prr(x, k0, k1, p2._memo_tag), prr)
    # another value, another key, or another mechanism: another PRR
    other_value = ch.memoized_prr((x + 1) % 3, k0, k1, p1._memo_tag)
    other_key = ch.memoized_prr(x, k1, k0, p1._memo_tag)
    other_mech = ch.memoized_prr(x, k0, k1, p1._memo_tag + 1)
    for other in (other_value, other_key, other_mech):
        assert np.mean(np.any(np.atleast_2d(other.T).T != np.atleast_2d(prr.T).T, axis=1)) > 0.2
    # the IRR is fresh each day: two days' reports differ, their PRR does not
    day1, day2 = np.asarray(p1.transform(X)), np.asarray(p1.transform(X))
    assert np.mean(np.any((day1 != day2).reshape(n, -1), axis=1)) > 0.2


def test_the_memo_tag_depends_on_the_prr_and_the_categories():
    X = _frame(["a", "b"], _keys(2, 0))
    tags = {
        LongitudinalRR(epsilon_infinity=2.0, epsilon_1=0.5, categories=CATS).fit(X)._memo_tag,
        LongitudinalRR(epsilon_infinity=2.0, epsilon_1=0.7, categories=CATS)
        .fit(X)
        ._memo_tag,  # same PRR
        LongitudinalRR(epsilon_infinity=3.0, epsilon_1=0.5, categories=CATS).fit(X)._memo_tag,
        LongitudinalRR(epsilon_infinity=2.0, epsilon_1=0.5, categories=["a", "b", "d"])
        .fit(X)
        ._memo_tag,
        LongitudinalOUE(epsilon_infinity=2.0, epsilon_1=0.5, categories=CATS).fit(X)._memo_tag,
    }
    assert len(tags) == 4  # only the IRR changed between the first two: the PRR is shared


# -- budgets --------------------------------------------------------------------------------------


def test_privacy_states_both_budgets():
    X = _frame(["a", "b"], _keys(2, 0))
    lrr = LongitudinalRR(epsilon_infinity=2.0, epsilon_1=0.5, categories=CATS).fit(X)
    assert isinstance(lrr.privacy_, LongitudinalLDP)
    assert (lrr.privacy_.epsilon_1, lrr.privacy_.epsilon_infinity) == (0.5, 2.0)
    assert lrr.privacy_.epsilon == 0.5 and lrr.privacy_.memo == f"{lrr._memo_tag:016x}"


def test_the_accountant_charges_epsilon_1_per_report_up_to_epsilon_infinity():
    X = _frame(CATS, _keys(3, 0))
    acc = PrivacyAccountant(budget=10.0)
    lrr = LongitudinalRR(
        epsilon_infinity=2.0, epsilon_1=0.5, categories=CATS, accountant=acc, random_state=0
    ).fit(X)
    for _ in range(12):
        lrr.transform(X)
    assert acc.ledger["epsilon"].tolist() == [0.5] * 4 + [0.0] * 8
    assert acc.spent == 2.0
    # an unnamed question is capped per privatizer object: a clone (same PRR) is refused,
    # since the accountant cannot tell whether it asks the same question
    with pytest.raises(ValueError, match=r"neither names its question.*question='...'"):
        clone(lrr).fit(X).transform(X)
    assert acc.spent == 2.0
    # a named question: a clone (same question, same PRR) is capped by the same total
    named = clone(lrr).set_params(question="mood").fit(X)
    for _ in range(5):
        named.transform(X)
    clone(named).fit(X).transform(X)
    assert acc.ledger["epsilon"].tolist()[12:] == [0.5] * 4 + [0.0] * 2
    assert acc.spent == 4.0
    # another memo (another PRR) is charged again
    LongitudinalRR(epsilon_infinity=3.0, epsilon_1=0.5, categories=CATS, accountant=acc).fit(
        X
    ).transform(X)
    assert acc.spent == 4.5
    # a plain mechanism is charged in full, as before
    RandomizedResponse(1.0, categories=CATS, accountant=acc).fit(CATS).transform(CATS)
    assert acc.spent == 5.5


def test_the_accountant_refuses_before_epsilon_infinity_when_the_budget_is_smaller():
    X = _frame(CATS, _keys(3, 0))
    acc = PrivacyAccountant(budget=1.0)
    lrr = LongitudinalRR(epsilon_infinity=2.0, epsilon_1=0.5, categories=CATS, accountant=acc).fit(
        X
    )
    lrr.transform(X)
    lrr.transform(X)
    with pytest.raises(BudgetExceededError, match="no reports were produced"):
        lrr.transform(X)
    assert acc.ledger.shape[0] == 2


def test_a_column_transformer_composes_one_report_of_each_column():
    from sklearn.compose import ColumnTransformer

    from skldp.privacy import LDP, guarantee_of

    X = pd.DataFrame({"v": CATS, "key": _keys(3, 0), "w": [0, 1, 0]})
    ct = ColumnTransformer(
        [
            (
                "memo",
                LongitudinalRR(epsilon_infinity=2.0, epsilon_1=0.5, categories=CATS),
                ["v", "key"],
            ),
            ("plain", RandomizedResponse(1.0, categories=[0, 1]), ["w"]),
        ]
    ).fit(X)
    assert guarantee_of(ct) == LDP(1.5)


def test_rappor_charges_the_remainder_of_epsilon_infinity():
    X = _frame(CATS, _keys(3, 0))
    acc = PrivacyAccountant(budget=np.inf)
    rap = LongitudinalRAPPOR(categories=CATS, accountant=acc).fit(X)
    for _ in range(6):
        rap.transform(X)
    eps_1, eps_inf = rap.privacy_.epsilon_1, rap.privacy_.epsilon_infinity
    assert acc.spent == pytest.approx(eps_inf, rel=1e-12)
    charged = acc.ledger["epsilon"].to_numpy()
    assert charged[:4] == pytest.approx([eps_1] * 4)
    assert charged[4] == pytest.approx(eps_inf - 4 * eps_1) and charged[5] == 0.0


# -- estimators read the reports ----------------------------------------------------------------


@pytest.mark.parametrize("mech", MECHANISMS, ids=lambda m: type(m).__name__)
def test_estimators_work_on_the_reports(mech):
    rng = np.random.default_rng(0)
    p = np.array([0.5, 0.3, 0.2])
    n = 20000
    x = rng.choice(3, size=n, p=p)
    X = _frame(np.array(CATS)[x], _keys(n, 2))
    priv = clone(mech).set_params(random_state=0)
    reports = priv.fit_transform(X)
    ch = priv.channel_
    sd = np.sqrt(ch.variance(p, n))
    for est in (EmpiricalEstimator(), ProjectedEstimator(), EMEstimator()):
        est.fit(reports)
        assert list(est.categories_) == CATS
        assert np.all(np.abs(est.distribution_ - p) < 5 * sd)


# -- the audit of r reports per person ------------------------------------------------------------


class _RepeatedReports:
    """r reports of each row, as one person (a fresh key per row) sending the same value daily.

    ``transform`` returns what an attacker makes of the r reports: its guess of the permanent
    response, the most reported symbol (k-RR, ties to the first) or each bit set when it was
    reported more often than ``r (p + q) / 2`` (unary). That is a post-processing of the
    r-report view, so any privacy loss the audit finds in it is a loss of the view; for r = 1
    it is the report itself. With ``memo=False`` (planted), each report comes with a new key,
    as if nothing were memoized.
    """

    def __init__(self, privatizer, r, seed, memo=True):
        self.privatizer = privatizer
        self.categories_ = privatizer.categories_
        self.r = r
        self.memo = memo
        self._rng = np.random.default_rng(seed)

    def _fresh_keys(self, n):
        raw = self._rng.bytes(16 * n)
        out = np.empty(n, dtype=object)
        out[:] = [raw[i : i + 16] for i in range(0, 16 * n, 16)]
        return out

    def transform(self, X):
        values = np.asarray(X, dtype=object)[:, 0]
        keys = self._fresh_keys(values.shape[0])
        ch = self.privatizer.channel_
        total = 0
        for _ in range(self.r):
            if not self.memo:
                keys = self._fresh_keys(values.shape[0])
            rep = np.asarray(self.privatizer.transform(_frame(values, keys))).astype(np.int64)
            if rep.shape[1] == 1:  # symbols: counts per category
                rep = rep[:, :1] == np.arange(ch.n_inputs)[None, :]
            total = total + rep
        if isinstance(self.privatizer, LongitudinalRR):
            return np.argmax(total, axis=1)
        return (total > self.r * (ch.irr_p + ch.irr_q) / 2).astype(np.uint8)


@pytest.mark.parametrize("mech", MECHANISMS, ids=lambda m: type(m).__name__)
@pytest.mark.parametrize("r", [1, 10, 100])
def test_audit_of_r_reports_per_person_stays_under_epsilon_infinity(mech, r):
    priv = clone(mech).set_params(random_state=r).fit(_frame(CATS, _keys(3, 0)))
    eps_inf = priv.privacy_.epsilon_infinity
    n = {1: 20000, 10: 10000, 100: 4000}[r]
    with simulation():
        result = audit(_RepeatedReports(priv, r, seed=r), eps_inf, n_samples=n, random_state=0)
    assert result.passed, result.pairs
    assert result.epsilon_lower_bound <= eps_inf
    if r == 100:  # many reports reveal more than one does, still within epsilon_infinity
        assert result.epsilon_lower_bound > priv.privacy_.epsilon_1


def test_audit_refutes_epsilon_infinity_without_the_memo():
    priv = LongitudinalRR(epsilon_infinity=2.0, epsilon_1=0.5, categories=CATS, random_state=0).fit(
        _frame(CATS, _keys(3, 0))
    )
    with simulation():
        result = audit(
            _RepeatedReports(priv, 100, seed=5, memo=False), 2.0, n_samples=4000, random_state=0
        )
    assert not result.passed and result.epsilon_lower_bound > 2.0


# -- estimation from daily reports of the same people -------------------------------------------


@pytest.mark.parametrize("mech", MECHANISMS, ids=lambda m: type(m).__name__)
def test_estimates_pooled_over_days_match_the_longitudinal_variance(mech):
    # 30 independent studies of n people each reporting r days; the pooled unbiased estimate's
    # error, standardized by the longitudinal variance, has mean square 1 (90 values: the mean
    # of chi2_1 has sd sqrt(2/90) = 0.15; the tolerance is 4 sd). Standardized by the naive
    # variance of n r independent reports it has mean square Var_r / Var_naive (about 3 here),
    # and the naive hypothesis (mean square 1) is rejected: the PRR noise does not average out.
    p = np.array([0.5, 0.3, 0.2])
    n, r, studies = 300, 30, 30
    sd = np.sqrt(2 / (3 * studies))
    rng = np.random.default_rng(3)
    priv = clone(mech).set_params(random_state=7).fit(_frame(CATS, _keys(3, 0)))
    ch = priv.channel_
    var_long, var_naive = ch.longitudinal_variance(p, n, r), ch.variance(p, n * r)
    z_long, z_naive = [], []
    for s in range(studies):
        x = rng.choice(3, size=n, p=p)
        X = _frame(np.array(CATS)[x], _keys(n, 100 + s))
        est = EmpiricalEstimator()
        for _ in range(r):
            est.partial_fit(priv.transform(X))
        err = est.distribution_ - p
        z_long.append(err / np.sqrt(var_long))
        z_naive.append(err / np.sqrt(var_naive))
    ms_long = float(np.mean(np.square(z_long)))
    ms_naive = float(np.mean(np.square(z_naive)))
    assert abs(ms_long - 1.0) < 4 * sd
    ratio = float(np.mean(var_long / var_naive))
    assert ratio > 2.5
    assert abs(ms_naive / ratio - 1.0) < 4 * sd
    assert ms_naive > 1.0 + 4 * sd


def test_a_dask_frame_is_privatized_partition_by_partition_with_the_same_memo():
    dd = pytest.importorskip("dask.dataframe")
    n = 4000
    rng = np.random.default_rng(6)
    x = rng.integers(0, 3, n)
    keys = _keys(n, 7)
    frame = pd.DataFrame({"v": np.array(CATS)[x], "key": [k.hex() for k in keys]})
    lrr = LongitudinalRR(epsilon_infinity=2.0, epsilon_1=0.5, categories=CATS, random_state=0).fit(
        frame.iloc[:3]
    )
    out = lrr.transform(dd.from_pandas(frame, npartitions=4)).compute()
    assert out.index.equals(frame.index)
    # each report keeps its person's memoized PRR with the IRR's keep probability p2
    ch = lrr.channel_
    prr = ch.memoized_prr(x, *person_keys(keys), lrr._memo_tag)
    keep = ch.irr_truth + (1 - ch.irr_truth) / 3
    agree = float(np.mean(out.iloc[:, 0].to_numpy() == prr))
    assert abs(agree - keep) < 5 * np.sqrt(keep * (1 - keep) / n)


def test_categories_are_required():
    # The memo is keyed to the domain: a domain inferred from each day's values (here
    # {a, b}, then {a, b, c}) would draw a new permanent response each day while privacy_
    # still stated one, so the memoized privatizers refuse to infer it.
    keys = _keys(3, 0)
    for make in (LongitudinalRR, LongitudinalOUE, LongitudinalRAPPOR):
        with pytest.raises(InvalidParameterError, match="needs categories=.*new permanent"):
            make().fit(_frame(["a", "b", "a"], keys))

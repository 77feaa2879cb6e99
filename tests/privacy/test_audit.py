"""The black-box privacy audit: it passes every mechanism and catches planted bugs."""

import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.stats import binomtest

from skldp import PersonalizedULDP, RandomizedResponse, UtilityOptimizedRAPPOR, UtilityOptimizedRR
from skldp.base import BasePrivatizer
from skldp._validation import check_epsilon
from skldp.channels import (
    BitVectorChannel,
    PersonalizedRRChannel,
    RandomizedResponseChannel,
    UtilityOptimizedRRChannel,
)
from skldp.privacy import LDP, ContextAwareLDP, PrivacyModel, audit
from skldp.privacy._audit import clopper_pearson
from tests.registry import PRIVATIZERS, domain, fitted, instance_id


# -- planted mechanisms, written here so that the audit is tested on known truths --------------
class _UnaryChannel(BitVectorChannel):
    """Unary encoding: the true bit is 1 w.p. ``keep``, every other bit w.p. ``flip``."""

    def __init__(self, epsilon, n_inputs, keep, flip):
        self.epsilon, self.n_inputs, self.keep, self.flip = epsilon, n_inputs, keep, flip
        self.width = n_inputs

    def _log_scale(self, reports):
        ones = reports.sum(axis=1)
        return ones * math.log(self.flip) + (self.width - ones) * math.log1p(-self.flip)

    def _relative_likelihood(self, reports):
        hit = reports.astype(bool)
        return np.where(hit, self.keep / self.flip, (1 - self.keep) / (1 - self.flip)).astype(float)

    def _key(self):
        return (self.epsilon, self.n_inputs, self.keep, self.flip)

    def guarantee(self):
        return LDP(self.epsilon)

    def _sample(self, x, rng):
        bits = (rng.random((x.shape[0], self.n_inputs)) < self.flip).astype(np.int64)
        bits[np.arange(x.shape[0]), x] = rng.random(x.shape[0]) < self.keep
        return bits

    def _statistics(self, reports):
        return reports.sum(axis=0)

    def _forward(self, p):
        return self.flip + (self.keep - self.flip) * p

    def _adjoint(self, v):
        return self.flip * v.sum() + (self.keep - self.flip) * v

    def _to_dense(self):
        # Q(y | x) over all 2**k bit vectors y (bit j of column y is (y >> j) & 1).
        k = self.n_inputs
        bits = (np.arange(2**k)[None, :] >> np.arange(k)[:, None]) & 1  # (k, 2**k)
        one = np.where(np.eye(k, dtype=bool), self.keep, self.flip)  # P(bit j = 1 | x)
        return np.prod(
            np.where(bits[None, :, :] == 1, one[:, :, None], 1 - one[:, :, None]), axis=1
        )


class _UnaryEncoding(BasePrivatizer):
    """Optimized unary encoding (keep 1/2, flip 1/(e^eps+1)), or the planted bug.

    The bug keeps the true bit with the symmetric-RAPPOR probability e^eps/(e^eps+1) while
    flipping the others with OUE's 1/(e^eps+1): the mechanism is then 2*eps-LDP, not eps-LDP.
    """

    def __init__(self, epsilon=1.0, *, buggy=False, categories=None, random_state=None):
        self.epsilon = epsilon
        self.buggy = buggy
        self.categories = categories
        self.random_state = random_state

    def _check_params(self):
        check_epsilon(self.epsilon)

    def _make_channel(self, categories, column):
        e = math.exp(self.epsilon)
        keep = e / (e + 1) if self.buggy else 0.5
        return _UnaryChannel(self.epsilon, len(categories), keep, 1 / (e + 1))


class _OverspentRR(BasePrivatizer):
    """k-RR that samples at 1.5 * epsilon but claims epsilon."""

    def __init__(self, epsilon=1.0, *, categories=None, random_state=None):
        self.epsilon = epsilon
        self.categories = categories
        self.random_state = random_state

    def _make_channel(self, categories, column):
        return RandomizedResponseChannel(1.5 * self.epsilon, len(categories))

    def _column_privacy(self, channel, column):
        return LDP(self.epsilon)


class _ToyULDP(PrivacyModel):
    """(X_S, Y_P, eps)-utility-optimized LDP, stated by its protected output symbols."""

    def __init__(self, epsilon, protected_outputs):
        self.epsilon = epsilon
        self.protected_outputs = np.asarray(protected_outputs)

    def _key(self):
        return (self.epsilon, tuple(self.protected_outputs))

    def epsilon_matrix(self, n_inputs):
        raise ValueError("utility-optimized LDP is a statement about protected outputs")


class _ToyURRChannel(RandomizedResponseChannel):
    """uRR (Murakami and Kawamoto 2019): keep x w.p. (e-1)/u, else a uniform sensitive symbol."""

    def __init__(self, epsilon, n_inputs, n_sensitive):
        self.epsilon, self.n_inputs, self.n_outputs = epsilon, n_inputs, n_inputs
        self.n_sensitive = n_sensitive

    def _key(self):
        return (self.epsilon, self.n_inputs, self.n_sensitive)

    def __reduce__(self):
        return (type(self), self._key())

    def _sample(self, x, rng):
        e = math.exp(self.epsilon)
        keep = (e - 1) / (self.n_sensitive + e - 1)
        out = x.copy()
        move = rng.random(x.shape[0]) >= keep
        out[move] = rng.integers(0, self.n_sensitive, size=int(move.sum()))
        return out


class _ToyURR(BasePrivatizer):
    def __init__(self, epsilon=1.0, *, n_sensitive=2, categories=None, random_state=None):
        self.epsilon = epsilon
        self.n_sensitive = n_sensitive
        self.categories = categories
        self.random_state = random_state

    def _make_channel(self, categories, column):
        return _ToyURRChannel(self.epsilon, len(categories), self.n_sensitive)

    def _column_privacy(self, channel, column):
        return _ToyULDP(self.epsilon, np.arange(self.n_sensitive))


def _fit(privatizer, k):
    return privatizer.set_params(categories=list(range(k))).fit([[i] for i in range(k)])


# -- every real mechanism passes, with a positive audited loss --------------------------------
@pytest.mark.parametrize("privatizer", PRIVATIZERS, ids=instance_id)
def test_audit_passes_every_mechanism(privatizer):
    p = fitted(privatizer)
    result = audit(p, n_samples=40_000, random_state=0)
    assert result.passed, result.violations
    assert len(result.pairs) > 0
    assert result.epsilon_lower_bound > 0
    assert np.all(result.pairs["epsilon_lower_bound"] <= result.pairs["budget"])
    assert set(result.pairs["x"]) <= set(domain(privatizer))


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_audit_is_nearly_tight_on_randomized_response(eps):
    rr = _fit(RandomizedResponse(epsilon=eps), 3)
    result = audit(rr, n_samples=100_000, random_state=1)
    assert result.passed
    assert 0.9 * eps < result.epsilon_lower_bound <= eps


# -- planted bugs fail -----------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_planted_unary_bug_is_caught(seed):
    buggy = _fit(_UnaryEncoding(epsilon=1.0, buggy=True), 4)
    result = audit(buggy, n_samples=40_000, random_state=seed)
    assert not result.passed
    # The true loss is 2 * epsilon; the bound is close to it and far above the claim.
    assert 1.8 < result.epsilon_lower_bound <= 2.0


def test_planted_channels_are_what_they_claim_to_be():
    from skldp.privacy import tight_epsilon_matrix

    good = _fit(_UnaryEncoding(epsilon=1.0), 4).channel_
    bad = _fit(_UnaryEncoding(epsilon=1.0, buggy=True), 4).channel_
    assert_allclose(good.to_dense().sum(axis=1), 1.0)
    off = ~np.eye(4, dtype=bool)
    assert_allclose(tight_epsilon_matrix(good)[off], 1.0, rtol=1e-9)
    assert_allclose(tight_epsilon_matrix(bad)[off], 2.0, rtol=1e-9)


def test_correct_unary_encoding_passes():
    oue = _fit(_UnaryEncoding(epsilon=1.0), 4)
    result = audit(oue, n_samples=40_000, random_state=0)
    assert result.passed
    assert 0.85 < result.epsilon_lower_bound <= 1.0


def test_wide_unary_bug_is_caught():
    # With 40 bits the whole-vector family is useless and only the bit scores find the loss.
    buggy = _fit(_UnaryEncoding(epsilon=0.5, buggy=True), 40)
    result = audit(buggy, n_samples=30_000, random_state=0)
    assert not result.passed
    assert result.epsilon_lower_bound > 0.8
    # (or the stated channel's likelihood ratio, which the audit also tries)
    assert result.violations["event"].str.startswith(("bit score", "likelihood ratio")).all()


def test_planted_symbol_bug_is_caught():
    bad = _fit(_OverspentRR(epsilon=1.0), 5)
    result = audit(bad, n_samples=50_000, random_state=0)
    assert not result.passed
    assert 1.3 < result.epsilon_lower_bound <= 1.5


def test_model_below_the_truth_fails_and_above_passes():
    rr = _fit(RandomizedResponse(epsilon=2.0), 4)
    assert not audit(rr, model=1.5, n_samples=50_000, random_state=0).passed
    assert audit(rr, model=LDP(2.5), n_samples=50_000, random_state=0).passed


def test_false_alarm_rate_is_controlled():
    # At the exact epsilon each audit fails with probability <= alpha = 0.2; in 10 audits
    # 5 or more failures has probability below 0.7 %.
    rr = _fit(RandomizedResponse(epsilon=1.0), 2)
    fails = sum(not audit(rr, n_samples=5_000, alpha=0.2, random_state=s).passed for s in range(10))
    assert fails <= 4


# -- context-aware and utility-optimized guarantees ------------------------------------------------
def test_context_aware_budgets_are_checked_per_pair():
    rr = _fit(RandomizedResponse(epsilon=1.0), 3)
    E = np.array([[0, 0.5, np.inf], [0.5, 0, 2.0], [np.inf, 2.0, 0]])
    result = audit(rr, model=ContextAwareLDP(E), n_samples=50_000, random_state=0)
    assert not result.passed
    bad = {
        (int(a), int(b))
        for a, b in zip(result.violations["x"], result.violations["x_prime"], strict=True)
    }
    assert bad == {(0, 1), (1, 0)}
    # Pairs without a promise are not tested.
    assert len(result.pairs) == 4


def test_protected_outputs_restrict_the_events():
    urr = _fit(_ToyURR(epsilon=1.0, n_sensitive=2), 5)
    result = audit(urr, n_samples=50_000, random_state=0)
    assert result.passed
    assert 0.85 < result.epsilon_lower_bound <= 1.0
    # The invertible outputs reveal non-sensitive inputs: plain LDP fails.
    assert not audit(urr, model=LDP(1.0), n_samples=50_000, random_state=0).passed


class _EpsilonOnly(PrivacyModel):
    """A utility-optimized model that leaves the protected outputs to the channel."""

    def __init__(self, epsilon):
        self.epsilon = epsilon

    def _key(self):
        return (self.epsilon,)


class _ChannelKnowsProtection(_ToyURRChannel):
    def is_protected(self, y):
        return np.asarray(y) < self.n_sensitive


class _ToyURRChannelProtection(_ToyURR):
    def _make_channel(self, categories, column):
        return _ChannelKnowsProtection(self.epsilon, len(categories), self.n_sensitive)

    def _column_privacy(self, channel, column):
        return _EpsilonOnly(self.epsilon)


def test_protected_outputs_from_the_channel():
    urr = _fit(_ToyURRChannelProtection(epsilon=1.0, n_sensitive=3), 5)
    assert audit(urr, n_samples=50_000, random_state=0).passed
    # Plain LDP covers every output: the channel's protected set is then ignored.
    assert not audit(urr, model=LDP(1.0), n_samples=50_000, random_state=0).passed


def test_large_domain_tests_a_subset_of_inputs():
    rr = _fit(RandomizedResponse(epsilon=3.0), 500)
    result = audit(rr, max_inputs=6, n_samples=20_000, random_state=0)
    assert result.passed
    assert len(set(result.pairs["x"])) == 6
    assert result.epsilon_lower_bound > 1.5


def test_block_budgets_on_a_large_domain_pick_pairs_inside_blocks():
    # Blocks of 3 with no promise across blocks: the inputs chosen must share finite budgets.
    k = 30
    block = np.arange(k) // 3
    E = np.where(block[:, None] == block[None, :], 1.0, np.inf)
    np.fill_diagonal(E, 0.0)
    rr = _fit(RandomizedResponse(epsilon=1.0), k)
    result = audit(rr, model=ContextAwareLDP(E), n_samples=20_000, random_state=0)
    assert result.passed
    assert len(result.pairs) > 0
    assert np.all(result.pairs["budget"] == 1.0)
    assert all(
        a // 3 == b // 3 for a, b in zip(result.pairs["x"], result.pairs["x_prime"], strict=True)
    )


class _BlackBox:
    """Not a skldp class: anything with categories_ and transform can be audited."""

    def __init__(self, epsilon):
        self.epsilon = epsilon
        self.categories_ = [np.array(["no", "yes"], dtype=object)]

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        x = (np.asarray(X, dtype=object).ravel() == "yes").astype(int)
        keep = np.random.default_rng(5).random(x.shape[0]) < math.exp(self.epsilon) / (
            1 + math.exp(self.epsilon)
        )
        return np.where(keep, x, 1 - x)


def test_any_object_with_transform_can_be_audited():
    box = _BlackBox(epsilon=1.0)
    assert audit(box, model=LDP(1.0), n_samples=50_000).passed
    assert not audit(box, model=LDP(0.7), n_samples=50_000).passed
    with pytest.raises(TypeError, match="no guarantee"):
        audit(box)


def test_explicit_inputs_and_pandas_output():
    rr = RandomizedResponse(epsilon=1.0, categories=["a", "b", "c"]).fit([["a"]])
    rr.set_output(transform="pandas")
    result = audit(rr, inputs=["a", "c"], n_samples=20_000, random_state=0)
    assert result.passed
    assert list(result.pairs["x"]) == ["a", "c"]
    assert isinstance(result.pairs, pd.DataFrame)


def test_audit_leaves_the_privatizer_unchanged():
    rr = _fit(RandomizedResponse(epsilon=1.0, random_state=7), 3)
    audit(rr, n_samples=1_000, random_state=0)
    assert rr.random_state == 7


# -- the bounds ------------------------------------------------------------------------------------
@pytest.mark.parametrize("count,n", [(0, 10), (3, 10), (10, 10), (517, 2000)])
def test_clopper_pearson_matches_scipy(count, n):
    level = 0.025
    lo, hi = clopper_pearson(count, n, level)
    ci = binomtest(count, n).proportion_ci(confidence_level=1 - 2 * level, method="exact")
    assert_allclose([lo, hi], [ci.low, ci.high], rtol=1e-9, atol=1e-12)
    if count == 0:
        assert_allclose(hi, 1 - level ** (1 / n), rtol=1e-12)


# -- bad arguments ---------------------------------------------------------------------------------
def test_audit_argument_errors():
    rr = _fit(RandomizedResponse(epsilon=1.0), 3)
    with pytest.raises(ValueError, match="alpha"):
        audit(rr, alpha=1.5)
    with pytest.raises(ValueError, match="n_samples"):
        audit(rr, n_samples=10)
    with pytest.raises(ValueError, match="not fitted"):
        audit(RandomizedResponse(epsilon=1.0))
    with pytest.raises(ValueError, match="^inputs lists values that are not categories.*: 7$"):
        audit(rr, inputs=[0, 7])
    with pytest.raises(ValueError, match="at least two"):
        audit(rr, inputs=[1, 1])
    with pytest.raises(TypeError, match="privacy model"):
        audit(rr, model="strong")
    with pytest.raises(ValueError, match="epsilon"):
        audit(rr, model=-1.0)
    two = RandomizedResponse(epsilon=1.0, categories=[[0, 1], [0, 1]]).fit([[0, 1]])
    with pytest.raises(ValueError, match="one column"):
        audit(two)
    with pytest.raises(TypeError, match="transform"):
        audit(object())


# -- utility-optimized invertibility: a sensitive input must never reach an unprotected output --
class _LeakyURRChannel(UtilityOptimizedRRChannel):
    """uRR whose sensitive inputs go to a non-sensitive output w.p. ``leak``.

    The protected outputs of a sensitive input are scaled by 1 - leak, so every ratio on
    protected outputs stays within e^eps (0.7 is not a loss above epsilon): only the
    invertibility half of ULDP is broken, and a report of that output names a sensitive
    value's owner as holding *some* sensitive value.
    """

    leak = 0.3

    def _sample(self, x, rng):
        out = super()._sample(x, rng)
        moved = self.sensitive_mask[x] & (rng.random(x.shape[0]) < self.leak)
        out[moved] = self.n_inputs - 1  # a non-sensitive (invertible) output
        return out


class _LeakyURR(UtilityOptimizedRR):
    def _make_channel(self, categories, column):
        ch = super()._make_channel(categories, column)
        return _LeakyURRChannel(ch.epsilon, ch.n_inputs, ch.sensitive)


def test_planted_invertibility_leak_is_caught():
    leaky = _LeakyURR(epsilon=1.0, sensitive=[0, 1], categories=[0, 1, 2, 3], random_state=0)
    leaky.fit([[0]])
    Q = leaky.channel_
    # The planted channel keeps every protected ratio within e^eps: the pair audit alone passes.
    P = np.array(
        [[Q.keep + Q.other, Q.other], [Q.other, Q.keep + Q.other], [Q.other] * 2, [Q.other] * 2]
    )
    P[:2] *= 1 - Q.leak
    assert P.max(axis=0).max() / P.min(axis=0).min() <= math.exp(1.0)
    result = audit(leaky, n_samples=20_000, random_state=0)
    assert result.violations.empty  # no protected-output ratio exceeds the budget
    assert not result.passed
    assert result.epsilon_lower_bound == math.inf
    bad = result.invertibility_violations
    assert sorted(bad["x"]) == [0, 1, 3]  # both sensitive inputs, and 3 shares its output
    leaks = bad[bad["sensitive"]]
    assert np.all(leaks["epsilon_lower_bound"] == math.inf)
    # Exact binomial bounds around the planted leak probability of 0.3.
    assert np.all(leaks["p_unprotected_lower"] < 0.3)
    assert np.all(leaks["p_unprotected_upper"] > 0.3)
    assert np.all(leaks["p_unprotected_lower"] > 0.28)
    shared = bad[~bad["sensitive"]]
    assert shared["shared_outputs"].tolist() == [1]


@pytest.mark.parametrize("cls", [UtilityOptimizedRR, UtilityOptimizedRAPPOR])
def test_real_utility_optimized_mechanisms_pass_invertibility(cls):
    p = cls(epsilon=1.0, sensitive=[0, 1], categories=[0, 1, 2, 3, 4], random_state=0).fit([[0]])
    result = audit(p, n_samples=20_000, random_state=0)
    assert result.passed, (result.violations, result.invertibility_violations)
    inv = result.invertibility
    assert inv["sensitive"].tolist() == [True, True, False, False, False]
    assert np.all(inv.loc[inv["sensitive"], "n_unprotected"] == 0)
    assert np.all(inv.loc[~inv["sensitive"], "n_unprotected"] > 0)
    assert np.all(inv["shared_outputs"] == 0)
    # No leak seen in 20000 reports: its probability is below 1 - (alpha / 2m)^(1/n).
    level = 0.05 / (2 * 5)
    assert_allclose(
        inv.loc[inv["sensitive"], "p_unprotected_upper"], 1 - level ** (1 / 20_000), rtol=1e-9
    )
    assert 0.85 < result.epsilon_lower_bound <= 1.0


def test_plain_ldp_audit_has_no_invertibility_table():
    rr = _fit(RandomizedResponse(epsilon=1.0), 3)
    result = audit(rr, n_samples=1_000, random_state=0)
    assert result.invertibility is None
    assert result.invertibility_violations.empty


# -- PUM: inputs are (value, tag) rows -------------------------------------------------------------
def _pum(base="urr", **kw):
    p = PersonalizedULDP(
        epsilon=1.0,
        sensitive=[0],
        tags=["home", "work"],
        base=base,
        categories=[0, 1, 2, 3],
        random_state=0,
        **kw,
    )
    return p.fit([[0, None]])


@pytest.mark.parametrize("base", ["urr", "urap"])
def test_audit_personalized_uldp_over_value_tag_rows(base):
    pum = _pum(base)
    result = audit(pum, n_samples=40_000, random_state=0)
    assert result.passed, (result.violations, result.invertibility_violations)
    # Untagged values, and one tagged row per tag on a value not sensitive for everyone.
    rows = [(0, None), (1, None), (2, None), (3, None), (1, "home"), (2, "work")]
    assert list(result.invertibility["x"]) == rows
    # Sensitive rows: the common sensitive value and the tagged rows (their tag's bot).
    assert result.invertibility["sensitive"].tolist() == [True, False, False, False, True, True]
    assert len(result.pairs) == 30
    assert 0.85 < result.epsilon_lower_bound <= 1.0
    assert np.all(result.pairs["budget"] == 1.0)


def test_audit_personalized_uldp_explicit_rows():
    pum = _pum()
    rows = [[3, None], [3, "home"], [0, "work"], [3, "home"]]
    result = audit(pum, inputs=rows, n_samples=20_000, random_state=0)
    assert result.passed
    assert list(result.invertibility["x"]) == [(3, None), (3, "home"), (0, "work")]
    # The tagged home row is hidden behind its bot: it never shows its value.
    assert result.invertibility["n_unprotected"].tolist()[1:] == [0, 0]
    with pytest.raises(ValueError, match=r"rows \(value, tag\)"):
        audit(pum, inputs=[0, 1])
    with pytest.raises(ValueError, match="unknown tags"):
        audit(pum, inputs=[[0, None], [1, "school"]])
    with pytest.raises(ValueError, match="outside the domain"):
        audit(pum, inputs=[[0, None], [9, None]])
    with pytest.raises(ValueError, match="two distinct"):
        audit(pum, inputs=[[1, "home"], [1, "home"]])


class _IgnoresTags(PersonalizedRRChannel):
    """A PUM common channel whose pre-processor forgets the tags: home is reported as itself."""

    def preprocess(self, x, tag):
        return np.asarray(x, dtype=np.int64).copy()


def test_planted_pum_bug_is_caught():
    pum = _pum()
    ch = pum.channel_
    pum.channel_ = _IgnoresTags(ch.epsilon, ch.n_values, ch.sensitive, list(ch.tags))
    result = audit(pum, n_samples=20_000, random_state=0)
    assert not result.passed
    assert result.epsilon_lower_bound == math.inf
    leaks = result.invertibility_violations
    assert set(leaks.loc[leaks["sensitive"].astype(bool), "x"]) == {(1, "home"), (2, "work")}

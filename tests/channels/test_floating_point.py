"""Floating point: no stated ratio exceeds e^epsilon after rounding, for every mechanism.

Each mechanism of the registry is built at epsilon near 0, at 1 and at 50, for k = 2 and
k = 10**6. Small channels are checked exactly with :func:`skldp.privacy.verify` (product
form) and :func:`skldp.privacy.tight_epsilon_matrix` (log form); channels too large for a dense
matrix are checked on the probabilities they state for sampled reports
(``channel.likelihood``: a column of Q over all k inputs per report), in product, quotient and
log form. Sampling thresholds lie on the grid of uniform draws and are rounded toward privacy.
"""

import math
import warnings
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone

from skldp import BinaryRandomizedResponse, PersonalizedULDP
from skldp._validation import smallest_usable_epsilon
from skldp.channels import (
    BinaryRandomizedResponseChannel,
    HadamardResponseChannel,
    RandomizedResponseChannel,
    UtilityOptimizedRRChannel,
)
from skldp.channels._base import exp_budget, floor_to_uniform_grid, within_ratio
from skldp.channels._binary import binary_flip_probabilities
from skldp.channels._hadamard import hadamard_keep_probability
from skldp.channels._randomized_response import _rr_truth, rr_truth
from skldp.channels._utility_optimized import urr_probabilities
from skldp.privacy import (
    LDP,
    BlockStructuredLDP,
    HighLowLDP,
    UtilityOptimizedLDP,
    tight_epsilon_matrix,
    verify,
)
from skldp.privacy._audit import _protection
from tests.registry import MECHANISMS, instance_id

EPSILONS = [1e-12, 1.0, 50.0]
DENSE_LIMIT = 1_000_000


#: PUM reads (value, tag) rows, so it is not in the registry; its channel is on Z = values + bots.
PUM = [
    PersonalizedULDP(epsilon=1.0, sensitive=[0], tags=["home", "work"], base=base)
    for base in ("urr", "urap")
]
ALL_MECHANISMS = MECHANISMS + PUM


def build(privatizer, epsilon, k):
    """The privatizer's channel for a domain of k categories and budget epsilon (or skip)."""
    p = clone(privatizer)
    params = p.get_params(deep=False)
    eps_params = {name: epsilon for name in params if name.startswith("epsilon")}
    if not eps_params:
        pytest.skip(f"{type(p).__name__} has no epsilon parameter")
    try:
        p.set_params(categories=np.arange(k), **eps_params)
        p.fit([[0, None]] if isinstance(p, PersonalizedULDP) else [[0]])
    except ValueError as exc:
        pytest.skip(f"{instance_id(privatizer)} does not fit a domain of {k}: {exc}")
    return p.channel_, p.privacy_


def _dense_ok(channel):
    width = channel.report_width
    if channel.report_kind != "symbol" and width > 16:
        return False
    return channel.n_inputs * channel.n_outputs <= DENSE_LIMIT


def check_stated_rows(L, epsilon):
    """Every row of L (one output, all inputs) keeps max <= e^eps * min in every form."""
    check_ratio(L.max(axis=1), L.min(axis=1), epsilon)


def check_ratio(hi, lo, epsilon):
    """``hi <= e^eps * lo`` entrywise, in product, quotient and log form."""
    hi, lo = np.asarray(hi, dtype=float), np.asarray(lo, dtype=float)
    assert np.all(lo > 0), "an output has probability zero under some input"
    assert np.all(hi <= np.exp(epsilon) * lo)
    if epsilon < 709:
        assert np.all(hi <= math.exp(epsilon) * lo)
    assert np.all(hi / lo <= np.exp(epsilon))
    assert np.all(np.log(hi) - np.log(lo) <= epsilon)


@pytest.mark.parametrize("k", [2, 10**6])
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("privatizer", ALL_MECHANISMS, ids=instance_id)
def test_no_stated_ratio_exceeds_budget(privatizer, epsilon, k):
    channel, model = build(privatizer, epsilon, k)
    if _dense_ok(channel):
        assert verify(channel, model).passed
        if hasattr(model, "epsilon_matrix") and not hasattr(model, "verify"):
            E = model.epsilon_matrix(channel.n_inputs)
            assert np.all(tight_epsilon_matrix(channel) <= E)
        return
    if isinstance(model, BlockStructuredLDP):
        check_block_budgets(channel, model)
        return
    if isinstance(model, HighLowLDP):
        check_high_low_budgets(channel, model)
        return
    if not (isinstance(model, LDP) or _protection(model, channel) is not None):
        pytest.skip(f"{model!r} at k={k}: no check of this model without a dense matrix")
    rng = np.random.default_rng(0)
    k = channel.n_inputs  # PUM's channel adds one bot per tag to the k values
    x = np.array([0, 1, k - 1, *rng.integers(0, k, 3)])
    reports = channel.sample(x, rng)
    protected = _protection(model, channel)
    if protected is not None:
        reports2d = reports.reshape(reports.shape[0], -1)
        reports = reports[protected(reports2d)]
        if reports.shape[0] == 0:
            reports = channel.sample(np.zeros(200, dtype=np.int64), rng)
            reports = reports[protected(reports.reshape(reports.shape[0], -1))][:3]
    if hasattr(channel, "_relative_likelihood"):
        # Bit vectors: P(y | x) = scale(y) * R(y, x), and at k = 10**6 the scale underflows
        # (a product of 10**6 bit probabilities); every ratio between inputs is a ratio of R.
        L = channel._relative_likelihood(channel.check_reports(reports))
    else:
        L = channel.likelihood(reports)
    assert L.shape == (reports.shape[0], k)
    check_stated_rows(L, model.epsilon)


def _spread_inputs(k, rng):
    return np.unique(np.array([0, 1, k // 2, k - 1, *rng.integers(0, k, 4)]))


def check_block_budgets(channel, model):
    """Block-structured budgets of a Hadamard channel without its dense matrix.

    In block j every input has a nonzero Hadamard row of size K_j (a power of two), so over
    the block's K_j outputs it states ``2a/K_j`` on half of them and ``2(1 - a)/K_j`` on the
    other half, and 0 outside the block. The ratio of two inputs of a block is therefore at
    most ``(2a/K_j) / (2(1 - a)/K_j)``: checked for every block size from the two numbers as
    ``_likelihood`` states them, on ``a`` and ``1 - a`` as sampling uses them (``u < a``, then
    a uniform column of the chosen half), and on the stated columns of sampled reports over
    every input of the report's block.
    """
    eps = model.epsilon
    np.testing.assert_array_equal(channel.labels, model.labels)
    # The row structure: rows 1 .. |X_j| of H_{K_j}, never the all-ones row 0.
    size = channel.block_outputs[channel.labels]
    assert np.all((channel.rows >= 1) & (channel.rows < size))
    check_ratio(channel.keep, 1.0 - channel.keep, eps)
    for K in np.unique(channel.block_outputs):
        hi, lo = 2.0 * channel.keep / float(K), 2.0 * (1.0 - channel.keep) / float(K)
        check_ratio(hi, lo, eps)
    rng = np.random.default_rng(0)
    reports = channel.sample(_spread_inputs(channel.n_inputs, rng), rng)
    L = channel.likelihood(reports)
    block, _ = channel.split_reports(reports)
    for i, b in enumerate(block):
        inside = channel.labels == b
        assert np.all(L[i, ~inside] == 0)
        check_stated_rows(L[i : i + 1, inside], eps)


def check_high_low_budgets(channel, model):
    """High-low budgets (sensitive x against any x') of a Hadamard channel without a dense Q.

    On the S Hadamard columns a sensitive input states ``2a/S`` or ``2(1 - a)/S`` and a public
    one ``2(1 - a)/S`` (its uniform column, drawn with probability ``2(1 - a)``); on a public
    input's own symbol every sensitive input states 0. So the largest ratio of a sensitive
    input over any input is ``(2a/S) / min(2(1 - a)/S)``, checked from the numbers as stated
    and sampled, and on sampled reports over all k inputs.
    """
    eps, S = model.epsilon, channel.hadamard_size
    np.testing.assert_array_equal(channel.sensitive, model.sensitive)
    assert np.all((channel.rows[channel.sensitive] >= 1) & (channel.rows[channel.sensitive] < S))
    check_ratio(channel.keep, 1.0 - channel.keep, eps)
    assert channel._spread == 2.0 * (1.0 - channel.keep)  # exact: what sampling compares u with
    hi = 2.0 * channel.keep / S
    check_ratio(hi, min(2.0 * (1.0 - channel.keep) / S, channel._spread / S), eps)
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [_spread_inputs(channel.n_inputs, rng), channel.public[:2], channel.sensitive[:2]]
    )
    reports = channel.sample(x, rng)
    L = channel.likelihood(reports)
    head = reports < S
    assert head.any()
    check_ratio(L[head][:, channel.sensitive].max(axis=1), L[head].min(axis=1), eps)
    assert np.all(L[~head][:, channel.sensitive] == 0)


@pytest.mark.parametrize("privatizer", ALL_MECHANISMS, ids=instance_id)
def test_huge_epsilon_builds_and_samples_without_overflow(privatizer):
    # Any positive finite budget is accepted, so none may overflow inside the mechanism.
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow, not even a warning
        channel, model = build(privatizer, 1e3, 4)
        reports = channel.sample(np.array([0, 1, 2, 3]), np.random.default_rng(0))
        assert reports.shape[0] == 4
        assert verify(channel, model).passed


# -- randomized response, by its stated probabilities ----------------------------------------------
@pytest.mark.parametrize("k", [2, 3, 1000, 10**6])
@pytest.mark.parametrize(
    "epsilon", [5e-324, 1e-300, 1e-15, 1e-12, 1e-9, 1e-6, 1e-3, 0.7, 36.0, 50.0, 700.0, 1e308]
)
def test_randomized_response_ratios_in_both_directions(epsilon, k):
    smallest = _rr_smallest(k)
    if epsilon < smallest:  # truth would round to 0: a constant channel, refused
        with pytest.raises(ValueError, match=f"the smallest usable epsilon is {smallest!r}$"):
            RandomizedResponseChannel(epsilon, k)
        return
    ch = RandomizedResponseChannel(epsilon, k)
    assert 0 < ch.other <= ch.keep <= 1
    assert within_ratio(ch.keep, ch.other, epsilon)
    assert ch.keep <= exp_budget(epsilon) * ch.other
    assert ch.keep / ch.other <= exp_budget(epsilon)
    # Rounding toward privacy: never more truthful than the exact mechanism.
    exact_truth = math.expm1(epsilon) / (math.expm1(epsilon) + k) if epsilon < 700 else 1.0
    assert ch.truth <= exact_truth


def test_randomized_response_random_budgets():
    rng = np.random.default_rng(1)
    for eps in np.concatenate([rng.uniform(0, 50, 300), 10 ** rng.uniform(-15, 2.5, 300)]):
        for k in (2, 7, 10**6):
            if eps < _rr_smallest(k):
                continue
            ch = RandomizedResponseChannel(float(eps), k)
            assert ch.other <= ch.keep <= np.exp(eps) * ch.other
            assert math.log(ch.keep / ch.other) <= eps
            assert np.log(ch.keep) - np.log(ch.other) <= eps


def _rr_smallest(k):
    return smallest_usable_epsilon(lambda e: _rr_truth(e, k)[0] > 0)


def test_tiny_epsilon_large_domain_keeps_reverse_ratio():
    # Rounding the keep probability itself to the 2**-53 grid made other/keep exceed e^eps
    # at (1e-12, 10**6), where the channel is now refused as constant; just above the smallest
    # usable budget truth is a few steps of 2**-53 and keep sits just above other.
    eps = 2 * _rr_smallest(10**6)
    ch = RandomizedResponseChannel(eps, 10**6)
    assert 0 < ch.truth <= 2 * 2.0**-53
    assert ch.other <= math.exp(eps) * ch.keep
    assert ch.keep <= math.exp(eps) * ch.other


def test_smallest_usable_rr_budget_is_exact():
    # The smallest usable budget makes truth one step of the grid; the float below it, zero.
    for k in (2, 5, 1000, 10**6):
        eps = _rr_smallest(k)
        assert rr_truth(eps, k)[0] == 2.0**-53
        assert _rr_truth(math.nextafter(eps, 0.0), k)[0] == 0.0
        # About k * 2**-53: e^eps >= 1 + k T / (1 - T) at T = 2**-53.
        assert eps == pytest.approx(k * 2.0**-53, rel=1e-6)


# -- sampling thresholds ---------------------------------------------------------------------------
def test_floor_to_uniform_grid_rounds_down_onto_the_grid():
    rng = np.random.default_rng(2)
    p = np.concatenate(
        [rng.random(1000), 10 ** rng.uniform(-300, 0, 1000), [0.0, 1.0, 2.0**-53, 0.5]]
    )
    g = floor_to_uniform_grid(p)
    ulp = 2.0**-53
    assert np.all(g <= p)
    assert np.all(p - g < ulp)
    assert np.all(g / ulp == np.floor(g / ulp))


def test_generator_draws_lie_on_the_grid():
    u = np.random.default_rng(3).random(10_000)
    assert np.all(u * 2.0**53 == np.floor(u * 2.0**53))


class _GivenDraws:
    """A stand-in generator whose bounded integer draws are given, in order."""

    def __init__(self, *draws):
        self.draws = [np.asarray(d, dtype=np.int64) for d in draws]
        self.calls = []

    def integers(self, low, high, size, dtype=np.int64):
        self.calls.append((low, high, size))
        out = self.draws.pop(0) if self.draws else np.zeros(0, dtype=np.int64)
        assert out.shape == (size,) and np.all((low <= out) & (out < high))
        return out.astype(dtype)


@pytest.mark.parametrize("epsilon", [1e-12, 1.0, 50.0])
def test_randomized_response_truth_event_is_exactly_u_below_truth(epsilon):
    # rr_sample draws W uniform on [0, k 2**16): c = W >> 16 is the category, t = W mod 2**16
    # the top 16 bits of the 53-bit uniform U = t 2**37 + r, and r is drawn only when t ties
    # with the top bits of T = truth 2**53. Report the truth iff U < T: enumerate every t for
    # one category, and the tie at both sides of T's low bits.
    k = 5
    ch = RandomizedResponseChannel(epsilon, k)
    T = int(ch.truth * 2.0**53)
    assert ch.truth * 2.0**53 == T  # on the grid
    top, low = T >> 37, T & (2**37 - 1)
    t = np.arange(2**16, dtype=np.int64)
    c = 3
    x = np.zeros(t.size, dtype=np.int64)  # the truth is category 0
    w = (c << 16) | t
    n_tied = int(np.sum(t == top))
    rng = _GivenDraws(w, np.full(n_tied, low - 1 if low else 0))
    out = ch.sample(x, rng)
    kept_expected = (t < top) | ((t == top) & (low > 0))
    assert_array_equal(out, np.where(kept_expected, 0, c))
    assert rng.calls[0] == (0, k << 16, t.size)
    # the tie just at T's low bits is not kept: U = T is not below T
    rng = _GivenDraws(w[t == top], np.full(1, low))
    assert ch.sample(x[:1], rng).tolist() == [c]
    # P(kept) = (top 2**37 + low) / 2**53 = truth, counting the enumerated outcomes
    assert int(np.sum(t < top)) * 2**37 + low == T


class _FixedUniform:
    """A stand-in generator whose uniform draws are given."""

    def __init__(self, u):
        self.u = np.asarray(u, dtype=float)

    def random(self, n):
        return self.u[:n]

    def integers(self, low, high, size, dtype=np.int64):
        return np.full(size, high - 1, dtype=dtype)


# -- issue 21, item 2: a finite budget is never read as infinite ---------------------------------
@pytest.mark.parametrize("epsilon", [1.0, 700.0, 709.8, 746.0, 1e5, 1e300])
def test_verify_fails_an_identity_channel_at_any_finite_budget(epsilon):
    # exp(709.8) overflows to inf; the old product form read that as "no promise".
    assert not verify(np.eye(2), epsilon).passed
    assert verify(np.eye(2), epsilon).violations == [(0, 1), (1, 0)]
    uldp = UtilityOptimizedLDP([0, 1], [0, 1], epsilon)
    assert not uldp.verify(np.eye(2)).passed


def test_verify_compares_a_ratio_beyond_exp_overflow_in_log_space():
    # Column 1 has ratio 1e-3 / 5e-324 = e^737.6: within 740, beyond 720 although e^720 = inf.
    Q = np.array([[1.0 - 1e-3, 1e-3], [1.0, 5e-324]])
    ratio = math.log(1e-3) - math.log(5e-324)
    assert 737 < ratio < 738
    assert verify(Q, 740.0).passed
    assert not verify(Q, 720.0).passed
    assert verify(Q, 720.0).violations == [(0, 1)]
    assert not UtilityOptimizedLDP([0, 1], [0, 1], 720.0).verify(Q).passed
    assert UtilityOptimizedLDP([0, 1], [0, 1], 740.0).verify(Q).passed


@pytest.mark.parametrize(
    "budgets", [(746.0, 746.0), (800.0, 800.0), (1e5, 3.0), (2.0, 1e300), (np.inf, 800.0)]
)
def test_binary_rr_keeps_positive_flips_at_huge_finite_budgets(budgets):
    ch = BinaryRandomizedResponseChannel(*budgets)
    assert verify(ch, ch.guarantee()).passed
    finite = [f for f, e in ((ch.flip_0, budgets[1]), (ch.flip_1, budgets[0])) if e < np.inf]
    # Q(1|0) is bounded below by Q(1|1) e^-eps_10: positive whenever eps_10 is finite.
    assert all(f >= 2.0**-53 for f in finite)
    # The sampler flips at u = 0, the smallest uniform draw: the flip really is sampled.
    out = ch.sample(np.array([0, 1]), _FixedUniform([0.0, 0.0]))
    flipped = out != np.array([0, 1])
    assert flipped.tolist() == [budgets[1] < np.inf, budgets[0] < np.inf]


def test_binary_randomized_response_privatizer_at_800_is_not_the_identity():
    p = BinaryRandomizedResponse(epsilon_01=800, epsilon_10=800, categories=[0, 1]).fit([[0]])
    assert p.channel_.flip_0 == p.channel_.flip_1 == 2.0**-53
    assert verify(p.channel_, p.privacy_).passed


# -- issue 21, item 3: the sampled ratio holds in exact rational arithmetic ------------------------
def _exp_at_least(ratio, epsilon):
    """Whether the rational ``ratio <= e^epsilon``: ln(ratio) at 60 digits, with a 1e-50 margin."""
    ratio = Fraction(ratio)
    if ratio <= 1:
        return True
    with localcontext() as ctx:
        ctx.prec = 60
        log_ratio = Decimal(ratio.numerator).ln() - Decimal(ratio.denominator).ln()
        return log_ratio <= Decimal(epsilon) - Decimal("1e-50")


def _grid(n=3000):
    """3,000 budgets: dense on (0, 12], log-spaced 1e-12 .. 40, and the issue's example."""
    rng = np.random.default_rng(21)
    eps = np.concatenate(
        [np.linspace(0.001, 12.0, n // 2), 10 ** rng.uniform(-12, math.log10(40), n // 2)]
    )
    return [1.4220209814428355, *(float(e) for e in eps)]


def _k_rr_exact(truth, k):
    T = Fraction(truth)
    other = (1 - T) / k
    return T + other, other


@pytest.mark.parametrize("k", [2, 5, 1000])
def test_k_rr_sampled_ratio_is_exact_on_a_dense_grid(k):
    # The sampler keeps x iff u < truth (u on the 2**-53 grid), else draws uniformly from k.
    for eps in _grid():
        if eps < 2 * k * 1.2e-16:
            continue
        truth, _, _ = rr_truth(eps, k)
        keep, other = _k_rr_exact(truth, k)
        assert _exp_at_least(keep / other, eps), (eps, k)
    ch = RandomizedResponseChannel(1.4220209814428355, k)
    assert ch.truth == rr_truth(1.4220209814428355, k)[0]  # what _sample compares u with


@pytest.mark.parametrize("n_sensitive", [1, 3, 50])
def test_urr_sampled_ratio_is_exact_on_a_dense_grid(n_sensitive):
    for eps in _grid():
        if eps < 2 * n_sensitive * 1.2e-16:
            continue
        keep, _ = urr_probabilities(eps, n_sensitive)
        hi, lo = _k_rr_exact(keep, n_sensitive)
        assert _exp_at_least(hi / lo, eps), (eps, n_sensitive)
    ch = UtilityOptimizedRRChannel(1.4220209814428355, 5, [0, 1, 2])
    assert ch.keep == urr_probabilities(1.4220209814428355, 3)[0]


def test_hadamard_sampled_ratio_is_exact_on_a_dense_grid():
    # u < a picks the half S_x, then a uniform column of K/2: probabilities 2a/K and 2(1-a)/K.
    for eps in _grid():
        if eps < 1e-15:
            continue
        a = hadamard_keep_probability(eps, (4, 8))
        assert _exp_at_least(Fraction(a) / (1 - Fraction(a)), eps), eps
    ch = HadamardResponseChannel(1.4220209814428355, 5)
    assert ch.keep == hadamard_keep_probability(1.4220209814428355, np.unique(ch.block_outputs))


@pytest.mark.parametrize("proportion", [1.0, 0.5])
def test_binary_rr_sampled_ratios_are_exact_on_a_dense_grid(proportion):
    for eps in _grid():
        if eps < 1e-15:
            continue
        e01, e10 = eps, eps * proportion
        b, d = (Fraction(f) for f in binary_flip_probabilities(e01, e10))
        # Rows (1 - b, b) and (d, 1 - d): each output's two ratios within its budget.
        assert _exp_at_least((1 - b) / d, e01) and _exp_at_least(b / (1 - d), e01), eps
        assert _exp_at_least((1 - d) / b, e10) and _exp_at_least(d / (1 - b), e10), eps


def test_issue_example_exceeded_before():
    # k = 5 at this budget: truth = 0.4124... floored to the grid gave keep/other > e^eps.
    eps = 1.4220209814428355
    em1 = math.expm1(eps)
    naive = float(floor_to_uniform_grid(em1 / (em1 + 5)))
    assert not _exp_at_least(Fraction(_k_rr_exact(naive, 5)[0] / _k_rr_exact(naive, 5)[1]), eps)
    truth = rr_truth(eps, 5)[0]
    assert truth < naive
    assert _exp_at_least(Fraction(_k_rr_exact(truth, 5)[0] / _k_rr_exact(truth, 5)[1]), eps)

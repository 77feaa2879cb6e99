"""General (blocked) Hadamard response: contract, the paper's formulas, blocking rules, sampling."""

import math
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.linalg import hadamard
from sklearn.exceptions import ConvergenceWarning

from skldp import EMEstimator, EmpiricalEstimator, HadamardResponse, recommend_mechanism
from skldp.channels import GeneralHadamardResponseChannel, HadamardResponseChannel
from skldp.channels._general_hadamard import general_hadamard_variance, hadamard_blocking
from skldp.privacy import LDP, verify
from tests.channel_contract import ChannelContract, contract_fixture
from tests.conftest import simplex_point

SHAPES = [(2, 2, 2), (3, 2, 3), (3, 4, 1), (17, 4, 6), (17, 8, 3), (17, 16, 2)]
SMALL = [
    GeneralHadamardResponseChannel(eps, k, b, B) for k, b, B in SHAPES for eps in (1e-3, 1.0, 50.0)
]

channel = contract_fixture(SMALL)


class TestGeneralHadamardContract(ChannelContract):
    pass


def _paper_matrix(k, eps, b, B):
    """Q(y | x) of Acharya, Sun and Zhang's blocked scheme, from its definition (spec 1.1-1.2)."""
    e = math.exp(eps)
    D = 2 * B - 1 + e
    H = hadamard(b)
    Q = np.full((k, B * b), 2 / (b * D))
    for x in range(k):
        block, row = divmod(x, b - 1)
        in_set = H[row + 1] == 1
        Q[x, block * b : (block + 1) * b][in_set] = 2 * e / (b * D)
    return Q


CASES = [(20, 3.0, 8, 3), (20, 3.0, 8, 4), (30, 2.0, 4, 10), (15, 0.7, 16, 1)]


@pytest.mark.parametrize(("k", "eps", "b", "B"), CASES)
def test_dense_matches_paper_and_privacy_is_tight(k, eps, b, B):
    ch = GeneralHadamardResponseChannel(eps, k, b, B)
    assert_allclose(ch.to_dense(), _paper_matrix(k, eps, b, B), rtol=1e-13)
    assert verify(ch, LDP(eps)).passed
    assert not verify(ch, LDP(0.999 * eps)).passed


@pytest.mark.parametrize(("k", "eps", "b", "B"), CASES)
def test_variance_is_the_papers_formula(k, eps, b, B):
    # Var(c_x) = D (2n + (e - 1) n_block) / (e - 1)^2 - n_x (spec 1.4), and it is the exact
    # variance of the linear estimate computed from the dense matrix.
    ch = GeneralHadamardResponseChannel(eps, k, b, B)
    p = simplex_point(k, seed=3)
    n = 1000
    e = math.exp(eps)
    D = 2 * B - 1 + e
    F = np.bincount(np.arange(k) // (b - 1), weights=p)[np.arange(k) // (b - 1)]
    # The spec's formula is for fixed data (n_x = n p_x reports of x); variance(p, n) is for
    # n people drawn from p, which adds the variance of the input, (p_x - p_x^2) / n.
    formula = (D * (2 * n + (e - 1) * n * F) / (e - 1) ** 2 - n * p) / n**2
    assert_allclose(ch.variance(p, n), formula + (p - p**2) / n, rtol=1e-10)
    Q = ch.to_dense()
    A = np.stack([ch.unbiased(np.eye(ch.n_outputs)[y], 1) for y in range(ch.n_outputs)], axis=1)
    assert_allclose(A @ Q.T, np.eye(k), atol=1e-12)  # unbiased: exactly
    exact = ((p @ Q) @ (A.T**2) - p**2) / n
    assert_allclose(ch.variance(p, n), exact, rtol=1e-12)


def test_single_block_is_hadamard_response():
    for k, eps in [(5, 1.0), (17, 3.0), (30, 0.2)]:
        b = 2 ** math.ceil(math.log2(k + 1))
        general = GeneralHadamardResponseChannel(eps, k, b, 1)
        assert_allclose(general.to_dense(), HadamardResponseChannel(eps, k).to_dense(), rtol=1e-15)


# (k, epsilon) -> default (b, B), its mean Var * n, paper rule (b, B), its mean Var * n (spec 1.5)
RULES = [
    (22_000, 5, (256, 87), 0.0548, (256, 128), 0.0687),
    (1_024, 5, (16, 69), 0.0536, (16, 128), 0.0761),
    (100, 4, (4, 34), 0.1423, (8, 32), 0.2233),
    (10_000, 3, (1024, 10), 0.4203, (1024, 16), 0.5493),
    (1_000, 2, (256, 4), 1.2677, (256, 4), 1.2677),
    (1_000, 1, (1024, 1), 4.6817, (512, 2), 5.5373),
    (1_000, 8, (2, 1000), 0.0018, (2, 1024), 0.0018),
]


@pytest.mark.parametrize(("k", "eps", "auto", "v_auto", "paper", "v_paper"), RULES)
def test_blocking_rules(k, eps, auto, v_auto, paper, v_paper):
    assert hadamard_blocking(k, eps) == auto
    assert hadamard_blocking(k, eps, "paper") == paper
    assert round(general_hadamard_variance(k, eps, *auto), 4) == v_auto
    assert round(general_hadamard_variance(k, eps, *paper), 4) == v_paper
    # the default is never worse than the single block, nor than the paper's rule
    single = hadamard_blocking(k, eps, 1)
    assert general_hadamard_variance(k, eps, *auto) <= general_hadamard_variance(k, eps, *single)
    assert v_auto <= v_paper


def test_papers_point_and_bits():
    # spec 1.9: (22,000, 5), n = 1,000: paper rule 68.73, default 54.75, single block 1,027.27
    k, n, eps = 22_000, 1_000, 5.0
    p = np.full(k, 1 / k)

    def count_mse(ch):  # given the data: n / k reports of each item (spec convention)
        return n**2 * (ch.variance(p, n) - (p - p**2) / n).mean()

    paper = GeneralHadamardResponseChannel(eps, k, 256, 128)
    auto = GeneralHadamardResponseChannel(eps, k, 256, 87)
    assert round(count_mse(paper), 2) == 68.73
    assert round(count_mse(auto), 2) == 54.75
    assert round(count_mse(HadamardResponseChannel(eps, k)), 2) == 1027.27
    assert paper.bits_per_report == auto.bits_per_report == 15


def test_sampler_hits_each_output_with_its_probability(seed):
    ch = GeneralHadamardResponseChannel(2.0, 10, 4, 4)
    Q = ch.to_dense()
    n = 60_000
    for x in (0, 4, 9):
        y = ch.sample(np.full(n, x), np.random.default_rng(seed + x))
        freq = np.bincount(y, minlength=ch.n_outputs)
        assert np.all(np.abs(freq - n * Q[x]) <= 5 * np.sqrt(n * Q[x] * (1 - Q[x])))
    # a planted wrong channel (the single-block law's in-set mass on x's block) fails
    wrong = Q[0].copy()
    wrong[:4] *= 1.2
    wrong[4:] *= (1 - wrong[:4].sum()) / wrong[4:].sum()
    y = ch.sample(np.full(n, 0), np.random.default_rng(seed))
    freq = np.bincount(y, minlength=ch.n_outputs)
    assert not np.all(np.abs(freq - n * wrong) <= 5 * np.sqrt(n * wrong * (1 - wrong)))


def test_unbiased_and_variance_by_simulation(seed):
    # 600 repetitions at k = 120, eps = 4, n = 400: the mean estimate within 4 standard errors
    # of p, and the mean over items of the simulated variance within 10% of the exact one.
    k, eps, n, reps = 120, 4.0, 400, 600
    b, B = hadamard_blocking(k, eps)
    assert B > 1
    ch = GeneralHadamardResponseChannel(eps, k, b, B)
    rng = np.random.default_rng(seed)
    x = np.repeat(np.arange(k), n // k + 1)[:n]  # fixed data: the variance given the counts
    p = np.bincount(x, minlength=k) / n
    est = np.empty((reps, k))
    for r in range(reps):
        est[r] = ch.unbiased(ch.statistics(ch.sample(x, rng)), n)
    var = ch.variance(p, n) - (p - p**2) / n  # given the data (see the formula test)
    z = (est.mean(axis=0) - p) / np.sqrt(var / reps)
    assert np.abs(z).max() < 4.0
    assert abs(est.var(axis=0, ddof=1).mean() / var.mean() - 1) < 0.10


def test_large_domain_count_mse_against_exact(seed):
    # k = 22,000, eps = 5, n = 1,000, default blocking: the sum of squared count errors of one
    # run is close to its expectation 22,000 * 54.75 (a sum of 22,000 nearly independent terms).
    k, n = 22_000, 1_000
    hr = HadamardResponse(epsilon=5.0, categories=[list(range(k))], random_state=seed)
    rng = np.random.default_rng(seed)
    x = rng.integers(0, k, size=n)
    reports = hr.fit(x.reshape(-1, 1)).transform(x.reshape(-1, 1))
    ch = hr.channel_
    assert isinstance(ch, GeneralHadamardResponseChannel)
    counts = np.bincount(x, minlength=k)
    est = n * ch.unbiased(ch.statistics(np.asarray(reports)), n)
    mse = np.mean((est - counts) ** 2)
    f = counts / n
    exact = n**2 * (ch.variance(f, n) - (f - f**2) / n).mean()  # given the data
    assert abs(mse / exact - 1) < 0.1
    assert mse <= 75


def test_privatizer_blocking_choices():
    cats = [list(range(1000))]
    X = [[0], [1]]
    low = HadamardResponse(epsilon=1.0, categories=cats).fit(X).channel_
    assert type(low) is HadamardResponseChannel  # the single block wins at epsilon 1
    high = HadamardResponse(epsilon=2.0, categories=cats).fit(X).channel_
    assert (high.block_size, high.n_blocks) == (256, 4)
    paper = HadamardResponse(epsilon=1.0, categories=cats, blocking="paper").fit(X).channel_
    assert (paper.block_size, paper.n_blocks) == (512, 2)
    one = HadamardResponse(epsilon=5.0, categories=cats, blocking=1).fit(X).channel_
    assert one == HadamardResponseChannel(5.0, 1000)
    eight = HadamardResponse(epsilon=5.0, categories=cats, blocking=8).fit(X).channel_
    assert (eight.block_size, eight.n_blocks) == (128, 8)


def test_single_block_reports_are_unchanged():
    # blocking=1 (and "auto" where it picks one block) draws exactly today's reports
    cats = [list("abcdefg")]
    X = [[v] for v in "abcabcgfedcba"]
    new = HadamardResponse(epsilon=0.5, categories=cats, random_state=3).fit_transform(X)
    one = HadamardResponse(epsilon=0.5, categories=cats, random_state=3, blocking=1)
    assert_array_equal(np.asarray(new), np.asarray(one.fit_transform(X)))
    # the reports of the single-block HadamardResponse before the blocking parameter existed
    assert np.asarray(new).ravel().tolist() == [0, 6, 4, 2, 5, 3, 3, 4, 6, 0, 5, 4, 1]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"blocking": "best"}, "blocking"),
        ({"blocking": 0}, "blocking"),
        ({"blocking": 1.5}, "blocking"),
    ],
)
def test_bad_blocking(kwargs, match):
    with pytest.raises(ValueError, match=match):
        HadamardResponse(epsilon=1.0, categories=[list("abc")], **kwargs).fit([["a"]])


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((1.0, 10, 6, 2), "power of two"),
        ((1.0, 10, 4, 3), "at least n_inputs"),
        ((1.0, 1, 4, 1), "n_inputs"),
        ((1.0, 10, 4, 0), "n_blocks"),
    ],
)
def test_bad_channel_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        GeneralHadamardResponseChannel(*args)


def test_advisor_prefers_the_general_form_at_epsilon_5():
    # At k = 22,000, n = 1,000, epsilon = 5 the advisor's Hadamard row is the general form,
    # with the exact l2 error of the blocked channel, below the single block's.
    table = recommend_mechanism(22_000, 1_000, 5.0)
    row = table[table["mechanism"] == "hadamard"].iloc[0]
    assert row["parameters"] == "block_size=256, n_blocks=87"
    p = np.full(22_000, 1 / 22_000)
    general = GeneralHadamardResponseChannel(5.0, 22_000, 256, 87).variance(p, 1_000).sum()
    single = HadamardResponseChannel(5.0, 22_000).variance(p, 1_000).sum()
    assert row["l2"] == pytest.approx(math.sqrt(general), rel=1e-12)
    assert general < single / 15
    # ranked above every mechanism whose variance is above the general form's, k-RR included
    assert (
        table.index[table["mechanism"] == "hadamard"][0]
        < table.index[table["mechanism"] == "krr"][0]
    )


def test_em_and_intervals_on_a_large_domain(seed):
    # k = 22,000, eps = 5: EM runs on the structured operators (never a dense matrix), its
    # likelihood never decreases, and the heavy item is found; the empirical estimator's
    # standard errors are the channel's exact ones.
    k, n = 22_000, 5_000
    support = np.array([7, 300, 9_999, 21_999])
    rng = np.random.default_rng(seed)
    x = support[rng.choice(4, size=n, p=[0.55, 0.15, 0.15, 0.15])].reshape(-1, 1)
    hr = HadamardResponse(epsilon=5.0, categories=[list(range(k))], random_state=seed)
    reports = hr.fit(x).transform(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 5 iterations: not converged
        em = EMEstimator(max_iter=5).fit(reports)
    history = np.asarray(em.log_likelihoods_)
    assert np.all(np.diff(history) >= -1e-9 * abs(history[-1]))
    assert np.argmax(em.distribution_) == 7
    emp = EmpiricalEstimator().fit(reports)
    truth = np.bincount(x.ravel(), minlength=k) / n
    sd = np.sqrt(hr.channel_.variance(truth, n))
    assert np.all(np.abs(emp.distribution_[support] - truth[support]) < 5 * sd[support])


@pytest.mark.parametrize("eps", [5e-324, 1e-300, 1e-17, 0.3])
def test_small_budgets_pick_the_single_block(eps):
    # every variance is huge (or inf) there: "auto" compares (e^eps - 1)^2 Var, finite
    for k in (3, 100, 22_000):
        b, B = hadamard_blocking(k, eps)
        assert B == 1 and b == 2 ** math.ceil(math.log2(k + 1))

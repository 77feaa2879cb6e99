"""Multidimensional collection: splitting the budget and sampling an attribute (issue 16.3).

The variance formulas are checked against the measured error over repetitions on the UCI
Adult table (four attributes); the per-person channels are verified exactly on small product
domains; the rule for when sampling beats splitting is checked on both sides of it.
"""

import functools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline

from skldp import (
    AttributeSampling,
    BudgetSplitting,
    BinaryRandomizedResponse,
    EMEstimator,
    EmpiricalEstimator,
    MultidimensionalEstimator,
    OptimizedUnaryEncoding,
    RandomizedResponse,
    UtilityOptimizedRR,
)
from skldp.channels import RandomizedResponseChannel
from skldp.channels._multidimensional import expected_inverse_count
from skldp.datasets import load_adult
from skldp.exceptions import BudgetExceededError, ChannelMismatchError
from skldp.privacy import LDP, PrivacyAccountant, guarantee_of, tight_epsilon_matrix, verify

ADULT_COLUMNS = ["age", "income", "marital_status", "sex"]


@functools.lru_cache(maxsize=1)
def _adult():
    """Adult's cells as attribute codes (224 x 4), the cell probabilities and the marginals."""
    frame = load_adult().frame
    codes = np.column_stack([frame[c].cat.codes.to_numpy() for c in ADULT_COLUMNS])
    counts = frame["count"].to_numpy(dtype=float)
    prob = counts / counts.sum()
    sizes = [len(frame[c].cat.categories) for c in ADULT_COLUMNS]
    marginals = [np.bincount(codes[:, j], weights=prob, minlength=k) for j, k in enumerate(sizes)]
    return codes, prob, sizes, marginals


def _one_report_covariance(channel, p):
    """Exact covariance of one k-RR report's contribution to the unbiased estimate.

    The estimate is G N / n with G = pinv(Q^T) and N multinomial(n, m = Q^T p), so one
    report contributes a column of G with covariance G (diag(m) - m m^T) G^T.
    """
    Q = channel.to_dense()
    G = np.linalg.pinv(Q.T)
    m = Q.T @ p
    return G @ (np.diag(m) - np.outer(m, m)) @ G.T


def _measured_errors(privatizer, n, repetitions, seed):
    """Estimates of every attribute, minus the truth, over repetitions of n i.i.d. people."""
    codes, prob, sizes, marginals = _adult()
    rng = np.random.default_rng(seed)
    errors = [np.empty((repetitions, k)) for k in sizes]
    counts = np.empty((repetitions, len(sizes)))
    privatizer = clone(privatizer).set_params(
        categories=[list(range(k)) for k in sizes], random_state=seed
    )
    privatizer.fit(codes)
    for r in range(repetitions):
        X = codes[rng.choice(len(prob), size=n, p=prob)]
        est = MultidimensionalEstimator(estimator=EmpiricalEstimator()).fit(privatizer.transform(X))
        for j, p_hat in enumerate(est.distribution_):
            errors[j][r] = p_hat - marginals[j]
        counts[r] = est.n_reports_per_attribute_
    return errors, counts


def _check_total_squared_error(errors, variance, covariance, z=4.0):
    """Mean total squared error of one attribute against the formula, within z sd.

    The total squared error S = sum_x e_x^2 has mean tr(Sigma) = sum_x Var(p_hat_x); with
    e normal (n is large), Var(S) = 2 tr(Sigma^2), so the mean over R repetitions has
    standard deviation sqrt(2 tr(Sigma^2) / R).
    """
    R = errors.shape[0]
    measured = float(np.mean(np.sum(errors**2, axis=1)))
    expected = float(np.sum(variance))
    sd = math.sqrt(2.0 * float(np.sum(covariance**2)) / R)
    assert abs(measured - expected) <= z * sd, (measured, expected, sd)
    return measured, expected


N_PEOPLE = 20_000
REPETITIONS = 600
EPSILON = 1.0


def test_split_variance_matches_measured_error_on_adult(seed):
    """Splitting: attribute j has the variance of the base channel at eps/d with n reports."""
    codes, prob, sizes, marginals = _adult()
    d = len(sizes)
    errors, counts = _measured_errors(BudgetSplitting(epsilon=EPSILON), N_PEOPLE, REPETITIONS, seed)
    assert np.all(counts == N_PEOPLE)
    for j, k in enumerate(sizes):
        channel = RandomizedResponseChannel(EPSILON / d, k)
        variance = channel.variance(marginals[j], N_PEOPLE)
        covariance = _one_report_covariance(channel, marginals[j]) / N_PEOPLE
        np.testing.assert_allclose(np.diag(covariance), variance, rtol=1e-9)
        _check_total_squared_error(errors[j], variance, covariance)


def test_sampling_variance_matches_measured_error_on_adult(seed):
    """Sampling: the base channel at eps on the observed N_j ~ Bin(n, 1/d) reports.

    Also the decision of the estimator: dividing by the expected n/d instead (the estimate
    times N_j d / n) has the variance (d v + (d - 1) p^2) / n, measured here too, and its
    error is larger on the same repetitions.
    """
    codes, prob, sizes, marginals = _adult()
    d = len(sizes)
    smp = AttributeSampling(epsilon=EPSILON)
    errors, counts = _measured_errors(smp, N_PEOPLE, REPETITIONS, seed + 1)
    assert np.all(counts.sum(axis=1) == N_PEOPLE)
    c = expected_inverse_count(N_PEOPLE, d)
    fitted = clone(smp).set_params(categories=[list(range(k)) for k in sizes]).fit(codes)
    for j, k in enumerate(sizes):
        p = marginals[j]
        channel = RandomizedResponseChannel(EPSILON, k)
        one = channel.variance(p, 1)
        variance = fitted.mechanism_.variance(j, p, N_PEOPLE)
        np.testing.assert_allclose(variance, one * c, rtol=1e-12)
        covariance = _one_report_covariance(channel, p) * c
        _check_total_squared_error(errors[j], variance, covariance)

        # the alternative scaling, by the expected count n / d
        alternative = (errors[j] + p) * (counts[:, [j]] * d / N_PEOPLE) - p
        alt_variance = (d * one + (d - 1) * p**2) / N_PEOPLE
        alt_cov = (d * _one_report_covariance(channel, p) + (d - 1) * np.outer(p, p)) / N_PEOPLE
        _check_total_squared_error(alternative, alt_variance, alt_cov)
        # paired: the observed-count estimate is better on the very same reports
        assert np.mean(np.sum(errors[j] ** 2, axis=1)) < np.mean(np.sum(alternative**2, axis=1))


def test_expected_inverse_count_exact_and_first_order():
    # brute force over the whole support for a small n
    n, d = 50, 3
    m = np.arange(1, n + 1)
    exact = np.sum(binom.pmf(m, n, 1 / d) / m) / (1 - binom.pmf(0, n, 1 / d))
    assert expected_inverse_count(n, d) == pytest.approx(exact, rel=1e-12)
    # d / n (1 + (d - 1) / n) to second order for a large n
    n, d = 100_000, 4
    first = d / n * (1 + (d - 1) / n)
    assert expected_inverse_count(n, d) == pytest.approx(first, rel=1e-8)
    assert expected_inverse_count(7, 1) == 1 / 7
    with pytest.raises(ValueError, match="n_attributes must be a positive integer; got 0"):
        expected_inverse_count(10, 0)


# -- exact verification of the per-person channel -------------------------------------------------
SMALL = [["a", "b", "c"], [0, 1], ["x", "y"]]


@pytest.mark.parametrize("base", [RandomizedResponse(), OptimizedUnaryEncoding()])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_split_product_channel_is_ldp_epsilon(base, epsilon):
    spl = BudgetSplitting(privatizer=base, epsilon=epsilon, categories=SMALL).fit([["a", 0, "x"]])
    Q = functools.reduce(np.kron, [ch.to_dense() for ch in spl.channel_])
    assert Q.shape[0] == 3 * 2 * 2
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=1e-12)
    assert spl.privacy_ == LDP(epsilon)
    assert verify(Q, spl.privacy_).passed
    # tight: the worst pair changes every attribute and spends the whole budget
    assert np.max(tight_epsilon_matrix(Q)) == pytest.approx(epsilon, rel=1e-9)
    assert not verify(Q, LDP(epsilon * (1 - 1e-6))).passed


@pytest.mark.parametrize("base", [RandomizedResponse(), OptimizedUnaryEncoding()])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_sampling_mixture_channel_is_ldp_epsilon(base, epsilon):
    smp = AttributeSampling(privatizer=base, epsilon=epsilon, categories=SMALL).fit([["a", 0, "x"]])
    Q = smp.mechanism_.to_dense()
    assert Q.shape[0] == 3 * 2 * 2
    np.testing.assert_allclose(Q.sum(axis=1), 1.0, rtol=1e-12)
    # row (a, 0, y) = index 0 * 4 + 0 * 2 + 1: attribute 2's block is Q_2[y] / 3
    q2 = smp.channel_[2].to_dense()
    start = smp.channel_[0].n_outputs + smp.channel_[1].n_outputs
    np.testing.assert_allclose(Q[1, start:], q2[1] / 3, rtol=1e-15)
    assert smp.privacy_ == LDP(epsilon) == guarantee_of(smp)
    assert verify(Q, smp.privacy_).passed
    assert np.max(tight_epsilon_matrix(Q)) == pytest.approx(epsilon, rel=1e-9)
    assert not verify(Q, LDP(epsilon * (1 - 1e-6))).passed


def test_sampled_reports_follow_the_mixture_channel(seed):
    """Reports of one person's tuple have the frequencies of the dense mixture row."""
    smp = AttributeSampling(epsilon=1.0, categories=SMALL, random_state=seed)
    n = 60_000
    reports = smp.fit_transform([["b", 1, "x"]] * n)
    index, symbol = np.asarray(reports[:, 0]), np.asarray(reports[:, 1])
    offsets = np.cumsum([0] + [ch.n_outputs for ch in smp.channel_])[:-1]
    observed = np.bincount(offsets[index] + symbol, minlength=smp.mechanism_.n_outputs) / n
    row = smp.mechanism_.to_dense()[1 * 4 + 1 * 2 + 0]
    sd = np.sqrt(row * (1 - row) / n)
    assert np.all(np.abs(observed - row) <= 5 * sd), (observed, row)


# -- when sampling beats splitting ----------------------------------------------------------------
def _variances(k, epsilon, d, p, n):
    """(splitting, sampling) variance of one attribute's unbiased k-RR estimate."""
    split = RandomizedResponseChannel(epsilon / d, k).variance(p, n)
    sample = RandomizedResponseChannel(epsilon, k).variance(p, 1) * expected_inverse_count(n, d)
    return split, sample


@pytest.mark.parametrize(
    ("k", "epsilon", "d", "sampling_wins"),
    [
        (2, 1.0, 4, True),
        (8, 1.0, 2, True),
        (8, 4.0, 4, True),
        (2, 8.0, 2, False),
        (7, 16, 4, False),
    ],
)
def test_rule_sampling_beats_splitting(k, epsilon, d, sampling_wins):
    """The rule of the user guide: sampling wins iff d v(eps) < v(eps / d) (first order)."""
    p = np.full(k, 1.0 / k)
    n = 10_000
    split, sample = _variances(k, epsilon, d, p, n)
    one = RandomizedResponseChannel(epsilon, k).variance(p, 1)
    rule = d * one < RandomizedResponseChannel(epsilon / d, k).variance(p, 1)
    assert np.all(rule == sampling_wins)
    assert np.all((sample < split) == sampling_wins)


#: The user guide's crossovers: above epsilon*, splitting beats sampling (k-RR, uniform p).
CROSSOVERS = {
    2: {2: 3.06, 4: 4.25, 8: 5.88},
    8: {2: 5.88, 4: 8.78, 8: 13.45},
    32: {2: 8.68, 4: 13.99, 8: 23.34},
}


@pytest.mark.parametrize("k", sorted(CROSSOVERS))
@pytest.mark.parametrize("d", [2, 4, 8])
def test_user_guide_crossover_table(k, d):
    crossover = CROSSOVERS[k][d]
    p = np.full(k, 1.0 / k)

    def gap(epsilon):  # total variance: d v(eps) - v(eps / d)
        one = RandomizedResponseChannel(epsilon, k).variance(p, 1).sum()
        return d * one - RandomizedResponseChannel(epsilon / d, k).variance(p, 1).sum()

    assert gap(crossover - 0.01) < 0 < gap(crossover + 0.01)


@pytest.mark.parametrize(("epsilon", "sampling_wins"), [(1.0, True), (16.0, False)])
def test_rule_holds_for_measured_errors(seed, epsilon, sampling_wins):
    """Measured on two binary attributes, on both sides of the rule."""
    rng = np.random.default_rng(seed)
    n, R = 4000, 150
    X = np.column_stack([rng.random(n) < 0.3, rng.random(n) < 0.6]).astype(int)
    truth = [np.bincount(X[:, j], minlength=2) / n for j in range(2)]
    total = {}
    for cls in (BudgetSplitting, AttributeSampling):
        pr = cls(epsilon=epsilon, categories=[[0, 1], [0, 1]], random_state=seed).fit(X)
        sq = 0.0
        for _ in range(R):
            est = MultidimensionalEstimator().fit(pr.transform(X))
            sq += sum(
                float(np.sum((p - t) ** 2)) for p, t in zip(est.distribution_, truth, strict=True)
            )
        total[cls] = sq / R
    assert (total[AttributeSampling] < total[BudgetSplitting]) == sampling_wins


# -- scikit-learn integration, accounting and refusals ---------------------------------------------
def test_accountant_charged_once_per_person_and_transform():
    acc = PrivacyAccountant(budget=2.5)
    X = [["a", 0, "x"], ["b", 1, "y"], ["c", 0, "x"]]
    for seed, cls in enumerate((BudgetSplitting, AttributeSampling)):
        # each its own seed: two privatizers replaying one stream into an accountant are refused
        pr = cls(epsilon=1.0, categories=SMALL, accountant=acc, random_state=seed)
        pr.fit_transform(X)
        assert clone(pr).accountant is acc
    ledger = acc.ledger
    assert ledger["epsilon"].tolist() == [1.0, 1.0]
    assert ledger["n_people"].tolist() == [3, 3]
    assert ledger["privatizer"].tolist() == ["BudgetSplitting", "AttributeSampling"]
    with pytest.raises(BudgetExceededError):
        pr.transform(X)
    assert len(acc.ledger) == 2


def test_guarantee_of_column_transformer_and_pipeline():
    frame = pd.DataFrame({"a": ["a", "b"], "b": [0, 1], "c": ["x", "y"], "d": [1, 2]})
    ct = ColumnTransformer(
        [
            ("md", AttributeSampling(epsilon=1.0, categories=SMALL), ["a", "b", "c"]),
            ("rr", RandomizedResponse(2.0, categories=[[1, 2]]), ["d"]),
        ]
    ).fit(frame)
    assert guarantee_of(ct) == LDP(3.0)
    pipe = Pipeline(
        [("privatize", BudgetSplitting(epsilon=1.5, categories=SMALL)), ("estimate", EMEstimator())]
    )
    pipe.fit(frame[["a", "b", "c"]])
    assert guarantee_of(pipe) == LDP(1.5)


@pytest.mark.parametrize("cls", [BudgetSplitting, AttributeSampling])
def test_pipeline_with_pandas_output_and_plain_arrays(cls, seed):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {"a": rng.choice(["a", "b", "c"], 3000), "b": rng.integers(0, 2, 3000)},
        index=np.arange(3000) * 2,
    )
    cats = [["a", "b", "c"], [0, 1]]
    pipe = Pipeline(
        [
            ("privatize", cls(epsilon=2.0, categories=cats, random_state=seed)),
            ("estimate", MultidimensionalEstimator(estimator=EMEstimator())),
        ]
    )
    pipe.set_output(transform="pandas")
    pipe.fit(frame)
    est = pipe[-1]
    assert [len(p) for p in est.distribution_] == [3, 2]
    reports = pipe[0].transform(frame)
    assert isinstance(reports, pd.DataFrame) and reports.index.equals(frame.index)
    # the same reports as a plain array, with the fitted privatizer as channel=
    plain = MultidimensionalEstimator(estimator=EMEstimator(), channel=pipe[0]).fit(
        reports.to_numpy()
    )
    for a, b in zip(
        plain.distribution_,
        MultidimensionalEstimator(estimator=EMEstimator()).fit(reports).distribution_,
        strict=False,
    ):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    lower, upper = est.confidence_interval(0.1)[0]
    assert np.all(lower <= est.distribution_[0]) and np.all(est.distribution_[0] <= upper)
    assert np.isfinite(est.score(reports))


def test_sampling_estimate_matches_one_column_fit_on_the_reporters(seed):
    """Attribute j's estimator is the one-column estimator on the people who reported j."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 3, 5000), rng.integers(0, 4, 5000)])
    smp = AttributeSampling(epsilon=1.0, categories=[[0, 1, 2], [0, 1, 2, 3]], random_state=1)
    reports = smp.fit_transform(X)
    est = MultidimensionalEstimator().fit(reports)
    rows = np.asarray(reports[:, 0]) == 1
    one = EmpiricalEstimator(channel=smp.channel_[1]).fit(np.asarray(reports)[rows, 1:2])
    np.testing.assert_array_equal(est.distribution_[1], one.distribution_)
    np.testing.assert_array_equal(est.distribution_std_[1], one.distribution_std_)
    assert est.n_reports_per_attribute_.tolist() == [5000 - rows.sum(), rows.sum()]
    # streaming gives the same estimate
    streamed = MultidimensionalEstimator().partial_fit(reports[:2000]).partial_fit(reports[2000:])
    for a, b in zip(streamed.distribution_, est.distribution_, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # the exact likelihood of (j, y): log(1/d) + log P_j(y)
    log_prob = est.score_samples(reports)
    np.testing.assert_allclose(
        log_prob[rows],
        math.log(0.5) + est.estimators_[1].score_samples(np.asarray(reports)[rows, 1:2]),
    )


def test_estimators_refuse_reports_of_another_configuration(seed):
    X = [["a", 0, "x"], ["b", 1, "y"]] * 50
    smp = AttributeSampling(epsilon=1.0, categories=SMALL, random_state=seed).fit(X)
    spl = BudgetSplitting(epsilon=1.0, categories=SMALL, random_state=seed).fit(X)
    sampled, split = smp.transform(X), spl.transform(X)
    with pytest.raises(TypeError, match="reports of attribute sampling over 3 attributes"):
        EMEstimator().fit(sampled)
    est = MultidimensionalEstimator().fit(sampled)
    with pytest.raises(ChannelMismatchError, match="another collection"):
        est.partial_fit(split)
    other = clone(smp).set_params(epsilon=2.0).fit(X).transform(X)
    with pytest.raises(ChannelMismatchError, match="another collection"):
        est.partial_fit(other)
    with pytest.raises(ChannelMismatchError):
        MultidimensionalEstimator(channel=spl).fit(sampled)
    # plain arrays of sampling reports with a bad attribute index
    bad = np.asarray(sampled).copy()
    bad[0, 0] = 3
    with pytest.raises(ValueError, match=r"attribute index \(column 0\) must lie in \[0, 3\)"):
        MultidimensionalEstimator(channel=smp).fit(bad)
    with pytest.raises(ValueError, match="have no reports among the 1 read"):
        MultidimensionalEstimator().fit(smp.transform([["a", 0, "x"]]))


def test_bad_base_privatizers_are_refused():
    X = [["a", 0], ["b", 1]]
    cats = [["a", "b"], [0, 1]]
    with pytest.raises(ValueError, match="attribute 0 .* is UtilityOptimizedLDP"):
        AttributeSampling(
            privatizer=UtilityOptimizedRR(sensitive=[["a"], [0]]), categories=cats
        ).fit(X)
    with pytest.raises(TypeError, match="privatizer must have one, got BinaryRandomizedResponse"):
        AttributeSampling(
            privatizer=BinaryRandomizedResponse(epsilon_01=1.0, epsilon_10=2.0), categories=cats
        ).fit(X)
    with pytest.raises(TypeError, match="privatizer must be a skldp privatizer"):
        BudgetSplitting(privatizer=EMEstimator(), categories=cats).fit(X)
    with pytest.raises(ValueError, match="epsilon must be a positive finite number; got -1"):
        BudgetSplitting(epsilon=-1, categories=cats).fit(X)
    # the base instance is left alone
    base = RandomizedResponse(0.3)
    BudgetSplitting(privatizer=base, epsilon=2.0, categories=cats).fit(X)
    assert base.epsilon == 0.3 and not hasattr(base, "channel_")


def test_sampling_reports_round_trip_through_parquet(tmp_path, seed):
    X = [["a", 0, "x"], ["b", 1, "y"], ["c", 0, "y"]] * 100
    smp = AttributeSampling(
        privatizer=OptimizedUnaryEncoding(), categories=SMALL, random_state=seed
    )
    smp.set_output(transform="pandas")
    reports = smp.fit_transform(X)
    assert list(reports.columns) == ["attribute", "report_0", "report_1", "report_2"]
    path = tmp_path / "reports.parquet"
    reports.to_parquet(path)
    back = pd.read_parquet(path)
    a = MultidimensionalEstimator().fit(reports)
    b = MultidimensionalEstimator().fit(back)
    for p, q in zip(a.distribution_, b.distribution_, strict=True):
        np.testing.assert_array_equal(p, q)


def test_sampling_draws_fresh_noise_and_a_clone_replays(seed):
    X = np.array([["a", 0, "x"], ["b", 1, "y"]] * 200, dtype=object)
    smp = AttributeSampling(categories=SMALL, random_state=seed).fit(X)
    first, second = np.asarray(smp.transform(X)), np.asarray(smp.transform(X))
    assert not np.array_equal(first, second)  # the attribute draws differ too
    replay = clone(smp).fit(X)
    np.testing.assert_array_equal(np.asarray(replay.transform(X)), first)


def test_dask_input_is_privatized_lazily_and_estimated_once_computed():
    da = pytest.importorskip("dask.array")
    X = np.column_stack([np.arange(4000) % 3, np.arange(4000) % 2])
    smp = AttributeSampling(categories=[[0, 1, 2], [0, 1]], random_state=0).fit(X)
    lazy = smp.transform(da.from_array(X, chunks=(1000, 2)))
    assert lazy.shape == (4000, 2)
    with pytest.raises(TypeError, match="call partial_fit on each computed partition"):
        MultidimensionalEstimator().fit(lazy)
    est = MultidimensionalEstimator(channel=smp).fit(lazy.compute())
    assert est.n_reports_per_attribute_.sum() == 4000


def test_split_states_the_base_guarantee_when_it_is_not_plain_ldp():
    # one column: the base's own model (a bug stated LDP(epsilon) for any one-column base)
    one = BudgetSplitting(
        privatizer=UtilityOptimizedRR(sensitive=["a"]), epsilon=2.0, categories=["a", "b"]
    )
    one.fit([["a"], ["b"]])
    assert one.privacy_ == one.privatizer_.privacy_ and type(one.privacy_) is not LDP
    two = BudgetSplitting(
        privatizer=UtilityOptimizedRR(sensitive=[["a"], [0]]),
        epsilon=2.0,
        categories=[["a", "b"], [0, 1]],
    ).fit([["a", 0], ["b", 1]])
    assert two.privacy_ == two.privatizer_.privacy_
    assert [part.epsilon for part in two.privacy_.parts] == [1.0, 1.0]


def test_clone_keeps_a_fitted_privatizer_given_as_channel(seed):
    X = [["a", 0, "x"], ["b", 1, "y"]] * 50
    smp = AttributeSampling(categories=SMALL, random_state=seed).fit(X)
    plain = np.asarray(smp.transform(X))
    est = clone(MultidimensionalEstimator(channel=smp))
    assert est.channel is not smp and est.channel.mechanism_ == smp.mechanism_
    assert est.fit(plain).n_reports_ == 100

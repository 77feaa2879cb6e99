"""Mean mechanisms (Duchi et al.'s one bit, Piecewise, Hybrid) and MeanEstimator (issue 31, 3)."""

import pickle
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import brentq
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from skldp import DuchiMechanism, HybridMechanism, MeanEstimator, PiecewiseMechanism
from skldp.channels import (
    DuchiMeanChannel,
    HybridMeanChannel,
    PiecewiseMeanChannel,
    duchi_variance,
    exactly_within,
    hybrid_threshold,
    hybrid_variance,
    piecewise_variance,
)
from skldp.privacy import tight_epsilon_matrix, verify

CHANNELS = [DuchiMeanChannel, PiecewiseMeanChannel, HybridMeanChannel]
PRIVATIZERS = [DuchiMechanism, PiecewiseMechanism, HybridMechanism]
T = np.array([-1.0, -0.3, 0.0, 0.7, 1.0])


# -- the papers' formulas (spec section 2.5, 2.8 claims 1-2) ------------------------------
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
def test_piecewise_density_mean_and_variance_by_integration(eps):
    s = np.exp(eps / 2)
    c = (s + 1) / (s - 1)
    p = (np.exp(eps) - s) / (2 * s + 2)
    q = p / np.exp(eps)
    for t in T:
        lft = (c + 1) / 2 * t - (c - 1) / 2
        r = lft + c - 1
        # piecewise-constant density: integrate 1, y, y^2 exactly on the three pieces
        pieces = [(-c, lft, q), (lft, r, p), (r, c, q)]
        m0 = sum(d * (b - a) for a, b, d in pieces)
        m1 = sum(d * (b**2 - a**2) / 2 for a, b, d in pieces)
        m2 = sum(d * (b**3 - a**3) / 3 for a, b, d in pieces)
        assert_allclose([m0, m1, m2 - m1**2], [1, t, piecewise_variance(eps, t)], atol=1e-10)


def test_worst_case_table_threshold_and_crossover():
    table = {
        0.5: (16.6708, 21.2226, 16.6708),
        1: (4.6827, 5.2236, 4.2890),
        2: (1.7241, 1.2276, 1.0423),
        4: (1.0760, 0.2414, 0.2190),
        8: (1.0013, 0.0253, 0.0249),
    }
    for eps, (d, pm, hm) in table.items():
        worst_hm = max(hybrid_variance(eps, 0.0), hybrid_variance(eps, 1.0))
        got = [duchi_variance(eps, 0.0), piecewise_variance(eps, 1.0), worst_hm]
        assert_allclose(got, [d, pm, hm], atol=1e-4)
    assert abs(hybrid_threshold() - 0.6093525) < 1e-6
    cross = brentq(lambda e: piecewise_variance(e, 1.0) - duchi_variance(e, 0.0), 0.5, 3.0)
    assert abs(cross - 1.28978) < 1e-4
    # above the threshold the Hybrid variance does not depend on t
    assert_allclose(hybrid_variance(2.0, T), 1.0423363417, rtol=1e-9)


# -- exactness of the sampled mechanisms -----------------------------------------------------------
@pytest.mark.parametrize("eps", [1e-3, 0.5, 1.0, 4.0, 50.0])
@pytest.mark.parametrize("cls", CHANNELS)
def test_discretized_channels_verify_exactly(cls, eps):
    ch = cls(eps) if cls is DuchiMeanChannel else cls(eps, n_cells=16)
    Q = ch.to_dense(np.linspace(-1, 1, 33))
    assert_allclose(Q.sum(axis=1), 1.0, atol=1e-12)
    assert verify(Q, eps).passed
    # tight up to the grid: no budget is wasted
    assert tight_epsilon_matrix(Q).max() > eps * (1 - 1e-3) or eps >= 50
    # expected report is t exactly (unbiased), from the dense rows
    scale = np.abs(ch.output_values()).max()
    assert_allclose(Q @ ch.output_values(), np.linspace(-1, 1, 33), atol=1e-9 * scale)


@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
def test_production_piecewise_ratio_is_exact_at_2_20_cells(eps):
    ch = PiecewiseMeanChannel(eps)
    lo = (1 - Fraction(ch.pi)) / ch.n_cells
    assert exactly_within(lo + Fraction(ch.pi) / ch.band, lo, eps)
    # the exact variance is the paper's to 1e-4 (relative)
    assert_allclose(ch.variance(T), piecewise_variance(eps, T), rtol=1e-4)


def test_planted_wrong_budget_fails_verification():
    Q = PiecewiseMeanChannel(1.0, n_cells=16).to_dense(np.linspace(-1, 1, 9))
    assert not verify(Q, 0.9).passed


# -- unbiased, variance within 10% of the papers' formulas (simulation) ---------------------------
@pytest.mark.parametrize("eps", [0.5, 2.0])
@pytest.mark.parametrize("cls", CHANNELS)
def test_simulation_unbiased_and_variance_matches_paper(cls, eps):
    rng = np.random.default_rng(7)
    t = rng.uniform(-1, 1, 200_000)
    y = cls(eps).sample(t, rng)
    paper = {
        DuchiMeanChannel: duchi_variance,
        PiecewiseMeanChannel: piecewise_variance,
        HybridMeanChannel: hybrid_variance,
    }[cls](eps, t)
    resid = y - t
    se = np.sqrt(paper.sum()) / t.size
    assert abs(resid.mean()) < 4 * se
    assert abs(np.mean(resid**2) / paper.mean() - 1) < 0.02  # well inside 10%


def test_hybrid_claim_eps2_variance_of_the_mean():
    # spec 2.8 claim 4: n * Var(mean) within 5% of 1.04234 at a fixed t; 300 repetitions of n=2000
    rng = np.random.default_rng(3)
    ch = HybridMeanChannel(2.0)
    t = np.tile(np.linspace(-1, 1, 2000), (300, 1))
    means = ch.sample(t, rng).mean(axis=1)
    ratio = 2000 * means.var(ddof=1) / 1.0423363417
    assert abs(ratio - 1) < 0.2  # 300 repetitions: sd of the ratio about 0.08
    big = HybridMeanChannel(2.0).sample(np.linspace(-1, 1, 1_000_000), rng)
    assert abs(np.var(big - np.linspace(-1, 1, 1_000_000)) / 1.0423363417 - 1) < 0.01


# -- privatizers and the estimator -------------------------------------------------------------
@pytest.mark.parametrize("cls", PRIVATIZERS)
def test_privatizer_units_interval_and_coverage(cls):
    rng = np.random.default_rng(0)
    x = rng.uniform(20, 60, size=(50_000, 2))
    priv = cls(epsilon=2.0, bounds=[(0, 100), (10, 70)], random_state=1)
    reports = priv.fit_transform(x)
    assert reports.shape == x.shape
    est = MeanEstimator(privatizer=priv).fit(reports)
    assert np.all(np.abs(est.mean_ - x.mean(axis=0)) < 4 * est.std_)
    low, high = est.confidence_interval(0.01)
    assert np.all((low < x.mean(axis=0)) & (x.mean(axis=0) < high))
    # worst-case bound >= exact average variance; plug-in close to the exact one
    exact = priv.report_variance(x).mean(axis=0) / x.shape[0]
    assert np.all(est.variance_ >= exact * 0.999)
    plug = MeanEstimator().fit(reports).variance_
    assert_allclose(plug, exact + x.var(axis=0) / x.shape[0], rtol=0.05)


def test_streaming_equals_batch_and_pickle_clone():
    reports = PiecewiseMechanism(epsilon=1.0, bounds=(0, 1), random_state=0).fit_transform(
        np.linspace(0, 1, 1000)[:, None]
    )
    whole = MeanEstimator().fit(reports)
    part = MeanEstimator().partial_fit(reports[:300]).partial_fit(reports[300:])
    assert_allclose(part.mean_, whole.mean_)
    assert_allclose(part.variance_, whole.variance_)
    again = pickle.loads(pickle.dumps(whole))
    assert_allclose(again.mean_, whole.mean_)
    priv = HybridMechanism(epsilon=0.5, bounds=(0, 1), random_state=3)
    assert clone(priv).get_params() == priv.get_params()
    assert pickle.loads(pickle.dumps(priv.make_channel())) == priv.make_channel()


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: PiecewiseMechanism(epsilon=1.0).fit([[0.5]]), "bounds=.*required"),
        (lambda: PiecewiseMechanism(epsilon=1.0, bounds=(1, 0)).fit([[0.5]]), "lo < hi"),
        (lambda: PiecewiseMechanism(epsilon=1.0, bounds=(0, 1)).fit([[1.5]]), "outside bounds"),
        (lambda: PiecewiseMechanism(epsilon=-1.0, bounds=(0, 1)).fit([[0.5]]), "epsilon"),
        (lambda: PiecewiseMechanism(epsilon=1.0, bounds=[(0, 1)] * 3).fit([[0.5, 0.5]]), "3 pairs"),
        (lambda: MeanEstimator(variance="worst-case").fit([[1.0]]), "needs privatizer"),
        (lambda: MeanEstimator(variance="max").fit([[1.0]]), "variance"),
    ],
)
def test_bad_input(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_clip_and_wrong_privatizer_type():
    priv = DuchiMechanism(epsilon=1.0, bounds=(0, 1), clip=True, random_state=0)
    priv.fit([[5.0], [-2.0]])
    assert priv.transform([[5.0]]).shape == (1, 1)
    with pytest.raises(TypeError, match="mean mechanism"):
        MeanEstimator(privatizer=object()).fit([[1.0]])


def test_pandas_column_transformer_numeric_columns():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"age": rng.uniform(18, 90, 20_000), "income": rng.uniform(0, 200, 20_000)},
        index=np.arange(20_000) + 5,
    )
    ct = ColumnTransformer(
        [
            ("age", HybridMechanism(epsilon=2.0, bounds=(0, 100), random_state=0), ["age"]),
            (
                "income",
                PiecewiseMechanism(epsilon=2.0, bounds=(0, 250), random_state=1),
                ["income"],
            ),
        ]
    ).set_output(transform="pandas")
    reports = ct.fit_transform(frame)
    assert list(reports.columns) == ["age__age", "income__income"]
    assert reports.index.equals(frame.index)
    est = MeanEstimator().fit(reports)
    assert np.all(np.abs(est.mean_ - frame.mean().to_numpy()) < 4 * est.std_)
    pipe = Pipeline([("privatize", ct), ("mean", MeanEstimator())]).fit(frame)
    assert pipe[-1].mean_.shape == (2,)


@parametrize_with_checks(
    [
        PiecewiseMechanism(epsilon=1.0, bounds=(-100, 100), clip=True, random_state=0),
        HybridMechanism(epsilon=1.0, bounds=(-100, 100), clip=True, random_state=0),
        DuchiMechanism(epsilon=1.0, bounds=(-100, 100), clip=True, random_state=0),
        MeanEstimator(),
    ],
    expected_failed_checks=lambda est: (
        {}
        if isinstance(est, MeanEstimator)
        else {
            "check_methods_subset_invariance": "noise is drawn per call, in row order",
            "check_methods_sample_order_invariance": "noise is drawn per call, in row order",
            "check_estimators_pickle": "an unpickled privatizer never resumes its source's "
            "noise stream: it draws fresh noise (docs/user_guide/seeds.rst)",
        }
    ),
)
def test_sklearn_compatible(estimator, check):
    check(estimator)

"""Bad input at every public entry point, as a matrix over the registry.

Every case either raises a ValueError or TypeError whose message names the problem
(``pytest.raises(..., match=...)``), or has a documented behaviour asserted here. No case may
crash with an internal error (IndexError, KeyError, AttributeError, ZeroDivisionError,
numpy broadcasting messages) or return numbers silently.
"""

import contextlib
import inspect
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import skldp
from skldp import (
    AttributeSampling,
    BlockHadamardResponse,
    CandidateEstimator,
    DuchiMechanism,
    EMEstimator,
    HaarWavelet,
    HeavyHitterEstimator,
    HierarchicalHistogram,
    HybridMechanism,
    LongitudinalOUE,
    LongitudinalRAPPOR,
    LongitudinalRR,
    MeanEstimator,
    MultidimensionalEstimator,
    PersonalizedEstimator,
    PersonalizedULDP,
    PiecewiseMechanism,
    PrefixExtension,
    ProjectedEstimator,
    RandomizedResponse,
    RangeQueryEstimator,
    SparseEstimator,
    SquareWave,
    TreeHistogram,
    channels,
    datasets,
    experiments,
    grid_blocks,
    make_person_keys,
    metrics,
    privacy,
    projection,
    recommend_mechanism,
    recommend_numeric_method,
    registry,
    theory,
)
from skldp.datasets import (
    Distribution,
    load_adult,
    load_adult_joint,
    load_descr,
    load_foursquare_manhattan,
    load_gowalla,
    make_dirichlet,
    make_geometric,
    make_sparse,
    make_two_step,
    make_uniform,
    make_zipf,
)
from skldp._memory import memory_limit, set_memory_limit
from skldp.exceptions import ChannelMismatchError, InvalidParameterError, PrivacyLeakWarning
from skldp.experiments import run_experiment, summarize
from skldp.metrics import (
    empirical_distribution,
    kl_divergence,
    l1_distance,
    l2_distance,
    linf_distance,
    make_distribution_scorer,
    total_variation,
)
from skldp.privacy import (
    LDP,
    BinaryContextAwareLDP,
    BlockStructuredLDP,
    ContextAwareLDP,
    HighLowLDP,
    LongitudinalLDP,
    PrivacyAccountant,
    SequentialComposition,
    ShuffleDP,
    UtilityOptimizedLDP,
    ZeroBits,
    audit,
    charged_delta,
    charged_epsilon,
    compose,
    composed_epsilon_matrix,
    estimate_channel,
    guarantee_of,
    one_sided_decomposition,
    partition_labels,
    sensitive_indices,
    shuffle_delta,
    shuffle_guarantee,
    tight_epsilon_matrix,
    verify,
)
from skldp.projection import clip_normalize, norm_sub, project_simplex
from skldp.theory import (
    count_mean_sketch_mse,
    krr_excess_risk,
    krr_l1_risk,
    krr_l2_risk,
    krr_rappor_break_even,
    normal_l1_risk,
    normal_projected_l1_risk,
    rappor_excess_risk,
    rappor_l1_risk,
    rappor_l2_risk,
)
from tests.registry import ESTIMATORS, MECHANISMS, PRIVATIZERS, domain, fitted, instance_id

ERRORS = (ValueError, TypeError)
EPS_MATCH = r"epsilon\w* must be (a positive finite number|a number >= 0 or inf)"


def _eps_params(privatizer):
    names = [n for n in privatizer.get_params(deep=False) if n.startswith("epsilon")]
    if not names:
        pytest.skip("no epsilon parameter")
    return names


def _column(values):
    return np.asarray(values, dtype=object).reshape(-1, 1)


# -- privatizers: parameters -----------------------------------------------------------------------
BAD_EPSILONS = [
    (0, ValueError),
    (0.0, ValueError),
    (-1.0, ValueError),
    (float("nan"), ValueError),
    (float("inf"), ValueError),
    (-float("inf"), ValueError),
    ("1.0", TypeError),
    (None, TypeError),
    (True, TypeError),
    ([1.0], TypeError),
]


#: Budgets that a mechanism documents as valid limits (context-aware budgets of the binary
#: mechanism: 0 is perfect privacy for that direction, +inf none; Acharya et al. 2020, Thm 2).
DOCUMENTED_LIMITS = {"BinaryRandomizedResponse": (0.0, float("inf"))}


@pytest.mark.parametrize("bad,error", BAD_EPSILONS, ids=[repr(b) for b, _ in BAD_EPSILONS])
@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
def test_bad_epsilon_is_named(privatizer, bad, error):
    limits = DOCUMENTED_LIMITS.get(type(privatizer).__name__, ())
    if not isinstance(bad, (bool, str, list, type(None))) and any(bad == v for v in limits):
        for name in _eps_params(privatizer):
            clone(privatizer).set_params(**{name: bad}).fit(_column(domain(privatizer)))
        return
    for name in _eps_params(privatizer):
        p = clone(privatizer).set_params(**{name: bad})
        with pytest.raises(error, match=EPS_MATCH):
            p.fit(_column(domain(privatizer)))


@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
def test_bad_epsilon_leaves_params_untouched_and_refits(privatizer):
    name = _eps_params(privatizer)[0]
    p = clone(privatizer).set_params(**{name: -1.0})
    with pytest.raises(ValueError):
        p.fit(_column(domain(privatizer)))
    assert p.get_params()[name] == -1.0
    p.set_params(**{name: 1.0}).fit(_column(domain(privatizer)))


BAD_CATEGORIES = [
    ("duplicates", lambda d: [d[0], d[0], *d[1:]], ValueError, "duplicates"),
    ("nan", lambda d: [*d, float("nan")], ValueError, "missing value"),
    ("none", lambda d: [*d, None], ValueError, "missing value"),
    ("one", lambda d: d[:1], ValueError, "at least"),
    ("string", lambda d: "abc", TypeError, "list"),
    ("two_lists_one_column", lambda d: [d, d], ValueError, "columns"),
    ("scalar", lambda d: 3, TypeError, "list"),
    ("empty", lambda d: [], ValueError, "^categories is empty: the domain of each column must"),
]


@pytest.mark.parametrize(
    "case,make,error,match", BAD_CATEGORIES, ids=[c[0] for c in BAD_CATEGORIES]
)
@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
def test_bad_categories_are_named(privatizer, case, make, error, match):
    d = domain(privatizer)
    p = clone(privatizer).set_params(categories=make(d))
    with pytest.raises(error, match=match):
        p.fit(_column(d[:1]))


@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
def test_inferred_domain_warns(privatizer):
    p = clone(privatizer).set_params(categories=None)
    if getattr(p, "_is_open", lambda: False)():
        # Documented: an open alphabet (hashed mechanisms without categories) learns nothing
        # from the data, so there is nothing to leak and no warning.
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            p.fit(_column(domain(privatizer)))
        assert all(c is None for c in p.categories_)
        return
    # A mechanism whose other parameters name categories may still need the domain (a
    # ValueError); the warning comes first either way.
    with (
        pytest.warns(PrivacyLeakWarning, match="inferred from the raw data"),
        contextlib.suppress(ValueError),
    ):
        p.fit(_column(domain(privatizer)))


# Parameters that tie a mechanism to its domain: a sensitive set or a partition. The mistake is
# in the parameter, not in the data, so each message names the parameter (and the value).
OUTSIDE = "__not_in_the_domain__"
NOT_CATEGORIES = "lists values that are not categories of column 0: "
DOMAIN_PARAM_CASES = [
    (
        "sensitive",
        "outside",
        lambda d: [d[0], OUTSIDE],
        ValueError,
        f"^sensitive {NOT_CATEGORIES}'{OUTSIDE}'$",
    ),
    (
        "sensitive",
        "none",
        lambda d: [d[0], None],
        ValueError,
        f"^sensitive {NOT_CATEGORIES}None$",
    ),
    ("sensitive", "repeated", lambda d: [d[1], d[1]], ValueError, "^sensitive contains duplicates"),
    ("sensitive", "nested", lambda d: [[d[0]], [d[1]]], ERRORS, "^sensitive (has 2 lists|must)"),
    ("sensitive", "string", lambda d: "abc", TypeError, r"^sensitive must be a list"),
    (
        "blocks",
        "outside",
        lambda d: [[d[0]], [*d[1:], OUTSIDE]],
        ValueError,
        rf"^blocks \(block 1\) {NOT_CATEGORIES}'{OUTSIDE}'$",
    ),
    ("blocks", "not_covering", lambda d: [[d[0]]], ValueError, "^the blocks do not cover .*block$"),
    ("blocks", "overlap", lambda d: [list(d), [d[0]]], ValueError, "^the blocks of column 0 over"),
    ("blocks", "empty_block", lambda d: [list(d), []], ValueError, r"^block 1 of blocks is empty"),
    (
        "blocks",
        "missing_label",
        lambda d: [0] * (len(d) - 1) + [None],
        ValueError,
        r"^blocks gives a missing label \(None or NaN\) to 1 categories of column 0",
    ),
    ("blocks", "short_labels", lambda d: [0], ValueError, r"one label per category.*blocks has 1"),
    ("blocks", "string", lambda d: "abc", TypeError, r"^blocks must be"),
]


#: (privatizer, case) for every mechanism that has the case's parameter.
DOMAIN_PARAM_MATRIX = [
    (p, *case) for p in MECHANISMS for case in DOMAIN_PARAM_CASES if case[0] in p.get_params()
]


@pytest.mark.parametrize(
    "privatizer,param,case,make,error,match",
    DOMAIN_PARAM_MATRIX,
    ids=[f"{instance_id(c[0])}-{c[1]}-{c[2]}" for c in DOMAIN_PARAM_MATRIX],
)
def test_sensitive_set_or_partition_must_fit_the_domain(
    privatizer, param, case, make, error, match
):
    d = domain(privatizer)
    p = clone(privatizer).set_params(**{param: make(d)})
    for name in ("n_blocks", "block_size"):  # the partition is given by exactly one parameter
        if param == "blocks" and name in p.get_params(deep=False):
            p.set_params(**{name: None})
    with pytest.raises(error, match=match):
        p.fit(_column(d))


def test_domain_parameters_are_exercised():
    # Every case reaches a mechanism, and every mechanism parameter that names categories
    # (a sensitive set, a partition) has cases.
    assert {c[1:3] for c in DOMAIN_PARAM_MATRIX} == {c[:2] for c in DOMAIN_PARAM_CASES}
    named = {
        n for p in MECHANISMS for n in p.get_params(deep=False) if "sensitive" in n or n == "blocks"
    }
    assert named == {c[0] for c in DOMAIN_PARAM_CASES}


# -- privatizers: data -----------------------------------------------------------------------------
def _bad_rows(d):
    return [
        ("nan", _column([d[0], float("nan")]), ValueError, "missing values"),
        ("none", _column([d[0], None]), ValueError, "missing values"),
        ("pd_na", pd.Series([d[0], pd.NA], dtype=object), ValueError, "missing values"),
        ("outside", _column([d[0], "__not_in_the_domain__"]), ValueError, "outside the domain"),
        ("empty", np.empty((0, 1), dtype=object), ValueError, "0 sample"),
        ("two_columns", np.asarray([[d[0], d[0]]], dtype=object), ValueError, "features"),
        ("three_dims", np.asarray([[[d[0]]]], dtype=object), ValueError, "dim"),
    ]


BAD_ROW_IDS = [c[0] for c in _bad_rows([0])]


@pytest.mark.parametrize("case", BAD_ROW_IDS)
@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
def test_bad_rows_at_transform(privatizer, case):
    p = fitted(privatizer)
    _, X, error, match = next(c for c in _bad_rows(domain(privatizer)) if c[0] == case)
    with pytest.raises(error, match=match):
        p.transform(X)


@pytest.mark.parametrize("case", [c for c in BAD_ROW_IDS if c != "two_columns"])
@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
def test_bad_rows_at_fit(privatizer, case):
    _, X, error, match = next(c for c in _bad_rows(domain(privatizer)) if c[0] == case)
    with pytest.raises(error, match=match):
        clone(privatizer).fit(X)


@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
def test_transform_before_fit(privatizer):
    with pytest.raises(ValueError, match="not fitted"):
        clone(privatizer).transform(_column(domain(privatizer)))


@pytest.mark.parametrize(
    "bad,error,match", [(-1, ValueError, "non-negative"), ("x", TypeError, "random_state")]
)
@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
def test_bad_random_state(privatizer, bad, error, match):
    p = fitted(privatizer).set_params(random_state=bad)
    with pytest.raises(error, match=match):
        p.transform(_column(domain(privatizer)))


def test_numeric_domain_accepts_integral_floats_only():
    # Documented: 1.0 is the category 1; 1.5 is outside the domain.
    rr = RandomizedResponse(categories=[0, 1, 2], random_state=0).fit([[0]])
    assert rr.transform(np.array([[0.0], [2.0]])).shape == (2, 1)
    with pytest.raises(ValueError, match="outside the domain: 1.5"):
        rr.transform(np.array([[1.5]]))


def test_mixed_type_categories_keep_their_values():
    rr = RandomizedResponse(categories=[1, "a"], random_state=0).fit([[1]])
    assert rr.categories_[0].tolist() == [1, "a"]
    with pytest.raises(ValueError, match="outside the domain"):
        rr.transform([["1"]])


# -- estimators ------------------------------------------------------------------------------------
#: The registry's estimators and the other entry points: the significance-threshold
#: post-processing, EM started from it, sparse recovery and the candidate estimator (closed
#: alphabets: its candidates are then the categories). PersonalizedEstimator has its own cases.
MATRIX_ESTIMATORS = [
    *ESTIMATORS,
    ProjectedEstimator(method="threshold"),
    EMEstimator(init="threshold"),
    SparseEstimator(sparsity=2),
    CandidateEstimator(),
]


def _pair(estimator, privatizer):
    p = fitted(privatizer)
    d = domain(privatizer)
    reports = p.transform(_column(list(d) * 20))
    est = clone(estimator)
    try:
        est.fit(reports)
    except (ValueError, TypeError, NotImplementedError) as exc:
        pytest.skip(f"{instance_id(estimator)} does not estimate {instance_id(privatizer)}: {exc}")
    return p, reports, est


def _corrupt(p, reports):
    ch = p.channels_[0]
    plain = np.asarray(reports).copy()
    hi = ch.n_outputs if ch.report_kind == "symbol" else 2
    out = plain.astype(np.int64)
    out[0, 0] = hi
    neg = plain.astype(np.int64)
    neg[0, 0] = -1
    half = plain.astype(float)
    half[0, 0] = 0.5
    nan = plain.astype(float)
    nan[0, 0] = np.nan
    none = plain.astype(object)
    none[0, 0] = None
    # symbols must lie in [0, n_outputs); bit-vector reports must be bits
    rng_msg = (
        r"lie in \[0, \d+\)"
        if ch.report_kind == "symbol"
        else r"lie in \[0, \d+\)|bits in \{0, 1\}"
    )
    return {
        "out_of_range": (out, ValueError, rng_msg),
        "negative": (neg, ValueError, rng_msg),
        "non_integer": (half, ValueError, "integers"),
        "nan": (nan, ValueError, "integers"),
        "none": (none, ValueError, "integers"),
        "extra_column": (np.column_stack([plain, plain[:, :1]]), ValueError, "columns"),
        "missing_column": (plain[:, :0], ValueError, "columns"),
        "zero_reports": (plain[:0], ValueError, "zero reports"),
    }


REPORT_CASES = [
    "out_of_range",
    "negative",
    "non_integer",
    "nan",
    "none",
    "extra_column",
    "missing_column",
    "zero_reports",
]


@pytest.mark.parametrize("case", REPORT_CASES)
@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
@pytest.mark.parametrize("estimator", MATRIX_ESTIMATORS, ids=instance_id)
def test_bad_plain_reports(estimator, privatizer, case):
    p, reports, _ = _pair(estimator, privatizer)
    X, error, match = _corrupt(p, reports)[case]
    est = clone(estimator).set_params(channel=p)
    with pytest.raises(error, match=match):
        est.fit(X)


@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
@pytest.mark.parametrize("estimator", MATRIX_ESTIMATORS, ids=instance_id)
def test_reports_without_channel_and_of_another_mechanism(estimator, privatizer):
    p, reports, est = _pair(estimator, privatizer)
    with pytest.raises(ValueError, match="do not carry the channel"):
        clone(estimator).fit(np.asarray(reports))
    other = RandomizedResponse(epsilon=0.123, categories=["u", "v"], random_state=0).fit([["u"]])
    other_reports = other.transform([["u"], ["v"]])
    with pytest.raises(ChannelMismatchError, match="come from"):
        clone(estimator).set_params(channel=p).fit(other_reports)
    with pytest.raises(ChannelMismatchError, match="different mechanism"):
        clone(estimator).fit(reports).partial_fit(other_reports)
    with pytest.raises(ChannelMismatchError, match="different mechanism"):
        est.score(other_reports)


@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
@pytest.mark.parametrize("estimator", MATRIX_ESTIMATORS, ids=instance_id)
def test_zero_reports_after_fit(estimator, privatizer):
    p, reports, est = _pair(estimator, privatizer)
    before = np.copy(est.distribution_)
    # Documented: an empty chunk adds nothing; the posterior of zero reports is empty.
    with pytest.raises(ValueError, match="zero reports"):
        clone(estimator).fit(reports[:0])
    assert est.predict_proba(reports[:0]).shape == (0, len(domain(privatizer)))
    assert est.score_samples(reports[:0]).shape == (0,)
    with pytest.raises(ValueError, match="zero reports"):
        est.score(reports[:0])
    np.testing.assert_array_equal(est.distribution_, before)


@pytest.mark.parametrize(
    "bad, match",
    [
        ("rr", "channel must be"),
        (3, "channel must be"),
        (RandomizedResponse(), "channel= is an unfitted RandomizedResponse; fit the privatizer"),
    ],
    ids=["str", "int", "unfitted"],
)
@pytest.mark.parametrize("estimator", MATRIX_ESTIMATORS, ids=instance_id)
def test_bad_channel_parameter(estimator, bad, match):
    with pytest.raises(TypeError, match=match):
        clone(estimator).set_params(channel=bad).fit(np.zeros((3, 1), dtype=int))


@pytest.mark.parametrize("bad", [0, -5, 2.5, True, "1GB", np.float64(1e9)])
@pytest.mark.parametrize("setter", [set_memory_limit, memory_limit], ids=["set", "context"])
def test_bad_memory_limit(setter, bad):
    with pytest.raises(
        ValueError, match="memory limit must be a positive number of bytes or None; got"
    ):
        result = setter(bad)
        if setter is memory_limit:
            with result:
                pass


@pytest.mark.parametrize("estimator", MATRIX_ESTIMATORS, ids=instance_id)
def test_estimator_methods_before_fit(estimator):
    reports = fitted(PRIVATIZERS[0]).transform(_column(domain(PRIVATIZERS[0])))
    for method in ("score", "score_samples", "predict_proba", "predict"):
        with pytest.raises(ValueError, match="not fitted"):
            getattr(clone(estimator), method)(reports)


# -- channels --------------------------------------------------------------------------------------
def _channel(privatizer):
    return fitted(privatizer).channels_[0]


@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
def test_channel_entry_points(privatizer):
    ch = _channel(privatizer)
    k = ch.n_inputs
    rng = np.random.default_rng(0)
    cases = [
        (lambda: ch.sample(np.array([0, k]), rng), ValueError, r"\[0, \d+\)"),
        (lambda: ch.sample(np.array([-1]), rng), ValueError, r"\[0, \d+\)"),
        (lambda: ch.sample(np.array([0.5]), rng), ValueError, "integers"),
        (lambda: ch.sample(np.array([np.nan]), rng), ValueError, "integers"),
        (lambda: ch.sample(np.array(["a"]), rng), ValueError, "integers"),
        (lambda: ch.sample(np.zeros((2, 2), dtype=int), rng), ValueError, "1-D"),
        (lambda: ch.forward(np.ones(k + 1) / (k + 1)), ValueError, "shape"),
        (lambda: ch.forward(np.full(k, np.nan)), ValueError, "finite"),
        (lambda: ch.adjoint(np.ones(ch.n_statistics + 1)), ValueError, "shape"),
        (lambda: ch.adjoint(np.full(ch.n_statistics, np.inf)), ValueError, "finite"),
        (lambda: ch.unbiased(np.zeros(ch.n_statistics), 0), ValueError, "reports"),
        (lambda: ch.unbiased(np.zeros(ch.n_statistics), float("nan")), ValueError, "reports"),
        (lambda: ch.unbiased(np.zeros(ch.n_statistics), "10"), TypeError, "reports"),
        (lambda: ch.unbiased(np.full(ch.n_statistics, np.nan), 10), ValueError, "finite"),
        (lambda: ch.unbiased(np.zeros(ch.n_statistics + 1), 10), ValueError, "shape"),
        (lambda: ch.variance(np.ones(k), 10), ValueError, "sum to 1"),
        (lambda: ch.variance(np.ones(k) / k, 0), ValueError, "reports"),
        (lambda: ch.variance(np.ones(k + 1) / (k + 1), 10), ValueError, "entries"),
    ]
    reports = ch.sample(np.zeros(3, dtype=np.int64), rng)
    cases += [
        (lambda: ch.posterior(reports, np.ones(k + 1)), ValueError, "shape"),
        (lambda: ch.posterior(reports, -np.ones(k)), ValueError, "non-negative"),
        (lambda: ch.log_likelihood(reports, np.ones(k + 1) / (k + 1)), ValueError, "shape"),
        (lambda: ch.statistics(np.asarray(reports, dtype=float) + 0.5), ValueError, "integers"),
    ]
    for call, error, match in cases:
        with pytest.raises(error, match=match):
            call()
    # Documented: sampling zero inputs gives zero reports.
    assert ch.sample(np.array([], dtype=np.int64), rng).shape[0] == 0


# -- metrics and privacy models --------------------------------------------------------------------
@pytest.mark.parametrize(
    "metric", [total_variation, l1_distance, l2_distance, linf_distance, kl_divergence]
)
def test_metric_inputs(metric):
    with pytest.raises(ValueError, match="one shape"):
        metric([0.5, 0.5], [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="finite"):
        metric([np.nan, 1.0], [0.5, 0.5])
    with pytest.raises(ValueError, match="one shape"):
        metric([[0.5, 0.5]], [[0.5, 0.5]])


def test_kl_divergence_documented_edges():
    assert kl_divergence([0.5, 0.5], [1.0, 0.0]) == math.inf
    assert kl_divergence([1.0, 0.0], [0.5, 0.5]) == pytest.approx(math.log(2))
    with pytest.raises(ValueError, match="non-negative"):
        kl_divergence([-0.5, 1.5], [0.5, 0.5])


def test_empirical_distribution_and_scorer_inputs():
    with pytest.raises(ValueError, match="outside the domain"):
        empirical_distribution(["z"], ["a", "b"])
    with pytest.raises(ValueError, match="zero values"):
        empirical_distribution([], ["a", "b"])
    with pytest.raises(ValueError, match="metric must be"):
        make_distribution_scorer("nope")


@pytest.mark.parametrize(
    "categories,error,match",
    [
        (["a", "a", "b"], ValueError, "^categories contain duplicates: 'a'$"),
        (["a", None], ValueError, r"^categories contain a missing value \(None or NaN\)$"),
        (["a", np.nan], ValueError, r"^categories contain a missing value \(None or NaN\)$"),
        ([0.0, np.inf], ValueError, r"^categories contain an infinite value"),
        ([], ValueError, "^categories must hold at least 1 value; got 0$"),
        ("ab", TypeError, "^categories must be a list of values; got str$"),
        (3, TypeError, "^categories must be a list of values; got int$"),
        ([["a", "b"]], ValueError, r"^categories must be one list of values; got shape \(1, 2\)$"),
    ],
    ids=["duplicates", "none", "nan", "inf", "empty", "string", "scalar", "nested"],
)
def test_empirical_distribution_categories_are_checked(categories, error, match):
    with pytest.raises(error, match=match):
        empirical_distribution(["a"], categories)


def test_empirical_distribution_documented_edges():
    # One category is a valid domain; missing values are never in a domain.
    assert empirical_distribution(["a", "a"], ["a"]).tolist() == [1.0]
    assert empirical_distribution([2, 0, 2, 2], range(3)).tolist() == [0.25, 0.0, 0.75]
    with pytest.raises(ValueError, match="missing values"):
        empirical_distribution([None], ["a", "b"])


@pytest.mark.parametrize(
    "metric", [total_variation, l1_distance, l2_distance, linf_distance, kl_divergence]
)
@pytest.mark.parametrize(
    "p,error,match",
    [
        ("ab", TypeError, "^a distribution must be a 1-D array of numbers; got str$"),
        ([None, "x"], TypeError, "^a distribution must be a 1-D array of numbers; got list$"),
        ([], ValueError, "^distributions must have at least one entry; got empty arrays$"),
    ],
    ids=["string", "strings", "empty"],
)
def test_metric_types_and_empty(metric, p, error, match):
    with pytest.raises(error, match=match):
        metric(p, p)


@pytest.mark.parametrize(
    "E,match",
    [
        ([[0, -1], [-1, 0]], "non-negative"),
        ([[0, np.nan], [np.nan, 0]], "NaN"),
        ([[1, 1], [1, 1]], "zero diagonal"),
        ([[0, 1, 1], [1, 0, 1]], "square"),
        ("strong", "square matrix"),
    ],
)
def test_context_aware_model_inputs(E, match):
    with pytest.raises(ValueError, match=match):
        ContextAwareLDP(E)


def test_verify_inputs():
    ch = _channel(PRIVATIZERS[0])
    with pytest.raises(ValueError, match=r"E is 2 x 2 but the channel has \d+ inputs"):
        verify(ch, ContextAwareLDP(np.zeros((2, 2))))
    with pytest.raises(TypeError, match=EPS_MATCH):
        verify(ch, "strong")
    with pytest.raises(ValueError, match=EPS_MATCH):
        LDP(0)


# A channel matrix: finite, non-negative, each row summing to 1 within 1e-9 (absolute).
BAD_CHANNEL_MATRICES = [
    ("nan", [[np.nan, 1.0], [0.5, 0.5]], ValueError, "probabilities; got nan at row 0, column 0$"),
    ("inf", [[0.5, 0.5], [np.inf, 0.0]], ValueError, "probabilities; got inf at row 1, column 0$"),
    ("negative", [[-0.5, 1.5], [0.5, 0.5]], ValueError, "got -0.5 at row 0, column 0$"),
    ("row_above", [[0.5, 0.6], [0.5, 0.5]], ValueError, r"within 1e-09\); row 0 sums to 1.1$"),
    ("row_below", [[0.5, 0.5], [0.5, 0.5 - 2e-9]], ValueError, r"within 1e-09\); row 1 sums to"),
    ("zeros", np.zeros((2, 2)), ValueError, "row 0 sums to 0.0$"),
    ("vector", [0.5, 0.5], ValueError, r"must be 2-D of shape \(k, n_outputs\).*got shape \(2,\)$"),
    ("no_rows", np.zeros((0, 2)), ValueError, r"got shape \(0, 2\)$"),
    ("no_columns", np.zeros((2, 0)), ValueError, r"got shape \(2, 0\)$"),
    ("string", "ab", TypeError, "^channel must be a Channel or a matrix of probabilities.*str$"),
    ("strings", [["0.5", "0.5"]], TypeError, "^channel must be a Channel.*got list$"),
    ("ragged", [[0.5, 0.5], [1.0]], TypeError, "^channel must be a Channel.*got list$"),
    ("none", None, TypeError, "^channel must be a Channel.*got NoneType$"),
    ("privatizer", RandomizedResponse(), TypeError, "^channel must be a Channel.*Response$"),
]

#: Every entry point that reads a channel matrix.
CHANNEL_READERS = {
    "tight_epsilon_matrix": tight_epsilon_matrix,
    "verify_ldp": lambda Q: verify(Q, 1.0),
    "verify_context_aware": lambda Q: verify(Q, ContextAwareLDP([[0, 1], [1, 0]])),
    "verify_uldp": lambda Q: UtilityOptimizedLDP([0], [0], 1.0).verify(Q),
    "one_sided_decomposition": lambda Q: one_sided_decomposition(Q, HighLowLDP([0], 1.0)),
}


@pytest.mark.parametrize(
    "Q,error,match", [c[1:] for c in BAD_CHANNEL_MATRICES], ids=[c[0] for c in BAD_CHANNEL_MATRICES]
)
@pytest.mark.parametrize("reader", list(CHANNEL_READERS.values()), ids=list(CHANNEL_READERS))
def test_channel_matrices_are_checked(reader, Q, error, match):
    with pytest.raises(error, match=match):
        reader(Q)


def test_channel_matrix_documented_edges():
    # Within the tolerance a row is accepted and its entries are used as given: the budget is
    # the exact log ratio of the stored numbers.
    Q = np.array([[0.5, 0.5 + 5e-10], [0.5, 0.5]])
    E = tight_epsilon_matrix(Q)
    assert E[0, 1] == np.log(0.5 + 5e-10) - np.log(0.5) and E[1, 0] == 0.0
    # One input is a valid (trivially private) channel; integer matrices are read as floats.
    assert tight_epsilon_matrix([[1.0]]).tolist() == [[0.0]]
    assert tight_epsilon_matrix(np.eye(2, dtype=int)).tolist() == [[0.0, np.inf], [np.inf, 0.0]]
    assert verify(np.eye(2, dtype=int), ContextAwareLDP([[0, np.inf], [np.inf, 0]])).passed


#: Privacy models that take one budget: constructors of a budget e.
EPSILON_MODELS = {
    "LDP": lambda e: LDP(e),
    "BlockStructuredLDP": lambda e: BlockStructuredLDP([0, 0, 1], e),
    "HighLowLDP": lambda e: HighLowLDP([0], e),
    "UtilityOptimizedLDP": lambda e: UtilityOptimizedLDP([0], [0], e),
    "BinaryContextAwareLDP_01": lambda e: BinaryContextAwareLDP(e, 1.0),
    "BinaryContextAwareLDP_10": lambda e: BinaryContextAwareLDP(1.0, e),
    "verify": lambda e: verify(np.eye(2) * 0.5 + 0.25, e),
    "LongitudinalLDP_1": lambda e: LongitudinalLDP(e, 1e300),
    "LongitudinalLDP_infinity": lambda e: LongitudinalLDP(1e-9, e),
}


@pytest.mark.parametrize("bad,error", BAD_EPSILONS, ids=[repr(b) for b, _ in BAD_EPSILONS])
@pytest.mark.parametrize("make", list(EPSILON_MODELS.values()), ids=list(EPSILON_MODELS))
def test_privacy_model_bad_epsilon_is_named(make, bad, error):
    binary = make is EPSILON_MODELS["BinaryContextAwareLDP_01"] or (
        make is EPSILON_MODELS["BinaryContextAwareLDP_10"]
    )
    if binary and not isinstance(bad, (bool, str, list, type(None))) and bad in (0.0, np.inf):
        # Documented (Acharya et al. 2020, Sec. 4): 0 forces equal rows, inf promises nothing.
        model = make(bad)
        assert bad in model.epsilon_matrix(2).ravel().tolist()
        return
    with pytest.raises(error, match=EPS_MATCH):
        make(bad)


# -- PersonalizedULDP: (value, tag) rows -----------------------------------------------------------
def _pum(**params):
    base = dict(
        epsilon=1.0, sensitive=[0], tags=["home", "work"], categories=[0, 1, 2, 3], random_state=0
    )
    return PersonalizedULDP(**{**base, **params})


@pytest.mark.parametrize("bad,error", BAD_EPSILONS, ids=[repr(b) for b, _ in BAD_EPSILONS])
def test_personalized_bad_epsilon_is_named(bad, error):
    with pytest.raises(error, match=EPS_MATCH):
        _pum(epsilon=bad).fit([[0, None]])


@pytest.mark.parametrize(
    "params,error,match",
    [
        ({"tags": None}, TypeError, "tags is required"),
        ({"tags": "home"}, TypeError, "list of tag names"),
        ({"tags": []}, ValueError, "at least one tag"),
        ({"tags": ["home", "home"]}, ValueError, "duplicates"),
        ({"tags": ["home", None]}, ValueError, "missing value"),
        ({"sensitive": [9]}, ValueError, f"^sensitive {NOT_CATEGORIES}9$"),
        ({"categories": [0, 0, 1]}, ValueError, "duplicates"),
        ({"base": "rr"}, ValueError, "base must be one of"),
        ({"theta": 0.5}, ValueError, "theta applies to base='urap' only"),
        ({"base": "urap", "theta": 2.0}, ValueError, r"theta must be None or a number in \(0, 1\)"),
    ],
    ids=lambda v: repr(v) if isinstance(v, dict) else "",
)
def test_personalized_bad_parameters_are_named(params, error, match):
    with pytest.raises(error, match=match):
        _pum(**params).fit([[0, None]])


PUM_BAD_ROWS = [
    ("value_outside", [[9, None]], ValueError, "outside the domain: 9"),
    ("value_nan", np.array([[np.nan, None]], dtype=object), ValueError, "missing values"),
    ("value_none", [[None, "home"]], ValueError, "missing values"),
    ("unknown_tag", [[1, "school"]], ValueError, "unknown tags: 'school'"),
    ("one_column", [[1]], ValueError, "two columns|expecting 2 features"),
    ("three_columns", [[1, None, 1]], ValueError, "two columns|expecting 2 features"),
    ("empty", np.empty((0, 2), dtype=object), ValueError, "0 sample"),
    ("three_dims", np.zeros((1, 2, 1)), ValueError, "dim"),
]


@pytest.mark.parametrize(
    "X,error,match", [c[1:] for c in PUM_BAD_ROWS], ids=[c[0] for c in PUM_BAD_ROWS]
)
@pytest.mark.parametrize("stage", ["fit", "transform"])
def test_personalized_bad_rows_are_named(stage, X, error, match):
    p = _pum()
    if stage == "transform":
        p.fit([[0, None]])
    with pytest.raises(error, match=match):
        getattr(p, stage)(X)


def test_personalized_documented_tag_column():
    # Documented: None or NaN in the tag column is an untagged row; a tag on a value that is
    # sensitive for everyone keeps its symbol (it is protected anyway).
    p = _pum().fit([[0, None]])
    rows = np.array([[1, None], [1, np.nan], [0, "home"], [1, "home"]], dtype=object)
    z = p.channel_.preprocess([1, 1, 0, 1], p._encode_tags(rows[:, 1], p.tags_))
    assert z.tolist() == [1, 1, 0, 4]
    assert p.transform(rows).shape == (4, 1)
    with pytest.raises(ValueError, match="not fitted"):
        _pum().transform([[0, None]])


@pytest.mark.parametrize("case", REPORT_CASES)
@pytest.mark.parametrize("base", ["urr", "urap"])
@pytest.mark.parametrize("method", ["em", "threshold", "empirical"])
def test_personalized_estimator_bad_reports(method, base, case):
    p = _pum(base=base).fit([[0, None]])
    reports = p.transform([[v, t] for v in range(4) for t in (None, "home", "work")] * 5)
    est = PersonalizedEstimator(method=method)
    assert est.fit(reports).distribution_.shape == (4,)
    X, error, match = _corrupt(p, reports)[case]
    with pytest.raises(error, match=match):
        clone(est).set_params(channel=p).fit(X)
    with pytest.raises(ValueError, match="do not carry the channel"):
        clone(est).fit(np.asarray(reports))
    other = RandomizedResponse(epsilon=0.123, categories=["u", "v"], random_state=0).fit([["u"]])
    with pytest.raises(TypeError, match="reads reports of PersonalizedULDP"):
        clone(est).fit(other.transform([["u"], ["v"]]))


@pytest.mark.parametrize(
    "params,error,match",
    [
        ({"method": "ml"}, ValueError, "method"),
        ({"alpha": 1.5}, ValueError, "alpha"),
        ({"background": {"school": [1, 0, 0, 0]}}, ValueError, "school"),
        ({"background": {"home": [0.5, 0.6, 0, 0]}}, ValueError, "sum to 1"),
        ({"background": {"home": [1.0, 0, 0]}}, ValueError, "4 entries"),
    ],
    ids=["method", "alpha", "unknown_tag", "not_a_distribution", "wrong_length"],
)
def test_personalized_estimator_bad_parameters(params, error, match):
    p = _pum().fit([[0, None]])
    reports = p.transform([[0, None], [1, "home"], [2, None]] * 10)
    with pytest.raises(error, match=match):
        PersonalizedEstimator(**params).fit(reports)


# -- projections -----------------------------------------------------------------------------------
@pytest.mark.parametrize("project", [project_simplex, norm_sub, clip_normalize])
@pytest.mark.parametrize(
    "v,error,match",
    [
        ([0.2, np.nan, 0.9], ValueError, "finite entries; got nan at index 1"),
        ([0.2, np.inf, 0.9], ValueError, "finite entries; got inf at index 1"),
        ([-np.inf, 0.5], ValueError, "finite entries; got -inf at index 0"),
        ([np.nan, np.nan], ValueError, "at index 0 and 1 more"),
        ([], ValueError, "at least one entry"),
        ([[0.5, 0.5], [0.2, 0.8]], ValueError, r"one-dimensional; got shape \(2, 2\)"),
        ([[0.5, 0.5]], ValueError, r"one-dimensional; got shape \(1, 2\)"),
        (0.5, ValueError, r"one-dimensional; got shape \(\)"),
        (["a", "b"], TypeError, "array of numbers"),
        ([0.5, None], ValueError, "finite entries"),
    ],
    ids=["nan", "inf", "neg_inf", "all_nan", "empty", "2d", "row", "scalar", "strings", "none"],
)
def test_projection_inputs_are_checked(project, v, error, match):
    with pytest.raises(error, match=match):
        project(v)


@pytest.mark.parametrize("project", [project_simplex, norm_sub, clip_normalize])
def test_projection_documented_edges(project):
    # One entry: the only distribution. No positive entry: the uniform distribution for
    # Norm-Sub and clip-normalize; the Euclidean projection of a constant vector is uniform too.
    np.testing.assert_array_equal(project([-3.0]), [1.0])
    np.testing.assert_allclose(project([-1.0, -1.0, -1.0, -1.0]), [0.25] * 4, rtol=1e-15)
    np.testing.assert_allclose(project([0.1, 0.6, 0.3]), [0.1, 0.6, 0.3], rtol=1e-12)


# -- privacy models --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make,error,match",
    [
        (lambda: UtilityOptimizedLDP([0], [0], -1), ValueError, EPS_MATCH),
        (lambda: UtilityOptimizedLDP([0], [0], "1"), TypeError, EPS_MATCH),
        (lambda: UtilityOptimizedLDP([-1], [0], 1), ValueError, "sensitive indices must be non"),
        (lambda: UtilityOptimizedLDP([0.5], [0], 1), ValueError, "sensitive must hold integer"),
        (lambda: UtilityOptimizedLDP(["a"], [0], 1), ValueError, "sensitive must hold integer"),
        (lambda: UtilityOptimizedLDP(None, [0], 1), TypeError, "sensitive must be a list"),
        (lambda: UtilityOptimizedLDP([0, 0], [0], 1), ValueError, "distinct"),
        (lambda: UtilityOptimizedLDP([[0, 1]], [0], 1), ValueError, "1-D"),
        (lambda: UtilityOptimizedLDP([0], [-1], 1), ValueError, "protected_outputs indices"),
        (lambda: UtilityOptimizedLDP([0], [np.nan], 1), ValueError, "protected_outputs must hold"),
        (lambda: UtilityOptimizedLDP([0], "ab", 1), TypeError, "protected_outputs must be"),
        (lambda: UtilityOptimizedLDP([5], [0], 1).verify(np.eye(2)), ValueError, r"\[0, 2\)"),
        (lambda: UtilityOptimizedLDP([0], [5], 1).verify(np.eye(2)), ValueError, r"\[0, 2\)"),
        (lambda: ZeroBits([-1]), ValueError, "non-negative"),
        (lambda: BlockStructuredLDP([0, 0, 1], 0), ValueError, EPS_MATCH),
        (lambda: BlockStructuredLDP([], 1), ValueError, "at least one block"),
        (lambda: BlockStructuredLDP(None, 1), TypeError, "blocks must be"),
        (lambda: BlockStructuredLDP("ab", 1), TypeError, "blocks must be"),
        (lambda: BlockStructuredLDP([[0, 1], [1, 2]], 1), ValueError, "overlap"),
        (lambda: BlockStructuredLDP([[0, 1], [3]], 1), ValueError, "lie in"),
        (lambda: BlockStructuredLDP([0.5, 1], 1), ValueError, "integers"),
        (lambda: BlockStructuredLDP([[0], 1], 1), ValueError, "not a mix"),
        (lambda: BlockStructuredLDP([0, 1], 1).epsilon_matrix(3), ValueError, "covers 2"),
        (lambda: HighLowLDP([0], float("nan")), ValueError, EPS_MATCH),
        (lambda: HighLowLDP([-1], 1), ValueError, "non-negative"),
        (lambda: HighLowLDP([0, 0], 1), ValueError, "distinct"),
        (lambda: HighLowLDP(["a"], 1), ValueError, "integer"),
        (lambda: HighLowLDP(None, 1), TypeError, "sensitive must be a list"),
        (lambda: HighLowLDP([5], 1).epsilon_matrix(3), ValueError, "outside a domain of 3"),
        (lambda: BinaryContextAwareLDP(1, 1).epsilon_matrix(3), ValueError, "2 inputs; the"),
        (lambda: SequentialComposition([]), ValueError, "^parts must hold at least one privacy"),
        (lambda: SequentialComposition("x"), TypeError, "^parts must be a list of privacy models"),
        (lambda: SequentialComposition(None), TypeError, "^parts must be a list of privacy models"),
        (lambda: SequentialComposition(LDP(1)), TypeError, "^parts must be a list of privacy"),
        (lambda: SequentialComposition([LDP(1), 1.0]), TypeError, r"^parts .*part 1 is float"),
        (lambda: SequentialComposition([LDP(1)]).epsilon_matrix(2), ValueError, "verify each"),
        (
            lambda: SequentialComposition([LDP(1), ContextAwareLDP([[0, 1], [2, 0]])]).epsilon,
            AttributeError,
            r"^part 1 \(ContextAwareLDP\(E of shape \(2, 2\)\)\) has no single epsilon",
        ),
        (lambda: ZeroBits("ab"), TypeError, "^bits must be a list of integer indices"),
        (lambda: ZeroBits(None), TypeError, "^bits must be a list of integer indices"),
        (lambda: ZeroBits([np.nan]), ValueError, "^bits must hold integer indices"),
        (lambda: ZeroBits([[0, 1]]), ValueError, "^bits must be a 1-D list"),
        (lambda: ZeroBits([3]).mask(4), ValueError, "bit 3 does not exist in reports of width 2"),
        (lambda: ZeroBits([0]).mask(6), ValueError, "2\\*\\*width outputs; got 6"),
        (lambda: partition_labels("ab"), TypeError, "^blocks must be a block label per input"),
        (lambda: partition_labels([]), ValueError, "at least one block; got an empty partition"),
        (lambda: partition_labels([0.5, 1.0]), ValueError, "labels must be integers"),
        (lambda: partition_labels([[0], [np.nan]]), ValueError, "block 1 must hold integer"),
        (lambda: partition_labels([[0], []]), ValueError, "block 1 is empty"),
        (lambda: partition_labels([0, 1], 3), ValueError, "cover 2 inputs but the domain has 3"),
        (lambda: sensitive_indices("ab"), TypeError, "^sensitive must be a list"),
        (lambda: sensitive_indices([np.nan]), ValueError, "^sensitive must hold integer"),
        (lambda: sensitive_indices([3], 3), ValueError, r"^sensitive indices must lie in \[0, 3\)"),
        (lambda: sensitive_indices([True, False], 3), ValueError, "mask must have one entry per"),
    ],
)
def test_context_aware_and_utility_optimized_model_inputs(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_privacy_model_documented_edges():
    # Repeated bit positions merge; compositions add their budgets; the binary model's limits.
    assert ZeroBits([1, 1, 0]).bits == (0, 1)
    assert SequentialComposition([LDP(1.0), HighLowLDP([0], 0.5)]).epsilon == 1.5
    assert BinaryContextAwareLDP(0, np.inf).epsilon_matrix(2).tolist() == [[0, 0], [np.inf, 0]]


# -- channel constructors --------------------------------------------------------------------------
def _one_report(e):
    """A memoized channel's epsilon_1 for epsilon_infinity e; bad inputs pass through."""
    real = isinstance(e, (int, float)) and not isinstance(e, bool)
    return min(e, 2.0) / 2 if real and e > 0 else e


def _rebuilt_with_budget(channel):
    """A maker e -> the channel rebuilt (from its constructor call) with every budget set to e."""
    cls, args = channel.__reduce__()[:2]
    bound = inspect.signature(cls).bind(*args).arguments

    def make(e):
        return cls(**{n: (e if n.startswith("epsilon") else v) for n, v in bound.items()})

    return make


#: The channel of every registered mechanism, as its trust case builds it, with a budget e:
#: derived from the registry, so a new mechanism's channel is in the matrix with no line here.
_REGISTERED_MAKERS = {
    type(channel).__name__: _rebuilt_with_budget(channel)
    for channel in (fitted(p).channel_ for p in MECHANISMS)
    if getattr(channels, type(channel).__name__, None) is type(channel)
}

#: Public channels that no registry case builds, each from a budget e (the rest valid).
_OTHER_MAKERS = {
    "HashedRRChannel": lambda e: channels.HashedRRChannel(e, 4, 2),
    "HashedRAPPORChannel": lambda e: channels.HashedRAPPORChannel(e, 8, 2, 2),
    "PersonalizedRRChannel": lambda e: channels.PersonalizedRRChannel(e, 4, [0], 2),
    "PersonalizedRAPPORChannel": lambda e: channels.PersonalizedRAPPORChannel(e, 4, [0], 2),
    # memoized: epsilon_infinity = e, and one report at min(e, 2) / 2 (below it)
    "LongitudinalRRChannel": lambda e: channels.LongitudinalRRChannel(e, _one_report(e), 3),
    "LongitudinalOUEChannel": lambda e: channels.LongitudinalOUEChannel(e, _one_report(e), 3),
    # numbers, not categories: the registry's square-wave case is not a trust case
    "SquareWaveChannel": lambda e: channels.SquareWaveChannel(e, 8),
    # the general form (the registry's case builds the classic one), and the histograms
    "GeneralHadamardResponseChannel": lambda e: channels.GeneralHadamardResponseChannel(e, 6, 4, 2),
    "HistogramEncodingChannel": lambda e: channels.HistogramEncodingChannel(e, 4),
    "HaarWaveletChannel": lambda e: channels.HaarWaveletChannel(e, 8),
    # sketches: open alphabets (no categories) and the closed Hadamard form
    "OpenCountMeanSketchChannel": lambda e: channels.OpenCountMeanSketchChannel(e, 4, 2),
    "OpenHadamardCountMeanSketchChannel": lambda e: channels.OpenHadamardCountMeanSketchChannel(
        e, 4, 2
    ),
    "HadamardCountMeanSketchChannel": lambda e: channels.HadamardCountMeanSketchChannel(
        e, 4, np.array([[0, 1, 2, 3, 0], [1, 2, 3, 0, 1]])
    ),
    # grouped prefixes of heavy-hitter discovery
    "PrefixHashingChannel": lambda e: channels.PrefixHashingChannel(e, 4, (2, 4), (1, 1), 3),
    # numbers in [-1, 1]: the mean mechanisms
    "DuchiMeanChannel": lambda e: channels.DuchiMeanChannel(e),
    "PiecewiseMeanChannel": lambda e: channels.PiecewiseMeanChannel(e, 16),
    "HybridMeanChannel": lambda e: channels.HybridMeanChannel(e, 16),
}

CHANNEL_MAKERS = {**_REGISTERED_MAKERS, **_OTHER_MAKERS}

#: Channels of numbers in [-1, 1] (reports are numbers, not symbols): their exact rows
#: P(report | t) are ``to_dense(t)`` over ``output_values()``, for any values t.
MEAN_CHANNELS = (
    channels.DuchiMeanChannel,
    channels.PiecewiseMeanChannel,
    channels.HybridMeanChannel,
)


def _exact_matrix(ch):
    """The exact channel matrix that ``verify`` checks, for the channels without ``to_dense()``."""
    if isinstance(ch, MEAN_CHANNELS):
        return ch.to_dense(np.linspace(-1.0, 1.0, 9))
    # Haar: the level is drawn independently of x; its sign is kept with probability p
    return np.array([[ch.p, 1.0 - ch.p], [1.0 - ch.p, ch.p]])


def test_every_channel_with_a_budget_is_in_the_matrix():
    with_budget = {
        name
        for name in channels.__all__
        if isinstance(getattr(channels, name), type)
        and any(
            p.startswith("epsilon") for p in inspect.signature(getattr(channels, name)).parameters
        )
    }
    assert with_budget == set(CHANNEL_MAKERS)
    for make in CHANNEL_MAKERS.values():  # the valid arguments really are valid
        ch = make(1.0)
        outputs = ch.output_values().size if isinstance(ch, MEAN_CHANNELS) else ch.n_outputs
        assert outputs >= 2


@pytest.mark.parametrize("bad,error", BAD_EPSILONS, ids=[repr(b) for b, _ in BAD_EPSILONS])
@pytest.mark.parametrize("make", list(CHANNEL_MAKERS.values()), ids=list(CHANNEL_MAKERS))
def test_channel_bad_epsilon_is_named(make, bad, error):
    binary = make is CHANNEL_MAKERS["BinaryRandomizedResponseChannel"]
    if binary and not isinstance(bad, (bool, str, list, type(None))) and bad in (0.0, np.inf):
        # Documented: 0 forces equal rows, inf promises nothing; the channel keeps its promise.
        ch = make(bad)
        assert verify(ch, ch.guarantee()).passed
        assert np.array_equal(ch.to_dense(), [[0.5, 0.5]] * 2 if bad == 0 else np.eye(2))
        return
    with pytest.raises(error, match=EPS_MATCH):
        make(bad)


# -- budgets at the ends of float64 (issue 21, items 2 and 4) --------------------------------------
TINY_EPSILONS = [5e-324, 1e-300, 1e-17]
TINY_MATCH = (
    r"^(epsilon\w*)=(\S+) is too small to be represented for .+: its sampling probabilities "
    r"\(multiples of 2\*\*-53\) round to a channel whose reports do not depend on the input; "
    r"the smallest usable \1 is (\S+)$"
)


def _with_budget(privatizer, epsilon):
    return clone(privatizer).set_params(**{n: epsilon for n in _eps_params(privatizer)})


@pytest.mark.parametrize("tiny", TINY_EPSILONS)
@pytest.mark.parametrize("privatizer", PRIVATIZERS, ids=instance_id)
def test_tiny_epsilon_is_refused_naming_the_smallest_usable_value(privatizer, tiny):
    X = _column(domain(privatizer))
    with pytest.raises(ValueError, match=TINY_MATCH) as info:
        _with_budget(privatizer, tiny).fit(X)
    name, given, smallest = re.match(TINY_MATCH, str(info.value)).groups()
    assert float(given) == tiny and name in _eps_params(privatizer)
    smallest = float(smallest)
    assert tiny < smallest < 1e-9
    # The value named is usable (a channel whose inputs differ), the float below it is not.
    fitted_ = _with_budget(privatizer, smallest).fit(X)
    Q = fitted_.channel_.to_dense()
    assert not np.all(Q[0] == Q)
    assert verify(fitted_.channel_, fitted_.privacy_).passed
    with pytest.raises(ValueError, match=TINY_MATCH):
        _with_budget(privatizer, math.nextafter(smallest, 0.0)).fit(X)


@pytest.mark.parametrize("base", ["urr", "urap"])
def test_personalized_tiny_epsilon_is_refused(base):
    # PUM reads (value, tag) rows, so it is not in the registry.
    with pytest.raises(ValueError, match=TINY_MATCH) as info:
        _pum(epsilon=1e-17, base=base).fit([[0, None]])
    smallest = float(re.match(TINY_MATCH, str(info.value)).group(3))
    p = _pum(epsilon=smallest, base=base).fit([[0, None]])
    assert verify(p.channel_, p.privacy_).passed


@pytest.mark.parametrize("make", list(CHANNEL_MAKERS.values()), ids=list(CHANNEL_MAKERS))
def test_channel_tiny_epsilon_is_refused(make):
    # Before: a constant channel (nan estimates), or ZeroDivisionError in the compressive ones.
    with pytest.raises(ValueError, match=TINY_MATCH):
        make(1e-17)


@pytest.mark.parametrize("epsilon", [709.8, 746.0, 800.0, 1e5, 1e300])
@pytest.mark.parametrize("make", list(CHANNEL_MAKERS.values()), ids=list(CHANNEL_MAKERS))
def test_channel_huge_finite_epsilon_verifies(make, epsilon):
    # verify reads a finite budget as finite: a zero where the model promises a ratio fails.
    if make is CHANNEL_MAKERS["SquareWaveChannel"] and epsilon > 746:
        # Documented: the paper's half-width (about epsilon / (2 e^epsilon)) is 0 in float64
        # from epsilon about 745.1 on; that is refused, naming it, and a given one is used.
        with pytest.raises(ValueError, match=r"gives a half-width of 0 in float64; .*half_width"):
            make(epsilon)
        ch = channels.SquareWaveChannel(epsilon, 8, half_width=0.1)
        assert verify(ch, ch.guarantee()).passed
        return
    ch = make(epsilon)
    if isinstance(ch, channels.OpenAlphabetChannel):  # open alphabet: no dense matrix
        return
    if isinstance(ch, (*MEAN_CHANNELS, channels.HaarWaveletChannel)):
        assert verify(_exact_matrix(ch), epsilon).passed
        return
    assert verify(ch, ch.guarantee()).passed


@pytest.mark.parametrize("epsilon", [700.0, 709.8, 1e5, 1e300])
def test_verify_identity_at_a_finite_budget_fails(epsilon):
    result = verify(np.eye(3), epsilon)
    assert not result.passed and len(result.violations) == 6


# -- grid_blocks -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape,n_blocks,error,match",
    [
        ((0, 3), (1, 1), ValueError, r"^shape\[0\] must be an integer >= 1; got 0$"),
        ((2, -3), (1, 1), ValueError, r"^shape\[1\] must be an integer >= 1; got -3$"),
        ((2.5, 3), (1, 1), TypeError, r"^shape\[0\] must be an integer >= 1; got 2.5$"),
        ((True, 3), (1, 1), TypeError, r"^shape\[0\] must be an integer"),
        ((np.nan, 3), (1, 1), TypeError, r"^shape\[0\] must be an integer"),
        ((2, 3, 4), (1, 1), ValueError, r"^shape must be a pair \(n_rows, n_cols\); got \(2, 3, 4"),
        (6, (1, 1), ValueError, r"^shape must be a pair"),
        ("ab", (1, 1), ValueError, r"^shape must be a pair"),
        (None, (1, 1), ValueError, r"^shape must be a pair"),
        ((2, 3), None, ValueError, r"^n_blocks must be a pair \(m1, m2\); got None$"),
        ((2, 3), (1,), ValueError, r"^n_blocks must be a pair"),
        ((2, 3), (1, 0), ValueError, r"^n_blocks\[1\] must be an integer >= 1; got 0$"),
        ((2, 3), (1, "2"), TypeError, r"^n_blocks\[1\] must be an integer"),
        ((2, 3), (3, 1), ValueError, "^cannot cut a 2 x 3 grid into 3 x 1 non-empty blocks$"),
        ((2, 3), (1, 4), ValueError, "^cannot cut a 2 x 3 grid into 1 x 4 non-empty blocks$"),
    ],
    ids=lambda v: repr(v) if not isinstance(v, type) else "",
)
def test_grid_blocks_inputs(shape, n_blocks, error, match):
    with pytest.raises(error, match=match):
        grid_blocks(shape, n_blocks)


def test_grid_blocks_documented_edges():
    # One block; one block per cell; and labels that do not fit the domain name blocks.
    assert grid_blocks((2, 3), (1, 1)).tolist() == [0] * 6
    assert grid_blocks((2, 3), (2, 3)).tolist() == list(range(6))
    assert grid_blocks((1, 1), (1, 1)).tolist() == [0]
    bhr = BlockHadamardResponse(1.0, blocks=grid_blocks((2, 3), (1, 3)), categories=range(6))
    assert bhr.fit([[0]]).privacy_.block_sizes.tolist() == [2, 2, 2]
    with pytest.raises(ValueError, match="column 0 has 8 categories and blocks has 6 entries"):
        bhr.set_params(categories=range(8)).fit([[0]])


# -- theory ----------------------------------------------------------------------------------------
RISKS = {
    "krr_excess_risk": lambda k=3, e=1.0: krr_excess_risk(k, e),
    "rappor_excess_risk": lambda k=3, e=1.0: rappor_excess_risk(k, e),
    "krr_l2_risk": lambda k=3, e=1.0, n=10, p=None: krr_l2_risk(k, e, n, p),
    "rappor_l2_risk": lambda k=3, e=1.0, n=10, p=None: rappor_l2_risk(k, e, n, p),
    "krr_l1_risk": lambda k=3, e=1.0, n=10, p=None: krr_l1_risk(k, e, n, p),
    "rappor_l1_risk": lambda k=3, e=1.0, n=10, p=None: rappor_l1_risk(k, e, n, p),
}


@pytest.mark.parametrize("bad,error", BAD_EPSILONS, ids=[repr(b) for b, _ in BAD_EPSILONS])
@pytest.mark.parametrize("risk", list(RISKS.values()), ids=list(RISKS))
def test_theory_bad_epsilon_is_named(risk, bad, error):
    with pytest.raises(error, match=EPS_MATCH):
        risk(e=bad)


@pytest.mark.parametrize(
    "k,error",
    [(1, ValueError), (0, ValueError), (2.5, TypeError), ("3", TypeError), (None, TypeError)],
)
@pytest.mark.parametrize(
    "call",
    [*RISKS.values(), lambda k: krr_rappor_break_even(k)],
    ids=[*RISKS, "krr_rappor_break_even"],
)
def test_theory_bad_k_is_named(call, k, error):
    with pytest.raises(error, match="^k must be an integer >= 2"):
        call(k=k)


@pytest.mark.parametrize("risk", [krr_l2_risk, rappor_l2_risk, krr_l1_risk, rappor_l1_risk])
@pytest.mark.parametrize(
    "n,p,error,match",
    [
        (0, None, ValueError, "^n must be an integer >= 1; got 0$"),
        (np.nan, None, TypeError, "^n must be an integer >= 1"),
        ("10", None, TypeError, "^n must be an integer >= 1"),
        (10, [np.nan, 0.5, 0.5], ValueError, "^p must have finite non-negative entries$"),
        (10, [-0.5, 1.0, 0.5], ValueError, "^p must have finite non-negative entries$"),
        (10, [1.0, 1.0, 1.0], ValueError, "^p must sum to 1; got 3.0$"),
        (10, [0.5, 0.5], ValueError, "^p must have 3 entries; got 2$"),
        (10, [], ValueError, "^p must have at least one entry"),
        (10, "abc", TypeError, "^p must be a 1-D array of numbers; got str$"),
        (10, [[0.5, 0.5, 0.0]], ValueError, "^p must be one-dimensional"),
    ],
    ids=["n0", "n_nan", "n_str", "p_nan", "p_neg", "p_sum", "p_short", "p_empty", "p_str", "p_2d"],
)
def test_theory_bad_n_and_p_are_named(risk, n, p, error, match):
    with pytest.raises(error, match=match):
        risk(3, 1.0, n, p)


@pytest.mark.parametrize("risk", [krr_l1_risk, rappor_l1_risk])
@pytest.mark.parametrize("method", ["x", None, "EXACT"])
def test_theory_l1_bad_method_is_named(risk, method):
    with pytest.raises(ValueError, match=r"^method must be one of \['exact', 'large_n'\]"):
        risk(3, 1.0, 10, method=method)


@pytest.mark.parametrize(
    "variance,error,match",
    [
        ("abc", TypeError, "^variance must be a 1-D array of numbers; got str$"),
        ([[0.1, 0.2]], ValueError, r"^variance must be one-dimensional; got shape \(1, 2\)$"),
        ([0.1, -0.2], ValueError, "^variance must have finite non-negative entries; got "),
        ([0.1, np.nan], ValueError, "^variance must have finite non-negative entries; got "),
    ],
    ids=["str", "2d", "negative", "nan"],
)
def test_normal_l1_risk_bad_variance_is_named(variance, error, match):
    with pytest.raises(error, match=match):
        normal_l1_risk(variance)


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"n_categories": 1}, ValueError, "^n_categories must be an integer >= 2; got 1$"),
        ({"n_reports": "10"}, TypeError, "^n_reports must be an integer >= 1"),
        ({"epsilon": 0}, ValueError, EPS_MATCH),
        ({"sensitive": [0, 0]}, ValueError, "^sensitive indices must be distinct"),
        ({"blocks": "ab"}, TypeError, "^blocks must be a block label per input"),
        ({"sparsity": 2.0}, TypeError, "^sparsity must be an integer >= 1"),
        ({"max_bits": -1}, ValueError, "^max_bits must be a positive finite number"),
        ({"p": [1.0]}, ValueError, "^p must have 4 entries; got 1$"),
    ],
    ids=["k", "n", "epsilon", "sensitive", "blocks", "sparsity", "max_bits", "p"],
)
def test_recommend_mechanism_bad_input_is_named(kwargs, error, match):
    args = {"n_categories": 4, "n_reports": 100, "epsilon": 1.0, **kwargs}
    k, n, eps = args.pop("n_categories"), args.pop("n_reports"), args.pop("epsilon")
    with pytest.raises(error, match=match):
        recommend_mechanism(k, n, eps, **args)


def test_one_sided_decomposition_inputs():
    Q = channels.RandomizedResponseChannel(1.0, 3)
    with pytest.raises(TypeError, match="^model must be a HighLowLDP"):
        one_sided_decomposition(Q, LDP(1.0))
    with pytest.raises(ValueError, match="not one-sided LDP"):
        one_sided_decomposition(Q, HighLowLDP([0], 0.5))
    with pytest.raises(ValueError, match="outside a domain of 3"):
        one_sided_decomposition(Q, HighLowLDP([5], 1.0))


# -- datasets --------------------------------------------------------------------------------------
MAKERS = {
    "make_uniform": make_uniform,
    "make_geometric": make_geometric,
    "make_zipf": make_zipf,
    "make_two_step": make_two_step,
    "make_sparse": lambda k, n=None, **kw: make_sparse(k, n, sparsity=1, **kw),
    "make_dirichlet": make_dirichlet,
}


@pytest.mark.parametrize(
    "k,error",
    [(1, ValueError), (2.5, TypeError), (np.nan, TypeError), ("4", TypeError), (None, TypeError)],
)
@pytest.mark.parametrize("make", list(MAKERS.values()), ids=list(MAKERS))
def test_make_bad_n_categories_is_named(make, k, error):
    with pytest.raises(error, match="^n_categories must be an integer >= 2"):
        make(k)


@pytest.mark.parametrize("n,error", [(-1, ValueError), (2.5, TypeError), ("3", TypeError)])
@pytest.mark.parametrize("make", list(MAKERS.values()), ids=list(MAKERS))
def test_make_bad_n_samples_is_named(make, n, error):
    with pytest.raises(error, match="^n_samples must be an integer >= 0"):
        make(4, n, random_state=0)
    # Documented: zero samples is an empty draw from the distribution.
    X, dist = make(4, 0, random_state=0)
    assert X.shape == (0,) and dist.n_categories == 4


@pytest.mark.parametrize(
    "probabilities,categories,error,match",
    [
        ([np.nan, 1.0], None, ValueError, "^probabilities must have finite non-negative entries$"),
        ([-0.5, 1.5], None, ValueError, "^probabilities must have finite non-negative entries$"),
        ([0.5, 0.6], None, ValueError, "^probabilities must sum to 1; got 1.1$"),
        ([], None, ValueError, "^probabilities must have at least one entry"),
        ("ab", None, TypeError, "^probabilities must be a 1-D array of numbers; got str$"),
        ([[0.5, 0.5]], None, ValueError, "^probabilities must be one-dimensional"),
        ([0.5, 0.5], ["a", "a"], ValueError, "^categories contain duplicates: 'a'$"),
        ([0.5, 0.5], ["a", None], ValueError, "^categories contain a missing value"),
        ([0.5, 0.5], ["a"], ValueError, r"^categories must have one entry per probability \(2\)"),
        ([0.5, 0.5], "ab", TypeError, "^categories must be a list of values; got str$"),
    ],
    ids=["nan", "negative", "sum", "empty", "string", "2d"]
    + ["dup_cats", "none_cat", "short_cats", "str_cats"],
)
def test_distribution_inputs(probabilities, categories, error, match):
    with pytest.raises(error, match=match):
        Distribution(probabilities, categories)


@pytest.mark.parametrize(
    "load", [load_gowalla, load_foursquare_manhattan, load_adult, load_adult_joint]
)
@pytest.mark.parametrize("bad", ["no", 0, None])
def test_loaders_bad_as_frame(load, bad):
    with pytest.raises(TypeError, match=f"^as_frame must be True or False; got {bad!r}$"):
        load(as_frame=bad)


def test_load_descr_unknown():
    with pytest.raises(ValueError, match="no description named"):
        load_descr("nonesuch")


# -- experiments -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"data": "abc"}, ValueError, "^data must be a Distribution.*got str$"),
        ({"data": []}, ValueError, r"^data must be a Distribution.*got shape \(0,\)$"),
        ({"data": [np.nan, 1.0]}, ValueError, "^probabilities must have finite non-negative"),
        ({"data": pd.Series([1.0, -1.0])}, ValueError, "Series of counts or probabilities must be"),
        ({"n_samples": np.nan}, TypeError, "^n_samples must be a positive integer or a list"),
        ({"n_samples": "10"}, TypeError, "^n_samples must be a positive integer or a list"),
        ({"n_samples": []}, ValueError, "^n_samples must hold at least one number"),
        ({"n_samples": [10, 2.5]}, ValueError, "^n_samples must be positive integers; got 2.5$"),
        ({"param_grid": {"epsilon": [np.nan]}}, ValueError, EPS_MATCH),
        ({"privatizers": []}, ValueError, "^give at least one privatizer$"),
        ({"estimators": []}, ValueError, "^give at least one estimator$"),
        ({"n_repeats": np.nan}, ValueError, "^n_repeats must be a positive integer"),
        ({"progress": "no"}, TypeError, "^progress must be True or False; got 'no'$"),
    ],
    ids=lambda v: "-".join(f"{k}={v[k]!r}" for k in v) if isinstance(v, dict) else "",
)
def test_run_experiment_inputs(kwargs, error, match):
    args = dict(
        privatizers=RandomizedResponse(),
        estimators="empirical",
        data=make_zipf(4),
        n_samples=10,
        n_repeats=1,
        progress=False,
    )
    with pytest.raises(error, match=match):
        run_experiment(**{**args, **kwargs})


def test_summarize_inputs():
    res = pd.DataFrame({"privatizer": ["rr", "rr"], "n_samples": [10, 10], "tv": [0.1, 0.3]})
    for results, kwargs, error, match in [
        ([1, 2], {}, TypeError, "^results must be the DataFrame of run_experiment; got list$"),
        (res, {"metric": "l9"}, ValueError, "^results have no column 'l9'"),
        (res, {"confidence": "x"}, TypeError, "^confidence must be a number in"),
        (res, {"confidence": np.nan}, ValueError, r"^confidence must lie in \(0, 1\); got nan$"),
        (res, {"confidence": 1.0}, ValueError, r"^confidence must lie in \(0, 1\); got 1.0$"),
    ]:
        with pytest.raises(error, match=match):
            summarize(results, **kwargs)
    # Documented: two rows of one setting give their mean with a t interval.
    assert summarize(res)["mean"].tolist() == pytest.approx([0.2])


# -- audit -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"inputs": "ab"}, TypeError, "^inputs must be a list of categories; got 'ab'$"),
        ({"inputs": [None, 0]}, ValueError, f"^inputs {NOT_CATEGORIES}None$"),
        ({"inputs": [np.nan, 0]}, ValueError, f"^inputs {NOT_CATEGORIES}nan$"),
        ({"inputs": ["a", 0]}, ValueError, f"^inputs {NOT_CATEGORIES}'a'$"),
        ({"inputs": []}, ValueError, "at least two distinct categories"),
        ({"n_samples": np.nan}, ValueError, "^n_samples must be an integer >= 100"),
        ({"n_samples": "x"}, ValueError, "^n_samples must be an integer >= 100"),
        ({"alpha": np.nan}, ValueError, r"^alpha must be a number in \(0, 1\)"),
        ({"alpha": True}, ValueError, r"^alpha must be a number in \(0, 1\)"),
        ({"max_inputs": 1}, ValueError, "^max_inputs must be an integer >= 2"),
        ({"random_state": "x"}, TypeError, "^random_state must be"),
        ({"model": np.nan}, ValueError, EPS_MATCH),
        ({"model": True}, TypeError, "^model must be a privacy model or an epsilon; got bool$"),
    ],
    ids=lambda v: "-".join(f"{k}={v[k]!r}" for k in v) if isinstance(v, dict) else "",
)
def test_audit_inputs(kwargs, error, match):
    rr = RandomizedResponse(epsilon=1.0, categories=[0, 1, 2], random_state=0).fit([[0]])
    with pytest.raises(error, match=match):
        audit(rr, **{"n_samples": 1000, **kwargs})


# -- every other hyperparameter --------------------------------------------------------------------
#: Hyperparameters with their own cases above (budgets, domains, seeds, channels).
OWN_CASES = {"epsilon", "epsilon_01", "epsilon_10", "categories", "random_state", "channel"}
OWN_CASES |= {c[0] for c in DOMAIN_PARAM_CASES}
BAD_VALUES = [np.nan, -1, "x"]


def _other_params(instances):
    """(instance, name) for each hyperparameter without its own cases, once per class."""
    pairs = {
        (type(inst), name): (inst, name)
        for inst in instances
        for name in sorted(inst.get_params(deep=False))
        if name not in OWN_CASES
    }
    params = list(pairs.values())
    return {"argvalues": params, "ids": [f"{instance_id(i)}.{n}" for i, n in params]}


@pytest.mark.parametrize("bad", BAD_VALUES, ids=repr)
@pytest.mark.parametrize("privatizer,name", **_other_params(MECHANISMS))
def test_privatizer_hyperparameter_is_named(privatizer, name, bad):
    p = clone(privatizer).set_params(**{name: bad})
    for other in ("blocks", "n_blocks", "block_size"):  # one partition parameter at a time
        if name in ("n_blocks", "block_size") and other != name and other in p.get_params():
            p.set_params(**{other: None})
    with pytest.raises(ERRORS, match=rf"\b{name}\b"):
        p.fit(_column(domain(privatizer)))


@pytest.mark.parametrize("bad", BAD_VALUES, ids=repr)
@pytest.mark.parametrize("estimator,name", **_other_params(MATRIX_ESTIMATORS))
def test_estimator_hyperparameter_is_named(estimator, name, bad):
    p = fitted(PRIVATIZERS[0])
    reports = p.transform(_column(domain(PRIVATIZERS[0]) * 10))
    with pytest.raises(ERRORS, match=rf"\b{name}\b"):
        clone(estimator).set_params(**{name: bad}).fit(reports)


# -- composition and the privacy accountant (tests/privacy/test_accounting.py has the rest) --------


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: PrivacyAccountant(budget=-1), ValueError, "^budget must be a positive finite"),
        (lambda: PrivacyAccountant(budget="1"), TypeError, "^budget must be a positive finite"),
        (
            lambda: charged_epsilon(2.0),
            TypeError,
            "^model must be a skldp privacy model; got float$",
        ),
        (lambda: compose([], []), ValueError, "^parts must hold at least one privacy model"),
        (lambda: compose([LDP(1)], [2, 3]), ValueError, "^sizes must give one domain size per"),
        (
            lambda: composed_epsilon_matrix([LDP(1)], [None]),
            ValueError,
            "^every part needs its domain size",
        ),
        (lambda: guarantee_of(None), TypeError, "^expected a fitted privatizer, or a Pipeline"),
        (lambda: shuffle_guarantee(0.0, 100, 1e-6), InvalidParameterError, "^The local budget"),
        (lambda: shuffle_guarantee(1.0, 1, 1e-6), InvalidParameterError, "^n must be an integer"),
        (lambda: shuffle_guarantee(1.0, 100, 1.5), InvalidParameterError, "^delta must be"),
        (lambda: shuffle_guarantee("1", 100, 1e-6), InvalidParameterError, "^shuffle_guarantee"),
        (lambda: shuffle_delta(1.0, 100, -1.0), InvalidParameterError, "^epsilon must be"),
        (lambda: shuffle_delta(1.0, 100, 0.5, method="x"), InvalidParameterError, "^method must"),
        (lambda: estimate_channel(3), TypeError, "^expected a fitted privatizer"),
        (
            lambda: estimate_channel(lambda v, rng: v, n_samples=10),
            ValueError,
            "^a callable randomizer needs its domain",
        ),
        (lambda: ShuffleDP(0.1, 1.0), ValueError, r"^delta must be in \[0, 1\)"),
        (lambda: ShuffleDP(-0.1, 0.0), ValueError, "^epsilon must be a positive finite"),
        (lambda: charged_delta("x"), TypeError, "^model must be a skldp privacy model; got str$"),
        (
            lambda: PrivacyAccountant(1.0).charge_shuffled(LDP(1.0)),
            TypeError,
            "^charge_shuffled takes the guarantee of a shuffled collection",
        ),
    ],
)
def test_accounting_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- multidimensional collection (tests/privatizers/test_multidimensional.py has the rest) --------
_TWO = [["a", "b"], [0, 1]]


def _sampled_reports():
    sampler = AttributeSampling(categories=_TWO, random_state=0)
    return sampler, sampler.fit_transform([["a", 0], ["b", 1]] * 5)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: AttributeSampling(privatizer="krr", categories=_TWO).fit([["a", 0]]),
            TypeError,
            "^privatizer must be a skldp privatizer or None; got 'krr'",
        ),
        (
            lambda: AttributeSampling(epsilon=0, categories=_TWO).fit([["a", 0]]),
            ValueError,
            "^epsilon must be a positive finite number; got 0",
        ),
        (
            lambda: AttributeSampling(
                privatizer=skldp.UtilityOptimizedRR(sensitive=[["a"], [0]]), categories=_TWO
            ).fit([["a", 0]]),
            ValueError,
            "is stated for channels whose guarantee is plain LDP; attribute 0",
        ),
        (
            lambda: _sampled_reports()[0].transform([["a"]]),
            ValueError,
            "X has 1 features, but AttributeSampling is expecting 2 features",
        ),
        (
            lambda: _sampled_reports()[0].transform([["z", 0]]),
            ValueError,
            "'z'",
        ),
        (
            lambda: MultidimensionalEstimator(estimator="em").fit(_sampled_reports()[1]),
            TypeError,
            "^estimator must be a skldp distribution estimator or None; got 'em'",
        ),
        (
            lambda: MultidimensionalEstimator().fit(np.asarray(_sampled_reports()[1])),
            ValueError,
            "do not carry the channel that made them",
        ),
        (
            lambda: MultidimensionalEstimator(channel=_sampled_reports()[0]).fit(
                np.zeros((3, 3), dtype=int)
            ),
            ValueError,
            r"must have 2 columns for these channels; got shape \(3, 3\)",
        ),
    ],
)
def test_multidimensional_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- memoized (longitudinal) privatizers (tests/privatizers/test_longitudinal.py has the rest) ----
_KEY = b"k" * 16


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: LongitudinalRR(epsilon_infinity=float("nan"), categories=_TWO[0]).fit(
                [["a", _KEY]]
            ),
            ValueError,
            "^epsilon_infinity must be a positive finite number; got nan",
        ),
        (
            lambda: LongitudinalOUE(epsilon_1=-1.0, categories=_TWO[0]).fit([["a", _KEY]]),
            ValueError,
            "^epsilon_1 must be a positive finite number; got -1.0",
        ),
        (
            lambda: LongitudinalRAPPOR(q=1.5, categories=_TWO[0]).fit([["a", _KEY]]),
            ValueError,
            "q must be",
        ),
        (
            lambda: LongitudinalRR(categories=_TWO[0]).fit([["a"]]),
            ValueError,
            "takes two columns: the value, and the person's secret",
        ),
        (
            lambda: LongitudinalRR(categories=_TWO[0]).fit([["z", _KEY]]),
            ValueError,
            "'z'",
        ),
        (
            lambda: LongitudinalRR(categories=_TWO[0]).fit([["a", b"short"]]),
            ValueError,
            "exactly 16 bytes",
        ),
        (lambda: make_person_keys(-1), ValueError, "non-negative integer"),
        (lambda: make_person_keys(1.5), (TypeError, ValueError), "integer"),
    ],
)
def test_longitudinal_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- numbers in a public range: Square Wave (tests/privatizers/test_square_wave.py has the rest) ---
_NUMBERS = [[0.25], [0.75]]


@pytest.mark.parametrize(
    "params, X, error, match",
    [
        ({"bounds": None}, _NUMBERS, ValueError, r"^SquareWave needs bounds=\(lo, hi\)"),
        ({"bounds": (1, 0)}, _NUMBERS, ValueError, "^bounds must be finite with lo < hi"),
        ({"bounds": (0, np.inf)}, _NUMBERS, ValueError, "^bounds must be finite with lo < hi"),
        ({"bounds": ("a", "b")}, _NUMBERS, ValueError, r"^bounds must be two numbers \(lo, hi\)"),
        ({"bounds": (0, 1, 2)}, _NUMBERS, ValueError, r"^bounds must be two numbers \(lo, hi\)"),
        ({"bounds": 1.0}, _NUMBERS, InvalidParameterError, "^bounds must be"),
        ({"bins": 1}, _NUMBERS, InvalidParameterError, "^bins must be an integer"),
        ({"output_bins": 0}, _NUMBERS, InvalidParameterError, "^output_bins must be"),
        ({"half_width": 0.0}, _NUMBERS, InvalidParameterError, "^half_width must be"),
        ({"clip": "yes"}, _NUMBERS, InvalidParameterError, "^clip must be"),
        ({"categories": [0, 1]}, _NUMBERS, InvalidParameterError, "^categories must be None"),
        ({"epsilon": 1e-17}, _NUMBERS, ValueError, "^epsilon=1e-17 is too small to be"),
        ({}, [[0.5], [1.5]], ValueError, r"column 0 has 1 value\(s\) outside bounds=\(0, 1\)"),
        ({}, [[0.5], [np.nan]], ValueError, "column 0 has missing or infinite values"),
        ({}, [["a"], ["b"]], ValueError, "column 0 holds values that are not numbers"),
    ],
    ids=lambda v: "-".join(f"{k}={v[k]!r}" for k in v) if isinstance(v, dict) else "",
)
def test_square_wave_bad_input_is_named(params, X, error, match):
    sw = SquareWave(**{"bounds": (0, 1), "bins": 8, "random_state": 0, **params})
    with pytest.raises(error, match=match):
        sw.fit(X)


def test_square_wave_transform_inputs():
    sw = SquareWave(bounds=(0, 1), bins=8, random_state=0).fit(_NUMBERS)
    with pytest.raises(ValueError, match="X has 2 features, but SquareWave is expecting 1"):
        sw.transform([[0.5, 0.5]])
    with pytest.raises(ValueError, match=r"outside bounds=\(0, 1\)"):
        sw.transform([[2.0]])
    # Documented: clip=True clips into the range on the device instead of refusing.
    assert np.asarray(sw.set_params(clip=True).transform([[2.0], [-1.0]])).shape == (2, 1)


# -- the registry (skldp.registry) -------------------------------------------------------------
@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: registry.channel_of("krr", 2.5), TypeError, r"^n_categories must be an integer"),
        (lambda: registry.channel_of("krr", 1), ValueError, r"^n_categories must be an integer >="),
        (lambda: registry.channel_of("krr", 3, epsilon=-1), ValueError, "^epsilon must be"),
        (lambda: registry.channel_of("nope", 3), ValueError, "^unknown mechanism 'nope'"),
        (lambda: registry.make_privatizer("krr", theta=1), ValueError, "has no parameter 'theta'"),
        (lambda: registry.get_mechanism("nope"), ValueError, "^unknown mechanism 'nope'"),
        (lambda: registry.register(object()), TypeError, r"^expected a Mechanism\(\.\.\.\) entry"),
        (lambda: registry.unregister("krr"), ValueError, "is one of skldp's own mechanisms"),
        (lambda: registry.unregister("nope"), ValueError, "no mechanism named 'nope'"),
        (
            lambda: registry.Mechanism("x", 3, "f", "g", "p"),
            TypeError,
            "privatizer of 'x' must be a privatizer class",
        ),
    ],
)
def test_registry_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- numbers in [lo, hi]: the mean mechanisms and MeanEstimator (tests/privatizers/test_means.py) --
_VALUES = [[0.1], [0.5], [-0.3]]
MEAN_MECHANISMS = [DuchiMechanism, PiecewiseMechanism, HybridMechanism]


@pytest.mark.parametrize(
    "params, X, error, match",
    [
        ({"bounds": None}, _VALUES, ValueError, r"^bounds=\(lo, hi\) is required"),
        ({"bounds": (1, -1)}, _VALUES, ValueError, "^bounds must be finite with lo < hi"),
        ({"bounds": (0, np.inf)}, _VALUES, ValueError, "^bounds must be finite with lo < hi"),
        ({"bounds": "ab"}, _VALUES, InvalidParameterError, "^bounds must be None, \\(lo, hi\\)"),
        ({"epsilon": 0}, _VALUES, InvalidParameterError, EPS_MATCH),
        ({"epsilon": 1e-17}, _VALUES, ValueError, "^epsilon=1e-17 is too small to be represented"),
        ({"clip": "yes"}, _VALUES, InvalidParameterError, "^clip must be True or False"),
        ({}, [[0.5], [2.0]], ValueError, r"column 0 has 1 value\(s\) outside bounds=\(-1, 1\)"),
        ({}, [[0.5], [np.nan]], ValueError, "contains NaN"),
        ({}, [["a"]], ValueError, "could not convert string to float"),
        ({}, np.empty((0, 1)), ValueError, "0 sample"),
    ],
    ids=lambda v: "-".join(f"{k}={v[k]!r}" for k in v) if isinstance(v, dict) else "",
)
@pytest.mark.parametrize("mechanism", MEAN_MECHANISMS, ids=lambda c: c.__name__)
def test_mean_mechanism_bad_input_is_named(mechanism, params, X, error, match):
    m = mechanism(**{"bounds": (-1, 1), "random_state": 0, **params})
    with pytest.raises(error, match=match):
        m.fit(X)


def test_mean_mechanism_documented_clip():
    # Documented: clip=True clips into the range on the device instead of refusing.
    m = DuchiMechanism(bounds=(-1, 1), clip=True, random_state=0).fit(_VALUES)
    assert np.asarray(m.transform([[2.0], [-3.0]])).shape == (2, 1)


def _mean_reports():
    m = DuchiMechanism(bounds=(-1, 1), random_state=0).fit(_VALUES)
    return m, m.transform(_VALUES * 10)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: MeanEstimator(variance="x").fit(_mean_reports()[1]),
            InvalidParameterError,
            "^variance must be one of",
        ),
        (
            lambda: MeanEstimator(privatizer="duchi").fit(_mean_reports()[1]),
            TypeError,
            "^privatizer must be a mean mechanism .*; got str$",
        ),
        (
            lambda: MeanEstimator(privatizer=RandomizedResponse()).fit(_mean_reports()[1]),
            TypeError,
            "^privatizer must be a mean mechanism .*; got RandomizedResponse$",
        ),
        (  # before: an unfitted mechanism was read silently
            lambda: MeanEstimator(privatizer=DuchiMechanism(bounds=(-1, 1))).fit(
                _mean_reports()[1]
            ),
            ValueError,
            "DuchiMechanism instance is not fitted",
        ),
        (
            lambda: MeanEstimator(variance="worst-case").fit(_mean_reports()[1]),
            ValueError,
            "^variance='worst-case' needs privatizer=",
        ),
        (lambda: MeanEstimator().fit([[np.nan]]), ValueError, "contains NaN"),
        (lambda: MeanEstimator().fit([["a"]]), ValueError, "could not convert string to float"),
        (lambda: MeanEstimator().fit(np.empty((0, 1))), ValueError, "0 sample"),
    ],
)
def test_mean_estimator_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- range queries: HierarchicalHistogram, HaarWavelet, RangeQueryEstimator ------------------------
_ORDERED = list(range(8))
RANGE_MECHANISMS = [HierarchicalHistogram, HaarWavelet]


@pytest.mark.parametrize(
    "params, X, error, match",
    [
        (
            {"categories": None},
            [[0]],
            ValueError,
            r"needs categories=\[\.\.\.\]: the public, order",
        ),
        (
            {"categories": [0, 0, 1]},
            [[0]],
            ValueError,
            "^categories must hold at least two distinct",
        ),
        ({"categories": [0]}, [[0]], ValueError, "^categories must hold at least two distinct"),
        ({"epsilon": -1}, [[0]], InvalidParameterError, EPS_MATCH),
        ({"epsilon": 1e-17}, [[0]], ValueError, "^epsilon=1e-17 is too small to be represented"),
        ({}, [[0, 1]], ValueError, "privatizes one column; got 2"),
    ],
    ids=lambda v: "-".join(f"{k}={v[k]!r}" for k in v) if isinstance(v, dict) else "",
)
@pytest.mark.parametrize("mechanism", RANGE_MECHANISMS, ids=lambda c: c.__name__)
def test_range_mechanism_bad_input_is_named(mechanism, params, X, error, match):
    m = mechanism(**{"categories": _ORDERED, "random_state": 0, **params})
    with pytest.raises(error, match=match):
        m.fit(X)


@pytest.mark.parametrize("mechanism", RANGE_MECHANISMS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "X, match", [([[9]], "values outside categories: 9"), ([[np.nan]], "outside categories: nan")]
)
def test_range_mechanism_bad_rows_are_named(mechanism, X, match):
    m = mechanism(categories=_ORDERED, random_state=0).fit([[0]])
    with pytest.raises(ValueError, match=match):
        m.transform(X)


@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"branching": 1}, InvalidParameterError, "^branching must be an integer >= 2"),
        ({"branching": "x"}, InvalidParameterError, "^branching must be an integer >= 2"),
        ({"oracle": "krr"}, InvalidParameterError, "^oracle must be None or a skldp privatizer"),
    ],
    ids=["branching_1", "branching_str", "oracle_str"],
)
def test_hierarchical_histogram_bad_parameters_are_named(params, error, match):
    with pytest.raises(error, match=match):
        HierarchicalHistogram(categories=_ORDERED, **params).fit([[0]])


def _range_reports():
    h = HierarchicalHistogram(categories=_ORDERED, random_state=0).fit([[0]])
    return h, np.asarray(h.transform([[v] for v in _ORDERED * 10]))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: RangeQueryEstimator().fit(_range_reports()[1]),
            ValueError,
            "^RangeQueryEstimator needs privatizer=",
        ),
        (  # before: sklearn's "hh is not an estimator instance"
            lambda: RangeQueryEstimator(privatizer="hh").fit(_range_reports()[1]),
            TypeError,
            "^privatizer must be the fitted HierarchicalHistogram or HaarWavelet .*; got str$",
        ),
        (  # before: AttributeError ('RandomizedResponse' object has no attribute 'statistics')
            lambda: RangeQueryEstimator(privatizer=RandomizedResponse()).fit(_range_reports()[1]),
            TypeError,
            "^privatizer must be the fitted .*; got RandomizedResponse$",
        ),
        (
            lambda: RangeQueryEstimator(privatizer=HierarchicalHistogram(categories=_ORDERED)).fit(
                _range_reports()[1]
            ),
            ValueError,
            "HierarchicalHistogram instance is not fitted",
        ),
        (
            lambda: RangeQueryEstimator(privatizer=_range_reports()[0], consistency="x").fit(
                _range_reports()[1]
            ),
            InvalidParameterError,
            "^consistency must be True or False",
        ),
        (  # before: zero reports gave an estimate silently
            lambda: RangeQueryEstimator(privatizer=_range_reports()[0]).fit(
                _range_reports()[1][:0]
            ),
            ValueError,
            "^cannot estimate range queries from zero reports$",
        ),
        (
            lambda: RangeQueryEstimator(privatizer=_range_reports()[0]).fit(
                np.full((3, _range_reports()[1].shape[1]), np.nan)
            ),
            ValueError,
            "reports must be integers",
        ),
    ],
)
def test_range_query_estimator_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- heavy hitters: PrefixExtension, TreeHistogram, HeavyHitterEstimator ---------------------------
PREFIX_MECHANISMS = [PrefixExtension, TreeHistogram]


@pytest.mark.parametrize(
    "params, X, error, match",
    [
        ({"n_bits": None}, [[3]], ValueError, "needs n_bits=, the public bit length"),
        ({"n_bits": 0}, [[3]], InvalidParameterError, r"^n_bits must be None or an integer in"),
        ({"n_bits": 63}, [[3]], InvalidParameterError, r"^n_bits must be None or an integer in"),
        ({"epsilon": 0}, [[3]], InvalidParameterError, EPS_MATCH),
        ({"value_type": "x"}, [[3]], InvalidParameterError, "^value_type must be one of"),
        ({"value_type": "str", "n_bits": 7}, [["a"]], ValueError, "needs n_bits a multiple of 8"),
        ({"step": 0}, [[3]], InvalidParameterError, "^step must be None or an integer in"),
        ({"max_candidates": 1}, [[3]], InvalidParameterError, "^max_candidates must be"),
        # before: categories were ignored silently
        (
            {"categories": [0, 1]},
            [[3]],
            ValueError,
            "^categories must be None for (PrefixExt|Tree)",
        ),
        ({}, np.empty((0, 1)), ValueError, "0 sample"),
        ({}, [[3, 4]], ValueError, "privatizes one column of values; got 2"),
    ],
    ids=lambda v: "-".join(f"{k}={v[k]!r}" for k in v) if isinstance(v, dict) else "",
)
@pytest.mark.parametrize("mechanism", PREFIX_MECHANISMS, ids=lambda c: c.__name__)
def test_prefix_mechanism_bad_input_is_named(mechanism, params, X, error, match):
    m = mechanism(**{"epsilon": 4.0, "n_bits": 8, "random_state": 0, **params})
    with pytest.raises(error, match=match):
        m.fit(X)


@pytest.mark.parametrize("mechanism", PREFIX_MECHANISMS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "X, match",
    [
        ([[300]], "^the value 300 does not fit in n_bits = 8 bits$"),
        ([[-1]], "^the value -1 does not fit in n_bits = 8 bits$"),
        ([[np.nan]], r"^value_type='int' reads integer ids; got nan \(float\)$"),
        ([[1.5]], r"^value_type='int' reads integer ids; got 1.5 \(float\)$"),
        ([["a"]], r"^value_type='int' reads integer ids; got 'a' \(str\)$"),
    ],
    ids=["too_big", "negative", "nan", "float", "str"],
)
def test_prefix_mechanism_bad_values_are_named(mechanism, X, match):
    m = mechanism(4.0, n_bits=8, random_state=0).fit([[3]])
    with pytest.raises(ValueError, match=match):
        m.transform(X)


def test_prefix_mechanism_bad_start_bits_and_share_are_named():
    # before: a first prefix longer than the values was cut to n_bits silently
    with pytest.raises(ValueError, match="^start_bits must be at most n_bits = 8"):
        PrefixExtension(4.0, n_bits=8, start_bits=9, max_candidates=16).fit([[3]])
    with pytest.raises(InvalidParameterError, match=r"^final_share must be a number in \(0, 1\)"):
        TreeHistogram(4.0, n_bits=8, final_share=1.0).fit([[3]])
    with pytest.raises(ValueError, match="^the value b'abc' has 3 bytes; at most 1 fit$"):
        PrefixExtension(4.0, n_bits=8, value_type="str").fit([["a"]]).transform([["abc"]])


def _heavy_reports():
    pem = PrefixExtension(4.0, n_bits=8, random_state=0).fit([[3]])
    return pem.transform([[3]] * 50)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: HeavyHitterEstimator(threshold=-1).fit(_heavy_reports()),
            InvalidParameterError,
            "^threshold must be None or a number > 0",
        ),
        (
            lambda: HeavyHitterEstimator(top_k=0).fit(_heavy_reports()),
            InvalidParameterError,
            "^top_k must be None or an integer >= 1",
        ),
        (
            lambda: HeavyHitterEstimator(alpha=1.5).fit(_heavy_reports()),
            InvalidParameterError,
            r"^alpha must be a number in \(0, 1\)",
        ),
        (
            lambda: HeavyHitterEstimator(confidence=0).fit(_heavy_reports()),
            InvalidParameterError,
            r"^confidence must be a number in \(0, 1\)",
        ),
        (
            lambda: HeavyHitterEstimator().fit(np.asarray(_heavy_reports())),
            ValueError,
            "do not carry the channel that made them",
        ),
        (
            lambda: HeavyHitterEstimator().fit(_heavy_reports()[:0]),
            ValueError,
            "^cannot find heavy hitters in zero reports$",
        ),
        (
            lambda: HeavyHitterEstimator().fit(
                RandomizedResponse(categories=[0, 1]).fit([[0]]).transform([[0], [1]])
            ),
            TypeError,
            r"^HeavyHitterEstimator reads the reports of PrefixExtension or TreeHistogram",
        ),
        (
            lambda: HeavyHitterEstimator(channel="x").fit(np.zeros((3, 3), dtype=int)),
            TypeError,
            "^channel must be a channel, a fitted privatizer, or a list of them; got str$",
        ),
    ],
)
def test_heavy_hitter_estimator_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- numeric advice and the new risks of skldp.theory -------------------------------------------
@pytest.mark.parametrize(
    "question, kwargs, error, match",
    [
        ("x", {}, ValueError, r"^question must be one of \['density', 'mean', 'ranges'\]"),
        ("mean", {"epsilon": 0}, ValueError, EPS_MATCH),
        ("ranges", {}, ValueError, "^question='ranges' needs n_categories"),
        ("ranges", {"n_categories": 1}, ValueError, "^n_categories must be an integer >= 2"),
        ("ranges", {"n_categories": 2.5}, TypeError, "^n_categories must be an integer >= 2"),
        ("ranges", {"n_categories": 8, "range_length": 0}, ValueError, r"^range_length must be"),
        ("ranges", {"n_categories": 8, "range_length": 9}, ValueError, r"in \[1, 8\]; got 9$"),
    ],
)
def test_recommend_numeric_method_bad_input_is_named(question, kwargs, error, match):
    with pytest.raises(error, match=match):
        recommend_numeric_method(question, **{"epsilon": 1.0, **kwargs})


@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        (([10, 5], 2, 4, 0), {}, ValueError, EPS_MATCH),
        # before: negative, NaN, empty and 2-D counts gave numbers silently
        (([-10, 5], 2, 4, 1.0), {}, ValueError, "^counts must have finite non-negative entries$"),
        (([np.nan, 5], 2, 4, 1.0), {}, ValueError, "^counts must have finite non-negative"),
        (([], 2, 4, 1.0), {}, ValueError, r"^counts must be a non-empty 1-D array .*\(0,\)$"),
        (([[1, 2]], 2, 4, 1.0), {}, ValueError, r"^counts must be a non-empty 1-D .*\(1, 2\)$"),
        (("ab", 2, 4, 1.0), {}, TypeError, "^counts must be a 1-D array of numbers; got str$"),
        (([10, 5], 0, 4, 1.0), {}, ValueError, "^n_hashes must be an integer >= 1; got 0$"),
        (([10, 5], 2, 1, 1.0), {}, ValueError, "^width must be an integer >= 2; got 1$"),
        (([10, 5], 2, 2.5, 1.0), {}, TypeError, "^width must be an integer >= 2; got 2.5$"),
        # before: HCMS accepted a width that is not a power of two
        (([10, 5], 2, 3, 1.0), {"hadamard": True}, ValueError, "^width must be a power of two"),
        (([10, 5], 2, 4, 1.0), {"hadamard": "yes"}, TypeError, "^hadamard must be True or False"),
    ],
    ids=["eps", "negative", "nan", "empty", "2d", "str", "n_hashes", "width1", "width_float"]
    + ["hadamard_width", "hadamard_str"],
)
def test_count_mean_sketch_mse_bad_input_is_named(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        count_mean_sketch_mse(*args, **kwargs)


@pytest.mark.parametrize(
    "p, variance, error, match",
    [
        ([0.5, 0.6], [0.01, 0.01], ValueError, "^p must sum to 1; got 1.1$"),
        ([-0.5, 1.5], [0.01, 0.01], ValueError, "^p must have finite non-negative entries$"),
        ([0.5, 0.5], [-0.01, 0.01], ValueError, "^variance must have finite non-negative"),
        ([0.5, 0.5], [np.nan, 0.01], ValueError, "^variance must have finite non-negative"),
        (
            [0.5, 0.5],
            [0.01],
            ValueError,
            r"^variance must have the shape of p, \(2,\); got \(1,\)$",
        ),
        ("ab", [0.01], TypeError, "^p must be a 1-D array of numbers; got str$"),
        ([], [], ValueError, "^p must have at least one entry"),
        ([[0.5, 0.5]], [[0.01, 0.01]], ValueError, "^p must be one-dimensional"),
    ],
    ids=["p_sum", "p_neg", "var_neg", "var_nan", "shapes", "str", "empty", "2d"],
)
def test_normal_projected_l1_risk_bad_input_is_named(p, variance, error, match):
    with pytest.raises(error, match=match):
        normal_projected_l1_risk(p, variance)


def test_count_mean_sketch_mse_documented_edges():
    # No counts at all: no error to make; one item alone has only the noise term.
    assert count_mean_sketch_mse([0, 0], 2, 4, 1.0).tolist() == [0.0, 0.0]
    assert np.all(count_mean_sketch_mse([10, 5], 2, 4, 1.0, hadamard=True) > 0)


# -- coverage --------------------------------------------------------------------------------------
#: Public names whose bad inputs are not cases here, and why.
NOT_ENTRY_POINTS = {
    "PrivacyModel": "abstract base of the models",
    "AuditInputs": "an abstract ability that privatizers declare; audit's cases cover its use",
    "VerificationResult": "a result, built by verify",
    "ULDPVerificationResult": "a result, built by UtilityOptimizedLDP.verify",
    "AuditResult": "a result, built by audit",
    "ShuffleGuarantee": "a result, built by shuffle_guarantee",
    "ChannelEstimate": "a result, built by estimate_channel",
    "OneSidedDecomposition": "a result, built by one_sided_decomposition",
    "CountTable": "a result (a Bunch), built by the loaders",
    "PrivacyLeakWarning": "a warning class",
    "ChannelMismatchError": "an exception class",
    "MemoryLimitError": "an exception class (its cases are the refusals in tests/test_memory.py)",
    "get_memory_limit": "takes no input",
    "simulation": "a context manager that takes no input",
    "__version__": "a string",
}


def test_every_public_entry_point_is_in_the_matrix():
    # Every public function and class of these modules is a case here (imported by this
    # module, or a registry mechanism or estimator that the matrices multiply); channels are
    # covered by test_every_channel_with_a_budget_is_in_the_matrix.
    used = {id(v) for v in globals().values()}
    used |= {id(type(x)) for x in (*MECHANISMS, *MATRIX_ESTIMATORS)}
    modules = {channels, datasets, metrics, privacy, projection, theory, experiments, registry}
    missing = []
    for module in (skldp, privacy, metrics, projection, datasets, theory, experiments):
        for name in module.__all__:
            obj = getattr(module, name)
            if obj in modules or name in NOT_ENTRY_POINTS or id(obj) in used:
                continue
            missing.append(f"{module.__name__}.{name}")
    assert not missing, f"public entry points without input cases: {missing}"

"""Bad input at every public entry point, as a matrix over the registry.

Every case either raises a ValueError or TypeError whose message names the problem
(``pytest.raises(..., match=...)``), or has a documented behaviour asserted here. No case may
crash with an internal error (IndexError, KeyError, AttributeError, ZeroDivisionError,
numpy broadcasting messages) or return numbers silently.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from skldp import (
    CandidateEstimator,
    EMEstimator,
    PersonalizedEstimator,
    PersonalizedULDP,
    ProjectedEstimator,
    RandomizedResponse,
    SparseEstimator,
)
from skldp.exceptions import ChannelMismatchError, PrivacyLeakWarning
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
    BlockStructuredLDP,
    ContextAwareLDP,
    HighLowLDP,
    UtilityOptimizedLDP,
    ZeroBits,
    verify,
)
from skldp.projection import clip_normalize, norm_sub, project_simplex
from tests.registry import ESTIMATORS, MECHANISMS, PRIVATIZERS, domain, fitted, instance_id

ERRORS = (ValueError, TypeError)
EPS_MATCH = r"epsilon\w* must be a positive finite number"


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
    with pytest.warns(PrivacyLeakWarning, match="inferred from the raw data"):
        try:
            p.fit(_column(domain(privatizer)))
        except ValueError:
            # A mechanism whose other parameters name categories may still need the domain;
            # the warning comes first either way.
            pass


# Parameters that tie a mechanism to its domain: a sensitive set or a partition.
DOMAIN_PARAMS = {
    "sensitive": lambda d: [d[0], "__not_in_the_domain__"],
    "sensitive_categories": lambda d: [d[0], "__not_in_the_domain__"],
    "blocks": lambda d: [[d[0]]],
    "partition": lambda d: [[d[0]]],
}


@pytest.mark.parametrize("param", sorted(DOMAIN_PARAMS))
@pytest.mark.parametrize("privatizer", MECHANISMS, ids=instance_id)
def test_sensitive_set_or_partition_must_fit_the_domain(privatizer, param):
    if param not in privatizer.get_params(deep=False):
        pytest.skip(f"{type(privatizer).__name__} has no {param}")
    d = domain(privatizer)
    p = clone(privatizer).set_params(**{param: DOMAIN_PARAMS[param](d)})
    with pytest.raises(ERRORS, match=r"(?i)domain|cover|partition|block|sensitive|outside|categor"):
        p.fit(_column(d))


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


@pytest.mark.parametrize("bad", ["rr", 3, RandomizedResponse()], ids=["str", "int", "unfitted"])
@pytest.mark.parametrize("estimator", MATRIX_ESTIMATORS, ids=instance_id)
def test_bad_channel_parameter(estimator, bad):
    with pytest.raises(TypeError, match="channel must be"):
        clone(estimator).set_params(channel=bad).fit(np.zeros((3, 1), dtype=int))


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
        ({"sensitive": [9]}, ValueError, "not in its categories: 9"),
        ({"categories": [0, 0, 1]}, ValueError, "duplicates"),
        ({"base": "rr"}, ValueError, "base must be one of"),
        ({"theta": 0.5}, ValueError, "theta applies to base='urap' only"),
        ({"base": "urap", "theta": 2.0}, ValueError, "theta must lie in"),
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
    ],
)
def test_context_aware_and_utility_optimized_model_inputs(make, error, match):
    with pytest.raises(error, match=match):
        make()

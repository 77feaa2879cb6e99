import math
import pickle

import numpy as np
import pandas as pd
import pytest
import sklearn
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from skldp import (
    RAPPOR,
    EMEstimator,
    EmpiricalEstimator,
    OptimizedUnaryEncoding,
    PersonalizedEstimator,
    PersonalizedULDP,
    ProjectedEstimator,
    UtilityOptimizedRAPPOR,
    UtilityOptimizedRR,
)
from skldp.channels import PersonalizedChannel
from skldp.exceptions import PrivacyLeakWarning
from skldp.privacy import UtilityOptimizedLDP, ZeroBits, verify
from tests.channel_contract import ChannelContract, contract_fixture

CATS = ["a", "b", "c", "d", "e"]


def _data(n=4000, seed=12345):
    rng = np.random.default_rng(seed)
    return rng.choice(CATS, size=n, p=[0.4, 0.3, 0.15, 0.1, 0.05])


PRIVATIZERS = [
    RAPPOR(1.0, categories=CATS, random_state=0),
    RAPPOR(1.0, theta=0.3, categories=CATS, random_state=0),
    OptimizedUnaryEncoding(1.0, categories=CATS, random_state=0),
    UtilityOptimizedRR(1.0, sensitive=["c", "e"], categories=CATS, random_state=0),
    UtilityOptimizedRAPPOR(1.0, sensitive=["c", "e"], categories=CATS, random_state=0),
]


@pytest.mark.parametrize("priv", PRIVATIZERS, ids=lambda p: type(p).__name__)
@pytest.mark.parametrize(
    "est",
    [EmpiricalEstimator(), ProjectedEstimator(method="threshold"), EMEstimator(init="threshold")],
    ids=repr,
)
def test_pipeline_estimates_within_tolerance(priv, est):
    x = _data()
    pipe = Pipeline([("p", clone(priv)), ("e", clone(est))]).fit(x)
    p_true = np.array([0.4, 0.3, 0.15, 0.1, 0.05])
    ch = pipe[0].channel_
    sd = np.sqrt(ch.variance(p_true, x.size))
    assert np.all(np.abs(pipe[-1].distribution_ - p_true) <= 6 * sd + 0.01)


@pytest.mark.parametrize("priv", PRIVATIZERS, ids=lambda p: type(p).__name__)
def test_pandas_output_keeps_channel_and_index(priv):
    x = pd.Series(_data(300), index=np.arange(300)[::-1] * 2, name="col")
    with sklearn.config_context(transform_output="pandas"):
        out = clone(priv).fit_transform(x)
    assert list(out.index) == list(x.index)
    est = EmpiricalEstimator().fit(out)
    est2 = EmpiricalEstimator().fit(clone(priv).fit_transform(x.to_numpy()))
    assert_allclose(est.distribution_, est2.distribution_)
    assert_array_equal(est.categories_, CATS)


@pytest.mark.parametrize("priv", PRIVATIZERS, ids=lambda p: type(p).__name__)
def test_reproducible_and_pickles(priv):
    x = _data(200)
    a = clone(priv).fit_transform(x)
    b = clone(priv).fit(x)
    assert_array_equal(a, b.transform(x))
    again = pickle.loads(pickle.dumps(b))
    assert again.channel_ == b.channel_
    assert verify(b.channel_, b.privacy_).passed


def test_bit_reports_are_uint8_with_named_columns():
    oue = OptimizedUnaryEncoding(2.0, categories=CATS, random_state=0).fit(_data(10))
    r = oue.transform(_data(10))
    assert r.dtype == np.uint8 and r.shape == (10, 5)
    assert list(oue.get_feature_names_out()) == [f"x0_{j}" for j in range(5)]
    assert oue.bits_per_report == 5


def test_grid_search_over_epsilon_with_bits():
    x = _data(2000)
    pipe = Pipeline([("p", RAPPOR(categories=CATS, random_state=0)), ("e", EMEstimator())])
    gs = GridSearchCV(pipe, {"p__epsilon": [0.5, 2.0]}, cv=2).fit(x)
    assert gs.best_params_["p__epsilon"] in (0.5, 2.0)


def test_urr_privacy_model_and_sensitive_indices():
    urr = UtilityOptimizedRR(1.0, sensitive=["e", "b"], categories=CATS).fit(["a"])
    assert urr.privacy_ == UtilityOptimizedLDP([1, 4], [1, 4], 1.0)
    urap = UtilityOptimizedRAPPOR(1.0, sensitive=["b"], categories=CATS).fit(["a"])
    assert urap.privacy_ == UtilityOptimizedLDP([1], ZeroBits([0, 2, 3, 4]), 1.0)


def test_two_columns_with_sensitive_lists():
    X = np.array([["a", "x"], ["b", "y"], ["c", "x"]] * 50, dtype=object)
    urr = UtilityOptimizedRR(
        1.0, sensitive=[["a"], ["y"]], categories=[CATS[:3], ["x", "y"]], random_state=0
    )
    out = urr.fit_transform(X)
    assert out.shape == (150, 2)
    assert urr.privacy_.epsilon == 2.0
    assert_array_equal(urr.channels_[1].sensitive, [1])


@pytest.mark.parametrize(
    "cls, kwargs, err, match",
    [
        (
            UtilityOptimizedRR,
            {"sensitive": ["z"]},
            ValueError,
            "^sensitive lists values that are not categories of column 0: 'z'$",
        ),
        (UtilityOptimizedRR, {"sensitive": []}, ValueError, "no sensitive value"),
        (UtilityOptimizedRR, {"sensitive": ["a", "a"]}, ValueError, "^sensitive contains dup"),
        (UtilityOptimizedRR, {}, TypeError, "sensitive is required"),
        (UtilityOptimizedRAPPOR, {"sensitive": "a"}, TypeError, "list of values"),
        (UtilityOptimizedRAPPOR, {"sensitive": ["a"], "theta": 1.5}, ValueError, "theta"),
        (RAPPOR, {"theta": 0.0}, ValueError, "theta"),
        (RAPPOR, {"epsilon": -1}, ValueError, "epsilon"),
        (OptimizedUnaryEncoding, {"epsilon": float("nan")}, ValueError, "epsilon"),
        (
            UtilityOptimizedRR,
            {"sensitive": [["a"], ["b"]]},
            ValueError,
            "2 lists but X has 1 columns",
        ),
    ],
)
def test_bad_parameters(cls, kwargs, err, match):
    with pytest.raises(err, match=match):
        cls(categories=CATS, **kwargs).fit(["a", "b"])


def test_out_of_domain_value_named():
    with pytest.raises(ValueError, match="'zz'"):
        RAPPOR(1.0, categories=CATS).fit(["a"]).transform(["a", "zz"])


def test_inferred_domain_warns():
    with pytest.warns(PrivacyLeakWarning):
        OptimizedUnaryEncoding(1.0).fit(["a", "b"])


def test_reports_from_elsewhere_need_channel():
    rap = RAPPOR(1.0, categories=CATS, random_state=0).fit(["a"])
    plain = np.asarray(rap.transform(_data(500)))
    est = EMEstimator(channel=rap).fit(plain)
    assert est.distribution_.shape == (5,)
    with pytest.raises(ValueError, match="different mechanism"):
        EMEstimator(channel=rap).fit(np.full((3, 5), 2))
    with pytest.raises(ValueError, match="5 columns"):
        EMEstimator(channel=rap).fit(np.zeros((3, 4), dtype=np.uint8))


# -- PUM -------------------------------------------------------------------------------------------


def _pum_data(n=3000, seed=54321):
    rng = np.random.default_rng(seed)
    values = rng.choice(CATS, size=n)
    tags = np.where(rng.random(n) < 0.2, "home", None).astype(object)
    tags[pd.isna(tags) & (rng.random(n) < 0.1)] = "work"
    return pd.DataFrame({"value": values, "tag": tags})


@pytest.mark.parametrize("base", ["urr", "urap"])
def test_pum_preprocessing_maps_tagged_values_to_bots(base):
    df = _pum_data()
    pum = PersonalizedULDP(
        50.0, sensitive=["a"], tags=["home", "work"], base=base, categories=CATS, random_state=0
    )
    out = pum.fit_transform(df)
    assert list(out.index) == list(df.index)
    ch = pum.channel_
    tag_idx = np.select([df.tag == "home", df.tag == "work"], [0, 1], -1)
    x = pd.Index(CATS).get_indexer(df.value)
    z = ch.preprocess(x, tag_idx)
    assert_array_equal(z[(tag_idx == 0) & (x != 0)], 5)
    assert_array_equal(z[(tag_idx == 1) & (x != 0)], 6)
    assert_array_equal(z[x == 0], 0)  # sensitive for everyone: stays itself
    # at eps = 50 almost every report is its pre-processed symbol
    est = PersonalizedEstimator(method="empirical").fit(out)
    r = np.bincount(z, minlength=7) / z.size
    assert_allclose(est.intermediate_distribution_, r, atol=0.02)
    assert list(est.output_categories_) == CATS + ["bot:home", "bot:work"]
    assert_array_equal(est.categories_, CATS)
    assert est.predict(out[:3]).shape == (3,)
    assert est.predict_proba(out[:3]).shape == (3, 7)
    assert np.isfinite(est.score(out))


def test_pum_feature_names_and_width():
    df = _pum_data(50)
    pum = PersonalizedULDP(
        1.0, tags=["home", "work"], base="urap", categories=CATS, random_state=0
    ).fit(df)
    assert list(pum.get_feature_names_out()) == [f"value_{j}" for j in range(7)]
    assert pum.transform(df).shape == (50, 7)
    assert isinstance(pum.channel_, PersonalizedChannel)


@pytest.mark.parametrize(
    "kwargs, X, err, match",
    [
        ({"tags": ["home"]}, [["a", "gym"]], ValueError, "unknown tags: 'gym'"),
        ({"tags": None}, [["a", None]], TypeError, "tags is required"),
        ({"tags": "home"}, [["a", None]], TypeError, "list of tag names"),
        ({"tags": ["h", "h"]}, [["a", None]], ValueError, "duplicates"),
        ({"tags": ["home"], "base": "rr"}, [["a", None]], ValueError, "base"),
        ({"tags": ["home"], "theta": 0.3}, [["a", None]], ValueError, "urap"),
        ({"tags": ["home"]}, [["a"]], ValueError, "two columns"),
        ({"tags": ["home"], "sensitive": ["q"]}, [["a", None]], ValueError, "'q'"),
    ],
)
def test_pum_bad_input(kwargs, X, err, match):
    with pytest.raises(err, match=match):
        PersonalizedULDP(1.0, categories=CATS, **kwargs).fit(np.array(X, dtype=object))


PUM_SMALL = [
    PersonalizedChannel.from_base(eps, 4, [0], ["h", "w"], base=base)
    for base in ("urr", "urap")
    for eps in (1e-3, 1.0, 50.0)
]


channel = contract_fixture(PUM_SMALL)


class TestPersonalizedChannelContract(ChannelContract):
    pass


def test_personalized_channel_pickle_and_names():
    ch = PersonalizedChannel.from_base(1.0, 4, [0], 2, base="urap", theta=0.4)
    assert ch.tags == ("0", "1") and ch.n_inputs == 6 and ch.report_width == 6
    again = pickle.loads(pickle.dumps(ch))
    assert again == ch
    assert ch.guarantee().epsilon == 1.0
    assert math.isclose(ch.common.theta, 0.4, rel_tol=1e-12)


@pytest.mark.parametrize("method", ["em", "threshold", "empirical"])
def test_personalized_estimator_when_every_value_is_sensitive(method):
    # No value can hide behind a bot (a tagged value sensitive for everyone keeps its symbol),
    # so the estimated bot mass is noise, spread uniformly; it used to be 0/0 = NaN.
    pum = PersonalizedULDP(
        epsilon=1.0, sensitive=[0, 1], tags=["home"], categories=[0, 1], random_state=2
    ).fit([[0, None]])
    reports = pum.transform([[0, None], [1, "home"], [0, "home"]] * 10)
    est = PersonalizedEstimator(method=method).fit(reports)
    r, p = est.intermediate_distribution_, est.distribution_
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p, r[:2] + r[2] / 2, rtol=1e-12)

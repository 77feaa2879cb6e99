"""The privatizer API on k-RR: domains, pandas, pipelines, search, cloning, reproducibility."""

import pickle

import numpy as np
import pandas as pd
import pytest
import sklearn
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from skldp import (
    ChannelMismatchError,
    EMEstimator,
    EmpiricalEstimator,
    PrivacyLeakWarning,
    ProjectedEstimator,
    RandomizedResponse,
)
from skldp._reports import Reports, ReportsDtype
from skldp.metrics import make_distribution_scorer
from skldp.privacy import LDP, PrivacyAccountant, SequentialComposition

CITIES = ["paris", "lyon", "nice", "lille"]
P = np.array([0.5, 0.25, 0.15, 0.1])


def _cities(n=4000, seed=12345):
    rng = np.random.default_rng(seed)
    return pd.Series(np.asarray(CITIES, dtype=object)[rng.choice(4, size=n, p=P)], name="city")


def test_fitted_attributes():
    rr = RandomizedResponse(epsilon=2.0, categories=CITIES).fit(_cities(10))
    assert [list(c) for c in rr.categories_] == [CITIES]
    assert rr.channel_.n_inputs == 4 and rr.channel_.epsilon == 2.0
    assert rr.privacy_ == LDP(2.0)
    assert rr.bits_per_report == 2
    assert rr.n_features_in_ == 1
    assert list(rr.feature_names_in_) == ["city"]


def test_parameters_are_stored_verbatim_and_not_changed_by_fit():
    cats = [CITIES]
    acc = PrivacyAccountant(budget=5)
    rr = RandomizedResponse(epsilon=1, categories=cats, accountant=acc, random_state=3)
    rr.fit(_cities(10))
    assert rr.get_params() == {
        "epsilon": 1,
        "categories": cats,
        "accountant": acc,
        "random_state": 3,
    }
    assert rr.categories is cats and rr.accountant is acc


def test_inferring_the_domain_warns():
    with pytest.warns(PrivacyLeakWarning, match="inferred from the raw data"):
        rr = RandomizedResponse().fit(["b", "a", "b"])
    assert list(rr.categories_[0]) == ["a", "b"]


def test_unknown_values_are_named():
    rr = RandomizedResponse(categories=CITIES).fit(_cities(10))
    with pytest.raises(ValueError, match=r"outside the domain: 'rome', 'oslo'"):
        rr.transform(["paris", "rome", "oslo", "rome"])
    with pytest.raises(ValueError, match="outside the domain"):
        RandomizedResponse(categories=CITIES).fit(["paris", "rome"])


def test_missing_values_are_rejected():
    rr = RandomizedResponse(categories=CITIES).fit(_cities(10))
    with pytest.raises(ValueError, match="missing values"):
        rr.transform(np.array(["paris", None], dtype=object))


@pytest.mark.parametrize(
    "categories, match",
    [
        (["a", "a", "b"], "duplicates: 'a'"),
        (["a"], "at least 2"),
        (["a", None], "missing value"),
        ([["a", "b"], ["c", "d"]], "2 lists but X has 1 columns"),
        ("abc", "must be None or a list"),
    ],
)
def test_bad_categories(categories, match):
    with pytest.raises((ValueError, TypeError), match=match):
        RandomizedResponse(categories=categories).fit(["a", "b"])


@pytest.mark.parametrize("epsilon", [0, -1, float("nan"), float("inf"), "1", None, True])
def test_bad_epsilon(epsilon):
    with pytest.raises((ValueError, TypeError), match="epsilon must be a positive finite number"):
        RandomizedResponse(epsilon=epsilon, categories=CITIES).fit(_cities(10))


def test_int_seed_reproduces_the_sequence_and_none_does_not():
    X = _cities(2000)
    a = RandomizedResponse(categories=CITIES, random_state=7).fit(X)
    first = a.transform(X)
    assert not np.array_equal(first, a.transform(X))  # every call draws fresh noise
    assert_array_equal(first, clone(a).fit(X).transform(X))  # a clone starts the sequence again
    assert_array_equal(
        first, RandomizedResponse(categories=CITIES, random_state=7).fit_transform(X)
    )
    b = RandomizedResponse(categories=CITIES).fit(X)
    assert not np.array_equal(b.transform(X), b.transform(X))


def test_generator_advances():
    X = _cities(500)
    rr = RandomizedResponse(categories=CITIES, random_state=np.random.default_rng(0)).fit(X)
    assert not np.array_equal(rr.transform(X), rr.transform(X))


def test_numpy_in_reports_out_carry_channel():
    X = _cities(100).to_numpy()
    rr = RandomizedResponse(categories=CITIES, random_state=0).fit(X)
    R = rr.transform(X)
    assert isinstance(R, Reports) and R.shape == (100, 1) and R.dtype == np.int64
    assert R.specs[0].channel == rr.channel_
    # Row selection (cross-validation) keeps the channel; pickling too.
    assert R[np.arange(10)].specs == R.specs
    assert pickle.loads(pickle.dumps(R)).specs == R.specs


def test_pandas_in_pandas_out_index_kept():
    X = _cities(50)
    X.index = np.arange(1000, 1050)[::-1]
    out = RandomizedResponse(categories=CITIES, random_state=0).fit_transform(X)
    assert isinstance(out, pd.DataFrame)
    assert out.index.equals(X.index)
    assert list(out.columns) == ["city"]
    assert isinstance(out.dtypes.iloc[0], ReportsDtype)


def test_several_columns_are_privatized_independently():
    df = pd.DataFrame({"city": _cities(300), "sex": np.where(np.arange(300) % 3, "f", "m")})
    rr = RandomizedResponse(epsilon=1.5, categories=[CITIES, ["f", "m"]], random_state=0).fit(df)
    assert isinstance(rr.privacy_, SequentialComposition)
    assert rr.privacy_.epsilon == 3.0
    assert [ch.n_inputs for ch in rr.channel_] == [4, 2]
    assert rr.bits_per_report == 3
    est = EMEstimator().fit(rr.transform(df))
    assert len(est.distribution_) == 2 and est.distribution_[1].shape == (2,)


def _pipe(**kw):
    return Pipeline(
        [
            ("privatize", RandomizedResponse(categories=CITIES, random_state=0, **kw)),
            ("estimate", EMEstimator()),
        ]
    )


@pytest.mark.parametrize("output", ["default", "pandas"])
def test_pipeline_and_grid_search(output):
    X = _cities(6000)
    with sklearn.config_context(transform_output=output):
        pipe = _pipe().fit(X)
        assert np.abs(pipe[-1].distribution_ - P).sum() < 0.15
        search = GridSearchCV(
            _pipe(),
            {
                "privatize__epsilon": [0.5, 4.0],
                "estimate": [EmpiricalEstimator(), ProjectedEstimator(), EMEstimator()],
            },
            scoring=make_distribution_scorer("tv"),
            cv=3,
        ).fit(X.to_frame())
        assert search.best_params_["privatize__epsilon"] == 4.0
        assert -search.best_score_ < 0.1
        # Default scoring: the likelihood of the held-out reports.
        GridSearchCV(_pipe(), {"privatize__epsilon": [0.5, 4.0]}, cv=3).fit(X)


def test_pipeline_numpy_input_under_pandas_output():
    X = _cities(3000).to_numpy().reshape(-1, 1)
    with sklearn.config_context(transform_output="pandas"):
        est = _pipe().fit(X)[-1]
    assert np.abs(est.distribution_ - P).sum() < 0.2


def test_set_output_survives_clone():
    pipe = _pipe().set_output(transform="pandas")
    X = _cities(1000).to_numpy().reshape(-1, 1)
    out = clone(pipe)[0].fit_transform(X)
    assert isinstance(out, pd.DataFrame)


def _column_transformer(cols):
    return ColumnTransformer(
        [
            ("city", RandomizedResponse(categories=CITIES, random_state=1), [cols[0]]),
            ("sex", RandomizedResponse(categories=["f", "m"], random_state=2), [cols[1]]),
        ]
    )


def test_column_transformer_two_dataframe_columns():
    df = pd.DataFrame({"city": _cities(4000), "sex": np.where(np.arange(4000) % 4, "f", "m")})
    with sklearn.config_context(transform_output="pandas"):
        pipe = Pipeline(
            [("privatize", _column_transformer(["city", "sex"])), ("estimate", EMEstimator())]
        ).fit(df)
    dist = pipe[-1].distribution_
    assert np.abs(dist[0] - P).sum() < 0.2
    assert abs(dist[1][1] - 0.25) < 0.06
    assert [list(c) for c in pipe[-1].categories_] == [CITIES, ["f", "m"]]
    # numpy input: np.hstack keeps the channels of both columns.
    pipe2 = Pipeline([("privatize", _column_transformer([0, 1])), ("estimate", EMEstimator())])
    assert np.allclose(pipe2.fit(df.to_numpy())[-1].distribution_[0], dist[0])


def test_grid_search_over_a_column_transformer():
    # Searching one column's budget inside a ColumnTransformer: the scorer averages the TV of
    # both columns; at epsilon = 4 the city column's error is about a fifth of epsilon = 0.5's
    # (k-RR's risk falls like ((e^eps - 1 + k) / (e^eps - 1))^2), far beyond seed noise here.
    df = pd.DataFrame({"city": _cities(3000), "sex": np.where(np.arange(3000) % 4, "f", "m")})
    pipe = Pipeline(
        [("privatize", _column_transformer(["city", "sex"])), ("estimate", EMEstimator())]
    )
    grid = {
        "privatize__city__epsilon": [0.5, 4.0],
        "estimate": [EmpiricalEstimator(), EMEstimator()],
    }
    with sklearn.config_context(transform_output="pandas"):
        search = GridSearchCV(pipe, grid, scoring=make_distribution_scorer("tv"), cv=3).fit(df)
    assert search.best_params_["privatize__city__epsilon"] == 4.0
    scores = search.cv_results_["mean_test_score"]
    eps = np.array(search.cv_results_["param_privatize__city__epsilon"], dtype=float)
    # The gap between the worst epsilon = 4 and the best epsilon = 0.5 candidate averages 0.034
    # (sd 0.017, min 0.005) over 12 privatizer seeds; a margin of 0.05 held only for one seed.
    assert scores[eps == 4.0].min() > scores[eps == 0.5].max()


def test_column_transformer_default_output_with_dataframe_says_what_to_do():
    df = pd.DataFrame({"city": _cities(100), "sex": ["f"] * 100})
    pipe = Pipeline(
        [("privatize", _column_transformer(["city", "sex"])), ("estimate", EMEstimator())]
    )
    with pytest.raises(ValueError, match=r"set_output\(transform='pandas'\)"):
        pipe.fit(df)


def test_clone_and_pickle_privatizer():
    rr = RandomizedResponse(epsilon=0.7, categories=CITIES, random_state=4).fit(_cities(10))
    again = pickle.loads(pickle.dumps(rr))
    X = _cities(200)
    assert again.channel_ == rr.channel_ and again.get_params() == rr.get_params()
    # a fitted privatizer's copy never resumes its noise stream (see
    # tests/privatizers/test_seeds.py)
    with pytest.warns(UserWarning, match="restored from a pickle"):
        assert not np.array_equal(again.transform(X), rr.transform(X))
    assert clone(rr).get_params() == rr.get_params()


def test_reports_of_another_mechanism_are_refused():
    X = _cities(200)
    r1 = RandomizedResponse(epsilon=1.0, categories=CITIES, random_state=0).fit_transform(X)
    r2 = RandomizedResponse(epsilon=2.0, categories=CITIES, random_state=0).fit_transform(X)
    est = EMEstimator().fit(r1)
    with pytest.raises(ChannelMismatchError, match="different mechanism"):
        est.partial_fit(r2)
    rr1 = RandomizedResponse(epsilon=1.0, categories=CITIES).fit(X)
    with pytest.raises(ChannelMismatchError):
        EMEstimator(channel=RandomizedResponse(epsilon=3.0, categories=CITIES).fit(X)).fit(r1)
    # Plain arrays with the right privatizer work.
    plain = np.asarray(r1)
    assert np.allclose(EMEstimator(channel=rr1).fit(plain).distribution_, est.distribution_)
    with pytest.raises(ValueError, match="do not carry the channel"):
        EMEstimator().fit(plain)


def test_sparse_input_is_refused():
    from scipy import sparse

    with pytest.raises(TypeError, match="sparse input is not supported"):
        RandomizedResponse(categories=[0, 1]).fit(sparse.csr_matrix(np.eye(2)))


def test_transform_validates_the_values_once(monkeypatch):
    # encode checks the values against the domain; the channel does not check the indices again
    from skldp.channels import RandomizedResponseChannel

    calls = []
    original = RandomizedResponseChannel._check_inputs

    def counted(self, x):
        calls.append(len(x))
        return original(self, x)

    monkeypatch.setattr(RandomizedResponseChannel, "_check_inputs", counted)
    rr = RandomizedResponse(1.0, categories=np.arange(10, 20), random_state=0).fit([10])
    reports = rr.transform(np.arange(10, 20).repeat(100))
    assert calls == [] and reports.shape == (1000, 1)
    assert np.asarray(reports).min() >= 0 and np.asarray(reports).max() < 10
    for bad in (9, 20, -1):
        with pytest.raises(ValueError, match=f"outside the domain: {bad}"):
            rr.transform(np.array([10, bad, 11]))
    rr.channel_.sample(np.array([0, 1]), np.random.default_rng(0))  # the public method checks
    assert calls == [2]

"""The context-aware privatizers: partitions and sensitive sets in every form, errors, search."""

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from skldp import (
    BinaryRandomizedResponse,
    BlockHadamardResponse,
    EMEstimator,
    EmpiricalEstimator,
    HadamardResponse,
    HighLowHadamardResponse,
    ProjectedEstimator,
    grid_blocks,
)
from skldp.exceptions import PrivacyLeakWarning
from skldp.metrics import make_distribution_scorer, total_variation
from skldp.privacy import (
    LDP,
    BinaryContextAwareLDP,
    BlockStructuredLDP,
    HighLowLDP,
    SequentialComposition,
)

CATS = list("abcdefghij")
P = np.array([0.3, 0.2, 0.1, 0.1, 0.08, 0.07, 0.05, 0.04, 0.03, 0.03])


def _data(n=20_000, seed=7):
    rng = np.random.default_rng(seed)
    return pd.Series(np.asarray(CATS, dtype=object)[rng.choice(10, size=n, p=P)], name="letter")


def _empirical(x):
    return x.value_counts(normalize=True).reindex(CATS).fillna(0).to_numpy()


# -- partitions in every form give one channel ------------------------------------------------


PARTITION = [["a", "b", "c"], ["d", "e", "f", "g", "h"], ["i", "j"]]
LABELS = np.repeat([0, 1, 2], [3, 5, 2])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"blocks": PARTITION},
        {
            "blocks": {
                c: lab
                for c, lab in zip(
                    CATS, ["x", "x", "x", "y", "y", "y", "y", "y", "z", "z"], strict=True
                )
            }
        },
        {"blocks": pd.Series(LABELS, index=CATS)},
        {"blocks": lambda c: 0 if c <= "c" else (1 if c <= "h" else 2)},
        {"blocks": LABELS},
        {"blocks": list(LABELS)},
    ],
    ids=["partition", "dict", "series", "callable", "array", "list"],
)
def test_every_form_of_blocks_gives_the_same_partition(kwargs):
    bhr = BlockHadamardResponse(1.0, categories=CATS, **kwargs).fit(CATS)
    assert_array_equal(bhr.channel_.labels, LABELS)
    assert [list(b) for b in bhr.blocks_] == PARTITION
    assert bhr.privacy_ == BlockStructuredLDP(LABELS, 1.0)


def test_contiguous_blocks_by_count_and_size():
    by_count = BlockHadamardResponse(1.0, n_blocks=3, categories=CATS).fit(CATS)
    assert_array_equal(by_count.channel_.block_sizes, [4, 3, 3])
    by_size = BlockHadamardResponse(1.0, block_size=4, categories=CATS).fit(CATS)
    assert_array_equal(by_size.channel_.block_sizes, [4, 4, 2])
    assert [list(b) for b in by_size.blocks_] == [list("abcd"), list("efgh"), list("ij")]


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({}, ValueError, "exactly one of blocks, n_blocks or block_size"),
        ({"blocks": PARTITION, "n_blocks": 2}, ValueError, "exactly one"),
        ({"n_blocks": 11}, ValueError, "exceeds the 10 categories"),
        ({"n_blocks": 0}, ValueError, "n_blocks"),
        ({"block_size": 2.5}, TypeError, "block_size"),
        (
            {"blocks": [["a", "b"], ["b", "c", "d", "e", "f", "g", "h", "i", "j"]]},
            ValueError,
            "overlap.*'b'",
        ),
        ({"blocks": [["a", "b"], ["c"]]}, ValueError, "do not cover.*'d'"),
        (
            {"blocks": [["a", "zz"], list("bcdefghij")]},
            ValueError,
            r"^blocks \(block 0\) lists values that are not categories of column 0: 'zz'$",
        ),
        ({"blocks": {"a": 0}}, ValueError, "no block to 9 categories.*'b'"),
        ({"blocks": [0, 1, 2]}, ValueError, "one label per category"),
        ({"blocks": "abc"}, TypeError, "blocks must be"),
        ({"blocks": [["a", "b"], []] + [list("cdefghij")]}, ValueError, "empty"),
    ],
)
def test_partitions_that_do_not_fit_the_domain_are_rejected(kwargs, error, match):
    with pytest.raises(error, match=match):
        BlockHadamardResponse(1.0, categories=CATS, **kwargs).fit(CATS)


def test_grid_blocks_for_the_gowalla_grid():
    labels = grid_blocks((125, 350), (25, 70))
    assert labels.shape == (43_750,)
    assert np.all(np.bincount(labels) == 25)
    cells = labels.reshape(125, 350)
    assert cells[0, 0] == cells[4, 4] != cells[5, 0]
    bhr = BlockHadamardResponse(
        1.0, blocks=grid_blocks((125, 350), (5, 7)), categories=range(43_750)
    ).fit([0, 1])
    assert bhr.channel_.n_blocks == 35 and set(bhr.channel_.block_outputs.tolist()) == {2048}
    # Rows 5 -> parts of 3 and 2, columns 7 -> parts of 3, 2 and 2.
    assert_array_equal(np.bincount(grid_blocks((5, 7), (2, 3))), [9, 6, 6, 6, 4, 4])


@pytest.mark.parametrize(
    "shape,n_blocks,match",
    [((5, 7), (6, 1), "cannot cut"), ((5,), (1, 1), "pair"), ((5, 7), (0, 1), "n_blocks")],
)
def test_grid_blocks_errors(shape, n_blocks, match):
    with pytest.raises(ValueError, match=match):
        grid_blocks(shape, n_blocks)


# -- sensitive sets ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sensitive",
    [["c", "a", "h"], lambda c: c in {"a", "c", "h"}, np.array(["h", "a", "c"], dtype=object)],
)
def test_sensitive_forms(sensitive):
    hl = HighLowHadamardResponse(1.0, sensitive=sensitive, categories=CATS).fit(CATS)
    assert list(hl.sensitive_) == ["a", "c", "h"]
    assert hl.privacy_ == HighLowLDP([0, 2, 7], 1.0)
    assert hl.channel_.n_outputs == 4 + 7


@pytest.mark.parametrize(
    "sensitive,error,match",
    [
        (None, ValueError, "sensitive is required"),
        ([], ValueError, "no category of column 0 is sensitive"),
        (lambda c: False, ValueError, "no category"),
        (["a", "zz"], ValueError, "^sensitive lists values that are not categories.*: 'zz'$"),
        (["a", "a"], ValueError, r"^sensitive contains duplicates: 'a' \(column 0\)$"),
        ("abc", TypeError, "list of categories or a callable"),
    ],
)
def test_sensitive_sets_that_do_not_fit_are_rejected(sensitive, error, match):
    with pytest.raises(error, match=match):
        HighLowHadamardResponse(1.0, sensitive=sensitive, categories=CATS).fit(CATS)


def test_sensitive_per_column():
    X = pd.DataFrame({"u": ["a", "b"], "v": ["x", "y"]})
    hl = HighLowHadamardResponse(
        1.0, sensitive=[["a"], ["x", "y"]], categories=[["a", "b", "c"], ["x", "y", "z"]]
    ).fit(X)
    assert [list(s) for s in hl.sensitive_] == [["a"], ["x", "y"]]
    assert isinstance(hl.privacy_, SequentialComposition) and hl.privacy_.epsilon == 2.0


# -- binary ------------------------------------------------------------------------------------


def test_binary_privatizer_states_its_guarantee_and_estimates():
    rng = np.random.default_rng(3)
    x = np.where(rng.random(50_000) < 0.2, "yes", "no")
    brr = BinaryRandomizedResponse(
        epsilon_01=math.inf, epsilon_10=1.0, categories=["no", "yes"], random_state=0
    )
    est = EmpiricalEstimator().fit(brr.fit_transform(x))
    assert brr.privacy_ == BinaryContextAwareLDP(math.inf, 1.0)
    assert brr.bits_per_report == 1
    se = est.distribution_std_[0]
    assert abs(est.distribution_[0] - np.mean(x == "no")) < 5 * se


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"epsilon_01": -1.0, "epsilon_10": 1.0}, "epsilon_01"),
        ({"epsilon_01": 1.0, "epsilon_10": float("nan")}, "epsilon_10"),
    ],
)
def test_binary_bad_budgets(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BinaryRandomizedResponse(categories=["n", "y"], **kwargs).fit(["n"])


def test_binary_needs_two_categories():
    with pytest.raises(ValueError, match="exactly 2 categories"):
        BinaryRandomizedResponse(epsilon_01=1.0, epsilon_10=1.0, categories=["a", "b", "c"]).fit(
            ["a"]
        )


# -- estimators through the channel interface ----------------------------------------------------


@pytest.mark.parametrize(
    "privatizer",
    [
        HadamardResponse(1.0, categories=CATS, random_state=0),
        BlockHadamardResponse(1.0, blocks=PARTITION, categories=CATS, random_state=0),
        HighLowHadamardResponse(1.0, sensitive=["b", "e"], categories=CATS, random_state=0),
    ],
    ids=lambda p: type(p).__name__,
)
@pytest.mark.parametrize(
    "estimator",
    [EmpiricalEstimator(), ProjectedEstimator(), EMEstimator()],
    ids=lambda e: type(e).__name__,
)
def test_pipelines_estimate_within_tolerance(privatizer, estimator):
    x = _data()
    pipe = Pipeline([("privatize", clone(privatizer)), ("estimate", clone(estimator))]).fit(x)
    est = pipe[-1]
    emp = _empirical(x)
    sd = np.sqrt(pipe[0].channel_.variance(emp, x.shape[0]))
    assert total_variation(est.distribution_, emp) <= 0.5 * 5 * sd.sum()
    if isinstance(estimator, EMEstimator):
        assert est.converged_ and np.all(np.diff(est.log_likelihoods_) >= -1e-12)
        proba = est.predict_proba(pipe[0].transform(x[:50]))
        assert proba.shape == (50, 10)
        assert_allclose(proba.sum(axis=1), 1.0)


def test_grid_search_over_block_count():
    x = _data(6000)
    pipe = Pipeline(
        [
            ("privatize", BlockHadamardResponse(1.0, n_blocks=1, categories=CATS, random_state=0)),
            ("estimate", ProjectedEstimator()),
        ]
    )
    search = GridSearchCV(
        pipe, {"privatize__n_blocks": [1, 2, 5]}, scoring=make_distribution_scorer("tv"), cv=3
    )
    search.fit(x)
    assert search.best_params_["privatize__n_blocks"] in (1, 2, 5)
    assert len(search.cv_results_["mean_test_score"]) == 3


def test_reproducible_and_picklable():
    x = _data(500)
    bhr = BlockHadamardResponse(1.0, blocks=PARTITION, categories=CATS, random_state=3)
    a = bhr.fit_transform(x)
    b = clone(bhr).fit_transform(x)
    assert_array_equal(np.asarray(a), np.asarray(b))
    again = pickle.loads(pickle.dumps(bhr))
    assert again.channel_ == bhr.channel_
    # a fitted copy never resumes (or restarts) the noise stream: fresh noise, with a warning;
    # setting the seed again replays the sequence from its start (tests/privatizers/test_seeds.py)
    with pytest.warns(UserWarning, match="restored from a pickle"):
        assert not np.array_equal(np.asarray(again.transform(x)), np.asarray(a))
    again.set_params(random_state=3).fit(x)
    assert_array_equal(np.asarray(again.transform(x)), np.asarray(a))


def test_inferred_domain_warns():
    with pytest.warns(PrivacyLeakWarning):
        HadamardResponse(1.0).fit(["a", "b", "a"])


def test_hadamard_response_guarantee():
    hr = HadamardResponse(0.5, categories=CATS).fit(CATS)
    assert hr.privacy_ == LDP(0.5)
    assert hr.bits_per_report == 4

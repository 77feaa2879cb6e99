"""CountMeanSketch: open and known alphabets, both variants, the sketch decoder, bad input."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skldp import CandidateEstimator, CountMeanSketch, EmpiricalEstimator, HashedRR
from skldp.channels import (
    CountMeanSketchChannel,
    HadamardCountMeanSketchChannel,
    OpenCountMeanSketchChannel,
    OpenHadamardCountMeanSketchChannel,
)
from skldp.exceptions import InvalidParameterError

VALUES = np.array(["cat"] * 3000 + ["dog"] * 2000 + ["emu"] * 1000, dtype=object)
CANDIDATES = ["cat", "dog", "emu", "yak", "gnu"]


@pytest.mark.parametrize(
    ("variant", "open_kind", "width_bits"),
    [("cms", OpenCountMeanSketchChannel, 32 + 3), ("hcms", OpenHadamardCountMeanSketchChannel, 1)],
)
def test_open_alphabet_reports_and_any_candidate_set(variant, open_kind, width_bits):
    cms = CountMeanSketch(4.0, n_hashes=8, width=32, variant=variant, random_state=0)
    reports = cms.fit_transform(VALUES)
    assert isinstance(cms.channel_, open_kind)
    assert reports.shape == (6000, width_bits)
    truth = np.array([0.5, 1 / 3, 1 / 6, 0.0, 0.0])
    for method in ("count_mean", "least_squares", "projected", "em"):
        est = CandidateEstimator(candidates=CANDIDATES, method=method).fit(reports)
        assert_allclose(est.distribution_, truth, atol=0.06), method
    # the sketch decoder is the channel's, on the restricted channel; any candidate set works
    est = CandidateEstimator(candidates=["emu", "cat"], method="count_mean").fit(reports)
    fin = cms.channel_.restrict(["emu", "cat"])
    assert_allclose(est.distribution_, fin.count_mean(fin.statistics(reports), 6000))


@pytest.mark.parametrize(
    ("variant", "kind"),
    [("cms", CountMeanSketchChannel), ("hcms", HadamardCountMeanSketchChannel)],
)
def test_known_domain_is_a_finite_channel(variant, kind):
    cats = list(range(6))
    cms = CountMeanSketch(
        3.0, n_hashes=4, width=8, variant=variant, categories=[cats], random_state=1
    )
    x = np.repeat([0, 1, 2, 3], [3000, 2000, 1000, 0])
    reports = cms.fit_transform(x.reshape(-1, 1))
    assert isinstance(cms.channel_, kind) and cms.channel_.n_inputs == 6
    p = EmpiricalEstimator().fit(reports).distribution_
    assert_allclose(p, [0.5, 1 / 3, 1 / 6, 0, 0, 0], atol=0.06)
    cm = CandidateEstimator(method="count_mean").fit(reports).distribution_
    assert_allclose(cm, cms.channel_.count_mean(cms.channel_.statistics(reports), 6000))


def test_same_seed_same_reports_and_hash_seed_changes_them():
    a = CountMeanSketch(1.0, n_hashes=4, width=16, random_state=3).fit_transform(VALUES[:50])
    b = CountMeanSketch(1.0, n_hashes=4, width=16, random_state=3).fit_transform(VALUES[:50])
    assert_array_equal(a, b)
    c1 = CountMeanSketch(1.0, n_hashes=4, width=16).fit(VALUES).channel_
    c2 = CountMeanSketch(1.0, n_hashes=4, width=16, hash_seed=1).fit(VALUES).channel_
    assert not np.array_equal(c1.candidate_buckets(CANDIDATES), c2.candidate_buckets(CANDIDATES))


def test_count_mean_refuses_other_reports():
    reports = HashedRR(1.0, n_buckets=4, random_state=0).fit_transform(VALUES[:100])
    with pytest.raises(ValueError, match="count_mean.*HashedRR|count-mean sketch"):
        CandidateEstimator(candidates=CANDIDATES, method="count_mean").fit(reports)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"variant": "hcms", "width": 24}, "power of two"),
        ({"variant": "sketch"}, "variant"),
        ({"width": 1}, "width"),
        ({"n_hashes": 0}, "n_hashes"),
    ],
)
def test_bad_parameters(params, match):
    with pytest.raises(InvalidParameterError, match=match):
        CountMeanSketch(1.0, **params).fit(VALUES[:10])

"""Smoke tests of the paper reproductions in ``examples/``: each runs in its ``--quick`` mode,
writes its figure to a temporary folder, and its output must show the paper's claim.

Figures 1-3 of Kairouz et al. (2016), Figures 5-8 (and the MSE versions 12-13) and Table 1 of
Murakami and Kawamoto (2019)
and the compressive experiments of Xiong et al. (2022). The utility-optimized scripts read the
data tables bundled with skldp (``skldp.datasets``), the same files as the shared data folder.
"""

import importlib.util
import math
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _one_thread():
    """As the scripts' ``__main__`` does: small dense solves only contend for threads."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


def test_kairouz_fig1_projection_beats_the_other_rappor_decoders(tmp_path):
    out = tmp_path / "fig1.png"
    ks, epsilons, rr_gap, ra_gap = _load("plot_decoders_kairouz2016_fig1").main(
        ["--quick", "--out", str(out)]
    )
    assert out.stat().st_size > 10_000
    assert ks == [8, 32] and epsilons == [1.0, 4.0]
    # Projected minus the best of the standard and normalized RAPPOR decoders, mean l1 over
    # 10 trials of n = 2000 on a geometric law: the projection wins at k = 32 (gaps about
    # -0.14 and -0.03). For k-RR the three decoders are within noise of each other.
    assert np.all(ra_gap[1] < 0)
    assert np.all(np.abs(rr_gap) < 0.02)


def test_kairouz_fig2_simulated_winners_follow_the_break_even(tmp_path):
    out = tmp_path / "fig2.png"
    table = _load("plot_crossover_kairouz2016_fig2").main(["--quick", "--out", str(out)])
    assert out.stat().st_size > 10_000
    assert len(table) == 9
    for k, eps, mc_rr, mc_ra, ex_rr, ex_ra in table:
        # 20 trials per cell: the simulated mean squared errors are near the exact risks ...
        assert 0.7 < mc_rr / ex_rr < 1.4 and 0.7 < mc_ra / ex_ra < 1.4, (k, eps)
        # ... and the better mechanism is the one Prop. 5 predicts.
        assert (mc_rr < mc_ra) == (ex_rr < ex_ra), (k, eps)
    winners = {(k, eps): mc_rr < mc_ra for k, eps, mc_rr, mc_ra, _, _ in table}
    assert winners[(4, 0.5)] and not winners[(64, 0.5)] and winners[(64, 4.0)]


@pytest.mark.filterwarnings("ignore:.*reported candidates:UserWarning")
def test_kairouz_fig3_closed_alphabet_o_rr_is_best_on_the_geometric_law(tmp_path):
    out = tmp_path / "fig3.png"
    epsilons, results = _load("plot_open_alphabet_kairouz2016_fig3").main(
        ["--quick", "--out", str(out)]
    )
    assert out.stat().st_size > 10_000
    assert epsilons == [1.0, 4.0]
    res = results["geometric (mean S/5)"]
    names = ("O-RR closed", "O-RR", "O-RAPPOR", "k-RR", "RAPPOR")
    med = {name: np.median(np.array(res[name]), axis=1) for name in names}
    # Sec. 5.4: the closed-alphabet O-RR meets or beats every other mechanism (3 repetitions,
    # S = 256, n = 3000), and every private estimate is worse than no privacy.
    for name in ("O-RAPPOR", "k-RR", "RAPPOR"):
        assert np.all(med["O-RR closed"] <= med[name]), name
    assert np.all(med["O-RR closed"] > res["non-private"])


def test_uldp_fig5_utility_optimized_mechanisms_and_estimators(capsys, tmp_path):
    out = tmp_path / "fig5.png"
    results = _load("plot_uldp_figure5").main(["--quick", "--no-progress", "--plot", str(out)])
    text = capsys.readouterr().out
    assert out.stat().st_size > 10_000
    assert "paper: emp+thr and EM far better than emp" in text
    assert "the UCI Adult table" in text and "|X| = 400" in text  # which table stands in, and why
    census = results["census"]
    mean, nonpriv = census["mean"], census["no_privacy"]
    assert len(census["table"].categories) == 224 and len(census["sensitive"]) == 64
    # 3 epsilons x 4 mechanisms x 3 estimators x 1 realization, then the no-privacy row
    assert len(census["results"]) == 37 and census["results"]["privatizer"].iloc[-1] == "no privacy"
    # the printed ratios are the run's own
    for eps in (0.1, 1.0):
        shown = re.search(rf"^    {eps:<6.3g} .*?([\d.]+)x$", text, flags=re.M).group(1)
        ratio = min(mean[(m, "EM", eps)] for m in ("RR", "RAPPOR")) / min(
            mean[(m, "EM", eps)] for m in ("uRR", "uRAP")
        )
        assert float(shown) == pytest.approx(ratio, abs=0.05)
    for eps in (0.1, 1.0, math.log(224)):
        best_ldp = min(mean[(m, "EM", eps)] for m in ("RR", "RAPPOR"))
        best_uldp = min(mean[(m, "EM", eps)] for m in ("uRR", "uRAP"))
        assert best_uldp < best_ldp / 1.5, eps
    # At eps = 0.1 every mechanism's emp is far worse than emp+thr and EM (ours: 13x to 120x).
    for m in ("RR", "RAPPOR", "uRR", "uRAP"):
        assert mean[(m, "emp", 0.1)] > 10 * max(mean[(m, "emp+thr", 0.1)], mean[(m, "EM", 0.1)]), m
    # At eps = ln|X| every EM estimate is within a few times the sampling error of no privacy.
    assert nonpriv < mean[("uRR", "EM", math.log(224))] < 2 * nonpriv


def test_uldp_fig6_regimes_and_thresholds(capsys, tmp_path):
    out = tmp_path / "fig6.png"
    results = _load("plot_uldp_figure6").main(["--quick", "--no-progress", "--plot", str(out)])
    text = capsys.readouterr().out
    assert out.stat().st_size > 10_000
    assert "paper: uRR ~ no privacy while |X_S| < 100, uRAP while |X_S| < 20" in text
    assert "the UCI Adult table" in text
    found = re.findall(r"(uRR|uRAP)\s+EM: (\w+), emp: (\w+)", text)
    assert [m for m, _, _ in found] == ["uRR", "uRAP"]
    out6 = results["census"]["mean"]
    sizes, ln_k = results["census"]["sizes"], math.log(224)
    assert sizes == [1, 10, 50, 224]
    # one random sensitive set per (epsilon, size): 2 x 4 x 2 mechanisms x 2 estimators
    uldp = results["census"]["uldp"]
    assert len(uldp) == 32 and sorted(set(uldp["size"])) == sizes
    # At eps = ln|X| both stay within 10% of no privacy with 1 or 10 sensitive cells (there
    # their order is within that noise: one draw here), and uRR is the better one once more
    # values are sensitive; uRAP is the better one at eps = 0.1 once several are (EM).
    nonpriv = results["census"]["no_privacy"]
    for s in (1, 10):
        for m in ("uRR", "uRAP"):
            assert out6[(m, "EM", ln_k, s)] < 1.1 * nonpriv, (m, s)
    for s in (50, 224):
        assert out6[("uRR", "EM", ln_k, s)] < out6[("uRAP", "EM", ln_k, s)], s
    for s in (10, 50):
        assert out6[("uRAP", "EM", 0.1, s)] < out6[("uRR", "EM", 0.1, s)], s
    # Both degrade as the sensitive set grows.
    for m in ("uRR", "uRAP"):
        assert out6[(m, "EM", ln_k, 1)] < out6[(m, "EM", ln_k, 224)]


def test_uldp_pum_table1_theorem1_and_background_order(capsys):
    means = _load("uldp_pum_table1").main(["--quick"])
    text = capsys.readouterr().out
    assert text.count("holds") == 6 and "VIOLATED" not in text
    for base in ("uRR", "uRAP"):
        rows = {s: means[(base, s)] for s in ("I", "II", "III")}  # (l1, first term, second term)
        for l1, first, second in rows.values():
            assert l1 <= first + second + 1e-12  # Theorem 1
        # The better the background knowledge, the smaller the error: (III) < (II) < (I), with
        # the same first term and no second term for the true distributions (III).
        assert rows["III"][0] < rows["II"][0] < rows["I"][0]
        assert rows["I"][1] == rows["II"][1] == rows["III"][1]
        assert rows["III"][2] == 0 < rows["II"][2] < rows["I"][2]


def test_uldp_census_attributes_stand_in():
    common = _load("uldp_common")
    base, base_sensitive = common.census_attributes(4)
    adult, _ = common.load_census()
    sizes = []
    for m in range(4, 10):
        table, sensitive = common.census_attributes(m)
        counts = table.counts
        sizes.append((len(counts), len(sensitive)))
        # the same 48,842 people; summing out the added flags gives back the base table
        assert counts.sum() == 48_842
        assert np.array_equal(np.bincount(np.arange(counts.size) >> (m - 4), counts), base.counts)
        # the divorced or separated people, as in the 224-cell Adult table of Figs. 5-6
        assert counts[sensitive].sum() == adult.counts.to_numpy()[adult.suggested_sensitive].sum()
        assert np.array_equal(sensitive >> (m - 4), np.repeat(base_sensitive, 2 ** (m - 4)))
    assert sizes == [(224 * 2**i, 64 * 2**i) for i in range(6)]
    with pytest.raises(ValueError, match="n_attributes must be in 4..9"):
        common.census_attributes(10)


def test_uldp_fig7_attributes_utility_optimized_stay_better(capsys, tmp_path):
    out = tmp_path / "fig7.png"
    results = _load("plot_uldp_figure7").main(["--quick", "--no-progress", "--plot", str(out)])
    text = capsys.readouterr().out
    assert out.stat().st_size > 10_000
    assert "paper: the utility-optimized mechanisms stay better" in text
    assert "drawn with replacement" in text and "|X| = 400 to 12,800" in text
    res = results["results"]
    # 2 attribute counts x (4 mechanisms x 3 epsilons x 2 estimators x 1 realization + no privacy)
    assert len(res) == 50 and results["attributes"] == [4, 5]
    assert set(res["n_samples"]) == {24_000}
    assert np.allclose(res["mse"], res["l2"] ** 2)
    tv, _ = results["means"]["tv"]
    mse, _ = results["means"]["mse"]
    # the printed check is the run's own
    wins = re.search(r"tv: (\d+) of (\d+) \(epsilon, attributes\) cells", text).groups()
    assert wins == ("6", "6")
    for eps in results["epsilons"]:
        for a in (4, 5):
            for mean in (tv, mse):
                ldp = min(mean[(m, "EM", eps, a)] for m in ("RR", "RAPPOR"))
                uldp = min(mean[(m, "EM", eps, a)] for m in ("uRR", "uRAP"))
                assert uldp < ldp / 1.3, (eps, a)  # ours: 1.6x to 4.4x (TV), 2.2x to 12x (MSE)
    # At eps = 0.1 uRAP (EM) is far below the EM worst case of 1, and below the three others;
    # RR and RAPPOR are near it already at 5 attributes (about 0.8 and 0.95 here).
    assert tv[("uRAP", "EM", 0.1, 5)] < 0.4
    for m in ("RR", "RAPPOR", "uRR"):
        assert tv[(m, "EM", 0.1, 5)] > 1.5 * tv[("uRAP", "EM", 0.1, 5)], m
    for m in ("RR", "RAPPOR"):
        assert tv[(m, "EM", 0.1, 5)] > 0.7, m


def test_uldp_fig8_personalized_settings_coincide_at_small_epsilon(capsys, tmp_path):
    out = tmp_path / "fig8.png"
    results = _load("plot_uldp_figure8").main(["--quick", "--plot", str(out)])
    text = capsys.readouterr().out
    assert out.stat().st_size > 10_000
    assert "paper: for eps < 1 the three settings are almost the same" in text
    assert re.search(r"uRR .* -> holds", text)
    res, mean = results["results"], results["means"]
    assert len(res) == 9 and results["epsilons"][0] == 0.1  # 3 epsilons x 3 settings
    tv = {
        (s, e): mean[("tv", "uRR", s, e)] for s in ("I", "II", "III") for e in results["epsilons"]
    }
    small, large = results["epsilons"][0], results["epsilons"][-1]
    # below epsilon 1 the background knowledge hardly matters (ours: 0.4% apart at 0.1) ...
    assert max(tv[(s, small)] for s in ("I", "II", "III")) < 1.05 * tv[("III", small)]
    # ... at ln|X| it does: (III) < (II) < (I), with (I) over 10% above (III) (ours: 17%)
    assert tv[("III", large)] < tv[("II", large)] < tv[("I", large)]
    assert tv[("I", large)] > 1.1 * tv[("III", large)]
    # the three settings share r (one EM per report set): they differ only where bots hide
    assert np.isclose(
        mean[("mse", "uRR", "II", small)], mean[("mse", "uRR", "III", small)], rtol=0.01
    )


def test_compressive_experiments_claims(capsys, tmp_path):
    out = tmp_path / "compressive.png"
    args = ["--quick", "--runs", "1", "--output", str(out)]
    assert _load("compressive_experiments").main(args) == 0
    text = capsys.readouterr().out
    assert out.stat().st_size > 10_000
    verdicts = dict(
        (claim, ok == "holds")
        for ok, claim in re.findall(r"\[(holds|FAILS)\] (\[k=2000\] .*)", text)
    )
    assert len(verdicts) == 9
    # In quick mode (k = 2000, m = 250, n in {5e4, 2e5}, one run) these claims hold. One-bit HR
    # within 1.5x of one-bit CP on Unif(25) is left out: m = 250 is small for s = 25, and with
    # one run it holds for some seeds and not others.
    expected = [
        "Unif(10): compressive privatization well below HR with the simplex projection",
        "Unif(25): compressive privatization well below HR with the simplex projection",
        "Unif(10): one-bit HR + sparse projection performs almost the same as one-bit CP",
        "Unif(10): HR with the sparse projection beats HR with the simplex projection",
        "Unif(25): HR with the sparse projection beats HR with the simplex projection",
        "symmetric CP sends fewer bits than HR",
        "Geo(0.6) (s = 3): the error of s-sparse recovery stays above the tail mass",
        "Geo(0.8) (s = 2): the error of s-sparse recovery stays above the tail mass",
    ]
    for claim in expected:
        (ok,) = [v for c, v in verdicts.items() if claim in c]
        assert ok, claim
    rows = re.findall(r"^one-bit CP\s+1\s+([\d.]+)\s+([\d.]+)$", text, flags=re.M)
    assert len(rows) == 4  # Unif(10), Unif(25), Geo(0.6), Geo(0.8)
    assert float(rows[0][1]) < 0.1  # Unif(10) at n = 2e5

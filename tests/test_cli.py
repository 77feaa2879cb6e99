"""End-to-end tests of the ``skldp`` command on temporary files, good input and bad."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skldp.cli import build_parser, main
from tests.cli_support import run


@pytest.fixture
def people(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "id": np.arange(4000),
            "city": rng.choice(["paris", "lyon", "nice"], 4000, p=[0.5, 0.3, 0.2]),
        }
    )
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    return path, frame


#: The city column through k-RR at epsilon 2 over the three cities (krr is the default).
CITY_KRR = ["-c", "city", "-m", "krr", "--epsilon", "2", "--categories", "paris,lyon,nice"]


def test_privatize_then_estimate_round_trip(people, tmp_path, capsys):
    path, frame = people
    reports = tmp_path / "reports.csv"
    code, _, err = run(["privatize", path, *CITY_KRR, "--seed", "3", "-o", reports], capsys)
    assert code == 0 and "LDP(epsilon=2)" in err
    assert "WARNING: --seed is for test data only" in err and "reveals who changed" in err
    written = pd.read_csv(reports)
    assert list(written.columns) == ["report"] and len(written) == 4000
    assert written["report"].between(0, 2).all()
    meta = json.loads((tmp_path / "reports.csv.json").read_text())
    assert meta["mechanism"] == "krr" and meta["params"] == {"epsilon": 2.0}
    assert meta["categories"] == ["paris", "lyon", "nice"] and meta["n_reports"] == 4000
    assert "random_state" not in meta["params"] and "seed" not in json.dumps(meta)
    # rows stay aligned: at epsilon 2 with k = 3, about e^2 / (e^2 + 2) = 79% of reports are true
    truth = frame["city"].map({"paris": 0, "lyon": 1, "nice": 2})
    kept = (written["report"] == truth).mean()
    assert abs(kept - np.exp(2) / (np.exp(2) + 2)) < 5 * np.sqrt(0.79 * 0.21 / 4000)
    # the same seed replays the same noise: the risk the warning names
    again = tmp_path / "again.csv"
    run(["privatize", path, *CITY_KRR, "--seed", "3", "-o", again], capsys)
    assert pd.read_csv(again).equals(written)

    out_csv = tmp_path / "dist.csv"
    for estimator in ["projected", "empirical", "em"]:
        code, _, err = run(["estimate", reports, "-e", estimator, "-o", out_csv, "--force"], capsys)
        assert code == 0 and "4000 reports" in err
        dist = pd.read_csv(out_csv)
        assert dist["category"].tolist() == ["paris", "lyon", "nice"]
        assert dist["probability"].sum() == pytest.approx(1.0)
        empirical = frame["city"].value_counts(normalize=True)[dist["category"]].to_numpy()
        assert np.all(np.abs(dist["probability"].to_numpy() - empirical) < 0.05)
        # every estimator writes its 95% intervals (issue 18; EM had none before)
        assert np.all((dist["lower"] >= 0) & (dist["lower"] < dist["upper"]) & (dist["upper"] <= 1))
    # standard output when no -o is given
    code, out, _ = run(["estimate", reports], capsys)
    assert code == 0 and out.splitlines()[0] == "category,probability,std,lower,upper,interval"


def test_parquet_categories_file_and_params(people, tmp_path, capsys):
    _, frame = people
    pq = tmp_path / "people.parquet"
    frame.to_parquet(pq)
    cats = tmp_path / "cats.txt"
    cats.write_text("paris\nlyon\n\nnice\nrome\n")
    reports = tmp_path / "r.parquet"
    meta = tmp_path / "meta.json"
    code, _, _ = run(
        [
            "privatize",
            pq,
            "-c",
            "city",
            "--categories-file",
            cats,
            "-p",
            "epsilon=0.5",
            "-o",
            reports,
            "--metadata",
            meta,
        ],
        capsys,
    )
    assert code == 0
    assert json.loads(meta.read_text())["categories"] == ["paris", "lyon", "nice", "rome"]
    code, out, _ = run(
        ["estimate", reports, "--metadata", meta, "-e", "em", "-p", "max_iter=5000"], capsys
    )
    assert code == 0
    assert pd.read_csv(pd.io.common.StringIO(out))["category"].tolist() == [
        "paris",
        "lyon",
        "nice",
        "rome",
    ]


def test_infer_categories_warns(people, tmp_path, capsys):
    path, _ = people
    code, _, err = run(
        ["privatize", path, "-c", "city", "--infer-categories", "-o", tmp_path / "r.csv"], capsys
    )
    assert code == 0 and "reveals the values" in err
    assert json.loads((tmp_path / "r.csv.json").read_text())["categories"] == [
        "lyon",
        "nice",
        "paris",
    ]


def test_mechanisms_lists_guarantees(capsys):
    code, out, _ = run(["mechanisms"], capsys)
    assert code == 0 and "krr" in out and "epsilon-LDP" in out
    code, out, _ = run(["mechanisms", "--all"], capsys)
    assert code == 0
    for name in [
        "block-hadamard",
        "high-low-hadamard",
        "urr",
        "rappor",
        "hashed-rr",
        "one-bit-compressive",
        "personalized",
        "one-bit-hadamard",
    ]:
        assert name in out
    code, out, _ = run(["mechanisms"], capsys)
    row = next(
        line
        for line in out.splitlines()
        if line.split()[:2] == ["personalized", "PersonalizedULDP"]
    )
    assert row.rstrip().endswith("tags, a tag column")


def test_demo_prints_the_table_and_writes_a_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    plot = tmp_path / "demo.png"
    code, out, _ = run(["demo", "--repeats", "2", "--plot", plot, "--no-progress"], capsys)
    assert code == 0
    assert "k = 43750 cells, n = 143296 people" in out
    assert "TV error (95% CI)" in out and "k-RR" in out and "LDP" in out
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _bad_cases(tmp_path, people_path):
    good = ["--categories", "paris,lyon,nice", "-o", tmp_path / "x.csv"]
    garbage = tmp_path / "garbage.parquet"
    garbage.write_bytes(b"not a parquet file")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    holes = tmp_path / "holes.csv"
    holes.write_text("id,city\n1,paris\n2,\n3,lyon\n")
    return [
        (["privatize", tmp_path / "missing.csv", "-c", "city", *good], "does not exist"),
        (["privatize", garbage, "-c", "city", *good], "cannot read input file"),
        (["privatize", empty, "-c", "city", *good], "cannot read input file"),
        (["privatize", tmp_path / "people.xlsx", "-c", "city", *good], "unknown file type"),
        (["privatize", people_path, "-c", "town", *good], "has no column 'town'; its columns are"),
        (
            ["privatize", holes, "-c", "city", *good],
            r"has 1 missing value \(data row 2\); remove or fill it first",
        ),
        (
            ["privatize", people_path, "-c", "city", "-o", tmp_path / "x.csv"],
            "domain is public knowledge",
        ),
        (
            [
                "privatize",
                people_path,
                "-c",
                "city",
                "--categories",
                "paris,lyon",
                "-o",
                tmp_path / "x.csv",
            ],
            "values outside the categories: 'nice'",
        ),
        (
            [
                "privatize",
                people_path,
                "-c",
                "city",
                "--categories",
                "paris,paris",
                "-o",
                tmp_path / "x.csv",
            ],
            "duplicates",
        ),
        (
            [
                "privatize",
                people_path,
                "-c",
                "city",
                "--categories",
                "paris",
                "-o",
                tmp_path / "x.csv",
            ],
            "at least 2",
        ),
        (
            [
                "privatize",
                people_path,
                "-c",
                "city",
                "--categories",
                "a,b",
                "--infer-categories",
                "-o",
                tmp_path / "x.csv",
            ],
            "give the domain once",
        ),
        (
            ["privatize", people_path, "-c", "city", "-m", "nonesuch", *good],
            "unknown mechanism 'nonesuch'",
        ),
        (
            ["privatize", people_path, "-c", "city", "-p", "theta=2", *good],
            "has no parameter 'theta'",
        ),
        (
            ["privatize", people_path, "-c", "city", "-p", "epsilon=abc", *good],
            "epsilon must be a positive finite number",
        ),
        (["privatize", people_path, "-c", "city", "-p", "epsilon", *good], "key=value"),
        (
            ["privatize", people_path, "-c", "city", "-p", "random_state=1", *good],
            "set random_state with its own option",
        ),
        (
            [
                "privatize",
                people_path,
                "-c",
                "city",
                "--categories",
                "a,b",
                "-o",
                tmp_path / "x.xlsx",
            ],
            "unknown file type",
        ),
        (
            [
                "privatize",
                people_path,
                "-c",
                "city",
                *good[:2],
                "-o",
                tmp_path / "no" / "dir" / "x.csv",
            ],
            "cannot write",
        ),
        (["estimate", people_path], "metadata file .* does not exist"),
        # a missing reports file is named as such, not through its missing metadata file
        (
            ["estimate", tmp_path / "missing.parquet"],
            r"reports file '.*missing\.parquet' does not exist$",
        ),
        (["estimate", tmp_path / "missing.xlsx"], "reports file .* unknown file type"),
    ]


def test_bad_input_exits_2_with_a_message(people, tmp_path, capsys):
    path, _ = people
    for argv, message in _bad_cases(tmp_path, path):
        code, _, err = run(argv, capsys)
        assert code == 2, argv
        assert "Traceback" not in err and err.startswith(f"skldp {argv[0]}: error: "), err
        assert re.search(message, err), (argv, err)


def test_bad_reports_and_metadata(people, tmp_path, capsys):
    path, _ = people
    reports = tmp_path / "r.csv"
    assert (
        run(
            ["privatize", path, "-c", "city", "--categories", "paris,lyon,nice", "-o", reports],
            capsys,
        )[0]
        == 0
    )
    sidecar = tmp_path / "r.csv.json"
    meta = json.loads(sidecar.read_text())

    def check(message, *extra):
        code, _, err = run(["estimate", reports, *extra], capsys)
        assert code == 2 and message in err and "Traceback" not in err, err

    check("unknown estimator 'magic'", "-e", "magic")
    check("tol must be a non-negative number", "-e", "em", "-p", "tol=-1")
    frame = pd.read_csv(reports)
    frame.assign(report=frame["report"] + 5).to_csv(reports, index=False)
    check("outside")  # symbols the channel cannot emit
    frame.rename(columns={"report": "other"}).to_csv(reports, index=False)
    check(
        "no report columns: expected 'report', 'report_bits' or report_0, report_1, ...; the "
        "columns are ['other']"
    )
    frame.astype({"report": float}).assign(report=0.5).to_csv(reports, index=False)
    check("must be integers")
    frame.to_csv(reports, index=False)
    sidecar.write_text("{not json")
    check("is not valid JSON")
    sidecar.write_text(json.dumps({"format": "other"}))
    check("was not written by 'skldp privatize'")
    # an edited field no longer matches the checksum; a forged consistent sidecar is still
    # checked field by field
    from skldp.io import ReportFile

    sidecar.write_text(json.dumps({**meta, "mechanism": "nonesuch"}))
    check("was edited after 'skldp privatize' wrote it")
    forged = {**meta, "mechanism": "nonesuch"}
    sidecar.write_text(json.dumps({**forged, "checksum": ReportFile.checksum(forged)}))
    check("field 'mechanism': unknown mechanism 'nonesuch'")
    forged = {**meta, "params": {"epsilon": -1}}
    sidecar.write_text(json.dumps({**forged, "checksum": ReportFile.checksum(forged)}))
    check("epsilon must be a positive finite number")
    del meta["categories"]
    sidecar.write_text(json.dumps(meta))
    check("lacks the field 'categories'")


@pytest.mark.parametrize("command", [[], ["demo"], ["privatize"], ["estimate"], ["mechanisms"]])
def test_help_on_every_command(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*command, "--help"])
    assert exc.value.code == 0
    assert "usage: skldp" in capsys.readouterr().out


def test_argument_errors_exit_2(capsys):
    for argv in [
        [],
        ["frobnicate"],
        ["privatize", "x.csv"],
        ["demo", "--epsilon", "-1"],
        ["demo", "--repeats", "0"],
    ]:
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert "error" in capsys.readouterr().err
    # --jobs 0 is refused while parsing, before the demo prints its header
    for jobs in ["0", "two"]:
        with pytest.raises(SystemExit) as exc:
            main(["demo", "--jobs", jobs])
        out = capsys.readouterr()
        assert exc.value.code == 2 and out.out == ""
        assert (
            f"argument --jobs: jobs must be a non-zero integer (-1 for all cores); got '{jobs}'"
            in out.err
        )


def test_console_entry_point_in_a_subprocess(people, tmp_path):
    path, _ = people
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "skldp.cli",
            "privatize",
            str(path),
            "-c",
            "nope",
            "--categories",
            "a,b",
            "-o",
            str(tmp_path / "x.csv"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 2 and out.stderr.startswith("skldp privatize: error: input file")
    assert "Traceback" not in out.stderr
    assert build_parser().prog == "skldp"


def test_demo_with_an_unwritable_plot_exits_2(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    plot = tmp_path / "no such folder" / "demo.png"
    code, out, err = run(["demo", "--repeats", "1", "--plot", plot, "--no-progress"], capsys)
    assert code == 2
    assert "TV error (95% CI)" in out  # the table is printed before the plot fails
    assert err.startswith("skldp demo: error: cannot write the plot") and "Traceback" not in err


def test_installed_console_script(tmp_path):
    script = shutil.which("skldp", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the skldp console script is not installed beside this Python")
    out = subprocess.run(
        [script, "mechanisms"], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert "RandomizedResponse" in out.stdout and "HadamardResponse" in out.stdout


def test_candidates_are_only_for_open_alphabets(people, tmp_path, capsys):
    path, _ = people
    reports = tmp_path / "r.csv"
    assert (
        run(
            ["privatize", path, "-c", "city", "--categories", "paris,lyon,nice", "-o", reports],
            capsys,
        )[0]
        == 0
    )
    code, _, err = run(["estimate", reports, "--candidates", "paris,rome"], capsys)
    assert code == 2 and "--candidates is for reports over an open alphabet" in err


def test_open_alphabet_round_trip(people, tmp_path, capsys):
    from skldp._registry import MECHANISMS

    if not MECHANISMS["hashed-rr"].available:
        pytest.skip("HashedRR is not part of this build")
    path, frame = people
    reports = tmp_path / "h.csv"
    code, _, _ = run(
        [
            "privatize",
            path,
            "-c",
            "city",
            "-m",
            "hashed-rr",
            "--epsilon",
            "4",
            "-p",
            "n_buckets=8",
            "-p",
            "n_cohorts=4",
            "--seed",
            "0",
            "-o",
            reports,
        ],
        capsys,
    )
    assert code == 0 and json.loads((tmp_path / "h.csv.json").read_text())["categories"] is None
    code, _, err = run(["estimate", reports], capsys)
    assert code == 2 and "--candidates" in err
    code, out, _ = run(["estimate", reports, "--candidates", "paris,lyon,nice,rome"], capsys)
    dist = pd.read_csv(pd.io.common.StringIO(out)).set_index("category")["probability"]
    truth = frame["city"].value_counts(normalize=True)
    assert code == 0 and abs(dist["paris"] - truth["paris"]) < 0.05 and dist["rome"] < 0.05


def test_parquet_missing_values_are_reported_not_stringified(tmp_path, capsys):
    path = tmp_path / "p.parquet"
    pd.DataFrame({"city": ["paris", None, "lyon"], "n": [1, 2, 3]}).to_parquet(path)
    code, _, err = run(
        ["privatize", path, "-c", "city", "--categories", "paris,lyon", "-o", tmp_path / "r.csv"],
        capsys,
    )
    assert code == 2 and "has 1 missing value (data row 2)" in err
    code, _, err = run(
        ["privatize", path, "-c", "n", "--categories", "1,2,3", "-o", tmp_path / "r.csv"], capsys
    )
    assert code == 0  # integers are compared with the categories as text
    code, _, err = run(
        ["privatize", path, "-c", "town", "--categories", "1,2", "-o", tmp_path / "r2.csv"], capsys
    )
    assert code == 2 and "has no column 'town'; its columns are ['city', 'n']" in err


# ------------------------------------------------------------------------------------------------
# the personalized mechanism (PUM): a tag column beside the values


@pytest.fixture
def tagged(tmp_path):
    """4000 check-ins over a, b, c, d (p = .4, .3, .2, .1); about half of the b's are homes."""
    rng = np.random.default_rng(1)
    values = rng.choice(["a", "b", "c", "d"], 4000, p=[0.4, 0.3, 0.2, 0.1])
    tags = np.where((values == "b") & (rng.random(4000) < 0.5), "home", None)
    frame = pd.DataFrame({"place": values, "tag": tags})
    path = tmp_path / "visits.csv"
    frame.to_csv(path, index=False)  # untagged rows are empty cells
    return path, frame


_PUM = [
    "-m",
    "personalized",
    "--tag-column",
    "tag",
    "-p",
    'tags=["home","work"]',
    "-p",
    'sensitive=["d"]',
    "--epsilon",
    "2",
    "--categories",
    "a,b,c,d",
]


def test_personalized_round_trip(tagged, tmp_path, capsys):
    from skldp import PersonalizedEstimator, PersonalizedULDP

    path, frame = tagged
    reports = tmp_path / "r.csv"
    code, _, err = run(
        ["privatize", path, "-c", "place", *_PUM, "--seed", "0", "-o", reports], capsys
    )
    assert code == 0 and "PersonalizedULDP" in err
    meta = json.loads((tmp_path / "r.csv.json").read_text())
    assert meta["mechanism"] == "personalized" and meta["tag_column"] == "tag"
    assert meta["params"]["tags"] == ["home", "work"] and meta["params"]["sensitive"] == ["d"]
    symbols = pd.read_csv(reports)["report"].to_numpy()
    assert symbols.min() >= 0 and symbols.max() <= 5  # Z = a, b, c, d, bot:home, bot:work

    # The command line's estimate is the library's, on the same reports: the default
    # estimator (personalized, no background knowledge) and one with a background file
    # whose weights 3 (b) and 1 (c) become pi_home = (0, 0.75, 0.25, 0).
    pum = PersonalizedULDP(
        epsilon=2.0, sensitive=["d"], tags=["home", "work"], categories=["a", "b", "c", "d"]
    )
    pum.fit(np.array([["a", None]], dtype=object))
    out_csv = tmp_path / "p.csv"
    code, _, err = run(["estimate", reports, "-o", out_csv], capsys)
    assert code == 0 and "PersonalizedEstimator" in err
    mine = PersonalizedEstimator(channel=pum).fit(symbols.reshape(-1, 1))
    got = pd.read_csv(out_csv)
    assert got["category"].tolist() == ["a", "b", "c", "d"]
    np.testing.assert_allclose(got["probability"], mine.distribution_, rtol=1e-12, atol=1e-15)
    background = tmp_path / "bg.csv"
    background.write_text("category,home\nc,1\nb,3\n")
    code, _, _ = run(
        ["estimate", reports, "--background", background, "-o", out_csv, "--force"], capsys
    )
    mine = PersonalizedEstimator(channel=pum, background={"home": [0, 0.75, 0.25, 0]}).fit(
        symbols.reshape(-1, 1)
    )
    assert code == 0
    np.testing.assert_allclose(
        pd.read_csv(out_csv)["probability"], mine.distribution_, rtol=1e-12, atol=1e-15
    )

    # With the true background (homes are b) and the unbiased estimate of r, p_hat(b) =
    # r_hat(b) + r_hat(bot:home) is unbiased for the sample's share of b. Var(X + Y) <= 2 (Var X
    # + Var Y), so 5 times sqrt(2 (Var r_hat(b) + Var r_hat(bot))) bounds its error (other
    # categories: 5 standard errors of r_hat), from the channel's exact variance at r.
    background.write_text("category,home\nb,1\n")
    code, out, _ = run(
        ["estimate", reports, "--background", background, "-p", "method=empirical"], capsys
    )
    estimate = pd.read_csv(pd.io.common.StringIO(out))["probability"].to_numpy()
    z = frame["place"].map({"a": 0, "b": 1, "c": 2, "d": 3}).to_numpy().copy()
    z[frame["tag"].eq("home").to_numpy()] = 4
    r = np.bincount(z, minlength=6) / len(z)
    var = pum.channel_.variance(r, len(z))
    sd = np.sqrt(np.r_[var[0], 2 * (var[1] + var[4]), var[2], var[3]])
    truth = np.r_[r[0], r[1] + r[4], r[2], r[3]]
    assert code == 0 and np.all(np.abs(estimate - truth) < 5 * sd), (estimate, truth, sd)
    # A generic estimator reads the same reports as a distribution over Z, bots included.
    code, out, _ = run(["estimate", reports, "-e", "projected"], capsys)
    assert code == 0
    assert pd.read_csv(pd.io.common.StringIO(out))["category"].tolist() == [
        "a",
        "b",
        "c",
        "d",
        "bot:home",
        "bot:work",
    ]


def test_personalized_bad_input(tagged, tmp_path, capsys):
    path, frame = tagged
    out = ["-o", tmp_path / "x.csv"]
    gym = tmp_path / "gym.csv"
    frame.assign(tag=frame["tag"].where(frame.index != 7, "gym")).to_csv(gym, index=False)
    no_tag = [a for a in _PUM if a not in ("--tag-column", "tag")]
    place = ["privatize", path, "-c", "place"]
    by_tag = ["-m", "personalized", "--tag-column", "tag"]
    cases = [
        (
            ["privatize", path, "-c", "place", *no_tag, *out],
            "reads each row's tag: name that column with --tag-column",
        ),
        (
            ["privatize", path, "-c", "place", *_PUM[:2], "--tag-column", "label", *_PUM[4:], *out],
            r"has no column 'label'; its columns are \['place', 'tag'\]",
        ),
        (
            ["privatize", gym, "-c", "place", *_PUM, *out],
            r"tag column 'tag' has tags that are not among "
            r"the tags \['home', 'work'\]: 'gym' \(1 row\)",
        ),
        (
            [*place, "--tag-column", "tag", "--categories", "a,b,c,d", *out],
            "--tag-column is for mechanisms that read a tag per row",
        ),
        (
            [*place, *by_tag, "--categories", "a,b,c,d", *out],
            "needs the parameters tags=",
        ),
        (
            [*place, *by_tag, "-p", "tags=home", "--categories", "a,b,c,d", *out],
            "tags must be a JSON list of tag names",
        ),
        (
            ["privatize", path, "-c", "place", *_PUM[:2], "--tag-column", "place", *_PUM[4:], *out],
            "must differ",
        ),
    ]
    for argv, message in cases:
        code, _, err = run(argv, capsys)
        assert (
            code == 2 and err.startswith(f"skldp {argv[0]}: error: ") and "Traceback" not in err
        ), (argv, err)
        assert re.search(message, err), (argv, err)
    assert not (tmp_path / "x.csv").exists()  # nothing is written when the input is bad

    reports = tmp_path / "r.csv"
    assert run(["privatize", path, "-c", "place", *_PUM, "-o", reports], capsys)[0] == 0
    background = tmp_path / "bg.csv"
    bad_backgrounds = [
        ("category,gym\nb,1\n", r"columns \['gym'\] that are not tags"),
        ("place,home\nb,1\n", "needs a 'category' column"),
        ("category,home\nz,1\n", r"categories outside the domain: \['z'\]"),
        ("category,home\nb,1\nb,2\n", "lists a category twice"),
        ("category,home\nb,-1\n", "column 'home' must hold non-negative numbers"),
        ("category,home\nb,x\n", "column 'home' must hold non-negative numbers"),
    ]
    for text, message in bad_backgrounds:
        background.write_text(text)
        code, _, err = run(["estimate", reports, "--background", background], capsys)
        assert code == 2 and re.search(message, err) and "Traceback" not in err, (text, err)
    background.write_text("category,home\nb,1\n")
    for extra, message in [
        (["-e", "em"], "--background is for the personalized estimator"),
        (["-p", 'background={"home": null}'], "give the background once"),
    ]:
        code, _, err = run(["estimate", reports, "--background", background, *extra], capsys)
        assert code == 2 and message in err, err
    code, _, err = run(["estimate", reports, "--background", tmp_path / "none.csv"], capsys)
    assert code == 2 and "background file" in err and "does not exist" in err


def test_one_bit_hadamard_round_trip(people, tmp_path, capsys):
    path, frame = people
    reports = tmp_path / "r.csv"
    code, _, err = run(
        [
            "privatize",
            path,
            "-c",
            "city",
            "-m",
            "one-bit-hadamard",
            "--epsilon",
            "2",
            "--categories",
            "paris,lyon,nice",
            "--seed",
            "0",
            "-o",
            reports,
        ],
        capsys,
    )
    assert code == 0 and "1 bit per report" in err
    assert set(pd.read_csv(reports)["report"]) <= set(range(8))  # K = 4 groups x 1 bit
    code, out, _ = run(["estimate", reports, "-e", "empirical"], capsys)
    dist = pd.read_csv(pd.io.common.StringIO(out))
    # the unbiased estimate's standard errors, from the channel's exact variance
    empirical = frame["city"].value_counts(normalize=True)[dist["category"]].to_numpy()
    assert code == 0 and np.all(np.abs(dist["probability"] - empirical) < 5 * dist["std"])
    # 95% intervals (issue 18): inside [0, 1], around the estimate (Wilson contains it)
    lower, upper = dist["lower"].to_numpy(), dist["upper"].to_numpy()
    assert np.all((lower >= 0) & (lower <= upper) & (upper <= 1))
    assert np.all(
        (lower <= dist["probability"].clip(0, 1)) & (dist["probability"].clip(0, 1) <= upper)
    )


def test_demo_without_matplotlib_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    plot = tmp_path / "demo.png"
    code, out, _ = run(["demo", "--repeats", "1", "--plot", plot, "--no-progress"], capsys)
    assert code == 0 and "TV error (95% CI)" in out
    assert 'matplotlib is not installed, so no plot was written (pip install "skldp[plot]")' in out
    assert not plot.exists()


def test_demo_explains_the_krr_error_only_when_it_is_one(capsys):
    # k = 43,750, epsilon = 1: k-RR keeps the true cell with probability e / (e + k - 1) = 6.2e-05
    code, out, _ = run(["demo", "--repeats", "1", "--no-plot", "--no-progress"], capsys)
    # total variation near 1 (the noise decides the last digits)
    assert code == 0 and re.search(r"k-RR\s+LDP\s+(1\.0000|0\.99\d\d)", out)
    assert (
        "k-RR's error of 1 is real: at k = 43750 it keeps the true cell with probability 6.2e-05"
        in out
    )
    assert "sharing almost no mass with the 658 cells that have check-ins" in out
    # epsilon = 12: it keeps it with probability e^12 / (e^12 + k - 1) = 0.79, and the note goes
    code, out, _ = run(
        ["demo", "--repeats", "1", "--epsilon", "12", "--no-plot", "--no-progress"], capsys
    )
    assert code == 0 and "k-RR's error of 1" not in out


def test_privatize_without_seed_does_not_warn_and_draws_fresh_noise(people, tmp_path, capsys):
    path, _ = people
    outs = []
    for name in ("a.csv", "b.csv"):
        out = tmp_path / name
        code, _, err = run(["privatize", path, *CITY_KRR, "-o", out], capsys)
        assert code == 0 and "--seed" not in err and "WARNING" not in err
        outs.append(pd.read_csv(out)["report"].to_numpy())
    # fresh noise: the two releases of the same people do not line up row by row
    assert (outs[0] == outs[1]).mean() < 0.8

"""The ``skldp`` command on files at scale: chunks, integrity, outputs, progress (issue 20)."""

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from skldp import RAPPOR, EMEstimator, ProjectedEstimator
from skldp.cli import build_parser, main
from skldp.io import ReportFile
from skldp.io import read_reports
from tests.cli_support import run

CITIES = "paris,lyon,nice"


@pytest.fixture
def people(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"city": rng.choice(["paris", "lyon", "nice"], 4000, p=[0.5, 0.3, 0.2])})
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _privatize_in_chunks(path, out, capsys):
    """``skldp privatize`` of the city column in chunks of 1000 rows; (code, out, err)."""
    argv = ["privatize", path, "-c", "city", "--categories", CITIES, "--chunk-size", "1000"]
    return run([*argv, "-o", out], capsys)


def privatize(capsys, path, out, *extra):
    argv = ["privatize", path, "-c", "city", "--categories", CITIES, "--seed", "1", "-o", out]
    code, _, err = run([*argv, *extra], capsys)
    assert code == 0, err
    return out


def test_chunked_estimate_equals_in_memory_bit_for_bit(people, tmp_path, capsys):
    path, _ = people
    cats = tmp_path / "cats.txt"
    cats.write_text("\n".join(["paris", "lyon", "nice", *[f"c{i}" for i in range(17)]]))
    for mechanism, estimator, cls in [
        ("krr", "em", EMEstimator),
        ("rappor", "em", EMEstimator),
        ("rappor", "projected", ProjectedEstimator),
    ]:
        reports = tmp_path / f"{mechanism}.parquet"
        code, _, err = run(
            [
                "privatize",
                path,
                "-c",
                "city",
                "-m",
                mechanism,
                "--categories-file",
                cats,
                "--chunk-size",
                "300",
                "-o",
                reports,
                "--force",
            ],
            capsys,
        )
        assert code == 0, err
        outs = []
        for size in ["250", "1000000"]:
            code, out, err = run(
                ["estimate", reports, "-e", estimator, "--chunk-size", size], capsys
            )
            assert code == 0, err
            outs.append(out)
        assert outs[0] == outs[1]  # the CSV text, every digit
        # ... and the library's estimate on all the reports at once
        meta = json.loads((tmp_path / f"{mechanism}.parquet.json").read_text())
        from skldp._registry import make_privatizer

        priv = make_privatizer(mechanism, **meta["params"], categories=[meta["categories"]])
        priv.fit(np.array(meta["categories"], dtype=object).reshape(-1, 1))
        lib = cls(channel=priv).fit(read_reports(reports, width=meta["report_width"]))
        got = pd.read_csv(pd.io.common.StringIO(outs[0]))["probability"].to_numpy()
        assert np.array_equal(got, lib.distribution_)  # CSV keeps 17 digits: exact round trip


def test_bit_vector_reports_are_packed_and_old_wide_files_still_read(people, tmp_path, capsys):
    path, _ = people
    reports = tmp_path / "r.csv"
    code, _, err = run(
        [
            "privatize",
            path,
            "-c",
            "city",
            "-m",
            "rappor",
            "--categories",
            CITIES,
            "--epsilon",
            "2",
            "--seed",
            "0",
            "-o",
            reports,
        ],
        capsys,
    )
    assert code == 0 and "3 bits per report" in err
    lines = reports.read_text().splitlines()
    assert lines[0] == "report_bits" and len(lines) == 4001
    assert all(re.fullmatch("0[0-7]", line) for line in lines[1:])  # 3 bits: one hex byte
    meta = json.loads((tmp_path / "r.csv.json").read_text())
    assert meta["report_layout"] == "packed" and meta["report_width"] == 3
    code, new, _ = run(["estimate", reports], capsys)
    assert code == 0
    # the older format: one 0/1 column per bit, a version-1 sidecar without checksum
    bits = read_reports(reports, width=3)
    wide = tmp_path / "wide.csv"
    pd.DataFrame(bits, columns=["report_0", "report_1", "report_2"]).to_csv(wide, index=False)
    old = {k: meta[k] for k in ("mechanism", "params", "categories", "n_reports")}
    old.update(format="skldp-reports/1", report_columns=["report_0", "report_1", "report_2"])
    (tmp_path / "wide.csv.json").write_text(json.dumps(old))
    code, out, err = run(["estimate", wide], capsys)
    assert code == 0 and out == new and "older format skldp-reports/1" in err


def _fresh(capsys, people, tmp_path):
    path, _ = people
    reports = privatize(capsys, path, tmp_path / "r.csv", "--force")
    return reports, reports.read_text().splitlines(keepends=True)


def test_truncated_padded_or_altered_reports_are_refused(people, tmp_path, capsys):
    reports, lines = _fresh(capsys, people, tmp_path)

    def check(message):
        code, out, err = run(["estimate", reports], capsys)
        assert code == 2 and out == "" and re.search(message, err), err
        assert err.count("\n") == 1 and "Traceback" not in err

    reports.write_text("".join(lines[: 1 + 2000]))
    check(
        "has 2000 reports, but its metadata records 4000: rows were removed or the file was "
        "cut short"
    )
    code, _, err = run(["estimate", reports, "--filtered"], capsys)
    assert code == 0 and "2000 of the 4000 reports" in err  # a deliberate subset is accepted
    reports.write_text("".join(lines + lines[1:3]))
    check("has 4002 reports, but its metadata records 4000: rows were added")
    code, _, err = run(["estimate", reports, "--filtered"], capsys)
    assert code == 2 and "rows were added" in err  # added rows are never a filter
    reports.write_text("".join(lines[:100] + ["\n"] + lines[100:-1]))  # a blank line, one less
    check("data row 100: missing report value")  # a row, never skipped (issue 27)
    altered = list(lines)
    altered[5] = {"0\n": "1\n", "1\n": "2\n", "2\n": "0\n"}[lines[5]]
    reports.write_text("".join(altered))
    check(r"is not the file 'skldp privatize' wrote \(its SHA-256 differs from the metadata's\)")
    reports.write_text("".join(lines))
    assert run(["estimate", reports], capsys)[0] == 0


def test_edited_or_malformed_metadata_is_refused_naming_the_field(people, tmp_path, capsys):
    reports, _ = _fresh(capsys, people, tmp_path)
    sidecar = tmp_path / "r.csv.json"
    meta = json.loads(sidecar.read_text())
    assert meta["checksum"] == ReportFile.checksum(meta) and meta["n_reports"] == 4000

    def check(message, data):
        sidecar.write_text(json.dumps(data))
        code, _, err = run(["estimate", reports], capsys)
        assert code == 2 and message in err and "Traceback" not in err, err

    edited = "was edited after 'skldp privatize' wrote it"
    check(edited, {**meta, "params": {"epsilon": 3.0}})
    check(edited, {**meta, "categories": ["lyon", "paris", "nice"]})
    check(edited, {**meta, "categories": ["paris", "lyon", "nice", "rome"]})
    check(edited, {**meta, "mechanism": "oue"})
    check("field 'params' must be an object of parameters; got a list", {**meta, "params": [1]})
    check(
        "field 'categories' must be a list of at least 2 distinct texts, or null; got 'paris'",
        {**meta, "categories": "paris"},
    )
    check(
        "field 'n_reports' must be a non-negative integer; got '4000'",
        {**meta, "n_reports": "4000"},
    )
    check("lacks the field 'checksum'", {k: v for k, v in meta.items() if k != "checksum"})
    # the guarantee printed is the one of the parameters used
    sidecar.write_text(json.dumps(meta))
    code, _, err = run(["estimate", reports], capsys)
    assert code == 0 and "LDP(epsilon=1)" in err


def test_outputs_never_replace_inputs_or_existing_files(people, tmp_path, capsys):
    path, _ = people
    before = path.read_bytes()
    cases = [
        (["-o", path], "output file .* is the input file: writing it would destroy the input"),
        (["-o", tmp_path / "r.csv", "--metadata", path], "metadata file .* is the input file"),
        (
            ["-o", tmp_path / "r.csv", "--metadata", tmp_path / "r.csv"],
            "metadata file .* is also the output file",
        ),
    ]
    for extra, message in cases:
        for force in ([], ["--force"]):
            code, _, err = run(
                ["privatize", path, "-c", "city", "--categories", CITIES, *extra, *force], capsys
            )
            assert code == 2 and re.search(message, err), err
    assert path.read_bytes() == before and not (tmp_path / "r.csv").exists()
    reports = privatize(capsys, path, tmp_path / "r.csv")
    first = reports.read_bytes()
    code, _, err = run(
        ["privatize", path, "-c", "city", "--categories", CITIES, "-o", reports], capsys
    )
    assert code == 2 and "r.csv' exists; pass --force to replace it" in err
    assert reports.read_bytes() == first
    for target in [reports, tmp_path / "r.csv.json"]:
        code, _, err = run(["estimate", reports, "-o", target, "--force"], capsys)
        assert code == 2 and "writing it would destroy the input" in err
    dist = tmp_path / "d.csv"
    assert run(["estimate", reports, "-o", dist], capsys)[0] == 0
    code, _, err = run(["estimate", reports, "-o", dist], capsys)
    assert code == 2 and "exists; pass --force" in err
    assert run(["estimate", reports, "-o", dist, "--force"], capsys)[0] == 0
    assert run(["estimate", reports, "-o", os.devnull], capsys)[0] == 0  # not "unknown type"


def test_a_failure_midway_leaves_no_output(tmp_path, capsys):
    path = tmp_path / "people.csv"
    path.write_text("city\n" + "paris\n" * 2500 + "rome\n" + "lyon\n" * 10)
    code, _, err = _privatize_in_chunks(path, tmp_path / "r.parquet", capsys)
    assert code == 2
    assert "values outside the categories: 'rome' (1 row) (in data rows 2001 to 2511)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people.csv"]  # no temporary left


def test_standard_output_and_a_broken_pipe(people, tmp_path, capsys):
    path, _ = people
    # privatize to standard output: the metadata file binds the bytes written there
    code, out, err = run(
        [
            "privatize",
            path,
            "-c",
            "city",
            "--categories",
            CITIES,
            "-o",
            "-",
            "--metadata",
            tmp_path / "s.json",
        ],
        capsys,
    )
    assert code == 0 and out.startswith("report\n") and len(out.splitlines()) == 4001
    (tmp_path / "s.csv").write_text(out)
    code, dist, _ = run(
        ["estimate", tmp_path / "s.csv", "--metadata", tmp_path / "s.json", "-o", "-"], capsys
    )
    assert code == 0 and dist.splitlines()[0] == "category,probability,std,lower,upper,interval"
    code, _, err = run(["privatize", path, "-c", "city", "--categories", CITIES, "-o", "-"], capsys)
    assert code == 2 and "name the metadata file with --metadata" in err

    reports = privatize(capsys, path, tmp_path / "r.csv")
    proc = subprocess.Popen(
        [sys.executable, "-m", "skldp.cli", "estimate", str(reports)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    proc.stdout.close()  # the reader is gone before anything is written, as with `| head -0`
    err = proc.stderr.read().decode()
    assert proc.wait() == 2
    assert err == (
        "skldp estimate: error: standard output was closed before the output was "
        "written (broken pipe)\n"
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
def test_no_sidecar_is_made_beside_a_pipe_or_a_device(people, tmp_path, capsys):
    path, _ = people
    argv = ["privatize", path, "-c", "city", "--categories", CITIES]
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received = []

    def read_pipe():  # another program reading the reports as they are written
        with open(pipe, "rb") as fh:
            received.append(fh.read())

    reader = threading.Thread(target=read_pipe, daemon=True)
    reader.start()
    try:
        # the old code wrote the reports into the pipe and a stray pipe.json beside it
        code, _, err = run([*argv, "-o", pipe], capsys)
        assert code == 2 and "not a regular file (a device or a pipe)" in err
        assert "name one with --metadata" in err
        assert sorted(os.listdir(tmp_path)) == ["people.csv", "pipe"]
        # with --metadata the reports go into the pipe and the sidecar where it is named
        code, _, err = run([*argv, "-o", pipe, "--metadata", tmp_path / "m.json"], capsys)
        assert code == 0, err
    finally:
        if reader.is_alive():  # nothing opened the pipe: let the reader go
            open(pipe, "wb").close()
        reader.join(timeout=60)
    assert (
        received[0].decode().splitlines()[0] == "report" and len(received[0].splitlines()) == 4001
    )
    assert sorted(os.listdir(tmp_path)) == ["m.json", "people.csv", "pipe"]
    assert json.loads((tmp_path / "m.json").read_text())["n_reports"] == 4000
    # /dev/null: the same rule (the old code made /dev/null.json), and nothing is written
    existed = os.path.exists("/dev/null.json")
    try:
        code, _, err = run([*argv, "-o", os.devnull], capsys)
        assert code == 2 and "name one with --metadata" in err
        assert os.path.exists(f"{os.devnull}.json") == existed
        code, _, err = run([*argv, "-o", os.devnull, "--metadata", os.devnull], capsys)
        assert code == 0, err
    finally:
        if not existed and os.path.exists(f"{os.devnull}.json"):
            os.unlink(f"{os.devnull}.json")


def test_memory_error_is_one_line(people, tmp_path, capsys, monkeypatch):
    path, _ = people
    reports = privatize(capsys, path, tmp_path / "r.csv")

    def boom(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr("skldp.io.fit_chunks", boom)
    code, _, err = run(["estimate", reports], capsys)
    assert (
        code == 2
        and err.startswith("skldp estimate: error: out of memory; use a smaller --chunk-size")
        and err.count("\n") == 1
    )


def test_progress_shows_with_progress_and_not_with_quiet(people, tmp_path, capsys):
    pytest.importorskip("tqdm")
    path, _ = people
    reports = tmp_path / "r.csv"
    argv = ["privatize", path, "-c", "city", "--categories", CITIES, "--epsilon", "1"]
    code, _, err = run([*argv, "-o", reports, "--progress", "--chunk-size", "1000"], capsys)
    # a CSV's rows are counted first (its line ends): the bar has a total, so an ETA
    assert code == 0 and re.search(r"privatize: 100%.*4\.00k/4\.00k", err), err
    code, _, err = run(["estimate", reports, "--progress", "-o", tmp_path / "d.csv"], capsys)
    assert code == 0 and re.search(r"estimate: 100%.*4\.00k/4\.00k", err), err
    code, _, err = run([*argv, "-o", reports, "--quiet", "--force"], capsys)
    assert code == 0 and err == ""
    code, out, err = run(["estimate", reports, "--quiet"], capsys)
    assert code == 0 and err == "" and out.startswith("category,")


def test_numbers_are_parsed_strictly(people, tmp_path, capsys):
    path, _ = people
    for text in ["1_0", "inf", "nan", "0x1", "1,5", " "]:
        with pytest.raises(SystemExit) as exc:
            main(["privatize", str(path), "-c", "city", "--epsilon", text, "-o", "x.csv"])
        assert exc.value.code == 2
        assert f"epsilon must be a positive number such as 1 or 0.5; got {text!r}" in (
            capsys.readouterr().err
        )
    for text in ["1_000", "1e3"]:
        with pytest.raises(SystemExit):
            main(["privatize", str(path), "-c", "city", "--chunk-size", text, "-o", "x.csv"])
        assert "expected a positive integer" in capsys.readouterr().err
    reports = privatize(capsys, path, tmp_path / "r.csv", "--epsilon", "1e-1")
    assert json.loads((tmp_path / "r.csv.json").read_text())["params"]["epsilon"] == 0.1
    assert reports.exists()


def test_default_epsilon_is_said(people, tmp_path, capsys):
    path, _ = people
    code, _, err = run(
        ["privatize", path, "-c", "city", "--categories", CITIES, "-o", tmp_path / "r.csv"], capsys
    )
    assert code == 0 and "no --epsilon was given: RandomizedResponse's default epsilon=1.0" in err


def test_every_estimator_has_the_same_columns(people, tmp_path, capsys):
    path, frame = people
    reports = privatize(capsys, path, tmp_path / "r.csv", "--epsilon", "2")
    tables = {}
    for name in ["empirical", "projected", "em"]:
        code, out, err = run(["estimate", reports, "-e", name, "--alpha", "0.1"], capsys)
        assert code == 0, err
        tables[name] = pd.read_csv(pd.io.common.StringIO(out))
        columns = ["category", "probability", "std", "lower", "upper", "interval"]
        assert tables[name].columns.tolist() == columns
    em = tables["em"]
    # EM gives no standard error (empty, not made up) but intervals (its bootstrap, in [0, 1])
    assert em["std"].isna().all()
    assert ((em["lower"] >= 0) & (em["lower"] <= em["probability"])).all()
    assert ((em["probability"] <= em["upper"]) & (em["upper"] <= 1)).all()
    emp = tables["empirical"]
    z = norm.ppf(0.95)
    # the CLI writes each estimator's default interval: for the unbiased estimate the
    # Wilson-type inversion with the exact variance, close to the plug-in normal one here
    assert ((emp["lower"] <= emp["probability"]) & (emp["probability"] <= emp["upper"])).all()
    np.testing.assert_allclose(emp["upper"] - emp["lower"], 2 * z * emp["std"], rtol=0.1)
    truth = frame["city"].value_counts(normalize=True)[emp["category"]].to_numpy()
    assert np.all(np.abs(emp["probability"] - truth) < 5 * emp["std"])
    code, _, err = run(["estimate", reports, "-e", "em"], capsys)
    assert "EMEstimator gives no standard error" in err


def test_every_printed_interval_contains_its_point_and_names_its_method(people, tmp_path, capsys):
    # issue 34: the intervals were the unbiased estimate's whatever was printed beside them
    # (EM and projected printed identical ones); now each is the printed estimator's own
    path, _ = people
    reports = privatize(capsys, path, tmp_path / "r.csv", "--epsilon", "1")
    tables = {}
    for name in ["empirical", "projected", "em"]:
        code, out, err = run(["estimate", reports, "-e", name], capsys)
        assert code == 0, err
        tables[name] = table = pd.read_csv(pd.io.common.StringIO(out))
        point = table["probability"]
        assert ((table["lower"] <= point) & (point <= table["upper"])).all(), name
    assert set(tables["empirical"]["interval"]) == {"wilson"}
    assert set(tables["projected"]["interval"]) == {"bootstrap (1000 resamples)"}
    assert set(tables["em"]["interval"]) == {"bootstrap (1000 resamples)"}
    # the projected and EM intervals are their own, not the unbiased estimate's (for k-RR
    # with every estimate inside the simplex the two estimates, and so their bootstraps, agree)
    for name in ["projected", "em"]:
        assert not np.allclose(tables[name]["lower"], tables["empirical"]["lower"].clip(0, 1))


def test_em_over_bit_vectors_prints_information_or_says_it_falls_back(people, tmp_path, capsys):
    path, _ = people
    reports = privatize(capsys, path, tmp_path / "r.csv", "--epsilon", "1", "-m", "oue")
    code, out, err = run(["estimate", reports, "-e", "em"], capsys)
    assert code == 0, err
    table = pd.read_csv(pd.io.common.StringIO(out))
    assert set(table["interval"]) == {"information"}
    point = table["probability"]
    assert ((table["lower"] <= point) & (point <= table["upper"])).all()
    code, out, err = run(["estimate", reports, "-e", "projected"], capsys)
    table = pd.read_csv(pd.io.common.StringIO(out))
    assert set(table["interval"]) == {"wilson of the unbiased estimate"}
    assert "no interval of ProjectedEstimator is affordable" in err
    point = table["probability"]
    assert ((table["lower"] <= point) & (point <= table["upper"])).all()


def test_help_lists_the_registry_with_defaults_and_mechanisms_fit_100_columns(capsys):
    from skldp._registry import available_estimators, available_mechanisms

    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices
    text = sub["privatize"].format_help()
    for name in available_mechanisms():
        assert re.search(rf"^  {re.escape(name)}$", text, re.MULTILINE), name
    assert "RandomizedResponse: epsilon=1.0" in text
    text = sub["estimate"].format_help()
    for name in available_estimators():
        assert re.search(rf"^  {re.escape(name)}$", text, re.MULTILINE), name
    assert "EMEstimator: tol=1e-08, max_iter=10000" in text
    code, out, _ = run(["mechanisms", "--all"], capsys)
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 100
    assert "RAPPOR" in out and "epsilon-LDP (one-time basic RAPPOR)" in out


def test_rappor_reports_with_estimate_from_parquet(tmp_path, capsys):
    # a wider domain through Parquet, checked against the exact variance of the estimate
    k = 40
    cats = [f"c{i}" for i in range(k)]
    rng = np.random.default_rng(3)
    p = np.arange(1, k + 1) / (k * (k + 1) / 2)
    frame = pd.DataFrame({"cell": rng.choice(cats, 20000, p=p)})
    frame.to_parquet(tmp_path / "in.parquet")
    (tmp_path / "cats.txt").write_text("\n".join(cats))
    code, _, err = run(
        [
            "privatize",
            tmp_path / "in.parquet",
            "-c",
            "cell",
            "-m",
            "rappor",
            "--categories-file",
            tmp_path / "cats.txt",
            "--epsilon",
            "2",
            "--chunk-size",
            "3000",
            "-o",
            tmp_path / "r.parquet",
        ],
        capsys,
    )
    assert code == 0, err
    code, out, _ = run(["estimate", tmp_path / "r.parquet", "-e", "empirical"], capsys)
    dist = pd.read_csv(pd.io.common.StringIO(out))
    truth = frame["cell"].value_counts(normalize=True).reindex(cats).to_numpy()
    channel = RAPPOR(epsilon=2.0, categories=[cats]).fit(np.array(cats)[:, None]).channel_
    sd = np.sqrt(channel.variance(truth, 20000))
    assert code == 0 and np.all(np.abs(dist["probability"] - truth) < 5 * sd)


def test_ctrl_c_leaves_no_output_under_the_final_names(people, tmp_path, capsys, monkeypatch):
    from skldp.io import ReportWriter

    path, _ = people
    write = ReportWriter.write

    def interrupted(self, reports):
        if self.n >= 1000:  # the second chunk: the first is on disk under a temporary name
            raise KeyboardInterrupt
        return write(self, reports)

    monkeypatch.setattr(ReportWriter, "write", interrupted)
    code, _, err = _privatize_in_chunks(path, tmp_path / "r.parquet", capsys)
    assert code == 130 and err == "skldp privatize: interrupted; no output file was written\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people.csv"]


def test_estimate_names_a_pipe_of_reports_instead_of_calling_it_missing(tmp_path, capsys):
    # estimate reads the reports twice (checksum, then reports): a pipe is refused by what it
    # is; the old message said the file did not exist
    pipe = tmp_path / "reports.csv"
    os.mkfifo(pipe)
    code, _, err = run(["estimate", pipe], capsys)
    assert code == 2 and "is not a regular file" in err and "does not exist" not in err


def test_report_file_checks_from_python(people, tmp_path, capsys):
    # the format's rules live in skldp.io.ReportFile; the command line only calls them
    from skldp import RandomizedResponse
    from skldp.io import ReportFileError

    path, _ = people
    reports = privatize(capsys, path, tmp_path / "r.csv")
    rf = ReportFile(reports)
    meta = rf.read_metadata()
    assert rf.metadata_path == f"{reports}.json" and not rf.old
    assert meta["checksum"] == ReportFile.checksum(meta)
    assert rf.sha256() == meta["reports_sha256"]
    rf.check_checksum()
    rf.check_reports(4000, rf.sha256())
    channel = RandomizedResponse(epsilon=1.0, categories=[CITIES.split(",")]).fit([["paris"]])
    rf.check_layout(channel.channels_[0])
    with pytest.raises(ReportFileError, match="has 3999 reports, but its metadata records 4000"):
        rf.check_reports(3999, None)
    rf.check_reports(3999, None, filtered=True)  # a deliberate subset
    with pytest.raises(ReportFileError, match="rows were added"):
        rf.check_reports(4001, None, filtered=True)
    with pytest.raises(ReportFileError, match="SHA-256 differs"):
        rf.check_reports(4000, "0" * 64)
    rappor = RAPPOR(epsilon=1.0, categories=[CITIES.split(",")]).fit([["paris"]])
    with pytest.raises(ReportFileError, match="holds symbol reports"):
        rf.check_layout(rappor.channels_[0])
    # an edited bound field, and a field of the wrong type, each named
    edited = ReportFile(reports, tmp_path / "edited.json")
    (tmp_path / "edited.json").write_text(json.dumps({**meta, "params": {"epsilon": 2.0}}))
    edited.read_metadata()
    with pytest.raises(ReportFileError, match="was edited after 'skldp privatize' wrote it"):
        edited.check_checksum()
    (tmp_path / "edited.json").write_text(json.dumps({**meta, "n_reports": -1}))
    with pytest.raises(ReportFileError, match="field 'n_reports' must be a non-negative integer"):
        edited.read_metadata()
    # what privatize writes is ReportFile.sidecar's content, byte for byte
    fields = {k: v for k, v in meta.items() if k not in ("format", "checksum")}
    written = Path(rf.metadata_path).read_bytes()
    assert ReportFile.sidecar_bytes(ReportFile.sidecar(**fields)) == written

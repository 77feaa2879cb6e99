"""The command line never loses, shifts or clobbers rows (issue 27, items 7 to 11 and 14)."""

import gzip
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from tests.cli_support import run


def _privatize(capsys, path, out, cats, *extra):
    argv = ["privatize", path, "-c", "v", "--categories", cats, "-o", out, *extra]
    return run(argv, capsys)


# -- 27.7: a blank line is a person's missing value ---------------------------------------------
def test_a_blank_line_is_refused_with_its_row_not_skipped(tmp_path, capsys):
    path = tmp_path / "v.csv"
    path.write_text("v\n1\n\n2\n")  # three people, the second without a value
    code, _, err = _privatize(capsys, path, tmp_path / "r.csv", "1,2")
    assert code == 2
    assert "column 'v' has 1 missing value (data row 2)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.csv"]
    # the same in a later chunk: the row number counts the blank lines before it
    path.write_text("v\n" + "1\n" * 5 + "\n" + "2\n" * 5 + "\n")
    code, _, err = _privatize(capsys, path, tmp_path / "r.csv", "1,2", "--chunk-size", "4")
    assert code == 2 and "has 1 missing value (data row 6)" in err


def test_a_blank_line_among_reports_is_a_missing_report(tmp_path, capsys):
    path = tmp_path / "v.csv"
    path.write_text("v\n" + "1\n2\n" * 50)
    code, _, err = _privatize(capsys, path, tmp_path / "r.csv", "1,2")
    assert code == 0, err
    reports = tmp_path / "r.csv"
    lines = reports.read_text().splitlines()
    reports.write_text("\n".join([*lines[:4], "", *lines[4:]]) + "\n")
    # --filtered skips the count and checksum checks: the blank line must still not vanish
    code, _, err = run(["estimate", reports, "--filtered"], capsys)
    assert code == 2 and "data row 4: missing report value" in err


# -- 27.14: a category named NA is a category ---------------------------------------------------
def test_categories_named_like_missing_markers_are_values(tmp_path, capsys):
    path = tmp_path / "v.csv"
    path.write_text("v\n" + "NA\nN/A\nnull\nyes\n" * 250)
    out = tmp_path / "r.csv"
    code, _, err = _privatize(capsys, path, out, "NA,N/A,null,yes", "--seed", "0")
    assert code == 0, err
    code, text, err = run(["estimate", out, "-e", "empirical"], capsys)
    assert code == 0, err
    dist = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert dist["category"].tolist() == ["NA", "N/A", "null", "yes"]
    # 1000 reports of k-RR at epsilon 1 over 4 values: standard error about 0.046 each
    assert_allclose(dist["probability"], 0.25, atol=0.2)
    assert np.all(dist["std"] < 0.05)
    # an empty field is still missing, refused with its row (not read as a category)
    path.write_text("v\nNA\n\nyes\n")
    code, _, err = _privatize(capsys, path, tmp_path / "r2.csv", "NA,yes")
    assert code == 2 and "has 1 missing value (data row 2)" in err
    path.write_text("v,w\nNA,1\n,2\n")
    code, _, err = _privatize(capsys, path, tmp_path / "r2.csv", "NA,yes")
    assert code == 2 and "has 1 missing value (data row 2)" in err


# -- 27.11: a truncated or corrupt .csv.gz -----------------------------------------------------
def _gzip_bytes(frame):
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as fh:
        fh.write(frame.to_csv(index=False).encode())
    return buffer.getvalue()


def test_a_truncated_or_corrupt_gzip_file_is_one_line_exit_2(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"v": rng.choice(["a", "b", "c"], 200_000)})
    data = _gzip_bytes(frame)
    full = tmp_path / "v.csv.gz"
    full.write_bytes(data)
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(data[: len(data) // 2])
    bad = tmp_path / "bad.csv.gz"
    bad.write_bytes(data[:200] + bytes(200) + data[400:])  # a corrupt stretch of deflate data

    def refused(argv, name, why):
        code, out, err = run(argv, capsys)
        assert code == 2 and out == "", err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert f"{name}'" in err and why in err, err

    for path, why in [(cut, "truncated"), (bad, "corrupt")]:
        refused(_argv(path, tmp_path / "r.csv"), path.name, why)
        assert not (tmp_path / "r.csv").exists()
    # estimate: the reports file cut short (its sidecar beside it)
    out = tmp_path / "r.csv.gz"
    code, _, err = run(_argv(full, out), capsys)
    assert code == 0, err
    reports = out.read_bytes()
    cut_reports = tmp_path / "cut_r.csv.gz"
    cut_reports.write_bytes(reports[: len(reports) // 2])
    (tmp_path / "cut_r.csv.gz.json").write_text((tmp_path / "r.csv.gz.json").read_text())
    refused(["estimate", cut_reports], "cut_r.csv.gz", "truncated")
    refused(["estimate", cut_reports, "--filtered"], "cut_r.csv.gz", "truncated")


def _argv(path, out):
    return ["privatize", path, "-c", "v", "--categories", "a,b,c", "-o", out, "--quiet"]


# -- 27.8: sparse recovery refuses the reports it cannot decode --------------------------------
@pytest.mark.parametrize("mechanism", ["krr", "rappor"])
def test_estimate_sparse_on_krr_or_rappor_reports_is_refused(mechanism, tmp_path, capsys):
    # at k = 1000 the old code put 0.998 on one category (truth 0.18) and exited 0
    rng = np.random.default_rng(0)
    k = 1000
    path = tmp_path / "v.csv"
    cats = tmp_path / "cats.txt"
    cats.write_text("\n".join(f"c{i}" for i in range(k)))
    values = rng.choice(k, 3000, p=rng.dirichlet(np.full(k, 0.05)))
    pd.DataFrame({"v": [f"c{i}" for i in values]}).to_csv(path, index=False)
    out = tmp_path / "r.csv"
    argv = ["privatize", path, "-c", "v", "-m", mechanism, "--categories-file", cats, "-o", out]
    code, _, err = run(argv, capsys)
    assert code == 0, err
    code, text, err = run(["estimate", out, "-e", "sparse"], capsys)
    assert code == 2 and text == "" and err.count("\n") == 1
    assert "SparseEstimator recovers from reports of the compressive mechanisms" in err
    assert "use ProjectedEstimator or EMEstimator" in err
    # the one-bit Hadamard baseline is read
    out = tmp_path / "h.csv"
    argv[5] = "one-bit-hadamard"
    argv[-1] = out
    code, _, err = run(argv, capsys)
    assert code == 0, err
    code, text, err = run(["estimate", out, "-e", "sparse"], capsys)
    assert code == 0, err


# -- 27.10: signals ----------------------------------------------------------------------------
#: The console script's own lines (pyproject's [project.scripts]), run with this checkout.
_SCRIPT = "import sys; from skldp_cli import main; sys.exit(main())"


def _start(argv, cwd):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(
        [sys.executable, "-c", _SCRIPT, *map(str, argv)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_leave_no_part_file(name, tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("v\n" + "a\nb\nc\n" * 400_000)
    out = tmp_path / "r.csv"
    argv = ["privatize", path, "-c", "v", "--categories", "a,b,c", "-o", out, "--chunk-size", "500"]
    proc = _start(argv, tmp_path)
    deadline = time.monotonic() + 120
    while not any(p.name.endswith(".part") for p in tmp_path.iterdir()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(getattr(signal, name))
    _, err = proc.communicate(timeout=60)
    signum = int(getattr(signal, name))
    assert proc.returncode == 128 + signum, err
    assert err == f"skldp privatize: stopped by {name}; no output file was written\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.csv"]


def test_ctrl_c_while_starting_exits_130_without_a_traceback(tmp_path):
    # importing skldp takes a second or more: Ctrl-C then printed a traceback and the process
    # died of SIGINT (return code -2)
    proc = _start(["mechanisms"], tmp_path)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err
    if proc.returncode == 0:  # pragma: no cover - the machine imported skldp in under 0.3 s
        pytest.skip("the command finished before the signal")
    assert proc.returncode == 130, err
    assert err.count("\n") == 1 and "interrupted" in err


# -- 27.9: concurrent runs to the same output --------------------------------------------------
def _pair_is_consistent(out):
    meta = json.loads(Path(f"{out}.json").read_text())
    return hashlib.sha256(Path(out).read_bytes()).hexdigest() == meta["reports_sha256"]


def _wait_at_commit(proc, folder, name, extra):
    """Until ``proc`` has ended, or has written its sidecar (so it is at its renames) and
    ``extra`` seconds more have passed."""
    before = set(folder.iterdir())  # this process's own temporary sidecar among them
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if any(p.name.startswith(f".{name}.json.") for p in set(folder.iterdir()) - before):
            time.sleep(extra)
            return
        time.sleep(0.01)


def _people(tmp_path, n=30_000):
    path = tmp_path / "v.csv"
    path.write_text("v\n" + "a\nb\nc\n" * (n // 3))
    return path


def test_a_run_without_force_never_replaces_a_file_made_meanwhile(tmp_path, capsys, monkeypatch):
    # run A checks that r.csv does not exist, privatizes; meanwhile run B (another process)
    # writes r.csv and its sidecar; A must then refuse, not replace B's files (the old code
    # replaced them: both runs exited 0)
    import skldp._cli_common

    path, out = _people(tmp_path), tmp_path / "r.csv"
    argv = ["privatize", path, "-c", "v", "--categories", "a,b,c", "-o", out, "--quiet"]
    commit = skldp._cli_common._Outputs.commit
    other = []

    def commit_after_b(self, *args, **kwargs):
        proc = _start(argv, tmp_path)
        other.append((proc, *proc.communicate(timeout=120)))
        return commit(self, *args, **kwargs)

    monkeypatch.setattr(skldp._cli_common._Outputs, "commit", commit_after_b)
    code, _, err = run(argv, capsys)
    (proc_b, _, err_b) = other[0]
    assert proc_b.returncode == 0, err_b
    assert code == 2 and "was made by another program while this run wrote it" in err, err
    assert "nothing was replaced (pass --force to replace it)" in err
    assert _pair_is_consistent(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.csv.json", "v.csv"]


def test_two_runs_with_force_never_pair_reports_and_sidecar_of_different_runs(
    tmp_path, capsys, monkeypatch
):
    # run A has renamed its reports and is about to rename its sidecar when run B, with
    # --force too, reaches its own renames: B must wait for A's pair to be complete (the old
    # code let B rename both files in between, and A's sidecar then sat beside B's reports)
    path, out = _people(tmp_path), tmp_path / "r.csv"
    argv = ["privatize", path, "-c", "v", "--categories", "a,b,c", "-o", out, "--force"]
    replace = os.replace
    other = []

    def replace_and_let_b_run(src, dst):
        replace(src, dst)
        if os.fspath(dst) == os.fspath(out) and not other:
            other.append(_start(argv, tmp_path))
            _wait_at_commit(other[0], tmp_path, "r.csv", extra=2.0)

    monkeypatch.setattr(os, "replace", replace_and_let_b_run)
    code, _, err = run([*argv, "--quiet"], capsys)
    monkeypatch.setattr(os, "replace", replace)
    _, err_b = other[0].communicate(timeout=120)
    assert code == 0 and other[0].returncode == 0, (err, err_b)
    assert _pair_is_consistent(out)
    code, _, err = run(["estimate", out], capsys)
    assert code == 0, err


def test_two_concurrent_runs_without_force(tmp_path):
    path, out = _people(tmp_path, 300_000), tmp_path / "r.csv"
    argv = ["privatize", path, "-c", "v", "--categories", "a,b,c", "-o", out]
    procs = [_start(argv, tmp_path) for _ in range(2)]
    results = [(p, *p.communicate(timeout=300)) for p in procs]
    codes = sorted(p.returncode for p, _, _ in results)
    assert codes == [0, 2], [err for _, _, err in results]
    (err,) = [err for p, _, err in results if p.returncode == 2]
    assert "pass --force to replace it" in err and err.count("\n") == 1
    assert _pair_is_consistent(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.csv.json", "v.csv"]

"""Output files of the command line: modes, the demo's plot, progress bars (issue 34, item 5)."""

import os
import stat

import numpy as np
import pandas as pd
import pytest

from skldp._cli_common import csv_rows
from tests.cli_support import run

CITY = ["-c", "city", "--categories", "a,b,c", "--epsilon", "1"]


@pytest.fixture
def people(tmp_path):
    path = tmp_path / "people.csv"
    cities = np.random.default_rng(0).choice(["a", "b", "c"], 3000)
    pd.DataFrame({"city": cities}).to_csv(path, index=False)
    return path


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_outputs_get_the_users_umask(people, tmp_path, capsys, umask_022):
    out = tmp_path / "r.csv"
    assert run(["privatize", people, *CITY, "-o", out, "--quiet"], capsys)[0] == 0
    assert _mode(out) == 0o644 and _mode(tmp_path / "r.csv.json") == 0o644  # was 0o600
    dist = tmp_path / "d.parquet"
    assert run(["estimate", out, "-o", dist, "--quiet"], capsys)[0] == 0
    assert _mode(dist) == 0o644
    os.umask(0o027)
    again = tmp_path / "r2.csv.gz"
    assert run(["privatize", people, *CITY, "-o", again, "--quiet"], capsys)[0] == 0
    assert _mode(again) == 0o640 and _mode(tmp_path / "r2.csv.gz.json") == 0o640
    assert run(["estimate", out, "-o", dist, "--force", "--quiet"], capsys)[0] == 0
    assert _mode(dist) == 0o640


def test_csv_rows_counts_the_rows_below_the_header(tmp_path):
    plain = tmp_path / "p.csv"
    pd.DataFrame({"x": np.arange(2_500_000) % 7}).to_csv(plain, index=False)  # > 1 MiB blocks
    assert os.path.getsize(plain) > 2 << 20
    assert csv_rows(plain) == 2_500_000
    gz = tmp_path / "p.csv.gz"
    pd.DataFrame({"x": np.arange(1000)}).to_csv(gz, index=False)
    assert csv_rows(gz) == 1000
    no_end = tmp_path / "n.csv"
    no_end.write_text("x\n1\n2")
    assert csv_rows(no_end) == 2
    header = tmp_path / "h.csv"
    header.write_text("x\n")
    assert csv_rows(header) == 0


def test_progress_has_a_total_for_csv_and_the_estimation_phase(people, tmp_path, capsys):
    pytest.importorskip("tqdm")
    out = tmp_path / "r.csv"
    code, _, err = run(
        ["privatize", people, *CITY, "-o", out, "--progress", "--chunk-size", "1000"], capsys
    )
    assert code == 0
    assert "3.00k/3.00k" in err  # a total, so a percentage and an ETA (was "3.00krow" alone)
    assert "100%" in err
    code, _, err = run(
        ["estimate", out, "-e", "em", "--progress", "-o", tmp_path / "d.csv"], capsys
    )
    assert code == 0
    assert "estimate (EMEstimator): done: 100%" in err and "2/2" in err


def test_the_demo_never_replaces_a_plot_silently(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "skldp-demo.png").write_bytes(b"my own figure")
    (tmp_path / "skldp-demo-2.png").write_bytes(b"another")
    base = ["demo", "--repeats", "1", "--quiet"]
    code, out, _ = run(base, capsys)
    assert code == 0
    written = tmp_path / "skldp-demo-3.png"
    assert f"plot: {written} (skldp-demo.png exists and is kept; --force replaces it)" in out
    assert written.read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "skldp-demo.png").read_bytes() == b"my own figure"
    # an explicit --plot that exists is refused before the runs, and replaced with --force
    code, out, err = run([*base, "--plot", "skldp-demo-2.png"], capsys)
    assert code == 2 and out == ""
    assert err == (
        "skldp demo: error: plot 'skldp-demo-2.png' exists; pass --force to replace it\n"
    )
    code, out, _ = run([*base, "--plot", "skldp-demo-2.png", "--force"], capsys)
    assert code == 0 and (tmp_path / "skldp-demo-2.png").read_bytes().startswith(b"\x89PNG")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []

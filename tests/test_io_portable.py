"""Report files outside skldp, and read_reports with the privatizer (issue 34, item 7)."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from skldp import RAPPOR, EMEstimator, RandomizedResponse
from skldp.io import ReportFileError, read_reports
from tests.cli_support import run

pytest.importorskip("pyarrow")

X = np.array([["a"], ["b"], ["c"], ["a"], ["a"]] * 40, dtype=object)

#: Run with skldp not importable: any import of it fails.
WITHOUT_SKLDP = "import sys; sys.modules['skldp'] = None\n"


def _outside(code):
    out = subprocess.run(
        [sys.executable, "-c", WITHOUT_SKLDP + code], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("cls", [RandomizedResponse, RAPPOR])
def test_pandas_reports_parquet_opens_without_skldp(cls, tmp_path):
    privatizer = cls(epsilon=1.0, categories=[["a", "b", "c"]], random_state=0)
    reports = privatizer.set_output(transform="pandas").fit_transform(X)
    path = tmp_path / "reports.parquet"
    reports.to_parquet(path)
    # pandas, as a user without skldp calls it (was: data type 'skldp_reports[...]' not
    # understood), and pyarrow alone
    text = _outside(
        "import pandas as pd, pyarrow.parquet as pq, json\n"
        f"d = pd.read_parquet({str(path)!r})\n"
        "t = pq.read_table(" + repr(str(path)) + ")\n"
        "meta = json.loads(t.schema.field(0).metadata[b'ARROW:extension:metadata']"
        ".split(b'\\n')[0])\n"
        "print(json.dumps({'dtypes': [str(x) for x in d.dtypes], 'values': d.to_numpy()"
        ".tolist(), 'arrow': str(t.schema.field(0).type), 'meta': meta}))\n"
    )
    got = json.loads(text)
    assert got["dtypes"] == ["Int64"] * reports.shape[1]
    assert np.array_equal(got["values"], reports.to_numpy(dtype=np.int64))
    assert got["arrow"] == "int64"
    channel = privatizer.channels_[0]
    assert got["meta"] == {
        "part": 0,
        "channel": type(channel).__name__,
        "n_inputs": 3,
        "report_width": channel.report_width,
        "categories": ["a", "b", "c"],
    }
    # with skldp, the channel comes back
    back = pd.read_parquet(path)
    assert [repr(t) for t in back.dtypes] == [repr(t) for t in reports.dtypes]
    assert np.array_equal(
        EMEstimator().fit(back).distribution_, EMEstimator().fit(reports).distribution_
    )


@pytest.mark.parametrize(("mechanism", "name"), [("krr", "r.parquet"), ("rappor", "r.csv.gz")])
def test_cli_reports_open_without_skldp(mechanism, name, tmp_path, capsys):
    people = tmp_path / "people.csv"
    pd.DataFrame({"city": X[:, 0]}).to_csv(people, index=False)
    out = tmp_path / name
    argv = ["privatize", people, "-c", "city", "--categories", "a,b,c", "-m", mechanism]
    assert run([*argv, "--epsilon", "1", "-o", out, "--quiet"], capsys)[0] == 0
    text = _outside(
        f"import pandas as pd\nd = pd.read_{'parquet' if name.endswith('parquet') else 'csv'}"
        f"({str(out)!r})\nprint(len(d), list(d.columns))\n"
    )
    column = "report" if mechanism == "krr" else "report_bits"
    assert text.split("\n")[0] == f"{len(X)} [{column!r}]"


def test_read_reports_returns_the_reports_with_their_privatizer(tmp_path, capsys):
    people = tmp_path / "people.csv"
    pd.DataFrame({"city": X[:, 0]}).to_csv(people, index=False)
    out = tmp_path / "r.csv"
    argv = ["privatize", people, "-c", "city", "--categories", "a,b,c", "-m", "rappor"]
    assert run([*argv, "--epsilon", "2", "-o", out, "--quiet"], capsys)[0] == 0
    reports, privatizer = read_reports(out, return_privatizer=True)
    assert isinstance(privatizer, RAPPOR) and privatizer.epsilon == 2.0
    assert privatizer.categories_[0].tolist() == ["a", "b", "c"]
    assert reports.shape == (len(X), 3)
    assert np.array_equal(reports, read_reports(out, width=3))
    assert reports.specs[0].channel == privatizer.channels_[0]
    # the reports carry their channel: no channel= needed, same as with it
    code, cli, _ = run(["estimate", out, "-e", "em", "--quiet"], capsys)
    ours = EMEstimator().fit(reports).distribution_
    assert np.allclose(pd.read_csv(pd.io.common.StringIO(cli))["probability"], ours, atol=1e-9)
    # and the file is checked against its sidecar
    lines = out.read_text().splitlines(keepends=True)
    lines[3] = "07\n" if lines[3] != "07\n" else "06\n"
    out.write_text("".join(lines))
    with pytest.raises(ReportFileError, match="report values were altered"):
        read_reports(out, return_privatizer=True)
    with pytest.raises(ReportFileError, match="does not exist"):
        read_reports(out, return_privatizer=True, metadata=tmp_path / "none.json")

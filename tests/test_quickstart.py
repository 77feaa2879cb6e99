"""The quickstart's code blocks (docs/quickstart.rst) run as doctests, with their printed output."""

import doctest
from pathlib import Path

import pytest

QUICKSTART = Path(__file__).resolve().parents[1] / "docs" / "quickstart.rst"


def test_quickstart_code_blocks_run_as_shown():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    result = doctest.testfile(
        str(QUICKSTART),
        module_relative=False,
        optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS,
        raise_on_error=False,
        verbose=False,
    )
    # every Python block is a doctest: privatize/estimate, the grid search, the experiment
    assert result.attempted >= 20 and result.failed == 0


def test_quickstart_python_blocks_are_all_doctests():
    text = QUICKSTART.read_text(encoding="utf-8")
    assert ".. code-block:: python" not in text  # a plain block would not be run
    assert text.count(".. code-block:: pycon") == 3

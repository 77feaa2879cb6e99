"""The command lines the docs build gives the examples (sphinx-gallery's ``reset_argv``).

Fast mode (``SKLDP_GALLERY_FAST=1``, the default of the docs build) passes each script its own
``--quick`` flag (small n, few repetitions: every page in seconds); ``SKLDP_GALLERY_FAST=0``
runs the scripts' full experiments (hours). Figures a script would write go to a temporary
folder: the gallery shows the figures the scripts leave open, and the repository stays clean.
Scripts without a command line read ``SKLDP_GALLERY_FAST`` themselves.
"""

import atexit
import os
import shutil
import tempfile
from pathlib import Path


def fast():
    """Whether the docs build runs the examples in their fast mode (the default)."""
    return os.environ.get("SKLDP_GALLERY_FAST", "1") != "0"


#: script -> (arguments in fast mode, arguments in both modes); ``{out}`` is a PNG path in a
#: temporary folder
ARGS = {
    "compressive_experiments": (["--quick", "--runs", "1"], ["--output", "{out}"]),
    "dask_simulation": (["--rows", "2e5", "--partition-rows", "5e4"], ["--threads"]),
    "plot_crossover_kairouz2016_fig2": (["--quick"], ["--no-progress", "--out", "{out}"]),
    "plot_decoders_kairouz2016_fig1": (["--quick"], ["--no-progress", "--out", "{out}"]),
    "plot_figure2_context_aware": (["--quick"], ["--no-progress", "--output", "{out}"]),
    "plot_open_alphabet_kairouz2016_fig3": (["--quick"], ["--no-progress", "--out", "{out}"]),
    "plot_uldp_figure5": (["--quick"], ["--no-progress", "--plot", "{out}"]),
    "plot_uldp_figure6": (["--quick"], ["--no-progress", "--plot", "{out}"]),
    "plot_uldp_figure7": (["--quick"], ["--no-progress", "--plot", "{out}"]),
    "plot_uldp_figure8": (["--quick"], ["--plot", "{out}"]),
    "table1_gowalla": (["--quick"], ["--no-progress"]),
    "uldp_pum_table1": (["--quick"], []),
}


def reset_argv(gallery_conf, script_vars):
    """``sys.argv[1:]`` for the example ``script_vars["src_file"]``."""
    stem = Path(script_vars["src_file"]).stem
    quick, always = ARGS.get(stem, ([], []))
    folder = tempfile.mkdtemp(prefix="skldp-gallery-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)  # removed when the build ends
    out = str(Path(folder) / f"{stem}.png")
    return [arg.format(out=out) for arg in (quick if fast() else []) + always]

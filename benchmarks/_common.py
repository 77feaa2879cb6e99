"""Shared by the benchmark drivers and their per-case subprocesses (numpy and stdlib only).

The peers' virtual environment imports this file too, so it must not import skldp, pandas or
scikit-learn.
"""

import os
import resource

import numpy as np

#: Seed of the synthetic data; the same draws in every library (same numpy).
DATA_SEED = 20240601


def zipf_distribution(k, s=1.1):
    """A Zipf(s) distribution over k categories: the usual heavy-tailed benchmark input."""
    p = 1.0 / np.arange(1, k + 1) ** s
    return p / p.sum()


def make_data(n, k, seed=DATA_SEED, chunk=1_000_000):
    """n draws from :func:`zipf_distribution`, built in chunks (temporaries bounded by chunk)."""
    p = zipf_distribution(k)
    cdf = np.cumsum(p)
    cdf[-1] = 1.0
    out = np.empty(n, dtype=np.int64)
    rng = np.random.default_rng(seed)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        out[start:stop] = np.searchsorted(cdf, rng.random(stop - start), side="right")
    return out, p


def current_rss_mb():
    """Resident memory of this process now (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # pragma: no cover - not Linux
        return 0.0


def reset_peak_rss():
    """Reset the kernel's peak-RSS mark of this process (Linux >= 4.0); False if unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:  # pragma: no cover - not Linux, or not allowed
        return False


def peak_rss_mb():
    """Peak resident memory since the last :func:`reset_peak_rss` (VmHWM), else ru_maxrss."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def l1(a, b):
    return float(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)).sum())


def markdown_to_rst(text):
    """Turn the pipe tables and paragraphs of our Markdown results into reStructuredText."""
    out, table = [], []

    def flush():
        if not table:
            return
        rows = [
            [c.strip().replace("`", "``") for c in line.strip().strip("|").split("|")]
            for line in table
        ]
        rows = [r for r in rows if not all(set(c) <= set("-:") for c in r)]
        out.extend([".. list-table::", "   :header-rows: 1", ""])
        for row in rows:
            out.append("   * - " + (row[0] or ".."))
            out.extend("     - " + (c or "..") for c in row[1:])
        out.append("")
        table.clear()

    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            table.append(line)
            continue
        flush()
        if line.startswith("#"):
            title = line.lstrip("#").strip()
            out.extend([title, "-" * len(title)])
        else:
            out.append(line.replace("`", "``"))
    flush()
    return "\n".join(out) + "\n"

"""multi-freq-ldpy's dBitFlip on given data, run with the peers' Python (bench_dbitflip_peer.py).

Usage: ``python benchmarks/_peer_dbitflip.py DATA.npy OUT.npy k d epsilon``. Privatizes every
value with ``dBitFlipPM_Client`` (one call per person, its API; the numba JIT is warmed up
first, outside the timing), estimates with ``dBitFlipPM_Aggregator_MI`` (clipped and
normalized), saves the estimate to OUT.npy and prints one JSON line with the seconds.
"""

import json
import sys
import time

import numpy as np
from multi_freq_ldpy.long_freq_est.dBitFlipPM import (
    dBitFlipPM_Aggregator_MI,
    dBitFlipPM_Client,
)


def main():
    data_path, out_path, k, d, eps = sys.argv[1:6]
    k, d, eps = int(k), int(d), float(eps)
    x = np.load(data_path)
    dBitFlipPM_Client(0, k, k, d, eps)  # compile (numba) before timing
    t0 = time.perf_counter()
    reports = [dBitFlipPM_Client(int(v), k, k, d, eps) for v in x]
    t1 = time.perf_counter()
    est = dBitFlipPM_Aggregator_MI(reports, k, d, eps)
    t2 = time.perf_counter()
    np.save(out_path, np.asarray(est, dtype=float))
    print(json.dumps({"privatize_s": t1 - t0, "estimate_s": t2 - t1, "total_s": t2 - t0}))


if __name__ == "__main__":
    main()

"""skldp's PrefixExtension / TreeHistogram against pure-ldp's PEM and TreeHist, identical data.

pure-ldp is never installed into the project's environment: it runs in a throwaway venv,

    python -m venv /tmp/peers_hh
    /tmp/peers_hh/bin/pip install pure-ldp==1.2.0 "xxhash<2"   # xxhash 1.4.4: its hashing works

and this script calls that interpreter (``PEERS_PYTHON``, default /tmp/peers_hh/bin/python)
on the same data file. Run from the checkout:

    PYTHONPATH=$PWD python benchmarks/bench_heavy_hitters_peers.py [n] [runs]

Data: 10-bit ids, Zipf(1.1) over the 1024 ids (shuffled by a fixed permutation), epsilon = 4,
top 8. pure-ldp: PEM with start_length 3, fragment_length 1 (levels 4..10, 7 groups, OLH),
TreeHist with fragment_length 1 (binary tree, epsilon/2 + epsilon/2; its server given
the OLH oracle it builds by default, which numpy 2 refuses to build, and a length-aware index
mapper: by default a prefix and a word with the same digits share one index), its defaults
otherwise.
skldp: PrefixExtension and TreeHistogram with their defaults. Times: the server's
aggregation plus discovery (pure-ldp: aggregate + find_heavy_hitters; skldp:
HeavyHitterEstimator.fit on the reports), and the clients' privatisation, per run.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

EPS, BITS, TOP = 4.0, 10, 8


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    w = (np.arange(2**BITS) + 1.0) ** -1.1
    perm = np.random.default_rng(12345).permutation(2**BITS)
    return perm[rng.choice(2**BITS, size=n, p=w / w.sum())]


def _tree_index(prefix):
    # a distinct index for every bit string of length <= BITS: 2^len + its value
    return (1 << len(prefix)) + (int(prefix, 2) if prefix else 0)


def peer_main(path):
    import random

    from pure_ldp.frequency_oracles.local_hashing import LHServer
    from pure_ldp.heavy_hitters.prefix_extending.pem_client import PEMClient
    from pure_ldp.heavy_hitters.prefix_extending.pem_server import PEMServer
    from pure_ldp.heavy_hitters.treehistogram.treehist_client import TreeHistClient
    from pure_ldp.heavy_hitters.treehistogram.treehist_server import TreeHistServer

    x = np.load(path)
    seed = int(os.environ.get("PEER_SEED", "0"))
    random.seed(seed)
    np.random.seed(seed)
    words = [format(int(v), f"0{BITS}b") for v in x]
    out = {}
    for name, make in [
        (
            "PEM",
            lambda: (
                PEMClient(EPS, 3, BITS, 1),
                PEMServer(EPS, 3, BITS, 1),
            ),
        ),
        (
            "TreeHist",
            # its default server calls np.zeros(None), refused by numpy 2: the oracle it means
            # and a length-aware index: its default maps the prefix "1" and the word
            # "0000000001" to the same index of its one prefix oracle (recall near 0)
            lambda: (
                TreeHistClient(EPS, 1, BITS, index_mapper=_tree_index),
                TreeHistServer(
                    EPS,
                    BITS,
                    1,
                    index_mapper=_tree_index,
                    fo_server=LHServer(EPS / 2, 2 ** (BITS + 1), use_olh=True),
                ),
            ),
        ),
    ]:
        client, server = make()
        if name == "TreeHist":  # room for the length-aware indices
            for side in (client, server):
                side.word_estimator.update_params(d=2 ** (BITS + 1))
                side.fragment_estimator.update_params(d=2 ** (BITS + 1))
        t0 = time.perf_counter()
        priv = [client.privatise(w) for w in words]
        t1 = time.perf_counter()
        for p in priv:
            server.aggregate(p)
        found, _ = server.find_heavy_hitters(k=TOP)
        t2 = time.perf_counter()
        ids = [int(s.replace("*", ""), 2) for s in found]
        out[name] = {"found": ids, "client": t1 - t0, "server": t2 - t1}
    print(json.dumps(out))


def skldp_side(x, seed):
    from skldp import HeavyHitterEstimator, PrefixExtension, TreeHistogram
    from skldp.privacy import simulation

    out = {}
    with simulation():
        for name, P in [("PEM", PrefixExtension), ("TreeHist", TreeHistogram)]:
            t0 = time.perf_counter()
            reports = P(EPS, n_bits=BITS, random_state=seed).fit_transform(x)
            t1 = time.perf_counter()
            est = HeavyHitterEstimator(top_k=TOP).fit(reports)
            t2 = time.perf_counter()
            out[name] = {"found": list(est.heavy_hitters_), "client": t1 - t0, "server": t2 - t1}
    return out


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    peer = os.environ.get("PEERS_PYTHON", "/tmp/peers_hh/bin/python")
    rows = {k: {"ours": [], "peer": []} for k in ("PEM", "TreeHist")}
    for r in range(runs):
        x = make_data(n, r)
        counts = np.bincount(x, minlength=2**BITS)
        top = set(np.argsort(-counts, kind="stable")[:TOP].tolist())
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "x.npy")
            np.save(path, x)
            env = dict(os.environ, PEER_SEED=str(r), PYTHONPATH="")
            res = subprocess.run(
                [peer, __file__, "--peer", path], capture_output=True, text=True, env=env
            )
            if res.returncode:
                raise RuntimeError(res.stderr[-2000:])
            theirs = json.loads(res.stdout.strip().splitlines()[-1])
        ours = skldp_side(x, r)
        for k in rows:
            for who, got in (("ours", ours[k]), ("peer", theirs[k])):
                hit = len(top & set(got["found"]))
                rows[k][who].append((hit / TOP, hit / max(len(got["found"]), 1), got["server"]))
                rows[k][who][-1] += (got["client"],)
        print(f"run {r}: ours {ours}, peer {theirs}", flush=True)
    for k, d in rows.items():
        o, p = np.array(d["ours"]), np.array(d["peer"])
        print(
            f"{k}: n = {n}, {runs} runs. recall ours {o[:, 0].mean():.3f} peer "
            f"{p[:, 0].mean():.3f}; precision ours {o[:, 1].mean():.3f} peer "
            f"{p[:, 1].mean():.3f}; server median ours {np.median(o[:, 2]):.4f} s peer "
            f"{np.median(p[:, 2]):.2f} s (ratio {np.median(p[:, 2]) / np.median(o[:, 2]):.0f}); "
            f"client median ours {np.median(o[:, 3]):.4f} s peer {np.median(p[:, 3]):.2f} s"
        )


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--peer":
        peer_main(sys.argv[2])
    else:
        main()

#!/usr/bin/env python3
"""Building -txindex and -blockfilterindex=basic, peerd beside bitcoind on
the same chain: wall time and bytes on disk.

    scripts/bench-index.py [--blocks N] [--runs R] [--json]

A signed regtest chain of N blocks (default 2,000; `peertool chaingen
--seed bench --genesis`, five transactions a block once coins mature) is
loaded into a peerd datadir (`peertool connect-blocks`) and a Core one
(`-loadblock`), without indexes. Then, R times (default 2), each node
starts with both indexes and no index directory: the wall time from the
process start to getindexinfo showing both indexes synced at height N,
and the bytes the indexes directory holds once the node stopped (file
sizes, and the blocks allocated), each printed with the load average.
Regtest, loopback only, -connect=0. --json prints one object at the end
(what tests/integration/test_bench_index.py reads).
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time

import benchlib
from benchlib import PEERTOOL, disk_bytes, peerctl

INDEXES = ("txindex", "basic block filter index")


def index_bytes(indexes):
    """disk_bytes of the whole indexes directory, and file sizes of each index in it."""
    return disk_bytes(indexes), {k: disk_bytes(os.path.join(indexes, *k.split("/")))[0]
                                 for k in ("txindex", "blockfilter/basic")}


def synced(info, height):
    return all(k in info and info[k]["synced"] and info[k]["best_block_height"] == height
               for k in INDEXES)


def peerd_run(datadir, height):
    shutil.rmtree(os.path.join(datadir, "regtest", "indexes"), ignore_errors=True)
    t0 = time.monotonic()
    p = benchlib.start_peerd_ctl(datadir, "-txindex", "-blockfilterindex=basic")
    try:
        deadline = t0 + 600
        while time.monotonic() < deadline:
            r = peerctl(datadir, "getindexinfo")
            if r.returncode == 0 and synced(json.loads(r.stdout), height):
                took = time.monotonic() - t0
                break
            if p.poll() is not None:
                raise SystemExit("peerd exited with %s" % p.returncode)
            time.sleep(0.02)
        else:
            raise SystemExit("peerd's indexes not synced in 600 s")
    finally:
        benchlib.stop_peerd_ctl(datadir, p)
    return took, index_bytes(os.path.join(datadir, "regtest", "indexes"))


def core_run(binary, directory, height):
    shutil.rmtree(os.path.join(directory, "core", "regtest", "indexes"), ignore_errors=True)
    took, n = benchlib.core_until(binary, directory, ("-disablewallet=1", "-txindex", "-blockfilterindex=basic"),
                                  lambda n: synced(n.getindexinfo(), height), "Core's indexes", 0.02)
    return took, index_bytes(os.path.join(n.datadir, "regtest", "indexes"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--blocks", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    binary, why = benchlib.find_bitcoind()
    if not binary:
        raise SystemExit(why)
    tmp = tempfile.mkdtemp(prefix="bench-index-")
    out = {"blocks": a.blocks, "runs": []}
    try:
        chain = os.path.join(tmp, "chain.dat")
        subprocess.run([PEERTOOL, "chaingen", "--seed", "bench", "--genesis", "--blocks", str(a.blocks),
                        "--no-verify", "--out", chain], check=True, capture_output=True)
        dd = os.path.join(tmp, "peerd")
        height = benchlib.load_chain(binary, tmp, chain, ["-disablewallet=1"])
        out["height"] = height
        out["chain_bytes"] = os.path.getsize(chain)
        if not a.json:
            print("chain: %d blocks, %d bytes; load average %s" % (height, out["chain_bytes"], os.getloadavg()))
        for i in range(a.runs):
            tp, ((sp, ap_), each_p) = peerd_run(dd, height)
            load_p = os.getloadavg()[0]
            tc, ((sc, ac), each_c) = core_run(binary, tmp, height)
            load_c = os.getloadavg()[0]
            out["runs"].append({"peerd_s": tp, "core_s": tc, "peerd_bytes": sp, "peerd_alloc": ap_,
                                "core_bytes": sc, "core_alloc": ac, "peerd_each": each_p,
                                "core_each": each_c, "load": [load_p, load_c]})
            if not a.json:
                print("run %d: peerd %.2f s, %d bytes (%d allocated; %s); Core %.2f s, %d bytes "
                      "(%d allocated; %s); Core/peerd time %.2f, bytes %.2f; load %.1f %.1f"
                      % (i + 1, tp, sp, ap_, each_p, tc, sc, ac, each_c, tc / tp, sc / sp, load_p, load_c),
                      flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()

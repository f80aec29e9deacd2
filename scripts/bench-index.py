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
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import bitcoind  # noqa: E402

BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
PEERD = os.environ.get("PEERD_BIN", os.path.join(BUILD, "bin", "peerd"))
PEERCTL = os.environ.get("PEERCTL_BIN", os.path.join(BUILD, "bin", "peerctl"))
PEERTOOL = os.environ.get("PEERTOOL_BIN", os.path.join(BUILD, "bin", "peertool"))
INDEXES = ("txindex", "basic block filter index")


def disk_bytes(path):
    """(sum of file sizes, bytes of blocks allocated) under path."""
    size = alloc = 0
    for d, _, files in os.walk(path):
        for f in files:
            st = os.stat(os.path.join(d, f))
            size += st.st_size
            alloc += st.st_blocks * 512
    return size, alloc


def index_bytes(indexes):
    """disk_bytes of the whole indexes directory, and file sizes of each index in it."""
    return disk_bytes(indexes), {k: disk_bytes(os.path.join(indexes, *k.split("/")))[0]
                                 for k in ("txindex", "blockfilter/basic")}


def synced(info, height):
    return all(k in info and info[k]["synced"] and info[k]["best_block_height"] == height
               for k in INDEXES)


def peerd_run(datadir, height):
    shutil.rmtree(os.path.join(datadir, "regtest", "indexes"), ignore_errors=True)
    ctl = [PEERCTL, "-regtest", "-datadir=" + datadir]
    t0 = time.monotonic()
    p = subprocess.Popen([PEERD, "-regtest", "-datadir=" + datadir, "-listen=0", "-connect=0",
                          "-txindex", "-blockfilterindex=basic"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = t0 + 600
        while time.monotonic() < deadline:
            r = subprocess.run(ctl + ["getindexinfo"], capture_output=True, text=True)
            if r.returncode == 0 and synced(json.loads(r.stdout), height):
                took = time.monotonic() - t0
                break
            if p.poll() is not None:
                raise SystemExit("peerd exited with %s" % p.returncode)
            time.sleep(0.02)
        else:
            raise SystemExit("peerd's indexes not synced in 600 s")
    finally:
        subprocess.run(ctl + ["stop"], capture_output=True)
        p.wait(timeout=60)
    return took, index_bytes(os.path.join(datadir, "regtest", "indexes"))


def core_run(binary, directory, height):
    shutil.rmtree(os.path.join(directory, "core", "regtest", "indexes"), ignore_errors=True)
    t0 = time.monotonic()
    n = bitcoind.Bitcoind(binary, directory, name="core",
                          args=("-connect=0", "-disablewallet=1", "-txindex", "-blockfilterindex=basic"))
    try:
        n.wait_ready(300)
        bitcoind.wait_until(lambda: synced(n.getindexinfo(), height), 600, "Core's indexes", interval=0.02)
        took = time.monotonic() - t0
    finally:
        n.stop()
    return took, index_bytes(os.path.join(n.datadir, "regtest", "indexes"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--blocks", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    binary, why = bitcoind.find_bitcoind()
    if not binary:
        raise SystemExit(why)
    tmp = tempfile.mkdtemp(prefix="bench-index-")
    out = {"blocks": a.blocks, "runs": []}
    try:
        chain = os.path.join(tmp, "chain.dat")
        subprocess.run([PEERTOOL, "chaingen", "--seed", "bench", "--genesis", "--blocks", str(a.blocks),
                        "--no-verify", "--out", chain], check=True, capture_output=True)
        dd = os.path.join(tmp, "peerd")
        r = subprocess.run([PEERTOOL, "connect-blocks", dd, chain], capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(r.stderr)
        height = json.loads(r.stdout)["height"]
        n = bitcoind.Bitcoind(binary, tmp, name="core", args=("-loadblock=" + chain, "-connect=0",
                                                              "-disablewallet=1"))
        n.wait_ready(300)
        bitcoind.wait_until(lambda: n.getblockcount() == height, 600, "Core's import")
        n.stop()
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

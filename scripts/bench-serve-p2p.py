#!/usr/bin/python3
"""A 1 MB block served over P2P v1 against v2, by bitcoind and by peerd, one sitting.

    scripts/bench-serve-p2p.py [--runs N]

Starts a regtest bitcoind (../shared/bin or $BITCOIND; benchlib.py's Bitcoind
fixture) and peerd (build/bin or $PEERD_BIN), each listening on loopback
only, with v2 on (both defaults). On bitcoind: 101 blocks to an OP_TRUE
script, then one of about 1 MB (a transaction spending the first coinbase
into 110 outputs of 9,000-byte OP_RETURN scripts, through generateblock,
which checks consensus only); every block goes to peerd by submitblock.
Then, N times (default 3), in the order Core v1, Core v2, peerd v1, peerd
v2, the peerbench row ServeBlockP2P (bench/bench_serve_p2p.c: a client on
peerd's own codec and BIP324 code, 60 getdata -> block rounds on one
connection after 5 warm-up rounds) against each. Prints each run's median
and p90 and, per node, the medians' median and v2/v1.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import benchlib
from benchlib import PEERD, Bitcoind, call, find_bitcoind, free_port

PEERBENCH = benchlib.tool("peerbench")
NOTE = re.compile(r"ServeBlockP2P: (v[12]) (\d+)-byte block, \d+ rounds: median ([\d.]+) ms, "
                  r"p90 ([\d.]+) ms, client's \w+ ([\d.]+) ms")


def run_row(port, block, v2):
    env = dict(os.environ, PEERD_BENCH_PEER="127.0.0.1:%d" % port, PEERD_BENCH_BLOCK=block,
               PEERD_BENCH_V2="1" if v2 else "0")
    out = subprocess.run([PEERBENCH, "^ServeBlockP2P$"], env=env, capture_output=True, text=True,
                         timeout=600)
    m = NOTE.search(out.stdout)
    if out.returncode or not m:
        sys.exit("peerbench failed (%d):\n%s%s" % (out.returncode, out.stdout, out.stderr))
    return int(m.group(2)), float(m.group(3)), float(m.group(4)), float(m.group(5))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-serve-p2p-")
    core = peerd = None
    try:
        binary, why = find_bitcoind()
        if not binary:
            sys.exit("bench-serve-p2p needs a bitcoind: %s" % why)
        core = Bitcoind(binary, tmp, "core", args=["-printtoconsole=0"]).wait_ready()
        pport, prpc = free_port(), free_port()
        log = open(os.path.join(tmp, "peerd.log"), "w")
        peerd = benchlib.start_http(PEERD, os.path.join(tmp, "peerd"), prpc, log=log, listen=True,
                                    extra=["-listen=1", "-bind=127.0.0.1", "-port=%d" % pport, "-connect=0"])
        benchlib.wait_rpc(prpc, peerd, "peerd")
        desc = core.rpc("getdescriptorinfo", "raw(51)")["descriptor"]
        hashes = core.rpc("generatetodescriptor", 101, desc)
        first_cb = core.rpc("getblock", hashes[0])["tx"][0]
        block = core.rpc("generateblock", desc, [benchlib.big_tx(first_cb, 110)])["hash"]
        for h in hashes + [block]:
            if call(prpc, "submitblock", [core.rpc("getblock", h, 0)]) is not None:
                sys.exit("peerd refused block %s" % h)
        rows = {}
        with open("/proc/loadavg") as f:
            print("load average before: %s" % " ".join(f.read().split()[:3]))
        for run in range(a.runs):
            for name, port in (("core", core.port), ("peerd", pport)):
                for v2 in (False, True):
                    size, med, p90, client = run_row(port, block, v2)
                    key = (name, "v2" if v2 else "v1")
                    rows.setdefault(key, []).append((med, p90, client))
                    print("run %d %-5s %s: %d bytes, median %.3f ms, p90 %.3f ms, client %.3f ms"
                          % (run + 1, name, key[1], size, med, p90, client), flush=True)
        with open("/proc/loadavg") as f:
            print("load average after: %s" % " ".join(f.read().split()[:3]))
        mid = lambda xs: sorted(xs)[len(xs) // 2]
        print("%-6s %12s %12s %12s %12s %8s" % ("node", "v1 median", "v2 median", "v1 p90", "v2 p90",
                                                "v2/v1"))
        for name in ("core", "peerd"):
            v1 = rows[(name, "v1")]
            v2 = rows[(name, "v2")]
            m1, m2 = mid([r[0] for r in v1]), mid([r[0] for r in v2])
            print("%-6s %12.3f %12.3f %12.3f %12.3f %8.2f" % (
                name, m1, m2, mid([r[1] for r in v1]), mid([r[1] for r in v2]), m2 / m1))
    finally:
        if peerd:
            benchlib.stop_all([peerd], timeout=60)
        if core:
            core.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""-reindex and -reindex-chainstate, peerd beside bitcoind on the same chain.

    scripts/bench-reindex.py CHAIN.dat [RUNS]

CHAIN.dat is a block file with genesis first (`peertool chaingen --genesis`).
peerd's datadir is made with `peertool connect-blocks`, Core's with
`-loadblock`; then each node is started RUNS times (default 2) with
-reindex and with -reindex-chainstate, and the wall time from the start of
the process to the tip answered over its control/RPC interface is printed
with the load average, and for peerd when its control socket first
answered (the reindex runs after the start, so within a second). Regtest, loopback only, -connect=0 for Core.
"""
import os
import shutil
import sys
import tempfile
import time

import benchlib
from benchlib import peerctl


def peerd_run(datadir, opt, height):
    t0 = time.monotonic()
    p = benchlib.start_peerd_ctl(datadir, opt)
    first = None
    try:
        while True:
            r = peerctl(datadir, "getblockcount")
            # The reindex runs after the start: the control socket answers
            # from the first moments (it used to stay silent to the end).
            if r.returncode == 0 and first is None:
                first = time.monotonic() - t0
            if r.returncode == 0 and r.stdout.strip() == str(height):
                return time.monotonic() - t0, first
            if p.poll() is not None:
                raise SystemExit("peerd exited with %s" % p.returncode)
            time.sleep(0.05)
    finally:
        benchlib.stop_peerd_ctl(datadir, p)


def core_run(binary, directory, opt, height):
    return benchlib.core_until(binary, directory, (opt,), lambda n: n.getblockcount() == height,
                               "Core's tip", 0.05)[0]


def main():
    chain = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    binary, why = benchlib.find_bitcoind()
    if not binary:
        raise SystemExit(why)
    tmp = tempfile.mkdtemp(prefix="bench-reindex-")
    try:
        dd = os.path.join(tmp, "peerd")
        height = benchlib.load_chain(binary, tmp, chain)
        print("chain: %d blocks; load average %s" % (height, os.getloadavg()))
        for opt in ("-reindex", "-reindex-chainstate"):
            for i in range(runs):
                tp, first = peerd_run(dd, opt, height)
                tc = core_run(binary, tmp, opt, height)
                print("%-20s run %d: peerd %.2f s (first answer after %.2f s), Core %.2f s "
                      "(Core/peerd %.2f); load %.1f"
                      % (opt, i + 1, tp, first, tc, tc / tp, os.getloadavg()[0]), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

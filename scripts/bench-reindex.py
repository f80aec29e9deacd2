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


def peerd_run(datadir, opt, height):
    t0 = time.monotonic()
    p = subprocess.Popen([PEERD, "-regtest", "-datadir=" + datadir, "-listen=0", "-connect=0", opt],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = None
    try:
        while True:
            r = subprocess.run([PEERCTL, "-regtest", "-datadir=" + datadir, "getblockcount"],
                               capture_output=True, text=True)
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
        subprocess.run([PEERCTL, "-regtest", "-datadir=" + datadir, "stop"], capture_output=True)
        p.wait(timeout=60)


def core_run(binary, directory, opt, height):
    t0 = time.monotonic()
    n = bitcoind.Bitcoind(binary, directory, name="core", args=(opt, "-connect=0"))
    try:
        n.wait_ready(300)
        bitcoind.wait_until(lambda: n.getblockcount() == height, 600, "Core's tip", interval=0.05)
        return time.monotonic() - t0
    finally:
        n.stop()


def main():
    chain = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    binary, why = bitcoind.find_bitcoind()
    if not binary:
        raise SystemExit(why)
    tmp = tempfile.mkdtemp(prefix="bench-reindex-")
    try:
        dd = os.path.join(tmp, "peerd")
        r = subprocess.run([PEERTOOL, "connect-blocks", dd, chain], capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(r.stderr)
        height = json.loads(r.stdout)["height"]
        n = bitcoind.Bitcoind(binary, tmp, name="core", args=("-loadblock=" + chain, "-connect=0"))
        n.wait_ready(300)
        bitcoind.wait_until(lambda: n.getblockcount() == height, 600, "Core's import")
        n.stop()
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

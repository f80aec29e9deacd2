#!/usr/bin/python3
"""Address manager memory per entry, peerd against bitcoind, in one sitting.

    scripts/bench-addrman-memory.py [--adds N] [--seed S]

Starts a regtest bitcoind (../shared/bin or $BITCOIND) and peerd (build/bin
or $PEERD_BIN), both with -test=addrman (the same key, so the same calls
fill the same slots), -connect=0 (nothing is ever dialled), -listen=0 and
no seeds, then gives both the same N (default 160,000) addpeeraddress calls
for random publicly routable IPv4 addresses over HTTP JSON-RPC batches.
Random inserts into Core's 1,024 x 64 new table fill it towards its 65,536
slots (160,000 fill about 91 %). Prints each node's entries
(getaddrmaninfo) and its resident memory (VmRSS) after the first tenth of
the calls and at the end: the growth between the two divided by the
entries added between them is the bytes an entry, allocator overhead
included and the RPC server's own buffers (warm after the first tenth)
left out, measured the same way for both. Loopback only; every process
started is stopped at the end.
"""
import argparse
import os
import random
import shutil
import sys
import tempfile
import time

import benchlib
from benchlib import BITCOIND, PEERD, call, free_port, post, wait_rpc

BATCH = 1000
# First octets that are publicly routable as a whole (no private, shared,
# loopback, link-local, benchmarking, documentation or multicast range).
FIRST = [a for a in range(1, 224) if a not in (10, 100, 127, 169, 172, 192, 198, 203)]


def rss(pid):
    return benchlib.status_kb(pid, "VmRSS") * 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--adds", type=int, default=160000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    addrs = ["%d.%d.%d.%d" % (rng.choice(FIRST), rng.randrange(256), rng.randrange(256), rng.randrange(1, 255))
             for _ in range(a.adds)]
    tmp = tempfile.mkdtemp(prefix="bench-addrman-")
    procs = []
    try:
        nodes = []
        common = ["-test=addrman", "-connect=0", "-dnsseed=0", "-fixedseeds=0"]
        for name, binary, core in (("core", BITCOIND, True), ("peerd", PEERD, False)):
            port = free_port()
            p = benchlib.start_http(binary, os.path.join(tmp, name), port, core=core, extra=common)
            procs.append(p)
            nodes.append((name, port, p))
        for name, port, p in nodes:
            wait_rpc(port, p, name)
        time.sleep(2)  # both settle (Core's first peers.dat dump, the loops' first ticks)
        print("%-6s %9s %9s %12s %12s %10s" % ("node", "warm", "entries", "RSS warm", "RSS end", "B/entry"))
        warm_calls = len(addrs) // 10 // BATCH * BATCH
        for name, port, p in nodes:
            t0 = time.monotonic()
            for i in range(0, len(addrs), BATCH):
                if i == warm_calls:
                    warm_rss = rss(p.pid)
                    warm = call(port, "getaddrmaninfo", timeout=300)["all_networks"]["total"]
                body = [{"jsonrpc": "2.0", "method": "addpeeraddress", "params": [x, 8333], "id": i + k}
                        for k, x in enumerate(addrs[i:i + BATCH])]
                out = post(port, body, timeout=300)
                if not isinstance(out, list) or any(r.get("error") for r in out):
                    sys.exit("%s: addpeeraddress failed: %r" % (name, out))
            secs = time.monotonic() - t0
            total = call(port, "getaddrmaninfo", timeout=300)["all_networks"]["total"]
            end_rss = rss(p.pid)
            print("%-6s %9d %9d %12d %12d %10.0f   (%d calls in %.1f s)"
                  % (name, warm, total, warm_rss, end_rss, (end_rss - warm_rss) / max(total - warm, 1),
                     len(addrs), secs))
    finally:
        benchlib.stop_all(procs)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

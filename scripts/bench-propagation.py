#!/usr/bin/python3
"""Block propagation through one hop: peerd against Bitcoin Core, same blocks.

    scripts/bench-propagation.py [--blocks N] [--txs T] [--keep DIR]

Two lines of nodes fed by one miner, all regtest on 127.0.0.1:

    Core A -> peerd -> Core B1
    Core A -> Core C -> Core B2

A connects out to peerd and to C; peerd and C each connect out to their B
(B1 and B2 have no other peer). After warm-up blocks, so every taker has
chosen its giver as a BIP152 high-bandwidth peer, each round A's wallet
makes T transactions (default 100) and the script waits until all four
mempools hold them (warm mempools: the block is rebuilt from them on every
hop), then A mines one block (generatetoaddress). The time of a line is
from just before that call to the moment its B logs `UpdateTip` for the
block (Core's debug.log, -logtimemicros; the same clock as the script's).
Prints each round and then the median and 90th percentile of both lines
side by side, with the load average; then the same from A's own
`UpdateTip` for the block (A's block making, shared by both lines, left
out). N rounds (default 20).

The nodes come from the integration tests' own classes (tests/integration:
Bitcoind for Core, Peerd for peerd: $BITCOIND or ../shared/bin/bitcoind,
$PEERD_BIN or build/bin/peerd). No seeds, no DNS, nothing leaves the
machine; every process started is stopped at the end.
"""
import argparse
import os
import pathlib
import re
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
from bitcoind import Bitcoind, find_bitcoind, wait_until  # noqa: E402
from conftest import Peerd  # noqa: E402

CORE_ARGS = ("-logtimemicros=1", "-debug=cmpctblock", "-checkblockindex=0", "-checkmempool=0")


def tip_times(node, hashes):
    """{hash: UNIX time of node's UpdateTip to it} from node's debug.log."""
    pat = re.compile(r"^(\S+)Z UpdateTip: new best=([0-9a-f]{64})", re.M)
    out = {}
    with open(node.debug_log) as f:
        for stamp, h in pat.findall(f.read()):
            if h in hashes:
                when = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=timezone.utc)
                out[h] = when.timestamp()
    return out


def p90(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--blocks", type=int, default=20, help="measured blocks (default 20)")
    ap.add_argument("--txs", type=int, default=100, help="transactions a block (default 100)")
    ap.add_argument("--keep", help="keep the nodes' directories here")
    args = ap.parse_args()
    binary, why = find_bitcoind()
    if binary is None:
        sys.exit(why)
    top = args.keep or tempfile.mkdtemp(prefix="peerd-bench-prop-")
    os.makedirs(top, exist_ok=True)
    nodes = []

    def core(name, *extra):
        n = Bitcoind(binary, top, name=name, args=CORE_ARGS + extra, start_timeout=60)
        nodes.append(n)
        return n.wait_ready()

    try:
        a = core("coreA")
        c = core("coreC", "-disablewallet=1")
        b1 = core("coreB1", "-disablewallet=1")
        b2 = core("coreB2", "-disablewallet=1")
        d = Peerd(pathlib.Path(top), args=("-connect=0",), name="peerd")
        nodes.append(d)
        a.create_wallet()
        a.fund_wallet(per_type=1)
        # Many confirmed coins, so a round's transactions do not chain.
        a.rpc("sendmany", "", {a.new_address("bech32"): 0.2 for _ in range(2 * args.txs)},
              wallet=a.wallet)
        a.mine(1)
        a.connect_to("127.0.0.1:%d" % d.port)
        a.connect_to("127.0.0.1:%d" % c.port)
        d.rpc("addnode", "127.0.0.1:%d" % b1.port, "add")
        c.connect_to("127.0.0.1:%d" % b2.port)
        everyone = (d, c, b1, b2)

        def best(n):
            return n.rpc("getbestblockhash")

        def caught_up():
            h = best(a)
            return all(best(n) == h for n in everyone)

        wait_until(caught_up, 120, "every node to sync A's chain")
        # Warm-up: one block at a time, so each taker chooses its giver as
        # a high-bandwidth peer (Core asks the peer whose block was the
        # only one in flight; peerd the peer whose block became its tip).
        for _ in range(4):
            a.mine(1)
            wait_until(caught_up, 30, "every node to follow A")
        rows = []
        measured = set()
        for r in range(args.blocks):
            txids = [a.send_to(a.new_address("bech32"), 0.01) for _ in range(args.txs)]
            want = set(txids)
            wait_until(lambda: all(want <= set(n.rpc("getrawmempool")) for n in everyone), 120,
                       "the mempools to fill")
            t0 = time.time()
            h = a.mine(1)[0]
            measured.add(h)
            wait_until(lambda: best(b1) == h and best(b2) == h, 60, "B1 and B2 to take the block")
            t1 = tip_times(b1, {h}).get(h)
            t2 = tip_times(b2, {h}).get(h)
            if t1 is None or t2 is None:
                wait_until(lambda: h in tip_times(b1, {h}) and h in tip_times(b2, {h}), 10,
                           "the UpdateTip lines")
                t1, t2 = tip_times(b1, {h})[h], tip_times(b2, {h})[h]
            wait_until(lambda: h in tip_times(a, {h}), 10, "A's UpdateTip line")
            ta = tip_times(a, {h})[h]
            rows.append(((t1 - t0) * 1000, (t2 - t0) * 1000, (t1 - ta) * 1000, (t2 - ta) * 1000))
            print("block %2d  A -> peerd -> B1 %7.1f ms   A -> Core C -> B2 %7.1f ms   "
                  "(from A's tip: %6.1f ms, %6.1f ms)" % (r + 1, *rows[-1]), flush=True)
        via_peerd = [x[0] for x in rows]
        via_core = [x[1] for x in rows]
        hop_peerd = [x[2] for x in rows]
        hop_core = [x[3] for x in rows]
        st = d.rpc("getstats")["sync"]["cmpct"]
        print()
        print("%d blocks of %d transactions, load average %.2f %.2f %.2f"
              % (args.blocks, args.txs, *os.getloadavg()))
        print("                      median      p90")
        print("A -> peerd  -> B1  %9.1f ms %7.1f ms" % (statistics.median(via_peerd), p90(via_peerd)))
        print("A -> Core C -> B2  %9.1f ms %7.1f ms" % (statistics.median(via_core), p90(via_core)))
        print("from A's own UpdateTip (A's block-making left out):")
        print("A -> peerd  -> B1  %9.1f ms %7.1f ms" % (statistics.median(hop_peerd), p90(hop_peerd)))
        print("A -> Core C -> B2  %9.1f ms %7.1f ms" % (statistics.median(hop_core), p90(hop_core)))
        print("peerd: %d cmpctblocks received, %d rebuilt from the mempool, %d with getblocktxn, "
              "%d pushed to high-bandwidth peers (%d before connecting)"
              % (st["received"], st["rebuilt_from_mempool"], st["rebuilt_with_getblocktxn"],
                 st["hb_pushed"], st["hb_pushed_before_connect"]))
        for name, b in (("B1", b1), ("B2", b2)):
            with open(b.debug_log) as f:
                log = f.read()
            rebuilt = [n for h, n in re.findall(
                r"Successfully reconstructed block (\S+) with .* and (\d+) txn requested", log)
                if h in measured]
            print("%s: %d of the %d blocks rebuilt from compact blocks (%d with transactions "
                  "requested)" % (name, len(rebuilt), len(measured),
                                  sum(1 for x in rebuilt if x != "0")))
    finally:
        for n in reversed(nodes):
            try:
                n.stop()
            except Exception as e:  # the others still get stopped
                print("stopping %s: %s" % (getattr(n, "name", "peerd"), e), file=sys.stderr)
        if not args.keep:
            shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()

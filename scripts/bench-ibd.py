#!/usr/bin/python3
"""make bench-ibd: initial block download from a Bitcoin Core node, peerd
against a second Core node, same data, same sitting.

Two chains from `peertool chaingen` (deterministic; cached in BENCH_DATA):
  empty  20,000 blocks with only a coinbase (per-block cost)
  txs     2,000 blocks of 50 signed wallet transactions each, every script
          type (signature-bound)
  assumevalid  txs extended by 2,017 empty blocks (made here), synced by both
          nodes with -assumevalid at its tip: every signed block lies more
          than two weeks of work below the best header, so neither node
          checks its scripts (issue 24's benchmark)
For each chain a source Core node imports it (-loadblock) and serves it
(-whitelist=download@127.0.0.1: its tip is old, so it is in IBD, and Core
answers getheaders in IBD only to peers with the download permission).
Then, one after the other, peerd and a fresh Core node (default settings:
dbcache 450, par auto; regtest's consistency checks off, as on
mainnet) start with -connect to the source only and sync
from scratch. Wall time is from process start to the source's tip (polled
every 50 ms); peak RSS is VmHWM read just before the node is stopped.

With --transports, each node syncs twice a run, over v2 and over v1
(-v2transport=0 on the syncing node; the source speaks both), and the
table compares the two transports for each node instead of the nodes.

Usage: scripts/bench-ibd.py [--runs N] [--only empty|txs|assumevalid] [--keep DIR] [--transports]
Environment: BUILD (default build), BITCOIND, BENCH_DATA (default BUILD/bench),
PEERD_EXTRA (more peerd options, e.g. -v2transport=0 for the sync over v1;
by default peerd and Core both speak BIP324 v2).
"""
import argparse
import os
import shutil
import subprocess
import tempfile
import time

import benchlib
from benchlib import (BENCH_DATA, CORE_AS_MAINNET, PEERTOOL, Bitcoind, cpu_seconds, find_bitcoind, sha256d,
                      status_kb, wait_until)

CHAINS = {
    "empty": (20000, ["--txs-per-block", "0"]),
    "txs": (2000, ["--txs-per-block", "50"]),
}
# Empty blocks on top of txs, so its last signed block is buried as deep as
# assumevalid wants on regtest (2,017 blocks of equal work: two weeks' worth).
AV_ABOVE = 2017
SYNC_TIMEOUT = 1800


def chain_file(kind):
    n, extra = CHAINS[kind]
    path = os.path.join(BENCH_DATA, "ibd_%s_%d.dat" % (kind, n))
    if not os.path.exists(path):
        os.makedirs(BENCH_DATA, exist_ok=True)
        print("generating %s (%d blocks) with peertool chaingen ..." % (path, n), flush=True)
        subprocess.run([PEERTOOL, "chaingen", "--seed", "ibd", "--blocks", str(n), *extra,
                        "--no-verify", "--out", path + ".tmp"], check=True, stdout=subprocess.DEVNULL)
        os.rename(path + ".tmp", path)
    return path, n


def assumevalid_chain_file():
    """txs' chain with AV_ABOVE empty blocks on top; its tip's display hash."""
    base, n = chain_file("txs")
    path = os.path.join(BENCH_DATA, "ibd_assumevalid_%d.dat" % (n + AV_ABOVE))
    with open(base, "rb") as f:
        data = f.read()
    tip = sha256d(benchlib.last_header(data))
    if not os.path.exists(path):
        more, tip = benchlib.empty_records(tip, n + 1, n + AV_ABOVE)
        with open(path + ".tmp", "wb") as f:
            f.write(data + more)
        os.rename(path + ".tmp", path)
    else:
        with open(path, "rb") as f:
            tip = sha256d(benchlib.last_header(f.read()))
    return path, n + AV_ABOVE, tip[::-1].hex()


class PeerdNode(benchlib.PeerdProcess):
    def __init__(self, workdir, source_port, extra=()):
        super().__init__(workdir, ["-connect=127.0.0.1:%d" % source_port, *extra], wrapper=True)


class CoreNode(benchlib.CoreProcess):
    def __init__(self, workdir, source_port, extra=()):
        super().__init__(workdir, "core-sync", ["-connect=127.0.0.1:%d" % source_port,
                                                "-disablewallet=1", *CORE_AS_MAINNET, *extra])


def timed_sync(make, workdir, source, n, extra=()):
    t0 = time.monotonic()
    node = make(workdir, source.port, extra)
    hwm = 0
    try:
        deadline = t0 + SYNC_TIMEOUT
        while True:
            if node.blockcount() >= n:
                break
            if node.proc.poll() is not None:
                raise SystemExit("the syncing node exited (%s); see %s" % (node.proc.returncode, workdir))
            if time.monotonic() > deadline:
                raise SystemExit("timed out syncing in %s" % workdir)
            time.sleep(0.05)
        wall = time.monotonic() - t0
        hwm = status_kb(node.pid, "VmHWM")
        cpu = cpu_seconds(node.pid)
        if extra and isinstance(node, PeerdNode):
            # How many blocks assumevalid let through without their scripts:
            # the headers must be ahead of the blocks for it to apply.
            st = node.call("getstats") or {}
            print("    peerd: %s blocks connected without their scripts"
                  % st.get("chain", {}).get("blocks_assumed_valid"), flush=True)
        if os.environ.get("BENCH_IBD_VERBOSE"):
            print("    at the tip: VmRSS %d kB, RssAnon %d kB, RssFile %d kB, threads %d" % (
                status_kb(node.pid, "VmRSS"), status_kb(node.pid, "RssAnon"),
                status_kb(node.pid, "RssFile"), status_kb(node.pid, "Threads")), flush=True)
            if isinstance(node, PeerdNode):
                st = node.call("getstats") or {}
                print("    peerd coins cache %s, free lists %s" % (
                    st.get("coins_cache"), {k: (v["free"], v["buf_size"]) for k, v in
                                            st.get("freelists", {}).items()}), flush=True)
            with open("/proc/%d/smaps" % node.pid) as f:
                head = None
                for line in f:
                    if not line[0].isupper() or line.startswith("VmFlags"):
                        head = line.strip() if not line.startswith("VmFlags") else head
                    elif line.startswith("Rss:") and int(line.split()[1]) > 2048:
                        print("      %s  %s" % (line.split()[1], head), flush=True)
    finally:
        node.stop()
    return wall, hwm, cpu


V1 = ("-v2transport=0",)


def run_chain(kind, runs, keep, transports=False):
    extra = ()
    if kind == "assumevalid":
        path, n, tip = assumevalid_chain_file()
        extra = ("-assumevalid=" + tip,)  # the same for both nodes
    else:
        path, n = chain_file(kind)
    top = keep or tempfile.mkdtemp(prefix="peerd-bench-ibd-")
    os.makedirs(top, exist_ok=True)
    src = Bitcoind(find_bitcoind()[0], top, name="core-source",
                   args=["-loadblock=" + os.path.abspath(path), "-whitelist=download@127.0.0.1",
                         "-disablewallet=1", *CORE_AS_MAINNET], start_timeout=120).wait_ready()
    try:
        wait_until(lambda: src.rpc("getblockcount") >= n, 900, "the source to import the chain", 0.5)
        if transports:
            nodes = (("peerd-v2", PeerdNode), ("peerd-v1", lambda w, p, e: PeerdNode(w, p, V1 + e)),
                     ("core-v2", CoreNode), ("core-v1", lambda w, p, e: CoreNode(w, p, V1 + e)))
        else:
            nodes = (("peerd", PeerdNode), ("core", CoreNode))
        results = {who: [] for who, _ in nodes}
        for r in range(runs):
            for who, make in nodes:
                wd = os.path.join(top, "%s-%d" % (who, r))
                os.makedirs(wd)
                wall, hwm, cpu = timed_sync(make, wd, src, n, extra)
                results[who].append((wall, hwm))
                # CPU time survives a shared machine better than wall time;
                # the load average says how shared it was.
                print("  %-5s %-8s run %d: %7.2f s  %6.1f blocks/s  peak RSS %7.1f MiB"
                      "  CPU user %.2f s sys %.2f s  load %.2f"
                      % (kind, who, r + 1, wall, n / wall, hwm / 1024.0, cpu[0], cpu[1],
                         os.getloadavg()[0]), flush=True)
                if not keep:
                    shutil.rmtree(wd, ignore_errors=True)
    finally:
        src.stop(timeout=120)
        if not keep:
            shutil.rmtree(top, ignore_errors=True)
    return n, results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--only", choices=sorted(CHAINS) + ["assumevalid"])
    ap.add_argument("--keep", help="keep datadirs and logs under this directory")
    ap.add_argument("--transports", action="store_true",
                    help="each node over v2 and over v1, instead of peerd against Core")
    a = ap.parse_args()
    if not find_bitcoind()[0]:
        raise SystemExit("bench-ibd needs a bitcoind: %s" % find_bitcoind()[1])
    table = []
    for kind in (["empty", "txs", "assumevalid"] if not a.only else [a.only]):
        n, res = run_chain(kind, a.runs, a.keep and os.path.join(a.keep, kind), a.transports)
        if a.transports:
            table.append((kind, n, res))
            continue
        best = {w: min(res[w]) for w in res}  # fastest run, its RSS
        peak = {w: max(x[1] for x in res[w]) for w in res}
        table.append((kind, n, best, peak))
    print()
    if a.transports:
        mid = lambda xs: sorted(xs)[len(xs) // 2]
        print("| chain | node | v2 runs (s) | v1 runs (s) | v2 best | v1 best | v2/v1 best "
              "| v2/v1 median |")
        print("|---|---|---|---|---:|---:|---:|---:|")
        for kind, n, res in table:
            for node in ("peerd", "core"):
                v2 = [x[0] for x in res[node + "-v2"]]
                v1 = [x[0] for x in res[node + "-v1"]]
                print("| %s | %s | %s | %s | %.2f | %.2f | %.3f | %.3f |" % (
                    kind, node, ", ".join("%.2f" % x for x in v2),
                    ", ".join("%.2f" % x for x in v1), min(v2), min(v1), min(v2) / min(v1),
                    mid(v2) / mid(v1)))
        return
    print("| chain | blocks | peerd s | Core s | peerd blocks/s | Core blocks/s | speed-up "
          "| peerd peak RSS MiB | Core peak RSS MiB | RSS ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind, n, best, peak in table:
        pw, cw = best["peerd"][0], best["core"][0]
        pr, cr = peak["peerd"] / 1024.0, peak["core"] / 1024.0
        print("| %s | %d | %.2f | %.2f | %.0f | %.0f | %.2fx | %.1f | %.1f | %.2f |"
              % (kind, n, pw, cw, n / pw, n / cw, cw / pw, pr, cr, pr / cr))


if __name__ == "__main__":
    main()

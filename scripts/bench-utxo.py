#!/usr/bin/python3
"""make bench-utxo: a UTXO set larger than the cache, peerd beside Bitcoin Core
in one sitting (issue 24).

The chain: `peertool chaingen --grow-utxo` (every transaction spends its
predecessor's change and random old coins, and pays ~100 new P2WPKH coins:
~28,000 more coins a block) until the UTXO set holds --coins coins, then
2,017 empty blocks so that every transaction block lies two weeks of work
below the tip and -assumevalid=TIP skips its scripts on both nodes. The
chain and its per-block coin counts (--utxo-out) are cached in BENCH_DATA.

A source Core node imports the chain (-loadblock, a large -dbcache so the
import is quick) and serves it over loopback. Then, alternately, peerd and a
fresh Core node sync it from scratch with -dbcache=DBCACHE (default 100
MiB) and -assumevalid=TIP, and then restart with -reindex-chainstate. Every
0.5 s the script samples the node's height, RSS (and its anonymous part)
and how long `uptime` took (peerd answers it on its event loop: a flush
that stalled the loop would show as a slow answer) and `getblockcount`
(which waits for the chain on both nodes). Printed: blocks/s over the
transaction blocks and per million coins, peak RSS (VmHWM), the chain
state's bytes on disk, the slowest answers; with --json, every sample for
scripts/plot-utxo.py.

Usage: scripts/bench-utxo.py [--coins N] [--dbcache MIB] [--runs N]
           [--only peerd|core] [--no-reindex] [--json FILE] [--keep DIR]
Environment: BUILD (default build), BITCOIND, BENCH_DATA (default
BUILD/bench), PEERD_EXTRA (more peerd options).
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

import benchlib
from benchlib import BENCH_DATA, PEERTOOL, Bitcoind, find_bitcoind, wait_until

AV_ABOVE = 2017
# The chain's shape: 400 transactions of 2 random inputs (plus the change)
# and 100 outputs fill a block (~28,000 more coins each).
GROW = ["--grow-utxo", "--mix", "p2wpkh", "--txs-per-block", "400", "--inputs-per-tx", "2",
        "--outputs-per-tx", "100"]
COINS_PER_BLOCK = 28000
SAMPLE = 0.5
TIMEOUT = 4 * 3600


def chain_file(coins):
    """The cached chain for `coins` coins: (path, tx blocks, tip hash, coins by height)."""
    blocks = 100 + max(1, -(-coins // COINS_PER_BLOCK))
    base = os.path.join(os.path.abspath(BENCH_DATA), "utxo_%d" % coins)
    path, counts = base + ".dat", base + ".coins"
    if not os.path.exists(path):
        os.makedirs(BENCH_DATA, exist_ok=True)
        print("generating %s (%d blocks, then %d empty) with peertool chaingen ..."
              % (path, blocks, AV_ABOVE), flush=True)
        t0 = time.monotonic()
        subprocess.run([PEERTOOL, "chaingen", "--seed", "utxo", "--blocks", str(blocks), *GROW,
                        "--no-verify", "--utxo-out", counts + ".tmp", "--out", path + ".tmp"],
                       check=True, stdout=subprocess.DEVNULL)
        with open(path + ".tmp", "rb") as f:
            tip = benchlib.sha256d(benchlib.last_header(f.read()))
        more, tip = benchlib.empty_records(tip, blocks + 1, blocks + AV_ABOVE)
        with open(path + ".tmp", "ab") as f:
            f.write(more)
        with open(counts + ".tmp", "a") as f:
            f.write("tip %s\n" % tip[::-1].hex())
        os.rename(counts + ".tmp", counts)
        os.rename(path + ".tmp", path)
        print("  made in %.0f s" % (time.monotonic() - t0), flush=True)
    by_height, tip = [0], None
    with open(counts) as f:
        for line in f:
            a, b = line.split()
            if a == "tip":
                tip = b
            else:
                by_height.append(int(b))
    return path, blocks, tip, by_height


UPDATE_TIP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)Z .*UpdateTip: .*height=(\d+)")


def tip_times(log, since):
    """(seconds after `since`, height) of every UpdateTip line the node
    logged after `since` (a time.time()): both nodes log one a block, so the
    curve does not depend on the node answering while it connects (peerd
    does not serve its control socket during -reindex-chainstate)."""
    out = []
    with open(log, errors="replace") as f:
        for line in f:
            m = UPDATE_TIP.match(line)
            if not m:
                continue
            ts = m.group(1)
            fmt = "%Y-%m-%dT%H:%M:%S.%f" if "." in ts else "%Y-%m-%dT%H:%M:%S"
            t = datetime.datetime.strptime(ts, fmt).replace(
                tzinfo=datetime.timezone.utc).timestamp()
            if t >= since - 0.001:
                out.append((round(t - since, 6), int(m.group(2))))
    return out


class Peerd(benchlib.PeerdProcess):
    """peerd on a datadir (kept across restarts), answering on its control socket."""

    def __init__(self, workdir, args):
        super().__init__(workdir, args, log_mode="a", call_timeout=30, failed=-1, stop_timeout=600)


class Core(benchlib.CoreProcess):
    def __init__(self, workdir, args):
        super().__init__(workdir, "core", ["-disablewallet=1", "-logtimemicros=1", *benchlib.CORE_AS_MAINNET,
                                           *args], start_timeout=600, call_timeout=30, stop_timeout=600)


def timed(make, workdir, args, height):
    """Start a node, sample it until it reaches `height`; the run's record."""
    t0, since = time.monotonic(), time.time()
    node = make(workdir, args)
    samples, slowest, slowest_loop = [], 0.0, 0.0
    # RSS on its own clock: a node that does not answer (peerd during
    # -reindex-chainstate) holds the polling loop for the calls' timeout.
    rss_log, done = [], threading.Event()

    def sample_rss():
        while not done.wait(SAMPLE):
            try:
                rss_log.append((round(time.monotonic() - t0, 3), benchlib.status_kb(node.pid, "VmRSS"),
                                benchlib.status_kb(node.pid, "RssAnon")))
            except OSError:
                return

    sampler = threading.Thread(target=sample_rss, daemon=True)
    sampler.start()
    try:
        while True:
            # uptime needs neither node's chain: peerd answers it on its
            # event loop, Core on an RPC thread without cs_main. A flush that
            # stalled the loop would show here. getblockcount waits for the
            # chain on both (peerd: for the job in flight; Core: cs_main).
            q = time.monotonic()
            up = node.uptime()
            loop_took = time.monotonic() - q
            q = time.monotonic()
            h = node.blockcount()
            took = time.monotonic() - q
            now = q - t0
            # RssFile is the chain state's mapped pages (LMDB maps its file:
            # the kernel's page cache, dropped under pressure); RssAnon the heap.
            rss = benchlib.status_kb(node.pid, "VmRSS")
            anon = benchlib.status_kb(node.pid, "RssAnon")
            # A refused connection before the socket exists is quick; an
            # unanswered one (the loop not running) takes the timeout.
            slowest_loop = max(slowest_loop, loop_took)
            if h >= 0:
                slowest = max(slowest, took)
            # Kept unanswered too (height -1): the RSS curve places it by the log's tips.
            samples.append((round(now, 3), h, rss, round(took, 4), anon, round(loop_took, 4)))
            if h >= height:
                break
            if node.proc.poll() is not None:
                raise SystemExit("the node exited (%s); see %s" % (node.proc.returncode, workdir))
            if now > TIMEOUT:
                raise SystemExit("timed out in %s" % workdir)
            time.sleep(max(0.0, SAMPLE - (time.monotonic() - q)))
        wall = time.monotonic() - t0
        hwm = benchlib.status_kb(node.pid, "VmHWM")
        cpu = benchlib.cpu_seconds(node.pid)
    finally:
        done.set()
        sampler.join()
        exit_code = node.stop()
    return {"wall": wall, "rss": rss_log, "exit": exit_code, "hwm_kb": hwm, "cpu": cpu, "slowest_answer": slowest,
            "slowest_uptime": slowest_loop,
            "anon_peak_kb": max([x[2] for x in rss_log] + [x[4] for x in samples], default=0),
            "samples": samples, "chainstate_bytes": benchlib.disk_bytes(node.chainstate)[1],
            "tips": tip_times(node.log_path, since)}


def points(run):
    """(seconds, height) from the node's log, else from the samples."""
    return run.get("tips") or [(x[0], x[1]) for x in run["samples"] if x[1] >= 0]


def per_million(run, by_height, top):
    """blocks/s within each million coins of the set's growth (transaction blocks only)."""
    out, s = [], points(run)
    for m in range(1, by_height[top] // 1000000 + 2):
        lo = next((h for h in range(101, top + 1) if by_height[h] >= (m - 1) * 1000000), None)
        hi = next((h for h in range(101, top + 1) if by_height[h] >= m * 1000000), top)
        t_lo = max([t for t, h, *_ in s if h < lo], default=0.0) if lo else None
        t_hi = next((t for t, h, *_ in s if h >= hi), None)
        if lo is None or t_lo is None or t_hi is None or hi <= lo or t_hi <= t_lo:
            continue
        out.append((m, hi - lo, (hi - lo) / (t_hi - t_lo)))
    return out


def tx_part_rate(run, top):
    """blocks/s from block 101 to the last transaction block: from the last
    sample below 101 to the first at the top (never more than the truth)."""
    s = points(run)
    t_lo = max([t for t, h, *_ in s if h <= 100], default=0.0)
    t_hi = next(t for t, h, *_ in s if h >= top)
    return (top - 100) / max(t_hi - t_lo, 1e-3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coins", type=int, default=10000000)
    ap.add_argument("--dbcache", type=int, default=100)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--only", choices=["peerd", "core"])
    ap.add_argument("--no-reindex", action="store_true")
    ap.add_argument("--json", help="write every sample here (scripts/plot-utxo.py reads it)")
    ap.add_argument("--keep", help="keep datadirs and logs under this directory")
    a = ap.parse_args()
    binary, why = find_bitcoind()
    if not binary:
        raise SystemExit("bench-utxo needs a bitcoind: %s" % why)
    path, top, tip, by_height = chain_file(a.coins)
    n = top + AV_ABOVE
    print("chain: %d transaction blocks, %d coins at block %d, %d blocks in all; load %s"
          % (top - 100, by_height[top], top, n, os.getloadavg()), flush=True)
    work = a.keep or tempfile.mkdtemp(prefix="peerd-bench-utxo-")
    os.makedirs(work, exist_ok=True)
    src = Bitcoind(binary, work, name="source", start_timeout=600,
                   args=["-loadblock=" + path, "-whitelist=download@127.0.0.1", "-dbcache=2000",
                         "-assumevalid=" + tip, "-disablewallet=1", *benchlib.CORE_AS_MAINNET])
    src.wait_ready()
    result = {"coins_by_height": by_height, "top": top, "blocks": n, "dbcache": a.dbcache,
              "runs": []}
    common = ["-dbcache=%d" % a.dbcache, "-assumevalid=" + tip]
    nodes = [("peerd", Peerd), ("core", Core)]
    if a.only:
        nodes = [x for x in nodes if x[0] == a.only]
    try:
        wait_until(lambda: src.rpc("getblockcount") >= n, TIMEOUT, "the source's import", 1)
        for r in range(a.runs):
            for who, make in nodes:
                wd = os.path.join(work, "%s-%d" % (who, r))
                os.makedirs(wd)
                kinds = [("sync", ["-connect=127.0.0.1:%d" % src.port])]
                if not a.no_reindex:
                    # The source stays up but is not dialled: nothing to download.
                    kinds.append(("reindex-chainstate", ["-reindex-chainstate=1", "-connect=0"]))
                for kind, extra in kinds:
                    run = timed(make, wd, common + extra, n)
                    run.update(node=who, kind=kind, run=r + 1, load=os.getloadavg()[0])
                    run["rate"] = tx_part_rate(run, top)
                    result["runs"].append(run)
                    print("  %-5s %-18s run %d: %7.1f s  %6.2f blocks/s (transaction blocks)"
                          "  peak RSS %6.1f MiB (anonymous %6.1f)  chainstate %6.1f MiB"
                          "  CPU %.0f+%.0f s  slowest getblockcount %.2f s, uptime %.2f s"
                          "  load %.1f"
                          % (who, kind, r + 1, run["wall"], run["rate"], run["hwm_kb"] / 1024.0,
                             run["anon_peak_kb"] / 1024.0,
                             run["chainstate_bytes"] / 1048576.0, run["cpu"][0], run["cpu"][1],
                             run["slowest_answer"], run["slowest_uptime"], run["load"]),
                          flush=True)
                    for m, blocks, rate in per_million(run, by_height, top):
                        print("      coins %2d-%2d M: %4d blocks at %6.2f blocks/s"
                              % (m - 1, m, blocks, rate), flush=True)
                    if a.json:  # after every run: a long sitting cut short keeps its runs
                        with open(a.json, "w") as f:
                            json.dump(result, f)
                if not a.keep:
                    shutil.rmtree(wd, ignore_errors=True)
    finally:
        src.stop(timeout=600)
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print("| run | blocks/s peerd | blocks/s Core | speed-up | peak RSS peerd MiB "
          "| peak RSS Core MiB | anonymous peerd MiB | anonymous Core MiB "
          "| chainstate peerd MiB | chainstate Core MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind in ("sync", "reindex-chainstate"):
        best = {}
        for run in result["runs"]:
            if run["kind"] == kind:
                b = best.get(run["node"])
                if not b or run["rate"] > b["rate"]:
                    best[run["node"]] = run
        if not best:
            continue
        p, c = best.get("peerd"), best.get("core")
        cell = lambda r, f: f(r) if r else "-"
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            kind, cell(p, lambda r: "%.2f" % r["rate"]), cell(c, lambda r: "%.2f" % r["rate"]),
            "%.2fx" % (p["rate"] / c["rate"]) if p and c else "-",
            cell(p, lambda r: "%.0f" % (r["hwm_kb"] / 1024.0)),
            cell(c, lambda r: "%.0f" % (r["hwm_kb"] / 1024.0)),
            cell(p, lambda r: "%.0f" % (r["anon_peak_kb"] / 1024.0)),
            cell(c, lambda r: "%.0f" % (r["anon_peak_kb"] / 1024.0)),
            cell(p, lambda r: "%.0f" % (r["chainstate_bytes"] / 1048576.0)),
            cell(c, lambda r: "%.0f" % (r["chainstate_bytes"] / 1048576.0))))
    print_bucket_ratios(result, by_height, top)


def print_bucket_ratios(result, by_height, top):
    """The goal is per million coins: each round's peerd run against the
    Core run of the same round (the two ran minutes apart), bucket by
    bucket, and the lowest ratio."""
    runs = {(r["node"], r["kind"], r["run"]): r for r in result["runs"]}
    rows = []
    for (node, kind, rnd), p in sorted(runs.items()):
        c = runs.get(("core", kind, rnd))
        if node != "peerd" or not c:
            continue
        pm = {m: rate for m, _, rate in per_million(p, by_height, top)}
        cm = {m: rate for m, _, rate in per_million(c, by_height, top)}
        ratios = [(m, pm[m] / cm[m]) for m in sorted(pm) if m in cm and cm[m] > 0]
        if ratios:
            rows.append((kind, rnd, ratios))
    if not rows:
        return
    print()
    print("peerd / Core blocks/s per million coins (same round):")
    for kind, rnd, ratios in rows:
        low = min(ratios, key=lambda x: x[1])
        print("  %-18s run %d: %s  lowest %.2fx (%d-%d M)"
              % (kind, rnd, " ".join("%.2f" % x for _, x in ratios), low[1], low[0] - 1, low[0]))


if __name__ == "__main__":
    main()

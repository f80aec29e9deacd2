#!/usr/bin/python3
"""Plot scripts/bench-utxo.py's samples: blocks/s and RSS against the UTXO
set's size, peerd and Core, for the sync and for -reindex-chainstate.

    scripts/plot-utxo.py RESULT.json OUTDIR

writes OUTDIR/bench-utxo-rate.png (blocks/s, a point per sample interval,
smoothed over WINDOW blocks) and OUTDIR/bench-utxo-rss.png (VmRSS and its
anonymous part). Needs matplotlib (Debian: apt-get install
python3-matplotlib); make test does not run it.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

WINDOW = 17  # blocks a rate point covers at least (~0.5 M coins)
STYLE = {("peerd", "sync"): ("tab:blue", "-"), ("core", "sync"): ("tab:orange", "-"),
         ("peerd", "reindex-chainstate"): ("tab:blue", "--"),
         ("core", "reindex-chainstate"): ("tab:orange", "--")}


def style(run):
    """A run's colour and line: a run the caller labelled (another build,
    e.g. the one before a change) is grey."""
    return ("tab:gray", "-.") if run.get("label") else STYLE[(run["node"], run["kind"])]


def name(run):
    return run.get("label") or "%s %s" % (run["node"], run["kind"])


def coins_budget_mib(dbcache, maxmempool_mb=300):
    """Core's coins cache room at -dbcache (chain/coins_budget.c): its share
    of dbcache plus the unused mempool allowance (an empty mempool)."""
    share = dbcache - min(dbcache / 8, 2)
    share -= min(share / 2, 8)
    return share + maxmempool_mb * 1e6 / (1 << 20)


def rate_curve(run, coins, top):
    """(coins in millions, blocks/s) over the transaction blocks, from the
    node's UpdateTip times (every block), else the 0.5 s samples."""
    xs, ys = [], []
    last_t, last_h = None, None
    for t, h, *_ in run.get("tips") or run["samples"]:
        h = min(h, top)
        if last_h is None or h <= 100:
            last_t, last_h = t, max(h, 100)
            continue
        if h - last_h >= WINDOW or (h == top and h - last_h >= WINDOW // 2):
            xs.append(coins[h] / 1e6)
            ys.append((h - last_h) / max(t - last_t, 1e-3))
            last_t, last_h = t, h
        if h >= top:
            break
    return xs, ys


def main():
    res = json.load(open(sys.argv[1]))
    out = sys.argv[2]
    coins, top = res["coins_by_height"], res["top"]
    title = "UTXO set to %.1f M coins, -dbcache=%d, -assumevalid" % (coins[top] / 1e6,
                                                                      res["dbcache"])
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for run in res["runs"]:
        c, ls = style(run)
        xs, ys = rate_curve(run, coins, top)
        if xs:
            ax.plot(xs, ys, color=c, linestyle=ls, marker=".",
                    label="%s (run %d)" % (name(run), run["run"]))
    ax.set_xlabel("coins in the UTXO set (millions)")
    ax.set_ylabel("blocks/s (~28,000 new coins a block)")
    ax.set_title(title)
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "bench-utxo-rate.png"), dpi=90)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for run in res["runs"]:
        c, ls = style(run)
        tips = run.get("tips") or []
        # (time, height answered, VmRSS, RssAnon): the script's own RSS
        # clock when it has one, else the polled samples.
        rows = ([(t, -1, rss, anon) for t, rss, anon in run["rss"]] if run.get("rss")
                else [(s[0], s[1], s[2], s[4]) for s in run["samples"]])
        pts = []
        for t, answered, rss, anon in rows:
            # The height at that time from the log (peerd does not answer
            # during -reindex-chainstate), else the answered one.
            h = max([x[1] for x in tips if x[0] <= t], default=answered)
            if 100 < h:
                pts.append((coins[min(h, top)] / 1e6, rss / 1024.0, anon / 1024.0))
        pts = pts[:next((i + 1 for i, p in enumerate(pts) if p[0] >= coins[top] / 1e6), None)]
        if pts:
            lab = name(run)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=c, linestyle=ls,
                    label=lab + " RSS")
            ax.plot([p[0] for p in pts], [p[2] for p in pts], color=c, linestyle=ls, alpha=0.4,
                    linewidth=3, label=lab + " anonymous")
    ax.axhline(res["dbcache"] + 64, color="gray", linestyle=":", label="dbcache + 64 MiB")
    budget = coins_budget_mib(res["dbcache"]) + 64
    ax.axhline(budget, color="black", linestyle=":",
               label="coins cache budget + 64 MiB (%.0f)" % budget)
    ax.set_xlabel("coins in the UTXO set (millions)")
    ax.set_ylabel("MiB")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="x-small")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "bench-utxo-rss.png"), dpi=90)


if __name__ == "__main__":
    main()

"""make bench-utxo's small version: scripts/bench-utxo.py on a tiny
--grow-utxo chain (2 transaction blocks, ~60,000 coins), peerd and Bitcoin
Core each syncing it and reindexing their chain state; then, when
matplotlib is installed, scripts/plot-utxo.py drawing its two PNGs.

What must hold: both nodes reach the tip in both runs, the table has both
rows, the samples climb to the tip, and the coin counts the curves are
drawn against start where the chain starts (test_peertool_chaingen.py
checks them against Core's gettxoutsetinfo).
"""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

import bitcoind
from conftest import BUILD

pytestmark = pytest.mark.interop
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "bench-utxo.py")
PLOT = os.path.join(ROOT, "scripts", "plot-utxo.py")


def test_bench_utxo_small(tmp_path):
    binary, why = bitcoind.find_bitcoind()
    if not binary:
        pytest.skip(why)
    out = tmp_path / "result.json"
    env = dict(os.environ, BUILD=BUILD, BENCH_DATA=str(tmp_path / "data"))
    r = subprocess.run([sys.executable, SCRIPT, "--coins", "30000", "--json", str(out),
                        "--keep", str(tmp_path / "work")],
                       capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "| sync |" in r.stdout and "| reindex-chainstate |" in r.stdout, r.stdout
    res = json.loads(out.read_text())
    top = res["top"]
    assert top == 102 and res["blocks"] == top + 2017, res["blocks"]
    coins = res["coins_by_height"]
    # 100 coinbases, then blocks 101 and 102 add ~28,000 coins each.
    assert coins[100] == 100 and coins[top] > 40000, coins[-3:]
    kinds = sorted((x["node"], x["kind"]) for x in res["runs"])
    assert kinds == [("core", "reindex-chainstate"), ("core", "sync"),
                     ("peerd", "reindex-chainstate"), ("peerd", "sync")], kinds
    for run in res["runs"]:
        heights = [s[1] for s in run["samples"] if s[1] >= 0]
        assert heights == sorted(heights) and heights[-1] == res["blocks"], (run["node"], heights)
        assert run["hwm_kb"] > 0 and run["chainstate_bytes"] > 0 and run["rate"] > 0, run
        # A clean stop (under ASan a leak or error at exit is a non-zero code).
        assert run["exit"] == 0, (run["node"], run["kind"], run["exit"])
        assert run["rss"] and all(rss >= anon > 0 for _, rss, anon in run["rss"]), run["rss"]
        # Every block's UpdateTip from the node's log, in order.
        tips = [h for _, h in run["tips"] if h > 0]  # Core logs genesis too
        assert tips == list(range(1, res["blocks"] + 1)), (run["node"], run["kind"], tips[:5])
    if importlib.util.find_spec("matplotlib") is None:
        return  # Debian's python3-matplotlib draws the plots; make test does not need it
    r = subprocess.run([sys.executable, PLOT, str(out), str(tmp_path)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    for name in ("bench-utxo-rate.png", "bench-utxo-rss.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

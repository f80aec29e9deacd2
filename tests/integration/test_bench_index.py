"""scripts/bench-index.py's small run (make bench-index's chain is 2,000
blocks; here 120): peerd and bitcoind each build -txindex and
-blockfilterindex=basic on the same chain, both reach the tip, and the
script reports a time and the bytes on disk for each."""
import json
import os
import subprocess

import pytest

import bitcoind

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = pytest.mark.interop


def test_bench_index_small_run():
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "bench-index.py"),
                        "--blocks", "120", "--runs", "1", "--json"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["height"] == 120 and len(out["runs"]) == 1
    run = out["runs"][0]
    for k in ("peerd_s", "core_s"):
        assert 0 < run[k] < 600, (k, run)
    # Each index holds something for 120 blocks of transactions.
    for k in ("peerd_bytes", "core_bytes"):
        assert run[k] > 120 * 32, (k, run)

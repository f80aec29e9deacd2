"""chain/store.c against Bitcoin Core: bitcoind imports a blk file that
peerd's store wrote (-loadblock) and reaches the chain's tip; then peerd's
undo decoder reads every record of the rev file Core wrote while doing so
and re-encodes each to Core's exact bytes.

The blk file is written by chain/store.c itself, through the unit test
binary's export hook (tests/unit/test_chain_store.c, PEERD_STORE_EXPORT);
the rev check runs in the same binary (PEERD_CORE_BLOCKS). python-bitcoinlib
parses the exported records on its own, so the file is also checked by an
implementation that is not peerd's.

bitcoind comes from the make_bitcoind fixture (tests/integration/bitcoind.py),
which skips the test when none is found.
"""
import json
import os
import struct
import subprocess
from pathlib import Path

import pytest

from bitcoin.core import CBlock, b2lx

from bitcoind import wait_until
from conftest import BUILD, ROOT

VECTORS = os.environ.get("VECTORS") or os.path.join(ROOT, "tests", "data")
TEST_BIN = os.path.join(BUILD, "test", "test_chain_store")
MAGIC = bytes.fromhex("fabfb5da")


pytestmark = pytest.mark.skipif(not os.path.exists(TEST_BIN), reason=f"{TEST_BIN} not built")
# -loadblock: import the file at startup. -checkblockindex=0: this build
# asserts in CheckBlockIndex when -loadblock starts importing before genesis
# is active (regtest turns the check on by default); it is a debug check,
# not validation. -blocksxor=0: Core 28+ XORs new block files with a random
# key; plain files let us compare them with ours.
CORE_ARGS = ("-checkblockindex=0", "-blocksxor=0")


def run_unit(env_extra):
    env = dict(os.environ, VECTORS=VECTORS, **env_extra)
    r = subprocess.run([TEST_BIN], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr


def records(data):
    """(offset of the block, block bytes) for each magic|size|block record."""
    out, p = [], 0
    while p + 8 <= len(data) and data[p:p + 4] == MAGIC:
        (n,) = struct.unpack_from("<I", data, p + 4)
        out.append((p + 8, data[p + 8:p + 8 + n]))
        p += 8 + n
    return out, p


def test_bitcoind_loads_our_blk_file_and_we_read_its_rev_file(tmp_path, make_bitcoind):
    store = tmp_path / "store"
    run_unit({"PEERD_STORE_EXPORT": str(store)})
    ours = (store / "blk00000.dat").read_bytes()
    with open(os.path.join(VECTORS, "regtest", "regtest_chain.dat"), "rb") as f:
        assert ours == f.read()
    with open(os.path.join(VECTORS, "regtest", "regtest_chain.json")) as f:
        expect = json.load(f)
    hashes = expect["main_chain_hashes"]

    # python-bitcoinlib reads every record and sees the chain link up.
    recs, end = records(ours)
    assert end == len(ours) and len(recs) == 265
    prev = hashes[0]
    for height, (_, raw) in enumerate(recs, start=1):
        blk = CBlock.deserialize(raw)
        assert b2lx(blk.hashPrevBlock) == prev
        prev = b2lx(blk.GetHash())
        assert prev == hashes[height]

    (node,) = make_bitcoind(1, args=("-loadblock=%s" % (store / "blk00000.dat"), *CORE_ARGS),
                            small=True)
    wait_until(lambda: node.getblockcount() >= 265, 120, "Core to import 265 blocks")
    assert node.getblockcount() == 265
    assert node.getbestblockhash() == hashes[265]
    # Stopped here, not at teardown: its blk and rev files are read below.
    assert node.stop() == 0

    # Core's blk file holds its genesis record, then our records byte for byte.
    core_blocks = Path(node.datadir) / "regtest" / "blocks"
    core_blk = (core_blocks / "blk00000.dat").read_bytes()
    genesis_recs, _ = records(core_blk[:8 + struct.unpack_from("<I", core_blk, 4)[0]])
    assert len(genesis_recs) == 1
    start = genesis_recs[0][0] + len(genesis_recs[0][1])
    assert core_blk[start:start + len(ours)] == ours

    out = run_unit({"PEERD_CORE_BLOCKS": str(core_blocks)})
    assert "core rev: 265 records" in out, out

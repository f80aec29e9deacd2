"""chain/store.c against Bitcoin Core: bitcoind imports a blk file that
peerd's store wrote (-loadblock) and reaches the chain's tip; then peerd's
undo decoder reads every record of the rev file Core wrote while doing so
and re-encodes each to Core's exact bytes.

The blk file is written by chain/store.c itself, through the unit test
binary's export hook (tests/unit/test_chain_store.c, PEERD_STORE_EXPORT);
the rev check runs in the same binary (PEERD_CORE_BLOCKS). python-bitcoinlib
parses the exported records on its own, so the file is also checked by an
implementation that is not peerd's.

Skipped when no bitcoind is found: $BITCOIND, ../shared/bin/bitcoind beside
the checkout, then PATH.
"""
import json
import os
import shutil
import struct
import subprocess
import time

import pytest

from bitcoin.core import CBlock, b2lx

from conftest import BUILD, ROOT, free_port

VECTORS = os.environ.get("VECTORS") or os.path.join(ROOT, "tests", "data")
TEST_BIN = os.path.join(BUILD, "test", "test_chain_store")
MAGIC = bytes.fromhex("fabfb5da")


def find_bitcoind():
    for cand in (os.environ.get("BITCOIND"), os.path.join(os.path.dirname(ROOT), "shared", "bin", "bitcoind"),
                 shutil.which("bitcoind")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


BITCOIND = find_bitcoind()
pytestmark = [
    pytest.mark.skipif(BITCOIND is None, reason="no bitcoind ($BITCOIND, ../shared/bin, PATH)"),
    pytest.mark.skipif(not os.path.exists(TEST_BIN), reason=f"{TEST_BIN} not built"),
]


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


class Bitcoind:
    def __init__(self, datadir, loadblock):
        self.datadir = datadir
        self.rpcport = free_port()
        self.cli_bin = os.path.join(os.path.dirname(BITCOIND), "bitcoin-cli")
        if not os.path.exists(self.cli_bin):
            self.cli_bin = shutil.which("bitcoin-cli")
        self.log = open(os.path.join(datadir, "stdout.log"), "w")
        # No P2P at all: -listen=0 and -connect=0; RPC on loopback only.
        # -checkblockindex=0: this build asserts in CheckBlockIndex when
        # -loadblock starts importing before genesis is active (regtest
        # turns the check on by default); it is a debug check, not validation.
        # -blocksxor=0: Core 28+ XORs new block files with a random key;
        # plain files let us compare them with ours.
        self.proc = subprocess.Popen(
            [BITCOIND, "-regtest", f"-datadir={datadir}", f"-loadblock={loadblock}", "-listen=0", "-connect=0",
             "-dnsseed=0", "-fixedseeds=0", "-checkblockindex=0", "-blocksxor=0", "-natpmp=0", "-discover=0", "-daemon=0", "-server=1",
             "-rpcbind=127.0.0.1", "-rpcallowip=127.0.0.1", f"-rpcport={self.rpcport}", "-printtoconsole=0"],
            stdout=self.log, stderr=subprocess.STDOUT)

    def rpc(self, *args):
        r = subprocess.run([self.cli_bin, "-regtest", f"-datadir={self.datadir}", f"-rpcport={self.rpcport}",
                            "-rpcwait", "-rpcwaittimeout=30", *args], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        return r.stdout.strip()

    def stop(self):
        try:
            self.rpc("stop")
            self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.log.close()


def test_bitcoind_loads_our_blk_file_and_we_read_its_rev_file(tmp_path):
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

    core_dir = tmp_path / "core"
    core_dir.mkdir()
    node = Bitcoind(str(core_dir), str(store / "blk00000.dat"))
    try:
        deadline = time.time() + 120
        count = -1
        while time.time() < deadline:
            count = int(node.rpc("getblockcount"))
            if count >= 265:
                break
            time.sleep(0.5)
        assert count == 265
        assert node.rpc("getbestblockhash") == hashes[265]
    finally:
        node.stop()

    # Core's blk file holds its genesis record, then our records byte for byte.
    core_blocks = core_dir / "regtest" / "blocks"
    core_blk = (core_blocks / "blk00000.dat").read_bytes()
    genesis_recs, _ = records(core_blk[:8 + struct.unpack_from("<I", core_blk, 4)[0]])
    assert len(genesis_recs) == 1
    start = genesis_recs[0][0] + len(genesis_recs[0][1])
    assert core_blk[start:start + len(ours)] == ours

    out = run_unit({"PEERD_CORE_BLOCKS": str(core_blocks)})
    assert "core rev: 265 records" in out, out

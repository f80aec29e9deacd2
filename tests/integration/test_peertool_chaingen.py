"""peertool chaingen: determinism, peertool's own decode/verify, and a real
Bitcoin Core accepting the chain.

The consensus proof is Bitcoin Core's: every generated block goes to a
regtest bitcoind with submitblock, which must answer null (accepted), and
the tip must end up at the last block. Before each block, its transactions
go through testmempoolaccept, so they are standard too, not only valid.
Blocks are parsed with python-bitcoinlib, independent of peerd's codec.

bitcoind comes from the make_bitcoind fixture (tests/integration/bitcoind.py:
$BITCOIND, then ../shared/bin/bitcoind beside the checkout, then PATH);
without one those tests skip and say why.

Run with /usr/bin/python3 -m pytest (Debian's pytest and python3-bitcoinlib).
"""
import json
import os
import shutil
import struct
import subprocess
import tempfile

import pytest
from bitcoin.core import CBlock, b2lx

from bitcoind import wait_until
from conftest import BUILD
PEERTOOL = os.environ.get("PEERTOOL_BIN", os.path.join(BUILD, "bin", "peertool"))
MAGIC = bytes.fromhex("fabfb5da")
REGTEST_GENESIS = "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206"
# Core's names for the output types chaingen creates.
CORE_TYPES = {"pubkeyhash", "scripthash", "witness_v0_keyhash", "witness_v0_scripthash",
              "witness_v1_taproot"}


def peertool(*args, timeout=120):
    return subprocess.run([PEERTOOL, *args], capture_output=True, timeout=timeout)


def chaingen(path, *args):
    r = peertool("chaingen", "--out", path, *args)
    assert r.returncode == 0, r.stderr.decode()
    return json.loads(r.stdout)


def read_records(path):
    """The raw blocks of a block-file, checking every record's framing."""
    data = open(path, "rb").read()
    blocks, off = [], 0
    while off < len(data):
        assert data[off:off + 4] == MAGIC, "bad magic at offset %d" % off
        (n,) = struct.unpack_from("<I", data, off + 4)
        off += 8
        assert off + n <= len(data), "record at %d runs past the end" % (off - 8)
        blocks.append(data[off:off + n])
        off += n
    return blocks


@pytest.fixture(scope="module", autouse=True)
def built():
    if not os.path.exists(PEERTOOL):
        pytest.fail(f"{PEERTOOL} not built (run make)")


@pytest.fixture(scope="module")
def tmp():
    d = tempfile.mkdtemp(prefix="chaingen-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def chain(tmp):
    """A 150-block chain with transactions of every type from height 101."""
    path = os.path.join(tmp, "chain.dat")
    spent = os.path.join(tmp, "spent.txt")
    summary = chaingen(path, "--seed", "core", "--blocks", "150", "--spent-out", spent)
    return path, spent, summary


# ---- determinism and format -------------------------------------------------------


def test_deterministic_and_seeded(tmp):
    a, b, c = (os.path.join(tmp, n) for n in ("a.dat", "b.dat", "c.dat"))
    sa = chaingen(a, "--seed", "x", "--blocks", "120", "--txs-per-block", "4")
    # the same options in the other spelling
    r = peertool("chaingen", "--seed=x", "--blocks=120", "--txs-per-block=4", "--out=" + b)
    assert r.returncode == 0, r.stderr.decode()
    sc = chaingen(c, "--seed", "y", "--blocks", "120", "--txs-per-block", "4")
    assert open(a, "rb").read() == open(b, "rb").read()
    assert open(a, "rb").read() != open(c, "rb").read()
    assert sa["tip"] != sc["tip"]
    assert sa["txs"] > 0


def test_stdout_matches_file(tmp):
    path = os.path.join(tmp, "s.dat")
    chaingen(path, "--seed", "s", "--blocks", "105")
    r = peertool("chaingen", "--seed", "s", "--blocks", "105")
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == open(path, "rb").read()


def test_block_file_shape(chain):
    path, _, summary = chain
    blocks = read_records(path)
    assert len(blocks) == 150
    prev = REGTEST_GENESIS
    for h, raw in enumerate(blocks, 1):
        b = CBlock.deserialize(raw)
        assert b2lx(b.hashPrevBlock) == prev
        assert b.nVersion == 0x20000000 and b.nBits == 0x207FFFFF
        cb = b.vtx[0]
        # BIP34 as Core's miner: CScript() << height << OP_0
        sig = bytes(cb.vin[0].scriptSig)
        if h <= 16:
            assert sig == bytes([0x50 + h, 0x00])
        else:
            n = sig[0]
            assert int.from_bytes(sig[1:1 + n], "little") == h and sig[1 + n:] == b"\x00"
        # the witness commitment is the last output, and the nonce is there
        assert bytes(cb.vout[-1].scriptPubKey)[:6] == bytes.fromhex("6a24aa21a9ed")
        assert list(cb.wit.vtxinwit[0].scriptWitness.stack) == [b"\x00" * 32]
        assert (h > 100) == (len(b.vtx) > 1)
        for tx in b.vtx[1:]:
            assert tx.nVersion == 2 and tx.nLockTime == 0
            assert all(i.nSequence in (0xFFFFFFFE, 0xFFFFFFFF) for i in tx.vin)
        prev = b2lx(b.GetHash())
    assert prev == summary["tip"]
    assert all(v > 0 for v in summary["spent"].values()), summary


def test_help_and_usage_errors():
    r = peertool("help", "chaingen")
    assert r.returncode == 0 and b"Example" in r.stdout and b"Exit codes" in r.stdout
    r2 = peertool("chaingen", "--help")
    assert r2.returncode == 0 and r2.stdout == r.stdout
    for bad in (["--blocks", "0"], ["--blocks", "5", "--mix", "p2foo"], ["--seed", "x"],
                ["--blocks", "50", "--bench-block", "ecdsa"], ["--blocks"],
                ["--blocks=5", "--inputs-per-tx", "3-1"], ["--blocks", "5", "--frob"]):
        r = peertool("chaingen", *bad, "--out", os.devnull)
        assert r.returncode == 2, bad
        assert r.stderr.startswith(b"peertool: chaingen: "), r.stderr


def test_genesis_and_start_time(tmp):
    path = os.path.join(tmp, "g.dat")
    chaingen(path, "--seed", "g", "--blocks", "3", "--genesis", "--start-time", "1700000000")
    blocks = [CBlock.deserialize(r) for r in read_records(path)]
    assert b2lx(blocks[0].GetHash()) == REGTEST_GENESIS
    assert [b.nTime for b in blocks[1:]] == [1700000000 + 600 * h for h in (1, 2, 3)]
    assert b2lx(blocks[1].hashPrevBlock) == REGTEST_GENESIS
    # block 1 must come after genesis (median time past)
    r = peertool("chaingen", "--blocks", "3", "--start-time", "0", "--out", os.devnull)
    assert r.returncode == 2


def test_mix_only_taproot(tmp):
    path = os.path.join(tmp, "tr.dat")
    s = chaingen(path, "--seed", "t", "--blocks", "110", "--mix", "p2tr")
    created = {k for k, v in s["created"].items() if v}
    assert created == {"p2tr-key", "p2tr-script"}


def test_decode_and_verify_block(chain, tmp):
    path, spent, _ = chain
    raw = read_records(path)[-1]
    blk = os.path.join(tmp, "last.blk")
    open(blk, "wb").write(raw)
    r = peertool("decode-block", "--chain", "regtest", blk)
    assert r.returncode == 0, r.stderr.decode()
    got = json.loads(r.stdout)
    ref = CBlock.deserialize(raw)
    assert got["hash"] == b2lx(ref.GetHash())
    assert len(got["tx"]) == len(ref.vtx) > 1
    r = peertool("verify-block", "--chain", "regtest", "--prevouts", spent, blk)
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()
    v = json.loads(r.stdout)
    assert v["summary"]["invalid"] == 0 and v["summary"]["inputs"] > 0


def test_bench_block_shape(tmp):
    path = os.path.join(tmp, "bench.dat")
    chaingen(path, "--seed", "b", "--blocks", "102", "--bench-block", "mixed", "--bench-txs", "50")
    blocks = [CBlock.deserialize(r) for r in read_records(path)]
    setup, bench = blocks[-2], blocks[-1]
    assert len(setup.vtx) == 2 and len(setup.vtx[1].vout) == 5
    first = setup.vtx[1]
    assert first.vin[0].prevout.hash == blocks[0].vtx[0].GetTxid()  # block 1's coinbase
    assert [bytes(o.scriptPubKey)[0] for o in first.vout] == [0, 0, 0, 0, 0x51]
    assert all(o.nValue == 100_000_000 for o in first.vout)
    assert len(bench.vtx) == 51
    prev = first
    for tx in bench.vtx[1:]:
        assert [(i.prevout.hash, i.prevout.n) for i in tx.vin] == [(prev.GetTxid(), n) for n in range(5)]
        prev = tx


def test_two_thousand_blocks(tmp):
    # How fast is the benchmarks' business (about 5 s on 2 shared cores;
    # make bench-ibd makes this chain): here only that it is made.
    path = os.path.join(tmp, "big.dat")
    s = chaingen(path, "--seed", "perf", "--blocks", "2000")
    assert s["txs"] > 5 * 1800 * 0.9, s


# ---- Bitcoin Core ----------------------------------------------------------------


@pytest.fixture
def core(make_bitcoind):
    """A regtest bitcoind without a wallet, for submitblock and testmempoolaccept."""
    return make_bitcoind(1, small=True)[0]


def test_core_accepts_chain(core, chain):
    path, _, summary = chain
    blocks = read_records(path)
    seen_types = set()
    mempool_checked = 0
    for h, raw in enumerate(blocks, 1):
        b = CBlock.deserialize(raw)
        txs = [tx.serialize().hex() for tx in b.vtx[1:]]
        # Standardness: Core's mempool takes each transaction alone on
        # the chain so far (they spend only outputs of earlier blocks).
        for tx in txs:
            (res,) = core.rpc("testmempoolaccept", [tx])
            assert res["allowed"], (h, res)
            mempool_checked += 1
        assert core.rpc("submitblock", raw.hex()) is None, "block %d rejected" % h
    assert core.rpc("getbestblockhash") == summary["tip"]
    assert core.rpc("getblockcount") == 150
    for h in range(101, 151):
        blk = core.rpc("getblock", core.rpc("getblockhash", h), 2)
        for tx in blk["tx"]:
            for o in tx["vout"]:
                seen_types.add(o["scriptPubKey"]["type"])
    assert CORE_TYPES <= seen_types, seen_types
    assert mempool_checked == summary["txs"] > 100


def test_core_accepts_bench_chain(core, tmp):
    """Core's own ConnectBlock benchmark shape at full size (1,000 transactions
    of 5 inputs) on a node of its own: every block must be accepted."""
    path = os.path.join(tmp, "bench-core.dat")
    s = chaingen(path, "--seed", "bench", "--blocks", "152", "--txs-per-block", "2",
                 "--bench-block", "mixed")
    for h, raw in enumerate(read_records(path), 1):
        assert core.rpc("submitblock", raw.hex()) is None, "block %d rejected" % h
    assert core.rpc("getbestblockhash") == s["tip"]
    tip = core.rpc("getblock", s["tip"], 1)
    assert tip["height"] == 152 and tip["nTx"] == 1001


def test_core_loadblock_reads_the_file(tmp, make_bitcoind):
    """The file is Core's block-file format: bitcoind -loadblock imports it
    (genesis record included) and reaches its tip."""
    path = os.path.join(tmp, "load.dat")
    s = chaingen(path, "--seed", "load", "--blocks", "120", "--genesis")
    (node,) = make_bitcoind(1, args=("-loadblock=" + path,), small=True)
    wait_until(lambda: node.getblockcount() >= 120, 30, "-loadblock to reach height 120")
    assert node.getbestblockhash() == s["tip"]


def test_grow_utxo_core_counts_the_same_coins(core, tmp):
    """--grow-utxo (make bench-utxo's chain): Core accepts it, its UTXO set has
    the coins --utxo-out and the summary count, and the random spends reach
    coins of many earlier blocks, not only the oldest."""
    path = os.path.join(tmp, "grow.dat")
    counts = os.path.join(tmp, "grow.txt")
    args = ("--seed", "grow", "--blocks", "112", "--grow-utxo", "--mix", "p2wpkh",
            "--txs-per-block", "40", "--inputs-per-tx", "2", "--outputs-per-tx", "50",
            "--no-verify")
    s = chaingen(path, *args, "--utxo-out", counts)
    again = os.path.join(tmp, "grow2.dat")
    assert chaingen(again, *args) == s
    assert open(path, "rb").read() == open(again, "rb").read()
    lines = [tuple(map(int, ln.split())) for ln in open(counts)]
    assert [h for h, _ in lines] == list(range(1, 113))
    assert lines[-1][1] == s["utxos"] > 112 + 10 * 40 * 40, s
    born = {}  # txid -> height
    heights_spent = set()
    for h, raw in enumerate(read_records(path), 1):
        b = CBlock.deserialize(raw)
        for tx in b.vtx[1:]:
            heights_spent.update(born[i.prevout.hash] for i in tx.vin[:2]
                                 if i.prevout.hash in born and born[i.prevout.hash] < h)
        for tx in b.vtx:
            born[tx.GetTxid()] = h
        assert core.rpc("submitblock", raw.hex()) is None, "block %d rejected" % h
        if h in (101, 106, 112):
            info = core.rpc("gettxoutsetinfo", "none")
            assert info["txouts"] == lines[h - 1][1], (h, info)
    assert core.rpc("getbestblockhash") == s["tip"]
    # Spends of coins made in at least 8 different earlier blocks.
    assert len(heights_spent) >= 8, sorted(heights_spent)

"""peertool connect-blocks: whole chains into a datadir, reorgs, crash safety.

The oracles are independent of the chain code under test: Bitcoin Core's
own answers for its regtest chain (regtest_chain.json: tips, chainwork and
gettxoutsetinfo at each checkpoint), a fresh run of the winning branch
alone (after a reorg, the UTXO set must be exactly what connecting only the
winner gives), a UTXO set recomputed here from the blocks with
python-bitcoinlib (txouts and total_amount), and an unkilled run (after
kill -9s at random moments, the same tip and hash_serialized_3).

Chains come from `peertool chaingen`: `--fork-at H` makes branches that
share blocks 1..H and then spend the same coins in different transactions.

The long crash run (2,000 blocks) is marked `soak`: `make soak` runs it
(PEERD_SOAK=1); `make test` runs a 600-block one.
"""
from decimal import Decimal
import fcntl
import json
import os
import random
import re
import signal
import struct
import subprocess
import time

import pytest
from bitcoin.core import CBlock, CMutableTransaction, b2lx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
PEERTOOL = os.environ.get("PEERTOOL_BIN", os.path.join(BUILD, "bin", "peertool"))
VECTORS = os.environ.get("VECTORS", os.path.join(ROOT, "..", "shared", "vectors"))
REGTEST = os.path.join(VECTORS, "regtest")
MAGIC = bytes.fromhex("fabfb5da")
COIN = 100_000_000


def peertool(*args, timeout=300):
    return subprocess.run([PEERTOOL] + [str(a) for a in args], capture_output=True, timeout=timeout)


def connect(datadir, *files, ok=True, extra=()):
    """connect-blocks with --utxo-stats; the JSON report."""
    r = peertool("connect-blocks", "--utxo-stats", *extra, datadir, *files)
    assert r.returncode == (0 if ok else 1), (r.returncode, r.stderr.decode(), r.stdout.decode())
    return json.loads(r.stdout)


def records(path):
    data = open(path, "rb").read()
    out, off = [], 0
    while off < len(data):
        assert data[off:off + 4] == MAGIC
        (n,) = struct.unpack("<I", data[off + 4:off + 8])
        out.append(data[off + 8:off + 8 + n])
        off += 8 + n
    return out


def write_records(path, blocks, pad=0):
    with open(path, "wb") as f:
        for b in blocks:
            f.write(MAGIC + struct.pack("<I", len(b)) + b + b"\0" * pad)
    return str(path)


def chaingen(path, blocks, *opts):
    r = peertool("chaingen", "--no-verify", "--blocks", blocks, "--out", path, *opts)
    assert r.returncode == 0, r.stderr.decode()
    return str(path)


# ---- Bitcoin Core's regtest chain ------------------------------------------------------


@pytest.fixture(scope="module")
def core():
    return json.load(open(os.path.join(REGTEST, "regtest_chain.json")))


def expect_checkpoint(got, core, name):
    cp = core["checkpoints"][name]
    assert (got["tip"], got["height"]) == (cp["bestblockhash"], cp["height"]), name
    assert got["chainwork"] == cp["chainwork"], name
    want = cp["gettxoutsetinfo"]
    u = got["utxo"]
    for k in ("hash_serialized_3", "txouts", "transactions", "bogosize", "bestblock"):
        assert u[k] == want[k], (name, k)
    assert round(u["total_amount"] * COIN) == round(want["total_amount"] * COIN), name


def test_core_chain_stale_branch_and_reorg(tmp_path, core):
    main = records(os.path.join(REGTEST, "regtest_chain.dat"))
    assert len(main) == 265
    first = write_records(tmp_path / "first260.dat", main[:260])
    dd = tmp_path / "dd"
    got = connect(dd, first)
    expect_checkpoint(got, core, "tip")
    assert (got["accepted"], got["duplicate"], got["rejected"]) == (260, 0, 0)
    # The stale branch (261..263 on 260) takes over: more work.
    got = connect(dd, os.path.join(REGTEST, "regtest_stale_branch.dat"))
    expect_checkpoint(got, core, "stale-branch-tip")
    # The whole main chain: 260 duplicates, and 261..265 win back (a reorg of 3).
    got = connect(dd, os.path.join(REGTEST, "regtest_chain.dat"))
    expect_checkpoint(got, core, "after-reorg")
    assert (got["accepted"], got["duplicate"], got["rejected"]) == (5, 260, 0)
    assert (got["reorgs"], got["disconnected"]) == (1, 3)
    # Nothing new: all duplicates, the same state.
    got = connect(dd, os.path.join(REGTEST, "regtest_chain.dat"))
    expect_checkpoint(got, core, "after-reorg")
    assert (got["accepted"], got["duplicate"], got["connected"]) == (0, 265, 0)


def test_core_chain_out_of_order_with_padding(tmp_path, core):
    """Records in reverse, zero padding between and after them (Core's blk files):
    every block waits for its parent, and the result is Core's."""
    main = records(os.path.join(REGTEST, "regtest_chain.dat"))
    stale = records(os.path.join(REGTEST, "regtest_stale_branch.dat"))
    path = write_records(tmp_path / "rev.dat", list(reversed(main + stale)), pad=5)
    with open(path, "ab") as f:
        f.write(b"\0" * 65536)
    got = connect(tmp_path / "dd", path)
    expect_checkpoint(got, core, "after-reorg")
    assert (got["records"], got["accepted"], got["rejected"]) == (268, 268, 0)


def test_rejects_reasons_and_exit_code(tmp_path):
    main = records(os.path.join(REGTEST, "regtest_chain.dat"))
    bad = bytearray(main[1])
    bad[36] ^= 1  # the merkle root: bad-txnmrklroot (the hash changes, PoW may fail first)
    for nonce in range(1 << 16):  # regtest's target: keep the header's proof of work
        bad[76:80] = struct.pack("<I", nonce)
        h = CBlock.deserialize(bytes(bad)).GetHash()
        if int.from_bytes(h, "little") < 0x7FFFFF << (8 * (0x20 - 3)):
            break
    orphan = main[100]  # its parent never comes
    path = write_records(tmp_path / "bad.dat", [main[0], bytes(bad), main[1], orphan])
    r = peertool("connect-blocks", tmp_path / "dd", path)
    assert r.returncode == 1, r.stderr
    got = json.loads(r.stdout)
    assert (got["height"], got["accepted"], got["rejected"]) == (2, 2, 2)
    assert [x["reason"] for x in got["reject_reasons"]] == ["bad-txnmrklroot", "prev-blk-not-found"]
    assert got["reject_reasons"][1]["hash"] == b2lx(CBlock.deserialize(orphan).GetHash())
    # A file of garbage: exit 1, naming the offset; a missing file too.
    junk = tmp_path / "junk.dat"
    junk.write_bytes(b"\0\0\0" + b"garbage!" * 4)
    r = peertool("connect-blocks", tmp_path / "dd", junk)
    assert r.returncode == 1 and b"no regtest record at byte 3" in r.stderr
    r = peertool("connect-blocks", tmp_path / "dd", tmp_path / "missing.dat")
    assert r.returncode == 1 and b"cannot open" in r.stderr
    # Usage errors: exit 2 with the usage line.
    for args in (["--par", "x", "dd", "f"], ["--dbcache", "0", "dd", "f"], ["--chain", "mars", "dd", "f"],
                 ["dd"], ["--bogus", "dd", "f"]):
        r = peertool("connect-blocks", *args)
        assert r.returncode == 2 and b"usage: peertool connect-blocks" in r.stderr, args
    r = peertool("help", "connect-blocks")
    assert r.returncode == 0 and b"Example:" in r.stdout and b"Exit codes:" in r.stdout


def test_datadir_layout_and_lock(tmp_path):
    """bitcoind's layout (DATADIR/regtest/) and peerd's lock: a second user of
    the same network directory is turned away, not let in to corrupt it."""
    dd = tmp_path / "dd"
    got = connect(dd, os.devnull)
    assert got["height"] == 0
    assert (dd / "regtest" / "chainstate").is_dir() and (dd / "regtest" / "blocks").is_dir()
    with open(dd / "regtest" / ".lock", "r+") as f:
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)  # POSIX locks conflict with OFD ones
        r = peertool("connect-blocks", dd, os.devnull)
        assert r.returncode == 1 and b"is in use" in r.stderr, r.stderr
        blk = tmp_path / "b1.raw"
        blk.write_bytes(records(os.path.join(REGTEST, "regtest_chain.dat"))[0])
        r = peertool("verify-block", "--chain", "regtest", "--utxo", dd, blk)
        assert r.returncode == 1 and b"is in use" in r.stderr, r.stderr
    assert connect(dd, os.devnull)["height"] == 0


# ---- chaingen branches: reorgs of depth 1, 10 and 150 ---------------------------------


def utxo_of(paths):
    """The UTXO set after connecting these files' blocks in order (one chain),
    computed with python-bitcoinlib: {(txid, n): value}."""
    utxo = {}
    for p in paths:
        for raw in records(p):
            b = CBlock.deserialize(raw)
            for i, tx in enumerate(b.vtx):
                if i:
                    for txin in tx.vin:
                        del utxo[(txin.prevout.hash, txin.prevout.n)]
                txid = tx.GetTxid()
                for n, o in enumerate(tx.vout):
                    spk = bytes(o.scriptPubKey)
                    if spk[:1] != b"\x6a":  # OP_RETURN: never a coin
                        utxo[(txid, n)] = o.nValue
    return utxo


def spends(path, above):
    """{outpoint: spending txid} of the blocks above height `above`."""
    out = {}
    for h, raw in enumerate(records(path), start=1):
        if h <= above:
            continue
        for tx in CBlock.deserialize(raw).vtx[1:]:
            for txin in tx.vin:
                out[(txin.prevout.hash, txin.prevout.n)] = tx.GetTxid()
    return out


@pytest.mark.parametrize("fork,depth", [(130, 1), (120, 10), (60, 150)])
def test_chaingen_reorg(tmp_path, fork, depth):
    """Branch A (fork + depth blocks), then branch B (one block longer, forked
    at `fork`): B wins, a reorg of `depth`. Then A's own continuation, two
    blocks longer than A: back again. Each time the state equals a fresh run
    of the winner alone and the UTXO set recomputed here."""
    top = fork + depth
    a = chaingen(tmp_path / "a.dat", top, "--seed", "reorg")
    b = chaingen(tmp_path / "b.dat", top + 1, "--seed", "reorg", "--fork-at", fork)
    a2 = chaingen(tmp_path / "a2.dat", top + 2, "--seed", "reorg")
    assert records(a2)[:top] == records(a)  # the same seed: A2 extends A
    assert records(b)[:fork] == records(a)[:fork]
    assert all(x != y for x, y in zip(records(b)[fork:], records(a)[fork:]))

    dd = tmp_path / "dd"
    got = connect(dd, a)
    assert (got["height"], got["reorgs"]) == (top, 0)
    got = connect(dd, b)
    fresh_b = connect(tmp_path / "fresh-b", b)
    assert (got["tip"], got["height"]) == (fresh_b["tip"], top + 1)
    assert (got["reorgs"], got["disconnected"], got["duplicate"]) == (1, depth, fork)
    assert got["utxo"] == dict(fresh_b["utxo"], disk_size=got["utxo"]["disk_size"])
    want = utxo_of([b])
    assert got["utxo"]["txouts"] == len(want)
    assert round(got["utxo"]["total_amount"] * COIN) == sum(want.values())

    got = connect(dd, a2)
    fresh_a2 = connect(tmp_path / "fresh-a2", a2)
    assert (got["tip"], got["height"]) == (fresh_a2["tip"], top + 2)
    assert (got["reorgs"], got["disconnected"]) == (1, depth + 1)
    assert got["utxo"]["hash_serialized_3"] == fresh_a2["utxo"]["hash_serialized_3"]
    assert got["utxo"]["txouts"] == len(utxo_of([a2]))


def test_double_spend_across_reorg(tmp_path):
    """A coin spent on the losing branch and by a different transaction on the
    winning one: after the reorg the winner's spend holds, the loser's
    outputs are gone and the coin is not spendable twice."""
    fork, top = 110, 118
    a = chaingen(tmp_path / "a.dat", top, "--seed", "ds")
    b = chaingen(tmp_path / "b.dat", top + 1, "--seed", "ds", "--fork-at", fork, "--fork-seed", "other")
    sa, sb = spends(a, fork), spends(b, fork)
    both = [op for op in sa if op in sb and sa[op] != sb[op]]
    assert both, "the branches should spend a common coin differently"
    dd = tmp_path / "dd"
    connect(dd, a)
    got = connect(dd, b)
    want = utxo_of([b])
    assert got["utxo"]["txouts"] == len(want)
    assert round(got["utxo"]["total_amount"] * COIN) == sum(want.values())
    for op in both:
        assert op not in want  # spent on the winner, once
        assert not any(k[0] == sa[op] for k in want)  # the loser's spend is gone
    fresh = connect(tmp_path / "fresh", b)
    assert got["utxo"]["hash_serialized_3"] == fresh["utxo"]["hash_serialized_3"]


# ---- crash safety: kill -9 while connecting ---------------------------------------------


def crash_run(tmp_path, blocks, kills, seed=20261130):
    chain = chaingen(tmp_path / "chain.dat", blocks, "--seed", "crash")
    # A small cache: the chain flushes every few dozen blocks, so kills land
    # before, during and after flushes.
    opts = ("--dbcache", "0.1", "--par", "2")
    ref = connect(tmp_path / "ref", chain, extra=opts)
    assert ref["height"] == blocks and ref["flushes"] >= 8, ref
    dd = tmp_path / "dd"
    rng = random.Random(seed)
    # Spread over the first ~80% of an unkilled run's time, so the kills land
    # throughout the chain and the last run still has work to do.
    span = max(ref["seconds"], 0.2) * 0.8 / kills
    heights, killed, replayed = [], 0, 0
    for _ in range(5 * kills):
        if killed == kills:
            break
        p = subprocess.Popen([PEERTOOL, "connect-blocks", *opts, str(dd), chain],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.0, span))
        if p.poll() is not None:  # done before the kill: the next one lands in open/replay
            assert p.returncode == 0, p.stderr.read()
            p.stderr.close()
            continue
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        p.stderr.close()
        killed += 1
        # Where the kill left it, read back by a run that adds nothing: the
        # chain replays what its block files hold past the last flush.
        probe = connect(dd, os.devnull)
        h = probe["height"]
        assert not heights or h >= heights[-1], heights + [h]
        heights.append(h)
        replayed += probe["replayed"]
    got = connect(dd, chain, extra=opts)
    assert (got["tip"], got["height"]) == (ref["tip"], ref["height"]), heights
    assert got["utxo"] == dict(ref["utxo"], disk_size=got["utxo"]["disk_size"])
    assert got["rejected"] == 0
    # Some kill landed between flushes, with blocks on disk the database did
    # not have yet (a small cache flushes every few dozen blocks).
    assert replayed > 0, heights
    return killed, heights


def test_kill9_while_connecting(tmp_path):
    killed, heights = crash_run(tmp_path, 600, 10)
    assert killed >= 10, heights


HANDOFF = "flushing on its own thread"
TIP = re.compile(r"UpdateTip: new best=\w+ height=(\d+)")


def test_kill9_with_a_flush_in_flight(tmp_path):
    """kill -9 right after the validation thread hands the cache to the
    flush thread (issue 24): the database is then at the flush before or,
    when the thread was quicker than the kill, at the one handed off; the
    next run replays the rest and ends where an unkilled run does. Most
    kills must land before the commit: a test whose kills all came late
    would not test the window."""
    # ~4,000 new coins a block from block 101 and a cache of ~0.9 MiB: a
    # hand-off every block or two, each flush a few thousand coins.
    chain = chaingen(tmp_path / "chain.dat", 160, "--seed", "inflight", "--grow-utxo", "--mix",
                     "p2wpkh", "--txs-per-block", "40", "--inputs-per-tx", "2",
                     "--outputs-per-tx", "100")
    opts = ("--dbcache", "2", "--par", "2")
    ref = connect(tmp_path / "ref", chain, extra=opts)
    assert ref["height"] == 160 and ref["flushes"] >= 10, ref
    dd = tmp_path / "dd"
    rng = random.Random(24)
    kills, before_commit, heights = 0, 0, []
    for _ in range(40):
        if kills == 8:
            break
        p = subprocess.Popen([PEERTOOL, "connect-blocks", "--verbose", *opts, str(dd), chain],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        nth, seen, tip, handoff = rng.randint(1, 3), 0, -1, None
        for line in p.stderr:
            m = TIP.search(line)
            if m:
                tip = int(m.group(1))
            elif HANDOFF in line:
                seen += 1
                if seen == nth:
                    p.send_signal(signal.SIGKILL)
                    handoff = tip
                    break
        p.stderr.close()
        rc = p.wait(timeout=60)
        if handoff is None:  # the chain was done first: nothing was killed
            assert rc == 0
            continue
        assert rc == -signal.SIGKILL
        kills += 1
        # The database's best block is the probe's height less what it
        # replayed from the block files; below the handed-off tip, the
        # kill landed before the flush thread committed.
        probe = connect(dd, os.devnull)
        flushed = probe["height"] - probe["replayed"]
        assert flushed <= handoff and probe["height"] >= handoff, (flushed, handoff, probe)
        before_commit += flushed < handoff
        heights.append((handoff, flushed))
    print("(handed-off tip, database's tip) at each kill:", heights)
    assert kills == 8, heights
    assert before_commit >= 4, heights
    got = connect(dd, chain, extra=opts)
    assert (got["tip"], got["height"]) == (ref["tip"], ref["height"]), heights
    assert got["utxo"] == dict(ref["utxo"], disk_size=got["utxo"]["disk_size"])
    assert got["rejected"] == 0


@pytest.mark.soak
@pytest.mark.skipif(not os.environ.get("PEERD_SOAK"), reason="soak: make soak (PEERD_SOAK=1)")
def test_kill9_while_connecting_2000(tmp_path):
    killed, heights = crash_run(tmp_path, 2000, 10, seed=2000)
    assert killed >= 10, heights


# ---- verify-block: CheckBlock, contextual checks and ConnectBlock against a chain ----------


REGTEST_TARGET = 0x7FFFFF << (8 * (0x20 - 3))


def mine(raw):
    """The block with its merkle root recomputed and a nonce meeting regtest's target."""
    b = CBlock.deserialize(raw)
    raw = bytearray(raw)
    raw[36:68] = b.calc_merkle_root()
    for nonce in range(1 << 20):
        raw[76:80] = struct.pack("<I", nonce)
        if int.from_bytes(CBlock.deserialize(bytes(raw[:80]) + b"\0").GetHash(), "little") <= REGTEST_TARGET:
            return bytes(raw)
    raise AssertionError("no nonce")


def verify(*args):
    r = peertool("verify-block", "--chain", "regtest", *args)
    return r.returncode, (json.loads(r.stdout) if r.stdout else None), r.stderr.decode()


@pytest.fixture(scope="module")
def vchain(tmp_path_factory):
    """A 130-block chaingen chain and its continuation: blocks 1..129 in a datadir,
    block 130 (spending earlier coins) to verify, and the prevouts it spends."""
    d = tmp_path_factory.mktemp("verify")
    full = chaingen(d / "full.dat", 130, "--seed", "verify", "--spent-out", d / "spent.txt")
    recs = records(full)
    head = write_records(d / "head.dat", recs[:129])
    connect(d / "dd", head)
    return d, recs


def test_verify_block_whole_rules_without_chain(tmp_path, vchain):
    d, recs = vchain
    blk = recs[129]
    pv = str(d / "spent.txt")
    (tmp_path / "b.raw").write_bytes(blk)
    rc, got, err = verify("--prevouts", pv, tmp_path / "b.raw")
    assert rc == 0 and got["verdict"] == "valid", (got, err)
    assert (got["height"], got["height_source"]) == (130, "bip34")
    assert got["checks"] == {"check_block": "ok", "contextual": "ok"}
    # A broken nonce: Core's high-hash, whatever the scripts say. (The block's
    # hash moves with the nonce; find one that misses the target.)
    bad = bytearray(blk)
    for nonce in range(1000):
        bad[76:80] = struct.pack("<I", nonce)
        if int.from_bytes(CBlock.deserialize(bytes(bad[:80]) + b"\0").GetHash(), "little") > REGTEST_TARGET:
            break
    (tmp_path / "n.raw").write_bytes(bytes(bad))
    rc, got, _ = verify("--prevouts", pv, tmp_path / "n.raw")
    assert (rc, got["verdict"], got["reject_reason"]) == (1, "invalid", "high-hash")
    assert got["summary"]["invalid"] == 0  # every script is fine: the block is not
    # --no-pow (Core's fCheckPOW=false) lets the proof of work go.
    rc, got, _ = verify("--no-pow", "--prevouts", pv, tmp_path / "n.raw")
    assert (rc, got["reject_reason"]) == (0, None)
    # A broken merkle root, mined again: bad-txnmrklroot.
    bad = bytearray(blk)
    bad[40] ^= 0x55
    b = CBlock.deserialize(bytes(bad))
    for nonce in range(1 << 20):
        bad[76:80] = struct.pack("<I", nonce)
        if int.from_bytes(CBlock.deserialize(bytes(bad[:80]) + b"\0").GetHash(), "little") <= REGTEST_TARGET:
            break
    assert b.hashMerkleRoot != b.calc_merkle_root()
    (tmp_path / "m.raw").write_bytes(bytes(bad))
    rc, got, _ = verify("--prevouts", pv, tmp_path / "m.raw")
    assert (rc, got["reject_reason"], got["checks"]["check_block"]) == (1, "bad-txnmrklroot", "bad-txnmrklroot")
    # Without the witness commitment (the coinbase's last output gone), mined
    # again: ContextualCheckBlock's unexpected-witness, needing only the height.
    cb = CBlock.deserialize(blk)
    mcb = CMutableTransaction.from_tx(cb.vtx[0])
    mcb.vout = mcb.vout[:1]
    mcb.wit = type(mcb.wit)()
    vtx = [mcb] + list(cb.vtx[1:])
    nb = CBlock(nVersion=cb.nVersion, hashPrevBlock=cb.hashPrevBlock, nTime=cb.nTime, nBits=cb.nBits,
                vtx=vtx, hashMerkleRoot=CBlock(vtx=vtx).calc_merkle_root())
    (tmp_path / "w.raw").write_bytes(mine(nb.serialize()))
    rc, got, _ = verify("--prevouts", pv, tmp_path / "w.raw")
    assert (rc, got["checks"]["check_block"], got["reject_reason"]) == (1, "ok", "unexpected-witness")


def test_verify_block_with_utxo(tmp_path, vchain):
    d, recs = vchain
    dd = str(d / "dd")
    (tmp_path / "b.raw").write_bytes(recs[129])
    rc, got, err = verify("--utxo", dd, "--par", 2, tmp_path / "b.raw")
    assert rc == 0 and got["verdict"] == "valid", (got, err)
    assert (got["height"], got["height_source"]) == (130, "parent")
    assert got["checks"] == {"check_block": "ok", "contextual": "ok", "connect": "ok"}
    n_in = sum(len(tx.vin) for tx in CBlock.deserialize(recs[129]).vtx[1:])
    assert got["summary"]["inputs"] == got["summary"]["valid"] == n_in
    # Just checking: the chain did not move.
    assert connect(dd, os.devnull)["height"] == 129
    # Its coinbase paying one satoshi too much: bad-cb-amount, which only
    # ConnectBlock sees (the sum of fees comes from the UTXO set).
    b = CBlock.deserialize(recs[129])
    mcb = CMutableTransaction.from_tx(b.vtx[0])
    mcb.vout[0].nValue += 1
    vtx = [mcb] + list(b.vtx[1:])
    nb = CBlock(nVersion=b.nVersion, hashPrevBlock=b.hashPrevBlock, nTime=b.nTime, nBits=b.nBits, vtx=vtx)
    (tmp_path / "a.raw").write_bytes(mine(nb.serialize()))
    rc, got, _ = verify("--utxo", dd, tmp_path / "a.raw")
    assert (rc, got["checks"]["connect"], got["reject_reason"]) == (1, "bad-cb-amount", "bad-cb-amount")
    assert got["summary"]["invalid"] == 0
    # Block 129 again on top of 129's parent: not the tip, so ConnectBlock
    # cannot run against this UTXO set; the verdict stays open (exit 1).
    (tmp_path / "old.raw").write_bytes(recs[128])
    rc, got, _ = verify("--utxo", dd, tmp_path / "old.raw")
    assert (rc, got["verdict"]) == (1, "inconclusive")
    assert got["checks"]["connect"].startswith("skipped")
    # A block whose parent the chain lacks.
    rc, got, _ = verify("--utxo", str(tmp_path / "nowhere"), tmp_path / "b.raw")
    assert rc == 1 and got is None
    empty = tmp_path / "empty"
    connect(empty, os.devnull)
    rc, got, _ = verify("--utxo", empty, tmp_path / "b.raw")
    assert (rc, got["reject_reason"]) == (1, "prev-blk-not-found")
    # Usage: one source of spent outputs; help has an example and exit codes.
    r = peertool("verify-block", "--utxo", dd, "--prevouts", "x", "b")
    assert r.returncode == 2 and b"give one" in r.stderr
    r = peertool("verify-block", "b")
    assert r.returncode == 2 and b"--prevouts FILE or --utxo DATADIR" in r.stderr
    r = peertool("help", "verify-block")
    assert r.returncode == 0 and b"Example" in r.stdout and b"Exit codes" in r.stdout


# ---- Bitcoin Core's own block files ---------------------------------------------------


def core_address(k):
    """A regtest P2WPKH address (python-bitcoinlib encodes it)."""
    import bitcoin
    from bitcoin.core.script import CScript
    from bitcoin.wallet import CBitcoinAddress

    bitcoin.SelectParams("regtest")
    try:
        return str(CBitcoinAddress.from_scriptPubKey(CScript([0, bytes([k]) * 20])))
    finally:
        bitcoin.SelectParams("mainnet")


def test_core_blk_files(tmp_path, make_bitcoind):
    """bitcoind's blocks/blk00000.dat (genesis first, 16 MiB preallocated, so
    zero padding after the last record) with a stale block in it: a chaingen
    chain submitted to Core, 20 blocks Core mines itself, a tip invalidated
    and replaced by a longer branch. connect-blocks on that file must end at
    Core's tip with Core's gettxoutsetinfo."""
    chain = chaingen(tmp_path / "c.dat", 130, "--seed", "core-blk")
    # -blocksxor=0: Core 28+ obfuscates new block files with a random key.
    node = make_bitcoind(1, args=("-blocksxor=0",))[0]
    for raw in records(chain):
        assert node.rpc("submitblock", raw.hex()) is None
    addr = [core_address(k) for k in (1, 2)]
    node.rpc("generatetoaddress", 10, addr[0])
    stale = node.rpc("getbestblockhash")
    node.rpc("invalidateblock", stale)
    # Another address, or Core mines the same block again in the same second.
    node.rpc("generatetoaddress", 10, addr[1])  # the branch that wins: 9 more
    node.rpc("reconsiderblock", stale)  # its stale block stays behind
    want_tip = node.rpc("getbestblockhash")
    want = node.rpc("gettxoutsetinfo")
    node.stop()
    blk = os.path.join(node.datadir, "regtest", "blocks", "blk00000.dat")
    size = os.path.getsize(blk)
    got = connect(tmp_path / "dd", blk)
    assert size >= 16 << 20  # preallocated: mostly zeros after the records
    assert (got["tip"], got["height"]) == (want_tip, 149)
    assert (got["records"], got["rejected"], got["duplicate"]) == (151, 0, 1)  # genesis
    u = got["utxo"]
    for k in ("hash_serialized_3", "txouts", "transactions", "bogosize"):
        assert u[k] == want[k], k
    assert round(Decimal(str(u["total_amount"])) * COIN) == round(Decimal(want["total_amount"]) * COIN)


def test_verify_block_without_transactions(tmp_path, vchain):
    """A header and no transactions: CheckBlock's reason, and the contextual
    checks (which read the coinbase) are not run on it."""
    d, recs = vchain
    (tmp_path / "e.raw").write_bytes(recs[129][:80] + b"\x00")
    empty = tmp_path / "none.txt"
    empty.write_text("")
    rc, got, _ = verify("--prevouts", empty, tmp_path / "e.raw")
    assert (rc, got["reject_reason"], got["checks"]["contextual"]) == (1, "bad-txnmrklroot", "not run")
    rc, got, _ = verify("--utxo", d / "dd", tmp_path / "e.raw")
    assert (rc, got["reject_reason"]) == (1, "bad-txnmrklroot")
    assert got["checks"]["contextual"].startswith("not run") and got["checks"]["connect"] == "not run"

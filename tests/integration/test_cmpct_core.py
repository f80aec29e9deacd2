"""Compact blocks received (issue 22, first cut: daemon/sync/cmpct_receive.c) with the
real bitcoind making the blocks.

Core A feeds peerd its chain and its mempool; then A makes blocks with
`generateblock ... submit=false` (A's own chain does not move, so nobody
relays them), and a scripted peer, the test, sends peerd each as a
cmpctblock built here from A's block (short ids by this file's own
SipHash-2-4, independent of peerd's). peerd must rebuild a block whose
transactions it holds without asking anything, ask exactly the missing
one with getblocktxn and take the blocktxn, fall back to getdata on a
short-id collision, and treat an invalid compact block as misbehaviour."""
import hashlib
import io
import os
import struct

import pytest

from bitcoind import wait_until
from conftest import P2P, PeerClosed, frame, read_compact, ser_compact

pytestmark = pytest.mark.interop

MSG_WITNESS_BLOCK = 0x40000002
M64 = (1 << 64) - 1


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & M64


def siphash24(k0, k1, data):
    """SipHash-2-4 of data (a multiple of 8 bytes here: 32-byte wtxids)."""
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261,
         k1 ^ 0x7465646279746573]

    def rnd():
        v[0] = (v[0] + v[1]) & M64
        v[1] = _rotl(v[1], 13) ^ v[0]
        v[0] = _rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & M64
        v[3] = _rotl(v[3], 16) ^ v[2]
        v[0] = (v[0] + v[3]) & M64
        v[3] = _rotl(v[3], 21) ^ v[0]
        v[2] = (v[2] + v[1]) & M64
        v[1] = _rotl(v[1], 17) ^ v[2]
        v[2] = _rotl(v[2], 32)

    assert len(data) % 8 == 0
    for i in range(0, len(data), 8):
        m = struct.unpack("<Q", data[i:i + 8])[0]
        v[3] ^= m
        rnd()
        rnd()
        v[0] ^= m
    b = (len(data) & 0xFF) << 56
    v[3] ^= b
    rnd()
    rnd()
    v[0] ^= b
    v[2] ^= 0xFF
    for _ in range(4):
        rnd()
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def split_block(raw):
    """(80-byte header, [serialized tx with witness, ...]) of a raw block."""
    from bitcoin.core import CTransaction

    f = io.BytesIO(raw)
    header = f.read(80)
    n = read_compact(f)
    txs = []
    for _ in range(n):
        start = f.tell()
        CTransaction.stream_deserialize(f)
        end = f.tell()
        txs.append(raw[start:end])
    assert f.read() == b""
    return header, txs


def sha256d(b):
    return hashlib.sha256(hashlib.sha256(b).digest()).digest()


def cmpctblock(raw, nonce=None, dup_ids=False, bad_prefill=False):
    """BIP152 cmpctblock of a raw block: the coinbase prefilled, short ids for the rest."""
    header, txs = split_block(raw)
    nonce = struct.unpack("<Q", os.urandom(8))[0] if nonce is None else nonce
    key = hashlib.sha256(header + struct.pack("<Q", nonce)).digest()
    k0, k1 = struct.unpack("<QQ", key[:16])
    ids = [siphash24(k0, k1, sha256d(t)) & 0xFFFFFFFFFFFF for t in txs[1:]]
    if dup_ids:
        ids[1] = ids[0]
    out = header + struct.pack("<Q", nonce) + ser_compact(len(ids))
    out += b"".join(struct.pack("<Q", i)[:6] for i in ids)
    index = len(txs) + 5 if bad_prefill else 0
    out += ser_compact(1) + ser_compact(index) + txs[0]
    return out, header, txs


def cmpct_stats(d):
    return d.rpc("getstats")["sync"]["cmpct"]


@pytest.fixture
def core_and_peerd(make_peerd, make_bitcoind):
    return start_core_and_peerd(make_peerd, make_bitcoind)


def start_core_and_peerd(make_peerd, make_bitcoind, *peerd_args):
    """Core A with a funded wallet, connected to a peerd (given these
    arguments) that has A's chain and is out of initial block download."""
    (a,) = make_bitcoind(1)
    a.create_wallet()
    a.fund_wallet(per_type=2)
    d = make_peerd(*peerd_args)
    a.connect_to("127.0.0.1:%d" % d.port)
    for _ in range(6):
        a.mine(1)
        try:
            wait_until(lambda: d.rpc("getblockchaininfo")["blocks"] == a.getblockcount(), 20,
                       "peerd to sync from A")
            break
        except AssertionError:
            continue
    wait_until(lambda: not d.rpc("getblockchaininfo")["initialblockdownload"], 10, "peerd out of IBD")
    return a, d


def send_txs(a, d, n):
    txids = [a.send_to(a.new_address("bech32"), 0.1) for _ in range(n)]
    wait_until(lambda: set(txids) <= set(d.rpc("getrawmempool")), 60, "peerd to have A's transactions")
    return txids


def unbroadcast_tx(a):
    """A signed spend of A's wallet that nobody else has seen: its hex."""
    u = a.rpc("listunspent", 1, 9999999, wallet=a.wallet)[0]
    dest = a.new_address("bech32m")
    raw = a.rpc("createrawtransaction", [{"txid": u["txid"], "vout": u["vout"]}],
                [{dest: u["amount"] - __import__("decimal").Decimal("0.0002")}])
    return a.rpc("signrawtransactionwithwallet", raw, wallet=a.wallet)["hex"]


def peer(d):
    p = P2P(d.port)
    p.handshake()
    return p


def watch(p, seconds):
    """Messages (command, payload) peerd sent within `seconds`."""
    out = []
    try:
        while True:
            m = p.recv(seconds)
            out.append((m.command, m.payload))
    except (TimeoutError, PeerClosed):
        pass
    return out


def test_rebuilt_from_mempool_then_with_getblocktxn(core_and_peerd):
    a, d = core_and_peerd
    txids = send_txs(a, d, 12)
    blk = a.rpc("generateblock", a.new_address("bech32"), txids, False)
    raw = bytes.fromhex(blk["hex"])
    msg, header, txs = cmpctblock(raw)
    assert len(txs) == 13
    p = peer(d)
    before = cmpct_stats(d)
    p.send_raw(frame("cmpctblock", msg))
    wait_until(lambda: d.rpc("getbestblockhash") == blk["hash"], 20, "peerd to take the block")
    after = cmpct_stats(d)
    assert after["rebuilt_from_mempool"] == before["rebuilt_from_mempool"] + 1
    assert after["getblocktxn_sent"] == before["getblocktxn_sent"]
    assert after["bytes_saved"] > before["bytes_saved"] + len(raw) // 2
    got = [c for c, _ in watch(p, 1.0)]
    assert "getblocktxn" not in got and "getdata" not in got, got
    # A catches up with its own block; the mined transactions leave its mempool.
    a.rpc("submitblock", blk["hex"])
    assert a.getbestblockhash() == blk["hash"]

    # One transaction peerd never saw: one getblocktxn round for exactly it.
    txids = send_txs(a, d, 5)
    hidden = unbroadcast_tx(a)
    blk2 = a.rpc("generateblock", a.new_address("bech32"), txids[:2] + [hidden] + txids[2:], False)
    raw2 = bytes.fromhex(blk2["hex"])
    msg2, header2, txs2 = cmpctblock(raw2)
    p.send_raw(frame("cmpctblock", msg2))
    m = p.recv_until("getblocktxn", timeout=10)
    f = io.BytesIO(m.payload)
    assert f.read(32) == sha256d(header2)
    assert read_compact(f) == 1
    assert read_compact(f) == 3  # coinbase, two of the mempool's, then the hidden one
    p.send_raw(frame("blocktxn", sha256d(header2) + ser_compact(1) + txs2[3]))
    wait_until(lambda: d.rpc("getbestblockhash") == blk2["hash"], 20, "peerd to take block 2")
    s = cmpct_stats(d)
    assert s["rebuilt_with_getblocktxn"] == after["rebuilt_with_getblocktxn"] + 1
    assert s["fallback_full_block"] == 0 and s["invalid"] == 0
    p.close()


def test_collision_falls_back_and_invalid_is_misbehaviour(core_and_peerd):
    a, d = core_and_peerd
    txids = send_txs(a, d, 4)
    blk = a.rpc("generateblock", a.new_address("bech32"), txids, False)
    raw = bytes.fromhex(blk["hex"])
    p = peer(d)
    # Two equal short ids: Core's "Short ID collision": getdata the block.
    msg, header, _ = cmpctblock(raw, dup_ids=True)
    p.send_raw(frame("cmpctblock", msg))
    m = p.recv_until("getdata", timeout=10)
    f = io.BytesIO(m.payload)
    assert read_compact(f) == 1
    t, h = struct.unpack("<I32s", f.read(36))
    assert (t, h) == (MSG_WITNESS_BLOCK, sha256d(header))
    p.send_raw(frame("block", raw))
    wait_until(lambda: d.rpc("getbestblockhash") == blk["hash"], 20, "peerd to take the block")
    assert cmpct_stats(d)["fallback_full_block"] == 1
    a.rpc("submitblock", blk["hex"])

    # A prefilled index past the block: invalid, the peer goes.
    blk2 = a.rpc("generateblock", a.new_address("bech32"), send_txs(a, d, 2), False)
    msg2, _, _ = cmpctblock(bytes.fromhex(blk2["hex"]), bad_prefill=True)
    p.send_raw(frame("cmpctblock", msg2))
    assert p.is_closed(10)
    assert cmpct_stats(d)["invalid"] == 1
    assert d.rpc("getbestblockhash") == blk["hash"]


def test_header_without_proof_of_work_is_misbehaviour(core_and_peerd):
    a, d = core_and_peerd
    blk = a.rpc("generateblock", a.new_address("bech32"), send_txs(a, d, 2), False)
    raw = bytearray(bytes.fromhex(blk["hex"]))
    # Regtest's target passes about half of all hashes: find a nonce that fails.
    target = 0x7FFFFF << (8 * (0x20 - 3))
    for nonce in range(1000):
        raw[76:80] = struct.pack("<I", nonce)
        if int.from_bytes(sha256d(bytes(raw[:80])), "little") > target:
            break
    msg, _, _ = cmpctblock(bytes(raw))
    p = peer(d)
    # A pushes its blocks to peerd as cmpctblocks too (high-bandwidth): count from here.
    before = cmpct_stats(d)
    p.send_raw(frame("cmpctblock", msg))
    assert p.is_closed(10)
    s = cmpct_stats(d)
    assert s["invalid"] == 1 and s["received"] == before["received"] + 1
    assert d.rpc("getbestblockhash") == a.getbestblockhash()


def test_getblocktxn_served(core_and_peerd):
    a, d = core_and_peerd
    send_txs(a, d, 4)
    h = a.mine(1)[0]
    wait_until(lambda: d.rpc("getbestblockhash") == h, 20, "peerd to take A's block")
    raw = bytes.fromhex(a.rpc("getblock", h, 0))
    header, txs = split_block(raw)
    assert len(txs) == 5
    bh = bytes.fromhex(h)[::-1]
    p = peer(d)
    # Indexes 1 and 3, as gaps 1 and 1: the transactions as Core stored them.
    p.send_raw(frame("getblocktxn", bh + ser_compact(2) + ser_compact(1) + ser_compact(1)))
    m = p.recv_until("blocktxn", timeout=10)
    assert m.payload == bh + ser_compact(2) + txs[1] + txs[3]
    # Deeper than 10 below the tip: the whole block instead.
    a.mine(11)
    wait_until(lambda: d.rpc("getbestblockhash") == a.getbestblockhash(), 30, "peerd to follow A")
    p.send_raw(frame("getblocktxn", bh + ser_compact(1) + ser_compact(0)))
    m = p.recv_until("block", timeout=10)
    assert m.payload == raw
    # An index past the block's transactions: the peer goes.
    tip = bytes.fromhex(a.getbestblockhash())[::-1]
    p.send_raw(frame("getblocktxn", tip + ser_compact(1) + ser_compact(5)))
    assert p.is_closed(10)


def _one_peer(node):
    peers = node.rpc("getpeerinfo")
    assert len(peers) == 1, peers
    return peers[0]


def test_compact_both_ways_high_bandwidth(make_peerd, make_bitcoind):
    """Core A -> peerd -> Core B in BIP152 high-bandwidth mode both ways.

    A's blocks become peerd's tip, so peerd asks A for high-bandwidth
    (sendcmpct(1)); peerd's blocks become B's tip, so B asks peerd. Then a
    block of 100 transactions everyone has: A pushes it to peerd as a
    cmpctblock unasked (no getdata of any kind from peerd) and peerd
    rebuilds it from its mempool with no getblocktxn and no full block
    (getstats); peerd pushes it on to B as a cmpctblock unasked, and B
    rebuilds it from the mempool peerd filled, as B's own log says."""
    import re

    a, b = make_bitcoind(2, args=("-debug=cmpctblock",))
    a.create_wallet()
    a.fund_wallet(per_type=1)
    d = make_peerd()
    a.connect_to("127.0.0.1:%d" % d.port)
    for _ in range(6):
        a.mine(1)
        try:
            wait_until(lambda: d.rpc("getblockchaininfo")["blocks"] == a.getblockcount(), 20,
                       "peerd to sync from A")
            break
        except AssertionError:
            continue
    wait_until(lambda: not d.rpc("getblockchaininfo")["initialblockdownload"], 10, "peerd out of IBD")
    d.rpc("addnode", "127.0.0.1:%d" % b.port, "add")
    wait_until(lambda: b.getbestblockhash() == a.getbestblockhash(), 60, "B to sync through peerd")

    a.mine(100)
    wait_until(lambda: b.getbestblockhash() == a.getbestblockhash(), 60, "B to follow A")
    # One block alone, so each taker has it as the only block in flight
    # (Core's condition for choosing its giver as high-bandwidth).
    for _ in range(3):
        a.mine(1)
        wait_until(lambda: b.getbestblockhash() == a.getbestblockhash(), 30, "B to follow A")

    # peerd chose A (A is inbound to peerd; its only high-bandwidth peer).
    a_at_d = [p for p in d.rpc("getpeerinfo") if p["inbound"]]
    assert len(a_at_d) == 1 and a_at_d[0]["bip152_hb_to"] is True, a_at_d
    assert a_at_d[0]["bip152_hb_from"] is False
    d_at_a = _one_peer(a)
    assert d_at_a["bip152_hb_from"] is True and d_at_a["bip152_hb_to"] is False, d_at_a
    # B chose peerd.
    d_at_b = _one_peer(b)
    assert d_at_b["bip152_hb_to"] is True and d_at_b["bip152_hb_from"] is False, d_at_b
    b_at_d = [p for p in d.rpc("getpeerinfo") if not p["inbound"]]
    assert len(b_at_d) == 1 and b_at_d[0]["bip152_hb_from"] is True, b_at_d
    assert b_at_d[0]["bip152_hb_to"] is False
    assert cmpct_stats(d)["hb_peers"] == 1

    txids = [a.send_to(a.new_address("bech32"), 0.1) for _ in range(100)]
    wait_until(lambda: set(txids) <= set(b.rpc("getrawmempool")), 120, "B to have A's transactions")
    assert set(txids) <= set(d.rpc("getrawmempool"))
    before = cmpct_stats(d)
    msgs = d.rpc("getstats")["messages"]
    sent = msgs["cmpctblock"]["sent_count"]
    blocks_in = msgs["block"]["recv_count"]
    getdata_out = msgs["getdata"]["sent_count"]
    h = a.mine(1)[0]
    wait_until(lambda: b.getbestblockhash() == h, 30, "B to take the block through peerd")
    # A pushed it unasked; peerd rebuilt it from its mempool alone.
    after = cmpct_stats(d)
    msgs = d.rpc("getstats")["messages"]
    assert after["asked"] == before["asked"], after
    assert after["received"] == before["received"] + 1, after
    assert after["rebuilt_from_mempool"] == before["rebuilt_from_mempool"] + 1, after
    assert after["getblocktxn_sent"] == before["getblocktxn_sent"], after
    assert after["fallback_full_block"] == 0, after
    assert msgs["block"]["recv_count"] == blocks_in  # no full block
    assert msgs["getdata"]["sent_count"] == getdata_out  # nothing asked
    # And pushed B a cmpctblock unasked, which B rebuilt from the mempool peerd filled.
    assert after["hb_pushed"] == before["hb_pushed"] + 1, after
    assert msgs["cmpctblock"]["sent_count"] == sent + 1
    pat = re.compile(r"Successfully reconstructed block %s with 1 txn prefilled, 100 txn from "
                     r"mempool \(incl at least 0 from extra pool\) and 0 txn" % h)
    wait_until(lambda: pat.search(open(b.debug_log).read()), 10, "B's log of the reconstruction")
    assert _one_peer(b)["bytesrecv_per_msg"].get("block", 0) == \
        d_at_b["bytesrecv_per_msg"].get("block", 0)


def test_sendcmpct_of_another_version_is_ignored(make_peerd):
    """Core's SENDCMPCT: only version 2 counts; a later sendcmpct of another
    version changes nothing (the peer stays high-bandwidth from us and
    keeps its version 2)."""
    d = make_peerd()
    p = peer(d)

    def mine():
        return next(x for x in d.rpc("getpeerinfo") if x["inbound"])

    p.send_raw(frame("sendcmpct", struct.pack("<?Q", True, 2)))
    wait_until(lambda: mine()["bip152_hb_from"], 10, "peerd to take sendcmpct(1, 2)")
    p.send_raw(frame("sendcmpct", struct.pack("<?Q", False, 1)))
    p.send_raw(frame("ping", struct.pack("<Q", 7)))
    p.recv_until("pong", timeout=10)
    assert mine()["bip152_hb_from"] is True
    p.send_raw(frame("sendcmpct", struct.pack("<?Q", False, 2)))
    wait_until(lambda: not mine()["bip152_hb_from"], 10, "peerd to take sendcmpct(0, 2)")
    p.close()

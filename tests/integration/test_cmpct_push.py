"""Every new block goes to high-bandwidth peers before it is connected, as
Core 29's NewPoWValidBlock (issue 22; daemon/sync/cmpct_recent.c): a block
that arrives whole, one peerd mines, one given by submitblock; and the
cmpctblock built for that push is the one a getdata MSG_CMPCT_BLOCK gets
(Core's m_most_recent_compact_block: the same nonce).

The blocks that fail only when connected (a transaction spending an
output nobody has) show the push came before the connect: peerd never
announces a block it could not connect."""
import os
import time
import struct

import pytest

from bitcoind import wait_until
from conftest import frame, ser_compact
from test_cmpct_core import cmpct_stats, cmpctblock, peer, sha256d, start_core_and_peerd
from test_cmpct_rules import _block_with_orphan, alone

pytestmark = pytest.mark.interop

MSG_CMPCT_BLOCK = 4


def _spends_nothing():
    """A transaction spending an output nobody has (raw bytes)."""
    from bitcoin.core import COutPoint, CTransaction, CTxIn, CTxOut
    from bitcoin.core.script import CScript

    return CTransaction([CTxIn(COutPoint(os.urandom(32), 0), CScript([b"\x01" * 10]))],
                        [CTxOut(1000, CScript([0, b"\x02" * 32]))]).serialize()


def _hb_peer(d):
    """A scripted peer that asked peerd for high-bandwidth compact blocks
    (sendcmpct(1, 2)) and has peerd's tip."""
    tip = d.rpc("getbestblockhash")
    n = sum(p["bip152_hb_from"] for p in d.rpc("getpeerinfo"))
    hb = peer(d)
    hb.send_raw(frame("sendcmpct", struct.pack("<?Q", True, 2)))
    hb.send_raw(frame("inv", ser_compact(1) + struct.pack("<I", 2) + bytes.fromhex(tip)[::-1]))
    wait_until(lambda: sum(p["bip152_hb_from"] for p in d.rpc("getpeerinfo")) > n, 10,
               "peerd to take sendcmpct(1, 2)")
    hb.sync_with_ping()
    return hb


def test_whole_block_reaches_core_before_connecting(make_peerd, make_bitcoind):
    """Core B, high-bandwidth peer of peerd (B chose it), hears of a block
    peerd got whole and then failed to connect: only the cmpctblock pushed
    before the connect could have told B its header."""
    a, d = start_core_and_peerd(make_peerd, make_bitcoind)
    (b,) = make_bitcoind(1)
    d.rpc("addnode", "127.0.0.1:%d" % b.port, "add")
    wait_until(lambda: b.getbestblockhash() == a.getbestblockhash(), 60, "B to sync through peerd")
    # Single blocks that reach B through peerd first: B picks peerd as one
    # of its high-bandwidth peers (Core's MaybeSetPeerAsAnnouncingHeaderAndIDs).
    for _ in range(3):
        a.mine(1)
        wait_until(lambda: b.getbestblockhash() == a.getbestblockhash(), 30, "B to follow A")
    wait_until(lambda: any(p["bip152_hb_from"] for p in d.rpc("getpeerinfo") if not p["inbound"]),
               10, "B to ask peerd for high-bandwidth")
    tip = d.rpc("getbestblockhash")
    raw = _block_with_orphan(d, _spends_nothing())
    h = sha256d(raw[:80])[::-1].hex()
    s0 = cmpct_stats(d)
    sender = peer(d)
    sender.send_raw(frame("block", raw))
    # peerd finds it invalid when connecting; its tip stays.
    wait_until(lambda: any(t["hash"] == h and t["status"] == "invalid"
                           for t in d.rpc("getchaintips")), 10, "peerd to find the block invalid")
    assert d.rpc("getbestblockhash") == tip
    # B was told of it all the same, by the push.
    wait_until(lambda: any(t["hash"] == h for t in b.rpc("getchaintips")), 10,
               "B to hear of the block")
    assert b.getbestblockhash() == tip
    s = cmpct_stats(d)
    assert s["hb_pushed_before_connect"] == s0["hb_pushed_before_connect"] + 1, s
    sender.close()


def _mined_pushed_early(d, mine):
    """mine() makes peerd accept one new block; the high-bandwidth peer gets
    its cmpctblock, counted as pushed before connecting; a getdata
    MSG_CMPCT_BLOCK from another peer then gets that same cmpctblock."""
    hb = _hb_peer(d)
    s0 = cmpct_stats(d)
    h = mine()
    m = hb.recv_until("cmpctblock", timeout=10)
    assert sha256d(m.payload[:80])[::-1].hex() == h
    s = cmpct_stats(d)
    assert s["hb_pushed_before_connect"] == s0["hb_pushed_before_connect"] + 1, s
    # The most recent cmpctblock, sent again: the same nonce (a built one
    # would draw a fresh one).
    other = peer(d)
    other.send_raw(frame("getdata", ser_compact(1) + struct.pack("<I", MSG_CMPCT_BLOCK) +
                         bytes.fromhex(h)[::-1]))
    again = other.recv_until("cmpctblock", timeout=10)
    assert again.payload[:88] == m.payload[:88]
    assert cmpct_stats(d)["recent_reused"] == s["recent_reused"] + 1
    hb.close()
    other.close()


def test_mined_block_pushed_before_connecting(make_peerd, make_bitcoind):
    a, d = start_core_and_peerd(make_peerd, make_bitcoind)
    alone(a, d)
    addr = a.new_address("bech32")
    _mined_pushed_early(d, lambda: d.rpc("generatetoaddress", 1, addr)[0])


def test_submitted_block_pushed_before_connecting(make_peerd, make_bitcoind):
    a, d = start_core_and_peerd(make_peerd, make_bitcoind)
    alone(a, d)

    def submit():
        raw = _block_with_orphan(d, _spends_nothing())
        d.rpc("submitblock", raw.hex())
        return sha256d(raw[:80])[::-1].hex()

    hb = _hb_peer(d)
    s0 = cmpct_stats(d)
    tip = d.rpc("getbestblockhash")
    h = submit()
    m = hb.recv_until("cmpctblock", timeout=10)
    assert sha256d(m.payload[:80])[::-1].hex() == h
    assert cmpct_stats(d)["hb_pushed_before_connect"] == s0["hb_pushed_before_connect"] + 1
    # It failed to connect: the push came first.
    assert d.rpc("getbestblockhash") == tip
    hb.close()


def _empty_block_on(d):
    """A coinbase-only block on peerd's tip (raw bytes), valid."""
    from bitcoin.core import CBlock, CBlockHeader, COutPoint, CTransaction, CTxIn, CTxOut, lx
    from bitcoin.core.script import OP_TRUE, CScript

    info = d.rpc("getblockchaininfo")
    tip = d.rpc("getblockheader", info["bestblockhash"])
    coinbase = CTransaction([CTxIn(COutPoint(), CScript([info["blocks"] + 1, b"\x00\x00"]))],
                            [CTxOut(0, CScript([OP_TRUE]))])
    merkle = CBlock(vtx=[coinbase]).calc_merkle_root()
    target = 0x7FFFFF << (8 * (0x20 - 3))
    for nonce in range(10000):
        hdr = CBlockHeader(nVersion=0x20000000, hashPrevBlock=lx(info["bestblockhash"]),
                           hashMerkleRoot=merkle, nTime=max(tip["time"] + 1, int(time.time())),
                           nBits=0x207FFFFF, nNonce=nonce)
        if int.from_bytes(sha256d(hdr.serialize()), "little") <= target:
            return CBlock(nVersion=hdr.nVersion, hashPrevBlock=hdr.hashPrevBlock,
                          hashMerkleRoot=merkle, nTime=hdr.nTime, nBits=hdr.nBits, nNonce=nonce,
                          vtx=[coinbase]).serialize()
    raise AssertionError("no nonce")


def _hb_to(d, a):
    """An inbound scripted peer peerd asked for high-bandwidth compact
    blocks: it sent sendcmpct(0, 2) and then the block that became peerd's
    tip (Core's MaybeSetPeerAsAnnouncingHeaderAndIDs); A gets it too."""
    p = peer(d)
    p.send_raw(frame("sendcmpct", struct.pack("<?Q", False, 2)))
    raw = _empty_block_on(d)
    h = sha256d(raw[:80])[::-1].hex()
    p.send_raw(frame("block", raw))
    wait_until(lambda: d.rpc("getbestblockhash") == h, 10, "peerd to take the block")
    p.recv_until("sendcmpct", timeout=10)
    a.rpc("submitblock", raw.hex())
    assert a.getbestblockhash() == h
    return p


def test_inbound_high_bandwidth_asks_when_an_outbound_peer_downloads(make_peerd, make_bitcoind):
    """Core's getblocktxn rule after the first in flight: an inbound
    high-bandwidth peer asks what is missing when fewer than two others
    download the block, or when one of them is outbound
    (IsBlockRequestedFromOutbound). Here two others download it, one of
    them outbound: the third, inbound, still asks."""
    from test_cmpct_core import send_txs, unbroadcast_tx
    from test_daemon_outbound import Listener, answer_handshake

    a, d = start_core_and_peerd(make_peerd, make_bitcoind)
    txids = send_txs(a, d, 3)
    hidden = unbroadcast_tx(a)
    alone(a, d)
    srv = Listener()
    d.rpc("addnode", "127.0.0.1:%d" % srv.port, "add")
    x = srv.accept()
    answer_handshake(x)
    x.recv_until("feefilter")
    x.sync_with_ping()
    h1 = _hb_to(d, a)
    h2 = _hb_to(d, a)
    blk = a.rpc("generateblock", a.new_address("bech32"), txids + [hidden], False)
    msg, header, _ = cmpctblock(bytes.fromhex(blk["hex"]))
    before = cmpct_stats(d)
    # The outbound peer first: the first in flight asks.
    x.send_raw(frame("cmpctblock", msg))
    x.recv_until("getblocktxn", timeout=10)
    # An inbound high-bandwidth one, one other downloading: asks.
    h1.send_raw(frame("cmpctblock", msg))
    h1.recv_until("getblocktxn", timeout=10)
    # Another, two others downloading, one of them outbound: asks too.
    h2.send_raw(frame("cmpctblock", msg))
    m = h2.recv_until("getblocktxn", timeout=10)
    assert m.payload[:32] == sha256d(header)
    s = cmpct_stats(d)
    assert s["getblocktxn_sent"] == before["getblocktxn_sent"] + 3, s
    assert s["gave_up"] == before["gave_up"], s
    for p in (x, h1, h2):
        p.close()
    srv.close()


def test_block_completed_by_blocktxn_pushed_before_connecting(make_peerd, make_bitcoind):
    """A cmpctblock with a transaction peerd never saw: one getblocktxn
    round, and the block the blocktxn completes goes to the high-bandwidth
    peer before it is connected."""
    import io

    from conftest import read_compact
    from test_cmpct_core import send_txs, split_block, unbroadcast_tx

    a, d = start_core_and_peerd(make_peerd, make_bitcoind)
    txids = send_txs(a, d, 2)
    hidden = unbroadcast_tx(a)
    alone(a, d)
    blk = a.rpc("generateblock", a.new_address("bech32"), txids + [hidden], False)
    raw = bytes.fromhex(blk["hex"])
    msg, header, _ = cmpctblock(raw)
    _, all_txs = split_block(raw)
    hb = _hb_peer(d)
    sender = peer(d)
    s0 = cmpct_stats(d)
    sender.send_raw(frame("cmpctblock", msg))
    m = sender.recv_until("getblocktxn", timeout=10)
    f = io.BytesIO(m.payload[32:])
    assert read_compact(f) == 1
    index = read_compact(f)
    sender.send_raw(frame("blocktxn", sha256d(header) + ser_compact(1) + all_txs[index]))
    got = hb.recv_until("cmpctblock", timeout=10)
    assert got.payload[:80] == header
    wait_until(lambda: d.rpc("getbestblockhash") == blk["hash"], 20, "peerd to take the block")
    s = cmpct_stats(d)
    assert s["rebuilt_with_getblocktxn"] == s0["rebuilt_with_getblocktxn"] + 1, s
    assert s["hb_pushed_before_connect"] == s0["hb_pushed_before_connect"] + 1, s
    hb.close()
    sender.close()

"""When peerd rebuilds a cmpctblock, as Core 29's net_processing decides
(issue 22; daemon/sync/cmpct_receive.c): a block with more work than the tip and at
most 2 above it is rebuilt even when its parent is only a header; farther
blocks are taken as headers; and once a block is being downloaded from a
peer, a second peer's compact block that lacks transactions gets no
getblocktxn (Core asks only the first in flight, then high-bandwidth
peers while fewer than 3 download it).

The blocks are the real bitcoind's; the test's own peers send them to
peerd (test_cmpct_core's BIP152 encoder)."""
import io
import struct
import time

import pytest

from bitcoind import wait_until
from conftest import P2P, frame, read_compact, ser_compact
from test_cmpct_core import (cmpct_stats, cmpctblock, peer, send_txs, sha256d, split_block,
                             start_core_and_peerd, unbroadcast_tx, watch)

pytestmark = pytest.mark.interop

MSG_WITNESS_BLOCK = 0x40000002


def asked_blocks(msgs):
    """The block hashes (internal byte order) of every getdata in msgs."""
    out = []
    for cmd, payload in msgs:
        if cmd != "getdata":
            continue
        f = io.BytesIO(payload)
        for _ in range(read_compact(f)):
            t, h = struct.unpack("<I32s", f.read(36))
            out.append(h)
    return out


class ServingPeer(P2P):
    """A scripted peer that says it serves blocks (NODE_NETWORK | NODE_WITNESS),
    so peerd downloads from it."""

    def version_msg(self, *args, **kw):
        v = super().version_msg(*args, **kw)
        v.nServices = 9
        return v


def alone(a, d):
    """A no longer relays to peerd: its blocks reach peerd only through the test."""
    for p in a.rpc("getpeerinfo"):
        a.rpc("disconnectnode", "", p["id"])
    wait_until(lambda: not d.rpc("getpeerinfo"), 10, "A to leave peerd")


def test_two_above_the_tip_rebuilt_three_above_a_header(make_peerd, make_bitcoind):
    a, d = start_core_and_peerd(make_peerd, make_bitcoind)
    txids = send_txs(a, d, 4)
    alone(a, d)
    # Three blocks on peerd's tip, made by A alone; the second and third
    # hold transactions peerd has in its mempool.
    h1 = a.rpc("generateblock", a.new_address("bech32"), [])["hash"]
    h2 = a.rpc("generateblock", a.new_address("bech32"), txids[:2])["hash"]
    h3 = a.rpc("generateblock", a.new_address("bech32"), txids[2:])["hash"]
    raw = {h: bytes.fromhex(a.rpc("getblock", h, 0)) for h in (h1, h2, h3)}
    tip = d.rpc("getbestblockhash")
    p = ServingPeer(d.port)
    p.handshake()
    # Block 1's header only: peerd asks p for the block, which p holds back.
    p.send_raw(frame("headers", ser_compact(1) + raw[h1][:80] + b"\x00"))
    m = p.recv_until("getdata", timeout=10)
    assert bytes.fromhex(h1)[::-1] in asked_blocks([(m.command, m.payload)])
    before = cmpct_stats(d)
    # Block 2, tip + 2, compactly: rebuilt from the mempool, nothing asked.
    msg2, _, _ = cmpctblock(raw[h2])
    p.send_raw(frame("cmpctblock", msg2))
    wait_until(lambda: cmpct_stats(d)["rebuilt_from_mempool"] == before["rebuilt_from_mempool"] + 1,
               10, "peerd to rebuild block 2")
    # Block 3, tip + 3: only a header.
    msg3, _, _ = cmpctblock(raw[h3])
    p.send_raw(frame("cmpctblock", msg3))
    wait_until(lambda: cmpct_stats(d)["as_header"] == before["as_header"] + 1, 10,
               "peerd to take block 3 as a header")
    s = cmpct_stats(d)
    assert s["getblocktxn_sent"] == before["getblocktxn_sent"], s
    assert s["rebuilt_from_mempool"] == before["rebuilt_from_mempool"] + 1, s
    assert d.rpc("getbestblockhash") == tip
    # Block 1 comes: block 2 connects on it at once (its data is there).
    p.send_raw(frame("block", raw[h1]))
    msgs = []

    def reached_two():
        msgs.extend(watch(p, 0.2))
        return d.rpc("getblockchaininfo")["blocks"] >= a.getblockcount() - 1

    wait_until(reached_two, 20, "peerd to connect blocks 1 and 2")
    assert bytes.fromhex(h2)[::-1] not in asked_blocks(msgs), "block 2 asked again"
    # Block 3 is then fetched whole, as any header's block.
    wait_until(lambda: msgs.extend(watch(p, 0.2)) or bytes.fromhex(h3)[::-1] in asked_blocks(msgs),
               10, "peerd to ask block 3")
    p.send_raw(frame("block", raw[h3]))
    wait_until(lambda: d.rpc("getbestblockhash") == h3, 20, "peerd to take block 3")
    p.close()


def test_second_peer_missing_transactions_gives_up(make_peerd, make_bitcoind):
    a, d = start_core_and_peerd(make_peerd, make_bitcoind)
    txids = send_txs(a, d, 3)
    hidden = unbroadcast_tx(a)
    blk = a.rpc("generateblock", a.new_address("bech32"), txids + [hidden], False)
    raw = bytes.fromhex(blk["hex"])
    msg, header, txs = cmpctblock(raw)
    _, all_txs = split_block(raw)
    p1, p2 = peer(d), peer(d)
    before = cmpct_stats(d)
    # The first peer to send it gets a getblocktxn for the one missing.
    p1.send_raw(frame("cmpctblock", msg))
    m = p1.recv_until("getblocktxn", timeout=10)
    assert m.payload[:32] == sha256d(header)
    # A second one (inbound, not high-bandwidth) while the first downloads: nothing.
    p2.send_raw(frame("cmpctblock", msg))
    wait_until(lambda: cmpct_stats(d)["gave_up"] == before["gave_up"] + 1, 10,
               "peerd to give up on the second")
    got = [c for c, _ in watch(p2, 1.0)]
    assert "getblocktxn" not in got and "getdata" not in got, got
    s = cmpct_stats(d)
    assert s["getblocktxn_sent"] == before["getblocktxn_sent"] + 1, s
    # The first answers; the block is taken.
    f = io.BytesIO(m.payload[32:])
    assert read_compact(f) == 1
    index = read_compact(f)
    p1.send_raw(frame("blocktxn", sha256d(header) + ser_compact(1) + all_txs[index]))
    wait_until(lambda: d.rpc("getbestblockhash") == blk["hash"], 20, "peerd to take the block")
    assert cmpct_stats(d)["rebuilt_with_getblocktxn"] == before["rebuilt_with_getblocktxn"] + 1
    p1.close()
    p2.close()


def _block_with_orphan(d, orphan):
    """A block on peerd's tip holding a coinbase and `orphan` (a tx spending
    an output nobody has): valid for CheckBlock and ContextualCheckBlock,
    invalid when connected. Raw bytes; regtest proof of work found here."""
    from bitcoin.core import (CBlock, CBlockHeader, COutPoint, CTransaction, CTxIn, CTxOut,
                              lx)
    from bitcoin.core.script import OP_TRUE, CScript

    info = d.rpc("getblockchaininfo")
    tip = d.rpc("getblockheader", info["bestblockhash"])
    height = info["blocks"] + 1
    coinbase = CTransaction([CTxIn(COutPoint(), CScript([height, b"\x00\x00"]))],
                            [CTxOut(0, CScript([OP_TRUE]))])
    txs = [coinbase, CTransaction.deserialize(orphan)]
    merkle = CBlock(vtx=txs).calc_merkle_root()
    target = 0x7FFFFF << (8 * (0x20 - 3))
    for nonce in range(10000):
        hdr = CBlockHeader(nVersion=0x20000000, hashPrevBlock=lx(info["bestblockhash"]),
                           hashMerkleRoot=merkle, nTime=max(tip["time"] + 1, int(time.time())),
                           nBits=0x207FFFFF, nNonce=nonce)
        if int.from_bytes(sha256d(hdr.serialize()), "little") <= target:
            return CBlock(nVersion=hdr.nVersion, hashPrevBlock=hdr.hashPrevBlock,
                          hashMerkleRoot=merkle, nTime=hdr.nTime, nBits=hdr.nBits, nNonce=nonce,
                          vtx=txs).serialize()
    raise AssertionError("no nonce")


def test_pushed_to_high_bandwidth_peers_before_connecting(make_peerd, make_bitcoind):
    """Core's NewPoWValidBlock: a block rebuilt whole from a cmpctblock goes
    to high-bandwidth peers once CheckBlock and ContextualCheckBlock pass,
    before it is connected. The block here fails only when connected (it
    spends an output nobody has; peerd holds that transaction as an orphan,
    so the ring rebuilds the block), so a push can only have come first."""
    import os as _os
    from bitcoin.core import COutPoint, CTransaction, CTxIn, CTxOut
    from bitcoin.core.script import CScript

    a, d = start_core_and_peerd(make_peerd, make_bitcoind)
    alone(a, d)
    tip = d.rpc("getbestblockhash")
    # The high-bandwidth peer: sendcmpct(1, 2), and it has our tip.
    hb = peer(d)
    hb.send_raw(frame("sendcmpct", struct.pack("<?Q", True, 2)))
    hb.send_raw(frame("inv", ser_compact(1) + struct.pack("<I", 2) + bytes.fromhex(tip)[::-1]))
    wait_until(lambda: any(p["bip152_hb_from"] for p in d.rpc("getpeerinfo")), 10,
               "peerd to take sendcmpct(1, 2)")
    hb.sync_with_ping()
    orphan = CTransaction([CTxIn(COutPoint(_os.urandom(32), 0), CScript([b"\x01" * 10]))],
                          [CTxOut(1000, CScript([0, b"\x02" * 32]))]).serialize()
    sender = peer(d)
    before = d.rpc("getstats")["inventory"]["tx_orphaned"]
    sender.send_raw(frame("tx", orphan))
    wait_until(lambda: d.rpc("getstats")["inventory"]["tx_orphaned"] == before + 1, 10,
               "peerd to keep the orphan")
    raw = _block_with_orphan(d, orphan)
    h = sha256d(raw[:80])
    s0 = cmpct_stats(d)
    msg, _, _ = cmpctblock(raw)
    sender.send_raw(frame("cmpctblock", msg))
    m = hb.recv_until("cmpctblock", timeout=10)
    assert m.payload[:80] == raw[:80]
    s = cmpct_stats(d)
    assert s["hb_pushed_before_connect"] == s0["hb_pushed_before_connect"] + 1, s
    assert s["rebuilt_from_mempool"] == s0["rebuilt_from_mempool"] + 1, s
    # Never connected: the block is found invalid, the tip does not move.
    wait_until(lambda: any(t["hash"] == h[::-1].hex() and t["status"] == "invalid"
                           for t in d.rpc("getchaintips")), 10, "peerd to find the block invalid")
    assert d.rpc("getbestblockhash") == tip
    hb.close()
    sender.close()

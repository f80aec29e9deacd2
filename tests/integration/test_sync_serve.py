"""peerd serves the chain to Bitcoin Core: headers, blocks and announcements.

A miner Core node (never connected to peerd) makes the blocks; peerd gets
them by submitblock on its control socket; a second Core node that knows
only peerd syncs from it (getheaders answered from peerd's view of the
active chain, getdata from its block files) and then follows new tips
through peerd's announcements. Skipped without a bitcoind.
"""
import struct
import time

import pytest
from bitcoin.messages import msg_getdata, msg_getheaders, msg_verack
from bitcoin.net import CInv

from bitcoind import wait_until
from conftest import PROTO_VERSION, getblocks_inv

pytestmark = pytest.mark.interop

MSG_BLOCK, MSG_WITNESS_BLOCK = 2, 0x40000002
SYNC_TIMEOUT = 60




def test_core_syncs_from_peerd_and_follows(make_peerd, make_bitcoind):
    miner, follower = make_bitcoind(2)
    hashes = miner.mine_op_true(300)
    d = make_peerd("-peertimeout=20")
    d.submit_from(miner, hashes)
    assert d.rpc("getbestblockhash") == miner.getbestblockhash()
    t0 = time.monotonic()
    follower.connect_to("127.0.0.1:%d" % d.port)
    wait_until(lambda: follower.getbestblockhash() == miner.getbestblockhash(), SYNC_TIMEOUT,
               "Core to sync 300 blocks from peerd")
    took = time.monotonic() - t0
    stats = d.rpc("getstats")
    assert stats["headers"]["getheaders_answered"] >= 1, stats["headers"]
    assert stats["inventory"]["blocks_served"] >= 300, stats["inventory"]
    # Core sees peerd as a full node.
    info = follower.wait_for_peer(lambda p: p["subver"].startswith("/peerd:"), 5, "peerd")
    assert int(info["services"], 16) & 9 == 9, info["services"]
    assert info["startingheight"] == 300, info
    # Five more, one at a time: each reaches Core by announcement.
    for h in miner.mine_op_true(5):
        d.submit_from(miner, [h])
        wait_until(lambda: follower.getbestblockhash() == h, 10, "Core to follow block %s" % h)
    # (by headers, inv, or, once Core chose peerd as high-bandwidth, a cmpctblock)
    stats = d.rpc("getstats")
    pushed = stats["sync"]["cmpct"]["hb_pushed"]
    stats = stats["headers"]
    assert stats["announced_by_headers"] + stats["announced_by_inv"] + pushed >= 5, (stats, pushed)
    print("300 blocks to Core in %.2f s" % took)


def test_getheaders_and_getdata_from_a_script(make_peerd, bitcoind_node):
    miner = bitcoind_node
    hashes = miner.mine_op_true(30)
    d = make_peerd("-peertimeout=20")
    d.submit_from(miner, hashes)
    p = d.peer()
    p.handshake()
    # Locator at height 10: headers 11..30, each as Core serializes it.
    gh = msg_getheaders()
    gh.locator.nVersion = PROTO_VERSION
    gh.locator.vHave = [bytes.fromhex(hashes[9])[::-1]]
    gh.hashstop = b"\0" * 32
    p.send(gh)
    payload = p.recv_until("headers").payload
    assert payload[0] == 20 and len(payload) == 1 + 20 * 81, len(payload)
    for i in range(20):
        core_hdr = bytes.fromhex(miner.getblockheader(hashes[10 + i], False))
        assert payload[1 + 81 * i:81 * (i + 1)] == core_hdr
        assert payload[81 * (i + 1)] == 0
    # hash_stop cuts the reply short.
    gh.hashstop = bytes.fromhex(hashes[14])[::-1]
    p.send(gh)
    assert p.recv_until("headers").payload[0] == 5
    # Blocks: witness and non-witness forms as Core serves them; an
    # unknown block is ignored, an unknown transaction notfound, in order.
    g = msg_getdata()
    unknown = CInv()
    unknown.type, unknown.hash = MSG_BLOCK, b"\x07" * 32
    tx = CInv()
    tx.type, tx.hash = 1, b"\x05" * 32
    wb = CInv()
    wb.type, wb.hash = MSG_WITNESS_BLOCK, bytes.fromhex(hashes[29])[::-1]
    nb = CInv()
    nb.type, nb.hash = MSG_BLOCK, bytes.fromhex(hashes[28])[::-1]
    g.inv = [unknown, wb, tx, nb]
    p.send(g)
    got = [p.recv() for _ in range(3)]
    assert [m.command for m in got] == ["block", "notfound", "block"], got
    assert got[0].payload == bytes.fromhex(miner.getblock(hashes[29], 0))
    stripped = miner.getblock(hashes[28], 2)["tx"][0]
    assert bytes.fromhex(stripped["hex"]) != got[2].payload[81:]  # witness gone
    assert got[2].payload[:80] == bytes.fromhex(miner.getblockheader(hashes[28], False))
    core_tx = miner.decoderawtransaction(stripped["hex"])
    assert core_tx["txid"] == stripped["txid"]
    p.close()


def test_getblocks_as_core(make_peerd, bitcoind_node):
    """getblocks is answered as Core's: the blocks after the fork point up to
    500, ending before hash_stop (which getheaders would include)."""
    core = bitcoind_node
    hashes = core.mine_op_true(10)
    d = make_peerd("-peertimeout=20")
    d.submit_from(core, hashes)
    genesis, zero = core.getblockhash(0), "00" * 32
    for loc, stop in ((genesis, hashes[4]), (genesis, zero), (hashes[2], hashes[3]), (hashes[2], hashes[9])):
        mine_ = getblocks_inv(d.port, loc, stop)
        assert mine_ == getblocks_inv(core.port, loc, stop), (loc, stop)
    assert getblocks_inv(d.port, genesis, hashes[4]) == hashes[:4]


def test_blocks_cross_peerd_between_two_cores_within_5s(make_peerd, make_bitcoind):
    left, right = make_bitcoind(2)
    left.mine_op_true(10)
    d = make_peerd("-connect=127.0.0.1:%d" % left.port, "-peertimeout=20")
    right.connect_to("127.0.0.1:%d" % d.port)
    wait_until(lambda: right.getbestblockhash() == left.getbestblockhash(), SYNC_TIMEOUT,
               "the right Core to sync through peerd")
    for _ in range(3):
        t0 = time.monotonic()
        h = left.mine_op_true(1)[0]
        wait_until(lambda: right.getbestblockhash() == h, 5, "block %s to cross peerd" % h)
        assert time.monotonic() - t0 < 5
    # A longer fork on the right reaches the left through peerd too.
    right.disconnect(address="127.0.0.1:%d" % d.port)
    left.mine_op_true(1)
    fork = right.mine_op_true(3)
    right.connect_to("127.0.0.1:%d" % d.port)
    wait_until(lambda: left.getbestblockhash() == fork[-1], SYNC_TIMEOUT, "left Core to reorg via peerd")
    assert d.rpc("getstats")["sync"]["stalling_disconnects"] == 0
    assert d.rpc("getbestblockhash") == fork[-1]


def test_served_blocks_come_from_the_index_checksum_after_restart(make_peerd, bitcoind_node):
    """Blocks received by the network and by submitblock keep their frame
    checksum in the index (across a restart): a witness block goes out with
    it, the 8 bytes of length and checksum from the binary free list;
    only a stripped block is re-encoded."""
    miner = bitcoind_node
    hashes = miner.mine_op_true(12)
    d = make_peerd("-peertimeout=20", name="srv")
    d.submit_from(miner, hashes[:6])
    d.rpc("addnode", "127.0.0.1:%d" % miner.port, "onetry")
    wait_until(lambda: d.rpc("getbestblockhash") == hashes[-1], SYNC_TIMEOUT, "peerd to sync the rest")
    rc, _ = d.stop(timeout=10)
    assert rc == 0
    d = make_peerd("-peertimeout=20", "-connect=0", name="srv")
    p = d.peer()
    p.handshake()
    before = d.rpc("getstats")
    g = msg_getdata()
    want = []
    for h in (hashes[2], hashes[9], hashes[11]):
        inv = CInv()
        inv.type, inv.hash = MSG_WITNESS_BLOCK, bytes.fromhex(h)[::-1]
        want.append(inv)
    nb = CInv()
    nb.type, nb.hash = MSG_BLOCK, bytes.fromhex(hashes[10])[::-1]
    g.inv = want + [nb]
    p.send(g)
    # P2P.recv checks each frame's checksum against the payload.
    got = [p.recv_until("block", timeout=10) for _ in range(4)]
    for m, h in zip(got, (hashes[2], hashes[9], hashes[11])):
        assert m.payload == bytes.fromhex(miner.getblock(h, 0))
    assert got[3].payload[:80] == bytes.fromhex(miner.getblockheader(hashes[10], False))
    after = d.rpc("getstats")
    assert after["headers"]["blocks_served_stripped"] - before["headers"]["blocks_served_stripped"] == 1
    fl0, fl1 = before["freelists"]["binary"], after["freelists"]["binary"]
    assert (fl1["hits"] + fl1["misses"]) - (fl0["hits"] + fl0["misses"]) == 4, (fl0, fl1)
    assert fl1["in_use"] == 0, fl1
    p.close()


def test_getheaders_answered_from_the_first_moment_after_restart(make_peerd, bitcoind_node):
    """A peer that connects the instant peerd listens finds the chain as
    stored: its version names the height and a getheaders is answered. (The
    loop's chain view used to come from the validation thread after start;
    a getheaders before it went unanswered, and Core then waits 2 minutes
    before asking that peer again.)"""
    miner = bitcoind_node
    hashes = miner.mine_op_true(25)
    d = make_peerd("-peertimeout=20", "-connect=0", name="early")
    d.submit_from(miner, hashes)
    rc, _ = d.stop(timeout=10)
    assert rc == 0
    for _ in range(3):
        d = make_peerd("-peertimeout=20", "-connect=0", name="early")
        p = d.peer()
        p.send(p.version_msg())
        version = p.recv_until("version").payload
        assert struct.unpack("<i", version[-5:-1])[0] == 25  # start_height (relay byte last)
        p.send(msg_verack())
        p.recv_until("verack")
        gh = msg_getheaders()
        gh.locator.nVersion = PROTO_VERSION
        gh.locator.vHave = [bytes.fromhex(hashes[19])[::-1]]
        gh.hashstop = b"\0" * 32
        p.send(gh)
        payload = p.recv_until("headers").payload
        assert payload[0] == 5, payload[:1]
        p.close()
        rc, _ = d.stop(timeout=10)
        assert rc == 0


def test_sync_starts_with_a_later_peer_that_has_the_chain(make_peerd, make_bitcoind):
    """peerd's only headers-sync peer has nothing past genesis (a Core node
    in IBD ignores getheaders); a Core node with the chain that connects
    later is asked for headers at once, not only once it announces a block.
    (Core itself waits for that announcement, or for its 15-minute headers
    sync timeout, and only with another outbound peer to turn to.)"""
    empty, full = make_bitcoind(2)
    hashes = full.mine_op_true(10)
    d = make_peerd("-connect=127.0.0.1:%d" % empty.port, "-peertimeout=20")
    wait_until(lambda: d.rpc("getstats")["sync"]["sync_peers"] == 1, 10,
               "peerd to start its headers sync with the empty Core")
    full.connect_to("127.0.0.1:%d" % d.port)
    wait_until(lambda: d.rpc("getbestblockhash") == hashes[-1], 10, "peerd to sync from the later peer")
    # ... and the empty Core from peerd, once peerd announces its new tip.
    wait_until(lambda: empty.getbestblockhash() == hashes[-1], SYNC_TIMEOUT, "the empty Core to follow")

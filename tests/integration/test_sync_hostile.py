"""Peers that misbehave while peerd syncs: a staller, a sender of a
mutated block, of headers that do not connect and of headers without
proof of work. peerd drops or ignores each as Core does and keeps syncing
from Bitcoin Core. Skipped without a bitcoind."""
import os
import struct
import time

import pytest

from bitcoind import wait_until
from conftest import GENESIS_HASH, frame, peer_claiming, sha256d

pytestmark = pytest.mark.interop

NODE_NETWORK_WITNESS = 9




def regtest_header(prev):
    """A header on `prev` with regtest's proof of work (nonce ground)."""
    target = 0x7fffff << (8 * (0x20 - 3))
    for nonce in range(1000):
        hdr = struct.pack("<i", 0x20000000) + prev + b"\x00" * 32 + struct.pack(
            "<III", int(time.time()), 0x207fffff, nonce)
        if int.from_bytes(sha256d(hdr), "little") <= target:
            return hdr
    raise AssertionError("no nonce found")


def headers_payload(raw_headers):
    assert len(raw_headers) < 0xfd
    return bytes([len(raw_headers)]) + b"".join(h + b"\x00" for h in raw_headers)


def test_stalling_peer_is_dropped_and_its_blocks_asked_of_core(make_peerd, bitcoind_node):
    core = bitcoind_node
    hashes = core.mine_op_true(40)
    d = make_peerd("-peertimeout=20")
    staller = peer_claiming(d, NODE_NETWORK_WITNESS)
    staller.send_raw(frame("headers", headers_payload(
        [bytes.fromhex(core.getblockheader(h, False)) for h in hashes])))
    gd = staller.recv_until("getdata", timeout=5)
    assert gd.payload[0] == 16  # at most 16 blocks in flight per peer
    t0 = time.monotonic()
    d.rpc("addnode", "127.0.0.1:%d" % core.port, "onetry")
    wait_until(lambda: d.rpc("getbestblockhash") == hashes[-1], 30, "peerd to sync around the staller")
    took = time.monotonic() - t0
    s = d.rpc("getstats")["sync"]
    assert s["stalling_disconnects"] == 1, s
    assert staller.is_closed(timeout=2)
    # The stall timeout is 2 s (Core's BLOCK_STALLING_TIMEOUT_DEFAULT).
    assert 2.0 <= took < 15, took


def test_mutated_block_disconnects_sender_sync_goes_on(make_peerd, bitcoind_node):
    core = bitcoind_node
    hashes = core.mine_op_true(3)
    d = make_peerd("-peertimeout=20")
    bad = peer_claiming(d, NODE_NETWORK_WITNESS)
    raw = bytearray(bytes.fromhex(core.getblock(hashes[0], 0)))
    raw[36] ^= 1  # the merkle root no longer matches the transactions
    bad.send_raw(frame("block", bytes(raw)))
    assert bad.is_closed(timeout=5), "peerd kept a peer that sent a mutated block"
    assert d.rpc("getstats")["sync"]["blocks_invalid"] == 1
    d.rpc("addnode", "127.0.0.1:%d" % core.port, "onetry")
    wait_until(lambda: d.rpc("getbestblockhash") == hashes[-1], 30, "peerd to sync from Core")


def test_unconnecting_headers_get_a_getheaders(make_peerd):
    d = make_peerd("-peertimeout=20")
    p = peer_claiming(d, NODE_NETWORK_WITNESS)
    p.recv_until("getheaders", timeout=5)  # the sync's first, at the handshake
    # Answered (an empty headers), it no longer holds back the next one.
    p.send_raw(frame("headers", b"\x00"))
    hdr = regtest_header(prev=b"\x42" * 32)
    p.send_raw(frame("headers", headers_payload([hdr])))
    gh = p.recv_until("getheaders", timeout=5)
    # peerd's locator: its best header (genesis).
    assert gh.payload[4] == 1 and gh.payload[5:37] == GENESIS_HASH, gh.payload.hex()
    assert d.rpc("getstats")["sync"]["unconnecting_headers"] >= 1
    assert not p.is_closed(timeout=0.5)


def getheaders_within(p, seconds):
    """getheaders messages peerd sends p within `seconds` (those read while
    waiting for a pong included: recv returns them first)."""
    return p.commands_for(seconds).count("getheaders")


def test_unconnecting_header_flood_draws_one_getheaders(make_peerd):
    """Issue 18: 3,000 single headers on unknown parents drew 3,001
    getheaders and as many validation jobs. As Core's MaybeSendGetHeaders:
    at most one getheaders per peer per 2 minutes, none while one is
    unanswered; and only the first such message reaches the validation
    thread (sync.unconnecting_headers), the rest are kept back
    (sync.headers_gated)."""
    d = make_peerd("-peertimeout=60")
    p = peer_claiming(d, NODE_NETWORK_WITNESS)
    p.recv_until("getheaders", timeout=5)  # the sync's first, at the handshake
    # Unanswered, it holds back the getheaders an unconnecting header asks for.
    p.send_raw(frame("headers", headers_payload([regtest_header(prev=b"\x41" * 32)])))
    p.sync_with_ping()
    assert getheaders_within(p, 1.0) == 0
    p.send_raw(frame("headers", b"\x00"))  # answered: the next may go
    n = 3000
    blob = b"".join(frame("headers", headers_payload([regtest_header(prev=os.urandom(32))]))
                    for _ in range(n))
    p.send_raw(blob)
    p.sync_with_ping(timeout=30)

    def seen():
        s = d.rpc("getstats")["sync"]
        return s["unconnecting_headers"] + s["headers_gated"]
    wait_until(lambda: seen() >= n + 1, 30, "peerd to take every headers message")
    assert getheaders_within(p, 2.0) == 1
    s = d.rpc("getstats")["sync"]
    # One probe job for the flood; the first header came while the sync's
    # getheaders was out, so it was kept back too.
    assert s["unconnecting_headers"] == 1, s
    assert s["headers_gated"] == n, s
    assert not p.is_closed(timeout=0.5)


def test_header_without_proof_of_work_disconnects(make_peerd):
    d = make_peerd("-peertimeout=20")
    p = peer_claiming(d, NODE_NETWORK_WITNESS)
    # Mainnet's difficulty on regtest: the hash is far above the target.
    hdr = struct.pack("<i", 0x20000000) + GENESIS_HASH + b"\x00" * 32 + struct.pack("<III", int(time.time()), 0x1d00ffff, 0)
    p.send_raw(frame("headers", headers_payload([hdr])))
    assert p.is_closed(timeout=5), "peerd kept a peer that sent a header without proof of work"
    # Loopback: disconnected, never discouraged or banned (Core's NoBan for local).
    assert d.rpc("listbanned") == []

"""peerd's handshake and message handling against a scripted peer built on
python-bitcoinlib's message classes."""
import struct
import time

from bitcoin.core import CMutableTransaction, CMutableTxIn, CMutableTxOut, COutPoint, CScript, CTransaction
from bitcoin.messages import (
    msg_addr,
    msg_getaddr,
    msg_getdata,
    msg_getheaders,
    msg_inv,
    msg_notfound,
    msg_ping,
    msg_pong,
    msg_tx,
    msg_verack,
)
from bitcoin.net import CAddress, CInv

from conftest import GENESIS_HASH, PROTO_VERSION, frame, ser_compact, wait_for

MSG_TX = 1
MSG_BLOCK = 2
MSG_WTX = 5
MSG_WITNESS_FLAG = 1 << 30


def make_tx(seed):
    tx = CMutableTransaction()
    tx.vin = [CMutableTxIn(COutPoint(bytes([seed]) * 32, seed), CScript([seed, b"x" * 20]))]
    tx.vout = [CMutableTxOut(1000 + seed, CScript([b"\x00" * 20]))]
    return CTransaction.from_tx(tx)


def inv(type_, h):
    v = CInv()
    v.type = type_
    v.hash = h
    return v


# A fresh regtest node's tip is the 2011 genesis block: it is in initial
# block download and, as Core, asks for no transaction. Tests of
# transaction requests lift the tip age limit (bitcoind's -maxtipage).
NOT_IN_IBD = "-maxtipage=2147483647"


def test_handshake_order_inbound(peerd):
    p = peerd.peer()
    p.send(p.version_msg())
    p.send_raw(frame("wtxidrelay"))
    p.send_raw(frame("sendaddrv2"))
    # Core 29, inbound side: version, then wtxidrelay and sendaddrv2
    # between version and verack, then verack.
    first = [p.recv().command for _ in range(4)]
    assert first == ["version", "wtxidrelay", "sendaddrv2", "verack"], first
    v = p.received[0].obj
    assert v.nVersion == PROTO_VERSION, v
    assert v.strSubVer.startswith(b"/peerd:"), v.strSubVer
    # NETWORK | WITNESS | NETWORK_LIMITED | P2P_V2, as Core 29 without -prune
    assert v.nServices == 0xc09, "localservices %x" % v.nServices
    assert v.nNonce != 0
    assert v.fRelay
    p.send(msg_verack())
    # After our verack: sendcmpct (declining high-bandwidth, version 2),
    # then ping and feefilter, as Core's SendMessages. No sendheaders: Core
    # sends it only once the peer's best known block has more than the
    # minimum chain work, and this peer has shown none.
    after = [p.recv() for _ in range(3)]
    assert [m.command for m in after] == ["sendcmpct", "ping", "feefilter"], after
    assert after[0].obj == {"high_bandwidth": False, "version": 2}, after[0].obj
    # A fresh regtest node is in initial block download (its tip, the
    # genesis block, is years old): Core's feefilter then is MAX_MONEY
    # rounded to its top fee bucket, so no transactions are sent.
    assert after[2].obj == 9170997, "feefilter %r" % after[3].obj
    info = peerd.rpc("getpeerinfo")
    assert len(info) == 1
    assert info[0]["subver"].startswith("/python-bitcoinlib"), info[0]
    assert info[0]["version"] == PROTO_VERSION
    assert info[0]["inbound"] is True and info[0]["connection_type"] == "inbound"
    assert info[0]["services"] == "0000000000000008"
    assert info[0]["wtxidrelay"] is True and info[0]["addrv2"] is True
    assert peerd.rpc("getconnectioncount") == 1


def test_old_peer_gets_no_wtxidrelay(peerd):
    p = peerd.peer()
    seen = p.handshake(wtxidrelay=False, sendaddrv2=False, version=70015)
    assert seen == ["version", "verack"], seen


def test_messages_before_version_are_ignored(make_peerd):
    # v1 only: with -v2transport a first message other than version is
    # taken for a v2 key, as by Core (test_v2transport.py).
    peerd = make_peerd("-peertimeout=3", "-v2transport=0")
    p = peerd.peer()
    p.send(msg_ping(nonce=7))
    p.send(msg_getaddr())
    p.send(p.version_msg())
    assert p.recv().command == "version"
    # The ping before version got no pong; the connection is fine.
    p.send(msg_verack())
    cmds = p.commands_for(0.5)
    assert "pong" not in cmds, cmds
    assert not p.is_closed(0.2)


def test_ping_pong_and_pingtime(peerd):
    p = peerd.peer()
    p.handshake()
    ping = p.recv_until("ping")
    # peerd answers our ping with the same nonce.
    p.send(msg_ping(nonce=0x1122334455667788))
    pong = p.recv_until("pong")
    assert pong.obj.nonce == 0x1122334455667788
    info = peerd.rpc("getpeerinfo")[0]
    assert "pingtime" not in info and "pingwait" in info, info
    time.sleep(0.05)
    p.send(msg_pong(nonce=ping.obj.nonce))
    info = wait_for(lambda: [i for i in peerd.rpc("getpeerinfo") if "pingtime" in i], what="pingtime")[0]
    assert 0.04 <= info["pingtime"] < 5, info
    assert info["minping"] == info["pingtime"]
    assert info["bytesrecv_per_msg"]["pong"] == 32
    assert info["bytessent_per_msg"]["ping"] == 32


def test_wrong_pong_nonce_keeps_waiting(peerd):
    p = peerd.peer()
    p.handshake()
    p.recv_until("ping")
    p.send(msg_pong(nonce=12345))
    time.sleep(0.1)
    info = peerd.rpc("getpeerinfo")[0]
    assert "pingtime" not in info and "pingwait" in info


def test_inv_getdata_tx(make_peerd):
    peerd = make_peerd(NOT_IN_IBD)
    p = peerd.peer()
    p.handshake()  # wtxidrelay negotiated: announce by wtxid
    tx = make_tx(1)
    wtxid = tx.GetHash()  # no witness: wtxid == txid
    m = msg_inv()
    m.inv = [inv(MSG_WTX, wtxid)]
    p.send(m)
    gd = p.recv_until("getdata")
    assert [(i.type, i.hash) for i in gd.obj.inv] == [(MSG_WTX, wtxid)]
    t = msg_tx()
    t.tx = tx
    p.send(t)
    stats = wait_for(lambda: (lambda s: s if s["inventory"]["tx_received"] == 1 else None)(peerd.rpc("getstats")),
                     what="tx counted")
    inv_s = stats["inventory"]
    assert inv_s["tx_decoded"] == 1, inv_s
    assert inv_s["tx_requested"] == 1 and inv_s["tx_unsolicited"] == 0, inv_s
    assert stats["messages"]["tx"]["recv_count"] == 1
    # Announcing it again never asks for it: peerd has it (its made-up
    # parent is missing, so it is an orphan; p2 may be asked for that parent).
    p2 = peerd.peer()
    p2.handshake()
    p2.send(m)
    asked = []
    try:
        while True:
            got = p2.recv(0.5)
            if got.command == "getdata":
                asked += [i.hash for i in got.obj.inv]
    except TimeoutError:
        pass
    assert wtxid not in asked, asked


def test_inv_by_txid_for_legacy_peer(make_peerd):
    peerd = make_peerd(NOT_IN_IBD)
    p = peerd.peer()
    p.handshake(wtxidrelay=False)
    tx = make_tx(2)
    m = msg_inv()
    m.inv = [inv(MSG_WTX, b"\x01" * 32), inv(MSG_TX, tx.GetTxid())]
    p.send(m)
    gd = p.recv_until("getdata")
    # A non-wtxidrelay peer's MSG_WTX is ignored; the txid is asked for
    # with the witness flag (the peer has NODE_WITNESS).
    assert [(i.type, i.hash) for i in gd.obj.inv] == [(MSG_TX | MSG_WITNESS_FLAG, tx.GetTxid())]


def test_notfound_falls_back_to_other_announcer(make_peerd):
    peerd = make_peerd(NOT_IN_IBD)
    a = peerd.peer()
    a.handshake()
    b = peerd.peer()
    b.handshake()
    h = b"\xab" * 32
    m = msg_inv()
    m.inv = [inv(MSG_WTX, h)]
    a.send(m)
    a.recv_until("getdata")
    b.send(m)
    # One announcer at a time: b is not asked while a is.
    assert "getdata" not in b.commands_for(0.4)
    nf = msg_notfound()
    nf.inv = [inv(MSG_WTX, h)]
    a.send(nf)
    gd = b.recv_until("getdata", timeout=3)
    assert [i.hash for i in gd.obj.inv] == [h]


def test_getdata_answers_genesis_and_notfound(peerd):
    p = peerd.peer()
    p.handshake()
    g = msg_getdata()
    g.inv = [inv(MSG_BLOCK, GENESIS_HASH), inv(MSG_TX, b"\x05" * 32)]
    p.send(g)
    blk = p.recv_until("block")
    assert blk.obj.block.GetHash() == GENESIS_HASH
    nf = p.recv_until("notfound")
    assert [(i.type, i.hash) for i in nf.obj.inv] == [(MSG_TX, b"\x05" * 32)]


def test_getheaders_genesis(peerd):
    p = peerd.peer()
    p.handshake()
    # Empty locator, hash_stop = genesis: the genesis header.
    g = msg_getheaders()
    g.locator.nVersion = PROTO_VERSION
    g.locator.vHave = []
    g.hashstop = GENESIS_HASH
    p.send(g)
    h = p.recv_until("headers")
    assert len(h.obj) == 1 and h.obj[0].GetHash() == GENESIS_HASH, h.obj
    # A locator ending at genesis: nothing after it, an empty headers.
    g.locator.vHave = [GENESIS_HASH]
    g.hashstop = b"\0" * 32
    p.send(g)
    assert p.recv_until("headers").obj == []
    stats = peerd.rpc("getstats")
    assert stats["headers"]["getheaders_answered"] == 2


def test_getheaders_locator_over_101_disconnects(peerd):
    p = peerd.peer()
    p.handshake()
    g = msg_getheaders()
    g.locator.nVersion = PROTO_VERSION
    g.locator.vHave = [bytes([i]) * 32 for i in range(102)]
    p.send(g)
    assert p.is_closed(2)


def test_addr_getaddr(make_peerd):
    # Addresses a peer sends unasked cost tokens (Core's bucket: one at the
    # start, 0.1 a second): of 101, one is processed, the rest rate-limited.
    # -test=addrman (Core's: key 1): with a random key, two of the 100
    # addresses below share a new-table slot one run in ~13 (65,536 slots),
    # and addpeeraddress refuses the second, as Core's does.
    peerd = make_peerd("-peertimeout=3", "-test=addrman")
    sender = peerd.peer()
    sender.handshake()
    a = msg_addr()
    now = int(time.time())
    for i in range(101):
        ca = CAddress()
        ca.nTime = now
        ca.nServices = 9
        ca.ip = "12.%d.%d.%d" % (i // 50, i % 50, 7)
        ca.port = 8333
        a.addrs.append(ca)
    sender.send(a)
    sender.sync_with_ping()
    info = [x for x in peerd.rpc("getpeerinfo") if x["inbound"]][0]
    assert info["addr_relay_enabled"] is True
    assert (info["addr_processed"], info["addr_rate_limited"]) == (1, 100), info
    assert peerd.rpc("getaddrmaninfo")["all_networks"]["total"] == 1
    # 99 more from addpeeraddress (the loopback one is refused): 100 known.
    for i in range(99):
        assert peerd.rpc("addpeeraddress", "11.%d.%d.7" % (i, i % 50), 8333)["success"]
    assert peerd.rpc("addpeeraddress", "127.0.0.1", 8333)["success"] is False
    assert peerd.rpc("getaddrmaninfo")["all_networks"]["total"] == 100
    # A v1 peer gets addr: 23% of 100 known.
    q = peerd.peer()
    q.handshake(sendaddrv2=False)
    q.send(msg_getaddr())
    got = q.recv_until("addr")
    ips = {x.ip for x in got.obj.addrs}
    assert len(got.obj.addrs) == 23 and len(ips) == 23, got.obj.addrs
    assert all(ip.startswith("11.") or ip.startswith("12.") for ip in ips)
    # Only once per connection.
    q.send(msg_getaddr())
    assert "addr" not in q.commands_for(0.4)
    # An addrv2 peer gets addrv2: the same cached answer (same local socket).
    r = peerd.peer()
    r.handshake(sendaddrv2=True)
    r.send(msg_getaddr())
    got2 = r.recv_until("addrv2")
    assert len(got2.obj) == 23 and all(e[2] == 1 and e[4] == 8333 for e in got2.obj), got2.obj
    assert {".".join(map(str, e[3])) for e in got2.obj} == ips


def test_unknown_command_is_skipped(peerd):
    p = peerd.peer()
    p.handshake()
    p.send_raw(frame("sendtxrcncl", struct.pack("<IQ", 1, 42)))
    p.send_raw(frame("foo", b"bar"))
    p.send(msg_ping(nonce=99))
    assert p.recv_until("pong").obj.nonce == 99
    errs = peerd.rpc("getstats")["decode_errors"]
    assert errs["EUNKNOWN"] == 2, errs


def test_undecodable_payload_dropped_peer_kept(peerd):
    p = peerd.peer()
    p.handshake()
    # An inv whose count promises 3 entries but carries 1.
    p.send_raw(frame("inv", ser_compact(3) + struct.pack("<I", 1) + b"\x00" * 32))
    p.send(msg_ping(nonce=5))
    assert p.recv_until("pong").obj.nonce == 5
    errs = peerd.rpc("getstats")["decode_errors"]
    assert errs["ETRUNC"] >= 1, errs

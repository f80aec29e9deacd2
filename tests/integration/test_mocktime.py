"""-mocktime and setmocktime beyond the lagging-peer rule (test_sync_outbound_eviction.py)
and address relay (test_addrman_peerd.py).

The connection manager's timers on the mockable clock (net/outbound.c,
Core's ThreadOpenConnections: next_feeler and the extra peers' timers are
GetTime's): with -mocktime the clock stands still and no feeler is made
however long the node runs; setmocktime 20 minutes on (ten times the
feeler timer's mean) and one is made within a round.

A header's time limit (2 hours past the clock) on the validation thread
follows -mocktime and setmocktime, as bitcoind's (compared).

The feeler test runs a loopback network (-test=addrmanloopback,
127.N.0.0/16 a group each): nothing leaves the machine.
"""
import socket
import threading
import time

from conftest import PeerClosed, wait_for
from test_daemon_outbound_auto import Listener, answer, by_type, start_peerd

MOCK = 1704067200


def test_feeler_waits_for_the_mockable_clock(make_peerd, tmp_path):
    d = start_peerd(make_peerd, tmp_path, "feel", "-mocktime=%d" % MOCK)
    # 12 groups: 8 full-relay and 2 block-relay-only peers leave 2 in the
    # new table for a feeler.
    nodes = [Listener("127.%d.0.1" % n) for n in range(41, 53)]
    stop = threading.Event()

    def serve(n):
        while not stop.is_set():
            try:
                answer(n.accept(timeout=1))
            except (socket.timeout, OSError, PeerClosed, TimeoutError):
                continue

    threads = [threading.Thread(target=serve, args=(n,), daemon=True) for n in nodes]
    try:
        for n in nodes:
            d.rpc("addpeeraddress", n.ip, n.port)
        for t in threads:
            t.start()

        def full():
            t = by_type(d)
            return len(t.get("outbound-full-relay", [])) == 8 and len(t.get("block-relay-only", [])) == 2

        wait_for(full, timeout=60, what="8 full-relay and 2 block-relay-only peers")
        # Core's FEELER_INTERVAL is 2 minutes on average: on a clock that
        # stands still, never.
        time.sleep(3)
        assert "feeler connection completed" not in d.log()
        # 20 minutes: P(no feeler due) = e^-10. Not more: at 30 minutes the
        # tip looks stale and Core's order puts the extra full-relay peer
        # before the feeler; and the lagging-peer rule (20 minutes) only
        # acts after the timeout, not at it.
        d.rpc("setmocktime", MOCK + 1200)
        wait_for(lambda: "feeler connection completed" in d.log(), timeout=15,
                 what="a feeler once the clock moved")
    finally:
        stop.set()
        for t in threads:
            t.join(3)
        for n in nodes:
            n.close()


def regtest_header(prev_hex, t, salt):
    """An 80-byte regtest header on prev at time t, its proof of work ground
    (regtest's target is half the hash space)."""
    import hashlib
    import struct
    prev = bytes.fromhex(prev_hex)[::-1]
    merkle = hashlib.sha256(salt).digest()
    for nonce in range(1 << 20):
        h = struct.pack("<I32s32sIII", 0x20000000, prev, merkle, t, 0x207FFFFF, nonce)
        if hashlib.sha256(hashlib.sha256(h).digest()).digest()[::-1] < bytes([0x7F, 0xFF, 0xFF]) + bytes(29):
            return h.hex()
    raise AssertionError("no nonce")


def test_header_time_limit_follows_the_clock_as_core(make_peerd, make_bitcoind):
    """A header more than 2 hours past the node's clock is time-too-new
    (Core's GetAdjustedTime, on peerd's validation thread): at -mocktime
    and again after setmocktime, peerd answers as bitcoind."""
    from bitcoind import RpcError as CoreRpcError
    from conftest import RpcError

    core = make_bitcoind(1, args=("-mocktime=%d" % MOCK,), small=True)[0]
    d = make_peerd("-mocktime=%d" % MOCK)
    genesis = core.getblockhash(0)
    assert d.rpc("getblockhash", 0) == genesis
    too_new = regtest_header(genesis, MOCK + 2 * 3600 + 1, b"a")
    at_limit = regtest_header(genesis, MOCK + 2 * 3600, b"b")

    def submit(call, hexhdr):
        try:
            return ("ok", call("submitheader", hexhdr))
        except (CoreRpcError, RpcError) as e:
            return ("error", e.code, e.message)

    results = {}
    for name, call in (("core", core.rpc), ("peerd", d.rpc)):
        r = [submit(call, too_new), submit(call, at_limit)]
        call("setmocktime", MOCK + 60)
        r.append(submit(call, too_new))
        results[name] = r
    assert results["core"][0][:2] == ("error", -25) and "time-too-new" in results["core"][0][2]
    assert results["core"][1:] == [("ok", None), ("ok", None)], results
    assert results["peerd"] == results["core"], results


def test_tx_request_fallback_waits_for_the_clock(make_peerd):
    """Core's GETDATA_TX_INTERVAL (60 s) is timed by its mockable clock
    (p2p_tx_download.py moves it): two peers announce a transaction, the
    first is asked and does not answer; the second is asked only once the
    clock has moved past the minute, however long the wait before."""
    import os
    import struct

    from conftest import P2P, frame, ser_compact

    d = make_peerd("-mocktime=%d" % MOCK)
    # A recent tip by the node's clock: out of initial block download.
    d.rpc("generatetodescriptor", 1, "raw(51)")
    wtxid = os.urandom(32)
    inv = frame("inv", ser_compact(1) + struct.pack("<I", 5) + wtxid)  # MSG_WTX
    peers = []
    for _ in range(2):
        p = P2P(d.port, timeout=10)
        p.handshake()
        peers.append(p)

    def asked(p, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                m = p.recv(max(0.05, deadline - time.monotonic()))
            except TimeoutError:
                return False
            if m.command == "getdata" and wtxid in m.payload:
                return True
        return False

    peers[0].send_raw(inv)
    peers[0].sync_with_ping()
    peers[1].send_raw(inv)
    peers[1].sync_with_ping()
    assert asked(peers[0], 5), "the first announcer was not asked"
    # The clock stands still: no fallback however long we wait.
    assert not asked(peers[1], 3)
    d.rpc("setmocktime", MOCK + 61)
    assert asked(peers[1], 5), "no fallback to the second announcer after the minute"
    for p in peers:
        p.close()


def test_setmocktime_regtest_only_mocktime_any_network(make_peerd):
    """As bitcoind (checked by hand against Core 29 on signet): -mocktime is
    taken on any network, setmocktime only on regtest (-1, Core's text).
    -connect=0 and the fixture's loopback DNS server: nothing leaves the
    machine."""
    from conftest import RpcError

    d = make_peerd("-connect=0", "-mocktime=%d" % MOCK, chain="signet", listen=False)
    assert d.rpc("uptime") < 0  # Core's GetTime() - startup time, the clock set in the past
    try:
        d.rpc("setmocktime", 5)
        raise AssertionError("setmocktime accepted on signet")
    except RpcError as e:
        assert (e.code, e.message) == (-1, "setmocktime is for regression testing (-regtest mode) only")

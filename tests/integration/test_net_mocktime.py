"""The connection manager's timers on the mockable clock (net/outbound.c,
Core's ThreadOpenConnections: next_feeler and the extra peers' timers are
GetTime's): with -mocktime the clock stands still and no feeler is made
however long the node runs; setmocktime 20 minutes on (ten times the
feeler timer's mean) and one is made within a round.

A loopback network (-test=addrmanloopback, 127.N.0.0/16 a group each):
nothing leaves the machine.
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

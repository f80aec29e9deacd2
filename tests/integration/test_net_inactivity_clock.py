"""Pings and the inactivity timeouts run on the mockable clock, as Core's
(net.cpp's InactivityCheck and ShouldRunInactivityChecks, net_processing's
MaybeSendPing all read GetTime): with the clock standing still no ping
follows the first; once setmocktime moves it past PING_INTERVAL (2 minutes)
a ping goes out at once; a jump past TIMEOUT_INTERVAL (20 minutes) closes a
peer, unless -peertimeout is larger than the jump (Core's tests run with
-peertimeout=999999999 for that; so does test_net_network.py's stepped
clock). peerd timed them by the loop's clock before, so neither the ping
nor the close followed a jump. Each answer is compared with bitcoind's.
"""
import time

from conftest import PeerClosed, P2P, frame

MOCK = 1704067200
# Core's PING_INTERVAL and TIMEOUT_INTERVAL, in seconds.
PING_INTERVAL = 120
TIMEOUT_INTERVAL = 1200


def ping_within(p, seconds):
    """Whether a ping arrives within `seconds` (answered)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            m = p.recv(max(0.05, deadline - time.monotonic()))
        except (TimeoutError, PeerClosed):
            return False
        if m.command == "ping":
            p.send_raw(frame("pong", m.payload))
            return True
    return False


def scenario(port, setmocktime):
    """One inbound peer under a clock standing at MOCK: what it sees."""
    p = P2P(port, timeout=10)
    try:
        p.handshake()
        seen = {"first_ping": ping_within(p, 5)}
        # The clock stands still: no second ping, however long we wait.
        seen["ping_while_still"] = ping_within(p, 2)
        setmocktime(MOCK + PING_INTERVAL + 1)
        seen["ping_after_2min"] = ping_within(p, 5)
        # 20 minutes (and a minute) since the last message either way.
        setmocktime(MOCK + PING_INTERVAL + 1 + TIMEOUT_INTERVAL + 60)
        seen["closed_after_20min"] = p.is_closed(4)
        return seen
    finally:
        p.close()


def test_ping_and_inactivity_follow_the_mockable_clock_as_core(make_peerd, make_bitcoind):
    mock = "-mocktime=%d" % MOCK
    huge = "-peertimeout=999999999"
    core = make_bitcoind(1, args=(mock,), small=True)[0]
    core_huge = make_bitcoind(1, args=(mock, huge), small=True)[0]
    d = make_peerd(mock)
    d_huge = make_peerd(mock, huge, name="huge")
    for c, ours_node, closed in ((core, d, True), (core_huge, d_huge, False)):
        label = "peertimeout=999999999" if ours_node is d_huge else "default peertimeout"
        theirs = scenario(c.port, c.setmocktime)
        assert theirs == {"first_ping": True, "ping_while_still": False, "ping_after_2min": True,
                          "closed_after_20min": closed}, theirs
        ours = scenario(ours_node.port, lambda t, n=ours_node: n.rpc("setmocktime", t))
        assert ours == theirs, (label, ours, theirs)

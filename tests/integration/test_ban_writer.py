"""banlist.json is written off the loop (daemon/net/ban_writer.c).

With many bans the file is tens of megabytes, rewritten whole and fsynced
at every change (as Core's DumpBanlist does, on the calling RPC thread:
Core 29 took 9 s for one setban over 300,000 bans, 73 s for ten more, at
load 13). peerd wrote it on the loop thread, so each setban stalled every
peer and the control socket for that long. Now the writer thread writes
it (formatted straight into the file, no JSON tree) while the loop goes
on; setban, setban remove and clearbanned answer once the file holds the
change, as Core's (its BanMan writes before the RPC returns), and other
calls are answered meanwhile. At shutdown peerd waits for the writer and
writes the last state, and a restart loads them all.
"""
import json
import os
import time

import pytest

from conftest import Ctl, RpcError

N = 100_000


def already_banned(d, addr):
    """Core's answer to banning a banned address again: -23."""
    with pytest.raises(RpcError) as e:
        d.rpc("setban", addr, "add", 86400)
    assert (e.value.code, e.value.message) == (-23, "Error: IP/Subnet already banned")


def banned_in_file(path):
    with open(path) as f:
        return sorted(e["address"] for e in json.load(f)["banned_nets"])


def test_setban_answers_once_the_file_holds_it_as_core(make_bitcoind, make_peerd):
    """Core's BanMan::Ban, Unban and ClearBanned call DumpBanlist before the
    RPC returns: the file holds the change when the answer comes. Asked of
    both, with the file read right after each answer."""
    (core,) = make_bitcoind(1, small=True)
    d = make_peerd(name="bans", listen=False)
    nodes = ((d, os.path.join(d.netdir, "banlist.json")),
             (core, os.path.join(core.datadir, "regtest", "banlist.json")))
    want = []
    for addr, net in (("1.2.3.4", "1.2.3.4/32"), ("10.0.0.0/8", "10.0.0.0/8"),
                      ("2001:db8::/32", "2001:db8::/32")):
        want = sorted(want + [net])
        for node, path in nodes:
            assert node.rpc("setban", addr, "add", 86400) is None
            assert banned_in_file(path) == want, (node, addr)
    want.remove("10.0.0.0/8")
    for node, path in nodes:
        assert node.rpc("setban", "10.0.0.0/8", "remove") is None
        assert banned_in_file(path) == want, node
    for node, path in nodes:
        assert node.rpc("clearbanned") is None
        assert banned_in_file(path) == [], node


def test_setban_over_many_bans_waits_for_the_file_not_the_loop(make_peerd, tmp_path):
    # The bans a previous run left (Core's format), so the file is big from the start.
    d = make_peerd(name="bans", listen=False)
    rc, _ = d.stop()
    assert rc == 0
    now = int(time.time())
    path = os.path.join(d.netdir, "banlist.json")
    with open(path, "w") as f:
        json.dump({"banned_nets": [
            {"version": 1, "ban_created": now, "banned_until": now + 86400,
             "address": "10.%d.%d.%d/32" % (i >> 16 & 255, i >> 8 & 255, i & 255)}
            for i in range(N)]}, f)
    d = make_peerd(name="bans", listen=False)
    already_banned(d, "10.1.134.159")  # loaded (listbanned of them all is 12 MB)
    t0 = time.monotonic()
    for i in range(5):
        assert d.rpc("setban", "11.0.0.%d" % i, "add", 86400) is None
        # The loop answers meanwhile (it used to be writing the file).
        assert d.rpc("getconnectioncount") == 0
    took = time.monotonic() - t0
    # Each waits for a write of the file, as Core's; the jansson tree made
    # that about a second here (load 13), formatted straight it is a tenth.
    assert took < 2.0, "5 setbans over %d bans took %.2f s" % (N, took)
    # The answer came after the write that holds it.
    with open(path) as f:
        assert "11.0.0.4/32" in {e["address"] for e in json.load(f)["banned_nets"]}
    # A setban waiting for its write does not hold another client: sent
    # without reading its answer, then one call on another connection.
    waiting = Ctl(d.sock_path)
    waiting.send_line(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "setban",
                                  "params": ["12.0.0.1", "add", 86400]}) + "\n")
    assert d.rpc("getconnectioncount") == 0
    assert waiting.read_line()["id"] == 7
    waiting.sock.close()
    rc, _ = d.stop(timeout=60)
    assert rc == 0
    with open(path) as f:
        nets = {e["address"] for e in json.load(f)["banned_nets"]}
    assert len(nets) == N + 6 and "11.0.0.4/32" in nets
    d = make_peerd(name="bans", listen=False)
    already_banned(d, "11.0.0.4")
    # Stopped here, with time to spare: a sanitized peerd frees 100,000 bans slowly.
    rc, _ = d.stop(timeout=60)
    assert rc == 0

"""banlist.json is written off the loop (daemon/net/ban_writer.c).

With many bans the file is tens of megabytes, rewritten whole and fsynced
at every change (as Core's DumpBanlist does, on the calling RPC thread:
Core 29 took 9 s for one setban over 300,000 bans, 73 s for ten more, at
load 13). peerd wrote it on the loop thread, so each setban stalled every
peer and the control socket for that long. Now a setban answers at once,
the control socket answers meanwhile, and the file still ends up holding
every ban: at shutdown peerd waits for the writer and writes the last
state, and a restart loads them all.
"""
import json
import os
import time

import pytest

from conftest import RpcError

N = 100_000


def already_banned(d, addr):
    """Core's answer to banning a banned address again: -23."""
    with pytest.raises(RpcError) as e:
        d.rpc("setban", addr, "add", 86400)
    assert (e.value.code, e.value.message) == (-23, "Error: IP/Subnet already banned")


def test_setban_over_many_bans_does_not_wait_for_the_file(make_peerd, tmp_path):
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
    # Each used to cost a full write of the file (about a second here at
    # load 13); now a copy of the entries.
    assert took < 2.0, "5 setbans over %d bans took %.2f s" % (N, took)
    rc, _ = d.stop(timeout=60)
    assert rc == 0
    with open(path) as f:
        nets = {e["address"] for e in json.load(f)["banned_nets"]}
    assert len(nets) == N + 5 and "11.0.0.4/32" in nets
    d = make_peerd(name="bans", listen=False)
    already_banned(d, "11.0.0.4")
    # Stopped here, with time to spare: a sanitized peerd frees 100,000 bans slowly.
    rc, _ = d.stop(timeout=60)
    assert rc == 0

"""The bytes of received blocks waiting for the validation thread are
capped at Core's per-connection receive buffer (-maxreceivebuffer's
default, 5,000 x 1,000 bytes, read from bitcoind -help): past it Core
stops reading from a peer, and peerd asks for no more blocks
(daemon/sync/sync.h's SYNC_MAX_QUEUE_BYTES). At 8 MiB the assumevalid row
of make bench-ibd peaked above half of Core's RSS (doc/performance.md)."""
import re
import subprocess

import bitcoind


def test_queue_cap_is_cores_receive_buffer(make_peerd):
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        import pytest
        pytest.skip(why)
    text = subprocess.run([binary, "-help"], capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"-maxreceivebuffer=<n>\s+Maximum per-connection receive buffer, <n>\*1000 bytes "
                  r"\(default: (\d+)\)", text)
    assert m, "no -maxreceivebuffer in bitcoind -help"
    d = make_peerd(listen=False)
    s = d.rpc("getstats")["sync"]
    assert s["queue_bytes_cap"] == int(m.group(1)) * 1000, s

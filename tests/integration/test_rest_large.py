"""REST block/HASH.bin of a 900 kB block: served from memory that is already
there (session 12; daemon/net/recvbudget.c, doc/performance.md).

Until session 12 peerd fixed glibc's mmap threshold at 128 KiB, so every
block read for an answer was a fresh mapping: each of its 4 kB pages was a
page fault (zeroed, charged, unmapped after the send), about a fifth of
the validation thread's time serving block.bin. Now a block buffer comes
from a malloc arena and goes back to it, so a request after the first few
costs a handful of minor faults instead of one a page. The faults are read
from /proc (the plain build only: ASan's allocator maps memory its own
way); the bytes are checked against getblock's hex on every build.
"""
import http.client
import os
import threading

import pytest
from bitcoin.core import CMutableTransaction, CMutableTxIn, COutPoint, CTxOut, lx
from bitcoin.core.script import CScript

from conftest import free_port
from test_peertool import descsum

ASAN = "/asan/" in os.environ.get("PEERD_BIN", "")
OUTPUTS = 100
SCRIPT = 9_000              # bytes of each output's OP_RETURN script: a 900 kB block
WARM = 5                    # requests before the count (the arena grows to its size)
COUNTED = 40
FAULTS_PER_REQUEST_MAX = 40  # a fresh 900 kB buffer is 220 pages; reuse is near 0


def minflt(pid):
    """Minor faults of the whole process so far (/proc/PID/stat, field 10)."""
    with open("/proc/%d/stat" % pid) as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return int(rest[7])


def big_block(d):
    h = d.rpc("generateblock", descsum("raw(51)"), [])["hash"]
    cb = d.rpc("getblock", h)["tx"][0]
    d.rpc("generatetodescriptor", 100, descsum("raw(51)"))
    script = CScript(b"\x6a" + bytes(SCRIPT - 1))
    tx = CMutableTransaction([CMutableTxIn(COutPoint(lx(cb), 0))],
                             [CTxOut(0, script) for _ in range(OUTPUTS)], nVersion=2)
    return d.rpc("generateblock", descsum("raw(51)"), [tx.serialize().hex()])["hash"]


def fetch_many(port, path, n, want, errors):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        for _ in range(n):
            c.request("GET", path)
            r = c.getresponse()
            body = r.read()
            if r.status != 200 or body != want:
                errors.append((r.status, len(body)))
                return
    finally:
        c.close()


@pytest.fixture
def served(make_peerd):
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, "-rest")
    h = big_block(d)
    want = bytes.fromhex(d.rpc("getblock", h, 0))
    assert len(want) > 900_000
    return d, port, "/rest/block/%s.bin" % h, want


def test_rest_block_bin_reuses_its_buffer(served):
    d, port, path, want = served
    errors = []
    fetch_many(port, path, WARM, want, errors)
    before = minflt(d.pid)
    fetch_many(port, path, COUNTED, want, errors)
    per = (minflt(d.pid) - before) / COUNTED
    assert not errors, errors
    if not ASAN:
        assert per <= FAULTS_PER_REQUEST_MAX, "%.0f minor faults a request of a %d-byte block" % (
            per, len(want))


def test_rest_block_bin_four_clients_reuse(served):
    """Four keep-alive clients at once: four buffers in flight, still no fresh pages."""
    d, port, path, want = served
    errors = []
    fetch_many(port, path, WARM, want, errors)

    def round_of(n):
        ts = [threading.Thread(target=fetch_many, args=(port, path, n, want, errors)) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    round_of(WARM)
    before = minflt(d.pid)
    round_of(COUNTED // 4)
    per = (minflt(d.pid) - before) / COUNTED
    assert not errors, errors
    if not ASAN:
        assert per <= FAULTS_PER_REQUEST_MAX, "%.0f minor faults a request with four clients" % per

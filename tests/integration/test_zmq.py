"""ZMQ notifications and the notification commands (daemon/notify/, issue 23).

The bitcoind in shared/bin is built without ZMQ, so these follow Core 29's
doc/zmq.md and test/functional/interface_zmq.py: a python3-zmq (pyzmq)
subscriber, an implementation independent of peerd's, on loopback tcp
only. Each message is three frames (topic, body, 4-byte little-endian
number per notifier); hashes are in display order; rawtx/rawblock are the
serialized transaction/block; sequence is hash + label (C, D, A, R) and,
for A and R, the 8-byte little-endian mempool sequence. Transactions are
checked against what the test itself built (mempool_craft.py), blocks
against getblock's hex; a real bitcoind (when found) makes the old chain
for the initial-block-download case.
"""
import os
import struct
import time

import pytest

zmq = pytest.importorskip("zmq")

from conftest import RpcError, free_port, sha256d, wait_for  # noqa: E402
from mempool_craft import TRUE, Coin, Tx, p2wsh  # noqa: E402

# P2WSH(OP_TRUE): anyone can spend, so the test signs nothing.
OP_TRUE_ADDR = "bcrt1qft5p2uhsdcdc3l2ua4ap5qqfg4pjaqlp250x7us7a8qqhrxrxfsqseac85"
TOPICS = ("hashblock", "hashtx", "rawblock", "rawtx", "sequence")


class Sub:
    """One SUB socket on one address, every topic, messages as (topic, body, seq)."""

    def __init__(self, ctx, address, topics=TOPICS):
        self.s = ctx.socket(zmq.SUB)
        self.s.setsockopt(zmq.RCVTIMEO, 10000)
        for t in topics:
            self.s.setsockopt(zmq.SUBSCRIBE, t.encode())
        self.s.connect(address)

    def recv(self):
        parts = self.s.recv_multipart()
        assert len(parts) == 3, parts
        assert len(parts[2]) == 4
        return parts[0].decode(), parts[1], struct.unpack("<I", parts[2])[0]

    def none(self, wait_ms=500):
        """Nothing more arrives within wait_ms."""
        if self.s.poll(wait_ms):
            raise AssertionError("unexpected message %r" % (self.recv(),))

    def close(self):
        self.s.close(0)


def zmq_args(port, extra=()):
    a = "tcp://127.0.0.1:%d" % port
    return ["-zmqpub%s=%s" % (t, a) for t in TOPICS] + list(extra)


def mine(d, n=1, addr=OP_TRUE_ADDR):
    return d.rpc("generatetoaddress", n, addr)


def coinbase_of(d, bh):
    blk = d.rpc("getblock", bh, 2)
    return blk["tx"][0]


def seq_msg(body):
    h = body[:32].hex()
    label = chr(body[32])
    n = struct.unpack("<Q", body[33:41])[0] if len(body) == 41 else None
    if label in "CD":
        assert len(body) == 33
    else:
        assert len(body) == 41
    return h, label, n


class Stream:
    """Every topic from one address, in order, with the per-topic numbers checked."""

    def __init__(self, sub):
        self.sub = sub
        self.next = {}

    def get(self):
        topic, body, n = self.sub.recv()
        want = self.next.get(topic)
        if want is not None:
            assert n == want, "%s numbered %d, expected %d" % (topic, n, want)
        self.next[topic] = n + 1
        return topic, body

    def expect(self, topic):
        t, body = self.get()
        assert t == topic, "got %s, expected %s" % (t, topic)
        return body


def sync_sub(d, stream):
    """The slow joiner: mine blocks until the subscriber sees one, then drain
    through that block's hashblock and rawblock (the last topics of a block)."""
    deadline = time.time() + 20
    while time.time() < deadline:
        bh = mine(d)[0]
        if stream.sub.s.poll(300):
            break
    else:
        raise AssertionError("the subscriber never joined")
    # Drain until this block's rawblock: everything before belongs to joins.
    drain_through(stream, bh)
    return bh


def drain_through(stream, bh):
    """Take the stream's messages up to and including block bh's rawblock."""
    while True:
        t, body = stream.get()
        if t == "rawblock" and sha256d(body[:80])[::-1].hex() == bh:
            return


def test_zmq_topics_order_and_numbers(make_peerd):
    port = free_port()
    second = free_port()
    d = make_peerd(*zmq_args(port, ["-zmqpubhashblock=tcp://127.0.0.1:%d" % second,
                                    "-zmqpubrawtxhwm=7"]))
    a = "tcp://127.0.0.1:%d" % port
    b = "tcp://127.0.0.1:%d" % second
    # Core's getzmqnotifications: by type name, then as given; the hwm per type.
    assert d.rpc("getzmqnotifications") == [
        {"type": "pubhashblock", "address": a, "hwm": 1000},
        {"type": "pubhashblock", "address": b, "hwm": 1000},
        {"type": "pubhashtx", "address": a, "hwm": 1000},
        {"type": "pubrawblock", "address": a, "hwm": 1000},
        {"type": "pubrawtx", "address": a, "hwm": 7},
        {"type": "pubsequence", "address": a, "hwm": 1000},
    ]
    ctx = zmq.Context()
    sub = Sub(ctx, a)
    sub2 = Sub(ctx, b, ("hashblock",))
    st = Stream(sub)
    try:
        sync_sub(d, st)
        # The second address has a socket and numbers of its own. Its
        # subscriber joins on its own time (ZMQ's slow joiner: under ASan it
        # missed every block sync_sub mined): more blocks until it sees one.
        for _ in range(40):
            if sub2.s.poll(500):
                break
            drain_through(st, mine(d)[0])
        else:
            raise AssertionError("no hashblock on the second address")
        first2 = sub2.recv()
        assert first2[0] == "hashblock"

        # One block: the coinbase's hashtx and rawtx, sequence C, then hashblock and rawblock.
        bh = mine(d)[0]
        blk = d.rpc("getblock", bh, 2)
        cb = blk["tx"][0]
        assert st.expect("hashtx").hex() == cb["txid"]
        assert st.expect("rawtx").hex() == cb["hex"]
        assert seq_msg(st.expect("sequence")) == (bh, "C", None)
        assert st.expect("hashblock").hex() == bh
        assert st.expect("rawblock").hex() == d.rpc("getblock", bh, 0)
        # The second address numbers its own messages, one more than before.
        while True:
            t, body, n = sub2.recv()
            if body.hex() == bh:
                break
        assert n >= first2[2] + 1

        # Make the coinbase of block `bh` spendable, then spend it.
        mine(d, 100)
        for _ in range(100 * 5):
            st.get()
        sub.none()
        coin = Coin(cb["txid"], 0, int(round(cb["vout"][0]["value"] * 1e8)), p2wsh(TRUE), "wsh_true")
        tx = Tx().add_in(coin, seq=0xFFFFFFFD).add_out(coin.value - 1000, p2wsh(TRUE)).sign(None)
        mseq = d.rpc("getrawmempool", False, True)["mempool_sequence"]
        assert d.rpc("sendrawtransaction", tx.hex()) == tx.txid
        assert st.expect("hashtx").hex() == tx.txid
        assert st.expect("rawtx") == tx.ser()
        # A with the mempool sequence before the accept (Core's GetAndIncrementSequence).
        assert seq_msg(st.expect("sequence")) == (tx.txid, "A", mseq)
        assert d.rpc("getrawmempool", False, True)["mempool_sequence"] == mseq + 1

        # A replacement (BIP125): R for the replaced one, A for the new one, in Core's order.
        bump = Tx().add_in(coin, seq=0xFFFFFFFD).add_out(coin.value - 5000, p2wsh(TRUE)).sign(None)
        assert d.rpc("sendrawtransaction", bump.hex()) == bump.txid
        # Core's Finalize removes the conflicts (R), then adds (hashtx, rawtx, A).
        assert seq_msg(st.expect("sequence")) == (tx.txid, "R", mseq + 1)
        assert st.expect("hashtx").hex() == bump.txid
        assert st.expect("rawtx") == bump.ser()
        assert seq_msg(st.expect("sequence")) == (bump.txid, "A", mseq + 2)
        sub.none()

        # Mined: hashtx of the coinbase and of bump, C, hashblock; no R (the block tells).
        bh2 = mine(d)[0]
        blk2 = d.rpc("getblock", bh2, 2)
        assert [t["txid"] for t in blk2["tx"]][1:] == [bump.txid]
        for t in blk2["tx"]:
            assert st.expect("hashtx").hex() == t["txid"]
            assert st.expect("rawtx").hex() == t["hex"]
        assert seq_msg(st.expect("sequence")) == (bh2, "C", None)
        assert st.expect("hashblock").hex() == bh2
        st.expect("rawblock")
        sub.none()
        # The block's removal bumped the mempool sequence without an R.
        assert d.rpc("getrawmempool", False, True)["mempool_sequence"] == mseq + 4

        # A reorg back: the block's transactions again and D; bump returns to
        # the pool (A after the D); no hashblock (no block was connected).
        d.rpc("invalidateblock", bh2)
        for t in blk2["tx"]:
            assert st.expect("hashtx").hex() == t["txid"]
            assert st.expect("rawtx").hex() == t["hex"]
        assert seq_msg(st.expect("sequence")) == (bh2, "D", None)
        assert st.expect("hashtx").hex() == bump.txid
        st.expect("rawtx")
        h, label, n = seq_msg(st.expect("sequence"))
        assert (h, label) == (bump.txid, "A")
        assert n == d.rpc("getrawmempool", False, True)["mempool_sequence"] - 1
        sub.none()
        # And forward again: C and the new tip.
        d.rpc("reconsiderblock", bh2)
        for t in blk2["tx"]:
            assert st.expect("hashtx").hex() == t["txid"]
            st.expect("rawtx")
        assert seq_msg(st.expect("sequence")) == (bh2, "C", None)
        assert st.expect("hashblock").hex() == bh2
        st.expect("rawblock")
        sub.none()
    finally:
        sub.close()
        sub2.close()
        ctx.term()


def test_zmq_bad_address_leaves_zmq_off(make_peerd):
    # As Core: a notifier that cannot bind turns ZMQ off; the node runs on.
    d = make_peerd("-zmqpubhashblock=tcp://127.0.0.1:%d" % free_port(), "-zmqpubhashtx=nonsense://x")
    assert d.rpc("getzmqnotifications") == []
    assert "zmq: Failed to bind address nonsense://x" in d.log()
    assert len(mine(d, 2)) == 2


def test_zmq_options_checked(make_peerd, tmp_path):
    import subprocess
    from conftest import PEERD_BIN
    r = subprocess.run([PEERD_BIN, "-regtest", "-datadir=" + str(tmp_path), "-zmqpubhashtxhwm=-1"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 1 and "zmqpubhashtxhwm" in r.stderr, r.stderr
    h = subprocess.run([PEERD_BIN, "-help"], capture_output=True, text=True, timeout=10).stdout
    for t in TOPICS:
        assert "-zmqpub%s=<address>" % t in h
        assert "-zmqpub%shwm=<n>" % t in h
    for k in ("blocknotify", "startupnotify", "shutdownnotify", "alertnotify"):
        assert "-%s=<cmd>" % k in h


def test_zmq_not_during_ibd(make_bitcoind, make_peerd):
    """Core mines an old chain (its clock set back two days); peerd follows it
    in initial block download: hashtx and C for every block, no hashblock
    and no -blocknotify. The first fresh block ends IBD and is announced."""
    old = int(time.time()) - 2 * 86400
    core = make_bitcoind(1, args=("-mocktime=%d" % old,))[0]
    hashes = core.generatetoaddress(5, OP_TRUE_ADDR)
    port = free_port()
    d = make_peerd(*zmq_args(port, ["-connect=0"]))
    ctx = zmq.Context()
    sub = Sub(ctx, "tcp://127.0.0.1:%d" % port)
    st = Stream(sub)
    try:
        # The subscription reaches the publisher within milliseconds on
        # loopback (nothing to probe it with before a block): then sync.
        time.sleep(2.0)
        d.rpc("addnode", "127.0.0.1:%d" % core.port, "onetry")
        wait_for(lambda: d.rpc("getblockcount") == 5, timeout=30, what="peerd to sync")
        seen = []
        while sub.s.poll(1000):
            seen.append(st.get())
        topics = [t for t, _ in seen]
        assert "hashblock" not in topics and "rawblock" not in topics, topics
        cs = [seq_msg(b) for t, b in seen if t == "sequence"]
        # Whatever the subscriber caught of the sync, in order and all C.
        assert cs and all(label == "C" for _, label, _ in cs)
        assert [h for h, _, _ in cs] == hashes[len(hashes) - len(cs):]
        # A fresh block ends initial block download: announced.
        core.setmocktime(0)
        # Core's clock jumps two days: its inactivity check may take peerd's
        # last message for two days old and drop it (it checks on every pass
        # of its socket loop); connect again if it did.
        time.sleep(1.0)
        if d.rpc("getconnectioncount") == 0:
            d.rpc("addnode", "127.0.0.1:%d" % core.port, "onetry")
            wait_for(lambda: d.rpc("getconnectioncount") == 1, timeout=10, what="peerd back")
        fresh = core.generatetoaddress(1, OP_TRUE_ADDR)[0]
        st.expect("hashtx")
        st.expect("rawtx")
        assert seq_msg(st.expect("sequence")) == (fresh, "C", None)
        assert st.expect("hashblock").hex() == fresh
        st.expect("rawblock")
    finally:
        sub.close()
        ctx.term()


def test_notify_commands(make_peerd, tmp_path):
    out = tmp_path / "notify"
    out.mkdir()
    blocks = out / "blocks"
    d = make_peerd(
        "-blocknotify=echo %%s >> %s" % blocks,
        "-startupnotify=echo up > %s" % (out / "started"),
        "-shutdownnotify=echo one > %s" % (out / "down1"),
        "-shutdownnotify=echo two > %s" % (out / "down2"),
        "-alertnotify=echo %%s > %s" % (out / "alert"))
    wait_for(lambda: (out / "started").exists(), timeout=10, what="startupnotify")
    assert (out / "started").read_text() == "up\n"
    hashes = mine(d, 3)
    wait_for(lambda: blocks.exists() and len(blocks.read_text().split()) == 3, timeout=10,
             what="three blocknotify runs")
    # Each block's own run; they may finish in any order.
    assert sorted(blocks.read_text().split()) == sorted(hashes)
    rc, _ = d.stop(timeout=10)
    assert rc == 0
    assert (out / "down1").read_text() == "one\n"
    assert (out / "down2").read_text() == "two\n"


def test_notify_command_failure_logged(make_peerd):
    d = make_peerd("-blocknotify=exit 3")
    mine(d)
    # Core's words, with what system() returns: the wait status.
    wait_for(lambda: "runCommand error: system(exit 3) returned 768" in d.log(), timeout=10,
             what="the failure in the log")


def test_zmq_ipv6_and_unix_addresses(make_peerd, tmp_path):
    """A bracketed IPv6 address gets ZMQ_IPV6 (as Core's IsZMQAddressIPV6);
    Core's unix: prefix is libzmq's ipc://."""
    port = free_port()
    path = str(tmp_path / "zmq.sock")
    d = make_peerd("-zmqpubhashblock=tcp://[::1]:%d" % port, "-zmqpubhashtx=unix:" + path)
    assert d.rpc("getzmqnotifications") == [
        {"type": "pubhashblock", "address": "tcp://[::1]:%d" % port, "hwm": 1000},
        {"type": "pubhashtx", "address": "ipc://" + path, "hwm": 1000},
    ]
    ctx = zmq.Context()
    six = ctx.socket(zmq.SUB)
    six.setsockopt(zmq.IPV6, 1)
    six.setsockopt(zmq.RCVTIMEO, 10000)
    six.setsockopt(zmq.SUBSCRIBE, b"hashblock")
    six.connect("tcp://[::1]:%d" % port)
    ipc = Sub(ctx, "ipc://" + path, ("hashtx",))
    try:
        deadline = time.time() + 20
        while not (six.poll(0) and ipc.s.poll(0)):
            assert time.time() < deadline, "no message on [::1] and ipc"
            bh = mine(d)[0]
            time.sleep(0.2)
        topic, body, _ = six.recv_multipart()
        assert topic == b"hashblock" and len(body) == 32
        t, body, _ = ipc.recv()
        assert t == "hashtx" and len(body) == 32
        assert bh  # at least one block was mined to get here
    finally:
        six.close(0)
        ipc.close()
        ctx.term()


def test_zmq_reorg_d_then_c(make_peerd):
    """interface_zmq.py's reorg: a longer branch wins in one activation: D for
    the block going, C for each block coming, then one hashblock, the new
    tip's (Core's UpdatedBlockTip per activation step)."""
    port = free_port()
    a = "tcp://127.0.0.1:%d" % port
    d = make_peerd("-zmqpubhashblock=" + a, "-zmqpubsequence=" + a)
    ctx = zmq.Context()
    sub = Sub(ctx, a, ("hashblock", "sequence"))
    st = Stream(sub)

    def blocks(n):
        out = []
        for _ in range(n):
            t, body = st.get()
            out.append(body.hex() if t == "hashblock" else seq_msg(body))
        return out

    try:
        deadline = time.time() + 20
        while not sub.s.poll(300):
            assert time.time() < deadline, "the subscriber never joined"
            mine(d)
        while sub.s.poll(300):
            st.get()
        x = mine(d)[0]
        assert blocks(2) == [(x, "C", None), x]
        # Build the other branch: X out, Y1 and Y2 in, then Y1 out again.
        d.rpc("invalidateblock", x)
        assert blocks(1) == [(x, "D", None)]
        # Another address: the same template would be X again (duplicate-invalid).
        y1, y2 = mine(d, 2, "bcrt1pamhqk96edn")
        assert blocks(4) == [(y1, "C", None), y1, (y2, "C", None), y2]
        d.rpc("invalidateblock", y1)
        assert blocks(2) == [(y2, "D", None), (y1, "D", None)]
        d.rpc("reconsiderblock", x)
        assert blocks(2) == [(x, "C", None), x]
        sub.none()
        # The longer branch comes back in one activation.
        d.rpc("reconsiderblock", y1)
        assert blocks(4) == [(x, "D", None), (y1, "C", None), (y2, "C", None), y2]
        sub.none()
        assert d.rpc("getbestblockhash") == y2
    finally:
        sub.close()
        ctx.term()

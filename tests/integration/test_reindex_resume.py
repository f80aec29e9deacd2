"""A reindex cut short goes on at the next start as it ran (chain/reindex.c's
marks, node/reindex.c): after the start, in steps, the control socket
answering, as Core's initload thread does after an interrupted
-reindex-chainstate or -reindex; and the calls that move the chain
(generatetoaddress, submitblock, invalidateblock) wait for the reindex
instead of finishing it inside one job, as Core's wait for cs_chainstate.
Core is asked the same where it can be (test_core_*)."""
import os
import re
import signal
import threading
import time

import bitcoind
from conftest import Ctl, Peerd, start_with_notify
from test_reindex import ADDR, chaingen, check_answers, core_with_chain, long_chain, state, submit_chain

CHAINSTATE_DONE = "Reindex of the chain state done in"
INTERRUPTED = "Reindex interrupted: it goes on at the next start"


def answers(rpc, height, done, least=3):
    """getblockchaininfo until `least` answers were seen part way (0 < blocks
    < height), checked as Core's (check_answers); each answer's (blocks,
    headers, initialblockdownload, seconds). `done()` true first fails."""
    seen = []
    while True:
        assert not done(), "the reindex ended before it was seen part way: %r" % seen
        t0 = time.monotonic()
        info = rpc("getblockchaininfo")
        seen.append((info["blocks"], info["headers"], info["initialblockdownload"],
                     time.monotonic() - t0))
        if sum(1 for s in seen if 0 < s[0] < height) >= least:
            break
        time.sleep(0.02)
    check_answers(seen, height)
    return seen


def test_interrupted_reindex_chainstate_goes_on_after_the_start(tmp_path, make_peerd):
    """-reindex-chainstate stopped half way (the stop method): the next start,
    without the option, opens its control socket with the coins where they
    were flushed (VerifyDB checks them there, as Core's), then connects the
    rest in steps, answering getblockchaininfo as Core does meanwhile, with
    progress in sd_notify; SIGTERM ends that cleanly too, and the start after
    finishes at the tip and UTXO set connect-blocks computed."""
    # Three phases each seen part way, a 200 ms reindex step a look: on a quiet
    # machine (~2,000 blocks/s) the first two take ~4,000 blocks between them.
    want = long_chain(tmp_path, "resume", blocks=6000)
    height = want["height"]
    d = make_peerd("-reindex-chainstate", listen=False, name="dd")
    done = lambda: CHAINSTATE_DONE in d.log()
    answers(d.rpc, height, done)
    d.rpc("stop")
    assert d.proc.wait(timeout=60) == 0, d.log()[-3000:]
    assert INTERRUPTED in d.log() and not done(), d.log()[-3000:]

    # Before: the rest was connected inside chain_open, the control socket
    # closed until the tip (the first answer said the tip).
    d, ns = start_with_notify(tmp_path, "n1.sock", listen=False, name="dd")
    try:
        info = d.rpc("getblockchaininfo")
        assert 0 < info["blocks"] < height and info["headers"] == height, info
        assert info["initialblockdownload"] is True, info
        m = re.search(r"A reindex was interrupted: connecting the rest of the chain, from height "
                      r"(\d+) to (\d+)", d.log())
        assert m and int(m.group(2)) == height and int(m.group(1)) <= info["blocks"], d.log()[-3000:]
        assert "Verifying last 6 blocks at level 3" in d.log()
        assert "Wiping" not in d.log()
        answers(d.rpc, height, lambda: CHAINSTATE_DONE in d.log())
        msgs = []
        while not any(m.startswith("STATUS=reindex: connecting blocks") for m in msgs):
            msgs.append(ns.recv(4096).decode())
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(timeout=60) == 0, d.log()[-3000:]
        assert INTERRUPTED in d.log() and CHAINSTATE_DONE not in d.log(), d.log()[-3000:]
    finally:
        d.kill()
        ns.close()

    d, ns = start_with_notify(tmp_path, "n2.sock", listen=False, name="dd")
    try:
        msgs = []
        while not any("reindex done" in m for m in msgs):
            msgs.append(ns.recv(4096).decode())
        assert "STATUS=reindex: connecting blocks, height %d of %d" % (height, height) in msgs, msgs
        assert "STATUS=reindex done: height %d" % height in msgs, msgs
        bitcoind.wait_until(lambda: CHAINSTATE_DONE in d.log(), 60, "the reindex to end")
        u = d.rpc("gettxoutsetinfo")
        assert (d.rpc("getbestblockhash"), u["height"], u["hash_serialized_3"]) == \
            (want["tip"], height, want["utxo"]["hash_serialized_3"])
        assert d.stop()[0] == 0
    finally:
        d.kill()
        ns.close()

    # Finished: the marks are gone, nothing is redone.
    d = make_peerd(listen=False, name="dd")
    assert d.rpc("getblockcount") == height
    assert "Reindex" not in d.log() and "A reindex was interrupted" not in d.log()


def test_interrupted_reindex_reads_on_from_its_file(tmp_path, make_peerd):
    """-reindex (64 KiB blk files: -fastprune) stopped (SIGTERM) while it
    reads the files: the next start, without the option, wipes nothing and
    reads on from the file it had come to (Core's reindexing flag: its
    index kept, a block already in it skipped), then connects, and ends
    where the chain was."""
    chain = chaingen(tmp_path, 1500, "files")
    d = make_peerd("-fastprune", listen=False, name="dd")
    submit_chain(d, chain)
    before = state(d)
    assert before[1] == 1500
    assert d.stop()[0] == 0
    files = len([f for f in os.listdir(os.path.join(d.netdir, "blocks")) if f.startswith("blk")])
    assert files > 20, files

    d = Peerd(tmp_path, args=["-fastprune", "-reindex"], listen=False, name="dd")
    try:
        bitcoind.wait_until(lambda: "Reindexing block file blk00002.dat" in d.log(), 60,
                            "the reindex to read its third file", interval=0.005)
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(timeout=60) == 0, d.log()[-3000:]
    finally:
        d.kill()
    first = d.log()
    assert "Reindexing finished" not in first, "the files were all read before the stop"
    read = [int(x) for x in re.findall(r"Reindexing block file blk(\d{5})\.dat", first)]
    assert INTERRUPTED in first

    d = make_peerd("-fastprune", listen=False, name="dd")
    bitcoind.wait_until(lambda: "Reindex done in" in d.log(), 120, "the reindex to end")
    text = d.log()
    m = re.search(r"A reindex was interrupted: reading the block files again from blk(\d{5})\.dat", text)
    assert m, text[-3000:]
    # From the file after the last one finished, never from the first again.
    start = int(m.group(1))
    assert 1 <= start <= max(read) + 1, (start, read)
    again = [int(x) for x in re.findall(r"Reindexing block file blk(\d{5})\.dat", text)]
    assert again == list(range(start, files)), again
    assert "Wiping" not in text
    assert state(d) == before
    assert d.stop()[0] == 0
    d = make_peerd("-fastprune", listen=False, name="dd")
    assert state(d) == before
    assert "Reindex" not in d.log()


def call_in_thread(path, method, *params):
    """method on its own control connection, in a thread: (thread, box);
    box["reply"] gets the JSON-RPC reply."""
    box = {}

    def run():
        c = Ctl(path, timeout=120)
        try:
            box["reply"] = c.call_raw(method, list(params))
        finally:
            c.sock.close()

    t = threading.Thread(target=run)
    t.start()
    return t, box


def test_moving_calls_wait_for_the_reindex(tmp_path, make_peerd):
    """generatetoaddress and submitblock during a -reindex-chainstate wait
    for its end, as Core's (test_core_after_an_interrupted_reindex_chainstate),
    and the reindex goes on in steps meanwhile (blocks rising in
    getblockchaininfo); before, the call's own chain_activate connected the
    rest of the chain inside its one job, and the block it mined on the
    tip of then was left on a stale branch."""
    want = long_chain(tmp_path, "moving", blocks=4000)
    height = want["height"]
    d = make_peerd(listen=False, name="dd")
    tip_hex = d.rpc("getblock", want["tip"], 0)
    assert d.stop()[0] == 0
    d = make_peerd("-reindex-chainstate", listen=False, name="dd")
    done = lambda: CHAINSTATE_DONE in d.log()
    bitcoind.wait_until(lambda: d.rpc("getblockcount") > 0, 60, "the connecting to start")
    at_call = d.rpc("getblockcount")
    assert at_call < height
    gen, gbox = call_in_thread(d.sock_path, "generatetoaddress", 1, ADDR)
    sub, sbox = call_in_thread(d.sock_path, "submitblock", tip_hex)
    seen = answers(d.rpc, height, done)
    assert "reply" not in gbox and "reply" not in sbox, (gbox, sbox, seen)
    gen.join(120)
    sub.join(120)
    assert done()
    assert "error" not in gbox["reply"], gbox
    (mined,) = gbox["reply"]["result"]
    # Mined on the reindexed tip, which it extends.
    assert d.rpc("getbestblockhash") == mined
    assert d.rpc("getblock", mined)["height"] == height + 1
    # The block was stored by the reindex's own connecting by then.
    assert sbox["reply"].get("result") == "duplicate", sbox
    assert d.log().index(CHAINSTATE_DONE) < d.log().rindex("UpdateTip")


def test_core_after_an_interrupted_reindex_chainstate(tmp_path, make_bitcoind):
    """The reference: bitcoind stopped half way through -reindex-chainstate
    connects the rest after its RPC opens at the next start (the initload
    thread), getblockchaininfo answering as check_answers wants; a
    generatetoaddress sent meanwhile answers once the connecting is done."""
    core = core_with_chain(make_bitcoind, tmp_path, 2000, "core")
    base = os.path.dirname(core.datadir)
    c2 = bitcoind.Bitcoind(core.binary, base, name=core.name, args=("-reindex-chainstate",))
    try:
        c2.wait_ready()
        bitcoind.wait_until(lambda: c2.rpc("getblockcount") > 100, 120, "Core to connect")
    finally:
        c2.stop()
    c3 = bitcoind.Bitcoind(core.binary, base, name=core.name)
    try:
        c3.wait_ready()
        info = c3.rpc("getblockchaininfo")
        assert 0 < info["blocks"] < 2000 and info["headers"] == 2000, info
        box = {}

        def generate():
            box["reply"] = c3.rpc("generatetoaddress", 1, ADDR, timeout=120)
            box["at"] = time.monotonic()

        t = threading.Thread(target=generate)
        t.start()
        seen = answers(c3.rpc, 2000, lambda: "reply" in box)
        last_part_way = time.monotonic()
        t.join(120)
        assert len(box["reply"]) == 1 and box["at"] > last_part_way, (box, seen)
        assert c3.rpc("getblockcount") >= 2000
    finally:
        c3.stop()

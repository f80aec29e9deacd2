"""-reindex and -reindex-chainstate (chain/reindex.c): on a chain with
transactions and a reorg in its history, both end at the same tip and
gettxoutsetinfo as before, with progress in the log (Core's lines, the
shape compared with a real bitcoind reindexing the same blocks) and in
sd_notify STATUS=; -reindex-chainstate keeps the undo data it has."""
import json
import os
import re
import subprocess
import time

import bitcoind
from conftest import BUILD, PEERD_BIN, start_with_notify

PEERTOOL = os.environ.get("PEERTOOL_BIN", os.path.join(BUILD, "bin", "peertool"))
ADDR = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"  # BIP173's P2WPKH example, regtest
ADDR2 = "bcrt1qamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhqgdn98t"
# Core's lines around LoadExternalBlockFile (node/blockstorage.cpp ImportBlocks).
PROGRESS = (re.compile(r"Reindexing block file blk\d{5}\.dat\.\.\."),
            re.compile(r"Loaded \d+ blocks from external file in \d+ms"),
            re.compile(r"Reindexing finished"))


def state(d):
    u = d.rpc("gettxoutsetinfo")
    return (d.rpc("getbestblockhash"), u["height"], u["hash_serialized_3"], u["txouts"],
            u["total_amount"])


def chaingen(tmp_path, blocks, seed, *opts, out="c.dat"):
    """peertool chaingen's `blocks` blocks from `seed` (and opts) into
    tmp_path/out; that path."""
    path = tmp_path / out
    r = subprocess.run([PEERTOOL, "chaingen", "--no-verify", *opts, "--blocks", str(blocks), "--seed",
                        seed, "--out", str(path)], capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    return path


def core_with_chain(make_bitcoind, tmp_path, blocks, seed):
    """A bitcoind that imported chaingen's `blocks` blocks from genesis
    (-loadblock), then stopped: to start again on its datadir."""
    path = chaingen(tmp_path, blocks, seed, "--genesis", out="g.dat")
    (core,) = make_bitcoind(1, args=("-loadblock=%s" % path,))
    bitcoind.wait_until(lambda: core.rpc("getblockcount") == blocks, 300, "Core's import")
    core.stop()
    return core


def submit_chain(d, path):
    """Every block of a chaingen file (no genesis) through submitblock, in
    order; returns their hex."""
    data = open(path, "rb").read()
    raws, off = [], 0
    while off < len(data):
        n = int.from_bytes(data[off + 4:off + 8], "little")
        raws.append(data[off + 8:off + 8 + n].hex())
        assert d.rpc("submitblock", raws[-1]) is None
        off += 8 + n
    return raws


def build_chain(tmp_path, d):
    """chaingen's 110 blocks with transactions, then 5 mined blocks replaced
    by a longer branch of 7 (invalidateblock): a reorg in the history, the
    stale blocks left in the files. Returns every block's hex, stale ones too."""
    raws = submit_chain(d, chaingen(tmp_path, 110, "reindex"))
    stale = d.rpc("generatetoaddress", 5, ADDR)
    d.rpc("invalidateblock", stale[0])
    branch = d.rpc("generatetoaddress", 7, ADDR2)
    assert d.rpc("getbestblockhash") == branch[-1]
    return raws + [d.rpc("getblock", h, 0) for h in stale + branch]


def reindexed(d, timeout=120):
    """Wait for the reindex, which runs after the start (node/reindex.c), to end."""
    bitcoind.wait_until(lambda: re.search(r"Reindex( of the chain state)? done in", d.log()),
                        timeout, "the reindex to end")


def lines(text):
    return [m.group(0) for line in text.splitlines() for p in PROGRESS for m in [p.search(line)] if m]


def shape(ls):
    return [re.sub(r"\d+", "N", x) for x in ls]


def test_reindex_and_reindex_chainstate_end_where_they_were(tmp_path, make_peerd, make_bitcoind):
    d = make_peerd(listen=False)
    blocks = build_chain(tmp_path, d)
    before = state(d)
    assert before[1] == 117
    assert d.stop()[0] == 0
    name = os.path.basename(d.datadir)
    rev = os.path.join(d.netdir, "blocks", "rev00000.dat")
    rev_size = os.path.getsize(rev)

    # -reindex: index and coins from the block files.
    r = make_peerd("-reindex", listen=False, name=name)
    reindexed(r)
    assert state(r) == before
    log = r.log()
    assert "Wiping the block index and chain state" in log
    ours = lines(log)
    assert shape(ours) == ["Reindexing block file blkN.dat...", "Loaded N blocks from external file in Nms",
                           "Reindexing finished"], ours
    # Every record read: genesis, 110 + 5 stale + 7.
    assert "Loaded 123 blocks from external file" in ours[1], ours
    assert re.search(r"Reindex: connected height 117 of 117 \(100%\)", log), log
    assert r.stop()[0] == 0
    # The undo data was written again from the start: the stale blocks'
    # records, never connected again, are gone.
    assert 0 < os.path.getsize(rev) < rev_size

    # -reindex-chainstate: the coins only; the undo data stays as it is.
    rev_size = os.path.getsize(rev)
    r = make_peerd("-reindex-chainstate", listen=False, name=name)
    reindexed(r)
    assert state(r) == before
    log = r.log()
    assert "Wiping the chain state" in log and "Reindexing block file" not in log
    assert "Reindex of the chain state done" in log
    assert r.stop()[0] == 0
    assert os.path.getsize(rev) == rev_size

    # And a plain start after both: nothing to redo.
    r = make_peerd(listen=False, name=name)
    assert state(r) == before
    assert "Reindex" not in r.log()
    assert r.stop()[0] == 0

    # Core reindexing the same blocks: the same tip and UTXO set hash, and
    # its progress lines have the shape of ours.
    (core,) = make_bitcoind(1)
    for raw in blocks:
        assert core.rpc("submitblock", raw) in (None, "inconclusive"), raw[:160]
    assert core.rpc("getbestblockhash") == before[0]
    core.stop()
    core2 = bitcoind.Bitcoind(core.binary, os.path.dirname(core.datadir), name=core.name,
                              args=("-reindex",))
    try:
        core2.wait_ready()
        bitcoind.wait_until(lambda: core2.rpc("getblockcount") == before[1], 60, "Core's reindex")
        u = core2.rpc("gettxoutsetinfo")
        assert (core2.rpc("getbestblockhash"), u["hash_serialized_3"]) == (before[0], before[2])
        core_lines = lines(open(core2.debug_log).read())
        assert shape(core_lines) == shape(ours), core_lines
    finally:
        core2.stop()


def test_reindex_progress_reaches_systemd(tmp_path, make_peerd):
    """sd_notify STATUS= during the reindex."""
    d = make_peerd(listen=False)
    d.rpc("generatetoaddress", 20, ADDR)
    assert d.stop()[0] == 0
    r, ns = start_with_notify(tmp_path, "notify.sock", ["-reindex"], timeout=10, listen=False,
                              name=os.path.basename(d.datadir))
    try:
        # The reindex runs after READY=1 (as Core's, after init).
        msgs = []
        while not any("reindex done" in m for m in msgs):
            msgs.append(ns.recv(4096).decode())
        assert "STATUS=reindexing block file blk00000.dat (of 1)" in msgs, msgs
        assert "STATUS=reindex: connecting blocks, height 20 of 20" in msgs, msgs
        assert "STATUS=reindex done: height 20" in msgs, msgs
        assert r.rpc("getblockcount") == 20
        assert r.stop()[0] == 0
    finally:
        r.kill()
        ns.close()


def test_crash_leftovers_connected_after_ready(tmp_path, make_peerd):
    """kill -9 leaves blocks in the files past the last flush. The next
    start reads them in chain_open but connects them after READY=1, in the
    reindex's steps (a long replay inside the start would outlast
    systemd's TimeoutStartSec, and every restart would begin it again),
    with its progress in the log and STATUS=, and ends where the chain
    was."""
    d = make_peerd(listen=False)
    d.rpc("generatetoaddress", 150, ADDR)
    tip = d.rpc("getbestblockhash")  # (gettxoutsetinfo would flush, as Core's)
    name = os.path.basename(d.datadir)
    d.kill()  # nothing flushed since the start: 150 blocks to replay
    os.remove(d.sock_path)
    r, ns = start_with_notify(tmp_path, "notify.sock", timeout=10, listen=False, name=name)
    try:
        msgs = []
        while not any("replay done" in m for m in msgs):
            msgs.append(ns.recv(4096).decode())
        ready = next(i for i, m in enumerate(msgs) if "READY=1" in m)
        progress = [i for i, m in enumerate(msgs) if "STATUS=replaying the blocks" in m]
        assert progress and progress[0] > ready, msgs
        assert ("STATUS=replaying the blocks stored after the last flush, height 150 of 150"
                in msgs), msgs
        assert "STATUS=replay done: height 150" in msgs, msgs
        before = state(r)
        assert before[:2] == (tip, 150) and before[3] == 150, before
        log = r.log()
        assert ("Replaying the blocks stored after the last flush: connecting from height 0 "
                "to 150 after the start") in log, log[-3000:]
        assert re.search(r"Replay: connected height 150 of 150 \(100%\)", log), log[-3000:]
        assert re.search(r"Replay done in \d+ms: tip height 150", log), log[-3000:]
        assert r.stop()[0] == 0
    finally:
        r.kill()
        ns.close()
    # Flushed at the stop: nothing left for the next start.
    r = make_peerd(listen=False, name=name)
    assert state(r) == before
    assert "Replay" not in r.log()
    assert r.stop()[0] == 0


def test_reindex_rebuilds_a_database_too_damaged_to_open(make_peerd):
    """data.mdb cut short is refused at a plain start; -reindex deletes the
    database before opening it (Core's DestroyDB) and rebuilds it."""
    d = make_peerd(listen=False)
    d.rpc("generatetoaddress", 30, ADDR)
    before = state(d)
    assert d.stop()[0] == 0
    os.truncate(os.path.join(d.netdir, "chainstate", "data.mdb"), 4 * 4096)
    r = subprocess.run(d.cmd, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and b"Corrupted block database detected" in r.stdout + r.stderr
    assert b"or start it with -reindex" in r.stdout + r.stderr
    r = make_peerd("-reindex", listen=False, name=os.path.basename(d.datadir))
    reindexed(r)
    assert state(r) == before
    assert "Wiping LMDB in %s" % os.path.join(d.netdir, "chainstate") in r.log()


def test_interrupted_reindex_goes_on(tmp_path, make_peerd):
    """peerd killed (-9) while reindexing: the next start, without the
    option, sees the stored mark, goes on with the reindex (no wipe) and
    ends where the chain was (connect-blocks built it and says where)."""
    chain = chaingen(tmp_path, 1200, "interrupt")
    dd = tmp_path / "dd"
    r = subprocess.run([PEERTOOL, "connect-blocks", "--utxo-stats", str(dd), str(chain)],
                       capture_output=True, timeout=600)
    assert r.returncode == 0, r.stderr.decode()
    want = json.loads(r.stdout)
    log = tmp_path / "killed.log"
    with open(log, "w") as out:
        p = subprocess.Popen([PEERD_BIN, "-regtest", "-datadir=%s" % dd, "-listen=0", "-logtimestamps=0",
                              "-reindex"], stdout=out, stderr=subprocess.STDOUT)
        try:
            bitcoind.wait_until(lambda: "Reindexing block file blk00000.dat" in log.read_text(), 60,
                                "the reindex to start reading")
            p.kill()
        finally:
            p.kill()
            p.wait(timeout=10)
    assert "Reindex done" not in log.read_text(), "the reindex finished before the kill"
    d = make_peerd(listen=False, name="dd")
    reindexed(d)
    u = d.rpc("gettxoutsetinfo")
    assert (d.rpc("getbestblockhash"), u["height"], u["hash_serialized_3"]) == \
        (want["tip"], want["height"], want["utxo"]["hash_serialized_3"])
    text = d.log()
    # Killed while reading (the mark names the file to read next) or, when
    # the one file was read already, while connecting.
    assert re.search(r"A reindex was interrupted: (reading the block files again from blk00000\.dat|"
                     r"connecting the rest of the chain)", text), text[-3000:]
    assert "Wiping" not in text
    assert d.stop()[0] == 0
    # Finished: the next start has nothing to redo.
    d = make_peerd(listen=False, name="dd")
    assert d.rpc("getbestblockhash") == want["tip"]
    assert "Reindex" not in d.log()


def long_chain(tmp_path, seed, blocks=1500):
    """chaingen's blocks connected into tmp_path/dd by connect-blocks (a
    reindex of them takes seconds); what connect-blocks says of the end."""
    chain = chaingen(tmp_path, blocks, seed)
    r = subprocess.run([PEERTOOL, "connect-blocks", "--utxo-stats", str(tmp_path / "dd"), str(chain)],
                       capture_output=True, timeout=600)
    assert r.returncode == 0, r.stderr.decode()
    return json.loads(r.stdout)


def watch_reindex(d, height):
    """getblockchaininfo until the reindex is seen connecting, half way;
    every answer (blocks, headers, initialblockdownload, seconds taken)."""
    seen = []
    while "Reindex done in" not in d.log():
        t0 = time.monotonic()
        info = d.rpc("getblockchaininfo")
        seen.append((info["blocks"], info["headers"], info["initialblockdownload"],
                     time.monotonic() - t0))
        if len(seen) >= 3 and 0 < seen[-1][0] < height:
            break
        time.sleep(0.05)
    assert "Reindex done in" not in d.log(), "the reindex ended before it was seen connecting: %r" % seen
    check_answers(seen, height)
    return seen


def check_answers(seen, height):
    """What getblockchaininfo said during a reindex, peerd's or Core's
    (test_core_answers_alike checks Core against the same): answered in
    well under a CLI's timeout (before, peerd's control socket was silent
    until the end), blocks rising, seen between 0 and the tip, never past
    the headers, in initial block download throughout."""
    assert len(seen) >= 3 and max(s[3] for s in seen) < 2.0, seen
    blocks = [s[0] for s in seen]
    assert blocks == sorted(blocks) and any(0 < b < height for b in blocks), seen
    assert all(s[2] for s in seen if s[0] < height), seen
    assert all(s[0] <= s[1] <= height for s in seen), seen


def test_control_answers_during_reindex_and_stop_ends_it(tmp_path, make_peerd):
    """The reindex runs as validation jobs after the start: the control
    socket answers getblockchaininfo throughout (blocks rising, headers
    and initialblockdownload as Core's during its reindex); the `stop`
    method, and SIGTERM, end it at a clean point with exit 0; each next
    start, without the option, goes on with it (the marks), and the last
    ends at the tip and UTXO set connect-blocks computed."""
    # Two phases each seen part way: 1,500 blocks left the second ~500 on a
    # quiet machine, done in 0.4 s, before three answers came.
    want = long_chain(tmp_path, "answers", blocks=4000)
    height = want["height"]
    d = make_peerd("-reindex", listen=False, name="dd")
    watch_reindex(d, height)
    d.rpc("stop")
    assert d.proc.wait(timeout=60) == 0, d.log()[-3000:]
    text = d.log()
    assert "Reindex done" not in text and "Reindex interrupted" in text, text[-3000:]

    # Stopped while connecting: the next start connects the rest (the
    # files were all read), after its start as the reindex did.
    d = make_peerd(listen=False, name="dd")
    watch_reindex(d, height)
    code, _ = d.stop(timeout=60)
    assert code == 0, d.log()[-3000:]
    assert "A reindex was interrupted: connecting the rest of the chain" in d.log()
    assert "Reindex interrupted" in d.log() and "Wiping" not in d.log()

    d = make_peerd(listen=False, name="dd")
    reindexed(d)
    u = d.rpc("gettxoutsetinfo")
    assert (d.rpc("getbestblockhash"), u["height"], u["hash_serialized_3"]) == \
        (want["tip"], height, want["utxo"]["hash_serialized_3"])
    info = d.rpc("getblockchaininfo")
    assert (info["blocks"], info["headers"]) == (height, height)
    assert "A reindex was interrupted: connecting the rest of the chain" in d.log()
    assert d.stop()[0] == 0


def test_no_block_sync_while_reindexing(tmp_path, make_peerd):
    """A peer that serves blocks connects during the reindex: as Core
    while importing, peerd starts no sync with it (no getheaders) until the
    reindex is done, then does."""
    long_chain(tmp_path, "nosync")
    d = make_peerd("-reindex", name="dd")
    p = d.peer()
    v = p.version_msg()
    v.nServices = 1 | 8  # NODE_NETWORK | NODE_WITNESS: a peer to sync from
    v.nStartingHeight = 5000
    p.version_msg = lambda version=None: v
    p.handshake()
    done = lambda: "Reindex done in" in d.log()
    assert not done(), "the reindex ended before the peer connected"
    during = []
    while True:
        try:
            cmd = p.recv(0.2).command
        except TimeoutError:
            cmd = None
        # Checked after the message came: peerd logs the end before it
        # lets the sync start, so a getheaders before the line is early.
        if done():
            break
        during.append(cmd)
        assert cmd != "getheaders", during
    if cmd != "getheaders":
        p.recv_until("getheaders", timeout=30)
    p.close()
    assert d.stop()[0] == 0


def test_core_answers_alike_during_its_reindex(tmp_path, make_bitcoind):
    """The reference for check_answers: a real bitcoind reindexing the
    same kind of chain answers getblockchaininfo throughout, with blocks
    rising under headers and initialblockdownload true until the tip."""
    core = core_with_chain(make_bitcoind, tmp_path, 1500, "answers")
    core2 = bitcoind.Bitcoind(core.binary, os.path.dirname(core.datadir), name=core.name,
                              args=("-reindex",))
    try:
        core2.wait_ready()
        seen = []
        while not seen or seen[-1][0] < 1500:
            t0 = time.monotonic()
            info = core2.rpc("getblockchaininfo")
            seen.append((info["blocks"], info["headers"], info["initialblockdownload"],
                         time.monotonic() - t0))
            time.sleep(0.05)
        check_answers(seen, 1500)
    finally:
        core2.stop()

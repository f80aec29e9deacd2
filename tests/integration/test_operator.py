"""An operator is never left guessing (issue 18): what peerd says when it
cannot do what a bitcoind would, compared with Bitcoin Core where both
answer the same question.

- warnings: a public-network peerd with no connect=/addnode= says it will
  stay at 0 peers, in the log, getnetworkinfo/getblockchaininfo `warnings`
  (an array, as Core 29's) and peerctl -getinfo;
- a failed manual connection is logged at the default level in Core's words;
- -debug=mempool / -debug=mempoolrej write Core's lines;
- getpeerinfo has Core's synced_blocks, inflight, last_block,
  last_transaction and permissions;
- bitcoind's options peerd lacks are refused ("not supported by peerd") or
  ignored with a warning, by one table, and doc/differences.md lists them;
- files peerd creates are the owner's alone (umask 077, as bitcoind);
- a taken P2P port names both peerd and bitcoind as the likely holder.
"""
import hashlib
import os
import re
import socket
import stat
import subprocess
import time

import pytest

from bitcoind import find_bitcoind, free_port, wait_until
from conftest import PEERCTL_BIN, PEERD_BIN, ROOT, frame

NO_PEERS = "No outbound peers: peerd does not discover peers"


def warnings_of(d):
    return d.rpc("getnetworkinfo")["warnings"], d.rpc("getblockchaininfo")["warnings"]


@pytest.mark.parametrize("chain", ["main", "testnet4"])
def test_public_network_without_peers_warns(make_peerd, chain):
    # Without DNS seeds and fixed seeds (doc/peers.md) nothing finds peers.
    d = make_peerd("-dnsseed=0", "-fixedseeds=0", chain=chain, listen=False)
    net, blockchain = warnings_of(d)
    assert isinstance(net, list) and len(net) == 1 and net[0].startswith(NO_PEERS), net
    assert blockchain == net
    assert re.search(r"^WARN \[main\] " + re.escape(NO_PEERS), d.log(), re.M), d.log()
    r = subprocess.run([PEERCTL_BIN, "-chain=" + chain, "-datadir=" + d.datadir, "-getinfo"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, r.stderr
    assert "Warnings:\n  " + NO_PEERS in r.stdout, r.stdout
    # A destination given at run time ends it; removing it brings it back.
    d.rpc("addnode", "127.0.0.1:1", "add")
    assert warnings_of(d) == ([], [])
    d.rpc("addnode", "127.0.0.1:1", "remove")
    assert warnings_of(d)[0] == net


def test_no_warning_when_peers_are_named_or_refused(make_peerd):
    # connect=0 says "no outbound" on purpose; regtest needs no discovery.
    assert warnings_of(make_peerd("-connect=0", chain="testnet4", listen=False)) == ([], [])
    assert warnings_of(make_peerd("-addnode=127.0.0.1:1", chain="main", listen=False)) == ([], [])
    # The seeds find peers (here the DNS seeds alone; the fixture's lookups go nowhere).
    assert warnings_of(make_peerd("-fixedseeds=0", chain="main", listen=False)) == ([], [])
    d = make_peerd(listen=False)
    assert warnings_of(d) == ([], [])
    assert "WARN" not in d.log(), d.log()


def test_help_says_what_connect_does():
    out = subprocess.run([PEERD_BIN, "-help"], capture_output=True, text=True, timeout=10).stdout
    text = " ".join(out.split("  -connect=", 1)[1].split("  -addnode=", 1)[0].split())
    assert "addnode= is then ignored" in text and "chooses its own outbound peers" in text, text
    assert "no automatic outbound connections" in text, text


def closed_port():
    return free_port()  # nothing listens there (and, in make test, no other pytest picks it)


def test_manual_connection_failure_logged_without_debug(make_peerd):
    port = closed_port()
    d = make_peerd("-connect=127.0.0.1:%d" % port, listen=False)
    line = "INFO [net] connect() to 127.0.0.1:%d failed after wait: Connection refused (111)" % port
    wait_until(lambda: line in d.log(), 5, "the failure in the log")


@pytest.mark.interop
def test_connection_failure_and_warnings_as_core(make_peerd, make_bitcoind):
    port = closed_port()
    core = make_bitcoind(1, args=("-connect=127.0.0.1:%d" % port,))[0]
    d = make_peerd("-connect=127.0.0.1:%d" % port, listen=False)
    text = "connect() to 127.0.0.1:%d failed after wait: Connection refused (111)" % port

    def core_logged():
        with open(core.debug_log) as f:
            return text in f.read()

    wait_until(core_logged, 10, "Core's line")
    wait_until(lambda: "INFO [net] " + text in d.log(), 5, "peerd's line")
    # The same shape of `warnings`: an array of strings.
    for method in ("getnetworkinfo", "getblockchaininfo"):
        theirs, ours = core.rpc(method)["warnings"], d.rpc(method)["warnings"]
        assert isinstance(theirs, list) and all(isinstance(w, str) for w in theirs), theirs
        assert isinstance(ours, list), ours


def raw_tx_missing_input():
    """A tx spending an output nobody has (61 bytes, no witness)."""
    return (bytes.fromhex("02000000") + b"\x01" + hashlib.sha256(b"nowhere").digest() +
            bytes(4) + b"\x00" + b"\xff" * 4 + b"\x01" + (1000).to_bytes(8, "little") +
            b"\x01\x51" + bytes(4))


def test_mempoolrej_logs_cores_line(make_peerd):
    d = make_peerd("-debug=mempoolrej")
    d.rpc("generatetodescriptor", 1, "raw(51)")  # out of IBD: Core ignores txs during it
    p = d.connected_peer()
    raw = raw_tx_missing_input()
    txid = hashlib.sha256(hashlib.sha256(raw).digest()).digest()[::-1].hex()
    p.send_raw(frame("tx", raw))
    p.sync_with_ping()
    want = re.compile(r"^DEBUG \[mempoolrej\] %s \(wtxid=%s\) from peer=\d+ was not accepted: \S+"
                      % (txid, txid), re.M)
    wait_until(lambda: want.search(d.log()), 5, "the mempoolrej line")
    p.close()


def test_debug_mempool_alone_logs_no_rejects(make_peerd):
    d = make_peerd("-debug=mempool")
    d.rpc("generatetodescriptor", 1, "raw(51)")
    p = d.connected_peer()
    p.send_raw(frame("tx", raw_tx_missing_input()))
    p.sync_with_ping()
    time.sleep(0.3)
    assert "was not accepted" not in d.log(), d.log()
    p.close()


@pytest.mark.interop
def test_mempool_accept_line_and_getpeerinfo_as_core(make_peerd, bitcoind_node):
    core = bitcoind_node
    core.create_wallet()
    addr = core.new_address("bech32")
    core.mine(101, addr)
    d = make_peerd("-debug=mempool", "-peertimeout=10", "-connect=127.0.0.1:%d" % core.port, listen=False)
    mine = wait_until(lambda: next((p for p in d.rpc("getpeerinfo") if p["synced_blocks"] == 101), None),
                      30, "peerd to sync 101 blocks")
    theirs = core.wait_for_peer(lambda p: p["inbound"] and p["version"] > 0, 10, "peerd on Core")
    for key in ("synced_headers", "synced_blocks", "inflight", "last_block", "last_transaction",
                "permissions"):
        assert type(mine[key]) is type(theirs[key]), (key, mine[key], theirs[key])
    assert mine["synced_headers"] == 101 and mine["inflight"] == [] and mine["permissions"] == []
    assert theirs["permissions"] == [] and theirs["inflight"] == []
    # Core's block after peerd's start: its time in last_block, as Core counts it.
    t0 = int(time.time())
    core.mine(1, addr)
    mine = wait_until(lambda: next((p for p in d.rpc("getpeerinfo") if p["synced_blocks"] == 102), None),
                      10, "block 102")
    assert t0 <= mine["last_block"] <= int(time.time()), mine
    assert mine["last_transaction"] == 0
    txid = core.send_to(core.new_address("bech32"), 1)
    wtxid = core.getmempoolentry(txid)["wtxid"]
    want = re.compile(r"^DEBUG \[mempool\] AcceptToMemoryPool: peer=\d+: accepted %s \(wtxid=%s\) "
                      r"\(poolsz 1 txn, \d+ kB\)$" % (txid, wtxid), re.M)
    # Core announces transactions to an inbound peer on a Poisson timer averaging 5 s
    # (INBOUND_INVENTORY_BROADCAST_INTERVAL): over 10 s about one time in seven.
    wait_until(lambda: want.search(d.log()), 60, "the mempool line")
    mine = next(p for p in d.rpc("getpeerinfo"))
    assert t0 <= mine["last_transaction"] <= int(time.time()), mine


def test_bind_conflict_names_peerd_and_bitcoind(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    port = s.getsockname()[1]
    try:
        (tmp_path / "dd").mkdir()
        r = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % (tmp_path / "dd"), "-bind=127.0.0.1",
                            "-port=%d" % port, "-logtimestamps=0"], capture_output=True, text=True, timeout=10)
    finally:
        s.close()
    assert r.returncode == 1
    want = ("Unable to bind to 127.0.0.1:%d on this computer (Address already in use): "
            "is another peerd or a bitcoind already running?" % port)
    assert want in r.stderr, r.stderr


def test_files_are_owner_only(make_peerd):
    old = os.umask(0o022)  # a usual login umask: peerd must not rely on it
    try:
        d = make_peerd("-debuglogfile=debug.log", "-pid=peerd.pid", listen=False)
    finally:
        os.umask(old)
    for name in ("debug.log", "peerd.pid", "banlist.json"):
        path = os.path.join(d.netdir, name)
        if name == "banlist.json":
            d.rpc("setban", "10.1.2.3", "add")
            d.stop()
        mode = stat.S_IMODE(os.stat(path).st_mode)
        assert mode == 0o600, "%s is %o" % (name, mode)
    assert stat.S_IMODE(os.stat(d.netdir).st_mode) & 0o077 == 0


# ---- bitcoind's options ------------------------------------------------------

def peerd_options():
    out = subprocess.run([PEERD_BIN, "-help"], capture_output=True, text=True, timeout=10).stdout
    return set(re.findall(r"^  -([a-z0-9-]+)", out, re.M))


def test_core_option_refused_or_ignored(make_peerd, tmp_path):
    (tmp_path / "dd").mkdir()
    base = [PEERD_BIN, "-regtest", "-datadir=%s" % (tmp_path / "dd"), "-listen=0"]
    # Safety first: a Core option that changes what is kept is refused...
    r = subprocess.run(base + ["-maxuploadtarget=500"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 1
    assert "command line: -maxuploadtarget=500: not supported by peerd" in r.stderr, r.stderr
    # ...in the file too, naming the line...
    conf = tmp_path / "dd" / "peerd.conf"
    conf.write_text("regtest=1\ncoinstatsindex=1\n")
    r = subprocess.run(base, capture_output=True, text=True, timeout=10)
    assert r.returncode == 1 and "peerd.conf:2: coinstatsindex=1: not supported by peerd" in r.stderr, r.stderr
    conf.unlink()
    # ...and a name nobody has is still unknown.
    r = subprocess.run(base + ["-prunee=1"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 1 and "unknown option" in r.stderr, r.stderr
    # What peerd does anyway (maxuploadtarget=0) and what cannot matter (rpcdoccheck) start, with a warning.
    d = make_peerd("-maxuploadtarget=0", "-rpcdoccheck=1", "-nonatpmp", listen=False)
    log = d.log()
    for arg in ("-maxuploadtarget=0", "-rpcdoccheck=1", "-nonatpmp"):
        assert re.search(r"^WARN \[main\] command line: %s: ignored, a bitcoind option" % arg, log, re.M), log


def test_every_core_option_has_a_row_and_a_doc_line(tmp_path):
    binary, why = find_bitcoind()
    if binary is None:
        pytest.skip(why)
    out = subprocess.run([binary, "-help", "-help-debug"], capture_output=True, text=True, timeout=30).stdout
    core = set(re.findall(r"^  -([a-z0-9-]+)", out, re.M))
    missing = sorted(core - peerd_options())
    assert len(missing) > 50, missing
    with open(os.path.join(ROOT, "doc", "differences.md")) as f:
        doc = f.read()
    (tmp_path / "dd").mkdir()
    bad = []
    for name in missing:
        # -help after it: an ignored option lets -help print; a refused one stops first.
        r = subprocess.run([PEERD_BIN, "-datadir=%s" % (tmp_path / "dd"), "-%s=1" % name, "-help"],
                           capture_output=True, text=True, timeout=10)
        if not (r.returncode == 0 or "not supported by peerd" in r.stderr):
            bad.append((name, r.stderr.strip()))
        if "`%s`" % name not in doc:
            bad.append((name, "not in doc/differences.md"))
    assert not bad, bad

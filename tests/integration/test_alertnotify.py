"""-alertnotify and Core's unknown-versionbits warning; -blocknotify during
a reindex (daemon/ctl/warnings.c, chain/versionbits.c, daemon/notify/, issue 23).

Core 29 watches every version bit no deployment it knows uses (its
WarningBitsConditionChecker): one that the blocks lock in (108 of a
regtest period of 144) and then activate sets the warning "Unknown new
rules activated (versionbit N)" in getblockchaininfo, getnetworkinfo and
getmininginfo, and runs -alertnotify with it once. A real bitcoind mines
the blocks with -blockversion (a regtest test option) and runs its own
-alertnotify: peerd, synced from it on loopback, must show the same
warning and run its command once with the same message. And Core's rule
that -blocknotify never runs for the blocks a reindex connects.
"""
import os
import re
import time

from conftest import wait_for

OP_TRUE_ADDR = "bcrt1qft5p2uhsdcdc3l2ua4ap5qqfg4pjaqlp250x7us7a8qqhrxrxfsqseac85"
PERIOD = 144
UNKNOWN_BIT = 27
UNKNOWN_VERSION = 0x20000000 | (1 << UNKNOWN_BIT)
# The bitcoind in shared/bin is a pre-release build: Core adds this warning
# to every answer; it is not about the chain.
PRE_RELEASE = "This is a pre-release test build"


def lines(path):
    return path.read_text().splitlines() if path.exists() else []


def chain_warnings(node):
    out = {}
    for m in ("getblockchaininfo", "getnetworkinfo", "getmininginfo"):
        out[m] = [w for w in node.rpc(m)["warnings"] if not w.startswith(PRE_RELEASE)]
    return out


def test_unknown_versionbit_warning_and_alertnotify(make_bitcoind, make_peerd, tmp_path):
    core_alert = tmp_path / "core_alert"
    ours_alert = tmp_path / "peerd_alert"
    (core,) = make_bitcoind(1, args=("-blockversion=%d" % UNKNOWN_VERSION,
                                     "-alertnotify=echo %%s >> %s" % core_alert))
    d = make_peerd("-connect=0", "-alertnotify=echo %%s >> %s" % ours_alert)
    # Locked in by the second period (heights 144..287), active from the
    # third: the warning holds from the tip at 431 on. One block short of
    # that, neither node warns.
    core.rpc("generatetoaddress", 3 * PERIOD - 2, OP_TRUE_ADDR)
    d.rpc("addnode", "127.0.0.1:%d" % core.port, "onetry")
    wait_for(lambda: d.rpc("getblockcount") == 3 * PERIOD - 2, timeout=30, what="peerd to sync")
    assert d.rpc("getblockheader", d.rpc("getbestblockhash"))["version"] == UNKNOWN_VERSION
    time.sleep(0.5)
    assert chain_warnings(core) == {m: [] for m in ("getblockchaininfo", "getnetworkinfo", "getmininginfo")}
    assert chain_warnings(d) == chain_warnings(core)
    assert lines(ours_alert) == [] and lines(core_alert) == []
    # Locked in, not active: both name it on the UpdateTip line only.
    locked = " warning='Unknown new rules activated (versionbit %d)'" % UNKNOWN_BIT
    for log in (open(core.debug_log).read(), d.log()):
        tip = [ln for ln in log.splitlines() if "UpdateTip: " in ln and " height=%d " % (3 * PERIOD - 2) in ln]
        assert tip and tip[-1].endswith(locked), tip
        early = [ln for ln in log.splitlines() if "UpdateTip: " in ln and " height=286 " in ln]
        assert early and "warning=" not in early[-1], early

    # The block at 431: active for the next; both warn, both run the command.
    core.rpc("generatetoaddress", 1, OP_TRUE_ADDR)
    wait_for(lambda: d.rpc("getblockcount") == 3 * PERIOD - 1, timeout=30, what="peerd to sync")
    wait_for(lambda: lines(core_alert), timeout=10, what="bitcoind's -alertnotify")
    wait_for(lambda: lines(ours_alert), timeout=10, what="peerd's -alertnotify")
    expect = "Unknown new rules activated (versionbit %d)" % UNKNOWN_BIT
    assert lines(core_alert) == [expect]
    assert lines(ours_alert) == lines(core_alert)
    want = chain_warnings(core)
    assert want["getblockchaininfo"] == [expect], want
    assert chain_warnings(d) == want
    assert "Warning: " + expect in d.log()

    # More blocks: the warning stays, the command does not run again.
    core.rpc("generatetoaddress", 3, OP_TRUE_ADDR)
    wait_for(lambda: d.rpc("getblockcount") == 3 * PERIOD + 2, timeout=30, what="peerd to sync")
    time.sleep(1.0)
    assert lines(core_alert) == [expect]
    assert lines(ours_alert) == [expect]
    assert chain_warnings(d) == chain_warnings(core)


def test_blocknotify_not_during_reindex(make_peerd, tmp_path):
    """Core's -blocknotify skips what a reindex connects (its tip updates
    are not POST_INIT); the first new block after it runs the command."""
    d = make_peerd(listen=False)
    mined = d.rpc("generatetoaddress", 12, OP_TRUE_ADDR)
    assert d.stop()[0] == 0
    name = os.path.basename(d.datadir)
    tip = mined[-1]
    for i, opt in enumerate(("-reindex", "-reindex-chainstate")):
        out = tmp_path / ("blocks%d" % i)
        r = make_peerd(opt, "-blocknotify=echo %%s >> %s" % out, listen=False, name=name)
        # The reindex runs after the start (daemon/node/reindex.c).
        wait_for(lambda: re.search(r"Reindex( of the chain state)? done in", r.log()), timeout=60,
                 what="the reindex")
        assert r.rpc("getblockcount") == len(mined) + i
        assert r.rpc("getbestblockhash") == tip
        assert "Reindex" in r.log()
        time.sleep(1.0)
        assert lines(out) == [], "blocknotify ran during %s" % opt
        # The command itself works: the next block runs it once.
        fresh = r.rpc("generatetoaddress", 1, OP_TRUE_ADDR)
        wait_for(lambda: lines(out), timeout=10, what="blocknotify for a new block")
        time.sleep(0.5)
        assert lines(out) == fresh
        tip = fresh[0]
        assert r.stop()[0] == 0

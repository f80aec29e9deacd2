"""Core's mempool and relay-policy options (-maxmempool, -minrelaytxfee,
-incrementalrelayfee, -dustrelayfee, -datacarriersize, -permitbaremultisig,
-mempoolexpiry, ...): peerd and a bitcoind started with the same options
answer getmempoolinfo and testmempoolaccept alike; bad values are refused
at startup with Core's messages, naming the key.
"""
import os
import subprocess
import time
from decimal import Decimal

import pytest

import bitcoind
from conftest import BUILD, Peerd, stop_core_and_peerd
from mempool_craft import TRUE, OP_1, OP_CHECKMULTISIG, op_return, p2wsh, script
from mempool_parity_env import COIN, KEY, answer, norm, SPK, spend, start_env

PEERD = BUILD + "/bin/peerd"

OPTS = ("-maxmempool=7", "-minrelaytxfee=0.00002", "-incrementalrelayfee=0.00003",
        "-dustrelayfee=0.0001", "-datacarriersize=40", "-permitbaremultisig=0",
        "-mempoolexpiry=100", "-bytespersigop=30")


def start_fails(tmp_path, *args):
    """peerd's exit code and stderr for a start that must fail at the config."""
    p = subprocess.run([PEERD, "-regtest", "-datadir=%s" % tmp_path, "-printtoconsole=1", *args],
                       capture_output=True, text=True, timeout=30)
    return p.returncode, p.stderr


@pytest.mark.parametrize("args,msg", [
    (("-maxmempool=4",), "-maxmempool must be at least 5 MB"),
    (("-limitdescendantsize=200", "-maxmempool=7"), "-maxmempool must be at least 8 MB"),
    (("-minrelaytxfee=abc",), "Invalid amount for -minrelaytxfee=<amount>: 'abc'"),
    (("-dustrelayfee=-1",), "Invalid amount for -dustrelayfee=<amount>: '-1'"),
    (("-incrementalrelayfee=1.123456789",),
     "Invalid amount for -incrementalrelayfee=<amount>: '1.123456789'"),
    (("-minrelaytxfee=21000001",), "Invalid amount for -minrelaytxfee=<amount>: '21000001'"),
    (("-datacarriersize=abc",), "datacarriersize=abc: not a number"),
    (("-permitbaremultisig=2",), "permitbaremultisig=2: not 0 or 1"),
])
def test_config_errors(tmp_path, args, msg):
    rc, err = start_fails(tmp_path, *args)
    assert rc != 0 and msg in err, (rc, err)


def test_acceptnonstdtxn_refused_on_main(tmp_path):
    p = subprocess.run([PEERD, "-datadir=%s" % tmp_path, "-acceptnonstdtxn=1", "-connect=0"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode != 0
    assert "acceptnonstdtxn is not currently supported for main chain" in p.stderr, p.stderr


def test_help_lists_the_keys():
    out = subprocess.run([PEERD, "-help"], capture_output=True, text=True, timeout=30).stdout
    for k in ("maxmempool", "mempoolexpiry", "persistmempool", "minrelaytxfee", "incrementalrelayfee",
              "dustrelayfee", "permitbaremultisig", "datacarrier", "datacarriersize", "acceptnonstdtxn",
              "bytespersigop", "limitancestorcount", "limitdescendantsize"):
        assert "-%s=" % k in out, k


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """Core and peerd both started with OPTS on the same tip; coins of the kinds below."""
    e = start_env(tmp_path_factory, "mpopts", core_args=("-acceptnonstdtxn=0",) + OPTS, peerd_args=OPTS)
    try:
        e.mine(101)
        e.pools["wsh_true"] = []
        for _ in range(2):
            e.pools["wsh_true"] += e.fund([(COIN // 5, SPK["wsh_true"])] * 60, ["wsh_true"] * 60)
        yield e
    finally:
        stop_core_and_peerd(e.core, e.peerd)




@pytest.mark.interop
def test_getmempoolinfo_reflects_options(env):
    a = env.core.rpc("getmempoolinfo")
    b = norm(env.peerd.rpc("getmempoolinfo"))
    assert a["maxmempool"] == 7_000_000
    assert a["minrelaytxfee"] == Decimal("0.00002") and a["incrementalrelayfee"] == Decimal("0.00003")
    for k in ("maxmempool", "minrelaytxfee", "incrementalrelayfee", "mempoolminfee"):
        assert b[k] == a[k], (k, a[k], b[k])


@pytest.mark.interop
def test_datacarriersize(env):
    # 40 bytes of script: 1 + push(38) fits; 1 + push(39) does not.
    c1, c2 = env.take_n("wsh_true", 2)
    env.accept(spend([c1], [(c1.value - 20000, p2wsh(TRUE)), (0, op_return(38))]))
    env.reject(spend([c2], [(c2.value - 20000, p2wsh(TRUE)), (0, op_return(39))]), "scriptpubkey")


@pytest.mark.interop
def test_bare_multisig_refused(env):
    c = env.take("wsh_true")
    env.reject(spend([c], [(c.value - 20000, script(OP_1, KEY.pub, OP_1, OP_CHECKMULTISIG))]),
               "bare-multisig")


@pytest.mark.interop
def test_dustrelayfee(env):
    # At 0.0001 BTC/kvB a P2WSH output's dust threshold is 10x the default's 330: 1,100 sats.
    c1, c2 = env.take_n("wsh_true", 2)
    env.reject(spend([c1], [(c1.value - 21000, p2wsh(TRUE)), (1000, p2wsh(TRUE))]), "dust")
    env.accept(spend([c2], [(c2.value - 21100, p2wsh(TRUE)), (1100, p2wsh(TRUE))]))


@pytest.mark.interop
def test_minrelaytxfee(env):
    # 96 vB: 150 sats is under 2 sat/vB (192), 200 is over; both over the default 1 sat/vB.
    c1, c2 = env.take_n("wsh_true", 2)
    r = env.reject(spend([c1], fee=150), "min relay fee not met")
    assert r["reject-details"] == "min relay fee not met, 150 < 192", r
    env.accept(spend([c2], fee=200))


def synced(env, node):
    """node (a Peerd or a Bitcoind) fed env's Core's blocks by submitblock."""
    call = node.rpc
    for h in range(call("getblockcount") + 1, env.core.getblockcount() + 1):
        assert call("submitblock", env.core.getblock(env.core.getblockhash(h), 0)) is None
    assert call("getbestblockhash") == env.core.getbestblockhash()
    return node


@pytest.mark.interop
def test_persistmempool_off(env, tmp_path):
    """-persistmempool=0: no mempool.dat at shutdown, an empty mempool after a restart;
    the default keeps it (the control that the test can fail)."""
    c1, c2 = env.take_n("wsh_true", 2)
    for args, tx, kept in ((("-persistmempool=0",), spend([c1]), 0), ((), spend([c2]), 1)):
        name = "p%d" % kept
        p = synced(env, Peerd(tmp_path, name=name, listen=False, args=args))
        p.rpc("sendrawtransaction", tx.hex())
        assert p.rpc("getmempoolinfo")["size"] == 1
        rc, _ = p.stop(timeout=15)
        assert rc == 0, p.log()
        assert os.path.exists(os.path.join(p.netdir, "mempool.dat")) == bool(kept)
        p = Peerd(tmp_path, name=name, listen=False, args=args)
        try:
            assert p.rpc("getmempoolinfo")["size"] == kept
        finally:
            p.stop(timeout=15)


@pytest.mark.interop
def test_acceptnonstdtxn_on_regtest(env, tmp_path):
    """-acceptnonstdtxn=1: Core and peerd both take a version-4 transaction (and a
    bare multisig output, despite -permitbaremultisig=0: Core skips IsStandardTx)."""
    args = ("-acceptnonstdtxn=1",) + OPTS
    core = bitcoind.Bitcoind(env.binary, tmp_path / "core", name="core1", args=args)
    p = None
    try:
        core.wait_ready()
        synced(env, core)
        p = synced(env, Peerd(tmp_path, name="nonstd", listen=False, args=args))
        c1, c2 = env.take_n("wsh_true", 2)
        t1 = spend([c1], version=4)
        t2 = spend([c2], [(c2.value - 20000, script(OP_1, KEY.pub, OP_1, OP_CHECKMULTISIG))])
        env.reject(t1, "version")  # the standard pair refuses it
        for t in (t1, t2):
            a = core.rpc("testmempoolaccept", [t.hex()])
            b = norm(p.rpc("testmempoolaccept", [t.hex()]))
            assert a[0]["allowed"] is True, a
            assert b == a, (b, a)
        # -bytespersigop=30 (in OPTS): the bare CHECKMULTISIG output counts 20 legacy
        # sigops, cost 80, so vsize is 80 x 30 / 4 = 600 for both.
        assert core.rpc("testmempoolaccept", [t2.hex()])[0]["vsize"] == 600
    finally:
        if p is not None:
            p.stop(timeout=15)
        core.stop()
        core.kill()


@pytest.mark.interop
def test_maxmempool_eviction(env, tmp_path):
    """-maxmempool=5: the same big transactions (2,000 outputs, ~86 kvB each) at
    shuffled feerates go to a Core and a peerd started alike. peerd counts
    memory as Core does, so both must answer every send the same (accepted, or
    "mempool min fee not met" / "mempool full" alike), keep the same set,
    report the same usage (at most 5 MB) and raise mempoolminfee alike, to at
    least the highest evicted feerate; eviction goes lowest feerate first."""
    args = ("-maxmempool=5",)
    core = bitcoind.Bitcoind(env.binary, tmp_path / "core", name="core2", args=args)
    p = None
    try:
        core.wait_ready()
        synced(env, core)
        p = synced(env, Peerd(tmp_path, name="full", listen=False, args=args))
        n = 70
        rates = [2 + (i * 17) % n for i in range(n)]  # sat/vB, a permutation of 2..71
        sent = []
        answers = {"Core": [], "peerd": []}
        for i, coin in enumerate(env.take_n("wsh_true", n)):
            outs = [(1200, p2wsh(TRUE))] * 2000
            vsize = spend([coin], outs + [(0, p2wsh(TRUE))]).vsize
            t = spend([coin], outs + [(coin.value - 1200 * 2000 - rates[i] * vsize, p2wsh(TRUE))])
            sent.append((t.txid, rates[i]))
            answers["Core"].append(answer(lambda: core.rpc("sendrawtransaction", t.hex())))
            answers["peerd"].append(answer(lambda: p.rpc("sendrawtransaction", t.hex())))
            assert answers["peerd"][-1] == answers["Core"][-1], (i, rates[i], answers["Core"][-1],
                                                                 answers["peerd"][-1])
        infos, pools = {}, {}
        for name, node in (("Core", core), ("peerd", p)):
            info = norm(node.rpc("getmempoolinfo"))
            infos[name] = info
            pool = pools[name] = set(node.rpc("getrawmempool"))
            errors = [a for a in answers[name] if isinstance(a, tuple)]
            accepted = [(txid, r) for (txid, r), a in zip(sent, answers[name]) if not isinstance(a, tuple)]
            evicted = [r for txid, r in accepted if txid not in pool]
            kept = [r for txid, r in accepted if txid in pool]
            assert errors and evicted, (name, info)
            assert all(e[1] == -26 and (e[2] == "mempool full" or e[2].startswith("mempool min fee not met"))
                       for e in errors), (name, errors)
            assert info["usage"] <= 5_000_000 and info["maxmempool"] == 5_000_000, (name, info)
            assert min(kept) > max(evicted), (name, sorted(kept), sorted(evicted))
            assert info["mempoolminfee"] * 100_000 >= max(evicted), (name, info, max(evicted))
        assert pools["peerd"] == pools["Core"]
        for k in ("size", "bytes", "usage", "mempoolminfee", "minrelaytxfee"):
            assert infos["peerd"][k] == infos["Core"][k], (k, infos["Core"], infos["peerd"])
    finally:
        if p is not None:
            p.stop(timeout=15)
        core.stop()
        core.kill()


def age_mempool_dat(path, tx_len, age):
    """Core's mempool.dat (version 2, XOR key) of one transaction of tx_len bytes, with
    that entry's time moved `age` seconds into the past."""
    import struct
    d = bytearray(open(path, "rb").read())
    assert struct.unpack_from("<Q", d, 0)[0] == 2 and d[8] == 8, d[:9].hex()
    key = d[9:17]
    at = 17 + 8 + tx_len  # after the count and the transaction: the entry's time

    def xor(pos, data):
        return bytes(b ^ key[(pos + i) % 8] for i, b in enumerate(data))
    assert struct.unpack("<q", xor(17, d[17:25]))[0] == 1
    t = struct.unpack("<q", xor(at, d[at:at + 8]))[0]
    assert abs(t - time.time()) < 600, t  # really the entry's time
    d[at:at + 8] = xor(at, struct.pack("<q", t - age))
    return bytes(d)


@pytest.mark.interop
def test_mempoolexpiry(env, tmp_path):
    """-mempoolexpiry in hours: neither peerd nor Core has a settable clock here, so the
    entry is aged in Core's mempool.dat instead (2 hours back) and both nodes load it:
    with -mempoolexpiry=1 both drop it, with -mempoolexpiry=3 both keep it."""
    core = bitcoind.Bitcoind(env.binary, tmp_path / "core", name="core3")
    p = None
    try:
        core.wait_ready()
        synced(env, core)
        p = synced(env, Peerd(tmp_path, name="exp", listen=False))
        t = spend([env.take("wsh_true")])
        assert core.rpc("sendrawtransaction", t.hex()) == p.rpc("sendrawtransaction", t.hex())
        core.stop()
        p.stop(timeout=15)
        core_dat = os.path.join(core.datadir, "regtest", "mempool.dat")
        aged = age_mempool_dat(core_dat, len(t.ser()), 7200)
        for hours, want in ((1, 0), (3, 1)):
            args = ("-mempoolexpiry=%d" % hours,)
            open(core_dat, "wb").write(aged)
            open(os.path.join(p.netdir, "mempool.dat"), "wb").write(aged)
            core = bitcoind.Bitcoind(env.binary, tmp_path / "core", name="core3", args=args)
            core.wait_ready()
            p = Peerd(tmp_path, name="exp", listen=False, args=args)
            deadline = time.time() + 30  # Core loads mempool.dat in the background
            while not core.rpc("getmempoolinfo")["loaded"]:
                assert time.time() < deadline, "Core did not load mempool.dat"
                time.sleep(0.1)
            assert p.rpc("getmempoolinfo")["loaded"] is True
            sizes = (core.rpc("getmempoolinfo")["size"], p.rpc("getmempoolinfo")["size"])
            assert sizes == (want, want), (hours, sizes)
            core.stop()
            p.stop(timeout=15)
    finally:
        if p is not None:
            p.stop(timeout=15)
        core.stop()
        core.kill()

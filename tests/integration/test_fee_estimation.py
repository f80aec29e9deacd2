"""Fee estimation beside Core's (issue 25): one regtest bitcoind and one
peerd are given the same transactions (sendrawtransaction to both) and the
same blocks (Core's generateblock with the transactions the test picks,
then submitblock into peerd), so that both estimators hear the same
events in the same order. Over 220 blocks, transactions at varied
feerates wait for varied numbers of blocks (the block takes the best few
of the pool), some spend a parent still in the pool (not tracked), some
are replaced (RBF: no longer tracked). Then estimatesmartfee (both modes,
and the default) and estimaterawfee (several thresholds) must answer as
Core for every target asked, errors included; fee_estimates.dat written
by each loads into the other and answers the same again.
"""
import json
import os
import random
import shutil
import subprocess
import time
from decimal import Decimal

import pytest

import bitcoind
from conftest import PEERD_BIN, Peerd, save_failure_logs, stop_core_and_peerd
from mempool_craft import Coin, Tx, TRUE, p2wsh
from mempool_parity_env import answer, ordered

COIN = 100_000_000
SPK = p2wsh(TRUE)
DESC = "raw(%s)" % SPK.hex()
TARGETS = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 13, 15, 20, 24, 25, 30, 48, 49, 50, 100, 144, 300,
           500, 1000, 1008)
MODES = (None, "economical", "conservative", "ECONOMICAL", "unset")
THRESHOLDS = (None, 0.5, 0.6, 0.85, 0.95, 1)
ERRORS = (("estimatesmartfee", 0), ("estimatesmartfee", 1009), ("estimatesmartfee", -1),
          ("estimatesmartfee", 2, "fast"), ("estimaterawfee", 0), ("estimaterawfee", 1009),
          ("estimaterawfee", 2, 1.5), ("estimaterawfee", 2, -0.1), ("estimatesmartfee", 2.5),
          ("estimatesmartfee", "2"), ("estimatesmartfee", 2, 5), ("estimaterawfee", 2, "0.5"),
          ("estimatesmartfee", 4294967298))
# A wrong count of arguments: Core's -1 with the method's help, whose first line (the usage)
# is compared (peerd's help text is its own below it).
WRONG_COUNT = (("estimatesmartfee",), ("estimaterawfee",), ("estimatesmartfee", 2, "economical", 1))


def text(v):
    """Numbers as the text the node printed (Decimal keeps it), so that 1000 and 1000.0, or
    9.800000000000001 and 9.8, differ: peerd prints Core's UniValue numbers."""
    if isinstance(v, Decimal):
        return ("num", str(v))
    if isinstance(v, dict):
        return {k: text(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(text(x) for x in v)
    return v


def peerd_exact(peerd, method, *params):
    """peerd's answer with its numbers as written (Decimal), errors as answer() gives them."""
    c = peerd.ctl()
    c.send_line(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})
                + "\n")
    while b"\n" not in c.buf:
        data = c.sock.recv(65536)
        assert data, "control socket closed"
        c.buf += data
    line, c.buf = c.buf.split(b"\n", 1)
    r = json.loads(line, parse_float=Decimal)
    if "error" in r:
        return ("error", r["error"]["code"], r["error"]["message"])
    return r["result"]


class Pair:
    def __init__(self, core, peerd):
        self.core, self.peerd = core, peerd

    def both(self, method, *params):
        """Both answers (peerd's numbers as Decimals, errors as tuples), asserted equal."""
        a = answer(lambda: self.core.rpc(method, *params))
        b = peerd_exact(self.peerd, method, *params)
        assert ordered(text(b)) == ordered(text(a)), \
            "%s%r: peerd answered\n  %r\nCore answered\n  %r" % (method, params, b, a)
        return a

    def send(self, t):
        txid = self.both("sendrawtransaction", t.hex())
        assert txid == t.txid, txid
        return txid

    def mine(self, txids):
        """One block of exactly txids (Core's generateblock), into peerd too."""
        h = self.core.rpc("generateblock", DESC, list(txids))["hash"]
        r = self.peerd.rpc("submitblock", self.core.getblock(h, 0))
        assert r is None, r
        return h

    def compare_all(self):
        n = 0
        for t in TARGETS:
            for m in MODES:
                self.both("estimatesmartfee", *((t,) if m is None else (t, m)))
                n += 1
            for th in THRESHOLDS:
                self.both("estimaterawfee", *((t,) if th is None else (t, th)))
                n += 1
        for call in ERRORS:
            r = self.both(*call)
            assert isinstance(r, tuple) and r[0] == "error", r
            n += 1
        for call in WRONG_COUNT:
            a = answer(lambda: self.core.rpc(*call))
            b = peerd_exact(self.peerd, *call)
            assert a[:2] == b[:2] == ("error", -1), (a, b)
            assert a[2].split("\n")[0] == b[2].split("\n")[0], (a, b)
            n += 1
        return n


def spend(coin, feerate, outs=1):
    """coin spent to `outs` P2WSH(OP_TRUE) outputs at feerate sat/vB."""
    t = Tx()
    t.add_in(coin, 0xFFFFFFFD)
    for _ in range(outs):
        t.add_out(0, SPK)
    t.sign(None)
    fee = feerate * t.vsize
    each = (coin.value - fee) // outs
    for o in t.vout:
        o[0] = each
    return t.sign(None)


@pytest.fixture
def pair(tmp_path):
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    core = peerd = None
    try:
        core = bitcoind.Bitcoind(binary, tmp_path / "core", name="core0", args=("-disablewallet=1",))
        core.wait_ready()
        peerd = Peerd(tmp_path, name="peerd", listen=False)
        p = Pair(core, peerd)
        p.tmp = tmp_path
        yield p
    except BaseException:
        save_failure_logs("fee_estimation", core, peerd)
        raise
    finally:
        stop_core_and_peerd(core, p.peerd if "p" in locals() else peerd)


def test_fee_estimation_beside_core(pair):
    t0 = time.time()
    core = pair.core
    # 110 blocks to OP_TRUE: the first ten coinbases mature.
    for h in core.rpc("generatetodescriptor", 110, DESC):
        assert pair.peerd.rpc("submitblock", core.getblock(h, 0)) is None
    coins = []
    fan = []
    for h in range(1, 7):
        cb = core.getblock(core.getblockhash(h), 2)["tx"][0]
        c = Coin(cb["txid"], 0, int(cb["vout"][0]["value"] * COIN), SPK, "wsh_true")
        t = spend(c, 2, outs=150)
        fan.append(pair.send(t))
        coins += [t.out(i) for i in range(150)]
    pair.mine(fan)

    rng = random.Random(25)
    live = {}  # txid -> (Tx, coin, feerate): what the test sent and no block took yet
    has_child = set()
    rounds = 220
    for r in range(rounds):
        for _ in range(rng.randint(1, 5)):
            rate = int(rng.lognormvariate(2.5, 0.9)) + 1
            coin = coins.pop()
            t = spend(coin, rate)
            live[pair.send(t)] = (t, coin, rate)
        # Now and then a child of a pool transaction (not tracked: a parent in the pool).
        parents = sorted(k for k, v in live.items() if v[2] is not None and k not in has_child)
        if r % 7 == 3 and parents:
            ptxid = rng.choice(parents)
            has_child.add(ptxid)
            pt = live[ptxid][0]
            ct = spend(pt.out(0), rng.randint(5, 40))
            live[pair.send(ct)] = (ct, pt.out(0), None)
        # Now and then a package (submitpackage: neither member is tracked).
        if r % 5 == 2:
            pt = spend(coins.pop(), 300)
            ct = spend(pt.out(0), 300)
            hexes = [pt.hex(), ct.hex()]
            for res in (core.rpc("submitpackage", hexes), pair.peerd.rpc("submitpackage", hexes)):
                assert res["package_msg"] == "success", res
        # Now and then a replacement (the replaced one leaves untracked).
        if r % 11 == 5:
            cands = sorted(k for k, v in live.items() if v[2] is not None and k not in has_child)
            if cands:
                old = rng.choice(cands)
                ot, ocoin, orate = live.pop(old)
                nt = spend(ocoin, orate * 2 + 2)
                live[pair.send(nt)] = (nt, ocoin, orate * 2 + 2)
        # The block takes the pool's best few by feerate, parents first.
        pool = core.getrawmempool(True)
        order = sorted(pool, key=lambda k: (-pool[k]["fees"]["base"] / pool[k]["vsize"], k))
        take = []
        for k in order[:rng.randint(0, 6)]:
            take += [d for d in pool[k]["depends"] + [k] if d not in take]
        if r % 50 == 49:
            take = []  # an empty block now and then: everything waits
        pair.mine(take)
        for k in take:
            live.pop(k, None)
        if r == 150:
            # A two-block reorg: the blocks' transactions return to both pools (not
            # tracked again), the new blocks at heights already seen are not counted.
            gone = core.getblockhash(core.getblockcount() - 1)
            core.invalidateblock(gone)
            assert pair.peerd.rpc("invalidateblock", gone) is None
            assert sorted(pair.peerd.rpc("getrawmempool")) == sorted(core.getrawmempool())
            # A new transaction makes the first new block differ from the old one.
            fresh = spend(coins.pop(), 3)
            pair.send(fresh)
            pair.mine([fresh.txid])
            pair.mine([])
            pair.mine([])
    assert core.getblockcount() == 111 + rounds + 1
    n = pair.compare_all()
    # The estimates are not all empty: the test compared real answers.
    smart = core.estimatesmartfee(6)
    assert "feerate" in smart, smart
    raw = core.estimaterawfee(12)
    assert "feerate" in raw["short"], raw
    print("fee estimation: %d answers equal after %d blocks, %.1f s" % (n, rounds, time.time() - t0))


def test_fee_estimates_file_both_ways(pair):
    """fee_estimates.dat: Core's file read by peerd answers as Core, and peerd's as Core's."""
    core = pair.core
    for h in core.rpc("generatetodescriptor", 105, DESC):
        assert pair.peerd.rpc("submitblock", core.getblock(h, 0)) is None
    coins = []
    for h in range(1, 3):
        cb = core.getblock(core.getblockhash(h), 2)["tx"][0]
        c = Coin(cb["txid"], 0, int(cb["vout"][0]["value"] * COIN), SPK, "wsh_true")
        t = spend(c, 2, outs=120)
        pair.send(t)
        coins += [t.out(i) for i in range(120)]
    pair.mine(core.getrawmempool())
    rng = random.Random(7)
    for r in range(60):
        for _ in range(3):
            pair.send(spend(coins.pop(), rng.randint(1, 60)))
        pool = core.getrawmempool(True)
        order = sorted(pool, key=lambda k: -pool[k]["fees"]["base"] / pool[k]["vsize"])
        pair.mine(order[:rng.randint(1, 4)])
    pair.compare_all()
    # Both stop (each flushes what is still pending as unconfirmed, then writes).
    core_file = os.path.join(core.datadir, "regtest", "fee_estimates.dat")
    peerd_file = os.path.join(pair.peerd.netdir, "fee_estimates.dat")
    core.stop()
    rc, _ = pair.peerd.stop(timeout=15)
    assert rc == 0, pair.peerd.log()
    a, b = open(core_file, "rb").read(), open(peerd_file, "rb").read()
    # Equal but for the field Core 29 writes and no longer reads (bytes 4..8).
    assert a[:4] == b[:4] and a[8:] == b[8:], (len(a), len(b))
    # Swapped: each starts with the other's file, on the same chain, with an empty pool.
    shutil.copy(core_file, peerd_file + ".core")
    shutil.copy(peerd_file, core_file)
    os.replace(peerd_file + ".core", peerd_file)
    pair.core = core = bitcoind.Bitcoind(core.binary, pair.tmp / "core", name="core0",
                                         args=("-disablewallet=1", "-persistmempool=0"))
    core.wait_ready()
    pair.peerd = Peerd(pair.tmp, name="peerd", listen=False, args=("-persistmempool=0",))
    pair.compare_all()
    # A file older than 60 hours is not read; -acceptstalefeeestimates reads it (regtest).
    rc, _ = pair.peerd.stop(timeout=15)
    assert rc == 0
    shutil.copy(peerd_file, peerd_file + ".keep")
    old = time.time() - 61 * 3600
    os.utime(peerd_file, (old, old))
    pair.peerd = Peerd(pair.tmp, name="peerd", listen=False, args=("-persistmempool=0",))
    r = pair.peerd.rpc("estimaterawfee", 12)
    assert "feerate" not in r["short"], r
    assert "too old (age=61 > 60 hours)" in pair.peerd.log()
    rc, _ = pair.peerd.stop(timeout=15)
    assert rc == 0
    # That peerd wrote its empty estimates at shutdown, as Core would: the old file again.
    os.replace(peerd_file + ".keep", peerd_file)
    os.utime(peerd_file, (old, old))
    pair.peerd = Peerd(pair.tmp, name="peerd", listen=False,
                       args=("-persistmempool=0", "-acceptstalefeeestimates=1"))
    pair.compare_all()


def test_fee_estimation_disabled_under_blocksonly(tmp_path):
    """-blocksonly: no estimator, Core's error for both methods; -acceptstalefeeestimates
    off regtest: Core's start error."""
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    core = peerd = None
    try:
        core = bitcoind.Bitcoind(binary, tmp_path / "core", name="core0",
                                 args=("-disablewallet=1", "-blocksonly=1"))
        core.wait_ready()
        peerd = Peerd(tmp_path, name="peerd", listen=False, args=("-blocksonly=1",))
        p = Pair(core, peerd)
        for call in (("estimatesmartfee", 2), ("estimaterawfee", 2)):
            r = p.both(*call)
            assert r == ("error", -32603, "Fee estimation disabled"), r
    finally:
        stop_core_and_peerd(core, peerd)
    out = subprocess.run([PEERD_BIN, "-chain=main", "-datadir=%s" % (tmp_path / "main"),
                          "-listen=0", "-connect=0", "-acceptstalefeeestimates=1"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 1, out
    assert "acceptstalefeeestimates is not supported on main chain." in out.stderr, out.stderr


def test_fee_estimates_across_restart_with_mempool(pair):
    """Both restart with transactions in mempool.dat: the loaded ones are tracked as Core's
    estimator tracks them (it hears the load), and the blocks that take them count alike."""
    core = pair.core
    for h in core.rpc("generatetodescriptor", 103, DESC):
        assert pair.peerd.rpc("submitblock", core.getblock(h, 0)) is None
    cb = core.getblock(core.getblockhash(1), 2)["tx"][0]
    t = spend(Coin(cb["txid"], 0, int(cb["vout"][0]["value"] * COIN), SPK, "wsh_true"), 2, outs=150)
    pair.send(t)
    coins = [t.out(i) for i in range(150)]
    pair.mine([t.txid])
    rng = random.Random(11)
    for r in range(40):
        for _ in range(3):
            pair.send(spend(coins.pop(), rng.randint(1, 80)))
        pool = core.getrawmempool(True)
        order = sorted(pool, key=lambda k: (-pool[k]["fees"]["base"] / pool[k]["vsize"], k))
        pair.mine(order[:rng.randint(1, 3)])
    pool = sorted(core.getrawmempool())
    assert len(pool) > 10, pool
    core.stop()
    rc, _ = pair.peerd.stop(timeout=15)
    assert rc == 0, pair.peerd.log()
    pair.core = core = bitcoind.Bitcoind(core.binary, pair.tmp / "core", name="core0",
                                         args=("-disablewallet=1",))
    core.wait_ready()
    pair.peerd = Peerd(pair.tmp, name="peerd", listen=False)
    bitcoind.wait_until(lambda: core.getmempoolinfo()["loaded"] and
                        sorted(core.getrawmempool()) == pool and
                        sorted(pair.peerd.rpc("getrawmempool")) == pool, 30, "both to load mempool.dat")
    for r in range(12):
        pool = core.getrawmempool(True)
        order = sorted(pool, key=lambda k: (-pool[k]["fees"]["base"] / pool[k]["vsize"], k))
        pair.mine(order[:rng.randint(2, 6)])
    pair.compare_all()

"""The parity suite's two nodes (test_mempool_parity.py): one regtest
bitcoind with a wallet mines the chain and its blocks go into one peerd by
submitblock, so both stand on the same tip with no peer; Env asks both the
same question and compares the answers field by field (norm, ordered,
strip_entry_fields make them comparable), funds pools of test-owned coins of
every kind, and mines on both. `env` is the module-wide fixture; spend()
signs a spend of such coins.
"""
import os
from decimal import Decimal

import pytest

import bitcoind
from conftest import Peerd, PeerClosed, RpcError as CtlError, save_failure_logs, stop_core_and_peerd
from mempool_craft import Coin, Key, Tx, TRUE, P2A, OP_1, OP_CHECKMULTISIG, p2pkh, p2sh, p2wpkh, p2wsh, script

CORE_ONLY = bool(os.environ.get("PARITY_CORE_ONLY"))
TRACE = bool(os.environ.get("PARITY_TRACE"))
COIN = 100_000_000
FEE = 2000  # sats: ~10 sat/vB for the small spends here
NUMS = "50929b74c1a04954b78b4b6035e97a5e078a5a0f28ec96d547bfee9ace803ac0"
KEY = Key(0x5EED_1234_ABCD)
KEY2 = Key(0x0DDBA11)


def answer(call):
    """A call's result, or ("error", code, message): comparable across both clients."""
    try:
        return call()
    except bitcoind.RpcError as e:
        return ("error", e.code, e.message)
    except CtlError as e:
        return ("error", e.code, e.message)


def norm(v):
    """peerd's numbers (floats from json.loads) as Decimals, like Core's client gives."""
    if isinstance(v, float):
        return Decimal(repr(v))
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(norm(x) for x in v)
    return v


# Mempool queries whose entries carry a field compared apart: "time" (each node's
# own clock). "unbroadcast" is compared: neither node has peers, so both keep every
# transaction sendrawtransaction added until it leaves the pool.
ENTRY_QUERIES = ("getmempoolentry", "getrawmempool", "getmempoolancestors", "getmempooldescendants")


def strip_entry_fields(v):
    if isinstance(v, dict):
        return {k: strip_entry_fields(x) for k, x in v.items() if k != "time"}
    if isinstance(v, list):
        return [strip_entry_fields(x) for x in v]
    return v


def ordered(v):
    """v with every object as its list of (key, value) pairs: equal only in Core's field order."""
    if isinstance(v, dict):
        return [(k, ordered(x)) for k, x in v.items()]
    if isinstance(v, (list, tuple)):
        return [ordered(x) for x in v]
    return v


def addr_desc(spk):
    return "raw(%s)" % spk.hex()


class Env:
    def __init__(self, core, peerd):
        self.core = core
        self.peerd = peerd
        self.pools = {}
        self.results = []

    # ---- both nodes ------------------------------------------------------
    def peerd_call(self, method, *params):
        params = [float(p) if isinstance(p, Decimal) else p for p in params]
        try:
            return norm(answer(lambda: self.peerd.rpc(method, *params)))
        except (OSError, PeerClosed) as e:
            self.peerd._ctl = None
            return ("connection closed", repr(e))

    def both(self, method, *params, compare=True):
        """Core's answer (and peerd's, required to be the same unless CORE_ONLY)."""
        a = answer(lambda: self.core.rpc(method, *params))
        if CORE_ONLY:
            return a
        b = self.peerd_call(method, *params)
        if TRACE:
            print("%s: Core %r\n  peerd %r" % (method, a, b))
        if compare:
            ca, cb = (strip_entry_fields(a), strip_entry_fields(b)) if method in ENTRY_QUERIES else (a, b)
            assert ordered(cb) == ordered(ca), \
                "%s: peerd answered\n  %r\nCore answered\n  %r" % (method, b, a)
        return a

    def tma(self, txs, maxfeerate=None):
        """Both testmempoolaccepts of txs (Tx or hex); Core's answer."""
        hexes = [t if isinstance(t, str) else t.hex() for t in txs]
        params = [hexes] if maxfeerate is None else [hexes, maxfeerate]
        return self.both("testmempoolaccept", *params)

    def reject(self, tx, reason, maxfeerate=None):
        """One transaction both reject with reason (Core's reject-reason starts with it)."""
        r = self.tma([tx], maxfeerate)
        assert not isinstance(r, tuple), r
        assert r[0]["allowed"] is False and r[0]["reject-reason"].startswith(reason), r
        return r[0]

    def accept(self, tx, maxfeerate=None):
        r = self.tma([tx], maxfeerate)
        assert not isinstance(r, tuple), r
        assert r[0]["allowed"] is True, r
        return r[0]

    def send(self, tx, maxfeerate=None):
        """sendrawtransaction on both; the txid (asserts both accepted)."""
        params = [tx.hex()] if maxfeerate is None else [tx.hex(), maxfeerate]
        r = self.both("sendrawtransaction", *params)
        assert not isinstance(r, tuple), r
        return r

    def send_error(self, tx, code, msg_start, maxfeerate=None):
        params = [tx.hex()] if maxfeerate is None else [tx.hex(), maxfeerate]
        r = self.both("sendrawtransaction", *params)
        assert isinstance(r, tuple) and r[1] == code and r[2].startswith(msg_start), r
        return r

    def restart_peerd(self, *args):
        """peerd again on the same datadir with args; waits until it has loaded
        the mempool it held (mempool.dat, written at shutdown)."""
        before = sorted(self.peerd.rpc("getrawmempool"))
        rc, _ = self.peerd.stop(timeout=15)
        assert rc == 0, self.peerd.log()
        self.peerd = Peerd(self.tmp, args=args, name="peerd", listen=False)
        bitcoind.wait_until(lambda: sorted(self.peerd.rpc("getrawmempool")) == before, 30,
                            "peerd to load its mempool")

    # ---- chain -----------------------------------------------------------
    def sync(self):
        """Core's blocks the peerd lacks, by submitblock."""
        if CORE_ONLY:
            return
        have = self.peerd.rpc("getblockcount")
        for h in range(have + 1, self.core.getblockcount() + 1):
            raw = self.core.getblock(self.core.getblockhash(h), 0)
            r = self.peerd.rpc("submitblock", raw)
            assert r is None, "block %d: peerd answered %r" % (h, r)
        assert self.peerd.rpc("getbestblockhash") == self.core.getbestblockhash()

    def mine(self, n=1, txs=None, to=None):
        """n blocks (to `to`, a descriptor; the wallet by default), or one block of exactly txs."""
        desc = to or self.wallet_desc
        if txs is not None:
            out = self.core.rpc("generateblock", desc, [t if isinstance(t, str) else t.hex() for t in txs])
            hashes = [out["hash"]]
        else:
            hashes = self.core.rpc("generatetodescriptor", n, desc, timeout=120)
        self.sync()
        return hashes

    def height(self):
        return self.core.getblockcount()

    # ---- coins -----------------------------------------------------------
    def fund(self, outputs, kinds, mine=True, nonstandard=False):
        """A wallet-signed transaction paying outputs [(value, spk)]; its outputs as Coins of
        kinds (one kind per output). Mined (by generateblock when nonstandard)."""
        need = sum(v for v, _ in outputs) + 100_000 + 50 * len(outputs)
        utxo = next(u for u in self.core.rpc("listunspent", 1, 9999999, wallet=self.core.wallet)
                    if u["spendable"] and int(u["amount"] * COIN) >= need + 10_000
                    and (u["txid"], u["vout"]) not in self.used)
        self.used.add((utxo["txid"], utxo["vout"]))
        t = Tx()
        t.add_in((utxo["txid"], utxo["vout"]))
        for v, spk in outputs:
            t.add_out(v, spk)
        change = int(utxo["amount"] * COIN) - sum(v for v, _ in outputs) - 100_000 - 50 * len(outputs)
        t.add_out(change, self.change_spk)
        s = self.core.rpc("signrawtransactionwithwallet", t.hex(), wallet=self.core.wallet)
        assert s["complete"], s
        txid = self.core.decoderawtransaction(s["hex"])["txid"]
        if mine:
            if nonstandard:
                self.mine(txs=[s["hex"]])
            else:
                self.both("sendrawtransaction", s["hex"])
                self.mine(1)
        h = self.height()
        return [Coin(txid, i, v, spk, k, h) for i, ((v, spk), k) in enumerate(zip(outputs, kinds))]

    def take(self, kind):
        return self.pools[kind].pop()

    def take_n(self, kind, n):
        return [self.pools[kind].pop() for _ in range(n)]


SPK = {
    "wsh_true": p2wsh(TRUE),
    "sh_true": p2sh(TRUE),
    "pkh": p2pkh(KEY.pub),
    "wpkh": p2wpkh(KEY.pub),
    "sh_wpkh": p2sh(p2wpkh(KEY.pub)),
    "bare_ms": script(OP_1, KEY.pub, OP_1, OP_CHECKMULTISIG),
}




def start_env(tmp_path_factory, name, core_args=("-acceptnonstdtxn=0",), peerd_args=(), listen=False,
              peerd=True):
    """An Env of a Core (core0, with a wallet) and, unless not peerd, a peerd
    (peerd_args; listening only if listen) started in a new temporary
    directory `name`, neither with peers, with the wallet's descriptor
    (wallet_desc) and a change script (change_spk); no pools, no blocks:
    the module fixture mines and funds. Skips the module without a
    bitcoind; if starting fails, what started is stopped (its logs saved)."""
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    tmp = tmp_path_factory.mktemp(name)
    core = d = None
    try:
        core = bitcoind.Bitcoind(binary, tmp / "core", name="core0", args=core_args)
        core.wait_ready()
        core.create_wallet()
        if peerd:
            d = Peerd(tmp, name="peerd", listen=listen, args=peerd_args)
        e = Env(core, d)
        e.tmp, e.binary, e.used = tmp, binary, set()
        addr = core.new_address("bech32")
        e.wallet_desc = core.rpc("getaddressinfo", addr, wallet=core.wallet)["desc"]
        e.change_spk = bytes.fromhex(core.rpc("getaddressinfo", core.new_address("bech32"),
                                              wallet=core.wallet)["scriptPubKey"])
        return e
    except BaseException:
        save_failure_logs("mempool_env", core, d)
        stop_core_and_peerd(core, d)
        raise


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """Core with a funded wallet and pools of test-owned coins; peerd on the same tip."""
    e = None
    try:
        e = start_env(tmp_path_factory, "mempool", peerd=not CORE_ONLY)
        core = e.core
        # Taproot coins of the wallet (key path) and of an imported script-path-only
        # descriptor (internal key NUMS: no key path).
        tr_addr = core.new_address("bech32m")
        e.mine(8, to="addr(%s)" % tr_addr)
        e.mine(110)
        info = core.getdescriptorinfo("tr(%s,pk(%s))" % (NUMS, KEY2.wif()))
        desc = "tr(%s,pk(%s))#%s" % (NUMS, KEY2.wif(), info["checksum"])
        r = core.rpc("importdescriptors", [{"desc": desc, "timestamp": "now"}], wallet=core.wallet)
        assert r[0]["success"], r
        e.trs_spk = bytes.fromhex(core.rpc("getaddressinfo", core.deriveaddresses(desc)[0],
                                           wallet=core.wallet)["scriptPubKey"])
        # Pools: many anyone-can-spend P2WSH coins, and some of every owned kind.
        ws = []
        for _ in range(5):
            ws += e.fund([(COIN // 5, SPK["wsh_true"])] * 60, ["wsh_true"] * 60)
        e.pools["wsh_true"] = ws
        for kind in ("sh_true", "pkh", "wpkh", "sh_wpkh", "bare_ms"):
            e.pools[kind] = e.fund([(COIN // 10, SPK[kind])] * 6, [kind] * 6)
        e.pools["trs"] = e.fund([(COIN // 10, e.trs_spk)] * 3, ["trs"] * 3)
        e.pools["p2a"] = e.fund([(1000, P2A)] * 2 + [(COIN // 10, p2wsh(TRUE))], ["p2a", "p2a", "wsh_true"])[:2]
        # Outputs no standard transaction may create: a bare OP_TRUE, P2SH of a
        # script with 16 sigops, witness v2, ...: mined by generateblock.
        e.pools["bare_true"] = e.fund([(COIN // 10, TRUE)] * 2, ["bare_true"] * 2, nonstandard=True)
        e.pools["witv2"] = e.fund([(COIN // 10, bytes([0x52, 32]) + bytes(32))] * 2, ["witv2"] * 2)
        yield e
    except BaseException:
        if e is not None:
            save_failure_logs("mempool_parity", e.core, e.peerd)
        raise
    finally:
        if e is not None:
            stop_core_and_peerd(e.core, e.peerd)


def spend(coins, outs=None, fee=FEE, version=2, locktime=0, seq=0xFFFFFFFD, key=KEY, high_s=False):
    """coins spent to outs (default: one P2WSH(OP_TRUE) output of all but fee), signed."""
    t = Tx(version, locktime)
    for c in coins:
        t.add_in(c, seq)
    if outs is None:
        outs = [(sum(c.value for c in coins) - fee, p2wsh(TRUE))]
    for v, spk in outs:
        t.add_out(v, spk)
    return t.sign(key, high_s)


def wallet_signed(env, t):
    s = env.core.rpc("signrawtransactionwithwallet", t.hex(), wallet=env.core.wallet)
    assert s["complete"], s
    return s["hex"]

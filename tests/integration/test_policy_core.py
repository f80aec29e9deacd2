"""Standardness parity: peerd's mempool/policy rules give Core's verdicts.

One regtest bitcoind with a funded wallet, plus one block (made with
generateblock, so non-standard outputs get in) holding coins of the
awkward kinds: a bare OP_TRUE, a witness v2 program, P2SH redeem scripts
of 15 and 16 sigops, P2WSH scripts (OP_TRUE, 800 and 801
CHECKMULTISIGs) and a pay-to-anchor. Each case below builds one raw
transaction (python-bitcoinlib serialises it; valid spends of wallet
coins are signed by Core's wallet) made to hit one rule, asks Core's
testmempoolaccept, and asks `peertool check-standard` with the spent
outputs (mempool/policy.c). The two must agree:

- Core allowed it: peerd calls it standard, with Core's vsize and fee.
- Core rejected it in its scripts (mandatory-/non-mandatory-script-verify-
  flag): peerd, which does not run scripts, calls it standard; every
  policy rule before the scripts passed on both sides.
- Otherwise: the same reject-reason and the same reject-details, byte for
  byte (Core 29's "reason, debug").

Each case also names the reason Core must give, so that a case that drifts
off its rule fails instead of testing something else. The last test checks
that every reason of mempool/policy.c was met and that the cases number at
least 20. bare-multisig is asked of a second bitcoind started with
-permitbaremultisig=0 (and peertool with --permitbaremultisig 0), the
lax_ cases of a third with -acceptnonstdtxn=1 (which skips IsStandardTx,
the input and witness rules and ephemeral dust, as peertool's
--acceptnonstdtxn 1 must); both get the first node's blocks.

bitcoind is found as bitcoind.find_bitcoind() says; without one those tests
are skipped. The last tests need no bitcoind: check-standard's knobs, input
forms and usage errors.
"""
import hashlib
import json
import os
import subprocess
from decimal import Decimal

import pytest
from bitcoin.core import COutPoint, CMutableTransaction, CMutableTxIn, CTxInWitness, CTxOut, CTxWitness, lx
from bitcoin.core.script import CScript, CScriptWitness, OP_0, OP_1, OP_CHECKMULTISIG, OP_CHECKSIG, \
    OP_DUP, OP_RETURN, OP_TRUE

import bitcoind
from conftest import BUILD

PEERTOOL = os.environ.get("PEERTOOL_BIN", os.path.join(BUILD, "bin", "peertool"))
COIN = 100_000_000
SCRIPT_REASONS = ("mandatory-script-verify-flag-failed", "non-mandatory-script-verify-flag")

# The awkward coins of the setup block: name -> (scriptPubKey, value in sat).
CHECKSIG16 = bytes([OP_CHECKSIG]) * 16
CHECKSIG15 = bytes([OP_CHECKSIG]) * 15
MULTI801 = bytes([OP_CHECKMULTISIG]) * 801  # 801 * 20 = 16,020 witness sigops
MULTI800 = bytes([OP_CHECKMULTISIG]) * 800  # exactly the 16,000 limit


def sha256(b):
    return hashlib.sha256(b).digest()


def hash160(b):
    return hashlib.new("ripemd160", sha256(b)).digest()


def p2sh(redeem):
    return CScript(bytes([0xA9, 20]) + hash160(redeem) + bytes([0x87]))


def p2wsh(script):
    return CScript(bytes([0, 32]) + sha256(script))


P2A = CScript(bytes.fromhex("51024e73"))
WITNESS_V2 = CScript(bytes([0x52, 32]) + b"\x12" * 32)
SPECIAL = {
    "op_true": (CScript([OP_TRUE]), COIN),
    "witness_v2": (WITNESS_V2, COIN),
    "p2sh_16": (p2sh(CHECKSIG16), COIN),
    "p2sh_15": (p2sh(CHECKSIG15), COIN),
    "p2wsh_true": (p2wsh(bytes([OP_TRUE])), COIN),
    "p2wsh_801": (p2wsh(MULTI801), COIN),
    "p2wsh_800": (p2wsh(MULTI800), COIN),
    "anchor": (P2A, COIN // 10),
}


def peertool(*args):
    r = subprocess.run([PEERTOOL, *map(str, args)], capture_output=True, timeout=120, text=True)
    assert r.returncode in (0, 1), r.stderr
    assert r.stdout, "peertool check-standard printed nothing: %s" % r.stderr
    return json.loads(r.stdout)


class Env:
    """The funded node, its coins, and the ways to build and judge a transaction."""

    def __init__(self, core, tmp):
        self.core, self.tmp = core, tmp
        self.others = {}  # NODES name -> a node with other knobs, started on demand
        self.coins = {}  # address type -> one confirmed wallet coin
        self.special = {}  # SPECIAL name -> COutPoint
        self.seen = {}  # case -> Core's reject-reason (None when allowed)

    # ---- building -------------------------------------------------------
    def addr_spk(self, address_type):
        a = self.core.new_address(address_type)
        return CScript(bytes.fromhex(self.core.rpc("getaddressinfo", a, wallet=self.core.wallet)["scriptPubKey"]))

    def wallet_coin(self, address_type):
        u = self.coins[address_type]
        return COutPoint(lx(u["txid"]), u["vout"]), int(round(u["amount"] * COIN))

    def tx(self, ins, outs, version=2, witnesses=None, script_sigs=None, locktime=0):
        vin = [CMutableTxIn(op, scriptSig=CScript(script_sigs[i] if script_sigs else b""), nSequence=0xFFFFFFFD)
               for i, op in enumerate(ins)]
        t = CMutableTransaction(vin, [CTxOut(v, s) for v, s in outs], nLockTime=locktime, nVersion=version)
        if witnesses:
            t.wit = CTxWitness([CTxInWitness(CScriptWitness(w)) for w in witnesses])
        return t

    def sign(self, t):
        r = self.core.rpc("signrawtransactionwithwallet", t.serialize().hex(), wallet=self.core.wallet)
        assert r["complete"], r
        return r["hex"]

    # ---- judging --------------------------------------------------------
    def prevouts(self, hexstr, node):
        """verify-tx's prevouts lines for the tx's inputs, or None if one is unknown to node."""
        d = node.rpc("decoderawtransaction", hexstr)
        lines = []
        for vin in d["vin"]:
            if "txid" not in vin:
                return None
            o = node.rpc("gettxout", vin["txid"], vin["vout"])
            if o is None:
                return None
            lines.append("%s:%d %d %s" % (vin["txid"], vin["vout"], int(round(o["value"] * COIN)),
                                         o["scriptPubKey"]["hex"]))
        return lines

    def judge(self, name, hexstr, want, kind=None):
        """Core's and peerd's verdicts on hexstr; checks they agree and that
        Core's reason is `want` (None: allowed; "script": a script failure).
        kind names a node of NODES, else the default one."""
        node = self.core
        args = ["check-standard", "--chain", "regtest"]
        if kind:
            node = self.other_node(kind)
            args += NODES[kind][1]
        core = node.rpc("testmempoolaccept", [hexstr], 0)[0]
        lines = self.prevouts(hexstr, node)
        if lines is not None:
            path = self.tmp / ("%s.prevouts" % name)
            path.write_text("\n".join(lines) + "\n")
            args += ["--prevouts", path]
        if len(hexstr) > 100_000:  # over one argument's limit: a file
            path = self.tmp / ("%s.hex" % name)
            path.write_text(hexstr)
            ours = peertool(*args, path)
        else:
            ours = peertool(*args, hexstr)
        reason = core.get("reject-reason")
        self.seen[name] = reason
        assert ours["txid"] == core["txid"] and ours["wtxid"] == core["wtxid"]
        if want is None:
            assert core["allowed"], "Core rejected %s: %s" % (name, core)
        elif want == "script":
            assert reason and reason.startswith(SCRIPT_REASONS), "Core: %s" % core
        else:
            assert reason == want, "Core: %s" % core
        if core["allowed"]:
            assert ours["standard"], (core, ours)
            assert ours["reject-reason"] is None
            assert ours["vsize"] == core["vsize"], (core, ours)
            assert ours["fee"] == int(round(core["fees"]["base"] * COIN)), (core, ours)
        elif reason.startswith(SCRIPT_REASONS):
            assert ours["standard"], ("peerd stopped before Core's scripts", core, ours)
        else:
            assert not ours["standard"], (core, ours)
            assert ours["reject-reason"] == reason, (core, ours)
            assert ours["reject-details"] == core["reject-details"], (core, ours)
        return core, ours

    def other_node(self, kind):
        """The node of NODES[kind], started on first use and given the default
        node's blocks (submitblock), so the same coins exist there."""
        if kind not in self.others:
            binary, _ = bitcoind.find_bitcoind()
            n = bitcoind.Bitcoind(binary, self.tmp / kind, name=kind, args=NODES[kind][0], small=True)
            self.others[kind] = n
            n.wait_ready()
            for h in range(1, self.core.getblockcount() + 1):
                assert n.rpc("submitblock", self.core.getblock(self.core.getblockhash(h), 0)) is None
            assert n.getbestblockhash() == self.core.getbestblockhash()
        return self.others[kind]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    if not os.path.exists(PEERTOOL):
        pytest.fail("%s not built (run make)" % PEERTOOL)
    tmp = tmp_path_factory.mktemp("policy")
    core = bitcoind.Bitcoind(binary, tmp / "core", name="core0")
    e = Env(core, tmp)
    try:
        core.wait_ready()
        core.create_wallet()
        addrs = core.fund_wallet(per_type=2)
        for t in bitcoind.ADDRESS_TYPES:
            e.coins[t] = core.spendable(addrs[t])[0]
        # The awkward coins, from a second bech32 coinbase, mined directly.
        src = core.spendable(addrs["bech32"])[1]
        total = int(round(src["amount"] * COIN))
        outs = [(v, s) for s, v in SPECIAL.values()]
        change = total - sum(v for v, _ in outs) - 100_000
        outs.append((change, e.addr_spk("bech32")))
        setup = e.tx([COutPoint(lx(src["txid"]), src["vout"])], outs)
        signed = e.sign(setup)
        core.rpc("generateblock", core.new_address("bech32"), [signed])
        txid = core.rpc("decoderawtransaction", signed)["txid"]
        for i, name in enumerate(SPECIAL):
            e.special[name] = COutPoint(lx(txid), i)
            assert core.rpc("gettxout", txid, i) is not None, name
        yield e
    finally:
        for n in (*e.others.values(), core):
            if n is not None:
                n.stop()
                n.kill()


# ---- the cases --------------------------------------------------------------
# Each returns (hex, Core's expected reject-reason: None allowed, "script").

FEE = 10_000
# Nodes with other knobs: bitcoind's arguments and check-standard's.
NODES = {
    "strict": (("-permitbaremultisig=0",), ("--permitbaremultisig", "0")),
    "lax": (("-acceptnonstdtxn=1",), ("--acceptnonstdtxn", "1")),
}


def pay(env, coin_type, outs_fn, fee=FEE, version=2, sign=True):
    """Spend one wallet coin of coin_type to outs_fn(value left) (a list of (sat, spk))."""
    op, value = env.wallet_coin(coin_type)
    t = env.tx([op], outs_fn(value - fee), version=version)
    return env.sign(t) if sign else t.serialize().hex()


def change_to(env, kind="bech32"):
    spk = env.addr_spk(kind)
    return lambda left: [(left, spk)]


def with_output(env, value, spk, kind="bech32"):
    change = env.addr_spk(kind)
    return lambda left: [(value, spk), (left - value, change)]


def spend_special(env, name, witness=None, script_sig=b"", fee=FEE, out_spk=None):
    spk, value = SPECIAL[name]
    out_spk = out_spk or env.addr_spk("bech32")
    t = env.tx([env.special[name]], [(value - fee, out_spk)], witnesses=[witness] if witness else None,
               script_sigs=[script_sig])
    return t.serialize().hex()


def dusty_spend(env, name, witness):
    """Spend a SPECIAL coin to one dust output and change, paying FEE."""
    spk, value = SPECIAL[name]
    t = env.tx([env.special[name]], [(293, env.addr_spk("bech32")), (value - FEE - 293, env.addr_spk("bech32"))],
               witnesses=[witness] if witness else None)
    return t.serialize().hex()


def witness_padded(env, weight):
    """An unsigned P2WPKH spend whose one witness item makes the weight exactly `weight`."""
    op, value = env.wallet_coin("bech32")
    outs = [(value - 200_000, env.addr_spk("bech32"))]

    def build(n):
        return env.tx([op], outs, witnesses=[[b"\x01" * n]])

    def w(t):
        return 3 * len(t.serialize({"include_witness": False})) + len(t.serialize())

    n = 300_000
    n += weight - w(build(n))
    t = build(n)
    assert w(t) == weight
    return t.serialize().hex()


def big_script_sig(env, size):
    """An unsigned P2WPKH spend with a push-only scriptSig of exactly `size` bytes (PUSHDATA2)."""
    op, value = env.wallet_coin("bech32")
    sig = bytes([0x4D]) + (size - 3).to_bytes(2, "little") + b"\x01" * (size - 3)
    return env.tx([op], [(value - FEE, env.addr_spk("bech32"))], script_sigs=[sig]).serialize().hex()


def multisig(m, n):
    keys = [bytes([2]) + bytes([0x40 + i]) * 32 for i in range(n)]
    return CScript([m, *keys, n, OP_CHECKMULTISIG])


def op_return(total):
    s = CScript([OP_RETURN, b"\x77" * (total - 3)]) if total > 77 else CScript([OP_RETURN, b"\x77" * (total - 2)])
    assert len(s) == total
    return s


CASES = {
    # standard: outputs of every type, from inputs of every wallet type
    "std_p2pkh_out": lambda e: (pay(e, "legacy", with_output(e, 50_000, e.addr_spk("legacy"))), None),
    "std_p2sh_out": lambda e: (pay(e, "p2sh-segwit", with_output(e, 50_000, e.addr_spk("p2sh-segwit"))), None),
    "std_p2wpkh_out": lambda e: (pay(e, "bech32", with_output(e, 50_000, e.addr_spk("bech32"))), None),
    "std_p2wsh_out": lambda e: (pay(e, "bech32m", with_output(e, 50_000, p2wsh(b"\x51"))), None),
    "std_p2tr_out": lambda e: (pay(e, "legacy", with_output(e, 50_000, e.addr_spk("bech32m"))), None),
    "std_p2pk_out": lambda e: (pay(e, "bech32", with_output(e, 50_000, CScript([b"\x02" + b"\x33" * 32, OP_CHECKSIG]))), None),
    "std_bare_1of3": lambda e: (pay(e, "bech32m", with_output(e, 50_000, multisig(1, 3))), None),
    "std_op_return_83": lambda e: (pay(e, "p2sh-segwit", with_output(e, 0, op_return(83))), None),
    "std_witness_v2_out": lambda e: (pay(e, "bech32", with_output(e, 1_000, WITNESS_V2)), None),
    "std_anchor_out_240": lambda e: (pay(e, "bech32", with_output(e, 240, P2A)), None),
    "std_spend_anchor": lambda e: (spend_special(e, "anchor"), None),
    "std_spend_p2wsh_true": lambda e: (spend_special(e, "p2wsh_true", witness=[b"\x51"]), None),
    # IsStandardTx
    "version_4": lambda e: (pay(e, "bech32", change_to(e), version=4), "version"),
    "version_0": lambda e: (pay(e, "legacy", change_to(e), version=0), "version"),
    "tx_size_400001": lambda e: (witness_padded(e, 400_001), "tx-size"),
    "tx_size_400000": lambda e: (witness_padded(e, 400_000), "script"),
    "tx_size_big_output": lambda e: (pay(e, "bech32", with_output(e, 1000, CScript(b"\x00" * 100_001)), sign=False), "tx-size"),
    "scriptsig_1651": lambda e: (big_script_sig(e, 1651), "scriptsig-size"),
    "scriptsig_1650": lambda e: (big_script_sig(e, 1650), "script"),
    "scriptsig_not_pushonly": lambda e: (e.tx([e.wallet_coin("legacy")[0]], [(e.wallet_coin("legacy")[1] - FEE, e.addr_spk("bech32"))],
                                              script_sigs=[bytes([OP_0, OP_DUP])]).serialize().hex(), "scriptsig-not-pushonly"),
    "scriptpubkey_op_true": lambda e: (pay(e, "bech32", with_output(e, 50_000, CScript([OP_TRUE]))), "scriptpubkey"),
    "scriptpubkey_op_return_84": lambda e: (pay(e, "bech32", with_output(e, 0, op_return(84))), "scriptpubkey"),
    "scriptpubkey_4of4": lambda e: (pay(e, "bech32", with_output(e, 50_000, multisig(4, 4))), "scriptpubkey"),
    "scriptpubkey_v0_21": lambda e: (pay(e, "bech32", with_output(e, 50_000, CScript(bytes([0, 21]) + b"\x01" * 21))), "scriptpubkey"),
    "bare_multisig": lambda e: (pay(e, "bech32", with_output(e, 50_000, multisig(1, 3))), "bare-multisig"),
    "dust_two": lambda e: (pay(e, "bech32", lambda left: [(545, e.addr_spk("legacy")), (293, e.addr_spk("bech32")),
                                                          (left - 838, e.addr_spk("bech32"))]), "dust"),
    "dust_ephemeral_fee": lambda e: (pay(e, "bech32", with_output(e, 293, e.addr_spk("bech32"))), "dust"),
    "dust_ephemeral_zero_fee": lambda e: (pay(e, "bech32", with_output(e, 293, e.addr_spk("bech32")), fee=0), "min relay fee not met"),
    "dust_p2tr_329": lambda e: (pay(e, "legacy", lambda left: [(329, e.addr_spk("bech32m")), (329, e.addr_spk("bech32m")),
                                                                (left - 658, e.addr_spk("bech32"))]), "dust"),
    "not_dust_p2tr_330": lambda e: (pay(e, "legacy", lambda left: [(330, e.addr_spk("bech32m")), (330, e.addr_spk("bech32m")),
                                                                    (left - 660, e.addr_spk("bech32"))]), None),
    "multi_op_return": lambda e: (pay(e, "bech32", lambda left: [(0, op_return(10)), (0, op_return(20)),
                                                                 (left, e.addr_spk("bech32"))]), "multi-op-return"),
    # PreChecks around IsStandardTx
    "tx_size_small": lambda e: (pay(e, "bech32", lambda left: [(left, CScript([OP_RETURN, b"\x01\x02"]))]), "tx-size-small"),
    "coinbase": lambda e: (CMutableTransaction([CMutableTxIn(COutPoint(), CScript(b"\x03\x01\x02\x03"))],
                                               [CTxOut(COIN, e.addr_spk("bech32"))]).serialize().hex(), "coinbase"),
    "vout_empty": lambda e: (e.tx([e.wallet_coin("bech32")[0]], []).serialize().hex(), "bad-txns-vout-empty"),
    "in_belowout": lambda e: (pay(e, "bech32", lambda left: [(left + 2 * FEE, e.addr_spk("bech32"))]), "bad-txns-in-belowout"),
    # AreInputsStandard
    "spend_op_true": lambda e: (spend_special(e, "op_true"), "bad-txns-nonstandard-inputs"),
    "spend_witness_v2": lambda e: (spend_special(e, "witness_v2", witness=[b"\x01"]), "bad-txns-nonstandard-inputs"),
    "spend_p2sh_16_sigops": lambda e: (spend_special(e, "p2sh_16", script_sig=bytes([16]) + CHECKSIG16), "bad-txns-nonstandard-inputs"),
    "spend_p2sh_15_sigops": lambda e: (spend_special(e, "p2sh_15", script_sig=bytes([15]) + CHECKSIG15), "script"),
    # IsWitnessStandard
    "p2wsh_101_items": lambda e: (spend_special(e, "p2wsh_true", witness=[b""] * 101 + [b"\x51"]), "bad-witness-nonstandard"),
    "p2wsh_100_items": lambda e: (spend_special(e, "p2wsh_true", witness=[b""] * 100 + [b"\x51"]), "script"),
    "p2wsh_item_81": lambda e: (spend_special(e, "p2wsh_true", witness=[b"\x01" * 81, b"\x51"]), "bad-witness-nonstandard"),
    "p2wsh_item_80": lambda e: (spend_special(e, "p2wsh_true", witness=[b"\x01" * 80, b"\x51"]), "script"),
    "p2wsh_script_3601": lambda e: (spend_special(e, "p2wsh_true", witness=[b"\x51" * 3601]), "bad-witness-nonstandard"),
    "witness_on_p2pkh": lambda e: (e.tx([e.wallet_coin("legacy")[0]], [(e.wallet_coin("legacy")[1] - FEE, e.addr_spk("bech32"))],
                                        witnesses=[[b"\x01"]]).serialize().hex(), "bad-witness-nonstandard"),
    "witness_on_anchor": lambda e: (spend_special(e, "anchor", witness=[b"\x01"]), "bad-witness-nonstandard"),
    "taproot_annex": lambda e: (e.tx([e.wallet_coin("bech32m")[0]], [(e.wallet_coin("bech32m")[1] - FEE, e.addr_spk("bech32"))],
                                     witnesses=[[b"\x01" * 64, b"\x50\x01"]]).serialize().hex(), "bad-witness-nonstandard"),
    "tapscript_item_81": lambda e: (e.tx([e.wallet_coin("bech32m")[0]], [(e.wallet_coin("bech32m")[1] - FEE, e.addr_spk("bech32"))],
                                         witnesses=[[b"\x01" * 81, b"\x51", b"\xc0" + b"\x02" * 32]]).serialize().hex(),
                                    "bad-witness-nonstandard"),
    # sigops and fees
    "sigops_16020": lambda e: (spend_special(e, "p2wsh_801", witness=[MULTI801]), "bad-txns-too-many-sigops"),
    # precedence inside IsStandardTx and around it
    "precedence_dust_over_multi_op_return": lambda e: (pay(e, "bech32", lambda left: [
        (545, e.addr_spk("legacy")), (293, e.addr_spk("bech32")), (0, op_return(10)), (0, op_return(20)),
        (left - 838, e.addr_spk("bech32"))]), "dust"),
    "precedence_scriptpubkey_over_dust": lambda e: (pay(e, "bech32", lambda left: [
        (545, e.addr_spk("legacy")), (293, e.addr_spk("bech32")), (1000, CScript([OP_TRUE])),
        (left - 1838, e.addr_spk("bech32"))]), "scriptpubkey"),
    "precedence_version_over_tx_size_small": lambda e: (pay(e, "bech32", lambda left: [
        (left, CScript([OP_RETURN, b"\x01\x02"]))], version=3 + 1), "version"),
    "precedence_pushonly_over_scriptpubkey": lambda e: (e.tx([e.wallet_coin("legacy")[0]], [(1000, CScript([OP_TRUE]))],
                                                             script_sigs=[bytes([OP_DUP])]).serialize().hex(),
                                                        "scriptsig-not-pushonly"),
    "precedence_inputs_over_witness": lambda e: (e.tx([e.wallet_coin("legacy")[0], e.special["op_true"]],
                                                      [(COIN, e.addr_spk("bech32"))],
                                                      witnesses=[[b"\x01"], []]).serialize().hex(),
                                                 "bad-txns-nonstandard-inputs"),
    # -acceptnonstdtxn=1: no IsStandardTx, AreInputsStandard, IsWitnessStandard
    # or ephemeral dust; tx-size-small, the sigop limit and fees stay
    "lax_version_4": lambda e: (pay(e, "bech32", change_to(e), version=4), None),
    "lax_two_dust": lambda e: (pay(e, "bech32", lambda left: [(545, e.addr_spk("legacy")), (293, e.addr_spk("bech32")),
                                                              (left - 838, e.addr_spk("bech32"))]), None),
    "lax_dust_fee": lambda e: (pay(e, "bech32", with_output(e, 293, e.addr_spk("bech32"))), None),
    "lax_tx_size_small": lambda e: (pay(e, "bech32", lambda left: [(left, CScript([OP_RETURN, b"\x01\x02"]))]),
                                    "tx-size-small"),
    "lax_spend_op_true": lambda e: (spend_special(e, "op_true"), None),
    "lax_p2wsh_101_items": lambda e: (spend_special(e, "p2wsh_true", witness=[b""] * 101 + [b"\x51"]), "script"),
    "lax_sigops_16020": lambda e: (spend_special(e, "p2wsh_801", witness=[MULTI801]), "bad-txns-too-many-sigops"),
    "lax_min_relay_fee_100": lambda e: (pay(e, "bech32", change_to(e), fee=100), "min relay fee not met"),
    # precedence: ephemeral dust comes after the input rules, before the sigop limit
    "sigops_16020_and_dust_fee": lambda e: (dusty_spend(e, "p2wsh_801", [MULTI801]), "dust"),
    "witness_101_and_dust_fee": lambda e: (dusty_spend(e, "p2wsh_true", [b""] * 101 + [b"\x51"]), "bad-witness-nonstandard"),
    "input_op_true_and_dust_fee": lambda e: (dusty_spend(e, "op_true", None), "bad-txns-nonstandard-inputs"),
    "sigops_16000_fee_short": lambda e: (spend_special(e, "p2wsh_800", witness=[MULTI800], fee=79_999), "min relay fee not met"),
    "sigops_16000_fee_met": lambda e: (spend_special(e, "p2wsh_800", witness=[MULTI800], fee=80_000), "script"),
    "min_relay_fee_100": lambda e: (pay(e, "bech32", change_to(e), fee=100), "min relay fee not met"),
}


@pytest.mark.interop
@pytest.mark.parametrize("name", list(CASES))
def test_case(env, name):
    hexstr, want = CASES[name](env)
    kind = "strict" if name == "bare_multisig" else "lax" if name.startswith("lax_") else None
    env.judge(name, hexstr, want, kind)


# The reasons mempool/policy.c gives (and check-standard around it), each of
# which some case above must have met in Core's answer.
REASONS = (
    "version", "tx-size", "scriptsig-size", "scriptsig-not-pushonly", "scriptpubkey", "bare-multisig",
    "dust", "multi-op-return", "tx-size-small", "bad-txns-nonstandard-inputs", "bad-witness-nonstandard",
    "bad-txns-too-many-sigops", "min relay fee not met",
)


@pytest.mark.interop
def test_every_reason_compared(env):
    missing = [r for r in REASONS if r not in env.seen.values()]
    if len(env.seen) < len(CASES):
        pytest.skip("run the whole module to count the cases (%d of %d ran)" % (len(env.seen), len(CASES)))
    assert not missing, "no case met %s" % missing
    assert sum(1 for r in env.seen.values() if r is None) >= 10  # standard ones
    assert len(env.seen) >= 20


# ---- check-standard alone: knobs, input forms, usage (no bitcoind) -----------

def offline_tx(version=2, outs=None, script_sig=b"\x00"):
    """A one-input transaction spending a made-up coin (no prevouts: context-free checks only)."""
    outs = outs or [(10_000, CScript(bytes([0, 20]) + b"\xcc" * 20))]
    t = CMutableTransaction([CMutableTxIn(COutPoint(b"\x11" * 32, 0), CScript(script_sig))],
                            [CTxOut(v, s) for v, s in outs], nVersion=version)
    return t.serialize().hex()


def run(*args, stdin=None):
    return subprocess.run([PEERTOOL, "check-standard", *map(str, args)], capture_output=True, text=True,
                          input=stdin, timeout=60)


def test_check_standard_knobs(tmp_path):
    if not os.path.exists(PEERTOOL):
        pytest.fail("%s not built (run make)" % PEERTOOL)
    v4 = offline_tx(version=4)
    r = run(v4)
    assert r.returncode == 1 and json.loads(r.stdout)["reject-details"] == "version"
    # -acceptnonstdtxn=1 (and testnet3, where it is Core's default) skip IsStandardTx
    assert run("--acceptnonstdtxn", 1, v4).returncode == 0
    assert run("--chain", "test", v4).returncode == 0
    assert run("--chain", "test", "--acceptnonstdtxn", 0, v4).returncode == 1
    # but tx-size-small stays: Core checks it whatever -acceptnonstdtxn says
    small = offline_tx(outs=[(0, CScript([OP_RETURN, b"\x01\x02"]))], script_sig=b"")
    got = json.loads(run("--acceptnonstdtxn", 1, small).stdout)
    assert got["reject-reason"] == "tx-size-small" and got["result"] == "TX_NOT_STANDARD"
    # -datacarriersize, -datacarrier, -permitbaremultisig, -dustrelayfee
    ret40 = offline_tx(outs=[(10_000, CScript(bytes([0, 20]) + b"\xcc" * 20)), (0, op_return(40))])
    assert run(ret40).returncode == 0
    assert json.loads(run("--datacarriersize", 39, ret40).stdout)["reject-reason"] == "scriptpubkey"
    assert json.loads(run("--datacarrier", 0, ret40).stdout)["reject-reason"] == "scriptpubkey"
    bare = offline_tx(outs=[(10_000, multisig(1, 3))])
    assert run(bare).returncode == 0
    assert json.loads(run("--permitbaremultisig", 0, bare).stdout)["reject-reason"] == "bare-multisig"
    two = offline_tx(outs=[(294, CScript(bytes([0, 20]) + b"\xcc" * 20)), (546, CScript(bytes([0x76, 0xA9, 20]) + b"\xaa" * 20 + bytes([0x88, 0xAC])))])
    assert run(two).returncode == 0
    assert json.loads(run("--dustrelayfee", 3702, two).stdout)["reject-reason"] == "dust"
    # the same answer from hex on stdin and from a raw file
    raw = tmp_path / "v4.raw"
    raw.write_bytes(bytes.fromhex(v4))
    a, b, c = (json.loads(x.stdout) for x in (run(v4), run("-", stdin=v4), run(raw)))
    assert a == b == c
    # sizes without prevouts: weight-based vsize, legacy sigops only, no fee
    assert a["vsize"] == len(v4) // 2 and a["weight"] == len(v4) * 2 and a["fee"] is None


def test_check_standard_usage(tmp_path):
    if not os.path.exists(PEERTOOL):
        pytest.fail("%s not built (run make)" % PEERTOOL)
    tx = offline_tx()
    for args in ((), ("--bogus", tx), ("--datacarrier", 2, tx), ("--chain", "nonet", tx),
                 ("--prevouts",), (tx, tx), ("--datacarriersize", 2 ** 32, tx)):
        r = run(*args)
        assert r.returncode == 2 and r.stderr.startswith("peertool: check-standard: "), (args, r.stderr)
    for bad in ("0200", "abc", tmp_path / "none"):
        r = run(bad)
        assert r.returncode == 1 and r.stdout == "" and "check-standard" in r.stderr, (bad, r.stderr)
    # a prevouts file that lacks the input
    pv = tmp_path / "p.txt"
    pv.write_text("# nothing\n")
    r = run("--prevouts", pv, tx)
    assert r.returncode == 1 and "missing prevout" in r.stderr

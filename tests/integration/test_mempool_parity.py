"""Mempool parity: peerd's testmempoolaccept and sendrawtransaction answer as
Bitcoin Core's.

One regtest bitcoind (with a wallet) mines the chain; its blocks go into one
peerd by submitblock, so both nodes stand on the same tip, and neither has a
peer, so nothing reaches either mempool except what a test sends. Each test
crafts transactions (mempool_craft.py: by hand, signed in Python, or by
Core's wallet for taproot) meant to hit one rule of Core's mempool policy,
asks Core's testmempoolaccept, asserts Core gives the reason the case is
about (so the case is right), then asks peerd the same and requires the two
answers to be identical field by field. Where the mempool's state matters,
the same transactions go to both nodes' sendrawtransaction, so the two
mempools evolve alike; the mempool queries (getrawmempool, getmempoolentry,
getmempoolinfo, ancestors/descendants) are compared too, times excluded.

The fixture is module-wide and the tests run in file order (the mempool
grows as they go); each makes its own coins from the pools the fixture
funded (the nodes, the fixture and the comparing: mempool_parity_env.py).
PARITY_CORE_ONLY=1 checks the cases against Core alone.
"""
import os
from decimal import Decimal

import pytest

from mempool_craft import (
    Coin, Tx, TRUE, P2A, OP_1, OP_2, OP_NOP, OP_IF, OP_ENDIF, OP_DROP, OP_CHECKSIG, OP_CHECKMULTISIG,
    OP_CLTV, OP_NOP10, num, op_return, p2pkh, p2sh, p2wpkh, p2wsh, push, script, taproot_leaf)
from mempool_parity_env import (  # env: the module-wide fixture
    COIN, CORE_ONLY, FEE, KEY, KEY2, SPK, addr_desc, env, norm, spend, strip_entry_fields,
    wallet_signed)

pytestmark = pytest.mark.interop


# ==== valid spends of every script type =======================================

def test_valid_p2pkh(env):
    r = env.accept(spend([env.take("pkh")]))
    assert set(r) >= {"txid", "wtxid", "allowed", "vsize", "fees"}


def test_valid_p2wpkh(env):
    env.accept(spend([env.take("wpkh")]))


def test_valid_p2sh_p2wpkh(env):
    env.accept(spend([env.take("sh_wpkh")]))


def test_valid_p2wsh(env):
    env.accept(spend([env.take("wsh_true")]))


def test_valid_p2sh(env):
    env.accept(spend([env.take("sh_true")]))


def test_valid_bare_multisig_spend(env):
    env.accept(spend([env.take("bare_ms")]))


def test_valid_p2a_spend(env):
    c = env.take("p2a")
    w = env.take("wsh_true")
    env.accept(spend([c, w]))


def test_valid_p2tr_key_path(env):
    u = next(u for u in env.core.rpc("listunspent", 1, 9999999, wallet=env.core.wallet)
             if u["desc"].startswith("tr(") and u["spendable"] and u["amount"] >= 1 and (u["txid"], u["vout"]) not in env.used)
    env.used.add((u["txid"], u["vout"]))
    t = Tx().add_in((u["txid"], u["vout"])).add_out(int(u["amount"] * COIN) - FEE, p2wsh(TRUE))
    env.accept(wallet_signed(env, t))


def test_valid_p2tr_script_path(env):
    c = env.take("trs")
    t = Tx().add_in((c.txid, c.n)).add_out(c.value - FEE, p2wsh(TRUE))
    h = wallet_signed(env, t)
    dec = env.core.decoderawtransaction(h)
    assert len(dec["vin"][0]["txinwitness"]) == 3  # signature, script, control block
    env.accept(h)


def test_valid_every_output_type(env):
    outs = [(600, script(KEY.pub, OP_CHECKSIG)), (600, p2pkh(KEY.pub)), (600, p2sh(TRUE)),
            (600, p2wpkh(KEY.pub)), (600, p2wsh(TRUE)), (600, b"\x51\x20" + bytes(range(32))),
            (600, bytes([0x52, 32]) + bytes(32)), (600, SPK["bare_ms"]), (0, op_return(80)), (600, P2A)]
    c = env.take("wsh_true")
    outs.append((c.value - FEE - sum(v for v, _ in outs), p2wsh(TRUE)))
    env.accept(spend([c], outs))


def test_valid_version_1_and_3(env):
    env.accept(spend([env.take("wsh_true")], version=1))
    env.accept(spend([env.take("wsh_true")], version=3))


# ==== IsStandardTx ====================================================================

@pytest.mark.parametrize("version", [0, 4, -1])
def test_version(env, version):
    env.reject(spend([env.take("wsh_true")], version=version), "version")


def test_tx_size(env):
    c = env.take("wsh_true")
    n = 2400  # 43-byte outputs: ~103,000 vB, more than 400,000 WU
    outs = [(1000, p2wsh(TRUE))] * n
    outs.append((c.value - 1000 * n - 300_000, p2wsh(TRUE)))
    env.reject(spend([c], outs), "tx-size")


def test_tx_size_small(env):
    c = env.take("wsh_true")
    t = spend([c], [(0, op_return(2))], fee=c.value)
    assert len(t.ser(False)) < 65
    env.reject(t, "tx-size-small")


def test_scriptsig_size(env):
    c = env.take("sh_true")
    t = spend([c])
    t.vin[0][2] = push(b"\x01" * 1650) + push(TRUE)
    env.reject(t, "scriptsig-size")


def test_scriptsig_not_pushonly(env):
    c = env.take("sh_true")
    t = spend([c])
    t.vin[0][2] = bytes([OP_NOP]) + push(TRUE)
    env.reject(t, "scriptsig-not-pushonly")


@pytest.mark.parametrize("spk", [TRUE, script(OP_1, KEY.pub, KEY.pub, KEY.pub, KEY2.pub, 0x54, OP_CHECKMULTISIG),
                                 op_return(81), b"\x00\x21" + bytes(33), script(b"\x05" + bytes(32), OP_CHECKSIG)],
                         ids=["op_true", "multisig_1of4", "op_return_84", "witv0_33", "p2pk_offcurve"])
def test_scriptpubkey(env, spk):
    c = env.take("wsh_true")
    env.reject(spend([c], [(1000, spk), (c.value - 1000 - FEE, p2wsh(TRUE))]), "scriptpubkey")


def test_op_return_83_bytes_standard(env):
    c = env.take("wsh_true")
    assert len(op_return(80)) == 83
    env.accept(spend([c], [(0, op_return(80)), (c.value - FEE, p2wsh(TRUE))]))


def test_multi_op_return(env):
    c = env.take("wsh_true")
    env.reject(spend([c], [(0, op_return(4)), (0, op_return(4)), (c.value - FEE, p2wsh(TRUE))]),
               "multi-op-return")


@pytest.mark.parametrize("spk,value", [(p2wpkh(KEY.pub), 293), (p2pkh(KEY.pub), 545), (p2wsh(TRUE), 329),
                                       (P2A, 239)], ids=["p2wpkh", "p2pkh", "p2wsh", "p2a"])
def test_dust(env, spk, value):
    c = env.take("wsh_true")
    env.reject(spend([c], [(value, spk), (c.value - value - FEE, p2wsh(TRUE))]), "dust")


def test_dust_threshold_itself_is_not_dust(env):
    c = env.take("wsh_true")
    env.accept(spend([c], [(294, p2wpkh(KEY.pub)), (546, p2pkh(KEY.pub)), (c.value - 840 - FEE, p2wsh(TRUE))]))


def test_ephemeral_dust_with_fee(env):
    """One dust output is allowed only in a zero-fee transaction."""
    c = env.take("wsh_true")
    env.reject(spend([c], [(0, P2A), (c.value - FEE, p2wsh(TRUE))]), "dust")


def test_ephemeral_dust_zero_fee_alone(env):
    c = env.take("wsh_true")
    env.reject(spend([c], [(0, P2A), (c.value, p2wsh(TRUE))], version=3), "min relay fee not met")


def test_ephemeral_two_dust_outputs(env):
    c = env.take("wsh_true")
    env.reject(spend([c], [(0, P2A), (1, p2wsh(TRUE)), (c.value - 1, p2wsh(TRUE))], version=3), "dust")


def test_bare_multisig_output_standard_by_default(env):
    c = env.take("wsh_true")
    ms = script(OP_1, KEY.pub, KEY2.pub, OP_2, OP_CHECKMULTISIG)
    env.accept(spend([c], [(1000, ms), (c.value - 1000 - FEE, p2wsh(TRUE))]))


# ==== CheckTransaction and inputs ========================================================

def test_missing_inputs(env):
    t = Tx().add_in(("ab" * 32, 0), witness=[TRUE]).add_out(1000, p2wsh(TRUE))
    env.reject(t, "missing-inputs")


def test_duplicate_inputs(env):
    c = env.take("wsh_true")
    env.reject(spend([c, c]), "bad-txns-inputs-duplicate")


def test_outputs_above_inputs(env):
    c = env.take("wsh_true")
    env.reject(spend([c], [(c.value + 1, p2wsh(TRUE))]), "bad-txns-in-belowout")


def test_negative_output(env):
    c = env.take("wsh_true")
    env.reject(spend([c], [(-1, p2wsh(TRUE)), (c.value - FEE, p2wsh(TRUE))]), "bad-txns-vout-negative")


def test_coinbase_shaped(env):
    t = Tx().add_in(("00" * 32, 0xFFFFFFFF), script_sig=b"\x02\x01\x00\x51").add_out(1000, p2wsh(TRUE))
    env.reject(t, "coinbase")


def test_premature_coinbase_spend(env):
    env.mine(1, to=addr_desc(p2wsh(TRUE)))
    blk = env.core.getblock(env.core.getbestblockhash(), 2)
    cb = blk["tx"][0]
    n = next(o["n"] for o in cb["vout"] if o["scriptPubKey"]["hex"] == p2wsh(TRUE).hex())
    c = Coin(cb["txid"], n, int(cb["vout"][n]["value"] * COIN), p2wsh(TRUE), "wsh_true")
    env.reject(spend([c]), "bad-txns-premature-spend-of-coinbase")


def test_nonstandard_input(env):
    c = env.take("bare_true")
    env.reject(spend([c]).sign(KEY), "bad-txns-nonstandard-inputs")


def test_nonstandard_input_p2sh_too_many_sigops(env):
    redeem = script(*([KEY.pub, OP_CHECKSIG, OP_DROP] * 16), OP_1)
    (c,) = env.fund([(COIN // 10, p2sh(redeem))], ["custom"])
    t = spend([Coin(c.txid, c.n, c.value, c.spk, "wsh:")])
    t.vin[0][2] = push(redeem)
    env.reject(t, "bad-txns-nonstandard-inputs")


def test_too_many_sigops(env):
    c = env.take("wsh_true")
    ms = SPK["bare_ms"]  # 20 legacy sigops each (80 cost)
    outs = [(1000, ms)] * 201 + [(c.value - 201_000 - 20_000, p2wsh(TRUE))]
    env.reject(spend([c], outs), "bad-txns-too-many-sigops")


@pytest.mark.parametrize("case", ["item_81", "script_3601", "witness_on_p2sh", "stack_101"])
def test_bad_witness_nonstandard(env, case):
    if case == "item_81":
        ws = script(OP_DROP, OP_1)
        (c,) = env.fund([(COIN // 10, p2wsh(ws))], ["wsh:"])
        t = spend([c])
        t.wit[0] = [b"\x01" * 81, ws]
    elif case == "script_3601":
        ws = push(b"\x01" * 3600) + bytes([OP_DROP, OP_1])
        assert len(ws) > 3600
        (c,) = env.fund([(COIN // 10, p2wsh(ws))], ["wsh:"])
        t = spend([c])
        t.wit[0] = [ws]
    elif case == "stack_101":
        ws = bytes([OP_DROP] * 101 + [OP_1])
        (c,) = env.fund([(COIN // 10, p2wsh(ws))], ["wsh:"])
        t = spend([c])
        t.wit[0] = [b"\x01"] * 101 + [ws]
    else:
        t = spend([env.take("sh_true")])
        t.wit[0] = [b"\x01"]
    env.reject(t, "bad-witness-nonstandard")


# ==== scripts ====================================================================

def test_script_mandatory_bad_signature(env):
    t = spend([env.take("wpkh")])
    sig = bytearray(t.wit[0][0])
    sig[10] ^= 1
    t.wit[0][0] = bytes(sig)
    env.reject(t, "mandatory-script-verify-flag-failed")


def test_script_mandatory_false(env):
    ws = script(OP_2, 0x87)  # OP_2 OP_EQUAL
    (c,) = env.fund([(COIN // 10, p2wsh(ws))], ["wsh:"])
    t = spend([c])
    t.wit[0] = [b"\x03", ws]
    env.reject(t, "mandatory-script-verify-flag-failed")


def test_script_high_s(env):
    env.reject(spend([env.take("pkh")], high_s=True), "non-mandatory-script-verify-flag")


def test_script_high_s_segwit(env):
    env.reject(spend([env.take("wpkh")], high_s=True), "non-mandatory-script-verify-flag")


def test_script_non_null_dummy(env):
    t = spend([env.take("bare_ms")])
    t.vin[0][2] = bytes([OP_1]) + t.vin[0][2][1:]
    # The signature does not cover the scriptSig: still a valid signature.
    r = env.tma([t])[0]
    assert not r["allowed"] and "script-verify-flag" in r["reject-reason"], r


def test_script_upgradable_nop(env):
    ws = script(OP_NOP10, OP_1)
    (c,) = env.fund([(COIN // 10, p2wsh(ws))], ["wsh:"])
    t = spend([c])
    t.wit[0] = [ws]
    env.reject(t, "non-mandatory-script-verify-flag")


def test_script_cleanstack_p2sh(env):
    t = spend([env.take("sh_true")])
    t.vin[0][2] = bytes([OP_1]) + push(TRUE)
    r = env.reject(t, "non-mandatory-script-verify-flag")
    assert "Stack size must be exactly one" in r["reject-reason"], r


def test_script_minimalif_p2wsh(env):
    ws = script(OP_IF, OP_1, OP_ENDIF)
    (c,) = env.fund([(COIN // 10, p2wsh(ws))], ["wsh:"])
    t = spend([c])
    t.wit[0] = [b"\x02", ws]
    env.reject(t, "non-mandatory-script-verify-flag")


def test_nonstandard_input_witness_unknown(env):
    c = env.take("witv2")
    env.reject(spend([Coin(c.txid, c.n, c.value, c.spk, "wsh:")]), "bad-txns-nonstandard-inputs")


def tap_coin(env, leaf_script, leaf_version=0xC0):
    spk, control = taproot_leaf(leaf_script, leaf_version)
    (c,) = env.fund([(COIN // 10, spk)], ["wsh:"])
    return c, control


def test_valid_p2tr_script_path_op_true(env):
    c, control = tap_coin(env, TRUE)
    t = spend([c])
    t.wit[0] = [TRUE, control]
    env.accept(t)


def test_taproot_annex(env):
    c, control = tap_coin(env, TRUE)
    t = spend([c])
    t.wit[0] = [TRUE, control, b"\x50\x00"]
    env.reject(t, "bad-witness-nonstandard")


def test_taproot_op_success(env):
    leaf = bytes([0x50])  # OP_SUCCESS80
    c, control = tap_coin(env, leaf)
    t = spend([c])
    t.wit[0] = [leaf, control]
    env.reject(t, "non-mandatory-script-verify-flag")


def test_taproot_unknown_leaf_version(env):
    c, control = tap_coin(env, TRUE, leaf_version=0xC2)
    t = spend([c])
    t.wit[0] = [TRUE, control]
    env.reject(t, "non-mandatory-script-verify-flag")


def test_taproot_wrong_control_block(env):
    c, control = tap_coin(env, TRUE)
    t = spend([c])
    t.wit[0] = [TRUE, control[:1] + bytes(32)]
    env.reject(t, "mandatory-script-verify-flag-failed")


def test_script_cltv_unsatisfied(env):
    ws = script(num(env.height() + 50), OP_CLTV, OP_DROP, OP_1)
    (c,) = env.fund([(COIN // 10, p2wsh(ws))], ["wsh:"])
    t = spend([c], locktime=env.height(), seq=0xFFFFFFFE)
    t.wit[0] = [ws]
    env.reject(t, "mandatory-script-verify-flag-failed")


# ==== finality and sequence locks ===================================================

def test_non_final_height(env):
    env.reject(spend([env.take("wsh_true")], locktime=env.height() + 2, seq=0xFFFFFFFE), "non-final")


def test_non_final_time(env):
    mtp = env.core.getblockchaininfo()["mediantime"]
    env.reject(spend([env.take("wsh_true")], locktime=mtp + 3600, seq=0xFFFFFFFE), "non-final")


def test_final_by_sequence(env):
    env.accept(spend([env.take("wsh_true")], locktime=env.height() + 100, seq=0xFFFFFFFF))


def test_final_next_block(env):
    env.accept(spend([env.take("wsh_true")], locktime=env.height(), seq=0xFFFFFFFE))


def test_non_bip68_final_height(env):
    (c,) = env.fund([(COIN // 10, p2wsh(TRUE))], ["wsh_true"])
    env.reject(spend([c], seq=5), "non-BIP68-final")


def test_non_bip68_final_time(env):
    (c,) = env.fund([(COIN // 10, p2wsh(TRUE))], ["wsh_true"])
    env.reject(spend([c], seq=(1 << 22) | 100), "non-BIP68-final")


def test_bip68_off_in_version_1(env):
    (c,) = env.fund([(COIN // 10, p2wsh(TRUE))], ["wsh_true"])
    env.accept(spend([c], seq=5, version=1))


# ==== fees ====================================================================

def test_min_relay_fee_zero(env):
    env.reject(spend([env.take("wsh_true")], fee=0), "min relay fee not met")


def test_min_relay_fee_below(env):
    t = spend([env.take("wsh_true")], fee=50)
    assert t.vsize > 50
    env.reject(t, "min relay fee not met")


def test_min_relay_fee_exact(env):
    t = spend([env.take("wsh_true")], fee=1)
    t = spend([t.coins[0]], fee=t.vsize)
    env.accept(t)


def test_max_fee_exceeded(env):
    t = spend([env.take("wsh_true")], fee=COIN // 10 - 1000)
    env.reject(t, "max-fee-exceeded")
    env.accept(t, maxfeerate=0)
    env.send_error(t, -25, "Fee exceeds maximum configured by user")
    env.send(t, maxfeerate=0)
    compare_mempool(env)


def test_maxfeerate_given(env):
    t = spend([env.take("wsh_true")], fee=20_000)  # ~180 sat/vB
    env.reject(t, "max-fee-exceeded", maxfeerate=Decimal("0.001"))
    env.accept(t, maxfeerate=Decimal("0.01"))


# ==== the mempool's state ==================================================================

def compare_mempool(env):
    """getrawmempool, getmempoolinfo and every entry, both nodes, times excluded."""
    if CORE_ONLY:
        return
    a = sorted(env.core.getrawmempool())
    b = sorted(env.peerd.rpc("getrawmempool"))
    assert a == b
    va = env.core.getrawmempool(True)
    vb = norm(env.peerd.rpc("getrawmempool", True))
    assert strip_entry_fields(vb) == strip_entry_fields(va)
    ia = env.core.getmempoolinfo()
    ib = norm(env.peerd.rpc("getmempoolinfo"))
    # usage and unbroadcastcount are compared too (peerd counts memory as Core does).
    assert ib == ia


def test_sendrawtransaction_and_queries(env):
    sent = []
    for kind in ("pkh", "wpkh", "sh_wpkh", "wsh_true", "sh_true", "bare_ms"):
        t = spend([env.take(kind)], fee=FEE + len(sent) * 100)
        assert env.send(t) == t.txid
        sent.append(t)
    child = spend([sent[3].out(0)], fee=3000)
    env.send(child)
    compare_mempool(env)
    env.both("getmempoolentry", child.txid)
    env.both("getmempoolancestors", child.txid)
    env.both("getmempoolancestors", child.txid, True)
    env.both("getmempooldescendants", sent[3].txid)
    env.both("getmempooldescendants", sent[3].txid, True)
    env.both("getmempoolentry", "00" * 32)
    env.both("getrawtransaction", child.txid)
    env.both("getrawtransaction", child.txid, 1)
    env.both("getrawtransaction", child.txid, 2)  # no block: as verbosity 1
    env.both("getrawtransaction", child.txid, 0, env.core.getbestblockhash())  # not in that block
    env.both("getrawmempool", False, True)
    env.test_sent = sent


def test_already_in_mempool(env):
    t = env.test_sent[0]
    env.reject(t, "txn-already-in-mempool")
    assert env.both("sendrawtransaction", t.hex()) == t.txid  # Core answers the txid again


def test_same_nonwitness_data(env):
    ws = script(OP_DROP, OP_1)
    (c,) = env.fund([(COIN // 10, p2wsh(ws))], ["wsh:"])
    t = spend([c])
    t.wit[0] = [b"\x01", ws]
    env.send(t)
    t.wit[0] = [b"\x02", ws]
    env.reject(t, "txn-same-nonwitness-data-in-mempool")


# ---- replacement ------------------------------------------------------------------

def test_rbf_accepted(env):
    c = env.take("wsh_true")
    env.send(spend([c], fee=FEE))
    env.accept(spend([c], fee=FEE * 3))


def test_rbf_less_absolute_fee(env):
    a, b = env.take_n("wsh_true", 2)
    env.send(spend([a, b], fee=FEE * 3))
    env.reject(spend([a], fee=FEE * 2), "insufficient fee")


def test_rbf_lower_feerate(env):
    a, b = env.take_n("wsh_true", 2)
    env.send(spend([a], fee=FEE))
    # More absolute fee, but three times the size: a lower feerate.
    outs = [(1000, p2wsh(TRUE))] * 8 + [(a.value + b.value - 8000 - FEE - 10, p2wsh(TRUE))]
    env.reject(spend([a, b], outs, fee=None), "insufficient fee")


def test_rbf_incremental_fee_not_paid(env):
    c = env.take("wsh_true")
    env.send(spend([c], fee=FEE))
    env.reject(spend([c], fee=FEE + 10), "insufficient fee")


def test_rbf_adds_unconfirmed(env):
    a, b = env.take_n("wsh_true", 2)
    env.send(spend([a], fee=FEE))
    parent = spend([b], fee=FEE)
    env.send(parent)
    env.reject(spend([a, parent.out(0)], fee=FEE * 5), "replacement-adds-unconfirmed")


def test_rbf_spends_conflicting(env):
    a, b = env.take_n("wsh_true", 2)
    first = spend([a], fee=FEE)
    env.send(first)
    env.reject(spend([a, first.out(0)], fee=FEE * 5), "bad-txns-spends-conflicting-tx")


def test_rbf_too_many_replacements(env):
    coins = env.take_n("wsh_true", 101)
    for c in coins:
        env.send(spend([c], fee=FEE))
    env.reject(spend(coins, fee=FEE * 200), "too many potential replacements")
    compare_mempool(env)


# ---- package limits -------------------------------------------------------------

def chain(env, coin, n, fee=FEE):
    """n transactions each spending the last one's output 0, all sent."""
    txs = []
    for _ in range(n):
        t = spend([coin], fee=fee)
        env.send(t)
        txs.append(t)
        coin = t.out(0)
    return txs


def test_too_long_chain_ancestors(env):
    txs = chain(env, env.take("wsh_true"), 25)
    env.reject(spend([txs[-1].out(0)]), "too-long-mempool-chain")
    env.both("getmempoolentry", txs[-1].txid)
    env.both("getmempoolancestors", txs[-1].txid)


def test_too_long_chain_descendants_and_carve_out(env):
    c = env.take("wsh_true")
    split = c.value // 4
    parent = spend([c], [(split, p2wsh(TRUE))] * 3 + [(c.value - 3 * split - FEE, p2wsh(TRUE))])
    env.send(parent)
    chain(env, parent.out(0), 24)  # parent has 25 descendants, itself included
    env.both("getmempooldescendants", parent.txid)
    other = spend([env.take("wsh_true")])
    env.send(other)
    # Two unconfirmed ancestors: no carve-out.
    env.reject(spend([parent.out(1), other.out(0)]), "too-long-mempool-chain")
    # One ancestor, small: the CPFP carve-out lets one more in.
    carve = spend([parent.out(1)])
    env.accept(carve)
    env.send(carve)
    env.reject(spend([parent.out(2)]), "too-long-mempool-chain")
    env.both("getmempoolentry", parent.txid)


def big(coin, vbytes_target, fee_rate=2):
    n = vbytes_target // 43
    fee = (n * 43 + 200) * fee_rate
    outs = [(1000, p2wsh(TRUE))] * n
    outs.insert(0, (coin.value - 1000 * n - fee, p2wsh(TRUE)))
    return spend([coin], outs)


def test_too_long_chain_ancestor_size(env):
    t1 = big(env.take("wsh_true"), 52_000)
    env.send(t1)
    t2 = big(t1.out(0), 50_000)
    env.reject(t2, "too-long-mempool-chain")


def test_too_long_chain_descendant_size(env):
    c = env.take("wsh_true")
    half = c.value // 2
    p = spend([c], [(half, p2wsh(TRUE)), (c.value - half - FEE, p2wsh(TRUE))])
    env.send(p)
    env.send(big(p.out(0), 60_000))
    env.reject(big(p.out(1), 45_000), "too-long-mempool-chain")


# ---- TRUC (version 3) ---------------------------------------------------------

def test_truc_spends_non_truc(env):
    p = spend([env.take("wsh_true")], version=2)
    env.send(p)
    env.reject(spend([p.out(0)], version=3), "TRUC-violation")


def test_non_truc_spends_truc(env):
    p = spend([env.take("wsh_true")], version=3)
    env.send(p)
    env.reject(spend([p.out(0)], version=2), "TRUC-violation")


def test_truc_child_too_big(env):
    p = spend([env.take("wsh_true")], version=3)
    env.send(p)
    outs = [(1000, p2wsh(TRUE))] * 30 + [(p.vout[0][0] - 30_000 - 20_000, p2wsh(TRUE))]
    child = spend([p.out(0)], outs, version=3)
    assert child.vsize > 1000
    env.reject(child, "TRUC-violation")


def test_truc_too_big(env):
    c = env.take("wsh_true")
    t = big(c, 10_100, fee_rate=3)
    t.version = 3
    env.reject(t, "TRUC-violation")


def test_truc_grandchild(env):
    p = spend([env.take("wsh_true")], version=3)
    env.send(p)
    c = spend([p.out(0)], version=3)
    env.send(c)
    env.reject(spend([c.out(0)], version=3), "TRUC-violation")


def test_truc_sibling_eviction(env):
    c = env.take("wsh_true")
    half = c.value // 2
    p = spend([c], [(half, p2wsh(TRUE)), (c.value - half - FEE, p2wsh(TRUE))], version=3)
    env.send(p)
    env.send(spend([p.out(0)], version=3))
    # A second child: too little fee to evict the first, then enough.
    env.reject(spend([p.out(1)], version=3, fee=FEE), "insufficient fee")
    env.accept(spend([p.out(1)], version=3, fee=FEE * 4))


# ---- packages in testmempoolaccept ----------------------------------------------

def test_package_parent_and_child(env):
    p = spend([env.take("wsh_true")])
    c = spend([p.out(0)])
    r = env.tma([p, c])
    assert [x["allowed"] for x in r] == [True, True], r


def test_package_not_sorted(env):
    p = spend([env.take("wsh_true")])
    c = spend([p.out(0)])
    r = env.tma([c, p])
    assert all(x.get("package-error") == "package-not-sorted" for x in r), r


def test_package_conflict(env):
    c = env.take("wsh_true")
    r = env.tma([spend([c], fee=FEE), spend([c], fee=FEE * 2)])
    assert all(x.get("package-error") == "conflict-in-package" for x in r), r


def test_package_child_fails(env):
    """The child pays nothing: it alone is judged, the parent gets ids only."""
    p = spend([env.take("wsh_true")])
    c = spend([p.out(0)], fee=0)
    r = env.tma([p, c])
    assert "allowed" not in r[0] and r[1]["allowed"] is False, r


def test_package_unrelated(env):
    r = env.tma([spend([env.take("wsh_true")]), spend([env.take("wsh_true")])])
    assert [x["allowed"] for x in r] == [True, True], r


def test_package_duplicates(env):
    t = spend([env.take("wsh_true")])
    r = env.tma([t, t])
    assert all(x.get("package-error") == "package-contains-duplicates" for x in r), r


def test_package_too_large(env):
    a = big(env.take("wsh_true"), 51_000)
    b = big(env.take("wsh_true"), 51_000)
    r = env.tma([a, b])
    assert all(x.get("package-error", "").startswith("package-too-large") for x in r), r


def test_bip68_unconfirmed_parent(env):
    p = spend([env.take("wsh_true")])
    env.send(p)
    env.reject(spend([p.out(0)], seq=1), "non-BIP68-final")
    env.accept(spend([p.out(0)], seq=0))


def test_rbf_evicts_descendants(env):
    c = env.take("wsh_true")
    p = spend([c], fee=FEE)
    env.send(p)
    kid = spend([p.out(0)], fee=FEE)
    env.send(kid)
    # Must pay for both: the parent's and the child's fees plus relay of its own size.
    env.reject(spend([c], fee=FEE * 2 + 50), "insufficient fee")
    r = spend([c], fee=FEE * 4)
    env.accept(r)
    env.send(r)
    compare_mempool(env)


def test_package_too_many(env):
    txs = [spend([env.take("wsh_true")]) for _ in range(26)]
    r = env.tma(txs)
    assert isinstance(r, tuple) and r[1] == -8, r


# ==== sendrawtransaction's errors ============================================================

def test_sendraw_rejected(env):
    env.send_error(spend([env.take("wsh_true")], fee=0), -26, "min relay fee not met")


def test_sendraw_missing_inputs(env):
    t = Tx().add_in(("cd" * 32, 0), witness=[TRUE]).add_out(1000, p2wsh(TRUE))
    env.send_error(t, -25, "bad-txns-inputs-missingorspent")


def test_sendraw_decode_failed(env):
    r = env.both("sendrawtransaction", "00")
    assert r[0] == "error" and r[1] == -22, r
    r = env.both("testmempoolaccept", ["zz"])
    assert r[0] == "error" and r[1] == -22, r


# ==== blocks clear both mempools alike; savemempool and restart ===========================

def test_block_clears_mempools(env):
    compare_mempool(env)
    before = len(env.core.getrawmempool())
    assert before > 0
    t = spend([env.take("wsh_true")])
    env.send(t)
    env.mine(1)
    compare_mempool(env)
    assert len(env.core.getrawmempool()) < before
    # What the block confirmed is no longer sendable.
    env.send_error(t, -27, "Transaction outputs already in utxo set")


def test_savemempool_and_restart(env):
    t = spend([env.take("wpkh")])
    env.send(t)
    compare_mempool(env)
    if CORE_ONLY:
        return
    r = env.peerd.rpc("savemempool")
    assert os.path.exists(r["filename"]), r
    env.restart_peerd()
    compare_mempool(env)


# ==== parameters, errors and blocks' transactions ==================================

def same(env, method, *params):
    return env.both(method, *params)


def test_getrawtransaction_from_a_block(env):
    env.mine(1)
    best = env.core.getbestblockhash()
    blk = env.core.getblock(best, 1)
    # A wallet spend, mined: verbosity 2 shows its fee and prevouts (the block's undo).
    t = spend([env.take("wpkh")])
    env.both("sendrawtransaction", t.hex())
    h = env.mine(1, txs=[t])[0]
    for verbosity in (0, 1, 2, True, False, 3):
        r = same(env, "getrawtransaction", t.txid, verbosity, h)
        assert not isinstance(r, tuple), r
    r = same(env, "getrawtransaction", t.txid, 2, h)
    assert r["fee"] == Decimal(FEE) / COIN and "prevout" in r["vin"][0], r
    for verbosity in (0, 1, 2):
        same(env, "getrawtransaction", blk["tx"][0], verbosity, best)  # a coinbase


def test_getrawtransaction_errors(env):
    t = spend([env.take("wsh_true")])
    # In neither mempool, no blockhash, no -txindex: Core's code and text
    # (test_indexes.py asks with the index).
    same(env, "getrawtransaction", t.txid)
    same(env, "getrawtransaction", t.txid, 1, env.core.getbestblockhash())
    same(env, "getrawtransaction", t.txid, 1, "00" * 32)
    same(env, "getrawtransaction", "zz")
    same(env, "getrawtransaction", env.core.getblock(env.core.getblockhash(0))["tx"][0])


def test_sendrawtransaction_errors_before_the_mempool(env):
    same(env, "sendrawtransaction", "zz")
    same(env, "sendrawtransaction", 5)
    same(env, "sendrawtransaction", "0200")
    c = env.take("wsh_true")
    burn = spend([c], [(1000, op_return(4)), (c.value - 1000 - FEE, p2wsh(TRUE))])
    r = same(env, "sendrawtransaction", burn.hex())
    assert r[:2] == ("error", -25), r
    for rate in (-1, "x", 1, Decimal("1.5"), "0.000000001"):
        same(env, "sendrawtransaction", burn.hex(), rate)
    # Confirmed already: -27 whatever the mempool.
    blk = env.core.getblock(env.core.getbestblockhash(), 0)
    cb = env.core.getblock(env.core.getbestblockhash(), 2)["tx"][0]["hex"]
    r = same(env, "sendrawtransaction", cb)
    assert r[:2] == ("error", -27), r
    assert blk


def test_testmempoolaccept_parameter_errors(env):
    t = spend([env.take("wsh_true")])
    for params in (([],), ([t.hex()] * 26,), (["zz"],), ([t.hex(), "00"],), ([t.hex()], -1),
                   ([t.hex()], "x"), ([t.hex()], 1), ("notalist",)):
        r = same(env, "testmempoolaccept", *params)
        assert isinstance(r, tuple), r


def test_mempool_query_errors(env):
    same(env, "getmempoolentry", "zz")
    same(env, "getmempoolentry", "00" * 32)
    same(env, "getmempoolancestors", "00" * 32)
    same(env, "getmempooldescendants", "11" * 32, True)
    same(env, "getrawmempool", True, True)
    same(env, "getrawmempool", "yes")
    same(env, "getmempooldescendants", "11" * 32, 1)


def test_help_lists_the_mempool_methods(env):
    if CORE_ONLY:
        pytest.skip("PARITY_CORE_ONLY=1")
    text = env.peerd.rpc("help")
    for m in ("getmempoolinfo", "getrawmempool", "getmempoolentry", "getmempoolancestors",
              "getmempooldescendants", "getrawtransaction", "sendrawtransaction", "testmempoolaccept",
              "savemempool"):
        assert "\n" + m in text, m
        assert env.peerd.rpc("help", m).startswith(m), m


# ==== gettxout and generateblock read the mempool ===================================
#
# Core's gettxout reads through CCoinsViewMemPool by default (a coin a mempool
# transaction spends is gone, a mempool transaction's outputs have 0
# confirmations); generateblock takes the txid of a mempool transaction
# (mempool.get) and builds its coinbase from a template made without the
# mempool, so the fees of what it includes go unclaimed.

def coinbase_value(block_hex):
    """The first output's value of a block's coinbase."""
    from bitcoin.core import CBlock

    return CBlock.deserialize(bytes.fromhex(block_hex)).vtx[0].vout[0].nValue


def subsidy(height):
    return (50 * COIN) >> (height // 150)  # regtest halves every 150 blocks


def test_gettxout_reads_through_the_mempool(env):
    c = env.take("wsh_true")
    parent = spend([c], [(c.value - FEE - 50_000, p2wpkh(KEY.pub)), (50_000, p2wsh(TRUE))])
    child = spend([parent.out(1)])
    # Unspent and confirmed: the same object whatever include_mempool says.
    for extra in ((), (True,), (False,)):
        r = same(env, "gettxout", c.txid, c.n, *extra)
        assert isinstance(r, dict) and r["confirmations"] >= 1 and r["coinbase"] is False, r
    env.send(parent)
    env.send(child)
    cases = [
        # (txid, n, include_mempool or None), what Core answers
        ((c.txid, c.n), None),  # spent by a mempool transaction
        ((c.txid, c.n, True), None),
        ((c.txid, c.n, False), "utxo"),  # the UTXO set alone still has it
        ((parent.txid, 0), "mempool"),  # created by a mempool transaction
        ((parent.txid, 0, True), "mempool"),
        ((parent.txid, 0, False), None),
        ((parent.txid, 1), None),  # created and spent in the mempool
        ((parent.txid, 1, False), None),
        ((parent.txid, 2), None),  # past its last output
        ((child.txid, 0), "mempool"),
    ]
    for params, want in cases:
        r = same(env, "gettxout", *params)
        if want is None:
            assert r is None, (params, r)
        else:
            assert isinstance(r, dict), (params, r)
            assert list(r) == ["bestblock", "confirmations", "value", "scriptPubKey", "coinbase"], r
            assert r["bestblock"] == env.core.getbestblockhash() and r["coinbase"] is False, r
            assert (r["confirmations"] == 0) == (want == "mempool"), (params, r)
    for n in (-1, 2**32):  # Core's getInt<uint32_t>: -1 "JSON integer out of range"
        assert same(env, "gettxout", c.txid, n)[:2] == ("error", -1)
    r = same(env, "gettxout", parent.txid, 0)
    assert r["value"] == Decimal(c.value - FEE - 50_000) / COIN and "address" in r["scriptPubKey"], r
    # Mined: the UTXO set has them, with one confirmation.
    env.mine(1)
    compare_mempool(env)
    for extra in ((), (False,)):
        assert same(env, "gettxout", parent.txid, 0, *extra)["confirmations"] == 1
        assert same(env, "gettxout", child.txid, 0, *extra)["confirmations"] == 1
        assert same(env, "gettxout", c.txid, c.n, *extra) is None


def test_generateblock_takes_mempool_txids(env):
    fee = 7_000
    out = addr_desc(env.change_spk)  # peerd has no wallet: a raw() descriptor
    c = env.take("wsh_true")
    t = spend([c], fee=fee)
    env.send(t)
    child = spend([t.out(0)])
    env.send(child)
    never_sent = spend([env.take("wsh_true")])
    # A txid in neither mempool, alone or after a good one: Core's -5.
    for txs in ([never_sent.txid], [t.txid, never_sent.txid]):
        r = same(env, "generateblock", out, txs)
        assert r == ("error", -5, "Transaction %s not in mempool." % never_sent.txid), r
    # Core's getInt<int> range error (-1), before any block is mined.
    addr = env.core.new_address("bech32")
    for params in ((2**40, addr), (1, addr, 2**40)):
        assert same(env, "generatetoaddress", *params)[:2] == ("error", -1)
    # A mempool child without its parent: TestBlockValidity's reason, nothing mined.
    r = same(env, "generateblock", out, [child.txid])
    assert r[:2] == ("error", -25) and "bad-txns-inputs-missingorspent" in r[2], r
    # Each node's block of the two by txid, not submitted: the coinbase claims
    # the subsidy only, not the transactions' fees.
    height = env.height() + 1
    theirs = env.core.rpc("generateblock", out, [t.txid, child.txid], False)
    ours = env.peerd.rpc("generateblock", out, [t.txid, child.txid], False)
    assert sorted(ours) == sorted(theirs) == ["hash", "hex"]
    assert coinbase_value(theirs["hex"]) == subsidy(height)
    assert coinbase_value(ours["hex"]) == coinbase_value(theirs["hex"])
    assert t.hex() + child.hex() in ours["hex"] and t.hex() + child.hex() in theirs["hex"]
    compare_mempool(env)  # neither block was submitted
    assert env.core.getblockcount() == height - 1
    # peerd's block, submitted to both: Core takes it as it takes its own.
    assert env.core.rpc("submitblock", ours["hex"]) is None
    assert env.peerd.rpc("submitblock", ours["hex"]) is None
    assert env.peerd.rpc("getbestblockhash") == env.core.getbestblockhash() == ours["hash"]
    blk = same(env, "getblock", ours["hash"], 2)
    assert [x["txid"] for x in blk["tx"][1:]] == [t.txid, child.txid], blk
    assert blk["tx"][0]["vout"][0]["value"] == Decimal(subsidy(height)) / COIN
    assert blk["tx"][1]["fee"] == Decimal(fee) / COIN
    compare_mempool(env)  # both mempools lost the two
    assert t.txid not in env.core.getrawmempool()
    # Submitted by default: each node mines a block of a txid it has.
    t2 = spend([env.take("wsh_true")], fee=fee)
    env.send(t2)
    h = env.peerd.rpc("generateblock", out, [t2.txid])["hash"]
    assert env.core.rpc("submitblock", env.peerd.rpc("getblock", h, 0)) is None
    assert same(env, "getblock", h, 2)["tx"][0]["vout"][0]["value"] == Decimal(subsidy(height + 1)) / COIN
    compare_mempool(env)

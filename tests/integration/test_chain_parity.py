"""Block validation parity: peerd's submitblock answers as Bitcoin Core's.

One regtest bitcoind mines a chain with its wallet (coinbases to addresses
of all four types, wallet sends of each type mined), and its blocks go into
one peerd through submitblock, so both have the same chain. Then each test
crafts one block on the common tip (by hand here: python-bitcoinlib only
parses and serialises transactions, merkle roots, commitments and proof of
work are computed in this file) that breaks exactly one rule, gives the
same bytes to both submitblocks, and requires the two answers to be
identical and to be the reason the test is about. A block is submitted
twice (what a node remembers of a rejected block shows in the second
answer), and after every test both best blocks and both getchaintips are
the same: a rejected block changes neither chain, a valid one advances both.

Valid spends are signed by Core's wallet (signrawtransactionwithwallet);
invalid signatures are those, damaged. Regtest's proof of work (0x207fffff)
takes about two nonces.

Not reachable on regtest: bad-txns-inputvalues-outofrange and
bad-txns-accumulated-fee-outofrange (both need more than 21 million coins
in one transaction or block; regtest's subsidy halves every 150 blocks, so
it will only ever issue 15,000).

The fixture is module-wide and the tests run in file order, but each builds
on whatever the common tip is, so any subset (-k) runs too. The last tests
are strict xfails: differences in peerd's daemon/ (not chain/) that make
its answer differ from Core's; each says why, and fails once it is fixed.

bitcoind is found as bitcoind.find_bitcoind() says ($BITCOIND,
../shared/bin, PATH); without one every test here is skipped.
"""
import hashlib
import os
import struct
import time
from decimal import Decimal

import pytest
from bitcoin.core import COIN, COutPoint, CMutableTransaction, CMutableTxIn, CTxInWitness, CTxOut, CTxWitness, \
    CScriptWitness, lx, x
from bitcoin.core.script import CScript, OP_CHECKMULTISIG, OP_CHECKSIG, OP_TRUE

import bitcoind
from conftest import PeerClosed, Peerd, RpcError as CtlError, save_failure_logs, sha256d, stop_core_and_peerd, ser_compact as compact

pytestmark = pytest.mark.interop

POW_LIMIT_BITS = 0x207FFFFF
HALVING = 150  # regtest's nSubsidyHalvingInterval
WITNESS_TAG = bytes.fromhex("aa21a9ed")
MAX_BLOCK_WEIGHT = 4_000_000
# PARITY_TRACE=1 (with pytest -s): print both answers to every submitblock.
TRACE = bool(os.environ.get("PARITY_TRACE"))


# ---- hashing and serialisation, by hand ------------------------------------

def tx_bytes(tx, witness=True):
    return tx.serialize({"include_witness": witness})


def txid(tx):
    return sha256d(tx_bytes(tx, False))


def wtxid(tx):
    return sha256d(tx_bytes(tx, True))


def merkle(leaves):
    """Core's ComputeMerkleRoot (an odd level repeats its last hash)."""
    level = list(leaves)
    while len(level) > 1:
        if len(level) % 2:
            level.append(level[-1])
        level = [sha256d(level[i] + level[i + 1]) for i in range(0, len(level), 2)]
    return level[0]


def target(bits):
    exp, mant = bits >> 24, bits & 0x007FFFFF
    return mant << (8 * (exp - 3)) if exp > 3 else mant >> (8 * (3 - exp))


def header_bytes(version, prev, root, ntime, bits, nonce):
    return struct.pack("<i32s32sIII", version, prev, root, ntime, bits, nonce)


def subsidy(height):
    return (50 * COIN) >> (height // HALVING)


def hexid(h):
    return h[::-1].hex()


# ---- one block ------------------------------------------------------------------

class Block:
    """A block under construction: header fields and transactions (python-bitcoinlib
    mutable transactions). raw() finishes it: merkle root (unless given), the
    witness commitment when asked or needed, and a nonce that meets (or, with
    pow=False, misses) the target of its bits."""

    def __init__(self, prev_hash, height, ntime, version=0x20000000, bits=POW_LIMIT_BITS):
        self.prev = prev_hash  # internal byte order
        self.height = height
        self.time = ntime
        self.version = version
        self.bits = bits
        self.cb = coinbase(height)
        self.txs = []
        self.commit = None  # None: when any tx has a witness; True/False: forced
        self.commit_hash = None  # override the committed hash
        self.cb_witness = None  # override the coinbase witness stack (list of bytes)
        self.root = None  # override the merkle root
        self.pow = True
        self.extra_txs = []  # appended after the root is computed (CVE-2012-2459)
        self.hash = None

    def vtx(self):
        return [self.cb] + self.txs

    def _finish_coinbase(self):
        has_wit = any(not t.wit.is_null() for t in self.txs)
        commit = has_wit if self.commit is None else self.commit
        if not commit:
            if self.cb_witness is not None:
                self.cb.wit = CTxWitness([CTxInWitness(CScriptWitness(self.cb_witness))])
            return
        nonce_stack = self.cb_witness if self.cb_witness is not None else [bytes(32)]
        self.cb.wit = CTxWitness([CTxInWitness(CScriptWitness(nonce_stack))])
        if self.commit_hash is None:
            leaves = [bytes(32)] + [wtxid(t) for t in self.txs]
            nonce = nonce_stack[0] if len(nonce_stack) == 1 and len(nonce_stack[0]) == 32 else bytes(32)
            h = sha256d(merkle(leaves) + nonce)
        else:
            h = self.commit_hash
        self.cb.vout.append(CTxOut(0, CScript(b"\x6a\x24" + WITNESS_TAG + h)))

    def raw(self):
        if self.hash is not None:
            return self.hdr + self.body()
        self._finish_coinbase()
        root = self.root if self.root is not None else merkle([txid(t) for t in self.vtx()])
        tgt = target(self.bits)
        for nonce in range(1 << 20):
            hdr = header_bytes(self.version, self.prev, root, self.time, self.bits, nonce)
            h = sha256d(hdr)
            if (int.from_bytes(h, "little") <= tgt) == self.pow:
                break
        else:
            raise AssertionError("no nonce found")
        self.hdr = hdr
        self.hash = hexid(h)
        return self.hdr + self.body()

    def body(self, vtx=None):
        """The transactions as serialised after the header (vtx: others, same header)."""
        vtx = self.vtx() + self.extra_txs if vtx is None else vtx
        return compact(len(vtx)) + b"".join(tx_bytes(t) for t in vtx)


_cb_serial = [0]


def coinbase(height, value=None, script_sig=None):
    """A coinbase for height (BIP34 push first, then a serial so no two are alike),
    paying value (the subsidy by default) to OP_TRUE."""
    _cb_serial[0] += 1
    if script_sig is None:
        script_sig = CScript([height, _cb_serial[0].to_bytes(4, "little")])
    vin = [CMutableTxIn(COutPoint(), script_sig, 0xFFFFFFFF)]
    vout = [CTxOut(subsidy(height) if value is None else value, CScript([OP_TRUE]))]
    return CMutableTransaction(vin, vout, 0, 1)


def plain_tx(prevouts, outputs, version=1, locktime=0, sequence=0xFFFFFFFF, script_sig=b""):
    """An unsigned transaction (for rules that do not look at scripts)."""
    vin = [CMutableTxIn(COutPoint(lx(t), n), CScript(script_sig), sequence) for t, n in prevouts]
    vout = [CTxOut(v, CScript(s)) for v, s in outputs]
    return CMutableTransaction(vin, vout, locktime, version)


# ---- the two nodes -----------------------------------------------------------------

def answer(call):
    """A submitblock's answer, comparable across the two RPC clients: its result,
    or ("error", code, message)."""
    try:
        return call()
    except bitcoind.RpcError as e:
        return ("error", e.code, e.message)
    except CtlError as e:
        return ("error", e.code, e.message)


class Pair:
    def __init__(self, core, peerd, binary, tmp):
        self.core = core
        self.peerd = peerd
        self.binary = binary
        self.tmp = tmp

    def restart(self, core_args=(), peerd_args=()):
        """Stop both (Core by RPC, peerd by SIGTERM) and start them again on the
        same data with other options; Core's wallet is loaded again."""
        core, self.core = self.core, None
        assert core.stop() == 0, core.tail()
        peerd, self.peerd = self.peerd, None
        rc, _ = peerd.stop(timeout=15)
        assert rc == 0, peerd.log()
        self.core = bitcoind.Bitcoind(self.binary, self.tmp / "core", name="core0", args=core_args)
        self.core.wait_ready()
        self.core.rpc("loadwallet", core.wallet)
        self.core.wallet = core.wallet
        self.peerd = Peerd(self.tmp, name="peerd", listen=False, args=peerd_args)

    def submit(self, raw):
        """Both answers to one submitblock (Core first); asserts they are the same."""
        h = raw.hex()
        a = answer(lambda: self.core.rpc("submitblock", h))
        b = self.peerd_submit(h)
        if TRACE:
            print("submitblock %s...: Core %r, peerd %r" % (h[:16], a, b))
        assert b == a, "peerd answered %r, Core %r" % (b, a)
        return a

    def peerd_submit(self, h):
        """peerd's answer; a control connection peerd closed is replaced (and its
        last words, if any, are the answer)."""
        try:
            return answer(lambda: self.peerd.rpc("submitblock", h))
        except (OSError, PeerClosed) as e:
            ctl, self.peerd._ctl = self.peerd._ctl, None
            try:
                reply = ctl.read_line()
                got = ("error", reply["error"]["code"], reply["error"]["message"])
            except Exception:
                got = ("connection closed", repr(e))
            ctl.close()
            return got

    def tip(self):
        """(hash, height, time, mediantime) of the common tip; asserts it is common."""
        best = self.core.getbestblockhash()
        assert self.peerd.rpc("getbestblockhash") == best
        hdr = self.core.getblockheader(best)
        return best, hdr["height"], hdr["time"], hdr["mediantime"]

    def block(self, **kw):
        """A Block on the common tip, dated a second after it."""
        best, height, t, _ = self.tip()
        return Block(lx(best), height + 1, t + 1, **kw)

    def same_state(self):
        best = self.core.getbestblockhash()
        assert self.peerd.rpc("getbestblockhash") == best
        key = lambda t: (-t["height"], t["hash"])
        theirs = sorted(self.core.getchaintips(), key=key)
        ours = sorted(self.peerd.rpc("getchaintips"), key=key)
        assert ours == theirs, "getchaintips differ:\npeerd %r\nCore  %r" % (ours, theirs)

    # ---- the wallet's coins ------------------------------------------------
    def utxos(self, kind, min_amount=Decimal("1")):
        """Confirmed wallet outputs whose descriptor starts with kind ("pkh(",
        "sh(wpkh(", "wpkh(", "tr("), largest first."""
        out = [u for u in self.core.rpc("listunspent", 1, 9999999, wallet=self.core.wallet)
               if u["spendable"] and u["desc"].startswith(kind) and u["amount"] >= min_amount]
        assert out, "no %s output in the wallet" % kind
        return sorted(out, key=lambda u: (-u["amount"], u["txid"], u["vout"]))

    def signed(self, utxo, amount=None, sequence=None, locktime=0, fee=Decimal("0.001"), dest_type="bech32"):
        """utxo spent to one new wallet address (amount, or all but fee), signed by
        Core's wallet; a CMutableTransaction."""
        inp = {"txid": utxo["txid"], "vout": utxo["vout"]}
        if sequence is not None:
            inp["sequence"] = sequence
        dest = self.core.new_address(dest_type)
        value = utxo["amount"] - fee if amount is None else amount
        raw = self.core.createrawtransaction([inp], [{dest: value}], locktime)
        s = self.core.rpc("signrawtransactionwithwallet", raw, wallet=self.core.wallet)
        assert s["complete"], s
        return CMutableTransaction.from_tx(CMutableTransaction.deserialize(x(s["hex"])))




@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Core (with a funded wallet, ~125 blocks) and peerd (fed Core's blocks), at one tip.
    Both are stopped at the end, whatever happened; Core's debug.log and
    peerd's log are kept in $BUILD/test-logs/chain_parity/."""
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    tmp = tmp_path_factory.mktemp("parity")
    core = peerd = p = None
    try:
        core = bitcoind.Bitcoind(binary, tmp / "core", name="core0")
        core.wait_ready()
        core.create_wallet()
        core.fund_wallet(per_type=5)  # 20 coinbases of each type's address, then 100 blocks
        # Wallet spends of each input type, mined.
        for kind, dest in (("pkh(", "bech32m"), ("sh(wpkh(", "legacy"), ("wpkh(", "p2sh-segwit"),
                           ("tr(", "bech32")):
            utxo = next(u for u in core.rpc("listunspent", 1, 9999999, wallet=core.wallet)
                        if u["spendable"] and u["amount"] >= 10 and u["desc"].startswith(kind))
            core.send_typed(utxo, dest, amount=Decimal("3"))
        core.mine(1)
        core.send_to(core.new_address("bech32"), Decimal("7"))
        core.mine(4)
        peerd = Peerd(tmp, name="peerd", listen=False)
        height = core.getblockcount()
        c = peerd.ctl()
        for h in range(1, height + 1):
            raw = core.getblock(core.getblockhash(h), 0)
            r = c.call("submitblock", raw)
            assert r is None, "Core's block %d: peerd answered %r" % (h, r)
        p = Pair(core, peerd, binary, tmp)
        p.same_state()
        yield p
    except BaseException:
        core, peerd = (p.core, p.peerd) if p else (core, peerd)
        save_failure_logs("chain_parity", core, peerd)
        raise
    finally:
        if p is not None:
            core, peerd = p.core, p.peerd
        stop_core_and_peerd(core, peerd)


def rejected(pair, raw, reason, again=None):
    """Both nodes answer reason; again (default: reason) to the same bytes a second
    time; nothing changed."""
    before = pair.tip()
    assert pair.submit(raw) == reason
    assert pair.submit(raw) == (reason if again is None else again)
    assert pair.tip() == before
    pair.same_state()


# ---- header rules ------------------------------------------------------------------

def test_high_hash(pair):
    b = pair.block()
    b.pow = False
    rejected(pair, b.raw(), "high-hash")


def test_high_hash_target_above_limit(pair):
    b = pair.block(bits=0x2100FFFF)  # a target above regtest's limit: no hash meets it
    rejected(pair, b.raw(), "high-hash")


def test_bad_diffbits(pair):
    b = pair.block(bits=0x207FFFFE)  # a harder target than required: still wrong
    rejected(pair, b.raw(), "bad-diffbits")


def test_time_too_old(pair):
    _, _, _, mtp = pair.tip()
    b = pair.block()
    b.time = mtp  # must be strictly after the median time past
    rejected(pair, b.raw(), "time-too-old")


def test_time_too_new(pair):
    b = pair.block()
    b.time = int(time.time()) + 2 * 3600 + 600
    rejected(pair, b.raw(), "time-too-new")


@pytest.mark.parametrize("version", [1, 2, 3])
def test_bad_version(pair, version):
    # Regtest buries BIP34 (v2), BIP66 (v3) and BIP65 (v4) at height 1.
    b = pair.block(version=version)
    rejected(pair, b.raw(), "bad-version(0x%08x)" % version)


def test_prev_blk_not_found(pair):
    b = pair.block()
    b.prev = sha256d(b"no such block")
    rejected(pair, b.raw(), "prev-blk-not-found")


# ---- context-free block rules ------------------------------------------------------

def test_bad_txnmrklroot(pair):
    b = pair.block()
    b.root = sha256d(b"not the root")
    rejected(pair, b.raw(), "bad-txnmrklroot")


def test_bad_txns_duplicate(pair):
    # [cb, t1, t2] and [cb, t1, t2, t2] have the same root (CVE-2012-2459).
    b = pair.block()
    t1 = plain_tx([(hexid(sha256d(b"a")), 0)], [(1000, [OP_TRUE])])
    t2 = plain_tx([(hexid(sha256d(b"b")), 0)], [(1000, [OP_TRUE])])
    b.txs = [t1, t2]
    b.extra_txs = [t2]
    rejected(pair, b.raw(), "bad-txns-duplicate")


def test_bad_cb_multiple(pair):
    b = pair.block()
    second = coinbase(b.height)
    b.txs = [second]
    rejected(pair, b.raw(), "bad-cb-multiple")


def test_bad_blk_sigops(pair):
    # 20,001 legacy sigops in one output (MAX_BLOCK_SIGOPS_COST / 4 = 20,000).
    b = pair.block()
    script = bytes([OP_CHECKSIG]) * 20_001
    b.txs = [plain_tx([(hexid(sha256d(b"s")), 0)], [(0, script)])]
    rejected(pair, b.raw(), "bad-blk-sigops")


def test_bad_blk_sigops_multisig(pair):
    # A bare CHECKMULTISIG counts 20: 1,001 of them are 20,020.
    b = pair.block()
    script = bytes([OP_CHECKMULTISIG]) * 1_001
    b.txs = [plain_tx([(hexid(sha256d(b"m")), 0)], [(0, script)])]
    rejected(pair, b.raw(), "bad-blk-sigops")


def test_bad_txns_vout_negative_in_block(pair):
    # CheckTransaction inside CheckBlock: Core's tx reason for the block.
    b = pair.block()
    b.txs = [plain_tx([(hexid(sha256d(b"n")), 0)], [(-1, [OP_TRUE])])]
    rejected(pair, b.raw(), "bad-txns-vout-negative")


# ---- contextual block rules ----------------------------------------------------

def test_bad_cb_height(pair):
    b = pair.block()
    b.cb = coinbase(b.height, script_sig=CScript([b.height + 1, b"x"]))
    rejected(pair, b.raw(), "bad-cb-height", again="duplicate-invalid")


def test_bad_txns_nonfinal_locktime(pair):
    b = pair.block()
    # Locked until this very height: final only from the next one.
    b.txs = [plain_tx([(hexid(sha256d(b"l")), 0)], [(1000, [OP_TRUE])], locktime=b.height, sequence=0)]
    rejected(pair, b.raw(), "bad-txns-nonfinal", again="duplicate-invalid")


def test_bad_witness_nonce_size(pair):
    u = pair.utxos("wpkh(")[0]
    b = pair.block()
    b.txs = [pair.signed(u)]
    b.cb_witness = [bytes(31)]
    # Mutated, not invalid: the second answer is the same reason again.
    rejected(pair, b.raw(), "bad-witness-nonce-size")


def test_bad_witness_nonce_two_items(pair):
    u = pair.utxos("wpkh(")[0]
    b = pair.block()
    b.txs = [pair.signed(u)]
    b.cb_witness = [bytes(32), b"\x01"]
    rejected(pair, b.raw(), "bad-witness-nonce-size")


def test_bad_witness_merkle_match(pair):
    u = pair.utxos("wpkh(")[0]
    b = pair.block()
    b.txs = [pair.signed(u)]
    b.commit_hash = sha256d(b"not the commitment")
    rejected(pair, b.raw(), "bad-witness-merkle-match")


def test_unexpected_witness(pair):
    u = pair.utxos("wpkh(")[0]
    b = pair.block()
    b.txs = [pair.signed(u)]
    b.commit = False
    rejected(pair, b.raw(), "unexpected-witness")


# ---- rules that need the UTXO set (ConnectBlock) --------------------------------

def test_bad_txns_inputs_missingorspent(pair):
    b = pair.block()
    b.txs = [plain_tx([(hexid(sha256d(b"missing")), 0)], [(1000, [OP_TRUE])])]
    rejected(pair, b.raw(), "bad-txns-inputs-missingorspent", again="duplicate-invalid")


def test_bad_txns_premature_spend_of_coinbase(pair):
    best, height, _, _ = pair.tip()
    cb = pair.core.getblock(best)["tx"][0]  # one confirmation
    b = pair.block()
    b.txs = [plain_tx([(cb, 0)], [(1000, [OP_TRUE])])]
    rejected(pair, b.raw(), "bad-txns-premature-spend-of-coinbase", again="duplicate-invalid")


def test_bad_txns_in_belowout(pair):
    u = pair.utxos("wpkh(")[0]
    b = pair.block()
    b.txs = [pair.signed(u, amount=u["amount"] + Decimal("0.00000001"))]
    rejected(pair, b.raw(), "bad-txns-in-belowout", again="duplicate-invalid")


def test_bad_txns_nonfinal_sequence_lock(pair):
    # BIP68: a relative lock of 1,000 blocks on a coin a few blocks old.
    u = pair.utxos("wpkh(")[0]
    assert u["confirmations"] < 1000
    b = pair.block()
    tx = pair.signed(u, sequence=1000)
    assert tx.nVersion >= 2
    b.txs = [tx]
    rejected(pair, b.raw(), "bad-txns-nonfinal", again="duplicate-invalid")


def test_bad_cb_amount(pair):
    b = pair.block()
    b.cb = coinbase(b.height, value=subsidy(b.height) + 1)
    rejected(pair, b.raw(), "bad-cb-amount", again="duplicate-invalid")


def test_bad_txns_bip30(pair):
    # A transaction already in the chain with unspent outputs, again.
    txid_hex = pair.utxos("wpkh(")[-1]["txid"]
    raw_tx = pair.core.rpc("gettransaction", txid_hex, wallet=pair.core.wallet)["hex"]
    tx = CMutableTransaction.from_tx(CMutableTransaction.deserialize(x(raw_tx)))
    assert not tx.vin[0].prevout.is_null(), "want a wallet send, not a coinbase"
    b = pair.block()
    b.txs = [tx]
    rejected(pair, b.raw(), "bad-txns-BIP30", again="duplicate-invalid")


# ---- scripts ------------------------------------------------------------------------

def _damage_sig_in_script_sig(tx, n=0):
    """Flip a bit inside r of the first push (a DER signature) of input n's scriptSig."""
    items = list(CScript(tx.vin[n].scriptSig))
    sig = bytearray(items[0])
    sig[10] ^= 0x01
    items[0] = bytes(sig)
    tx.vin[n].scriptSig = CScript(items)


def _witness_stack(tx, n=0):
    return list(tx.wit.vtxinwit[n].scriptWitness.stack)


def _set_witness_stack(tx, stack, n=0):
    wits = list(tx.wit.vtxinwit)
    wits[n] = CTxInWitness(CScriptWitness(stack))
    tx.wit = CTxWitness(wits)


SCRIPT_FAILED = "mandatory-script-verify-flag-failed (%s)"


def test_script_p2pkh_bad_signature(pair):
    u = pair.utxos("pkh(")[0]
    tx = pair.signed(u)
    _damage_sig_in_script_sig(tx)
    b = pair.block()
    b.txs = [tx]
    # Blocks are not checked with NULLFAIL (policy only): CHECKSIG pushes false.
    rejected(pair, b.raw(),
             SCRIPT_FAILED % "Script evaluated without error but finished with a false/empty top stack element",
             again="duplicate-invalid")


def test_script_p2pkh_non_der_signature(pair):
    u = pair.utxos("pkh(")[0]
    tx = pair.signed(u)
    items = list(CScript(tx.vin[0].scriptSig))
    sig = bytearray(items[0])
    sig[1] += 1  # the DER length no longer matches: BIP66 (DERSIG) is on in blocks
    items[0] = bytes(sig[:-1]) + b"\x00" + bytes(sig[-1:])
    tx.vin[0].scriptSig = CScript(items)
    b = pair.block()
    b.txs = [tx]
    rejected(pair, b.raw(), SCRIPT_FAILED % "Non-canonical DER signature", again="duplicate-invalid")


def test_script_p2wpkh_wrong_pubkey(pair):
    u = pair.utxos("wpkh(")[0]
    tx = pair.signed(u)
    other = pair.core.rpc("getaddressinfo", pair.core.new_address("bech32"), wallet=pair.core.wallet)["pubkey"]
    sig, _ = _witness_stack(tx)
    _set_witness_stack(tx, [sig, x(other)])
    b = pair.block()
    b.txs = [tx]
    rejected(pair, b.raw(), SCRIPT_FAILED % "Script failed an OP_EQUALVERIFY operation", again="duplicate-invalid")


def test_script_p2wpkh_bad_signature(pair):
    u = pair.utxos("wpkh(")[0]
    tx = pair.signed(u)
    sig, pub = _witness_stack(tx)
    sig = bytearray(sig)
    sig[10] ^= 0x01
    _set_witness_stack(tx, [bytes(sig), pub])
    b = pair.block()
    b.txs = [tx]
    rejected(pair, b.raw(),
             SCRIPT_FAILED % "Script evaluated without error but finished with a false/empty top stack element",
             again="duplicate-invalid")


def test_script_taproot_bad_schnorr(pair):
    u = pair.utxos("tr(")[0]
    tx = pair.signed(u)
    (sig,) = _witness_stack(tx)
    sig = bytearray(sig)
    sig[5] ^= 0x01
    _set_witness_stack(tx, [bytes(sig)])
    b = pair.block()
    b.txs = [tx]
    rejected(pair, b.raw(), SCRIPT_FAILED % "Invalid Schnorr signature", again="duplicate-invalid")


def test_script_p2sh_p2wpkh_bad_redeem(pair):
    u = pair.utxos("sh(wpkh(")[0]
    tx = pair.signed(u)
    # The redeem script pushed is another key's program: the P2SH hash fails.
    (redeem,) = list(CScript(tx.vin[0].scriptSig))
    tx.vin[0].scriptSig = CScript([bytes([0, 20]) + bytes(20)])
    assert redeem != bytes([0, 20]) + bytes(20)
    b = pair.block()
    b.txs = [tx]
    rejected(pair, b.raw(),
             SCRIPT_FAILED % "Script evaluated without error but finished with a false/empty top stack element",
             again="duplicate-invalid")


def test_precedence_bad_signature_then_belowout(pair):
    # With script-check workers (Core's and peerd's default par on this
    # machine), the signatures are checked after the loop over the block's
    # transactions, whose own rules fail first: the later tx's reason wins.
    assert pair.peerd.rpc("getstats")["checkqueue"]["workers"] >= 1
    assert script_threads(pair.core) >= 1
    a = pair.utxos("pkh(")[0]
    bad_sig = pair.signed(a)
    _damage_sig_in_script_sig(bad_sig)
    c = pair.utxos("wpkh(")[0]
    below = pair.signed(c, amount=c["amount"] + 1)
    b = pair.block()
    b.txs = [bad_sig, below]
    rejected(pair, b.raw(), "bad-txns-in-belowout", again="duplicate-invalid")


# ---- chain answers ---------------------------------------------------------------

def test_valid_block(pair):
    u = pair.utxos("wpkh(")[0]
    best, height, _, _ = pair.tip()
    b = pair.block()
    b.txs = [pair.signed(u)]
    raw = b.raw()
    assert pair.submit(raw) is None
    assert pair.tip()[0] == b.hash and pair.tip()[1] == height + 1
    assert pair.submit(raw) == "duplicate"
    pair.same_state()


def test_valid_block_each_input_type(pair):
    b = pair.block()
    b.txs = [pair.signed(pair.utxos(k)[0]) for k in ("pkh(", "sh(wpkh(", "wpkh(", "tr(")]
    assert pair.submit(b.raw()) is None
    assert pair.tip()[0] == b.hash
    pair.same_state()


def test_duplicate(pair):
    _, height, _, _ = pair.tip()
    raw = pair.core.getblock(pair.core.getblockhash(height - 5), 0)
    assert pair.submit(bytes.fromhex(raw)) == "duplicate"
    pair.same_state()


def test_bad_prevblk(pair):
    bad = pair.block()
    bad.cb = coinbase(bad.height, value=subsidy(bad.height) + 1)
    raw = bad.raw()
    assert pair.submit(raw) == "bad-cb-amount"
    assert pair.submit(raw) == "duplicate-invalid"
    child = Block(lx(bad.hash), bad.height + 1, bad.time + 1)
    rejected(pair, child.raw(), "bad-prevblk")


def test_bad_prevblk_after_contextual_failure(pair):
    bad = pair.block()
    bad.cb = coinbase(bad.height, script_sig=CScript([bad.height + 7, b"y"]))
    assert pair.submit(bad.raw()) == "bad-cb-height"
    child = Block(lx(bad.hash), bad.height + 1, bad.time + 1)
    rejected(pair, child.raw(), "bad-prevblk")


def test_child_of_mutated_block(pair):
    # A block rejected as mutated is not marked invalid: its header stays,
    # and a child is judged on its own (it arrives before its parent's data).
    u = pair.utxos("wpkh(")[0]
    parent = pair.block()
    parent.txs = [pair.signed(u)]
    parent.commit_hash = sha256d(b"wrong")
    assert pair.submit(parent.raw()) == "bad-witness-merkle-match"
    child = Block(lx(parent.hash), parent.height + 1, parent.time + 1)
    raw = child.raw()
    # Stored, but its parent has no data: it cannot be connected.
    assert pair.submit(raw) == "inconclusive"
    pair.same_state()


def test_mutated_copies_then_the_block(pair):
    # Copies of a good block with its header, damaged where the header does
    # not commit: rejected as mutated, never marked invalid, so the good
    # block is still accepted afterwards.
    u = pair.utxos("wpkh(")[0]
    b = pair.block()
    b.txs = [pair.signed(u)]
    good = b.raw()
    cb, spend = b.vtx()
    short_nonce = CMutableTransaction.from_tx(cb)
    short_nonce.wit = CTxWitness([CTxInWitness(CScriptWitness([bytes(31)]))])
    assert pair.submit(b.hdr + b.body([short_nonce, spend])) == "bad-witness-nonce-size"
    other_nonce = CMutableTransaction.from_tx(cb)
    other_nonce.wit = CTxWitness([CTxInWitness(CScriptWitness([b"\x01" * 32]))])
    assert pair.submit(b.hdr + b.body([other_nonce, spend])) == "bad-witness-merkle-match"
    stripped = CMutableTransaction.from_tx(spend)
    stripped.wit = CTxWitness([CTxInWitness(CScriptWitness([]))])
    assert pair.submit(b.hdr + b.body([cb, stripped])) == "bad-witness-merkle-match"
    pair.same_state()
    assert pair.submit(good) is None
    assert pair.tip()[0] == b.hash
    pair.same_state()


def test_mutated_copy_of_known_blocks(pair):
    # The same header with a transaction repeated (CVE-2012-2459), for an
    # invalid block and for a valid one in the chain: the copy's own fault,
    # not what is known of its hash ("duplicate-invalid", "duplicate").
    t1 = plain_tx([(hexid(sha256d(b"gone-1")), 0)], [(1000, [OP_TRUE])])
    t2 = plain_tx([(hexid(sha256d(b"gone-2")), 0)], [(1000, [OP_TRUE])])
    bad = pair.block()
    bad.txs = [t1, t2]
    assert pair.submit(bad.raw()) == "bad-txns-inputs-missingorspent"
    mutated = bad.hdr + bad.body(bad.vtx() + [t2])
    # Core 29 checks the block before looking it up (bitcoin/bitcoin#31175).
    assert pair.submit(mutated) == "bad-txns-duplicate"
    pair.same_state()

    good = pair.block()
    good.txs = [pair.signed(pair.utxos("wpkh(")[0]), pair.signed(pair.utxos("tr(")[0])]
    assert pair.submit(good.raw()) is None
    mutated = good.hdr + good.body(good.vtx() + [good.txs[-1]])
    assert pair.submit(mutated) == "bad-txns-duplicate"
    assert pair.tip()[0] == good.hash
    pair.same_state()


def test_inconclusive_side_branch(pair):
    # A valid sibling of the tip: as much work, not more; Core keeps its tip.
    best, height, t, _ = pair.tip()
    parent = pair.core.getblockheader(best)["previousblockhash"]
    side = Block(lx(parent), height, t + 7)
    raw = side.raw()
    assert pair.submit(raw) == "inconclusive"
    assert pair.tip()[0] == best
    pair.same_state()
    # Stored, not validated: the second time it is a duplicate.
    assert pair.submit(raw) == "duplicate"
    pair.same_state()


def test_inconclusive_invalid_side_branch_then_reorg_attempt(pair):
    # An invalid block (bad-cb-amount) on a side branch is stored without
    # being connected: inconclusive. Its child has more work than the tip;
    # activating it fails on the parent, and the tip stays.
    best, height, t, _ = pair.tip()
    parent = pair.core.getblockheader(best)["previousblockhash"]
    side = Block(lx(parent), height, t + 11)
    side.cb = coinbase(height, value=subsidy(height) + 1)
    assert pair.submit(side.raw()) == "inconclusive"
    pair.same_state()
    child = Block(lx(side.hash), height + 1, t + 12)
    # The reorg fails on the parent, not on this block: no verdict on it.
    assert pair.submit(child.raw()) == "inconclusive"
    assert pair.tip()[0] == best
    pair.same_state()
    assert pair.submit(side.raw()) == "duplicate-invalid"
    pair.same_state()


def test_duplicate_invalid(pair):
    b = pair.block()
    b.txs = [plain_tx([(hexid(sha256d(b"dup-invalid")), 0)], [(1000, [OP_TRUE])])]
    rejected(pair, b.raw(), "bad-txns-inputs-missingorspent", again="duplicate-invalid")
    assert pair.submit(b.raw()) == "duplicate-invalid"


def test_valid_block_after_everything(pair):
    # The chain still moves on, and the tips agree at the end.
    b = pair.block()
    assert pair.submit(b.raw()) is None
    pair.same_state()


def test_bad_blk_sigops_p2sh(pair):
    # Counted in ConnectBlock only: redeem scripts of 520 CHECKMULTISIGs are
    # 10,400 sigops each (no key count before them: 20 apiece), so two
    # inputs cost 83,200 > 80,000; the legacy count of the block is 0.
    redeem = bytes([OP_CHECKMULTISIG]) * 520
    p2sh = CScript(b"\xa9\x14" + hashlib.new("ripemd160", hashlib.sha256(redeem).digest()).digest() + b"\x87")
    u = pair.utxos("wpkh(")[0]
    fund = CMutableTransaction([CMutableTxIn(COutPoint(lx(u["txid"]), u["vout"]))],
                               [CTxOut(COIN, p2sh), CTxOut(COIN, p2sh)], 0, 2)
    signed = pair.core.rpc("signrawtransactionwithwallet", tx_bytes(fund).hex(), wallet=pair.core.wallet)
    assert signed["complete"], signed
    fund = CMutableTransaction.from_tx(CMutableTransaction.deserialize(x(signed["hex"])))
    b = pair.block()
    b.txs = [fund]
    assert pair.submit(b.raw()) is None
    pair.same_state()

    fid = hexid(txid(fund))
    spend = plain_tx([(fid, 0), (fid, 1)], [(COIN, [OP_TRUE])])
    for i in range(2):
        spend.vin[i].scriptSig = CScript([redeem])
    b = pair.block()
    b.txs = [spend]
    rejected(pair, b.raw(), "bad-blk-sigops", again="duplicate-invalid")
    # One input is 41,600 cost: within the limit, and the script fails instead.
    one = plain_tx([(fid, 0)], [(COIN // 2, [OP_TRUE])])
    one.vin[0].scriptSig = CScript([redeem])
    b = pair.block()
    b.txs = [one]
    reason = pair.submit(b.raw())
    assert reason.startswith("mandatory-script-verify-flag-failed ("), reason
    pair.same_state()


def script_threads(core):
    """Core's script-check worker threads, as its debug.log says at startup."""
    import re

    with open(core.debug_log, errors="replace") as f:
        found = re.findall(r"Script verification uses (\d+) additional threads", f.read())
    assert found, "no script-thread line in Core's debug.log"
    return int(found[-1])


def test_precedence_without_script_threads(pair):
    # Both restarted with -par=1: no script-check workers, so the first
    # failing transaction's script is found before the later one's amounts.
    # (Also: both keep every tip, valid or not, across a restart.)
    a = pair.utxos("pkh(")[0]
    bad_sig = pair.signed(a)
    _damage_sig_in_script_sig(bad_sig)
    c = pair.utxos("wpkh(")[0]
    below = pair.signed(c, amount=c["amount"] + 1)
    assert pair.peerd.rpc("getstats")["checkqueue"]["workers"] >= 1
    assert script_threads(pair.core) >= 1
    pair.restart(core_args=("-par=1",), peerd_args=("-par=1",))
    assert pair.peerd.rpc("getstats")["checkqueue"]["workers"] == 0
    assert script_threads(pair.core) == 0
    pair.same_state()
    b = pair.block()
    b.txs = [bad_sig, below]
    rejected(pair, b.raw(),
             SCRIPT_FAILED % "Script evaluated without error but finished with a false/empty top stack element",
             again="duplicate-invalid")
    pair.restart()
    pair.same_state()


# ---- the cases that were once known differences ----------------------------------------
# Last in the file: Core keeps the bad-blk-weight block as an invalid tip that
# peerd never sees, which would make every later getchaintips differ.

def test_bad_cb_missing(pair):
    # Core 29 validates it (no RPC pre-check since #31175): CheckBlock's reason.
    b = pair.block()
    b.cb = plain_tx([(hexid(sha256d(b"c")), 0)], [(1000, [OP_TRUE])])
    rejected(pair, b.raw(), "bad-cb-missing")




def test_no_transactions(pair):
    # No transactions: the merkle root of nothing is zero; then CheckBlock's size rule.
    b = pair.block()
    b.cb = None
    b.vtx = lambda: []
    b.root = bytes(32)
    rejected(pair, b.raw(), "bad-blk-length")


def test_bad_blk_length(pair):
    # Over 1,000,000 bytes without witness: two transactions with big outputs.
    b = pair.block()
    big = b"\x6a" + b"\x4e" + struct.pack("<I", 520_000) + bytes(520_000)
    b.txs = [plain_tx([(hexid(sha256d(bytes([i]))), 0)], [(0, big)]) for i in range(2)]
    rejected(pair, b.raw(), "bad-blk-length")




def test_bad_blk_weight(pair):
    # ~990,000 bytes without witness (under bad-blk-length's limit), plus a
    # committed witness that takes the weight over 4,000,000.
    b = pair.block()
    big = b"\x6a" + b"\x4e" + struct.pack("<I", 989_000) + bytes(989_000)
    t = plain_tx([(hexid(sha256d(b"w")), 0)], [(0, big)])
    t.wit = CTxWitness([CTxInWitness(CScriptWitness([bytes(60_000)]))])
    b.txs = [t]
    raw = b.raw()
    assert 3 * (len(raw) - 60_000 - 100) + len(raw) > MAX_BLOCK_WEIGHT
    rejected(pair, raw, "bad-blk-weight", again="duplicate-invalid")

"""Signet's block signature (BIP325, Core's CheckSignetBlockSolution) and
-signetchallenge, against a signet bitcoind with the same challenge.

The challenge is a 1-of-1 bare multisig (the default signet's is 1-of-2)
of a key this file makes up. A block's solution is made as Core's
contrib/signet/miner makes it: the virtual transaction to_sign, which
spends to_spend (whose scriptSig commits to the block's version, parent,
time and merkle root with the solution cut out), is signed by bitcoind's
signrawtransactionwithkey, and the scriptSig and witness go into a push
after the witness commitment, behind the 4 bytes ecc7daa2. Signet's
minimum difficulty is about five million hashes a block: `peertool grind`
(Core's bitcoin-util grind) finds each nonce.

Every block goes to both nodes' submitblock and the answers must be the
same: a signed block is accepted, a block with no solution, a solution
for other data, bytes after the solution or no witness commitment is
`bad-signet-blksig`. A peerd connected to the signet bitcoind syncs from
it over P2P: the message start derived from the challenge is Core's.
Loopback only; neither node has seeds (a custom signet has none, and
bitcoind runs with -dnsseed=0 -fixedseeds=0).
"""
import hashlib
import os
import struct
import subprocess
import time

import pytest
from bitcoin.core import COutPoint, CMutableTransaction, CMutableTxIn, CTxOut
from bitcoin.core.script import CScript

from conftest import BUILD, PEERD_BIN, ser_compact as compact, wait_for
from test_chain_parity import Block, answer, hexid, merkle, tx_bytes, txid

pytestmark = pytest.mark.interop

PEERTOOL = os.environ.get("PEERTOOL_BIN", os.path.join(BUILD, "bin", "peertool"))
SIGNET_HEADER = bytes.fromhex("ecc7daa2")
GENESIS = bytes.fromhex("00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6")[::-1]
BITS = 0x1E0377AE
SECRET = hashlib.sha256(b"peerd signet test key").digest()
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def wif(secret):
    """The key as testnet/signet WIF (0xef, compressed)."""
    raw = b"\xef" + secret + b"\x01"
    raw += hashlib.sha256(hashlib.sha256(raw).digest()).digest()[:4]
    n, out = int.from_bytes(raw, "big"), ""
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + out


def push(data):
    """Core's CScript << bytes."""
    if len(data) < 0x4C:
        return bytes([len(data)]) + data
    if len(data) <= 0xFF:
        return b"\x4c" + bytes([len(data)]) + data
    return b"\x4d" + struct.pack("<H", len(data)) + data


class Signet:
    """The challenge, the key and a bitcoind to sign with."""

    def __init__(self, core):
        self.core = core
        desc = core.rpc("getdescriptorinfo", "pk(%s)" % wif(SECRET))["descriptor"]
        self.pubkey = bytes.fromhex(desc[len("pk("):desc.index(")")])
        self.challenge = b"\x51" + push(self.pubkey) + b"\x51\xae"  # 1-of-1 CHECKMULTISIG

    def solution(self, b, commitment, sign_time=None):
        """The solution bytes for block b (its coinbase's last output the witness
        commitment `commitment`), signed for b's data, or for sign_time instead."""
        cb = CMutableTransaction.from_tx(b.cb)
        cb.vout[-1] = CTxOut(0, CScript(commitment + push(SIGNET_HEADER)))
        root = merkle([txid(cb)] + [txid(t) for t in b.txs])
        data = struct.pack("<i", b.version) + b.prev + root + struct.pack("<I", sign_time or b.time)
        to_spend = CMutableTransaction([CMutableTxIn(COutPoint(), CScript(b"\x00" + push(data)), 0)],
                                       [CTxOut(0, CScript(self.challenge))], 0, 0)
        to_sign = CMutableTransaction([CMutableTxIn(COutPoint(txid(to_spend), 0), CScript(), 0)],
                                      [CTxOut(0, CScript(b"\x6a"))], 0, 0)
        prev = [{"txid": hexid(txid(to_spend)), "vout": 0, "scriptPubKey": self.challenge.hex(), "amount": 0}]
        r = self.core.rpc("signrawtransactionwithkey", tx_bytes(to_sign).hex(), [wif(SECRET)], prev)
        assert r["complete"], r
        signed = CMutableTransaction.deserialize(bytes.fromhex(r["hex"]))
        sig = bytes(signed.vin[0].scriptSig)
        stack = list(signed.wit.vtxinwit[0].scriptWitness.stack) if not signed.wit.is_null() else []
        return compact(len(sig)) + sig + compact(len(stack)) + b"".join(compact(len(i)) + i for i in stack)

    def block(self, prev_hash, height, ntime, solve=True, extra=b"", sign_time=None, commit=True):
        """A ground block on prev_hash; raw bytes and display hash."""
        b = Block(prev_hash, height, ntime, bits=BITS)
        b.commit = commit
        b._finish_coinbase()
        if commit:
            commitment = bytes(b.cb.vout[-1].scriptPubKey)
            sol = self.solution(b, commitment, sign_time) + extra if solve else None
            if sol is not None:
                b.cb.vout[-1] = CTxOut(0, CScript(commitment + push(SIGNET_HEADER + sol)))
        root = merkle([txid(t) for t in b.vtx()])
        hdr = struct.pack("<i32s32sIII", b.version, b.prev, root, b.time, b.bits, 0)
        out = subprocess.run([PEERTOOL, "grind", hdr.hex()], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        hdr = bytes.fromhex(out.stdout.strip())
        h = hashlib.sha256(hashlib.sha256(hdr).digest()).digest()
        return hdr + b.body(), hexid(h)


def both(core, peerd, raw):
    a = answer(lambda: core.rpc("submitblock", raw.hex()))
    b = answer(lambda: peerd.rpc("submitblock", raw.hex()))
    assert a == b, "Core answered %r, peerd %r" % (a, b)
    return a


@pytest.fixture
def signet(make_bitcoind, make_peerd):
    """A signer, then a signet bitcoind and a peerd, both with its challenge."""
    signer = make_bitcoind(1, small=True)[0]  # regtest: only signs
    s = Signet(signer)
    arg = "-signetchallenge=" + s.challenge.hex()
    core = make_bitcoind(1, args=(arg,), small=True, chain="signet")[0]
    peerd = make_peerd(arg, chain="signet", listen=False)
    return s, core, peerd, arg


def test_signed_blocks_and_bad_signatures(signet, make_peerd):
    s, core, peerd, arg = signet
    t = int(time.time()) - 3600
    raw1, h1 = s.block(GENESIS, 1, t)
    assert both(core, peerd, raw1) is None
    assert core.getbestblockhash() == h1 == peerd.rpc("getbestblockhash")
    prev = bytes.fromhex(h1)[::-1]
    # Each breaks the solution one way; all are bad-signet-blksig for both.
    for kw in ({"solve": False}, {"sign_time": t + 5}, {"extra": b"\x00"}, {"commit": False}):
        raw, _ = s.block(prev, 2, t + 60, **kw)
        assert both(core, peerd, raw) == "bad-signet-blksig", kw
    raw2, h2 = s.block(prev, 2, t + 60)
    assert both(core, peerd, raw2) is None
    assert core.getbestblockhash() == h2 == peerd.rpc("getbestblockhash")

    # getblockchaininfo's signet_challenge, where Core puts it.
    ours, theirs = peerd.rpc("getblockchaininfo"), core.getblockchaininfo()
    assert ours["signet_challenge"] == theirs["signet_challenge"] == s.challenge.hex()
    assert list(ours).index("signet_challenge") == len(ours) - 2, list(ours)

    # Core's log lines, the same from both.
    for line in ("Signet with challenge " + s.challenge.hex(), "Signet derived magic (message start): "):
        assert line in peerd.log(), line
    core_magic = next(l for l in open(core.debug_log) if "Signet derived magic" in l).split()[-1]
    assert "Signet derived magic (message start): " + core_magic in peerd.log()

    # Over P2P: a second peerd on this signet syncs from bitcoind.
    follower = make_peerd(arg, "-connect=127.0.0.1:%d" % core.port, chain="signet", listen=False, name="follower")
    wait_for(lambda: follower.rpc("getbestblockhash") == h2, timeout=60, what="the follower at block 2")


def test_default_signet_rejects_another_challenges_blocks(signet, make_bitcoind, make_peerd):
    """The default signet's challenge is not this file's key: both say bad-signet-blksig."""
    s, _, _, _ = signet
    core = make_bitcoind(1, small=True, chain="signet")[0]
    peerd = make_peerd(chain="signet", listen=False, name="default")
    raw, _ = s.block(GENESIS, 1, int(time.time()) - 3600)
    assert both(core, peerd, raw) == "bad-signet-blksig"


@pytest.mark.parametrize("args, core_text", [
    (("-signetchallenge=zz",), "-signetchallenge must be hex, not 'zz'."),
    (("-signetchallenge=51", "-signetchallenge=52"), "-signetchallenge cannot be multiple values."),
])
def test_bad_challenge_is_refused_as_core(tmp_path, args, core_text):
    import bitcoind
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    core = subprocess.run([binary, "-signet", "-datadir=%s" % tmp_path, "-connect=0", *args],
                          capture_output=True, text=True, timeout=60)
    assert core.returncode != 0 and core_text in core.stderr, core.stderr
    ours = subprocess.run([PEERD_BIN, "-signet", "-datadir=%s" % tmp_path, "-connect=0", *args],
                          capture_output=True, text=True, timeout=60)
    assert ours.returncode != 0 and core_text in ours.stderr, ours.stderr

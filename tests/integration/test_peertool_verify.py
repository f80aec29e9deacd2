"""peertool verify-tx / verify-block against transactions signed by python-bitcoinlib.

The signatures come from an independent implementation (python-bitcoinlib's
SignatureHash and CKey), so a pass here means peerd's script/ agrees with it
on legacy (P2PKH), BIP143 (P2WPKH) and P2SH-wrapped witness spends. Run with
/usr/bin/python3 -m pytest.
"""
import hashlib
import json
import os
import struct
import subprocess

import pytest
from bitcoin.core import (
    CBlock,
    CMutableTransaction,
    CMutableTxIn,
    COutPoint,
    CTxIn,
    CTxInWitness,
    CTxOut,
    CTxWitness,
    Hash160,
    b2lx,
)
from bitcoin.core.script import (
    OP_0,
    OP_CHECKSIG,
    OP_DUP,
    OP_EQUALVERIFY,
    OP_HASH160,
    SIGHASH_ALL,
    SIGVERSION_WITNESS_V0,
    CScript,
    CScriptWitness,
    SignatureHash,
)
from bitcoin.wallet import CKey
from conftest import sha256d

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# $BUILD may be relative to the checkout (make passes "build").
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
PEERTOOL = os.environ.get("PEERTOOL_BIN", os.path.join(BUILD, "bin", "peertool"))
# The vendored test data unless $VECTORS points elsewhere.
VECTORS = os.environ.get("VECTORS") or os.path.join(ROOT, "tests", "data")


@pytest.fixture(scope="module", autouse=True)
def built():
    if not os.path.exists(PEERTOOL):
        pytest.fail(f"{PEERTOOL} not built (run make)")


def peertool(*args, stdin=None):
    return subprocess.run([PEERTOOL, *map(str, args)], input=stdin, capture_output=True, timeout=120)


def result(r):
    """The JSON report, minus the timing that differs run to run."""
    got = json.loads(r.stdout)
    assert got["summary"]["ms"] >= 0
    del got["summary"]["ms"]
    return got


# ---- transactions signed by python-bitcoinlib -------------------------------


def key(n):
    return CKey(hashlib.sha256(b"peertool-verify-%d" % n).digest())


def p2pkh(pub):
    return CScript([OP_DUP, OP_HASH160, Hash160(pub), OP_EQUALVERIFY, OP_CHECKSIG])


def p2wpkh(pub):
    return CScript([OP_0, Hash160(pub)])


def sign(k, sighash):
    return k.sign(sighash) + bytes([SIGHASH_ALL])


class Spend:
    """One input: what it spends and how it is signed."""

    def __init__(self, kind, k, amount, txid, vout):
        self.kind, self.key, self.amount = kind, k, amount
        self.outpoint = COutPoint(txid, vout)
        pub = k.pub
        if kind == "p2pkh":
            self.spk = p2pkh(pub)
        elif kind == "p2wpkh":
            self.spk = p2wpkh(pub)
        elif kind == "p2sh-p2wpkh":
            self.redeem = p2wpkh(pub)
            self.spk = self.redeem.to_p2sh_scriptPubKey()
        else:
            raise ValueError(kind)

    def prevout_line(self, amount=None):
        amount = self.amount if amount is None else amount
        return "%s:%d %d %s" % (b2lx(self.outpoint.hash), self.outpoint.n, amount, self.spk.hex())


def build_tx(spends, outputs=None, version=2):
    """A transaction spending `spends`, every input signed with SIGHASH_ALL."""
    tx = CMutableTransaction(
        [CMutableTxIn(s.outpoint, nSequence=0xFFFFFFFE) for s in spends],
        outputs or [CTxOut(sum(s.amount for s in spends) - 1000, p2wpkh(key(99).pub))],
        nVersion=version,
    )
    wits = []
    for i, s in enumerate(spends):
        pub = s.key.pub
        if s.kind == "p2pkh":
            sig = sign(s.key, SignatureHash(s.spk, tx, i, SIGHASH_ALL))
            tx.vin[i].scriptSig = CScript([sig, pub])
            wits.append(CTxInWitness(CScriptWitness([])))
        else:
            code = p2pkh(pub)  # BIP143's scriptCode for P2WPKH
            sh = SignatureHash(code, tx, i, SIGHASH_ALL, amount=s.amount, sigversion=SIGVERSION_WITNESS_V0)
            wits.append(CTxInWitness(CScriptWitness([sign(s.key, sh), pub])))
            if s.kind == "p2sh-p2wpkh":
                tx.vin[i].scriptSig = CScript([s.redeem])
    if any(s.kind != "p2pkh" for s in spends):
        tx.wit = CTxWitness(wits)
    return tx


def fake_txid(n):
    return hashlib.sha256(b"prev-%d" % n).digest()


@pytest.fixture
def signed():
    spends = [
        Spend("p2pkh", key(1), 50_000, fake_txid(1), 0),
        Spend("p2wpkh", key(2), 70_000, fake_txid(2), 3),
        Spend("p2sh-p2wpkh", key(3), 90_000, fake_txid(3), 1),
    ]
    return spends, build_tx(spends)


def write(tmp_path, name, data):
    p = tmp_path / name
    if isinstance(data, str):
        p.write_text(data)
    else:
        p.write_bytes(data)
    return str(p)


def prevouts_file(tmp_path, spends, amounts=None, skip=()):
    lines = ["# spent outputs, one a line", ""]
    for i, s in enumerate(spends):
        if i not in skip:
            lines.append(s.prevout_line((amounts or {}).get(i)))
    return write(tmp_path, "prevouts.txt", "\n".join(lines) + "\n")


# ---- verify-tx ----------------------------------------------------------------


def test_valid_tx_every_input_form(tmp_path, signed):
    spends, tx = signed
    raw = tx.serialize()
    pv = prevouts_file(tmp_path, spends)
    runs = [
        peertool("verify-tx", "--prevouts", pv, write(tmp_path, "tx.raw", raw)),
        peertool("verify-tx", "--prevouts", pv, write(tmp_path, "tx.hex", raw.hex() + "\n")),
        peertool("verify-tx", "--prevouts", pv, "-", stdin=raw),
        peertool("verify-tx", "--prevouts", pv, "-", stdin=raw.hex().encode()),
        peertool("verify-tx", "--prevouts", pv, "-", stdin=b"  " + raw.hex().upper().encode() + b"\n"),
    ]
    for r in runs:
        assert r.returncode == 0, r.stderr
    first = result(runs[0])
    for r in runs[1:]:
        assert result(r) == first
    assert first["txid"] == b2lx(tx.GetTxid())
    assert first["verdict"] == "valid" and first["check"] == "ok"
    assert "P2SH" in first["flags"].split(",") and "WITNESS" in first["flags"].split(",")
    assert first["summary"] == {"txs": 1, "inputs": 3, "valid": 3, "invalid": 0}
    for i, (s, inp) in enumerate(zip(spends, first["inputs"])):
        assert inp == {
            "index": i,
            "prevout": "%s:%d" % (b2lx(s.outpoint.hash), s.outpoint.n),
            "amount": s.amount,
            "result": "valid",
        }


def test_tampered_amount(tmp_path, signed):
    spends, tx = signed
    txf = write(tmp_path, "tx.raw", tx.serialize())
    # BIP143 commits to the amount: the P2WPKH input fails, the others pass.
    r = peertool("verify-tx", "--prevouts", prevouts_file(tmp_path, spends, {1: 70_001}), txf)
    assert r.returncode == 1, r.stderr
    got = result(r)
    assert got["verdict"] == "invalid"
    assert [i["result"] for i in got["inputs"]] == ["valid", "EVAL_FALSE", "valid"]
    assert got["inputs"][1]["amount"] == 70_001 and got["inputs"][1]["error"]
    assert got["summary"] == {"txs": 1, "inputs": 3, "valid": 2, "invalid": 1}
    # The same for the P2SH-wrapped one.
    r = peertool("verify-tx", "--prevouts", prevouts_file(tmp_path, spends, {2: 1}), txf)
    assert r.returncode == 1
    assert [i["result"] for i in result(r)["inputs"]] == ["valid", "valid", "EVAL_FALSE"]
    # A legacy signature does not commit to the amount.
    r = peertool("verify-tx", "--prevouts", prevouts_file(tmp_path, spends, {0: 12_345}), txf)
    assert r.returncode == 0, r.stdout
    # Without WITNESS and P2SH the witness is never looked at.
    r = peertool("verify-tx", "--flags", "NONE", "--prevouts",
                 prevouts_file(tmp_path, spends, {1: 70_001, 2: 1}), txf)
    assert r.returncode == 0, r.stdout
    assert result(r)["flags"] in ("", "NONE")


def test_tampered_signature(tmp_path, signed):
    spends, tx = signed
    pv = prevouts_file(tmp_path, spends)

    # Flip a bit inside R of the P2PKH signature: still DER, no longer valid.
    bad = CMutableTransaction.from_tx(tx)
    sig, pub = list(bad.vin[0].scriptSig)
    sig = bytearray(sig)
    sig[10] ^= 0x01
    bad.vin[0].scriptSig = CScript([bytes(sig), pub])
    txf = write(tmp_path, "bad.raw", bad.serialize())
    r = peertool("verify-tx", "--prevouts", pv, txf)
    assert r.returncode == 1
    got = result(r)
    assert [i["result"] for i in got["inputs"]] == ["EVAL_FALSE", "valid", "valid"]
    assert got["txid"] == b2lx(bad.GetTxid())
    # Policy's NULLFAIL names a failed non-empty signature precisely (Core's
    # script_tests.json spells SCRIPT_ERR_SIG_NULLFAIL "NULLFAIL").
    r = peertool("verify-tx", "--flags", "P2SH,WITNESS,NULLFAIL", "--prevouts", pv, txf)
    assert r.returncode == 1
    assert [i["result"] for i in result(r)["inputs"]] == ["NULLFAIL", "valid", "valid"]

    # A witness signature with a broken DER length: BIP66 (DERSIG) says so.
    bad = CMutableTransaction.from_tx(tx)
    stack = list(bad.wit.vtxinwit[1].scriptWitness.stack)
    sig = bytearray(stack[0])
    sig[1] ^= 0x01
    stack[0] = bytes(sig)
    wits = list(bad.wit.vtxinwit)
    wits[1] = CTxInWitness(CScriptWitness(stack))
    bad.wit = CTxWitness(wits)
    r = peertool("verify-tx", "--prevouts", pv, "-", stdin=bad.serialize())
    assert r.returncode == 1
    assert [i["result"] for i in result(r)["inputs"]] == ["valid", "SIG_DER", "valid"]


def test_missing_prevout(tmp_path, signed):
    spends, tx = signed
    r = peertool("verify-tx", "--prevouts", prevouts_file(tmp_path, spends, skip={2}), "-",
                 stdin=tx.serialize())
    assert r.returncode == 1
    assert r.stdout == b""
    want = "missing prevout %s:%d (input 2)" % (b2lx(spends[2].outpoint.hash), spends[2].outpoint.n)
    assert want in r.stderr.decode(), r.stderr


def test_missing_prevouts_all_named(tmp_path, signed):
    """Every missing spent output is named, not only the first."""
    spends, tx = signed
    r = peertool("verify-tx", "--prevouts", prevouts_file(tmp_path, spends, skip={0, 2}), "-",
                 stdin=tx.serialize())
    assert r.returncode == 1 and r.stdout == b""
    err = r.stderr.decode()
    for i in (0, 2):
        want = "missing prevout %s:%d (input %d)" % (b2lx(spends[i].outpoint.hash), spends[i].outpoint.n, i)
        assert want in err, err
    assert "(input 1)" not in err
    assert "2 of 3 spent outputs missing" in err, err


def test_option_spellings_all_mean_the_same(tmp_path, signed):
    """-key=value, --key=value, --key value and -key value, in any order."""
    spends, tx = signed
    pv = prevouts_file(tmp_path, spends)
    txf = write(tmp_path, "tx.raw", tx.serialize())
    forms = [
        ["--prevouts", pv, "--flags", "P2SH,WITNESS", txf],
        ["--prevouts=" + pv, "--flags=P2SH,WITNESS", txf],
        ["-prevouts=" + pv, "-flags=P2SH,WITNESS", txf],
        ["-prevouts", pv, "-flags", "P2SH,WITNESS", txf],
        [txf, "--flags=p2sh,Witness", "-prevouts=" + pv],
        ["--prevouts=" + pv, "--flags=P2SH,WITNESS", "--", txf],
    ]
    outs = []
    for f in forms:
        r = peertool("verify-tx", *f)
        assert r.returncode == 0, (f, r.stderr)
        got = result(r)
        got["summary"].pop("ms", None)
        outs.append(got)
    assert all(o == outs[0] for o in outs), outs
    assert outs[0]["flags"] == "P2SH,WITNESS"
    # The names of the sets go in any case too.
    r = peertool("verify-tx", "--flags=CONSENSUS", "--prevouts=" + pv, txf)
    assert r.returncode == 0, r.stderr
    # A flag takes no value; an unknown flag lists the valid names.
    r = peertool("verify-block", "--prevouts=" + pv, "--no-pow=1", txf)
    assert r.returncode == 2 and b"--no-pow takes no value" in r.stderr, r.stderr
    r = peertool("verify-tx", "--prevouts=" + pv, "--flags=FOO", txf)
    assert r.returncode == 2, r.stderr
    assert b"unknown flag in 'FOO'" in r.stderr and b"DERSIG" in r.stderr and b"TAPROOT" in r.stderr
    r = peertool("verify-tx", "--prevouts=" + pv, "--bogus=1", txf)
    assert r.returncode == 2 and b"unknown option '--bogus' (known: --prevouts or --flags)" in r.stderr


def test_verify_block_equals_forms(tmp_path):
    """--height=N, --par=N, --chain=NAME as verify-block's spaced forms."""
    blocks = chain_blocks()
    lines = []
    for _, b in blocks:
        for t in b.vtx:
            for n, o in enumerate(t.vout):
                lines.append("%s:%d %d %s" % (b2lx(t.GetTxid()), n, o.nValue, o.scriptPubKey.hex()))
    pv = write(tmp_path, "pv.txt", "\n".join(lines) + "\n")
    path = write(tmp_path, "b2.raw", blocks[2][0])
    a = peertool("verify-block", "--prevouts", pv, "--height", 2, "--par", 2, "--chain", "main", path)
    b = peertool("verify-block", "--prevouts=" + pv, "--height=2", "-par=2", "--chain=MAIN", path)
    assert a.returncode == 0 and b.returncode == 0, (a.stderr, b.stderr)
    ra, rb = result(a), result(b)
    for x in (ra, rb):
        x.get("summary", {}).pop("ms", None)
    assert ra == rb


def test_doc_prevouts_example(tmp_path):
    """doc/peertool.md's --prevouts recipe, run as written on the shipped vector."""
    import shutil
    if not shutil.which("jq"):
        pytest.skip("jq (Debian package jq) not installed: doc/peertool.md's recipe uses it")
    page = open(os.path.join(ROOT, "doc", "peertool.md")).read()
    marker = "<!-- prevouts-example -->"
    assert marker in page
    block = page.split(marker, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    assert "peertool verify-tx" in block and "genesis_chain_0_to_4.dat" in block
    os.symlink(os.path.join(ROOT, "tests"), tmp_path / "tests")
    env = dict(os.environ, PATH=os.path.abspath(os.path.dirname(PEERTOOL)) + ":" + os.environ["PATH"])
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=tmp_path, env=env,
                       capture_output=True, timeout=60)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert len((tmp_path / "prevouts.txt").read_text().splitlines()) == 10
    assert json.loads(r.stdout)["verdict"] == "valid"


def test_flags_and_usage(tmp_path, signed):
    spends, tx = signed
    pv = prevouts_file(tmp_path, spends)
    txf = write(tmp_path, "tx.raw", tx.serialize())

    r = peertool("verify-tx", "--flags", "P2SH,WITNESS", "--prevouts", pv, txf)
    assert r.returncode == 0, r.stderr
    assert result(r)["flags"] == "P2SH,WITNESS"
    r = peertool("verify-tx", "--flags", "consensus", "--prevouts", pv, txf)
    assert r.returncode == 0
    consensus = result(r)["flags"]
    r = peertool("verify-tx", "--prevouts", pv, txf)
    assert result(r)["flags"] == consensus  # the default
    # WITNESS implies P2SH, as in Core.
    r = peertool("verify-tx", "--flags", "WITNESS", "--prevouts", pv, txf)
    assert result(r)["flags"] == "P2SH,WITNESS"

    usage_errors = [
        (["--flags", "P2SH,BOGUS", "--prevouts", pv, txf], b"unknown flag in 'BOGUS'"),
        (["--prevouts", pv, "--flags"], b"--flags needs a value"),
        ([txf], b"--prevouts FILE is required"),
        (["--prevouts", pv], b"no transaction given"),
        (["--prevouts", pv, "--par", "2", txf], b"unknown option '--par'"),
        (["--prevouts", pv, txf, txf], b"unexpected argument"),
    ]
    for args, msg in usage_errors:
        r = peertool("verify-tx", *args)
        assert r.returncode == 2, (args, r.stderr)
        assert msg in r.stderr, (args, r.stderr)
        assert b"usage: peertool verify-tx" in r.stderr
        assert r.stdout == b""


def test_bad_inputs(tmp_path, signed):
    spends, tx = signed
    pv = prevouts_file(tmp_path, spends)
    bad_lines = [
        ("zz:0 1 00\n", b"line 1: bad outpoint"),
        ("%s:x 1 00\n" % ("00" * 32), b"bad output index"),
        ("%s:0 -5 00\n" % ("00" * 32), b"bad amount"),
        ("%s:0 5 0g\n" % ("00" * 32), b"bad scriptPubKey hex"),
        ("# ok\n%s:0 5\n%s:1 5 00 extra\n" % ("00" * 32, "00" * 32), b"line 3: expected"),
    ]
    for text, msg in bad_lines:
        r = peertool("verify-tx", "--prevouts", write(tmp_path, "bad.txt", text), "-", stdin=tx.serialize())
        assert r.returncode == 1 and msg in r.stderr, (text, r.stderr)
    r = peertool("verify-tx", "--prevouts", pv, "-", stdin=tx.serialize()[:-7])
    assert r.returncode == 1 and b"invalid transaction at byte" in r.stderr
    r = peertool("verify-tx", "--prevouts", str(tmp_path / "nope"), "-", stdin=tx.serialize())
    assert r.returncode == 1 and b"cannot open" in r.stderr


# ---- verify-block ---------------------------------------------------------------


def chain_blocks():
    """(raw block, CBlock) for each record of genesis_chain_0_to_4.dat."""
    data = open(os.path.join(VECTORS, "blocks", "genesis_chain_0_to_4.dat"), "rb").read()
    out, off = [], 0
    while off < len(data):
        magic, n = struct.unpack("<II", data[off : off + 8])
        assert magic == 0xD9B4BEF9
        raw = data[off + 8 : off + 8 + n]
        out.append((raw, CBlock.deserialize(raw)))
        off += 8 + n
    return out


CHAIN_HASHES = [
    "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f",
    "00000000ebe5ec3e94d8dfe18100e5c0f3b1955bc6107fbe24d95732b814551b",
    "00000000952ccb1bf9b799fcd0cc654dd48363f76781f8b1c61dbf1696c39f97",
    "00000000bc3589303953766cc9364130cb97bc3749bae170f476d45f1e23f850",
    "000000002f264d6504013e73b9c913de9098d4d771c1bb219af475d2a01b128e",
]


def test_verify_block_genesis_chain_par1_par2(tmp_path):
    blocks = chain_blocks()
    assert [b2lx(b.GetHash()) for _, b in blocks] == CHAIN_HASHES
    # Every output of the chain, so each block finds what it spends.
    lines = []
    for _, b in blocks:
        for tx in b.vtx:
            for n, o in enumerate(tx.vout):
                lines.append("%s:%d %d %s" % (b2lx(tx.GetTxid()), n, o.nValue, o.scriptPubKey.hex()))
    pv = write(tmp_path, "chain-prevouts.txt", "\n".join(lines) + "\n")
    # Version 1 blocks carry no BIP34 height, so --height gives it; at
    # heights 0-4 Core (GetBlockScriptFlags) checks only what it applies
    # from genesis: BIP66's strict DER came much later, and these blocks
    # sign as 2009 did.
    assert all(b.nVersion == 1 for _, b in blocks)
    flags = "P2SH,WITNESS,TAPROOT"
    total_inputs = 0
    for h, (raw, b) in enumerate(blocks):
        path = write(tmp_path, "block%d.raw" % h, raw)
        reports = []
        for par in (1, 2):
            r = peertool("verify-block", "--prevouts", pv, "--height", h, "--par", par, path)
            assert r.returncode == 0, (h, par, r.stderr, r.stdout)
            assert r.stderr == b"", r.stderr
            got = result(r)
            assert got["par"] == par
            del got["par"]
            reports.append(got)
        assert reports[0] == reports[1], h
        got = reports[0]
        n_in = sum(len(tx.vin) for tx in b.vtx[1:])
        total_inputs += n_in
        assert got["hash"] == CHAIN_HASHES[h]
        assert (got["chain"], got["height"], got["height_source"]) == ("main", h, "option")
        assert (got["flags"], got["flags_source"]) == (flags, "height")
        assert got["verdict"] == "valid"
        assert got["summary"] == {"txs": len(b.vtx), "inputs": n_in, "valid": n_in, "invalid": 0}
        assert [t["txid"] for t in got["txs"]] == [b2lx(tx.GetTxid()) for tx in b.vtx]
        assert got["txs"][0].get("coinbase") is True and got["txs"][0]["inputs"] == []
        for t, tx in zip(got["txs"][1:], b.vtx[1:]):
            assert [i["prevout"] for i in t["inputs"]] == \
                ["%s:%d" % (b2lx(i.prevout.hash), i.prevout.n) for i in tx.vin]
            assert all(i["result"] == "valid" for i in t["inputs"])
        # hex on stdin gives the same report
        r = peertool("verify-block", "--prevouts", pv, "--height", h, "--par", 2, "-",
                     stdin=raw.hex().encode())
        assert r.returncode == 0
        got = result(r)
        del got["par"]
        assert got == reports[0]
        # The same flags by name, height unknown: the same verdicts.
        r = peertool("verify-block", "--prevouts", pv, "--flags", flags, "--par", 1, path)
        assert r.returncode == 0, (h, r.stdout)
        got = result(r)
        assert (got["height"], got["height_source"]) == (None, "unknown")
        assert (got["flags"], got["flags_source"]) == (flags, "option")
        assert got["txs"] == reports[0]["txs"]
    assert total_inputs == 4

    # With no height the default is today's rules: their padded R values
    # break BIP66, every thread count says so for every input, and stderr
    # says why.
    block3 = str(tmp_path / "block3.raw")
    for par in (1, 2):
        r = peertool("verify-block", "--prevouts", pv, "--par", par, block3)
        assert r.returncode == 1
        assert b"block height unknown" in r.stderr and b"--height" in r.stderr, r.stderr
        got = result(r)
        assert got["verdict"] == "invalid"
        assert (got["height"], got["height_source"], got["flags_source"]) == (None, "unknown", "consensus")
        assert got["flags"] == CONSENSUS
        assert [i["result"] for t in got["txs"][1:] for i in t["inputs"]] == ["SIG_DER", "SIG_DER"]
        assert got["summary"] == {"txs": 3, "inputs": 2, "valid": 0, "invalid": 2}

    # BIP66 from mainnet's height 363,725 on, regtest's 1 (its segwit, and
    # so NULLDUMMY, from 0), testnet3's 330,776. The scripts say so; the
    # block as a whole also fails ContextualCheckBlock wherever BIP34 is
    # active at the claimed height (block 3 has no height in its coinbase),
    # and that reason comes first, as in Core.
    for chain, height, ok, reject in [
            ("main", 363724, True, "bad-cb-height"), ("main", 363725, False, "bad-cb-height"),
            ("regtest", 0, True, None), ("regtest", 1, False, "bad-cb-height"),
            ("test", 330775, True, "bad-cb-height"), ("test", 330776, False, "bad-cb-height"),
            ("testnet4", 1, False, "bad-cb-height"),
                # signet: the block signature is CheckBlock's, checked before any
                # contextual rule, as Core's CheckBlock does
                ("signet", 1, False, "bad-signet-blksig")]:
        r = peertool("verify-block", "--prevouts", pv, "--chain", chain, "--height", height, block3)
        assert r.returncode == (0 if reject is None else 1), (chain, height, r.stdout)
        got = result(r)
        assert (got["chain"], got["height"]) == (chain, height)
        assert got["reject_reason"] == reject, (chain, height)
        assert got["checks"]["check_block"] == (reject if chain == "signet" else "ok"), (chain, height)
        want = ["valid"] * 2 if ok else ["SIG_DER"] * 2
        assert [i["result"] for t in got["txs"][1:] for i in t["inputs"]] == want, (chain, height)
    r = peertool("verify-block", "--prevouts", pv, "--chain", "regtest", "--height", 0, block3)
    assert result(r)["flags"] == "P2SH,NULLDUMMY,WITNESS,TAPROOT"

    # Without the prevouts, block 4's spend names what it is missing.
    empty = write(tmp_path, "empty.txt", "")
    r = peertool("verify-block", "--prevouts", empty, "--par", 2, str(tmp_path / "block4.raw"))
    assert r.returncode == 1
    spent = blocks[4][1].vtx[1].vin[0].prevout
    assert ("missing prevout %s:%d (tx 1 input 0)" % (b2lx(spent.hash), spent.n)).encode() in r.stderr

    # Block 3 spends both outputs of block 2's second transaction.
    r = peertool("verify-block", "--prevouts", empty, "--par", 1, str(tmp_path / "block3.raw"))
    assert r.returncode == 1 and b"missing prevout 29c25cf0" in r.stderr


def merkle(leaves):
    while len(leaves) > 1:
        if len(leaves) % 2:
            leaves = leaves + leaves[-1:]
        leaves = [sha256d(leaves[i] + leaves[i + 1]) for i in range(0, len(leaves), 2)]
    return leaves[0]


def make_block(txs, coinbase_script=CScript([500000, b"peerd"]), version=0x20000000):
    """A block holding txs after a coinbase with a BIP141 witness commitment.
    Its nonce is not ground: verify-block needs --no-pow (Core's fCheckPOW)."""
    wtxids = [b"\x00" * 32] + [tx.GetHash() for tx in txs]  # BIP141: the coinbase's is zero
    nonce = b"\x00" * 32
    commit = CScript(b"\x6a\x24\xaa\x21\xa9\xed" + sha256d(merkle(wtxids) + nonce))
    cb = CMutableTransaction([CTxIn(COutPoint(), coinbase_script, 0xFFFFFFFF)],
                             [CTxOut(50 * 10**8, p2wpkh(key(98).pub)), CTxOut(0, commit)])
    cb.wit = CTxWitness([CTxInWitness(CScriptWitness([nonce]))])
    header = dict(nVersion=version, hashPrevBlock=b"\x00" * 32, nTime=1700000000, nBits=0x207FFFFF)
    vtx = [cb] + list(txs)
    root = CBlock(vtx=vtx, **header).calc_merkle_root()
    b = CBlock(hashMerkleRoot=root, vtx=vtx, **header)
    return b.serialize()


def test_verify_block_in_block_spends_and_parallel_results(tmp_path):
    # A wide transaction (one invalid input among many) and a child spending
    # its output in the same block, which needs no prevouts line.
    spends = [Spend(("p2wpkh", "p2pkh", "p2sh-p2wpkh")[i % 3], key(10 + i), 10_000 + i, fake_txid(100 + i), i % 4)
              for i in range(30)]
    parent = build_tx(spends, [CTxOut(250_000, p2wpkh(key(7).pub))])
    child_spend = Spend("p2wpkh", key(7), 250_000, parent.GetTxid(), 0)
    child = build_tx([child_spend])
    raw = make_block([parent, child])

    # Wrong amounts for one P2SH-P2WPKH and one P2WPKH input (BIP143
    # commits to amounts) and for one P2PKH input (legacy does not).
    bad_sh, bad_w, legacy = 14, 6, 7
    assert [spends[i].kind for i in (bad_sh, bad_w, legacy)] == ["p2sh-p2wpkh", "p2wpkh", "p2pkh"]
    pv = prevouts_file(tmp_path, spends, {bad_sh: 1, bad_w: spends[bad_w].amount + 1, legacy: 5})
    path = write(tmp_path, "block.raw", raw)
    reports = []
    for par in (1, 2, 4, 0):
        r = peertool("verify-block", "--no-pow", "--prevouts", pv, "--par", par, path)
        assert r.returncode == 1, (par, r.stderr)
        got = result(r)
        del got["par"]
        reports.append(got)
    for got in reports[1:]:
        assert got == reports[0]
    got = reports[0]
    assert got["verdict"] == "invalid"
    assert got["summary"] == {"txs": 3, "inputs": 31, "valid": 29, "invalid": 2}
    # Core's reason: the first failing input in block order (input 6 before 14).
    assert got["reject_reason"] == "mandatory-script-verify-flag-failed " \
        "(Script evaluated without error but finished with a false/empty top stack element)"
    assert got["checks"] == {"check_block": "ok", "contextual": "ok"}
    results = [i["result"] for i in got["txs"][1]["inputs"]]
    assert results[bad_sh] == "EVAL_FALSE" and results[bad_w] == "EVAL_FALSE"
    assert got["txs"][1]["inputs"][legacy] == {
        "index": legacy, "prevout": "%s:%d" % (b2lx(fake_txid(100 + legacy)), legacy % 4),
        "amount": 5, "result": "valid"}
    assert results.count("valid") == 28
    assert got["txs"][2]["txid"] == b2lx(child.GetTxid())
    assert got["txs"][2]["inputs"][0]["result"] == "valid"
    assert got["txs"][2]["inputs"][0]["amount"] == 250_000

    # All correct: exit 0 on any number of threads.
    pv = prevouts_file(tmp_path, spends)
    for par in (1, 3):
        r = peertool("verify-block", "--no-pow", "--prevouts", pv, "--par", par, "-", stdin=raw)
        assert r.returncode == 0, r.stdout
        assert result(r)["summary"] == {"txs": 3, "inputs": 31, "valid": 31, "invalid": 0}


# Core's flag names in the order peertool prints them, and the consensus set.
FLAG_ORDER = ["P2SH", "DERSIG", "NULLDUMMY", "CHECKLOCKTIMEVERIFY", "CHECKSEQUENCEVERIFY",
              "WITNESS", "TAPROOT"]
CONSENSUS = ",".join(FLAG_ORDER)


def flag_list(*names):
    assert set(names) <= set(FLAG_ORDER)
    return ",".join(f for f in FLAG_ORDER if f in names)


BASE = ("P2SH", "WITNESS", "TAPROOT")  # Core applies these from genesis


def test_verify_block_flags_by_bip34_height(tmp_path):
    spends = [Spend("p2pkh", key(40), 20_000, fake_txid(40), 0),
              Spend("p2wpkh", key(41), 30_000, fake_txid(41), 1)]
    pv = prevouts_file(tmp_path, spends)
    tx = build_tx(spends)

    def run(coinbase_script, version=2, *opts):
        raw = make_block([tx], coinbase_script, version)
        r = peertool("verify-block", "--no-pow", "--prevouts", pv, *opts, "-", stdin=raw)
        got = result(r)
        # Every script passes under the height's flags. The block as a whole
        # does only where it may carry witness data: from segwit's height on
        # (mainnet 481,824), or where the height is unknown (no contextual
        # checks without one).
        assert got["summary"]["invalid"] == 0, (coinbase_script.hex(), opts, r.stdout)
        assert got["checks"]["check_block"] == "ok"
        h = got["height"]
        segwit = {"main": 481824, "test": 834624, "regtest": 0}[got["chain"]]
        if h is None or h >= segwit:
            assert r.returncode == 0 and got["verdict"] == "valid", (h, r.stdout)
        else:
            assert r.returncode == 1 and got["reject_reason"] == "unexpected-witness", (h, r.stdout)
        return got, r.stderr

    # Mainnet's activation heights, each side of each one.
    for height, names in [
        (227931, BASE),
        (363724, BASE),
        (363725, BASE + ("DERSIG",)),
        (388381, BASE + ("DERSIG", "CHECKLOCKTIMEVERIFY")),
        (419327, BASE + ("DERSIG", "CHECKLOCKTIMEVERIFY")),
        (419328, BASE + ("DERSIG", "CHECKLOCKTIMEVERIFY", "CHECKSEQUENCEVERIFY")),
        (481823, BASE + ("DERSIG", "CHECKLOCKTIMEVERIFY", "CHECKSEQUENCEVERIFY")),
        (481824, FLAG_ORDER),
        (2**31 - 1, FLAG_ORDER),
    ]:
        for version in (2, 4, 0x20000000):
            got, err = run(CScript([height, b"peerd"]), version)
            assert (got["height"], got["height_source"]) == (height, "bip34"), (height, version)
            assert (got["flags"], got["flags_source"]) == (flag_list(*names), "height"), height
            assert err == b"", err
    # The small heights are opcodes, as Core writes them.
    for height in (0, 1, 16, 17, 128):
        got, _ = run(CScript([height, b"peerd"]), 2)
        assert (got["height"], got["height_source"]) == (height, "bip34")
        assert got["flags"] == flag_list(*BASE)

    # The network's heights: testnet3 has BIP66 at 330,776, BIP65 at
    # 581,885; regtest everything from 1.
    got, _ = run(CScript([400000, b"x"]), 2, "--chain", "test")
    assert (got["chain"], got["height"]) == ("test", 400000)
    assert got["flags"] == flag_list(*BASE, "DERSIG")
    got, _ = run(CScript([3, b"x"]), 2, "--chain", "regtest")
    assert got["flags"] == CONSENSUS

    # Not a height: version 1, pushes Core would not write (a padded or
    # negative number, 5 as a push instead of OP_5, more than 4 bytes), or
    # no push at all. Today's rules then apply.
    for script, version in [
        (CScript([500000, b"x"]), 1),
        (CScript([b"\x20\xa1\x07\x00", b"x"]), 2),
        (CScript([b"\x81", b"x"]), 2),
        (CScript([b"\x05", b"x"]), 2),
        (CScript([b"\x00\x00\x00\x00\x01", b"x"]), 2),
        (CScript(b"\x61\x61"), 2),
        (CScript(b"\x04\x01\x02"), 2),  # a push cut short
    ]:
        got, err = run(script, version)
        assert (got["height"], got["height_source"]) == (None, "unknown"), script.hex()
        assert (got["flags"], got["flags_source"]) == (CONSENSUS, "consensus")
        assert b"block height unknown" in err

    # --height beats the coinbase, --flags beats both. (At 100 the block's
    # witness data comes first: unexpected-witness, checked in run.)
    got, _ = run(CScript([500000, b"x"]), 2, "--height", 100)
    assert (got["height"], got["height_source"], got["flags"]) == (100, "option", flag_list(*BASE))
    got, err = run(CScript([500000, b"x"]), 2, "--flags", "P2SH")
    assert (got["height"], got["height_source"]) == (500000, "bip34")
    assert (got["flags"], got["flags_source"]) == ("P2SH", "option")
    got, err = run(CScript([500000, b"x"]), 1, "--flags", "P2SH,WITNESS")
    assert (got["height_source"], got["flags"], got["flags_source"]) == ("unknown", "P2SH,WITNESS", "option")
    assert err == b""  # the flags were chosen: nothing to warn about


def test_verify_block_usage(tmp_path):
    pv = write(tmp_path, "p.txt", "")
    for args, msg in [
        (["--prevouts", pv, "--par", "65", "x"], b"--par wants"),
        (["--prevouts", pv, "--par", "-1", "x"], b"--par wants"),
        (["--prevouts", pv, "--par", "two", "x"], b"--par wants"),
        (["--prevouts", pv, "--flags", "NOPE", "x"], b"unknown flag in 'NOPE'"),
        (["--prevouts", pv, "--par"], b"--par needs a value"),
        (["--prevouts", pv, "--height", "-1", "x"], b"--height wants 0 to 2147483647, not '-1'"),
        (["--prevouts", pv, "--height", "2147483648", "x"], b"--height wants"),
        (["--prevouts", pv, "--height", "99999999999999999999", "x"], b"--height wants"),
        (["--prevouts", pv, "--height", "12a", "x"], b"--height wants"),
        (["--prevouts", pv, "--height", "", "x"], b"--height wants"),
        (["--prevouts", pv, "--height"], b"--height needs a value"),
        (["--prevouts", pv, "--chain", "mars", "x"], b"unknown chain 'mars'"),
        (["--prevouts", pv, "--chain"], b"--chain needs a value"),
    ]:
        r = peertool("verify-block", *args)
        assert r.returncode == 2 and msg in r.stderr, (args, r.stderr)
        assert b"usage: peertool verify-block" in r.stderr
        assert r.stdout == b""
    # Heights are a block's: verify-tx has none.
    for opt in ("--height", "--chain"):
        r = peertool("verify-tx", "--prevouts", pv, opt, "1", "x")
        assert r.returncode == 2 and b"unknown option '%s'" % opt.encode() in r.stderr
    r = peertool("verify-block", "--prevouts", pv, "-", stdin=b"\x01\x00")
    assert r.returncode == 1 and b"invalid block at byte" in r.stderr


def test_empty_prevout_script(tmp_path):
    # A prevouts line may leave the script out: the spent script is empty,
    # and a scriptSig of OP_1 satisfies it (consensus; CLEANSTACK aside).
    tx = CMutableTransaction([CMutableTxIn(COutPoint(fake_txid(5), 2), CScript([1]))],
                             [CTxOut(1, CScript([1]))])
    pv = write(tmp_path, "p.txt", "%s:2 1000\n%s:3 7 51\n" % (b2lx(fake_txid(5)), b2lx(fake_txid(5))))
    r = peertool("verify-tx", "--prevouts", pv, "-", stdin=tx.serialize())
    assert r.returncode == 0, r.stderr
    assert result(r)["inputs"][0]["result"] == "valid"
    # An empty scriptSig leaves an empty stack.
    tx.vin[0].scriptSig = CScript()
    r = peertool("verify-tx", "--prevouts", pv, "-", stdin=tx.serialize())
    assert r.returncode == 1
    assert result(r)["inputs"][0]["result"] == "EVAL_FALSE"


# ---- a block whose nonce was flipped (issue 18) ------------------------------

MAINNET_BLOCK = os.path.join(VECTORS, "blocks", "block413567.raw")


def missing_spends(raw):
    """Every outpoint the block spends that it does not create, in block
    order, as verify-block names them: (txid hex, n, tx index, input index)."""
    b = CBlock.deserialize(raw)
    made, out = set(), []
    for t, tx in enumerate(b.vtx):
        if t > 0:
            for i, txin in enumerate(tx.vin):
                if (txin.prevout.hash, txin.prevout.n) not in made:
                    out.append((b2lx(txin.prevout.hash), txin.prevout.n, t, i))
        made.update((tx.GetTxid(), n) for n in range(len(tx.vout)))
    return out


def flip_nonce(raw, chain_target):
    """raw with its nonce changed so the header's hash is above the target."""
    raw = bytearray(raw)
    for bit in range(32):
        raw[76 + bit // 8] ^= 1 << (bit % 8)
        if int.from_bytes(sha256d(bytes(raw[:80])), "little") > chain_target:
            return bytes(raw)
        raw[76 + bit // 8] ^= 1 << (bit % 8)
    raise AssertionError("every one-bit change kept the proof of work")


def test_verify_block_flipped_nonce_is_high_hash_before_prevouts(tmp_path):
    """A mainnet block with its nonce flipped and no spent outputs given:
    CheckBlock's proof of work rejects it (Core's high-hash) and the report
    says so; no spent output is needed for that verdict, so none is named
    (it printed 4,599 "missing prevout" lines and never said high-hash)."""
    raw = open(MAINNET_BLOCK, "rb").read()
    bits = struct.unpack("<I", raw[72:76])[0]
    target = (bits & 0xFFFFFF) << (8 * ((bits >> 24) - 3))
    assert int.from_bytes(sha256d(raw[:80]), "little") <= target
    bad = write(tmp_path, "flipped.raw", flip_nonce(raw, target))
    empty = write(tmp_path, "empty.txt", "")
    missing = missing_spends(raw)
    assert len(missing) > 1000
    r = peertool("verify-block", "--prevouts", empty, bad)
    assert r.returncode == 1, r.stderr[-500:]
    err = r.stderr.decode()
    assert "missing prevout" not in err, err[:500]
    assert err.splitlines() == ["peertool: verify-block: %d spent outputs missing: the scripts were not run"
                                % len(missing)], err
    got = result(r)
    assert got["reject_reason"] == "high-hash"
    assert got["verdict"] == "invalid"
    assert got["checks"]["check_block"] == "high-hash"
    assert got["scripts"] == "skipped: %d spent outputs missing" % len(missing)
    # --no-pow (Core's fCheckPOW=false) lets it through CheckBlock: then the
    # missing outputs leave no verdict, and the list is capped.
    r = peertool("verify-block", "--prevouts", empty, "--no-pow", bad)
    assert r.returncode == 1 and r.stdout == b""
    lines = r.stderr.decode().splitlines()
    named = ["peertool: verify-block: missing prevout %s:%d (tx %d input %d)" % m for m in missing[:10]]
    assert lines == named + ["peertool: verify-block: ... and %d more" % (len(missing) - 10),
                             "peertool: verify-block: %d spent outputs missing" % len(missing)], lines[-3:]


def test_verify_block_high_hash_as_core(tmp_path, bitcoind_node):
    """Core's own verdict on a regtest block with a bad nonce (submitblock)
    is the reject reason verify-block reports."""
    data = open(os.path.join(VECTORS, "regtest", "regtest_chain.dat"), "rb").read()
    assert data[:4] == bytes.fromhex("fabfb5da")
    size = struct.unpack("<I", data[4:8])[0]
    raw = data[8:8 + size]  # block 1, on regtest's genesis
    bad = flip_nonce(raw, 0x7FFFFF << (8 * (0x20 - 3)))
    core = bitcoind_node.rpc("submitblock", bad.hex())
    r = peertool("verify-block", "--chain", "regtest", "--prevouts", write(tmp_path, "e.txt", ""),
                 write(tmp_path, "bad.raw", bad))
    assert r.returncode == 1
    assert result(r)["reject_reason"] == core == "high-hash", (core, r.stdout[:300])

"""peertool decode-* against python-bitcoinlib, an independent implementation.

Run with /usr/bin/python3 -m pytest (Debian's pytest and python3-bitcoinlib).
"""
import os
import re
import subprocess

import pytest
import bitcoin
from bitcoin.core import CBlock, CTransaction, b2lx, b2x, x
from bitcoin.messages import msg_inv, msg_ping, msg_version, msg_getheaders
from bitcoin.net import CInv

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
PEERTOOL = os.environ.get("PEERTOOL_BIN", os.path.join(BUILD, "bin", "peertool"))
VECTORS = os.environ.get("VECTORS", os.path.join(ROOT, "..", "shared", "vectors"))

# A segwit transaction (BIP143's native P2WPKH example, signed form).
SEGWIT_TX = (
    "01000000000102fff7f7881a8099afa6940d42d1e7f6362bec38171ea3edf433541db4e4ad969f00000000494830"
    "450221008b9d1dc26ba6a9cb62127b02742fa9d754cd3bebf337f7a55d114c8e5cdd30be022040529b194ba3f9"
    "281a99f2b1c0a19c0489bc22ede944ccf4ecbab4cc618ef3ed01eeffffffef51e1b804cc89d182d279655c3aa8"
    "9e815b1b309fe287d9b2b55d57b90ec68a0100000000ffffffff02202cb206000000001976a9148280b37df378"
    "db99f66f85c95a783a76ac7a6d5988ac9093510d000000001976a9143bde42dbee7e4dbe6a21b2d50ce2f0167f"
    "aa815988ac000247304402203609e17b84f6a7d30c80bfa610b5b4542f32a8a0d5447a12fb1366d7f01cc44a02"
    "20573a954c4518331561406f90300e8f3358f51928d43c212a8caed02de67eebee0121025476c2e83188368da1"
    "ff3e292e7acafcdb3566bb0ad253f62fc70f07aeee635711000000"
)


def peertool(*args, stdin=None):
    return subprocess.run([PEERTOOL, *args], input=stdin, capture_output=True, timeout=60)


def decode_json(out):
    import json
    return json.loads(out)


@pytest.fixture(scope="module", autouse=True)
def built():
    if not os.path.exists(PEERTOOL):
        pytest.fail(f"{PEERTOOL} not built (run make)")


def test_decode_block_matches_bitcoinlib():
    path = os.path.join(VECTORS, "blocks", "block413567.raw")
    raw = open(path, "rb").read()
    ref = CBlock.deserialize(raw)
    r = peertool("decode-block", path)
    assert r.returncode == 0, r.stderr
    got = decode_json(r.stdout)
    assert got["hash"] == b2lx(ref.GetHash())
    assert got["hash"] == "0000000000000000025aff8be8a55df8f89c77296db6198f272d6577325d4069"
    assert got["merkleroot"] == b2lx(ref.hashMerkleRoot)
    assert got["previousblockhash"] == b2lx(ref.hashPrevBlock)
    assert got["nTx"] == len(ref.vtx)
    assert got["size"] == len(raw)
    assert got["bits"] == "%08x" % ref.nBits
    for tx, reftx in zip(got["tx"], ref.vtx):
        assert tx["txid"] == b2lx(reftx.GetTxid())
        assert len(tx["vin"]) == len(reftx.vin)
        assert len(tx["vout"]) == len(reftx.vout)
        assert tx["hex"] == b2x(reftx.serialize())
    first_out = ref.vtx[1].vout[0]
    assert got["tx"][1]["vout"][0]["scriptPubKey"]["hex"] == b2x(first_out.scriptPubKey)
    # Amounts print as bitcoin-cli prints them: a bare number with 8 decimals.
    assert re.search(rb'"value": \d+\.\d{8}[,\n]', r.stdout)


def test_decode_tx_hex_stdin_segwit():
    ref = CTransaction.deserialize(x(SEGWIT_TX))
    r = peertool("decode-tx", "--hex", "-", stdin=SEGWIT_TX.encode() + b"\n")
    assert r.returncode == 0, r.stderr
    got = decode_json(r.stdout)
    assert got["txid"] == b2lx(ref.GetTxid())
    assert got["hash"] != got["txid"]
    assert got["version"] == 1 and got["locktime"] == 17
    assert got["size"] == len(x(SEGWIT_TX))
    assert got["vin"][0]["scriptSig"]["hex"] == b2x(ref.vin[0].scriptSig)
    assert "txinwitness" not in got["vin"][0]
    assert got["vin"][1]["txinwitness"] == [b2x(w) for w in ref.wit.vtxinwit[1].scriptWitness.stack]
    assert got["vin"][1]["sequence"] == 0xffffffff
    assert got["vout"][0]["value"] == pytest.approx(1.1234)
    assert got["vout"][1]["n"] == 1


def test_decode_megatx():
    path = os.path.join(VECTORS, "blocks", "megatx.bin")
    r = peertool("decode-tx", path)
    assert r.returncode == 0, r.stderr
    got = decode_json(r.stdout)
    assert got["txid"] == "bb41a757f405890fb0f5856228e23b715702d714d59bf2b1feb70d8b2b4e3e08"
    assert len(got["vin"]) == 5569


@pytest.mark.parametrize("cut", [1, 5, 50, 200])
def test_truncated_tx_names_offset(cut):
    hexstr = SEGWIT_TX[: len(SEGWIT_TX) - 2 * cut]
    r = peertool("decode-tx", "--hex", "-", stdin=hexstr.encode())
    assert r.returncode == 1
    lines = r.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert re.match(r"peertool: decode-tx: invalid transaction at byte \d+: ", lines[0]), lines[0]
    assert r.stdout == b""


def test_bad_hex_and_usage():
    r = peertool("decode-tx", "--hex", "-", stdin=b"01zz")
    assert r.returncode == 1
    assert b"invalid hex character at offset 2" in r.stderr
    r = peertool("decode-tx")
    assert r.returncode == 2
    r = peertool("no-such-command")
    assert r.returncode == 2
    r = peertool("decode-block", "/nonexistent/file")
    assert r.returncode == 1 and b"cannot open" in r.stderr


def frame(msg):
    bitcoin.SelectParams("regtest")
    return msg.to_bytes()


def test_decode_msg_inv_and_version():
    inv = msg_inv()
    for i in range(3):
        v = CInv()
        v.type = 1
        v.hash = bytes([i]) * 32
        inv.inv.append(v)
    r = peertool("decode-msg", "-", stdin=frame(inv))
    assert r.returncode == 0, r.stderr
    got = decode_json(r.stdout)
    assert got["network"] == "regtest" and got["command"] == "inv"
    assert got["payload"]["count"] == 3
    assert got["payload"]["inventory"][2] == {"type": "MSG_TX", "hash": "02" * 32}

    ver = msg_version()
    ver.nStartingHeight = 1234
    ver.strSubVer = b"/pytest:1.0/"
    r = peertool("decode-msg", "-", stdin=frame(ver))
    assert r.returncode == 0, r.stderr
    got = decode_json(r.stdout)["payload"]
    assert got["start_height"] == 1234
    assert got["user_agent"] == "/pytest:1.0/"
    assert got["nonce"] == ver.nNonce


def test_decode_msg_errors():
    data = bytearray(frame(msg_ping(nonce=7)))
    data[-1] ^= 0xFF  # payload no longer matches the checksum
    r = peertool("decode-msg", "-", stdin=bytes(data))
    assert r.returncode == 1 and b"bad checksum" in r.stderr
    r = peertool("decode-msg", "-", stdin=b"\x00" * 24)
    assert r.returncode == 1 and b"unknown network magic" in r.stderr
    gh = msg_getheaders()
    r = peertool("decode-msg", "-", stdin=frame(gh)[:-3])
    assert r.returncode == 1 and b"truncated payload" in r.stderr

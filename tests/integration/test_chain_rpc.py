"""peerd's chain methods against Bitcoin Core's answers.

Core's regtest chain (tests/data/regtest, or $VECTORS/regtest) goes in
through submitblock, with the reorg it contains replayed; every checkpoint's
best block, chain work and gettxoutsetinfo, the final getchaintips and
getblock verbosity 2 must be what Core printed. Then invalidateblock /
reconsiderblock, and a restart by SIGTERM that keeps the tip and the UTXO set.
"""
import json
import os
import struct

import pytest

from conftest import ROOT, RpcError

VECTORS = os.environ.get("VECTORS") or os.path.join(ROOT, "tests", "data")
REGTEST = os.path.join(VECTORS, "regtest")


def records(path):
    """The raw blocks of a block-file (magic fabfb5da, LE length, block)."""
    out = []
    with open(path, "rb") as f:
        data = f.read()
    off = 0
    while off < len(data):
        magic, n = struct.unpack_from("<4sI", data, off)
        assert magic == bytes.fromhex("fabfb5da"), off
        out.append(data[off + 8:off + 8 + n])
        off += 8 + n
    return out


@pytest.fixture(scope="module")
def core():
    path = os.path.join(REGTEST, "regtest_chain.json")
    if not os.path.exists(path):
        pytest.skip("no regtest vectors at %s" % REGTEST)
    with open(path) as f:
        return json.load(f)


def submit_all(peerd, blocks):
    c = peerd.ctl()
    for i, b in enumerate(blocks):
        r = c.call("submitblock", b.hex())
        assert r is None, (i, r)


def check_checkpoint(peerd, cp):
    assert peerd.rpc("getbestblockhash") == cp["bestblockhash"]
    assert peerd.rpc("getblockcount") == cp["height"]
    info = peerd.rpc("getblockchaininfo")
    assert info["chainwork"] == cp["chainwork"]
    assert info["blocks"] == cp["height"] and info["bestblockhash"] == cp["bestblockhash"]
    ours = peerd.rpc("gettxoutsetinfo")
    for k in ("height", "bestblock", "txouts", "bogosize", "hash_serialized_3", "total_amount",
              "transactions"):
        assert ours[k] == cp["gettxoutsetinfo"][k], (k, ours[k], cp["gettxoutsetinfo"][k])


def compare(ours, theirs, path="$"):
    """Every field Core printed is in ours with the same value (recursively)."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), path
        for k, v in theirs.items():
            assert k in ours, "%s.%s missing" % (path, k)
            compare(ours[k], v, "%s.%s" % (path, k))
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            compare(a, b, "%s[%d]" % (path, i))
    else:
        assert ours == theirs, "%s: %r != %r" % (path, ours, theirs)


def test_regtest_chain_and_reorg(make_peerd, core):
    main = records(os.path.join(REGTEST, "regtest_chain.dat"))
    stale = records(os.path.join(REGTEST, "regtest_stale_branch.dat"))
    assert len(main) == 265 and len(stale) == 3
    cps = core["checkpoints"]
    peerd = make_peerd(listen=False, name="chain")

    submit_all(peerd, main[:140])
    check_checkpoint(peerd, cps["after-maturity"])
    submit_all(peerd, main[140:260])
    check_checkpoint(peerd, cps["tip"])
    submit_all(peerd, stale)
    check_checkpoint(peerd, cps["stale-branch-tip"])
    c = peerd.ctl()
    for i, b in enumerate(main[260:]):
        r = c.call("submitblock", b.hex())
        # The branch has less work until its fourth block: Core says inconclusive.
        assert r in (None, "inconclusive"), (i, r)
    check_checkpoint(peerd, cps["after-reorg"])

    assert c.call("getchaintips") == core["getchaintips"]
    assert c.call("submitblock", main[10].hex()) == "duplicate"
    for h, want in core["getblock_verbosity2"].items():
        bh = c.call("getblockhash", int(h))
        assert bh == core["main_chain_hashes"][int(h)]
        compare(c.call("getblock", bh, 2), want, "getblock(%s)" % h)
        v1 = c.call("getblock", bh, 1)
        assert v1["tx"] == [t["txid"] for t in want["tx"]]
        assert c.call("getblock", bh, 0) == main[int(h) - 1].hex()
        hdr = c.call("getblockheader", bh)
        for k in ("hash", "height", "version", "merkleroot", "time", "mediantime", "nonce",
                  "bits", "target", "chainwork", "nTx", "previousblockhash"):
            assert hdr[k] == want[k], k
        assert len(c.call("getblockheader", bh, False)) == 160
    # gettxout: the coinbase of block 265 is unspent and immature.
    cb = core["getblock_verbosity2"]["265"]["tx"][0]
    out = c.call("gettxout", cb["txid"], 0)
    assert out["coinbase"] is True and out["confirmations"] == 1
    assert out["value"] == cb["vout"][0]["value"]
    assert out["scriptPubKey"] == cb["vout"][0]["scriptPubKey"]
    assert c.call("gettxout", cb["txid"], 99) is None
    assert c.call("verifychain", 2, 20) is True
    assert c.call("verifychain", 4, 0) is True  # every block, disconnected and connected again

    # Errors as Core's.
    with pytest.raises(RpcError) as e:
        c.call("getblock", "00" * 32)
    assert e.value.code == -5 and e.value.message == "Block not found"
    with pytest.raises(RpcError) as e:
        c.call("getblockhash", 266)
    assert e.value.code == -8
    with pytest.raises(RpcError) as e:
        c.call("submitblock", "00ff")
    assert e.value.code == -22 and e.value.message == "Block decode failed"

    # invalidateblock takes the tip back to the fork; reconsiderblock restores it.
    tip = c.call("getbestblockhash")
    fork_child = core["main_chain_hashes"][261]
    assert c.call("invalidateblock", fork_child) is None
    assert c.call("getbestblockhash") == cps["stale-branch-tip"]["bestblockhash"]
    tips = {t["hash"]: t["status"] for t in c.call("getchaintips")}
    assert tips[tip] == "invalid"
    assert c.call("reconsiderblock", fork_child) is None
    assert c.call("getbestblockhash") == tip

    # A restart by SIGTERM keeps the tip and the UTXO set.
    utxo = peerd.rpc("gettxoutsetinfo")["hash_serialized_3"]
    peerd.stop()
    assert "chain state flushed" in peerd.log()
    again = make_peerd(listen=False, name="chain")
    assert again.rpc("getbestblockhash") == tip
    assert again.rpc("gettxoutsetinfo")["hash_serialized_3"] == utxo


def test_batch_mixes_loop_and_chain_methods(make_peerd):
    peerd = make_peerd(listen=False)
    c = peerd.ctl()
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "getblockcount"},
        {"jsonrpc": "2.0", "id": 2, "method": "uptime"},
        {"jsonrpc": "2.0", "method": "getbestblockhash"},
        {"jsonrpc": "2.0", "id": 3, "method": "getblockhash", "params": [0]},
        {"jsonrpc": "2.0", "id": 4, "method": "getconnectioncount"},
        {"jsonrpc": "2.0", "id": 5, "method": "getblock", "params": ["zz"]},
    ]
    c.send_line(json.dumps(batch) + "\n" + json.dumps({"id": 6, "method": "uptime"}) + "\n")
    r = c.read_line()
    assert [x["id"] for x in r] == [1, 2, 3, 4, 5]
    assert c.read_line()["id"] == 6
    assert r[0]["result"] == 0 and r[2]["result"] == c.call("getbestblockhash")
    assert r[4]["error"]["code"] == -8
    st = c.call("getstats")
    assert st["chain"]["height"] == 0 and "coins_cache" in st
    assert st["checkqueue"]["threads"] >= 1 and "per_thread" in st["checkqueue"]

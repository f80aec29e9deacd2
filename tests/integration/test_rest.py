"""Issue 23: the REST interface (-rest; doc/rest.md), checked against Bitcoin Core.

The same chain on peerd and on bitcoind (Core's wallet makes it: 101
blocks, a block with a wallet transaction in it, and another transaction
left in both mempools); then every endpoint and format is asked of both:
.bin and .hex answers must be byte-identical, .json answers equal, and the
error cases equal in status, content type and body. Loopback only.
"""
import http.client
import json

import pytest

from conftest import free_port

pytestmark = pytest.mark.interop

# Fields two honest nodes may print differently for the same chain.
LOCAL = {"size_on_disk", "verificationprogress", "time", "warnings", "usage"}


def get(port, path, method="GET", body=None):
    """(status, content type, body bytes) of one request, no authentication."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request(method, path, body=body)
    r = c.getresponse()
    out = r.status, r.getheader("Content-Type"), r.read()
    c.close()
    return out


def scrub(v, local=LOCAL):
    if isinstance(v, dict):
        return {k: scrub(x, local) for k, x in v.items() if k not in local}
    if isinstance(v, list):
        return [scrub(x, local) for x in v]
    return v


@pytest.fixture
def pair(make_bitcoind, make_peerd):
    core = make_bitcoind(1, args=("-rest",))[0]
    core.create_wallet()
    addr = core.new_address("bech32")
    hashes = core.mine(101, addr)
    mined = core.send_to(core.new_address("bech32"), 1)
    hashes += core.mine(1, addr)
    waiting = core.send_to(core.new_address("bech32"), 2)
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, "-rest")
    d.rpcport = port
    for h in hashes:
        assert d.rpc("submitblock", core.rpc("getblock", h, 0)) is None
    assert d.rpc("sendrawtransaction", core.rpc("getrawtransaction", waiting)) == waiting
    assert d.rpc("getbestblockhash") == core.rpc("getbestblockhash")
    return core, d, hashes, mined, waiting


def both(core, d, path, method="GET", body=None):
    return get(d.rpcport, path, method, body), get(core.rpcport, path, method, body)


def assert_same(core, d, path, method="GET", body=None, scrubbed=False, local=LOCAL):
    ours, theirs = both(core, d, path, method, body)
    assert ours[0] == theirs[0], (path, ours, theirs[:2], theirs[2][:300])
    if theirs[2] == b"":
        # Core's no-handler 404 carries libevent's default content type; no body either way.
        assert ours[2] == b"", (path, ours)
        return ours
    assert ours[1] == theirs[1], (path, ours[1], theirs[1])
    if theirs[1] == "application/json" and scrubbed:
        assert ours[2].endswith(b"\n")
        assert scrub(json.loads(ours[2]), local) == scrub(json.loads(theirs[2]), local), path
    else:
        assert ours[2] == theirs[2], (path, ours[2][:400], theirs[2][:400])
    return ours


def test_rest_answers_as_bitcoind(pair):
    core, d, hashes, mined, waiting = pair
    tip, h1 = hashes[-1], hashes[0]
    block_txs = core.rpc("getblock", tip)["tx"]
    assert mined in block_txs
    for fmt in ("bin", "hex", "json"):
        for h in (tip, h1, core.rpc("getblockhash", 0)):
            assert_same(core, d, "/rest/block/%s.%s" % (h, fmt))
        assert_same(core, d, "/rest/block/notxdetails/%s.%s" % (tip, fmt))
        assert_same(core, d, "/rest/headers/%s.%s" % (h1, fmt))
        assert_same(core, d, "/rest/headers/%s.%s?count=20" % (hashes[90], fmt))
        assert_same(core, d, "/rest/headers/3/%s.%s" % (h1, fmt))
        assert_same(core, d, "/rest/headers/%s.%s?count=1" % (tip, fmt))
        assert_same(core, d, "/rest/headers/%s.%s" % ("ab" * 32, fmt))
        assert_same(core, d, "/rest/blockhashbyheight/%d.%s" % (7, fmt))
        assert_same(core, d, "/rest/tx/%s.%s" % (waiting, fmt))
        assert_same(core, d, "/rest/tx/%s.%s" % (mined, fmt))
    # The uppercase hash, a leading zero and "-0" are Core's too.
    assert_same(core, d, "/rest/block/%s.hex" % tip.upper())
    assert_same(core, d, "/rest/blockhashbyheight/007.hex")
    assert_same(core, d, "/rest/blockhashbyheight/-0.json")
    # JSON-only endpoints: the same but for what each node measures of itself.
    assert_same(core, d, "/rest/chaininfo.json", scrubbed=True)
    assert_same(core, d, "/rest/mempool/info.json", scrubbed=True)
    assert_same(core, d, "/rest/mempool/contents.json", scrubbed=True)
    assert_same(core, d, "/rest/mempool/contents.json?verbose=false")
    # The sequence counts what each mempool saw (Core's also saw the mined transaction).
    ours = assert_same(core, d,
                       "/rest/mempool/contents.json?verbose=false&mempool_sequence=true",
                       scrubbed=True, local=LOCAL | {"mempool_sequence"})
    assert isinstance(json.loads(ours[2])["mempool_sequence"], int)


def outpoints_body(check, outs, fmt, bip64=True):
    """A binary getutxos body: BIP64's flag and outpoints, or (bip64=False) the
    outpoints alone, which is what Core 29 reads (it takes the body's length
    as the flag)."""
    b = bytes([1 if check else 0, len(outs)]) if bip64 else bytes([len(outs)])
    for txid, n in outs:
        b += bytes.fromhex(txid)[::-1] + n.to_bytes(4, "little")
    return b if fmt == "bin" else b.hex().encode()


def test_rest_getutxos_as_bitcoind(pair):
    core, d, hashes, mined, waiting = pair
    coinbase1 = core.rpc("getblock", hashes[0])["tx"][0]
    spent = core.rpc("getrawtransaction", waiting, 1)["vin"][0]
    outs = [(coinbase1, 0), (mined, 0), (mined, 1), (waiting, 0), (waiting, 1),
            (spent["txid"], spent["vout"]), ("cd" * 32, 0)]
    uri = "/".join("%s-%d" % o for o in outs)
    for fmt in ("bin", "hex", "json"):
        assert_same(core, d, "/rest/getutxos/%s.%s" % (uri, fmt))
        assert_same(core, d, "/rest/getutxos/checkmempool/%s.%s" % (uri, fmt))
    for fmt in ("bin", "hex"):
        for check in (False, True):
            body = outpoints_body(check, outs, fmt)
            assert_same(core, d, "/rest/getutxos.%s" % fmt, "POST", body)
        for k in (1, 3, 6):
            ours = assert_same(core, d, "/rest/getutxos.%s" % fmt, "POST",
                               outpoints_body(True, outs[:k], fmt, bip64=False))
            assert ours[0] == 200
    # A body past 252 bytes: the length's CompactSize tag is read as the flag.
    assert_same(core, d, "/rest/getutxos.bin", "POST", bytes([7]) + outpoints_body(True, outs, "bin", False)[1:] + bytes(10))
    # Too many, a short body, invalid hex (no outpoints at all), URI and body together.
    many = "/".join("%s-%d" % (coinbase1, i) for i in range(16))
    assert_same(core, d, "/rest/getutxos/%s.json" % many)
    assert_same(core, d, "/rest/getutxos.bin", "POST", outpoints_body(False, outs * 3, "bin"))
    assert_same(core, d, "/rest/getutxos.bin", "POST", outpoints_body(False, outs, "bin")[:-3])
    assert_same(core, d, "/rest/getutxos.hex", "POST", b"zz")
    assert_same(core, d, "/rest/getutxos.bin", "POST", b"\x00\xfd\x01\x00")
    assert_same(core, d, "/rest/getutxos/%s-0.bin" % coinbase1, "POST", b"\x00\x00")


ERRORS = [
    "/rest/", "/rest/foo", "/rest/chaininfo", "/rest/chaininfo.bin", "/rest/chaininfo.hex",
    "/rest/block/xyz.json", "/rest/block/{h}", "/rest/block/{h}.", "/rest/block/{h}.txt",
    "/rest/block/{zero}.bin", "/rest/block/notxdetails/{h}.bin",
    "/rest/block/notxdetails/{zero}.json",
    "/rest/headers/{h}.hex?count=0", "/rest/headers/{h}.hex?count=2001",
    "/rest/headers/{h}.hex?count=abc", "/rest/headers/{h}.hex?count=+1",
    "/rest/headers/1/2/3.hex", "/rest/headers/0/{h}.hex", "/rest/headers/{h}",
    "/rest/headers/5/zz.json", "/rest/headers/{h}.hex?count=2000",
    "/rest/blockhashbyheight/-1.hex", "/rest/blockhashbyheight/999.hex",
    "/rest/blockhashbyheight/+1.hex", "/rest/blockhashbyheight/a<b>.hex",
    "/rest/blockhashbyheight/a%20b.hex", "/rest/block/%30{h}.hex",
    "/rest/headers/{h}.hex?count=1%32", "/rest/headers/{h}.hex?count", "/rest/headers/{h}.hex?x&count=2",
    "/rest/headers/{h}.hex?count=2&count=3", "/rest/headers/{h}.hex?count=%2B4", "/rest/headers/{h}.hex?count=%zz",
    "/rest/mempool/contents.json?verbose=%zz", "/rest/headers/{h}.hex?count=1&x=<", "/rest/headers/{h}.hex?count=%3C",
    "/rest/headers/{h}.hex?count=1&=2", "/rest/blockfilterheaders/basic/{h}.json?count=%zz",
    "/rest/blockhashbyheight/2147483648.json", "/rest/blockhashbyheight/1",
    "/rest/tx/zz.hex", "/rest/tx/{zero}.json", "/rest/tx/{h}",
    "/rest/blockfilter/basic/{h}.hex", "/rest/blockfilter/foo/{h}.hex",
    "/rest/blockfilter/basic/zz.hex", "/rest/blockfilter/basic.hex",
    "/rest/blockfilterheaders/basic/{h}.hex", "/rest/blockfilterheaders/basic/5/{h}.json",
    "/rest/blockfilterheaders/basic/0/{h}.json", "/rest/blockfilterheaders/x.json",
    "/rest/blockfilterheaders/foo/{h}.bin?count=9",
    "/rest/mempool/foo.json", "/rest/mempool/info.bin", "/rest/mempool/contents",
    "/rest/mempool/contents.json?verbose=x",
    "/rest/mempool/contents.json?mempool_sequence=yes&verbose=false",
    "/rest/mempool/contents.json?verbose=true&mempool_sequence=true",
    "/rest/mempool/contents.json?mempool_sequence=true",
    "/rest/getutxos.json", "/rest/getutxos/x-1.json", "/rest/getutxos/{h}-+1.json",
    "/rest/getutxos/{h}--1.json", "/rest/getutxos/checkmempool.json",
    "/rest/getutxos/{h}-1-2.json", "/rest/getutxos/{h}-4294967296.json",
    "/rest/getutxos/{h}-1.txt", "/rest/getutxos.bin", "/rest/getutxos/x/{h}-1.json",
    "/rest/spenttxouts/{h}.bin", "/rest/blockpart/{h}.bin", "/restx",
]


def test_rest_errors_as_bitcoind(pair):
    core, d, hashes, mined, waiting = pair
    for p in ERRORS:
        assert_same(core, d, p.format(h=hashes[3], zero="00" * 32))
    # POST and HEAD take the same handlers (Core's REST looks at no method).
    assert_same(core, d, "/rest/blockhashbyheight/3.hex", "POST", b"")
    assert get(d.rpcport, "/rest/blockhashbyheight/3.hex", "HEAD")[0] == 200


def test_rest_is_off_by_default(make_peerd):
    port = free_port()
    d = make_peerd("-rpcport=%d" % port)
    st, _, body = get(port, "/rest/chaininfo.json")
    assert (st, body) == (404, b"")
    # The JSON-RPC door still asks for credentials; REST never does.
    assert get(port, "/", "POST", b"{}")[0] == 401


def test_rest_after_a_reorg_as_bitcoind(pair):
    """A block off the active chain: served whole (confirmations -1), but no
    headers walk from it; the walk from the fork point follows the new chain."""
    core, d, hashes, mined, waiting = pair
    stale = hashes[-1]
    core.rpc("invalidateblock", stale)
    assert d.rpc("invalidateblock", stale) is None
    desc = core.rpc("getdescriptorinfo", "raw(51)")["descriptor"]
    fresh = core.rpc("generatetodescriptor", 2, desc)
    for h in fresh:
        assert d.rpc("submitblock", core.rpc("getblock", h, 0)) is None
    assert d.rpc("getbestblockhash") == core.rpc("getbestblockhash") == fresh[-1]
    for fmt in ("bin", "hex", "json"):
        assert_same(core, d, "/rest/block/%s.%s" % (stale, fmt))
        assert_same(core, d, "/rest/block/notxdetails/%s.%s" % (stale, fmt))
        assert_same(core, d, "/rest/headers/%s.%s?count=5" % (stale, fmt))
        assert_same(core, d, "/rest/headers/%s.%s?count=5" % (hashes[-3], fmt))
        assert_same(core, d, "/rest/blockhashbyheight/%d.%s" % (len(hashes), fmt))
        assert_same(core, d, "/rest/getutxos/%s-0/%s-1.%s" % (mined, mined, fmt))


def test_rest_body_over_the_limit_is_413(make_peerd):
    """A body past the JSON-RPC door's limit (the control socket's line) is
    refused whole, as a JSON-RPC request's is; the server goes on."""
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, "-rest")
    st, _, body = get(port, "/rest/getutxos.bin", "POST", bytes(9 << 20))
    assert (st, body) == (413, b"")
    st, ctype, body = get(port, "/rest/blockhashbyheight/0.hex")
    assert (st, ctype) == (200, "text/plain") and len(body) == 65

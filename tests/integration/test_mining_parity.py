"""generatetoaddress fills its blocks from the mempool as Bitcoin Core's
BlockAssembler does (issue 11's "as Core" for a regtest operator: a mined
block confirms what is waiting). The question goes to both nodes with the
same mempool: Core answers with getblocktemplate (the same BlockAssembler
as its generatetoaddress, without mining), peerd with the block it mines;
the transactions, their order and the coinbase's value must be equal, and
Core must accept peerd's block."""
from decimal import Decimal

import pytest

from mempool_craft import TRUE, p2wsh
from mempool_parity_env import COIN, SPK, env, spend  # noqa: F401 (env: the module fixture)
from test_mempool_parity import coinbase_value, compare_mempool, same

pytestmark = pytest.mark.interop


def template(env):
    """Core's next block: its transactions' txids in order, and the coinbase's value."""
    t = env.core.rpc("getblocktemplate", {"rules": ["segwit"]})
    return [x["txid"] for x in t["transactions"]], t["coinbasevalue"]


def mine_on_peerd(env):
    """One block by peerd's generatetoaddress, given to Core: its txids and coinbase value."""
    addr = env.core.new_address("bech32")
    h = env.peerd.rpc("generatetoaddress", 1, addr)[0]
    raw = env.peerd.rpc("getblock", h, 0)
    assert env.core.rpc("submitblock", raw) is None
    assert env.core.getbestblockhash() == h
    blk = env.peerd.rpc("getblock", h, 1)
    return blk["tx"][1:], coinbase_value(raw)


def test_generatetoaddress_mines_the_mempool_as_core(env):
    coins = env.fund([(COIN // 10, SPK["wsh_true"])] * 14, ["wsh_true"] * 14)
    compare_mempool(env)
    sent = []

    def send(t):
        env.send(t)
        sent.append(t)
        return t

    # Single transactions at several feerates.
    for fee in (3_000, 9_000, 1_500, 20_000):
        send(spend([coins.pop()], fee=fee))
    # Equal feerates (same shape, same fee): the txid decides, as in Core's index.
    for _ in range(3):
        send(spend([coins.pop()], fee=4_000))
    # A cheap parent with a rich child: the package goes before what pays
    # more than the parent alone (child pays for parent).
    parent = send(spend([coins.pop()], [(COIN // 10 - 300 - 50_000, p2wsh(TRUE)), (50_000, p2wsh(TRUE))], fee=300))
    child = send(spend([parent.out(0)], fee=40_000))
    # Its second output's spender: once the parent is in the block, a
    # modified entry whose package is only itself.
    send(spend([parent.out(1)], fee=5_000))
    # A chain of three at one feerate.
    a = send(spend([coins.pop()], fee=2_500))
    b = send(spend([a.out(0)], fee=2_500))
    send(spend([b.out(0)], fee=2_500))
    # Prioritised up (first in the block), and down below the minimum fee
    # rate (left out, with what depends on it).
    up = send(spend([coins.pop()], fee=1_000))
    down = send(spend([coins.pop()], fee=6_000))
    down_child = send(spend([down.out(0)], fee=6_000))
    for txid, delta in ((up.txid, 100_000), (down.txid, -1_000_000)):
        assert same(env, "prioritisetransaction", txid, 0, delta) is True
    compare_mempool(env)

    want, value = template(env)
    got, got_value = mine_on_peerd(env)
    assert got == want
    assert got_value == value
    assert got[0] == up.txid
    assert down.txid not in got and down_child.txid not in got
    # Child pays for parent: the 300-sat parent before a 9,000-sat single.
    assert got.index(parent.txid) < got.index(child.txid) < got.index(sent[1].txid)
    assert len(got) == len(sent) - 2, (len(got), len(sent))
    # Both mempools keep the same two; the next block is empty on both.
    compare_mempool(env)
    assert sorted(env.core.getrawmempool()) == sorted([down.txid, down_child.txid])
    want, value = template(env)
    got, got_value = mine_on_peerd(env)
    assert got == want == [] and got_value == value
    # Prioritised back: both mine the pair, parent first.
    assert same(env, "prioritisetransaction", down.txid, 0, 1_000_000) is True
    want, value = template(env)
    got, got_value = mine_on_peerd(env)
    assert got == want == [down.txid, down_child.txid] and got_value == value
    compare_mempool(env)
    assert env.core.getrawmempool() == []


def test_generatetoaddress_many_blocks_empty_mempool(env):
    """Several blocks at once: each a new template; an empty mempool gives coinbase-only blocks."""
    compare_mempool(env)
    t = spend([env.fund([(COIN // 10, SPK["wsh_true"])], ["wsh_true"])[0]], fee=3_000)
    env.send(t)
    addr = env.core.new_address("bech32")
    hashes = env.peerd.rpc("generatetoaddress", 3, addr)
    assert len(hashes) == 3
    txs = [env.peerd.rpc("getblock", h, 1)["tx"] for h in hashes]
    assert txs[0][1:] == [t.txid] and len(txs[1]) == 1 and len(txs[2]) == 1
    for h in hashes:
        assert env.core.rpc("submitblock", env.peerd.rpc("getblock", h, 0)) is None
    assert env.core.getbestblockhash() == hashes[-1]
    compare_mempool(env)


def test_prioritisetransaction_answers_as_core(env):
    compare_mempool(env)
    c1, c2 = env.fund([(COIN // 10, SPK["wsh_true"])] * 2, ["wsh_true"] * 2)
    t = spend([c1], fee=2_000)
    # Before the transaction exists: kept, and counted once it arrives.
    assert same(env, "prioritisetransaction", t.txid, 0, 7_000) is True
    assert same(env, "prioritisetransaction", t.txid, None, -500) is True
    assert same(env, "getprioritisedtransactions") == {
        t.txid: {"fee_delta": 6_500, "in_mempool": False}}
    env.send(t)
    assert same(env, "getprioritisedtransactions")[t.txid]["modified_fee"] == 8_500
    # Two more, one cleared back to zero (gone from the list, as Core's).
    other = spend([c2], fee=2_000)
    for delta in (300, -300):
        same(env, "prioritisetransaction", "11" * 32, 0, 5)
        same(env, "prioritisetransaction", other.txid, 0, delta)
    assert len(same(env, "getprioritisedtransactions")) == 2
    entry = same(env, "getmempoolentry", t.txid)
    assert entry["fees"]["modified"] == entry["fees"]["base"] + Decimal(6_500) / COIN, entry
    compare_mempool(env)
    # Core's errors, word for word (same() compares the whole answer).
    for params in ((t.txid, 1, 5), (t.txid, 0.5, 5), ("zz", 0, 5), ("00" * 32 + "0", 0, 5),
                   (t.txid, 0, "5"), (t.txid, "0", 5), (t.txid, 0, 2.5), (5, 0, 5), ("zz", 0, "5"), ("zz", 1, 5)):
        r = same(env, "prioritisetransaction", *params)
        assert isinstance(r, tuple) and r[0] == "error", (params, r)
    # A wrong count: both answer -1 with their help texts, whose first
    # (usage) line is the same. (fee_delta left out once crashed peerd.)
    for params in ((t.txid,), (t.txid, 0), (t.txid, 0, 1, 2)):
        core = env.both("prioritisetransaction", *params, compare=False)
        ours = env.peerd_call("prioritisetransaction", *params)
        assert core[:2] == ours[:2] == ("error", -1), (core, ours)
        assert core[2].split("\n")[0] == ours[2].split("\n")[0], (core, ours)
    got, _ = mine_on_peerd(env)
    assert got == [t.txid]
    compare_mempool(env)
    # Mined: its delta is gone; the one for a transaction never seen stays.
    assert list(same(env, "getprioritisedtransactions")) == ["11" * 32]


def test_block_options_bound_what_is_mined(env):
    """-blockmaxweight and -blockmintxfee reach generatetoaddress (Core's meanings)."""
    coins = env.fund([(COIN // 10, SPK["wsh_true"])] * 3, ["wsh_true"] * 3)
    rich, mid, poor = (spend([c], fee=f) for c, f in zip(coins, (30_000, 8_000, 1_000)))
    for t in (rich, mid, poor):
        env.send(t)
    vsize = env.core.rpc("getmempoolentry", rich.txid)["vsize"]
    try:
        # Room for one transaction besides the 8,000 WU kept for the coinbase.
        env.restart_peerd("-blockmaxweight=%d" % (8000 + 4 * vsize + 1))
        assert mine_on_peerd(env)[0] == [rich.txid]
        # 50 sat/vB at least: mid pays ~70, poor ~9.
        env.restart_peerd("-blockmintxfee=0.0005")
        assert mine_on_peerd(env)[0] == [mid.txid]
    finally:
        env.restart_peerd()
    assert mine_on_peerd(env)[0] == [poor.txid]
    compare_mempool(env)


def test_generatetodescriptor_as_core(env):
    addr = env.core.new_address("bech32")
    spk = env.core.rpc("getaddressinfo", addr, wallet=env.core.wallet)["scriptPubKey"]
    desc = "addr(%s)" % addr
    checked = env.core.getdescriptorinfo(desc)["descriptor"]
    # Errors first, word for word: nothing is mined.
    for params in ((1, "foo"), (1, "raw(zz)"), (1, checked[:-1] + ("a" if checked[-1] != "a" else "b")),
                   (1, desc, -1), (1, desc, 2.5), (2**40, desc), ("1", desc), (1, 5)):
        r = same(env, "generatetodescriptor", *params)
        assert isinstance(r, tuple) and r[0] == "error", (params, r)
    # Zero blocks: an empty list from both.
    assert same(env, "generatetodescriptor", 0, desc) == []
    t = spend([env.fund([(COIN // 10, SPK["wsh_true"])], ["wsh_true"])[0]], fee=3_000)
    env.send(t)
    for d in (checked, "raw(%s)" % spk):
        h = env.peerd.rpc("generatetodescriptor", 1, d)[0]
        raw = env.peerd.rpc("getblock", h, 0)
        assert env.core.rpc("submitblock", raw) is None
        blk = env.core.getblock(h, 2)
        assert blk["tx"][0]["vout"][0]["scriptPubKey"]["hex"] == spk
    assert t.txid in env.core.getblock(env.core.getblockhash(env.height() - 1), 1)["tx"]
    compare_mempool(env)


def _grind(header, pow_ok, bits=None):
    """header (80 bytes) with bits replaced if given and a nonce whose hash
    meets the target (pow_ok) or misses it."""
    import hashlib
    import struct

    b = bytearray(header)
    if bits is not None:
        b[72:76] = struct.pack("<I", bits)
    nbits = struct.unpack("<I", bytes(b[72:76]))[0]
    target = (nbits & 0xFFFFFF) << (8 * ((nbits >> 24) - 3))
    for nonce in range(100_000):
        b[76:80] = struct.pack("<I", nonce)
        h = hashlib.sha256(hashlib.sha256(bytes(b)).digest()).digest()[::-1]
        if (int.from_bytes(h, "big") <= target) == pow_ok:
            return bytes(b).hex()
    raise AssertionError("no nonce found")


def test_submitheader_as_core(env):
    # A block Core has and peerd has not: mined on Core, not handed over yet.
    h = env.core.rpc("generatetodescriptor", 1, env.wallet_desc)[0]
    hdr = env.core.rpc("getblockheader", h, False)
    raw = bytes.fromhex(hdr)
    unknown_prev = (raw[:4] + bytes([0x11]) * 32 + raw[36:]).hex()
    # Errors, word for word: bad hex, short, wrong type, unknown parent,
    # proof of work missed, the wrong difficulty for the parent.
    for params in (("zz",), ("",), ("abc",), (hdr[:100],), (5,), (unknown_prev,),
                   (_grind(raw, False),), (_grind(raw, True, bits=0x207FFFFE),)):
        r = same(env, "submitheader", *params)
        assert isinstance(r, tuple) and r[0] == "error", (params, r)
    # The real one (Core knows it already and answers null too), extra bytes
    # after the 80 ignored as Core ignores them.
    assert same(env, "submitheader", hdr + "00") is None
    assert env.peerd.rpc("getblockheader", h)["hash"] == h
    tips = {t["hash"]: t["status"] for t in env.peerd.rpc("getchaintips")}
    assert tips.get(h) == "headers-only", tips
    env.sync()  # the block itself, by submitblock
    assert same(env, "getchaintips") == env.core.rpc("getchaintips")

"""Issue 25: -txindex and -blockfilterindex (index/, doc/operating.md),
checked against Bitcoin Core started with the same options on the same chain.

Core's wallet makes the chain (101 blocks, then blocks holding wallet
transactions); peerd is given every block. Then both are asked
getindexinfo, getblockfilter for every block and getrawtransaction
(verbosity 0, 1, 2) for every transaction, with the error cases, and the
REST tx and blockfilter endpoints; again after a reorg (the stale blocks'
filters still answer, as Core's) and after restarts: one with the indexes
as they were, one after blocks were connected while peerd ran without
them (the index catches up in the background). Loopback only.
"""
import json

import pytest

from bitcoind import wait_until
from conftest import rest_get
from mempool_parity_env import answer, norm

pytestmark = pytest.mark.interop

INDEX_ARGS = ("-txindex", "-blockfilterindex")


def start_peerd(make_peerd, *extra):
    return make_peerd("-rest", *extra, name="indexed")


def synced(node, call):
    # Core's "synced" stays true once its first catch-up ended: its index
    # thread may still be a block behind, so the height is waited for too.
    info, tip = call("getindexinfo"), call("getblockcount")
    return len(info) == 2 and all(v["synced"] and v["best_block_height"] == tip
                                  for v in info.values())


def wait_synced(core, d):
    wait_until(lambda: synced(core, core.rpc), timeout=60, what="bitcoind's indexes")
    wait_until(lambda: synced(d, d.rpc), timeout=60, what="peerd's indexes")


def same(core, d, method, *params):
    ours = answer(lambda: d.rpc(method, *params))
    theirs = answer(lambda: core.rpc(method, *params))
    assert norm(ours) == theirs, (method, params, ours, theirs)
    return ours


def submit(core, d, hashes):
    for h in hashes:
        # A fork block with less work than the tip yet is Core's "inconclusive".
        assert d.rpc("submitblock", core.rpc("getblock", h, 0)) in (None, "inconclusive")
    assert d.rpc("getbestblockhash") == core.rpc("getbestblockhash")


def check_all(core, d, extra_blocks=()):
    """Every active block's filter and transaction, and the index summaries."""
    same(core, d, "getindexinfo")
    for name in ("txindex", "basic block filter index", "coinstatsindex", "nonsense", ""):
        same(core, d, "getindexinfo", name)
    tip = core.rpc("getblockcount")
    blocks = [core.rpc("getblockhash", h) for h in range(tip + 1)] + list(extra_blocks)
    txids = []
    for h in blocks:
        same(core, d, "getblockfilter", h)
        same(core, d, "getblockfilter", h, "basic")
        txids += core.rpc("getblock", h)["tx"]
    for t in txids[-40:] + txids[:3]:
        for verbosity in (0, 1, 2):
            same(core, d, "getrawtransaction", t, verbosity)
    for fmt in ("json", "hex", "bin"):
        for t in txids[-5:]:
            ours, theirs = rest_get(d.rpcport, "/rest/tx/%s.%s" % (t, fmt)), rest_get(
                core.rpcport, "/rest/tx/%s.%s" % (t, fmt))
            assert ours == theirs, (t, fmt, ours[:2], ours[2][-300:], theirs[2][-300:])
        paths = ["/rest/blockfilter/basic/%s.%s" % (h, fmt) for h in blocks[-5:] + ["ab" * 32]]
        paths += ["/rest/blockfilterheaders/basic/%s.%s" % (h, fmt) for h in blocks[-3:]]
        paths += ["/rest/blockfilterheaders/basic/%s.%s?count=%d" % (blocks[1], fmt, n)
                  for n in (1, 20)]
        paths += ["/rest/blockfilterheaders/basic/%s.%s" % ("ab" * 32, fmt)]
        for path in paths:
            ours, theirs = rest_get(d.rpcport, path), rest_get(core.rpcport, path)
            assert ours == theirs, (path, ours, theirs)
    return txids


def test_indexes_as_bitcoind(make_bitcoind, make_peerd):
    core = make_bitcoind(1, args=INDEX_ARGS + ("-rest",))[0]
    core.create_wallet()
    addr = core.new_address("bech32")
    hashes = core.mine(110, addr)
    for kind in ("bech32", "legacy", "p2sh-segwit", "bech32m"):
        core.send_to(core.new_address(kind), 1)
    hashes += core.mine(1, addr)
    core.send_to(core.new_address("bech32"), 2)
    hashes += core.mine(1, addr)
    d = start_peerd(make_peerd, *INDEX_ARGS)
    submit(core, d, hashes)
    wait_synced(core, d)
    txids = check_all(core, d)

    # Errors: an unknown transaction (synced: Core's "No such mempool or
    # blockchain transaction"), the genesis coinbase, unknown block and type.
    same(core, d, "getrawtransaction", "ab" * 32)
    same(core, d, "getrawtransaction", core.rpc("getblock", hashes[0])["tx"][0], 1, hashes[0])
    same(core, d, "getrawtransaction", core.rpc("getblock", core.rpc("getblockhash", 0))["tx"][0])
    same(core, d, "getblockfilter", "ab" * 32)
    same(core, d, "getblockfilter", hashes[-1], "extended")
    same(core, d, "getblockfilter", "zz")

    # A reorg: two blocks replaced by three others. The stale blocks' filters
    # stay (Core keeps them), their coinbases stay indexed (confirmations
    # 0), the indexes follow the tip. The stale blocks hold their coinbases
    # only: what a mempool does with a disconnected block's transactions is
    # test_mempool_parity's business.
    stale = core.mine(2, addr)
    submit(core, d, stale)
    wait_synced(core, d)
    core.rpc("invalidateblock", stale[0])
    core.send_to(core.new_address("bech32"), 3)
    fork = core.mine(3, addr)
    core.rpc("reconsiderblock", stale[0])
    assert core.rpc("getbestblockhash") == fork[-1]
    submit(core, d, fork)
    wait_synced(core, d)
    check_all(core, d, extra_blocks=stale)
    for t in txids[-6:]:
        same(core, d, "getrawtransaction", t, 1)

    # A restart: the indexes come back where they were.
    d.stop()
    d = start_peerd(make_peerd, *INDEX_ARGS)
    wait_synced(core, d)
    check_all(core, d, extra_blocks=stale)

    # Blocks connected while peerd ran without the indexes: caught up in the
    # background at the next start with them.
    d.stop()
    d = start_peerd(make_peerd)
    assert d.rpc("getindexinfo") == {}
    err = answer(lambda: d.rpc("getblockfilter", fork[-1]))
    assert err == ("error", -1, "Index is not enabled for filtertype basic"), err
    core.send_to(core.new_address("legacy"), 1)
    more = core.mine(250, addr)
    submit(core, d, more)
    d.stop()
    d = start_peerd(make_peerd, *INDEX_ARGS)
    wait_synced(core, d)
    check_all(core, d, extra_blocks=stale)

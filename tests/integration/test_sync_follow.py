"""peerd follows the chain from Bitcoin Core: headers first, blocks from
several peers at once, announcements, reorgs. Skipped without a bitcoind."""
import os
from decimal import Decimal

import pytest

from bitcoind import ADDRESS_TYPES, wait_until

pytestmark = pytest.mark.interop

SYNC_TIMEOUT = 90



def utxo_hash(node_rpc):
    return node_rpc("gettxoutsetinfo")["hash_serialized_3"]


def same_tip(d, core):
    return d.rpc("getbestblockhash") == core.getbestblockhash()


def make_wallet_chain(core, blocks=300):
    """A chain with wallet transactions of every script type, `blocks` high."""
    core.create_wallet()
    coinbases = core.fund_wallet(per_type=3)
    utxos = {t: core.spendable(coinbases[t]) for t in ADDRESS_TYPES}
    for src in ADDRESS_TYPES:
        for dst in ADDRESS_TYPES:
            if utxos[src]:
                core.send_typed(utxos[src].pop(), dst)
        core.mine(1)
    left = blocks - core.getblockcount()
    if left > 0:
        core.mine(left)


def test_peerd_syncs_from_core_and_follows(make_peerd, bitcoind_node):
    core = bitcoind_node
    make_wallet_chain(core)
    d = make_peerd("-connect=127.0.0.1:%d" % core.port, "-peertimeout=20", listen=False)
    wait_until(lambda: same_tip(d, core), SYNC_TIMEOUT, "peerd to reach Core's tip")
    assert d.rpc("getblockcount") == core.getblockcount() >= 300
    assert utxo_hash(d.rpc) == utxo_hash(core.rpc)
    s = d.rpc("getstats")["sync"]
    assert s["blocks_accepted"] >= 300 and s["blocks_invalid"] == 0, s
    assert s["queue_bytes"] == 0 and s["window"] == 0, s
    # Core mines on: peerd follows through announcements.
    for _ in range(5):
        h = core.mine(1)[0]
        wait_until(lambda: d.rpc("getbestblockhash") == h, 10, "peerd to follow %s" % h)
    assert utxo_hash(d.rpc) == utxo_hash(core.rpc)


def test_peerd_reorgs_to_the_longer_fork(make_peerd, make_bitcoind):
    a, b = make_bitcoind(2)
    a.connect_nodes(b)
    a.mine_op_true(110)
    b.wait_for_blockcount(110)
    a.disconnect(address="127.0.0.1:%d" % b.port)
    a.mine_op_true(3)  # a's branch: 113
    b.mine_op_true(6)  # b's branch: 116, more work
    d = make_peerd("-connect=127.0.0.1:%d" % a.port, "-peertimeout=20", listen=False)
    wait_until(lambda: same_tip(d, a), SYNC_TIMEOUT, "peerd to reach a's tip")
    d.rpc("addnode", "127.0.0.1:%d" % b.port, "onetry")
    wait_until(lambda: same_tip(d, b), SYNC_TIMEOUT, "peerd to reorg to b's longer fork")
    assert d.rpc("getblockcount") == 116
    assert utxo_hash(d.rpc) == utxo_hash(b.rpc)


def test_initial_block_download_as_core(make_peerd, bitcoind_node):
    core = bitcoind_node
    core.mine_op_true(20)
    d = make_peerd("-peertimeout=20")
    # The tip (regtest genesis, 2011) is old: initial block download.
    assert d.rpc("getblockchaininfo")["initialblockdownload"] is True
    assert d.rpc("getstats")["sync"]["initialblockdownload"] is True
    d.rpc("addnode", "127.0.0.1:%d" % core.port, "onetry")
    wait_until(lambda: same_tip(d, core), SYNC_TIMEOUT, "peerd to sync 20 blocks")
    assert d.rpc("getblockchaininfo")["initialblockdownload"] is False
    # During IBD peerd told Core MAX_MONEY (rounded as Core: 9,170,997
    # sat/kvB = 0.09170997 BTC/kvB); after it, Core's default 1,000.
    info = wait_until(lambda: core.wait_for_peer(
        lambda p: p["subver"].startswith("/peerd:") and p["minfeefilter"] == Decimal("0.00001"), 5,
        "peerd's feefilter after IBD"), 5, "feefilter")
    # Two of them, over v2: 3 length bytes, header, short id, 8 bytes, tag (v1: 2 x 32).
    assert info["transport_protocol_type"] == "v2"
    assert info["bytesrecv_per_msg"]["feefilter"] == 2 * 29, info["bytesrecv_per_msg"]


def test_peerd_syncs_2100_blocks_from_two_cores_at_once(make_peerd, make_bitcoind):
    a, b = make_bitcoind(2)
    make_wallet_chain(a, blocks=150)
    a.mine_op_true(1950)  # past 2,000: headers come in more than one message
    b.connect_nodes(a)
    wait_until(lambda: b.getbestblockhash() == a.getbestblockhash(), SYNC_TIMEOUT, "b to sync from a")
    d = make_peerd("-connect=127.0.0.1:%d" % a.port, "-connect=127.0.0.1:%d" % b.port,
                   "-peertimeout=20", listen=False)
    wait_until(lambda: same_tip(d, a), SYNC_TIMEOUT, "peerd to sync 2,100 blocks")
    assert utxo_hash(d.rpc) == utxo_hash(a.rpc)
    ours, core = d.rpc("getblockchaininfo"), a.getblockchaininfo()
    for k in ("chain", "blocks", "headers", "bestblockhash", "bits", "difficulty", "time",
              "mediantime", "chainwork", "initialblockdownload"):
        assert ours[k] == (float(core[k]) if k == "difficulty" else core[k]), (k, ours[k], core[k])
    # Blocks came from both.
    got = [p["bytesrecv_per_msg"].get("block", 0) for p in d.rpc("getpeerinfo")]
    assert len(got) == 2 and all(g > 0 for g in got), got
    s = d.rpc("getstats")
    assert s["headers"]["headers_received"] >= 2100, s["headers"]  # a full 2,000, then more
    assert s["sync"]["stalling_disconnects"] == 0 and s["sync"]["queue_bytes"] == 0, s["sync"]


def test_restart_mid_sync_sigterm_and_kill9(make_peerd, bitcoind_node):
    core = bitcoind_node
    make_wallet_chain(core, blocks=150)
    core.mine_op_true(2850)
    tip = core.getblockcount()
    args = ("-connect=127.0.0.1:%d" % core.port, "-peertimeout=20")
    heights = []
    for how in ("sigterm", "kill9"):
        d = make_peerd(*args, listen=False, name="peerd-restart")
        start = d.rpc("getblockcount")
        wait_until(lambda: d.rpc("getblockcount") >= start + 300, SYNC_TIMEOUT, "some progress")
        if how == "sigterm":
            rc, took = d.stop(timeout=20)
            assert rc == 0, d.log()
        else:
            d.kill()
            # The killed process left its socket file; the fixture's
            # readiness check looks for it, so it goes.
            os.remove(d.sock_path)
        heights.append(start)
    d = make_peerd(*args, listen=False, name="peerd-restart")
    # What the kill left past the last flush is connected after the start
    # (node/reindex.c): the height it resumes from is where that ends.
    wait_until(lambda: "Replaying" not in d.log() or "Replay done in" in d.log(), 60,
               "the replay of the blocks the kill left")
    heights.append(d.rpc("getblockcount"))
    wait_until(lambda: same_tip(d, core), SYNC_TIMEOUT, "peerd to finish after restarts")
    assert utxo_hash(d.rpc) == utxo_hash(core.rpc)
    # Each start resumed where the last one left off (never from genesis),
    # and both stops came mid-sync.
    assert heights[1] >= heights[0] + 300 and heights[2] >= heights[1] + 300, (heights, tip)
    assert heights[2] < tip, (heights, tip)
    print("heights at each start", heights, "of", tip)

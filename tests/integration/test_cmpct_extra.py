"""The ring of extra transactions for compact blocks (issue 22; Core's
vExtraTxnForCompact and -blockreconstructionextratxn, daemon/node/extratxn.c).

A block may hold transactions peerd turned away: one it rejected (here
for paying no fee), one it holds only as an orphan (its parent unknown),
one it saw replaced. With the ring (Core's default of 100) peerd finds
them when it rebuilds the block and asks no getblocktxn for them; with
-blockreconstructionextratxn=0 the same blocks need a getblocktxn for
exactly those transactions, which is what shows the ring at work.

The blocks are made by the real bitcoind (`generateblock ... submit=false`,
which takes raw transactions A's mempool never saw) and sent to peerd as
cmpctblocks by the test (test_cmpct_core's own BIP152 encoder)."""
import io
from decimal import Decimal

import pytest

from bitcoind import wait_until
from conftest import frame, read_compact, ser_compact
from test_cmpct_core import cmpct_stats, cmpctblock, peer, send_txs, sha256d, start_core_and_peerd

pytestmark = pytest.mark.interop


def signed(a, inputs, dest_amount, prevtxs=None):
    """A transaction of A's wallet spending inputs [(txid, vout)] to one new
    address for dest_amount: (hex, txid). Not broadcast."""
    dest = a.new_address("bech32")
    raw = a.rpc("createrawtransaction", [{"txid": t, "vout": v} for t, v in inputs],
                [{dest: str(dest_amount)}])
    args = [raw] + ([prevtxs] if prevtxs else [])
    res = a.rpc("signrawtransactionwithwallet", *args, wallet=a.wallet)
    assert res["complete"], res
    return res["hex"], a.rpc("decoderawtransaction", res["hex"])["txid"]


def inv_stats(d):
    return d.rpc("getstats")["inventory"]


def missing_asked(p, header, timeout):
    """The indexes of peerd's getblocktxn for this block, or None if none comes."""
    want = sha256d(header)
    try:
        while True:
            m = p.recv_until("getblocktxn", timeout=timeout)
            f = io.BytesIO(m.payload)
            if f.read(32) != want:
                continue
            out, last = [], -1
            for _ in range(read_compact(f)):
                last += read_compact(f) + 1
                out.append(last)
            return out
    except TimeoutError:
        return None


@pytest.mark.parametrize("ring", [100, 0])
def test_block_rebuilt_from_the_ring(make_peerd, make_bitcoind, ring):
    a, d = start_core_and_peerd(make_peerd, make_bitcoind,
                                "-blockreconstructionextratxn=%d" % ring)
    utxos = a.rpc("listunspent", 1, 9999999, wallet=a.wallet)
    utxos = [u for u in utxos if u["amount"] >= 1][:3]
    assert len(utxos) == 3, utxos
    # Kept from the wallet's own sends (send_txs) for the hand-made spends.
    a.rpc("lockunspent", False, [{"txid": u["txid"], "vout": u["vout"]} for u in utxos],
          wallet=a.wallet)
    p = peer(d)

    def block_of(hexes):
        """A's block of its mempool's (known to peerd) plus these, as a cmpctblock."""
        txids = send_txs(a, d, 2)
        blk = a.rpc("generateblock", a.new_address("bech32"), txids + hexes, False)
        msg, header, txs = cmpctblock(bytes.fromhex(blk["hex"]))
        return blk, msg, header, txs

    def taken(blk):
        wait_until(lambda: d.rpc("getbestblockhash") == blk["hash"], 20, "peerd to take the block")
        a.rpc("submitblock", blk["hex"])
        assert a.getbestblockhash() == blk["hash"]

    # 1. Rejected: no fee at all ("min relay fee not met").
    u = utxos[0]
    free_hex, free_txid = signed(a, [(u["txid"], u["vout"])], u["amount"])
    before = inv_stats(d)["tx_rejected"]
    p.send_raw(frame("tx", bytes.fromhex(free_hex)))
    wait_until(lambda: inv_stats(d)["tx_rejected"] == before + 1, 20, "peerd to reject it")
    assert free_txid not in d.rpc("getrawmempool")
    s0 = cmpct_stats(d)
    blk, msg, header, txs = block_of([free_hex])
    p.send_raw(frame("cmpctblock", msg))
    if ring:
        taken(blk)
        s = cmpct_stats(d)
        assert s["rebuilt_from_mempool"] == s0["rebuilt_from_mempool"] + 1, s
        assert s["getblocktxn_sent"] == s0["getblocktxn_sent"], s
        assert s["extra_txs_used"] == s0["extra_txs_used"] + 1, s
    else:
        assert missing_asked(p, header, 10) == [3]  # coinbase, two of the mempool's, then it
        p.send_raw(frame("blocktxn", sha256d(header) + ser_compact(1) + txs[3]))
        taken(blk)

    # 2. An orphan: the child came, its parent never did.
    u = utxos[1]
    parent_hex, parent_txid = signed(a, [(u["txid"], u["vout"])], u["amount"] - Decimal("0.0002"))
    spk = a.rpc("decoderawtransaction", parent_hex)["vout"][0]["scriptPubKey"]["hex"]
    prev = [{"txid": parent_txid, "vout": 0, "scriptPubKey": spk,
             "amount": str(u["amount"] - Decimal("0.0002"))}]
    child_hex, _ = signed(a, [(parent_txid, 0)], u["amount"] - Decimal("0.0004"), prev)
    before = inv_stats(d)["tx_orphaned"]
    p.send_raw(frame("tx", bytes.fromhex(child_hex)))
    wait_until(lambda: inv_stats(d)["tx_orphaned"] == before + 1, 20, "peerd to keep the orphan")
    blk, msg, header, txs = block_of([parent_hex, child_hex])
    p.send_raw(frame("cmpctblock", msg))
    # The parent is asked either way; the child only without the ring.
    assert missing_asked(p, header, 10) == ([3] if ring else [3, 4])
    body = txs[3] if ring else txs[3] + txs[4]
    p.send_raw(frame("blocktxn", sha256d(header) + ser_compact(1 if ring else 2) + body))
    taken(blk)

    # 3. Replaced: the block holds the first version, peerd's mempool the second.
    u = utxos[2]
    first_hex, first_txid = signed(a, [(u["txid"], u["vout"])], u["amount"] - Decimal("0.0002"))
    second_hex, second_txid = signed(a, [(u["txid"], u["vout"])], u["amount"] - Decimal("0.001"))
    p.send_raw(frame("tx", bytes.fromhex(first_hex)))
    wait_until(lambda: first_txid in d.rpc("getrawmempool"), 20, "peerd to take the first")
    p.send_raw(frame("tx", bytes.fromhex(second_hex)))
    wait_until(lambda: second_txid in d.rpc("getrawmempool"), 20, "peerd to take the replacement")
    assert first_txid not in d.rpc("getrawmempool")
    s0 = cmpct_stats(d)
    blk, msg, header, txs = block_of([first_hex])
    p.send_raw(frame("cmpctblock", msg))
    if ring:
        taken(blk)
        s = cmpct_stats(d)
        assert s["getblocktxn_sent"] == s0["getblocktxn_sent"], s
        assert s["extra_txs_used"] == s0["extra_txs_used"] + 1, s
    else:
        assert missing_asked(p, header, 10) == [3]
        p.send_raw(frame("blocktxn", sha256d(header) + ser_compact(1) + txs[3]))
        taken(blk)
    p.close()

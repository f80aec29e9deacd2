"""Transaction relay through peerd with real Bitcoin Core nodes (issue 11):
Core A -> peerd -> Core B (A and B know only peerd), sendrawtransaction on
peerd, a block clearing both mempools, orphans held until the parent
arrives, and the privacy rules (never back to the sender; one Poisson timer
shared by inbound peers, one per outbound peer)."""
import socket
import struct
import threading
import time
from decimal import Decimal

import pytest

from bitcoind import ADDRESS_TYPES, wait_until
from conftest import P2P, PeerClosed, RpcError, frame, read_compact, sha256d

pytestmark = pytest.mark.interop

MSG_TX, MSG_WTX = 1, 5


def parse_inv(payload):
    """[(type, hash as RPC hex)] of an inv/getdata/notfound payload."""
    import io

    f = io.BytesIO(payload)
    n = read_compact(f)
    out = []
    for _ in range(n):
        t, h = struct.unpack("<I32s", f.read(36))
        out.append((t, h[::-1].hex()))
    return out


def relay_stats(d):
    return d.rpc("getstats")["relay"]


def line(make_peerd, make_bitcoind, per_type=2, core_args=()):
    """Core A with a funded wallet connected out to peerd, peerd connected out
    to Core B; A and B each know only peerd. Outbound both ways, so each hop
    trickles on a 2 s timer (Core's rate: 35 announcements per trickle, 200
    transactions take ~12 s a hop; through inbound links, 5 s timers, they
    would need ~30 s each). peerd syncs from A first and connects to B once
    out of initial block download (as Core, peerd ignores getheaders during
    IBD, and B would not ask again for 2 minutes). core_args go to both Cores."""
    a, b = make_bitcoind(2, args=core_args)
    # BIP324 v2 both ways unless the Cores are told otherwise.
    transport = "v1" if "-v2transport=0" in core_args else "v2"
    a.create_wallet()
    a.fund_wallet(per_type=per_type)
    d = make_peerd("-peertimeout=20")
    a.connect_to("127.0.0.1:%d" % d.port)
    wait_until(lambda: len(d.rpc("getpeerinfo")) == 1
               and any(p["version"] and p["transport_protocol_type"] == transport
                       for p in a.getpeerinfo()), 15, "A connected to peerd")
    # A new block announced by A makes peerd ask A for headers. (One
    # announced in the very moment the connection completes can go
    # unheard: another one is mined until peerd starts.)
    for _ in range(6):
        a.mine(1)
        try:
            wait_until(lambda: d.rpc("getblockchaininfo")["headers"] > 0, 5, "peerd to hear of A")
            break
        except AssertionError:
            continue
    wait_until(lambda: d.rpc("getblockchaininfo")["blocks"] == a.getblockcount(), 60,
               "peerd to sync from A")
    wait_until(lambda: not d.rpc("getblockchaininfo")["initialblockdownload"], 10, "peerd out of IBD")
    d.rpc("addnode", "127.0.0.1:%d" % b.port, "add")
    wait_until(lambda: b.getbestblockhash() == a.getbestblockhash(), 60, "B to sync through peerd")
    return a, b, d


def signed_spend(a, utxo, fee=Decimal("0.0002"), dest_type="bech32"):
    """A signed transaction of A's wallet spending `utxo` (not broadcast): hex, txid, wtxid."""
    dest = a.new_address(dest_type)
    raw = a.rpc("createrawtransaction", [{"txid": utxo["txid"], "vout": utxo["vout"]}],
                [{dest: utxo["amount"] - fee}])
    hx = a.rpc("signrawtransactionwithwallet", raw, wallet=a.wallet)["hex"]
    dec = a.rpc("decoderawtransaction", hx)
    return hx, dec["txid"], dec["hash"]


def confirmed_utxos(a, n):
    us = [u for u in a.rpc("listunspent", 1, 9999999, wallet=a.wallet) if u["spendable"]
          and u["amount"] > Decimal("1")]
    assert len(us) >= n, len(us)
    return us[:n]


# Core's own delays taken out of the 30 s the issue gives the relay through
# peerd: noban makes A announce to peerd at once (Core skips the trickle timer
# for noban peers) and B request from peerd at once (no 2 s wait for an
# inbound announcer). With them, two Poisson hops of 35 per 2 s plus 2 s
# overran 30 s in ~1.6 % of runs (simulated; the median of 10 runs, 16 s,
# matched the model); peerd's own hop alone, ~0.1 %. peerd's trickle to B
# is untouched: it has no whitelist, and the privacy test checks its timers.
CORE_NOBAN = ("-whitelist=in,out,noban@127.0.0.1",)


def test_relay_core_to_core_through_peerd(make_peerd, make_bitcoind):
    a, b, d = line(make_peerd, make_bitcoind, per_type=12, core_args=CORE_NOBAN)
    assert len(a.getpeerinfo()) == 1 and len(b.getpeerinfo()) == 1
    # A confirmed coin kept aside for the sendrawtransaction below.
    reserve = confirmed_utxos(a, 1)[0]
    a.rpc("lockunspent", False, [{"txid": reserve["txid"], "vout": reserve["vout"]}],
          wallet=a.wallet)
    # 200 wallet transactions of every output type; the wallet spends its
    # own unconfirmed change, so chains of unconfirmed parents form; every
    # tenth, an earlier one is replaced by bumpfee (RBF).
    sent, bumped = [], 0
    for i in range(200):
        addr = a.new_address(ADDRESS_TYPES[i % 4])
        amount = Decimal("0.1") + Decimal(i % 7) / 10
        sent.append(a.rpc("sendtoaddress", addr, amount, "", "", False, True, wallet=a.wallet))
        if i % 10 == 9:
            for txid in reversed(sent[:-1]):
                try:
                    res = a.rpc("bumpfee", txid, wallet=a.wallet)
                except Exception:
                    continue  # it has descendants, or was bumped already
                sent.append(res["txid"])
                bumped += 1
                break
    assert bumped >= 10, bumped
    mempool_a = set(a.getrawmempool())
    assert len(mempool_a) >= 200
    chained = [e for e in a.getrawmempool(True).values() if e["ancestorcount"] > 1]
    assert chained, "no chains of unconfirmed parents"
    wait_until(lambda: set(b.getrawmempool()) == set(a.getrawmempool()), 30,
               "every transaction in B's mempool")
    s = relay_stats(d)
    assert s["mempool_mirror"] == len(mempool_a), s
    assert s["announced"] >= len(mempool_a) and s["served"] >= len(mempool_a), s
    inv = d.rpc("getstats")["inventory"]
    assert inv["tx_punished"] == 0, inv

    # sendrawtransaction on peerd (when the method is there), else on A.
    hx, txid, wtxid = signed_spend(a, reserve)
    try:
        assert d.rpc("sendrawtransaction", hx) == txid
    except RpcError as e:
        if e.code != -32601:
            raise
        a.rpc("sendrawtransaction", hx)
    # peerd announces it to A on the timer its inbound peers share (mean 5 s)
    # and to B on B's own (2 s); 15 s was a 1-in-20 tail under ASan and load.
    wait_until(lambda: txid in a.getrawmempool() and txid in b.getrawmempool(), 60,
               "the sendrawtransaction tx in both mempools")

    # A block mined by A clears both mempools and peerd's mirror of its own.
    a.mine(1)
    wait_until(lambda: b.getrawmempool() == [] and relay_stats(d)["mempool_mirror"] == 0, 15,
               "the block to clear B's and peerd's mempools")
    assert a.getrawmempool() == []
    # The block's transactions are still served (Core's most recent block),
    # in the form asked: with witness for MSG_WTX, without for MSG_TX; an
    # unknown one gets notfound.
    p = P2P(d.port)
    p.handshake()
    unknown = "11" * 32
    entries = [(MSG_WTX, wtxid), (MSG_TX, txid), (MSG_TX, unknown)]
    p.send_raw(frame("getdata", bytes([3]) + b"".join(
        struct.pack("<I", t) + bytes.fromhex(h)[::-1] for t, h in entries)))
    got = [m for m in (p.recv_until("tx"), p.recv_until("tx"), p.recv_until("notfound"))]
    assert got[0].payload == bytes.fromhex(hx)
    # Without witness: exactly the bytes the txid hashes.
    assert sha256d(got[1].payload)[::-1].hex() == txid
    if txid != wtxid:
        assert got[1].payload != bytes.fromhex(hx)
    assert parse_inv(got[2].payload) == [(MSG_TX, unknown)]
    assert relay_stats(d)["served_from_block"] == 2
    p.close()


def test_orphan_held_until_parent_arrives(make_peerd, make_bitcoind):
    a, b, d = line(make_peerd, make_bitcoind)
    p = P2P(d.port)
    p.handshake()
    u = confirmed_utxos(a, 1)[0]
    parent_hex, parent_txid, _ = signed_spend(a, u)
    pdec = a.rpc("decoderawtransaction", parent_hex)
    out0 = pdec["vout"][0]
    dest = a.new_address("bech32")
    raw = a.rpc("createrawtransaction", [{"txid": parent_txid, "vout": 0}],
                [{dest: out0["value"] - Decimal("0.0002")}])
    child_hex = a.rpc("signrawtransactionwithwallet", raw,
                      [{"txid": parent_txid, "vout": 0, "scriptPubKey": out0["scriptPubKey"]["hex"],
                        "amount": out0["value"]}], wallet=a.wallet)["hex"]
    child_txid = a.rpc("decoderawtransaction", child_hex)["txid"]
    # The child first: held as an orphan, and its parent asked of the sender.
    p.send_raw(frame("tx", bytes.fromhex(child_hex)))
    deadline = time.monotonic() + 10
    asked = False
    while not asked and time.monotonic() < deadline:
        m = p.recv(max(0.01, deadline - time.monotonic()))
        if m.command == "getdata":
            asked = any(h == parent_txid for _, h in parse_inv(m.payload))
    assert asked, "the parent was not asked for"
    s = relay_stats(d)
    assert s["orphans"]["count"] == 1 and s["orphans"]["added"] == 1, s
    assert child_txid not in b.getrawmempool()
    # The parent: both accepted, both relayed on to A and B. A is an inbound
    # peer of peerd: the shared inbound timer (mean 5 s) overran 15 s in 1 run
    # of 20 (e^-3); 60 s leaves e^-12.
    p.send_raw(frame("tx", bytes.fromhex(parent_hex)))
    wait_until(lambda: {parent_txid, child_txid} <= set(b.getrawmempool())
               and {parent_txid, child_txid} <= set(a.getrawmempool()), 60,
               "parent and child in both Cores' mempools")
    s = relay_stats(d)
    assert s["orphans"]["count"] == 0 and s["orphans"]["accepted"] == 1, s
    p.close()


class Recorder:
    """Reads a P2P connection on a thread: when each tx inv entry arrived."""

    def __init__(self, p):
        self.p = p
        self.seen = {}  # hash -> monotonic time of the first inv naming it
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            try:
                m = self.p.recv(0.2)
            except TimeoutError:
                continue
            except (PeerClosed, OSError):
                return
            now = time.monotonic()
            if m.command == "inv":
                for t, h in parse_inv(m.payload):
                    if t in (MSG_TX, MSG_WTX):
                        self.seen.setdefault(h, now)
            elif m.command == "ping":
                self.p.send_raw(frame("pong", m.payload))

    def close(self):
        self.stop = True
        self.t.join(timeout=5)
        self.p.close()


def outbound_peer(d):
    """A scripted peer peerd connects out to (addnode onetry)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(10)
    d.rpc("addnode", "127.0.0.1:%d" % srv.getsockname()[1], "onetry", False)  # it speaks v1
    conn, _ = srv.accept()
    srv.close()
    p = P2P(0, sock=conn)
    p.handshake()
    return p


def test_privacy_timers_and_never_back(make_peerd, make_bitcoind):
    a, b, d = line(make_peerd, make_bitcoind, per_type=6)
    sender = P2P(d.port)
    sender.handshake()
    in1, in2 = P2P(d.port), P2P(d.port)
    in1.handshake()
    in2.handshake()
    out1, out2 = outbound_peer(d), outbound_peer(d)
    recs = {n: Recorder(p) for n, p in
            (("sender", sender), ("in1", in1), ("in2", in2), ("out1", out1), ("out2", out2))}
    coins = confirmed_utxos(a, 7 + 2 * PRIVACY_ROUND)
    sent = send_round(a, sender, coins[:PRIVACY_ROUND])
    wtxids = [w for _, w in sent]
    # One from Core A: the sender hears of that one.
    other_hex, other_txid, other_wtxid = signed_spend(a, coins[PRIVACY_ROUND])
    a.rpc("sendrawtransaction", other_hex)
    listeners = ("in1", "in2", "out1", "out2")
    try:
        wait_until(lambda: all(w in recs[n].seen for n in listeners for w in wtxids + [other_wtxid]),
                   40, "every announcement to the four listeners")
    except AssertionError:
        missing = {n: [w for w in wtxids + [other_wtxid] if w not in recs[n].seen] for n in listeners}
        raise AssertionError("missing announcements %r; relay %r; inventory %r; peers %r" % (
            missing, relay_stats(d), d.rpc("getstats")["inventory"],
            [(p["id"], p.get("inbound"), p.get("relaytxes"), p.get("handshake_complete"))
             for p in d.rpc("getpeerinfo")]))
    wait_until(lambda: other_wtxid in recs["sender"].seen, 20, "the sender to hear of A's tx")
    # Never back to where it came from.
    time.sleep(1)
    for txid, w in sent:
        assert w not in recs["sender"].seen and txid not in recs["sender"].seen
    # Inbound peers share one timer: each transaction reaches both at once.
    gaps_in = sorted(abs(recs["in1"].seen[w] - recs["in2"].seen[w]) for w in wtxids)
    # (the same loop tick; the margin is for this process's threads on a busy machine).
    # With a timer each (average 5 s) most pairs would lie seconds apart; one late
    # pair is this test's reader threads starved on a loaded machine (CI saw one
    # pair 6.8 s apart, the other five 0.2 ms), so all but the worst must agree.
    assert gaps_in[-2] < 0.25, gaps_in
    # Each outbound peer has its own timer (average 2 s): their announcement
    # times differ. Six transactions a second apart now and then land in the
    # same gaps of both timers (when both wait two seconds or more, several
    # transactions share one inv on each side), so a round without a gap
    # over 0.5 s is inconclusive (about 1 in 200 for independent timers, and
    # every time for a shared one): another round of six is sent, at most
    # three in all.
    rounds = [outbound_gaps(recs, wtxids)]
    for k in (1, 2):
        if max(rounds[-1]) > 0.5:
            break
        more = [w for _, w in send_round(a, sender,
                                          coins[7 + (k - 1) * PRIVACY_ROUND: 7 + k * PRIVACY_ROUND])]
        wait_until(lambda: all(w in recs[n].seen for n in ("out1", "out2") for w in more), 40,
                   "round %d's announcements to the outbound listeners" % (k + 1))
        rounds.append(outbound_gaps(recs, more))
    for r in recs.values():
        r.close()
    assert max(rounds[-1]) > 0.5, rounds
    s = relay_stats(d)
    assert s["trickles"] > 0 and s["skipped_known"] >= 0, s


# Transactions per round of the privacy test, one a second from the sender.
PRIVACY_ROUND = 6


def send_round(a, sender, coins):
    """The sender sends one signed spend of each coin, a second apart: [(txid, wtxid)]."""
    txs = [signed_spend(a, u) for u in coins]
    for hx, _, _ in txs:
        sender.send_raw(frame("tx", bytes.fromhex(hx)))
        time.sleep(1.0)
    return [(txid, w) for _, txid, w in txs]


def outbound_gaps(recs, wtxids):
    return [abs(recs["out1"].seen[w] - recs["out2"].seen[w]) for w in wtxids]


def test_bad_transactions_as_core(make_peerd, make_bitcoind):
    """Core 29 punishes only a consensus failure (here a bad signature:
    mandatory-script-verify-flag-failed); a policy failure leaves the peer
    alone, and a rejected transaction is not asked for again."""
    a, b, d = line(make_peerd, make_bitcoind)
    good, bad = P2P(d.port), P2P(d.port)
    good.handshake()
    bad.handshake()
    coins = confirmed_utxos(a, 8)
    segwit = [u for u in coins if u["desc"].startswith("wpkh(")]
    coins = [coins[0] if coins[0] is not segwit[0] else coins[1], segwit[0]]
    # Non-standard: version 4 ("version", TX_NOT_STANDARD).
    dest = a.new_address("bech32")
    raw = a.rpc("createrawtransaction", [{"txid": coins[0]["txid"], "vout": coins[0]["vout"]}],
                [{dest: coins[0]["amount"] - Decimal("0.0002")}])
    raw = "04000000" + raw[8:]
    v4 = a.rpc("signrawtransactionwithwallet", raw, wallet=a.wallet)["hex"]
    v4_wtxid = a.rpc("decoderawtransaction", v4)["hash"]
    assert a.rpc("testmempoolaccept", [v4])[0]["reject-reason"] == "version"
    good.send_raw(frame("tx", bytes.fromhex(v4)))
    wait_until(lambda: d.rpc("getstats")["inventory"]["tx_rejected"] == 1, 10, "the rejection")
    assert not good.is_closed(0.5)
    # Announced again by someone else: already rejected, not asked for.
    good.send_raw(frame("inv", b"\x01" + struct.pack("<I", MSG_WTX) + bytes.fromhex(v4_wtxid)[::-1]))
    assert "getdata" not in good.commands_for(0.5)
    # A signature that does not verify: consensus-invalid, the sender goes.
    hx, _, _ = signed_spend(a, coins[1])
    sig = a.rpc("decoderawtransaction", hx)["vin"][0]["txinwitness"][0]
    flipped = sig[:20] + ("0" if sig[20] != "0" else "1") + sig[21:]
    forged = hx.replace(sig, flipped)
    reason = a.rpc("testmempoolaccept", [forged])[0]["reject-reason"]
    assert reason.startswith("mandatory-script-verify-flag-failed"), reason
    bad.send_raw(frame("tx", bytes.fromhex(forged)))
    assert bad.is_closed(5)
    inv = d.rpc("getstats")["inventory"]
    assert inv["tx_punished"] == 1, inv
    # A loopback peer is only disconnected, never discouraged (net/ban.c); the
    # other one stays.
    assert not good.is_closed(0.3)
    good.close()

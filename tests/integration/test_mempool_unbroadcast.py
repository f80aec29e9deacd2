"""The unbroadcast set (issue 11): a transaction sendrawtransaction put in the
mempool stays "unbroadcast" until a peer fetches it with getdata, as in Core
29. peerd and a Core with no peers answer alike; a scripted peer's getdata
empties the set on both; the set survives a restart through mempool.dat
(Core's file loads into peerd and peerd's into Core); a mined transaction
leaves it."""
import os
import shutil
import struct
import time

import pytest

import bitcoind
from bitcoind import wait_until
from conftest import P2P, Peerd, frame, ser_compact, stop_core_and_peerd
from mempool_parity_env import COIN, SPK, spend, start_env

pytestmark = pytest.mark.interop

MSG_TX = 1


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """A Core with a funded wallet and a listening peerd on its tip, neither with peers."""
    e = start_env(tmp_path_factory, "unbcast", core_args=(), listen=True)
    try:
        e.mine(101)
        e.pools["wsh_true"] = e.fund([(COIN // 5, SPK["wsh_true"])] * 20, ["wsh_true"] * 20)
        yield e
    finally:
        stop_core_and_peerd(e.core, e.peerd)  # e.peerd: restarted by the tests


def state(node, txid):
    """(unbroadcastcount, the entry's unbroadcast flag)."""
    return (node.rpc("getmempoolinfo")["unbroadcastcount"],
            node.rpc("getmempoolentry", txid)["unbroadcast"])


def fetch(port, txid):
    """A scripted peer connects, lets the node's first trickle pass, asks for txid by
    getdata (MSG_TX) and returns the tx message's payload."""
    p = P2P(port)
    try:
        p.handshake()
        time.sleep(1.0)
        p.send_raw(frame("getdata", ser_compact(1) + struct.pack("<I", MSG_TX)
                         + bytes.fromhex(txid)[::-1]))
        return p.recv_until("tx", timeout=10).payload
    finally:
        p.close()


def test_unbroadcast_until_a_peer_fetches(env):
    """sendrawtransaction with no peers: unbroadcastcount 1, the entry unbroadcast, on
    both; sending it again changes nothing; a peer's getdata takes it out of the set."""
    t = spend([env.take("wsh_true")])
    for node in (env.core, env.peerd):
        assert node.rpc("getpeerinfo") == []
        assert node.rpc("sendrawtransaction", t.hex()) == t.txid
        assert state(node, t.txid) == (1, True), node
        node.rpc("sendrawtransaction", t.hex())  # already there: still one
        assert state(node, t.txid) == (1, True), node
    for node in (env.core, env.peerd):
        assert fetch(node.port, t.txid) == t.ser(witness=False)  # MSG_TX: no witness
        wait_until(lambda: state(node, t.txid) == (0, False), 10, "the set emptied by getdata")
    env.mine(1)  # clears both mempools


def test_unbroadcast_survives_restart_and_leaves_when_mined(env):
    d = env.peerd
    t = spend([env.take("wsh_true")])
    assert d.rpc("sendrawtransaction", t.hex()) == t.txid
    rc, _ = d.stop(timeout=15)
    assert rc == 0, d.log()
    d = env.peerd = Peerd(env.tmp, name="peerd")
    assert d.rpc("getmempoolinfo")["loaded"] is True
    assert state(d, t.txid) == (1, True)
    assert "1 waiting for initial broadcast" in d.log()
    # Mined: out of the pool, out of the set.
    env.core.rpc("sendrawtransaction", t.hex())
    env.mine(1)
    assert d.rpc("getrawmempool") == []
    assert d.rpc("getmempoolinfo")["unbroadcastcount"] == 0


def core_restart(env, dat=None):
    """Stop env's Core, optionally put `dat` as its mempool.dat, start it, wait for the load."""
    env.core.stop()
    path = os.path.join(env.core.datadir, "regtest", "mempool.dat")
    if dat is not None:
        shutil.copy(dat, path)
    wallet = env.core.wallet
    env.core = bitcoind.Bitcoind(env.binary, env.tmp / "core", name="core0")
    env.core.wait_ready()
    env.core.wallet = wallet
    if wallet not in env.core.rpc("listwallets"):
        env.core.rpc("loadwallet", wallet)
    wait_until(lambda: env.core.rpc("getmempoolinfo")["loaded"], 30, "Core to load mempool.dat")
    return path


def test_mempool_dat_both_ways(env):
    """Core's mempool.dat with an unbroadcast txid loads into peerd with the txid
    still unbroadcast; peerd's file loads into Core the same way."""
    t1 = spend([env.take("wsh_true")])
    assert env.core.rpc("sendrawtransaction", t1.hex()) == t1.txid
    core_dat = core_restart(env)  # Core saves its mempool.dat at shutdown
    assert state(env.core, t1.txid) == (1, True)
    rc, _ = env.peerd.stop(timeout=15)
    assert rc == 0
    shutil.copy(core_dat, os.path.join(env.peerd.netdir, "mempool.dat"))
    env.peerd = Peerd(env.tmp, name="peerd")
    assert state(env.peerd, t1.txid) == (1, True)

    # peerd's file, with a second transaction Core never saw, into Core.
    t2 = spend([env.take("wsh_true")])
    assert env.peerd.rpc("sendrawtransaction", t2.hex()) == t2.txid
    assert env.peerd.rpc("getmempoolinfo")["unbroadcastcount"] == 2
    rc, _ = env.peerd.stop(timeout=15)
    assert rc == 0
    core_restart(env, os.path.join(env.peerd.netdir, "mempool.dat"))
    assert sorted(env.core.rpc("getrawmempool")) == sorted([t1.txid, t2.txid])
    assert env.core.rpc("getmempoolinfo")["unbroadcastcount"] == 2
    assert state(env.core, t2.txid) == (2, True)
    env.peerd = Peerd(env.tmp, name="peerd")
    assert env.peerd.rpc("getmempoolinfo")["unbroadcastcount"] == 2
    env.mine(1)
    assert env.peerd.rpc("getmempoolinfo")["unbroadcastcount"] == 0
    assert env.core.rpc("getmempoolinfo")["unbroadcastcount"] == 0

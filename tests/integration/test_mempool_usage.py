"""getmempoolinfo's usage as Core counts it (DynamicMemoryUsage: each
transaction's vectors, scripts and witness items under glibc's malloc
rounding, the entry and its index nodes, the outpoint map, the links
between parents and children, the randomized transaction vector at its
capacity): a Core and a peerd fed the same transactions must report the
same number, to the byte, after every change: a send of each kind of
transaction, children, a replacement, a block that mines part of the pool
(the vector shrinking), and an empty pool again.
"""
import pytest

from conftest import stop_core_and_peerd
from mempool_craft import TRUE, OP_DROP, op_return, p2pkh, p2wpkh, p2wsh, script
from mempool_parity_env import COIN, KEY, SPK, norm, spend, start_env

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    e = start_env(tmp_path_factory, "mpusage")
    try:
        e.mine(101)
        e.pools["wsh_true"] = e.fund([(COIN // 5, SPK["wsh_true"])] * 40, ["wsh_true"] * 40)
        for kind in ("pkh", "wpkh", "sh_wpkh", "sh_true"):
            e.pools[kind] = e.fund([(COIN // 10, SPK[kind])] * 4, [kind] * 4)
        yield e
    finally:
        stop_core_and_peerd(e.core, e.peerd)


def usages(env):
    a = env.core.rpc("getmempoolinfo")
    b = norm(env.peerd.rpc("getmempoolinfo"))
    assert b["size"] == a["size"], (a, b)
    return a["usage"], b["usage"]


def send_both(env, t):
    assert env.core.rpc("sendrawtransaction", t.hex()) == t.txid
    assert env.peerd.rpc("sendrawtransaction", t.hex()) == t.txid


def test_usage_equal_to_cores(env):
    core_u, peerd_u = usages(env)
    assert core_u == peerd_u, "empty pool: Core %d, peerd %d" % (core_u, peerd_u)
    trail = []

    def check(what):
        cu, pu = usages(env)
        trail.append((what, cu, pu))
        assert cu == pu, "after %s: Core %d, peerd %d\n%s" % (what, cu, pu, trail)

    sent = []
    # One of each input kind: scriptSigs inline (< 29 bytes) and on the heap,
    # witness stacks of one and two items.
    for kind in ("wsh_true", "pkh", "wpkh", "sh_wpkh", "sh_true"):
        t = spend([env.take(kind)], fee=3000)
        send_both(env, t)
        sent.append(t)
        check("a %s spend" % kind)
    # Outputs: many, scripts short and long, an OP_RETURN on each side of 28 bytes.
    for outs in ([p2pkh(KEY.pub)] * 7, [p2wpkh(KEY.pub), op_return(26)],
                 [p2wpkh(KEY.pub), op_return(27)], [p2wsh(TRUE)] * 3 + [op_return(80)]):
        c = env.take("wsh_true")
        n = len([s for s in outs if s[0] != 0x6a])
        t = spend([c], [(0 if s[0] == 0x6a else (c.value - 5000) // n, s) for s in outs])
        send_both(env, t)
        sent.append(t)
        check("%d outputs" % len(outs))
    # Several inputs, one with a big witness item (a 200-byte push dropped).
    big = script(b"\x07" * 200, OP_DROP, 0x51)
    c = env.take("wsh_true")
    fund = spend([c], [(c.value - 4000, p2wsh(big))])
    send_both(env, fund)
    check("a P2WSH(big) output")
    coin = fund.out(0, kind="wsh:big")
    t = spend([coin, env.take("wsh_true"), env.take("wsh_true")], fee=9000)
    t.wit[0] = [big]
    send_both(env, t)
    check("three inputs, a child of the last tx")
    # A chain: each a child of the one before (parent-child links).
    prev = sent[0]
    for i in range(4):
        child = spend([prev.out(0)], fee=2000)
        send_both(env, child)
        check("chain child %d" % i)
        prev = child
    # A child of two parents, then a replacement of it.
    two = spend([sent[3].out(0), sent[4].out(0)], fee=3000)
    send_both(env, two)
    check("a child of two parents")
    repl = spend([sent[3].out(0), sent[4].out(0)], fee=9000)
    send_both(env, repl)
    check("its replacement")
    # A block that mines part of the pool; then everything.
    env.mine(txs=[sent[1].hex(), sent[2].hex(), sent[3].hex()])
    check("a block mining three")
    env.mine(1)
    check("a block mining the rest")
    assert env.core.rpc("getmempoolinfo")["size"] == 0
    # And the pool grows again from there.
    for _ in range(3):
        send_both(env, spend([env.take("wsh_true")]))
    check("three more after the pool emptied")

"""submitpackage parity: peerd's submitpackage (and testmempoolaccept of the
same packages) answers as Bitcoin Core's, field by field.

Same set-up as test_mempool_parity.py (mempool_parity_env.py: its Env and helpers, reused here):
one regtest bitcoind with a wallet mines; its blocks reach peerd by
submitblock; neither node has a peer. Each case crafts a package meant to hit
one rule of Core 29's package acceptance (validation.cpp AcceptPackage,
rpc/mempool.cpp submitpackage), sends it to Core's submitpackage, checks that
Core says what the case is about, then sends it to peerd's and requires the
identical answer. Both mempools then hold the same transactions, which is
compared too.
"""

import pytest

from conftest import save_failure_logs, stop_core_and_peerd
from mempool_craft import P2A, TRUE, op_return, p2wsh
from mempool_parity_env import COIN, SPK, spend, start_env

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    e = start_env(tmp_path_factory, "package")
    try:
        e.mine(110)
        ws = []
        for _ in range(2):
            ws += e.fund([(COIN // 5, SPK["wsh_true"])] * 60, ["wsh_true"] * 60)
        e.pools["wsh_true"] = ws
        yield e
    except BaseException:
        save_failure_logs("mempool_package", e.core, e.peerd)
        raise
    finally:
        stop_core_and_peerd(e.core, e.peerd)


def submit(env, txs, *extra):
    """Both nodes' submitpackage of txs (Tx or hex); Core's answer."""
    return env.both("submitpackage", [t if isinstance(t, str) else t.hex() for t in txs], *extra)


def same_mempools(env):
    env.both("getrawmempool")


def coin(env):
    return env.take("wsh_true")


def truc_pair(env, parent_fee=0, child_fee=5000, dust=False):
    """A version-3 parent (fee parent_fee; with a 0-value P2A output when dust) and its
    version-3 child."""
    c = coin(env)
    outs = [(c.value - parent_fee, p2wsh(TRUE))] + ([(0, P2A)] if dust else [])
    p = spend([c], outs=outs, version=3)
    ins = [p.out(0)] + ([p.out(1, "p2a")] if dust else [])
    ch = spend(ins, fee=child_fee, version=3)
    return p, ch


# ---- accepted ---------------------------------------------------------------------

def test_single_transaction(env):
    r = submit(env, [spend([coin(env)])])
    assert r["package_msg"] == "success", r
    same_mempools(env)


def test_parent_and_child_each_alone(env):
    p = spend([coin(env)])
    r = submit(env, [p, spend([p.out(0)])])
    assert r["package_msg"] == "success", r
    assert all(len(x["fees"]["effective-includes"]) == 1 for x in r["tx-results"].values()), r
    same_mempools(env)


def test_cpfp_zero_fee_truc_parent(env):
    p, ch = truc_pair(env)
    # Alone, the parent pays nothing: testmempoolaccept of the pair says so too.
    env.tma([p, ch])
    r = submit(env, [p, ch])
    assert r["package_msg"] == "success", r
    res = r["tx-results"][ch.wtxid]
    assert res["fees"]["effective-includes"] == [p.wtxid, ch.wtxid], r
    same_mempools(env)


def test_cpfp_ephemeral_dust_spent(env):
    p, ch = truc_pair(env, dust=True)
    r = submit(env, [p, ch])
    assert r["package_msg"] == "success", r
    same_mempools(env)


def test_already_in_mempool_parent(env):
    p = spend([coin(env)])
    env.send(p)
    r = submit(env, [p, spend([p.out(0)])])
    assert r["package_msg"] == "success", r
    assert "effective-feerate" not in r["tx-results"][p.wtxid]["fees"], r
    same_mempools(env)


def test_rbf_single_in_package(env):
    c = coin(env)
    env.send(spend([c], fee=2000))
    repl = spend([c], fee=20000)
    r = submit(env, [repl])
    assert r["package_msg"] == "success" and len(r["replaced-transactions"]) == 1, r
    same_mempools(env)


# ---- rejected by a transaction -------------------------------------------------------

def test_cpfp_child_pays_too_little(env):
    p, ch = truc_pair(env, child_fee=150)
    r = submit(env, [p, ch])
    assert r["package_msg"] == "transaction failed", r
    assert "min relay fee not met" in r["tx-results"][ch.wtxid]["error"], r
    same_mempools(env)


def test_zero_fee_non_truc_parent_not_cpfp(env):
    # Core 29 lets a child pay only for a parent above the min relay fee (TRUC aside).
    c = coin(env)
    p = spend([c], fee=0)
    r = submit(env, [p, spend([p.out(0)], fee=50000)])
    assert r["package_msg"] == "transaction failed", r
    assert r["tx-results"][p.wtxid]["error"].startswith("min relay fee not met"), r
    same_mempools(env)


def test_invalid_single(env):
    c = coin(env)
    t = spend([c], outs=[(c.value + 1, p2wsh(TRUE))])
    r = submit(env, [t])
    assert r["package_msg"] == "transaction failed", r


def test_max_feerate_exceeded(env):
    p = spend([coin(env)])
    ch = spend([p.out(0)], fee=COIN // 20)
    r = submit(env, [p, ch], 0.001)
    assert r["tx-results"][ch.wtxid]["error"].startswith("max feerate exceeded"), r
    same_mempools(env)


# ---- rejected as a package -------------------------------------------------------------

def test_truc_parent_non_truc_child(env):
    c = coin(env)
    p = spend([c], fee=0, version=3)
    r = submit(env, [p, spend([p.out(0)], fee=5000, version=2)])
    assert r["package_msg"].startswith("TRUC-violation"), r
    same_mempools(env)


def test_ephemeral_dust_unspent(env):
    c = coin(env)
    p = spend([c], outs=[(c.value, p2wsh(TRUE)), (0, P2A)], version=3)
    r = submit(env, [p, spend([p.out(0)], fee=5000, version=3)])
    assert r["package_msg"] == "unspent-dust", r
    same_mempools(env)


def test_duplicates(env):
    p = spend([coin(env)])
    r = submit(env, [p, p, spend([p.out(0)])])
    assert r["package_msg"] == "package-contains-duplicates", r


def test_conflict_in_package(env):
    c, d = coin(env), coin(env)
    p1 = spend([c])
    p2 = spend([c, d])
    r = submit(env, [p1, p2, spend([p1.out(0), p2.out(0)])])
    assert r["package_msg"] == "conflict-in-package", r


def test_parent_in_mempool_not_in_package(env):
    a, b = spend([coin(env)]), spend([coin(env)])
    env.send(a)
    r = submit(env, [b, spend([a.out(0), b.out(0)])])
    assert r["package_msg"] == "package-not-child-with-unconfirmed-parents", r
    same_mempools(env)


def test_package_too_large(env):
    ps = []
    for _ in range(2):
        c = coin(env)
        ps.append(spend([c], outs=[(10_000, p2wsh(TRUE))] * 1200 + [(c.value - 12_100_000, p2wsh(TRUE))]))
    r = submit(env, ps + [spend([p.out(1200) for p in ps])])
    assert r["package_msg"] == "package-too-large", r
    env.tma(ps + [spend([p.out(1200) for p in ps])])


# ---- refused by the method ------------------------------------------------------------------

def test_topology_unrelated(env):
    r = submit(env, [spend([coin(env)]), spend([coin(env)])])
    assert r[0] == "error" and r[1] == -25 and "topology" in r[2], r


def test_topology_parents_chain(env):
    g = spend([coin(env)])
    p = spend([g.out(0)])
    r = submit(env, [g, p, spend([p.out(0), g.out(0)])])
    assert r[0] == "error" and "topology" in r[2], r


def test_too_many_transactions(env):
    t = spend([coin(env)])
    r = submit(env, [t] * 26)
    assert r[0] == "error" and r[1] == -8, r


def test_empty_and_bad_hex(env):
    assert submit(env, [])[1] == -8
    r = submit(env, ["00"])
    assert r[0] == "error" and r[1] == -22, r


def test_max_burn_amount(env):
    c = coin(env)
    t = spend([c], outs=[(c.value - 2000 - 1000, p2wsh(TRUE)), (1000, op_return(4))])
    r = submit(env, [t])
    assert r[0] == "error" and "maxburnamount" in r[2], r
    r = submit(env, [t], 0.1, 0.00001)
    assert r["package_msg"] == "success", r
    same_mempools(env)


def test_help(env):
    text = env.peerd.rpc("help", "submitpackage")
    assert text.startswith("submitpackage") and "tx-results" in text

"""Issue 25: -coinstatsindex and gettxoutsetinfo muhash (index/coinstats.c,
index/muhash.c, daemon/ctl/utxoset_methods.c), checked against Bitcoin
Core started with -coinstatsindex on the same chain.

Core's wallet makes the chain: spends, OP_RETURN outputs with and without
value (unspendables "scripts"), a block whose coinbase leaves 1 BTC of its
reward unclaimed (built here, "unclaimed_rewards"), blocks past regtest's
halving at 150. peerd is given every block. Then every gettxoutsetinfo
answer is compared at several heights and by hash, with muhash and none,
from the index and (use_index false) over the set, with Core's errors;
again after a reorg (a stale block still answers by hash, as Core's),
after a restart, and after a catch-up of blocks connected while peerd ran
without the index. A peerd without the index computes muhash over its
set as Core does.

disk_size differs by design (LMDB against LevelDB: the bytes of each
node's own chain state) and is compared as present only; every other
field is compared as is. Loopback only.
"""
import hashlib
import struct
from decimal import Decimal

import pytest

from bitcoind import wait_until
from mempool_parity_env import answer, norm

pytestmark = pytest.mark.interop


def sha256d(b):
    return hashlib.sha256(hashlib.sha256(b).digest()).digest()


def script_num(n):
    out = bytearray()
    while n:
        out.append(n & 0xFF)
        n >>= 8
    if out and out[-1] & 0x80:
        out.append(0)
    return bytes(out)


def block_leaving_reward(core, unclaimed_sats):
    """A block on Core's tip whose coinbase pays its subsidy less
    unclaimed_sats to OP_TRUE: the rest is Core's unclaimed_rewards."""
    tip = core.rpc("getbestblockhash")
    hdr = core.rpc("getblockheader", tip)
    height = hdr["height"] + 1
    subsidy = (50 * 100000000) >> (height // 150)
    h = script_num(height)
    sig = bytes([len(h)]) + h + b"\x00"
    tx = (struct.pack("<i", 2) + b"\x01" + b"\x00" * 32 + b"\xff" * 4 + bytes([len(sig)]) + sig +
          b"\xff" * 4 + b"\x01" + struct.pack("<q", subsidy - unclaimed_sats) + b"\x01\x51" +
          b"\x00" * 4)
    merkle = sha256d(tx)
    t = hdr["time"] + 1
    target = 0x7FFFFF << (8 * (0x20 - 3))
    for nonce in range(1 << 20):
        header = (struct.pack("<I", 0x20000000) + bytes.fromhex(tip)[::-1] + merkle +
                  struct.pack("<III", t, 0x207FFFFF, nonce))
        if int.from_bytes(sha256d(header), "little") <= target:
            return (header + b"\x01" + tx).hex()
    raise AssertionError("no nonce")


def send_op_return(core, sats, data="cafe"):
    """A wallet transaction with an OP_RETURN output of `sats` (burnt)."""
    raw = core.rpc("createrawtransaction", [], [{"data": data}])
    script = "%02x6a%02x%s" % (len(data) // 2 + 2, len(data) // 2, data)
    raw = raw.replace("00" * 8 + script, struct.pack("<q", sats).hex() + script, 1)
    funded = core.rpc("fundrawtransaction", raw, wallet=core.wallet)["hex"]
    signed = core.rpc("signrawtransactionwithwallet", funded, wallet=core.wallet)
    assert signed["complete"], signed
    return core.rpc("sendrawtransaction", signed["hex"], 0.1, 1)


def submit(core, d, hashes):
    for h in hashes:
        assert d.rpc("submitblock", core.rpc("getblock", h, 0)) in (None, "inconclusive")
    assert d.rpc("getbestblockhash") == core.rpc("getbestblockhash")


def synced(call):
    info, tip = call("getindexinfo"), call("getblockcount")
    v = info.get("coinstatsindex")
    return v is not None and v["synced"] and v["best_block_height"] == tip


def wait_synced(core, d):
    wait_until(lambda: synced(core.rpc), timeout=60, what="bitcoind's coinstatsindex")
    wait_until(lambda: synced(d.rpc), timeout=60, what="peerd's coinstatsindex")


def same(core, d, method, *params):
    ours = norm(answer(lambda: d.rpc(method, *params)))
    theirs = answer(lambda: core.rpc(method, *params))
    # disk_size: each node's own database, by design not equal.
    if isinstance(ours, dict) and "disk_size" in ours:
        assert isinstance(ours.pop("disk_size"), int) and "disk_size" in theirs
        theirs = dict(theirs)
        del theirs["disk_size"]
    assert ours == theirs, (method, params, ours, theirs)
    # The same keys in the same order, as Core's.
    if isinstance(ours, dict):
        assert list(ours) == list(theirs), (list(ours), list(theirs))
    return ours


def check_all(core, d, extra_blocks=()):
    same(core, d, "getindexinfo")
    same(core, d, "getindexinfo", "coinstatsindex")
    tip = core.rpc("getblockcount")
    for hash_type in (None, "hash_serialized_3", "muhash", "none"):
        same(core, d, "gettxoutsetinfo", *([hash_type] if hash_type else []))
    same(core, d, "gettxoutsetinfo", "muhash", None, False)
    same(core, d, "gettxoutsetinfo", "none", None, False)
    same(core, d, "gettxoutsetinfo", "hash_serialized_3", None, False)
    # Every height (the OP_RETURN and unclaimed-reward blocks among them),
    # by hash at some.
    for h in range(tip + 1):
        same(core, d, "gettxoutsetinfo", "muhash", h)
    for h in sorted({0, 1, 2, 100, 111, 112, 113, 150, tip - 1, tip}):
        same(core, d, "gettxoutsetinfo", "none", h, True)
        same(core, d, "gettxoutsetinfo", "muhash", core.rpc("getblockhash", h))
    for b in extra_blocks:
        same(core, d, "gettxoutsetinfo", "muhash", b)
    # Core's errors, in its order.
    same(core, d, "gettxoutsetinfo", "hash_serialized_3", 1)
    same(core, d, "gettxoutsetinfo", "muhash", 1, False)
    same(core, d, "gettxoutsetinfo", "muhash", -1)
    same(core, d, "gettxoutsetinfo", "muhash", tip + 1)
    for bad in (1.5, 2147483648, -2147483649, 1e300, True, [1], {"a": 1}):
        same(core, d, "gettxoutsetinfo", "muhash", bad)
    same(core, d, "gettxoutsetinfo", "muhash", "ab" * 32)
    same(core, d, "gettxoutsetinfo", "muhash", "zz")
    same(core, d, "gettxoutsetinfo", "sha256")


def test_coinstatsindex_as_bitcoind(make_bitcoind, make_peerd):
    core = make_bitcoind(1, args=("-coinstatsindex",))[0]
    core.create_wallet()
    addr = core.new_address("bech32")
    hashes = core.mine(110, addr)
    for kind in ("bech32", "legacy", "p2sh-segwit", "bech32m"):
        core.send_to(core.new_address(kind), 1)
    send_op_return(core, 0)
    send_op_return(core, 25000, "deadbeef")
    hashes += core.mine(1, addr)
    assert core.rpc("submitblock", block_leaving_reward(core, 100000000)) is None
    hashes.append(core.rpc("getbestblockhash"))
    send_op_return(core, 7000)
    core.send_to(core.new_address("bech32"), 2)
    hashes += core.mine(45, addr)  # past the halving at 150
    d = make_peerd("-coinstatsindex", name="coinstats")
    submit(core, d, hashes)
    wait_synced(core, d)
    info = core.rpc("gettxoutsetinfo", "muhash", 112)
    assert info["block_info"]["unspendables"]["unclaimed_rewards"] == Decimal(1), info
    assert core.rpc("gettxoutsetinfo", "none", 111)["block_info"]["unspendables"]["scripts"] > 0
    check_all(core, d)

    # A reorg: two blocks replaced by three others, one with an OP_RETURN.
    stale = core.mine(2, addr)
    submit(core, d, stale)
    wait_synced(core, d)
    core.rpc("invalidateblock", stale[0])
    send_op_return(core, 3000)
    fork = core.mine(3, addr)
    core.rpc("reconsiderblock", stale[0])
    assert core.rpc("getbestblockhash") == fork[-1]
    submit(core, d, fork)
    wait_synced(core, d)
    check_all(core, d, extra_blocks=stale)

    # A restart: the index comes back where it was.
    d.stop()
    d = make_peerd("-coinstatsindex", name="coinstats")
    wait_synced(core, d)
    check_all(core, d, extra_blocks=stale)

    # Without the index: muhash over the set, as Core's use_index false;
    # a height needs the index. Then blocks connected meanwhile are caught
    # up in the background at the next start with it.
    d.stop()
    d = make_peerd(name="coinstats")
    assert d.rpc("getindexinfo") == {}
    ours = norm(d.rpc("gettxoutsetinfo", "muhash"))
    theirs = core.rpc("gettxoutsetinfo", "muhash", None, False)
    del ours["disk_size"], theirs["disk_size"]
    assert ours == theirs, (ours, theirs)
    err = answer(lambda: d.rpc("gettxoutsetinfo", "muhash", 5))
    assert err == ("error", -8, "Querying specific block heights requires coinstatsindex"), err
    send_op_return(core, 1234)
    core.send_to(core.new_address("legacy"), 1)
    more = core.mine(30, addr)
    submit(core, d, more)
    d.stop()
    d = make_peerd("-coinstatsindex", name="coinstats")
    wait_synced(core, d)
    check_all(core, d, extra_blocks=stale)

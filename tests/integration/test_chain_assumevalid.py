"""-assumevalid, after Core's test/functional/feature_assumevalid.py, with
bitcoind given the same blocks.

The chain (built here, as test_chain_parity.py builds its blocks): block 1's
coinbase pays to a public key; block 102 spends it with an empty scriptSig,
a script that fails; 2,100 empty blocks follow, so the best header lies
2,100 blocks (more than two weeks of regtest work: 2,017) above block 102.
Every header goes in first (submitheader), then the blocks (submitblock),
to peerd and to a bitcoind started with the same -assumevalid, and the two
must answer every block alike.

Core skips a block's scripts only when the assumed-valid block is indexed,
the block is its ancestor and the best header's, the best header has the
minimum chain work, and it lies two weeks of work above the block. Each
test breaks one of these (or none) and checks who accepts block 102.
"""
import time

import pytest
from bitcoin.core import COutPoint, CMutableTransaction, CMutableTxIn, CTxOut
from bitcoin.core.script import CScript, OP_CHECKSIG, OP_TRUE

from test_chain_parity import Block, answer, subsidy, txid

pytestmark = pytest.mark.interop

BAD = 102  # the height of the block with the failing script
ABOVE = 2100  # empty blocks on top of it
# The generator point: a valid public key nobody here signs for.
PUBKEY = bytes.fromhex("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")

_chain = []


def chain():
    """The blocks 1..BAD+ABOVE (built once): [(hash, header hex, block hex)]."""
    if _chain:
        return _chain
    # Recent enough that no header is too old for either node's clock rules,
    # and ending in the past (time-too-new is two hours ahead).
    start = int(time.time()) - (BAD + ABOVE + 10) * 600
    prev = bytes.fromhex("0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206")[::-1]
    first_cb = None
    for h in range(1, BAD + ABOVE + 1):
        b = Block(prev, h, start + 600 * h)
        if h == 1:
            b.cb.vout[0] = CTxOut(subsidy(1), CScript([PUBKEY, OP_CHECKSIG]))
            first_cb = b.cb
        if h == BAD:
            spend = CMutableTransaction([CMutableTxIn(COutPoint(txid(first_cb), 0), CScript(), 0xFFFFFFFF)],
                                        [CTxOut(subsidy(1) - 100000, CScript([OP_TRUE]))], 0, 2)
            b.txs.append(spend)
        raw = b.raw()
        _chain.append((b.hash, b.hdr.hex(), raw.hex()))
        prev = bytes.fromhex(b.hash)[::-1]
    return _chain


def feed(core, peerd, headers_upto, blocks_upto):
    """Headers 1..headers_upto to both, then blocks 1..blocks_upto; each
    submitblock answer compared. Returns the answers that were not null."""
    blocks = chain()
    ctl = peerd.ctl()
    for h in range(headers_upto):
        a = answer(lambda: core.rpc("submitheader", blocks[h][1]))
        b = answer(lambda: ctl.call("submitheader", blocks[h][1]))
        assert a is None and b is None, "header %d: Core %r, peerd %r" % (h + 1, a, b)
    odd = {}
    for h in range(blocks_upto):
        a = answer(lambda: core.rpc("submitblock", blocks[h][2]))
        b = answer(lambda: ctl.call("submitblock", blocks[h][2]))
        assert a == b, "block %d: Core answered %r, peerd %r" % (h + 1, a, b)
        if a is not None:
            odd[h + 1] = a
    best = core.getbestblockhash()
    assert ctl.call("getbestblockhash") == best
    return odd, core.getblockcount()


def assumed(peerd):
    return peerd.rpc("getstats")["chain"]["blocks_assumed_valid"]


def nodes(make_bitcoind, make_peerd, *args):
    core = make_bitcoind(1, args=args, small=True)[0]
    peerd = make_peerd(*args, listen=False)
    return core, peerd


def test_buried_bad_signature_is_accepted(make_bitcoind, make_peerd):
    """Core's node1: -assumevalid at block 102 and 2,100 headers above: the
    chain connects whole, scripts of blocks 1..102 unchecked."""
    av = chain()[BAD - 1][0]
    core, peerd = nodes(make_bitcoind, make_peerd, "-assumevalid=" + av)
    odd, height = feed(core, peerd, BAD + ABOVE, BAD + ABOVE)
    assert "Assuming ancestors of block %s have valid signatures." % av in peerd.log()
    assert odd == {} and height == BAD + ABOVE
    # Blocks 1..102 are ancestors of the assumed-valid block and more than
    # 2,016 below the best header; none above it is skipped.
    assert assumed(peerd) == BAD


def test_bad_signature_above_the_assumed_block_is_rejected(make_bitcoind, make_peerd):
    """The same chain with -assumevalid at block 101: block 102 is not its
    ancestor, so its script runs and fails on both nodes."""
    av = chain()[BAD - 2][0]
    core, peerd = nodes(make_bitcoind, make_peerd, "-assumevalid=" + av)
    odd, height = feed(core, peerd, BAD + ABOVE, BAD)
    assert list(odd) == [BAD] and "script-verify-flag-failed" in odd[BAD], odd
    assert height == BAD - 1
    assert assumed(peerd) == BAD - 1


def test_not_buried_deep_enough(make_bitcoind, make_peerd):
    """Core's node2: -assumevalid at block 102 but only 200 headers: the best
    header is not two weeks of work above, so block 102's script runs."""
    av = chain()[BAD - 1][0]
    core, peerd = nodes(make_bitcoind, make_peerd, "-assumevalid=" + av)
    # The assumed-valid header must be known, or nothing is skipped anyway.
    odd, height = feed(core, peerd, 200, BAD)
    assert list(odd) == [BAD] and "script-verify-flag-failed" in odd[BAD]
    assert height == BAD - 1 and assumed(peerd) == 0


def test_just_buried_enough(make_bitcoind, make_peerd):
    """The depth rule's edge: with the best header 2,017 above block 102 its
    script is skipped, with 2,016 above it runs (Core's "> two weeks")."""
    av = chain()[BAD - 1][0]
    core, peerd = nodes(make_bitcoind, make_peerd, "-assumevalid=" + av)
    odd, height = feed(core, peerd, BAD + 2016, BAD)
    assert list(odd) == [BAD], odd
    core2, peerd2 = nodes(make_bitcoind, make_peerd, "-assumevalid=" + av)
    odd, height = feed(core2, peerd2, BAD + 2017, BAD)
    assert odd == {} and height == BAD


def test_off_by_default_on_regtest_and_with_zero(make_bitcoind, make_peerd):
    """Regtest has no default assumed-valid block; -assumevalid=0 turns a
    given one off: the script runs."""
    for args in ((), ("-assumevalid=0",)):
        core, peerd = nodes(make_bitcoind, make_peerd, *args)
        odd, height = feed(core, peerd, BAD + ABOVE, BAD)
        assert "Validating signatures for all blocks." in peerd.log()
        assert list(odd) == [BAD] and height == BAD - 1


def test_below_minimum_chain_work(make_bitcoind, make_peerd):
    """-minimumchainwork above the best header's work: nothing is skipped."""
    av = chain()[BAD - 1][0]
    work = "%x" % (2 * (BAD + ABOVE + 1) + 2)  # a regtest block proves 2
    core, peerd = nodes(make_bitcoind, make_peerd, "-assumevalid=" + av, "-minimumchainwork=" + work)
    odd, height = feed(core, peerd, BAD + ABOVE, BAD)
    assert list(odd) == [BAD] and height == BAD - 1 and assumed(peerd) == 0


def test_bad_value_is_refused_as_core(make_bitcoind, tmp_path):
    """Core's text for a hash that is not up to 64 hex digits."""
    import subprocess
    from conftest import PEERD_BIN
    r = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % tmp_path, "-assumevalid=xyz"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert "Invalid assumevalid block hash specified (xyz), must be up to 64 hex digits " \
           "(or 0 to disable)" in r.stderr + r.stdout

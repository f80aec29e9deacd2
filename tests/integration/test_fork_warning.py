"""Core's second kernel warning, LARGE_WORK_INVALID_CHAIN (validation.cpp's
CheckForkWarningConditions; chain/activate.c's chain_fork_warning,
daemon/ctl/warnings.c): once a block found invalid (it failed to connect,
or invalidateblock named it) has more than six blocks' work over the tip,
getblockchaininfo, getnetworkinfo and getmininginfo say "Warning: We do not
appear to fully agree with our peers! ..." and -alertnotify runs with it,
once each time it is raised; it goes when the tip is back within six blocks.

bitcoind and peerd take the same blocks: seven valid ones (recent, so both
leave initial block download, where Core never raises it) and an eighth
that pays its coinbase one satoshi too much (bad-cb-amount, found when it
is connected). The invalid block is then one block above the tip: no
warning. invalidateblock of block 1 drops the tip to genesis, eight blocks
under it: both warn and run the command. reconsiderblock of block 1 brings
the tip back to 7 (block 8 fails again): the warning goes.
"""
import os
import time

from bitcoin.core import lx

import bitcoind
from conftest import wait_for
from test_alertnotify import chain_warnings, lines
from test_chain_parity import Block, coinbase, subsidy

MESSAGE = ("Warning: We do not appear to fully agree with our peers! You may need to upgrade, "
           "or other nodes may need to upgrade.")
# -alertnotify's %s: Core's SanitizeString drops the "!", and the quotes go to the shell.
ALERT = MESSAGE.replace("!", "")
METHODS = ("getblockchaininfo", "getnetworkinfo", "getmininginfo")


class Pair:
    """bitcoind and peerd (-connect=0), each running -alertnotify into its
    own file, given the same `valid` blocks and then one above them that
    pays its coinbase one satoshi too much: both say bad-cb-amount and keep
    the last valid block as the tip. core and d may be replaced by restarted
    nodes: both_say asks whichever are there."""

    def __init__(self, make_bitcoind, make_peerd, tmp_path, valid, **peerd_kw):
        self.core_alert, self.ours_alert = tmp_path / "core_alert", tmp_path / "peerd_alert"
        self.core_args = ("-alertnotify=echo %%s >> %s" % self.core_alert,)
        self.ours_args = ("-connect=0", "-alertnotify=echo %%s >> %s" % self.ours_alert)
        (self.core,) = make_bitcoind(1, args=self.core_args)
        self.d = make_peerd(*self.ours_args, **peerd_kw)
        self.hashes = self.core.rpc("generatetodescriptor", valid, "raw(51)")
        for h in self.hashes:
            assert self.d.rpc("submitblock", self.core.rpc("getblock", h, 0)) is None
        tip = self.core.rpc("getblockheader", self.hashes[-1])
        bad = Block(lx(self.hashes[-1]), valid + 1, tip["time"] + 1)
        bad.cb = coinbase(valid + 1, value=subsidy(valid + 1) + 1)
        raw = bad.raw().hex()
        assert self.core.rpc("submitblock", raw) == self.d.rpc("submitblock", raw) == \
            "bad-cb-amount"
        assert self.d.rpc("getbestblockhash") == self.core.rpc("getbestblockhash") == \
            self.hashes[-1]

    def both(self):
        return (self.core, self.d)

    def both_say(self, expect, alerts):
        """Each node's three warnings are `expect`, and each has run its
        -alertnotify command `alerts` times, with Core's text."""
        for node in self.both():
            wait_for(lambda: chain_warnings(node) == {m: expect for m in METHODS}, timeout=10,
                     what="the warnings %r" % expect)
        wait_for(lambda: len(lines(self.core_alert)) == alerts and
                 len(lines(self.ours_alert)) == alerts,
                 timeout=10, what="%d -alertnotify lines from each" % alerts)
        assert lines(self.ours_alert) == lines(self.core_alert) == [ALERT] * alerts


def test_large_work_invalid_chain_warning_as_core(make_bitcoind, make_peerd, tmp_path):
    p = Pair(make_bitcoind, make_peerd, tmp_path, 7)
    core, d, hashes = p.core, p.d, p.hashes
    # The invalid block is one above the tip: nothing to say.
    time.sleep(0.5)
    p.both_say([], 0)
    # The tip at genesis, the invalid block eight above it.
    for node in p.both():
        node.rpc("invalidateblock", hashes[0])
    assert d.rpc("getblockcount") == core.rpc("getblockcount") == 0
    p.both_say([MESSAGE], 1)
    assert "Found invalid chain at least ~6 blocks longer than our best chain" in d.log()
    # Back to block 7 (block 8 fails again): the warning goes, no new command.
    for node in p.both():
        node.rpc("reconsiderblock", hashes[0])
    assert d.rpc("getbestblockhash") == core.rpc("getbestblockhash") == hashes[-1]
    p.both_say([], 1)
    # Raised again: the command runs again.
    for node in p.both():
        node.rpc("invalidateblock", hashes[0])
    p.both_say([MESSAGE], 2)


def test_invalid_chain_remembered_across_a_restart_as_core(make_bitcoind, make_peerd, tmp_path):
    """Core's LoadBlockIndex takes m_best_invalid back from the block index
    (the failed block with the most work, children of an invalidated block
    included), and CheckForkWarningConditions runs again only at the next
    tip (not at load): after a restart neither node warns (the tip is recent,
    so neither is in initial block download) nor logs it, and the first new
    block brings the warning back on both, with -alertnotify again."""
    # Two blocks that stay, seven above them, and a tenth that fails.
    p = Pair(make_bitcoind, make_peerd, tmp_path, 9, name="forkwarn")
    for node in p.both():
        node.rpc("invalidateblock", p.hashes[2])
    p.both_say([MESSAGE], 1)
    # Both restarted on their datadirs.
    assert p.d.stop()[0] == 0
    p.d = make_peerd(*p.ours_args, name="forkwarn")
    p.core.stop()
    p.core = bitcoind.Bitcoind(p.core.binary, os.path.dirname(p.core.datadir), name=p.core.name,
                               args=p.core_args)
    core, d = p.both()
    try:
        core.wait_ready()
        assert d.rpc("getblockcount") == core.rpc("getblockcount") == 2
        for node in p.both():
            assert not node.rpc("getblockchaininfo")["initialblockdownload"]
        # Not checked at load: no warning yet, and nothing logged.
        time.sleep(0.5)
        p.both_say([], 1)
        assert "Found invalid chain" not in d.log()
        # A new tip (another block 3: raw(52) pays another script): checked
        # against the invalid block as reloaded, block 10, eight blocks up.
        (new,) = core.rpc("generatetodescriptor", 1, "raw(52)")
        assert d.rpc("submitblock", core.rpc("getblock", new, 0)) is None
        assert d.rpc("getbestblockhash") == core.rpc("getbestblockhash") == new
        p.both_say([MESSAGE], 2)
    finally:
        core.stop()


def fork(prev_hex, height, t0, n, bad):
    """n blocks on prev_hex from height on, the one at index `bad` paying its
    coinbase one satoshi too much (bad-cb-amount when connected): raw hex."""
    out, prev = [], lx(prev_hex)
    for i in range(n):
        b = Block(prev, height + i, t0 + i)
        if i == bad:
            b.cb = coinbase(height + i, value=subsidy(height + i) + 1)
        out.append(b.raw().hex())
        prev = lx(b.hash)
    return out


def give_fork(node, blocks, bad):
    """The invalid block's header and the blocks above it first, then the
    blocks below it, then the invalid block: the whole fork is there when
    it is tried, as after a headers-first download."""
    for raw in blocks[:bad + 1]:
        assert node.rpc("submitheader", raw[:160]) is None
    for raw in blocks[bad + 1:] + blocks[:bad]:
        assert node.rpc("submitblock", raw) in (None, "inconclusive")
    return node.rpc("submitblock", blocks[bad])


def test_invalid_fork_weighed_by_its_top_as_core(make_bitcoind, make_peerd):
    """Core's fork warning weighs an invalid chain by its top: FindMostWorkChain
    makes m_best_invalid of each candidate it drops for a failed ancestor, and
    InvalidChainFound judges the warning even when the tip does not move.
    A fork of nine blocks on the tip (7) whose first is invalid: both warn at
    once (peerd weighed the failed block alone, one block up, and judged
    only at the next tip). A fork of 80 blocks from genesis under a 40-block
    chain, invalid at height 5: the tip goes back to 40 and both warn, the
    fork's top being 40 blocks over it (the failed block is 35 under it)."""
    for tip, fork_from, n, bad in ((7, None, 9, 0), (40, 0, 80, 4)):
        (core,) = make_bitcoind(1)
        d = make_peerd("-connect=0")
        hashes = core.rpc("generatetodescriptor", tip, "raw(51)")
        for h in hashes:
            assert d.rpc("submitblock", core.rpc("getblock", h, 0)) is None
        base = hashes[-1] if fork_from is None else core.rpc("getblockhash", fork_from)
        height = core.rpc("getblockheader", base)["height"] + 1
        blocks = fork(base, height, core.rpc("getblockheader", hashes[-1])["time"] + 1, n, bad)
        for node in (core, d):
            assert give_fork(node, blocks, bad) == "bad-cb-amount"
            wait_for(lambda: node.rpc("getbestblockhash") == hashes[-1], timeout=10,
                     what="the tip at %d" % tip)
            wait_for(lambda: chain_warnings(node) == {m: [MESSAGE] for m in METHODS}, timeout=10,
                     what="the fork warning")
        assert "Found invalid chain at least ~6 blocks longer than our best chain" in d.log()
        assert d.stop()[0] == 0
        core.stop()

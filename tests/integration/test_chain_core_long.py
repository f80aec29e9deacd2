"""A long chain made by Bitcoin Core's wallet, followed by peerd.

Core mines 1,100+ blocks, 120 of them carrying wallet sends between all four
address types (legacy, p2sh-segwit, bech32, bech32m), so every kind of input is
spent and created over and over. After each stage peerd gets Core's new
blocks through submitblock, and the two must agree on the best block,
getblockchaininfo's blocks/headers/chainwork, getblock on sampled heights
and gettxoutsetinfo's hash_serialized_3, txouts, transactions, bogosize and
total_amount (Core gives hash_serialized_3 for its tip only, hence stages).
Then a reorg made on Core (invalidateblock of a recent block, a longer
branch mined) reaches peerd the same way, and getchaintips agree.
"""
import random
from decimal import Decimal

import pytest

pytestmark = pytest.mark.interop

STAGES = 3
BLOCKS_PER_STAGE = 330
# Blocks of each stage that carry wallet sends (two each); the rest are
# mined in one call. Core's wallet is the slow part of this test.
BUSY_BLOCKS = 40
SENDS_PER_BLOCK = 2
UTXO_FIELDS = ("hash_serialized_3", "txouts", "transactions", "bogosize", "total_amount",
               "height", "bestblock")
BLOCK_FIELDS = ("hash", "height", "version", "versionHex", "merkleroot", "time", "mediantime",
                "nonce", "bits", "chainwork", "nTx", "previousblockhash", "strippedsize", "size",
                "weight", "tx")


class Follower:
    """peerd fed Core's blocks in order, as a syncing node would get them."""

    def __init__(self, core, peerd):
        self.core, self.peerd, self.fed = core, peerd, 0

    def feed(self):
        top = self.core.getblockcount()
        for height in range(self.fed + 1, top + 1):
            raw = self.core.getblock(self.core.getblockhash(height), 0)
            answer = self.peerd.rpc("submitblock", raw)
            assert answer is None, "block %d: peerd said %r" % (height, answer)
        self.fed = top

    def compare(self, stage, sample_heights=()):
        core, peerd = self.core, self.peerd
        assert peerd.rpc("getbestblockhash") == core.getbestblockhash(), stage
        ci, pi = core.getblockchaininfo(), peerd.rpc("getblockchaininfo")
        for k in ("blocks", "headers", "bestblockhash", "chainwork"):
            assert pi[k] == ci[k], "%s: getblockchaininfo %s: peerd %r, Core %r" % (stage, k, pi[k], ci[k])
        cu, pu = core.gettxoutsetinfo(), peerd.rpc("gettxoutsetinfo")
        for k in UTXO_FIELDS:
            c, p = cu[k], pu[k]
            if k == "total_amount":
                c, p = Decimal(c), Decimal(str(p))
            assert p == c, "%s: gettxoutsetinfo %s: peerd %r, Core %r" % (stage, k, p, c)
        for h in sample_heights:
            bh = core.getblockhash(h)
            cb, pb = core.getblock(bh, 1), peerd.rpc("getblock", bh, 1)
            for k in BLOCK_FIELDS:
                if k in cb:
                    assert pb.get(k) == cb[k], "%s: getblock %d %s: peerd %r, Core %r" % (
                        stage, h, k, pb.get(k), cb[k])


def test_core_wallet_chain_of_a_thousand_blocks(make_bitcoind, make_peerd):
    rng = random.Random(20261130)
    core = make_bitcoind(1)[0]
    core.create_wallet()
    core.fund_wallet(per_type=5)  # 20 coinbases of each type's address, matured
    peerd = make_peerd(listen=False, name="long")
    f = Follower(core, peerd)
    f.feed()
    f.compare("funded", sample_heights=(1, 60, 120))

    types = ("legacy", "p2sh-segwit", "bech32", "bech32m")
    for stage in range(STAGES):
        for _ in range(BUSY_BLOCKS):
            for _ in range(SENDS_PER_BLOCK):
                dest = core.new_address(rng.choice(types))
                core.send_to(dest, Decimal(rng.randint(1, 200)) / 100)
            core.mine(1, core.new_address(rng.choice(types)))
        core.mine(BLOCKS_PER_STAGE - BUSY_BLOCKS, core.new_address(rng.choice(types)))
        f.feed()
        top = core.getblockcount()
        f.compare("stage %d" % stage, sample_heights=(top - 1, top - BLOCKS_PER_STAGE // 2))
    assert core.getblockcount() >= 1000

    # A reorg of depth 3 made on Core, then replayed to peerd: the stale
    # blocks first (peerd has them already), then the winning branch.
    top = core.getblockcount()
    core.invalidateblock(core.getblockhash(top - 2))
    core.mine(5, core.new_address("bech32m"))
    for height in range(top - 2, core.getblockcount() + 1):
        answer = peerd.rpc("submitblock", core.getblock(core.getblockhash(height), 0))
        assert answer in (None, "inconclusive"), answer
    f.fed = core.getblockcount()
    f.compare("after reorg")
    core_tips = sorted((t["height"], t["hash"], t["branchlen"], t["status"])
                       for t in core.getchaintips())
    peerd_tips = sorted((t["height"], t["hash"], t["branchlen"], t["status"])
                        for t in peerd.rpc("getchaintips"))
    # Core invalidated the old branch by hand; peerd only saw it lose.
    core_tips = [(h, x, b, "valid-fork" if s == "invalid" else s) for h, x, b, s in core_tips]
    assert peerd_tips == core_tips

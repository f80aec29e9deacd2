"""Pruning, the storage side (chain/prune.c, ctl/prune_methods.c): peerd and
a real bitcoind, both with -fastprune (64 KiB block files), take the same
chaingen chain block by block in the same order, so their blk/rev files
hold the same blocks; then pruneblockchain at the same heights must answer
the same, delete the same files, and leave getblock of a pruned block,
getblockheader and getblockchaininfo's prune fields equal. A pruned peerd
restarts, reorgs inside its 288-block window, and refuses to start
unpruned, as Core."""
import json
import os
import subprocess

import pytest

import bitcoind
from conftest import BUILD, PEERD_BIN, RpcError, free_port, rest_get, wait_for

PEERTOOL = os.environ.get("PEERTOOL_BIN", os.path.join(BUILD, "bin", "peertool"))
ADDR = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"  # BIP173's P2WPKH example, regtest
PRUNE_FIELDS = ("pruned", "pruneheight", "automatic_pruning", "prune_target_size")


def chain_blocks(tmp_path, n=420):
    """chaingen's n blocks (10 transactions a block once coins mature: about
    4 kB each, 16 to a 64 KiB file), as hex, genesis left out."""
    out = tmp_path / "c.dat"
    r = subprocess.run([PEERTOOL, "chaingen", "--no-verify", "--blocks", str(n), "--txs-per-block", "10",
                        "--seed", "prune", "--out", str(out)], capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    data = out.read_bytes()
    raws, off = [], 0
    while off < len(data):
        size = int.from_bytes(data[off + 4:off + 8], "little")
        raws.append(data[off + 8:off + 8 + size].hex())
        off += 8 + size
    return raws


def answer(call, *args):
    """("ok", result) or ("error", code, message): either node's reply."""
    try:
        return ("ok", call(*args))
    except (RpcError, bitcoind.RpcError) as e:
        return ("error", e.code, e.message)


def prune_info(info):
    """getblockchaininfo's prune fields, in the order the node gave them."""
    return [(k, info[k]) for k in info if k in PRUNE_FIELDS]


def norm(x):
    """Core's amounts and difficulties come as Decimal, peerd's as float."""
    return json.loads(json.dumps(x, default=float))


def files(blocks_dir):
    return sorted(f for f in os.listdir(blocks_dir) if f.startswith(("blk", "rev")))


def both(core, d, method, *args):
    a, b = answer(core.rpc, method, *args), answer(d.rpc, method, *args)
    assert a == b, (method, args, a, b)
    return a


def test_manual_prune_matches_core(tmp_path, make_peerd, make_bitcoind):
    raws = chain_blocks(tmp_path)
    core = make_bitcoind(1, args=("-fastprune", "-prune=1", "-rest"))[0]
    d = make_peerd("-fastprune", "-prune=1", "-rest", listen=False)
    rpcport = d.rpcport
    for raw in raws:
        assert core.rpc("submitblock", raw) is None
        assert d.rpc("submitblock", raw) is None
    tip = len(raws)
    assert core.rpc("getbestblockhash") == d.rpc("getbestblockhash")
    core_blocks = os.path.join(core.datadir, "regtest", "blocks")
    peerd_blocks = os.path.join(d.netdir, "blocks")
    # Same blocks in the same files: the selection below has the same input.
    assert files(core_blocks) == files(peerd_blocks)
    assert len([f for f in files(peerd_blocks) if f.startswith("blk")]) > 10

    # Nothing pruned yet: pruned, pruneheight 0, manual.
    assert prune_info(core.rpc("getblockchaininfo")) == prune_info(d.rpc("getblockchaininfo")) == [
        ("pruned", True), ("pruneheight", 0), ("automatic_pruning", False)]
    # Core's errors: a negative height, one past the tip, a time before every block.
    both(core, d, "pruneblockchain", -1)
    both(core, d, "pruneblockchain", tip + 1)
    both(core, d, "pruneblockchain", 1000000001)
    # A height whose file also holds later blocks: nothing goes (-1).
    assert both(core, d, "pruneblockchain", 10) == ("ok", -1)
    h120 = core.rpc("getblockhash", 120)
    # Two steps, the first by block time (less Core's two hours), then one
    # clamped to tip - 288.
    first = both(core, d, "pruneblockchain", core.rpc("getblockheader", h120)["time"] + 7200)
    assert first[0] == "ok" and 0 < first[1] <= 120, first
    assert files(core_blocks) == files(peerd_blocks)
    last = both(core, d, "pruneblockchain", tip)
    assert last[0] == "ok" and first[1] < last[1] <= tip - 288, last
    assert files(core_blocks) == files(peerd_blocks)
    assert "blk00000.dat" not in files(peerd_blocks) and "rev00000.dat" not in files(peerd_blocks)
    # Core's size_on_disk is CalculateCurrentUsage: what is left of the files.
    assert d.rpc("getblockchaininfo")["size_on_disk"] == core.rpc("getblockchaininfo")["size_on_disk"]
    info = prune_info(d.rpc("getblockchaininfo"))
    assert info == prune_info(core.rpc("getblockchaininfo")) == [
        ("pruned", True), ("pruneheight", last[1] + 1), ("automatic_pruning", False)]

    # A pruned block: getblock is Core's error, its header is still there.
    err = both(core, d, "getblock", h120)
    assert err == ("error", -1, "Block not available (pruned data)"), err
    both(core, d, "getblock", h120, 0)
    assert d.rpc("getblockheader", h120) == norm(core.rpc("getblockheader", h120))
    txid = core.rpc("getblockheader", h120)["merkleroot"]  # the coinbase's, one tx a block before 101
    both(core, d, "getrawtransaction", txid, 0, h120)
    # REST: Core's 404 for pruned data, whatever the format.
    for fmt in ("json", "hex", "bin"):
        ours, theirs = rest_get(rpcport, "/rest/block/%s.%s" % (h120, fmt)), rest_get(core.rpcport, "/rest/block/%s.%s" % (h120, fmt))
        assert ours == theirs and theirs[0] == 404 and b"not available (pruned data)" in theirs[2], (ours, theirs)
    # verifychain past the pruned blocks: stops there, Core's answer.
    assert both(core, d, "verifychain", 4, 0) == ("ok", False)
    assert both(core, d, "verifychain", 4, 200) == ("ok", True)
    # A pruned block submitted again is stored again (Core's AcceptBlock with
    # force): "inconclusive", getblock answers, the prune height stays (no undo).
    both(core, d, "submitblock", raws[119])
    assert d.rpc("getblock", h120, 0) == core.rpc("getblock", h120, 0) == raws[119]
    for verbosity in (1, 2, 3):  # no undo data: no fees, no prevouts, as Core's
        assert d.rpc("getblock", h120, verbosity) == norm(core.rpc("getblock", h120, verbosity)), verbosity
    assert prune_info(d.rpc("getblockchaininfo")) == prune_info(core.rpc("getblockchaininfo"))
    # The blocks kept are served as before.
    keep = core.rpc("getblockhash", last[1] + 1)
    assert d.rpc("getblock", keep, 0) == core.rpc("getblock", keep, 0)
    assert d.rpc("getblock", keep, 3) == norm(core.rpc("getblock", keep, 3))

    # A restart keeps it all: the flag, the index without the data, the answers.
    name = os.path.basename(d.datadir)
    assert d.stop()[0] == 0
    d = make_peerd("-fastprune", "-prune=1", "-checkblocks=0", listen=False, name=name)
    wait_for(lambda: "block verification stopping at height %d (no data)" % last[1] in d.log(), timeout=30,
             what="VerifyDB's stop at the pruned blocks")
    assert "Block files have previously been pruned" in d.log()
    assert prune_info(d.rpc("getblockchaininfo")) == info
    assert answer(d.rpc, "getblock", core.rpc("getblockhash", 100)) == err
    assert d.rpc("getbestblockhash") == core.rpc("getbestblockhash")
    assert d.rpc("pruneblockchain", tip) == last[1]

    # A reorg inside the window: 5 blocks undone (their undo data is kept), 7 on top.
    stale = d.rpc("getblockhash", tip - 4)
    d.rpc("invalidateblock", stale)
    assert d.rpc("getblockcount") == tip - 5
    new = d.rpc("generatetoaddress", 7, ADDR)
    assert d.rpc("getbestblockhash") == new[-1] and d.rpc("getblockcount") == tip + 2
    # New blocks extend the chain, and a later prune still works from there.
    assert d.rpc("pruneblockchain", tip + 2) >= last[1]
    assert d.rpc("gettxoutsetinfo")["height"] == tip + 2

    # An index started on the pruned chain cannot catch up: Core's error
    # (fatal to Core; peerd's index stops, the node runs on).
    text = ("basic block filter index best block of the index goes beyond pruned data. Please disable the "
            "index or reindex (which will download the whole blockchain again)")
    assert d.stop()[0] == 0
    d = make_peerd("-fastprune", "-prune=1", "-blockfilterindex", listen=False, name=name)
    wait_for(lambda: text in d.log(), timeout=30, what="the index's pruned-data error")
    assert d.rpc("getblockcount") == tip + 2
    assert core.stop() == 0
    r = subprocess.run([core.binary, "-datadir=" + core.datadir, "-regtest", "-fastprune", "-prune=1",
                        "-blockfilterindex", "-listen=0", "-connect=0", "-dnsseed=0", "-fixedseeds=0",
                        "-natpmp=0", "-port=%d" % free_port(), "-rpcport=%d" % free_port()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "Error: " + text in r.stderr, r.stderr

    # Without -prune the pruned datadir does not start (Core's text).
    assert d.stop()[0] == 0
    r = subprocess.run([PEERD_BIN, "-regtest", "-datadir=" + d.datadir, "-listen=0"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0
    assert ("You need to rebuild the database using -reindex to go back to unpruned mode.  "
            "This will redownload the entire blockchain") in r.stdout + r.stderr

    # -reindex under -prune: the blk files after the first gap and every rev
    # file go (Core's CleanupBlockRevFiles), and both start over at genesis.
    core = bitcoind.Bitcoind(core.binary, tmp_path / "core", name=core.name,
                             args=("-fastprune", "-prune=1", "-reindex")).wait_ready()
    try:
        d = make_peerd("-fastprune", "-prune=1", "-reindex", listen=False, name=name)
        wait_for(lambda: "Removing unusable blk?????.dat and rev?????.dat files for -reindex with -prune" in d.log(),
                 timeout=30, what="the cleanup's log line")
        wait_for(lambda: core.rpc("getblockchaininfo")["headers"] == 0, timeout=30, what="Core's reindex")
        assert d.rpc("getblockcount") == core.rpc("getblockcount") == 0
        assert files(core_blocks) == files(peerd_blocks) == ["blk00000.dat"]
        assert prune_info(d.rpc("getblockchaininfo")) == prune_info(core.rpc("getblockchaininfo"))
    finally:
        core.stop()


def test_not_in_prune_mode_and_too_short(tmp_path, make_peerd, make_bitcoind):
    core = make_bitcoind(1)[0]
    d = make_peerd(listen=False)
    both(core, d, "pruneblockchain", 1)
    assert prune_info(core.rpc("getblockchaininfo")) == prune_info(d.rpc("getblockchaininfo")) == [
        ("pruned", False)]
    core2 = make_bitcoind(1, args=("-fastprune", "-prune=1"))[0]
    d2 = make_peerd("-fastprune", "-prune=1", listen=False, name="peerd2")
    for n in (core2, d2):
        n.rpc("generatetoaddress", 50, ADDR)
    # Below -fastprune's regtest prune-after height (100).
    assert both(core2, d2, "pruneblockchain", 10) == ("error", -1, "Blockchain is too short for pruning.")


def test_automatic_prune_fields(tmp_path, make_peerd, make_bitcoind):
    """-prune=550: automatic, the target in bytes; a small chain stays whole
    (its files are far below the target)."""
    core = make_bitcoind(1, args=("-fastprune", "-prune=550"))[0]
    d = make_peerd("-fastprune", "-prune=550", listen=False)
    for n in (core, d):
        n.rpc("generatetoaddress", 150, ADDR)
    assert prune_info(core.rpc("getblockchaininfo")) == prune_info(d.rpc("getblockchaininfo")) == [
        ("pruned", True), ("pruneheight", 0), ("automatic_pruning", True), ("prune_target_size", 550 << 20)]
    assert "Prune configured to target 550 MiB on disk for block and undo files." in d.log()


@pytest.mark.parametrize("args,text", [
    (("-prune=1", "-txindex"), "Prune mode is incompatible with -txindex."),
    (("-prune=550", "-reindex-chainstate"),
     "Prune mode is incompatible with -reindex-chainstate. Use full -reindex instead."),
    (("-prune=-1",), "Prune cannot be configured with a negative value."),
    (("-prune=549",), "Prune configured below the minimum of 550 MiB.  Please use a higher number."),
])
def test_startup_errors_as_core(tmp_path, args, text):
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    (tmp_path / "core").mkdir()
    (tmp_path / "peerd").mkdir()
    c = subprocess.run([binary, "-regtest", "-datadir=%s" % (tmp_path / "core"), "-listen=0", "-connect=0",
                        *args], capture_output=True, text=True, timeout=60)
    p = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % (tmp_path / "peerd"), "-listen=0", *args],
                       capture_output=True, text=True, timeout=60)
    assert c.returncode != 0 and "Error: " + text in c.stderr, c.stderr
    assert p.returncode != 0 and text in p.stderr, p.stderr

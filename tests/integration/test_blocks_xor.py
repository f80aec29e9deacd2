"""Core 28+'s obfuscated block files (chain/xorkey.c, chain/store.c):
blocks/xor.dat, its key chosen as Core's InitBlocksdirXorKey, every byte of
the blk and rev files XORed by its offset, -blocksxor=0 and its startup
error (Core's text, read from a real bitcoind), and `peertool
connect-blocks` reading a blocks directory a default bitcoind wrote."""
from decimal import Decimal
import json
import os
import re
import subprocess

from conftest import BUILD, PEERD_BIN, wait_for

PEERTOOL = os.environ.get("PEERTOOL_BIN", os.path.join(BUILD, "bin", "peertool"))
XOR_TEST_BIN = os.path.join(BUILD, "test", "test_chain_xor")
MAGIC = bytes.fromhex("fabfb5da")
ADDR = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"  # BIP173's P2WPKH example, regtest
ADDR2 = "bcrt1qamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhwamhqgdn98t"
COIN = 100_000_000
KEY_ERROR = re.compile(r"Failed to initialize ChainstateManager: The blocksdir XOR-key can not be "
                       r"disabled when a random key was already stored! Stored key: '([0-9a-f]{16})', "
                       r"stored path: '([^']*)'\.")


def peertool(*args, timeout=300):
    return subprocess.run([PEERTOOL] + [str(a) for a in args], capture_output=True, timeout=timeout)


def unxor(data, key, off=0):
    return bytes(b ^ key[(off + i) % 8] for i, b in enumerate(data))


def blocks_dir(d):
    return os.path.join(d.netdir, "blocks")


def test_new_datadir_gets_a_random_key_and_obfuscates(make_peerd):
    """A first start writes a random 8-byte key; blk and rev files are
    stored XORed with it (the magic is not there in the clear), and a
    restart reads them back (the chain is where it was)."""
    d = make_peerd(listen=False)
    d.rpc("getblockcount")  # the chain is open once the loop answers
    key = open(os.path.join(blocks_dir(d), "xor.dat"), "rb").read()
    assert len(key) == 8 and key != bytes(8), key.hex()
    assert "Using obfuscation key for blocksdir *.dat files (%s): '%s'" % (blocks_dir(d), key.hex()) in d.log()
    d.rpc("generatetoaddress", 5, ADDR)
    tip, utxo = d.rpc("getbestblockhash"), d.rpc("gettxoutsetinfo")
    assert d.stop()[0] == 0
    blk = open(os.path.join(blocks_dir(d), "blk00000.dat"), "rb").read()
    rev = open(os.path.join(blocks_dir(d), "rev00000.dat"), "rb").read()
    # Stored obfuscated, plain after the XOR: the genesis record first.
    assert blk[:4] != MAGIC and unxor(blk[:4], key) == MAGIC
    assert rev[:4] != MAGIC and unxor(rev[:4], key) == MAGIC
    plain = unxor(blk, key)
    n = int.from_bytes(plain[4:8], "little")
    # The second record starts where the key's phase is no longer 0.
    assert plain[8 + n:12 + n] == MAGIC and (8 + n) % 8 != 0
    d2 = make_peerd(listen=False, name=os.path.basename(d.datadir))
    assert d2.rpc("getbestblockhash") == tip
    assert d2.rpc("gettxoutsetinfo")["hash_serialized_3"] == utxo["hash_serialized_3"]
    # A block read back from the obfuscated file is served as stored.
    assert d2.rpc("getblock", tip, 0)


def test_blocksxor_0_keeps_a_new_datadir_plain(make_peerd):
    d = make_peerd("-blocksxor=0", listen=False)
    d.rpc("generatetoaddress", 2, ADDR)
    assert d.stop()[0] == 0
    assert open(os.path.join(blocks_dir(d), "xor.dat"), "rb").read() == bytes(8)
    assert open(os.path.join(blocks_dir(d), "blk00000.dat"), "rb").read()[:4] == MAGIC


def test_existing_blocks_dir_without_key_gets_a_zero_key(make_peerd):
    """A datadir from before xor.dat (plain files, no key file): Core writes
    a zero key for it, so the files stay readable."""
    d = make_peerd("-blocksxor=0", listen=False)
    d.rpc("generatetoaddress", 3, ADDR)
    tip = d.rpc("getbestblockhash")
    assert d.stop()[0] == 0
    os.unlink(os.path.join(blocks_dir(d), "xor.dat"))
    d2 = make_peerd(listen=False, name=os.path.basename(d.datadir))
    assert d2.rpc("getbestblockhash") == tip
    assert open(os.path.join(blocks_dir(d), "xor.dat"), "rb").read() == bytes(8)


def run_to_exit(cmd, timeout=30):
    r = subprocess.run(cmd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return r.returncode, (r.stdout + r.stderr).decode()


def test_blocksxor_0_over_a_stored_key_is_cores_startup_error(make_peerd, make_bitcoind):
    """-blocksxor=0 where a random key is stored: both refuse to start, with
    the same words, naming the stored key and the file."""
    (core,) = make_bitcoind(1)
    core.stop()
    rc, out = run_to_exit(core.cmd + ["-blocksxor=0"])
    want = KEY_ERROR.search(out)
    assert rc != 0 and want, out
    core_key = open(os.path.join(core.datadir, "regtest", "blocks", "xor.dat"), "rb").read()
    assert want.group(1) == core_key.hex()
    assert want.group(2) == os.path.join(core.datadir, "regtest", "blocks", "xor.dat")

    d = make_peerd(listen=False)
    d.rpc("getblockcount")
    assert d.stop()[0] == 0
    rc, out = run_to_exit(d.cmd + ["-blocksxor=0"])
    got = KEY_ERROR.search(out)
    assert rc != 0 and got, out
    key = open(os.path.join(blocks_dir(d), "xor.dat"), "rb").read()
    assert got.group(1) == key.hex()
    assert got.group(2) == os.path.join(blocks_dir(d), "xor.dat")


def core_address(k):
    """A regtest P2WPKH address (python-bitcoinlib encodes it)."""
    import bitcoin
    from bitcoin.core.script import CScript
    from bitcoin.wallet import CBitcoinAddress

    bitcoin.SelectParams("regtest")
    try:
        return str(CBitcoinAddress.from_scriptPubKey(CScript([0, bytes([k]) * 20])))
    finally:
        bitcoin.SelectParams("mainnet")


def test_connect_blocks_reads_a_default_core_blocks_dir(tmp_path, make_bitcoind):
    """bitcoind with its default options (a random key) makes a chain with
    transactions and a stale block; stopped, its blocks directory given to
    connect-blocks ends at Core's tip with Core's gettxoutsetinfo."""
    r = peertool("chaingen", "--no-verify", "--blocks", 120, "--seed", "xor-core", "--out", tmp_path / "c.dat")
    assert r.returncode == 0, r.stderr.decode()
    (node,) = make_bitcoind(1)
    data = open(tmp_path / "c.dat", "rb").read()
    off = 0
    while off < len(data):
        n = int.from_bytes(data[off + 4:off + 8], "little")
        assert node.rpc("submitblock", data[off + 8:off + 8 + n].hex()) is None
        off += 8 + n
    node.rpc("generatetoaddress", 5, core_address(1))
    stale = node.rpc("getbestblockhash")
    node.rpc("invalidateblock", stale)
    node.rpc("generatetoaddress", 6, core_address(2))
    node.rpc("reconsiderblock", stale)
    want_tip = node.rpc("getbestblockhash")
    want = node.rpc("gettxoutsetinfo")
    node.stop()
    bdir = os.path.join(node.datadir, "regtest", "blocks")
    key = open(os.path.join(bdir, "xor.dat"), "rb").read()
    assert key != bytes(8)  # Core's default: obfuscated
    assert open(os.path.join(bdir, "blk00000.dat"), "rb").read(4) != MAGIC
    # Core's undo records are obfuscated the same way ours are.
    rev = open(os.path.join(bdir, "rev00000.dat"), "rb").read()
    assert rev[:4] != MAGIC and unxor(rev[:4], key) == MAGIC
    n = int.from_bytes(unxor(rev[4:8], key, 4), "little")
    assert unxor(rev[8 + n + 32:12 + n + 32], key, 8 + n + 32) == MAGIC
    r = peertool("connect-blocks", "--utxo-stats", tmp_path / "dd", bdir)
    assert r.returncode == 0, (r.stderr.decode(), r.stdout.decode())
    got = json.loads(r.stdout)
    assert (got["tip"], got["height"]) == (want_tip, want["height"])
    assert got["rejected"] == 0 and got["duplicate"] == 1  # genesis
    u = got["utxo"]
    for k in ("hash_serialized_3", "txouts", "transactions", "bogosize"):
        assert u[k] == want[k], k
    assert round(Decimal(str(u["total_amount"])) * COIN) == round(Decimal(want["total_amount"]) * COIN)
    # peerd's store, given Core's key, reads every undo record Core wrote
    # and re-encodes it to Core's bytes (tests/unit/test_chain_xor.c).
    if os.path.exists(XOR_TEST_BIN):
        r = subprocess.run([XOR_TEST_BIN], env=dict(os.environ, PEERD_CORE_XOR_BLOCKS=bdir),
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        # One a block connected: the active chain's and the stale one's.
        assert "core obfuscated rev: %d records" % (want["height"] + 1) in r.stdout, r.stdout
    # The same file named alone (xor.dat beside it) reads the same way.
    r = peertool("connect-blocks", tmp_path / "dd2", os.path.join(bdir, "blk00000.dat"))
    assert r.returncode == 0 and json.loads(r.stdout)["tip"] == want_tip, r.stderr.decode()

"""Damaged files at startup (issue 18): peerd never crashes on its own files
and never starts on top of damage it can see. As Core: every block file the
index names must be there ("Error loading block database"), the last
blocks are verified (-checkblocks 6, -checklevel 3) and damage is
"Corrupted block database detected"; the message names the recovery, and
the recovery (deleting chainstate/, which is rebuilt from the block files)
is shown to work.
"""
import os
import pathlib
import shutil
import signal
import struct
import subprocess

import pytest

from conftest import PEERD_BIN, Peerd

ADDR = "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"  # BIP173's P2WPKH example, regtest
BLOCKS = 120
RECOVER = "To recover, stop peerd, delete %s and start it again"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A regtest datadir with BLOCKS mined blocks, cleanly stopped; (datadir, tip hash)."""
    tmp = tmp_path_factory.mktemp("pristine")
    d = Peerd(tmp, args=["-listen=0"], listen=False, name="node")
    tip = d.rpc("generatetoaddress", BLOCKS, ADDR)[-1]
    assert d.stop()[0] == 0
    return d.datadir, tip


@pytest.fixture
def node(pristine, tmp_path):
    """A copy of the pristine datadir to damage: (datadir, netdir, tip)."""
    datadir = str(tmp_path / "node")
    shutil.copytree(pristine[0], datadir)
    return datadir, os.path.join(datadir, "regtest"), pristine[1]


def start(datadir, *args, timeout=30):
    """Run peerd until it exits by itself (a refused start) or `timeout`."""
    cmd = [PEERD_BIN, "-regtest", "-datadir=" + datadir, "-listen=0", "-logtimestamps=0"] + list(args)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=10)
        return None, err
    return p.returncode, err


def refused(datadir, *args):
    """peerd must stop by itself with status 1, not by a signal; its stderr."""
    rc, err = start(datadir, *args)
    assert rc is not None, "peerd started on a damaged datadir:\n" + err[-3000:]
    assert rc == 1, "peerd ended with %s (negative: a signal):\n%s" % (rc, err[-3000:])
    assert "chain loaded" not in err
    return err


def records(path):
    """(offset of the body, length) of every record in a blk/rev file."""
    data = open(path, "rb").read()
    out, off = [], 0
    while off + 8 <= len(data):
        n = struct.unpack_from("<I", data, off + 4)[0]
        out.append((off + 8, n))
        off += 8 + n + (32 if os.path.basename(path).startswith("rev") else 0)
    return out


def poke(path, off, data):
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(data)


def recovered(datadir, netdir, tip):
    """The named recovery: delete chainstate/, start, the same tip, verified."""
    shutil.rmtree(os.path.join(netdir, "chainstate"))
    d = Peerd(pathlib.Path(os.path.dirname(datadir)), args=["-listen=0"], listen=False, name=os.path.basename(datadir))
    try:
        assert d.rpc("getbestblockhash") == tip
        assert d.rpc("verifychain", 4, 0) is True
    finally:
        assert d.stop()[0] == 0


@pytest.mark.parametrize("name", ["blk00000.dat", "rev00000.dat"])
def test_missing_block_file(node, name):
    datadir, netdir, tip = node
    path = os.path.join(netdir, "blocks", name)
    os.unlink(path)
    err = refused(datadir)
    assert "Error loading block database: %s is missing" % path in err, err
    assert RECOVER % os.path.join(netdir, "chainstate") in err, err


def test_damaged_tip_block(node):
    """The tip's transactions overwritten: its merkle root no longer fits
    (level 1 of the default check)."""
    datadir, netdir, tip = node
    blk = os.path.join(netdir, "blocks", "blk00000.dat")
    body, n = records(blk)[-1]
    poke(blk, body + n - 8, b"\xee" * 8)
    err = refused(datadir)
    assert "Corrupted block database detected" in err and tip in err, err
    assert RECOVER % os.path.join(netdir, "chainstate") in err, err


def test_damaged_tip_undo(node):
    """The last undo record's checksum damaged (level 2), then the named
    recovery brings the node back at its tip."""
    datadir, netdir, tip = node
    rev = os.path.join(netdir, "blocks", "rev00000.dat")
    size = os.path.getsize(rev)
    poke(rev, size - 32, b"\x00" * 32)
    err = refused(datadir)
    assert "Corrupted block database detected" in err and "undo" in err, err
    recovered(datadir, netdir, tip)


def test_checkblocks_and_checklevel(node):
    """Damage 50 blocks below the tip: the default 6 blocks do not reach it,
    -checkblocks=0 (all) does, and only from level 1 (level 0 reads the
    block and checks its header's hash, which the damage left alone)."""
    datadir, netdir, tip = node
    blk = os.path.join(netdir, "blocks", "blk00000.dat")
    body, n = records(blk)[BLOCKS - 50]
    poke(blk, body + n - 4, b"\xee" * 4)  # the last transaction's locktime
    rc, err = start(datadir, "-checkblocks=0", "-checklevel=1")
    assert rc == 1 and "Corrupted block database detected" in err, (rc, err[-2000:])
    assert "Verifying last %d blocks at level 1" % BLOCKS in err
    d = Peerd(pathlib.Path(os.path.dirname(datadir)), args=["-listen=0", "-checkblocks=0", "-checklevel=0"], listen=False,
              name=os.path.basename(datadir))
    assert "Verifying last %d blocks at level 0" % BLOCKS in d.log()
    assert d.stop()[0] == 0
    d = Peerd(pathlib.Path(os.path.dirname(datadir)), args=["-listen=0"], listen=False, name=os.path.basename(datadir))
    assert "Verifying last 6 blocks at level 3" in d.log()
    assert d.rpc("getbestblockhash") == tip
    assert d.stop()[0] == 0


def test_truncated_chainstate(node):
    """data.mdb cut short (a full disk, a bad copy): refused before LMDB
    touches a missing page (that was SIGBUS), and the recovery works."""
    datadir, netdir, tip = node
    data = os.path.join(netdir, "chainstate", "data.mdb")
    os.truncate(data, 4 * 4096)
    err = refused(datadir)
    assert "Corrupted block database detected: %s is 16384 bytes" % data in err, err
    assert RECOVER % os.path.join(netdir, "chainstate") in err, err
    recovered(datadir, netdir, tip)


def test_lmdb_assertion_is_not_an_abort(node):
    """A leaf page of the chainstate marked as a branch page trips an LMDB
    assertion while the index is read (abort(), SIGABRT, before): peerd
    says so, names the recovery and exits 1. Leaf pages are tried in order
    until one is read at startup; the damage of any one of them must not
    end in abort()."""
    datadir, netdir, tip = node
    data = os.path.join(netdir, "chainstate", "data.mdb")
    saved = open(data, "rb").read()
    psize = 4096
    leaves = [p for p in range(2, len(saved) // psize) if saved[p * psize + 10] == 0x02]
    assert leaves
    hit = False
    for p in leaves:
        poke(data, p * psize + 10, b"\x01")
        rc, err = start(datadir, timeout=10)
        assert rc != -signal.SIGABRT, "LMDB's assertion aborted peerd:\n" + err[-2000:]
        if "Assertion" in err:
            assert rc == 1 and "Corrupted block database detected" in err, (rc, err[-2000:])
            assert RECOVER % os.path.join(netdir, "chainstate") in err, err
            hit = True
            break
        open(data, "wb").write(saved)
    assert hit, "no leaf page's damage reached an LMDB assertion"
    recovered(datadir, netdir, tip)

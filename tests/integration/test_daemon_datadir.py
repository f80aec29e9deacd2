"""The datadir laid out as bitcoind's: each network's state in its own
directory (main's at the top), a .lock that keeps a second peerd out, a
mistyped -datadir refused, the default datadir created."""
import os
import subprocess
import time

import pytest

from conftest import PEERCTL_BIN, PEERD_BIN, free_port


def run_peerd(*args, env=None, timeout=10):
    t0 = time.monotonic()
    r = subprocess.run([PEERD_BIN, *args], capture_output=True, text=True, timeout=timeout, env=env)
    return r, time.monotonic() - t0


def test_second_peerd_on_the_same_datadir_stops_at_once(make_peerd):
    d = make_peerd()
    assert os.path.exists(os.path.join(d.netdir, ".lock"))
    # Another port, no listener clash: only the lock can stop it.
    r, took = run_peerd("-regtest", "-datadir=" + d.datadir, "-bind=127.0.0.1", "-port=%d" % free_port())
    assert r.returncode != 0
    want = f"Cannot obtain a lock on directory {d.netdir}. peerd is probably already running."
    assert want in r.stderr, r.stderr
    assert took < 5, took
    # It touched nothing of the first one's.
    assert d.rpc("getconnectioncount") == 0
    assert os.path.exists(d.sock_path)
    # Once the first is gone (cleanly or not) the lock is free again.
    d.kill()
    r2 = make_peerd(name=os.path.basename(d.datadir))
    assert r2.rpc("uptime") >= 0


def test_mistyped_datadir_is_an_error(tmp_path):
    missing = tmp_path / "no-such-dir"
    r, _ = run_peerd("-regtest", f"-datadir={missing}", "-listen=0")
    assert r.returncode != 0
    assert f'Specified data directory "{missing}" does not exist.' in r.stderr, r.stderr
    assert not missing.exists()
    # The same for datadir= in a config file.
    conf = tmp_path / "peerd.conf"
    conf.write_text(f"datadir={missing}\n")
    r, _ = run_peerd("-regtest", f"-conf={conf}", "-listen=0")
    assert r.returncode != 0
    assert f'Specified data directory "{missing}" does not exist.' in r.stderr, r.stderr
    assert not missing.exists()


def test_default_datadir_is_created(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path))
    env.pop("STATE_DIRECTORY", None)
    port = free_port()
    p = subprocess.Popen([PEERD_BIN, "-regtest", "-bind=127.0.0.1", f"-port={port}", "-logtimestamps=0"],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sock = tmp_path / ".peerd" / "regtest" / "control.sock"
    try:
        deadline = time.monotonic() + 10
        while not sock.exists() and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
        assert sock.exists(), p.stderr.read() if p.poll() is not None else "no socket"
        assert (tmp_path / ".peerd" / "regtest" / ".lock").exists()
        assert oct((tmp_path / ".peerd").stat().st_mode & 0o777) == "0o700"
    finally:
        p.terminate()
        assert p.wait(timeout=10) == 0
        p.stderr.close()


@pytest.mark.skipif(not os.path.exists(PEERCTL_BIN), reason="peerctl not built")
def test_regtest_and_main_share_a_datadir_not_their_state(make_peerd):
    reg = make_peerd(name="shared")
    main = make_peerd(name="shared", chain="main")
    dd = reg.datadir
    assert main.datadir == dd
    assert reg.sock_path == os.path.join(dd, "regtest", "control.sock")
    assert main.sock_path == os.path.join(dd, "control.sock")
    assert os.path.exists(os.path.join(dd, ".lock"))
    assert os.path.exists(os.path.join(dd, "regtest", ".lock"))
    assert reg.rpc("getnetworkinfo")["chain"] == "regtest"
    assert main.rpc("getnetworkinfo")["chain"] == "main"

    # peerctl finds each from the same network flags peerd takes.
    def ctl(*args):
        return subprocess.run([PEERCTL_BIN, f"-datadir={dd}", *args, "getnetworkinfo"], capture_output=True,
                              text=True, timeout=10)
    for flags, chain in ((("-regtest",), "regtest"), (("-chain=regtest",), "regtest"), ((), "main"),
                         (("-chain=main",), "main")):
        r = ctl(*flags)
        assert r.returncode == 0, r.stderr
        assert f'"chain": "{chain}"' in r.stdout, (flags, r.stdout)

    # Bans are each network's own.
    assert reg.rpc("setban", "10.9.0.0/16", "add", 600) is None
    assert main.rpc("listbanned") == []
    assert reg.stop()[0] == 0 and main.stop()[0] == 0
    assert os.path.exists(os.path.join(dd, "regtest", "banlist.json"))
    with open(os.path.join(dd, "regtest", "banlist.json")) as f:
        assert "10.9.0.0/16" in f.read()
    with open(os.path.join(dd, "banlist.json")) as f:
        assert "10.9.0.0/16" not in f.read()

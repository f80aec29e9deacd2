"""BIP9 versionbits as Bitcoin Core 29's (issue 25): regtest's testdummy
(bit 28, start 0, period 144, threshold 108) is DEFINED for the first
period, STARTED from 144, LOCKED_IN from 288 and ACTIVE from 432 when the
miners signal, and a miner signals as Core's ComputeBlockVersion does:
0x30000000 from height 144 to 431, 0x20000000 before and after.

The same 500 blocks go to both nodes: most are mined by peerd's
generatetoaddress and given to Core by submitblock, every seventh is
mined by Core's and given to peerd. At every height getdeploymentinfo
(tip and an older block) must be the same on both, and the version of
each block either node mines must be the version Core's getblocktemplate
proposes on that tip."""
import subprocess

import pytest

import bitcoind
from conftest import PEERD_BIN, Peerd, RpcError, save_failure_logs, stop_core_and_peerd

pytestmark = pytest.mark.interop

ADDR = "bcrt1qjqmxmkpmxt80xz4y3746zgt0q3u3ferr34acd5"


def start_pair(tmp_path_factory, args=()):
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    tmp = tmp_path_factory.mktemp("versionbits")
    core = peerd = None
    try:
        core = bitcoind.Bitcoind(binary, tmp / "core", name="core0", args=args)
        core.wait_ready()
        peerd = Peerd(tmp, name="peerd", listen=False, args=args)
        yield core, peerd
    except BaseException:
        save_failure_logs("versionbits", core, peerd)
        raise
    finally:
        stop_core_and_peerd(core, peerd)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    yield from start_pair(tmp_path_factory)


# testdummy with a minimum activation height: locked in at 288, active only from 576.
DELAYED = "-vbparams=testdummy:0:9223372036854775807:576"


@pytest.fixture(scope="module")
def delayed(tmp_path_factory):
    yield from start_pair(tmp_path_factory, (DELAYED,))


def want_version(height, active_at=432):
    return 0x30000000 if 144 <= height < active_at else 0x20000000


def mine_and_compare(core, peerd, n, active_at):
    assert peerd.rpc("getdeploymentinfo") == core.rpc("getdeploymentinfo")
    seen = set()
    for h in range(1, n + 1):
        proposed = core.rpc("getblocktemplate", {"rules": ["segwit"]})["version"]
        if h % 7 == 0:
            bh = core.rpc("generatetoaddress", 1, ADDR)[0]
            assert peerd.rpc("submitblock", core.rpc("getblock", bh, 0)) is None
        else:
            bh = peerd.rpc("generatetoaddress", 1, ADDR)[0]
            assert core.rpc("submitblock", peerd.rpc("getblock", bh, 0)) is None
        assert peerd.rpc("getbestblockhash") == core.rpc("getbestblockhash") == bh
        version = peerd.rpc("getblockheader", bh)["version"]
        assert version == proposed == want_version(h, active_at), (h, hex(version), hex(proposed))
        got, want = peerd.rpc("getdeploymentinfo"), core.rpc("getdeploymentinfo")
        assert got == want, (h, got, want)
        seen.add(want["deployments"]["testdummy"]["bip9"]["status"])
        # An older block's view, by hash.
        old = core.rpc("getblockhash", h * 3 // 4)
        assert peerd.rpc("getdeploymentinfo", old) == core.rpc("getdeploymentinfo", old)
    assert seen == {"defined", "started", "locked_in", "active"}


def test_deployments_and_versions_as_core(pair):
    core, peerd = pair
    mine_and_compare(core, peerd, 500, 432)


def test_vbparams_min_activation_height_as_core(delayed):
    core, peerd = delayed
    mine_and_compare(core, peerd, 600, 576)
    d = peerd.rpc("getdeploymentinfo", peerd.rpc("getblockhash", 500))["deployments"]["testdummy"]
    assert d["bip9"]["min_activation_height"] == 576 and d["bip9"]["status"] == "locked_in"


@pytest.mark.parametrize("value", ["foo", "testdummy:1", "nope:1:2", "testdummy:x:2", "testdummy:1:y",
                                   "testdummy:1:2:z", "testdummy:1:2:3:4", "testdummy::2"])
def test_vbparams_errors_as_core(tmp_path, value):
    binary, why = bitcoind.find_bitcoind()
    if binary is None:
        pytest.skip(why)
    arg = "-vbparams=" + value
    (tmp_path / "c").mkdir()
    (tmp_path / "p").mkdir()
    core = subprocess.run([binary, "-regtest", "-datadir=%s" % (tmp_path / "c"), "-listen=0", "-connect=0",
                           "-dnsseed=0", "-fixedseeds=0", "-server=0", "-printtoconsole=0", arg],
                          capture_output=True, text=True, timeout=60)
    assert core.returncode == 1 and core.stderr.startswith("Error: "), core
    why = core.stderr[len("Error: "):].strip()
    p = subprocess.run([PEERD_BIN, "-regtest", "-datadir=%s" % (tmp_path / "p"), "-listen=0", "-connect=0", arg],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and why in p.stdout + p.stderr, (why, p)


def test_getdeploymentinfo_errors_as_core(pair):
    core, peerd = pair
    for arg in ("00" * 32, "xy" * 32, "abc"):
        with pytest.raises(RpcError) as p:
            peerd.rpc("getdeploymentinfo", arg)
        with pytest.raises(Exception) as c:
            core.rpc("getdeploymentinfo", arg)
        assert (p.value.code, p.value.message) == (c.value.code, c.value.message), arg

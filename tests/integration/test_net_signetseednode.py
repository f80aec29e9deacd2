"""-signetseednode (Core 29's SigNetOptions::seeds): on signet, the named
seeds replace the network's DNS seeds, a custom signet (which has none)
included. Offline: every lookup goes to dns_responder.py on loopback
(-dnsserver), and the seeds are loopback listeners (test_daemon_seeds.py's).
"""
import hashlib

from conftest import free_port, wait_for
from test_daemon_seeds import Listener, responder  # noqa: F401 (the fixture)

DEFAULT_SIGNET_SEEDS = ["seed.signet.bitcoin.sprovoost.nl", "seed.signet.achownodes.xyz"]


def signet_magic(challenge):
    """A signet's message start: the first 4 bytes of sha256d of its challenge
    as a script (Core's SigNetParams)."""
    ser = bytes([len(challenge)]) + challenge
    return hashlib.sha256(hashlib.sha256(ser).digest()).digest()[:4]


def test_custom_signet_uses_signetseednode(make_peerd, responder):  # noqa: F811
    """A custom signet has no seeds; -signetseednode=IP:PORT is one. Its x9.
    name is asked (and not answered), so, as Core's, it becomes an
    addr-fetch connection to the seed itself: the listener sees peerd's
    version, in this signet's magic."""
    listener = Listener(free_port())
    try:
        seed = "%s:%d" % (listener.ip, listener.port)
        d = make_peerd("-signetchallenge=51", "-signetseednode=" + seed, "-v2transport=0",
                       "-dnsserver=" + responder.addr, chain="signet", listen=False)
        wait_for(lambda: listener.first_frames, timeout=20, what="a connection to the seed")
        assert listener.first_frames[0] == (signet_magic(b"\x51"), "version"), listener.first_frames
        assert responder.count("x9." + seed, "A") == 1, responder.queries
        assert "Loading addresses from DNS seed " + seed in d.log()
    finally:
        listener.close()


def test_signetseednode_replaces_the_default_signet_seeds(make_peerd, responder):  # noqa: F811
    """On the default signet the named seeds are asked instead of Core's two,
    each by its x9. name; the addresses it gives go into the addrman."""
    responder.set("x9.seed-a.test", ["127.0.0.2"])
    d = make_peerd("-signetseednode=seed-a.test", "-signetseednode=seed-b.test",
                   "-dnsserver=" + responder.addr, chain="signet", listen=False)
    wait_for(lambda: responder.count("x9.seed-a.test", "A") and responder.count("x9.seed-b.test", "A"),
             timeout=20, what="both seeds asked")
    for name in DEFAULT_SIGNET_SEEDS:
        assert not responder.count("x9." + name) and not responder.count(name), responder.queries
    wait_for(lambda: d.rpc("getstats")["peers"]["seeds_dns_found"] >= 1, timeout=10, what="the answer taken")


def test_signetseednode_is_for_signet_only(make_peerd):
    """Elsewhere accepted and unused, as Core (which reads it only for signet)."""
    d = make_peerd("-signetseednode=127.0.0.1:1", listen=False)
    assert d.rpc("getblockchaininfo")["chain"] == "regtest"
    assert "127.0.0.1:1" not in d.log()

"""Request texts that jansson's tree alone reads otherwise than Core's
UniValue (daemon/ctl/json_load.c): numbers past 64 bits or past a double,
and a named argument given twice. The same bytes go to bitcoind and to
both of peerd's doors (HTTP and the control socket); the replies must be
the same text (the control socket's, for 2.0 requests: its 1.0 shape is
its own).
"""
import pytest

from conftest import free_port
from test_rpc_http import ALICE, post, rpcauth_line

BIG = "100000000000000000000000000000"  # past 64 bits

# Each body as Core answers it (asked, not assumed): -1 "JSON integer out
# of range" for a huge argument, the id echoed as written, -8 for a
# repeated name.
BODIES = [
    '{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":[%s]}' % BIG,
    '{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":[-%s]}' % BIG,
    '{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":[1e400]}',
    '{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":{"height":%s}}' % BIG,
    '{"jsonrpc":"2.0","id":%s,"method":"getblockcount","params":[]}' % BIG,
    '{"jsonrpc":"2.0","id":-%s,"method":"getblockcount"}' % BIG,
    '{"jsonrpc":"2.0","id":-1.5e400,"method":"getblockcount","params":[]}',
    '{"jsonrpc":"2.0","id":%s,"method":"nosuchmethod"}' % BIG,
    '{"jsonrpc":"2.0","id":%s,"method":"getblockhash","params":[%s]}' % (BIG, BIG),
    '{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":{"height":0,"height":1}}',
    '{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":{"height":0,"x":1,"x":2,"height":3}}',
    '{"jsonrpc":"2.0","id":1,"method":"getblock","params":{"blockhash":"00","verbosity":1,"verbosity":2}}',
    '{"jsonrpc":"2.0","id":1,"method":"nosuchmethod","params":{"a":1,"a":2}}',
    '{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":{"height":0,"args":[1],"args":[2]}}',
    '{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":[0],"params":{"height":0,"height":1}}',
    '{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":{"height":1,"height":0},"params":[0]}',
    '{"jsonrpc":"2.0","id":1,"method":"getblockcount","method":"nosuchmethod","id":2}',
    '{"jsonrpc":"2.0","id":%s,"method":"getblockcount","id":2}' % BIG,
    '[{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":{"height":0}},'
    '{"jsonrpc":"2.0","id":2e999,"method":"getblockhash","params":{"height":0,"height":1}},'
    '{"jsonrpc":"2.0","id":%s,"method":"getblockhash","params":[%s]},'
    '{"jsonrpc":"2.0","id":3,"method":"getblockhash","params":{"height":1,"height":0}}]' % (BIG, BIG),
    # The 1.0 envelope (HTTP only: the control socket answers it in its own shape).
    '{"id":%s,"method":"getblockcount"}' % BIG,
    '{"id":1e999,"method":"getblockhash","params":{"height":0,"height":1}}',
    # What stays a parse error for both.
    # (A second value after the first: the scan noted request 0 twice; it leaked.)
    '{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":{"height":0,"height":1}} '
    '{"params":{"x":1,"x":2}}',
    '{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":[1.e5]}',
    '{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":[%s',
]


@pytest.fixture
def pair(make_bitcoind, make_peerd):
    """bitcoind and peerd with the same -rpcauth line for alice, and bob
    allowed getblockcount only (-rpcwhitelist), both at height 3."""
    bob = rpcauth_line("bob", "builder")
    args = ("-rpcauth=" + ALICE, "-rpcauth=" + bob, "-rpcwhitelist=bob:getblockcount",
            "-rpcwhitelistdefault=0")
    core = make_bitcoind(1, args=args)[0]
    hashes = core.rpc("generatetodescriptor", 3, "raw(51)")
    port = free_port()
    d = make_peerd("-rpcport=%d" % port, *args)
    d.rpcport = port
    for h in hashes:
        assert d.rpc("submitblock", core.rpc("getblock", h, 0)) is None
    return core, d


def ctl_text(d, body):
    """The control socket's reply line to body, as text."""
    c = d.ctl()
    c.send_line(body + "\n")
    while b"\n" not in c.buf:
        data = c.sock.recv(65536)
        if not data:
            return None
        c.buf += data
    line, c.buf = c.buf.split(b"\n", 1)
    return line.decode()


def test_numbers_and_repeated_names_as_core(pair):
    core, d = pair
    differ = []
    for body in BODIES:
        theirs = post(core.rpcport, body, "alice:wonderland")[:2]
        ours = post(d.rpcport, body, "alice:wonderland")[:2]
        if ours != theirs:
            differ.append(("http", body, ours, theirs))
        # (The control socket's "Method not found" names the method and hints at help.)
        if '"jsonrpc":"2.0"' in body and theirs[0] == 200 and "nosuchmethod" not in body:
            line = ctl_text(d, body)
            if line != theirs[1].rstrip("\n"):
                differ.append(("ctl", body, line, theirs[1]))
    assert not differ, "\n".join(map(repr, differ))
    # A parse error closes the control connection; the next body gets a new one.
    d._ctl = None


def test_whitelist_judges_a_body_with_huge_numbers(pair):
    """The whitelist reads the body as the dispatcher does: a huge number
    is no way around it (403 from both), and an allowed call still runs."""
    core, d = pair
    for body in ['{"jsonrpc":"2.0","id":%s,"method":"getblockhash","params":[0]}' % BIG,
                 '{"jsonrpc":"2.0","id":1,"method":"getblockhash","params":[%s]}' % BIG,
                 '{"jsonrpc":"2.0","id":%s,"method":"getblockcount"}' % BIG]:
        theirs = post(core.rpcport, body, "bob:builder")[:2]
        ours = post(d.rpcport, body, "bob:builder")[:2]
        assert ours == theirs, (body, ours, theirs)

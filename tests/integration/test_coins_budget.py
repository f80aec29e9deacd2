"""The coins cache's space beside Bitcoin Core's (issue 24): both nodes,
started with the same -dbcache and -maxmempool, log the same start-up
line for the in-memory UTXO set and the mempool room it may borrow
(Core's CacheSizes share of -dbcache; chain/coins_budget.c)."""
import re

import pytest

LINE = re.compile(r"\* Using ([0-9.]+) MiB for in-memory UTXO set "
                  r"\(plus up to ([0-9.]+) MiB of unused mempool space\)")

CASES = [(), ("-dbcache=100",), ("-dbcache=4", "-maxmempool=50"), ("-dbcache=1",), ("-blocksonly=1",)]


def line_in(text):
    m = LINE.search(text)
    return m and m.groups()


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(a) or "defaults")
def test_utxo_cache_line_as_core(make_bitcoind, make_peerd, args):
    core = make_bitcoind(1, args=args)[0]
    with open(core.debug_log) as f:
        want = line_in(f.read())
    assert want, "Core logged no cache line"
    node = make_peerd(*args, "-connect=0")
    got = line_in(node.log())
    assert got == want, "peerd %s, Core %s" % (got, want)

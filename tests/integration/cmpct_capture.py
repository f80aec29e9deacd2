#!/usr/bin/python3
"""Capture a cmpctblock made by the real bitcoind (the vector of
tests/data/cmpct/, read by tests/unit/test_cmpct.c).

    /usr/bin/python3 tests/integration/cmpct_capture.py OUTDIR

Starts a regtest bitcoind on loopback (../shared/bin/bitcoind, or
$BITCOIND), gives its wallet coins, sends transactions of each address
type (legacy, p2sh-segwit, bech32, bech32m: with and without witnesses),
mines them into one block, then connects as a scripted peer, says
sendcmpct(0, 2) and asks for the block with getdata MSG_CMPCT_BLOCK (Core
answers a block within 5 of its tip with a cmpctblock of its own making,
net_processing.cpp ProcessGetBlockData). Writes OUTDIR/cmpctblock.bin
(the message's payload as received), OUTDIR/block.bin (getblock's raw
block) and prints what it wrote. Not a test: run by hand to remake the
vector; the files are committed.
"""
import os
import struct
import sys
import tempfile
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bitcoind import Bitcoind, find_bitcoind  # noqa: E402
from conftest import P2P, frame, ser_compact  # noqa: E402

MSG_CMPCT_BLOCK = 4


def main(outdir):
    binary, why = find_bitcoind()
    if not binary:
        sys.exit(why)
    with tempfile.TemporaryDirectory() as tmp:
        core = Bitcoind(binary, tmp)
        try:
            core.wait_ready()
            core.create_wallet()
            core.fund_wallet(per_type=2)
            for t in ("legacy", "p2sh-segwit", "bech32", "bech32m"):
                for _ in range(2):
                    core.send_to(core.new_address(t), Decimal("0.5"))
            tip = core.mine(1)[0]
            block = core.rpc("getblock", tip, 0)
            ntx = len(core.rpc("getblock", tip, 1)["tx"])

            p = P2P(core.port)
            p.handshake()
            p.send_raw(frame("sendcmpct", struct.pack("<?Q", False, 2)))
            p.send_raw(frame("getdata", ser_compact(1) + struct.pack("<I", MSG_CMPCT_BLOCK) +
                             bytes.fromhex(tip)[::-1]))
            m = p.recv_until("cmpctblock", timeout=10)
            p.close()
        finally:
            core.stop()
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "cmpctblock.bin"), "wb") as f:
        f.write(m.payload)
    with open(os.path.join(outdir, "block.bin"), "wb") as f:
        f.write(bytes.fromhex(block))
    print("block %s: %d transactions, %d bytes; cmpctblock %d bytes" %
          (tip, ntx, len(block) // 2, len(m.payload)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")

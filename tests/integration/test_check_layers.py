"""The layering check (scripts/check-layers.py, run by make test): a folder
that includes a header of a folder it may not use fails, naming the file,
the line and the rule; the baseline of known violations only shrinks."""
import os
import subprocess
import sys

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "scripts", "check-layers.py")


def tree(root, files):
    for path, text in files.items():
        p = root / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def check(root, *args):
    r = subprocess.run([sys.executable, SCRIPT, "--root", str(root)] + list(args),
                       capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


# A small house that keeps the rules: net uses proto and base, sync uses
# net, ctl uses sync, the daemon's top uses everything.
CLEAN = {
    "base/alloc.h": "int x;\n",
    "proto/proto.h": '#include "base/alloc.h"\n',
    "daemon/net/net.h": '#include "proto/proto.h"\n#include <uv.h>\n',
    "daemon/sync/sync.h": '#include "daemon/net/net.h"\n',
    "daemon/ctl/ctl.c": '#include "daemon/sync/sync.h"\n#include "daemon/net/net.h"\n',
    "daemon/main.c": '#include "daemon/ctl/ctl.h"\n',
    "daemon/ctl/ctl.h": "\n",
    "tests/unit/test_x.c": '#include "daemon/main.c"\n',  # tests/ is not checked
}


def test_a_clean_tree_passes(tmp_path):
    tree(tmp_path, CLEAN)
    rc, out = check(tmp_path)
    assert rc == 0, out
    assert "0 known violations left" in out, out


def test_a_call_up_fails_naming_file_line_and_rule(tmp_path):
    tree(tmp_path, CLEAN)
    # The net room reaching up into sync (as peer.c called the sync code).
    tree(tmp_path, {"daemon/net/peer.c": '/* x */\n#include "daemon/sync/sync.h"\n'})
    rc, out = check(tmp_path)
    assert rc == 1, out
    assert ("daemon/net/peer.c:2: includes daemon/sync/sync.h: daemon/net/ may use the shared "
            "services (daemon/daemon.h), addrman/, bip324/ (and what those use), not daemon/sync/") in out, out


def test_every_room_may_use_the_shared_services_but_they_use_no_room(tmp_path):
    tree(tmp_path, CLEAN)
    tree(tmp_path, {"daemon/daemon.h": '#include "daemon/log.h"\n', "daemon/log.h": "\n",
                    "daemon/net/peer.c": '#include "daemon/daemon.h"\n',
                    "daemon/sync/s.c": '#include "daemon/daemon.h"\n'})
    rc, out = check(tmp_path)
    assert rc == 0, out
    # The shared services reaching into a room is a call up like any other.
    tree(tmp_path, {"daemon/net/net.h": "\n", "daemon/log.h": '#include "daemon/net/net.h"\n'})
    rc, out = check(tmp_path)
    assert rc == 1, out
    assert "daemon/log.h:1: includes daemon/net/net.h" in out, out


def test_a_lower_library_may_not_include_a_higher_one(tmp_path):
    tree(tmp_path, CLEAN)
    tree(tmp_path, {"chain/chain.h": "\n", "mempool/mempool.h": '#include "chain/chain.h"\n',
                    "chain/activate.c": '#include "mempool/mempool.h"\n'})
    rc, out = check(tmp_path)
    assert rc == 1, out
    assert "chain/activate.c:1: includes mempool/mempool.h: chain/ may use" in out, out
    assert "mempool/mempool.h:1" not in out, out  # mempool may use chain


def test_another_folders_private_header_fails(tmp_path):
    # mining/ may use mempool/, but through mempool/mempool.h only (issue 19).
    tree(tmp_path, CLEAN)
    tree(tmp_path, {"chain/chain.h": "\n", "mempool/mempool.h": '#include "chain/chain.h"\n',
                    "mempool/internal.h": '#include "mempool/mempool.h"\n',
                    "mempool/query.c": '#include "mempool/internal.h"\n',
                    "mining/assemble.c": '#include "mempool/internal.h"\n'})
    rc, out = check(tmp_path)
    assert rc == 1, out
    assert ("mining/assemble.c:1: includes mempool/internal.h, the private header of "
            "mempool/: use its public header") in out, out
    assert "mempool/query.c" not in out, out  # the module's own files share it


def test_libuv_only_in_the_daemon(tmp_path):
    tree(tmp_path, CLEAN)
    tree(tmp_path, {"proto/loop.c": "#include <uv.h>\n"})
    rc, out = check(tmp_path)
    assert rc == 1, out
    assert "proto/loop.c:1: includes <uv.h>: libuv lives only in daemon/" in out, out


def test_a_file_over_1000_lines_fails(tmp_path):
    tree(tmp_path, CLEAN)
    tree(tmp_path, {"daemon/net/big.c": "int a;\n" * 1001})
    rc, out = check(tmp_path)
    assert rc == 1, out
    assert "daemon/net/big.c: 1001 lines: no source file outside tests/ may be over 1000" in out
    tree(tmp_path, {"daemon/net/big.c": "int a;\n" * 1000})
    assert check(tmp_path)[0] == 0


def test_an_unknown_folder_fails(tmp_path):
    tree(tmp_path, CLEAN)
    tree(tmp_path, {"gadget/g.c": "\n"})
    rc, out = check(tmp_path)
    assert rc == 1, out
    assert "folder gadget/ is not in the layering table" in out, out


def test_the_baseline_passes_known_violations_and_only_shrinks(tmp_path):
    tree(tmp_path, CLEAN)
    tree(tmp_path, {"daemon/program.h": "\n",
                    "daemon/net/peer.c": '#include "daemon/program.h"\n',
                    "daemon/p2p/inv.c": '#include "daemon/program.h"\n',
                    "daemon/node/long.c": "int a;\n" * 1005})
    base = tmp_path / "baseline"
    rc, out = check(tmp_path, "--baseline", str(base), "--write-baseline")
    assert rc == 0, out
    assert base.read_text().splitlines()[-3:] == [
        "daemon/net/peer.c: daemon/program.h",
        "daemon/node/long.c: over 1000 lines (1005)",
        "daemon/p2p/inv.c: daemon/program.h",
    ]
    rc, out = check(tmp_path, "--baseline", str(base))
    assert rc == 0, out
    assert "3 known violations left" in out, out

    # A new violation fails although others are known.
    tree(tmp_path, {"daemon/sync/s.c": '#include "daemon/program.h"\n'})
    rc, out = check(tmp_path, "--baseline", str(base))
    assert rc == 1, out
    assert "daemon/sync/s.c:1: includes daemon/program.h" in out, out
    (tmp_path / "daemon/sync/s.c").unlink()

    # A known long file may shrink but not grow.
    tree(tmp_path, {"daemon/node/long.c": "int a;\n" * 1006})
    rc, out = check(tmp_path, "--baseline", str(base))
    assert rc == 1 and "daemon/node/long.c: 1006 lines, more than the 1005" in out, out
    tree(tmp_path, {"daemon/node/long.c": "int a;\n" * 1002})
    assert check(tmp_path, "--baseline", str(base))[0] == 0

    # A violation that is gone fails until its line leaves the list.
    tree(tmp_path, {"daemon/net/peer.c": '#include "proto/proto.h"\n'})
    rc, out = check(tmp_path, "--baseline", str(base))
    assert rc == 1, out
    assert "`daemon/net/peer.c: daemon/program.h` no longer occurs: delete that line" in out, out
    base.write_text("".join(l + "\n" for l in base.read_text().splitlines()
                            if not l.startswith("daemon/net/peer.c")))
    rc, out = check(tmp_path, "--baseline", str(base))
    assert rc == 0 and "2 known violations left" in out, out


def test_the_tree_keeps_its_layers():
    rc, out = check(ROOT)
    assert rc == 0, out

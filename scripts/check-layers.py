#!/usr/bin/python3
"""The layering check (issue 19): calls go one way.

Reads every `#include "..."` of every C file outside tests/ and bench/ and
fails, naming the file, the line and the rule, when a folder includes a
header of a folder it may not use (the table below, the one in
doc/architecture.md and ../DESIGN.md), when a library folder includes
<uv.h> (libuv lives only in daemon/), when a file includes another
folder's private header (`internal.h`, `*_internal.h`: a module's files
share it, everyone else uses its public header), and when a source file
outside tests/ is over 1,000 lines.

Today's known violations (the calls up that the seams remove) are listed
in scripts/check-layers.baseline, one a line: `FILE: HEADER` for an
include, `FILE: over 1000 lines (N)` for a long file. A listed violation
passes and is counted; a new one fails; a listed one that no longer occurs
fails too, so the list only shrinks (delete its line). A long file on the
list fails again if it grows past its N.

    scripts/check-layers.py                   check (exit 1 on a failure)
    scripts/check-layers.py --write-baseline  write today's violations as the baseline
    --root DIR, --baseline FILE               another tree, another list (the tests use these)
"""
import argparse
import os
import re
import subprocess
import sys

MAX_LINES = 1000

# What each folder may use (besides itself), as in the layout tables. A
# folder may also use whatever the folders it lists may use: the layers
# are ordered, so what is below a lower layer is below this one too.
RULES = {
    "base": [],
    "proto": ["base"],
    # Core's AddrMan: a pure data structure over proto/'s hashing.
    "addrman": ["proto"],
    # BIP324's cryptography (ElligatorSwift, the packet cipher): a pure
    # library over proto/'s hashing and randomness, for the v2 transport.
    "bip324": ["proto"],
    # BIP152 compact blocks: building and rebuilding blocks from short
    # ids, pure over proto/ (candidates come through an iterator).
    "cmpct": ["proto"],
    "pool": ["base"],
    "script": ["proto"],
    "chain": ["proto", "script", "pool"],
    "mempool": ["chain", "script", "proto"],
    "mining": ["mempool", "chain"],
    "conf": ["proto"],
    "json": ["chain", "script", "proto"],
    # Core's src/index/: the transaction index and BIP158 block filters,
    # built from chain/'s block and undo files into LMDB of their own.
    "index": ["chain", "proto"],
    # Core's fee estimator: pure over proto/, fed by the wiring from the
    # mempool's events and the chain's listener.
    "fees": ["proto"],
    # The node program's shared services (daemon/daemon.h: the loop, the
    # configuration, the log, the counters, the peer list and a pointer to
    # each room's state; SHARED below): the ground floor of daemon/, which
    # every room may use and which uses no room.
    "daemon:shared": ["base", "proto", "conf"],
    # The node program's rooms.
    "daemon/net": ["daemon:shared", "addrman", "bip324"],
    "daemon/node": ["chain", "mempool", "mining", "fees", "daemon:shared"],
    "daemon/p2p": ["daemon/net", "daemon/node", "addrman"],
    # sync/cfilters.c reads -blockfilterindex's filters for BIP157 (on the
    # validation thread, as sync/serve.c reads blocks).
    "daemon/sync": ["daemon/p2p", "daemon/net", "daemon/node", "cmpct", "index"],
    "daemon/txrelay": ["daemon/p2p", "daemon/net", "daemon/node"],
    # ZMQ and the notification commands: fed by the wiring from node/'s
    # thread (a chain listener, the mempool's events) and its new tips.
    "daemon/notify": ["daemon/node", "daemon:shared"],
    "daemon/ctl": ["daemon/net", "daemon/p2p", "daemon/sync", "daemon/txrelay",
                   "daemon/node", "daemon/notify", "json", "index"],
    # main, the context, the datadir, sd_notify and the wiring.
    "daemon": ["daemon/net", "daemon/p2p", "daemon/sync", "daemon/txrelay", "daemon/node",
               "daemon/notify", "daemon/ctl", "json", "index"],
    # peerctl and peertool: the libraries, never the daemon.
    "tools": ["base", "proto", "addrman", "pool", "script", "chain", "mempool", "mining", "conf", "json"],
}

# Folders whose files may include <uv.h>: libuv lives only in the node program.
UV_FOLDERS = ("daemon",)

# The files of the shared services: in daemon/'s top folder, beside the
# wiring, but below every room.
SHARED = {"daemon/daemon.h", "daemon/log.h", "daemon/log.c", "daemon/stats.h"}

SKIP_TOP = {"tests", "bench", "build", "run", ".git"}


def closure(folder, seen=None):
    """Every folder `folder` may use, through the folders it lists."""
    if seen is None:
        seen = set()
    for f in RULES.get(folder, []):
        if f not in seen:
            seen.add(f)
            closure(f, seen)
    return seen


ALLOWED = {f: closure(f) | {f} for f in RULES}


def folder_of(path):
    """The table's folder of a repository path: daemon/<room> or the top folder."""
    if path in SHARED:
        return "daemon:shared"
    parts = path.split("/")
    if parts[0] == "daemon":
        return "daemon/" + parts[1] if len(parts) > 2 else "daemon"
    return parts[0]


def list_files(root):
    """The C files to check, as paths relative to root, sorted."""
    files = None
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                              "--exclude-standard", "*.c", "*.h"],
                             capture_output=True, text=True, check=True).stdout
        if os.path.isdir(os.path.join(root, ".git")) or os.path.isfile(
                os.path.join(root, ".git")):
            files = [f for f in out.split("\n") if f]
    except (OSError, subprocess.CalledProcessError):
        pass
    if files is None:  # not a checkout: walk the tree
        files = []
        for d, dirs, names in os.walk(root):
            rel = os.path.relpath(d, root)
            if rel == ".":
                dirs[:] = [x for x in dirs if x not in SKIP_TOP]
            for n in names:
                if n.endswith((".c", ".h")):
                    files.append(os.path.normpath(os.path.join(rel, n)))
    keep = []
    for f in files:
        if "/" not in f or f.split("/")[0] in SKIP_TOP:
            continue
        if os.path.isfile(os.path.join(root, f)):
            keep.append(f)
    return sorted(set(keep))


INCLUDE = re.compile(r'^\s*#\s*include\s+(["<])([^">]+)[">]')


def shown(folder):
    """A folder's name in a message."""
    if folder == "daemon:shared":
        return "the shared services (daemon/daemon.h)"
    return folder + "/"


def check_file(root, path):
    """(violations, errors) of one file: violations are (key, message) pairs
    the baseline may list; errors always fail."""
    violations = []
    errors = []
    here = folder_of(path)
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
        lines = fh.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) > MAX_LINES:
        violations.append(((path, "over %d lines" % MAX_LINES, len(lines)),
                           "%s: %d lines: no source file outside tests/ may be over %d"
                           % (path, len(lines), MAX_LINES)))
    if here not in RULES:
        errors.append("%s: folder %s/ is not in the layering table (scripts/check-layers.py "
                      "RULES): add it with what it may use" % (path, here))
        return violations, errors
    for n, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        kind, name = m.groups()
        if kind == "<":
            if name == "uv.h" and folder_of(path).split("/")[0].split(":")[0] not in UV_FOLDERS:
                errors.append("%s:%d: includes <uv.h>: libuv lives only in daemon/, "
                              "%s/ may not use it" % (path, n, here))
            continue
        # As the compiler looks: beside the file, then from the top (-I.).
        beside = os.path.normpath(os.path.join(os.path.dirname(path), name))
        if os.path.isfile(os.path.join(root, beside)):
            target = beside
        elif os.path.isfile(os.path.join(root, name)):
            target = os.path.normpath(name)
        else:
            errors.append("%s:%d: includes \"%s\", which is not in the tree" % (path, n, name))
            continue
        base = os.path.basename(target)
        if (base == "internal.h" or base.endswith("_internal.h")) and \
                os.path.dirname(target) != os.path.dirname(path):
            errors.append("%s:%d: includes %s, the private header of %s/: use its public "
                          "header" % (path, n, target, os.path.dirname(target)))
            continue
        there = folder_of(target)
        if there in ALLOWED[here]:
            continue
        may = ", ".join(shown(f) for f in RULES[here]) or "nothing but itself"
        violations.append(((path, target), "%s:%d: includes %s: %s/ may use %s (and what "
                           "those use), not %s/" % (path, n, target, here, may, there)))
    return violations, errors


def baseline_key(key):
    if len(key) == 3:
        return "%s: %s (%d)" % key
    return "%s: %s" % key


def parse_baseline(path):
    """{(file, header) or (file, 'over 1000 lines'): max lines or None}."""
    entries = {}
    if not os.path.isfile(path):
        return entries
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"^(\S+): over (\d+) lines \((\d+)\)$", line)
            if m:
                entries[(m.group(1), "over %s lines" % m.group(2))] = int(m.group(3))
                continue
            m = re.match(r"^(\S+): (\S+)$", line)
            if not m:
                raise SystemExit("%s:%d: not `FILE: HEADER` nor `FILE: over N lines (M)`: %s"
                                 % (path, n, line))
            entries[(m.group(1), m.group(2))] = None
    return entries


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(here))
    ap.add_argument("--baseline", default=None)
    ap.add_argument("--write-baseline", action="store_true")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    bpath = a.baseline or os.path.join(root, "scripts", "check-layers.baseline")

    found = {}  # key -> first message
    errors = []
    for path in list_files(root):
        v, e = check_file(root, path)
        errors += e
        for key, msg in v:
            found.setdefault(key, msg)

    if a.write_baseline:
        with open(bpath, "w", encoding="utf-8") as fh:
            fh.write("# Known layering violations: the calls up that issue 19's seams remove.\n"
                     "# One a line; this list only shrinks (scripts/check-layers.py says which\n"
                     "# line to delete). Regenerate: scripts/check-layers.py --write-baseline\n")
            for key in sorted(found):
                fh.write(baseline_key(key) + "\n")
        print("check-layers: wrote %d known violations to %s" % (len(found), bpath))
        for e in errors:
            print("check-layers: " + e, file=sys.stderr)
        return 1 if errors else 0

    known = parse_baseline(bpath)
    failures = list(errors)
    left = 0
    for key, msg in sorted(found.items()):
        if len(key) == 3:
            bkey = key[:2]
            if bkey in known and key[2] <= known[bkey]:
                left += 1
                continue
            if bkey in known:
                failures.append("%s: %d lines, more than the %d the baseline allows: it may only "
                                "shrink" % (key[0], key[2], known[bkey]))
                continue
            failures.append(msg)
        elif key in known:
            left += 1
        else:
            failures.append(msg)
    found_keys = {k[:2] for k in found}
    rel = os.path.relpath(bpath, root) if bpath.startswith(root + os.sep) else bpath
    for key, n in sorted(known.items()):
        if key not in found_keys:
            line = "%s: %s" % key + (" (%d)" % n if n is not None else "")
            failures.append("%s: `%s` no longer occurs: delete that line (the list only "
                            "shrinks)" % (rel, line))
    for f in failures:
        print("check-layers: " + f)
    print("check-layers: %d known violations left (%s)" % (left, rel))
    if failures:
        print("check-layers: %d failure%s" % (len(failures), "" if len(failures) == 1 else "s"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

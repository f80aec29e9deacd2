"""The manual's reference tables against what the binaries print (issue 12: the
docs are right and cannot drift): doc/operating.md's config key table against
`peerd -help`, doc/rpc.md's control methods table against `peerctl help` and
its peerctl section against `peerctl -help`, doc/peertool.md's command list
against `peertool help`; README.md stays a front page that links every page
of doc/ (issue 19: the manual moved there from README.md)."""
import os
import re
import subprocess

from conftest import PEERD_BIN

BIN = os.path.dirname(PEERD_BIN)
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
README = os.path.join(ROOT, "README.md")
DOC = os.path.join(ROOT, "doc")


def readme():
    return open(README, encoding="utf-8").read()


def doc(name):
    """A page of the manual, doc/NAME."""
    return open(os.path.join(DOC, name), encoding="utf-8").read()


def section(text, heading):
    """The text from a heading line to the next heading of the same or a higher level."""
    level = heading.split(" ")[0]
    start = text.index("\n" + heading + "\n")
    m = re.compile(r"\n#{1,%d} " % len(level)).search(text, start + 1)
    return text[start:m.start() if m else len(text)]


def table_after(text, header):
    """Rows (lists of cells) of the markdown table whose header line is `header`."""
    start = text.index(header + "\n")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return rows


def run(*args):
    r = subprocess.run([os.path.join(BIN, args[0])] + list(args[1:]), capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r
    return r.stdout


def help_keys():
    return {m.group(1) for m in re.finditer(r"^  -([a-z0-9][a-z0-9-]*)", run("peerd", "-help"), re.M)} - {"help", "version"}


def test_config_table_matches_peerd_help():
    rows = table_after(doc("operating.md"), "| key | default | meaning |")
    in_doc = set()
    for key_cell, _default, _meaning in rows:
        in_doc |= {re.sub(r"=.*", "", k) for k in re.findall(r"`([^`]+)`", key_cell)}
    keys = help_keys()
    assert sorted(keys - in_doc) == [], "keys peerd -help has that doc/operating.md's table lacks"
    assert sorted(in_doc - keys) == [], "keys in doc/operating.md's table that peerd does not take"


def test_config_table_defaults_match_peerd_help():
    """Where a row gives plain numbers as defaults, they are -help's."""
    text = run("peerd", "-help")
    defaults = {}
    for m in re.finditer(r"^  -([a-z0-9]+)[^\n]*\n((?:      [^\n]*\n)*)", text, re.M):
        d = re.search(r"^      Default: (\S+)", m.group(2), re.M)
        if d:
            defaults[m.group(1)] = d.group(1)
    checked = 0
    for key_cell, default_cell, _ in table_after(doc("operating.md"), "| key | default | meaning |"):
        keys = re.findall(r"`([a-z0-9]+)`", key_cell)
        vals = [v.strip() for v in re.sub(r"\(.*?\)", "", default_cell).split(",")]
        if len(keys) != len(vals) or not all(re.fullmatch(r"[0-9.]+", v) for v in vals):
            continue
        for k, v in zip(keys, vals):
            assert k in defaults, k
            assert float(defaults[k]) == float(v), (k, v, defaults[k])
            checked += 1
    assert checked >= 15


def test_methods_table_matches_help(peerd):
    listed = set()
    for line in peerd.rpc("help").splitlines():
        if line and not line.startswith("=="):
            listed.add(line.split()[0])
    in_doc = set()
    for cells in table_after(doc("rpc.md"), "| method | what |"):
        in_doc |= {re.split(r"[ \[]", m)[0] for m in re.findall(r"`([a-z][^`]*)`", cells[0])}
    assert sorted(listed - in_doc) == [], "methods peerd has that doc/rpc.md's table lacks"
    # Core's hidden methods (generate*, invalidateblock, ...) are not listed
    # by help, as Core's: help NAME still knows them.
    unknown = [m for m in sorted(in_doc - listed) if "unknown command" in peerd.rpc("help", m)]
    assert unknown == [], "methods in doc/rpc.md's table that peerd lacks"


def test_peertool_commands_match_help():
    top = run("peertool", "help")
    body = top[top.index("\nCommands"):top.index("\n\n", top.index("\nCommands") + 1)]
    cmds = set(re.findall(r"^  ([a-z][a-z-]+) ", body, re.M))
    assert len(cmds) >= 8
    block = doc("peertool.md")
    in_doc = set(re.findall(r"^build/bin/peertool ([a-z][a-z-]+)", block, re.M)) - {"help"}
    assert cmds == in_doc
    # Every option doc/peertool.md's synopsis gives a command is one its help lists.
    for line in re.findall(r"^build/bin/peertool ([a-z][a-z-]+ .*)$", block, re.M):
        cmd = line.split()[0]
        if cmd == "help":
            continue
        known = set(re.findall(r"--[a-z][a-z0-9-]*", run("peertool", "help", cmd)))
        for opt in re.findall(r"--[a-z][a-z0-9-]*", line.split("#")[0]):
            assert opt in known, (cmd, opt)


def test_peerctl_options_in_doc():
    opts = set(re.findall(r"(?:^|[ ,])(-[a-z][a-z0-9]+)", run("peerctl", "-help"), re.M))
    opts -= {"-key"}
    block = section(doc("rpc.md"), "## peerctl")
    for o in sorted(opts):
        assert re.search(re.escape(o) + r"\b", block), "peerctl %s is not in doc/rpc.md's peerctl section" % o


def test_license_shipped_and_named():
    """Issue 12: a LICENSE, and README's licence section names it."""
    path = os.path.join(ROOT, "LICENSE")
    text = open(path, encoding="utf-8").read()
    assert text.startswith("MIT License") and "peerd developers" in text
    assert "MIT: see `LICENSE`" in section(readme(), "## Licence")


def test_example_config_annotates_every_key():
    """doc/operating.md: conf/peerd.conf is an annotated example of every key."""
    conf = open(os.path.join(ROOT, "conf", "peerd.conf"), encoding="utf-8").read()
    aliases = {"regtest", "signet", "testnet", "testnet4"}  # described with chain=
    missing = [k for k in sorted(help_keys() - aliases - {"conf"})
               if not re.search(r"^#%s=" % k, conf, re.M)]
    assert missing == []
    assert all(a + "=1" in conf for a in aliases)


def test_readme_is_a_front_page_linking_every_doc_page():
    """Issue 19: README.md is at most 300 lines, and links every page of doc/
    (a new page unlinked from the front page fails here)."""
    text = readme()
    assert len(text.splitlines()) <= 300, len(text.splitlines())
    pages = sorted(f for f in os.listdir(DOC) if f.endswith(".md"))
    assert len(pages) >= 9, pages
    missing = [p for p in pages if "](doc/%s)" % p not in text]
    assert missing == [], "doc/ pages README.md does not link: %s" % missing
    # And every link it makes goes to a page that exists.
    for target in re.findall(r"\]\((doc/[^)#]+)", text):
        assert os.path.exists(os.path.join(ROOT, target)), target


def test_doc_links_resolve():
    """Every relative link of the manual's pages goes to a file that exists
    (pages moved from README.md link each other by name)."""
    bad = []
    for page in sorted(f for f in os.listdir(DOC) if f.endswith(".md")):
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", doc(page)):
            if not os.path.exists(os.path.join(DOC, target)):
                bad.append((page, target))
    assert bad == []

"""`make install` into a staging directory puts everything where doc/operating.md says."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))


def make(*args, cwd=ROOT):
    return subprocess.run(["make", "--no-print-directory", f"BUILD={BUILD}", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def test_install_and_uninstall_with_destdir(tmp_path):
    dest = tmp_path / "stage"
    r = make("install", f"DESTDIR={dest}", "PREFIX=/opt/peerd")
    assert r.returncode == 0, r.stderr
    for rel in ["opt/peerd/bin/peerd", "opt/peerd/bin/peerctl", "opt/peerd/bin/peertool"]:
        p = dest / rel
        assert p.is_file() and os.access(p, os.X_OK), rel
    unit = (dest / "opt/peerd/lib/systemd/system/peerd.service").read_text()
    assert "ExecStart=/opt/peerd/bin/peerd " in unit
    directives = [l for l in unit.splitlines() if l and not l.startswith("#")]
    assert not [l for l in directives if "/usr/local/bin" in l]
    assert (dest / "opt/peerd/lib/sysusers.d/peerd.conf").is_file()
    assert (dest / "opt/peerd/lib/tmpfiles.d/peerd.conf").is_file()
    conf = dest / "etc/peerd/peerd.conf"
    example = open(os.path.join(ROOT, "conf", "peerd.conf")).read()
    assert conf.read_text() == example.replace("/usr/local/share/doc/peerd", "/opt/peerd/share/doc/peerd")
    # It says what to set, and where the examples are.
    assert "SET BEFORE STARTING THE SERVICE" in conf.read_text()
    assert "/opt/peerd/share/doc/peerd/examples/" in conf.read_text()
    doc = dest / "opt/peerd/share/doc/peerd"
    assert (doc / "peerd.conf.example").read_text() == conf.read_text()
    for net in ("main", "testnet4", "signet", "regtest"):
        text = (doc / "examples" / (net + ".conf")).read_text()
        assert "\nchain=%s\n" % net in text and "#addnode=" in text, net
    # Staged: nothing to run on this host; the steps are for the target system.
    assert "staged in %s" % dest in r.stdout and "target system" in r.stdout, r.stdout
    assert "next:" not in r.stdout, r.stdout

    # An operator's edited config is never replaced by a reinstall.
    conf.write_text("maxconnections=40\n")
    r = make("install", f"DESTDIR={dest}", "PREFIX=/opt/peerd")
    assert r.returncode == 0, r.stderr
    assert conf.read_text() == "maxconnections=40\n"

    r = make("uninstall", f"DESTDIR={dest}", "PREFIX=/opt/peerd")
    assert r.returncode == 0, r.stderr
    assert not (dest / "opt/peerd/bin/peerd").exists()
    assert not (dest / "opt/peerd/lib/systemd/system/peerd.service").exists()
    assert conf.exists()  # configuration is the operator's: uninstall keeps it
    assert not doc.exists()
    # Man pages and completions go too.
    assert not (dest / "opt/peerd/share/man/man1/peerd.1").exists()
    assert not (dest / "opt/peerd/share/bash-completion/completions/peerctl").exists()


BINDIR = os.path.join(BUILD, "bin")


def help_options(*cmd):
    """Every -option a binary's help lists at the start of a line."""
    import re
    out = subprocess.run([os.path.join(BINDIR, cmd[0]), *cmd[1:]], capture_output=True, text=True,
                         timeout=30).stdout
    return sorted(set(re.findall(r"^  (-[a-z0-9]+)", out, re.M)))


def test_man_pages_and_completion_installed(tmp_path):
    import shutil
    import re
    dest = tmp_path / "stage"
    r = make("install", f"DESTDIR={dest}", "PREFIX=/usr")
    assert r.returncode == 0, r.stderr
    man1 = dest / "usr/share/man/man1"
    for name in ("peerd", "peerctl", "peertool"):
        page = man1 / (name + ".1")
        assert page.is_file(), page
        text = page.read_text()
        assert text.startswith(".\\\"") and ".TH %s 1" % name.upper() in text
        assert "@OPTIONS@" not in text and "@COMMANDS@" not in text and "@VERSION@" not in text
        if shutil.which("groff"):
            # roff without warnings (-ww: all of them)
            g = subprocess.run(["groff", "-man", "-ww", "-z", str(page)], capture_output=True,
                               text=True, timeout=30)
            assert g.returncode == 0 and g.stderr == "", (name, g.stderr)
    # The pages list what the binaries accept: every option of -help.
    peerd_page = (man1 / "peerd.1").read_text().replace("\\-", "-")
    opts = help_options("peerd", "-help")
    assert "-datadir" in opts and "-port" in opts and len(opts) > 20, opts
    for o in opts:
        assert re.search(r"^\.B %s\b" % re.escape(o), peerd_page, re.M), o
    peerctl_page = (man1 / "peerctl.1").read_text().replace("\\-", "-")
    for o in ("-named", "-stdin", "-rpcwait", "-rpcwaittimeout", "-getinfo", "-netinfo", "-datadir"):
        assert re.search(r"^\.B %s\b" % re.escape(o), peerctl_page, re.M), o
    tool_page = (man1 / "peertool.1").read_text().replace("\\-", "-")
    for cmd in ("decode-tx", "decode-block", "decode-msg", "verify-tx", "verify-block", "chaingen",
                "connect-blocks"):
        assert ".SS %s\n" % cmd in tool_page, cmd
    comp = dest / "usr/share/bash-completion/completions"
    for name in ("peerctl", "peertool"):
        f = comp / name
        assert f.is_file() and "complete -F _%s %s" % (name, name) in f.read_text()
        assert subprocess.run(["bash", "-n", str(f)]).returncode == 0


def complete(script, *words):
    """What the completion function offers for the last word (bash's own splitting of '=')."""
    import shlex
    fn = "_" + os.path.basename(script).split(".")[0]
    cmd = ("PATH=%s:$PATH; source %s; COMP_WORDS=(%s); COMP_CWORD=%d; %s; printf '%%s\\n' \"${COMPREPLY[@]}\""
           % (shlex.quote(BINDIR), shlex.quote(script), " ".join(shlex.quote(w) for w in words),
              len(words) - 1, fn))
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return [l for l in r.stdout.splitlines() if l]


def test_bash_completion(peerd):
    tool = os.path.join(ROOT, "contrib", "completion", "peertool.bash")
    assert complete(tool, "peertool", "dec") == ["decode-tx", "decode-block", "decode-msg"]
    assert complete(tool, "peertool", "help", "conn") == ["connect-blocks"]
    opts = complete(tool, "peertool", "verify-block", "--")
    assert {"--prevouts", "--utxo", "--flags", "--chain", "--height", "--par", "--no-pow", "--help"} <= set(opts), opts
    assert complete(tool, "peertool", "decode-tx", "--chain", "=", "reg") == ["regtest"]
    assert complete(tool, "peertool", "decode-tx", "--chain", "sig") == ["signet"]
    ctl = os.path.join(ROOT, "contrib", "completion", "peerctl.bash")
    assert complete(ctl, "peerctl", "-rpcw") == ["-rpcwait", "-rpcwaittimeout="]
    # Methods come from the running peerd, found with the options on the line.
    got = complete(ctl, "peerctl", "-regtest", "-datadir", "=", peerd.datadir, "getblockc")
    assert got == ["getblockchaininfo", "getblockcount"], got
    got = complete(ctl, "peerctl", "-regtest", "-datadir", "=", peerd.datadir, "help", "getpe")
    assert got == ["getpeerinfo"], got


def test_installed_snippets_name_their_paths_and_staged_verify(tmp_path):
    """doc/operating.md's staging recipe: make install DESTDIR=..., then
    systemd-analyze verify --root on the staged tree."""
    import shutil
    dest = tmp_path / "stage"
    r = make("install", f"DESTDIR={dest}", "PREFIX=/usr")
    assert r.returncode == 0, r.stderr
    sysusers = (dest / "usr/lib/sysusers.d/peerd.conf").read_text()
    tmpfiles = (dest / "usr/lib/tmpfiles.d/peerd.conf").read_text()
    assert "Installed as /usr/lib/sysusers.d/peerd.conf" in sysusers, sysusers
    assert "Installed as /usr/lib/tmpfiles.d/peerd.conf" in tmpfiles, tmpfiles
    assert "/usr/local" not in sysusers + tmpfiles
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        return
    # doc/operating.md's block, line for line, with its /tmp/stage here.
    import re
    page = open(os.path.join(ROOT, "doc", "operating.md"), encoding="utf-8").read()
    block = re.search(r"```sh\n(make install DESTDIR=/tmp/stage[^`]*)```", page).group(1)
    for line in block.strip().splitlines():
        if line.startswith("make "):
            continue  # done above, with this test's BUILD
        r = subprocess.run(line.replace("/tmp/stage", str(dest)), shell=True, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, (line, r.stdout + r.stderr)
    assert "peerd" not in r.stdout + r.stderr, r.stdout + r.stderr
    # It looks inside the stage: without the staged binary it fails.
    (dest / "usr/bin/peerd").unlink()
    r = subprocess.run([analyze, "verify", "--recursive-errors=no", f"--root={dest}", "peerd.service"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "/usr/bin/peerd" in r.stdout + r.stderr, r.stdout + r.stderr


def test_next_steps_without_destdir_name_this_systems_paths(tmp_path):
    """Without DESTDIR the install is real (here: every directory under tmp_path),
    and the next steps name its config and examples; with DESTDIR they are for
    the target system (test_install_and_uninstall_with_destdir)."""
    p = tmp_path / "p"
    r = make("install", f"PREFIX={p}", f"SYSCONFDIR={p}/etc", "DESTDIR=")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert f"next: edit {p}/etc/peerd/peerd.conf" in out and f"{p}/share/doc/peerd/examples/" in out, out
    assert "staged" not in out, out

"""`make install` into a staging directory puts everything where the README says."""
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
    assert conf.read_text() == open(os.path.join(ROOT, "conf", "peerd.conf")).read()

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

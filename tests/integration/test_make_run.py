"""`make run` keeps its regtest chain where `make clean` does not reach."""
import os
import subprocess

from conftest import ROOT


def test_make_clean_keeps_make_runs_chain(tmp_path):
    build = tmp_path / "build"
    (build / "bin").mkdir(parents=True)
    # A stand-in peerd that records its arguments and creates its datadir's
    # network directory, as the real one would.
    fake = build / "bin" / "peerd"
    fake.write_text('#!/bin/sh\nfor a; do case "$a" in -datadir=*) d=${a#-datadir=};; esac; done\n'
                    'mkdir -p "$d/regtest" && echo chain > "$d/regtest/chain" && echo "$@" > "$d/args"\n')
    fake.chmod(0o755)
    env = dict(os.environ, BUILD=str(build))
    env.pop("DATADIR", None)
    r = subprocess.run([os.path.join(ROOT, "scripts", "run.sh")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    chains = [os.path.join(dp, f) for dp, _, fs in os.walk(tmp_path) for f in fs if f == "chain"]
    assert len(chains) == 1, chains
    assert not chains[0].startswith(str(build) + os.sep), "make run's datadir is inside BUILD: " + chains[0]
    r = subprocess.run(["make", "-C", ROOT, "clean", "BUILD=%s" % build], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert not build.exists()
    assert os.path.exists(chains[0]), "make clean deleted " + chains[0]

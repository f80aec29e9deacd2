"""Regression tests for defects found by reviewing daemon/ and tools/.

Run with /usr/bin/python3 -m pytest (BUILD=<build dir>).
"""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
PEERTOOL = os.environ.get("PEERTOOL_BIN", os.path.join(BUILD, "bin", "peertool"))

# tools/peertool.c: PEERTOOL_MAX_INPUT = 2 * PROTO_MAX_MESSAGE + 4096.
PEERTOOL_MAX_INPUT = 2 * 4_000_000 + 4096


@pytest.fixture(scope="module", autouse=True)
def built():
    if not os.path.exists(PEERTOOL):
        pytest.fail(f"{PEERTOOL} not built (run make)")


def run(*args):
    return subprocess.run([PEERTOOL, *args], capture_output=True, timeout=60)


def test_peertool_input_limit_is_exact(tmp_path):
    # The limit was checked against the doubling buffer's size, so inputs
    # up to 8 MiB - 1 (well over the limit) were read and decoded.
    over = tmp_path / "over.bin"
    over.write_bytes(b"\x00" * (PEERTOOL_MAX_INPUT + 1))
    r = run("decode-tx", str(over))
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert b"larger than %d bytes" % PEERTOOL_MAX_INPUT in r.stderr, r.stderr


def test_peertool_input_at_limit_is_read(tmp_path):
    # Exactly the limit is read whole (and then fails to decode as a tx).
    at = tmp_path / "at.bin"
    at.write_bytes(b"\x00" * PEERTOOL_MAX_INPUT)
    r = run("decode-tx", str(at))
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert b"larger than" not in r.stderr, r.stderr

"""make test's and make interop's own machinery (scripts/run-tests.sh,
conftest.py's interop marking): what they count and what they select."""
import os
import subprocess
import sys

from conftest import ROOT


def fake_test(path, body):
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def test_last_line_counts_suites_and_tests(tmp_path):
    build = tmp_path / "build"
    (build / "test").mkdir(parents=True)
    # Two cmocka binaries (one with two groups, one failing a test) and one that crashes.
    fake_test(build / "test" / "test_a",
              "echo '[==========] 3 test(s) run.'; echo '[  PASSED  ] 3 test(s).'\n"
              "echo '[==========] 2 test(s) run.'; echo '[  PASSED  ] 2 test(s).'\n")
    fake_test(build / "test" / "test_b",
              "echo '[  PASSED  ] 4 test(s).'; echo '[  FAILED  ] 1 test(s), listed below:'; exit 1\n")
    fake_test(build / "test" / "test_c", "kill -SEGV $$\n")
    env = {k: v for k, v in os.environ.items() if k not in ("UNIT_TESTS", "TSAN_TESTS")}
    r = subprocess.run([os.path.join(ROOT, "scripts", "run-tests.sh"), "unit"], cwd=ROOT,
                       env=dict(env, BUILD=str(build)), capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    last = r.stdout.strip().splitlines()[-1]
    assert last == "suites: 1 passed, 2 failed; tests: 9 passed, 2 failed, 0 skipped", r.stdout
    assert "PASS  unit-test_a (5 passed, 0 failed, 0 skipped)" in r.stdout, r.stdout


def test_a_binary_left_by_a_removed_test_is_not_run(tmp_path):
    # make test names the unit tests that exist (UNIT_TESTS, from tests/unit/*.c); a
    # binary of a renamed or deleted test left in the build dir is neither run nor counted.
    build = tmp_path / "build"
    (build / "test").mkdir(parents=True)
    fake_test(build / "test" / "test_a", "echo '[  PASSED  ] 2 test(s).'\n")
    fake_test(build / "test" / "test_gone", "echo '[  PASSED  ] 7 test(s).'\n")
    r = subprocess.run([os.path.join(ROOT, "scripts", "run-tests.sh"), "unit"], cwd=ROOT,
                       env=dict(os.environ, BUILD=str(build), UNIT_TESTS="test_a test_b"),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last == "suites: 1 passed, 0 failed; tests: 2 passed, 0 failed, 0 skipped", r.stdout
    assert "test_gone" not in r.stdout, r.stdout


PLUGIN = '''
def pytest_collection_finish(session):
    for item in session.items:
        if "make_bitcoind" in getattr(item, "fixturenames", ()):
            print("NEEDS-BITCOIND", item.nodeid)
'''


def test_every_test_that_starts_a_bitcoind_is_interop(tmp_path):
    (tmp_path / "needs_core_plugin.py").write_text(PLUGIN)
    env = dict(os.environ, PYTHONPATH=str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                        "-p", "needs_core_plugin", "-m", "not interop", "tests/integration"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 5), r.stdout + r.stderr
    left_out = [l for l in r.stdout.splitlines() if l.startswith("NEEDS-BITCOIND")]
    assert not left_out, "not selected by make interop (-m interop):\n" + "\n".join(left_out)
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                        "-p", "needs_core_plugin", "-m", "interop", "tests/integration"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert sum(l.startswith("NEEDS-BITCOIND") for l in r.stdout.splitlines()) > 20, r.stdout[-2000:]

"""tests/data must stay byte-identical to the reference copy in
../shared/vectors beside the checkout; skipped when that folder is absent
(a lone checkout)."""
import filecmp
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "vectors")
SUBDIRS = ("bitcoin-core", "blocks", "regtest")


def files_under(top):
    out = set()
    for sub in SUBDIRS:
        d = os.path.join(top, sub)
        for dirpath, _, names in os.walk(d):
            for n in names:
                out.add(os.path.relpath(os.path.join(dirpath, n), top))
    return out


def test_vendored_data_present():
    got = files_under(DATA)
    assert got, "no test data under %s" % DATA
    assert os.path.exists(os.path.join(DATA, "README.md"))
    for sub in SUBDIRS:
        assert any(f.startswith(sub + os.sep) for f in got), "tests/data/%s is empty" % sub


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="no ../shared/vectors beside the checkout")
def test_vendored_data_matches_shared():
    ours, ref = files_under(DATA), files_under(SHARED)
    assert ours == ref, "only in tests/data: %s; only in ../shared/vectors: %s" % (
        sorted(ours - ref), sorted(ref - ours))
    differ = [f for f in sorted(ref)
              if not filecmp.cmp(os.path.join(DATA, f), os.path.join(SHARED, f), shallow=False)]
    assert not differ, "tests/data differs from ../shared/vectors: %s" % differ
